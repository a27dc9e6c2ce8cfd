// The C API of the record parts (conversations, references, cache, query
// optimizer, analytics): translation between C conventions (int status,
// out_error, pointer + length, malloc'd JSON documents) and the C++ API, as
// capi/c.cc does for the store and tokenizers. No logic lives here.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capi/c_internal.h"
#include "ctxkit/analytics.h"
#include "ctxkit/c.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/query_optimizer.h"
#include "ctxkit/references.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"
#include "lib/base/field_check.h"
#include "lib/conversations/conversation_json.h"
#include "lib/status/status_internal.h"

struct ctxkit_references {
  std::unique_ptr<ctxkit::ReferenceStore> references;
};

namespace {

using ctxkit::capi::CopyOut;
using ctxkit::capi::Fail;
using ctxkit::capi::Guard;
using ctxkit::capi::Report;
using ctxkit::capi::View;

using ctxkit::Status;
using ctxkit::StatusCode;
using ctxkit::internal::ToPublic;

int Report(const absl::Status& status, char** out_error) {
  return Report(ToPublic(status), out_error);
}

int Ok(char** out_error) { return Report(Status(), out_error); }

// Stores a successful result's value in `*out` (when not NULL) and returns
// CTXKIT_OK; otherwise the error.
template <typename T, typename Out>
int ReturnValue(ctxkit::StatusOr<T> result, Out* out, char** out_error) {
  if (!result.ok()) return Report(result.status(), out_error);
  if (out != nullptr) *out = *result;
  return Ok(out_error);
}

// One string argument: its C name (for messages) and pointer + length.
struct Arg {
  const char* name;
  const char* data;
  size_t len;
};

// INVALID_ARGUMENT (returned) when any argument is NULL with a non-zero
// length; else -1, meaning "go on".
int CheckArgs(std::initializer_list<Arg> args, char** out_error) {
  for (const Arg& arg : args) {
    if (arg.data == nullptr && arg.len != 0) {
      return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                  std::string(arg.name) + " is NULL with a non-zero length");
    }
  }
  return -1;
}

// An optional input: NULL means absent.
std::optional<std::string_view> Optional(const char* data, size_t len) {
  if (data == nullptr) return std::nullopt;
  return std::string_view(data, len);
}

// Clears the outputs of a document-returning call and checks the handle and
// out pointers; -1 means "go on".
int StartDoc(const void* handle, const char* handle_name, char** out_json,
             size_t* out_json_len, char** out_error) {
  if (out_json != nullptr) *out_json = nullptr;
  if (out_json_len != nullptr) *out_json_len = 0;
  if (handle == nullptr || out_json == nullptr || out_json_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                std::string(handle_name) +
                    ", out_json and out_json_len must not be NULL");
  }
  return -1;
}

// Hands a finished document to the caller.
int ReturnDoc(std::string_view doc, char** out_json, size_t* out_json_len,
              char** out_error) {
  char* out = CopyOut(doc);
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_RESOURCE_EXHAUSTED, "out of memory");
  }
  *out_json = out;
  *out_json_len = doc.size();
  return Ok(out_error);
}

template <typename StatusOrString>
int ReturnResult(const StatusOrString& doc, char** out_json,
                 size_t* out_json_len, char** out_error) {
  if (!doc.ok()) return Report(doc.status(), out_error);
  return ReturnDoc(std::string_view(*doc), out_json, out_json_len, out_error);
}

}  // namespace

// ---------------------------------------------------------------------------
// Conversations

