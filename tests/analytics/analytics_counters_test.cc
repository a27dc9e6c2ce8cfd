// ctxkit::Analytics counters: AddCounts/Counter/Counters, their place in the
// report and its JSON, saturation, batching and flushing, persistence across
// reopening and retention, bad names (all or nothing) and threads.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ctxkit/analytics.h"
#include "ctxkit/store.h"
#include "lib/base/ids.h"
#include "tests/analytics/analytics_fixture.h"

namespace ctxkit {
namespace {

using analytics_test::kDay;
using analytics_test::kT0;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

using CounterList = std::vector<std::pair<std::string, int64_t>>;

struct Fixture : analytics_test::StoreFixture {
  // Counters written to LMDB, read around the Analytics (no flush).
  uint64_t StoredCounters() {
    auto db = store->OpenDatabase("analytics.counters");
    REQUIRE(db.ok());
    auto txn = store->BeginRead();
    REQUIRE(txn.ok());
    auto n = txn->Count(*db);
    REQUIRE(n.ok());
    return *n;
  }
};

// Options under which nothing is flushed unless asked (or on destruction).
AnalyticsOptions NoBackgroundFlush() {
  AnalyticsOptions o;
  o.flush_interval_ms = 60000;
  o.flush_max_pending = 1000000;
  return o;
}

TEST_CASE("AddCounts, Counter and Counters: sums, order, prefixes") {
  Fixture f;
  auto a = f.Open();
  REQUIRE(a->AddCounts({{"compact.messages_in", 120},
                        {"compact.messages_out", 40},
                        {"compact.tokens_in", 90000},
                        {"compact.tokens_out", 30000},
                        {"compact.tokens_saved", 60000}})
              .ok());
  REQUIRE(a->AddCounts({{"compact.messages_in", 10},
                        {"compact.messages_in", 5},  // repeated: summed
                        {"cache.hits", 0}})          // zero: still created
              .ok());
  REQUIRE(a->AddCount("compact.tokens_saved", -100).ok());  // negative
  std::vector<AnalyticsCount> from_vector = {{"z.last", 7}, {"a:first", -3}};
  REQUIRE(a->AddCounts(from_vector).ok());
  REQUIRE(a->AddCounts({}).ok());

  CHECK(*a->Counter("compact.messages_in") == 135);
  CHECK(*a->Counter("compact.tokens_saved") == 59900);
  CHECK(*a->Counter("cache.hits") == 0);
  CHECK(*a->Counter("never.touched") == 0);

  auto all = a->Counters();
  REQUIRE(all.ok());
  CHECK(*all == CounterList{{"a:first", -3},
                            {"cache.hits", 0},
                            {"compact.messages_in", 135},
                            {"compact.messages_out", 40},
                            {"compact.tokens_in", 90000},
                            {"compact.tokens_out", 30000},
                            {"compact.tokens_saved", 59900},
                            {"z.last", 7}});
  CHECK(*a->Counters("compact.tokens") ==
        CounterList{{"compact.tokens_in", 90000},
                    {"compact.tokens_out", 30000},
                    {"compact.tokens_saved", 59900}});
  CHECK(*a->Counters("compact.messages_in") ==
        CounterList{{"compact.messages_in", 135}});
  CHECK(a->Counters("compacted")->empty());
  CHECK(a->Counters("zz")->empty());
  CHECK(a->Counters(std::string(64, 'z'))->empty());
}

TEST_CASE("the report carries the counters; the JSON adds \"counters\"") {
  Fixture f;
  auto a = f.Open();
  {
    auto r = a->Query(0, kT0);
    REQUIRE(r.ok());
    CHECK(r->counters.empty());
    auto json = AnalyticsReportToJson(*r);
    REQUIRE(json.ok());
    CHECK(json->find("\"by_type\":{},\"counters\":{}}") != std::string::npos);
  }
  // What the compactor does per compaction.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(a->Record("compact", 1000 + i, i != 2).ok());
    REQUIRE(a->AddCounts({{"compact.messages_in", 100},
                          {"compact.messages_out", 20},
                          {"compact.tokens_in", 5000},
                          {"compact.tokens_out", 1200},
                          {"compact.tokens_saved", 3800}})
                .ok());
  }
  // Counters are lifetime totals: a range without calls still shows them.
  auto empty_range = a->Query(kT0 + 1, kT0 + 2);
  REQUIRE(empty_range.ok());
  CHECK(empty_range->total_calls == 0);
  CHECK(empty_range->counters.size() == 5);

