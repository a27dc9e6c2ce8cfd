// ctxkit::Cache: a content-addressed prompt/result cache kept in a Store
// (the MCP Token Optimizer's smart_cache tool and cache-stats resource; the
// compactor keeps its results here too).
//
//   auto cache = ctxkit::Cache::Open(*store);
//   ctxkit::CachePutOptions put;
//   put.prefix = "system-prompts";
//   put.ttl_ms = 3600000;
//   auto stored = (*cache)->Put(prompt, put);   // stored->key, ->tokens
//   auto hit = (*cache)->Get(stored->key);      // hit->content
//   auto seen = (*cache)->Check(prompt);        // seen->exists
//
// Keys. An entry's key is "<prefix>:<32 lowercase hex digits of the XXH3-128
// hash of its content>". Storing the same bytes under the same prefix again
// finds the same entry. Every lookup that is given the content (Put, Check)
// compares the stored bytes with it, so two different contents whose hashes
// collide are never confused: the second one gets the key "<prefix>:<hex>-1"
// ("-2", ... up to "-99").
//
// Keyed entries. PutKeyed/GetKeyed store a value found by a lookup (a
// canonical request: the compactor keys its results by its input and
// options) rather than by its own content. The key is "<prefix>:<hex>" as
// above, from the XXH3-128 of the lookup XORed with a constant (so a lookup
// and an equal content never share a key). The whole lookup is stored with
// the entry and compared on every keyed read, so a colliding (even crafted)
// lookup never returns another lookup's value; it gets "-1", "-2", ... as a
// colliding content does. Put and Check never match a keyed entry. A keyed
// entry is otherwise an entry like any other: Get(key) returns its value,
// and TTL, LRU eviction, max_entries/max_bytes (its size is its value plus
// its lookup bytes, both stored), statistics (hits, misses, tokens of the
// value), Clear, Sweep and the conversation delete hook treat it alike.
//
// Durability. An entry (its content, tokens, TTL) is durable when Put returns
// OK, and removals when Clear/Sweep return. Hit statistics are not written per
// hit: a hit costs microseconds, a durable commit milliseconds. Hits,
// misses and last-access times collect in memory and are written in one
// transaction (a) by a background thread every CacheOptions::flush_interval_ms
// (default 1000 ms), (b) sooner when flush_max_pending distinct entries are
// waiting, (c) at the start of every Put/Clear/Sweep, (d) by Flush() and
// Stats(), and (e) when the Cache is destroyed. So a crash (kill -9, power
// loss) loses at most the hit statistics of the last flush interval plus one
// commit -- never an entry, never content. LRU eviction happens inside Put,
// after the pending batch is applied, so it always sees every access.
//
// Expiry. An entry with ttl_ms > 0 expires at created/refreshed time + ttl.
// An expired entry is never returned (Get says NOT_FOUND and counts a miss);
// it is removed by the next write (Put removes all expired entries before it
// stores; the batch flush removes those seen expired by reads) or Sweep().
//
// Statistics are counters kept in the same transactions as the writes (no
// scans): "live" figures describe the entries present now (entries, bytes,
// tokens, hits, tokens_saved: removing an entry removes its share); lifetime
// figures (lifetime hits/misses/tokens saved, evictions, expirations) only
// grow and feed hit_rate.
//
// Thread safety: every method may be called concurrently. Get and Check only
// read the store (a read transaction plus a short in-memory lock), never the
// write lock. They keep no copy of an entry: each call reads the store, so
// it sees every commit made before it by any process, and its cost does not
// depend on whether anything was committed since the last call. Several
// Cache objects on one Store work, but each batches its own hits; open one
// per Store per process.

#ifndef CTXKIT_CACHE_H_
#define CTXKIT_CACHE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"

