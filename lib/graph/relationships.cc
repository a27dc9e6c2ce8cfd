// ContextGraph's relationships: upsert, removal, invalidation, the related
// query and paths. Each edge is a graph.out record with its graph.in mirror,
// written together.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/field_check.h"
#include "lib/graph/edge_filter.h"
#include "lib/graph/edge_scanner.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/hierarchy.h"
#include "lib/graph/ignore_patterns.h"
#include "lib/graph/metrics.h"
#include "lib/graph/paths.h"
#include "lib/json/json_writer.h"
#include "lib/json/merge_patch.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

using internal::EdgeRecord;
using internal::GraphTotals;

namespace {

absl::StatusOr<uint8_t> CheckType(std::string_view type) {
  if (std::optional<uint8_t> code = internal::EdgeTypeCode(type)) return *code;
  CTXKIT_RETURN_IF_ERROR(internal::CheckText("relationshipType", type, 64));
  std::string known;
  for (std::string_view name : internal::kEdgeTypeNames) {
    if (!known.empty()) known += ", ";
    known += name;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "relationshipType is '%s'; it must be one of %s", type, known));
}

// The three fields that name an edge, checked.
struct EdgeName {
  uint8_t type = 0;
};
absl::StatusOr<EdgeName> CheckEdgeName(std::string_view source,
                                       std::string_view target,
                                       std::string_view type) {
  CTXKIT_RETURN_IF_ERROR(internal::CheckContextId("source", source));
  CTXKIT_RETURN_IF_ERROR(internal::CheckContextId("target", target));
  if (source == target) {
    return absl::InvalidArgumentError(
        "target is the source: a context cannot be related to itself");
  }
  EdgeName name;
  CTXKIT_ASSIGN_OR_RETURN(name.type, CheckType(type));
  return name;
}

Relationship PublicEdge(std::string source, std::string target, uint8_t type,
                        const EdgeRecord& r) {
  Relationship out;
  out.source = std::move(source);
  out.target = std::move(target);
  out.type = std::string(internal::EdgeTypeName(type));
  out.weight = r.weight;
  out.metadata = r.metadata;
  out.created_at = r.created_at;
  out.updated_at = r.updated_at;
  out.valid_at = r.valid_at;
  out.invalid_at = r.invalid_at;
  out.expired_at = r.expired_at;
  return out;
}

absl::StatusOr<std::optional<EdgeRecord>> ReadEdge(
    const Transaction& txn, const internal::GraphDbs& dbs,
    const std::string& key) {
  absl::StatusOr<std::string_view> v = internal::TxnGet(txn, dbs.out, key);
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return v.status();
  }
  CTXKIT_ASSIGN_OR_RETURN(EdgeRecord r, internal::DecodeEdge(*v));
  return r;
}

absl::Status NoSuchEdge(std::string_view source, std::string_view target,
                        std::string_view type) {
  return absl::NotFoundError(absl::StrFormat(
      "there is no %s relationship from '%s' to '%s'", type, source, target));
}

}  // namespace

