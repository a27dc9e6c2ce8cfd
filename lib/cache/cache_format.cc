// On-disk layout of the cache (all integers big-endian; times are signed ms
// stored with OrderedFromSigned so that they sort):
//
//   "cache"          key   -> entry record:
//                      u8 version (2) | u64 serial | u64 tokens |
//                      u64 created_at | u64 expires_at (0 = never) |
//                      u64 hit_count | u64 last_accessed | u64 size_bytes |
//                      u8 len + model | u8 len + conversation_id |
//                      u8 placement | content (placement 1 only)
//                    (times as two's-complement u64). Placement 1: the
//                    content follows, to the end of the record; used when
//                    the whole record fits in kMaxInlineRecordBytes, so that
//                    a hit is one B-tree lookup and flushing hit counts
//                    rewrites under 2 KB. Placement 0: the content is in
//                    "cache.content", so that a flush never rewrites large
//                    content. (Format 1 stores had version-1 records, with
//                    no placement byte and the content always apart;
//                    cache_migration.cc upgrades them.)
//   "cache.content"  key   -> the content bytes of a placement-0 entry
//   "cache.lru"      u64 ordered(last_accessed) + key -> ""   (eviction order)
//   "cache.expiry"   u64 ordered(expires_at) + key -> ""  (only expiring ones)
//   "cache.hash"     16-byte XXH3-128 + key -> ""  (Check without a prefix,
//                    and collision chains: every key whose content has that
//                    hash)
//   "cache.conv"     conversation_id + key -> ""   (conversation delete)
//   "cache.hits"     u64 hit_count + key -> ""     (top entries by hits)
//   "cache.lookup"   key -> u8 version (1) | u64 serial | lookup bytes
//                    (keyed entries only, Cache::PutKeyed: the full lookup,
//                    compared on every keyed read, so a hash collision can
//                    never return another lookup's value; the serial ties
//                    the row to one creation of the entry)
//   "cache.stats"    "t" -> totals, "p"+prefix -> per-prefix,
//                    "m"+model -> per-model counters:
//                      u8 version (1) | u8 n | n x u64
//                    Readers accept more fields than they know (newer
//                    writers append) and treat missing ones as zero.
//
// A key is "prefix:<32 lowercase hex of the content's XXH3-128>", or with
// "-<n>" appended (n = 1..kMaxCollisions) for content whose hash collides with
// a different stored content under the same prefix. A keyed entry's key has
// the same form, from the XXH3-128 of its lookup XORed with a constant mask
// (so a lookup and an equal content do not share a chain); keyed and
// content-addressed entries may share a collision chain, and each kind skips
// the other's entries when it walks one.

#include "lib/cache/cache_format.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_rows.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

constexpr uint8_t kMetaVersion = 2;
constexpr uint8_t kContentApart = 0;
constexpr uint8_t kContentInline = 1;
constexpr uint8_t kCountersVersion = 1;
constexpr uint8_t kLookupVersion = 1;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool ReadU64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = ReadBigEndian64(in->data());
  in->remove_prefix(8);
  return true;
}

}  // namespace

absl::StatusOr<CacheDbs> CacheDbs::Open(Store& store) {
  CacheDbs dbs;
  struct Slot {
    const char* name;
    Database* db;
  };
  const Slot slots[] = {
      {"cache", &dbs.entries},
      {"cache.content", &dbs.content},
      {"cache.lru", &dbs.lru},
      {"cache.expiry", &dbs.expiry},
      {"cache.hash", &dbs.hash},
      {"cache.conv", &dbs.conv},
      {"cache.hits", &dbs.hits},
      {"cache.stats", &dbs.stats},
      {"conversations", &dbs.conversations},
  };
  for (const Slot& slot : slots) {
    absl::StatusOr<Database> db = internal::StoreOpenDatabase(store, slot.name);
    CTXKIT_RETURN_IF_ERROR(db.status());
    *slot.db = *db;
  }
  // Added after the others: a read-only store written before keyed entries
  // existed lacks it, and simply has none (a writable open creates it).
  absl::StatusOr<Database> lookup =
      internal::StoreOpenDatabase(store, "cache.lookup");
  if (lookup.ok()) {
    dbs.lookup = *lookup;
  } else if (lookup.status().code() != absl::StatusCode::kNotFound) {
    return lookup.status();
  }
  return dbs;
}

