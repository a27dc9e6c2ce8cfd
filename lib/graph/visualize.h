// The renderers of visualize (CG-11): a context's neighbourhood, gathered by
// ContextGraph, written as the seed's JSON document (plus nodes and edges),
// a Mermaid flowchart, the seed's text lines, or a Graphviz digraph.
//
// They are pure functions of a VizGraph: no store access, no shared state,
// so they are thread-safe and the same graph always gives the same bytes.
//
// Context ids are caller data (an MCP client picks them), so every format
// treats them as hostile: no id can end a quoted label, start a comment or
// directive, add a line, or smuggle markup into the rendered diagram. Each
// format uses its own escapes (see the functions); non-ASCII text is kept
// as UTF-8 so that it stays readable.

#ifndef CTXKIT_LIB_GRAPH_VISUALIZE_H_
#define CTXKIT_LIB_GRAPH_VISUALIZE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/json/json_writer.h"

namespace ctxkit::internal {

// One context of the neighbourhood. nodes[0] is the root (depth 0); the
// others follow in breadth-first order with their hop distance (1..3).
struct VizNode {
  std::string context_id = {};  // UTF-8
  uint64_t message_count = 0;
  bool has_summary = false;
  int depth = 0;
};

// One relationship between two nodes of the neighbourhood, as stored
// (source -> target), whichever direction the gathering crossed it in.
struct VizEdge {
  size_t source = 0;      // index into VizGraph::nodes
  size_t target = 0;      // index into VizGraph::nodes
  std::string type = {};  // similar, continues, references, parent or child
  double weight = 0;      // [0, 1]
};

// The root's summary, in the seed's shape.
struct VizSummary {
  struct CodeBlock {
    std::string language = {};  // UTF-8
    double importance = 0;
  };
  uint64_t message_count = 0;  // messages the summary covers
  std::vector<std::string> key_insights = {};
  std::vector<CodeBlock> code_blocks = {};
};

struct VizGraph {
  std::vector<VizNode> nodes = {};
  std::vector<VizEdge> edges = {};
  // Present exactly when nodes[0].has_summary.
  std::optional<VizSummary> root_summary = {};
  // The gathering stopped at its node limit, so contexts within the
  // requested depth are missing.
  bool truncated = false;
};

// OK when `graph` can be rendered. Otherwise INVALID_ARGUMENT naming the
// first bad field, e.g. "edges[3].target is 7; the graph has 5 nodes":
//   nodes              empty (there is no root)
//   nodes[k].depth     root not 0, another node not >= 1
//   nodes[k].context_id  not valid UTF-8, or a repeat of an earlier node's
//   edges[k].source / .target  not an index into nodes
//   edges[k].type      not one of the five relationship types
//   edges[k].weight    NaN or outside [0, 1]
//   root_summary       present while nodes[0].has_summary is false, or the
//                      reverse
//   root_summary.key_insights[k], .code_blocks[k].language  not valid UTF-8
//   root_summary.code_blocks[k].importance  NaN or infinite
// Every renderer below runs this check first and fails with its error.
absl::Status CheckVizGraph(const VizGraph& graph);

enum class VizFormat { kJson, kMermaid, kText, kDot };

// "json", "mermaid", "text" or "dot", exactly (lower case, as the seed's
// schema only accepted lower case). Otherwise INVALID_ARGUMENT naming
// `field` and the accepted values:
//   "format is 'svg'; it must be json, mermaid, text or dot".
absl::StatusOr<VizFormat> ParseVizFormat(std::string_view field,
                                         std::string_view text);

// Writes the document as one JSON object into `writer` (at any point where a
// value may start):
//   {"success":true, "contextId", "messageCount", "hasSummary",
//    "summary":{"keyInsights":[..], "messageCount",
//               "codeBlocks":[{"language","importance"}]} | null,
//    "relatedContexts":[{"contextId"}],
//    "nodes":[{"id":"n0","contextId","messageCount","hasSummary","depth"}],
//    "edges":[{"source":"n0","target":"n1","type","weight"}],
//    "truncated":bool}
// The first six members are the seed's. relatedContexts are the depth-1
// nodes in nodes' order (the seed listed only direct neighbours); node ids
// are the ones the diagrams use. Weights are written exactly.
// Errors: CheckVizGraph's, in which case nothing is written; otherwise the
// writer's status (which also holds any earlier error of the writer).
[[nodiscard]] absl::Status WriteVizJson(JsonWriter& writer,
                                        const VizGraph& graph);

// A Mermaid flowchart:
//   graph LR
//   n0(["auth (3 messages, summarized)"]);
//   n1["session store (1 message)"];
//   n0 -- "references 0.8" --> n1;
// The root has the rounded (stadium) shape. Labels escape with Mermaid's
// entity codes: " # & < > % ` as #quot; #35; #38; #60; #62; #37; #96;
// (so no label closes its quotes, forms an entity or HTML tag, or a %%
// comment or %%{init}%% directive). Control characters, line and paragraph
// separators and bidirectional controls appear as visible escapes (\n,
// \x01, \u{202E}). A truncated graph ends with a "%% truncated" comment.
absl::StatusOr<std::string> RenderMermaid(const VizGraph& graph);

// A Graphviz digraph:
//   digraph context {
//     node [shape=box];
//     n0 [label="auth (3 messages, summarized)", style=bold];
//     n1 [label="session store (1 message)"];
//     n0 -> n1 [label="references 0.8"];
//   }
// Labels escape per DOT: \" and \\ (so no \N, \G, \l... escape is formed),
// a newline as \n (a line break in the label), & as &amp; (Graphviz decodes
// entities in labels); other control characters and invisible format
// characters appear as visible escapes. A truncated graph has a last
// "// truncated: ..." comment line before the closing brace.
absl::StatusOr<std::string> RenderDot(const VizGraph& graph);

// The seed's text, one line each, joined by '\n' with no final newline:
//   Context ID: auth
//   Messages: 3
//   Has Summary: true
//   Summary: 2 messages summarized        (with a summary)
//   Key Insights: a, b                    (with a summary and insights)
//   Related Contexts: session store, x    (with depth-1 nodes)
// then, when there are edges, "Edges:" and one "  <source> -> <target>
// (<type> <weight>)" line per edge, and for a truncated graph a final
// "Truncated: showing the nearest N contexts". Ids and insights escape
// control characters, line separators and bidirectional controls visibly
// (\n, \t, \x1b, \u{2028}), so one line is one line; a backslash is kept
// as is, because ids are often Windows paths.
absl::StatusOr<std::string> RenderText(const VizGraph& graph);

// `graph` in `format`: for kJson the document of WriteVizJson on its own,
// for the others the text of the renderer. Errors: as those.
absl::StatusOr<std::string> RenderViz(const VizGraph& graph, VizFormat format);

// `weight` as the diagrams print it: rounded to 3 decimals (halves away
// from zero) with trailing zeros dropped ("0.8", "1", "0.125", "0.05",
// "0"). Meant for weights in [0, 1]; others print as printf's "%.3f" would,
// trimmed the same way.
std::string FormatVizWeight(double weight);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_VISUALIZE_H_
