// CheckCacheTotals: OK with the summary the test expects after random mixes
// of puts, keyed puts, hits, clears, expiry and conversation deletes, and
// DATA_LOSS naming the sub-database and key for each kind of damage done
// through the raw Store API. The expectations come from what the test
// wrote, never from the check's own recount.

#include "lib/cache/cache_check.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/cache/cache_format.h"
#include "lib/store/store_internal.h"
#include "tests/cache/cache_fixture.h"

namespace ctxkit::cache_test {
namespace {

using internal::CacheCheckSummary;
using internal::CheckCacheTotals;

constexpr int64_t kHour = 3600 * 1000;

template <typename T>
T Must(StatusOr<T> v) {
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return std::move(v).value();
}

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// What the test wrote and has not removed.
struct Written {
  struct Entry {
    std::string prefix;
    std::string model;
    std::string conversation;
    int64_t expires_at = 0;
    bool keyed = false;
  };
  std::map<std::string, Entry> entries;
  std::set<std::string> models_hit;  // their records keep lifetime hits

  // What a put's transaction removes first.
  void DropExpired(int64_t now) {
    std::erase_if(entries, [&](const auto& e) {
      return e.second.expires_at != 0 && e.second.expires_at <= now;
    });
  }

  void Wrote(const CachePutResult& r, const CachePutOptions& o, bool keyed) {
    if (r.already_cached) {
      entries.at(r.key).expires_at = r.expires_at;
      return;
    }
    entries[r.key] = {o.prefix, o.model, o.conversation_id, r.expires_at,
                      keyed};
  }

