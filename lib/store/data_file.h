// LMDB's data file (data.mdb) as ctxkit reads it without LMDB: its two meta
// pages and its page headers.
//
// LMDB 0.9 trusts the file. It maps the whole map size and follows page
// numbers without comparing them with the file's length, so a truncated file
// (a half-copied backup) or a garbled page makes a read touch memory past the
// end of the file, and the process dies of SIGBUS. It also takes an empty
// file for a new one and writes a fresh, empty store into it. ctxkit reads
// the metas itself, with pread, before LMDB maps anything, and walks pages the
// same way for `store check`; pread past the end returns short instead of
// faulting.
//
// The layout is LMDB 0.9's on a 64-bit host (pgno_t and size_t of 8 bytes),
// the only one ctxkit builds for (a static_assert in data_file.cc holds it).

#ifndef CTXKIT_LIB_STORE_DATA_FILE_H_
#define CTXKIT_LIB_STORE_DATA_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ctxkit::internal {

// LMDB's page header: pgno (8), pad (2), flags (2), lower (2), upper (2).
inline constexpr uint32_t kPageHeaderSize = 16;
// Page flags (mp_flags).
inline constexpr uint16_t kPageBranch = 0x01;
inline constexpr uint16_t kPageLeaf = 0x02;
inline constexpr uint16_t kPageOverflow = 0x04;
inline constexpr uint16_t kPageMeta = 0x08;
inline constexpr uint16_t kPageLeaf2 = 0x20;
inline constexpr uint16_t kPageSubpage = 0x40;
// The root of an empty tree.
inline constexpr uint64_t kNoPage = ~uint64_t{0};

// One tree's record in a meta page or in a named database's node (MDB_db).
struct TreeRecord {
  uint16_t flags = 0;
  uint16_t depth = 0;
  uint64_t branch_pages = 0;
  uint64_t leaf_pages = 0;
  uint64_t overflow_pages = 0;
  uint64_t entries = 0;
  uint64_t root = kNoPage;
};
inline constexpr uint32_t kTreeRecordSize = 48;

// Decodes an MDB_db from `bytes` (at least kTreeRecordSize of them).
TreeRecord DecodeTreeRecord(std::string_view bytes);

// The meta page LMDB opens with: the one of the two with the larger
// transaction id.
struct DataFileMeta {
  uint32_t page_size = 0;
  uint64_t last_page = 0;  // highest page number in use
  uint64_t txnid = 0;
  uint64_t map_size = 0;
  TreeRecord free_tree;  // LMDB's free list
  TreeRecord main_tree;  // the unnamed database holding the named ones
  // Bytes the file must hold: (last_page + 1) * page_size.
  uint64_t RequiredBytes() const;
};

// Reads both meta pages of the data file open as `fd` (named `path` in
// messages), then the file's size, and checks that they agree.
//
// Returns the newer meta, or:
//   - FAILED_PRECONDITION when neither meta page is LMDB's (the file is not
//     an LMDB data file at all);
//   - DATA_LOSS, naming `path` and the sizes, when the file is empty, shorter
//     than its metas, has one damaged meta, or is shorter than the pages the
//     newer meta uses (a truncated copy);
//   - the errno of a failed read as an I/O status.
// The metas are read before the size, so a commit by another process between
// the two can only make the file larger than the meta requires, never
// smaller. Thread-safe: uses pread only.
//
// With `txnid`, the meta of that transaction instead of the newer one, for
// a reader that holds it; UNAVAILABLE when both metas have moved on since
// (the caller begins a newer transaction and asks again).
absl::StatusOr<DataFileMeta> ReadDataFileMeta(
    int fd, std::string_view path, std::optional<uint64_t> txnid = {});

// As ReadDataFileMeta, opening `path` read-only for the call.
absl::StatusOr<DataFileMeta> ReadDataFileMeta(const std::string& path);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_DATA_FILE_H_
