// Identifiers of stored records (conversations, messages, references, cache
// entries): random version-4 UUIDs, as the seed APIs return them.

#ifndef CTXKIT_LIB_BASE_IDS_H_
#define CTXKIT_LIB_BASE_IDS_H_

#include <string>
#include <string_view>

namespace ctxkit::internal {

// A new random (version 4, RFC 9562) UUID in canonical lower-case form,
// e.g. "550e8400-e29b-41d4-a716-446655440000". Its 122 random bits come from
// the kernel (getrandom) on every call, so processes that fork, and threads,
// never share a sequence. Thread-safe.
std::string NewUuid();

// True when `id` has the canonical UUID shape: 36 characters, hex digits
// (either case) with hyphens at offsets 8, 13, 18 and 23. Any version is
// accepted: ids written by other tools stay usable.
bool IsUuid(std::string_view id);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_IDS_H_
