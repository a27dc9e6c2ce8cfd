#include "ctxkit/cache.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_format.h"
#include "ctxkit/model_registry.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/clock.h"
#include "lib/base/field_check.h"
#include "lib/base/ids.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_impl.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"

namespace ctxkit::internal {
namespace {

constexpr int kMaxCollisions = 99;

// The fixed fields of a meta record and views of its strings, for the read
// path (no allocation). Layout in cache_format.cc.
struct MetaView {
  uint64_t serial, tokens, hit_count, size_bytes;
  int64_t created_at, expires_at, last_accessed;
  std::string_view model, conversation_id;
};

bool DecodeView(std::string_view v, MetaView* m) {
  constexpr size_t kFixed = 1 + 7 * 8;
  if (v.size() < kFixed + 2 || v[0] != 1) return false;
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
  if (rest.size() < 2 + model_len) return false;
  m->model = rest.substr(1, model_len);
  rest.remove_prefix(1 + model_len);
  const size_t conv_len = static_cast<unsigned char>(rest[0]);
  if (rest.size() != 1 + conv_len) return false;
  m->conversation_id = rest.substr(1);
  return true;
}

bool Expired(int64_t expires_at, int64_t now) {
  return expires_at != 0 && expires_at <= now;
}

absl::Status CheckPrefix(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > kCacheMaxPrefixBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "prefix is %d bytes; it must be 1 to %d bytes of [A-Za-z0-9._-]",
        prefix.size(), kCacheMaxPrefixBytes));
  }
  for (size_t i = 0; i < prefix.size(); ++i) {
    const char c = prefix[i];
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                         c == '-';
    if (!allowed) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "prefix has byte 0x%02X at offset %d; only [A-Za-z0-9._-] is allowed",
          static_cast<unsigned char>(c), i));
    }
  }
  return absl::OkStatus();
}

std::string HexOf(const Hash128& hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(32);
  for (uint8_t b : hash) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::string KeyFor(std::string_view prefix, const Hash128& hash, int n) {
  std::string key = absl::StrFormat("%s:%s", prefix, HexOf(hash));
  if (n > 0) key += absl::StrFormat("-%d", n);
  return key;
}

absl::Status Del(WriteTransaction& txn, Database db, std::string_view key) {
  StatusOr<bool> gone = txn.Delete(db, key);
  return gone.ok() ? absl::OkStatus() : ToAbsl(gone.status());
}

// Signed adjustments to a counter record, applied once per transaction.
struct Deltas {
  std::vector<int64_t> v;
  explicit Deltas(int n) : v(static_cast<size_t>(n), 0) {}
};

absl::Status ApplyDeltas(WriteTransaction& txn, Database db,
                         std::string_view key, const std::vector<int64_t>& d) {
  bool any = false;
  for (int64_t x : d) any = any || x != 0;
  if (!any) return absl::OkStatus();
  absl::StatusOr<std::vector<uint64_t>> f =
      ReadCounters(txn, db, key, static_cast<int>(d.size()));
  if (!f.ok()) return f.status();
  for (size_t i = 0; i < d.size(); ++i) {
    (*f)[i] += static_cast<uint64_t>(d[i]);
  }
  return WriteCounters(txn, db, key, *f);
}

double Round1(double x) { return std::round(x * 10.0) / 10.0; }

}  // namespace

void HitBatch::MergeFrom(HitBatch&& other) {
  for (auto& [key, p] : other.entries) {
    auto [it, inserted] = entries.try_emplace(key, p);
    if (inserted) continue;
    if (it->second.serial == p.serial) {
      it->second.hits += p.hits;
      it->second.last_accessed =
          std::max(it->second.last_accessed, p.last_accessed);
    } else {
      orphans.push_back(std::move(p));
    }
  }
  for (auto& p : other.orphans) orphans.push_back(std::move(p));
  for (const auto& k : other.expired) expired.insert(k);
  misses += other.misses;
}

CacheImpl::CacheImpl(Store& store, CacheOptions options, CacheDbs dbs)
    : store_(store), options_(std::move(options)), dbs_(dbs) {}

absl::StatusOr<std::unique_ptr<CacheImpl>> CacheImpl::Open(
    Store& store, CacheOptions options) {
  CTXKIT_RETURN_IF_ERROR(
      CheckRange("max_entries",
                 static_cast<int64_t>(std::min<uint64_t>(options.max_entries,
                                                         uint64_t{1} << 62)),
                 0, int64_t{1} << 40));
  CTXKIT_RETURN_IF_ERROR(CheckRange("max_bytes",
                                    static_cast<int64_t>(std::min<uint64_t>(
                                        options.max_bytes, uint64_t{1} << 62)),
                                    0, int64_t{1} << 50));
  CTXKIT_RETURN_IF_ERROR(
      CheckRange("flush_interval_ms", options.flush_interval_ms, 1, 60000));
  CTXKIT_RETURN_IF_ERROR(
      CheckRange("flush_max_pending", options.flush_max_pending, 1, 1000000));
  absl::StatusOr<CacheDbs> dbs = CacheDbs::Open(store);
  if (!dbs.ok()) return dbs.status();
  std::unique_ptr<CacheImpl> impl(
      new CacheImpl(store, std::move(options), *dbs));
  if (!store.read_only()) {
    impl->flusher_ = std::thread([p = impl.get()] { p->FlusherLoop(); });
  }
  return impl;
}

CacheImpl::~CacheImpl() {
  {
    std::lock_guard lock(flusher_mu_);
    stop_ = true;
  }
  flusher_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (!store_.read_only()) (void)Flush();
}

void CacheImpl::FlusherLoop() {
  std::unique_lock lock(flusher_mu_);
  while (!stop_) {
    flusher_cv_.wait_for(lock,
                         std::chrono::milliseconds(options_.flush_interval_ms),
                         [this] { return stop_ || flush_wanted_; });
    if (stop_) break;
    flush_wanted_ = false;
    lock.unlock();
    // A failed flush keeps its batch (RestoreBatch); the next one retries.
    (void)Flush();
    lock.lock();
  }
}

