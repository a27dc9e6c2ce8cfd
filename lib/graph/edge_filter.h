// The optional filters a query puts on each edge it would return or cross:
// the edge's metadata (RelatedOptions::metadata, PathOptions::metadata) and
// the tags of its other end (RelatedOptions::tags). One class so that
// Related and FindPath check and apply them the same way, and so that a
// query without them pays one branch per edge.

#ifndef CTXKIT_LIB_GRAPH_EDGE_FILTER_H_
#define CTXKIT_LIB_GRAPH_EDGE_FILTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/graph/edge_scanner.h"
#include "lib/graph/graph_impl.h"
#include "lib/json/json_match.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {

// Whether the messages of context `seq` carry, between them, each of
// `tags`. Errors: the store's, DATA_LOSS for a damaged message record.
absl::StatusOr<bool> ContextHasTags(const Transaction& txn, const GraphDbs& dbs,
                                    uint64_t seq,
                                    const std::vector<std::string>& tags);

// One query's edge filters. Not thread-safe (it caches per query); make one
// per call.
class EdgeFilter {
 public:
  // `metadata`: empty (no filter) or a JSON object of at most
  // kMaxMetadataBytes; `tags`: as CheckTags takes them. INVALID_ARGUMENT
  // naming `metadata` or `tags[i]`.
  static absl::StatusOr<EdgeFilter> Make(std::string_view metadata,
                                         const std::vector<std::string>& tags);

  // Whether it keeps every edge (no filter was given).
  bool empty() const { return !metadata_.has_value() && tags_.empty(); }

  // Whether the edge (source, type, target) passes, `other` being the end
  // the query did not start from. `out_record` is its graph.out record (or
  // graph.in's copy of it) when the caller holds it, else empty (it is then
  // read through `scanner`).
  // A read error (the store's, DATA_LOSS for a damaged record) keeps no
  // edge from then on and is kept for status(), so that a scan callback
  // needs no error path of its own.
  // Inline for the common case of no filter: a path search asks per edge.
  bool Keeps(const Transaction& txn, const GraphDbs& dbs,
             const EdgeScanner& scanner, uint64_t source, uint8_t type,
             uint64_t target, uint64_t other, std::string_view out_record) {
    return empty() ||
           Filter(txn, dbs, scanner, source, type, target, other, out_record);
  }

  // The first error Keeps met, or OK; the query returns it after its scan.
  const absl::Status& status() const { return status_; }

 private:
  // Keeps for a filter that is not empty().
  bool Filter(const Transaction& txn, const GraphDbs& dbs,
              const EdgeScanner& scanner, uint64_t source, uint8_t type,
              uint64_t target, uint64_t other, std::string_view out_record);

  std::optional<JsonContainsFilter> metadata_;
  std::vector<std::string> tags_;
  absl::flat_hash_map<uint64_t, bool> tagged_;  // other end -> has the tags
  absl::Status status_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_EDGE_FILTER_H_
