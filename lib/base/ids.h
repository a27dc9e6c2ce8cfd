// Identifiers of stored records (conversations, references, cache entries):
// random version-4 UUIDs, as the seed APIs return them; messages get
// time-ordered version-7 UUIDs, which clients read as the same opaque form.

#ifndef CTXKIT_LIB_BASE_IDS_H_
#define CTXKIT_LIB_BASE_IDS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ctxkit::internal {

// A new random (version 4, RFC 9562) UUID in canonical lower-case form,
// e.g. "550e8400-e29b-41d4-a716-446655440000". Its 122 random bits come from
// the kernel (getrandom) on every call, so processes that fork, and threads,
// never share a sequence. Thread-safe.
std::string NewUuid();

// Where the random bits of a new id come from: each call returns 64 of
// them. Empty: the kernel (getrandom), as above. A store's options may carry
// a seeded one so that the same calls give the same ids (tests, replays);
// it is called under no lock of ctxkit's, so it must be thread-safe if the
// store is used from several threads.
using RandomSource = std::function<uint64_t()>;

// NewUuid and NewTimeOrderedUuid with their random bits from `random`
// (getrandom when empty).
std::string NewUuid(const RandomSource& random);
std::string NewTimeOrderedUuid(int64_t unix_ms, const RandomSource& random);

// A new time-ordered (version 7, RFC 9562) UUID in the same form: the first
// 48 bits are `unix_ms` (milliseconds since 1970, big-endian), then 74
// random bits from getrandom as above. Ids made in later milliseconds sort
// after earlier ones, so an index keyed by them grows at its end: inserting
// a batch dirties a few adjacent pages instead of one random page per id.
// Thread-safe.
std::string NewTimeOrderedUuid(int64_t unix_ms);

// True when `id` has the canonical UUID shape: 36 characters, hex digits
// (either case) with hyphens at offsets 8, 13, 18 and 23. Any version is
// accepted: ids written by other tools stay usable.
bool IsUuid(std::string_view id);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_IDS_H_
