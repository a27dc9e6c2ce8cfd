// ContextGraph::Metrics' answer as the seed's get_context_metrics document
// (CG-12), for the host's tool, the CLI and the C ABI.

#ifndef CTXKIT_LIB_GRAPH_METRICS_JSON_H_
#define CTXKIT_LIB_GRAPH_METRICS_JSON_H_

#include <string>

#include "ctxkit/context_graph.h"

namespace ctxkit::graph {

// {"success":true,"period":"week","metrics":{"totalCalls":n,
//  "byType":{"<type>":n},"averageDuration":{"<type>":ms},"averageScore":x,
//  "historyTrend":[{"date":"YYYY-MM-DD","calls":n,"score":x}],
//  "errorsByType":{"<type>":n},"summarizers":{"extractive":n,"host":n},
//  "tracked":bool,"from":ms,"to":ms,"contexts":n,"messages":n,
//  "edgesByType":{"similar":n,...},"summaries":n,"hierarchies":n,
//  "metaSummaries":n}}
// byType, averageDuration and errorsByType list the nine call types in
// kGraphCallTypes order (0 for a type without calls); averageDuration is
// in milliseconds, as the seed's. Every string in `metrics` is ctxkit's own
// ASCII, so this cannot fail. Pure; thread-safe.
std::string GraphMetricsToJson(const GraphMetrics& metrics);

}  // namespace ctxkit::graph

#endif  // CTXKIT_LIB_GRAPH_METRICS_JSON_H_
