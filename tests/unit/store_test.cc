// In-process tests of ctxkit::Store: reads and writes, cursors, validation,
// map growth and its ceiling, format versions and migrations, open errors,
// and threads. Cross-process behaviour is in store_process_test.cc.

#include "ctxkit/store.h"

#include <doctest/doctest.h>
#include <lmdb.h>
#include <simdjson.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "lib/store/format.h"
#include "lib/store/store_impl.h"
#include "lib/store/store_internal.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

using testing::TempDir;

using testing::Contains;

std::unique_ptr<Store> MustOpen(const std::string& path,
                                const StoreOptions& options = {}) {
  auto store = Store::Open(path, options);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  return std::move(store).value();
}

Database MustDb(Store& store, const std::string& name) {
  auto db = store.OpenDatabase(name);
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  return *db;
}

std::string ReadValue(const Store& store, Database db, const std::string& key) {
  auto txn = store.BeginRead();
  REQUIRE(txn.ok());
  auto v = txn->Get(db, key);
  if (!v.ok())
    return "<" + std::string(StatusCodeName(v.status().code())) + ">";
  return std::string(*v);
}

uint64_t CountOf(const Store& store, Database db) {
  auto txn = store.BeginRead();
  REQUIRE(txn.ok());
  auto n = txn->Count(db);
  REQUIRE(n.ok());
  return *n;
}

TEST_CASE("put, get, delete, count and clear") {
  TempDir dir;
  auto store = MustOpen(dir.Sub("s"));
  Database db = MustDb(*store, "notes");
  REQUIRE(store
              ->Update([&](WriteTransaction& txn) {
                if (Status s = txn.Put(db, "a", "1"); !s.ok()) return s;
                if (Status s = txn.Put(db, "b", std::string(1000, 'x'));
                    !s.ok())
                  return s;
                return txn.Put(db, "empty", "");
              })
              .ok());
  CHECK(ReadValue(*store, db, "a") == "1");
  CHECK(ReadValue(*store, db, "b") == std::string(1000, 'x'));
  CHECK(ReadValue(*store, db, "empty").empty());
  CHECK(ReadValue(*store, db, "missing") == "<NOT_FOUND>");
  CHECK(CountOf(*store, db) == 3);

  REQUIRE(store
              ->Update([&](WriteTransaction& txn) {
                auto gone = txn.Delete(db, "a");
                REQUIRE(gone.ok());
                CHECK(*gone);
                auto again = txn.Delete(db, "a");
                REQUIRE(again.ok());
                CHECK_FALSE(*again);
                // A write transaction reads its own writes.
                auto b = txn.Get(db, "b");
                CHECK(b.ok());
                return txn.Put(db, "a2", "2");
              })
              .ok());
  CHECK(ReadValue(*store, db, "a") == "<NOT_FOUND>");
  CHECK(CountOf(*store, db) == 3);

  REQUIRE(
      store->Update([&](WriteTransaction& txn) { return txn.Clear(db); }).ok());
  CHECK(CountOf(*store, db) == 0);
  // The database stays registered after Clear.
  CHECK(
      store
          ->Update([&](WriteTransaction& txn) { return txn.Put(db, "c", "3"); })
          .ok());
  CHECK(ReadValue(*store, db, "c") == "3");
}

TEST_CASE("a read transaction is a snapshot") {
  TempDir dir;
  auto store = MustOpen(dir.Sub("s"));
  Database db = MustDb(*store, "d");
  REQUIRE(
      store->Update([&](WriteTransaction& t) { return t.Put(db, "k", "old"); })
          .ok());
  auto snapshot = store->BeginRead();
  REQUIRE(snapshot.ok());
  REQUIRE(
      store->Update([&](WriteTransaction& t) { return t.Put(db, "k", "new"); })
          .ok());
  CHECK(*snapshot->Get(db, "k") == "old");
  CHECK(ReadValue(*store, db, "k") == "new");
}

