// Hits and misses: recorded in memory by the reads, written in batches by
// the flusher thread, by Flush(), and at the start of every write
// (UpdateWithBatch), so that a read costs no write transaction.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/cache/cache_impl.h"
#include "lib/cache/cache_rows.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {

void HitBatch::MergeFrom(HitBatch&& other) {
  for (auto& [serial, p] : other.entries) {
    auto [it, inserted] = entries.try_emplace(serial, p);
    if (inserted) continue;
    it->second.hits += p.hits;
    it->second.last_accessed =
        std::max(it->second.last_accessed, p.last_accessed);
  }
  for (const auto& k : other.expired) expired.insert(k);
  misses += other.misses;
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
    // A failed flush keeps its batch (UpdateWithBatch); the next one retries.
    (void)Flush();
    lock.lock();
  }
}

uint64_t CacheImpl::RecordHit(std::string_view key, uint64_t serial,
                              uint64_t tokens, std::string_view model,
                              int64_t now, uint64_t snapshot,
                              uint64_t stored_hits) {
  bool wake = false;
  std::optional<uint64_t> unflushed;
  {
    std::lock_guard lock(pending_mu_);
    auto [it, inserted] = pending_.entries.try_emplace(serial);
    if (inserted) {
      it->second.key.assign(key.data(), key.size());
      it->second.tokens = tokens;
      it->second.model.assign(model.data(), model.size());
      wake = pending_.entries.size() ==
             static_cast<size_t>(options_.flush_max_pending);
    }
    it->second.hits += 1;
    it->second.last_accessed = std::max(it->second.last_accessed, now);
    // UnflushedHitsLocked, without looking the entry up in pending_ again.
    if (snapshot >= flushed_commit_) {
      unflushed = it->second.hits + InFlightHitsLocked(serial, snapshot);
    }
  }
  if (wake) {
    {
      std::lock_guard lock(flusher_mu_);
      flush_wanted_ = true;
    }
    flusher_cv_.notify_one();
  }
  // A batch was committed since the snapshot: read the stored count again.
  // A new snapshot is at least as new as that commit, so one more read
  // suffices unless yet another batch is committed meanwhile.
  for (int attempt = 0; !unflushed && attempt < 4; ++attempt) {
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
    if (!txn.ok()) break;
    absl::StatusOr<MetaView> meta = ReadView(*txn, dbs_.entries, key);
    // Removed or stored again meanwhile: the count read first stands.
    if (!meta.ok() || meta->serial != serial) break;
    stored_hits = meta->hit_count;
    std::lock_guard lock(pending_mu_);
    unflushed = UnflushedHitsLocked(serial, txn->snapshot_id());
  }
  if (!unflushed) {
    std::lock_guard lock(pending_mu_);
    unflushed = UnflushedHitsLocked(serial, flushed_commit_);
  }
  return stored_hits + *unflushed;
}

std::optional<uint64_t> CacheImpl::UnflushedHitsLocked(
    uint64_t serial, uint64_t snapshot) const {
  if (snapshot < flushed_commit_) return std::nullopt;
  uint64_t hits = InFlightHitsLocked(serial, snapshot);
  if (const auto it = pending_.entries.find(serial);
      it != pending_.entries.end()) {
    hits += it->second.hits;
  }
  return hits;
}

uint64_t CacheImpl::InFlightHitsLocked(uint64_t serial,
                                       uint64_t snapshot) const {
  if (in_flight_.entries.empty()) return 0;
  if (in_flight_commit_ != 0 && snapshot >= in_flight_commit_) return 0;
  const auto it = in_flight_.entries.find(serial);
  return it != in_flight_.entries.end() ? it->second.hits : 0;
}

void CacheImpl::RecordMiss(std::string_view expired_key) {
  std::lock_guard lock(pending_mu_);
  pending_.misses += 1;
  if (!expired_key.empty()) pending_.expired.insert(std::string(expired_key));
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
  for (const auto& [serial, p] : batch.entries) {
    lifetime(p);
    const std::string& key = p.key;
    CTXKIT_ASSIGN_OR_RETURN(std::optional<EntryMeta> meta,
                            FindMeta(dbs_, txn, key));
    // Removed, or removed and stored again: its hits are lifetime only.
    if (!meta || meta->serial != serial) continue;
    std::string_view prefix;
    Hash128 hash{};
    ParseKey(key, &prefix, &hash);
    const int64_t new_last = std::max(meta->last_accessed, p.last_accessed);
    const uint64_t new_hits = meta->hit_count + p.hits;
    CTXKIT_RETURN_IF_ERROR(
        Del(txn, dbs_.lru, TimeIndexKey(meta->last_accessed, key)));
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs_.lru, TimeIndexKey(new_last, key), std::string_view()));
    CTXKIT_RETURN_IF_ERROR(
        Del(txn, dbs_.hits, HitsIndexKey(meta->hit_count, key)));
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs_.hits, HitsIndexKey(new_hits, key), std::string_view()));
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
    CTXKIT_RETURN_IF_ERROR(
        internal::TxnPut(txn, dbs_.entries, key, EncodeMeta(*meta)));
  }
  CTXKIT_RETURN_IF_ERROR(ApplyDeltas(txn, dbs_.stats, kTotalsKey, totals.v));
  for (const auto& [k, d] : groups) {
    CTXKIT_RETURN_IF_ERROR(ApplyDeltas(txn, dbs_.stats, k, d.v));
  }
  for (const std::string& key : batch.expired) {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<EntryMeta> meta,
                            FindMeta(dbs_, txn, key));
    if (!meta || !Expired(meta->expires_at, now)) continue;  // refreshed
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
  {
    std::lock_guard lock(pending_mu_);
    in_flight_ = std::exchange(pending_, HitBatch{});
    in_flight_commit_ = 0;
  }
  if (skip_if_empty && in_flight_.empty()) return absl::OkStatus();
  const int64_t now = Now();
  absl::Status status =
      internal::StoreUpdate(store_, [&](WriteTransaction& txn) {
        {
          // No other commit can come between: this transaction holds the
          // store's write lock.
          std::lock_guard lock(pending_mu_);
          in_flight_commit_ = store_.LastCommittedTransactionId() + 1;
        }
        if (absl::Status s = ApplyBatch(txn, in_flight_, now); !s.ok()) {
          return s;
        }
        return fn(txn, now);
      });
  std::lock_guard lock(pending_mu_);
  if (status.ok()) {
    // Hits are written whenever the batch has entries, so the commit took
    // the id; the check keeps a commit that wrote nothing from naming an id
    // no snapshot may ever reach.
    if (!in_flight_.entries.empty() && in_flight_commit_ != 0 &&
        store_.LastCommittedTransactionId() >= in_flight_commit_) {
      flushed_commit_ = std::max(flushed_commit_, in_flight_commit_);
    }
  } else {
    // Kept for the next batch; hits recorded meanwhile are newer, so the
    // old batch is merged into them.
    HitBatch newer = std::exchange(pending_, std::move(in_flight_));
    pending_.MergeFrom(std::move(newer));
  }
  in_flight_ = HitBatch{};
  in_flight_commit_ = 0;
  return status;
}

absl::Status CacheImpl::Flush() {
  return UpdateWithBatch(
      [](WriteTransaction&, int64_t) { return absl::OkStatus(); },
      /*skip_if_empty=*/true);
}

}  // namespace ctxkit::internal
