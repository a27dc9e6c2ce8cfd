// Damaged data files: cut short (a half-copied backup), emptied, with a bad
// meta page, not LMDB's at all, or with garbage over any one page. Each is a
// clear error -- DATA_LOSS naming the file and the sizes, or
// FAILED_PRECONDITION for a file that is no LMDB file -- and never a signal:
// before these checks, opening a store cut to 8 KiB and reading it died of
// SIGBUS, and an empty data.mdb silently became a new, empty store.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "ctxkit/store.h"
#include "ctxkit/store_check.h"
#include "lib/store/data_file.h"
#include "lib/store/page_check.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

namespace fs = std::filesystem;

using testing::Contains;
using testing::Must;
using testing::TempDir;

constexpr int kConversations = 6;
constexpr int kMessagesEach = 12;
constexpr int kReferences = 8;
constexpr int kCacheEntries = 8;

std::string Text(int i, size_t bytes) {
  std::string s;
  while (s.size() < bytes) {
    s += "message " + std::to_string(i) + " says something about word" +
         std::to_string(s.size() % 97) + ". ";
  }
  return s;
}

// A store holding every part, closed again.
void Populate(const std::string& dir) {
  auto store = Must(Store::Open(dir));
  {
    auto convs = Must(ConversationStore::Open(*store));
    for (int c = 0; c < kConversations; ++c) {
      Conversation conv =
          Must(convs->Create({.title = "c" + std::to_string(c)}));
      for (int m = 0; m < kMessagesEach; ++m) {
        NewMessage msg;
        msg.role = m % 2 ? MessageRole::kAssistant : MessageRole::kUser;
        msg.content = Text(c * 100 + m, 300 + 40 * m);
        Must(convs->AddMessage(conv.id, msg));
      }
    }
    auto refs = Must(ReferenceStore::Open(*store));
    for (int r = 0; r < kReferences; ++r) {
      NewReference ref;
      ref.type = "note";
      ref.title = "reference " + std::to_string(r);
      ref.content = Text(1000 + r, 700);
      Must(refs->Add(ref));
    }
    auto cache = Must(Cache::Open(*store));
    for (int e = 0; e < kCacheEntries; ++e) {
      Must(cache->Put(Text(2000 + e, 200)));
    }
  }
}

uint64_t FileSize(const std::string& path) {
  return static_cast<uint64_t>(fs::file_size(path));
}

// A copy of `src`'s data file in a fresh directory `dst`, as a backup is.
void CopyStore(const std::string& src, const std::string& dst) {
  fs::create_directory(dst);
  fs::copy_file(src + "/data.mdb", dst + "/data.mdb",
                fs::copy_options::overwrite_existing);
}

void Overwrite(const std::string& path, uint64_t offset,
               const std::string& bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) ==
          static_cast<ssize_t>(bytes.size()));
  close(fd);
}

