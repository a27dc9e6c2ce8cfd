// The upgrade of a format-1 store's cache to format 2. A format-1 store is
// made here the way the old release wrote one: every record in version-1
// layout (written below from its description, not with the library's
// encoder) and every content in "cache.content"; then the format version in
// __meta is set to 1 with LMDB directly, as no ctxkit API writes it.

#include <doctest/doctest.h>
#include <lmdb.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ctxkit/cache.h"
#include "ctxkit/store.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_check.h"
#include "lib/cache/cache_format.h"
#include "tests/cache/cache_fixture.h"

namespace ctxkit::cache_test {
namespace {

// u8 1 | u64 serial, tokens, created_at, expires_at, hit_count,
// last_accessed, size_bytes (big-endian) | u8 len + model |
// u8 len + conversation_id.
std::string VersionOneRecord(const internal::EntryMeta& m) {
  std::string out(1, '\1');
  for (uint64_t v : {m.serial, m.tokens, static_cast<uint64_t>(m.created_at),
                     static_cast<uint64_t>(m.expires_at), m.hit_count,
                     static_cast<uint64_t>(m.last_accessed), m.size_bytes}) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((v >> shift) & 0xff));
    }
  }
  out.push_back(static_cast<char>(m.model.size()));
  out += m.model;
  out.push_back(static_cast<char>(m.conversation_id.size()));
  out += m.conversation_id;
  return out;
}

void Check(int rc) { REQUIRE_MESSAGE(rc == 0, mdb_strerror(rc)); }

// Rewrites the closed store at `path` as format 1 would have it. With
// `damage`, the record of `damage` gets an unknown version byte; with
// `lose`, the content row of `lose` is deleted.
void MakeFormatOne(const std::string& path, const std::string& damage = "",
                   const std::string& lose = "") {
  MDB_env* env = nullptr;
  Check(mdb_env_create(&env));
  Check(mdb_env_set_maxdbs(env, 64));
  Check(mdb_env_open(env, path.c_str(), 0, 0600));
  MDB_txn* txn = nullptr;
  Check(mdb_txn_begin(env, nullptr, 0, &txn));
  MDB_dbi entries, content, meta;
  Check(mdb_dbi_open(txn, "cache", 0, &entries));
  Check(mdb_dbi_open(txn, "cache.content", 0, &content));
  Check(mdb_dbi_open(txn, "__meta", 0, &meta));
  std::map<std::string, std::string> records, contents;
  MDB_cursor* cursor = nullptr;
  Check(mdb_cursor_open(txn, entries, &cursor));
  MDB_val k, v;
  for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    const std::string key(static_cast<char*>(k.mv_data), k.mv_size);
    auto m = internal::DecodeMeta(
        key, std::string_view(static_cast<char*>(v.mv_data), v.mv_size));
    REQUIRE(m.ok());
    if (m->inline_content) contents[key] = *m->inline_content;
    records[key] = VersionOneRecord(*m);
    if (key == damage) records[key][0] = 9;
  }
  mdb_cursor_close(cursor);
  auto put = [&](MDB_dbi db, std::string_view key, std::string_view value) {
    MDB_val kk{key.size(), const_cast<char*>(key.data())};
    MDB_val vv{value.size(), const_cast<char*>(value.data())};
    Check(mdb_put(txn, db, &kk, &vv, 0));
  };
  for (const auto& [key, record] : records) put(entries, key, record);
  for (const auto& [key, bytes] : contents) put(content, key, bytes);
  if (!lose.empty()) {
    MDB_val kk{lose.size(), const_cast<char*>(lose.data())};
    Check(mdb_del(txn, content, &kk, nullptr));
  }
  put(meta, "format_version", std::string("\1\0\0\0", 4));
  Check(mdb_txn_commit(txn));
  mdb_env_close(env);
}

struct Stored {
  std::string key, content;
  uint64_t hits;
};

TEST_CASE(
    "a format-1 cache is upgraded: small content moves in, nothing "
    "else changes") {
  TempDir dir;
  const std::string path = (dir.path / "s").string();
  std::vector<Stored> stored;
  {
    auto store = Store::Open(path);
    REQUIRE(store.ok());
    auto cache = Cache::Open(**store);
    REQUIRE(cache.ok());
    const std::vector<std::string> contents = {
        "a system prompt", std::string(1024, 'k'), std::string(4000, 'L')};
    for (size_t i = 0; i < contents.size(); ++i) {
      auto put = (*cache)->Put(contents[i], Prefix("p"));
      REQUIRE(put.ok());
      for (size_t h = 0; h < i; ++h) REQUIRE((*cache)->Get(put->key).ok());
      stored.push_back({put->key, contents[i], i});
    }
    auto keyed = (*cache)->PutKeyed("a lookup", "its value", Prefix("p"));
    REQUIRE(keyed.ok());
    stored.push_back({keyed->key, "its value", 0});
    REQUIRE((*cache)->Flush().ok());
  }
  MakeFormatOne(path);
  {
    StoreOptions ro;
    ro.read_only = true;
    CHECK(Store::Open(path, ro).status().code() ==
          StatusCode::kFailedPrecondition);
  }
  auto store = Store::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().message());
  CHECK((*store)->Info()->format_version == Store::kFormatVersion);
  internal::CacheCheckSummary summary;
  const absl::Status checked = internal::CheckCacheTotals(**store, &summary);
  REQUIRE_MESSAGE(checked.ok(), checked.ToString());
  CHECK(summary.entries == stored.size());
  auto dbs = internal::CacheDbs::Open(**store);
  REQUIRE(dbs.ok());
  {
    auto txn = (*store)->BeginRead();
    REQUIRE(txn.ok());
    // Only the 4,000-byte content is too large for its record.
    CHECK(*txn->Count(dbs->content) == 1);
  }
  auto cache = Cache::Open(**store);
  REQUIRE(cache.ok());
  for (const Stored& s : stored) {
    auto got = (*cache)->Get(s.key);
    REQUIRE_MESSAGE(got.ok(), got.status().message());
    CHECK(got->content == s.content);
    CHECK(got->hit_count == s.hits + 1);
  }
  auto keyed = (*cache)->GetKeyed("a lookup", "p");
  REQUIRE(keyed.ok());
  CHECK(keyed->content == "its value");
}

TEST_CASE("a damaged format-1 store stops the upgrade and changes nothing") {
  TempDir dir;
  const std::string path = (dir.path / "s").string();
  std::string key;
  {
    auto store = Store::Open(path);
    REQUIRE(store.ok());
    auto cache = Cache::Open(**store);
    REQUIRE(cache.ok());
    key = (*cache)->Put("a system prompt", Prefix("p"))->key;
  }
  std::string damage;
  SUBCASE("a record of an unknown version") {
    MakeFormatOne(path, key);
    damage = "malformed version-1 record";
  }
  SUBCASE("a content row lost") {
    MakeFormatOne(path, "", key);
    damage = "has lost its content";
  }
  auto failed = Store::Open(path);
  CHECK(failed.status().code() == StatusCode::kDataLoss);
  CHECK(failed.status().message().find(key) != std::string::npos);
  CHECK(failed.status().message().find(damage) != std::string::npos);
  CHECK(failed.status().message().find("from format 1 to 2") !=
        std::string::npos);
  // Still format 1: the read-only open says so rather than misreading it.
  StoreOptions ro;
  ro.read_only = true;
  auto old = Store::Open(path, ro);
  CHECK(old.status().code() == StatusCode::kFailedPrecondition);
  CHECK(old.status().message().find("format version 1") != std::string::npos);
}

}  // namespace
}  // namespace ctxkit::cache_test
