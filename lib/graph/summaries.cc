// ContextGraph's summaries: writing a context's next summary version (by
// Summarize, or by AddMessage's automatic trigger in its own transaction),
// keeping summary_history versions, and reading them back.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/model_registry.h"
#include "lib/base/field_check.h"
#include "lib/base/key_codec.h"
#include "lib/compactor/chat_history.h"
#include "lib/conversations/conversation_checks.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/metrics.h"
#include "lib/graph/summary_builder.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

using internal::ContextRecord;
using internal::SummaryRecord;

namespace {

// The window's messages as the host summarizer receives them: a JSON array
// of {"role","content"} objects.
std::string WindowJson(const std::vector<Message>& window) {
  std::string json = "[";
  for (size_t i = 0; i < window.size(); ++i) {
    if (i > 0) json += ",";
    json += internal::TextMessageJson(MessageRoleName(window[i].role),
                                      window[i].content);
  }
  json += "]";
  return json;
}

}  // namespace

absl::StatusOr<uint64_t> ContextGraph::Impl::SummaryTokenTrigger(
    std::string_view model) const {
  uint64_t window = options.context_window_tokens;
  if (window == 0) {
    StatusOr<ModelInfo> info = ModelRegistry::Default().Find(model);
    if (!info.ok()) return internal::ToAbsl(info.status());
    window = info->context_window;
  }
  // A model without a known window has no token trigger.
  if (window == 0) return UINT64_MAX;
  return std::max<uint64_t>(1, window * options.token_limit_percentage / 100);
}

bool ContextGraph::Impl::ShouldSummarize(const ContextRecord& ctx,
                                         uint64_t token_trigger) const {
  // Two high or critical messages since the last summary: the seed's rule,
  // which counted them over the whole context.
  constexpr uint64_t kHighTrigger = 2;
  return options.auto_summarize &&
         (ctx.messages_since_summary >= options.message_limit_threshold ||
          ctx.tokens_since_summary >= token_trigger ||
          ctx.high_since_summary >= kHighTrigger);
}