std::string Garbage(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

StoreOptions ReadOnly() {
  StoreOptions o;
  o.read_only = true;
  return o;
}

TEST_CASE("an intact store checks whole, and its counts add up") {
  TempDir tmp;
  const std::string dir = tmp.Sub("store");
  Populate(dir);
  auto store = Must(Store::Open(dir, ReadOnly()));
  StoreCheckReport report = Must(CheckStore(*store));
  CHECK(report.path == dir);
  CHECK(report.page_size >= 4096);
  CHECK(report.pages * report.page_size <= FileSize(dir + "/data.mdb"));
  CHECK(report.used_pages + report.free_pages + report.unaccounted_pages ==
        report.pages);
  CHECK(report.references == kReferences);
  CHECK(report.conversations == kConversations);
  CHECK(report.messages == kConversations * kMessagesEach);
  CHECK(report.cache_entries == kCacheEntries);
  // Every sub-database Info lists was walked, with the same entry count.
  StoreInfo info = Must(store->Info());
  for (const DatabaseInfo& db : info.databases) {
    bool walked = false;
    for (const StoreCheckTree& t : report.trees) {
      if (t.name == db.name) {
        walked = true;
        CHECK_MESSAGE(t.entries == db.entries, db.name);
        CHECK_MESSAGE(
            t.branch_pages + t.leaf_pages + t.overflow_pages == db.pages,
            db.name);
      }
    }
    CHECK_MESSAGE(walked, db.name, " was not walked");
  }
  const std::string json = StoreCheckReportToJson(report);
  CHECK(Contains(json, "\"schema_version\":1"));
  CHECK(Contains(json, "\"references\":" + std::to_string(kReferences)));
}

TEST_CASE("a data file cut short is DATA_LOSS naming the file and sizes") {
  TempDir tmp;
  const std::string good = tmp.Sub("good");
  Populate(good);
  const uint64_t full = FileSize(good + "/data.mdb");
  REQUIRE(full >= 16 * 4096);
  const uint64_t cuts[] = {100,      4096,        8192,    12288,
                           full / 2, full - 4096, full - 1};
  int n = 0;
  for (uint64_t cut : cuts) {
    const std::string dir = tmp.Sub("cut" + std::to_string(n++));
    CopyStore(good, dir);
    fs::resize_file(dir + "/data.mdb", cut);
    for (bool read_only : {true, false}) {
      CAPTURE(cut);
      CAPTURE(read_only);
      StoreOptions options;
      options.read_only = read_only;
      auto store = Store::Open(dir, options);
      if (store.ok()) {
        // Only the last page may go without loss, when it is a free page
        // (see "a healthy file that ends in unwritten free pages opens"):
        // then everything is still there.
        REQUIRE(cut > full - 4096 - 1);
        const StoreCheckReport report = Must(CheckStore(**store));
        CHECK(report.references == kReferences);
        CHECK(report.conversations == kConversations);
        CHECK(report.messages == kConversations * kMessagesEach);
        CHECK(report.cache_entries == kCacheEntries);
        continue;
      }
      CHECK(store.status().code() == StatusCode::kDataLoss);
      CHECK(Contains(store.status().message(), dir + "/data.mdb"));
      CHECK(Contains(store.status().message(), std::to_string(cut) + " bytes"));
      CHECK(FileSize(dir + "/data.mdb") == cut);
    }
  }
}

// LMDB never writes a page that a transaction allocated and freed again
// before its commit, yet counts it up to its high-water mark, so a healthy
// file can end before the pages its meta page counts (the crash test met one
// at a killed writer's commit, and had it refused as cut short). Only pages
// in use must be in the file. The state is made here by writing until the
// highest page is a free one and cutting it off, as if never written.
TEST_CASE("a file that ends before its unwritten free pages opens whole") {
  TempDir tmp;
  const std::string dir = tmp.Sub("store");
  const std::string data = dir + "/data.mdb";
  std::mt19937 rng(7);
  bool tail_free = false;
  uint64_t page_size = 0, last_page = 0;
  {
    auto store = Must(Store::Open(dir));
    Database db = Must(store->OpenDatabase("notes"));
    for (int round = 0; round < 2000 && !tail_free; ++round) {
      REQUIRE(store
                  ->Update([&](WriteTransaction& txn) {
                    const std::string key = "k" + std::to_string(rng() % 64);
                    if (rng() % 3 == 0) return txn.Delete(db, key).status();
                    return txn.Put(db, key, std::string(rng() % 20000, 'v'));
                  })
                  .ok());
      const absl::StatusOr<internal::DataFileMeta> read =
          internal::ReadDataFileMeta(data);
      REQUIRE_MESSAGE(read.ok(), read.status().ToString());
      const internal::DataFileMeta& meta = *read;
      const int fd = open(data.c_str(), O_RDONLY | O_CLOEXEC);
      REQUIRE(fd >= 0);
      const uint64_t without_last = meta.last_page * meta.page_size;
      const absl::StatusOr<bool> free =
          internal::PagesPastEndAreFree(fd, data, meta, without_last);
      REQUIRE_MESSAGE(free.ok(), free.status().ToString());
      tail_free = *free;
      close(fd);
      page_size = meta.page_size;
      last_page = meta.last_page;
    }
  }
  REQUIRE_MESSAGE(tail_free, "no commit left its highest page free");
  REQUIRE(truncate(data.c_str(), static_cast<off_t>(last_page * page_size)) ==
          0);
  {
    auto store = Store::Open(dir, ReadOnly());
    REQUIRE_MESSAGE(store.ok(), store.status().ToString());
    const StoreInfo info = Must((*store)->Info());
    CHECK(FileSize(data) < info.used_pages * info.page_size);
    CHECK(CheckStore(**store).ok());
  }
  StoreOptions every_page = ReadOnly();
  every_page.check_every_page = true;
  CHECK(Store::Open(dir, every_page).ok());
  {
    // Writable too: LMDB writes a free page before it reads it.
    auto store = Must(Store::Open(dir));
    Database db = Must(store->OpenDatabase("notes"));
    CHECK(store
              ->Update([&](WriteTransaction& txn) {
                return txn.Put(db, "after", std::string(50000, 'a'));
              })
              .ok());
    CHECK(CheckStore(*store).ok());
  }
}

TEST_CASE("an empty data file is DATA_LOSS, not a new empty store") {
  TempDir tmp;
  const std::string dir = tmp.Sub("store");
  Populate(dir);
  fs::resize_file(dir + "/data.mdb", 0);
  for (bool read_only : {true, false}) {
    StoreOptions options;
    options.read_only = read_only;
    auto store = Store::Open(dir, options);
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().code() == StatusCode::kDataLoss);
    CHECK(Contains(store.status().message(), "empty (0 bytes)"));
    CHECK(FileSize(dir + "/data.mdb") == 0);
  }
}

