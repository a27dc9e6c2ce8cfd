// ContextGraph: contexts and their messages, and the shared lookups of
// graph_impl.h. Relationships are in relationships.cc, deletion in
// graph_delete.cc, Verify in graph_verify.cc.

#include "ctxkit/context_graph.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "ctxkit/model_registry.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/clock.h"
#include "lib/base/field_check.h"
#include "lib/base/key_codec.h"
#include "lib/conversations/conversation_checks.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/ignore_patterns.h"
#include "lib/graph/metrics.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

using internal::ContextRecord;
using internal::GraphTotals;

// The conversation's title is the whole id.
static_assert(ContextGraphLimits::kMaxIdBytes <=
              ConversationLimits::kMaxTitleBytes);

namespace {

constexpr std::string_view kImportanceNames[] = {"low", "medium", "high",
                                                 "critical"};

absl::StatusOr<Importance> ParseImportance(std::string_view field,
                                           std::string_view text) {
  if (text.empty()) return Importance::kMedium;
  for (size_t i = 0; i < std::size(kImportanceNames); ++i) {
    if (absl::EqualsIgnoreCase(internal::AV(text),
                               internal::AV(kImportanceNames[i]))) {
      return static_cast<Importance>(i + 1);
    }
  }
  CTXKIT_RETURN_IF_ERROR(internal::CheckText(field, text, 64));
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is '%s'; it must be low, medium, high or critical", field, text));
}

ContextInfo Info(const ContextRecord& ctx, const Conversation& c,
                 bool archived) {
  ContextInfo info;
  info.context_id = ctx.id;
  info.conversation_id = ctx.conversation_id;
  info.created_at = ctx.created_at;
  info.last_activity_at = ctx.last_activity_at;
  info.message_count = c.message_count;
  info.total_tokens = c.total_tokens;
  info.archived = archived;
  return info;
}

bool IsHigh(Importance importance) {
  return importance == Importance::kHigh || importance == Importance::kCritical;
}

}  // namespace

namespace internal {

TermCounts MessageTerms(std::string_view content,
                        const std::vector<std::string>& tags) {
  TermCounts terms = CountTerms(content, 1);
  for (const std::string& tag : tags) AddCounts(&terms, CountTerms(tag, 1));
  return terms;
}

absl::StatusOr<std::vector<std::string>> CheckTags(
    std::string_view prefix, const std::vector<std::string>& tags) {
  if (tags.size() > ContextGraphLimits::kMaxTags) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%stags holds %d tags; the limit is %d", prefix,
                        tags.size(), ContextGraphLimits::kMaxTags));
  }
  std::vector<std::string> out;
  absl::flat_hash_set<std::string_view> seen;
  for (size_t i = 0; i < tags.size(); ++i) {
    CTXKIT_RETURN_IF_ERROR(CheckText(absl::StrFormat("%stags[%d]", prefix, i),
                                     tags[i],
                                     ContextGraphLimits::kMaxTagBytes));
    if (seen.insert(tags[i]).second) out.push_back(tags[i]);
  }
  return out;
}

absl::Status CheckContextId(std::string_view field, std::string_view id) {
  CTXKIT_RETURN_IF_ERROR(
      internal::CheckText(field, id, ContextGraphLimits::kMaxIdBytes));
  if (id.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must not contain NUL characters", field));
  }
  return absl::OkStatus();
}

}  // namespace internal

std::string_view ImportanceName(Importance importance) {
  const auto i = static_cast<size_t>(importance);
  return i >= 1 && i <= std::size(kImportanceNames) ? kImportanceNames[i - 1]
                                                    : std::string_view();
}

double ImportanceValue(Importance importance) {
  return static_cast<double>(importance) / 4.0;
}

// ---- Impl: lookups shared by the graph's files ----

int64_t ContextGraph::Impl::Now() const {
  return internal::NowMillis(options.clock);
}

absl::StatusOr<std::optional<uint64_t>> ContextGraph::Impl::Find(
    const Transaction& txn, std::string_view id) const {
  absl::StatusOr<std::string_view> bucket =
      internal::TxnGet(txn, dbs.ids, internal::IdHashKey(id));
  if (!bucket.ok()) {
    if (bucket.status().code() == absl::StatusCode::kNotFound) {
      return std::nullopt;
    }
    return bucket.status();
  }
  CTXKIT_ASSIGN_OR_RETURN(std::vector<internal::IdBucketEntry> entries,
                          internal::DecodeIdBucket(*bucket));
  for (const internal::IdBucketEntry& e : entries) {
    if (e.id == id) return e.seq;
  }
  return std::nullopt;
}

