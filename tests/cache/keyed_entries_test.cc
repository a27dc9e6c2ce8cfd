// ctxkit::Cache keyed entries (PutKeyed/GetKeyed): found by a lookup (the
// compactor's canonical request), never by content. Put/get, replacement,
// TTL, prefix isolation, forced hash collisions (keyed vs keyed and keyed vs
// content), capacity, statistics against a recount, the delete hook, and
// reopening.

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ctxkit/cache.h"
#include "ctxkit/store.h"
#include "lib/base/ids.h"
#include "lib/cache/cache_format.h"
#include "lib/cache/cache_impl.h"
#include "lib/cache/delete_hook.h"
#include "tests/cache/cache_fixture.h"

namespace ctxkit {
namespace {

using cache_test::Clock;
using cache_test::Fixture;
using cache_test::TempDir;
namespace fs = std::filesystem;

CachePutOptions Opts(std::string prefix, int64_t ttl = 0) {
  return cache_test::Prefix(std::move(prefix), ttl);
}

// A request-like lookup, as the compactor builds one.
std::string Request(int i) {
  return "{\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":"
         "\"request " +
         std::to_string(i) + "\"}],\"strategy\":\"smart\"}";
}

// Recounts the statistics from the records: every entry's size is its
// content plus (keyed) its lookup; every index has one row per entry and
// "cache.lookup" one per keyed entry.
void CheckAgainstRecount(Store& store, Cache& cache, uint64_t keyed_expected) {
  auto stats = cache.Stats(1000);
  REQUIRE(stats.ok());
  auto dbs = internal::CacheDbs::Open(store);
  REQUIRE(dbs.ok());
  auto txn = store.BeginRead();
  REQUIRE(txn.ok());
  uint64_t entries = 0, bytes = 0, tokens = 0, hits = 0, keyed = 0,
           content_rows = 0;
  std::map<std::string, uint64_t> prefix_bytes;
  auto cursor = txn->NewCursor(dbs->entries);
  REQUIRE(cursor.ok());
  for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
    auto meta = internal::DecodeMeta(cursor->key(), cursor->value());
    REQUIRE(meta.ok());
    ++entries;
    bytes += meta->size_bytes;
    tokens += meta->tokens;
    hits += meta->hit_count;
    auto row = txn->Get(dbs->content, cursor->key());
    if (meta->inline_content) {
      CHECK(row.status().code() == StatusCode::kNotFound);
    } else {
      REQUIRE(row.ok());
      ++content_rows;
    }
    const std::string_view content =
        meta->inline_content ? std::string_view(*meta->inline_content) : *row;
    auto lookup =
        internal::KeyedLookupOf(*txn, *dbs, cursor->key(), meta->serial);
    REQUIRE(lookup.ok());
    uint64_t expected = content.size();
    if (lookup->has_value()) {
      ++keyed;
      expected += (*lookup)->size();
    }
    CHECK(meta->size_bytes == expected);
    const std::string key(cursor->key());
    prefix_bytes[key.substr(0, key.find(':'))] += meta->size_bytes;
  }
  CHECK(keyed == keyed_expected);
  CHECK(*txn->Count(dbs->lookup) == keyed);
  CHECK(stats->total_entries == entries);
  CHECK(stats->size_bytes == bytes);
  CHECK(stats->total_tokens == tokens);
  CHECK(stats->total_hits == hits);
  CHECK(*txn->Count(dbs->content) == content_rows);
  CHECK(*txn->Count(dbs->lru) == entries);
  CHECK(*txn->Count(dbs->hash) == entries);
  CHECK(*txn->Count(dbs->hits) == entries);
  for (const auto& p : stats->by_prefix) {
    CHECK(p.size_bytes == prefix_bytes[p.prefix]);
  }
}

TEST_CASE("PutKeyed and GetKeyed: found by the lookup, not the content") {
  Fixture f;
  auto cache = f.Open();
  const std::string lookup = Request(1);
  const std::string value = "{\"messages\":[],\"token_estimate\":3}";
  auto put = cache->PutKeyed(lookup, value, Opts("compact", 60000));
  REQUIRE_MESSAGE(put.ok(), put.status().ToString());
  CHECK(put->key.rfind("compact:", 0) == 0);
  CHECK(put->key.size() == std::string("compact:").size() + 32);
  CHECK(put->tokens > 0);
  CHECK(put->created_at == 1700000000000);
  CHECK(put->expires_at == 1700000060000);
  CHECK_FALSE(put->already_cached);

  auto got = cache->GetKeyed(lookup, "compact");
  REQUIRE(got.ok());
  CHECK(got->key == put->key);
  CHECK(got->content == value);
  CHECK(got->tokens == put->tokens);
  CHECK(got->hit_count == 1);
  CHECK(got->model == "claude-3-5-sonnet");
  // The key is an ordinary key: Get finds the value too.
  auto by_key = cache->Get(put->key);
  REQUIRE(by_key.ok());
  CHECK(by_key->content == value);
  CHECK(by_key->hit_count == 2);

  // The key does not come from the content: neither Put nor Check of the
  // value (or of the lookup) finds or dedupes into the keyed entry.
  CHECK_FALSE(cache->Check(value)->exists);
  CHECK_FALSE(cache->Check(lookup)->exists);
  auto plain = cache->Put(value, Opts("compact"));
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->already_cached);
  CHECK(plain->key != put->key);
  auto plain_lookup = cache->Put(lookup, Opts("compact"));
  REQUIRE(plain_lookup.ok());
  CHECK(plain_lookup->key != put->key);
  CHECK(cache->GetKeyed(lookup, "compact")->content == value);

