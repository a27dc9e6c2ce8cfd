// ContextGraph::Cleanup and Restore: the seed 0.1.1 keep-set, applied by
// archiving (a flag that hides a context from the queries) or deleting.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/key_codec.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/hierarchy.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

using internal::ContextRecord;

namespace {

constexpr int64_t kMillisPerDay = 86400000;
// The seed kept the 20 contexts most similar to the current one.
constexpr size_t kCleanupSimilarLimit = 20;
// The seed kept contexts of importanceScore >= 0.8.
constexpr double kImportantScore = 0.8;

}  // namespace

absl::StatusOr<bool> ContextGraph::Impl::IsArchived(const Transaction& txn,
                                                    uint64_t seq) const {
  absl::StatusOr<std::string_view> v =
      internal::TxnGet(txn, dbs.archived, internal::SeqKey(seq));
  if (v.ok()) return true;
  if (v.status().code() == absl::StatusCode::kNotFound) return false;
  return v.status();
}

namespace internal {

absl::StatusOr<ArchivedLookup> ArchivedLookup::Begin(const Transaction& txn,
                                                     const GraphDbs& dbs,
                                                     bool active) {
  bool any = false;
  if (active) {
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.archived));
    cursor.SeekToFirst();
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
    any = cursor.Valid();
  }
  return ArchivedLookup(txn, dbs, any);
}

bool ArchivedLookup::Contains(uint64_t seq) {
  if (!any_ || !status_.ok()) return false;
  absl::StatusOr<std::string_view> v =
      TxnGet(*txn_, dbs_->archived, SeqKey(seq));
  if (v.ok()) return true;
  if (v.status().code() != absl::StatusCode::kNotFound) status_ = v.status();
  return false;
}

}  // namespace internal

absl::StatusOr<absl::flat_hash_set<uint64_t>> ContextGraph::Impl::Archived(
    const Transaction& txn) const {
  absl::flat_hash_set<uint64_t> out;
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                          internal::TxnNewCursor(txn, dbs.archived));
  for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
    if (cursor.key().size() != 8) {
      return absl::DataLossError(
          "context graph record is corrupt: an archived key is not 8 bytes");
    }
    out.insert(internal::ReadBigEndian64(cursor.key().data()));
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  return out;
}

