// The public writers of a single cache operation's result (cache.h, "JSON
// documents"); CacheStatsToJson is beside the statistics, in cache_stats.cc.

#include <string>
#include <string_view>
#include <utility>

#include "ctxkit/cache.h"
#include "lib/json/json_writer.h"
#include "lib/json/record_document.h"

namespace ctxkit {
namespace {

using internal::BeginRecordDocument;
using internal::EndRecordDocument;
using internal::JsonWriter;

// 0 means "never expires": null says so without a magic number.
void WriteExpiry(JsonWriter& w, int64_t expires_at) {
  w.Key("expires_at");
  if (expires_at == 0) {
    w.Null();
  } else {
    w.Int(expires_at);
  }
}

}  // namespace

StatusOr<std::string> CachePutResultToJson(const CachePutResult& put) {
  // Keys are "<prefix>:<hash>" (a prefix never holds ':'), so the prefix is
  // the key's own: no second copy of it can disagree.
  const std::string_view key = put.key;
  const size_t colon = key.find(':');
  JsonWriter w = BeginRecordDocument();
  w.Key("key")
      .String(key)
      .Key("prefix")
      .String(key.substr(0, colon == std::string_view::npos ? 0 : colon))
      .Key("tokens")
      .Uint(put.tokens)
      .Key("created_at")
      .Int(put.created_at);
  WriteExpiry(w, put.expires_at);
  w.Key("already_cached").Bool(put.already_cached);
  return EndRecordDocument(std::move(w));
}

StatusOr<std::string> CacheEntryToJson(const CacheEntry& entry) {
  JsonWriter w = BeginRecordDocument();
  w.Key("key")
      .String(entry.key)
      .Key("content")
      .String(entry.content)
      .Key("tokens")
      .Uint(entry.tokens)
      .Key("hit_count")
      .Uint(entry.hit_count)
      .Key("created_at")
      .Int(entry.created_at)
      .Key("last_accessed")
      .Int(entry.last_accessed);
  WriteExpiry(w, entry.expires_at);
  w.Key("model").String(entry.model).Key("conversation_id");
  if (entry.conversation_id.empty()) {
    w.Null();
  } else {
    w.String(entry.conversation_id);
  }
  return EndRecordDocument(std::move(w));
}

StatusOr<std::string> CacheCheckResultToJson(const CacheCheckResult& check) {
  JsonWriter w = BeginRecordDocument();
  w.Key("exists").Bool(check.exists).Key("key");
  if (check.exists) {
    w.String(check.key);
  } else {
    w.Null();
  }
  w.Key("tokens_saved").Uint(check.tokens_saved);
  return EndRecordDocument(std::move(w));
}

}  // namespace ctxkit