  // Another lookup, even one that differs by a byte, misses.
  auto miss = cache->GetKeyed(lookup + " ", "compact");
  CHECK(miss.status().code() == StatusCode::kNotFound);
  CHECK(miss.status().message().find("not in the cache") != std::string::npos);
  CheckAgainstRecount(*f.store, *cache, 1);
}

TEST_CASE("re-putting a lookup refreshes the same value, replaces another") {
  Fixture f;
  auto cache = f.Open();
  const std::string lookup = Request(2);
  auto first = cache->PutKeyed(lookup, "result one", Opts("c", 1000));
  REQUIRE(first.ok());
  REQUIRE(cache->GetKeyed(lookup, "c").ok());
  REQUIRE(cache->GetKeyed(lookup, "c").ok());

  f.clock.Advance(500);
  auto same = cache->PutKeyed(lookup, "result one", Opts("c", 1000));
  REQUIRE(same.ok());
  CHECK(same->already_cached);
  CHECK(same->key == first->key);
  CHECK(same->created_at == first->created_at);
  CHECK(same->expires_at == f.clock.now->load() + 1000);  // refreshed
  CHECK(cache->GetKeyed(lookup, "c")->hit_count == 3);    // hits kept

  f.clock.Advance(10);
  CachePutOptions o = Opts("c", 0);
  o.model = "gpt-4o";
  auto replaced = cache->PutKeyed(lookup, "result two, longer", o);
  REQUIRE(replaced.ok());
  CHECK_FALSE(replaced->already_cached);
  CHECK(replaced->key == first->key);  // the same key
  CHECK(replaced->created_at == f.clock.now->load());
  CHECK(replaced->expires_at == 0);
  auto got = cache->GetKeyed(lookup, "c");
  REQUIRE(got.ok());
  CHECK(got->content == "result two, longer");
  CHECK(got->model == "gpt-4o");
  CHECK(got->hit_count == 1);  // a new entry
  auto stats = cache->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->total_entries == 1);
  CHECK(stats->lifetime_hits == 4);  // the replaced entry's hits stay counted
  CHECK(stats->evictions == 0);
  CHECK(stats->expirations == 0);
  CheckAgainstRecount(*f.store, *cache, 1);
}

