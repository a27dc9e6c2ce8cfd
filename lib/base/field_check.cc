#include "lib/base/field_check.h"

#include "absl/strings/str_format.h"
#include "lib/json/utf8.h"

namespace ctxkit::internal {

absl::Status CheckText(std::string_view field, std::string_view value,
                       size_t max_bytes, bool allow_empty) {
  if (value.empty() && !allow_empty) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must not be empty", field));
  }
  if (value.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is %d bytes; the limit is %d", field, value.size(), max_bytes));
  }
  return ValidateUtf8(value, field);
}

absl::Status CheckRange(std::string_view field, int64_t value, int64_t min,
                        int64_t max) {
  if (value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is %d; it must be between %d and %d", field, value, min, max));
  }
  return absl::OkStatus();
}

}  // namespace ctxkit::internal
