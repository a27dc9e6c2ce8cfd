// Reading a context's edges the way the queries do: one cursor per index
// for a whole query, and an in-edge's record from its graph.in copy (the
// graph.out record only for a value an older build wrote without one).

#ifndef CTXKIT_LIB_GRAPH_EDGE_SCANNER_H_
#define CTXKIT_LIB_GRAPH_EDGE_SCANNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"
#include "lib/graph/graph_records.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {

// Whether an edge counts for a query at `as_of`: not expired, valid from
// valid_at up to (not including) invalid_at; or any edge when
// `include_expired`.
inline bool SummaryIsCurrent(const EdgeSummary& edge, int64_t as_of,
                             bool include_expired) {
  if (include_expired) return true;
  return edge.expired_at == 0 && edge.valid_at <= as_of &&
         (edge.invalid_at == 0 || as_of < edge.invalid_at);
}

// Scans the edges of one context at a time, in one read snapshot. Each
// index gets one cursor for the scanner's life, re-seeked per node, because
// a search scans thousands of nodes and opening a cursor per node costs
// more than the scan of ten edges. An in-edge comes from its graph.in copy
// of the record; only a value written before the copy existed costs a
// graph.out lookup, and then only for an empty value (one holding the
// filter fields gives them without it).
class EdgeScanner {
 public:
  EdgeScanner(const Transaction& txn, const GraphDbs& dbs)
      : txn_(txn), dbs_(dbs) {}

  // Calls fn(key parts, summary, value) for each edge of `node` in one
  // index: out (node is the source) or in (node is the target), whose key
  // starts with node's seq and, if not 0, `type`. `value` is the edge's
  // graph.out record or its graph.in copy (valid for the transaction), or
  // empty for an in-edge that an older build wrote with its filter fields
  // only (OutRecord reads the record then). DATA_LOSS for a malformed key
  // or record, or an in-edge without its out-edge.
  template <typename Fn>
  absl::Status ForEach(uint64_t node, bool out, uint8_t type, Fn&& fn) {
    std::optional<Cursor>& slot = out ? out_ : in_;
    if (!slot) {
      CTXKIT_ASSIGN_OR_RETURN(Cursor c,
                              TxnNewCursor(txn_, out ? dbs_.out : dbs_.in));
      slot.emplace(std::move(c));
    }
    Cursor& cursor = *slot;
    char prefix_bytes[9];
    for (int i = 0; i < 8; ++i) {
      prefix_bytes[i] = static_cast<char>(node >> (56 - 8 * i));
    }
    prefix_bytes[8] = static_cast<char>(type);
    // Every key is checked to be an edge key of this node (and type) by
    // comparing parsed numbers, not bytes: a scan reads one key per edge.
    for (cursor.Seek(std::string_view(prefix_bytes, type != 0 ? 9 : 8));
         cursor.Valid(); cursor.Next()) {
      const std::optional<EdgeKeyParts> k = ParseEdgeKey(cursor.key());
      if (k && (k->first != node || (type != 0 && k->type != type))) break;
      if (!k) {
        if (cursor.key().substr(0, 8) != std::string_view(prefix_bytes, 8)) {
          break;  // another node's key (of any shape) ends the scan
        }
        return absl::DataLossError(
            "context graph record is corrupt: a malformed edge key");
      }
      if (out) {
        CTXKIT_ASSIGN_OR_RETURN(EdgeSummary r,
                                DecodeEdgeSummary(cursor.value()));
        fn(*k, r, cursor.value());
        continue;
      }
      CTXKIT_ASSIGN_OR_RETURN(InEdgeValue v, DecodeInEdgeValue(cursor.value()));
      if (!v.summary) {
        CTXKIT_ASSIGN_OR_RETURN(v.record, OutRecord(k->second, k->type, node));
        CTXKIT_ASSIGN_OR_RETURN(v.summary, DecodeEdgeSummary(v.record));
      }
      fn(*k, *v.summary, v.record);
    }
    return CursorStatus(cursor);
  }

  // The graph.out record of (source, type, target), valid for the
  // transaction; DATA_LOSS when missing, since an index named it.
  absl::StatusOr<std::string_view> OutRecord(uint64_t source, uint8_t type,
                                             uint64_t target) const {
    absl::StatusOr<std::string_view> v =
        TxnGet(txn_, dbs_.out, EdgeKey(source, type, target));
    if (v.status().code() == absl::StatusCode::kNotFound) {
      return absl::DataLossError(
          "context graph record is corrupt: an incoming edge has no "
          "outgoing record (run Verify)");
    }
    return v;
  }

 private:
  const Transaction& txn_;
  const GraphDbs& dbs_;
  std::optional<Cursor> out_;
  std::optional<Cursor> in_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_EDGE_SCANNER_H_