TEST_CASE("keyed entries expire with the test clock like others") {
  Fixture f;
  auto cache = f.Open();
  const std::string lookup = Request(3);
  REQUIRE(cache->PutKeyed(lookup, "short", Opts("t", 1000)).ok());
  REQUIRE(cache->PutKeyed(Request(4), "forever", Opts("t")).ok());
  f.clock.Advance(999);
  CHECK(cache->GetKeyed(lookup, "t").ok());
  f.clock.Advance(1);
  auto gone = cache->GetKeyed(lookup, "t");
  CHECK(gone.status().code() == StatusCode::kNotFound);
  CHECK(gone.status().message().find("expired") != std::string::npos);
  REQUIRE(cache->Flush().ok());  // drops what the read saw expired
  auto s = cache->Stats();
  REQUIRE(s.ok());
  CHECK(s->total_entries == 1);
  CHECK(s->expirations == 1);
  CHECK(s->total_misses == 1);
  CheckAgainstRecount(*f.store, *cache, 1);

  // Put again after expiry: a fresh entry. Sweep removes keyed entries.
  auto back = cache->PutKeyed(lookup, "short", Opts("t", 1000));
  REQUIRE(back.ok());
  CHECK_FALSE(back->already_cached);
  f.clock.Advance(5000);
  CHECK(*cache->Sweep() == 1);
  CHECK(cache->GetKeyed(lookup, "t").status().code() == StatusCode::kNotFound);
  CHECK(cache->GetKeyed(Request(4), "t").ok());
  CheckAgainstRecount(*f.store, *cache, 1);
}

TEST_CASE("prefixes isolate keyed entries; Clear(prefix) removes them") {
  Fixture f;
  auto cache = f.Open();
  const std::string lookup = Request(5);
  auto a = cache->PutKeyed(lookup, "for a", Opts("a"));
  auto b = cache->PutKeyed(lookup, "for b", Opts("b"));
  REQUIRE((a.ok() && b.ok()));
  CHECK(a->key != b->key);
  CHECK(a->key.substr(2) == b->key.substr(2));  // same hash
  CHECK(cache->GetKeyed(lookup, "a")->content == "for a");
  CHECK(cache->GetKeyed(lookup, "b")->content == "for b");
  CHECK(cache->GetKeyed(lookup, "c").status().code() == StatusCode::kNotFound);
  CHECK(*cache->Clear(std::string_view("a")) == 1);
  CHECK(cache->GetKeyed(lookup, "a").status().code() == StatusCode::kNotFound);
  CHECK(cache->GetKeyed(lookup, "b")->content == "for b");
  CheckAgainstRecount(*f.store, *cache, 1);
  CHECK(*cache->Clear() == 1);
  CHECK(cache->GetKeyed(lookup, "b").status().code() == StatusCode::kNotFound);
  CheckAgainstRecount(*f.store, *cache, 0);
}

TEST_CASE("forced collisions never return another lookup's value") {
  Fixture f;
  auto cache = f.Open();
  // Every lookup and every content hashes alike: keyed entries share one
  // chain with each other and, through the mask, never with contents.
  internal::CacheTestPeer::SetHash(
      *cache, [](std::string_view) { return internal::Hash128{}; });
  auto a = cache->PutKeyed("lookup A", "value A", Opts("p"));
  auto b = cache->PutKeyed("lookup B", "value B", Opts("p"));
  auto c = cache->Put("lookup A", Opts("p"));  // a content equal to a lookup
  REQUIRE((a.ok() && b.ok() && c.ok()));
  CHECK(b->key == a->key + "-1");
  CHECK(c->key == "p:00000000000000000000000000000000");
  CHECK(a->key != c->key);
  CHECK(cache->GetKeyed("lookup A", "p")->content == "value A");
  CHECK(cache->GetKeyed("lookup B", "p")->content == "value B");
  CHECK(cache->GetKeyed("lookup C", "p").status().code() ==
        StatusCode::kNotFound);
  // Replacing B keeps its own key and leaves A alone.
  auto b2 = cache->PutKeyed("lookup B", "value B2", Opts("p"));
  REQUIRE(b2.ok());
  CHECK(b2->key == b->key);
  CHECK(cache->GetKeyed("lookup A", "p")->content == "value A");
  CHECK(cache->GetKeyed("lookup B", "p")->content == "value B2");
  // A hole in the chain is reused by the next colliding lookup.
  REQUIRE(cache->Clear(std::string_view("p")).ok());
  auto d = cache->PutKeyed("lookup D", "value D", Opts("p"));
  REQUIRE(d.ok());
  CHECK(d->key == a->key);
  CHECK(cache->GetKeyed("lookup A", "p").status().code() ==
        StatusCode::kNotFound);
  CheckAgainstRecount(*f.store, *cache, 1);
}

