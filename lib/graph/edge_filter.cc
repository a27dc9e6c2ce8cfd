#include "lib/graph/edge_filter.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/graph/graph_records.h"
#include "lib/status/status_macros.h"

namespace ctxkit::internal {

absl::StatusOr<bool> ContextHasTags(const Transaction& txn, const GraphDbs& dbs,
                                    uint64_t seq,
                                    const std::vector<std::string>& tags) {
  absl::flat_hash_set<std::string> missing(tags.begin(), tags.end());
  const std::string prefix = SeqKey(seq);
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.msg));
  for (cursor.Seek(prefix);
       !missing.empty() && cursor.Valid() && cursor.key().starts_with(prefix);
       cursor.Next()) {
    CTXKIT_ASSIGN_OR_RETURN(MessageRecord r,
                            DecodeMessageRecord(cursor.value()));
    for (const std::string& tag : r.tags) missing.erase(tag);
  }
  CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  return missing.empty();
}

absl::StatusOr<EdgeFilter> EdgeFilter::Make(
    std::string_view metadata, const std::vector<std::string>& tags) {
  EdgeFilter f;
  if (!metadata.empty()) {
    if (metadata.size() > ContextGraphLimits::kMaxMetadataBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "metadata is %d bytes; the limit is %d", metadata.size(),
          ContextGraphLimits::kMaxMetadataBytes));
    }
    CTXKIT_ASSIGN_OR_RETURN(JsonContainsFilter m,
                            JsonContainsFilter::Compile(metadata, "metadata"));
    // {} keeps every edge: no need to read a single record for it.
    if (!m.empty()) f.metadata_.emplace(std::move(m));
  }
  CTXKIT_ASSIGN_OR_RETURN(f.tags_, CheckTags("", tags));
  return f;
}

bool EdgeFilter::Filter(const Transaction& txn, const GraphDbs& dbs,
                        const EdgeScanner& scanner, uint64_t source,
                        uint8_t type, uint64_t target, uint64_t other,
                        std::string_view out_record) {
  if (!status_.ok()) return false;
  if (metadata_.has_value()) {
    if (out_record.empty()) {
      absl::StatusOr<std::string_view> read =
          scanner.OutRecord(source, type, target);
      if (!read.ok()) {
        status_ = read.status();
        return false;
      }
      out_record = *read;
    }
    absl::StatusOr<EdgeRecord> r = DecodeEdge(out_record);
    if (!r.ok()) {
      status_ = r.status();
      return false;
    }
    if (!metadata_->Matches(r->metadata)) return false;
  }
  if (tags_.empty()) return true;
  auto [it, inserted] = tagged_.try_emplace(other, false);
  if (inserted) {
    absl::StatusOr<bool> has = ContextHasTags(txn, dbs, other, tags_);
    if (!has.ok()) {
      status_ = has.status();
      return false;
    }
    it->second = *has;
  }
  return it->second;
}

}  // namespace ctxkit::internal