TEST_CASE(
    "a bad meta page is DATA_LOSS; a file that is not LMDB's is "
    "FAILED_PRECONDITION") {
  TempDir tmp;
  const std::string good = tmp.Sub("good");
  Populate(good);
  const uint64_t page =
      Must(CheckStore(*Must(Store::Open(good, ReadOnly())))).page_size;
  SUBCASE("first meta page") {
    const std::string dir = tmp.Sub("meta0");
    CopyStore(good, dir);
    Overwrite(dir + "/data.mdb", 0, Garbage(page, 1));
    auto store = Store::Open(dir, ReadOnly());
    CHECK(store.status().code() == StatusCode::kDataLoss);
    CHECK(Contains(store.status().message(), "first meta page"));
  }
  SUBCASE("second meta page") {
    const std::string dir = tmp.Sub("meta1");
    CopyStore(good, dir);
    Overwrite(dir + "/data.mdb", page, Garbage(page, 2));
    auto store = Store::Open(dir, ReadOnly());
    CHECK(store.status().code() == StatusCode::kDataLoss);
    CHECK(Contains(store.status().message(), "second meta page"));
  }
  SUBCASE("not an LMDB file") {
    const std::string dir = tmp.Sub("text");
    fs::create_directory(dir);
    Overwrite(dir + "/data.mdb", 0, std::string(3 * page, 'x'));
    auto store = Store::Open(dir, ReadOnly());
    CHECK(store.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(store.status().message(), "not an LMDB data file"));
  }
}

TEST_CASE("garbage over any one page is found when that page is in use") {
  TempDir tmp;
  const std::string good = tmp.Sub("good");
  Populate(good);
  const StoreCheckReport intact =
      Must(CheckStore(*Must(Store::Open(good, ReadOnly()))));
  // Every page but the two metas, one at a time: a page in use must be
  // reported (by Open when it is one every read starts from, by CheckStore
  // otherwise), a free one changes nothing anyone reads.
  uint64_t reported = 0, whole = 0;
  for (uint64_t p = 2; p < intact.pages; ++p) {
    CAPTURE(p);
    const std::string dir = tmp.Sub("page" + std::to_string(p));
    CopyStore(good, dir);
    Overwrite(dir + "/data.mdb", p * intact.page_size,
              Garbage(intact.page_size, static_cast<uint32_t>(p)));
    auto store = Store::Open(dir, ReadOnly());
    Status status = store.status();
    if (store.ok()) status = CheckStore(**store).status();
    if (status.ok()) {
      ++whole;
    } else {
      CHECK_MESSAGE(status.code() == StatusCode::kDataLoss, status.ToString());
      CHECK(Contains(status.message(), dir + "/data.mdb"));
      ++reported;
    }
    store = StatusOr<std::unique_ptr<Store>>(Status(StatusCode::kUnknown, ""));
    // check_every_page refuses at open exactly what CheckStore reports, so
    // that a server never reaches a damaged page later.
    StoreOptions every_page = ReadOnly();
    every_page.check_every_page = true;
    const Status at_open = Store::Open(dir, every_page).status();
    CHECK_MESSAGE(at_open.ok() == status.ok(), at_open.ToString());
    if (!at_open.ok()) CHECK(at_open.code() == StatusCode::kDataLoss);
    fs::remove_all(dir);
  }
  CHECK(reported == intact.used_pages - 2);
  CHECK(whole == intact.free_pages + intact.unaccounted_pages);
}