namespace {

// How many edges one AddRelationships call takes: one write transaction
// must stay a bounded size.
constexpr size_t kMaxRelationshipBatch = 100000;

// A NewRelationship checked before the write: its type code, and the
// conversations of ends it may create (prepared outside the write).
struct PreparedEdge {
  uint8_t type = 0;
  bool auto_link = false;  // written by AutoLink, not by a caller
  std::optional<Conversation> new_source = {};
  std::optional<Conversation> new_target = {};
};

absl::StatusOr<PreparedEdge> PrepareEdge(const ContextGraph::Impl& impl,
                                         const NewRelationship& edge) {
  PreparedEdge prepared;
  CTXKIT_ASSIGN_OR_RETURN(EdgeName name,
                          CheckEdgeName(edge.source, edge.target, edge.type));
  prepared.type = name.type;
  if (!(edge.weight >= 0 && edge.weight <= 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "weight is %g; it must be between 0 and 1", edge.weight));
  }
  CTXKIT_RETURN_IF_ERROR(internal::CheckJsonObject(
      "metadata", edge.metadata, ContextGraphLimits::kMaxMetadataBytes));
  if (edge.valid_at && edge.invalid_at && *edge.invalid_at < *edge.valid_at) {
    return absl::InvalidArgumentError(
        absl::StrFormat("invalidAt (%d) must not be before validAt (%d)",
                        *edge.invalid_at, *edge.valid_at));
  }
  if (edge.create_missing) {
    const std::vector<std::string>& ignored = impl.options.ignore_patterns;
    CTXKIT_RETURN_IF_ERROR(
        internal::CheckNotIgnored(ignored, "source", edge.source));
    CTXKIT_RETURN_IF_ERROR(
        internal::CheckNotIgnored(ignored, "target", edge.target));
    CTXKIT_ASSIGN_OR_RETURN(prepared.new_source,
                            impl.NewConversationFor(edge.source));
    CTXKIT_ASSIGN_OR_RETURN(prepared.new_target,
                            impl.NewConversationFor(edge.target));
  }
  return prepared;
}

// Upserts one prepared edge in `txn`, counting a new edge (and new
// contexts) in `totals`, which the caller writes.
absl::StatusOr<RelationshipUpsert> UpsertEdge(const ContextGraph::Impl& impl,
                                              WriteTransaction& txn,
                                              GraphTotals& totals, int64_t now,
                                              const NewRelationship& edge,
                                              const PreparedEdge& prepared) {
  const internal::GraphDbs& dbs = impl.dbs;
  const uint8_t type = prepared.type;
  CTXKIT_RETURN_IF_ERROR(internal::RecordGraphFormat(txn, dbs));
  auto end = [&](std::string_view id, std::string_view field,
                 const std::optional<Conversation>& fresh)
      -> absl::StatusOr<uint64_t> {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> seq, impl.Find(txn, id));
    if (seq) return *seq;
    if (!fresh) {
      return absl::NotFoundError(
          absl::StrFormat("%s '%s' is not a context", field, id));
    }
    return impl.Create(txn, id, *fresh, totals, now);
  };
  CTXKIT_ASSIGN_OR_RETURN(uint64_t source,
                          end(edge.source, "source", prepared.new_source));
  CTXKIT_ASSIGN_OR_RETURN(uint64_t target,
                          end(edge.target, "target", prepared.new_target));
  if (const std::optional<internal::HierarchyLinkParts> link =
          internal::HierarchyLinkOf(source, type, target)) {
    const bool source_is_child = link->child == source;
    CTXKIT_RETURN_IF_ERROR(internal::LinkParent(
        txn, dbs,
        {.child = link->child,
         .parent = link->parent,
         .replace_parent = edge.replace_parent,
         .max_depth = impl.options.max_hierarchy_depth,
         .now = now,
         .child_id = source_is_child ? edge.source : edge.target,
         .parent_id = source_is_child ? edge.target : edge.source}));
  }
  const std::string key = internal::EdgeKey(source, type, target);
  CTXKIT_ASSIGN_OR_RETURN(std::optional<EdgeRecord> existing,
                          ReadEdge(txn, dbs, key));
  EdgeRecord r;
  if (existing) {
    r = *std::move(existing);
    CTXKIT_ASSIGN_OR_RETURN(
        r.metadata, internal::MergePatch(r.metadata, edge.metadata,
                                         "the stored metadata", "metadata"));
    if (r.metadata.size() > ContextGraphLimits::kMaxMetadataBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "metadata merged into the stored metadata is %d bytes; the "
          "limit is %d",
          r.metadata.size(), ContextGraphLimits::kMaxMetadataBytes));
    }
    if (edge.valid_at) r.valid_at = *edge.valid_at;
    if (edge.invalid_at) {
      r.invalid_at = *edge.invalid_at;
    } else if (r.expired_at != 0) {
      r.invalid_at = 0;  // asserted again: it holds from now on
    }
    r.expired_at = 0;
  } else {
    r.created_at = now;
    r.valid_at = edge.valid_at.value_or(now);
    r.invalid_at = edge.invalid_at.value_or(0);
    r.serial = totals.next_edge_serial++;
    r.metadata = edge.metadata;
    ++totals.edges_by_type[type - 1];
  }
  if (r.invalid_at != 0 && r.invalid_at < r.valid_at) {
    return absl::InvalidArgumentError(
        absl::StrFormat("invalidAt (%d) must not be before validAt (%d)",
                        r.invalid_at, r.valid_at));
  }
  r.weight = edge.weight;
  r.updated_at = now;
  // A caller's upsert makes an auto edge the caller's.
  r.flags = prepared.auto_link ? (r.flags | internal::kEdgeAutoLink)
                               : (r.flags & ~internal::kEdgeAutoLink);
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs.out, key, internal::EncodeEdge(r)));
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs.in, internal::EdgeKey(target, type, source),
                       internal::EncodeInEdgeValue(r)));
  RelationshipUpsert result;
  result.created = !existing.has_value();
  result.relationship = PublicEdge(edge.source, edge.target, type, r);
  return result;
}