std::string EncodeLookupRow(uint64_t serial, std::string_view lookup) {
  std::string out;
  out.reserve(9 + lookup.size());
  out.push_back(static_cast<char>(kLookupVersion));
  AppendBigEndian64(&out, serial);
  out.append(lookup);
  return out;
}

absl::StatusOr<std::optional<std::string_view>> KeyedLookupOf(
    const Transaction& txn, const CacheDbs& dbs, std::string_view key,
    uint64_t serial) {
  if (!dbs.lookup.valid()) return std::optional<std::string_view>();
  absl::StatusOr<std::string_view> row = internal::TxnGet(txn, dbs.lookup, key);
  if (!row.ok()) {
    if (row.status().code() == absl::StatusCode::kNotFound) {
      return std::optional<std::string_view>();
    }
    return row.status();
  }
  if (row->size() < 9 || static_cast<uint8_t>((*row)[0]) != kLookupVersion) {
    return absl::DataLossError(
        absl::StrFormat("cache entry '%s' has a malformed lookup row", key));
  }
  if (ReadBigEndian64(row->data() + 1) != serial) {
    return std::optional<std::string_view>();
  }
  return std::optional<std::string_view>(row->substr(9));
}

size_t RecordHeaderBytes(const EntryMeta& meta) {
  return 1 + 7 * 8 + 1 + meta.model.size() + 1 + meta.conversation_id.size() +
         1;
}

bool FitsInline(const EntryMeta& meta, size_t content_size) {
  return RecordHeaderBytes(meta) + content_size <= kMaxInlineRecordBytes;
}

std::string EncodeMeta(const EntryMeta& meta) {
  std::string out;
  out.reserve(RecordHeaderBytes(meta) +
              (meta.inline_content ? meta.inline_content->size() : 0));
  out.push_back(static_cast<char>(kMetaVersion));
  AppendBigEndian64(&out, meta.serial);
  AppendBigEndian64(&out, meta.tokens);
  AppendBigEndian64(&out, static_cast<uint64_t>(meta.created_at));
  AppendBigEndian64(&out, static_cast<uint64_t>(meta.expires_at));
  AppendBigEndian64(&out, meta.hit_count);
  AppendBigEndian64(&out, static_cast<uint64_t>(meta.last_accessed));
  AppendBigEndian64(&out, meta.size_bytes);
  out.push_back(static_cast<char>(meta.model.size()));
  out += meta.model;
  out.push_back(static_cast<char>(meta.conversation_id.size()));
  out += meta.conversation_id;
  out.push_back(
      static_cast<char>(meta.inline_content ? kContentInline : kContentApart));
  if (meta.inline_content) out += *meta.inline_content;
  return out;
}

bool DecodeView(std::string_view v, MetaView* m) {
  constexpr size_t kFixed = 1 + 7 * 8;
  if (v.size() < kFixed + 3 || static_cast<uint8_t>(v[0]) != kMetaVersion) {
    return false;
  }
  const char* p = v.data() + 1;
  m->serial = ReadBigEndian64(p);
  m->tokens = ReadBigEndian64(p + 8);
  m->created_at = static_cast<int64_t>(ReadBigEndian64(p + 16));
  m->expires_at = static_cast<int64_t>(ReadBigEndian64(p + 24));
  m->hit_count = ReadBigEndian64(p + 32);
  m->last_accessed = static_cast<int64_t>(ReadBigEndian64(p + 40));
  m->size_bytes = ReadBigEndian64(p + 48);
  std::string_view rest = v.substr(kFixed);
  const size_t model_len = static_cast<unsigned char>(rest[0]);
  if (rest.size() < 3 + model_len) return false;
  m->model = rest.substr(1, model_len);
  rest.remove_prefix(1 + model_len);
  const size_t conv_len = static_cast<unsigned char>(rest[0]);
  if (rest.size() < 2 + conv_len) return false;
  m->conversation_id = rest.substr(1, conv_len);
  rest.remove_prefix(1 + conv_len);
  const auto placement = static_cast<uint8_t>(rest[0]);
  rest.remove_prefix(1);
  if (placement == kContentApart) {
    m->content_inline = false;
    m->content = {};
    return rest.empty();
  }
  if (placement != kContentInline) return false;
  m->content_inline = true;
  m->content = rest;
  return true;
}

