// Conversions between absl::Status, used everywhere inside lib/, and the
// public ctxkit::Status that crosses the library boundary. The codes are
// numbered identically, so conversion is a cast plus a copy of the message.

#ifndef CTXKIT_LIB_STATUS_STATUS_INTERNAL_H_
#define CTXKIT_LIB_STATUS_STATUS_INTERNAL_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/status.h"

namespace ctxkit::internal {

inline Status ToPublic(const absl::Status& status) {
  if (status.ok()) return Status();
  return Status(static_cast<StatusCode>(status.code()),
                std::string(status.message()));
}

template <typename T>
StatusOr<T> ToPublic(absl::StatusOr<T> result) {
  if (!result.ok()) return ToPublic(result.status());
  return StatusOr<T>(std::move(*result));
}

inline absl::Status ToAbsl(const Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.code()),
                      status.message());
}

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STATUS_STATUS_INTERNAL_H_
