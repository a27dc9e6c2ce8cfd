// The context graph's share of CheckStore: ContextGraph::Verify over the
// store, as a DATA_LOSS error when it finds a problem.

#ifndef CTXKIT_LIB_GRAPH_GRAPH_CHECK_H_
#define CTXKIT_LIB_GRAPH_GRAPH_CHECK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

struct GraphCheckSummary {
  uint64_t contexts = 0;
  uint64_t relationships = 0;
};

// Verifies the graph of `store` in one snapshot. A store whose graph was
// never created (read-only, made before the graph existed) has none and is
// whole. DATA_LOSS listing the first problems Verify found; the status of a
// failed read otherwise.
absl::Status CheckGraph(Store& store, GraphCheckSummary* summary);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_GRAPH_CHECK_H_
