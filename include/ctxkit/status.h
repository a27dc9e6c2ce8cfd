// ctxkit::Status and ctxkit::StatusOr<T>: how every fallible ctxkit C++ call
// reports failure.
//
// ctxkit never throws across its public boundary. A call either succeeds or
// returns a Status carrying a code and a human-readable message that names
// what was wrong (the field, the path, the limit).
//
// The codes are numbered exactly like absl::StatusCode and like the CTXKIT_*
// status codes of the C API (include/ctxkit/c.h), and those numbers never
// change. This header deliberately exposes no Abseil type: Abseil promises no
// ABI stability, so ctxkit uses it only inside the library.
//
// Thread safety: Status and StatusOr are values; distinct objects may be used
// from distinct threads freely, and const methods may be called concurrently.

#ifndef CTXKIT_STATUS_H_
#define CTXKIT_STATUS_H_

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ctxkit/export.h"

namespace ctxkit {

// Numbered like absl::StatusCode; fixed forever.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// Returns the canonical upper-case name of `code` ("OK", "NOT_FOUND", ...), or
// "UNKNOWN_CODE" for a value outside the enumeration. The returned pointer is
// to static storage and valid for the life of the program. Thread-safe.
CTXKIT_EXPORT const char* StatusCodeName(StatusCode code) noexcept;

// The result of an operation: OK, or a code with a message. [[nodiscard]]:
// a returned Status that nobody looks at is an error nobody sees; a caller
// that truly does not care says so with a (void) cast.
class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() noexcept = default;

  // A status with `code` and `message`. The message is ignored when `code` is
  // kOk, so an OK status never carries text.
  Status(StatusCode code, std::string message)
      : code_(code),
        message_(code == StatusCode::kOk ? std::string() : std::move(message)) {
  }

  static Status Ok() noexcept { return Status(); }

  bool ok() const noexcept { return code_ == StatusCode::kOk; }
  StatusCode code() const noexcept { return code_; }
  // The message; empty for OK. Valid as long as this Status is alive and not
  // modified.
  const std::string& message() const noexcept { return message_; }

  // "OK", or "CODE_NAME: message".
  std::string ToString() const {
    if (ok()) return "OK";
    std::string out = StatusCodeName(code_);
    out += ": ";
    out += message_;
    return out;
  }

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value of type T or a non-OK Status explaining why there is none.
//
// Accessing the value of a StatusOr that holds an error is a programming
// error: it prints the status to stderr and aborts, because ctxkit does not
// throw. Check ok() first. [[nodiscard]], as Status.
template <typename T>
class [[nodiscard]] StatusOr {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, Status>,
                "StatusOr<Status> is not allowed");

 public:
  // Holds `status`, which must be non-OK; an OK status here is itself a bug,
  // so it is replaced by an INTERNAL error rather than yielding an empty value.
  StatusOr(Status status)  // NOLINT: implicit, like absl::StatusOr
      : status_(status.ok() ? Status(StatusCode::kInternal,
                                     "StatusOr constructed from an OK Status")
                            : std::move(status)) {}

  // Holds `value`.
  StatusOr(T value)  // NOLINT: implicit, like absl::StatusOr
      : value_(std::move(value)) {}

  bool ok() const noexcept { return status_.ok(); }
  // OK when a value is held.
  const Status& status() const& noexcept { return status_; }
  Status status() && { return std::move(status_); }

  // The value. Precondition: ok().
  const T& value() const& {
    CheckOk();
    return *value_;
  }
  T& value() & {
    CheckOk();
    return *value_;
  }
  T&& value() && {
    CheckOk();
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  void CheckOk() const {
    if (!status_.ok()) {
      std::fprintf(stderr, "ctxkit: value() on a StatusOr holding %s\n",
                   status_.ToString().c_str());
      std::abort();
    }
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace ctxkit

#endif  // CTXKIT_STATUS_H_
