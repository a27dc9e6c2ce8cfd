// Early-return helpers for the references part's .cc files, where nearly
// every line is a fallible LMDB call: the public ctxkit::Status of the Store
// API is converted to absl::Status on the way out. Include only from .cc
// files of lib/references.

#ifndef CTXKIT_LIB_REFERENCES_INDEX_MACROS_H_
#define CTXKIT_LIB_REFERENCES_INDEX_MACROS_H_

#include "lib/status/status_internal.h"

namespace ctxkit::internal::refs_detail {

inline absl::Status AsAbsl(const absl::Status& s) { return s; }
inline absl::Status AsAbsl(const ::ctxkit::Status& s) { return ToAbsl(s); }

}  // namespace ctxkit::internal::refs_detail

#define CTXKIT_REFS_CONCAT_INNER(a, b) a##b
#define CTXKIT_REFS_CONCAT(a, b) CTXKIT_REFS_CONCAT_INNER(a, b)

// Returns the error of `expr` (absl::Status or ctxkit::Status).
#define CTXKIT_REFS_RETURN_IF_ERROR(expr)                                      \
  do {                                                                         \
    absl::Status refs_status_ = ::ctxkit::internal::refs_detail::AsAbsl(expr); \
    if (!refs_status_.ok()) return refs_status_;                               \
  } while (0)

// `lhs` = value of `expr` (absl::StatusOr or ctxkit::StatusOr), or returns
// its error.
#define CTXKIT_REFS_ASSIGN_OR_RETURN(lhs, expr)                             \
  CTXKIT_REFS_ASSIGN_OR_RETURN_IMPL(CTXKIT_REFS_CONCAT(refs_or_, __LINE__), \
                                    lhs, expr)
#define CTXKIT_REFS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                      \
  auto tmp = (expr);                                                           \
  if (!tmp.ok()) return ::ctxkit::internal::refs_detail::AsAbsl(tmp.status()); \
  lhs = std::move(*tmp)

#endif  // CTXKIT_LIB_REFERENCES_INDEX_MACROS_H_
