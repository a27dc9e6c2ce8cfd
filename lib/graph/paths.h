// Path search over the context graph (CG-9), independent of storage: the
// caller supplies the adjacency, so the same search runs over LMDB cursors
// in ContextGraph and over plain vectors in tests.
//
// Two searches:
//  - unweighted: bidirectional breadth-first search, fewest hops; weights
//    are ignored (a weight-0 edge is crossed);
//  - weighted: the path whose product of weights is largest, by a
//    bidirectional Dijkstra over (node, hops) states so that max_hops is a
//    true constraint; each side's first two breadth-first layers prune the
//    other side's states that cannot reach it within max_hops.
//    Products are compared exactly, not as floating -ln sums whose rounding
//    depends on the order of the terms, so equal products tie as real
//    numbers do. Weights <= 0 or NaN are impassable; weights above 1 rank
//    as 1 (costs must not be negative) and count as given in total_weight.
// Both stop at PathQuery::max_hops (<= 0 finds only source == target).
// Ties are broken by node number (the context's seq), so the same graph
// always gives the same path. Of parallel edges joining two consecutive
// nodes the heaviest is reported, then the smallest type, then the
// smallest (source, target).

#ifndef CTXKIT_LIB_GRAPH_PATHS_H_
#define CTXKIT_LIB_GRAPH_PATHS_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ctxkit::internal {

// One traversable edge as stored: source -> target, whatever direction the
// search crosses it in.
struct PathEdge {
  uint64_t source = 0;
  uint64_t target = 0;
  uint8_t type = 0;
  float weight = 0;  // in [0, 1]
};

// Emits, through `emit`, every edge the search may cross from `node`:
// forward (backward == false) from the source's side, backward from the
// target's side. For a directed search ("outgoing") forward means the
// node's out-edges and backward its in-edges; for "both", each side gets
// both. The adjacency applies the type, expiry and archive filters. It may
// emit edges in any order and the same edge more than once, but the two
// sides must agree: u's forward edges include an edge to v exactly when v's
// backward edges include it (the searches read a joining edge from either
// end, whichever is cheaper). An error stops
// the search and is returned by FindPath.
using PathEmit = absl::FunctionRef<void(const PathEdge&)>;
using PathAdjacency =
    absl::FunctionRef<absl::Status(uint64_t node, bool backward, PathEmit)>;

struct PathQuery {
  uint64_t source = 0;
  uint64_t target = 0;
  int max_hops = 6;  // 1..16, checked by the caller
  bool weighted = false;
};

struct PathResult {
  bool found = false;
  std::vector<uint64_t> nodes;  // source ... target; {source} when equal
  std::vector<PathEdge> edges;  // nodes.size() - 1 of them, as stored
  double total_weight = 0;      // product of the edges' weights; 1 if none
};

// The path from query.source to query.target within query.max_hops, or
// found == false (nodes and edges empty) when there is none. Unweighted:
// fewest hops; among those, the lexicographically smallest sequence of node
// numbers. Weighted: largest product of weights within max_hops; among
// equal products, fewest hops, then the smallest node sequence. Errors: the
// adjacency's; the search stops at the first. Both searches call the
// adjacency from both ends. Thread-safe (no shared state). Memory: the
// nodes visited (unweighted); up to max_hops states per node reached and
// the edges of every node expanded, per side (weighted).
absl::StatusOr<PathResult> FindPath(const PathQuery& query,
                                    PathAdjacency adjacency);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_PATHS_H_