TEST_CASE("keyed and content entries colliding on one chain stay apart") {
  Fixture f;
  auto cache = f.Open();
  // Undo the mask so that a keyed hash equals a content hash: the worst
  // case a crafted collision could reach.
  const internal::Hash128 mask = {0x63, 0x74, 0x78, 0x6b, 0x69, 0x74,
                                  0x2e, 0x6b, 0x65, 0x79, 0x65, 0x64,
                                  0x2e, 0x76, 0x31, 0x0a};
  internal::CacheTestPeer::SetHash(*cache, [mask](std::string_view s) {
    return s.rfind("lookup", 0) == 0 ? mask : internal::Hash128{};
  });
  auto keyed = cache->PutKeyed("lookup X", "same bytes", Opts("p"));
  REQUIRE(keyed.ok());
  CHECK(keyed->key == "p:00000000000000000000000000000000");
  // A content with the keyed entry's value bytes: not deduped into it.
  auto content = cache->Put("same bytes", Opts("p"));
  REQUIRE(content.ok());
  CHECK_FALSE(content->already_cached);
  CHECK(content->key == keyed->key + "-1");
  CHECK(cache->Check("same bytes")->key == content->key);
  // Replacing the keyed value leaves the content entry untouched.
  REQUIRE(cache->PutKeyed("lookup X", "new bytes", Opts("p")).ok());
  CHECK(cache->Get(content->key)->content == "same bytes");
  CHECK(cache->GetKeyed("lookup X", "p")->content == "new bytes");
  auto again = cache->Put("same bytes", Opts("p"));
  REQUIRE(again.ok());
  CHECK(again->already_cached);
  CHECK(again->key == content->key);
  CheckAgainstRecount(*f.store, *cache, 1);
}

TEST_CASE("99 colliding lookups fill the chain; the 101st is refused") {
  Fixture f;
  auto cache = f.Open();
  internal::CacheTestPeer::SetHash(
      *cache, [](std::string_view) { return internal::Hash128{}; });
  for (int i = 0; i < 100; ++i) {
    auto put = cache->PutKeyed(Request(i), "v" + std::to_string(i), Opts("p"));
    REQUIRE_MESSAGE(put.ok(), put.status().ToString());
  }
  auto full = cache->PutKeyed(Request(100), "v100", Opts("p"));
  CHECK(full.status().code() == StatusCode::kResourceExhausted);
  CHECK(full.status().message().find("lookup") != std::string::npos);
  for (int i = 0; i < 100; i += 9) {
    CHECK(cache->GetKeyed(Request(i), "p")->content == "v" + std::to_string(i));
  }
  CHECK(cache->GetKeyed(Request(100), "p").status().code() ==
        StatusCode::kNotFound);
}

TEST_CASE("hits and misses of GetKeyed are counted like Get's") {
  Fixture f;
  auto cache = f.Open();
  auto put = cache->PutKeyed(Request(6), "answer", Opts("s"));
  REQUIRE(put.ok());
  for (int i = 0; i < 3; ++i) REQUIRE(cache->GetKeyed(Request(6), "s").ok());
  CHECK_FALSE(cache->GetKeyed(Request(7), "s").ok());
  auto stats = cache->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->lifetime_hits == 3);
  CHECK(stats->total_hits == 3);
  CHECK(stats->total_misses == 1);
  CHECK(stats->hit_rate == doctest::Approx(75.0));
  CHECK(stats->tokens_saved == 3 * put->tokens);
  REQUIRE(stats->top_entries.size() == 1);
  CHECK(stats->top_entries[0].key == put->key);
  CHECK(stats->top_entries[0].hits == 3);
  REQUIRE(stats->by_prefix.size() == 1);
  CHECK(stats->by_prefix[0].size_bytes ==
        std::string("answer").size() + Request(6).size());
  CheckAgainstRecount(*f.store, *cache, 1);
}

