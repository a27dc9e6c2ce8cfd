// The C API's conversations section (c.h, "Conversations"): translation to
// ctxkit::ConversationStore and its public JSON writers.

#include "ctxkit/conversations.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "capi/c_internal.h"
#include "capi/request_json.h"
#include "ctxkit/c.h"
#include "ctxkit/cache.h"
#include "ctxkit/status.h"
#include "lib/base/field_check.h"
#include "lib/conversations/conversation_json.h"

// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

extern "C" {

int ctxkit_conversations_open(ctxkit_store* store, ctxkit_conversations** out,
                              char** out_error) {
  if (int rc = StartOpen(store, out, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    auto opened = ctxkit::ConversationStore::Open(*store->store);
    if (!opened.ok()) return Report(opened.status(), out_error);
    *out = new ctxkit_conversations{
        KeepingStore(std::move(*opened), store->store)};
    return Ok(out_error);
  });
}

void ctxkit_conversations_close(ctxkit_conversations* convs) { delete convs; }

int ctxkit_conversations_create(ctxkit_conversations* convs, const char* title,
                                size_t title_len, const char* model,
                                size_t model_len, const char* metadata_json,
                                size_t metadata_json_len, char** out_json,
                                size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"title", title, title_len},
                          {"model", model, model_len},
                          {"metadata_json", metadata_json, metadata_json_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::NewConversation in;
    in.title = std::string(View(title, title_len));
    if (model != nullptr) in.model = std::string(model, model_len);
    if (metadata_json != nullptr) {
      in.metadata = std::string(metadata_json, metadata_json_len);
    }
    auto created = convs->conversations->Create(in);
    if (!created.ok()) return Report(created.status(), out_error);
    return ReturnResult(ctxkit::ConversationToJson(*created), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_conversations_add_message(
    ctxkit_conversations* convs, const char* conversation_id,
    size_t conversation_id_len, const char* role, size_t role_len,
    const char* content, size_t content_len, const char* name, size_t name_len,
    const char* tool_calls_json, size_t tool_calls_json_len,
    const char* tool_call_id, size_t tool_call_id_len, int is_compressed,
    char** out_json, size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"conversation_id", conversation_id, conversation_id_len},
                     {"role", role, role_len},
                     {"content", content, content_len},
                     {"name", name, name_len},
                     {"tool_calls_json", tool_calls_json, tool_calls_json_len},
                     {"tool_call_id", tool_call_id, tool_call_id_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto parsed_role = ctxkit::ParseMessageRole(View(role, role_len));
    if (!parsed_role.ok()) return Report(parsed_role.status(), out_error);
    ctxkit::NewMessage message;
    message.role = *parsed_role;
    message.content = std::string(View(content, content_len));
    if (name != nullptr) message.name = std::string(name, name_len);
    if (tool_calls_json != nullptr) {
      message.tool_calls = std::string(tool_calls_json, tool_calls_json_len);
    }
    if (tool_call_id != nullptr) {
      message.tool_call_id = std::string(tool_call_id, tool_call_id_len);
    }
    message.is_compressed = is_compressed != 0;
    auto added = convs->conversations->AddMessage(
        View(conversation_id, conversation_id_len), message);
    if (!added.ok()) return Report(added.status(), out_error);
    return ReturnResult(ctxkit::AddMessageResultToJson(*added), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_conversations_add_messages(ctxkit_conversations* convs,
                                      const char* conversation_id,
                                      size_t conversation_id_len,
                                      const char* messages_json,
                                      size_t messages_json_len, char** out_json,
                                      size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"conversation_id", conversation_id, conversation_id_len},
                     {"messages_json", messages_json, messages_json_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto messages = ctxkit::internal::ParseNewMessagesJson(
        View(messages_json, messages_json_len));
    if (!messages.ok()) return Report(messages.status(), out_error);
    auto added = convs->conversations->AddMessages(
        View(conversation_id, conversation_id_len), *messages);
    if (!added.ok()) return Report(added.status(), out_error);
    return ReturnResult(ctxkit::AddMessagesResultToJson(*added), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_conversations_get(ctxkit_conversations* convs, const char* id,
                             size_t id_len, int include_messages,
                             char** out_json, size_t* out_json_len,
                             char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len}}, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    auto detail =
        convs->conversations->Get(View(id, id_len), include_messages != 0);
    if (!detail.ok()) return Report(detail.status(), out_error);
    return ReturnResult(
        ctxkit::ConversationDetailToJson(*detail, include_messages != 0),
        out_json, out_json_len, out_error);
  });
}

int ctxkit_conversations_list(ctxkit_conversations* convs, int64_t limit,
                              const char* cursor, size_t cursor_len,
                              char** out_json, size_t* out_json_len,
                              char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"cursor", cursor, cursor_len}}, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    // The C type is wider than the C++ one: reject what would not convert.
    if (auto s = ctxkit::internal::CheckRange(
            "limit", limit, 1, ctxkit::ConversationLimits::kMaxListLimit);
        !s.ok()) {
      return Report(s, out_error);
    }
    auto page = convs->conversations->List(static_cast<uint32_t>(limit),
                                           View(cursor, cursor_len));
    if (!page.ok()) return Report(page.status(), out_error);
    return ReturnResult(ctxkit::ConversationPageToJson(*page), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_conversations_update(ctxkit_conversations* convs, const char* id,
                                size_t id_len, const char* title,
                                size_t title_len, const char* metadata_json,
                                size_t metadata_json_len, char** out_json,
                                size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len},
                          {"title", title, title_len},
                          {"metadata_json", metadata_json, metadata_json_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::ConversationUpdate update;
    if (title != nullptr) update.title = std::string(title, title_len);
    if (metadata_json != nullptr) {
      update.metadata = std::string(metadata_json, metadata_json_len);
    }
    auto updated = convs->conversations->Update(View(id, id_len), update);
    if (!updated.ok()) return Report(updated.status(), out_error);
    return ReturnResult(ctxkit::ConversationToJson(*updated), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_conversations_delete(ctxkit_conversations* convs, const char* id,
                                size_t id_len, char** out_json,
                                size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len}}, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    auto deleted = convs->conversations->Delete(View(id, id_len));
    if (!deleted.ok()) return Report(deleted.status(), out_error);
    return ReturnResult(ctxkit::DeletedConversationToJson(*deleted), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_conversations_stats(ctxkit_conversations* convs, ctxkit_cache* cache,
                               char** out_json, size_t* out_json_len,
                               char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto stats = convs->conversations->AggregateStats();
    if (!stats.ok()) return Report(stats.status(), out_error);
    std::optional<ctxkit::CacheStats> cache_stats;
    if (cache != nullptr) {
      auto s = cache->cache->Stats();
      if (!s.ok()) return Report(s.status(), out_error);
      cache_stats = *std::move(s);
    }
    return ReturnResult(ctxkit::AggregateStatsToJson(
                            *stats, cache_stats ? &*cache_stats : nullptr),
                        out_json, out_json_len, out_error);
  });
}

int ctxkit_conversations_get_stats(ctxkit_conversations* convs, const char* id,
                                   size_t id_len, size_t max_timeline_points,
                                   char** out_json, size_t* out_json_len,
                                   char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len}}, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    auto stats = convs->conversations->ConversationStats(View(id, id_len),
                                                         max_timeline_points);
    if (!stats.ok()) return Report(stats.status(), out_error);
    return ReturnResult(ctxkit::ConversationStatsToJson(*stats), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_conversations_tips(ctxkit_conversations* convs, const char* id,
                              size_t id_len, const double* cache_hit_rate,
                              char** out_json, size_t* out_json_len,
                              char** out_error) {
  if (int rc = StartDoc(convs, "convs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len}}, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    if (id != nullptr) {
      auto stats = convs->conversations->ConversationStats(View(id, id_len));
      if (!stats.ok()) return Report(stats.status(), out_error);
      return ReturnResult(ctxkit::ConversationTipsToJson(*stats), out_json,
                          out_json_len, out_error);
    }
    std::optional<double> rate;
    if (cache_hit_rate != nullptr) {
      if (!std::isfinite(*cache_hit_rate) || *cache_hit_rate < 0 ||
          *cache_hit_rate > 100) {
        return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                    "cache_hit_rate must be a percentage between 0 and 100");
      }
      rate = *cache_hit_rate;
    }
    auto stats = convs->conversations->AggregateStats();
    if (!stats.ok()) return Report(stats.status(), out_error);
    return ReturnResult(ctxkit::GeneralTipsToJson(*stats, rate), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_conversations_create_request(ctxkit_conversations* convs,
                                        const char* request_json,
                                        size_t request_json_len,
                                        char** out_json, size_t* out_json_len,
                                        char** out_error) {
  static constexpr std::string_view kMembers[] = {"title", "model", "metadata"};
  return RunRequest(
      convs, "convs", request_json, request_json_len, kMembers, out_json,
      out_json_len, out_error, [&](Request& request) {
        const StringArg title = request.String("title", /*required=*/true);
        const StringArg model = request.String("model");
        const StringArg metadata = request.Json("metadata", /*array=*/false);
        if (!request.status().ok()) return Report(request.status(), out_error);
        return ctxkit_conversations_create(
            convs, title.data, title.len, model.data, model.len, metadata.data,
            metadata.len, out_json, out_json_len, out_error);
      });
}

int ctxkit_conversations_add_message_request(ctxkit_conversations* convs,
                                             const char* request_json,
                                             size_t request_json_len,
                                             char** out_json,
                                             size_t* out_json_len,
                                             char** out_error) {
  static constexpr std::string_view kMembers[] = {
      "conversation_id", "role",         "content",      "name",
      "tool_calls",      "tool_call_id", "is_compressed"};
  return RunRequest(
      convs, "convs", request_json, request_json_len, kMembers, out_json,
      out_json_len, out_error, [&](Request& request) {
        const StringArg id = request.String("conversation_id", true);
        const StringArg role = request.String("role", true);
        const StringArg content = request.String("content", true);
        const StringArg name = request.String("name");
        const StringArg calls = request.Json("tool_calls", /*array=*/true);
        const StringArg call_id = request.String("tool_call_id");
        const bool compressed = request.Bool("is_compressed").value_or(false);
        if (!request.status().ok()) return Report(request.status(), out_error);
        return ctxkit_conversations_add_message(
            convs, id.data, id.len, role.data, role.len, content.data,
            content.len, name.data, name.len, calls.data, calls.len,
            call_id.data, call_id.len, compressed ? 1 : 0, out_json,
            out_json_len, out_error);
      });
}

int ctxkit_conversations_update_request(ctxkit_conversations* convs,
                                        const char* request_json,
                                        size_t request_json_len,
                                        char** out_json, size_t* out_json_len,
                                        char** out_error) {
  static constexpr std::string_view kMembers[] = {"id", "title", "metadata"};
  return RunRequest(
      convs, "convs", request_json, request_json_len, kMembers, out_json,
      out_json_len, out_error, [&](Request& request) {
        const StringArg id = request.String("id", /*required=*/true);
        const StringArg title = request.String("title");
        const StringArg metadata = request.Json("metadata", /*array=*/false);
        if (!request.status().ok()) return Report(request.status(), out_error);
        return ctxkit_conversations_update(
            convs, id.data, id.len, title.data, title.len, metadata.data,
            metadata.len, out_json, out_json_len, out_error);
      });
}

}  // extern "C"
