// The context hierarchy: the child -> parent links that parent and child
// relationships state, kept in graph.hier / graph.kids beside the edges so
// that "who is my parent" is one lookup and the depth and cycle rules are
// checked where the links are written.
//
// A `parent` edge s -> t says s is the parent of t; a `child` edge s -> t
// says s is a child of t (the seed's convention). A link exists while at
// least one current (not expired) edge states it. A context has at most one
// parent; the hierarchy is acyclic and no context lies more than
// max_depth levels below its root.
//
// Every function works inside the caller's transaction and may be run twice
// by Store::Update, so it touches nothing outside it.

#ifndef CTXKIT_LIB_GRAPH_HIERARCHY_H_
#define CTXKIT_LIB_GRAPH_HIERARCHY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"
#include "lib/graph/graph_records.h"

namespace ctxkit::internal {

struct HierarchyLinkParts {
  uint64_t child = 0;
  uint64_t parent = 0;
};
// The link edge (source, type, target) states; nullopt unless type is
// parent or child.
std::optional<HierarchyLinkParts> HierarchyLinkOf(uint64_t source, uint8_t type,
                                                  uint64_t target);

absl::StatusOr<std::optional<uint64_t>> ParentOf(const Transaction& txn,
                                                 const GraphDbs& dbs,
                                                 uint64_t child);
// In seq order.
absl::StatusOr<std::vector<uint64_t>> ChildrenOf(const Transaction& txn,
                                                 const GraphDbs& dbs,
                                                 uint64_t parent);
// The parent first, the root last. DATA_LOSS when the chain is longer than
// kMaxHops levels (a cycle written behind the graph's back).
absl::StatusOr<std::vector<uint64_t>> AncestorsOf(const Transaction& txn,
                                                  const GraphDbs& dbs,
                                                  uint64_t seq);

struct LinkRequest {
  uint64_t child = 0;
  uint64_t parent = 0;
  bool replace_parent = false;
  uint32_t max_depth = 3;
  int64_t now = 0;
  // For the errors: the ids of the edge's ends, as the caller named them.
  std::string_view child_id;
  std::string_view parent_id;
};
// Links request.child under request.parent (an edge stating it is being
// written). Already so linked: nothing changes. Errors, before anything is
// written: ALREADY_EXISTS when the child has another parent and not
// replace_parent (with it, the old link goes and the current edges that
// stated it are expired at `now`); FAILED_PRECONDITION "would create a
// cycle" when the parent lies below the child, or "deeper than
// maxHierarchyDepth" when the child's subtree would end more than max_depth
// levels below its root.
absl::Status LinkParent(WriteTransaction& txn, const GraphDbs& dbs,
                        const LinkRequest& request);

// After edge (source, type, target) was removed or expired: removes the
// link it stated unless another current edge still states it.
absl::Status UnlinkIfUnstated(WriteTransaction& txn, const GraphDbs& dbs,
                              uint64_t source, uint8_t type, uint64_t target);

// Removes context `seq`'s links (to its parent and from its children, who
// become roots) and its hierarchical summary, for deleting it. The parent's
// hierarchical summary stays as written until its next rewrite.
absl::Status DropHierarchyOf(WriteTransaction& txn, const GraphDbs& dbs,
                             uint64_t seq);

// Verify's share: graph.hier and graph.kids mirror each other, join
// existing contexts, each link is stated by a current edge and each current
// parent/child edge's link exists, no cycle, depth within `max_depth`,
// hierarchical summaries belong to contexts. Appends to `problems`.
absl::Status CheckHierarchy(
    const Transaction& txn, const GraphDbs& dbs,
    const absl::flat_hash_map<uint64_t, ContextRecord>& contexts,
    uint32_t max_depth, std::vector<std::string>* problems);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_HIERARCHY_H_