absl::StatusOr<CleanupResult> ContextGraph::Impl::CleanupIn(
    WriteTransaction& txn, uint64_t current, const CleanupOptions& o,
    int64_t now) const {
  CleanupResult result;
  // Why each context of the keep-set is kept, in the seed's order.
  absl::flat_hash_map<uint64_t, std::vector<std::string>> reasons;
  auto keep = [&](uint64_t seq, std::string_view why) {
    std::vector<std::string>& r = reasons[seq];
    if (std::find(r.begin(), r.end(), why) == r.end()) r.emplace_back(why);
  };
  keep(current, "current");
  CTXKIT_ASSIGN_OR_RETURN(
      std::vector<internal::LexicalHit> similar,
      SimilarTo(txn, current, kCleanupSimilarLimit,
                options.similarity_threshold * o.similarity_factor));
  for (const internal::LexicalHit& hit : similar) keep(hit.seq, "similar");
  CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> related,
                          CurrentNeighbours(txn, current, now));
  for (uint64_t seq : related) keep(seq, "related");
  CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> parent,
                          internal::ParentOf(txn, dbs, current));
  if (parent) {
    keep(*parent, "parent");
    CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> siblings,
                            internal::ChildrenOf(txn, dbs, *parent));
    for (uint64_t seq : siblings) {
      if (seq != current) keep(seq, "sibling");
    }
  }
  CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> children,
                          internal::ChildrenOf(txn, dbs, current));
  for (uint64_t seq : children) keep(seq, "child");

  CTXKIT_ASSIGN_OR_RETURN(const absl::flat_hash_set<uint64_t> archived,
                          Archived(txn));
  // One pass over the contexts, oldest activity first.
  const int64_t recent_from =
      now - static_cast<int64_t>(o.keep_recent_days) * kMillisPerDay;
  std::vector<std::pair<uint64_t, ContextRecord>> doomed;
  std::vector<std::pair<uint64_t, std::string>> kept;  // oldest first
  uint64_t live = 0;
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                            internal::TxnNewCursor(txn, dbs.by_activity));
    for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
      if (cursor.key().size() != 16) {
        return absl::DataLossError(
            "context graph record is corrupt: an activity key is not 16 "
            "bytes");
      }
      const uint64_t seq = internal::ReadBigEndian64(cursor.key().data() + 8);
      if (archived.contains(seq)) continue;
      CTXKIT_ASSIGN_OR_RETURN(ContextRecord c, Read(txn, seq));
      ++live;
      if (c.importance_score >= kImportantScore) keep(seq, "important");
      if (std::max(c.last_activity_at, c.last_summary_at) >= recent_from) {
        keep(seq, "recent");
      }
      if (reasons.contains(seq)) {
        kept.emplace_back(seq, std::move(c.id));
      } else {
        doomed.emplace_back(seq, std::move(c));
      }
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    result.kept.push_back({std::move(it->second), reasons[it->first]});
  }
  if (live <= o.min_contexts) {
    // Below the threshold nothing goes, so every live context is kept.
    for (auto& [seq, c] : doomed) {
      (void)seq;
      result.kept.push_back({std::move(c.id), {"below minContexts"}});
    }
    return result;
  }
  if (!o.dry_run) CTXKIT_RETURN_IF_ERROR(internal::RecordGraphFormat(txn, dbs));
  for (auto& [seq, c] : doomed) {
    result.cleaned_contexts.push_back(c.id);
    if (o.dry_run) continue;
    if (o.mode == CleanupMode::kDelete) {
      CTXKIT_RETURN_IF_ERROR(
          internal::DeleteConversationIn(*conversations, txn, c.conversation_id)
              .status());
    } else {
      CTXKIT_RETURN_IF_ERROR(
          internal::TxnPut(txn, dbs.archived, internal::SeqKey(seq), {}));
    }
  }
  return result;
}

StatusOr<CleanupResult> ContextGraph::Cleanup(std::string_view current_id,
                                              const CleanupOptions& options) {
  absl::Status s = internal::CheckContextId("currentId", current_id);
  if (s.ok() &&
      !(options.similarity_factor >= 0 && options.similarity_factor <= 1)) {
    s = absl::InvalidArgumentError(
        absl::StrFormat("similarityFactor is %g; it must be between 0 and 1",
                        options.similarity_factor));
  }
  if (s.ok() && options.mode != CleanupMode::kArchive &&
      options.mode != CleanupMode::kDelete) {
    s = absl::InvalidArgumentError("mode must be archive or delete");
  }
  if (s.ok() && options.keep_recent_days > 36500) {
    s = absl::InvalidArgumentError(absl::StrFormat(
        "keepRecentDays is %d; it must be 0..36500", options.keep_recent_days));
  }
  if (!s.ok()) return internal::ToPublic(s);
  CleanupResult result;
  auto run = [&](WriteTransaction& txn) -> absl::Status {
    CTXKIT_ASSIGN_OR_RETURN(uint64_t seq,
                            impl_->Require(txn, current_id, "currentId"));
    CTXKIT_ASSIGN_OR_RETURN(result,
                            impl_->CleanupIn(txn, seq, options, impl_->Now()));
    return absl::OkStatus();
  };
  s = internal::StoreUpdate(*impl_->store, run);
  if (!s.ok()) return internal::ToPublic(s);
  return result;
}

Status ContextGraph::Restore(std::string_view id) {
  absl::Status s = internal::CheckContextId("contextId", id);
  if (!s.ok()) return internal::ToPublic(s);
  return internal::ToPublic(internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        CTXKIT_ASSIGN_OR_RETURN(uint64_t seq,
                                impl_->Require(txn, id, "contextId"));
        return internal::TxnDelete(txn, impl_->dbs.archived,
                                   internal::SeqKey(seq))
            .status();
      }));
}

}  // namespace ctxkit