absl::StatusOr<EntryMeta> DecodeMeta(std::string_view key,
                                     std::string_view value) {
  MetaView view{};
  if (!DecodeView(value, &view)) {
    return absl::DataLossError(
        absl::StrFormat("cache entry '%s' has a malformed record", key));
  }
  EntryMeta meta;
  meta.serial = view.serial;
  meta.tokens = view.tokens;
  meta.created_at = view.created_at;
  meta.expires_at = view.expires_at;
  meta.hit_count = view.hit_count;
  meta.last_accessed = view.last_accessed;
  meta.size_bytes = view.size_bytes;
  meta.model.assign(view.model.data(), view.model.size());
  meta.conversation_id.assign(view.conversation_id.data(),
                              view.conversation_id.size());
  if (view.content_inline) {
    meta.inline_content.emplace(view.content.data(), view.content.size());
  }
  return meta;
}

absl::StatusOr<std::optional<EntryMeta>> FindMeta(const CacheDbs& dbs,
                                                  const Transaction& txn,
                                                  std::string_view key) {
  absl::StatusOr<std::string_view> value = TxnGet(txn, dbs.entries, key);
  if (!value.ok()) {
    if (value.status().code() == absl::StatusCode::kNotFound) {
      return std::nullopt;
    }
    return value.status();
  }
  CTXKIT_ASSIGN_OR_RETURN(EntryMeta meta, DecodeMeta(key, *value));
  return meta;
}

std::string PrefixStatsKey(std::string_view prefix) {
  std::string k = "p";
  k += prefix;
  return k;
}

std::string ModelStatsKey(std::string_view model) {
  std::string k = "m";
  k += model;
  return k;
}

absl::StatusOr<std::vector<uint64_t>> ReadCounters(const Transaction& txn,
                                                   Database db,
                                                   std::string_view key,
                                                   int count) {
  std::vector<uint64_t> fields(static_cast<size_t>(count), 0);
  absl::StatusOr<std::string_view> value = internal::TxnGet(txn, db, key);
  if (!value.ok()) {
    if (value.status().code() == absl::StatusCode::kNotFound) return fields;
    return value.status();
  }
  std::string_view in = *value;
  if (in.size() < 2 || static_cast<uint8_t>(in[0]) != kCountersVersion ||
      in.size() != 2 + 8 * static_cast<size_t>(static_cast<uint8_t>(in[1]))) {
    return absl::DataLossError(
        absl::StrFormat("cache statistics record '%s' is malformed", key));
  }
  const int stored = static_cast<uint8_t>(in[1]);
  in.remove_prefix(2);
  for (int i = 0; i < stored; ++i) {
    uint64_t v = 0;
    ReadU64(&in, &v);
    if (i < count) fields[static_cast<size_t>(i)] = v;
  }
  return fields;
}

absl::Status WriteCounters(WriteTransaction& txn, Database db,
                           std::string_view key,
                           const std::vector<uint64_t>& fields) {
  bool all_zero = true;
  for (uint64_t v : fields) all_zero = all_zero && v == 0;
  if (all_zero) {
    absl::StatusOr<bool> gone = internal::TxnDelete(txn, db, key);
    return gone.ok() ? absl::OkStatus() : gone.status();
  }
  std::string out;
  out.push_back(static_cast<char>(kCountersVersion));
  out.push_back(static_cast<char>(fields.size()));
  for (uint64_t v : fields) AppendBigEndian64(&out, v);
  return (internal::TxnPut(txn, db, key, out));
}

std::string TimeIndexKey(int64_t time_ms, std::string_view key) {
  std::string k;
  k.reserve(8 + key.size());
  AppendBigEndian64(&k, OrderedFromSigned(time_ms));
  k += key;
  return k;
}

std::string HitsIndexKey(uint64_t hits, std::string_view key) {
  std::string k;
  k.reserve(8 + key.size());
  AppendBigEndian64(&k, hits);
  k += key;
  return k;
}

std::string HashIndexKey(const Hash128& hash, std::string_view key) {
  std::string k(reinterpret_cast<const char*>(hash.data()), hash.size());
  k += key;
  return k;
}

std::string ConvIndexKey(std::string_view conversation_id,
                         std::string_view key) {
  std::string k(conversation_id);
  k += key;
  return k;
}