TEST_CASE("cursor iterates in byte order, seeks, and stops at both ends") {
  TempDir dir;
  auto store = MustOpen(dir.Sub("s"));
  Database db = MustDb(*store, "d");
  const std::vector<std::string> keys = {"a", "ab", "b", "b\x01", "c\xff", "d"};
  REQUIRE(store
              ->Update([&](WriteTransaction& t) {
                for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
                  if (Status s = t.Put(db, *it, "v" + *it); !s.ok()) return s;
                }
                return Status();
              })
              .ok());
  auto txn = store->BeginRead();
  REQUIRE(txn.ok());
  auto cursor = txn->NewCursor(db);
  REQUIRE(cursor.ok());
  std::vector<std::string> seen;
  for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
    seen.emplace_back(cursor->key());
    CHECK(cursor->value() == "v" + seen.back());
  }
  CHECK(cursor->status().ok());
  CHECK(seen == keys);

  seen.clear();
  for (cursor->SeekToLast(); cursor->Valid(); cursor->Prev()) {
    seen.emplace_back(cursor->key());
  }
  CHECK(seen == std::vector<std::string>(keys.rbegin(), keys.rend()));

  cursor->Seek("b");
  REQUIRE(cursor->Valid());
  CHECK(cursor->key() == "b");
  cursor->Seek("bb");  // between keys: lands on the next one
  REQUIRE(cursor->Valid());
  CHECK(cursor->key() == "c\xff");
  cursor->Seek("z");
  CHECK_FALSE(cursor->Valid());
  cursor->Next();  // no-op when not valid
  CHECK_FALSE(cursor->Valid());
  cursor->Seek("");
  REQUIRE(cursor->Valid());
  CHECK(cursor->key() == "a");

  // Write-transaction cursors see the transaction's own writes.
  REQUIRE(store
              ->Update([&](WriteTransaction& t) {
                if (Status s = t.Put(db, "aa", "new"); !s.ok()) return s;
                auto c = t.NewCursor(db);
                if (!c.ok()) return c.status();
                c->Seek("aa");
                CHECK(c->Valid());
                CHECK(c->value() == "new");
                return Status();
              })
              .ok());
}

