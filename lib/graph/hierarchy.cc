#include "lib/graph/hierarchy.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/key_codec.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

uint8_t TypeCode(std::string_view name) { return *EdgeTypeCode(name); }

std::string KidKey(uint64_t parent, uint64_t child) {
  std::string key = SeqKey(parent);
  AppendBigEndian64(&key, child);
  return key;
}

// The edges that can state the link child -> parent.
struct StatingEdge {
  uint64_t source;
  uint8_t type;
  uint64_t target;
};
std::array<StatingEdge, 2> StatingEdges(uint64_t child, uint64_t parent) {
  return {{{parent, TypeCode("parent"), child},
           {child, TypeCode("child"), parent}}};
}

absl::StatusOr<std::optional<EdgeRecord>> CurrentEdge(const Transaction& txn,
                                                      const GraphDbs& dbs,
                                                      const StatingEdge& e) {
  absl::StatusOr<std::string_view> v =
      TxnGet(txn, dbs.out, EdgeKey(e.source, e.type, e.target));
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return v.status();
  }
  CTXKIT_ASSIGN_OR_RETURN(EdgeRecord r, DecodeEdge(*v));
  if (r.expired_at != 0) return std::nullopt;
  return r;
}

absl::Status RemoveLink(WriteTransaction& txn, const GraphDbs& dbs,
                        uint64_t child, uint64_t parent) {
  CTXKIT_RETURN_IF_ERROR(TxnDelete(txn, dbs.hier, SeqKey(child)).status());
  return TxnDelete(txn, dbs.kids, KidKey(parent, child)).status();
}

// Levels below `seq` its deepest descendant lies (0 without children).
absl::StatusOr<uint32_t> HeightOf(const Transaction& txn, const GraphDbs& dbs,
                                  uint64_t seq) {
  std::vector<uint64_t> level = {seq};
  uint32_t height = 0;
  while (true) {
    std::vector<uint64_t> next;
    for (uint64_t s : level) {
      CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> kids,
                              ChildrenOf(txn, dbs, s));
      next.insert(next.end(), kids.begin(), kids.end());
    }
    if (next.empty()) return height;
    if (++height > static_cast<uint32_t>(ContextGraphLimits::kMaxHops)) {
      return absl::DataLossError(
          "context graph record is corrupt: the hierarchy below a context "
          "is deeper than any depth limit");
    }
    level = std::move(next);
  }
}

}  // namespace

std::optional<HierarchyLinkParts> HierarchyLinkOf(uint64_t source, uint8_t type,
                                                  uint64_t target) {
  if (type == TypeCode("parent")) return HierarchyLinkParts{target, source};
  if (type == TypeCode("child")) return HierarchyLinkParts{source, target};
  return std::nullopt;
}

absl::StatusOr<std::optional<uint64_t>> ParentOf(const Transaction& txn,
                                                 const GraphDbs& dbs,
                                                 uint64_t child) {
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.hier, SeqKey(child));
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return v.status();
  }
  if (v->size() != 8) {
    return absl::DataLossError(
        "context graph record is corrupt: a parent link is not 8 bytes");
  }
  return ReadBigEndian64(v->data());
}

absl::StatusOr<std::vector<uint64_t>> ChildrenOf(const Transaction& txn,
                                                 const GraphDbs& dbs,
                                                 uint64_t parent) {
  std::vector<uint64_t> out;
  const std::string prefix = SeqKey(parent);
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.kids));
  for (cursor.Seek(prefix); cursor.Valid() && cursor.key().starts_with(prefix);
       cursor.Next()) {
    if (cursor.key().size() != 16) {
      return absl::DataLossError(
          "context graph record is corrupt: a child link key is not 16 "
          "bytes");
    }
    out.push_back(ReadBigEndian64(cursor.key().data() + 8));
  }
  CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  return out;
}

