#include "lib/store/page_check.h"

#include <lmdb.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "lib/base/absl_string_view.h"
#include "lib/store/lmdb_status.h"

namespace ctxkit::internal {
namespace {

// Node header: lo (2), hi (2), flags (2), key size (2), then key and data.
constexpr uint32_t kNodeHeaderSize = 8;
// Node flags (mn_flags) of leaf nodes.
constexpr uint16_t kNodeBigData = 0x01;  // data is an overflow page number
constexpr uint16_t kNodeSubData = 0x02;  // data is a named tree's record
constexpr uint16_t kNodeDupData = 0x04;  // duplicates (never written here)
// Deeper than any real tree (a depth of 64 would need more pages than a
// 64-bit file can hold), so only a cycle of damaged pages gets there.
constexpr int kMaxDepth = 64;
constexpr std::string_view kFreeListName = "(free list)";

template <typename T>
T Load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string Printable(std::string_view key) {
  constexpr size_t kShown = 48;
  std::string shown = absl::CHexEscape(AV(key.substr(0, kShown)));
  if (key.size() > kShown) shown += "...";
  return shown;
}

class Walker {
 public:
  Walker(int fd, std::string_view path, const DataFileMeta& meta, bool shallow)
      : shallow_(shallow),
        fd_(fd),
        path_(path),
        meta_(meta),
        used_(meta.last_page + 1),
        free_(meta.last_page + 1) {
    used_[0] = used_[1] = true;
  }

  // The pages the free list names, walking nothing else.
  absl::StatusOr<std::vector<bool>> FreePages() {
    if (absl::Status s = WalkTree(kFreeListName, meta_.free_tree); !s.ok()) {
      return s;
    }
    return free_;
  }