TEST_CASE("database names and keys are validated") {
  TempDir dir;
  auto store = MustOpen(dir.Sub("s"));
  CHECK(store->OpenDatabase("").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(store->OpenDatabase(std::string(256, 'n')).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(store->OpenDatabase(std::string("a\0b", 3)).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(store->OpenDatabase("\xff\xfe").status().code() ==
        StatusCode::kInvalidArgument);
  auto reserved = store->OpenDatabase("__meta");
  CHECK(reserved.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(reserved.status().message(), "reserved"));

  auto first = store->OpenDatabase("same");
  auto second = store->OpenDatabase("same");
  REQUIRE(first.ok());
  REQUIRE(second.ok());

  Database db = *first;
  Status empty_key =
      store->Update([&](WriteTransaction& t) { return t.Put(db, "", "v"); });
  CHECK(empty_key.code() == StatusCode::kInvalidArgument);
  Status long_key = store->Update([&](WriteTransaction& t) {
    return t.Put(db, std::string(Transaction::kMaxKeySize + 1, 'k'), "v");
  });
  CHECK(long_key.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(long_key.message(), "512 bytes"));
  CHECK(store
            ->Update([&](WriteTransaction& t) {
              return t.Put(db, std::string(Transaction::kMaxKeySize, 'k'), "v");
            })
            .ok());
  CHECK(CountOf(*store, db) == 1);

  // Invalid and foreign handles.
  auto txn = store->BeginRead();
  REQUIRE(txn.ok());
  CHECK(txn->Get(Database(), "k").status().code() ==
        StatusCode::kInvalidArgument);
  TempDir other_dir;
  auto other = MustOpen(other_dir.Sub("s"));
  Database foreign = MustDb(*other, "same");
  CHECK(txn->Get(foreign, "k").status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a failing function writes nothing") {
  TempDir dir;
  auto store = MustOpen(dir.Sub("s"));
  Database db = MustDb(*store, "d");
  Status s = store->Update([&](WriteTransaction& t) {
    CHECK(t.Put(db, "k1", "v").ok());
    CHECK(t.Put(db, "k2", "v").ok());
    return Status(StatusCode::kAborted, "changed my mind");
  });
  CHECK(s.code() == StatusCode::kAborted);
  CHECK(s.message() == "changed my mind");
  CHECK(CountOf(*store, db) == 0);
}

// Writes `n` values of `size` bytes under keys "k0000".."k<n-1>".
Status WriteMany(WriteTransaction& t, Database db, int n, size_t size,
                 char fill = 'v') {
  for (int i = 0; i < n; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "k%04d", i);
    if (Status s = t.Put(db, key, std::string(size, fill)); !s.ok()) return s;
  }
  return Status();
}

TEST_CASE("a full map grows and the write is retried whole") {
  TempDir dir;
  StoreOptions options;
  options.map_size = StoreOptions::kMinMapSize;  // 1 MiB
  options.max_map_size = uint64_t{64} << 20;
  auto store = MustOpen(dir.Sub("s"), options);
  Database db = MustDb(*store, "d");
  const uint64_t before = store->Info()->map_size;

  int attempts = 0;
  Status s = store->Update([&](WriteTransaction& t) {
    ++attempts;
    return WriteMany(t, db, 128, 64 * 1024);  // 8 MiB in one transaction
  });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(attempts > 1);  // it really did run out and retry
  CHECK(CountOf(*store, db) == 128);
  CHECK(ReadValue(*store, db, "k0127") == std::string(64 * 1024, 'v'));
  auto info = store->Info();
  REQUIRE(info.ok());
  CHECK(info->map_size > before);
  CHECK(info->map_size <= options.max_map_size);
}

TEST_CASE("a swallowed map-full error is still retried, never half-committed") {
  TempDir dir;
  StoreOptions options;
  options.map_size = StoreOptions::kMinMapSize;
  auto store = MustOpen(dir.Sub("s"), options);
  Database db = MustDb(*store, "d");
  Status s = store->Update([&](WriteTransaction& t) {
    (void)WriteMany(t, db, 64, 64 * 1024);  // errors ignored on purpose
    return Status();
  });
  REQUIRE(s.ok());
  CHECK(CountOf(*store, db) == 64);
}

TEST_CASE(
    "at the ceiling a write fails with RESOURCE_EXHAUSTED and changes "
    "nothing") {
  TempDir dir;
  StoreOptions options;
  options.map_size = StoreOptions::kMinMapSize;
  options.max_map_size = 2 * StoreOptions::kMinMapSize;
  auto store = MustOpen(dir.Sub("s"), options);
  Database db = MustDb(*store, "d");
  REQUIRE(
      store
          ->Update([&](WriteTransaction& t) { return t.Put(db, "keep", "me"); })
          .ok());

  Status s = store->Update([&](WriteTransaction& t) {
    return WriteMany(t, db, 64, 64 * 1024);  // 4 MiB > 2 MiB ceiling
  });
  CHECK(s.code() == StatusCode::kResourceExhausted);
  CHECK(Contains(s.message(), "ceiling"));
  CHECK(Contains(s.message(), "max_map_size"));
  CHECK(CountOf(*store, db) == 1);
  CHECK(ReadValue(*store, db, "keep") == "me");
  CHECK(ReadValue(*store, db, "k0000") == "<NOT_FOUND>");
  // Still usable for writes that fit.
  CHECK(store
            ->Update(
                [&](WriteTransaction& t) { return t.Put(db, "small", "ok"); })
            .ok());
  CHECK(ReadValue(*store, db, "small") == "ok");
}

TEST_CASE("reentrant calls fail cleanly instead of deadlocking") {
  TempDir dir;
  StoreOptions options;
  options.map_size = StoreOptions::kMinMapSize;
  auto store = MustOpen(dir.Sub("s"), options);
  Database db = MustDb(*store, "d");

  Status nested = store->Update([&](WriteTransaction&) {
    return store->Update([](WriteTransaction&) { return Status(); });
  });
  CHECK(nested.code() == StatusCode::kFailedPrecondition);

  Status open_inside = store->Update(
      [&](WriteTransaction&) { return store->OpenDatabase("other").status(); });
  CHECK(open_inside.code() == StatusCode::kFailedPrecondition);

  {
    // Growth must wait for this thread's own reader: refused, not hung.
    auto reader = store->BeginRead();
    REQUIRE(reader.ok());
    Status s = store->Update(
        [&](WriteTransaction& t) { return WriteMany(t, db, 64, 64 * 1024); });
    CHECK(s.code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(s.message(), "read transaction"));
    // Small writes that need no growth are fine meanwhile.
    CHECK(
        store->Update([&](WriteTransaction& t) { return t.Put(db, "x", "y"); })
            .ok());
  }
  CHECK(store
            ->Update([&](WriteTransaction& t) {
              return WriteMany(t, db, 64, 64 * 1024);
            })
            .ok());
  // Reading inside Update is allowed.
  CHECK(store
            ->Update([&](WriteTransaction&) {
              auto r = store->BeginRead();
              return r.status();
            })
            .ok());
}

TEST_CASE("read transactions move between threads") {
  TempDir dir;
  StoreOptions options;
  options.map_size = StoreOptions::kMinMapSize;
  auto store = MustOpen(dir.Sub("s"), options);
  Database db = MustDb(*store, "d");
  REQUIRE(
      store->Update([&](WriteTransaction& t) { return t.Put(db, "k", "v"); })
          .ok());
  auto txn = store->BeginRead();
  REQUIRE(txn.ok());
  std::string seen;
  std::thread other([&, t = std::move(txn).value()]() mutable {
    seen = std::string(*t.Get(db, "k"));
    ReadTransaction moved = std::move(t);  // and ends here, on this thread
  });
  other.join();
  CHECK(seen == "v");
  // The transaction ended on the other thread; if the store still counted
  // it as open (or as this thread's), growth would be refused or wait
  // forever. 4 MiB into a 1 MiB map needs growth.
  Status grown = store->Update(
      [&](WriteTransaction& t) { return WriteMany(t, db, 64, 64 * 1024); });
  CHECK_MESSAGE(grown.ok(), grown.ToString());
  CHECK(store->Info()->map_size > options.map_size);
}

TEST_CASE(
    "concurrent readers always see whole transactions while the map grows") {
  TempDir dir;
  StoreOptions options;
  options.map_size = StoreOptions::kMinMapSize;
  auto store = MustOpen(dir.Sub("s"), options);
  Database db = MustDb(*store, "d");
  REQUIRE(store
              ->Update([&](WriteTransaction& t) {
                if (Status s = t.Put(db, "a", "0"); !s.ok()) return s;
                return t.Put(db, "b", "0");
              })
              .ok());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> torn{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        auto txn = store->BeginRead();
        if (!txn.ok()) {
          ++torn;
          continue;
        }
        auto a = txn->Get(db, "a");
        auto b = txn->Get(db, "b");
        if (!a.ok() || !b.ok() || *a != *b) ++torn;
        ++reads;
      }
    });
  }
  for (int i = 1; i <= 60; ++i) {
    Status s = store->Update([&](WriteTransaction& t) {
      const std::string v = std::to_string(i);
      if (Status e = t.Put(db, "a", v); !e.ok()) return e;
      // Bulk that forces the map to grow every few iterations.
      char key[32];
      std::snprintf(key, sizeof key, "bulk%03d", i);
      if (Status e = t.Put(db, key, std::string(96 * 1024, 'x')); !e.ok())
        return e;
      return t.Put(db, "b", v);
    });
    REQUIRE_MESSAGE(s.ok(), s.ToString());
  }
  done = true;
  for (auto& t : readers) t.join();
  CHECK(torn.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(ReadValue(*store, db, "a") == "60");
  CHECK(store->Info()->map_size > options.map_size);
}

TEST_CASE("read-only stores") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  StoreOptions ro;
  ro.read_only = true;

  auto missing = Store::Open(path, ro);
  CHECK(missing.status().code() == StatusCode::kNotFound);
  std::filesystem::create_directory(path);
  auto empty = Store::Open(path, ro);
  CHECK(empty.status().code() == StatusCode::kNotFound);
  CHECK(Contains(empty.status().message(), "data.mdb"));

  {
    auto rw = MustOpen(path);
    Database db = MustDb(*rw, "a");
    REQUIRE(rw->Update([&](WriteTransaction& t) {
                return t.Put(db, "k", "v");
              }).ok());
  }
  auto store = MustOpen(path, ro);
  CHECK(store->read_only());
  Database db = MustDb(*store, "a");
  CHECK(ReadValue(*store, db, "k") == "v");
  CHECK(store->OpenDatabase("b").status().code() == StatusCode::kNotFound);
  Status write =
      store->Update([&](WriteTransaction& t) { return t.Put(db, "k", "w"); });
  CHECK(write.code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(write.message(), "read-only"));
  CHECK(ReadValue(*store, db, "k") == "v");
  CHECK(store->Info()->read_only);
}