// `status` with its message prefixed by "edges[i].": every message of the
// checks above starts with the field it names.
absl::Status InEdge(const absl::Status& status, size_t i) {
  return absl::Status(status.code(),
                      absl::StrFormat("edges[%d].%s", i, status.message()));
}

}  // namespace

StatusOr<RelationshipUpsert> ContextGraph::AddRelationship(
    const NewRelationship& edge) {
  internal::GraphCall call(*impl_, "graph_db_add");
  absl::StatusOr<PreparedEdge> prepared = PrepareEdge(*impl_, edge);
  if (!prepared.ok()) return internal::ToPublic(prepared.status());
  RelationshipUpsert result;
  const absl::Status s = internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        CTXKIT_ASSIGN_OR_RETURN(GraphTotals totals,
                                internal::ReadTotals(txn, impl_->dbs));
        CTXKIT_ASSIGN_OR_RETURN(
            result,
            UpsertEdge(*impl_, txn, totals, impl_->Now(), edge, *prepared));
        return internal::TxnPut(txn, impl_->dbs.stats,
                                internal::kGraphTotalsKey,
                                internal::EncodeTotals(totals));
      });
  if (!s.ok()) return internal::ToPublic(s);
  return call.Done(std::move(result));
}

StatusOr<std::vector<RelationshipUpsert>> ContextGraph::AddRelationships(
    const std::vector<NewRelationship>& edges) {
  internal::GraphCall call(*impl_, "graph_db_add");
  if (edges.empty() || edges.size() > kMaxRelationshipBatch) {
    return internal::ToPublic(absl::InvalidArgumentError(
        absl::StrFormat("edges has %d entries; it must have 1..%d",
                        edges.size(), kMaxRelationshipBatch)));
  }
  std::vector<PreparedEdge> prepared;
  prepared.reserve(edges.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    absl::StatusOr<PreparedEdge> p = PrepareEdge(*impl_, edges[i]);
    if (!p.ok()) return internal::ToPublic(InEdge(p.status(), i));
    prepared.push_back(*std::move(p));
  }
  std::vector<RelationshipUpsert> results;
  const absl::Status s = internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        // A rerun (the map grew) starts over.
        results.clear();
        results.reserve(edges.size());
        CTXKIT_ASSIGN_OR_RETURN(GraphTotals totals,
                                internal::ReadTotals(txn, impl_->dbs));
        const int64_t now = impl_->Now();
        for (size_t i = 0; i < edges.size(); ++i) {
          absl::StatusOr<RelationshipUpsert> r =
              UpsertEdge(*impl_, txn, totals, now, edges[i], prepared[i]);
          if (!r.ok()) {
            // A full store is the transaction's, not the edge's.
            if (r.status().code() == absl::StatusCode::kResourceExhausted) {
              return r.status();
            }
            return InEdge(r.status(), i);
          }
          results.push_back(*std::move(r));
        }
        return internal::TxnPut(txn, impl_->dbs.stats,
                                internal::kGraphTotalsKey,
                                internal::EncodeTotals(totals));
      });
  if (!s.ok()) return internal::ToPublic(s);
  return call.Done(std::move(results));
}

