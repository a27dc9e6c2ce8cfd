// Removing entries on request: Clear (a prefix, or everything) and Sweep
// (the expired ones). Every removal goes through RemoveEntry
// (cache_format.h) except Clear of everything, which drops the tables whole.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_impl.h"
#include "lib/cache/cache_keys.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

// Removes each of `keys`, which must all be entries, counting `reason`.
absl::StatusOr<uint64_t> RemoveListed(const CacheDbs& dbs,
                                      WriteTransaction& txn,
                                      const std::vector<std::string>& keys,
                                      RemoveReason reason) {
  for (const std::string& key : keys) {
    absl::StatusOr<std::string_view> value =
        internal::TxnGet(txn, dbs.entries, key);
    CTXKIT_RETURN_IF_ERROR(value.status());
    absl::StatusOr<EntryMeta> meta = DecodeMeta(key, *value);
    if (!meta.ok()) return meta.status();
    CTXKIT_RETURN_IF_ERROR(RemoveEntry(dbs, txn, key, *meta, reason));
  }
  return keys.size();
}

}  // namespace

absl::StatusOr<uint64_t> CacheImpl::RemoveExpired(WriteTransaction& txn,
                                                  int64_t now) {
  std::vector<std::string> keys;
  {
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, dbs_.expiry);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
      if (cursor->key().size() < 8) continue;
      const int64_t at =
          SignedFromOrdered(ReadBigEndian64(cursor->key().data()));
      if (at > now) break;
      keys.emplace_back(cursor->key().substr(8));
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
  }
  return RemoveListed(dbs_, txn, keys, RemoveReason::kExpired);
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
            absl::StatusOr<Cursor> cursor =
                internal::TxnNewCursor(txn, dbs_.entries);
            CTXKIT_RETURN_IF_ERROR(cursor.status());
            for (cursor->Seek(start);
                 cursor->Valid() && cursor->key().starts_with(start);
                 cursor->Next()) {
              keys.emplace_back(cursor->key());
            }
            CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
          }
          CTXKIT_ASSIGN_OR_RETURN(
              removed, RemoveListed(dbs_, txn, keys, RemoveReason::kExplicit));
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
          absl::StatusOr<Cursor> cursor =
              internal::TxnNewCursor(txn, dbs_.stats);
          CTXKIT_RETURN_IF_ERROR(cursor.status());
          for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
            const std::string_view k = cursor->key();
            if (k.starts_with("p") || k.starts_with("m")) {
              groups.emplace_back(std::string(k), std::vector<uint64_t>());
            }
          }
          CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
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
          CTXKIT_RETURN_IF_ERROR(internal::TxnClear(txn, db));
        }
        if (dbs_.lookup.valid()) {
          CTXKIT_RETURN_IF_ERROR(internal::TxnClear(txn, dbs_.lookup));
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

}  // namespace ctxkit::internal
