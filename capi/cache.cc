// The C API's cache section (c.h, "Cache"): translation to ctxkit::Cache
// and its public JSON writers.

#include "ctxkit/cache.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "capi/c_internal.h"
#include "capi/request_json.h"
#include "ctxkit/c.h"
#include "ctxkit/status.h"

// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

extern "C" {

int ctxkit_cache_open(ctxkit_store* store, uint64_t max_entries,
                      uint64_t max_bytes, const int64_t* flush_interval_ms,
                      ctxkit_cache** out, char** out_error) {
  if (int rc = StartOpen(store, out, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    ctxkit::CacheOptions options;
    options.max_entries = max_entries;
    options.max_bytes = max_bytes;
    if (flush_interval_ms != nullptr) {
      options.flush_interval_ms = *flush_interval_ms;
    }
    auto opened = ctxkit::Cache::Open(*store->store, options);
    if (!opened.ok()) return Report(opened.status(), out_error);
    *out = new ctxkit_cache{KeepingStore(std::move(*opened), store->store)};
    return Ok(out_error);
  });
}

void ctxkit_cache_close(ctxkit_cache* cache) {
  if (cache == nullptr) return;
  // The statistics are written now, as promised, even when a compactor
  // keeps the Cache alive; the last owner's ~Cache flushes again and joins
  // its flusher thread.
  (void)cache->cache->Flush();
  delete cache;
}

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

int ctxkit_cache_put_request(ctxkit_cache* cache, const char* request_json,
                             size_t request_json_len, char** out_json,
                             size_t* out_json_len, char** out_error) {
  static constexpr std::string_view kMembers[] = {"content", "prefix", "ttl_ms",
                                                  "model", "conversation_id"};
  return RunRequest(cache, "cache", request_json, request_json_len, kMembers,
                    out_json, out_json_len, out_error, [&](Request& request) {
                      const StringArg content =
                          request.String("content", /*required=*/true);
                      const StringArg prefix = request.String("prefix");
                      const int64_t ttl_ms = request.Int("ttl_ms").value_or(0);
                      const StringArg model = request.String("model");
                      const StringArg id = request.String("conversation_id");
                      if (!request.status().ok())
                        return Report(request.status(), out_error);
                      return ctxkit_cache_put(
                          cache, content.data, content.len, prefix.data,
                          prefix.len, ttl_ms, model.data, model.len, id.data,
                          id.len, out_json, out_json_len, out_error);
                    });
}

}  // extern "C"