absl::StatusOr<uint64_t> ContextGraph::Impl::Require(
    const Transaction& txn, std::string_view id, std::string_view field) const {
  CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> seq, Find(txn, id));
  if (!seq) {
    return absl::NotFoundError(
        absl::StrFormat("%s '%s' is not a context", field, id));
  }
  return *seq;
}

absl::StatusOr<std::optional<ContextRecord>> ContextGraph::Impl::ReadIfExists(
    const Transaction& txn, uint64_t seq) const {
  absl::StatusOr<std::string_view> v =
      internal::TxnGet(txn, dbs.ctx, internal::SeqKey(seq));
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return v.status();
  }
  return internal::DecodeContext(*v);
}

absl::StatusOr<ContextRecord> ContextGraph::Impl::Read(const Transaction& txn,
                                                       uint64_t seq) const {
  CTXKIT_ASSIGN_OR_RETURN(std::optional<ContextRecord> ctx,
                          ReadIfExists(txn, seq));
  if (!ctx) {
    return absl::DataLossError(absl::StrFormat(
        "context graph record is corrupt: context %d is indexed but missing",
        seq));
  }
  return *std::move(ctx);
}

absl::StatusOr<Conversation> ContextGraph::Impl::NewConversationFor(
    std::string_view id) const {
  internal::JsonWriter metadata;
  metadata.BeginObject().Key("context_id").String(id).EndObject();
  CTXKIT_ASSIGN_OR_RETURN(std::string json, std::move(metadata).Finish());
  NewConversation c;
  c.title = std::string(id);
  c.model = options.model;
  c.metadata = std::move(json);
  return internal::CheckNewConversation(*conversations, c);
}

absl::StatusOr<uint64_t> ContextGraph::Impl::Create(
    WriteTransaction& txn, std::string_view id,
    const Conversation& conversation, GraphTotals& totals, int64_t now) const {
  CTXKIT_RETURN_IF_ERROR(
      internal::WriteNewConversation(*conversations, txn, conversation));
  const uint64_t seq = totals.next_seq++;
  ++totals.contexts;
  const std::string hash_key = internal::IdHashKey(id);
  std::vector<internal::IdBucketEntry> bucket;
  absl::StatusOr<std::string_view> stored =
      internal::TxnGet(txn, dbs.ids, hash_key);
  if (stored.ok()) {
    CTXKIT_ASSIGN_OR_RETURN(bucket, internal::DecodeIdBucket(*stored));
  } else if (stored.status().code() != absl::StatusCode::kNotFound) {
    return stored.status();
  }
  bucket.push_back({seq, id});
  // Encoded before the put: the views in `bucket` point into the map.
  const std::string encoded = internal::EncodeIdBucket(bucket);
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs.ids, hash_key, encoded));
  ContextRecord record;
  record.id = std::string(id);
  record.conversation_id = conversation.id;
  record.created_at = record.last_activity_at = now;
  const std::string seq_key = internal::SeqKey(seq);
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs.ctx, seq_key, internal::EncodeContext(record)));
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs.by_conv, conversation.id, seq_key));
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs.by_activity,
                                          internal::ActivityKey(now, seq), {}));
  return seq;
}

absl::Status ContextGraph::Impl::CheckOptionRanges(
    const ContextGraphOptions& o) {
  struct Range {
    std::string_view name;
    uint64_t value, min, max;
  };
  const Range ranges[] = {
      {"message_limit_threshold", o.message_limit_threshold, 1, 1000000},
      {"token_limit_percentage", o.token_limit_percentage, 1, 100},
      {"max_summary_tokens", o.max_summary_tokens, 16, 32768},
      {"summary_window", o.summary_window, 1, 100000},
      {"summary_history", o.summary_history, 1, 1000},
      {"max_hierarchy_depth", o.max_hierarchy_depth, 1,
       static_cast<uint64_t>(ContextGraphLimits::kMaxHops)},
      {"meta_summary_threshold", o.meta_summary_threshold, 1, 1000000},
      {"cleanup_every", o.cleanup_every, 1, 1000000},
      {"auto_link_limit", o.auto_link_limit, 0, 100},
  };
  for (const Range& r : ranges) {
    if (r.value < r.min || r.value > r.max) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is %d; it must be %d..%d", r.name, r.value, r.min, r.max));
    }
  }
  if (!(o.similarity_threshold >= 0 && o.similarity_threshold <= 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "similarity_threshold is %g; it must be between 0 and 1",
        o.similarity_threshold));
  }
  if (o.cleanup_mode != CleanupMode::kArchive &&
      o.cleanup_mode != CleanupMode::kDelete) {
    return absl::InvalidArgumentError("cleanup_mode is not a CleanupMode");
  }
  return absl::OkStatus();
}