  CacheCheckSummary Expected() const {
    CacheCheckSummary s;
    std::set<std::string> prefixes;
    std::set<std::string> models = models_hit;
    for (const auto& [key, e] : entries) {
      ++s.entries;
      if (e.keyed) ++s.keyed_entries;
      if (e.expires_at != 0) ++s.expiring_entries;
      if (!e.conversation.empty()) ++s.conversation_entries;
      prefixes.insert(e.prefix);
      models.insert(e.model);
    }
    // lru, hash and hits rows for all; expiry, conv and lookup rows for some.
    s.index_rows = 3 * s.entries + s.expiring_entries + s.conversation_entries +
                   s.keyed_entries;
    s.stats_records = 1 + prefixes.size() + models.size();  // "t" and groups
    return s;
  }
};

void CheckSame(const CacheCheckSummary& got, const CacheCheckSummary& want) {
  CHECK(got.entries == want.entries);
  CHECK(got.keyed_entries == want.keyed_entries);
  CHECK(got.expiring_entries == want.expiring_entries);
  CHECK(got.conversation_entries == want.conversation_entries);
  CHECK(got.index_rows == want.index_rows);
  CHECK(got.stale_lookup_rows == want.stale_lookup_rows);
  CHECK(got.stats_records == want.stats_records);
}

template <typename T>
const T& Pick(std::mt19937& rng, const std::vector<T>& from) {
  return from[rng() % from.size()];
}

TEST_CASE("after random puts, hits, clears and expiry the check is OK") {
  Fixture f;
  std::unique_ptr<Cache> cache = f.Open();
  ConversationOptions conversation_options;
  conversation_options.clock = f.clock.fn();
  auto convs = Must(ConversationStore::Open(*f.store, conversation_options));
  Written w;
  std::vector<std::string> conversations;
  std::mt19937 rng(99);
  const std::vector<std::string> prefixes = {"docs", "sys", "tools"};
  const std::vector<std::string> models = {"gpt-4", "claude-3-5-sonnet",
                                           "my-llm"};
  const std::vector<std::string> texts = {"You are a helpful assistant.",
                                          "Answer briefly.",
                                          "{\"tool\":1}",
                                          "The quick brown fox",
                                          "jumps over the lazy dog",
                                          "ctxkit caches"};
  const std::vector<int64_t> ttls = {0, 0, kHour, 3 * kHour};

  auto options = [&] {
    CachePutOptions o = Prefix(Pick(rng, prefixes), Pick(rng, ttls));
    o.model = Pick(rng, models);
    if (!conversations.empty() && rng() % 3 == 0) {
      o.conversation_id = Pick(rng, conversations);
    }
    return o;
  };
  auto check = [&] {
    // Sweep applies pending hits and removes what has expired, so the store
    // holds exactly the entries the test expects.
    Must(cache->Sweep());
    w.DropExpired(*f.clock.now);
    CacheCheckSummary summary;
    const absl::Status s = CheckCacheTotals(*f.store, &summary);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    CheckSame(summary, w.Expected());
  };

  for (int step = 0; step < 400; ++step) {
    const unsigned op = rng() % 100;
    f.clock.Advance(static_cast<int64_t>(rng() % 40) * 60 * 1000);
    if (op < 5 || conversations.empty()) {
      conversations.push_back(Must(convs->Create({.title = "c"})).id);
    } else if (op < 40) {
      const CachePutOptions o = options();
      w.DropExpired(*f.clock.now);
      w.Wrote(Must(cache->Put(Pick(rng, texts), o)), o, false);
    } else if (op < 55) {
      const CachePutOptions o = options();
      w.DropExpired(*f.clock.now);
      const std::string lookup = "question " + std::to_string(rng() % 6);
      w.Wrote(Must(cache->PutKeyed(lookup, Pick(rng, texts), o)), o, true);
    } else if (op < 85) {
      if (w.entries.empty()) continue;
      auto it = w.entries.begin();
      std::advance(it, rng() % w.entries.size());
      const bool live =
          it->second.expires_at == 0 || it->second.expires_at > *f.clock.now;
      auto got = cache->Get(it->first);
      CHECK(got.ok() == live);
      if (got.ok()) w.models_hit.insert(it->second.model);
    } else if (op < 90) {
      const std::string prefix = Pick(rng, prefixes);
      Must(cache->Clear(prefix));
      std::erase_if(w.entries,
                    [&](const auto& e) { return e.second.prefix == prefix; });
    } else if (op < 95) {
      const size_t k = rng() % conversations.size();
      Must(convs->Delete(conversations[k]));
      std::erase_if(w.entries, [&](const auto& e) {
        return e.second.conversation == conversations[k];
      });
      conversations.erase(conversations.begin() +
                          static_cast<std::ptrdiff_t>(k));
    } else {
      f.clock.Advance(2 * kHour);
    }
    if (step % 50 == 49) {
      CAPTURE(step);
      check();
    }
  }
  check();
  CHECK(w.Expected().keyed_entries > 0);
  CHECK(w.Expected().expiring_entries > 0);
  CHECK(w.Expected().conversation_entries > 0);

  // Everything cleared: the records of lifetime figures remain.
  Must(cache->Clear());
  w.entries.clear();
  check();
}

TEST_CASE("checks while other threads put and hit are each OK") {
  Fixture f;
  CacheOptions options;
  options.flush_interval_ms = 1;  // hits land while the checks run
  std::unique_ptr<Cache> cache = f.Open(options);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 150; ++i) {
      auto put = cache->Put("content " + std::to_string(i % 40),
                            Prefix(i % 2 == 0 ? "a" : "b", i % 3 == 0 ? 1 : 0));
      CHECK(put.ok());
      if (!put.ok()) break;
      (void)cache->Get(put->key);
      if (i % 25 == 24) CHECK(cache->Clear("b").ok());
      f.clock.Advance(1);
    }
    done = true;
  });
  int checks = 0;
  while (!done || checks == 0) {
    const absl::Status s = CheckCacheTotals(*f.store);
    CHECK_MESSAGE(s.ok(), s.ToString());
    ++checks;
  }
  writer.join();
  const absl::Status s = CheckCacheTotals(*f.store);
  CHECK_MESSAGE(s.ok(), s.ToString());
}

// ---- Damage ----------------------------------------------------------------

// A cache with an expiring entry of a conversation, an entry with hits and a
// keyed entry, and the raw handles to damage it with.
struct Damaged {
  Fixture f;
  std::unique_ptr<Cache> cache;
  std::unique_ptr<ConversationStore> convs;
  std::string conversation;
  std::string of_conversation, hit, keyed;  // entry keys
  internal::CacheDbs dbs;

  Damaged() {
    cache = f.Open();
    ConversationOptions options;
    options.clock = f.clock.fn();
    convs = Must(ConversationStore::Open(*f.store, options));
    conversation = Must(convs->Create({.title = "c"})).id;
    CachePutOptions o = Prefix("docs", kHour);
    o.conversation_id = conversation;
    of_conversation = Must(cache->Put("a document", o)).key;
    hit = Must(cache->Put("a system prompt", Prefix("sys"))).key;
    keyed = Must(cache->PutKeyed("a lookup", "its value", Prefix("docs"))).key;
    f.clock.Advance(1000);
    Must(cache->Get(hit));
    Must(cache->Get(hit));
    REQUIRE(cache->Flush().ok());
    absl::StatusOr<internal::CacheDbs> opened =
        internal::CacheDbs::Open(*f.store);
    REQUIRE(opened.ok());
    dbs = *opened;
    CacheCheckSummary summary;
    const absl::Status s = CheckCacheTotals(*f.store, &summary);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    REQUIRE(summary.entries == 3);
  }

