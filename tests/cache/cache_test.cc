// ctxkit::Cache: keys, dedupe, TTL, LRU capacity, statistics against a
// recount, the forced hash collision, batching durability, the conversation
// delete hook and concurrent use.

#include "ctxkit/cache.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

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
using cache_test::Prefix;
using cache_test::TempDir;
namespace fs = std::filesystem;

// Recomputes the statistics from the entries themselves and checks every
// index has one row per entry.
void CheckAgainstRecount(Store& store, Cache& cache) {
  auto stats = cache.Stats(1000);
  REQUIRE(stats.ok());
  auto dbs = internal::CacheDbs::Open(store);
  REQUIRE(dbs.ok());
  auto txn = store.BeginRead();
  REQUIRE(txn.ok());
  uint64_t entries = 0, bytes = 0, tokens = 0, hits = 0, saved = 0, zero = 0,
           expiring = 0, with_conv = 0, content_rows = 0;
  std::map<std::string, CachePrefixStats> prefixes;
  std::map<std::string, CacheModelStats> models;
  auto cursor = txn->NewCursor(dbs->entries);
  REQUIRE(cursor.ok());
  for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
    auto meta = internal::DecodeMeta(cursor->key(), cursor->value());
    REQUIRE(meta.ok());
    ++entries;
    bytes += meta->size_bytes;
    tokens += meta->tokens;
    hits += meta->hit_count;
    saved += meta->hit_count * meta->tokens;
    if (meta->hit_count == 0) ++zero;
    if (meta->expires_at != 0) ++expiring;
    if (!meta->conversation_id.empty()) ++with_conv;
    // Small content is in the record; larger content in cache.content.
    if (meta->inline_content) {
      CHECK(meta->inline_content->size() == meta->size_bytes);
      CHECK(txn->Get(dbs->content, cursor->key()).status().code() ==
            StatusCode::kNotFound);
    } else {
      ++content_rows;
      auto content = txn->Get(dbs->content, cursor->key());
      REQUIRE(content.ok());
      CHECK(content->size() == meta->size_bytes);
    }
    std::string key(cursor->key());
    std::string prefix = key.substr(0, key.find(':'));
    auto& p = prefixes[prefix];
    p.entries++;
    p.hits += meta->hit_count;
    p.tokens_saved += meta->hit_count * meta->tokens;
    p.size_bytes += meta->size_bytes;
    auto& m = models[meta->model];
    m.entries++;
    m.hits += meta->hit_count;
    m.tokens_saved += meta->hit_count * meta->tokens;
  }
  CHECK(stats->total_entries == entries);
  CHECK(stats->size_bytes == bytes);
  CHECK(stats->total_tokens == tokens);
  CHECK(stats->total_hits == hits);
  CHECK(stats->tokens_saved == saved);
  CHECK(stats->zero_hit_entries == zero);
  CHECK(*txn->Count(dbs->content) == content_rows);
  CHECK(*txn->Count(dbs->lru) == entries);
  CHECK(*txn->Count(dbs->hash) == entries);
  CHECK(*txn->Count(dbs->hits) == entries);
  CHECK(*txn->Count(dbs->expiry) == expiring);
  CHECK(*txn->Count(dbs->conv) == with_conv);
  REQUIRE(stats->by_prefix.size() == prefixes.size());
  for (const auto& p : stats->by_prefix) {
    const auto& r = prefixes[p.prefix];
    CHECK(p.entries == r.entries);
    CHECK(p.hits == r.hits);
    CHECK(p.tokens_saved == r.tokens_saved);
    CHECK(p.size_bytes == r.size_bytes);
  }
  for (const auto& m : stats->by_model) {
    const auto it = models.find(m.model);
    const CacheModelStats r =
        it == models.end() ? CacheModelStats{} : it->second;
    CHECK(m.entries == r.entries);
    CHECK(m.hits == r.hits);
    CHECK(m.tokens_saved == r.tokens_saved);
  }
}