// Replaces the first occurrence of `marker` in the first value of sub-database
// `db` that holds it with bytes that are not UTF-8, as a flipped bit in a
// record would, leaving LMDB's structure whole.
void DamageText(Store& store, const std::string& db,
                const std::string& marker) {
  Database handle = Must(store.OpenDatabase(db));
  std::string key, value;
  {
    ReadTransaction txn = Must(store.BeginRead());
    Cursor c = Must(txn.NewCursor(handle));
    for (c.SeekToFirst(); c.Valid(); c.Next()) {
      if (c.value().find(marker) != std::string_view::npos) {
        key.assign(c.key());
        value.assign(c.value());
        break;
      }
    }
  }
  REQUIRE_MESSAGE(!key.empty(), marker, " not found in ", db);
  value.replace(value.find(marker), 2, "\xff\xfe");
  REQUIRE(store
              .Update([&](WriteTransaction& txn) {
                return txn.Put(handle, key, value);
              })
              .ok());
}

TEST_CASE("a record whose text is damaged reads as DATA_LOSS") {
  TempDir tmp;
  const std::string dir = tmp.Sub("store");
  auto store = Must(Store::Open(dir));
  auto convs = Must(ConversationStore::Open(*store));
  auto refs = Must(ReferenceStore::Open(*store));
  Conversation conv = Must(convs->Create({.title = "t"}));
  NewMessage msg;
  msg.content = "hello MSGMARKER world";
  Must(convs->AddMessage(conv.id, msg));
  NewReference ref;
  ref.type = "note";
  ref.title = "title";
  ref.content = "body REFMARKER text";
  Reference added = Must(refs->Add(ref));

  SUBCASE("a message") {
    DamageText(*store, "conversations.messages", "MSGMARKER");
    auto got = convs->Get(conv.id, true);
    CHECK(got.status().code() == StatusCode::kDataLoss);
    CHECK(Contains(got.status().message(), "not UTF-8"));
    CHECK(Contains(got.status().message(), conv.id));
  }
  SUBCASE("a conversation's last message") {
    DamageText(*store, "conversations", "MSGMARKER");
    auto got = convs->Get(conv.id, false);
    CHECK(got.status().code() == StatusCode::kDataLoss);
    CHECK(Contains(got.status().message(), conv.id));
  }
  SUBCASE("a reference") {
    DamageText(*store, "references", "REFMARKER");
    auto got = refs->Get(added.id);
    CHECK(got.status().code() == StatusCode::kDataLoss);
    CHECK(Contains(got.status().message(), added.id));
  }
  auto check = CheckStore(*store);
  CHECK(check.status().code() == StatusCode::kDataLoss);
}

TEST_CASE("a check beside a busy writer sees one snapshot, never damage") {
  TempDir tmp;
  const std::string dir = tmp.Sub("store");
  Populate(dir);
  auto store = Must(Store::Open(dir));
  auto convs = Must(ConversationStore::Open(*store));
  Conversation conv = Must(convs->Create({.title = "busy"}));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      NewMessage msg;
      msg.role = MessageRole::kUser;
      msg.content = Text(i, 500);
      if (!convs->AddMessage(conv.id, msg).ok()) break;
    }
  });
  for (int i = 0; i < 20; ++i) {
    auto report = CheckStore(*store);
    CHECK_MESSAGE(report.ok(), report.status().ToString());
  }
  stop = true;
  writer.join();
}

}  // namespace
}  // namespace ctxkit