// ---- ContextGraph ----

ContextGraph::ContextGraph(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ContextGraph::~ContextGraph() = default;

Status CheckContextGraphOptions(const ContextGraphOptions& options) {
  absl::Status s = internal::CheckText("model", options.model,
                                       ConversationLimits::kMaxModelBytes);
  // The graph's contexts count exact tokens: a model without a tokenizer
  // entry would be estimated (ConversationStore allows that), so it is
  // refused here, as the header says.
  if (s.ok() && ModelRegistry::Default().Resolve(options.model).match ==
                    ModelMatch::kUnknown) {
    s = absl::InvalidArgumentError(absl::StrFormat(
        "model '%s' is not a model ModelRegistry knows", options.model));
  }
  if (s.ok()) s = internal::ModelCounter::For(options.model).status();
  if (s.ok()) s = ContextGraph::Impl::CheckOptionRanges(options);
  if (s.ok()) s = internal::CheckIgnorePatterns(options.ignore_patterns);
  return internal::ToPublic(s);
}

StatusOr<std::unique_ptr<ContextGraph>> ContextGraph::Open(
    Store& store, ConversationStore& conversations,
    ContextGraphOptions options) {
  if (Status checked = CheckContextGraphOptions(options); !checked.ok()) {
    return checked;
  }
  absl::Status s;
  absl::StatusOr<internal::GraphDbs> dbs = internal::OpenGraphDbs(store);
  if (!dbs.ok()) return internal::ToPublic(dbs.status());
  {
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store);
    if (!txn.ok()) return internal::ToPublic(txn.status());
    s = internal::CheckGraphFormat(*txn, *dbs, store.path());
    if (!s.ok()) return internal::ToPublic(s);
  }
  auto impl = std::make_unique<Impl>();
  impl->store = &store;
  impl->conversations = &conversations;
  impl->options = std::move(options);
  impl->dbs = *dbs;
  absl::StatusOr<internal::VectorDbs> vec_dbs = internal::OpenVectorDbs(store);
  if (vec_dbs.ok()) {
    impl->vec_dbs = *vec_dbs;
  } else if (vec_dbs.status().code() != absl::StatusCode::kNotFound ||
             !store.read_only()) {
    return internal::ToPublic(vec_dbs.status());
  }
  {
    // The scan copy is built now, so the first query does not pay for it,
    // and a recorded space another embedder is refused here.
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store);
    if (!txn.ok()) return internal::ToPublic(txn.status());
    s = impl->vectors.Size(*txn, impl->vec_dbs).status();
    if (s.ok() && impl->options.embedder) {
      s = impl->CheckEmbedderFits(*txn, *impl->options.embedder);
    }
    if (!s.ok()) return internal::ToPublic(s);
  }
  impl->embedder = impl->options.embedder;
  return std::unique_ptr<ContextGraph>(new ContextGraph(std::move(impl)));
}

StatusOr<AddGraphMessagesResult> ContextGraph::AddMessage(
    std::string_view id, const GraphMessage& message) {
  return Add(id, {message}, /*single=*/true);
}

StatusOr<AddGraphMessagesResult> ContextGraph::AddMessages(
    std::string_view id, const std::vector<GraphMessage>& messages) {
  return Add(id, messages, /*single=*/false);
}