TEST_CASE("Put, Get and Check: content-addressed keys and dedupe") {
  Fixture f;
  auto cache = f.Open();
  const std::string prompt =
      "You are a helpful coding assistant specialized in TypeScript.";
  auto put = cache->Put(prompt, Prefix("system-prompts", 3600000));
  REQUIRE(put.ok());
  CHECK(put->key.size() == std::string("system-prompts:").size() + 32);
  CHECK(put->key.rfind("system-prompts:", 0) == 0);
  CHECK(put->tokens > 5);
  CHECK(put->created_at == 1700000000000);
  CHECK(put->expires_at == 1700003600000);
  CHECK_FALSE(put->already_cached);

  f.clock.Advance(1000);
  auto again = cache->Put(prompt, Prefix("system-prompts", 3600000));
  REQUIRE(again.ok());
  CHECK(again->key == put->key);
  CHECK(again->already_cached);
  CHECK(again->created_at == put->created_at);
  CHECK(again->expires_at == 1700003601000);  // refreshed

  auto other = cache->Put(prompt, Prefix("other"));
  REQUIRE(other.ok());
  CHECK(other->key != put->key);
  CHECK(other->key.substr(6) == put->key.substr(15));  // same hash

  for (int i = 1; i <= 3; ++i) {
    f.clock.Advance(10);
    auto got = cache->Get(put->key);
    REQUIRE(got.ok());
    CHECK(got->content == prompt);
    CHECK(got->hit_count == static_cast<uint64_t>(i));
    CHECK(got->last_accessed == f.clock.now->load());
    CHECK(got->tokens == put->tokens);
    CHECK(got->model == "claude-3-5-sonnet");
  }
  auto check = cache->Check(prompt, std::string_view("system-prompts"));
  REQUIRE(check.ok());
  CHECK(check->exists);
  CHECK(check->key == put->key);
  CHECK(check->tokens_saved == put->tokens);
  auto any = cache->Check(prompt);
  REQUIRE(any.ok());
  CHECK(any->exists);
  CHECK(any->key == other->key);  // "other" < "system-prompts"
  auto none = cache->Check("never stored");
  REQUIRE(none.ok());
  CHECK_FALSE(none->exists);
  CHECK(none->key.empty());
  auto wrong_prefix = cache->Check(prompt, std::string_view("nope"));
  REQUIRE(wrong_prefix.ok());
  CHECK_FALSE(wrong_prefix->exists);

  auto miss = cache->Get("system-prompts:00000000000000000000000000000000");
  CHECK(miss.status().code() == StatusCode::kNotFound);

  auto stats = cache->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->total_entries == 2);
  CHECK(stats->total_hits == 5);  // 3 Get + 2 Check
  CHECK(stats->total_misses == 3);
  CHECK(stats->hit_rate == doctest::Approx(62.5));
  CHECK(stats->effectiveness == "high");
  CHECK(stats->tokens_saved == 5 * put->tokens);
  REQUIRE(stats->top_entries.size() == 2);
  CHECK(stats->top_entries[0].key == put->key);
  CHECK(stats->top_entries[0].hits == 4);
  CHECK(stats->top_entries[1].hits == 1);
  CHECK(stats->most_cached_prefix == "system-prompts");  // tie: more hits
  auto json = CacheStatsToJson(*stats);
  REQUIRE(json.ok());
  CHECK(json->find("\"cache_size_bytes\":") != std::string::npos);
  CHECK(json->find("\"system-prompts\":{\"entries\":1,\"hits\":4") !=
        std::string::npos);
  CheckAgainstRecount(*f.store, *cache);
}

TEST_CASE("most_cached_prefix prefers more entries, then more hits") {
  Fixture f;
  auto cache = f.Open();
  REQUIRE(cache->Put("a1", Prefix("a")).ok());
  REQUIRE(cache->Put("b1", Prefix("b")).ok());
  auto b2 = cache->Put("b2", Prefix("b"));
  REQUIRE(b2.ok());
  CHECK(cache->Stats()->most_cached_prefix == "b");
  REQUIRE(cache->Put("a2", Prefix("a")).ok());
  REQUIRE(cache->Get(b2->key).ok());
  CHECK(cache->Stats()->most_cached_prefix == "b");
}