  void Put(Database db, std::string_view key, std::string_view value) {
    REQUIRE(f.store
                ->Update([&](WriteTransaction& txn) {
                  return txn.Put(db, key, value);
                })
                .ok());
  }
  void Delete(Database db, std::string_view key) {
    bool gone = false;
    REQUIRE(f.store
                ->Update([&](WriteTransaction& txn) -> Status {
                  auto d = txn.Delete(db, key);
                  if (d.ok()) gone = *d;
                  return d.status();
                })
                .ok());
    REQUIRE(gone);
  }
  internal::EntryMeta Meta(const std::string& key) {
    ReadTransaction txn = Must(f.store->BeginRead());
    auto meta = internal::DecodeMeta(key, Must(txn.Get(dbs.entries, key)));
    REQUIRE(meta.ok());
    return *meta;
  }
  // A counter record with field `field` raised by one, through the cache's
  // own counter codec.
  void Raise(const std::string& key, int count, int field) {
    const absl::Status s = internal::StoreUpdate(
        *f.store, [&](WriteTransaction& txn) -> absl::Status {
          absl::StatusOr<std::vector<uint64_t>> fields =
              internal::ReadCounters(txn, dbs.stats, key, count);
          if (!fields.ok()) return fields.status();
          (*fields)[static_cast<size_t>(field)] += 1;
          return internal::WriteCounters(txn, dbs.stats, key, *fields);
        });
    REQUIRE_MESSAGE(s.ok(), s.ToString());
  }

  // The check fails with DATA_LOSS whose message holds every one of `parts`.
  void ExpectDataLoss(std::initializer_list<std::string_view> parts) {
    const absl::Status s = CheckCacheTotals(*f.store);
    CAPTURE(s.ToString());
    REQUIRE(s.code() == absl::StatusCode::kDataLoss);
    for (std::string_view part : parts) {
      CAPTURE(part);
      CHECK(Contains(std::string(s.message()), part));
    }
  }
};

TEST_CASE("damage: a total overwritten") {
  Damaged d;
  d.Raise(std::string(internal::kTotalsKey), internal::kTotFieldCount,
          internal::kTotTokens);
  d.ExpectDataLoss({"cache.stats key \"t\"", "tokens is"});
}

TEST_CASE("damage: a prefix's total overwritten") {
  Damaged d;
  d.Raise(internal::PrefixStatsKey("sys"), internal::kGrpFieldCount,
          internal::kGrpHits);
  d.ExpectDataLoss({"cache.stats key \"psys\"", "hits is 3", "give 2"});
}

TEST_CASE("damage: an entry's size overwritten") {
  Damaged d;
  internal::EntryMeta meta = d.Meta(d.keyed);
  meta.size_bytes = std::string_view("its value").size();  // without lookup
  d.Put(d.dbs.entries, d.keyed, internal::EncodeMeta(meta));
  d.ExpectDataLoss({"cache key", d.keyed, "size_bytes"});
}

TEST_CASE("damage: two entries with one serial") {
  Damaged d;
  internal::EntryMeta meta = d.Meta(d.hit);
  meta.serial = d.Meta(d.of_conversation).serial;
  d.Put(d.dbs.entries, d.hit, internal::EncodeMeta(meta));
  d.ExpectDataLoss({"cache key", "has serial", d.of_conversation});
}

TEST_CASE("damage: an LRU row deleted") {
  Damaged d;
  d.Delete(d.dbs.lru,
           internal::TimeIndexKey(d.Meta(d.hit).last_accessed, d.hit));
  d.ExpectDataLoss({"cache.lru key", d.hit, "is missing"});
}

TEST_CASE("damage: a conversation row deleted") {
  Damaged d;
  d.Delete(d.dbs.conv,
           internal::ConvIndexKey(d.conversation, d.of_conversation));
  d.ExpectDataLoss(
      {"cache.conv key", d.conversation, d.of_conversation, "is missing"});
}

TEST_CASE("damage: an entry's content deleted") {
  Damaged d;
  // Content too large for the entry's record is kept in cache.content.
  const std::string large = Must(d.cache->Put(std::string(4000, 'x'))).key;
  REQUIRE_FALSE(d.Meta(large).inline_content.has_value());
  d.Delete(d.dbs.content, large);
  d.ExpectDataLoss({"cache.content key", large, "is missing"});
  auto got = d.cache->Get(large);
  CHECK(got.status().code() == StatusCode::kDataLoss);
  CHECK(Contains(got.status().message(), "lost its content"));
}

