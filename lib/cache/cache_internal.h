// The cache as the rest of lib/ calls it (the compactor keeps its results
// there), returning absl::Status like everything else inside the library
// (DESIGN.md).
//
// These functions are the implementation; the public methods in
// include/ctxkit/cache.h are each one of them plus one ToPublic, so a status
// crosses between Abseil and ctxkit only where a user's call enters or
// leaves the library, never between two parts of lib/. The prefix (Cache...)
// keeps a call site inside a class that has its own Get or Put from
// resolving to the member instead.
//
// Contracts, errors, lifetimes and thread safety are those of the public
// method of the same name (include/ctxkit/cache.h).

#ifndef CTXKIT_LIB_CACHE_CACHE_INTERNAL_H_
#define CTXKIT_LIB_CACHE_CACHE_INTERNAL_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ctxkit/cache.h"

namespace ctxkit::internal {

// The friend of Cache through which the functions below reach its
// implementation.
struct CacheAccess {
  // The cache's implementation, valid as long as `cache`.
  static CacheImpl& Impl(Cache& cache) { return *cache.impl_; }
};

// As the public Cache::PutKeyed.
absl::StatusOr<CachePutResult> CachePutKeyed(
    Cache& cache, std::string_view lookup, std::string_view value,
    const CachePutOptions& options = {});

// As the public Cache::GetKeyed.
absl::StatusOr<CacheEntry> CacheGetKeyed(Cache& cache, std::string_view lookup,
                                         std::string_view prefix);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CACHE_CACHE_INTERNAL_H_
