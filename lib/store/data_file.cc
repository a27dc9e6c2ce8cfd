#include "lib/store/data_file.h"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "lib/store/lmdb_status.h"
#include "lib/store/page_check.h"

namespace ctxkit::internal {
namespace {

static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8,
              "data_file.h describes LMDB's 64-bit layout");

constexpr uint32_t kMagic = 0xBEEFC0DE;
constexpr uint32_t kDataVersion = 1;
// Offsets in a meta page, after the page header: magic (4), version (4),
// address (8), mapsize (8), the free and main MDB_db (48 each), last_pg (8),
// txnid (8).
constexpr uint32_t kMetaOffset = kPageHeaderSize;
constexpr uint32_t kMetaBytes = 136;
constexpr uint32_t kMetaPageBytes = kMetaOffset + kMetaBytes;
// LMDB's limits on a page size.
constexpr uint32_t kMinPageSize = 256;
constexpr uint32_t kMaxPageSize = 0x10000;

template <typename T>
T Load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct RawMeta {
  bool is_lmdb = false;  // the page carries LMDB's magic
  DataFileMeta meta;
};

RawMeta DecodeMeta(const unsigned char* page) {
  RawMeta out;
  const unsigned char* m = page + kMetaOffset;
  if (Load<uint32_t>(m) != kMagic) return out;
  if ((Load<uint16_t>(page + 10) & kPageMeta) == 0) return out;
  out.is_lmdb = Load<uint32_t>(m + 4) == kDataVersion;
  out.meta.map_size = Load<uint64_t>(m + 16);
  const std::string_view dbs(reinterpret_cast<const char*>(m + 24),
                             2 * kTreeRecordSize);
  out.meta.free_tree = DecodeTreeRecord(dbs.substr(0, kTreeRecordSize));
  out.meta.main_tree = DecodeTreeRecord(dbs.substr(kTreeRecordSize));
  // LMDB keeps the page size in the free tree's md_pad.
  out.meta.page_size = Load<uint32_t>(m + 24);
  out.meta.last_page = Load<uint64_t>(m + 120);
  out.meta.txnid = Load<uint64_t>(m + 128);
  return out;
}

bool PlausiblePageSize(uint32_t size) {
  return size >= kMinPageSize && size <= kMaxPageSize &&
         (size & (size - 1)) == 0;
}

// Why `meta` cannot describe a file, or "" when it can.
std::string Inconsistency(const DataFileMeta& meta) {
  if (!PlausiblePageSize(meta.page_size)) {
    return absl::StrFormat("a page size of %d bytes", meta.page_size);
  }
  // The upper bound keeps RequiredBytes() from wrapping around.
  if (meta.last_page < 1 || meta.last_page >= ~uint64_t{0} / meta.page_size) {
    return absl::StrFormat("a last page of %d", meta.last_page);
  }
  for (const TreeRecord* t : {&meta.free_tree, &meta.main_tree}) {
    if (t->root != kNoPage && (t->root < 2 || t->root > meta.last_page)) {
      return absl::StrFormat("a root page %d outside pages 2..%d", t->root,
                             meta.last_page);
    }
  }
  return "";
}

absl::Status Damaged(std::string_view path, std::string_view what) {
  return absl::DataLossError(absl::StrFormat(
      "'%s' is damaged: %s. Restore it from a backup (copy a store only "
      "while no process writes it, or with `mdb_copy`)",
      path, what));
}

// Reads up to `n` bytes at `offset`; the count read, or the errno.
absl::StatusOr<size_t> ReadAt(int fd, std::string_view path, void* buf,
                              size_t n, uint64_t offset) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = pread(fd, static_cast<char*>(buf) + got, n - got,
                            static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return LmdbStatus(errno, absl::StrFormat("cannot read '%s'", path));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

}  // namespace

TreeRecord DecodeTreeRecord(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  TreeRecord t;
  t.flags = Load<uint16_t>(p + 4);
  t.depth = Load<uint16_t>(p + 6);
  t.branch_pages = Load<uint64_t>(p + 8);
  t.leaf_pages = Load<uint64_t>(p + 16);
  t.overflow_pages = Load<uint64_t>(p + 24);
  t.entries = Load<uint64_t>(p + 32);
  t.root = Load<uint64_t>(p + 40);
  return t;
}

namespace {

// Whether a file shorter than `meta` needs misses only free pages, which
// LMDB leaves unwritten (PagesPastEndAreFree); a free list that cannot be
// read counts as no.
bool EndsInFreePages(int fd, std::string_view path, const DataFileMeta& meta,
                     uint64_t size) {
  // Not even the free list's root in the file: cut short.
  if (meta.free_tree.root != kNoPage &&
      (meta.free_tree.root + 1) * meta.page_size > size) {
    return false;
  }
  const absl::StatusOr<bool> free = PagesPastEndAreFree(fd, path, meta, size);
  return free.ok() && *free;
}

}  // namespace

uint64_t DataFileMeta::RequiredBytes() const {
  return (last_page + 1) * page_size;
}

absl::StatusOr<DataFileMeta> ReadDataFileMeta(int fd, std::string_view path,
                                              std::optional<uint64_t> txnid) {
  unsigned char first[kMetaPageBytes];
  absl::StatusOr<size_t> got = ReadAt(fd, path, first, sizeof first, 0);
  if (!got.ok()) return got.status();
  if (*got == 0) {
    return Damaged(path,
                   "it is empty (0 bytes), and an LMDB data file always "
                   "holds its two meta pages; it is not treated as a new "
                   "store, since that would hide the loss. To start an empty "
                   "store instead, remove the directory's data.mdb and "
                   "lock.mdb");
  }
  if (*got < sizeof first) {
    return Damaged(path,
                   absl::StrFormat("it is %d bytes, too short for even one of "
                                   "LMDB's meta pages (%d bytes each at least)",
                                   *got, sizeof first));
  }
  const RawMeta meta0 = DecodeMeta(first);
  // The second meta sits one page in; without the first, try the OS page
  // size, which is what ctxkit's stores use.
  const long os_page = sysconf(_SC_PAGESIZE);
  const uint64_t second_at =
      meta0.is_lmdb && PlausiblePageSize(meta0.meta.page_size)
          ? meta0.meta.page_size
          : static_cast<uint64_t>(os_page > 0 ? os_page : 4096);
  unsigned char second[kMetaPageBytes];
  got = ReadAt(fd, path, second, sizeof second, second_at);
  if (!got.ok()) return got.status();
  const RawMeta meta1 = *got == sizeof second ? DecodeMeta(second) : RawMeta{};

  struct stat st;
  if (fstat(fd, &st) != 0) {
    return LmdbStatus(errno, absl::StrFormat("cannot stat '%s'", path));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);

  if (!meta0.is_lmdb && !meta1.is_lmdb) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "'%s' (%d bytes) is not an LMDB data file (or is damaged beyond "
        "recognition: neither of its meta pages is LMDB's); is this really a "
        "ctxkit store?",
        path, size));
  }
  if (!meta0.is_lmdb || !meta1.is_lmdb) {
    return Damaged(
        path, absl::StrFormat("it is %d bytes and its %s meta page (page %d) "
                              "is %s",
                              size, meta0.is_lmdb ? "second" : "first",
                              meta0.is_lmdb ? 1 : 0,
                              size < second_at + kMetaPageBytes && meta0.is_lmdb
                                  ? "missing: the file is cut short"
                                  : "not LMDB's"));
  }
  for (const RawMeta* m : {&meta0, &meta1}) {
    const std::string why = Inconsistency(m->meta);
    if (!why.empty()) {
      return Damaged(path, absl::StrFormat("its meta page %d gives %s",
                                           m == &meta0 ? 0 : 1, why));
    }
  }
  if (meta0.meta.page_size != meta1.meta.page_size) {
    return Damaged(
        path, absl::StrFormat("its meta pages disagree on the page size (%d "
                              "and %d bytes)",
                              meta0.meta.page_size, meta1.meta.page_size));
  }
  // As LMDB's mdb_env_pick_meta: the later transaction wins.
  const DataFileMeta& newer =
      meta0.meta.txnid < meta1.meta.txnid ? meta1.meta : meta0.meta;
  if (txnid && newer.txnid != *txnid) {
    const DataFileMeta& older = &newer == &meta0.meta ? meta1.meta : meta0.meta;
    if (older.txnid != *txnid) {
      return absl::UnavailableError(absl::StrFormat(
          "the meta pages of '%s' moved on from transaction %d", path, *txnid));
    }
    if (size < older.RequiredBytes() &&
        !EndsInFreePages(fd, path, older, size)) {
      return Damaged(path,
                     absl::StrFormat("it is %d bytes, but transaction "
                                     "%d uses %d bytes",
                                     size, older.txnid, older.RequiredBytes()));
    }
    return older;
  }
  if (size < newer.RequiredBytes() && !EndsInFreePages(fd, path, newer, size)) {
    return Damaged(
        path,
        absl::StrFormat(
            "it is %d bytes, but its last committed transaction (%d) uses "
            "%d pages of %d bytes, %d bytes in all: the file is cut short "
            "(a half-copied backup?)",
            size, newer.txnid, newer.last_page + 1, newer.page_size,
            newer.RequiredBytes()));
  }
  return newer;
}

absl::StatusOr<DataFileMeta> ReadDataFileMeta(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return LmdbStatus(errno, absl::StrFormat("cannot open '%s'", path));
  }
  absl::StatusOr<DataFileMeta> meta = ReadDataFileMeta(fd, path);
  close(fd);
  return meta;
}

}  // namespace ctxkit::internal