StatusOr<AddGraphMessagesResult> ContextGraph::Add(
    std::string_view id, const std::vector<GraphMessage>& messages,
    bool single) {
  internal::GraphCall call(*impl_, "vector_db_add");
  std::vector<internal::MessageRecord> records(messages.size());
  std::vector<NewMessage> batch(messages.size());
  absl::Status s = internal::CheckContextId("contextId", id);
  if (s.ok()) {
    s = internal::CheckNotIgnored(impl_->options.ignore_patterns, "contextId",
                                  id);
  }
  for (size_t i = 0; s.ok() && i < messages.size(); ++i) {
    const std::string prefix =
        single ? std::string() : absl::StrFormat("messages[%d].", i);
    absl::StatusOr<Importance> importance =
        ParseImportance(prefix + "importance", messages[i].importance);
    if (!importance.ok()) {
      s = importance.status();
      break;
    }
    absl::StatusOr<std::vector<std::string>> tags =
        internal::CheckTags(prefix, messages[i].tags);
    if (!tags.ok()) {
      s = tags.status();
      break;
    }
    records[i].importance = *importance;
    records[i].tags = *std::move(tags);
    batch[i].role = messages[i].role;
    batch[i].content = messages[i].content;
  }
  if (!s.ok()) return internal::ToPublic(s);

  // A context created or deleted by another writer between the model read
  // and the write changes which model counts: count again, a bounded number
  // of times.
  for (int attempt = 0;; ++attempt) {
    std::string model = impl_->options.model;
    bool exists = false;
    {
      absl::StatusOr<ReadTransaction> txn =
          internal::StoreBeginRead(*impl_->store);
      if (!txn.ok()) return internal::ToPublic(txn.status());
      absl::StatusOr<std::optional<uint64_t>> seq = impl_->Find(*txn, id);
      if (!seq.ok()) return internal::ToPublic(seq.status());
      if (*seq) {
        absl::StatusOr<ContextRecord> ctx = impl_->Read(*txn, **seq);
        if (!ctx.ok()) return internal::ToPublic(ctx.status());
        Conversation c;
        uint64_t last_seq = 0;
        s = internal::ReadConversationIn(*impl_->conversations, *txn,
                                         ctx->conversation_id, &c, &last_seq);
        if (!s.ok()) return internal::ToPublic(s);
        model = c.model;
        exists = true;
      }
    }
    absl::StatusOr<uint64_t> token_trigger = impl_->SummaryTokenTrigger(model);
    if (!token_trigger.ok()) return internal::ToPublic(token_trigger.status());
    absl::StatusOr<internal::PreparedMessages> prepared =
        internal::PrepareMessages(*impl_->conversations, model, batch.data(),
                                  batch.size(), single);
    if (!prepared.ok()) return internal::ToPublic(prepared.status());
    // The conversation a new context gets, prepared only when the context
    // is missing: one that appears meanwhile is simply used.
    std::optional<Conversation> fresh;
    if (!exists) {
      absl::StatusOr<Conversation> c = impl_->NewConversationFor(id);
      if (!c.ok()) return internal::ToPublic(c.status());
      fresh = *std::move(c);
    }

    AddGraphMessagesResult result;
    s = internal::StoreUpdate(
        *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
          result = AddGraphMessagesResult();
          internal::GraphCall::Restart();
          const internal::GraphDbs& dbs = impl_->dbs;
          CTXKIT_RETURN_IF_ERROR(internal::RecordGraphFormat(txn, dbs));
          CTXKIT_ASSIGN_OR_RETURN(GraphTotals totals,
                                  internal::ReadTotals(txn, dbs));
          CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> seq,
                                  impl_->Find(txn, id));
          if (!seq) {
            // Deleted since the read: its messages were counted with its
            // conversation's model, not necessarily a new one's.
            if (!fresh) {
              return absl::AbortedError("the context was deleted meanwhile");
            }
            CTXKIT_ASSIGN_OR_RETURN(
                seq, impl_->Create(txn, id, *fresh, totals, prepared->now));
            result.created = true;
          }
          CTXKIT_ASSIGN_OR_RETURN(ContextRecord ctx, impl_->Read(txn, *seq));
          CTXKIT_ASSIGN_OR_RETURN(
              AddMessagesResult added,
              internal::AppendPreparedMessages(*impl_->conversations, txn,
                                               ctx.conversation_id, *prepared));
          internal::TermCounts terms;
          for (size_t i = 0; i < added.messages.size(); ++i) {
            const Message& m = added.messages[i];
            internal::AddCounts(
                &terms,
                internal::MessageTerms(messages[i].content, records[i].tags));
            CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
                txn, dbs.msg, internal::MessageRecordKey(*seq, m.seq),
                internal::EncodeMessageRecord(records[i])));
            ++ctx.messages_since_summary;
            ctx.tokens_since_summary += m.tokens;
            if (IsHigh(records[i].importance)) ++ctx.high_since_summary;
            GraphMessageAdded& out = result.messages.emplace_back();
            out.message_id = m.id;
            out.seq = m.seq;
            out.tokens = m.tokens;
            out.importance = records[i].importance;
            out.tags = records[i].tags;
          }
          const int64_t activity =
              std::max(ctx.last_activity_at, prepared->now);
          if (activity != ctx.last_activity_at) {
            CTXKIT_RETURN_IF_ERROR(
                internal::TxnDelete(
                    txn, dbs.by_activity,
                    internal::ActivityKey(ctx.last_activity_at, *seq))
                    .status());
            CTXKIT_RETURN_IF_ERROR(
                internal::TxnPut(txn, dbs.by_activity,
                                 internal::ActivityKey(activity, *seq), {}));
            ctx.last_activity_at = activity;
          }
          CTXKIT_RETURN_IF_ERROR(
              internal::AddContextTerms(txn, dbs.lex, *seq, terms));
          // The totals and the context are written before what follows
          // reads and updates them itself (auto-links add edges, a
          // delete-mode cleanup removes contexts).
          totals.messages += added.messages.size();
          CTXKIT_RETURN_IF_ERROR(
              internal::TxnPut(txn, dbs.stats, internal::kGraphTotalsKey,
                               internal::EncodeTotals(totals)));
          CTXKIT_RETURN_IF_ERROR(
              internal::TxnPut(txn, dbs.ctx, internal::SeqKey(*seq),
                               internal::EncodeContext(ctx)));
          if (impl_->ShouldSummarize(ctx, *token_trigger)) {
            // Writes the context record again, with its new version.
            CTXKIT_RETURN_IF_ERROR(
                impl_
                    ->WriteSummary(txn, *seq, ctx, prepared->now,
                                   &result.linked, &result.embedding_error)
                    .status());
            result.summarized = true;
            result.summary_version = ctx.summary_version;
          }
          result.context_id = ctx.id;
          result.conversation_id = ctx.conversation_id;
          // Every cleanup_every messages of the context (counted by its
          // conversation's seqs, so a batch that crosses a multiple counts
          // once).
          const uint64_t last = added.messages.back().seq;
          const uint64_t first = added.messages.front().seq;
          const uint64_t every = impl_->options.cleanup_every;
          if (impl_->options.auto_cleanup_contexts &&
              last / every != (first - 1) / every) {
            CleanupOptions cleanup;
            cleanup.mode = impl_->options.cleanup_mode;
            CTXKIT_ASSIGN_OR_RETURN(
                CleanupResult cleaned,
                impl_->CleanupIn(txn, *seq, cleanup, prepared->now));
            result.cleaned = std::move(cleaned.cleaned_contexts);
          }
          return absl::OkStatus();
        });
    if (s.code() == absl::StatusCode::kAborted && attempt < 3) continue;
    if (!s.ok()) return internal::ToPublic(s);
    return call.Done(std::move(result));
  }
}