Hash128 CacheImpl::HashOf(std::string_view content) const {
  if (hash_fn_) return hash_fn_(content);
  const XXH128_hash_t h = XXH3_128bits(content.data(), content.size());
  Hash128 out;
  for (int i = 0; i < 8; ++i) {
    out[static_cast<size_t>(i)] =
        static_cast<uint8_t>(h.high64 >> (56 - 8 * i));
    out[static_cast<size_t>(8 + i)] =
        static_cast<uint8_t>(h.low64 >> (56 - 8 * i));
  }
  return out;
}

int64_t CacheImpl::Now() const { return NowMillis(options_.clock); }

void CacheImpl::RecordHit(std::string_view key, uint64_t serial,
                          uint64_t tokens, std::string_view model, int64_t now,
                          uint64_t* pending_hits) {
  bool wake = false;
  {
    std::lock_guard lock(pending_mu_);
    auto it = pending_.entries.find(AV(key));
    if (it == pending_.entries.end()) {
      HitBatch::Pending p;
      p.serial = serial;
      p.tokens = tokens;
      p.model = std::string(model);
      it = pending_.entries.emplace(std::string(key), std::move(p)).first;
      wake = pending_.entries.size() ==
             static_cast<size_t>(options_.flush_max_pending);
    } else if (it->second.serial != serial) {
      pending_.orphans.push_back(std::move(it->second));
      it->second = HitBatch::Pending{};
      it->second.serial = serial;
      it->second.tokens = tokens;
      it->second.model = std::string(model);
    }
    it->second.hits += 1;
    it->second.last_accessed = std::max(it->second.last_accessed, now);
    *pending_hits = it->second.hits;
  }
  if (wake) {
    {
      std::lock_guard lock(flusher_mu_);
      flush_wanted_ = true;
    }
    flusher_cv_.notify_one();
  }
}

void CacheImpl::RecordMiss(std::string_view expired_key) {
  std::lock_guard lock(pending_mu_);
  pending_.misses += 1;
  if (!expired_key.empty()) pending_.expired.insert(std::string(expired_key));
}

HitBatch CacheImpl::TakeBatch() {
  std::lock_guard lock(pending_mu_);
  HitBatch out = std::move(pending_);
  pending_ = HitBatch{};
  return out;
}

void CacheImpl::RestoreBatch(HitBatch&& batch) {
  std::lock_guard lock(pending_mu_);
  // Hits recorded meanwhile are newer: merge the old batch into them.
  HitBatch newer = std::move(pending_);
  pending_ = std::move(batch);
  pending_.MergeFrom(std::move(newer));
}

absl::Status CacheImpl::ApplyBatch(WriteTransaction& txn, const HitBatch& batch,
                                   int64_t now) {
  Deltas totals(kTotFieldCount);
  std::map<std::string, Deltas> groups;  // stats key -> deltas
  auto group = [&](const std::string& k) -> std::vector<int64_t>& {
    return groups.try_emplace(k, kGrpFieldCount).first->second.v;
  };
  totals.v[kTotLifetimeMisses] += static_cast<int64_t>(batch.misses);
  auto lifetime = [&](const HitBatch::Pending& p) {
    const auto saved = static_cast<int64_t>(p.hits * p.tokens);
    totals.v[kTotLifetimeHits] += static_cast<int64_t>(p.hits);
    totals.v[kTotLifetimeTokensSaved] += saved;
    std::vector<int64_t>& m = group(ModelStatsKey(p.model));
    m[kGrpLifetimeHits] += static_cast<int64_t>(p.hits);
    m[kGrpLifetimeTokensSaved] += saved;
  };
  for (const HitBatch::Pending& p : batch.orphans) lifetime(p);
  for (const auto& [key, p] : batch.entries) {
    lifetime(p);
    StatusOr<std::string_view> value = txn.Get(dbs_.entries, key);
    if (!value.ok()) {
      if (value.status().code() == StatusCode::kNotFound) continue;
      return ToAbsl(value.status());
    }
    absl::StatusOr<EntryMeta> meta = DecodeMeta(key, *value);
    if (!meta.ok()) return meta.status();
    if (meta->serial != p.serial) continue;  // removed and stored again
    std::string_view prefix;
    Hash128 hash{};
    ParseKey(key, &prefix, &hash);
    const int64_t new_last = std::max(meta->last_accessed, p.last_accessed);
    const uint64_t new_hits = meta->hit_count + p.hits;
    CTXKIT_RETURN_IF_ERROR(
        Del(txn, dbs_.lru, TimeIndexKey(meta->last_accessed, key)));
    CTXKIT_RETURN_IF_ERROR(
        txn.Put(dbs_.lru, TimeIndexKey(new_last, key), std::string_view()));
    CTXKIT_RETURN_IF_ERROR(
        Del(txn, dbs_.hits, HitsIndexKey(meta->hit_count, key)));
    CTXKIT_RETURN_IF_ERROR(
        txn.Put(dbs_.hits, HitsIndexKey(new_hits, key), std::string_view()));
    const auto hits = static_cast<int64_t>(p.hits);
    const auto saved = static_cast<int64_t>(p.hits * meta->tokens);
    totals.v[kTotHits] += hits;
    totals.v[kTotTokensSaved] += saved;
    if (meta->hit_count == 0) totals.v[kTotZeroHitEntries] -= 1;
    for (const std::string& gk :
         {PrefixStatsKey(prefix), ModelStatsKey(meta->model)}) {
      std::vector<int64_t>& g = group(gk);
      g[kGrpHits] += hits;
      g[kGrpTokensSaved] += saved;
    }
    meta->hit_count = new_hits;
    meta->last_accessed = new_last;
    CTXKIT_RETURN_IF_ERROR(txn.Put(dbs_.entries, key, EncodeMeta(*meta)));
  }
  CTXKIT_RETURN_IF_ERROR(ApplyDeltas(txn, dbs_.stats, kTotalsKey, totals.v));
  for (const auto& [k, d] : groups) {
    CTXKIT_RETURN_IF_ERROR(ApplyDeltas(txn, dbs_.stats, k, d.v));
  }
  for (const std::string& key : batch.expired) {
    StatusOr<std::string_view> value = txn.Get(dbs_.entries, key);
    if (!value.ok()) {
      if (value.status().code() == StatusCode::kNotFound) continue;
      return ToAbsl(value.status());
    }
    absl::StatusOr<EntryMeta> meta = DecodeMeta(key, *value);
    if (!meta.ok()) return meta.status();
    if (!Expired(meta->expires_at, now)) continue;  // refreshed since
    CTXKIT_RETURN_IF_ERROR(
        RemoveEntry(dbs_, txn, key, *meta, RemoveReason::kExpired));
  }
  return absl::OkStatus();
}

