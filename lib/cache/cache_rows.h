// Row-level helpers shared by the cache's operations (cache_put.cc,
// cache_get.cc, cache_hits.cc, cache_removal.cc, cache_stats.cc): a view of
// an entry's meta record that the read paths decode without allocating, the
// expiry test, a delete, and signed adjustments of counter records. The
// layout of the records is in cache_format.cc.
//
// Thread safety: pure functions, or writes through the transaction given.

#ifndef CTXKIT_LIB_CACHE_CACHE_ROWS_H_
#define CTXKIT_LIB_CACHE_CACHE_ROWS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

// The fixed fields of an entry record and views of its strings, for the
// read path (no allocation). Layout in cache_format.cc.
struct MetaView {
  uint64_t serial, tokens, hit_count, size_bytes;
  int64_t created_at, expires_at, last_accessed;
  std::string_view model, conversation_id;
  // Whether the record holds the content, which `content` then views;
  // otherwise it is in "cache.content" (ContentOf reads either).
  bool content_inline;
  std::string_view content;
};

// Decodes the entry record `v` into *m, whose views then point into `v`.
// False when `v` is malformed. Defined beside the layout, in
// cache_format.cc.
bool DecodeView(std::string_view v, MetaView* m);

// The meta record of entry `key` in `entries`, decoded; its strings point
// into `txn`'s map and live as long as its snapshot. NOT_FOUND (from the
// read) when there is no entry; DATA_LOSS naming the key when the record is
// malformed.
absl::StatusOr<MetaView> ReadView(const Transaction& txn, Database entries,
                                  std::string_view key);

// The content of entry `key`, whose record `meta` was read in `txn`: its
// inline view, or its row in `content` ("cache.content"). It points into
// `txn`'s map and lives as long as its snapshot. DATA_LOSS naming the key
// when the row is missing; any other read error as is.
absl::StatusOr<std::string_view> ContentOf(const Transaction& txn,
                                           Database content,
                                           std::string_view key,
                                           const MetaView& meta);

// Whether an entry expiring at `expires_at` (0: never) has expired at `now`.
bool Expired(int64_t expires_at, int64_t now);

// Deletes `key` from `db`; a key that is absent is not an error.
absl::Status Del(WriteTransaction& txn, Database db, std::string_view key);

// Signed adjustments to a counter record, applied once per transaction.
struct Deltas {
  std::vector<int64_t> v;
  explicit Deltas(int n) : v(static_cast<size_t>(n), 0) {}
};

// Adds `d` (one signed delta a field) to the counter record `key`; writes
// nothing when every delta is 0.
absl::Status ApplyDeltas(WriteTransaction& txn, Database db,
                         std::string_view key, const std::vector<int64_t>& d);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CACHE_CACHE_ROWS_H_