  absl::StatusOr<PageCheckSummary> Run() {
    PageCheckSummary out;
    out.txnid = meta_.txnid;
    out.page_size = meta_.page_size;
    out.pages = meta_.last_page + 1;
    if (!shallow_) {
      if (absl::Status s = WalkTree(kFreeListName, meta_.free_tree); !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = WalkTree("", meta_.main_tree); !s.ok()) return s;
    if (shallow_) return out;
    for (uint64_t p = 0; p <= meta_.last_page; ++p) {
      if (used_[p] && free_[p]) {
        return Damage(kFreeListName,
                      absl::StrFormat("page %d is both in use and listed as "
                                      "free, so a later write would "
                                      "overwrite live data",
                                      p));
      }
      out.used_pages += used_[p];
      out.free_pages += free_[p];
    }
    out.unaccounted_pages = out.pages - out.used_pages - out.free_pages;
    out.trees = std::move(trees_);
    return out;
  }

 private:
  struct Bounds {
    std::optional<std::string> low;   // keys are >= low
    std::optional<std::string> high;  // keys are < high
  };

  struct Tree {
    std::string_view name;
    unsigned db_flags = 0;
    TreeRecord counted;
    int leaf_level = 0;
    // Only the root page is read; its children's numbers are range-checked.
    bool root_only = false;
  };

  absl::Status Damage(std::string_view tree, std::string_view what) const {
    return absl::DataLossError(absl::StrFormat(
        "'%s' is damaged: %s, in %s (transaction %d). Restore the store from "
        "a backup",
        path_, what,
        tree == kFreeListName ? std::string(tree)
        : tree.empty()        ? std::string("the main database")
                       : absl::StrFormat("sub-database '%s'", Printable(tree)),
        meta_.txnid));
  }

  // Reads page `pgno` into `buf` (page_size bytes).
  absl::Status ReadPage(std::string_view tree, uint64_t pgno,
                        std::vector<unsigned char>& buf) const {
    buf.resize(meta_.page_size);
    const uint64_t offset = pgno * meta_.page_size;
    size_t got = 0;
    while (got < buf.size()) {
      const ssize_t r = pread(fd_, buf.data() + got, buf.size() - got,
                              static_cast<off_t>(offset + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        return LmdbStatus(
            errno, absl::StrFormat("cannot read page %d of '%s'", pgno, path_));
      }
      if (r == 0) {
        return Damage(tree, absl::StrFormat(
                                "page %d lies past the end of the file", pgno));
      }
      got += static_cast<size_t>(r);
    }
    return absl::OkStatus();
  }

  absl::Status Claim(std::string_view tree, uint64_t pgno, uint64_t from) {
    if (pgno < 2 || pgno > meta_.last_page) {
      return Damage(tree,
                    absl::StrFormat("page %d points to page %d, outside the "
                                    "file's pages 2..%d",
                                    from, pgno, meta_.last_page));
    }
    if (used_[pgno]) {
      return Damage(tree, absl::StrFormat("page %d is reached twice", pgno));
    }
    used_[pgno] = true;
    return absl::OkStatus();
  }

  // LMDB's key order for the tree: integers for MDB_INTEGERKEY, bytes
  // (shorter first on a common prefix) otherwise. 0 for MDB_REVERSEKEY,
  // whose order is not checked.
  static int Compare(unsigned db_flags, std::string_view a,
                     std::string_view b) {
    if (db_flags & MDB_REVERSEKEY) return 0;
    if ((db_flags & MDB_INTEGERKEY) && a.size() == b.size() &&
        (a.size() == 4 || a.size() == 8)) {
      uint64_t x = 0, y = 0;
      std::memcpy(&x, a.data(), a.size());
      std::memcpy(&y, b.data(), b.size());
      return x < y ? -1 : x > y;
    }
    const int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
    if (c != 0) return c;
    return a.size() < b.size() ? -1 : a.size() > b.size();
  }

  absl::Status WalkTree(std::string_view name, const TreeRecord& record) {
    Tree tree;
    tree.name = name;
    tree.db_flags = record.flags;
    if (record.flags & MDB_DUPSORT) {
      return Damage(name, absl::StrFormat("tree flags 0x%x name sorted "
                                          "duplicates, which ctxkit never "
                                          "creates",
                                          record.flags));
    }
    tree.root_only = shallow_ && !name.empty();
    if (record.root != kNoPage) {
      if (absl::Status s = Visit(tree, record.root, 0, 1, Bounds{}); !s.ok()) {
        return s;
      }
      tree.counted.depth = static_cast<uint16_t>(tree.leaf_level);
    }
    if (tree.root_only) return absl::OkStatus();
    tree.counted.root = record.root;
    tree.counted.flags = record.flags;
    const TreeRecord& c = tree.counted;
    const auto differs = [&](std::string_view what, uint64_t stored,
                             uint64_t counted) {
      return Damage(name, absl::StrFormat("its record says %d %s, the walk "
                                          "counts %d",
                                          stored, what, counted));
    };
    if (c.entries != record.entries) {
      return differs("entries", record.entries, c.entries);
    }
    if (c.branch_pages != record.branch_pages) {
      return differs("branch pages", record.branch_pages, c.branch_pages);
    }
    if (c.leaf_pages != record.leaf_pages) {
      return differs("leaf pages", record.leaf_pages, c.leaf_pages);
    }
    if (c.overflow_pages != record.overflow_pages) {
      return differs("overflow pages", record.overflow_pages, c.overflow_pages);
    }
    if (c.depth != record.depth)
      return differs("levels", record.depth, c.depth);
    trees_.push_back({std::string(name), c});
    return absl::OkStatus();
  }

  absl::Status Visit(Tree& tree, uint64_t pgno, uint64_t from, int level,
                     const Bounds& bounds) {
    if (level > kMaxDepth) {
      return Damage(tree.name,
                    absl::StrFormat("page %d is %d levels deep", pgno, level));
    }
    if (absl::Status s = Claim(tree.name, pgno, from); !s.ok()) return s;
    std::vector<unsigned char> page;
    if (absl::Status s = ReadPage(tree.name, pgno, page); !s.ok()) return s;
    const uint64_t header_pgno = Load<uint64_t>(page.data());
    const uint16_t flags = Load<uint16_t>(page.data() + 10);
    const uint16_t lower = Load<uint16_t>(page.data() + 12);
    const uint16_t upper = Load<uint16_t>(page.data() + 14);
    const auto bad = [&](std::string_view what) {
      return Damage(tree.name, absl::StrFormat("page %d %s", pgno, what));
    };
    if (header_pgno != pgno) {
      return bad(absl::StrFormat("carries the header of page %d", header_pgno));
    }
    const bool branch = (flags & (kPageBranch | kPageLeaf)) == kPageBranch;
    const bool leaf = (flags & (kPageBranch | kPageLeaf)) == kPageLeaf;
    if ((!branch && !leaf) ||
        (flags & (kPageOverflow | kPageMeta | kPageLeaf2 | kPageSubpage))) {
      return bad(
          absl::StrFormat("has page flags 0x%x, not a branch or leaf", flags));
    }
    if (lower < kPageHeaderSize || lower > upper || upper > meta_.page_size ||
        (lower - kPageHeaderSize) % 2 != 0) {
      return bad(absl::StrFormat("has free space bounds %d..%d", lower, upper));
    }
    const size_t keys = (lower - kPageHeaderSize) / 2;
    if (keys == 0 || (branch && keys < 2 && level > 1)) {
      return bad(absl::StrFormat("holds %d keys", keys));
    }
    if (branch) ++tree.counted.branch_pages;
    if (leaf) {
      ++tree.counted.leaf_pages;
      if (tree.leaf_level == 0) tree.leaf_level = level;
      if (tree.leaf_level != level) {
        return bad(absl::StrFormat("is a leaf at level %d, others at %d", level,
                                   tree.leaf_level));
      }
    }

    std::string previous;
    bool has_previous = false;
    for (size_t i = 0; i < keys; ++i) {
      const uint16_t at = Load<uint16_t>(page.data() + kPageHeaderSize + 2 * i);
      if (at < upper || at + kNodeHeaderSize > meta_.page_size) {
        return bad(absl::StrFormat("has node %d at offset %d", i, at));
      }
      const unsigned char* node = page.data() + at;
      const uint32_t lo_hi =
          Load<uint16_t>(node) | (uint32_t{Load<uint16_t>(node + 2)} << 16);
      const uint16_t node_flags = Load<uint16_t>(node + 4);
      const uint16_t key_size = Load<uint16_t>(node + 6);
      if (at + kNodeHeaderSize + key_size > meta_.page_size) {
        return bad(
            absl::StrFormat("has node %d's key of %d bytes overrun "
                            "the page",
                            i, key_size));
      }
      const std::string_view key(
          reinterpret_cast<const char*>(node + kNodeHeaderSize), key_size);
      // A branch page's first key is empty: it stands for its parent's.
      const bool keyed = !(branch && i == 0);
      if (keyed) {
        if (has_previous && !(tree.db_flags & MDB_REVERSEKEY) &&
            Compare(tree.db_flags, previous, key) >= 0) {
          return bad(
              absl::StrFormat("has key \"%s\" out of order", Printable(key)));
        }
        if ((bounds.low && Compare(tree.db_flags, key, *bounds.low) < 0) ||
            (bounds.high && Compare(tree.db_flags, key, *bounds.high) >= 0)) {
          return bad(
              absl::StrFormat("has key \"%s\" outside the range its "
                              "parent gives it",
                              Printable(key)));
        }
        previous.assign(key);
        has_previous = true;
      }
      if (branch) {
        const uint64_t child = lo_hi | (uint64_t{node_flags} << 32);
        Bounds child_bounds;
        child_bounds.low =
            keyed ? std::optional<std::string>(std::string(key)) : bounds.low;
        if (i + 1 < keys) {
          const uint16_t next_at =
              Load<uint16_t>(page.data() + kPageHeaderSize + 2 * (i + 1));
          if (next_at < upper || next_at + kNodeHeaderSize > meta_.page_size) {
            return bad(
                absl::StrFormat("has node %d at offset %d", i + 1, next_at));
          }
          const uint16_t next_size = Load<uint16_t>(page.data() + next_at + 6);
          if (next_at + kNodeHeaderSize + next_size > meta_.page_size) {
            return bad(
                absl::StrFormat("has node %d's key overrun the page", i + 1));
          }
          child_bounds.high =
              std::string(reinterpret_cast<const char*>(page.data() + next_at +
                                                        kNodeHeaderSize),
                          next_size);
        } else {
          child_bounds.high = bounds.high;
        }
        absl::Status s =
            tree.root_only ? Claim(tree.name, child, pgno)
                           : Visit(tree, child, pgno, level + 1, child_bounds);
        if (!s.ok()) return s;
        continue;
      }
      ++tree.counted.entries;
      if (node_flags & kNodeDupData) {
        return bad(absl::StrFormat("holds sorted duplicates under \"%s\"",
                                   Printable(key)));
      }
      std::string value_bytes;
      std::string_view value;
      const unsigned char* data = node + kNodeHeaderSize + key_size;
      if (node_flags & kNodeBigData) {
        if (at + kNodeHeaderSize + key_size + 8 > meta_.page_size) {
          return bad(absl::StrFormat("has node %d overrun the page", i));
        }
        if (tree.root_only) {
          absl::Status s = Claim(tree.name, Load<uint64_t>(data), pgno);
          if (!s.ok()) return s;
          continue;
        }
        absl::Status s =
            Overflow(tree, pgno, Load<uint64_t>(data), lo_hi,
                     tree.name == kFreeListName ? &value_bytes : nullptr);
        if (!s.ok()) return s;
        value = value_bytes;
      } else {
        if (at + kNodeHeaderSize + key_size + lo_hi > meta_.page_size) {
          return bad(
              absl::StrFormat("has the %d-byte value of \"%s\" overrun "
                              "the page",
                              lo_hi, Printable(key)));
        }
        value = std::string_view(reinterpret_cast<const char*>(data), lo_hi);
      }
      if (tree.name == kFreeListName) {
        if (absl::Status s = FreeList(pgno, value); !s.ok()) return s;
      } else if (node_flags & kNodeSubData) {
        if (value.size() != kTreeRecordSize) {
          return bad(
              absl::StrFormat("holds a %d-byte record for sub-database "
                              "\"%s\"",
                              value.size(), Printable(key)));
        }
        // The key views `page`, which this frame keeps alive.
        if (absl::Status s = WalkTree(key, DecodeTreeRecord(value)); !s.ok()) {
          return s;
        }
      }
    }
    return absl::OkStatus();
  }

  // An overflow run holding a `size`-byte value; its bytes into `out` when
  // not null.
  absl::Status Overflow(Tree& tree, uint64_t from, uint64_t first,
                        uint64_t size, std::string* out) {
    if (absl::Status s = Claim(tree.name, first, from); !s.ok()) return s;
    std::vector<unsigned char> head;
    if (absl::Status s = ReadPage(tree.name, first, head); !s.ok()) return s;
    const uint64_t header_pgno = Load<uint64_t>(head.data());
    const uint16_t flags = Load<uint16_t>(head.data() + 10);
    const uint32_t count = Load<uint32_t>(head.data() + 12);
    const auto bad = [&](std::string_view what) {
      return Damage(tree.name,
                    absl::StrFormat("overflow page %d %s", first, what));
    };
    if (header_pgno != first || !(flags & kPageOverflow)) {
      return bad(absl::StrFormat("carries the header of page %d, flags 0x%x",
                                 header_pgno, flags));
    }
    if (count == 0 || first + count - 1 > meta_.last_page ||
        size + kPageHeaderSize > uint64_t{count} * meta_.page_size) {
      return bad(absl::StrFormat("claims %d pages for %d bytes", count, size));
    }
    for (uint64_t p = first + 1; p < first + count; ++p) {
      if (absl::Status s = Claim(tree.name, p, first); !s.ok()) return s;
    }
    tree.counted.overflow_pages += count;
    if (out == nullptr) return absl::OkStatus();
    out->resize(size);
    size_t got = 0;
    const uint64_t offset = first * meta_.page_size + kPageHeaderSize;
    while (got < size) {
      const ssize_t r = pread(fd_, out->data() + got, size - got,
                              static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return bad("lies past the end of the file");
      got += static_cast<size_t>(r);
    }
    return absl::OkStatus();
  }

  // One free-list record: a count, then that many page numbers.
  absl::Status FreeList(uint64_t pgno, std::string_view value) {
    const auto bad = [&](std::string_view what) {
      return Damage(kFreeListName,
                    absl::StrFormat("page %d has a record %s", pgno, what));
    };
    if (value.size() < 8 || value.size() % 8 != 0) {
      return bad(absl::StrFormat("of %d bytes", value.size()));
    }
    const auto* p = reinterpret_cast<const unsigned char*>(value.data());
    const uint64_t n = Load<uint64_t>(p);
    if (n != value.size() / 8 - 1) {
      return bad(
          absl::StrFormat("counting %d pages in %d bytes", n, value.size()));
    }
    for (uint64_t i = 1; i <= n; ++i) {
      const uint64_t free_page = Load<uint64_t>(p + 8 * i);
      if (free_page < 2 || free_page > meta_.last_page) {
        return bad(absl::StrFormat("listing page %d, outside pages 2..%d",
                                   free_page, meta_.last_page));
      }
      if (free_[free_page]) {
        return bad(absl::StrFormat("listing page %d, already free", free_page));
      }
      free_[free_page] = true;
    }
    return absl::OkStatus();
  }

  const bool shallow_;
  const int fd_;
  const std::string_view path_;
  const DataFileMeta& meta_;
  std::vector<bool> used_;
  std::vector<bool> free_;
  std::vector<TreeCheck> trees_;
};

}  // namespace

absl::StatusOr<PageCheckSummary> CheckPages(int fd, std::string_view path,
                                            const DataFileMeta& meta) {
  return Walker(fd, path, meta, /*shallow=*/false).Run();
}

absl::Status CheckTopPages(int fd, std::string_view path,
                           const DataFileMeta& meta) {
  return Walker(fd, path, meta, /*shallow=*/true).Run().status();
}

absl::StatusOr<bool> PagesPastEndAreFree(int fd, std::string_view path,
                                         const DataFileMeta& meta,
                                         uint64_t file_bytes) {
  Walker walker(fd, path, meta, /*shallow=*/false);
  absl::StatusOr<std::vector<bool>> free = walker.FreePages();
  if (!free.ok()) return free.status();
  for (uint64_t p = file_bytes / meta.page_size; p <= meta.last_page; ++p) {
    if (!(*free)[p]) return false;
  }
  return true;
}

}  // namespace ctxkit::internal