absl::StatusOr<SummaryRecord> ContextGraph::Impl::WriteSummary(
    WriteTransaction& txn, uint64_t seq, ContextRecord& ctx, int64_t now,
    std::vector<std::string>* linked, std::string* embedding_error) const {
  internal::GraphSubCall call("llm_summarize");
  Conversation c;
  uint64_t last_seq = 0;
  CTXKIT_RETURN_IF_ERROR(internal::ReadConversationIn(
      *conversations, txn, ctx.conversation_id, &c, &last_seq));
  CTXKIT_ASSIGN_OR_RETURN(
      std::vector<Message> window,
      internal::NewestMessagesIn(*conversations, txn, ctx.conversation_id, 0,
                                 options.summary_window));
  if (window.empty()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("contextId '%s' has no messages to summarize", ctx.id));
  }
  if (ctx.summary_version == UINT32_MAX) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "contextId '%s' has used every summary version", ctx.id));
  }
  std::vector<internal::SummarySource> sources(window.size());
  for (size_t i = 0; i < window.size(); ++i) {
    sources[i].role = window[i].role;
    sources[i].content = window[i].content;
    absl::StatusOr<std::string_view> record = internal::TxnGet(
        txn, dbs.msg, internal::MessageRecordKey(seq, window[i].seq));
    if (record.ok()) {
      CTXKIT_ASSIGN_OR_RETURN(internal::MessageRecord r,
                              internal::DecodeMessageRecord(*record));
      sources[i].importance = r.importance;
    } else if (record.status().code() != absl::StatusCode::kNotFound) {
      return record.status();
    }
  }
  std::optional<SummaryRecord> previous;
  if (ctx.summary_version > 0) {
    CTXKIT_ASSIGN_OR_RETURN(previous,
                            ReadSummary(txn, seq, ctx.summary_version));
  }
  const internal::ExtractedSummary extracted = internal::ExtractSummary(
      sources, c.message_count,
      previous ? previous->code_blocks : std::vector<CodeBlock>(),
      previous ? previous->key_insights : std::vector<std::string>());
  CTXKIT_ASSIGN_OR_RETURN(internal::ModelCounter counter,
                          internal::ModelCounter::For(c.model));
  auto count = [&](std::string_view text) { return counter.Count(text); };
  SummaryRecord record;
  CTXKIT_ASSIGN_OR_RETURN(
      record.text,
      internal::BuildSummaryText(extracted, options.max_summary_tokens, count));
  if (options.summarizer) {
    SummaryRequest request;
    request.messages_json = WindowJson(window);
    request.extractive = record.text;
    request.message_count = window.size();
    request.max_tokens = options.max_summary_tokens;
    // The host's failure is not the caller's: its text is the fallback.
    StatusOr<std::string> host = options.summarizer->Summarize(request);
    if (host.ok() && !host->empty() &&
        internal::CheckText("summary", *host, SIZE_MAX).ok()) {
      CTXKIT_ASSIGN_OR_RETURN(uint64_t tokens, counter.Count(*host));
      if (tokens <= options.max_summary_tokens) {
        record.text = *std::move(host);
        record.by_host = true;
      }
    }
  }
  CTXKIT_ASSIGN_OR_RETURN(record.tokens_used, counter.Count(record.text));
  record.created_at = now;
  record.code_blocks = extracted.code_blocks;
  record.key_insights = extracted.key_insights;
  record.importance_score = extracted.importance_score;
  record.message_count = c.message_count;
  record.token_limit = options.max_summary_tokens;

  CTXKIT_RETURN_IF_ERROR(internal::RecordGraphFormat(txn, dbs));
  if (previous) {
    CTXKIT_RETURN_IF_ERROR(internal::RemoveContextTerms(
        txn, dbs.lex, seq,
        internal::CountTerms(previous->text, internal::kSummaryTermWeight)));
  }
  CTXKIT_RETURN_IF_ERROR(internal::AddContextTerms(
      txn, dbs.lex, seq,
      internal::CountTerms(record.text, internal::kSummaryTermWeight)));
  const uint32_t version = ctx.summary_version + 1;
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs.sums,
                                          internal::SummaryKey(seq, version),
                                          internal::EncodeSummary(record)));
  // Versions beyond the history go (more than one when summary_history was
  // lowered since they were written).
  if (version > options.summary_history) {
    const uint32_t keep_from = version - options.summary_history + 1;
    std::vector<std::string> old;
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                            internal::TxnNewCursor(txn, dbs.sums));
    const std::string prefix = internal::SeqKey(seq);
    for (cursor.Seek(prefix);
         cursor.Valid() && cursor.key().starts_with(prefix); cursor.Next()) {
      if (cursor.key().size() != prefix.size() + 4) break;
      if (internal::ReadBigEndian32(cursor.key().data() + prefix.size()) >=
          keep_from) {
        break;
      }
      old.emplace_back(cursor.key());
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    for (const std::string& key : old) {
      CTXKIT_RETURN_IF_ERROR(internal::TxnDelete(txn, dbs.sums, key).status());
    }
  }
  ctx.summary_version = version;
  if (ctx.first_summary_at == 0) ctx.first_summary_at = now;
  ctx.last_summary_at = now;
  ctx.importance_score = record.importance_score;
  ctx.messages_since_summary = 0;
  ctx.tokens_since_summary = 0;
  ctx.high_since_summary = 0;
  // Written now, so that the parents' summaries read the new version.
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs.ctx, internal::SeqKey(seq),
                                          internal::EncodeContext(ctx)));
  call.Done(record.by_host ? "host" : "extractive");
  CTXKIT_RETURN_IF_ERROR(EmbedSummary(txn, seq, record, embedding_error));
  CTXKIT_RETURN_IF_ERROR(RefreshHierarchy(txn, seq, now));
  CTXKIT_ASSIGN_OR_RETURN(std::vector<std::string> ids,
                          AutoLink(txn, ctx, seq, version, now));
  if (linked != nullptr) *linked = std::move(ids);
  return record;
}

absl::StatusOr<SummaryRecord> ContextGraph::Impl::ReadSummary(
    const Transaction& txn, uint64_t seq, uint32_t version) const {
  absl::StatusOr<std::string_view> v =
      internal::TxnGet(txn, dbs.sums, internal::SummaryKey(seq, version));
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) {
      return absl::DataLossError(absl::StrFormat(
          "context graph record is corrupt: summary %d of context %d is "
          "missing",
          version, seq));
    }
    return v.status();
  }
  return internal::DecodeSummary(*v);
}