extern "C" {

int ctxkit_conversations_open(ctxkit_store* store, ctxkit_conversations** out,
                              char** out_error) {
  if (out == nullptr || store == nullptr) {
    if (out != nullptr) *out = nullptr;
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "store and out must not be NULL");
  }
  *out = nullptr;
  return Guard(out_error, [&] {
    auto opened = ctxkit::ConversationStore::Open(*store->store);
    if (!opened.ok()) return Report(opened.status(), out_error);
    *out = new ctxkit_conversations{std::move(*opened)};
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

int ctxkit_conversations_conversation_stats(ctxkit_conversations* convs,
                                            const char* id, size_t id_len,
                                            size_t max_timeline_points,
                                            char** out_json,
                                            size_t* out_json_len,
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
                              size_t id_len, int has_cache_hit_rate,
                              double cache_hit_rate, char** out_json,
                              size_t* out_json_len, char** out_error) {
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
    if (has_cache_hit_rate != 0) {
      if (!std::isfinite(cache_hit_rate) || cache_hit_rate < 0 ||
          cache_hit_rate > 100) {
        return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                    "cache_hit_rate must be a percentage between 0 and 100");
      }
      rate = cache_hit_rate;
    }
    auto stats = convs->conversations->AggregateStats();
    if (!stats.ok()) return Report(stats.status(), out_error);
    return ReturnResult(ctxkit::GeneralTipsToJson(*stats, rate), out_json,
                        out_json_len, out_error);
  });
}

// ---------------------------------------------------------------------------
// References

int ctxkit_references_open(ctxkit_store* store, const char* model,
                           size_t model_len, ctxkit_references** out,
                           char** out_error) {
  if (out == nullptr || store == nullptr) {
    if (out != nullptr) *out = nullptr;
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "store and out must not be NULL");
  }
  *out = nullptr;
  if (int rc = CheckArgs({{"model", model, model_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::ReferenceStoreOptions options;
    if (model != nullptr) options.model = std::string(model, model_len);
    auto opened = ctxkit::ReferenceStore::Open(*store->store, options);
    if (!opened.ok()) return Report(opened.status(), out_error);
    *out = new ctxkit_references{std::move(*opened)};
    return Ok(out_error);
  });
}

void ctxkit_references_close(ctxkit_references* refs) { delete refs; }

int ctxkit_references_add(ctxkit_references* refs, const char* conversation_id,
                          size_t conversation_id_len, const char* type,
                          size_t type_len, const char* title, size_t title_len,
                          const char* content, size_t content_len,
                          const char* metadata_json, size_t metadata_json_len,
                          char** out_json, size_t* out_json_len,
                          char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"conversation_id", conversation_id, conversation_id_len},
                     {"type", type, type_len},
                     {"title", title, title_len},
                     {"content", content, content_len},
                     {"metadata_json", metadata_json, metadata_json_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::NewReference in;
    in.conversation_id =
        std::string(View(conversation_id, conversation_id_len));
    in.type = std::string(View(type, type_len));
    in.title = std::string(View(title, title_len));
    in.content = std::string(View(content, content_len));
    // NewReference reads an empty metadata as "{}" (absent); in C absent is
    // NULL, and an empty string is not a JSON object.
    if (metadata_json != nullptr && metadata_json_len == 0) {
      return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                  "metadata must be a JSON object (got an empty string)");
    }
    in.metadata = std::string(View(metadata_json, metadata_json_len));
    auto added = refs->references->Add(in);
    if (!added.ok()) return Report(added.status(), out_error);
    return ReturnResult(
        ctxkit::ReferenceToJson(*added, /*include_content=*/false), out_json,
        out_json_len, out_error);
  });
}

int ctxkit_references_get(ctxkit_references* refs, const char* id,
                          size_t id_len, char** out_json, size_t* out_json_len,
                          char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len}}, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    auto reference = refs->references->Get(View(id, id_len));
    if (!reference.ok()) return Report(reference.status(), out_error);
    return ReturnResult(
        ctxkit::ReferenceToJson(*reference, /*include_content=*/true), out_json,
        out_json_len, out_error);
  });
}

