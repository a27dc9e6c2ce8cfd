// Early returns for lib/ .cc files, where nearly every line is fallible:
// one definition instead of a copy per file.
//
//   CTXKIT_RETURN_IF_ERROR(status_expr);     // returns the status if not OK
//   CTXKIT_ASSIGN_OR_RETURN(T x, statusor);  // x = value, or returns status
//
// The status is returned as the expression gives it (absl::Status from
// absl::StatusOr, ctxkit::Status from ctxkit::StatusOr): the function's
// return type must accept it. lib/references has its own pair that also
// converts ctxkit::Status to absl::Status (index_macros.h).
//
// Each expansion names its temporary by __COUNTER__, so that two on one line
// (or in one statement) do not collide and -Wshadow stays quiet.

#ifndef CTXKIT_LIB_STATUS_STATUS_MACROS_H_
#define CTXKIT_LIB_STATUS_STATUS_MACROS_H_

#include <utility>

#define CTXKIT_STATUS_CONCAT_INNER(a, b) a##b
#define CTXKIT_STATUS_CONCAT(a, b) CTXKIT_STATUS_CONCAT_INNER(a, b)

#define CTXKIT_RETURN_IF_ERROR(expr) \
  CTXKIT_RETURN_IF_ERROR_IMPL(       \
      CTXKIT_STATUS_CONCAT(ctxkit_status_, __COUNTER__), expr)
#define CTXKIT_RETURN_IF_ERROR_IMPL(name, expr) \
  do {                                          \
    auto name = (expr);                         \
    if (!name.ok()) return name;                \
  } while (0)

#define CTXKIT_ASSIGN_OR_RETURN(lhs, expr) \
  CTXKIT_ASSIGN_OR_RETURN_IMPL(            \
      CTXKIT_STATUS_CONCAT(ctxkit_status_or_, __COUNTER__), lhs, expr)
#define CTXKIT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(*tmp)

#endif  // CTXKIT_LIB_STATUS_STATUS_MACROS_H_