absl::StatusOr<std::vector<uint64_t>> AncestorsOf(const Transaction& txn,
                                                  const GraphDbs& dbs,
                                                  uint64_t seq) {
  std::vector<uint64_t> out;
  for (uint64_t at = seq;;) {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> parent,
                            ParentOf(txn, dbs, at));
    if (!parent) return out;
    if (out.size() >= static_cast<size_t>(ContextGraphLimits::kMaxHops)) {
      return absl::DataLossError(
          "context graph record is corrupt: a context's ancestors form a "
          "cycle or exceed any depth limit");
    }
    out.push_back(*parent);
    at = *parent;
  }
}

absl::Status LinkParent(WriteTransaction& txn, const GraphDbs& dbs,
                        const LinkRequest& r) {
  CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> current,
                          ParentOf(txn, dbs, r.child));
  if (current == r.parent) return absl::OkStatus();
  if (current && !r.replace_parent) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "'%s' already has a parent; pass replaceParent to move it under "
        "'%s'",
        r.child_id, r.parent_id));
  }
  CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> ancestors,
                          AncestorsOf(txn, dbs, r.parent));
  if (std::find(ancestors.begin(), ancestors.end(), r.child) !=
      ancestors.end()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("making '%s' the parent of '%s' would create a cycle",
                        r.parent_id, r.child_id));
  }
  CTXKIT_ASSIGN_OR_RETURN(uint32_t height, HeightOf(txn, dbs, r.child));
  const uint64_t deepest = ancestors.size() + 1 + height;
  if (deepest > r.max_depth) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "making '%s' the parent of '%s' puts a context %d levels below its "
        "root, deeper than maxHierarchyDepth (%d)",
        r.parent_id, r.child_id, deepest, r.max_depth));
  }
  if (current) {
    // The old link's edges stop being believed now: invalidated, not
    // deleted, so the history of the move stays.
    for (const StatingEdge& e : StatingEdges(r.child, *current)) {
      CTXKIT_ASSIGN_OR_RETURN(std::optional<EdgeRecord> edge,
                              CurrentEdge(txn, dbs, e));
      if (!edge) continue;
      edge->expired_at = r.now;
      if (edge->invalid_at == 0 || edge->invalid_at > r.now) {
        edge->invalid_at = std::max(r.now, edge->valid_at);
      }
      edge->updated_at = r.now;
      CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.out,
                                    EdgeKey(e.source, e.type, e.target),
                                    EncodeEdge(*edge)));
      CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.in,
                                    EdgeKey(e.target, e.type, e.source),
                                    EncodeInEdgeValue(*edge)));
    }
    CTXKIT_RETURN_IF_ERROR(RemoveLink(txn, dbs, r.child, *current));
  }
  CTXKIT_RETURN_IF_ERROR(
      TxnPut(txn, dbs.hier, SeqKey(r.child), SeqKey(r.parent)));
  return TxnPut(txn, dbs.kids, KidKey(r.parent, r.child), {});
}

absl::Status UnlinkIfUnstated(WriteTransaction& txn, const GraphDbs& dbs,
                              uint64_t source, uint8_t type, uint64_t target) {
  const std::optional<HierarchyLinkParts> link =
      HierarchyLinkOf(source, type, target);
  if (!link) return absl::OkStatus();
  CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> parent,
                          ParentOf(txn, dbs, link->child));
  if (parent != link->parent) return absl::OkStatus();
  for (const StatingEdge& e : StatingEdges(link->child, link->parent)) {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<EdgeRecord> edge,
                            CurrentEdge(txn, dbs, e));
    if (edge) return absl::OkStatus();
  }
  return RemoveLink(txn, dbs, link->child, link->parent);
}

absl::Status DropHierarchyOf(WriteTransaction& txn, const GraphDbs& dbs,
                             uint64_t seq) {
  CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> parent,
                          ParentOf(txn, dbs, seq));
  if (parent) CTXKIT_RETURN_IF_ERROR(RemoveLink(txn, dbs, seq, *parent));
  CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> kids,
                          ChildrenOf(txn, dbs, seq));
  for (uint64_t kid : kids) {
    CTXKIT_RETURN_IF_ERROR(RemoveLink(txn, dbs, kid, seq));
  }
  return TxnDelete(txn, dbs.hsum, SeqKey(seq)).status();
}