TEST_CASE("capacity: keyed entries count value plus lookup and are evicted") {
  Fixture f;
  CacheOptions o;
  o.max_bytes = 300;
  auto cache = f.Open(o);
  const std::string lookup(100, 'L');
  auto too_big = cache->PutKeyed(lookup, std::string(201, 'v'), Opts("p"));
  CHECK(too_big.status().code() == StatusCode::kResourceExhausted);
  CHECK(too_big.status().message().find("value") != std::string::npos);
  REQUIRE(cache->PutKeyed(lookup + "1", std::string(100, 'a'), Opts("p")).ok());
  f.clock.Advance(1);
  REQUIRE(cache->PutKeyed(lookup + "2", std::string(90, 'b'), Opts("p")).ok());
  CHECK(cache->Stats()->evictions == 1);  // 201 + 191 > 300
  CHECK(cache->GetKeyed(lookup + "1", "p").status().code() ==
        StatusCode::kNotFound);
  CHECK(cache->GetKeyed(lookup + "2", "p").ok());
  CheckAgainstRecount(*f.store, *cache, 1);

  CacheOptions n;
  n.max_entries = 2;
  Fixture g;
  auto small = g.Open(n);
  REQUIRE(small->PutKeyed("k1", "v1", Opts("p")).ok());
  g.clock.Advance(1);
  REQUIRE(small->Put("content", Opts("p")).ok());
  g.clock.Advance(1);
  REQUIRE(small->GetKeyed("k1", "p").ok());  // k1 now most recent
  REQUIRE(small->Flush().ok());
  g.clock.Advance(1);
  REQUIRE(small->PutKeyed("k2", "v2", Opts("p")).ok());
  CHECK(small->GetKeyed("k1", "p").ok());
  CHECK_FALSE(small->Check("content")->exists);
  CheckAgainstRecount(*g.store, *small, 2);
}

TEST_CASE("bad inputs are INVALID_ARGUMENT naming the field; nothing written") {
  Fixture f;
  auto cache = f.Open();
  auto code_and = [](const StatusOr<CachePutResult>& r, const char* field) {
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find(field) != std::string::npos);
  };
  code_and(cache->PutKeyed("", "v", Opts("p")), "lookup");
  code_and(cache->PutKeyed(std::string(kCacheMaxLookupBytes + 1, 'x'), "v",
                           Opts("p")),
           "lookup");
  code_and(cache->PutKeyed("k", "", Opts("p")), "value");
  code_and(cache->PutKeyed("k", "\xff", Opts("p")), "value");
  code_and(cache->PutKeyed("k", "v", Opts("bad prefix")), "prefix");
  code_and(cache->PutKeyed("k", "v", Opts("p", -1)), "ttl_ms");
  CachePutOptions o = Opts("p");
  o.model = "";
  code_and(cache->PutKeyed("k", "v", o), "model");
  o = Opts("p");
  o.conversation_id = "nope";
  code_and(cache->PutKeyed("k", "v", o), "conversation_id");
  o.conversation_id = internal::NewUuid();
  CHECK(cache->PutKeyed("k", "v", o).status().code() == StatusCode::kNotFound);
  // A lookup may be any bytes; errors never echo it.
  REQUIRE(cache->PutKeyed(std::string("\xff\x00\x01", 3), "v", Opts("p")).ok());
  CHECK(cache->GetKeyed(std::string("\xff\x00\x01", 3), "p")->content == "v");
  auto bad_get = cache->GetKeyed("", "p");
  CHECK(bad_get.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad_get.status().message().find("lookup") != std::string::npos);
  bad_get = cache->GetKeyed("k", "");
  CHECK(bad_get.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad_get.status().message().find("prefix") != std::string::npos);
  auto stats = cache->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->total_entries == 1);
  CHECK(stats->total_misses == 0);  // rejected reads are not lookups
  CheckAgainstRecount(*f.store, *cache, 1);
}

