// Seed 003's surface over a ContextGraph, as JSON in and JSON out: the nine
// MCP tools of d6c45ab, the `context_memory` action protocol of 0.1.1, its
// REST routes and its stdin line protocol. The C ABI's JSON entry point,
// the host's MCP tools, `ctxkit serve`'s REST routes and `ctxkit mcp`'s
// legacy lines all answer through these functions, so each response
// document has one writer (ctxkit/context_graph_json.h writes the records
// they embed).
//
// Thread safety: as ContextGraph's; every function may be called from any
// thread at once. None throws; bad input is an answer (400 or isError), never
// a crash.

#ifndef CTXKIT_CONTEXT_GRAPH_SEED_H_
#define CTXKIT_CONTEXT_GRAPH_SEED_H_

#include <span>
#include <string>
#include <string_view>

#include "ctxkit/context_graph.h"
#include "ctxkit/export.h"

namespace ctxkit::graph {

// One answer. `json` is the response document: a JSON object, except
// `ping`'s text `pong` and the seed tools whose answer is a JSON array
// (get_related_contexts and get_similar_contexts), whose `json` is that
// array's text.
struct SeedAnswer {
  // 0.1.1's HTTP status: 200, 400 (bad request, naming the field), 404
  // (unknown tool, route or context) or 500 (a store failure).
  int http_status = 200;
  // MCP's isError: the call failed (the seed's {success:false, error}).
  bool is_error = false;
  std::string json;
  // When is_error or http_status is not 200: the message the document
  // carries (its "error" or "message"), for callers that report failures
  // as text (the C ABI's out_error, JSON-RPC error objects).
  std::string error = {};
};

// A seed tool: its name, description and input JSON Schema (camelCase
// parameters; importance lists both cases), as the MCP tools/list shows it.
struct SeedToolInfo {
  std::string_view name;
  std::string_view description;
  std::string_view input_schema;  // a JSON Schema object, as JSON text
  bool read_only = false;
};

// The nine d6c45ab tools, in the seed's order, then context_memory.
CTXKIT_EXPORT std::span<const SeedToolInfo> SeedTools();

// Runs seed tool `tool` (a SeedTools() name) with `arguments_json` (a JSON
// object). An unknown tool is 404 "Unknown tool: <tool>"; arguments that are
// not an object, or a field of the wrong type or out of range, are 400 with
// is_error and a message naming the field ({"success":false,"error":…}); an
// unknown context is 404 with is_error: for retrieve_context the seed's
// {"success":false,"error":"Context not found"}, for the others the graph's
// message naming the field and id. The answers' documents are graph_json's
// records (context_graph_json.h: add_message AddGraphMessagesResultToJson,
// retrieve_context ContextDetailToJson, summarize_context
// ContextSummaryToJson, add_relationship: the upsert with
// "message":"Relationship added: s -> t (type)"); visualize_context answers
// the seed's JSON document for json and {success, contextId, format, text}
// for mermaid, text and dot; get_context_metrics answers the graph's
// GraphMetrics with the seed's keys (its call figures need the graph's
// ContextGraphOptions::analytics).
CTXKIT_EXPORT SeedAnswer CallSeedTool(ContextGraph& graph,
                                      std::string_view tool,
                                      std::string_view arguments_json);

// Runs one 0.1.1 `context_memory` request (a JSON object with `action`,
// `contextId` and the action's fields), with 0.1.1's messages and status
// codes (seed spec 2.1.2).
CTXKIT_EXPORT SeedAnswer ContextMemory(ContextGraph& graph,
                                       std::string_view request_json);

// Answers a 0.1.1 REST request: GET /, POST /tools/context_memory, GET
// /contexts, /hierarchies, /meta-summaries, /similar?text=&limit=,
// /related/<contextId>?type=&direction=. `target` is the request target as
// sent (path and query, percent-encoded; ids are percent-decoded here).
// 404 for another route, 405 for another method on a known route.
CTXKIT_EXPORT SeedAnswer SeedRest(ContextGraph& graph, std::string_view method,
                                  std::string_view target,
                                  std::string_view body);

// Answers one line of 0.1.1's stdin protocol, {"id":…, "tool":
// "context_memory", "inputs":{…}}: {"id":…, "outputs":{…}} or {"id":…,
// "error":{"code":<http status>, "message":…}}; another tool is code 404
// "Unknown tool: X". `json` is the line to write back (no newline).
CTXKIT_EXPORT SeedAnswer LegacyLine(ContextGraph& graph, std::string_view line);

}  // namespace ctxkit::graph

#endif  // CTXKIT_CONTEXT_GRAPH_SEED_H_