TEST_CASE("bad inputs are INVALID_ARGUMENT naming the field; nothing written") {
  Fixture f;
  auto cache = f.Open();
  auto expect = [&](StatusOr<CachePutResult> r, const char* field) {
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(r.status().message().find(field) != std::string::npos,
                  r.status().message());
  };
  expect(cache->Put(""), "content");
  expect(cache->Put("\xC3\x28"), "content");
  expect(cache->Put(std::string(kCacheMaxContentBytes + 1, 'a')), "content");
  expect(cache->Put("x", Prefix("")), "prefix");
  expect(cache->Put("x", Prefix("a:b")), "prefix");
  expect(cache->Put("x", Prefix("a b")), "prefix");
  expect(cache->Put("x", Prefix(std::string(65, 'a'))), "prefix");
  expect(cache->Put("x", Prefix("ok", -1)), "ttl_ms");
  expect(cache->Put("x", Prefix("ok", kCacheMaxTtlMs + 1)), "ttl_ms");
  CachePutOptions o;
  o.model = "";
  expect(cache->Put("x", o), "model");
  o.model = std::string(129, 'm');
  expect(cache->Put("x", o), "model");
  o = {};
  o.conversation_id = "not-a-uuid";
  expect(cache->Put("x", o), "conversation_id");
  o.conversation_id = internal::NewUuid();  // well-formed, absent
  auto absent = cache->Put("x", o);
  CHECK(absent.status().code() == StatusCode::kNotFound);
  CHECK(absent.status().message().find("conversation_id") != std::string::npos);

  for (const char* key : {"", "nocolon", ":0123456789abcdef0123456789abcdef",
                          "p:0123", "p:0123456789ABCDEF0123456789abcdef",
                          "p:0123456789abcdef0123456789abcdefx",
                          "p:0123456789abcdef0123456789abcdef-0",
                          "p:0123456789abcdef0123456789abcdef-100",
                          "a b:0123456789abcdef0123456789abcdef"}) {
    auto r = cache->Get(key);
    CHECK_MESSAGE(r.status().code() == StatusCode::kInvalidArgument, key);
    CHECK(r.status().message().find("key") != std::string::npos);
  }
  CHECK(cache->Check("").status().code() == StatusCode::kInvalidArgument);
  CHECK(cache->Check("x", std::string_view("a:b"))
            .status()
            .message()
            .find("prefix") != std::string::npos);
  CHECK(cache->Clear(std::string_view("")).status().message().find("prefix") !=
        std::string::npos);
  CHECK(cache->Stats(-1).status().message().find("top_n") != std::string::npos);

  CacheOptions bad;
  bad.flush_interval_ms = 0;
  auto c1 = Cache::Open(*f.store, bad);
  CHECK(c1.status().message().find("flush_interval_ms") != std::string::npos);
  bad = {};
  bad.flush_max_pending = 0;
  auto c2 = Cache::Open(*f.store, bad);
  CHECK(c2.status().message().find("flush_max_pending") != std::string::npos);

  CacheOptions small;
  small.max_bytes = 4;
  auto tiny = Cache::Open(*f.store, small);
  REQUIRE(tiny.ok());
  auto big = (*tiny)->Put("12345");
  CHECK(big.status().code() == StatusCode::kResourceExhausted);
  CHECK(big.status().message().find("content") != std::string::npos);

  auto stats = cache->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->total_entries == 0);
  CheckAgainstRecount(*f.store, *cache);
}

