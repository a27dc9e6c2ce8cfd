// A structural check of every B+tree in an LMDB data file, read with pread
// and never through LMDB's map: the walk follows a page number only after
// checking it lies within the file, so a damaged page is reported instead of
// faulting (data_file.h says why LMDB cannot be trusted with that).
//
// What it checks, per tree (the free list, the main database, every named
// sub-database): each page's header names the page itself and a known kind;
// its node offsets and sizes fit in the page; keys are in the tree's order
// within each page and within the bounds its parent gives; every leaf is at
// the same depth; overflow runs fit in the file; and the counts of entries,
// branch, leaf and overflow pages and the depth equal the tree's record. Over
// the whole file, no page is used twice, nor used and free at once.

#ifndef CTXKIT_LIB_STORE_PAGE_CHECK_H_
#define CTXKIT_LIB_STORE_PAGE_CHECK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/store/data_file.h"

namespace ctxkit::internal {

struct TreeCheck {
  std::string name;   // "" for the main database, "(free list)" for LMDB's
  TreeRecord record;  // as counted; equal to the stored record when OK
};

struct PageCheckSummary {
  uint64_t txnid = 0;
  uint32_t page_size = 0;
  uint64_t pages = 0;       // last page + 1
  uint64_t used_pages = 0;  // the two metas and every tree's pages
  uint64_t free_pages = 0;  // listed in the free list
  // Pages neither used nor listed free: leaked by an interrupted write (LMDB
  // reclaims them only through a copy), never data.
  uint64_t unaccounted_pages = 0;
  std::vector<TreeCheck> trees;
};

// Walks every tree of the snapshot that `meta` describes, reading the file
// open as `fd` (named `path` in messages). The caller keeps that snapshot's
// pages from being reused meanwhile (by holding a read transaction on it).
// DATA_LOSS naming the tree, the page and what is wrong with it at the first
// damage found; an I/O status if a read fails. Cost: reads every page in use
// once; memory of two bits per page of the file.
absl::StatusOr<PageCheckSummary> CheckPages(int fd, std::string_view path,
                                            const DataFileMeta& meta);

// The cheap part of CheckPages, for every open: the main database (the
// directory of sub-databases, a page or two) whole, and the root page of
// each sub-database, whose children's page numbers must lie in the file.
// These are the pages every read starts from and the last a commit writes
// (LMDB copies the path from a changed leaf up to the roots at the end of
// the file), so garbage over the file's last pages is caught before LMDB
// follows it. Damage deeper in a tree is found only by CheckPages. Errors as
// CheckPages; no summary.
absl::Status CheckTopPages(int fd, std::string_view path,
                           const DataFileMeta& meta);

// Whether every page of `meta`'s snapshot at or past byte `file_bytes` (the
// file's size) is on its free list. A healthy file can end before
// meta.last_page: LMDB never writes a page that a transaction allocated and
// freed again before its commit (a loose page), and the file grows only by
// the pages written, yet last_page counts it; that page goes to the free
// list, and LMDB writes a free page before it ever reads it. A file cut
// short loses pages in use. Errors as CheckPages, from the free list's walk.
absl::StatusOr<bool> PagesPastEndAreFree(int fd, std::string_view path,
                                         const DataFileMeta& meta,
                                         uint64_t file_bytes);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_PAGE_CHECK_H_