TEST_CASE("sync modes: LMDB flushes the meta page only under kFull") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  StoreOptions data_only;
  data_only.sync = StoreSync::kDataOnly;
  {
    auto store = MustOpen(path, data_only);
    CHECK(internal::StoreAccess::Impl(*store).sync() == StoreSync::kDataOnly);
    Database db = MustDb(*store, "a");
    REQUIRE(
        store->Update([&](WriteTransaction& t) { return t.Put(db, "k", "v"); })
            .ok());
  }
  // The mode belongs to the open, not to the store: the default is full
  // again, and what was committed is there.
  auto store = MustOpen(path);
  CHECK(internal::StoreAccess::Impl(*store).sync() == StoreSync::kFull);
  CHECK(ReadValue(*store, MustDb(*store, "a"), "k") == "v");
}

TEST_CASE("open errors are clear") {
  TempDir dir;
  SUBCASE("bad options name the field") {
    StoreOptions o;
    o.map_size = 1000;
    auto s = Store::Open(dir.Sub("s"), o);
    CHECK(s.status().code() == StatusCode::kInvalidArgument);
    CHECK(Contains(s.status().message(), "map_size"));
    o = StoreOptions();
    o.max_map_size = o.map_size - 1;
    s = Store::Open(dir.Sub("s"), o);
    CHECK(Contains(s.status().message(), "max_map_size"));
    o = StoreOptions();
    o.max_readers = 0;
    s = Store::Open(dir.Sub("s"), o);
    CHECK(Contains(s.status().message(), "max_readers"));
    o = StoreOptions();
    o.sync = static_cast<StoreSync>(2);
    s = Store::Open(dir.Sub("s"), o);
    CHECK(s.status().code() == StatusCode::kInvalidArgument);
    CHECK(Contains(s.status().message(), "StoreOptions.sync"));
    CHECK(Store::Open("").status().code() == StatusCode::kInvalidArgument);
    CHECK(Store::Open(std::string("a\0b", 3)).status().code() ==
          StatusCode::kInvalidArgument);
  }
  SUBCASE("missing parent directory") {
    auto s = Store::Open(dir.Sub("no/such/parent/s"));
    CHECK(s.status().code() == StatusCode::kNotFound);
    CHECK(Contains(s.status().message(), dir.Sub("no/such/parent")));
    CHECK(Contains(s.status().message(), "does not exist"));
    CHECK_FALSE(std::filesystem::exists(dir.Sub("no")));
  }
  SUBCASE("not creating a missing store when asked not to") {
    StoreOptions o;
    o.create_if_missing = false;
    CHECK(Store::Open(dir.Sub("s"), o).status().code() ==
          StatusCode::kNotFound);
    CHECK_FALSE(std::filesystem::exists(dir.Sub("s")));
  }
  SUBCASE("a path that is a file") {
    std::ofstream(dir.Sub("file")) << "hello";
    auto s = Store::Open(dir.Sub("file"));
    CHECK(s.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(s.status().message(), "not a directory"));
  }
  SUBCASE("a directory holding a file that is not LMDB") {
    std::filesystem::create_directory(dir.Sub("s"));
    {
      std::ofstream f(dir.Sub("s/data.mdb"));
      for (int i = 0; i < 4096; ++i) f << "this is not an LMDB file\n";
    }
    auto s = Store::Open(dir.Sub("s"));
    CHECK(s.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(s.status().message(), "not an LMDB data file"));
    // Nothing was overwritten.
    std::ifstream f(dir.Sub("s/data.mdb"));
    std::string first;
    std::getline(f, first);
    CHECK(first == "this is not an LMDB file");
  }
  SUBCASE("data.mdb that is a directory") {
    std::filesystem::create_directories(dir.Sub("s/data.mdb"));
    CHECK(Store::Open(dir.Sub("s")).status().code() ==
          StatusCode::kFailedPrecondition);
  }
  SUBCASE("an LMDB environment that is not a ctxkit store") {
    std::filesystem::create_directory(dir.Sub("s"));
    MDB_env* env;
    REQUIRE(mdb_env_create(&env) == 0);
    REQUIRE(mdb_env_open(env, dir.Sub("s").c_str(), 0, 0600) == 0);
    MDB_txn* txn;
    REQUIRE(mdb_txn_begin(env, nullptr, 0, &txn) == 0);
    MDB_dbi dbi;
    REQUIRE(mdb_dbi_open(txn, nullptr, 0, &dbi) == 0);
    MDB_val k{3, const_cast<char*>("key")}, v{5, const_cast<char*>("value")};
    REQUIRE(mdb_put(txn, dbi, &k, &v, 0) == 0);
    REQUIRE(mdb_txn_commit(txn) == 0);
    mdb_env_close(env);
    auto s = Store::Open(dir.Sub("s"));
    CHECK(s.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(s.status().message(), "not a ctxkit store"));
  }
  SUBCASE("the same directory twice in one process") {
    auto first = MustOpen(dir.Sub("s"));
    auto second = Store::Open(dir.Sub("s") + "/");
    CHECK(second.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(second.status().message(), "already open"));
    first.reset();
    CHECK(Store::Open(dir.Sub("s")).ok());
  }
}