absl::Status CheckHierarchy(
    const Transaction& txn, const GraphDbs& dbs,
    const absl::flat_hash_map<uint64_t, ContextRecord>& contexts,
    uint32_t max_depth, std::vector<std::string>* problems) {
  absl::flat_hash_map<uint64_t, uint64_t> parent_of;
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.hier));
    for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
      if (cursor.key().size() != 8 || cursor.value().size() != 8) {
        problems->push_back("a malformed parent link");
        continue;
      }
      const uint64_t child = ReadBigEndian64(cursor.key().data());
      const uint64_t parent = ReadBigEndian64(cursor.value().data());
      if (!contexts.contains(child) || !contexts.contains(parent)) {
        problems->push_back(absl::StrFormat(
            "parent link %d -> %d joins a missing context", child, parent));
      }
      if (!TxnGet(txn, dbs.kids, KidKey(parent, child)).ok()) {
        problems->push_back(absl::StrFormat(
            "parent link %d -> %d has no child entry", child, parent));
      }
      bool stated = false;
      for (const StatingEdge& e : StatingEdges(child, parent)) {
        CTXKIT_ASSIGN_OR_RETURN(std::optional<EdgeRecord> edge,
                                CurrentEdge(txn, dbs, e));
        stated = stated || edge.has_value();
      }
      if (!stated) {
        problems->push_back(
            absl::StrFormat("parent link %d -> %d is stated by no current edge",
                            child, parent));
      }
      parent_of[child] = parent;
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  }
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.kids));
    for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
      if (cursor.key().size() != 16) {
        problems->push_back("a malformed child link");
        continue;
      }
      const uint64_t parent = ReadBigEndian64(cursor.key().data());
      const uint64_t child = ReadBigEndian64(cursor.key().data() + 8);
      const auto it = parent_of.find(child);
      if (it == parent_of.end() || it->second != parent) {
        problems->push_back(absl::StrFormat(
            "child link %d -> %d has no parent link", parent, child));
      }
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  }
  // Every current parent/child edge's link exists.
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.out));
    for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
      const std::optional<EdgeKeyParts> k = ParseEdgeKey(cursor.key());
      if (!k) continue;  // Verify's edge pass reports it
      const std::optional<HierarchyLinkParts> link =
          HierarchyLinkOf(k->first, k->type, k->second);
      if (!link) continue;
      absl::StatusOr<EdgeRecord> edge = DecodeEdge(cursor.value());
      if (!edge.ok() || edge->expired_at != 0) continue;
      const auto it = parent_of.find(link->child);
      if (it == parent_of.end() || it->second != link->parent) {
        problems->push_back(absl::StrFormat(
            "the %s edge %d -> %d states a link that is not recorded",
            EdgeTypeName(k->type), k->first, k->second));
      }
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  }
  // Acyclic and within the depth limit.
  for (const auto& [child, parent] : parent_of) {
    uint64_t depth = 0;
    absl::flat_hash_set<uint64_t> seen = {child};
    for (auto it = parent_of.find(child); it != parent_of.end();
         it = parent_of.find(it->second)) {
      ++depth;
      if (!seen.insert(it->second).second) {
        problems->push_back(
            absl::StrFormat("context %d lies on a hierarchy cycle", child));
        break;
      }
    }
    if (depth > max_depth) {
      problems->push_back(absl::StrFormat(
          "context %d is %d levels below its root; the limit is %d", child,
          depth, max_depth));
    }
  }
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.hsum));
    for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
      const uint64_t seq =
          cursor.key().size() == 8 ? ReadBigEndian64(cursor.key().data()) : 0;
      if (!contexts.contains(seq)) {
        problems->push_back("a hierarchical summary belongs to no context");
      } else if (absl::StatusOr<DigestRecord> r = DecodeDigest(cursor.value());
                 !r.ok()) {
        problems->push_back(
            absl::StrFormat("context %d: %s", seq, r.status().message()));
      }
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  }
  return absl::OkStatus();
}

}  // namespace ctxkit::internal
