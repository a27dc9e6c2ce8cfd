// Compaction of an already parsed "messages" array, for ctxkit's own entry
// points that parsed the request themselves (the C ABI): handing Compact()
// the messages again as text would parse a large history twice.
//
// Thread safety: as Compactor::Compact().

#ifndef CTXKIT_LIB_COMPACTOR_COMPACTOR_ACCESS_H_
#define CTXKIT_LIB_COMPACTOR_COMPACTOR_ACCESS_H_

#include "absl/status/statusor.h"
#include "ctxkit/compactor.h"
#include "simdjson.h"

namespace ctxkit::internal {

class CompactorAccess {
 public:
  // Compactor::Compact() of `messages`, which must stay valid (its parser
  // untouched) during the call. Errors as Compact().
  static absl::StatusOr<CompactionResult> Compact(
      const Compactor& compactor, simdjson::dom::array messages,
      const CompactionOptions& options);
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_COMPACTOR_ACCESS_H_