// A test format: version 4 (newer than the real one), reached from 1
// through three migrations that each leave a mark, so the test can see they
// ran, in order, exactly once.
static_assert(Store::kFormatVersion < 4, "the test format must be newer");
internal::FormatSpec FormatV4(bool fail_second = false) {
  internal::FormatSpec spec;
  spec.current = 4;
  auto step = [fail_second](uint32_t from) {
    return internal::Migration{
        from,
        [from, fail_second](internal::MigrationContext& ctx) -> absl::Status {
          if (from == 2 && fail_second) return absl::InternalError("boom");
          auto db = ctx.OpenDatabase("migrations");
          if (!db.ok()) return db.status();
          auto& t = ctx.txn();
          auto prev = t.Get(*db, "log");
          std::string log = prev.ok() ? std::string(*prev) : "";
          log += std::to_string(from);
          Status s = t.Put(*db, "log", log);
          return s.ok() ? absl::OkStatus() : absl::InternalError(s.message());
        }};
  };
  spec.migrations = {step(1), step(2), step(3)};
  return spec;
}

// The test format's version 1: what the chain of FormatV4 starts from.
internal::FormatSpec FormatV1() {
  internal::FormatSpec spec;
  spec.current = 1;
  return spec;
}

TEST_CASE("format version: newer refused, older migrated through the hook") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  {
    auto store = internal::StoreImpl::Open(path, {}, FormatV1());
    REQUIRE(store.ok());
    CHECK((*store)->format_version() == 1);
  }
  SUBCASE("a failing migration leaves the store at its old version") {
    auto failed =
        internal::StoreImpl::Open(path, {}, FormatV4(/*fail_second=*/true));
    CHECK(failed.status().code() == absl::StatusCode::kInternal);
    CHECK(
        Contains(std::string(failed.status().message()), "from format 2 to 3"));
    auto store = internal::StoreImpl::Open(path, {}, FormatV1());
    REQUIRE(store.ok());
    CHECK((*store)->format_version() == 1);  // still
  }
  SUBCASE("upgrade, then the old version refuses the newer store") {
    {
      auto upgraded = internal::StoreImpl::Open(path, {}, FormatV4());
      REQUIRE_MESSAGE(upgraded.ok(), upgraded.status().ToString());
      CHECK((*upgraded)->format_version() == 4);
      auto info = (*upgraded)->Info();
      REQUIRE(info.ok());
      CHECK(info->format_version == 4);
    }
    {
      // Reopening at the same version runs nothing again.
      auto again = internal::StoreImpl::Open(path, {}, FormatV4());
      REQUIRE(again.ok());
      auto db = (*again)->OpenDatabase("migrations");
      REQUIRE(db.ok());
      auto txn = (*again)->BeginRead();
      REQUIRE(txn.ok());
      CHECK(*txn->Get(*db, "log") == "123");
    }
    auto old = Store::Open(path);
    CHECK(old.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(old.status().message(), "format version 4"));
    CHECK(Contains(old.status().message(),
                   "format version " + std::to_string(Store::kFormatVersion)));
    StoreOptions ro;
    ro.read_only = true;
    CHECK(Store::Open(path, ro).status().code() ==
          StatusCode::kFailedPrecondition);
  }
  SUBCASE("read-only cannot migrate; a missing step is refused") {
    StoreOptions ro;
    ro.read_only = true;
    auto r = internal::StoreImpl::Open(path, ro, FormatV4());
    CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Contains(std::string(r.status().message()), "read-write once"));
    internal::FormatSpec gap;
    gap.current = 4;
    gap.migrations = {FormatV4().migrations[1],
                      FormatV4().migrations[2]};  // only 2 -> 3 -> 4
    auto g = internal::StoreImpl::Open(path, {}, gap);
    CHECK(g.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Contains(std::string(g.status().message()), "no migration from 1"));
  }
}