Status ContextGraph::RemoveRelationship(std::string_view source,
                                        std::string_view target,
                                        std::string_view type) {
  internal::GraphCall call(*impl_, "graph_db_delete");
  absl::StatusOr<EdgeName> name = CheckEdgeName(source, target, type);
  if (!name.ok()) return internal::ToPublic(name.status());
  return call.Done(internal::ToPublic(internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        const internal::GraphDbs& dbs = impl_->dbs;
        CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> s,
                                impl_->Find(txn, source));
        CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> t,
                                impl_->Find(txn, target));
        if (!s || !t) return NoSuchEdge(source, target, type);
        CTXKIT_ASSIGN_OR_RETURN(
            bool removed,
            internal::TxnDelete(txn, dbs.out,
                                internal::EdgeKey(*s, name->type, *t)));
        if (!removed) return NoSuchEdge(source, target, type);
        CTXKIT_RETURN_IF_ERROR(
            internal::TxnDelete(txn, dbs.in,
                                internal::EdgeKey(*t, name->type, *s))
                .status());
        CTXKIT_RETURN_IF_ERROR(
            internal::UnlinkIfUnstated(txn, dbs, *s, name->type, *t));
        CTXKIT_ASSIGN_OR_RETURN(GraphTotals totals,
                                internal::ReadTotals(txn, dbs));
        --totals.edges_by_type[name->type - 1];
        return internal::TxnPut(txn, dbs.stats, internal::kGraphTotalsKey,
                                internal::EncodeTotals(totals));
      })));
}

StatusOr<Relationship> ContextGraph::InvalidateRelationship(
    std::string_view source, std::string_view target, std::string_view type,
    std::optional<int64_t> at) {
  internal::GraphCall call(*impl_, "graph_db_delete");
  absl::StatusOr<EdgeName> name = CheckEdgeName(source, target, type);
  if (!name.ok()) return internal::ToPublic(name.status());
  Relationship result;
  const absl::Status st = internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        const internal::GraphDbs& dbs = impl_->dbs;
        const int64_t now = impl_->Now();
        CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> s,
                                impl_->Find(txn, source));
        CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> t,
                                impl_->Find(txn, target));
        if (!s || !t) return NoSuchEdge(source, target, type);
        const std::string key = internal::EdgeKey(*s, name->type, *t);
        CTXKIT_ASSIGN_OR_RETURN(std::optional<EdgeRecord> r,
                                ReadEdge(txn, dbs, key));
        if (!r) return NoSuchEdge(source, target, type);
        if (r->expired_at != 0) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "the %s relationship from '%s' to '%s' was already invalidated "
              "(expiredAt %d)",
              type, source, target, r->expired_at));
        }
        const int64_t end = at.value_or(now);
        // Ending a fact at the moment it began is allowed (an empty
        // interval): an edge added and withdrawn within a millisecond must
        // not be an error.
        if (end < r->valid_at) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "at (%d) must not be before the relationship's validAt (%d)", end,
              r->valid_at));
        }
        CTXKIT_RETURN_IF_ERROR(internal::RecordGraphFormat(txn, dbs));
        r->invalid_at = end;
        r->expired_at = now;
        r->updated_at = now;
        CTXKIT_RETURN_IF_ERROR(
            internal::TxnPut(txn, dbs.out, key, internal::EncodeEdge(*r)));
        CTXKIT_RETURN_IF_ERROR(
            internal::TxnPut(txn, dbs.in, internal::EdgeKey(*t, name->type, *s),
                             internal::EncodeInEdgeValue(*r)));
        CTXKIT_RETURN_IF_ERROR(
            internal::UnlinkIfUnstated(txn, dbs, *s, name->type, *t));
        result = PublicEdge(std::string(source), std::string(target),
                            name->type, *r);
        return absl::OkStatus();
      });
  if (!st.ok()) return internal::ToPublic(st);
  return call.Done(std::move(result));
}

