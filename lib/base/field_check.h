// Validation of the text fields callers hand to the stores, with errors that
// name the field, so that a caller (or the model behind an MCP client) can
// fix the one thing that is wrong.

#ifndef CTXKIT_LIB_BASE_FIELD_CHECK_H_
#define CTXKIT_LIB_BASE_FIELD_CHECK_H_

#include <cstddef>
#include <cstdint>
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

// OK when min <= value <= max; otherwise INVALID_ARGUMENT naming `field` and
// the range: "limit is -1; it must be between 1 and 1000".
absl::Status CheckRange(std::string_view field, int64_t value, int64_t min,
                        int64_t max);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_FIELD_CHECK_H_
