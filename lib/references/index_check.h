// A full consistency check of the references part's storage: recomputes,
// from the stored reference records alone, everything the incremental writes
// maintain -- the secondary indexes, the statistics (global and per
// conversation), and every term's postings (weighted term frequencies and
// document lengths) -- and compares it with what is stored. Tests run it
// after random mixes of operations, and the crash test after recovering
// from a killed writer, to show that the index agrees with the documents.
//
// Cost: reads the whole part and holds all postings in memory; a test and
// repair tool, not for serving paths.

#ifndef CTXKIT_LIB_REFERENCES_INDEX_CHECK_H_
#define CTXKIT_LIB_REFERENCES_INDEX_CHECK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ctxkit/store.h"
#include "lib/references/index.h"

namespace ctxkit::internal {

// What the check saw, for tests that also want the totals.
struct IndexCheckSummary {
  uint64_t references = 0;
  uint64_t conversations = 0;  // distinct conversations with references
  uint64_t terms = 0;
  uint64_t postings = 0;
  uint64_t blocks = 0;
};

// OK when the stored indexes and statistics equal the recomputation;
// otherwise DATA_LOSS describing the first difference found (which
// sub-database, which key, expected and found values). Errors of reading
// are returned as they are. Reads within `txn`'s snapshot.
absl::Status CheckReferenceIndex(const Transaction& txn,
                                 const ReferenceDbs& dbs,
                                 IndexCheckSummary* summary = nullptr);

// The same in a fresh read transaction of `store` (opening the part's
// sub-databases first). On a read-only store that lacks them, the part was
// never created: OK with an empty summary.
absl::Status CheckReferenceIndex(Store& store,
                                 IndexCheckSummary* summary = nullptr);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_REFERENCES_INDEX_CHECK_H_
