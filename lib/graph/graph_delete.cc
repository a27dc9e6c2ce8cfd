// Deleting a context: ContextGraph::DeleteContext deletes its conversation,
// and ConversationStore::Delete runs this part's hook in the same write, so
// that both ways of deleting do the same thing, and a context never
// outlives its conversation.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/key_codec.h"
#include "lib/graph/delete_hook.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/hierarchy.h"
#include "lib/graph/metrics.h"
#include "lib/graph/vectors.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {
namespace internal {
namespace {

// Keys of `db` that start with `prefix`, collected before any deletion so
// that the cursor never walks a page being changed.
absl::StatusOr<std::vector<std::string>> KeysWithPrefix(
    const Transaction& txn, Database db, std::string_view prefix) {
  std::vector<std::string> keys;
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, db));
  for (cursor.Seek(prefix); cursor.Valid() && cursor.key().starts_with(prefix);
       cursor.Next()) {
    keys.emplace_back(cursor.key());
  }
  CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  return keys;
}

class GraphDeleteHook final : public ConversationDeleteHook {
 public:
  GraphDeleteHook(std::optional<GraphDbs> dbs, std::optional<VectorDbs> vec)
      : dbs_(dbs), vec_(vec) {}

  absl::StatusOr<uint64_t> OnConversationDeleted(
      WriteTransaction& txn, std::string_view conversation_id) const override {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> seq,
                            ContextOf(txn, conversation_id));
    if (!seq) return 0;
    CTXKIT_ASSIGN_OR_RETURN(uint64_t deleted,
                            DeleteContextRecords(txn, *dbs_, *seq));
    // Its vector (a read-only store made before vectors has none).
    if (vec_) {
      CTXKIT_ASSIGN_OR_RETURN(bool had, DropVector(txn, *vec_, *seq));
      deleted += had ? 2 : 0;
    }
    return deleted;
  }

  absl::Status OnMessageDeleted(WriteTransaction& txn,
                                std::string_view conversation_id,
                                uint64_t message_seq,
                                std::string_view content) const override {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> seq,
                            ContextOf(txn, conversation_id));
    if (!seq) return absl::OkStatus();
    // A message added to the conversation directly has no record, and its
    // text is not in the context's document.
    const std::string key = MessageRecordKey(*seq, message_seq);
    absl::StatusOr<std::string_view> stored = TxnGet(txn, dbs_->msg, key);
    if (!stored.ok()) {
      if (stored.status().code() == absl::StatusCode::kNotFound) {
        return absl::OkStatus();
      }
      return stored.status();
    }
    CTXKIT_ASSIGN_OR_RETURN(MessageRecord record, DecodeMessageRecord(*stored));
    CTXKIT_RETURN_IF_ERROR(RemoveContextTerms(
        txn, dbs_->lex, *seq, MessageTerms(content, record.tags)));
    CTXKIT_RETURN_IF_ERROR(TxnDelete(txn, dbs_->msg, key).status());
    CTXKIT_ASSIGN_OR_RETURN(GraphTotals totals, ReadTotals(txn, *dbs_));
    totals.messages -= std::min<uint64_t>(totals.messages, 1);
    return TxnPut(txn, dbs_->stats, kGraphTotalsKey, EncodeTotals(totals));
  }

 private:
  // The context `conversation_id` backs, if any.
  absl::StatusOr<std::optional<uint64_t>> ContextOf(
      const Transaction& txn, std::string_view conversation_id) const {
    if (!dbs_ || conversation_id.empty()) return std::nullopt;
    absl::StatusOr<std::string_view> seq_key =
        TxnGet(txn, dbs_->by_conv, conversation_id);
    if (!seq_key.ok()) {
      if (seq_key.status().code() == absl::StatusCode::kNotFound) {
        return std::nullopt;
      }
      return seq_key.status();
    }
    if (seq_key->size() != 8) {
      return absl::DataLossError(
          "context graph record is corrupt: a conversation index entry is "
          "not 8 bytes");
    }
    return ReadBigEndian64(seq_key->data());
  }

  const std::optional<GraphDbs> dbs_;
  const std::optional<VectorDbs> vec_;
};

}  // namespace