namespace ctxkit {

namespace internal {
class CacheImpl;
class CacheTestPeer;
struct CacheAccess;
}  // namespace internal

// How to open a Cache. Validated by Cache::Open (INVALID_ARGUMENT naming the
// field).
struct CacheOptions {
  // Capacity limits; 0 = unlimited. When a Put of a new entry would exceed
  // either, least recently accessed entries (Get/Check hits and re-Puts count
  // as accesses) are evicted first. max_bytes counts content bytes.
  uint64_t max_entries = 0;
  uint64_t max_bytes = 0;
  // Hit-statistics batching (see "Durability" above). 1..60000 ms.
  int64_t flush_interval_ms = 1000;
  // Distinct entries with pending hits that wake the flusher early.
  // 1..1000000.
  int64_t flush_max_pending = 65536;
  // Milliseconds since the epoch; empty = the wall clock. For tests.
  std::function<int64_t()> clock;
};

// Limits of Put's inputs.
inline constexpr size_t kCacheMaxContentBytes = size_t{16} << 20;  // 16 MiB
inline constexpr size_t kCacheMaxPrefixBytes = 64;
inline constexpr size_t kCacheMaxModelBytes = 128;
// Limit of a keyed entry's lookup (any bytes; PutKeyed, GetKeyed).
inline constexpr size_t kCacheMaxLookupBytes = size_t{16} << 20;  // 16 MiB
inline constexpr int64_t kCacheMaxTtlMs =
    int64_t{10} * 365 * 24 * 3600 * 1000;  // 10 years

struct CachePutOptions {
  // 1..64 bytes of [A-Za-z0-9._-].
  std::string prefix = "default";
  // 0 = never expires; else 1..kCacheMaxTtlMs.
  int64_t ttl_ms = 0;
  // Model whose tokenizer counts the content's tokens (unknown names use the
  // registry's flagged estimate). 1..128 bytes of UTF-8.
  std::string model = std::string(kDefaultModel);
  // Empty, or the id of an existing conversation: the entry is then removed
  // when that conversation is deleted.
  std::string conversation_id;
};

struct CachePutResult {
  std::string key;
  uint64_t tokens = 0;
  int64_t created_at = 0;
  int64_t expires_at = 0;  // 0 = never
  // True when the same content was already stored under this prefix: the
  // existing entry was kept (its model, tokens, conversation and hits) and
  // only its TTL and last access were refreshed.
  bool already_cached = false;
};

struct CacheEntry {
  std::string key;
  std::string content;
  uint64_t tokens = 0;
  // Including this retrieval and hits not yet flushed.
  uint64_t hit_count = 0;
  int64_t created_at = 0;
  int64_t last_accessed = 0;  // this retrieval's time
  int64_t expires_at = 0;     // 0 = never
  std::string model;
  std::string conversation_id;
};

struct CacheCheckResult {
  bool exists = false;
  std::string key;            // empty when !exists
  uint64_t tokens_saved = 0;  // the entry's tokens when exists
};

struct CachePrefixStats {
  std::string prefix;
  uint64_t entries = 0;
  uint64_t hits = 0;
  uint64_t tokens_saved = 0;
  uint64_t size_bytes = 0;
};

struct CacheModelStats {
  std::string model;
  uint64_t entries = 0;
  uint64_t hits = 0;
  uint64_t tokens_saved = 0;  // of live entries
  // Every hit ever served for this model, including removed entries: the
  // "cached_tokens" of token statistics.
  uint64_t lifetime_tokens_saved = 0;
};

struct CacheTopEntry {
  std::string key;
  uint64_t hits = 0;
  uint64_t tokens_saved = 0;  // hits * tokens
  int64_t last_accessed = 0;
};

struct CacheRecommendation {
  std::string priority;  // "high", "medium", "low"
  std::string suggestion;
  std::string action;
};

// Thresholds of CacheStats::effectiveness, on hit_rate (percent):
// "high" >= 60, "medium" >= 30, else "low" ("low" too with no lookups yet).
inline constexpr double kCacheHighEffectiveness = 60.0;
inline constexpr double kCacheMediumEffectiveness = 30.0;

struct CacheStats {
  // Live figures (entries present now).
  uint64_t total_entries = 0;
  uint64_t total_hits = 0;            // sum of the entries' hit counts
  uint64_t tokens_saved = 0;          // sum over entries of hit_count * tokens
  uint64_t total_tokens = 0;          // sum of the entries' tokens
  uint64_t avg_tokens_per_entry = 0;  // rounded
  uint64_t size_bytes = 0;            // content bytes
  double avg_hit_count = 0;           // total_hits / total_entries, 0.1
  uint64_t zero_hit_entries = 0;
  // Lifetime figures.
  uint64_t total_misses = 0;
  uint64_t lifetime_hits = 0;
  uint64_t lifetime_tokens_saved = 0;
  uint64_t evictions = 0;
  uint64_t expirations = 0;
  // lifetime_hits / (lifetime_hits + total_misses) in percent, one decimal;
  // 0 before any lookup.
  double hit_rate = 0;
  std::string effectiveness;       // see the thresholds above
  std::string most_cached_prefix;  // most entries; ties: most hits, then name
  uint64_t max_entries = 0;        // the options', for context
  uint64_t max_bytes = 0;
  std::vector<CachePrefixStats> by_prefix;  // sorted by prefix
  std::vector<CacheModelStats> by_model;    // sorted by model
  std::vector<CacheTopEntry> top_entries;   // most hits first; hits > 0
  std::vector<CacheRecommendation> recommendations;  // at least one
};

// ---- JSON documents ----
//
// The one writer of each result's document: the C ABI returns these bytes,
// the `ctxkit cache` commands print them and the smart_cache tool and the
// cache-stats resource return them (the tool inside the MCP Token Optimizer's
// envelope: "success" first, "message" last), so no surface can drift from
// another. Each is compact UTF-8 JSON whose first member is "schema_version":1,
// with the MCP Token Optimizer's field names; an absent optional value is null,
// never left out. Errors: INVALID_ARGUMENT only if a string is not valid UTF-8
// (never for results the Cache returned). Pure functions; thread-safe; the
// caller owns the result.

// Put / PutKeyed: {"schema_version":1,"key","prefix" (the key's),"tokens",
// "created_at","expires_at" (null = never),"already_cached"}.
CTXKIT_EXPORT StatusOr<std::string> CachePutResultToJson(
    const CachePutResult& put);

// Get / GetKeyed: {"schema_version":1,"key","content","tokens","hit_count",
// "created_at","last_accessed","expires_at" (null = never),"model",
// "conversation_id" (null when tied to none)}.
CTXKIT_EXPORT StatusOr<std::string> CacheEntryToJson(const CacheEntry& entry);

// Check: {"schema_version":1,"exists","key" (null when it does not),
// "tokens_saved"}.
CTXKIT_EXPORT StatusOr<std::string> CacheCheckResultToJson(
    const CacheCheckResult& check);

// `stats` as the MCP Token Optimizer's cache-stats document:
//   {"schema_version":1,"overview":{total_entries,total_hits,total_misses,
//    hit_rate,tokens_saved,avg_tokens_per_entry},"performance":
//    {effectiveness,avg_hit_count,most_cached_prefix,cache_size_bytes},
//    "top_entries":[{key,hits,tokens_saved,last_accessed}],"by_prefix":
//    {"<prefix>":{entries,hits,tokens_saved}},"recommendations":[{priority,
//    suggestion,action}],"by_model":{"<model>":{entries,hits,tokens_saved,
//    lifetime_tokens_saved}},"lifetime":{hits,misses,tokens_saved,evictions,
//    expirations}}
CTXKIT_EXPORT StatusOr<std::string> CacheStatsToJson(const CacheStats& stats);

class CTXKIT_EXPORT Cache {
 public:
  // Opens the cache's sub-databases ("cache", "cache.*") in `store`, which
  // must outlive the Cache, and starts the flusher thread. Errors:
  // INVALID_ARGUMENT for bad options (naming the field); those of
  // Store::OpenDatabase.
  static StatusOr<std::unique_ptr<Cache>> Open(Store& store,
                                               CacheOptions options = {});

