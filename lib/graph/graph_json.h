// The JSON documents of ContextGraph's results
// (include/ctxkit/context_graph.h), with seed 003's camelCase field names: what
// the seed protocol (ctxkit/context_graph_seed.h), the C ABI's typed graph
// functions and the host's surfaces answer. One writer per public record, so
// every surface spells a record the same way.
//
// Each record has two forms: Write<Record>Fields writes its members into
// the object the writer has open (so an envelope such as context_memory's
// {success, message, ...} can embed them), and <Record>Json returns the
// record as a whole document ({"success":true, ...members}). Times are ms
// since the epoch; a time that is "none" in the record (0) is null.
//
// Errors: INVALID_ARGUMENT when a string is not valid UTF-8 or a number is
// not finite (JsonWriter's), INTERNAL for a writer misused by the caller;
// the writer then holds a partial document: discard it. Output is a pure
// function of the record (no map order, no clock), so equal records give
// equal bytes. Thread safety: pure functions; a writer is one thread's.

#ifndef CTXKIT_LIB_GRAPH_GRAPH_JSON_H_
#define CTXKIT_LIB_GRAPH_GRAPH_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/context_graph.h"
#include "lib/json/json_writer.h"

namespace ctxkit::graph {

using internal::JsonWriter;

// AddGraphMessagesResult: contextId, conversationId, created, then the last
// message's messageId, seq, tokens, importance (number), importanceLevel
// and tags (CG-3's single-message fields), messages:[{messageId, seq,
// tokens, importance, importanceLevel, tags}], summarized, summaryVersion
// (only when summarized), linked, archived (what the automatic cleanup
// archived or deleted).
void WriteAddResultFields(JsonWriter& w, const AddGraphMessagesResult& r);
// With message "Message added to context: <id>" before the fields.
absl::StatusOr<std::string> AddResultJson(const AddGraphMessagesResult& r);

// A summary version: contextId, summary, codeBlocks:[{language, code,
// importance}], keyInsights, importanceScore, messageCount, version,
// createdAt, lastUpdated, tokensUsed, tokenLimit, summarizer,
// relatedContexts.
void WriteSummaryFields(JsonWriter& w, const ContextSummary& s);
// The summary as an object value (no success member).
void WriteSummary(JsonWriter& w, const ContextSummary& s);
absl::StatusOr<std::string> SummaryJson(const ContextSummary& s);

// CG-4: contextId, messages:[{role, content, timestamp, importance,
// importanceLevel, tags, seq, tokens}], hasSummary, summary|null,
// messageCount, totalTokens, parentContextId|null, childContextIds, then
// conversationId, createdAt, lastActivityAt, archived,
// messagesSinceSummary, tokensSinceSummary, highSinceSummary and, when
// asked for, summaryHistory. The parent and children come from
// `hierarchy` (Retrieve does not carry them); pass nullptr to write null
// and [].
void WriteDetailFields(JsonWriter& w, const ContextDetail& d,
                       const ContextHierarchy* hierarchy);
// The messages array alone (context_memory's retrieve).
void WriteMessages(JsonWriter& w, const std::vector<GraphMessageView>& m);
absl::StatusOr<std::string> DetailJson(const ContextDetail& d,
                                       const ContextHierarchy* hierarchy);

// An edge: sourceContextId, targetContextId, relationshipType, weight,
// metadata (the stored object), createdAt, updatedAt, validAt,
// invalidAt|null, expiredAt|null.
void WriteRelationshipFields(JsonWriter& w, const Relationship& r);
void WriteRelationship(JsonWriter& w, const Relationship& r);
absl::StatusOr<std::string> RelationshipJson(const Relationship& r);
// The edge's fields plus created (false: an existing edge was updated).
void WriteUpsertFields(JsonWriter& w, const RelationshipUpsert& u);
absl::StatusOr<std::string> UpsertJson(const RelationshipUpsert& u);

// Without `with_edges`: contextIds and total. With it: edges:[{contextId,
// direction, type, weight, createdAt, updatedAt, validAt, invalidAt|null,
// expiredAt|null, metadata}] and total.
void WriteRelatedFields(JsonWriter& w, const RelatedResult& r, bool with_edges);
absl::StatusOr<std::string> RelatedJson(const RelatedResult& r,
                                        bool with_edges);

// found, path, edges (WriteRelationship each), totalWeight, reason|null.
void WritePathFields(JsonWriter& w, const PathResult& p);
absl::StatusOr<std::string> PathJson(const PathResult& p);

// [{contextId, similarity, score, method, signals:{bm25, tfidf}}], most
// similar first: the seed tool's array.
void WriteSimilarContexts(JsonWriter& w,
                          const std::vector<SimilarContext>& contexts);
// method, contexts.
void WriteSimilarFields(JsonWriter& w, const SimilarResult& r);
absl::StatusOr<std::string> SimilarJson(const SimilarResult& r);

// cleanedContexts, kept:[{contextId, reasons}].
void WriteCleanupFields(JsonWriter& w, const CleanupResult& r);
absl::StatusOr<std::string> CleanupJson(const CleanupResult& r);

// A hierarchical summary as an object: parentContextId, childContextIds,
// summary, lastUpdated, version, hierarchyLevel, codeBlocks, keyInsights,
// importanceScore, messageCount.
void WriteHierarchicalSummary(JsonWriter& w, const HierarchicalSummary& s);
// contextId, parent|null, children, ancestors, depth,
// hierarchicalSummary|null.
void WriteHierarchyFields(JsonWriter& w, const ContextHierarchy& h);
absl::StatusOr<std::string> HierarchyJson(const ContextHierarchy& h);

// id, summary, contextIds, createdAt, updatedAt, version, hierarchyLevel,
// sharedCodeBlocks.
void WriteMetaSummary(JsonWriter& w, const MetaSummary& m);
absl::StatusOr<std::string> MetaSummaryJson(const MetaSummary& m);

// ids, nextCursor|null.
absl::StatusOr<std::string> IdPageJson(const IdPage& page);

// A context's facts: contextId, conversationId, createdAt, lastActivityAt,
// messageCount, totalTokens, archived.
void WriteContextInfo(JsonWriter& w, const ContextInfo& c);
// contexts, nextCursor|null.
absl::StatusOr<std::string> ContextPageJson(const ContextPage& page);

// ok, contexts, messages, edges, problems.
absl::StatusOr<std::string> VerifyJson(const GraphVerifyReport& r);

// {"success":true} and the result of `fields`, as one document.
template <typename Fields>
absl::StatusOr<std::string> SuccessDocument(Fields fields) {
  JsonWriter w;
  w.BeginObject().Key("success").Bool(true);
  fields(w);
  w.EndObject();
  return std::move(w).Finish();
}

}  // namespace ctxkit::graph

#endif  // CTXKIT_LIB_GRAPH_GRAPH_JSON_H_