int ctxkit_references_list(ctxkit_references* refs, const char* conversation_id,
                           size_t conversation_id_len, int include_content,
                           char** out_json, size_t* out_json_len,
                           char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"conversation_id", conversation_id, conversation_id_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::ListReferencesOptions options;
    options.conversation_id =
        std::string(View(conversation_id, conversation_id_len));
    options.include_content = include_content != 0;
    auto list = refs->references->List(options);
    if (!list.ok()) return Report(list.status(), out_error);
    return ReturnResult(
        ctxkit::ReferenceListToJson(*list, options.include_content), out_json,
        out_json_len, out_error);
  });
}

int ctxkit_references_delete(ctxkit_references* refs, const char* id,
                             size_t id_len, char** out_error) {
  if (refs == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "refs is NULL");
  }
  if (int rc = CheckArgs({{"id", id, id_len}}, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    return Report(refs->references->Delete(View(id, id_len)), out_error);
  });
}

int ctxkit_references_search(ctxkit_references* refs, const char* query,
                             size_t query_len, int64_t limit,
                             const char* conversation_id,
                             size_t conversation_id_len, char** out_json,
                             size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"query", query, query_len},
                     {"conversation_id", conversation_id, conversation_id_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    // The C type is wider than the C++ one: reject what would not convert.
    if (auto s = ctxkit::internal::CheckRange(
            "limit", limit, 1, ctxkit::ReferenceLimits::kMaxSearchLimit);
        !s.ok()) {
      return Report(s, out_error);
    }
    ctxkit::SearchReferencesOptions options;
    options.query = std::string(View(query, query_len));
    options.limit = static_cast<uint32_t>(limit);
    options.conversation_id =
        std::string(View(conversation_id, conversation_id_len));
    auto results = refs->references->Search(options);
    if (!results.ok()) return Report(results.status(), out_error);
    return ReturnResult(ctxkit::ReferenceSearchResultsToJson(*results),
                        out_json, out_json_len, out_error);
  });
}

int ctxkit_references_stats(ctxkit_references* refs,
                            const char* conversation_id,
                            size_t conversation_id_len, char** out_json,
                            size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"conversation_id", conversation_id, conversation_id_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto stats =
        refs->references->Stats(View(conversation_id, conversation_id_len));
    if (!stats.ok()) return Report(stats.status(), out_error);
    return ReturnResult(ctxkit::ReferenceStatsToJson(*stats), out_json,
                        out_json_len, out_error);
  });
}

// ---------------------------------------------------------------------------
// Cache

int ctxkit_cache_open(ctxkit_store* store, uint64_t max_entries,
                      uint64_t max_bytes, int64_t flush_interval_ms,
                      ctxkit_cache** out, char** out_error) {
  if (out == nullptr || store == nullptr) {
    if (out != nullptr) *out = nullptr;
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "store and out must not be NULL");
  }
  *out = nullptr;
  return Guard(out_error, [&] {
    ctxkit::CacheOptions options;
    options.max_entries = max_entries;
    options.max_bytes = max_bytes;
    if (flush_interval_ms != 0) options.flush_interval_ms = flush_interval_ms;
    auto opened = ctxkit::Cache::Open(*store->store, options);
    if (!opened.ok()) return Report(opened.status(), out_error);
    *out = new ctxkit_cache{std::move(*opened)};
    return Ok(out_error);
  });
}

// ~Cache flushes (dropping errors) and joins its flusher thread.
void ctxkit_cache_close(ctxkit_cache* cache) { delete cache; }