TEST_CASE("Info lists every database and serializes to JSON") {
  TempDir dir;
  auto store = MustOpen(dir.Sub("s"));
  Database a = MustDb(*store, "alpha");
  MustDb(*store, "beta");
  REQUIRE(store
              ->Update(
                  [&](WriteTransaction& t) { return WriteMany(t, a, 10, 100); })
              .ok());
  auto info = store->Info();
  REQUIRE(info.ok());
  REQUIRE(info->databases.size() == 3);
  CHECK(info->databases[0].name == "__meta");
  CHECK(info->databases[1].name == "alpha");
  CHECK(info->databases[1].entries == 10);
  CHECK(info->databases[1].pages >= 1);
  CHECK(info->databases[2].name == "beta");
  CHECK(info->databases[2].entries == 0);
  CHECK(info->page_size >= 4096);
  CHECK(info->used_pages > 2);
  CHECK(info->readers_in_use == 0);
  CHECK(info->path == dir.Sub("s"));

  auto json = StoreInfoToJson(*info);
  REQUIRE(json.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(*json).get(doc) == simdjson::SUCCESS);
  CHECK(int64_t(doc["schema_version"]) == 1);
  CHECK(std::string_view(doc["path"]) == dir.Sub("s"));
  CHECK(uint64_t(doc["used_bytes"]) == info->used_pages * info->page_size);
  simdjson::dom::array dbs = doc["databases"];
  CHECK(dbs.size() == 3);
  CHECK(std::string_view(dbs.at(1)["name"]) == "alpha");
  CHECK(uint64_t(dbs.at(1)["entries"]) == 10);

  // A reader open elsewhere is counted.
  auto reader = store->BeginRead();
  CHECK(store->Info()->readers_in_use == 1);
}

}  // namespace
}  // namespace ctxkit