TEST_CASE("TTL with a controlled clock: expiry on read, Sweep, refresh") {
  Fixture f;
  auto cache = f.Open();
  auto a = cache->Put("short lived", Prefix("t", 1000));
  auto b = cache->Put("long lived", Prefix("t", 100000));
  auto c = cache->Put("forever", Prefix("t"));
  REQUIRE((a.ok() && b.ok() && c.ok()));
  CHECK(c->expires_at == 0);
  f.clock.Advance(999);
  CHECK(cache->Get(a->key).ok());
  f.clock.Advance(1);  // expires_at reached
  auto gone = cache->Get(a->key);
  CHECK(gone.status().code() == StatusCode::kNotFound);
  CHECK(gone.status().message().find("expired") != std::string::npos);
  CHECK_FALSE(cache->Check("short lived")->exists);
  // The flush drops what reads saw expired.
  REQUIRE(cache->Flush().ok());
  auto s1 = cache->Stats();
  CHECK(s1->total_entries == 2);
  CHECK(s1->expirations == 1);
  CHECK(s1->total_misses == 2);

  // Refresh before expiry keeps the entry alive.
  f.clock.Advance(90000);
  auto refreshed = cache->Put("long lived", Prefix("t", 100000));
  REQUIRE(refreshed.ok());
  CHECK(refreshed->already_cached);
  f.clock.Advance(50000);
  CHECK(cache->Get(b->key).ok());
  f.clock.Advance(60000);
  auto swept = cache->Sweep();
  REQUIRE(swept.ok());
  CHECK(*swept == 1);
  CHECK(cache->Get(b->key).status().code() == StatusCode::kNotFound);
  CHECK(cache->Get(c->key).ok());
  CHECK(*cache->Sweep() == 0);
  // Storing expired content again creates a fresh entry.
  auto back = cache->Put("short lived", Prefix("t", 1000));
  REQUIRE(back.ok());
  CHECK_FALSE(back->already_cached);
  CHECK(back->key == a->key);
  CHECK(cache->Get(back->key)->hit_count == 1);
  CheckAgainstRecount(*f.store, *cache);
}

TEST_CASE("LRU eviction under max_entries") {
  Fixture f;
  CacheOptions o;
  o.max_entries = 3;
  auto cache = f.Open(o);
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    f.clock.Advance(10);
    keys.push_back(cache->Put("entry " + std::to_string(i))->key);
  }
  f.clock.Advance(10);
  REQUIRE(cache->Get(keys[0]).ok());  // 0 is now most recent; 1 is oldest
  f.clock.Advance(10);
  auto k3 = cache->Put("entry 3");
  REQUIRE(k3.ok());
  CHECK(cache->Get(keys[1]).status().code() == StatusCode::kNotFound);
  f.clock.Advance(10);
  REQUIRE(cache->Check("entry 2")->exists);  // Check is an access too
  f.clock.Advance(10);
  REQUIRE(cache->Put("entry 4").ok());  // evicts 0 (accessed before 2, 3)
  CHECK(cache->Get(keys[0]).status().code() == StatusCode::kNotFound);
  CHECK(cache->Get(keys[2]).ok());
  CHECK(cache->Get(k3->key).ok());
  auto s = cache->Stats();
  CHECK(s->total_entries == 3);
  CHECK(s->evictions == 2);
  CheckAgainstRecount(*f.store, *cache);
}

TEST_CASE("LRU eviction under max_bytes evicts as many as needed") {
  Fixture f;
  CacheOptions o;
  o.max_bytes = 100;
  auto cache = f.Open(o);
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i) {
    f.clock.Advance(10);
    keys.push_back(
        cache->Put(std::string(25, static_cast<char>('a' + i)))->key);
  }
  f.clock.Advance(10);
  REQUIRE(cache->Get(keys[0]).ok());
  f.clock.Advance(10);
  REQUIRE(cache->Put(std::string(40, 'z')).ok());  // needs 40: evict 1 and 2
  CHECK(cache->Get(keys[0]).ok());
  CHECK_FALSE(cache->Get(keys[1]).ok());
  CHECK_FALSE(cache->Get(keys[2]).ok());
  CHECK(cache->Get(keys[3]).ok());
  auto s = cache->Stats();
  CHECK(s->size_bytes == 90);
  CHECK(s->evictions == 2);
  CheckAgainstRecount(*f.store, *cache);
}

