// JSON shapes of compaction (see compaction_json.h).

#include "lib/compactor/compaction_json.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/base/field_check.h"
#include "lib/compactor/compactor_internal.h"
#include "lib/json/json_copy.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"

namespace ctxkit::internal {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

constexpr int kResultEncodingVersion = 2;

template <typename T>
void SetIf(const std::optional<T>& value, T& out) {
  if (value.has_value()) out = *value;
}

void WriteStrings(JsonWriter& w, std::string_view key,
                  const std::vector<std::string>& items) {
  w.Key(key).BeginArray();
  for (const std::string& s : items) w.String(s);
  w.EndArray();
}

void WriteSummary(JsonWriter& w, const CompactionSummary& summary) {
  w.Key("summary").BeginObject();
  WriteStrings(w, "topics", summary.topics);
  WriteStrings(w, "tables", summary.tables);
  WriteStrings(w, "tools", summary.tools);
  w.Key("description").String(summary.description);
  w.EndObject();
}

void WriteCompactionInfo(JsonWriter& w, const CompactionResult& r) {
  w.Key("compaction_info").BeginObject();
  w.Key("original_count").Uint(r.original_count);
  w.Key("compacted_count").Uint(r.compacted_count);
  w.Key("dropped_count").Uint(r.dropped_count);
  w.Key("anchor_count").Uint(r.anchor_count);
  w.Key("tokens_saved").Int(r.tokens_saved());
  w.Key("compression_ratio").Double(r.compression_ratio);
  w.Key("original_tokens").Uint(r.original_tokens);
  w.Key("summary_count").Uint(r.summary_count);
  w.Key("truncated_count").Uint(r.truncated_count);
  w.Key("summarizer_failures").Uint(r.summarizer_failures);
  w.EndObject();
}

void WriteCounting(JsonWriter& w, const CompactionResult& r) {
  w.Key("format").String(ChatFormatName(r.format));
  w.Key("strategy").String(CompactionStrategyName(r.strategy));
  w.Key("encoding").String(r.encoding);
  w.Key("counting")
      .String(r.method == CountMethod::kTokenizer ? "tokenizer" : "estimate");
}

absl::StatusOr<std::optional<int64_t>> OptionalInt(object obj,
                                                   std::string_view field,
                                                   std::string_view context) {
  return GetOptionalInt64(obj, field, context);
}

}  // namespace

// The "budget" object of every compaction document.
void WriteBudget(JsonWriter& w, const CompactionResult& r) {
  w.Key("budget").BeginObject();
  w.Key("target_tokens").Uint(r.target_tokens);
  w.Key("met").Bool(r.budget_met);
  w.Key("status").String(BudgetStatusName(r.status));
  w.Key("over_by").Uint(r.over_budget_by);
  w.Key("must_keep_cut_tokens").Uint(r.must_keep_cut_tokens);
  w.EndObject();
}

absl::StatusOr<array> HistoryMessages(element root) {
  if (root.type() == element_type::ARRAY) return array(root);
  if (root.type() == element_type::OBJECT) {
    return GetArray(object(root), "messages", "");
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "chat history must be an array of messages or an object with "
      "\"messages\" (got %s)",
      JsonTypeName(root.type())));
}