ContextSummary ContextGraph::Impl::PublicSummary(const ContextRecord& ctx,
                                                 uint32_t version,
                                                 SummaryRecord record) {
  ContextSummary s;
  s.context_id = ctx.id;
  s.summary = std::move(record.text);
  s.code_blocks = std::move(record.code_blocks);
  s.key_insights = std::move(record.key_insights);
  s.importance_score = record.importance_score;
  s.message_count = record.message_count;
  s.version = version;
  s.created_at = ctx.first_summary_at;
  s.last_updated = record.created_at;
  s.tokens_used = record.tokens_used;
  s.token_limit = record.token_limit;
  s.summarizer = record.by_host ? "host" : "extractive";
  return s;
}

absl::StatusOr<std::vector<ContextSummary>> ContextGraph::Impl::Summaries(
    const Transaction& txn, uint64_t seq, const ContextRecord& ctx,
    bool history) const {
  std::vector<ContextSummary> out;
  if (ctx.summary_version == 0) return out;
  CTXKIT_ASSIGN_OR_RETURN(SummaryRecord newest,
                          ReadSummary(txn, seq, ctx.summary_version));
  out.push_back(PublicSummary(ctx, ctx.summary_version, std::move(newest)));
  // Older versions end where the history was cut.
  for (uint32_t v = ctx.summary_version - 1; history && v > 0; --v) {
    absl::StatusOr<std::string_view> value =
        internal::TxnGet(txn, dbs.sums, internal::SummaryKey(seq, v));
    if (!value.ok()) {
      if (value.status().code() == absl::StatusCode::kNotFound) break;
      return value.status();
    }
    CTXKIT_ASSIGN_OR_RETURN(SummaryRecord r, internal::DecodeSummary(*value));
    out.push_back(PublicSummary(ctx, v, std::move(r)));
  }
  return out;
}

StatusOr<ContextSummary> ContextGraph::Summarize(
    std::string_view id, const SummarizeOptions& options) {
  internal::GraphCall call(*impl_, "");  // its summaries' calls only
  absl::Status s = internal::CheckContextId("contextId", id);
  if (!s.ok()) return internal::ToPublic(s);
  ContextSummary result;
  s = internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        internal::GraphCall::Restart();
        CTXKIT_ASSIGN_OR_RETURN(uint64_t seq,
                                impl_->Require(txn, id, "contextId"));
        CTXKIT_ASSIGN_OR_RETURN(ContextRecord ctx, impl_->Read(txn, seq));
        if (!options.force && ctx.summary_version > 0 &&
            ctx.messages_since_summary == 0) {
          CTXKIT_ASSIGN_OR_RETURN(
              SummaryRecord r,
              impl_->ReadSummary(txn, seq, ctx.summary_version));
          result = Impl::PublicSummary(ctx, ctx.summary_version, std::move(r));
          return absl::OkStatus();
        }
        std::string embedding_error;
        CTXKIT_ASSIGN_OR_RETURN(SummaryRecord r,
                                impl_->WriteSummary(txn, seq, ctx, impl_->Now(),
                                                    nullptr, &embedding_error));
        result = Impl::PublicSummary(ctx, ctx.summary_version, std::move(r));
        result.embedding_error = std::move(embedding_error);
        return absl::OkStatus();
      });
  s = call.Done(s);
  if (!s.ok()) return internal::ToPublic(s);
  const Status related = Impl::FillRelated(*this, result);
  if (!related.ok()) return related;
  return result;
}

Status ContextGraph::Impl::FillRelated(const ContextGraph& graph,
                                       ContextSummary& summary) {
  RelatedOptions options;
  options.limit = ContextGraphLimits::kMaxListLimit;
  StatusOr<RelatedResult> related = graph.Related(summary.context_id, options);
  // Deleted since the summary was read: it has no relationships left.
  if (related.status().code() == StatusCode::kNotFound) return Status();
  if (!related.ok()) return related.status();
  summary.related_contexts = std::move(related->context_ids);
  return Status();
}

}  // namespace ctxkit
