// Cache statistics: the counters of "cache.stats" read back, the most hit
// entries, recommendations, and their JSON document.

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/cache.h"
#include "lib/base/field_check.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_impl.h"
#include "lib/cache/cache_rows.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

double Round1(double x) { return std::round(x * 10.0) / 10.0; }

}  // namespace

absl::StatusOr<CacheStats> CacheImpl::Stats(int64_t top_n) {
  CTXKIT_RETURN_IF_ERROR(CheckRange("top_n", top_n, 0, 1000));
  if (!store_.read_only()) CTXKIT_RETURN_IF_ERROR(Flush());
  CacheStats s;
  s.max_entries = options_.max_entries;
  s.max_bytes = options_.max_bytes;
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
  CTXKIT_RETURN_IF_ERROR(txn.status());
  absl::StatusOr<std::vector<uint64_t>> t =
      ReadCounters(*txn, dbs_.stats, kTotalsKey, kTotFieldCount);
  if (!t.ok()) return t.status();
  s.total_entries = (*t)[kTotEntries];
  s.size_bytes = (*t)[kTotSizeBytes];
  s.total_tokens = (*t)[kTotTokens];
  s.total_hits = (*t)[kTotHits];
  s.tokens_saved = (*t)[kTotTokensSaved];
  s.zero_hit_entries = (*t)[kTotZeroHitEntries];
  s.lifetime_hits = (*t)[kTotLifetimeHits];
  s.total_misses = (*t)[kTotLifetimeMisses];
  s.lifetime_tokens_saved = (*t)[kTotLifetimeTokensSaved];
  s.evictions = (*t)[kTotEvictions];
  s.expirations = (*t)[kTotExpirations];
  if (s.total_entries > 0) {
    s.avg_tokens_per_entry =
        (s.total_tokens + s.total_entries / 2) / s.total_entries;
    s.avg_hit_count = Round1(static_cast<double>(s.total_hits) /
                             static_cast<double>(s.total_entries));
  }
  const uint64_t lookups = s.lifetime_hits + s.total_misses;
  if (lookups > 0) {
    s.hit_rate = Round1(100.0 * static_cast<double>(s.lifetime_hits) /
                        static_cast<double>(lookups));
  }
  s.effectiveness = lookups == 0                              ? "low"
                    : s.hit_rate >= kCacheHighEffectiveness   ? "high"
                    : s.hit_rate >= kCacheMediumEffectiveness ? "medium"
                                                              : "low";
  {
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(*txn, dbs_.stats);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    std::vector<std::string> keys;
    for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
      keys.emplace_back(cursor->key());
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
    for (const std::string& k : keys) {
      if (k.empty() || (k[0] != 'p' && k[0] != 'm')) continue;
      absl::StatusOr<std::vector<uint64_t>> g =
          ReadCounters(*txn, dbs_.stats, k, kGrpFieldCount);
      if (!g.ok()) return g.status();
      const std::vector<uint64_t>& f = *g;
      if (k[0] == 'p') {
        if (f[kGrpEntries] == 0) continue;
        s.by_prefix.push_back(CachePrefixStats{k.substr(1), f[kGrpEntries],
                                               f[kGrpHits], f[kGrpTokensSaved],
                                               f[kGrpSizeBytes]});
      } else {
        s.by_model.push_back(CacheModelStats{k.substr(1), f[kGrpEntries],
                                             f[kGrpHits], f[kGrpTokensSaved],
                                             f[kGrpLifetimeTokensSaved]});
      }
    }
  }
  const CachePrefixStats* best = nullptr;
  for (const CachePrefixStats& p : s.by_prefix) {
    if (best == nullptr || p.entries > best->entries ||
        (p.entries == best->entries && p.hits > best->hits)) {
      best = &p;
    }
  }
  if (best != nullptr) s.most_cached_prefix = best->prefix;
  if (top_n > 0) {
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(*txn, dbs_.hits);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    std::vector<std::pair<std::string, uint64_t>> top;
    for (cursor->SeekToLast();
         cursor->Valid() && top.size() < static_cast<size_t>(top_n);
         cursor->Prev()) {
      const uint64_t hits = ReadBigEndian64(cursor->key().data());
      if (hits == 0) break;
      top.emplace_back(std::string(cursor->key().substr(8)), hits);
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
    for (const auto& [key, hits] : top) {
      CTXKIT_ASSIGN_OR_RETURN(MetaView meta, ReadView(*txn, dbs_.entries, key));
      s.top_entries.push_back(
          CacheTopEntry{key, hits, hits * meta.tokens, meta.last_accessed});
    }
  }
  // Recommendations in the manner of seed 000's cache-stats.
  auto add = [&](const char* priority, std::string suggestion,
                 std::string action) {
    s.recommendations.push_back(CacheRecommendation{
        priority, std::move(suggestion), std::move(action)});
  };
  if (s.total_entries == 0) {
    add("medium", "Cache is empty",
        "Store reusable content such as system prompts with smart_cache "
        "store");
  } else if (lookups < 10) {
    add("low", "Not enough lookups to judge the cache yet",
        "Retrieve cached content by key or check content before sending it");
  } else if (s.hit_rate < kCacheMediumEffectiveness) {
    add("high", absl::StrFormat("Cache hit rate is low (%.1f%%)", s.hit_rate),
        "Cache stable, frequently repeated content (system prompts, "
        "instructions) and check before sending");
  } else if (s.hit_rate < kCacheHighEffectiveness) {
    add("medium",
        absl::StrFormat("Cache hit rate is moderate (%.1f%%)", s.hit_rate),
        "Group reusable content under prefixes and raise TTLs of entries that "
        "are hit");
  } else {
    add("low", "Cache hit rate is healthy",
        "Continue current caching strategy");
  }
  if (s.total_entries >= 10 && s.zero_hit_entries * 2 > s.total_entries) {
    add("medium",
        absl::StrFormat("%d of %d entries were never hit", s.zero_hit_entries,
                        s.total_entries),
        "Use shorter TTLs for one-off content or stop caching it");
  }
  if ((s.max_entries != 0 && s.total_entries * 10 >= s.max_entries * 9) ||
      (s.max_bytes != 0 && s.size_bytes * 10 >= s.max_bytes * 9)) {
    add("medium", "Cache is near its capacity limit",
        s.evictions > 0 ? absl::StrFormat("Raise max_entries/max_bytes: %d "
                                          "entries were evicted",
                                          s.evictions)
                        : std::string("Raise max_entries/max_bytes or use "
                                      "TTLs so old entries expire"));
  }
  return s;
}

}  // namespace ctxkit::internal