absl::Status CacheImpl::UpdateWithBatch(
    const std::function<absl::Status(WriteTransaction&, int64_t)>& fn,
    bool skip_if_empty) {
  // Held from taking the batch until it is committed (or restored), so that
  // a Flush() or Stats() returning after this one has begun sees its hits.
  std::lock_guard flush_lock(flush_mu_);
  HitBatch batch = TakeBatch();
  if (skip_if_empty && batch.empty()) return absl::OkStatus();
  const int64_t now = Now();
  absl::Status status = ToAbsl(store_.Update([&](WriteTransaction& txn) {
    if (absl::Status s = ApplyBatch(txn, batch, now); !s.ok()) {
      return ToPublic(s);
    }
    return ToPublic(fn(txn, now));
  }));
  if (!status.ok()) RestoreBatch(std::move(batch));
  return status;
}

absl::StatusOr<uint64_t> CacheImpl::RemoveExpired(WriteTransaction& txn,
                                                  int64_t now) {
  std::vector<std::string> keys;
  {
    StatusOr<Cursor> cursor = txn.NewCursor(dbs_.expiry);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
      if (cursor->key().size() < 8) continue;
      const int64_t at =
          SignedFromOrdered(ReadBigEndian64(cursor->key().data()));
      if (at > now) break;
      keys.emplace_back(cursor->key().substr(8));
    }
    CTXKIT_RETURN_IF_ERROR(cursor->status());
  }
  uint64_t removed = 0;
  for (const std::string& key : keys) {
    StatusOr<std::string_view> value = txn.Get(dbs_.entries, key);
    CTXKIT_RETURN_IF_ERROR(value.status());
    absl::StatusOr<EntryMeta> meta = DecodeMeta(key, *value);
    if (!meta.ok()) return meta.status();
    CTXKIT_RETURN_IF_ERROR(
        RemoveEntry(dbs_, txn, key, *meta, RemoveReason::kExpired));
    ++removed;
  }
  return removed;
}

namespace {

// XORed into the hash of a keyed entry's lookup, so that a lookup and a
// content with the same bytes land on different collision chains. Any
// constant works; this one is "ctxkit.keyed.v1\n" in ASCII.
constexpr Hash128 kKeyedHashMask = {0x63, 0x74, 0x78, 0x6b, 0x69, 0x74,
                                    0x2e, 0x6b, 0x65, 0x79, 0x65, 0x64,
                                    0x2e, 0x76, 0x31, 0x0a};

// Walks the collision chain of `base` (base, base-1, ... base-99; contiguous
// in key order), marking every index in use in `used` (size
// kMaxCollisions + 1) and stopping at the first key for which `is_match(key)`
// says true, which goes to `*match`.
template <typename Fn>
absl::Status WalkChain(const Transaction& txn, Database entries,
                       const std::string& base, std::vector<bool>* used,
                       std::optional<std::string>* match, Fn&& is_match) {
  StatusOr<Cursor> cursor = txn.NewCursor(entries);
  CTXKIT_RETURN_IF_ERROR(cursor.status());
  for (cursor->Seek(base); cursor->Valid() && cursor->key().starts_with(base);
       cursor->Next()) {
    std::string_view rest = cursor->key().substr(base.size());
    int n = 0;
    if (!rest.empty()) {
      if (rest.size() < 2 || rest[0] != '-') continue;
      for (char c : rest.substr(1)) n = n * 10 + (c - '0');
      if (n < 1 || n > kMaxCollisions) continue;
    }
    (*used)[static_cast<size_t>(n)] = true;
    absl::StatusOr<bool> matched = is_match(cursor->key());
    if (!matched.ok()) return matched.status();
    if (*matched) {
      *match = std::string(cursor->key());
      break;
    }
  }
  return ToAbsl(cursor->status());
}

// The serial of entry `key`, whose meta record is in `txn`.
absl::StatusOr<uint64_t> SerialOf(const Transaction& txn, Database entries,
                                  std::string_view key) {
  StatusOr<std::string_view> value = txn.Get(entries, key);
  CTXKIT_RETURN_IF_ERROR(value.status());
  MetaView meta{};
  if (!DecodeView(*value, &meta)) {
    return absl::DataLossError(
        absl::StrFormat("cache entry '%s' has a malformed record", key));
  }
  return meta.serial;
}

// Put's and PutKeyed's checks of their options.
absl::Status CheckPutOptions(const CachePutOptions& options) {
  CTXKIT_RETURN_IF_ERROR(CheckPrefix(options.prefix));
  CTXKIT_RETURN_IF_ERROR(
      CheckRange("ttl_ms", options.ttl_ms, 0, kCacheMaxTtlMs));
  CTXKIT_RETURN_IF_ERROR(
      CheckText("model", options.model, kCacheMaxModelBytes));
  if (!options.conversation_id.empty() && !IsUuid(options.conversation_id)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("conversation_id is not a lowercase UUID (%d bytes)",
                        options.conversation_id.size()));
  }
  return absl::OkStatus();
}

// A lookup is never echoed: it may be any bytes, and messages must stay
// valid UTF-8.
absl::Status CheckLookup(std::string_view lookup) {
  if (lookup.empty() || lookup.size() > kCacheMaxLookupBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("lookup is %d bytes; it must be 1 to %d bytes",
                        lookup.size(), kCacheMaxLookupBytes));
  }
  return absl::OkStatus();
}

// The first collision index of a chain not in `used`; RESOURCE_EXHAUSTED
// naming `field` when all kMaxCollisions + 1 are taken.
absl::StatusOr<int> FreeIndex(const std::vector<bool>& used,
                              std::string_view field, std::string_view base) {
  int n = 0;
  while (n <= kMaxCollisions && used[static_cast<size_t>(n)]) ++n;
  if (n > kMaxCollisions) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: %d different entries already share the hash of key '%s'", field,
        kMaxCollisions + 1, base));
  }
  return n;
}

}  // namespace

