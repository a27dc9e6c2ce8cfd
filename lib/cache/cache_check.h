// A full consistency check of the cache's storage (layout in
// cache_format.cc): recomputes, from the entries' meta records alone,
// everything the incremental writes maintain, and compares it with what is
// stored:
//
//   - per entry: its key is an entry key, its content is stored and its
//     size_bytes is the content's (plus the lookup's, for a keyed entry),
//     its serial is unique and not above the totals' next serial, and its
//     conversation, if any, is stored;
//   - the index rows: one per entry in "cache.lru" (last_accessed),
//     "cache.hash" (the hash its key carries) and "cache.hits" (hit_count),
//     one per expiring entry in "cache.expiry" (expires_at), one per entry
//     of a conversation in "cache.conv"; and no row, nor content, that is
//     not an entry's;
//   - the statistics in "cache.stats": the live counters of the totals
//     ("t": entries, size, tokens, hits, tokens saved, entries never hit)
//     and of every prefix ("p" + prefix) and model ("m" + model) group, and
//     that no other key is there.
//
// What it cannot recompute it does not judge: the lifetime counters (hits,
// misses and tokens saved of entries long gone, evictions, expirations),
// token counts, and hashes of content (the key carries the hash it was
// stored under). Rows of "cache.lookup" that match no entry's serial are
// legitimate leftovers of releases that did not know keyed entries (see
// KeyedLookupOf) and are only counted; a malformed one is DATA_LOSS.
//
// Hits still pending in a Cache's memory are not in the store, and nothing
// here needs them: every stored total agrees with the stored entries.

#ifndef CTXKIT_LIB_CACHE_CACHE_CHECK_H_
#define CTXKIT_LIB_CACHE_CACHE_CHECK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ctxkit/store.h"
#include "lib/cache/cache_format.h"

namespace ctxkit::internal {

// What the check saw, for callers that report it and tests that compare it
// with what they wrote.
struct CacheCheckSummary {
  uint64_t entries = 0;
  uint64_t keyed_entries = 0;         // with their row in "cache.lookup"
  uint64_t expiring_entries = 0;      // with a row in "cache.expiry"
  uint64_t conversation_entries = 0;  // with a row in "cache.conv"
  // Rows of "cache.lru", "cache.expiry", "cache.hash", "cache.conv",
  // "cache.hits" and "cache.lookup" that belong to an entry.
  uint64_t index_rows = 0;
  uint64_t stale_lookup_rows = 0;  // rows of "cache.lookup" of no entry
  uint64_t stats_records = 0;      // "t", "p" + prefix, "m" + model
};

// OK when everything stored equals the recomputation. Otherwise DATA_LOSS
// describing the first difference found: the sub-database, the key (escaped
// as a C string; index keys are shown as their parts), and the stored and
// recomputed values; an undecodable record is DATA_LOSS naming its
// sub-database and key. Errors of reading are returned as they are.
// `summary`, when given, is set only on OK. `dbs.lookup` may be invalid (a
// store without keyed entries); the other handles must be valid.
//
// Reads within `txn`'s snapshot only (a WriteTransaction sees its own
// writes), so concurrent writers neither disturb it nor wait for it.
// Cost: one pass over every row of the cache's sub-databases plus a few
// lookups per entry; memory for every entry's key and index fields. A
// check for tools and tests, not for serving paths. Thread safety: that of
// `txn`.
absl::Status CheckCacheTotals(const Transaction& txn, const CacheDbs& dbs,
                              CacheCheckSummary* summary = nullptr);

// The same in a fresh read transaction of `store`, after CacheDbs::Open. On
// a read-only store that lacks the cache's sub-databases, the cache was
// never opened for writing, so it holds nothing: OK with an empty summary.
// Must not run inside Store::Update; on a writable store, opening creates
// the missing sub-databases as Cache::Open would. Holding the snapshot for
// the whole walk keeps the store from reusing the pages it pins.
// Thread-safe, as Store is.
absl::Status CheckCacheTotals(Store& store,
                              CacheCheckSummary* summary = nullptr);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CACHE_CACHE_CHECK_H_