TEST_CASE("the conversation delete hook removes keyed entries") {
  Fixture f;
  auto cache = f.Open();
  auto conv_db = f.store->OpenDatabase("conversations");
  REQUIRE(conv_db.ok());
  const std::string conv = internal::NewUuid();
  REQUIRE(f.store
              ->Update([&](WriteTransaction& txn) {
                return txn.Put(*conv_db, conv, "x");
              })
              .ok());
  CachePutOptions o = Opts("compact");
  o.conversation_id = conv;
  REQUIRE(cache->PutKeyed(Request(8), "compacted", o).ok());
  REQUIRE(cache->PutKeyed(Request(9), "kept", Opts("compact")).ok());
  auto hook = internal::MakeCacheDeleteHook(*f.store);
  REQUIRE(hook.ok());
  uint64_t removed = 0;
  REQUIRE(f.store
              ->Update([&](WriteTransaction& txn) {
                auto n = (*hook)->OnConversationDeleted(txn, conv);
                if (!n.ok()) return Status(StatusCode::kInternal, "hook");
                removed = *n;
                return Status();
              })
              .ok());
  CHECK(removed == 1);
  CHECK(cache->GetKeyed(Request(8), "compact").status().code() ==
        StatusCode::kNotFound);
  CHECK(cache->GetKeyed(Request(9), "compact")->content == "kept");
  CheckAgainstRecount(*f.store, *cache, 1);
}

TEST_CASE("keyed entries survive reopening, also read-only") {
  TempDir dir;
  std::string key;
  {
    auto store = Store::Open(dir.path.string());
    REQUIRE(store.ok());
    auto cache = Cache::Open(**store);
    REQUIRE(cache.ok());
    auto put = (*cache)->PutKeyed(Request(10), "durable result", Opts("c"));
    REQUIRE(put.ok());
    key = put->key;
    REQUIRE((*cache)->GetKeyed(Request(10), "c").ok());
  }
  {
    auto store = Store::Open(dir.path.string());
    REQUIRE(store.ok());
    auto cache = Cache::Open(**store);
    REQUIRE(cache.ok());
    auto got = (*cache)->GetKeyed(Request(10), "c");
    REQUIRE(got.ok());
    CHECK(got->key == key);
    CHECK(got->content == "durable result");
    CHECK(got->hit_count == 2);  // the first one was flushed on close
    // Still replaceable after reopening (the lookup row matched).
    auto again = (*cache)->PutKeyed(Request(10), "durable result", Opts("c"));
    REQUIRE(again.ok());
    CHECK(again->already_cached);
  }
  StoreOptions ro;
  ro.read_only = true;
  auto store = Store::Open(dir.path.string(), ro);
  REQUIRE(store.ok());
  auto cache = Cache::Open(**store);
  REQUIRE(cache.ok());
  CHECK((*cache)->GetKeyed(Request(10), "c")->content == "durable result");
}

TEST_CASE("a read-only store made before keyed entries opens, with none") {
  TempDir dir;
  std::string key;
  {
    auto store = Store::Open(dir.path.string());
    REQUIRE(store.ok());
    // The databases an older release created: every cache one but
    // "cache.lookup".
    for (const char* name :
         {"cache", "cache.content", "cache.lru", "cache.expiry", "cache.hash",
          "cache.conv", "cache.hits", "cache.stats", "conversations"}) {
      REQUIRE((*store)->OpenDatabase(name).ok());
    }
  }
  StoreOptions ro;
  ro.read_only = true;
  auto store = Store::Open(dir.path.string(), ro);
  REQUIRE(store.ok());
  auto cache = Cache::Open(**store);
  REQUIRE_MESSAGE(cache.ok(), cache.status().ToString());
  CHECK((*cache)->GetKeyed("anything", "p").status().code() ==
        StatusCode::kNotFound);
  CHECK_FALSE((*cache)->Check("anything")->exists);
}

}  // namespace
}  // namespace ctxkit
