// The public writers of ConversationStore's results (conversations.h, "JSON
// documents") and the batch reader of conversation_json.h.

#include "lib/conversations/conversation_json.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "ctxkit/cache.h"
#include "lib/base/field_check.h"
#include "lib/json/json_copy.h"
#include "lib/json/json_reader.h"
#include "lib/json/record_document.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "simdjson.h"

namespace ctxkit {
namespace internal {
namespace {

void WriteTips(JsonWriter& writer, const std::vector<OptimizationTip>& tips) {
  writer.Key("tips").BeginArray();
  for (const OptimizationTip& tip : tips) {
    writer.BeginObject()
        .Key("category")
        .String(tip.category)
        .Key("priority")
        .String(tip.priority)
        .Key("tip")
        .String(tip.tip)
        .Key("action")
        .String(tip.action)
        .EndObject();
  }
  writer.EndArray();
}

void WriteTokenLimit(JsonWriter& writer, const TokenLimit& limit) {
  writer.Key("token_limit")
      .BeginObject()
      .Key("model_limit")
      .Uint(limit.model_limit)
      .Key("current_usage")
      .Uint(limit.current_usage)
      .Key("percentage")
      .Double(limit.percentage)
      .Key("status")
      .String(limit.status)
      .Key("action")
      .String(limit.action)
      .Key("should_compress")
      .Bool(limit.should_compress)
      .EndObject();
}

void StringOrNull(JsonWriter& writer, const std::optional<std::string>& s) {
  if (s.has_value()) {
    writer.String(*s);
  } else {
    writer.Null();
  }
}

// The cache's hit rate once it has been asked (a hit or a miss): before
// any lookup the rate means nothing, and GeneralTips then leaves out its
// caching tip.
std::optional<double> UsedHitRate(const CacheStats* cache) {
  if (cache == nullptr || cache->lifetime_hits + cache->total_misses == 0) {
    return std::nullopt;
  }
  return cache->hit_rate;
}

}  // namespace

absl::Status WriteConversationJson(JsonWriter& writer, const Conversation& c) {
  writer.BeginObject()
      .Key("id")
      .String(c.id)
      .Key("title")
      .String(c.title)
      .Key("model")
      .String(c.model)
      .Key("created_at")
      .Int(c.created_at)
      .Key("updated_at")
      .Int(c.updated_at)
      .Key("total_tokens")
      .Uint(c.total_tokens)
      .Key("message_count")
      .Uint(c.message_count)
      .Key("metadata");
  CTXKIT_RETURN_IF_ERROR(WriteJsonValue(
      writer, c.metadata.empty() ? std::string_view("{}") : c.metadata,
      "metadata"));
  // A last message may have empty content (tool calls alone): its time,
  // not its text, says whether there is one.
  writer.Key("last_message");
  if (c.last_message_at != 0) {
    writer.String(c.last_message).Key("last_message_at").Int(c.last_message_at);
  } else {
    writer.Null().Key("last_message_at").Null();
  }
  writer.Key("input_tokens")
      .Uint(c.input_tokens())
      .Key("output_tokens")
      .Uint(c.output_tokens())
      .Key("user_tokens")
      .Uint(c.user_tokens)
      .Key("assistant_tokens")
      .Uint(c.assistant_tokens)
      .Key("system_tokens")
      .Uint(c.system_tokens)
      .Key("tool_tokens")
      .Uint(c.tool_tokens)
      .Key("compressed_count")
      .Uint(c.compressed_count)
      .Key("compressed_tokens")
      .Uint(c.compressed_tokens)
      .EndObject();
  return writer.status();
}

absl::Status WriteMessageJson(JsonWriter& writer, const Message& m,
                              bool include_content) {
  writer.BeginObject()
      .Key("id")
      .String(m.id)
      .Key("conversation_id")
      .String(m.conversation_id)
      .Key("seq")
      .Uint(m.seq)
      .Key("role")
      .String(MessageRoleName(m.role));
  if (include_content) {
    writer.Key("content").String(m.content);
  } else {
    // What was stored, without sending back what the caller just sent.
    writer.Key("content_bytes").Uint(m.content.size());
  }
  writer.Key("name");
  StringOrNull(writer, m.name);
  writer.Key("tool_calls");
  if (m.tool_calls.has_value()) {
    CTXKIT_RETURN_IF_ERROR(WriteJsonValue(writer, *m.tool_calls, "tool_calls"));
  } else {
    writer.Null();
  }
  writer.Key("tool_call_id");
  StringOrNull(writer, m.tool_call_id);
  writer.Key("tokens")
      .Uint(m.tokens)
      .Key("is_compressed")
      .Bool(m.is_compressed)
      .Key("created_at")
      .Int(m.created_at)
      .EndObject();
  return writer.status();
}

}  // namespace internal

using internal::BeginRecordDocument;
using internal::EndRecordDocument;
using internal::JsonWriter;
using internal::ToPublic;
using internal::WriteConversationJson;
using internal::WriteMessageJson;

StatusOr<std::string> ConversationToJson(const Conversation& conversation) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("conversation");
  if (auto s = WriteConversationJson(writer, conversation); !s.ok()) {
    return ToPublic(s);
  }
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> ConversationDetailToJson(const ConversationDetail& detail,
                                               bool include_messages) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("conversation");
  if (auto s = WriteConversationJson(writer, detail.conversation); !s.ok()) {
    return ToPublic(s);
  }
  if (include_messages) {
    writer.Key("messages").BeginArray();
    for (const Message& m : detail.messages) {
      if (auto s = WriteMessageJson(writer, m, true); !s.ok()) {
        return ToPublic(s);
      }
    }
    writer.EndArray();
  }
  writer.Key("actual_tokens")
      .Uint(detail.actual_tokens)
      .Key("actual_tokens_exact")
      .Bool(detail.actual_tokens_exact);
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> ConversationPageToJson(const ConversationPage& page) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("conversations").BeginArray();
  for (const Conversation& c : page.conversations) {
    if (auto s = WriteConversationJson(writer, c); !s.ok()) return ToPublic(s);
  }
  writer.EndArray()
      .Key("total")
      .Uint(page.total)
      .Key("showing")
      .Uint(page.conversations.size())
      .Key("next_cursor");
  if (page.next_cursor.empty()) {
    writer.Null();
  } else {
    writer.String(page.next_cursor);
  }
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> AddMessageResultToJson(const AddMessageResult& result) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("message");
  if (auto s = WriteMessageJson(writer, result.message, false); !s.ok()) {
    return ToPublic(s);
  }
  writer.Key("conversation");
  if (auto s = WriteConversationJson(writer, result.conversation); !s.ok()) {
    return ToPublic(s);
  }
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> AddMessagesResultToJson(const AddMessagesResult& result) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("messages").BeginArray();
  for (const Message& m : result.messages) {
    if (auto s = WriteMessageJson(writer, m, false); !s.ok()) {
      return ToPublic(s);
    }
  }
  writer.EndArray().Key("conversation");
  if (auto s = WriteConversationJson(writer, result.conversation); !s.ok()) {
    return ToPublic(s);
  }
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> DeletedConversationToJson(
    const DeletedConversation& deleted) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("deleted").Bool(true).Key("conversation");
  if (auto s = WriteConversationJson(writer, deleted.conversation); !s.ok()) {
    return ToPublic(s);
  }
  writer.Key("messages_deleted")
      .Uint(deleted.messages_deleted)
      .Key("dependent_records_deleted")
      .Uint(deleted.dependent_records_deleted);
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> AggregateStatsToJson(const AggregateStats& stats,
                                           const CacheStats* cache) {
  // Ordered, so that models only the cache has seen come out sorted.
  std::map<std::string, uint64_t> cached_by_model;
  if (cache != nullptr) {
    for (const CacheModelStats& m : cache->by_model) {
      cached_by_model[m.model] = m.lifetime_tokens_saved;
    }
  }
  JsonWriter writer = BeginRecordDocument();
  writer.Key("overview")
      .BeginObject()
      .Key("total_conversations")
      .Uint(stats.conversations)
      .Key("total_messages")
      .Uint(stats.messages)
      .Key("total_input_tokens")
      .Uint(stats.input_tokens)
      .Key("total_output_tokens")
      .Uint(stats.output_tokens)
      .Key("total_cached_tokens");
  if (cache != nullptr) {
    writer.Uint(cache->lifetime_tokens_saved);
  } else {
    writer.Null();
  }
  writer.Key("total_tokens")
      .Uint(stats.total_tokens)
      .Key("total_user_tokens")
      .Uint(stats.user_tokens)
      .Key("total_assistant_tokens")
      .Uint(stats.assistant_tokens)
      .Key("total_system_tokens")
      .Uint(stats.system_tokens)
      .Key("total_tool_tokens")
      .Uint(stats.tool_tokens)
      .Key("compressed_messages")
      .Uint(stats.compressed_messages)
      .Key("compressed_tokens")
      .Uint(stats.compressed_tokens)
      .EndObject();
  writer.Key("by_model").BeginObject();
  const auto write_model = [&](const std::string& model,
                               const ModelUsage* usage) {
    writer.Key(model)
        .BeginObject()
        .Key("conversations")
        .Uint(usage ? usage->conversations : 0)
        .Key("messages")
        .Uint(usage ? usage->messages : 0)
        .Key("input_tokens")
        .Uint(usage ? usage->input_tokens : 0)
        .Key("output_tokens")
        .Uint(usage ? usage->output_tokens : 0)
        .Key("cached_tokens");
    if (cache == nullptr) {
      writer.Null();
    } else {
      const auto it = cached_by_model.find(model);
      writer.Uint(it == cached_by_model.end() ? 0 : it->second);
      if (it != cached_by_model.end()) cached_by_model.erase(it);
    }
    writer.EndObject();
  };
  for (const ModelUsage& m : stats.by_model) write_model(m.model, &m);
  // Models only the cache has seen: their cached tokens still count.
  while (!cached_by_model.empty()) {
    write_model(std::string(cached_by_model.begin()->first), nullptr);
  }
  writer.EndObject();
  writer.Key("cache_efficiency");
  if (cache != nullptr) {
    writer.BeginObject()
        .Key("cache_hit_rate")
        .Double(cache->hit_rate)
        .Key("tokens_saved")
        .Uint(cache->lifetime_tokens_saved)
        .EndObject();
  } else {
    writer.Null();
  }
  writer.Key("trends")
      .BeginObject()
      .Key("daily_average")
      .Double(stats.daily_average)
      .Key("weekly_average")
      .Double(stats.weekly_average)
      .Key("peak_day")
      .String(stats.peak_day)
      .Key("peak_tokens")
      .Uint(stats.peak_tokens)
      .EndObject();
  writer.Key("days").BeginArray();
  for (const DailyUsage& d : stats.days) {
    writer.BeginObject()
        .Key("date")
        .String(d.date)
        .Key("day")
        .Int(d.day)
        .Key("messages")
        .Uint(d.messages)
        .Key("input_tokens")
        .Uint(d.input_tokens)
        .Key("output_tokens")
        .Uint(d.output_tokens)
        .Key("tokens")
        .Uint(d.tokens())
        .EndObject();
  }
  writer.EndArray();
  internal::WriteTips(writer, GeneralTips(stats, internal::UsedHitRate(cache)));
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> ConversationStatsToJson(const ConversationStats& stats) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("conversation_id")
      .String(stats.conversation.id)
      .Key("title")
      .String(stats.conversation.title)
      .Key("model")
      .String(stats.conversation.model)
      .Key("statistics")
      .BeginObject()
      .Key("total_tokens")
      .Uint(stats.total_tokens)
      .Key("input_tokens")
      .Uint(stats.input_tokens)
      .Key("output_tokens")
      .Uint(stats.output_tokens)
      .Key("message_count")
      .Uint(stats.message_count)
      .Key("avg_tokens_per_message")
      .Double(stats.avg_tokens_per_message)
      .Key("total_user_tokens")
      .Uint(stats.user_tokens)
      .Key("total_assistant_tokens")
      .Uint(stats.assistant_tokens)
      .Key("compression_ratio")
      .Double(stats.compression_ratio)
      .EndObject();
  writer.Key("timeline").BeginArray();
  for (const TimelinePoint& p : stats.timeline) {
    writer.BeginObject()
        .Key("timestamp")
        .Int(p.timestamp)
        .Key("cumulative_tokens")
        .Uint(p.cumulative_tokens)
        .Key("message_tokens")
        .Uint(p.message_tokens)
        .EndObject();
  }
  writer.EndArray();
  internal::WriteTokenLimit(writer, stats.token_limit);
  internal::WriteTips(writer, ConversationTips(stats));
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> GeneralTipsToJson(const AggregateStats& stats,
                                        std::optional<double> cache_hit_rate) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("overview")
      .BeginObject()
      .Key("total_conversations")
      .Uint(stats.conversations)
      .Key("total_messages")
      .Uint(stats.messages)
      .Key("total_tokens")
      .Uint(stats.total_tokens)
      .Key("cache_hit_rate");
  if (cache_hit_rate.has_value()) {
    writer.Double(*cache_hit_rate);
  } else {
    writer.Null();
  }
  writer.EndObject();
  internal::WriteTips(writer, GeneralTips(stats, cache_hit_rate));
  return EndRecordDocument(std::move(writer));
}

StatusOr<std::string> ConversationTipsToJson(const ConversationStats& stats) {
  JsonWriter writer = BeginRecordDocument();
  writer.Key("conversation")
      .BeginObject()
      .Key("id")
      .String(stats.conversation.id)
      .Key("title")
      .String(stats.conversation.title)
      .Key("model")
      .String(stats.conversation.model)
      .Key("current_tokens")
      .Uint(stats.total_tokens)
      .Key("message_count")
      .Uint(stats.message_count)
      .EndObject();
  internal::WriteTips(writer, ConversationTips(stats));
  internal::WriteTokenLimit(writer, stats.token_limit);
  return EndRecordDocument(std::move(writer));
}

namespace internal {

absl::StatusOr<std::vector<NewMessage>> ParseNewMessagesJson(
    std::string_view json) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      ParseJson(parser, json, "messages");
  if (!root.ok()) return root.status();
  absl::StatusOr<simdjson::dom::array> array = AsArray(*root, "messages");
  if (!array.ok()) return array.status();
  std::vector<NewMessage> out;
  size_t i = 0;
  for (simdjson::dom::element element : *array) {
    const std::string path = JsonIndexPath("messages", i++);
    absl::StatusOr<simdjson::dom::object> obj = AsObject(element, path);
    if (!obj.ok()) return obj.status();
    // A misspelled optional member ("tool_call", "is_compresed") would
    // otherwise be dropped without a word.
    static constexpr std::string_view kMembers[] = {
        "role",       "content",      "name",
        "tool_calls", "tool_call_id", "is_compressed"};
    for (const auto field : *obj) {
      if (std::find(std::begin(kMembers), std::end(kMembers), field.key) ==
          std::end(kMembers)) {
        return UnknownKeyError(path, field.key, kMembers);
      }
    }
    NewMessage m;
    absl::StatusOr<std::string_view> role = GetString(*obj, "role", path);
    if (!role.ok()) return role.status();
    StatusOr<MessageRole> parsed = ParseMessageRole(*role);
    if (!parsed.ok()) {
      // The library's message begins with the field name ("role ..."):
      // prefix the element's path so it names "messages[i].role".
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.%s", path, std::string_view(parsed.status().message())));
    }
    m.role = *parsed;
    absl::StatusOr<std::string_view> content = GetString(*obj, "content", path);
    if (!content.ok()) return content.status();
    m.content = std::string(*content);
    absl::StatusOr<std::optional<std::string_view>> name =
        GetOptionalString(*obj, "name", path);
    if (!name.ok()) return name.status();
    if (*name) m.name = std::string(**name);
    absl::StatusOr<std::optional<simdjson::dom::array>> calls =
        GetOptionalArray(*obj, "tool_calls", path);
    if (!calls.ok()) return calls.status();
    if (*calls) m.tool_calls = simdjson::minify(**calls);
    absl::StatusOr<std::optional<std::string_view>> call_id =
        GetOptionalString(*obj, "tool_call_id", path);
    if (!call_id.ok()) return call_id.status();
    if (*call_id) m.tool_call_id = std::string(**call_id);
    absl::StatusOr<std::optional<bool>> compressed =
        GetOptionalBool(*obj, "is_compressed", path);
    if (!compressed.ok()) return compressed.status();
    m.is_compressed = compressed->value_or(false);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace internal
}  // namespace ctxkit
