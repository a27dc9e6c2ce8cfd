// The public face of compaction: option checks, names, the classifier a
// compaction uses, caching and analytics around one run of the engine
// (engine.h), and the JSON and stored-conversation entry points.

#include "ctxkit/compactor.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/analytics.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "lib/base/cancel_poll.h"
#include "lib/cache/cache_internal.h"
#include "lib/compactor/chat_history.h"
#include "lib/compactor/compaction_json.h"
#include "lib/compactor/compactor_internal.h"
#include "lib/compactor/engine.h"
#include "lib/compactor/plan.h"
#include "lib/json/json_reader.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/tokenizer/message_counter.h"
#include "simdjson.h"

namespace ctxkit {

namespace {

using internal::ChatHistory;
using internal::MessageCounter;

constexpr std::string_view kCachePrefix = "compact";

absl::Status CheckOptions(const CompactionOptions& o) {
  auto range = [](std::string_view name, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s must be between %d and %d (got %d)", name, lo, hi, v));
    }
    return absl::OkStatus();
  };
  absl::Status s =
      range("max_tokens", o.max_tokens, 1, kCompactionMaxTokensLimit);
  if (s.ok())
    s = range("recent_window", o.recent_window, 0, kCompactionCountLimit);
  if (s.ok()) {
    s = range("min_important_messages", o.min_important_messages, 0,
              kCompactionCountLimit);
  }
  if (s.ok()) {
    s = range("max_summary_tokens", o.max_summary_tokens,
              kCompactionMinSummaryTokens, kCompactionMaxSummaryTokens);
  }
  if (s.ok()) s = range("cache_ttl_ms", o.cache_ttl_ms, 0, kCacheMaxTtlMs);
  if (s.ok() && o.target_ratio.has_value() &&
      !(*o.target_ratio >= kCompactionMinTargetRatio &&
        *o.target_ratio <= kCompactionMaxTargetRatio)) {
    s = absl::InvalidArgumentError(absl::StrFormat(
        "target_ratio must be between 0.1 and 0.9 (got %g)", *o.target_ratio));
  }
  return s;
}

}  // namespace

Summarizer::~Summarizer() = default;

const char* CompactionStrategyName(CompactionStrategy s) noexcept {
  switch (s) {
    case CompactionStrategy::kSmart:
      return "smart";
    case CompactionStrategy::kSummarize:
      return "summarize";
    case CompactionStrategy::kRemoveOld:
      return "remove_old";
    case CompactionStrategy::kCompressSimilar:
      return "compress_similar";
  }
  return "smart";
}

absl::StatusOr<CompactionStrategy> internal::ParseCompactionStrategy(
    std::string_view name) {
  for (CompactionStrategy s :
       {CompactionStrategy::kSmart, CompactionStrategy::kSummarize,
        CompactionStrategy::kRemoveOld, CompactionStrategy::kCompressSimilar}) {
    if (name == CompactionStrategyName(s)) return s;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("strategy must be one of smart, summarize, remove_old, "
                      "compress_similar (got \"%s\")",
                      name));
}

StatusOr<CompactionStrategy> ParseCompactionStrategy(std::string_view name) {
  return internal::ToPublic(internal::ParseCompactionStrategy(name));
}

const char* BudgetStatusName(BudgetStatus status) noexcept {
  switch (status) {
    case BudgetStatus::kMet:
      return "met";
    case BudgetStatus::kDegraded:
      return "degraded";
    case BudgetStatus::kInfeasible:
      return "infeasible";
  }
  return "met";
}

const char* DecisionActionName(MessageDecision::Action a) noexcept {
  switch (a) {
    case MessageDecision::Action::kKept:
      return "kept";
    case MessageDecision::Action::kTruncated:
      return "truncated";
    case MessageDecision::Action::kSummarized:
      return "summarized";
    case MessageDecision::Action::kDropped:
      return "dropped";
    case MessageDecision::Action::kMerged:
      return "merged";
  }
  return "kept";
}

namespace {

// The classifier a compaction uses: the options' or the Compactor's table,
// without the "tool_result" and "schema_info" rules when the options say
// so. Removing a rule recompiles the phrase automaton, so the variants of
// the Compactor's own table are made once per Compactor.
class ClassifierVariants {
 public:
  explicit ClassifierVariants(std::shared_ptr<const Classifier> table)
      : table_(table != nullptr ? std::move(table) : Classifier::Default()) {}