absl::StatusOr<std::vector<std::string>> ContextGraph::Impl::AutoLink(
    WriteTransaction& txn, const internal::ContextRecord& ctx, uint64_t seq,
    uint32_t version, int64_t now) const {
  std::vector<std::string> linked;
  if (options.auto_link_limit == 0) return linked;
  const uint8_t type = *internal::EdgeTypeCode("similar");
  CTXKIT_ASSIGN_OR_RETURN(std::vector<internal::LexicalHit> similar,
                          SimilarTo(txn, seq, options.auto_link_limit,
                                    options.similarity_threshold));
  internal::JsonWriter metadata;
  metadata.BeginObject()
      .Key("auto")
      .Bool(true)
      .Key("method")
      .String("keyword")
      .Key("summaryVersion")
      .Uint(version)
      .EndObject();
  CTXKIT_ASSIGN_OR_RETURN(const std::string metadata_json,
                          std::move(metadata).Finish());
  CTXKIT_ASSIGN_OR_RETURN(GraphTotals totals, internal::ReadTotals(txn, dbs));
  absl::flat_hash_set<uint64_t> kept;
  for (const internal::LexicalHit& hit : similar) {
    // A caller's own edge stays the caller's.
    CTXKIT_ASSIGN_OR_RETURN(
        std::optional<EdgeRecord> existing,
        ReadEdge(txn, dbs, internal::EdgeKey(seq, type, hit.seq)));
    if (existing && !(existing->flags & internal::kEdgeAutoLink)) continue;
    CTXKIT_ASSIGN_OR_RETURN(internal::ContextRecord other, Read(txn, hit.seq));
    NewRelationship edge;
    edge.source = ctx.id;
    edge.target = other.id;
    edge.type = "similar";
    edge.weight = std::clamp(hit.cosine, 0.0, 1.0);
    edge.metadata = metadata_json;
    PreparedEdge prepared;
    prepared.type = type;
    prepared.auto_link = true;
    CTXKIT_RETURN_IF_ERROR(
        UpsertEdge(*this, txn, totals, now, edge, prepared).status());
    kept.insert(hit.seq);
    linked.push_back(std::move(other.id));
  }
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs.stats,
                                          internal::kGraphTotalsKey,
                                          internal::EncodeTotals(totals)));
  // Its earlier auto edges that fell out: ended now, kept in the history.
  std::vector<std::pair<std::string, EdgeRecord>> stale;
  {
    std::string prefix = internal::SeqKey(seq);
    prefix.push_back(static_cast<char>(type));
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                            internal::TxnNewCursor(txn, dbs.out));
    for (cursor.Seek(prefix);
         cursor.Valid() && cursor.key().starts_with(prefix); cursor.Next()) {
      const std::optional<internal::EdgeKeyParts> k =
          internal::ParseEdgeKey(cursor.key());
      if (!k) {
        return absl::DataLossError(
            "context graph record is corrupt: a malformed edge key");
      }
      CTXKIT_ASSIGN_OR_RETURN(EdgeRecord r,
                              internal::DecodeEdge(cursor.value()));
      if ((r.flags & internal::kEdgeAutoLink) && r.expired_at == 0 &&
          !kept.contains(k->second)) {
        stale.emplace_back(std::string(cursor.key()), std::move(r));
      }
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  }
  for (auto& [key, r] : stale) {
    const internal::EdgeKeyParts k = *internal::ParseEdgeKey(key);
    r.invalid_at = std::max(now, r.valid_at);
    r.expired_at = now;
    r.updated_at = now;
    CTXKIT_RETURN_IF_ERROR(
        internal::TxnPut(txn, dbs.out, key, internal::EncodeEdge(r)));
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs.in, internal::EdgeKey(k.second, k.type, k.first),
        internal::EncodeInEdgeValue(r)));
  }
  return linked;
}