namespace {

// Every member a request may hold; a key outside these is a typo that would
// otherwise leave its option at the default (see UnknownKeyError).
constexpr std::string_view kRequestKeys[] = {"messages",
                                             "max_tokens",
                                             "recent_window",
                                             "preserve_recent",
                                             "keep_anchors",
                                             "options",
                                             "model",
                                             "estimate_unknown_model",
                                             "format",
                                             "strategy",
                                             "target_ratio",
                                             "explain",
                                             "max_summary_tokens",
                                             "rules",
                                             "response"};
constexpr std::string_view kOptionKeys[] = {
    "preserve_tool_results", "preserve_schema_info",
    "enable_summarization",  "min_important_messages",
    "token_counter_type",    "enable_llm_summarization",
    "enable_caching",        "cache_ttl_ms",
    "enable_analytics"};

absl::Status CheckKeys(object obj, std::string_view context,
                       std::span<const std::string_view> known) {
  for (const auto field : obj) {
    if (std::find(known.begin(), known.end(), field.key) == known.end()) {
      return UnknownKeyError(context, field.key, known);
    }
  }
  return absl::OkStatus();
}

absl::Status ReadOptions(object opts, CompactionOptions& o) {
  const std::string_view c = "options";
  CTXKIT_RETURN_IF_ERROR(CheckKeys(opts, c, kOptionKeys));
  CTXKIT_ASSIGN_OR_RETURN(auto v1,
                          GetOptionalBool(opts, "preserve_tool_results", c));
  SetIf(v1, o.preserve_tool_results);
  CTXKIT_ASSIGN_OR_RETURN(auto v2,
                          GetOptionalBool(opts, "preserve_schema_info", c));
  SetIf(v2, o.preserve_schema_info);
  CTXKIT_ASSIGN_OR_RETURN(auto v3,
                          GetOptionalBool(opts, "enable_summarization", c));
  SetIf(v3, o.enable_summarization);
  CTXKIT_ASSIGN_OR_RETURN(auto v4,
                          OptionalInt(opts, "min_important_messages", c));
  SetIf(v4, o.min_important_messages);
  CTXKIT_ASSIGN_OR_RETURN(auto v5,
                          GetOptionalString(opts, "token_counter_type", c));
  if (v5.has_value()) {
    static constexpr std::string_view kTypes[] = {"generic", "openai",
                                                  "anthropic", "ollama"};
    if (std::find(std::begin(kTypes), std::end(kTypes), *v5) ==
        std::end(kTypes)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "options.token_counter_type must be one of generic, openai, "
          "anthropic, ollama (got \"%s\")",
          *v5));
    }
    o.token_counter_type = std::string(*v5);
  }
  CTXKIT_ASSIGN_OR_RETURN(auto v6,
                          GetOptionalBool(opts, "enable_llm_summarization", c));
  SetIf(v6, o.enable_llm_summarization);
  CTXKIT_ASSIGN_OR_RETURN(auto v7, GetOptionalBool(opts, "enable_caching", c));
  SetIf(v7, o.enable_caching);
  CTXKIT_ASSIGN_OR_RETURN(auto v8, OptionalInt(opts, "cache_ttl_ms", c));
  SetIf(v8, o.cache_ttl_ms);
  CTXKIT_ASSIGN_OR_RETURN(auto v9,
                          GetOptionalBool(opts, "enable_analytics", c));
  SetIf(v9, o.enable_analytics);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CompactionRequest> ParseCompactionRequest(
    simdjson::dom::parser& parser, std::string_view json, RequestKind kind) {
  const bool conversation = kind == RequestKind::kConversation;
  CTXKIT_ASSIGN_OR_RETURN(
      element root,
      ParseJson(parser, json,
                conversation ? "compaction options" : "compaction request"));
  CompactionRequest out;
  if (!conversation && root.type() == element_type::ARRAY) {
    out.messages = array(root);
    return out;
  }
  CTXKIT_ASSIGN_OR_RETURN(object req,
                          AsObject(root, conversation ? "options" : "request"));
  CTXKIT_RETURN_IF_ERROR(CheckKeys(req, "", kRequestKeys));
  if (conversation) {
    if (!req["messages"].error()) {
      return absl::InvalidArgumentError(
          "messages: not allowed in a conversation's compaction options; "
          "the stored conversation's messages are compacted");
    }
  } else {
    CTXKIT_ASSIGN_OR_RETURN(out.messages, GetArray(req, "messages", ""));
  }
  CompactionOptions& o = out.options;

  CTXKIT_ASSIGN_OR_RETURN(auto max_tokens, OptionalInt(req, "max_tokens", ""));
  SetIf(max_tokens, o.max_tokens);
  CTXKIT_ASSIGN_OR_RETURN(auto preserve_recent,
                          OptionalInt(req, "preserve_recent", ""));
  SetIf(preserve_recent, o.recent_window);
  CTXKIT_ASSIGN_OR_RETURN(auto recent_window,
                          OptionalInt(req, "recent_window", ""));
  SetIf(recent_window, o.recent_window);
  CTXKIT_ASSIGN_OR_RETURN(auto keep_anchors,
                          GetOptionalBool(req, "keep_anchors", ""));
  SetIf(keep_anchors, o.keep_anchors);
  CTXKIT_ASSIGN_OR_RETURN(auto explain, GetOptionalBool(req, "explain", ""));
  SetIf(explain, o.explain);
  CTXKIT_ASSIGN_OR_RETURN(auto max_summary_tokens,
                          OptionalInt(req, "max_summary_tokens", ""));
  SetIf(max_summary_tokens, o.max_summary_tokens);
  CTXKIT_ASSIGN_OR_RETURN(auto target_ratio,
                          GetOptionalDouble(req, "target_ratio", ""));
  if (target_ratio.has_value()) o.target_ratio = *target_ratio;
  CTXKIT_ASSIGN_OR_RETURN(auto model, GetOptionalString(req, "model", ""));
  if (model.has_value()) o.model = std::string(*model);
  CTXKIT_ASSIGN_OR_RETURN(auto estimate,
                          GetOptionalBool(req, "estimate_unknown_model", ""));
  SetIf(estimate, o.estimate_unknown_model);
  CTXKIT_ASSIGN_OR_RETURN(auto format, GetOptionalString(req, "format", ""));
  if (format.has_value()) {
    CTXKIT_ASSIGN_OR_RETURN(o.format, ParseChatFormat(*format));
  }
  CTXKIT_ASSIGN_OR_RETURN(auto strategy,
                          GetOptionalString(req, "strategy", ""));
  if (strategy.has_value()) {
    CTXKIT_ASSIGN_OR_RETURN(o.strategy, ParseCompactionStrategy(*strategy));
  }

  CTXKIT_ASSIGN_OR_RETURN(auto response,
                          GetOptionalString(req, "response", ""));
  if (response.has_value()) {
    if (*response == "compress_context") {
      out.compress_context_response = true;
    } else if (*response != "chat_compact") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "response must be \"chat_compact\" or \"compress_context\" (got "
          "\"%s\")",
          *response));
    }
  }

  CTXKIT_ASSIGN_OR_RETURN(std::optional<object> opts,
                          GetOptionalObject(req, "options", ""));
  if (opts.has_value()) {
    CTXKIT_RETURN_IF_ERROR(ReadOptions(*opts, o));
  }

  CTXKIT_ASSIGN_OR_RETURN(std::optional<array> rules,
                          GetOptionalArray(req, "rules", ""));
  if (rules.has_value() && rules->size() > 0) {
    out.rules_json = simdjson::minify(*rules);
  }

  // Range errors name the request's members, as the options' checks do.
  if (o.max_tokens < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "max_tokens must be a positive number of tokens (got %d)",
        o.max_tokens));
  }
  if (o.recent_window < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must not be negative (got %d)",
        recent_window.has_value() ? "recent_window" : "preserve_recent",
        o.recent_window));
  }
  if (o.min_important_messages < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "options.min_important_messages must not be negative (got %d)",
        o.min_important_messages));
  }
  return out;
}