  const std::shared_ptr<const Classifier>& table() const { return table_; }

  std::shared_ptr<const Classifier> For(
      const std::shared_ptr<const Classifier>& given, bool tool_results,
      bool schema_info) {
    const bool default_table = given == nullptr;
    const std::shared_ptr<const Classifier> base =
        default_table ? table_ : given;
    if (tool_results && schema_info) return base;
    const size_t slot = (tool_results ? 0 : 1) + (schema_info ? 0 : 2) - 1;
    if (default_table) {
      std::lock_guard<std::mutex> lock(mu_);
      if (made_[slot] != nullptr) return made_[slot];
    }
    auto adjusted = std::make_shared<Classifier>(*base);
    if (!tool_results) (void)adjusted->RemoveRule("tool_result");
    if (!schema_info) (void)adjusted->RemoveRule("schema_info");
    if (default_table) {
      std::lock_guard<std::mutex> lock(mu_);
      if (made_[slot] == nullptr) made_[slot] = adjusted;
      return made_[slot];
    }
    return adjusted;
  }

 private:
  const std::shared_ptr<const Classifier> table_;
  std::mutex mu_;
  std::shared_ptr<const Classifier> made_[3];
};

}  // namespace

struct Compactor::Impl {
  explicit Impl(CompactorServices s)
      : services(std::move(s)), variants(services.classifier) {}
  CompactorServices services;
  ClassifierVariants variants;
};

namespace {

// A free function rather than a member of Compactor::Impl: members of a
// class nested in an exported class would be exported too.
absl::StatusOr<CompactionResult> RunCompaction(
    const CompactorServices& services, ClassifierVariants& variants,
    simdjson::dom::array messages, const CompactionOptions& options) {
  const ModelRegistry& registry = services.registry != nullptr
                                      ? *services.registry
                                      : ModelRegistry::Default();
  const auto started = std::chrono::steady_clock::now();
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  internal::CancelPoll poll(options.cancel, "compaction");
  CTXKIT_RETURN_IF_ERROR(poll.Check());
  if (!options.model.empty() && !options.estimate_unknown_model) {
    // Counting an unknown model with the heuristic would give a result
    // that looks exact to a caller who only mistyped the name.
    StatusOr<ModelInfo> known = registry.Find(options.model);
    if (!known.ok() && known.status().code() == StatusCode::kNotFound) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "model: %s (set estimate_unknown_model to estimate its tokens "
          "instead)",
          known.status().message()));
    }
  }
  CTXKIT_ASSIGN_OR_RETURN(ChatHistory history,
                          internal::ParseChatHistory(messages, options.format));
  std::string counter_type = options.token_counter_type;
  if (options.model.empty() && counter_type.empty()) {
    counter_type =
        history.format == ChatFormat::kAnthropic ? "anthropic" : "openai";
  }
  CTXKIT_ASSIGN_OR_RETURN(
      internal::CountingChoice choice,
      internal::ChooseCounting(options.model, counter_type, registry));
  MessageCountOptions count_options;
  count_options.format = choice.format;
  MessageCounter counter(choice.tokenizer, count_options, choice.format);

  // The Compactor's own table is keyed unless it is the built-in one.
  const Classifier* keyed_table = options.classifier != nullptr
                                      ? options.classifier.get()
                                      : services.classifier.get();
  std::string cache_lookup;
  if (options.enable_caching && services.cache != nullptr) {
    cache_lookup = internal::CacheLookupKey(history, options, choice.encoding,
                                            keyed_table);
    // A history too large to key is compacted uncached.
    if (cache_lookup.size() > kCacheMaxLookupBytes) cache_lookup.clear();
  }
  if (!cache_lookup.empty()) {
    absl::StatusOr<CacheEntry> hit =
        internal::CacheGetKeyed(*services.cache, cache_lookup, kCachePrefix);
    if (hit.ok()) {
      absl::StatusOr<CompactionResult> cached =
          internal::DecodeResult(hit->content);
      if (cached.ok()) {
        cached->from_cache = true;
        return cached;
      }
    } else if (hit.status().code() != absl::StatusCode::kNotFound) {
      return hit.status();
    }
  }

  const std::shared_ptr<const Classifier> classifier =
      variants.For(options.classifier, options.preserve_tool_results,
                   options.preserve_schema_info);

  internal::Engine engine(options, services, std::move(history), counter, poll);
  if (absl::Status s = engine.Prepare(messages, *classifier); !s.ok()) {
    return s;
  }
  absl::StatusOr<CompactionResult> result = engine.Compact();
  if (!result.ok()) return result;
  // The last chance to stop: past it the cache and analytics are written,
  // and a cancelled call writes nothing.
  poll.NextPhase("writing the result", 0);
  CTXKIT_RETURN_IF_ERROR(poll.Check());
  absl::StatusOr<std::string> encoded_result;
  result->encoding =
      choice.tokenizer != nullptr ? choice.tokenizer->name() : "";
  result->method = choice.tokenizer != nullptr ? CountMethod::kTokenizer
                                               : CountMethod::kHeuristic;

  if (!cache_lookup.empty()) {
    encoded_result = internal::EncodeResult(*result);
    if (!encoded_result.ok()) return encoded_result.status();
    if (encoded_result->size() > kCacheMaxContentBytes) cache_lookup.clear();
  }
  if (!cache_lookup.empty()) {
    CachePutOptions put;
    put.prefix = std::string(kCachePrefix);
    put.ttl_ms = options.cache_ttl_ms;
    // Without a model the entry is counted with CachePutOptions' default,
    // kDefaultModel, as every other cache entry.
    if (!options.model.empty()) put.model = options.model;
    absl::StatusOr<CachePutResult> stored = internal::CachePutKeyed(
        *services.cache, cache_lookup, *encoded_result, put);
    CTXKIT_RETURN_IF_ERROR(stored.status());
  }
  if (options.enable_analytics && services.analytics != nullptr) {
    const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::steady_clock::now() - started)
                           .count();
    (void)services.analytics->Record("compact", us, true);
    const AnalyticsCount counts[] = {
        {"compact.messages_in", static_cast<int64_t>(result->original_count)},
        {"compact.messages_out", static_cast<int64_t>(result->compacted_count)},
        {"compact.tokens_in", static_cast<int64_t>(result->original_tokens)},
        {"compact.tokens_out", static_cast<int64_t>(result->compacted_tokens)},
        {"compact.tokens_saved", result->tokens_saved()},
    };
    (void)services.analytics->AddCounts(
        std::span<const AnalyticsCount>(counts));
  }
  return result;
}

}  // namespace

