// ContextGraph's results as JSON documents with seed 003's camelCase field
// names: what `ctxkit ctx` prints, the C ABI's graph functions return and
// the seed tools (ctxkit/context_graph_seed.h) embed. Each is one object
// with "success":true first.
//
// Errors: INVALID_ARGUMENT when a hand-built record holds text that is not
// UTF-8 or a number that is not finite (the graph returns none). Equal
// records give equal bytes. Thread safety: pure functions of their
// arguments.

#ifndef CTXKIT_CONTEXT_GRAPH_JSON_H_
#define CTXKIT_CONTEXT_GRAPH_JSON_H_

#include <string>

#include "ctxkit/context_graph.h"
#include "ctxkit/export.h"
#include "ctxkit/status.h"

namespace ctxkit {

// add_message's result: contextId, conversationId, created, the messages
// (messageId, seq, tokens, importance as 0.25..1, importanceLevel, tags),
// summarized, summaryVersion, linked, cleaned.
CTXKIT_EXPORT StatusOr<std::string> AddGraphMessagesResultToJson(
    const AddGraphMessagesResult& result);
// retrieve_context's document; with `hierarchy` (may be null),
// parentContextId and childContextIds from it.
CTXKIT_EXPORT StatusOr<std::string> ContextDetailToJson(
    const ContextDetail& detail, const ContextHierarchy* hierarchy);
CTXKIT_EXPORT StatusOr<std::string> ContextSummaryToJson(
    const ContextSummary& summary);
CTXKIT_EXPORT StatusOr<std::string> RelationshipToJson(
    const Relationship& relationship);
CTXKIT_EXPORT StatusOr<std::string> RelationshipUpsertToJson(
    const RelationshipUpsert& upsert);
// The ids (relatedContexts) and, with `with_edges`, every edge.
CTXKIT_EXPORT StatusOr<std::string> RelatedResultToJson(
    const RelatedResult& related, bool with_edges);
CTXKIT_EXPORT StatusOr<std::string> PathResultToJson(const PathResult& path);
CTXKIT_EXPORT StatusOr<std::string> SimilarResultToJson(
    const SimilarResult& similar);
CTXKIT_EXPORT StatusOr<std::string> CleanupResultToJson(
    const CleanupResult& cleanup);
CTXKIT_EXPORT StatusOr<std::string> ContextHierarchyToJson(
    const ContextHierarchy& hierarchy);
CTXKIT_EXPORT StatusOr<std::string> MetaSummaryToJson(const MetaSummary& meta);
CTXKIT_EXPORT StatusOr<std::string> IdPageToJson(const IdPage& page);
CTXKIT_EXPORT StatusOr<std::string> ContextPageToJson(const ContextPage& page);
CTXKIT_EXPORT StatusOr<std::string> GraphVerifyReportToJson(
    const GraphVerifyReport& report);
// get_context_metrics' document: {success, period, metrics:{totalCalls,
// byType, averageDuration, averageScore, historyTrend, contexts, messages,
// edgesByType, summaries, hierarchies, metaSummaries, ...}}.
CTXKIT_EXPORT StatusOr<std::string> GraphMetricsToJson(
    const GraphMetrics& metrics);

}  // namespace ctxkit

#endif  // CTXKIT_CONTEXT_GRAPH_JSON_H_