Hash128 CacheImpl::KeyedHashOf(std::string_view lookup) const {
  Hash128 hash = HashOf(lookup);
  for (size_t i = 0; i < hash.size(); ++i) hash[i] ^= kKeyedHashMask[i];
  return hash;
}

absl::Status CacheImpl::PreparePut(WriteTransaction& txn, int64_t now,
                                   std::string_view conversation_id) {
  // Expired entries go first: they must neither be found nor count against
  // capacity.
  absl::StatusOr<uint64_t> swept = RemoveExpired(txn, now);
  if (!swept.ok()) return swept.status();
  if (conversation_id.empty()) return absl::OkStatus();
  StatusOr<std::string_view> conv =
      txn.Get(dbs_.conversations, conversation_id);
  if (!conv.ok()) {
    if (conv.status().code() == StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrFormat(
          "conversation_id '%s' names no conversation", conversation_id));
    }
    return ToAbsl(conv.status());
  }
  return absl::OkStatus();
}

absl::Status CacheImpl::RefreshEntry(WriteTransaction& txn,
                                     const std::string& key, int64_t now,
                                     int64_t expires, CachePutResult* result) {
  StatusOr<std::string_view> value = txn.Get(dbs_.entries, key);
  CTXKIT_RETURN_IF_ERROR(value.status());
  absl::StatusOr<EntryMeta> meta = DecodeMeta(key, *value);
  if (!meta.ok()) return meta.status();
  if (meta->expires_at != 0) {
    CTXKIT_RETURN_IF_ERROR(
        Del(txn, dbs_.expiry, TimeIndexKey(meta->expires_at, key)));
  }
  if (expires != 0) {
    CTXKIT_RETURN_IF_ERROR(
        txn.Put(dbs_.expiry, TimeIndexKey(expires, key), std::string_view()));
  }
  if (now > meta->last_accessed) {
    CTXKIT_RETURN_IF_ERROR(
        Del(txn, dbs_.lru, TimeIndexKey(meta->last_accessed, key)));
    CTXKIT_RETURN_IF_ERROR(
        txn.Put(dbs_.lru, TimeIndexKey(now, key), std::string_view()));
    meta->last_accessed = now;
  }
  meta->expires_at = expires;
  CTXKIT_RETURN_IF_ERROR(txn.Put(dbs_.entries, key, EncodeMeta(*meta)));
  result->key = key;
  result->tokens = meta->tokens;
  result->created_at = meta->created_at;
  result->expires_at = expires;
  result->already_cached = true;
  return absl::OkStatus();
}

absl::Status CacheImpl::InsertEntry(WriteTransaction& txn, int64_t now,
                                    const std::string& key, const Hash128& hash,
                                    std::string_view content,
                                    std::optional<std::string_view> lookup,
                                    uint64_t tokens, int64_t expires,
                                    const CachePutOptions& options,
                                    CachePutResult* result) {
  const uint64_t size = content.size() + (lookup ? lookup->size() : 0);
  // Capacity: evict least recently accessed entries.
  absl::StatusOr<std::vector<uint64_t>> totals =
      ReadCounters(txn, dbs_.stats, kTotalsKey, kTotFieldCount);
  if (!totals.ok()) return totals.status();
  uint64_t entries = (*totals)[kTotEntries];
  uint64_t bytes = (*totals)[kTotSizeBytes];
  while ((options_.max_entries != 0 && entries + 1 > options_.max_entries) ||
         (options_.max_bytes != 0 && bytes + size > options_.max_bytes)) {
    std::string victim;
    {
      StatusOr<Cursor> cursor = txn.NewCursor(dbs_.lru);
      CTXKIT_RETURN_IF_ERROR(cursor.status());
      cursor->SeekToFirst();
      if (!cursor->Valid()) {
        CTXKIT_RETURN_IF_ERROR(cursor->status());
        break;
      }
      victim = std::string(cursor->key().substr(8));
    }
    StatusOr<std::string_view> value = txn.Get(dbs_.entries, victim);
    CTXKIT_RETURN_IF_ERROR(value.status());
    absl::StatusOr<EntryMeta> meta = DecodeMeta(victim, *value);
    if (!meta.ok()) return meta.status();
    CTXKIT_RETURN_IF_ERROR(
        RemoveEntry(dbs_, txn, victim, *meta, RemoveReason::kEvicted));
    entries -= 1;
    bytes -= meta->size_bytes;
  }
  totals = ReadCounters(txn, dbs_.stats, kTotalsKey, kTotFieldCount);
  if (!totals.ok()) return totals.status();

  EntryMeta meta;
  meta.serial = (*totals)[kTotNextSerial] + 1;
  meta.tokens = tokens;
  meta.created_at = now;
  meta.expires_at = expires;
  meta.last_accessed = now;
  meta.size_bytes = size;
  meta.model = options.model;
  meta.conversation_id = options.conversation_id;
  CTXKIT_RETURN_IF_ERROR(txn.Put(dbs_.entries, key, EncodeMeta(meta)));
  CTXKIT_RETURN_IF_ERROR(txn.Put(dbs_.content, key, content));
  if (lookup) {
    CTXKIT_RETURN_IF_ERROR(
        txn.Put(dbs_.lookup, key, EncodeLookupRow(meta.serial, *lookup)));
  } else if (dbs_.lookup.valid()) {
    // A row an older release left behind when it removed a keyed entry.
    CTXKIT_RETURN_IF_ERROR(Del(txn, dbs_.lookup, key));
  }
  CTXKIT_RETURN_IF_ERROR(
      txn.Put(dbs_.lru, TimeIndexKey(now, key), std::string_view()));
  if (expires != 0) {
    CTXKIT_RETURN_IF_ERROR(
        txn.Put(dbs_.expiry, TimeIndexKey(expires, key), std::string_view()));
  }
  CTXKIT_RETURN_IF_ERROR(
      txn.Put(dbs_.hash, HashIndexKey(hash, key), std::string_view()));
  CTXKIT_RETURN_IF_ERROR(
      txn.Put(dbs_.hits, HitsIndexKey(0, key), std::string_view()));
  if (!meta.conversation_id.empty()) {
    CTXKIT_RETURN_IF_ERROR(txn.Put(dbs_.conv,
                                   ConvIndexKey(meta.conversation_id, key),
                                   std::string_view()));
  }
  std::vector<uint64_t>& t = *totals;
  t[kTotEntries] += 1;
  t[kTotSizeBytes] += size;
  t[kTotTokens] += tokens;
  t[kTotZeroHitEntries] += 1;
  t[kTotNextSerial] = meta.serial;
  CTXKIT_RETURN_IF_ERROR(WriteCounters(txn, dbs_.stats, kTotalsKey, t));
  for (const std::string& gk :
       {PrefixStatsKey(options.prefix), ModelStatsKey(options.model)}) {
    std::vector<int64_t> d(kGrpFieldCount, 0);
    d[kGrpEntries] = 1;
    d[kGrpSizeBytes] = static_cast<int64_t>(size);
    d[kGrpTokens] = static_cast<int64_t>(tokens);
    CTXKIT_RETURN_IF_ERROR(ApplyDeltas(txn, dbs_.stats, gk, d));
  }
  result->key = key;
  result->tokens = tokens;
  result->created_at = now;
  result->expires_at = expires;
  return absl::OkStatus();
}