Compactor::Compactor(CompactorServices services)
    : impl_(std::make_unique<Impl>(std::move(services))) {}

Compactor::~Compactor() = default;

StatusOr<CompactionResult> Compactor::Compact(
    std::string_view history_json, const CompactionOptions& options) const {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      internal::ParseJson(parser, history_json, "chat history");
  if (!root.ok()) return internal::ToPublic(root.status());
  absl::StatusOr<simdjson::dom::array> messages =
      internal::HistoryMessages(*root);
  if (!messages.ok()) return internal::ToPublic(messages.status());
  return internal::ToPublic(
      RunCompaction(impl_->services, impl_->variants, *messages, options));
}

namespace {

CompactionBudget BudgetOf(const CompactionResult& r) {
  CompactionBudget budget;
  budget.status = r.status;
  budget.target_tokens = r.target_tokens;
  budget.compacted_tokens = r.compacted_tokens;
  budget.over_budget_by = r.over_budget_by;
  budget.must_keep_cut_tokens = r.must_keep_cut_tokens;
  return budget;
}

// The request's rules added to a copy of `table`, as the options'
// classifier; the options are left alone when there are none.
absl::Status UseRequestRules(const internal::CompactionRequest& request,
                             const Classifier& table,
                             CompactionOptions& options) {
  if (request.rules_json.empty()) return absl::OkStatus();
  auto classifier = std::make_shared<Classifier>(table);
  CTXKIT_RETURN_IF_ERROR(
      internal::ClassifierAddRulesJson(*classifier, request.rules_json));
  options.classifier = std::move(classifier);
  return absl::OkStatus();
}

}  // namespace

StatusOr<std::string> Compactor::CompactJson(std::string_view request_json,
                                             CompactionBudget* budget) const {
  return CompactJson(request_json, CancelCheck(), budget);
}