absl::StatusOr<uint64_t> DeleteContextRecords(WriteTransaction& txn,
                                              const GraphDbs& dbs,
                                              uint64_t seq) {
  const std::string seq_key = SeqKey(seq);
  absl::StatusOr<std::string_view> stored = TxnGet(txn, dbs.ctx, seq_key);
  if (!stored.ok()) return stored.status();
  CTXKIT_ASSIGN_OR_RETURN(ContextRecord ctx, DecodeContext(*stored));
  CTXKIT_ASSIGN_OR_RETURN(GraphTotals totals, ReadTotals(txn, dbs));
  uint64_t deleted = 0;
  auto del = [&](Database db, std::string_view key) -> absl::Status {
    CTXKIT_ASSIGN_OR_RETURN(bool gone, TxnDelete(txn, db, key));
    if (!gone) {
      return absl::DataLossError(absl::StrFormat(
          "context graph record is corrupt: a record of context %d is "
          "missing (run Verify)",
          seq));
    }
    ++deleted;
    return absl::OkStatus();
  };

  // Its id, out of its hash bucket.
  const std::string hash_key = IdHashKey(ctx.id);
  CTXKIT_ASSIGN_OR_RETURN(std::string_view bucket_value,
                          TxnGet(txn, dbs.ids, hash_key));
  CTXKIT_ASSIGN_OR_RETURN(std::vector<IdBucketEntry> bucket,
                          DecodeIdBucket(bucket_value));
  std::vector<IdBucketEntry> rest;
  for (const IdBucketEntry& e : bucket) {
    if (e.seq != seq) rest.push_back(e);
  }
  if (rest.size() == bucket.size()) {
    return absl::DataLossError(absl::StrFormat(
        "context graph record is corrupt: context %d is not in its id bucket",
        seq));
  }
  if (rest.empty()) {
    CTXKIT_RETURN_IF_ERROR(del(dbs.ids, hash_key));
  } else {
    const std::string encoded = EncodeIdBucket(rest);
    CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.ids, hash_key, encoded));
    ++deleted;
  }

  // Its edges, both ways, each with its mirror in the other index.
  CTXKIT_ASSIGN_OR_RETURN(std::vector<std::string> out,
                          KeysWithPrefix(txn, dbs.out, seq_key));
  CTXKIT_ASSIGN_OR_RETURN(std::vector<std::string> in,
                          KeysWithPrefix(txn, dbs.in, seq_key));
  for (const std::string& key : out) {
    const std::optional<EdgeKeyParts> k = ParseEdgeKey(key);
    if (!k) return absl::DataLossError("context graph: malformed edge key");
    CTXKIT_RETURN_IF_ERROR(del(dbs.out, key));
    CTXKIT_RETURN_IF_ERROR(del(dbs.in, EdgeKey(k->second, k->type, seq)));
    --totals.edges_by_type[k->type - 1];
  }
  for (const std::string& key : in) {
    const std::optional<EdgeKeyParts> k = ParseEdgeKey(key);
    if (!k) return absl::DataLossError("context graph: malformed edge key");
    CTXKIT_RETURN_IF_ERROR(del(dbs.in, key));
    CTXKIT_RETURN_IF_ERROR(del(dbs.out, EdgeKey(k->second, k->type, seq)));
    --totals.edges_by_type[k->type - 1];
  }

  // Its messages' records.
  CTXKIT_ASSIGN_OR_RETURN(std::vector<std::string> messages,
                          KeysWithPrefix(txn, dbs.msg, seq_key));
  for (const std::string& key : messages) {
    CTXKIT_RETURN_IF_ERROR(del(dbs.msg, key));
  }
  totals.messages -= std::min<uint64_t>(totals.messages, messages.size());

  // Its links in the hierarchy (its children become roots).
  CTXKIT_RETURN_IF_ERROR(DropHierarchyOf(txn, dbs, seq));

  CTXKIT_ASSIGN_OR_RETURN(bool was_archived,
                          TxnDelete(txn, dbs.archived, seq_key));
  deleted += was_archived;

  CTXKIT_RETURN_IF_ERROR(DropContextTerms(txn, dbs.lex, seq));

  // Its summaries.
  CTXKIT_ASSIGN_OR_RETURN(std::vector<std::string> summaries,
                          KeysWithPrefix(txn, dbs.sums, seq_key));
  for (const std::string& key : summaries) {
    CTXKIT_RETURN_IF_ERROR(del(dbs.sums, key));
  }

  CTXKIT_RETURN_IF_ERROR(
      del(dbs.by_activity, ActivityKey(ctx.last_activity_at, seq)));
  CTXKIT_RETURN_IF_ERROR(del(dbs.by_conv, ctx.conversation_id));
  CTXKIT_RETURN_IF_ERROR(del(dbs.ctx, seq_key));
  --totals.contexts;
  CTXKIT_RETURN_IF_ERROR(
      TxnPut(txn, dbs.stats, kGraphTotalsKey, EncodeTotals(totals)));
  return deleted;
}

absl::StatusOr<std::unique_ptr<ConversationDeleteHook>> MakeGraphDeleteHook(
    Store& store) {
  std::optional<GraphDbs> dbs;
  absl::StatusOr<GraphDbs> opened = OpenGraphDbs(store);
  if (opened.ok()) {
    dbs = *opened;
  } else if (opened.status().code() != absl::StatusCode::kNotFound ||
             !store.read_only()) {
    return opened.status();
  }
  std::optional<VectorDbs> vec;
  absl::StatusOr<VectorDbs> vec_opened = OpenVectorDbs(store);
  if (vec_opened.ok()) {
    vec = *vec_opened;
  } else if (vec_opened.status().code() != absl::StatusCode::kNotFound ||
             !store.read_only()) {
    return vec_opened.status();
  }
  return std::unique_ptr<ConversationDeleteHook>(
      std::make_unique<GraphDeleteHook>(dbs, vec));
}

}  // namespace internal

Status ContextGraph::DeleteContext(std::string_view id) {
  internal::GraphCall call(*impl_, "vector_db_delete", "graph_db_delete");
  absl::Status s = internal::CheckContextId("contextId", id);
  if (!s.ok()) return internal::ToPublic(s);
  std::string conversation_id;
  {
    absl::StatusOr<ReadTransaction> txn =
        internal::StoreBeginRead(*impl_->store);
    if (!txn.ok()) return internal::ToPublic(txn.status());
    absl::StatusOr<uint64_t> seq = impl_->Require(*txn, id, "contextId");
    if (!seq.ok()) return internal::ToPublic(seq.status());
    absl::StatusOr<internal::ContextRecord> ctx = impl_->Read(*txn, *seq);
    if (!ctx.ok()) return internal::ToPublic(ctx.status());
    conversation_id = std::move(ctx->conversation_id);
  }
  StatusOr<DeletedConversation> deleted =
      impl_->conversations->Delete(conversation_id);
  if (deleted.status().code() == StatusCode::kNotFound) {
    // Deleted by another writer since the lookup: so is the context.
    return internal::ToPublic(absl::NotFoundError(
        absl::StrFormat("contextId '%s' is not a context", id)));
  }
  return call.Done(deleted.status());
}

}  // namespace ctxkit