absl::StatusOr<std::vector<uint64_t>> ContextGraph::Impl::CurrentNeighbours(
    const Transaction& txn, uint64_t seq, int64_t now) const {
  internal::EdgeScanner scan(txn, dbs);
  std::vector<uint64_t> out;
  absl::flat_hash_set<uint64_t> seen;
  for (const bool outgoing : {true, false}) {
    CTXKIT_RETURN_IF_ERROR(scan.ForEach(
        seq, outgoing, 0,
        [&](const internal::EdgeKeyParts& k, const internal::EdgeSummary& e,
            std::string_view) {
          if (internal::SummaryIsCurrent(e, now, /*include_expired=*/false) &&
              seen.insert(k.second).second) {
            out.push_back(k.second);
          }
        }));
  }
  return out;
}

StatusOr<RelatedResult> ContextGraph::Related(
    std::string_view id, const RelatedOptions& options) const {
  internal::GraphCall call(*impl_, "graph_db_search");
  absl::StatusOr<internal::EdgeFilter> filter =
      internal::EdgeFilter::Make(options.metadata, options.tags);
  auto checked = [&]() -> absl::StatusOr<uint8_t> {
    CTXKIT_RETURN_IF_ERROR(internal::CheckContextId("contextId", id));
    CTXKIT_RETURN_IF_ERROR(filter.status());
    CTXKIT_RETURN_IF_ERROR(internal::CheckRange(
        "limit", options.limit, 1, ContextGraphLimits::kMaxListLimit));
    if (!(options.min_weight >= 0 && options.min_weight <= 1)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "minWeight is %g; it must be between 0 and 1", options.min_weight));
    }
    if (options.direction != EdgeDirection::kBoth &&
        options.direction != EdgeDirection::kOutgoing &&
        options.direction != EdgeDirection::kIncoming) {
      return absl::InvalidArgumentError(
          "direction must be both, outgoing or incoming");
    }
    if (options.type.empty()) return uint8_t{0};
    return CheckType(options.type);
  };
  absl::StatusOr<uint8_t> type = checked();
  if (!type.ok()) return internal::ToPublic(type.status());
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  const int64_t as_of = options.as_of.value_or(impl_->Now());

  // An edge that passed the filters, with its record (valid for the
  // transaction) when the scan had it: an in-edge an older build wrote
  // without its copy is read from graph.out only if it lands on the
  // returned page.
  struct Found {
    uint64_t serial;
    uint64_t other;
    uint8_t type;
    bool out;
    std::string_view record;
  };
  auto read = [&]() -> absl::StatusOr<RelatedResult> {
    const internal::GraphDbs& dbs = impl_->dbs;
    CTXKIT_ASSIGN_OR_RETURN(uint64_t seq,
                            impl_->Require(*txn, id, "contextId"));
    CTXKIT_ASSIGN_OR_RETURN(
        internal::ArchivedLookup archived,
        internal::ArchivedLookup::Begin(*txn, dbs, !options.include_archived));
    internal::EdgeScanner scanner(*txn, dbs);
    std::vector<Found> all;
    // One index's edges of `seq`, appended in insertion order.
    auto scan = [&](bool out) -> absl::Status {
      const size_t first = all.size();
      CTXKIT_RETURN_IF_ERROR(scanner.ForEach(
          seq, out, *type,
          [&](const internal::EdgeKeyParts& k, const internal::EdgeSummary& r,
              std::string_view record) {
            if (internal::SummaryIsCurrent(r, as_of, options.include_expired) &&
                r.weight >= options.min_weight &&
                !archived.Contains(k.second) &&
                filter->Keeps(*txn, dbs, scanner, out ? seq : k.second, k.type,
                              out ? k.second : seq, k.second, record)) {
              all.push_back({r.serial, k.second, k.type, out, record});
            }
          }));
      CTXKIT_RETURN_IF_ERROR(filter->status());
      // Keys order a context's edges by (type, other end); serials are
      // unique, so an unstable sort gives the one insertion order.
      std::sort(
          all.begin() + static_cast<ptrdiff_t>(first), all.end(),
          [](const Found& a, const Found& b) { return a.serial < b.serial; });
      return absl::OkStatus();
    };
    if (options.direction != EdgeDirection::kIncoming) {
      CTXKIT_RETURN_IF_ERROR(scan(/*out=*/true));
    }
    if (options.direction != EdgeDirection::kOutgoing) {
      CTXKIT_RETURN_IF_ERROR(scan(/*out=*/false));
    }
    CTXKIT_RETURN_IF_ERROR(archived.status());
    RelatedResult result;
    result.total = all.size();
    const size_t begin = std::min<size_t>(options.offset, all.size());
    const size_t end = std::min<size_t>(begin + options.limit, all.size());
    result.edges.reserve(end - begin);
    // seq -> index in context_ids: a context met twice is read once.
    absl::flat_hash_map<uint64_t, size_t> names;
    const std::string self(id);
    for (size_t i = begin; i < end; ++i) {
      const Found& f = all[i];
      auto [it, inserted] = names.try_emplace(f.other, 0);
      if (inserted) {
        CTXKIT_ASSIGN_OR_RETURN(internal::ContextRecord other,
                                impl_->Read(*txn, f.other));
        it->second = result.context_ids.size();
        result.context_ids.push_back(std::move(other.id));
      }
      const std::string& other_id = result.context_ids[it->second];
      std::string_view record = f.record;
      if (record.empty()) {
        CTXKIT_ASSIGN_OR_RETURN(record,
                                scanner.OutRecord(f.other, f.type, seq));
      }
      CTXKIT_ASSIGN_OR_RETURN(EdgeRecord r, internal::DecodeEdge(record));
      RelatedEdge& edge = result.edges.emplace_back();
      edge.context_id = other_id;
      edge.direction =
          f.out ? EdgeDirection::kOutgoing : EdgeDirection::kIncoming;
      edge.relationship = f.out ? PublicEdge(self, other_id, f.type, r)
                                : PublicEdge(other_id, self, f.type, r);
    }
    return result;
  };
  return call.Done(internal::ToPublic(read()));
}