absl::StatusOr<CachePutResult> CacheImpl::Put(std::string_view content,
                                              const CachePutOptions& options) {
  CTXKIT_RETURN_IF_ERROR(CheckText("content", content, kCacheMaxContentBytes));
  CTXKIT_RETURN_IF_ERROR(CheckPutOptions(options));
  if (options_.max_bytes != 0 && content.size() > options_.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("content is %d bytes; the cache's max_bytes is %d",
                        content.size(), options_.max_bytes));
  }
  StatusOr<TokenCount> count =
      ModelRegistry::Default().CountTokens(options.model, content);
  CTXKIT_RETURN_IF_ERROR(count.status());
  const uint64_t tokens = count->tokens;
  const Hash128 hash = HashOf(content);
  const std::string base = KeyFor(options.prefix, hash, 0);

  CachePutResult result;
  absl::Status status =
      UpdateWithBatch([&](WriteTransaction& txn, int64_t now) -> absl::Status {
        result = CachePutResult{};
        const int64_t expires = options.ttl_ms == 0 ? 0 : now + options.ttl_ms;
        CTXKIT_RETURN_IF_ERROR(PreparePut(txn, now, options.conversation_id));

        std::vector<bool> used(kMaxCollisions + 1, false);
        std::optional<std::string> same_key;
        CTXKIT_RETURN_IF_ERROR(WalkChain(
            txn, dbs_.entries, base, &used, &same_key,
            [&](std::string_view key) -> absl::StatusOr<bool> {
              StatusOr<std::string_view> stored = txn.Get(dbs_.content, key);
              CTXKIT_RETURN_IF_ERROR(stored.status());
              if (*stored != content) return false;
              // Equal bytes under a colliding keyed entry are its value, which
              // PutKeyed may replace: never dedupe into it.
              absl::StatusOr<uint64_t> serial =
                  SerialOf(txn, dbs_.entries, key);
              if (!serial.ok()) return serial.status();
              absl::StatusOr<std::optional<std::string_view>> keyed =
                  KeyedLookupOf(txn, dbs_, key, *serial);
              if (!keyed.ok()) return keyed.status();
              return !keyed->has_value();
            }));
        if (same_key)
          return RefreshEntry(txn, *same_key, now, expires, &result);
        absl::StatusOr<int> n = FreeIndex(used, "content", base);
        if (!n.ok()) return n.status();
        return InsertEntry(txn, now, KeyFor(options.prefix, hash, *n), hash,
                           content, std::nullopt, tokens, expires, options,
                           &result);
      });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<CachePutResult> CacheImpl::PutKeyed(
    std::string_view lookup, std::string_view value,
    const CachePutOptions& options) {
  CTXKIT_RETURN_IF_ERROR(CheckLookup(lookup));
  CTXKIT_RETURN_IF_ERROR(CheckText("value", value, kCacheMaxContentBytes));
  CTXKIT_RETURN_IF_ERROR(CheckPutOptions(options));
  if (options_.max_bytes != 0 &&
      value.size() + lookup.size() > options_.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "value and lookup are %d bytes; the cache's max_bytes is %d",
        value.size() + lookup.size(), options_.max_bytes));
  }
  StatusOr<TokenCount> count =
      ModelRegistry::Default().CountTokens(options.model, value);
  CTXKIT_RETURN_IF_ERROR(count.status());
  const uint64_t tokens = count->tokens;
  const Hash128 hash = KeyedHashOf(lookup);
  const std::string base = KeyFor(options.prefix, hash, 0);

  CachePutResult result;
  absl::Status status =
      UpdateWithBatch([&](WriteTransaction& txn, int64_t now) -> absl::Status {
        result = CachePutResult{};
        const int64_t expires = options.ttl_ms == 0 ? 0 : now + options.ttl_ms;
        CTXKIT_RETURN_IF_ERROR(PreparePut(txn, now, options.conversation_id));

        std::vector<bool> used(kMaxCollisions + 1, false);
        std::optional<std::string> same_key;
        CTXKIT_RETURN_IF_ERROR(
            WalkChain(txn, dbs_.entries, base, &used, &same_key,
                      [&](std::string_view key) -> absl::StatusOr<bool> {
                        absl::StatusOr<uint64_t> serial =
                            SerialOf(txn, dbs_.entries, key);
                        if (!serial.ok()) return serial.status();
                        absl::StatusOr<std::optional<std::string_view>> keyed =
                            KeyedLookupOf(txn, dbs_, key, *serial);
                        if (!keyed.ok()) return keyed.status();
                        return keyed->has_value() && **keyed == lookup;
                      }));
        if (same_key) {
          StatusOr<std::string_view> stored = txn.Get(dbs_.content, *same_key);
          CTXKIT_RETURN_IF_ERROR(stored.status());
          if (*stored == value) {
            return RefreshEntry(txn, *same_key, now, expires, &result);
          }
          // A new value for the lookup: a new entry under the same key (new
          // serial, hits from zero); hits of the old one stay in the lifetime
          // figures.
          StatusOr<std::string_view> old = txn.Get(dbs_.entries, *same_key);
          CTXKIT_RETURN_IF_ERROR(old.status());
          absl::StatusOr<EntryMeta> meta = DecodeMeta(*same_key, *old);
          if (!meta.ok()) return meta.status();
          CTXKIT_RETURN_IF_ERROR(RemoveEntry(dbs_, txn, *same_key, *meta,
                                             RemoveReason::kExplicit));
          return InsertEntry(txn, now, *same_key, hash, value, lookup, tokens,
                             expires, options, &result);
        }
        absl::StatusOr<int> n = FreeIndex(used, "lookup", base);
        if (!n.ok()) return n.status();
        return InsertEntry(txn, now, KeyFor(options.prefix, hash, *n), hash,
                           value, lookup, tokens, expires, options, &result);
      });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<CacheEntry> CacheImpl::GetKeyed(std::string_view lookup,
                                               std::string_view prefix) {
  CTXKIT_RETURN_IF_ERROR(CheckLookup(lookup));
  CTXKIT_RETURN_IF_ERROR(CheckPrefix(prefix));
  const std::string base = KeyFor(prefix, KeyedHashOf(lookup), 0);
  const int64_t now = Now();
  std::string expired_key;
  {
    StatusOr<ReadTransaction> txn = store_.BeginRead();
    CTXKIT_RETURN_IF_ERROR(txn.status());
    std::vector<bool> used(kMaxCollisions + 1, false);
    std::optional<std::string> key;
    MetaView meta{};
    CTXKIT_RETURN_IF_ERROR(WalkChain(
        *txn, dbs_.entries, base, &used, &key,
        [&](std::string_view k) -> absl::StatusOr<bool> {
          StatusOr<std::string_view> value = txn->Get(dbs_.entries, k);
          CTXKIT_RETURN_IF_ERROR(value.status());
          if (!DecodeView(*value, &meta)) {
            return absl::DataLossError(
                absl::StrFormat("cache entry '%s' has a malformed record", k));
          }
          absl::StatusOr<std::optional<std::string_view>> keyed =
              KeyedLookupOf(*txn, dbs_, k, meta.serial);
          if (!keyed.ok()) return keyed.status();
          return keyed->has_value() && **keyed == lookup;
        }));
    if (key) {
      // One entry per lookup and prefix: PutKeyed replaces, never adds.
      if (Expired(meta.expires_at, now)) {
        expired_key = *key;
      } else {
        StatusOr<std::string_view> content = txn->Get(dbs_.content, *key);
        CTXKIT_RETURN_IF_ERROR(content.status());
        CacheEntry entry;
        entry.key = *key;
        entry.content.assign(content->data(), content->size());
        entry.model.assign(meta.model.data(), meta.model.size());
        entry.conversation_id.assign(meta.conversation_id.data(),
                                     meta.conversation_id.size());
        uint64_t pending = 0;
        RecordHit(*key, meta.serial, meta.tokens, meta.model, now, &pending);
        entry.tokens = meta.tokens;
        entry.hit_count = meta.hit_count + pending;
        entry.created_at = meta.created_at;
        entry.last_accessed = std::max(now, meta.last_accessed);
        entry.expires_at = meta.expires_at;
        return entry;
      }
    }
  }
  RecordMiss(expired_key);
  return absl::NotFoundError(
      expired_key.empty()
          ? absl::StrFormat("lookup is not in the cache under prefix '%s'",
                            prefix)
          : absl::StrFormat("lookup under prefix '%s' has expired (key '%s')",
                            prefix, expired_key));
}

