#include "programs/ctxkit/tools/record_json.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ctxkit::program {

void WriteConversationJson(JsonOut& json, const Conversation& c) {
  json.BeginObject()
      .Key("id").String(c.id)
      .Key("title").String(c.title)
      .Key("model").String(c.model)
      .Key("created_at").Int(c.created_at)
      .Key("updated_at").Int(c.updated_at)
      .Key("total_tokens").Uint(c.total_tokens)
      .Key("message_count").Uint(c.message_count)
      .Key("input_tokens").Uint(c.input_tokens())
      .Key("output_tokens").Uint(c.output_tokens())
      .Key("user_tokens").Uint(c.user_tokens)
      .Key("assistant_tokens").Uint(c.assistant_tokens)
      .Key("system_tokens").Uint(c.system_tokens)
      .Key("tool_tokens").Uint(c.tool_tokens)
      .Key("compressed_count").Uint(c.compressed_count)
      .Key("compressed_tokens").Uint(c.compressed_tokens);
  if (!c.last_message.empty() || c.last_message_at != 0) {
    json.Key("last_message").String(c.last_message);
    json.Key("last_message_at").Int(c.last_message_at);
  }
  // Validated as a JSON object when it was stored.
  json.Key("metadata").Raw(c.metadata.empty() ? "{}" : c.metadata);
  json.EndObject();
}

void WriteMessageJson(JsonOut& json, const Message& m, bool with_content) {
  json.BeginObject()
      .Key("id").String(m.id)
      .Key("conversation_id").String(m.conversation_id)
      .Key("seq").Uint(m.seq)
      .Key("role").String(MessageRoleName(m.role));
  if (with_content) json.Key("content").String(m.content);
  if (m.name.has_value()) json.Key("name").String(*m.name);
  if (m.tool_calls.has_value()) json.Key("tool_calls").Raw(*m.tool_calls);
  if (m.tool_call_id.has_value()) json.Key("tool_call_id").String(*m.tool_call_id);
  json.Key("tokens").Uint(m.tokens)
      .Key("is_compressed").Bool(m.is_compressed)
      .Key("created_at").Int(m.created_at)
      .EndObject();
}

void WriteConversationDetailMembers(JsonOut& json,
                                    const ConversationDetail& detail,
                                    bool with_messages) {
  json.Key("conversation");
  WriteConversationJson(json, detail.conversation);
  if (with_messages) {
    json.Key("messages").BeginArray();
    for (const Message& message : detail.messages) {
      WriteMessageJson(json, message);
    }
    json.EndArray();
  }
  json.Key("actual_tokens").Uint(detail.actual_tokens)
      .Key("actual_tokens_exact").Bool(detail.actual_tokens_exact);
}

void WriteConversationPageMembers(JsonOut& json, const ConversationPage& page) {
  json.Key("conversations").BeginArray();
  for (const Conversation& conversation : page.conversations) {
    WriteConversationJson(json, conversation);
  }
  json.EndArray()
      .Key("total").Uint(page.total)
      .Key("showing").Uint(page.conversations.size())
      .Key("next_cursor");
  if (page.next_cursor.empty()) {
    json.Null();
  } else {
    json.String(page.next_cursor);
  }
}

void WriteDeletedConversationMembers(JsonOut& json,
                                     const DeletedConversation& deleted) {
  json.Key("deleted").Bool(true)
      .Key("conversation_id").String(deleted.conversation.id)
      .Key("title").String(deleted.conversation.title)
      .Key("messages_deleted").Uint(deleted.messages_deleted)
      .Key("dependent_records_deleted").Uint(deleted.dependent_records_deleted);
}

Status WriteReferenceListMembers(JsonOut& json, const ReferenceList& list,
                                 bool with_content) {
  json.Key("references").BeginArray();
  for (const Reference& reference : list.references) {
    auto one = ReferenceToJson(reference, with_content);
    if (!one.ok()) return one.status();
    json.Raw(*one);
  }
  json.EndArray();
  auto stats = ReferenceStatsToJson(list.stats);
  if (!stats.ok()) return stats.status();
  json.Key("stats").Raw(*stats);
  return Status::Ok();
}

StatusOr<std::string> ReferenceSearchJson(
    const ReferenceSearchResults& results) {
  auto document = ReferenceSearchResultsToJson(results);
  if (!document.ok()) return document.status();
  // The library's document says how many were returned; how many matched
  // in all tells whether a larger limit would show more.
  return AppendMembers(MinifyJson(*document),
                       "\"total_matches\":" +
                           std::to_string(results.total_matches));
}

void WriteCacheExpiry(JsonOut& json, int64_t expires_at) {
  json.Key("expires_at");
  if (expires_at == 0) {
    json.Null();
  } else {
    json.Int(expires_at);
  }
}

void WriteCachePutMembers(JsonOut& json, const CachePutResult& put,
                          std::string_view prefix) {
  json.Key("key").String(put.key)
      .Key("prefix").String(prefix)
      .Key("tokens").Uint(put.tokens)
      .Key("created_at").Int(put.created_at);
  WriteCacheExpiry(json, put.expires_at);
  json.Key("already_cached").Bool(put.already_cached);
}

void WriteCacheEntryMembers(JsonOut& json, const CacheEntry& entry) {
  json.Key("key").String(entry.key)
      .Key("content").String(entry.content)
      .Key("tokens").Uint(entry.tokens)
      .Key("hit_count").Uint(entry.hit_count)
      .Key("created_at").Int(entry.created_at)
      .Key("last_accessed").Int(entry.last_accessed);
  WriteCacheExpiry(json, entry.expires_at);
  json.Key("model").String(entry.model);
  if (!entry.conversation_id.empty()) {
    json.Key("conversation_id").String(entry.conversation_id);
  }
}

void WriteCacheCheckMembers(JsonOut& json, const CacheCheckResult& check) {
  json.Key("exists").Bool(check.exists).Key("key");
  if (check.exists) {
    json.String(check.key);
  } else {
    json.Null();
  }
  json.Key("tokens_saved").Uint(check.tokens_saved);
}

void WriteCacheClearMembers(JsonOut& json, uint64_t cleared,
                            std::optional<std::string_view> prefix) {
  json.Key("cleared").Uint(cleared).Key("prefix");
  if (prefix.has_value()) {
    json.String(*prefix);
  } else {
    json.Null();
  }
}

std::string WithSuccess(std::string_view object_json) {
  const std::string minified = MinifyJson(object_json);
  // A JSON object's text starts with '{'; "{}" gets no comma.
  std::string out = "{\"success\":true";
  if (minified.size() > 2) out += ',';
  out.append(minified, 1);
  return out;
}

std::string AppendMembers(std::string_view object_json,
                          std::string_view members) {
  std::string out(object_json);
  if (members.empty() || out.empty()) return out;
  out.pop_back();  // '}'
  if (out.size() > 1) out += ',';
  out += members;
  out += '}';
  return out;
}

}  // namespace ctxkit::program
