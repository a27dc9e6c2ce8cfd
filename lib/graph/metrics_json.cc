#include "lib/graph/metrics_json.h"

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "ctxkit/context_graph.h"
#include "lib/json/json_writer.h"

namespace ctxkit::graph {

std::string GraphMetricsToJson(const GraphMetrics& m) {
  internal::JsonWriter w;
  w.BeginObject().Key("success").Bool(true).Key("period").String(m.period);
  w.Key("metrics").BeginObject();
  w.Key("totalCalls").Uint(m.total_calls);
  w.Key("byType").BeginObject();
  for (const GraphCallTypeMetrics& t : m.by_type) w.Key(t.type).Uint(t.calls);
  w.EndObject();
  w.Key("averageDuration").BeginObject();
  for (const GraphCallTypeMetrics& t : m.by_type) {
    w.Key(t.type).Double(t.average_duration_ms);
  }
  w.EndObject();
  w.Key("averageScore").Double(m.average_score);
  w.Key("historyTrend").BeginArray();
  for (const GraphMetricsDay& d : m.history_trend) {
    w.BeginObject()
        .Key("date")
        .String(d.date)
        .Key("calls")
        .Uint(d.calls)
        .Key("score")
        .Double(d.score)
        .EndObject();
  }
  w.EndArray();
  w.Key("errorsByType").BeginObject();
  for (const GraphCallTypeMetrics& t : m.by_type) w.Key(t.type).Uint(t.errors);
  w.EndObject();
  w.Key("summarizers")
      .BeginObject()
      .Key("extractive")
      .Int(m.extractive_summaries)
      .Key("host")
      .Int(m.host_summaries)
      .EndObject();
  w.Key("tracked").Bool(m.tracked);
  w.Key("from").Int(m.from_ms).Key("to").Int(m.to_ms);
  w.Key("contexts").Uint(m.contexts).Key("messages").Uint(m.messages);
  w.Key("edgesByType").BeginObject();
  for (const auto& [type, count] : m.edges_by_type) w.Key(type).Uint(count);
  w.EndObject();
  w.Key("summaries").Uint(m.summaries);
  w.Key("hierarchies").Uint(m.hierarchies);
  w.Key("metaSummaries").Uint(m.meta_summaries);
  w.EndObject().EndObject();
  absl::StatusOr<std::string> json = std::move(w).Finish();
  // Only ctxkit's own ASCII names and finite numbers are written.
  return json.ok() ? *std::move(json) : std::string("{\"success\":false}");
}

}  // namespace ctxkit::graph