void CacheImpl::Remember(std::string_view key, MemoEntry entry) {
  const size_t bytes = key.size() + entry.content.size() + entry.model.size() +
                       entry.conversation_id.size();
  if (bytes > kMemoMaxBytes / 16) return;  // large entries are not kept
  std::lock_guard lock(memo_mu_);
  const auto old = memo_.find(AV(key));
  if (old != memo_.end()) {
    memo_bytes_ -= key.size() + old->second.content.size() +
                   old->second.model.size() +
                   old->second.conversation_id.size();
    memo_.erase(old);
  }
  if (memo_.size() >= kMemoMaxEntries || memo_bytes_ + bytes > kMemoMaxBytes) {
    memo_.clear();
    memo_bytes_ = 0;
  }
  memo_.emplace(std::string(key), std::move(entry));
  memo_bytes_ += bytes;
}

absl::StatusOr<CacheEntry> CacheImpl::Get(std::string_view key) {
  std::string_view prefix;
  Hash128 hash{};
  if (key.size() > 200 || !ParseKey(key, &prefix, &hash)) {
    // The key is not echoed: it may be any bytes, and messages must stay
    // valid UTF-8.
    return absl::InvalidArgumentError(absl::StrFormat(
        "key is malformed (%d bytes); expected <prefix>:<32 lowercase hex "
        "digits>, optionally followed by -<1..99>",
        key.size()));
  }
  const int64_t now = Now();
  CacheEntry entry;
  {
    const uint64_t current = store_.LastCommittedTransactionId();
    MemoEntry hot;
    bool found = false;
    {
      std::lock_guard lock(memo_mu_);
      const auto it = memo_.find(AV(key));
      if (it != memo_.end() && it->second.snapshot == current &&
          !Expired(it->second.expires_at, now)) {
        found = true;
        hot.serial = it->second.serial;
        hot.tokens = it->second.tokens;
        hot.hit_count = it->second.hit_count;
        hot.created_at = it->second.created_at;
        hot.expires_at = it->second.expires_at;
        hot.last_accessed = it->second.last_accessed;
        entry.content = it->second.content;
        entry.model = it->second.model;
        entry.conversation_id = it->second.conversation_id;
      }
    }
    if (found) {
      entry.key.assign(key.data(), key.size());
      uint64_t pending = 0;
      RecordHit(key, hot.serial, hot.tokens, entry.model, now, &pending);
      entry.tokens = hot.tokens;
      entry.hit_count = hot.hit_count + pending;
      entry.created_at = hot.created_at;
      entry.last_accessed = std::max(now, hot.last_accessed);
      entry.expires_at = hot.expires_at;
      return entry;
    }
  }
  MetaView meta{};
  bool expired = false;
  {
    StatusOr<ReadTransaction> txn = store_.BeginRead();
    CTXKIT_RETURN_IF_ERROR(txn.status());
    StatusOr<std::string_view> value = txn->Get(dbs_.entries, key);
    if (!value.ok()) {
      if (value.status().code() != StatusCode::kNotFound) {
        return ToAbsl(value.status());
      }
    } else {
      if (!DecodeView(*value, &meta)) {
        return absl::DataLossError(
            absl::StrFormat("cache entry '%s' has a malformed record", key));
      }
      if (Expired(meta.expires_at, now)) {
        expired = true;
      } else {
        StatusOr<std::string_view> content = txn->Get(dbs_.content, key);
        CTXKIT_RETURN_IF_ERROR(content.status());
        entry.content.assign(content->data(), content->size());
        entry.model.assign(meta.model.data(), meta.model.size());
        entry.conversation_id.assign(meta.conversation_id.data(),
                                     meta.conversation_id.size());
        entry.key.assign(key.data(), key.size());
        MemoEntry keep;
        keep.snapshot = txn->snapshot_id();
        keep.serial = meta.serial;
        keep.tokens = meta.tokens;
        keep.hit_count = meta.hit_count;
        keep.created_at = meta.created_at;
        keep.expires_at = meta.expires_at;
        keep.last_accessed = meta.last_accessed;
        keep.model = entry.model;
        keep.conversation_id = entry.conversation_id;
        keep.content = entry.content;
        Remember(key, std::move(keep));
        uint64_t pending = 0;
        RecordHit(key, meta.serial, meta.tokens, meta.model, now, &pending);
        entry.tokens = meta.tokens;
        entry.hit_count = meta.hit_count + pending;
        entry.created_at = meta.created_at;
        entry.last_accessed = std::max(now, meta.last_accessed);
        entry.expires_at = meta.expires_at;
        return entry;
      }
    }
  }
  RecordMiss(expired ? key : std::string_view());
  return absl::NotFoundError(
      expired ? absl::StrFormat("key '%s' has expired", key)
              : absl::StrFormat("key '%s' is not in the cache", key));
}

