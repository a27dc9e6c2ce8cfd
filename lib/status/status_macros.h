// Early returns for lib/ .cc files, where nearly every line is fallible:
// the one definition for all of lib/.
//
//   CTXKIT_RETURN_IF_ERROR(status_expr);     // returns the status if not OK
//   CTXKIT_ASSIGN_OR_RETURN(T x, statusor);  // x = value, or returns status
//
// The expression is an absl::Status / absl::StatusOr<T>, the status type of
// lib/ (DESIGN.md); the enclosing function returns absl::Status or
// absl::StatusOr<U>, and a lambda without a trailing return type deduces
// absl::Status. A ctxkit::Status does not compile here on purpose: one part
// of lib/ calls another through that part's internal header
// (lib/store/store_internal.h, lib/tokenizer/tokenizer_internal.h,
// lib/cache/cache_internal.h, lib/compactor/compactor_internal.h), which
// needs no conversion. Only a status that lib/ receives in public form (a
// Store::Update callback's, a Cursor's) converts, visibly, with ToAbsl
// (status_internal.h). Functions that implement a public class convert
// once, with ToPublic.
//
// Each expansion names its temporary by __COUNTER__, so that two on one line
// (or nested, as in a lambda passed to Store::Update inside a statement that
// uses them) do not collide and -Wshadow stays quiet.

#ifndef CTXKIT_LIB_STATUS_STATUS_MACROS_H_
#define CTXKIT_LIB_STATUS_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "lib/status/status_internal.h"

namespace ctxkit::internal::status_macros {

// By value, so that a temporary absl::Status is moved rather than copied.
// The only overload: see above.
inline absl::Status AsAbsl(absl::Status status) { return status; }

}  // namespace ctxkit::internal::status_macros

#define CTXKIT_STATUS_CONCAT_INNER(a, b) a##b
#define CTXKIT_STATUS_CONCAT(a, b) CTXKIT_STATUS_CONCAT_INNER(a, b)

#define CTXKIT_RETURN_IF_ERROR(expr) \
  CTXKIT_RETURN_IF_ERROR_IMPL(       \
      CTXKIT_STATUS_CONCAT(ctxkit_status_, __COUNTER__), expr)
#define CTXKIT_RETURN_IF_ERROR_IMPL(name, expr)                          \
  do {                                                                   \
    absl::Status name = ::ctxkit::internal::status_macros::AsAbsl(expr); \
    if (!name.ok()) return name;                                         \
  } while (0)

#define CTXKIT_ASSIGN_OR_RETURN(lhs, expr) \
  CTXKIT_ASSIGN_OR_RETURN_IMPL(            \
      CTXKIT_STATUS_CONCAT(ctxkit_status_or_, __COUNTER__), lhs, expr)
#define CTXKIT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                           \
  auto tmp = (expr);                                                           \
  if (!tmp.ok()) {                                                             \
    return ::ctxkit::internal::status_macros::AsAbsl(std::move(tmp).status()); \
  }                                                                            \
  lhs = std::move(*tmp)

#endif  // CTXKIT_LIB_STATUS_STATUS_MACROS_H_
