// ctxkit::CheckStore: whether a store is whole, for a backup that was just
// restored, a disk that misbehaved, or a store a process died writing.
//
//   auto store = ctxkit::Store::Open(path, read_only_options);
//   if (!store.ok()) return store.status();     // DATA_LOSS: a cut file
//   auto report = ctxkit::CheckStore(**store);
//   if (!report.ok()) return report.status();   // DATA_LOSS: what is wrong
//
// Two levels, both over one snapshot:
//  1. Pages. Every B+tree of the LMDB file -- its free list, its main
//     database and every named sub-database -- is walked from the file with
//     reads that never go past its end, so damage is reported instead of
//     killing the process: each page is one of its tree's kind and names
//     itself, keys are in order and within their parents' bounds, leaves are
//     at one depth, no page is used twice or used while listed free, and each
//     tree's entry and page counts equal its record.
//  2. Records. Each part ctxkit keeps (conversations, references, the cache,
//     the context graph) is recounted from its records alone -- every total,
//     statistic and secondary index the writes maintain incrementally -- and
//     compared with what is stored. A part that was never created is empty and
//     whole.
//
// Store::Open already refuses, with DATA_LOSS, a data file that is empty or
// shorter than its last transaction needs, before anything is mapped.

#ifndef CTXKIT_STORE_CHECK_H_
#define CTXKIT_STORE_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"

namespace ctxkit {

// One B+tree as the page walk counted it (equal to its stored record, or the
// check fails).
struct StoreCheckTree {
  // "" for LMDB's main database, "(free list)" for its free list, otherwise
  // the sub-database's name.
  std::string name;
  uint64_t entries = 0;
  uint64_t branch_pages = 0;
  uint64_t leaf_pages = 0;
  uint64_t overflow_pages = 0;
  uint32_t depth = 0;
};

struct StoreCheckReport {
  std::string path;
  // The snapshot checked: the last transaction committed when it began.
  uint64_t transaction_id = 0;
  uint32_t page_size = 0;
  uint64_t pages = 0;       // up to the high-water mark, metas included
  uint64_t used_pages = 0;  // metas and every tree's pages
  uint64_t free_pages = 0;  // in LMDB's free list, reusable
  // Neither used nor free: space leaked by an interrupted write, reclaimed
  // only by copying the store (mdb_copy -c); never data, not an error.
  uint64_t unaccounted_pages = 0;
  std::vector<StoreCheckTree> trees;  // in the order walked
  // What the recounts read.
  uint64_t conversations = 0;
  uint64_t messages = 0;
  uint64_t references = 0;
  uint64_t cache_entries = 0;
  uint64_t contexts = 0;       // of the context graph (ContextGraph::Verify)
  uint64_t relationships = 0;  // its edges, current or not
};

// Checks `store` as described above.
//
// Errors: DATA_LOSS naming the file, the sub-database, the page or key and
// the stored and recounted values at the first damage found; the status of a
// failed read otherwise. A store that is being written is checked as of one
// snapshot, so concurrent writers cause no false alarms.
// On a store open for writing, the sub-databases of a part never used are
// created empty first, as opening that part would; a read-only store is
// never written. Must not be called inside Store::Update.
// Cost: reads every page in use once, plus every record of the three parts;
// memory of two bits per page plus the references' postings (a maintenance
// operation, not for serving paths). Thread-safe, like every Store reader.
CTXKIT_EXPORT StatusOr<StoreCheckReport> CheckStore(Store& store);

// `report` as a JSON document:
//   {"schema_version":1,"path","transaction_id","page_size","pages",
//    "used_pages","free_pages","unaccounted_pages",
//    "trees":[{"name","entries","branch_pages","leaf_pages",
//              "overflow_pages","depth"},...],
//    "conversations","messages","references","cache_entries"}
// A tree name that is not UTF-8 (one another program created) has its
// invalid bytes replaced by U+FFFD.
CTXKIT_EXPORT std::string StoreCheckReportToJson(
    const StoreCheckReport& report);

}  // namespace ctxkit

#endif  // CTXKIT_STORE_CHECK_H_