  // Flushes pending hit statistics (errors are dropped: a destructor cannot
  // report them) and stops the flusher.
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // Stores `content` (1 byte .. kCacheMaxContentBytes of UTF-8), or finds it
  // already stored under the prefix and refreshes its TTL (expires_at = now +
  // ttl, or never) and last access. Errors, with nothing written:
  //   INVALID_ARGUMENT   naming content, prefix, ttl_ms, model or
  //                      conversation_id
  //   NOT_FOUND          conversation_id names no conversation
  //   RESOURCE_EXHAUSTED content alone exceeds max_bytes (naming content),
  //                      99 colliding contents under one hash, or the store
  //                      is full
  //   and the store's errors.
  StatusOr<CachePutResult> Put(std::string_view content,
                               const CachePutOptions& options = {});

  // The entry under `key`. A hit is counted (hit_count + 1, last_accessed =
  // now). INVALID_ARGUMENT naming key when it is not "<prefix>:<32 hex>" or
  // with "-<n>"; NOT_FOUND (counted as a miss) when absent or expired.
  // Entries read recently are kept in memory (up to 65,536 entries and
  // 64 MiB, none over 4 MiB) and served from there until anything is
  // committed to the store by any process (Store::LastCommittedTransactionId
  // changes), so a hit never returns data a later commit changed.
  StatusOr<CacheEntry> Get(std::string_view key);