TEST_CASE("a forced hash collision never returns or dedupes wrong content") {
  Fixture f;
  auto cache = f.Open();
  internal::CacheTestPeer::SetHash(*cache, [](std::string_view) {
    return internal::Hash128{};  // every content collides
  });
  auto a = cache->Put("alpha", Prefix("p"));
  auto b = cache->Put("beta", Prefix("p"));
  auto a2 = cache->Put("alpha", Prefix("p"));
  REQUIRE((a.ok() && b.ok() && a2.ok()));
  CHECK(a->key == "p:00000000000000000000000000000000");
  CHECK(b->key == "p:00000000000000000000000000000000-1");
  CHECK(a2->key == a->key);
  CHECK(a2->already_cached);
  CHECK(cache->Get(a->key)->content == "alpha");
  CHECK(cache->Get(b->key)->content == "beta");
  CHECK(cache->Check("beta")->key == b->key);
  CHECK(cache->Check("alpha", std::string_view("p"))->key == a->key);
  CHECK_FALSE(cache->Check("gamma")->exists);
  // A hole in the chain is reused, and the rest still found.
  REQUIRE(cache->Clear(std::string_view("p")).ok());
  auto c = cache->Put("gamma", Prefix("p"));
  auto d = cache->Put("delta", Prefix("p"));
  REQUIRE((c.ok() && d.ok()));
  CHECK(c->key == a->key);
  CHECK(d->key == b->key);
  CHECK(cache->Get(d->key)->content == "delta");
  CheckAgainstRecount(*f.store, *cache);
}

TEST_CASE("Clear by prefix and all keeps lifetime figures") {
  Fixture f;
  auto cache = f.Open();
  for (int i = 0; i < 5; ++i) {
    auto r = cache->Put("sp " + std::to_string(i), Prefix("system-prompts"));
    REQUIRE(cache->Get(r->key).ok());
  }
  REQUIRE(cache->Put("c", Prefix("system-prompts.v2")).ok());
  REQUIRE(cache->Put("d", Prefix("compress")).ok());
  auto cleared = cache->Clear(std::string_view("system-prompts"));
  REQUIRE(cleared.ok());
  CHECK(*cleared == 5);
  CheckAgainstRecount(*f.store, *cache);
  auto s = cache->Stats();
  CHECK(s->total_entries == 2);
  CHECK(s->total_hits == 0);
  CHECK(s->lifetime_hits == 5);
  CHECK(*cache->Clear() == 2);
  s = cache->Stats();
  CHECK(s->total_entries == 0);
  CHECK(s->lifetime_hits == 5);
  REQUIRE(s->by_model.size() == 1);
  CHECK(s->by_model[0].lifetime_tokens_saved > 0);
  CHECK(s->recommendations.at(0).suggestion == "Cache is empty");
  CheckAgainstRecount(*f.store, *cache);
}

TEST_CASE("statistics equal a recount after a random mix") {
  Fixture f;
  CacheOptions o;
  o.max_entries = 40;
  o.max_bytes = 4000;
  auto cache = f.Open(o);
  std::mt19937 rng(42);
  std::vector<std::string> keys;
  const char* prefixes[] = {"a", "b", "c.d"};
  const char* models[] = {"claude-3-5-sonnet", "gpt-4o", "unknown-model"};
  uint64_t gets = 0, misses = 0;
  for (int step = 0; step < 600; ++step) {
    f.clock.Advance(rng() % 50);
    const int op = static_cast<int>(rng() % 10);
    if (op < 4) {
      CachePutOptions p;
      p.prefix = prefixes[rng() % 3];
      p.model = models[rng() % 3];
      p.ttl_ms = rng() % 3 == 0 ? 1 + rng() % 2000 : 0;
      auto r = cache->Put("content " + std::to_string(rng() % 80) +
                              std::string(rng() % 200, 'x'),
                          p);
      REQUIRE(r.ok());
      keys.push_back(r->key);
    } else if (op < 8 && !keys.empty()) {
      ++gets;
      if (!cache->Get(keys[rng() % keys.size()]).ok()) ++misses;
    } else if (op == 8) {
      REQUIRE(cache->Sweep().ok());
    } else if (rng() % 10 == 0) {
      REQUIRE(cache->Clear(std::string_view(prefixes[rng() % 3])).ok());
    }
    if (step % 100 == 0) CheckAgainstRecount(*f.store, *cache);
  }
  CheckAgainstRecount(*f.store, *cache);
  auto s = cache->Stats();
  CHECK(s->lifetime_hits + s->total_misses == gets);
  CHECK(s->total_misses == misses);
}

