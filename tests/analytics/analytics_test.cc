// ctxkit::Analytics: recording, range queries, retention with a controlled
// clock, batching durability, ScopedTimer, bad inputs and threads.

#include "ctxkit/analytics.h"

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ctxkit/store.h"
#include "lib/base/ids.h"
#include "tests/analytics/analytics_fixture.h"

namespace ctxkit {
namespace {

using analytics_test::kDay;
using analytics_test::kT0;
using Fixture = analytics_test::StoreFixture;

TEST_CASE("Record and Query: counts, durations and errors by type") {
  Fixture f;
  auto a = f.Open();
  REQUIRE(a->Record("vector_db_add", 100).ok());
  REQUIRE(a->Record("vector_db_add", 300, false).ok());
  REQUIRE(a->Record("llm_meta_summarize", 5000).ok());
  REQUIRE(a->Record("compact", 42, true, kT0 - 1000).ok());
  auto r = a->Query(kT0 - 500, kT0);
  REQUIRE(r.ok());
  CHECK(r->total_calls == 3);
  CHECK(r->total_errors == 1);
  REQUIRE(r->by_type.size() == 2);
  CHECK(r->by_type[0].type == "llm_meta_summarize");
  CHECK(r->by_type[1].type == "vector_db_add");
  CHECK(r->by_type[1].calls == 2);
  CHECK(r->by_type[1].errors == 1);
  CHECK(r->by_type[1].avg_duration_us == doctest::Approx(200));
  CHECK(r->by_type[1].min_duration_us == 100);
  CHECK(r->by_type[1].max_duration_us == 300);
  auto all = a->Query(0, kT0);
  CHECK(all->total_calls == 4);
  CHECK(a->Query(kT0 + 1, kT0 + 10)->total_calls == 0);
  CHECK(*a->CallCount("vector_db_add") == 2);
  CHECK(*a->CallCount("graph_db_add") == 0);
  auto json = AnalyticsReportToJson(*r);
  REQUIRE(json.ok());
  CHECK(json->find("\"calls_by_type\":{\"llm_meta_summarize\":1,"
                   "\"vector_db_add\":2}") != std::string::npos);
}

TEST_CASE("CallsInRange returns calls oldest first, bounded by limit") {
  Fixture f;
  auto a = f.Open();
  for (int i = 0; i < 10; ++i) {
    REQUIRE(a->Record("cache_get", i, true, kT0 + i * 10).ok());
  }
  REQUIRE(a->Record("cache_get", 99, true, kT0 + 20).ok());  // same ms
  auto calls = a->CallsInRange(kT0 + 20, kT0 + 50);
  REQUIRE(calls.ok());
  REQUIRE(calls->size() == 5);
  CHECK((*calls)[0].timestamp_ms == kT0 + 20);
  CHECK((*calls)[1].timestamp_ms == kT0 + 20);
  CHECK((*calls)[4].timestamp_ms == kT0 + 50);
  auto two = a->CallsInRange(kT0, kT0 + 1000, 2);
  REQUIRE(two->size() == 2);
  CHECK((*two)[0].duration_us == 0);
  CHECK((*two)[0].type == "cache_get");
}

TEST_CASE("bad inputs name the field and record nothing") {
  Fixture f;
  auto a = f.Open();
  auto msg = [](const Status& s) { return s.message(); };
  CHECK(msg(a->Record("", 1)).find("type") != std::string::npos);
  CHECK(msg(a->Record("Upper", 1)).find("type") != std::string::npos);
  CHECK(msg(a->Record("a b", 1)).find("type") != std::string::npos);
  CHECK(msg(a->Record(std::string(65, 'a'), 1)).find("type") !=
        std::string::npos);
  CHECK(msg(a->Record("ok", -1)).find("duration_us") != std::string::npos);
  CHECK(msg(a->Record("ok", kAnalyticsMaxDurationUs + 1)).find("duration_us") !=
        std::string::npos);
  CHECK(msg(a->Record("ok", 1, true, -5)).find("timestamp_ms") !=
        std::string::npos);
  CHECK(a->Record("ok", 1).code() == StatusCode::kOk);
  CHECK(a->Query(10, 5).status().message().find("to_ms") != std::string::npos);
  CHECK(a->CallsInRange(0, 5, 0).status().message().find("limit") !=
        std::string::npos);
  CHECK(a->CallCount("Bad").status().code() == StatusCode::kInvalidArgument);
  CHECK(a->Query(0, kT0)->total_calls == 1);
  AnalyticsOptions o;
  o.retention_days = 0;
  CHECK(
      Analytics::Open(*f.store, o).status().message().find("retention_days") !=
      std::string::npos);
  o.retention_days = 3651;
  CHECK(Analytics::Open(*f.store, o).status().code() ==
        StatusCode::kInvalidArgument);
  o = {};
  o.flush_interval_ms = 0;
  CHECK(Analytics::Open(*f.store, o)
            .status()
            .message()
            .find("flush_interval_ms") != std::string::npos);
}

TEST_CASE("retention: Purge and open drop calls older than retention_days") {
  Fixture f;
  AnalyticsOptions o;
  o.retention_days = 2;
  {
    auto a = f.Open(o);
    REQUIRE(a->Record("graph_db_add", 1, true, kT0 - 3 * kDay).ok());
    REQUIRE(a->Record("graph_db_add", 2, false, kT0 - 2 * kDay - 1).ok());
    REQUIRE(a->Record("graph_db_add", 3, true, kT0 - 2 * kDay).ok());
    REQUIRE(a->Record("graph_db_search", 4, true, kT0).ok());
    CHECK(*a->CallCount("graph_db_add") == 3);
    auto purged = a->Purge();
    REQUIRE(purged.ok());
    CHECK(*purged == 2);
    CHECK(*a->CallCount("graph_db_add") == 1);
    CHECK(a->Query(0, kT0)->total_calls == 2);
    CHECK(*a->Purge() == 0);
  }
  *f.now += 3 * kDay;  // everything is past retention now
  auto a = f.Open(o);  // purges on open
  CHECK(a->Query(0, kT0 + 10 * kDay)->total_calls == 0);
  CHECK(*a->CallCount("graph_db_search") == 0);
}

TEST_CASE("calls survive reopening: flushed by the destructor") {
  Fixture f;
  {
    auto a = f.Open();
    for (int i = 0; i < 100; ++i) REQUIRE(a->Record("count_tokens", i).ok());
  }
  f.store.reset();
  f.OpenStore();
  auto a = f.Open();
  auto r = a->Query(0, kT0);
  REQUIRE(r.ok());
  CHECK(r->total_calls == 100);
  CHECK(r->by_type[0].max_duration_us == 99);
}

TEST_CASE("the background flusher writes without an explicit Flush") {
  Fixture f;
  AnalyticsOptions o;
  o.flush_max_pending = 3;
  o.flush_interval_ms = 60000;
  auto a = f.Open(o);
  auto db = f.store->OpenDatabase("analytics");
  for (int i = 0; i < 3; ++i) REQUIRE(a->Record("x", 1).ok());
  bool written = false;
  for (int i = 0; i < 200 && !written; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto txn = f.store->BeginRead();
    written = *txn->Count(*db) == 3;
  }
  CHECK(written);
}

TEST_CASE("ScopedTimer records on destruction") {
  Fixture f;
  auto a = f.Open();
  {
    ScopedTimer t(*a, "compact");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  {
    ScopedTimer t(*a, "compact");
    t.set_ok(false);
  }
  {
    ScopedTimer t(*a, "compact");
    t.Cancel();
  }
  auto r = a->Query(0, kT0);
  REQUIRE(r->by_type.size() == 1);
  CHECK(r->by_type[0].calls == 2);
  CHECK(r->by_type[0].errors == 1);
  CHECK(r->by_type[0].max_duration_us >= 2000);
}

TEST_CASE("8 threads recording concurrently") {
  Fixture f;
  AnalyticsOptions o;
  o.flush_max_pending = 50;
  auto a = f.Open(o);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        (void)a->Record("t" + std::to_string(t), i);
        if (i % 100 == 0) (void)a->Query(0, kT0);
      }
    });
  }
  for (auto& th : threads) th.join();
  auto r = a->Query(0, kT0);
  CHECK(r->total_calls == 4000);
  CHECK(r->by_type.size() == 8);
  CHECK(*a->CallCount("t3") == 500);
}

}  // namespace
}  // namespace ctxkit