StatusOr<PathResult> ContextGraph::FindPath(std::string_view source,
                                            std::string_view target,
                                            const PathOptions& options) const {
  internal::GraphCall call(*impl_, "graph_db_search");
  absl::StatusOr<internal::EdgeFilter> filter =
      internal::EdgeFilter::Make(options.metadata, {});
  auto checked = [&]() -> absl::StatusOr<std::vector<uint8_t>> {
    CTXKIT_RETURN_IF_ERROR(internal::CheckContextId("source", source));
    CTXKIT_RETURN_IF_ERROR(internal::CheckContextId("target", target));
    CTXKIT_RETURN_IF_ERROR(filter.status());
    CTXKIT_RETURN_IF_ERROR(internal::CheckRange("maxHops", options.max_hops, 1,
                                                ContextGraphLimits::kMaxHops));
    if (options.direction != EdgeDirection::kBoth &&
        options.direction != EdgeDirection::kOutgoing) {
      return absl::InvalidArgumentError(
          "direction must be both or outgoing for a path");
    }
    std::vector<uint8_t> types;
    for (const std::string& t : options.types) {
      CTXKIT_ASSIGN_OR_RETURN(uint8_t code, CheckType(t));
      types.push_back(code);
    }
    return types;
  };
  absl::StatusOr<std::vector<uint8_t>> types = checked();
  if (!types.ok()) return internal::ToPublic(types.status());
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  const int64_t now = impl_->Now();
  auto search = [&]() -> absl::StatusOr<PathResult> {
    const internal::GraphDbs& dbs = impl_->dbs;
    PathResult result;
    CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> s,
                            impl_->Find(*txn, source));
    CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> t,
                            impl_->Find(*txn, target));
    if (!s || !t) {
      result.reason = !s ? "source not found" : "target not found";
      return result;
    }
    // Archived contexts are not crossed.
    CTXKIT_ASSIGN_OR_RETURN(
        internal::ArchivedLookup archived,
        internal::ArchivedLookup::Begin(*txn, dbs, !options.include_archived));
    const bool source_archived = archived.Contains(*s);
    if (source_archived || archived.Contains(*t)) {
      CTXKIT_RETURN_IF_ERROR(archived.status());
      result.reason =
          source_archived ? "source is archived" : "target is archived";
      return result;
    }
    auto allowed = [&](uint8_t type) {
      return types->empty() ||
             std::find(types->begin(), types->end(), type) != types->end();
    };
    internal::EdgeScanner scanner(*txn, dbs);
    auto edges_of = [&](uint64_t node, bool out,
                        internal::PathEmit emit) -> absl::Status {
      CTXKIT_RETURN_IF_ERROR(scanner.ForEach(
          node, out, /*type=*/0,
          [&](const internal::EdgeKeyParts& k, const internal::EdgeSummary& r,
              std::string_view record) {
            if (!allowed(k.type) ||
                !internal::SummaryIsCurrent(r, now, options.include_expired) ||
                archived.Contains(k.second)) {
              return;
            }
            internal::PathEdge e;
            e.source = out ? node : k.second;
            e.target = out ? k.second : node;
            e.type = k.type;
            e.weight = static_cast<float>(r.weight);
            if (filter->Keeps(*txn, dbs, scanner, e.source, e.type, e.target,
                              k.second, record)) {
              emit(e);
            }
          }));
      return filter->status();
    };
    const bool both = options.direction == EdgeDirection::kBoth;
    auto adjacency = [&](uint64_t node, bool backward,
                         internal::PathEmit emit) -> absl::Status {
      if (both || !backward) CTXKIT_RETURN_IF_ERROR(edges_of(node, true, emit));
      if (both || backward) CTXKIT_RETURN_IF_ERROR(edges_of(node, false, emit));
      return absl::OkStatus();
    };
    internal::PathQuery query;
    query.source = *s;
    query.target = *t;
    query.max_hops = options.max_hops;
    query.weighted = options.weighted;
    CTXKIT_ASSIGN_OR_RETURN(internal::PathResult found,
                            internal::FindPath(query, adjacency));
    CTXKIT_RETURN_IF_ERROR(archived.status());
    if (!found.found) {
      result.reason = "no path within maxHops";
      return result;
    }
    absl::flat_hash_map<uint64_t, std::string> names;
    auto name = [&](uint64_t seq) -> absl::StatusOr<std::string> {
      auto [it, inserted] = names.try_emplace(seq);
      if (inserted) {
        CTXKIT_ASSIGN_OR_RETURN(internal::ContextRecord r,
                                impl_->Read(*txn, seq));
        it->second = std::move(r.id);
      }
      return it->second;
    };
    result.found = true;
    result.total_weight = 1;
    for (uint64_t node : found.nodes) {
      CTXKIT_ASSIGN_OR_RETURN(std::string n, name(node));
      result.path.push_back(std::move(n));
    }
    for (const internal::PathEdge& e : found.edges) {
      CTXKIT_ASSIGN_OR_RETURN(
          std::optional<EdgeRecord> r,
          ReadEdge(*txn, dbs, internal::EdgeKey(e.source, e.type, e.target)));
      if (!r) {
        return absl::DataLossError(
            "context graph record is corrupt: a path edge vanished");
      }
      CTXKIT_ASSIGN_OR_RETURN(std::string from, name(e.source));
      CTXKIT_ASSIGN_OR_RETURN(std::string to, name(e.target));
      result.total_weight *= r->weight;
      result.edges.push_back(
          PublicEdge(std::move(from), std::move(to), e.type, *r));
    }
    return result;
  };
  return call.Done(internal::ToPublic(search()));
}

}  // namespace ctxkit