int ctxkit_cache_put(ctxkit_cache* cache, const char* content,
                     size_t content_len, const char* prefix, size_t prefix_len,
                     int64_t ttl_ms, const char* model, size_t model_len,
                     const char* conversation_id, size_t conversation_id_len,
                     char** out_json, size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(cache, "cache", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"content", content, content_len},
                     {"prefix", prefix, prefix_len},
                     {"model", model, model_len},
                     {"conversation_id", conversation_id, conversation_id_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::CachePutOptions options;
    if (prefix != nullptr) options.prefix = std::string(prefix, prefix_len);
    options.ttl_ms = ttl_ms;
    if (model != nullptr) options.model = std::string(model, model_len);
    options.conversation_id =
        std::string(View(conversation_id, conversation_id_len));
    auto put = cache->cache->Put(View(content, content_len), options);
    if (!put.ok()) return Report(put.status(), out_error);
    return ReturnResult(ctxkit::CachePutResultToJson(*put), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_cache_get(ctxkit_cache* cache, const char* key, size_t key_len,
                     char** out_json, size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(cache, "cache", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"key", key, key_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto entry = cache->cache->Get(View(key, key_len));
    if (!entry.ok()) return Report(entry.status(), out_error);
    return ReturnResult(ctxkit::CacheEntryToJson(*entry), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_cache_check(ctxkit_cache* cache, const char* content,
                       size_t content_len, const char* prefix,
                       size_t prefix_len, char** out_json, size_t* out_json_len,
                       char** out_error) {
  if (int rc = StartDoc(cache, "cache", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs(
          {{"content", content, content_len}, {"prefix", prefix, prefix_len}},
          out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto found = cache->cache->Check(View(content, content_len),
                                     Optional(prefix, prefix_len));
    if (!found.ok()) return Report(found.status(), out_error);
    return ReturnResult(ctxkit::CacheCheckResultToJson(*found), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_cache_clear(ctxkit_cache* cache, const char* prefix,
                       size_t prefix_len, uint64_t* out_cleared,
                       char** out_error) {
  if (out_cleared != nullptr) *out_cleared = 0;
  if (cache == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "cache is NULL");
  }
  if (int rc = CheckArgs({{"prefix", prefix, prefix_len}}, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    return ReturnValue(cache->cache->Clear(Optional(prefix, prefix_len)),
                       out_cleared, out_error);
  });
}

int ctxkit_cache_sweep(ctxkit_cache* cache, uint64_t* out_removed,
                       char** out_error) {
  if (out_removed != nullptr) *out_removed = 0;
  if (cache == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "cache is NULL");
  }
  return Guard(out_error, [&] {
    return ReturnValue(cache->cache->Sweep(), out_removed, out_error);
  });
}

int ctxkit_cache_flush(ctxkit_cache* cache, char** out_error) {
  if (cache == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "cache is NULL");
  }
  return Guard(out_error,
               [&] { return Report(cache->cache->Flush(), out_error); });
}

int ctxkit_cache_stats(ctxkit_cache* cache, int64_t top_n, char** out_json,
                       size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(cache, "cache", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto stats = cache->cache->Stats(top_n);
    if (!stats.ok()) return Report(stats.status(), out_error);
    return ReturnResult(ctxkit::CacheStatsToJson(*stats), out_json,
                        out_json_len, out_error);
  });
}

// ---------------------------------------------------------------------------
// Query optimizer

int ctxkit_optimize_query(const char* query, size_t query_len,
                          const char* model, size_t model_len, const char* goal,
                          size_t goal_len, const char* context,
                          size_t context_len, int64_t max_tokens,
                          char** out_json, size_t* out_json_len,
                          char** out_error) {
  if (out_json != nullptr) *out_json = nullptr;
  if (out_json_len != nullptr) *out_json_len = 0;
  if (out_json == nullptr || out_json_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "out_json and out_json_len must not be NULL");
  }
  if (int rc = CheckArgs({{"query", query, query_len},
                          {"model", model, model_len},
                          {"goal", goal, goal_len},
                          {"context", context, context_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::OptimizeOptions options;
    if (model != nullptr) options.model = std::string(model, model_len);
    if (goal != nullptr) {
      auto parsed =
          ctxkit::ParseOptimizationGoal(std::string_view(goal, goal_len));
      if (!parsed.ok()) return Report(parsed.status(), out_error);
      options.goal = *parsed;
    }
    if (context != nullptr) options.context = std::string(context, context_len);
    if (max_tokens != 0) options.max_tokens = max_tokens;
    auto result = ctxkit::QueryOptimizer::Default().Optimize(
        View(query, query_len), options);
    if (!result.ok()) return Report(result.status(), out_error);
    return ReturnResult(ctxkit::ToJson(*result), out_json, out_json_len,
                        out_error);
  });
}

// ---------------------------------------------------------------------------
// Analytics

int ctxkit_analytics_open(ctxkit_store* store, int64_t retention_days,
                          int64_t flush_interval_ms, ctxkit_analytics** out,
                          char** out_error) {
  if (out == nullptr || store == nullptr) {
    if (out != nullptr) *out = nullptr;
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "store and out must not be NULL");
  }
  *out = nullptr;
  return Guard(out_error, [&] {
    ctxkit::AnalyticsOptions options;
    if (retention_days != 0) options.retention_days = retention_days;
    if (flush_interval_ms != 0) options.flush_interval_ms = flush_interval_ms;
    auto opened = ctxkit::Analytics::Open(*store->store, options);
    if (!opened.ok()) return Report(opened.status(), out_error);
    *out = new ctxkit_analytics{std::move(*opened)};
    return Ok(out_error);
  });
}

// ~Analytics flushes (dropping errors) and joins its flusher thread.
void ctxkit_analytics_close(ctxkit_analytics* analytics) { delete analytics; }

int ctxkit_analytics_record(ctxkit_analytics* analytics, const char* type,
                            size_t type_len, int64_t duration_us, int ok,
                            const int64_t* timestamp_ms, char** out_error) {
  if (analytics == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "analytics is NULL");
  }
  if (int rc = CheckArgs({{"type", type, type_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    std::optional<int64_t> when;
    if (timestamp_ms != nullptr) when = *timestamp_ms;
    return Report(analytics->analytics->Record(View(type, type_len),
                                               duration_us, ok != 0, when),
                  out_error);
  });
}

int ctxkit_analytics_query(ctxkit_analytics* analytics, int64_t from_ms,
                           int64_t to_ms, char** out_json, size_t* out_json_len,
                           char** out_error) {
  if (int rc =
          StartDoc(analytics, "analytics", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto report = analytics->analytics->Query(from_ms, to_ms);
    if (!report.ok()) return Report(report.status(), out_error);
    return ReturnResult(ctxkit::AnalyticsReportToJson(*report), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_analytics_calls(ctxkit_analytics* analytics, int64_t from_ms,
                           int64_t to_ms, int64_t limit, char** out_json,
                           size_t* out_json_len, char** out_error) {
  if (int rc =
          StartDoc(analytics, "analytics", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto calls = analytics->analytics->CallsInRange(from_ms, to_ms, limit);
    if (!calls.ok()) return Report(calls.status(), out_error);
    return ReturnResult(ctxkit::AnalyticsCallsToJson(*calls), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_analytics_call_count(ctxkit_analytics* analytics, const char* type,
                                size_t type_len, uint64_t* out_count,
                                char** out_error) {
  if (out_count != nullptr) *out_count = 0;
  if (analytics == nullptr || out_count == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "analytics and out_count must not be NULL");
  }
  if (int rc = CheckArgs({{"type", type, type_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    return ReturnValue(analytics->analytics->CallCount(View(type, type_len)),
                       out_count, out_error);
  });
}

int ctxkit_analytics_purge(ctxkit_analytics* analytics, uint64_t* out_purged,
                           char** out_error) {
  if (out_purged != nullptr) *out_purged = 0;
  if (analytics == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "analytics is NULL");
  }
  return Guard(out_error, [&] {
    return ReturnValue(analytics->analytics->Purge(), out_purged, out_error);
  });
}

int ctxkit_analytics_flush(ctxkit_analytics* analytics, char** out_error) {
  if (analytics == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "analytics is NULL");
  }
  return Guard(out_error, [&] {
    return Report(analytics->analytics->Flush(), out_error);
  });
}

}  // extern "C"
