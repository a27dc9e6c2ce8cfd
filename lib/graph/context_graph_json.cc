// The public JSON documents of ContextGraph's results
// (ctxkit/context_graph_json.h): graph_json.h's writers behind the public
// Status type.

#include "ctxkit/context_graph_json.h"

#include <string>

#include "lib/graph/graph_json.h"
#include "lib/graph/metrics_json.h"
#include "lib/status/status_internal.h"

namespace ctxkit {

using internal::ToPublic;

StatusOr<std::string> AddGraphMessagesResultToJson(
    const AddGraphMessagesResult& result) {
  return ToPublic(graph::AddResultJson(result));
}

StatusOr<std::string> ContextDetailToJson(const ContextDetail& detail,
                                          const ContextHierarchy* hierarchy) {
  return ToPublic(graph::DetailJson(detail, hierarchy));
}

StatusOr<std::string> ContextSummaryToJson(const ContextSummary& summary) {
  return ToPublic(graph::SummaryJson(summary));
}

StatusOr<std::string> RelationshipToJson(const Relationship& relationship) {
  return ToPublic(graph::RelationshipJson(relationship));
}

StatusOr<std::string> RelationshipUpsertToJson(
    const RelationshipUpsert& upsert) {
  return ToPublic(graph::UpsertJson(upsert));
}

StatusOr<std::string> RelatedResultToJson(const RelatedResult& related,
                                          bool with_edges) {
  return ToPublic(graph::RelatedJson(related, with_edges));
}

StatusOr<std::string> PathResultToJson(const PathResult& path) {
  return ToPublic(graph::PathJson(path));
}

StatusOr<std::string> SimilarResultToJson(const SimilarResult& similar) {
  return ToPublic(graph::SimilarJson(similar));
}

StatusOr<std::string> CleanupResultToJson(const CleanupResult& cleanup) {
  return ToPublic(graph::CleanupJson(cleanup));
}

StatusOr<std::string> ContextHierarchyToJson(
    const ContextHierarchy& hierarchy) {
  return ToPublic(graph::HierarchyJson(hierarchy));
}

StatusOr<std::string> MetaSummaryToJson(const MetaSummary& meta) {
  return ToPublic(graph::MetaSummaryJson(meta));
}

StatusOr<std::string> IdPageToJson(const IdPage& page) {
  return ToPublic(graph::IdPageJson(page));
}

StatusOr<std::string> ContextPageToJson(const ContextPage& page) {
  return ToPublic(graph::ContextPageJson(page));
}

StatusOr<std::string> GraphVerifyReportToJson(const GraphVerifyReport& report) {
  return ToPublic(graph::VerifyJson(report));
}

StatusOr<std::string> GraphMetricsToJson(const GraphMetrics& metrics) {
  return graph::GraphMetricsToJson(metrics);
}

}  // namespace ctxkit
