// ContextGraph's call records in Analytics and Metrics (CG-12), with an
// injected clock so that periods and the daily trend are exact.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "ctxkit/analytics.h"
#include "ctxkit/context_graph.h"
#include "lib/graph/metrics_json.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit::testing {
namespace {

constexpr int64_t kDay = 86400000;

// The Analytics is declared before the graph, so it outlives it (the
// graph borrows it).
struct MetricsFixture : Fixture {
  std::unique_ptr<Analytics> analytics;
  std::unique_ptr<ContextGraph> graph;

  explicit MetricsFixture(bool track = true, uint32_t meta_threshold = 5) {
    AnalyticsOptions ao;
    ao.clock = clock.Fn();
    analytics = Must(Analytics::Open(*store, ao));
    ContextGraphOptions o = ManualGraphOptions();
    o.clock = clock.Fn();
    o.analytics = analytics.get();
    o.track_api_calls = track;
    o.meta_summary_threshold = meta_threshold;
    graph = Must(ContextGraph::Open(*store, *convs, o));
  }

  void Add(const std::string& id, const std::string& text) {
    REQUIRE(graph->AddMessage(id, {.content = text}).ok());
  }
  void Relate(const std::string& s, const std::string& t,
              const std::string& type) {
    REQUIRE(
        graph->AddRelationship({.source = s, .target = t, .type = type}).ok());
  }
};

uint64_t CallsOf(const GraphMetrics& m, const std::string& type) {
  for (const GraphCallTypeMetrics& t : m.by_type) {
    if (t.type == type) return t.calls;
  }
  FAIL("no type " << type);
  return 0;
}

uint64_t ErrorsOf(const GraphMetrics& m, const std::string& type) {
  for (const GraphCallTypeMetrics& t : m.by_type) {
    if (t.type == type) return t.errors;
  }
  return 0;
}

TEST_CASE("each operation records its seed call type, per UTC day") {
  MetricsFixture f;
  // 2024-11-15.
  f.Add("a", "move the login to OAuth");
  f.Add("a", "keep the session store");
  f.Add("b", "session store in redis");
  f.Relate("a", "b", "references");
  REQUIRE(f.graph->Related("a").ok());
  REQUIRE(f.graph->FindSimilar("session").ok());
  // Summarize reads Related itself: that read is part of the summary, not
  // a graph_db_search of its own.
  REQUIRE(f.graph->Summarize("a").ok());
  // A failed call counts, as an error.
  CHECK(f.graph->Related("nobody").status().code() == StatusCode::kNotFound);

  f.clock.Advance(kDay);  // 2024-11-16
  REQUIRE(f.graph->FindPath("a", "b").ok());
  REQUIRE(f.graph->RemoveRelationship("a", "b", "references").ok());
  REQUIRE(f.graph->DeleteContext("b").ok());

  const GraphMetrics week = Must(f.graph->Metrics("week"));
  CHECK(week.period == "week");
  CHECK(week.tracked);
  CHECK(week.from_ms == 1731196800000);  // 2024-11-10T00:00Z
  CHECK(week.to_ms == 1731664800000 + kDay);
  CHECK(week.total_calls == 12);
  CHECK(CallsOf(week, "vector_db_add") == 3);
  CHECK(CallsOf(week, "graph_db_add") == 1);
  CHECK(CallsOf(week, "graph_db_search") == 3);
  CHECK(ErrorsOf(week, "graph_db_search") == 1);
  CHECK(CallsOf(week, "vector_db_search") == 1);
  CHECK(CallsOf(week, "llm_summarize") == 1);
  CHECK(CallsOf(week, "graph_db_delete") == 2);
  CHECK(CallsOf(week, "vector_db_delete") == 1);
  CHECK(CallsOf(week, "llm_hierarchical_summarize") == 0);
  CHECK(CallsOf(week, "llm_meta_summarize") == 0);
  REQUIRE(week.by_type.size() == 9);
  CHECK(week.by_type[0].type == "vector_db_add");
  CHECK(week.by_type[8].type == "llm_meta_summarize");
  for (const GraphCallTypeMetrics& t : week.by_type) {
    CHECK(t.average_duration_ms >= 0);
  }
  CHECK(week.average_score == doctest::Approx(11.0 / 12));
  REQUIRE(week.history_trend.size() == 7);
  CHECK(week.history_trend[0].date == "2024-11-10");
  CHECK(week.history_trend[0].calls == 0);
  CHECK(week.history_trend[0].score == 0);
  CHECK(week.history_trend[5].date == "2024-11-15");
  CHECK(week.history_trend[5].calls == 8);
  CHECK(week.history_trend[5].score == doctest::Approx(7.0 / 8));
  CHECK(week.history_trend[6].date == "2024-11-16");
  CHECK(week.history_trend[6].calls == 4);
  CHECK(week.history_trend[6].score == 1);
  CHECK(week.extractive_summaries == 1);
  CHECK(week.host_summaries == 0);
  // The graph's own counters, now.
  CHECK(week.contexts == 1);
  CHECK(week.messages == 2);
  REQUIRE(week.edges_by_type.size() == 5);
  CHECK(week.edges_by_type[2].first == "references");
  CHECK(week.edges_by_type[2].second == 0);
  CHECK(week.summaries == 1);
  CHECK(week.hierarchies == 0);
  CHECK(week.meta_summaries == 0);

  const GraphMetrics day = Must(f.graph->Metrics("day"));
  CHECK(day.from_ms == 1731715200000);  // 2024-11-16T00:00Z
  CHECK(day.total_calls == 4);
  REQUIRE(day.history_trend.size() == 1);
  CHECK(day.history_trend[0].date == "2024-11-16");

  const GraphMetrics month = Must(f.graph->Metrics("month"));
  REQUIRE(month.history_trend.size() == 30);
  CHECK(month.history_trend.front().date == "2024-10-18");
  CHECK(month.total_calls == 12);

  // Past the week, the calls leave it; the counters stay.
  f.clock.Advance(7 * kDay);
  const GraphMetrics later = Must(f.graph->Metrics("week"));
  CHECK(later.total_calls == 0);
  CHECK(later.average_score == 0);
  CHECK(later.contexts == 1);
}

TEST_CASE("summaries record their kind; a rolled-back write records none") {
  MetricsFixture f(/*track=*/true, /*meta_threshold=*/1);
  f.Add("root", "the project plan");
  f.Add("a", "a child with a fenced block ```cpp\nint x;\n```");
  f.Relate("root", "a", "parent");
  REQUIRE(f.graph->Summarize("a").ok());
  REQUIRE(f.graph->CreateMetaSummary("m1", {"a", "root"}).ok());
  // A failed meta summary (unknown context) writes nothing and records a
  // failed call of nothing: no llm_meta_summarize.
  CHECK(f.graph->CreateMetaSummary("m2", {"a", "ghost"}).status().code() ==
        StatusCode::kNotFound);

  const GraphMetrics m = Must(f.graph->Metrics("day"));
  CHECK(CallsOf(m, "llm_summarize") == 1);
  CHECK(CallsOf(m, "llm_hierarchical_summarize") == 1);
  // The project meta summary (threshold 1) and m1.
  CHECK(CallsOf(m, "llm_meta_summarize") == 2);
  CHECK(m.extractive_summaries == 1);
  CHECK(m.hierarchies == 1);
  CHECK(m.meta_summaries == 2);
  CHECK(m.summaries == 1);
}

TEST_CASE("an automatic summary is recorded with the add that wrote it") {
  Fixture base;
  AnalyticsOptions ao;
  ao.clock = base.clock.Fn();
  std::unique_ptr<Analytics> analytics = Must(Analytics::Open(*base.store, ao));
  ContextGraphOptions o = ManualGraphOptions();
  o.clock = base.clock.Fn();
  o.analytics = analytics.get();
  o.auto_summarize = true;
  o.message_limit_threshold = 2;
  std::unique_ptr<ContextGraph> graph =
      Must(ContextGraph::Open(*base.store, *base.convs, o));
  REQUIRE(graph->AddMessage("x", {.content = "one"}).ok());
  const AddGraphMessagesResult r =
      Must(graph->AddMessage("x", {.content = "two"}));
  REQUIRE(r.summarized);
  const GraphMetrics m = Must(graph->Metrics("day"));
  CHECK(CallsOf(m, "vector_db_add") == 2);
  CHECK(CallsOf(m, "llm_summarize") == 1);
  CHECK(m.total_calls == 3);
  graph.reset();  // before the Analytics it borrows
}

TEST_CASE("track_api_calls false records nothing") {
  MetricsFixture f(/*track=*/false);
  f.Add("a", "hello");
  f.Add("b", "world");
  f.Relate("a", "b", "similar");
  REQUIRE(f.graph->Related("a").ok());
  REQUIRE(f.graph->Summarize("a").ok());
  REQUIRE(f.analytics->Flush().ok());
  const AnalyticsReport report =
      Must(f.analytics->Query(0, kAnalyticsMaxTimestampMs));
  CHECK(report.total_calls == 0);
  CHECK(Must(f.analytics->Counter("llm_summarize.extractive")) == 0);
  const GraphMetrics m = Must(f.graph->Metrics("week"));
  CHECK_FALSE(m.tracked);
  CHECK(m.total_calls == 0);
  CHECK(m.contexts == 2);  // the counters do not need Analytics
  CHECK(m.edges_by_type[0].second == 1);
}

TEST_CASE("a call Analytics refuses still leaves the write done") {
  // The graph's clock is past the last timestamp Analytics accepts, so
  // every Record fails: the operations must not notice.
  Fixture base;
  std::unique_ptr<Analytics> analytics = Must(Analytics::Open(*base.store));
  ContextGraphOptions o = ManualGraphOptions();
  o.clock = [] { return kAnalyticsMaxTimestampMs + 1; };
  o.analytics = analytics.get();
  std::unique_ptr<ContextGraph> graph =
      Must(ContextGraph::Open(*base.store, *base.convs, o));
  REQUIRE(graph->AddMessage("a", {.content = "kept"}).ok());
  REQUIRE(graph->Summarize("a").ok());
  CHECK(Must(graph->Retrieve("a")).messages.size() == 1);
  REQUIRE(analytics->Flush().ok());
  CHECK(Must(analytics->Query(0, kAnalyticsMaxTimestampMs)).total_calls == 0);
  // The summarizer counter has no timestamp, so it still counts.
  CHECK(Must(analytics->Counter("llm_summarize.extractive")) == 1);
  graph.reset();
}

TEST_CASE("a graph without Analytics reports its counters only") {
  GraphFixture f(ManualGraphOptions());
  REQUIRE(f.graph->AddMessage("a", {.content = "hello"}).ok());
  const GraphMetrics m = Must(f.graph->Metrics());
  CHECK(m.period == "week");
  CHECK_FALSE(m.tracked);
  CHECK(m.total_calls == 0);
  CHECK(m.history_trend.size() == 7);
  CHECK(m.messages == 1);
}

TEST_CASE("a bad period is INVALID_ARGUMENT naming period") {
  MetricsFixture f;
  for (const char* bad : {"", "year", "Week", "days"}) {
    CheckError(f.graph->Metrics(bad).status(), StatusCode::kInvalidArgument,
               "period");
  }
}

TEST_CASE("the metrics document has the seed's keys") {
  MetricsFixture f;
  f.Add("a", "hello");
  f.Add("b", "world");
  f.Relate("a", "b", "continues");
  const std::string json =
      graph::GraphMetricsToJson(Must(f.graph->Metrics("day")));
  INFO(json);
  CHECK(Contains(json,
                 "{\"success\":true,\"period\":\"day\",\"metrics\":{"
                 "\"totalCalls\":3,\"byType\":{\"vector_db_add\":2,"
                 "\"vector_db_search\":0,"));
  CHECK(Contains(json, "\"llm_meta_summarize\":0},\"averageDuration\":{"));
  CHECK(Contains(json, "\"averageScore\":1.0,"));
  CHECK(Contains(json,
                 "\"historyTrend\":[{\"date\":\"2024-11-15\",\"calls\":3,"
                 "\"score\":1.0}],"));
  CHECK(Contains(json, "\"summarizers\":{\"extractive\":0,\"host\":0}"));
  CHECK(Contains(json,
                 "\"contexts\":2,\"messages\":2,\"edgesByType\":{"
                 "\"similar\":0,\"continues\":1,\"references\":0,"
                 "\"parent\":0,\"child\":0},\"summaries\":0,"
                 "\"hierarchies\":0,\"metaSummaries\":0}}"));
}

}  // namespace
}  // namespace ctxkit::testing