TEST_CASE(
    "flushed hit counts survive reopening; unflushed are flushed by "
    "the destructor") {
  TempDir dir;
  std::string key;
  {
    auto store = Store::Open(dir.path.string());
    REQUIRE(store.ok());
    auto cache = Cache::Open(**store);
    REQUIRE(cache.ok());
    key = (*cache)->Put("durable")->key;
    for (int i = 0; i < 7; ++i) REQUIRE((*cache)->Get(key).ok());
    REQUIRE((*cache)->Flush().ok());
    for (int i = 0; i < 3; ++i) REQUIRE((*cache)->Get(key).ok());
  }
  auto store = Store::Open(dir.path.string());
  REQUIRE(store.ok());
  auto cache = Cache::Open(**store);
  REQUIRE(cache.ok());
  auto got = (*cache)->Get(key);
  REQUIRE(got.ok());
  CHECK(got->hit_count == 11);
  CHECK((*cache)->Stats()->lifetime_hits == 11);
}

TEST_CASE("the background flusher writes hits without an explicit Flush") {
  Fixture f;
  CacheOptions o;
  o.flush_interval_ms = 20;
  auto cache = f.Open(o);
  auto key = cache->Put("bg")->key;
  REQUIRE(cache->Get(key).ok());
  auto dbs = internal::CacheDbs::Open(*f.store);
  bool flushed = false;
  for (int i = 0; i < 200 && !flushed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto txn = f.store->BeginRead();
    auto meta = internal::DecodeMeta(key, *txn->Get(dbs->entries, key));
    flushed = meta->hit_count == 1;
  }
  CHECK(flushed);
}

TEST_CASE("the conversation delete hook removes that conversation's entries") {
  Fixture f;
  auto cache = f.Open();
  auto conv_db = f.store->OpenDatabase("conversations");
  REQUIRE(conv_db.ok());
  const std::string conv = internal::NewUuid();
  const std::string other = internal::NewUuid();
  REQUIRE(f.store
              ->Update([&](WriteTransaction& txn) {
                Status s = txn.Put(*conv_db, conv, "x");
                return s.ok() ? txn.Put(*conv_db, other, "y") : s;
              })
              .ok());
  CachePutOptions p;
  p.prefix = "compress";
  p.conversation_id = conv;
  auto a = cache->Put("summary one", p);
  auto b = cache->Put("summary two", p);
  p.conversation_id = other;
  auto c = cache->Put("summary three", p);
  REQUIRE((a.ok() && b.ok() && c.ok()));
  REQUIRE(cache->Get(a->key).ok());
  REQUIRE(cache->Flush().ok());
  REQUIRE(cache->Get(a->key).ok());  // pending when the hook runs

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
  CHECK(removed == 2);
  CHECK_FALSE(cache->Get(a->key).ok());
  CHECK_FALSE(cache->Get(b->key).ok());
  CHECK(cache->Get(c->key).ok());
  CheckAgainstRecount(*f.store, *cache);
  // The re-stored content starts from zero hits: the stale pending hit of the
  // removed entry is not credited to it.
  p.conversation_id = conv;
  auto again = cache->Put("summary one", p);
  REQUIRE(again.ok());
  CHECK(again->key == a->key);
  CHECK(cache->Get(a->key)->hit_count == 1);
  auto s = cache->Stats();
  CHECK(s->lifetime_hits == 4);
  CheckAgainstRecount(*f.store, *cache);
}