TEST_CASE("damage: a content row beside a record that holds the content") {
  Damaged d;
  REQUIRE(d.Meta(d.hit).inline_content == "a system prompt");
  d.Put(d.dbs.content, d.hit, "a system prompt");
  d.ExpectDataLoss(
      {"cache.content key", d.hit, "whose record holds its content"});
}

TEST_CASE("damage: a record with an unknown content placement") {
  Damaged d;
  std::string record = internal::EncodeMeta(d.Meta(d.hit));
  const size_t placement =
      record.size() - std::string_view("a system prompt").size() - 1;
  record[placement] = 7;
  d.Put(d.dbs.entries, d.hit, record);
  d.ExpectDataLoss({"cache entry", d.hit, "malformed record"});
}

TEST_CASE("damage: a stray hits row") {
  Damaged d;
  const std::string stray = "sys:0123456789abcdef0123456789abcdef";
  d.Put(d.dbs.hits, internal::HitsIndexKey(7, stray), "");
  d.ExpectDataLoss({"cache.hits key 7 + ", stray, "belongs to no entry"});
}

TEST_CASE("damage: a second hits row of one entry") {
  Damaged d;
  d.Put(d.dbs.hits, internal::HitsIndexKey(5, d.hit), "");
  d.ExpectDataLoss(
      {"cache.hits key 5 + ", d.hit, "does not match its entry", "2 + "});
}

TEST_CASE("damage: an expiry row of an entry that never expires") {
  Damaged d;
  d.Put(d.dbs.expiry, internal::TimeIndexKey(*d.f.clock.now, d.hit), "");
  d.ExpectDataLoss({"cache.expiry key", d.hit, "has no row here"});
}

TEST_CASE("damage: stray content") {
  Damaged d;
  d.Put(d.dbs.content, "docs:ffffffffffffffffffffffffffffffff", "x");
  d.ExpectDataLoss({"cache.content key",
                    "docs:ffffffffffffffffffffffffffffffff",
                    "belongs to no entry"});
}

TEST_CASE("damage: a stray statistics key") {
  Damaged d;
  d.Put(d.dbs.stats, "zz", "");
  d.ExpectDataLoss({"cache.stats key \"zz\"", "not a statistics key"});
}

TEST_CASE("damage: an entry naming a conversation that is not stored") {
  Damaged d;
  Database conversations = Must(d.f.store->OpenDatabase("conversations"));
  d.Delete(conversations, d.conversation);
  d.ExpectDataLoss(
      {"cache key", d.of_conversation, "names conversation", d.conversation});
}

TEST_CASE("damage: an undecodable entry record") {
  Damaged d;
  d.Put(d.dbs.entries, d.hit, "\x01short");
  d.ExpectDataLoss({"cache:", d.hit, "malformed"});
}

TEST_CASE("damage: an undecodable lookup row") {
  Damaged d;
  d.Put(d.dbs.lookup, d.keyed, "\x09");
  d.ExpectDataLoss({"cache.lookup:", d.keyed, "malformed"});
}

TEST_CASE("damage: an undecodable statistics record") {
  Damaged d;
  d.Put(d.dbs.stats, std::string(internal::kTotalsKey), "\x01\x02");
  d.ExpectDataLoss({"cache.stats:", "'t'", "malformed"});
}

TEST_CASE("a lookup row left by a release without keyed entries is stale") {
  Damaged d;
  // An older release removed a keyed entry without its lookup row.
  d.Put(d.dbs.lookup, "docs:00000000000000000000000000000000",
        internal::EncodeLookupRow(1234, "gone"));
  CacheCheckSummary summary;
  const absl::Status s = CheckCacheTotals(*d.f.store, &summary);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(summary.stale_lookup_rows == 1);
  CHECK(summary.keyed_entries == 1);
}

TEST_CASE("a read-only store of a full cache checks OK") {
  TempDir dir;
  {
    std::unique_ptr<Store> store = Must(Store::Open(dir.path.string()));
    auto cache = Must(Cache::Open(*store));
    Must(cache->Put("hello", Prefix("docs")));
  }
  StoreOptions options;
  options.read_only = true;
  std::unique_ptr<Store> store = Must(Store::Open(dir.path.string(), options));
  CacheCheckSummary summary;
  const absl::Status s = CheckCacheTotals(*store, &summary);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(summary.entries == 1);
  CHECK(summary.index_rows == 3);
}

}  // namespace
}  // namespace ctxkit::cache_test