StatusOr<std::string> Compactor::CompactJson(std::string_view request_json,
                                             const CancelCheck& cancel,
                                             CompactionBudget* budget) const {
  simdjson::dom::parser parser;
  absl::StatusOr<internal::CompactionRequest> request =
      internal::ParseCompactionRequest(parser, request_json);
  if (!request.ok()) return internal::ToPublic(request.status());
  if (absl::Status s =
          UseRequestRules(*request, *impl_->variants.table(), request->options);
      !s.ok()) {
    return internal::ToPublic(s);
  }
  request->options.cancel = cancel;
  absl::StatusOr<CompactionResult> result = RunCompaction(
      impl_->services, impl_->variants, request->messages, request->options);
  if (!result.ok()) return internal::ToPublic(result.status());
  absl::StatusOr<std::string> document =
      internal::ResponseJson(*result, *request);
  if (!document.ok()) return internal::ToPublic(document.status());
  if (budget != nullptr) *budget = BudgetOf(*result);
  return *std::move(document);
}

StatusOr<std::string> Compactor::CompactConversationJson(
    ConversationStore& conversations, std::string_view conversation_id,
    std::string_view options_json, CompactionBudget* budget,
    uint64_t* version) const {
  return CompactConversationJson(conversations, conversation_id, options_json,
                                 CancelCheck(), budget, version);
}

StatusOr<std::string> Compactor::CompactConversationJson(
    ConversationStore& conversations, std::string_view conversation_id,
    std::string_view options_json, const CancelCheck& cancel,
    CompactionBudget* budget, uint64_t* version) const {
  simdjson::dom::parser parser;
  absl::StatusOr<internal::CompactionRequest> request =
      internal::ParseCompactionRequest(
          parser, options_json.empty() ? std::string_view("{}") : options_json,
          internal::RequestKind::kConversation);
  if (!request.ok()) return internal::ToPublic(request.status());
  if (absl::Status s =
          UseRequestRules(*request, *impl_->variants.table(), request->options);
      !s.ok()) {
    return internal::ToPublic(s);
  }
  request->options.cancel = cancel;
  uint64_t saved_version = 0;
  StatusOr<CompactionResult> result = CompactConversation(
      conversations, conversation_id, request->options, &saved_version);
  if (!result.ok()) return result.status();
  const internal::SavedView view{conversation_id, saved_version};
  absl::StatusOr<std::string> document =
      internal::ResponseJson(*result, *request, &view);
  if (!document.ok()) return internal::ToPublic(document.status());
  if (budget != nullptr) *budget = BudgetOf(*result);
  if (version != nullptr) *version = saved_version;
  return *std::move(document);
}

StatusOr<CompactionResult> Compactor::CompactConversation(
    ConversationStore& conversations, std::string_view conversation_id,
    const CompactionOptions& options, uint64_t* version) const {
  StatusOr<ConversationDetail> detail =
      conversations.Get(conversation_id, /*with_messages=*/true);
  if (!detail.ok()) return detail.status();
  if (detail->messages.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  absl::StrFormat("conversation %s has no messages to compact",
                                  conversation_id));
  }
  absl::StatusOr<std::string> history =
      internal::StoredMessagesJson(detail->messages);
  if (!history.ok()) return internal::ToPublic(history.status());
  CompactionOptions stored_options = options;
  if (stored_options.model.empty() &&
      stored_options.token_counter_type.empty()) {
    stored_options.model = detail->conversation.model;
    stored_options.estimate_unknown_model = true;
  }
  StatusOr<CompactionResult> result = Compact(*history, stored_options);
  if (!result.ok()) return result;
  // Compact() asked last before its own writes; the view is one more.
  internal::CancelPoll poll(options.cancel, "compaction");
  poll.NextPhase("saving the compacted view", 0);
  if (absl::Status s = poll.Check(); !s.ok()) return internal::ToPublic(s);
  absl::StatusOr<std::string> info = internal::CompactionInfoJson(*result);
  if (!info.ok()) return internal::ToPublic(info.status());
  NewCompactedView view;
  view.messages_json = result->messages_json;
  view.info_json = *info;
  view.source_message_count = detail->messages.size();
  view.source_last_seq = detail->messages.back().seq;
  view.tokens = result->compacted_tokens;
  StatusOr<CompactedView> saved =
      conversations.SaveCompactedView(conversation_id, view);
  if (!saved.ok()) return saved.status();
  if (version != nullptr) *version = saved->version;
  return result;
}

}  // namespace ctxkit