namespace ctxkit {

using internal::ToPublic;

StatusOr<std::string> CacheStatsToJson(const CacheStats& s) {
  internal::JsonWriter w;
  w.BeginObject().Key("schema_version").Int(1);
  w.Key("overview").BeginObject();
  w.Key("total_entries").Uint(s.total_entries);
  w.Key("total_hits").Uint(s.total_hits);
  w.Key("total_misses").Uint(s.total_misses);
  w.Key("hit_rate").Double(s.hit_rate);
  w.Key("tokens_saved").Uint(s.tokens_saved);
  w.Key("avg_tokens_per_entry").Uint(s.avg_tokens_per_entry);
  w.EndObject();
  w.Key("performance").BeginObject();
  w.Key("effectiveness").String(s.effectiveness);
  w.Key("avg_hit_count").Double(s.avg_hit_count);
  w.Key("most_cached_prefix").String(s.most_cached_prefix);
  w.Key("cache_size_bytes").Uint(s.size_bytes);
  w.EndObject();
  w.Key("top_entries").BeginArray();
  for (const CacheTopEntry& e : s.top_entries) {
    w.BeginObject().Key("key").String(e.key).Key("hits").Uint(e.hits);
    w.Key("tokens_saved").Uint(e.tokens_saved);
    w.Key("last_accessed").Int(e.last_accessed).EndObject();
  }
  w.EndArray();
  w.Key("by_prefix").BeginObject();
  for (const CachePrefixStats& p : s.by_prefix) {
    w.Key(p.prefix).BeginObject().Key("entries").Uint(p.entries);
    w.Key("hits").Uint(p.hits).Key("tokens_saved").Uint(p.tokens_saved);
    w.EndObject();
  }
  w.EndObject();
  w.Key("recommendations").BeginArray();
  for (const CacheRecommendation& r : s.recommendations) {
    w.BeginObject().Key("priority").String(r.priority);
    w.Key("suggestion").String(r.suggestion).Key("action").String(r.action);
    w.EndObject();
  }
  w.EndArray();
  w.Key("by_model").BeginObject();
  for (const CacheModelStats& m : s.by_model) {
    w.Key(m.model).BeginObject().Key("entries").Uint(m.entries);
    w.Key("hits").Uint(m.hits).Key("tokens_saved").Uint(m.tokens_saved);
    w.Key("lifetime_tokens_saved").Uint(m.lifetime_tokens_saved).EndObject();
  }
  w.EndObject();
  w.Key("lifetime").BeginObject();
  w.Key("hits").Uint(s.lifetime_hits).Key("misses").Uint(s.total_misses);
  w.Key("tokens_saved").Uint(s.lifetime_tokens_saved);
  w.Key("evictions").Uint(s.evictions).Key("expirations").Uint(s.expirations);
  w.EndObject();
  w.EndObject();
  return ToPublic(std::move(w).Finish());
}

}  // namespace ctxkit