// Get keeps no copy of an entry: every hit reads the store, so a commit by
// any part or process is seen at once. Here the entry's records are removed
// behind the Cache's back, as another process would.
TEST_CASE("a hit never outlives a commit") {
  Fixture f;
  auto cache = f.Open();
  auto put = cache->Put("You are a careful reviewer.", Prefix("prompts"));
  REQUIRE(put.ok());
  for (uint64_t i = 1; i <= 3; ++i) {
    auto hit = cache->Get(put->key);
    REQUIRE(hit.ok());
    CHECK(hit->content == "You are a careful reviewer.");
    CHECK(hit->hit_count == i);
  }
  auto entries = f.store->OpenDatabase("cache");
  auto content = f.store->OpenDatabase("cache.content");
  auto other = f.store->OpenDatabase("unrelated");
  REQUIRE((entries.ok() && content.ok() && other.ok()));
  // An unrelated commit: the entry is read again and is unchanged.
  REQUIRE(f.store
              ->Update([&](WriteTransaction& txn) {
                return txn.Put(*other, "k", "v");
              })
              .ok());
  auto hit = cache->Get(put->key);
  REQUIRE(hit.ok());
  CHECK(hit->hit_count == 4);
  // Removed behind its back: it must not be served.
  REQUIRE(f.store
              ->Update([&](WriteTransaction& txn) {
                auto a = txn.Delete(*entries, put->key);
                auto b = txn.Delete(*content, put->key);
                return a.ok() && b.ok() ? Status()
                                        : Status(StatusCode::kInternal, "");
              })
              .ok());
  CHECK(cache->Get(put->key).status().code() == StatusCode::kNotFound);
}

TEST_CASE("8 threads mixing Get, Put and Check") {
  Fixture f;
  CacheOptions o;
  o.max_entries = 50;
  o.flush_max_pending = 16;
  auto cache = f.Open(o);
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i)
    keys.push_back(cache->Put("seed " + std::to_string(i))->key);
  std::atomic<uint64_t> gets{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < 300; ++i) {
        const int op = static_cast<int>(rng() % 10);
        if (op == 0) {
          if (!cache
                   ->Put("t" + std::to_string(t) + " " + std::to_string(i % 40))
                   .ok()) {
            failed = true;
          }
        } else if (op < 3) {
          if (!cache->Check("seed " + std::to_string(rng() % 20)).ok()) {
            failed = true;
          }
          ++gets;
        } else {
          auto r = cache->Get(keys[rng() % keys.size()]);
          if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
            failed = true;
          }
          if (r.ok() && r->content.rfind("seed ", 0) != 0) failed = true;
          ++gets;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK_FALSE(failed.load());
  auto s = cache->Stats();
  REQUIRE(s.ok());
  CHECK(s->lifetime_hits + s->total_misses == gets.load());
  CheckAgainstRecount(*f.store, *cache);
}

// A hit count read while a batch of hits is being written, or just after,
// must still include that batch: the reader's snapshot may predate its
// commit while the batch is no longer pending. One reader, so the n-th Get
// must say n, while another thread flushes without pause.
TEST_CASE("hit counts stay exact while batches are being flushed") {
  Fixture f;
  auto cache = f.Open();
  const std::string key = cache->Put("You are a terse SQL expert.")->key;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> flushes{0};
  std::thread flusher([&] {
    while (!done.load()) {
      if (cache->Flush().ok()) ++flushes;
    }
  });
  uint64_t wrong = 0;
  uint64_t first_wrong = 0;
  constexpr uint64_t kGets = 20000;
  for (uint64_t n = 1; n <= kGets; ++n) {
    auto got = cache->Get(key);
    REQUIRE(got.ok());
    if (got->hit_count != n && wrong++ == 0) first_wrong = n;
  }
  done = true;
  flusher.join();
  CHECK_MESSAGE(wrong == 0, wrong, " of ", kGets,
                " counts were wrong, the first at Get ", first_wrong);
  CHECK(flushes.load() > 0);
  REQUIRE(cache->Flush().ok());
  CHECK(cache->Stats()->total_hits == kGets);
}

}  // namespace
}  // namespace ctxkit