absl::StatusOr<CacheCheckResult> CacheImpl::Check(
    std::string_view content, std::optional<std::string_view> prefix) {
  CTXKIT_RETURN_IF_ERROR(CheckText("content", content, kCacheMaxContentBytes));
  if (prefix) CTXKIT_RETURN_IF_ERROR(CheckPrefix(*prefix));
  const Hash128 hash = HashOf(content);
  const int64_t now = Now();
  std::string expired_key;
  {
    StatusOr<ReadTransaction> txn = store_.BeginRead();
    CTXKIT_RETURN_IF_ERROR(txn.status());
    StatusOr<Cursor> cursor = txn->NewCursor(dbs_.hash);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    const std::string_view hash_bytes(
        reinterpret_cast<const char*>(hash.data()), hash.size());
    for (cursor->Seek(hash_bytes);
         cursor->Valid() && cursor->key().starts_with(hash_bytes);
         cursor->Next()) {
      const std::string_view key = cursor->key().substr(hash.size());
      if (prefix && !(key.size() > prefix->size() && key.starts_with(*prefix) &&
                      key[prefix->size()] == ':')) {
        continue;
      }
      StatusOr<std::string_view> value = txn->Get(dbs_.entries, key);
      CTXKIT_RETURN_IF_ERROR(value.status());
      MetaView meta{};
      if (!DecodeView(*value, &meta)) {
        return absl::DataLossError(
            absl::StrFormat("cache entry '%s' has a malformed record", key));
      }
      StatusOr<std::string_view> stored = txn->Get(dbs_.content, key);
      CTXKIT_RETURN_IF_ERROR(stored.status());
      if (*stored != content) continue;  // a hash collision
      // A keyed entry whose value has these bytes is not "this content
      // stored": PutKeyed may replace its value.
      absl::StatusOr<std::optional<std::string_view>> keyed =
          KeyedLookupOf(*txn, dbs_, key, meta.serial);
      if (!keyed.ok()) return keyed.status();
      if (keyed->has_value()) continue;
      if (Expired(meta.expires_at, now)) {
        if (expired_key.empty()) expired_key = std::string(key);
        continue;
      }
      CacheCheckResult result;
      result.exists = true;
      result.key = std::string(key);
      result.tokens_saved = meta.tokens;
      uint64_t pending = 0;
      RecordHit(key, meta.serial, meta.tokens, meta.model, now, &pending);
      return result;
    }
    CTXKIT_RETURN_IF_ERROR(cursor->status());
  }
  RecordMiss(expired_key);
  return CacheCheckResult{};
}