namespace {

void WriteSavedView(JsonWriter& w, const SavedView* view) {
  if (view == nullptr) return;
  w.Key("conversation_id").String(view->conversation_id);
  w.Key("view_version").Uint(view->version);
}

absl::StatusOr<std::string> WriteChatCompact(const CompactionResult& r,
                                             const SavedView* view) {
  JsonWriter w;
  w.BeginObject();
  w.Key("schema_version").Int(1);
  WriteSavedView(w, view);
  w.Key("messages").BeginArray();
  for (const CompactedMessage& m : r.messages) w.TrustedValue(m.json);
  w.EndArray();
  WriteSummary(w, r.summary);
  w.Key("token_estimate").Uint(r.compacted_tokens);
  WriteCompactionInfo(w, r);
  WriteBudget(w, r);
  WriteCounting(w, r);
  w.Key("from_cache").Bool(r.from_cache);
  if (!r.decisions.empty()) {
    w.Key("decisions").BeginArray();
    for (const MessageDecision& d : r.decisions) {
      w.BeginObject();
      w.Key("index").Uint(d.index);
      w.Key("tier").String(TierName(d.tier));
      w.Key("rule").String(d.rule);
      w.Key("action").String(DecisionActionName(d.action));
      w.Key("reason").String(d.reason);
      if (!d.detail.empty()) w.Key("detail").String(d.detail);
      w.Key("tokens").Uint(d.tokens);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return std::move(w).Finish();
}

// Seed 000's compress_context document (CompressContextResponseJson), with
// the saved view first when there is one.
absl::StatusOr<std::string> WriteCompressContext(const CompactionResult& r,
                                                 const SavedView* view) {
  JsonWriter w;
  w.BeginObject();
  WriteSavedView(w, view);
  w.Key("success").Bool(true);
  w.Key("original_tokens").Uint(r.original_tokens);
  w.Key("compressed_tokens").Uint(r.compacted_tokens);
  w.Key("tokens_saved").Int(r.tokens_saved());
  w.Key("compression_ratio").Double(r.compression_ratio);
  w.Key("original_message_count").Uint(r.original_count);
  w.Key("compressed_message_count").Uint(r.compacted_count);
  w.Key("strategy").String(CompactionStrategyName(r.strategy));
  w.Key("compressed_messages").BeginArray();
  simdjson::dom::parser parser;
  for (const CompactedMessage& m : r.messages) {
    CTXKIT_ASSIGN_OR_RETURN(element root,
                            ParseJson(parser, m.json, "compacted message"));
    object obj;
    if (root.get(obj)) {
      return absl::InternalError("compacted message is not an object");
    }
    w.BeginObject();
    std::string_view role;
    w.Key("role").String(obj["role"].get(role) ? std::string_view() : role);
    w.Key("content");
    element content;
    if (obj["content"].get(content)) {
      w.Null();
    } else if (content.type() == element_type::STRING) {
      w.String(std::string_view(content));
    } else {
      w.TrustedValue(simdjson::minify(content));
    }
    w.Key("tokens").Uint(m.tokens);
    w.Key("is_compressed").Bool(m.is_compressed);
    w.EndObject();
  }
  w.EndArray();
  WriteBudget(w, r);
  w.EndObject();
  return std::move(w).Finish();
}

}  // namespace

absl::StatusOr<std::string> ChatCompactResponseJson(const CompactionResult& r) {
  return WriteChatCompact(r, nullptr);
}

absl::StatusOr<std::string> ResponseJson(const CompactionResult& result,
                                         const CompactionRequest& request,
                                         const SavedView* conversation) {
  if (request.compress_context_response) {
    return WriteCompressContext(result, conversation);
  }
  return WriteChatCompact(result, conversation);
}

absl::StatusOr<std::string> CompactionInfoJson(const CompactionResult& r) {
  JsonWriter w;
  w.BeginObject();
  w.Key("schema_version").Int(1);
  w.Key("token_estimate").Uint(r.compacted_tokens);
  WriteCompactionInfo(w, r);
  WriteBudget(w, r);
  WriteCounting(w, r);
  WriteSummary(w, r.summary);
  w.EndObject();
  return std::move(w).Finish();
}

absl::StatusOr<std::string> EncodeResult(const CompactionResult& r) {
  JsonWriter w;
  w.BeginObject();
  w.Key("v").Int(kResultEncodingVersion);
  w.Key("format").String(ChatFormatName(r.format));
  w.Key("strategy").String(CompactionStrategyName(r.strategy));
  w.Key("messages").BeginArray();
  for (const CompactedMessage& m : r.messages) {
    w.BeginArray().TrustedValue(m.json).Uint(m.tokens).Bool(m.is_compressed);
    if (m.source_index.has_value()) {
      w.Uint(*m.source_index);
    } else {
      w.Null();
    }
    w.EndArray();
  }
  w.EndArray();
  WriteSummary(w, r.summary);
  w.Key("n").BeginArray();
  for (size_t v : {r.original_tokens, r.compacted_tokens, r.target_tokens,
                   r.over_budget_by, r.original_count, r.compacted_count,
                   r.dropped_count, r.anchor_count, r.summary_count,
                   r.truncated_count, r.summarizer_failures,
                   r.must_keep_cut_tokens, static_cast<size_t>(r.status)}) {
    w.Uint(v);
  }
  w.EndArray();
  w.Key("met").Bool(r.budget_met);
  w.Key("ratio").Double(r.compression_ratio);
  w.Key("encoding").String(r.encoding);
  w.Key("estimate").Bool(r.method == CountMethod::kHeuristic);
  w.Key("decisions").BeginArray();
  for (const MessageDecision& d : r.decisions) {
    w.BeginArray()
        .Uint(d.index)
        .Int(static_cast<int>(d.tier))
        .String(d.rule)
        .Int(static_cast<int>(d.action))
        .String(d.reason)
        .Uint(d.tokens)
        .String(d.detail)
        .EndArray();
  }
  w.EndArray();
  w.EndObject();
  return std::move(w).Finish();
}

absl::StatusOr<CompactionResult> DecodeResult(std::string_view json) {
  // A stored entry written by another version, or damaged, is a miss: the
  // caller recomputes.
  const auto bad = [] {
    return absl::DataLossError("cached compaction result is not readable");
  };
  simdjson::dom::parser parser;
  CTXKIT_ASSIGN_OR_RETURN(element root,
                          ParseJson(parser, json, "cached result"));
  if (root.type() != element_type::OBJECT) return bad();
  const object obj(root);
  int64_t version = 0;
  if (obj["v"].get(version) || version != kResultEncodingVersion) return bad();
  CompactionResult r;
  std::string_view text;
  if (obj["format"].get(text)) return bad();
  absl::StatusOr<ChatFormat> format = ParseChatFormat(text);
  if (!format.ok()) return bad();
  r.format = *format;
  if (obj["strategy"].get(text)) return bad();
  absl::StatusOr<CompactionStrategy> strategy = ParseCompactionStrategy(text);
  if (!strategy.ok()) return bad();
  r.strategy = *strategy;
  array messages;
  if (obj["messages"].get(messages)) return bad();
  r.messages_json = "[";
  for (element m : messages) {
    array fields;
    if (m.get(fields) || fields.size() != 4) return bad();
    CompactedMessage out;
    out.json = simdjson::minify(fields.at(0).value_unsafe());
    uint64_t tokens = 0;
    if (fields.at(1).get(tokens)) return bad();
    out.tokens = static_cast<size_t>(tokens);
    if (fields.at(2).get(out.is_compressed)) return bad();
    uint64_t source = 0;
    if (!fields.at(3).get(source))
      out.source_index = static_cast<size_t>(source);
    if (r.messages_json.size() > 1) r.messages_json += ",";
    r.messages_json += out.json;
    r.messages.push_back(std::move(out));
  }
  r.messages_json += "]";
  object summary;
  if (obj["summary"].get(summary)) return bad();
  auto strings = [&](std::string_view key, std::vector<std::string>& out) {
    array items;
    if (summary[key].get(items)) return false;
    for (element e : items) {
      std::string_view s;
      if (e.get(s)) return false;
      out.emplace_back(s);
    }
    return true;
  };
  if (!strings("topics", r.summary.topics) ||
      !strings("tables", r.summary.tables) ||
      !strings("tools", r.summary.tools)) {
    return bad();
  }
  if (summary["description"].get(text)) return bad();
  r.summary.description = std::string(text);
  array numbers;
  if (obj["n"].get(numbers) || numbers.size() != 13) return bad();
  size_t status = 0;
  size_t* targets[] = {&r.original_tokens,
                       &r.compacted_tokens,
                       &r.target_tokens,
                       &r.over_budget_by,
                       &r.original_count,
                       &r.compacted_count,
                       &r.dropped_count,
                       &r.anchor_count,
                       &r.summary_count,
                       &r.truncated_count,
                       &r.summarizer_failures,
                       &r.must_keep_cut_tokens,
                       &status};
  size_t i = 0;
  for (element e : numbers) {
    uint64_t v = 0;
    if (e.get(v)) return bad();
    *targets[i++] = static_cast<size_t>(v);
  }
  if (status > static_cast<size_t>(BudgetStatus::kInfeasible)) return bad();
  r.status = static_cast<BudgetStatus>(status);
  if (obj["met"].get(r.budget_met)) return bad();
  if (obj["ratio"].get(r.compression_ratio)) return bad();
  if (obj["encoding"].get(text)) return bad();
  r.encoding = std::string(text);
  bool estimate = false;
  if (obj["estimate"].get(estimate)) return bad();
  r.method = estimate ? CountMethod::kHeuristic : CountMethod::kTokenizer;
  array decisions;
  if (obj["decisions"].get(decisions)) return bad();
  for (element e : decisions) {
    array f;
    if (e.get(f) || f.size() != 7) return bad();
    MessageDecision d;
    uint64_t index = 0;
    int64_t tier = 0;
    int64_t action = 0;
    uint64_t tokens = 0;
    std::string_view rule;
    std::string_view reason;
    std::string_view detail;
    if (f.at(0).get(index) || f.at(1).get(tier) || f.at(2).get(rule) ||
        f.at(3).get(action) || f.at(4).get(reason) || f.at(5).get(tokens) ||
        f.at(6).get(detail) || tier < 0 || tier > 4 || action < 0 ||
        action > 4) {
      return bad();
    }
    d.index = static_cast<size_t>(index);
    d.tier = static_cast<Tier>(tier);
    d.rule = std::string(rule);
    d.action = static_cast<MessageDecision::Action>(action);
    d.reason = std::string(reason);
    d.detail = std::string(detail);
    d.tokens = static_cast<size_t>(tokens);
    r.decisions.push_back(std::move(d));
  }
  return r;
}

std::string CacheLookupKey(const ChatHistory& history,
                           const CompactionOptions& o,
                           std::string_view encoding, const Classifier* table) {
  std::string key = absl::StrFormat(
      "ctxkit.compact.v1\nmax_tokens=%d\nrecent_window=%d\nkeep_anchors=%d\n"
      "preserve_tool_results=%d\npreserve_schema_info=%d\n"
      "enable_summarization=%d\nmin_important_messages=%d\n"
      "token_counter_type=%s\nmodel=%s\nencoding=%s\n"
      "enable_llm_summarization=%d\nstrategy=%s\ntarget_ratio=%s\n"
      "format=%s\nexplain=%d\nmax_summary_tokens=%d\n",
      o.max_tokens, o.recent_window, o.keep_anchors ? 1 : 0,
      o.preserve_tool_results ? 1 : 0, o.preserve_schema_info ? 1 : 0,
      o.enable_summarization ? 1 : 0, o.min_important_messages,
      o.token_counter_type, o.model, encoding,
      o.enable_llm_summarization ? 1 : 0, CompactionStrategyName(o.strategy),
      o.target_ratio.has_value() ? absl::StrFormat("%.17g", *o.target_ratio)
                                 : std::string("none"),
      ChatFormatName(history.format), o.explain ? 1 : 0, o.max_summary_tokens);
  if (table != nullptr) {
    key += "rules=";
    key += table->RulesJson();
    key += "\n";
  }
  key += "messages=[";
  for (size_t i = 0; i < history.messages.size(); ++i) {
    if (i > 0) key += ",";
    key += history.messages[i].json;
  }
  key += "]";
  return key;
}

absl::StatusOr<std::string> StoredMessagesJson(
    const std::vector<Message>& messages) {
  JsonWriter w;
  w.BeginArray();
  for (const Message& m : messages) {
    w.BeginObject();
    w.Key("role").String(MessageRoleName(m.role));
    w.Key("content").String(m.content);
    if (m.name.has_value()) w.Key("name").String(*m.name);
    if (m.tool_calls.has_value()) {
      w.Key("tool_calls");
      absl::Status s = WriteJsonValue(w, *m.tool_calls, "tool_calls");
      if (!s.ok()) return s;
    }
    if (m.tool_call_id.has_value())
      w.Key("tool_call_id").String(*m.tool_call_id);
    w.EndObject();
  }
  w.EndArray();
  return std::move(w).Finish();
}

}  // namespace ctxkit::internal

namespace ctxkit {

StatusOr<std::string> CompressContextResponseJson(const CompactionResult& r) {
  return internal::ToPublic(internal::WriteCompressContext(r, nullptr));
}

}  // namespace ctxkit