  auto r = a->Query(0, kT0);
  REQUIRE(r.ok());
  CHECK(r->total_calls == 3);
  CHECK(r->total_errors == 1);
  CHECK(r->counters == CounterList{{"compact.messages_in", 300},
                                   {"compact.messages_out", 60},
                                   {"compact.tokens_in", 15000},
                                   {"compact.tokens_out", 3600},
                                   {"compact.tokens_saved", 11400}});
  auto json = AnalyticsReportToJson(*r);
  REQUIRE(json.ok());
  // The fields before are unchanged; "counters" comes last.
  CHECK(json->starts_with(
      "{\"schema_version\":1,\"from\":0,\"to\":" + std::to_string(kT0) +
      ",\"total_calls\":3,\"total_errors\":1,"
      "\"calls_by_type\":{\"compact\":3},"
      "\"average_duration_us\":{\"compact\":1001"));
  CHECK(json->ends_with(
      ",\"counters\":{\"compact.messages_in\":300,"
      "\"compact.messages_out\":60,\"compact.tokens_in\":15000,"
      "\"compact.tokens_out\":3600,\"compact.tokens_saved\":11400}}"));
  AnalyticsReport negative;
  negative.counters = {{"x", kMin}, {"y", -1}};
  CHECK(AnalyticsReportToJson(negative)->ends_with(
      "\"counters\":{\"x\":-9223372036854775808,\"y\":-1}}"));
}

TEST_CASE("totals saturate instead of wrapping, in memory and on disk") {
  Fixture f;
  auto a = f.Open(NoBackgroundFlush());
  // In one pending batch.
  REQUIRE(
      a->AddCounts({{"up", kMax}, {"up", kMax}, {"down", kMin}, {"down", -1}})
          .ok());
  CHECK(*a->Counter("up") == kMax);
  CHECK(*a->Counter("down") == kMin);
  // Across flushes: stored total + pending delta.
  REQUIRE(a->AddCount("up", 1).ok());
  REQUIRE(a->AddCount("down", kMin).ok());
  CHECK(*a->Counter("up") == kMax);
  CHECK(*a->Counter("down") == kMin);
  // A saturated counter moves again when the sign changes.
  REQUIRE(a->AddCount("up", -kMax).ok());
  CHECK(*a->Counter("up") == 0);
  REQUIRE(a->AddCount("down", kMax).ok());
  CHECK(*a->Counter("down") == -1);
}

TEST_CASE("deltas wait in memory until a query, Flush or the destructor") {
  Fixture f;
  {
    auto a = f.Open(NoBackgroundFlush());
    REQUIRE(a->AddCounts({{"q.counter", 1}, {"q.counters", 2}}).ok());
    CHECK(f.StoredCounters() == 0);        // batched: no write transaction yet
    CHECK(*a->Counter("q.counter") == 1);  // flushes first
    CHECK(f.StoredCounters() == 2);

    REQUIRE(a->AddCount("q.new1", 3).ok());
    CHECK(f.StoredCounters() == 2);
    CHECK(a->Counters("q.")->size() == 3);
    CHECK(f.StoredCounters() == 3);

    REQUIRE(a->AddCount("q.new2", 4).ok());
    CHECK(a->Query(0, kT0)->counters.size() == 4);
    CHECK(f.StoredCounters() == 4);

    REQUIRE(a->AddCount("q.new3", 5).ok());
    REQUIRE(a->Flush().ok());
    CHECK(f.StoredCounters() == 5);

    REQUIRE(a->AddCount("q.new4", 6).ok());
    CHECK(f.StoredCounters() == 5);
  }  // the destructor flushes
  CHECK(f.StoredCounters() == 6);
}

TEST_CASE("the background flusher writes deltas on its interval") {
  Fixture f;
  AnalyticsOptions o;
  o.flush_interval_ms = 5;
  auto a = f.Open(o);
  REQUIRE(a->AddCount("bg", 1).ok());
  bool written = false;
  for (int i = 0; i < 400 && !written; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    written = f.StoredCounters() == 1;
  }
  CHECK(written);
}

TEST_CASE("flush_max_pending distinct names wake the flusher early") {
  Fixture f;
  AnalyticsOptions o;
  o.flush_interval_ms = 60000;
  o.flush_max_pending = 3;
  auto a = f.Open(o);
  REQUIRE(a->AddCounts({{"w1", 1}, {"w2", 1}, {"w3", 1}}).ok());
  bool written = false;
  for (int i = 0; i < 400 && !written; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    written = f.StoredCounters() == 3;
  }
  CHECK(written);
}

TEST_CASE("counters survive reopening and are never purged") {
  Fixture f;
  AnalyticsOptions o;
  o.retention_days = 1;
  {
    auto a = f.Open(o);
    REQUIRE(a->Record("compact", 10, true, kT0 - 2 * kDay).ok());
    REQUIRE(a->AddCounts(
                 {{"compact.tokens_saved", 1234}, {"compact.messages_in", 9}})
                .ok());
    auto purged = a->Purge();
    REQUIRE(purged.ok());
    CHECK(*purged == 1);
    CHECK(*a->Counter("compact.tokens_saved") == 1234);
    REQUIRE(a->AddCount("compact.tokens_saved", 1).ok());  // left pending
  }
  f.store.reset();
  f.OpenStore();
  *f.now += 10 * kDay;  // the open purges everything past retention
  auto a = f.Open(o);
  CHECK(a->Query(0, kT0 + 20 * kDay)->total_calls == 0);
  CHECK(*a->Counters() == CounterList{{"compact.messages_in", 9},
                                      {"compact.tokens_saved", 1235}});
  REQUIRE(a->AddCount("compact.messages_in", 1).ok());
  CHECK(*a->Counter("compact.messages_in") == 10);
}

TEST_CASE("a bad name is named and nothing of its batch is recorded") {
  Fixture f;
  auto a = f.Open();
  REQUIRE(a->AddCount("good", 1).ok());
  auto msg = [](const Status& s) {
    CHECK(s.code() == StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  std::string m = msg(a->AddCounts({{"good", 10}, {"Bad.Name", 1}}));
  CHECK(m.find("counts[1].name \"Bad.Name\"") != std::string::npos);
  CHECK(m.find("0x42 at offset 0") != std::string::npos);
  m = msg(a->AddCounts({{"good", 10}, {"also_good", 1}, {"a b", 1}}));
  CHECK(m.find("counts[2].name \"a b\" has byte 0x20 at offset 1") !=
        std::string::npos);
  m = msg(a->AddCounts({{"", 1}, {"good", 10}}));
  CHECK(m.find("counts[0].name \"\" is 0 bytes") != std::string::npos);
  const std::string long_name(65, 'a');
  m = msg(a->AddCounts({{"good", 10}, {long_name, 1}}));
  CHECK(m.find("counts[1].name \"" + long_name + "\" is 65 bytes") !=
        std::string::npos);
  // Unprintable bytes are escaped; huge names are cut.
  m = msg(a->AddCount(std::string_view("x\xff\n", 3), 1));
  CHECK(m.find("counts[0].name \"x\\xff\\n\" has byte 0xFF at offset 1") !=
        std::string::npos);
  m = msg(a->AddCount(std::string(10000, 'q'), 1));
  CHECK(m.find(std::string(80, 'q') + "...\" is 10000 bytes") !=
        std::string::npos);
  CHECK(m.size() < 300);

  CHECK(msg(a->Counter("Nope").status()).find("name has byte 0x4E") !=
        std::string::npos);
  CHECK(msg(a->Counter("").status()).find("name is 0 bytes") !=
        std::string::npos);
  CHECK(msg(a->Counters("A").status()).find("prefix has byte 0x41") !=
        std::string::npos);
  CHECK(msg(a->Counters(std::string(65, 'a')).status())
            .find("prefix is 65 bytes") != std::string::npos);

  // None of the rejected batches left a trace.
  CHECK(*a->Counters() == CounterList{{"good", 1}});
}

TEST_CASE("8 threads adding counts while others query") {
  Fixture f;
  AnalyticsOptions o;
  o.flush_max_pending = 4;
  o.flush_interval_ms = 1;
  auto a = f.Open(o);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 1000;
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = "thread." + std::to_string(t);
      for (int i = 0; i < kPerThread; ++i) {
        if (!a->Record("compact", i).ok() ||
            !a->AddCounts({{"compact.messages_in", 10},
                           {"compact.messages_out", 3},
                           {"compact.tokens_saved", i % 2 ? 5 : -1},
                           {own, 1}})
                 .ok()) {
          failed = true;
        }
        if (i % 97 == 0) {
          auto c = a->Counter("compact.messages_in");
          // Totals only grow here, and each batch adds 10.
          if (!c.ok() || *c % 10 != 0) failed = true;
          if (!a->Counters("thread.").ok()) failed = true;
        }
        if (i % 250 == 0 && !a->Query(0, kT0).ok()) failed = true;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK_FALSE(failed.load());
  const int64_t n = int64_t{kThreads} * kPerThread;
  CHECK(*a->Counter("compact.messages_in") == 10 * n);
  CHECK(*a->Counter("compact.messages_out") == 3 * n);
  CHECK(*a->Counter("compact.tokens_saved") == (5 - 1) * n / 2);
  auto per_thread = a->Counters("thread.");
  REQUIRE(per_thread->size() == kThreads);
  for (const auto& [name, total] : *per_thread) CHECK(total == kPerThread);
  CHECK(*a->CallCount("compact") == static_cast<uint64_t>(n));
}

}  // namespace
}  // namespace ctxkit