absl::StatusOr<uint64_t> CacheImpl::Clear(
    std::optional<std::string_view> prefix) {
  if (prefix) CTXKIT_RETURN_IF_ERROR(CheckPrefix(*prefix));
  uint64_t removed = 0;
  absl::Status status =
      UpdateWithBatch([&](WriteTransaction& txn, int64_t) -> absl::Status {
        removed = 0;
        if (prefix) {
          const std::string start = absl::StrFormat("%s:", *prefix);
          std::vector<std::string> keys;
          {
            StatusOr<Cursor> cursor = txn.NewCursor(dbs_.entries);
            CTXKIT_RETURN_IF_ERROR(cursor.status());
            for (cursor->Seek(start);
                 cursor->Valid() && cursor->key().starts_with(start);
                 cursor->Next()) {
              keys.emplace_back(cursor->key());
            }
            CTXKIT_RETURN_IF_ERROR(cursor->status());
          }
          for (const std::string& key : keys) {
            StatusOr<std::string_view> value = txn.Get(dbs_.entries, key);
            CTXKIT_RETURN_IF_ERROR(value.status());
            absl::StatusOr<EntryMeta> meta = DecodeMeta(key, *value);
            if (!meta.ok()) return meta.status();
            CTXKIT_RETURN_IF_ERROR(
                RemoveEntry(dbs_, txn, key, *meta, RemoveReason::kExplicit));
            ++removed;
          }
          return absl::OkStatus();
        }
        // Everything: drop the tables whole, zero the live counters and keep
        // the lifetime ones.
        absl::StatusOr<std::vector<uint64_t>> t =
            ReadCounters(txn, dbs_.stats, kTotalsKey, kTotFieldCount);
        if (!t.ok()) return t.status();
        removed = (*t)[kTotEntries];
        for (int f : {kTotEntries, kTotSizeBytes, kTotTokens, kTotHits,
                      kTotTokensSaved, kTotZeroHitEntries}) {
          (*t)[static_cast<size_t>(f)] = 0;
        }
        CTXKIT_RETURN_IF_ERROR(WriteCounters(txn, dbs_.stats, kTotalsKey, *t));
        std::vector<std::pair<std::string, std::vector<uint64_t>>> groups;
        {
          StatusOr<Cursor> cursor = txn.NewCursor(dbs_.stats);
          CTXKIT_RETURN_IF_ERROR(cursor.status());
          for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
            const std::string_view k = cursor->key();
            if (k.starts_with("p") || k.starts_with("m")) {
              groups.emplace_back(std::string(k), std::vector<uint64_t>());
            }
          }
          CTXKIT_RETURN_IF_ERROR(cursor->status());
        }
        for (auto& [k, f] : groups) {
          absl::StatusOr<std::vector<uint64_t>> g =
              ReadCounters(txn, dbs_.stats, k, kGrpFieldCount);
          if (!g.ok()) return g.status();
          for (int i : {kGrpEntries, kGrpSizeBytes, kGrpTokens, kGrpHits,
                        kGrpTokensSaved}) {
            (*g)[static_cast<size_t>(i)] = 0;
          }
          CTXKIT_RETURN_IF_ERROR(WriteCounters(txn, dbs_.stats, k, *g));
        }
        for (Database db : {dbs_.entries, dbs_.content, dbs_.lru, dbs_.expiry,
                            dbs_.hash, dbs_.conv, dbs_.hits}) {
          CTXKIT_RETURN_IF_ERROR(txn.Clear(db));
        }
        if (dbs_.lookup.valid()) {
          CTXKIT_RETURN_IF_ERROR(txn.Clear(dbs_.lookup));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return removed;
}

absl::StatusOr<uint64_t> CacheImpl::Sweep() {
  uint64_t removed = 0;
  absl::Status status =
      UpdateWithBatch([&](WriteTransaction& txn, int64_t now) -> absl::Status {
        absl::StatusOr<uint64_t> n = RemoveExpired(txn, now);
        if (!n.ok()) return n.status();
        removed = *n;
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return removed;
}

absl::Status CacheImpl::Flush() {
  return UpdateWithBatch(
      [](WriteTransaction&, int64_t) { return absl::OkStatus(); },
      /*skip_if_empty=*/true);
}

absl::StatusOr<CacheStats> CacheImpl::Stats(int64_t top_n) {
  CTXKIT_RETURN_IF_ERROR(CheckRange("top_n", top_n, 0, 1000));
  if (!store_.read_only()) CTXKIT_RETURN_IF_ERROR(Flush());
  CacheStats s;
  s.max_entries = options_.max_entries;
  s.max_bytes = options_.max_bytes;
  StatusOr<ReadTransaction> txn = store_.BeginRead();
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
    StatusOr<Cursor> cursor = txn->NewCursor(dbs_.stats);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    std::vector<std::string> keys;
    for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
      keys.emplace_back(cursor->key());
    }
    CTXKIT_RETURN_IF_ERROR(cursor->status());
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
    StatusOr<Cursor> cursor = txn->NewCursor(dbs_.hits);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    std::vector<std::pair<std::string, uint64_t>> top;
    for (cursor->SeekToLast();
         cursor->Valid() && top.size() < static_cast<size_t>(top_n);
         cursor->Prev()) {
      const uint64_t hits = ReadBigEndian64(cursor->key().data());
      if (hits == 0) break;
      top.emplace_back(std::string(cursor->key().substr(8)), hits);
    }
    CTXKIT_RETURN_IF_ERROR(cursor->status());
    for (const auto& [key, hits] : top) {
      StatusOr<std::string_view> value = txn->Get(dbs_.entries, key);
      CTXKIT_RETURN_IF_ERROR(value.status());
      MetaView meta{};
      if (!DecodeView(*value, &meta)) {
        return absl::DataLossError(
            absl::StrFormat("cache entry '%s' has a malformed record", key));
      }
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

StatusOr<std::unique_ptr<Cache>> Cache::Open(Store& store,
                                             CacheOptions options) {
  absl::StatusOr<std::unique_ptr<internal::CacheImpl>> impl =
      internal::CacheImpl::Open(store, std::move(options));
  if (!impl.ok()) return ToPublic(impl.status());
  return std::unique_ptr<Cache>(new Cache(std::move(*impl)));
}

Cache::Cache(std::unique_ptr<internal::CacheImpl> impl)
    : impl_(std::move(impl)) {}
Cache::~Cache() = default;

StatusOr<CachePutResult> Cache::Put(std::string_view content,
                                    const CachePutOptions& options) {
  return ToPublic(impl_->Put(content, options));
}
StatusOr<CacheEntry> Cache::Get(std::string_view key) {
  return ToPublic(impl_->Get(key));
}
StatusOr<CachePutResult> Cache::PutKeyed(std::string_view lookup,
                                         std::string_view value,
                                         const CachePutOptions& options) {
  return ToPublic(impl_->PutKeyed(lookup, value, options));
}
StatusOr<CacheEntry> Cache::GetKeyed(std::string_view lookup,
                                     std::string_view prefix) {
  return ToPublic(impl_->GetKeyed(lookup, prefix));
}
StatusOr<CacheCheckResult> Cache::Check(
    std::string_view content, std::optional<std::string_view> prefix) {
  return ToPublic(impl_->Check(content, prefix));
}
StatusOr<uint64_t> Cache::Clear(std::optional<std::string_view> prefix) {
  return ToPublic(impl_->Clear(prefix));
}
StatusOr<uint64_t> Cache::Sweep() { return ToPublic(impl_->Sweep()); }
Status Cache::Flush() { return ToPublic(impl_->Flush()); }
StatusOr<CacheStats> Cache::Stats(int64_t top_n) {
  return ToPublic(impl_->Stats(top_n));
}

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