StatusOr<ContextDetail> ContextGraph::Retrieve(
    std::string_view id, const RetrieveOptions& options) const {
  absl::Status s = internal::CheckContextId("contextId", id);
  if (s.ok()) {
    s = internal::CheckRange("limit", options.limit, 1,
                             ContextGraphLimits::kMaxListLimit);
  }
  if (!s.ok()) return internal::ToPublic(s);
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  auto read = [&]() -> absl::StatusOr<ContextDetail> {
    CTXKIT_ASSIGN_OR_RETURN(uint64_t seq,
                            impl_->Require(*txn, id, "contextId"));
    CTXKIT_ASSIGN_OR_RETURN(ContextRecord ctx, impl_->Read(*txn, seq));
    Conversation c;
    uint64_t last_seq = 0;
    CTXKIT_RETURN_IF_ERROR(internal::ReadConversationIn(
        *impl_->conversations, *txn, ctx.conversation_id, &c, &last_seq));
    CTXKIT_ASSIGN_OR_RETURN(
        std::vector<Message> messages,
        internal::NewestMessagesIn(*impl_->conversations, *txn,
                                   ctx.conversation_id, options.before_seq,
                                   options.limit));
    ContextDetail detail;
    CTXKIT_ASSIGN_OR_RETURN(bool archived, impl_->IsArchived(*txn, seq));
    detail.context = Info(ctx, c, archived);
    detail.messages_since_summary = ctx.messages_since_summary;
    detail.tokens_since_summary = ctx.tokens_since_summary;
    detail.high_since_summary = ctx.high_since_summary;
    for (Message& m : messages) {
      GraphMessageView& view = detail.messages.emplace_back();
      // A message added to the conversation directly, not through the
      // graph, has no record: the seed's defaults.
      absl::StatusOr<std::string_view> record = internal::TxnGet(
          *txn, impl_->dbs.msg, internal::MessageRecordKey(seq, m.seq));
      if (record.ok()) {
        CTXKIT_ASSIGN_OR_RETURN(internal::MessageRecord r,
                                internal::DecodeMessageRecord(*record));
        view.importance = r.importance;
        view.tags = std::move(r.tags);
      } else if (record.status().code() != absl::StatusCode::kNotFound) {
        return record.status();
      }
      view.role = m.role;
      view.content = std::move(m.content);
      view.timestamp = m.created_at;
      view.seq = m.seq;
      view.tokens = m.tokens;
    }
    if (options.include_summary || options.summary_history) {
      CTXKIT_ASSIGN_OR_RETURN(
          std::vector<ContextSummary> summaries,
          impl_->Summaries(*txn, seq, ctx, options.summary_history));
      if (options.include_summary && !summaries.empty()) {
        detail.summary = summaries.front();
      }
      if (options.summary_history)
        detail.summary_history = std::move(summaries);
    }
    return detail;
  };
  absl::StatusOr<ContextDetail> detail = read();
  if (!detail.ok()) return internal::ToPublic(detail.status());
  // Related reads its own snapshot: a relationship changed meanwhile shows.
  std::vector<ContextSummary*> summaries;
  if (detail->summary) summaries.push_back(&*detail->summary);
  for (ContextSummary& h : detail->summary_history) summaries.push_back(&h);
  for (ContextSummary* summary : summaries) {
    const Status related = Impl::FillRelated(*this, *summary);
    if (!related.ok()) return related;
  }
  return *std::move(detail);
}