bool ParseKey(std::string_view key, std::string_view* prefix, Hash128* hash) {
  const size_t colon = key.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 64) {
    return false;
  }
  for (size_t i = 0; i < colon; ++i) {
    const char c = key[i];
    const bool allowed =
        absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
    if (!allowed) return false;
  }
  std::string_view rest = key.substr(colon + 1);
  if (rest.size() < 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    const int hi = HexValue(rest[2 * i]);
    const int lo = HexValue(rest[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*hash)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  rest.remove_prefix(32);
  if (!rest.empty()) {
    // "-<n>", n = 1..99 without leading zero.
    if (rest.size() < 2 || rest.size() > 3 || rest[0] != '-' || rest[1] < '1' ||
        rest[1] > '9' ||
        (rest.size() == 3 && (rest[2] < '0' || rest[2] > '9'))) {
      return false;
    }
  }
  *prefix = key.substr(0, colon);
  return true;
}

absl::Status RemoveEntry(const CacheDbs& dbs, WriteTransaction& txn,
                         std::string_view key, const EntryMeta& meta,
                         RemoveReason reason) {
  std::string_view prefix;
  Hash128 hash{};
  if (!ParseKey(key, &prefix, &hash)) {
    return absl::DataLossError(
        absl::StrFormat("cache holds a malformed key '%s'", key));
  }
  auto del = [&](Database db, std::string_view k) -> absl::Status {
    absl::StatusOr<bool> gone = internal::TxnDelete(txn, db, k);
    return gone.ok() ? absl::OkStatus() : gone.status();
  };
  // Copy what we need before the first write invalidates views into the map.
  const std::string prefix_copy(prefix);
  const std::string key_copy(key);
  for (auto [db, k] :
       {std::pair{dbs.entries, key_copy},
        std::pair{dbs.lru, TimeIndexKey(meta.last_accessed, key_copy)},
        std::pair{dbs.hash, HashIndexKey(hash, key_copy)},
        std::pair{dbs.hits, HitsIndexKey(meta.hit_count, key_copy)}}) {
    if (absl::Status s = del(db, k); !s.ok()) return s;
  }
  if (!meta.inline_content) {
    if (absl::Status s = del(dbs.content, key_copy); !s.ok()) return s;
  }
  if (dbs.lookup.valid()) {
    if (absl::Status s = del(dbs.lookup, key_copy); !s.ok()) return s;
  }
  if (meta.expires_at != 0) {
    if (absl::Status s =
            del(dbs.expiry, TimeIndexKey(meta.expires_at, key_copy));
        !s.ok()) {
      return s;
    }
  }
  if (!meta.conversation_id.empty()) {
    if (absl::Status s =
            del(dbs.conv, ConvIndexKey(meta.conversation_id, key_copy));
        !s.ok()) {
      return s;
    }
  }
  const uint64_t saved = meta.hit_count * meta.tokens;
  absl::StatusOr<std::vector<uint64_t>> totals =
      ReadCounters(txn, dbs.stats, kTotalsKey, kTotFieldCount);
  if (!totals.ok()) return totals.status();
  std::vector<uint64_t>& t = *totals;
  t[kTotEntries] -= 1;
  t[kTotSizeBytes] -= meta.size_bytes;
  t[kTotTokens] -= meta.tokens;
  t[kTotHits] -= meta.hit_count;
  t[kTotTokensSaved] -= saved;
  if (meta.hit_count == 0) t[kTotZeroHitEntries] -= 1;
  if (reason == RemoveReason::kEvicted) t[kTotEvictions] += 1;
  if (reason == RemoveReason::kExpired) t[kTotExpirations] += 1;
  if (absl::Status s = WriteCounters(txn, dbs.stats, kTotalsKey, t); !s.ok()) {
    return s;
  }
  for (const std::string& group_key :
       {PrefixStatsKey(prefix_copy), ModelStatsKey(meta.model)}) {
    absl::StatusOr<std::vector<uint64_t>> g =
        ReadCounters(txn, dbs.stats, group_key, kGrpFieldCount);
    if (!g.ok()) return g.status();
    std::vector<uint64_t>& f = *g;
    f[kGrpEntries] -= 1;
    f[kGrpSizeBytes] -= meta.size_bytes;
    f[kGrpTokens] -= meta.tokens;
    f[kGrpHits] -= meta.hit_count;
    f[kGrpTokensSaved] -= saved;
    if (absl::Status s = WriteCounters(txn, dbs.stats, group_key, f); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace ctxkit::internal