  // Stores `value` (1 byte .. kCacheMaxContentBytes of UTF-8) as the keyed
  // entry of `lookup` (1 byte .. kCacheMaxLookupBytes, any bytes) under
  // options.prefix (see "Keyed entries"). If the lookup already has an
  // unexpired entry under the prefix: the same value only refreshes its TTL
  // and last access (already_cached, as Put); a different value replaces
  // it, under the same key, as a new entry (new created_at, model, tokens,
  // conversation_id and TTL from `options`, hit count from 0). Errors, with
  // nothing written:
  //   INVALID_ARGUMENT   naming lookup (never echoed), value, prefix,
  //                      ttl_ms, model or conversation_id
  //   NOT_FOUND          conversation_id names no conversation
  //   RESOURCE_EXHAUSTED value + lookup exceed max_bytes (naming value),
  //                      99 colliding lookups under one hash, or the store
  //                      is full
  //   and the store's errors.
  StatusOr<CachePutResult> PutKeyed(std::string_view lookup,
                                    std::string_view value,
                                    const CachePutOptions& options = {});

  // The keyed entry of `lookup` under `prefix`, its content being the value
  // (full lookup bytes compared, see "Keyed entries"). Counted like Get: a
  // hit (hit_count + 1, last_accessed = now), or a miss with NOT_FOUND when
  // absent or expired. INVALID_ARGUMENT naming lookup or prefix. Always
  // reads the store (Get's in-memory copies are not used).
  StatusOr<CacheEntry> GetKeyed(std::string_view lookup,
                                std::string_view prefix);

  // Whether `content` is stored (under `prefix` if given, else under any
  // prefix; the first unexpired match in key order), comparing bytes. Found
  // counts as a hit of that entry, not found as a miss. INVALID_ARGUMENT
  // naming content or prefix.
  StatusOr<CacheCheckResult> Check(
      std::string_view content,
      std::optional<std::string_view> prefix = std::nullopt);

  // Removes every entry (no prefix) or those of `prefix`; returns how many.
  // Lifetime statistics are kept. INVALID_ARGUMENT naming prefix.
  StatusOr<uint64_t> Clear(
      std::optional<std::string_view> prefix = std::nullopt);

  // Removes every expired entry; returns how many.
  StatusOr<uint64_t> Sweep();

  // Writes the pending hit statistics now (one transaction).
  Status Flush();

  // Flushes, then reads the statistics. `top_n` (0..1000) bounds
  // top_entries. INVALID_ARGUMENT naming top_n.
  StatusOr<CacheStats> Stats(int64_t top_n = 10);

 private:
  friend class internal::CacheTestPeer;
  friend struct internal::CacheAccess;
  CTXKIT_NO_EXPORT explicit Cache(std::unique_ptr<internal::CacheImpl> impl);
  std::unique_ptr<internal::CacheImpl> impl_;
};

}  // namespace ctxkit

#endif  // CTXKIT_CACHE_H_