StatusOr<ContextPage> ContextGraph::ListContexts(uint32_t limit,
                                                 std::string_view cursor_text,
                                                 bool include_archived) const {
  absl::Status s = internal::CheckRange("limit", limit, 1,
                                        ContextGraphLimits::kMaxListLimit);
  if (!s.ok()) return internal::ToPublic(s);
  // The cursor is the activity key of the last context returned.
  std::string bound;
  if (!cursor_text.empty() &&
      (cursor_text.size() > 64 ||
       !absl::WebSafeBase64Unescape(internal::AV(cursor_text), &bound) ||
       bound.size() != 16)) {
    return Status(StatusCode::kInvalidArgument,
                  "cursor is not one that ListContexts returned");
  }
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  auto list = [&]() -> absl::StatusOr<ContextPage> {
    ContextPage page;
    CTXKIT_ASSIGN_OR_RETURN(
        Cursor cursor, internal::TxnNewCursor(*txn, impl_->dbs.by_activity));
    // Newest first: walk back from the end, or from just before the bound.
    if (bound.empty()) {
      cursor.SeekToLast();
    } else {
      cursor.Seek(bound);
      if (cursor.Valid()) {
        cursor.Prev();
      } else {
        cursor.SeekToLast();
      }
    }
    std::string last_key;
    for (; cursor.Valid() && page.contexts.size() < limit; cursor.Prev()) {
      if (cursor.key().size() != 16) {
        return absl::DataLossError(
            "context graph record is corrupt: an activity key is not 16 "
            "bytes");
      }
      const uint64_t seq = internal::ReadBigEndian64(cursor.key().data() + 8);
      last_key = std::string(cursor.key());
      CTXKIT_ASSIGN_OR_RETURN(bool archived, impl_->IsArchived(*txn, seq));
      if (archived && !include_archived) continue;
      CTXKIT_ASSIGN_OR_RETURN(ContextRecord ctx, impl_->Read(*txn, seq));
      Conversation c;
      uint64_t last_seq = 0;
      CTXKIT_RETURN_IF_ERROR(internal::ReadConversationIn(
          *impl_->conversations, *txn, ctx.conversation_id, &c, &last_seq));
      page.contexts.push_back(Info(ctx, c, archived));
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    if (cursor.Valid() && !last_key.empty()) {
      page.next_cursor = absl::WebSafeBase64Escape(internal::AV(last_key));
    }
    return page;
  };
  return internal::ToPublic(list());
}

}  // namespace ctxkit
