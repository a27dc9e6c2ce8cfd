// The implementation behind ctxkit::Cache, and a test seam to replace the
// content hash (so tests can force XXH3 collisions). Its methods are in
// cache.cc (opening, hashes), cache_put.cc, cache_get.cc, cache_hits.cc
// (pending hits and their flush), cache_removal.cc and cache_stats.cc.

#ifndef CTXKIT_LIB_CACHE_CACHE_IMPL_H_
#define CTXKIT_LIB_CACHE_CACHE_IMPL_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/cache.h"
#include "lib/cache/cache_format.h"

namespace ctxkit::internal {

// Hits and misses read since the last flush.
struct HitBatch {
  struct Pending {
    std::string key;
    uint64_t hits = 0;
    uint64_t tokens = 0;
    int64_t last_accessed = 0;
    std::string model;
  };
  // By the serial of the entry hit: unique per creation of an entry, so the
  // hits of an entry replaced under the same key before the flush stay
  // apart (they count in lifetime figures only), and a hit finds its slot
  // by an integer, not by hashing and comparing its key.
  absl::flat_hash_map<uint64_t, Pending> entries;
  absl::flat_hash_set<std::string> expired;  // seen expired by a read
  uint64_t misses = 0;

  bool empty() const {
    return entries.empty() && expired.empty() && misses == 0;
  }
  void MergeFrom(HitBatch&& other);
};

class CacheImpl {
 public:
  using HashFn = std::function<Hash128(std::string_view)>;

  static absl::StatusOr<std::unique_ptr<CacheImpl>> Open(Store& store,
                                                         CacheOptions options);
  ~CacheImpl();

  absl::StatusOr<CachePutResult> Put(std::string_view content,
                                     const CachePutOptions& options);
  absl::StatusOr<CacheEntry> Get(std::string_view key);
  absl::StatusOr<CachePutResult> PutKeyed(std::string_view lookup,
                                          std::string_view value,
                                          const CachePutOptions& options);
  absl::StatusOr<CacheEntry> GetKeyed(std::string_view lookup,
                                      std::string_view prefix);
  absl::StatusOr<CacheCheckResult> Check(
      std::string_view content, std::optional<std::string_view> prefix);
  absl::StatusOr<uint64_t> Clear(std::optional<std::string_view> prefix);
  absl::StatusOr<uint64_t> Sweep();
  absl::Status Flush();
  absl::StatusOr<CacheStats> Stats(int64_t top_n);

  // Test seam: replaces XXH3-128 (call before any use).
  void SetHashForTesting(HashFn fn) { hash_fn_ = std::move(fn); }

 private:
  CacheImpl(Store& store, CacheOptions options, CacheDbs dbs);

  Hash128 HashOf(std::string_view content) const;
  // HashOf(lookup) XORed with a constant mask: keyed entries' hashes.
  Hash128 KeyedHashOf(std::string_view lookup) const;
  // Put's and PutKeyed's one path, once each has checked its arguments:
  // stores `content` as a content-addressed entry or, with `lookup`, as the
  // value of a keyed entry; an equal entry already there is refreshed
  // instead, and a keyed entry with another value is replaced.
  absl::StatusOr<CachePutResult> PutEntry(
      std::string_view content, std::optional<std::string_view> lookup,
      const CachePutOptions& options);
  // The start of every put's transaction: removes expired entries, then
  // NOT_FOUND naming a non-empty `conversation_id` that names no
  // conversation in `txn`.
  absl::Status PreparePut(WriteTransaction& txn, int64_t now,
                          std::string_view conversation_id);
  // Known content put again: refreshes entry `key`'s TTL and last access and
  // fills `result` (already_cached).
  absl::Status RefreshEntry(WriteTransaction& txn, const std::string& key,
                            int64_t now, int64_t expires,
                            CachePutResult* result);
  // Evicts for capacity, then stores a new entry under `key` (free) with
  // its indexes and statistics; `lookup` makes it a keyed entry, whose size
  // is content plus lookup bytes.
  absl::Status InsertEntry(WriteTransaction& txn, int64_t now,
                           const std::string& key, const Hash128& hash,
                           std::string_view content,
                           std::optional<std::string_view> lookup,
                           uint64_t tokens, int64_t expires,
                           const CachePutOptions& options,
                           CachePutResult* result);
  int64_t Now() const;
  // Counts one hit on entry `key` (of `serial`), read with `stored_hits`
  // in a snapshot whose id is `snapshot`, and returns its hit count with
  // this hit and every hit the snapshot cannot show: those pending, those of
  // a batch still in flight, and, when a batch committed after the snapshot
  // may hold some, the count read again in a new snapshot.
  uint64_t RecordHit(std::string_view key, uint64_t serial, uint64_t tokens,
                     std::string_view model, int64_t now, uint64_t snapshot,
                     uint64_t stored_hits);
  // The hits on the entry of `serial` that a snapshot `snapshot` cannot
  // show, or nullopt when a batch this process committed after it may hold
  // some.
  // Requires pending_mu_.
  std::optional<uint64_t> UnflushedHitsLocked(uint64_t serial,
                                              uint64_t snapshot) const;
  // The hits on the entry of `serial` in the batch in flight that a
  // snapshot `snapshot` cannot show. Requires pending_mu_.
  uint64_t InFlightHitsLocked(uint64_t serial, uint64_t snapshot) const;
  void RecordMiss(std::string_view expired_key);
  // Applies `batch` in `txn`; reads `now` to re-check expiry.
  absl::Status ApplyBatch(WriteTransaction& txn, const HitBatch& batch,
                          int64_t now);
  // Runs `fn` after applying the pending batch, in one Update (none at all
  // when `skip_if_empty` and nothing is pending).
  absl::Status UpdateWithBatch(
      const std::function<absl::Status(WriteTransaction&, int64_t now)>& fn,
      bool skip_if_empty = false);
  absl::StatusOr<uint64_t> RemoveExpired(WriteTransaction& txn, int64_t now);
  void FlusherLoop();
  Store& store_;
  const CacheOptions options_;
  const CacheDbs dbs_;
  HashFn hash_fn_;

  // Serializes batch writers; readers never take it.
  std::mutex flush_mu_;
  std::mutex pending_mu_;
  HitBatch pending_;  // guarded by pending_mu_
  // The batch being written (UpdateWithBatch): its hits are in no snapshot
  // older than its commit, so a read that counts hits must still add them.
  // Replaced and cleared only with both flush_mu_ and pending_mu_ held; the
  // writer reads it with flush_mu_ held, readers with pending_mu_ held.
  HitBatch in_flight_;
  // The id its commit will have, once its write transaction has begun
  // (0 before): snapshots from that id on show its hits.
  uint64_t in_flight_commit_ = 0;  // guarded by pending_mu_
  // The id of the last commit of a batch with hits; a snapshot older than it
  // may lack hits that are no longer pending nor in flight.
  uint64_t flushed_commit_ = 0;  // guarded by pending_mu_

  std::mutex flusher_mu_;
  std::condition_variable flusher_cv_;
  bool stop_ = false;          // guarded by flusher_mu_
  bool flush_wanted_ = false;  // guarded by flusher_mu_
  std::thread flusher_;
};

class CacheTestPeer {
 public:
  static void SetHash(Cache& cache, CacheImpl::HashFn fn) {
    cache.impl_->SetHashForTesting(std::move(fn));
  }
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CACHE_CACHE_IMPL_H_
