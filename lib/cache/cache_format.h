// The cache's on-disk layout (documented in cache_format.cc) and the one
// routine every removal goes through (Clear, Sweep, eviction, expiry on read,
// conversation delete), so that indexes and statistics stay consistent
// whoever removes an entry.

#ifndef CTXKIT_LIB_CACHE_CACHE_FORMAT_H_
#define CTXKIT_LIB_CACHE_CACHE_FORMAT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

// Handles of the cache's sub-databases. Cheap to copy.
struct CacheDbs {
  Database entries;        // "cache"
  Database content;        // "cache.content"
  Database lru;            // "cache.lru"
  Database expiry;         // "cache.expiry"
  Database hash;           // "cache.hash"
  Database conv;           // "cache.conv"
  Database hits;           // "cache.hits"
  Database stats;          // "cache.stats"
  Database conversations;  // "conversations" (owned by ConversationStore)
  // "cache.lookup": the lookups of keyed entries (Cache::PutKeyed). Invalid
  // (never written, read as empty) on a read-only store made before keyed
  // entries existed.
  Database lookup;

  // Opens (creating) every sub-database. Must not run inside Update().
  static absl::StatusOr<CacheDbs> Open(Store& store);
};

using Hash128 = std::array<uint8_t, 16>;

// A record holding its entry's content (inline) stays within this many
// bytes, so that it fits in one leaf node of LMDB's B-tree rather than
// overflow pages (a node holds at most 2,038 bytes with 4 KiB pages: an
// 8-byte header, the key of up to 100 bytes, the record): a hit then costs
// one lookup on one page, and a flush of hit counts rewrites at most this
// much. Larger content lives in "cache.content".
inline constexpr size_t kMaxInlineRecordBytes = 1920;

// One entry's record: the value under its key in "cache". Its metadata and,
// when the record fits in kMaxInlineRecordBytes, its content.
struct EntryMeta {
  uint64_t serial = 0;  // unique per creation, so stale hit batches skip it
  uint64_t tokens = 0;
  int64_t created_at = 0;
  int64_t expires_at = 0;  // 0 = never
  uint64_t hit_count = 0;
  int64_t last_accessed = 0;
  uint64_t size_bytes = 0;  // of the content
  std::string model;
  std::string conversation_id;  // empty = none
  // The content when the record holds it; nullopt when it is in
  // "cache.content".
  std::optional<std::string> inline_content;
};

// Whether the record of `meta` with `content_size` bytes of content inline
// stays within kMaxInlineRecordBytes (meta.inline_content is ignored).
bool FitsInline(const EntryMeta& meta, size_t content_size);

std::string EncodeMeta(const EntryMeta& meta);
// DATA_LOSS naming the key when the record is malformed.
absl::StatusOr<EntryMeta> DecodeMeta(std::string_view key,
                                     std::string_view value);
// The metadata of entry `key` in `txn`, or nullopt when there is none (an
// index row or a hit can outlive its entry). DATA_LOSS as DecodeMeta; any
// other read error as is.
absl::StatusOr<std::optional<EntryMeta>> FindMeta(const CacheDbs& dbs,
                                                  const Transaction& txn,
                                                  std::string_view key);

// A "cache.lookup" row: the lookup of the keyed entry created with `serial`.
std::string EncodeLookupRow(uint64_t serial, std::string_view lookup);

// The lookup of entry `key` when it is a keyed entry: its "cache.lookup" row
// exists and carries `serial`, the entry's current serial (a row left behind
// by a release that removed the entry without knowing of lookups never
// matches a later entry under the key). nullopt for a content-addressed
// entry. The view points into the transaction's map. DATA_LOSS naming the
// key for a malformed row.
absl::StatusOr<std::optional<std::string_view>> KeyedLookupOf(
    const Transaction& txn, const CacheDbs& dbs, std::string_view key,
    uint64_t serial);

// Counter records in "cache.stats". Indices into the u64 vectors.
enum TotalsField : int {
  kTotEntries,
  kTotSizeBytes,
  kTotTokens,
  kTotHits,         // sum of hit_count over live entries
  kTotTokensSaved,  // sum of hit_count * tokens over live entries
  kTotZeroHitEntries,
  kTotLifetimeHits,
  kTotLifetimeMisses,
  kTotLifetimeTokensSaved,
  kTotEvictions,
  kTotExpirations,
  kTotNextSerial,
  kTotFieldCount
};
enum GroupField : int {  // per prefix ("p" + prefix) and per model ("m" +
                         // model)
  kGrpEntries,
  kGrpSizeBytes,
  kGrpTokens,
  kGrpHits,
  kGrpTokensSaved,
  kGrpLifetimeHits,
  kGrpLifetimeTokensSaved,
  kGrpFieldCount
};

inline constexpr std::string_view kTotalsKey = "t";
std::string PrefixStatsKey(std::string_view prefix);
std::string ModelStatsKey(std::string_view model);

// Reads a counter record; absent = all zero. Always returns `count` fields.
absl::StatusOr<std::vector<uint64_t>> ReadCounters(const Transaction& txn,
                                                   Database db,
                                                   std::string_view key,
                                                   int count);
// Writes a counter record; an all-zero record is deleted instead.
absl::Status WriteCounters(WriteTransaction& txn, Database db,
                           std::string_view key,
                           const std::vector<uint64_t>& fields);

// Index keys.
std::string TimeIndexKey(int64_t time_ms, std::string_view key);
std::string HitsIndexKey(uint64_t hits, std::string_view key);
std::string HashIndexKey(const Hash128& hash, std::string_view key);
std::string ConvIndexKey(std::string_view conversation_id,
                         std::string_view key);

// Splits "prefix:<32 hex>[-n]" into its prefix and hash. False when `key` is
// not of that form.
bool ParseKey(std::string_view key, std::string_view* prefix, Hash128* hash);

// Why an entry is removed: decides which lifetime counter counts it.
enum class RemoveReason { kExplicit, kEvicted, kExpired };

// Removes entry `key` (whose metadata is `meta`) with its content, every index
// row and its share of the statistics, in `txn`.
absl::Status RemoveEntry(const CacheDbs& dbs, WriteTransaction& txn,
                         std::string_view key, const EntryMeta& meta,
                         RemoveReason reason);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CACHE_CACHE_FORMAT_H_
