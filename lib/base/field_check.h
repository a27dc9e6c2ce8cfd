// Validation of the text fields callers hand to the stores, with errors that
// name the field, so that a caller (or the model behind an MCP client) can
// fix the one thing that is wrong.

#ifndef CTXKIT_LIB_BASE_FIELD_CHECK_H_
#define CTXKIT_LIB_BASE_FIELD_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/status.h"

namespace ctxkit::internal {

// OK when `value` is valid UTF-8 of at most `max_bytes` bytes and, unless
// `allow_empty`, not empty. Otherwise INVALID_ARGUMENT naming `field`:
//   "title must not be empty"
//   "content is 2000000 bytes; the limit is 1048576"
//   "content is not valid UTF-8: invalid byte 0xC3 at offset 17 (...)"
absl::Status CheckText(std::string_view field, std::string_view value,
                       size_t max_bytes, bool allow_empty = false);

// OK when `value` passes CheckText (so it is not empty) and is one JSON
// object, as the stores' metadata must be. Otherwise INVALID_ARGUMENT naming
// `field`, e.g. "metadata is not valid JSON: ..." or
// "metadata: expected an object, got array".
absl::Status CheckJsonObject(std::string_view field, std::string_view value,
                             size_t max_bytes);

// OK when min <= value <= max; otherwise INVALID_ARGUMENT naming `field` and
// the range: "limit is -1; it must be between 1 and 1000".
absl::Status CheckRange(std::string_view field, int64_t value, int64_t min,
                        int64_t max);

// The entry of `known` a caller most likely meant by `name`: the nearest by
// edit distance (ASCII case ignored; an adjacent swap counts one edit) within
// about a third of the name's length, or one that contains `name` or is
// contained in it (three or more characters). Ties go to the earlier entry.
// Empty when none is that close, since a far-fetched guess misleads more
// than it helps.
std::string_view ClosestName(std::string_view name,
                             std::span<const std::string_view> known);

// The error for a key that a document does not define, so that a typo is
// never taken as "use the default":
//   "unknown key 'max_token'; did you mean 'max_tokens'?"
//   "options: unknown key 'colour' (known: a, b, c)"   (nothing close)
// `context` names the object holding the key ("" for the root, "options",
// "rules[2]", "--config").
absl::Status UnknownKeyError(std::string_view context, std::string_view key,
                             std::span<const std::string_view> known);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_FIELD_CHECK_H_
