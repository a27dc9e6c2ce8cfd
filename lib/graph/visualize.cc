// The visualize renderers (visualize.h). Each format's escaping lives in one
// small function so that the rules can be read against the format's own.

#include "lib/graph/visualize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/json/utf8.h"
#include "lib/status/status_macros.h"
#include "lib/unicode/unicode.h"

namespace ctxkit::internal {
namespace {

constexpr std::string_view kVizRelationshipTypes[] = {
    "similar", "continues", "references", "parent", "child"};

constexpr std::string_view kVizFormatNames[] = {"json", "mermaid", "text",
                                                "dot"};

bool IsVizRelationshipType(std::string_view type) {
  for (std::string_view known : kVizRelationshipTypes) {
    if (type == known) return true;
  }
  return false;
}

// Characters that end or reorder a line, or are invisible controls: raw in
// a label or a text line they would add lines, break a diagram's syntax or
// make one id look like another (bidirectional overrides), so every format
// shows them as escapes.
bool NeedsVisibleEscape(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C ||
         cp == 0x200E || cp == 0x200F || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// The escape as a C or Rust programmer would read it: \n \r \t, \xHH for
// the other ASCII controls, \u{XXXX} above ASCII.
void AppendVisibleEscape(char32_t cp, std::string& out) {
  switch (cp) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  if (cp < 0x80) {
    absl::StrAppendFormat(&out, "\\x%02X", static_cast<uint32_t>(cp));
  } else {
    absl::StrAppendFormat(&out, "\\u{%04X}", static_cast<uint32_t>(cp));
  }
}

// Which bytes may begin a character that a format escapes: every ASCII
// control and DEL, the lead bytes of U+0080..U+009F (0xC2), U+061C (0xD8)
// and U+200E..U+2069 (0xE2), plus the format's own ASCII specials. All other
// bytes are copied in runs, which keeps ordinary ids at memory speed.
using VizEscapeTable = std::array<bool, 256>;

constexpr VizEscapeTable MakeVizEscapeTable(std::string_view specials) {
  VizEscapeTable table{};
  for (size_t b = 0; b < 0x20; ++b) table[b] = true;
  table[0x7F] = table[0xC2] = table[0xD8] = table[0xE2] = true;
  for (char c : specials) table[static_cast<unsigned char>(c)] = true;
  return table;
}

constexpr VizEscapeTable kVizTextEscapes = MakeVizEscapeTable("");
constexpr VizEscapeTable kVizMermaidEscapes = MakeVizEscapeTable("\"#&<>%`");
constexpr VizEscapeTable kVizDotEscapes = MakeVizEscapeTable("\"\\&");

// Copies valid UTF-8 `text` to `out`, except that each character starting
// with a byte marked in `table` goes to `emit(code_point, bytes)`.
template <typename Emit>
void AppendEscaped(std::string_view text, const VizEscapeTable& table,
                   std::string& out, Emit emit) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t run = pos;
    while (run < text.size() && !table[static_cast<unsigned char>(text[run])]) {
      ++run;
    }
    out.append(text.data() + pos, run - pos);
    if (run == text.size()) break;
    const unicode::Utf8Char c = unicode::DecodeUtf8(text, run);
    emit(c.code_point, text.substr(run, c.length));
    pos = run + c.length;
  }
}

// Text lines: only the characters that would break or disguise a line.
void AppendTextEscaped(std::string_view text, std::string& out) {
  AppendEscaped(text, kVizTextEscapes, out,
                [&out](char32_t cp, std::string_view bytes) {
                  if (NeedsVisibleEscape(cp)) {
                    AppendVisibleEscape(cp, out);
                  } else {
                    out += bytes;
                  }
                });
}

// Mermaid decodes "#name;" and "#123;" in any text into HTML entities and
// renders labels as HTML, and it scans the whole source for "%%{" directives,
// so those characters become entity codes too: decimal ones, the form its
// documentation promises for every character, except its own "#quot;".
void AppendMermaidEscaped(std::string_view text, std::string& out) {
  AppendEscaped(text, kVizMermaidEscapes, out,
                [&out](char32_t cp, std::string_view bytes) {
                  switch (cp) {
                    case '"':
                      out += "#quot;";
                      return;
                    case '#':
                      out += "#35;";
                      return;
                    case '&':
                      out += "#38;";
                      return;
                    case '<':
                      out += "#60;";
                      return;
                    case '>':
                      out += "#62;";
                      return;
                    case '%':
                      out += "#37;";
                      return;
                    case '`':  // "` ... `" would make a Markdown string
                      out += "#96;";
                      return;
                    default:
                      break;
                  }
                  if (NeedsVisibleEscape(cp)) {
                    AppendVisibleEscape(cp, out);
                  } else {
                    out += bytes;
                  }
                });
}

// DOT's quoted strings end at '"' and give '\' a meaning (\n, \l, \N, ...);
// Graphviz also decodes "&name;" entities in labels.
void AppendDotEscaped(std::string_view text, std::string& out) {
  AppendEscaped(text, kVizDotEscapes, out,
                [&out](char32_t cp, std::string_view bytes) {
                  switch (cp) {
                    case '"':
                      out += "\\\"";
                      return;
                    case '\\':
                      out += "\\\\";
                      return;
                    case '\n':
                      out += "\\n";
                      return;
                    case '&':
                      out += "&amp;";
                      return;
                    default:
                      break;
                  }
                  if (NeedsVisibleEscape(cp)) {
                    std::string escape;
                    AppendVisibleEscape(cp, escape);
                    // Shown literally: its backslash is itself escaped.
                    out += '\\';
                    out += escape;
                  } else {
                    out += bytes;
                  }
                });
}

// What a node's label says after its id.
std::string NodeLabelTail(const VizNode& node) {
  return absl::StrCat(" (", node.message_count,
                      node.message_count == 1 ? " message" : " messages",
                      node.has_summary ? ", summarized)" : ")");
}

// About the length of a rendering, so that the output grows once rather than
// by repeated doubling (copying it was an eighth of the time at 500 nodes).
// `ids_in_edges`: the text format names both ends of each edge by id.
size_t RenderSizeHint(const VizGraph& graph, bool ids_in_edges) {
  size_t ids = 0;
  for (const VizNode& node : graph.nodes) ids += node.context_id.size();
  size_t size = 128 + ids + graph.nodes.size() * 48 + graph.edges.size() * 40;
  if (ids_in_edges) {
    for (const VizEdge& edge : graph.edges) {
      size += graph.nodes[edge.source].context_id.size() +
              graph.nodes[edge.target].context_id.size();
    }
  }
  return size + size / 8;
}

std::string NodeName(size_t index) { return absl::StrCat("n", index); }

// Why the diagram has no more nodes, after "truncated: ".
std::string TruncatedNote(const VizGraph& graph) {
  return absl::StrCat("showing the nearest ", graph.nodes.size(),
                      graph.nodes.size() == 1 ? " context" : " contexts");
}

absl::Status CheckFiniteImportance(size_t index, double importance) {
  if (std::isfinite(importance)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "root_summary.code_blocks[%d].importance is %g; it must be a finite "
      "number",
      index, importance));
}

absl::Status CheckVizSummary(const VizSummary& summary) {
  for (size_t i = 0; i < summary.key_insights.size(); ++i) {
    CTXKIT_RETURN_IF_ERROR(
        ValidateUtf8(summary.key_insights[i],
                     absl::StrFormat("root_summary.key_insights[%d]", i)));
  }
  for (size_t i = 0; i < summary.code_blocks.size(); ++i) {
    CTXKIT_RETURN_IF_ERROR(ValidateUtf8(
        summary.code_blocks[i].language,
        absl::StrFormat("root_summary.code_blocks[%d].language", i)));
    CTXKIT_RETURN_IF_ERROR(
        CheckFiniteImportance(i, summary.code_blocks[i].importance));
  }
  return absl::OkStatus();
}

absl::Status CheckVizNodes(const std::vector<VizNode>& nodes) {
  if (nodes.empty()) {
    return absl::InvalidArgumentError(
        "nodes is empty; it must hold at least the root context");
  }
  absl::flat_hash_map<std::string_view, size_t> first_index;
  first_index.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const VizNode& node = nodes[i];
    if (i == 0 && node.depth != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "nodes[0].depth is %d; the root's depth must be 0", node.depth));
    }
    if (i > 0 && node.depth < 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "nodes[%d].depth is %d; only the root (nodes[0]) has depth 0", i,
          node.depth));
    }
    CTXKIT_RETURN_IF_ERROR(ValidateUtf8(
        node.context_id, absl::StrFormat("nodes[%d].context_id", i)));
    auto [it, inserted] = first_index.emplace(node.context_id, i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "nodes[%d].context_id repeats nodes[%d].context_id", i, it->second));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckVizEdges(const VizGraph& graph) {
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    const VizEdge& edge = graph.edges[i];
    for (auto [name, index] :
         {std::pair<const char*, size_t>{"source", edge.source},
          {"target", edge.target}}) {
      if (index >= graph.nodes.size()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("edges[%d].%s is %d; the graph has %d nodes", i,
                            name, index, graph.nodes.size()));
      }
    }
    if (!IsVizRelationshipType(edge.type)) {
      CTXKIT_RETURN_IF_ERROR(
          ValidateUtf8(edge.type, absl::StrFormat("edges[%d].type", i)));
      return absl::InvalidArgumentError(absl::StrFormat(
          "edges[%d].type is '%s'; it must be similar, continues, "
          "references, parent or child",
          i, edge.type));
    }
    // Written so that NaN fails too.
    if (!(edge.weight >= 0 && edge.weight <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("edges[%d].weight is %g; it must be between 0 and 1",
                          i, edge.weight));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckVizGraph(const VizGraph& graph) {
  CTXKIT_RETURN_IF_ERROR(CheckVizNodes(graph.nodes));
  CTXKIT_RETURN_IF_ERROR(CheckVizEdges(graph));
  if (graph.root_summary.has_value() != graph.nodes[0].has_summary) {
    return absl::InvalidArgumentError(
        graph.nodes[0].has_summary
            ? "root_summary is missing while nodes[0].has_summary is true"
            : "root_summary is present while nodes[0].has_summary is false");
  }
  if (graph.root_summary.has_value()) {
    CTXKIT_RETURN_IF_ERROR(CheckVizSummary(*graph.root_summary));
  }
  return absl::OkStatus();
}

absl::StatusOr<VizFormat> ParseVizFormat(std::string_view field,
                                         std::string_view text) {
  for (size_t i = 0; i < std::size(kVizFormatNames); ++i) {
    if (text == kVizFormatNames[i]) return static_cast<VizFormat>(i);
  }
  CTXKIT_RETURN_IF_ERROR(ValidateUtf8(text, field));
  // A client's runaway value is not echoed whole; the cut falls between
  // characters so that the message stays valid UTF-8.
  size_t shown = std::min<size_t>(text.size(), 64);
  while (shown < text.size() && (text[shown] & 0xC0) == 0x80) --shown;
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is '%s%s'; it must be json, mermaid, text or dot", field,
      text.substr(0, shown), shown < text.size() ? "..." : ""));
}

std::string FormatVizWeight(double weight) {
  // Thousandths as an integer: a printf per edge was a fifth of a diagram's
  // rendering time. Outside [0, 1] (not a stored weight) printf decides.
  if (!(weight >= 0 && weight <= 1)) {
    std::string text = absl::StrFormat("%.3f", weight);
    while (text.ends_with('0')) text.pop_back();
    if (text.ends_with('.')) text.pop_back();
    return text == "-0" ? "0" : text;
  }
  auto thousandths = static_cast<uint32_t>(std::lround(weight * 1000));
  if (thousandths == 1000) return "1";
  if (thousandths == 0) return "0";
  std::string text = "0.";
  int digits = 3;
  while (thousandths % 10 == 0) {
    thousandths /= 10;
    --digits;
  }
  std::string fraction = std::to_string(thousandths);
  text.append(static_cast<size_t>(digits) - fraction.size(), '0');
  text += fraction;
  return text;
}

absl::Status WriteVizJson(JsonWriter& writer, const VizGraph& graph) {
  CTXKIT_RETURN_IF_ERROR(CheckVizGraph(graph));
  const VizNode& root = graph.nodes[0];
  writer.BeginObject()
      .Key("success")
      .Bool(true)
      .Key("contextId")
      .String(root.context_id)
      .Key("messageCount")
      .Uint(root.message_count)
      .Key("hasSummary")
      .Bool(root.has_summary)
      .Key("summary");
  if (graph.root_summary.has_value()) {
    const VizSummary& summary = *graph.root_summary;
    writer.BeginObject().Key("keyInsights").BeginArray();
    for (const std::string& insight : summary.key_insights) {
      writer.String(insight);
    }
    writer.EndArray()
        .Key("messageCount")
        .Uint(summary.message_count)
        .Key("codeBlocks")
        .BeginArray();
    for (const VizSummary::CodeBlock& block : summary.code_blocks) {
      writer.BeginObject()
          .Key("language")
          .String(block.language)
          .Key("importance")
          .Double(block.importance)
          .EndObject();
    }
    writer.EndArray().EndObject();
  } else {
    writer.Null();
  }
  writer.Key("relatedContexts").BeginArray();
  for (const VizNode& node : graph.nodes) {
    if (node.depth != 1) continue;
    writer.BeginObject().Key("contextId").String(node.context_id).EndObject();
  }
  writer.EndArray().Key("nodes").BeginArray();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const VizNode& node = graph.nodes[i];
    writer.BeginObject()
        .Key("id")
        .String(NodeName(i))
        .Key("contextId")
        .String(node.context_id)
        .Key("messageCount")
        .Uint(node.message_count)
        .Key("hasSummary")
        .Bool(node.has_summary)
        .Key("depth")
        .Int(node.depth)
        .EndObject();
  }
  writer.EndArray().Key("edges").BeginArray();
  for (const VizEdge& edge : graph.edges) {
    writer.BeginObject()
        .Key("source")
        .String(NodeName(edge.source))
        .Key("target")
        .String(NodeName(edge.target))
        .Key("type")
        .String(edge.type)
        .Key("weight")
        .Double(edge.weight)
        .EndObject();
  }
  writer.EndArray().Key("truncated").Bool(graph.truncated).EndObject();
  return writer.status();
}

absl::StatusOr<std::string> RenderMermaid(const VizGraph& graph) {
  CTXKIT_RETURN_IF_ERROR(CheckVizGraph(graph));
  std::string out;
  out.reserve(RenderSizeHint(graph, false));
  out += "graph LR\n";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const VizNode& node = graph.nodes[i];
    // Every statement ends in ';': Mermaid drops the last ';' of a line
    // that reads like "style ...:#...;", and this way that is the harmless
    // terminator rather than the end of an entity code in the label.
    absl::StrAppend(&out, NodeName(i), i == 0 ? "([\"" : "[\"");
    AppendMermaidEscaped(node.context_id, out);
    absl::StrAppend(&out, NodeLabelTail(node), i == 0 ? "\"]);\n" : "\"];\n");
  }
  for (const VizEdge& edge : graph.edges) {
    absl::StrAppend(&out, NodeName(edge.source), " -- \"", edge.type, " ",
                    FormatVizWeight(edge.weight), "\" --> ",
                    NodeName(edge.target), ";\n");
  }
  if (graph.truncated)
    absl::StrAppend(&out, "%% truncated: ", TruncatedNote(graph), "\n");
  return out;
}

absl::StatusOr<std::string> RenderDot(const VizGraph& graph) {
  CTXKIT_RETURN_IF_ERROR(CheckVizGraph(graph));
  std::string out;
  out.reserve(RenderSizeHint(graph, false));
  out += "digraph context {\n  node [shape=box];\n";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const VizNode& node = graph.nodes[i];
    absl::StrAppend(&out, "  ", NodeName(i), " [label=\"");
    AppendDotEscaped(node.context_id, out);
    absl::StrAppend(&out, NodeLabelTail(node),
                    i == 0 ? "\", style=bold];\n" : "\"];\n");
  }
  for (const VizEdge& edge : graph.edges) {
    absl::StrAppend(&out, "  ", NodeName(edge.source), " -> ",
                    NodeName(edge.target), " [label=\"", edge.type, " ",
                    FormatVizWeight(edge.weight), "\"];\n");
  }
  if (graph.truncated)
    absl::StrAppend(&out, "  // truncated: ", TruncatedNote(graph), "\n");
  out += "}\n";
  return out;
}

absl::StatusOr<std::string> RenderText(const VizGraph& graph) {
  CTXKIT_RETURN_IF_ERROR(CheckVizGraph(graph));
  const VizNode& root = graph.nodes[0];
  std::string out;
  out.reserve(RenderSizeHint(graph, true));
  out += "Context ID: ";
  AppendTextEscaped(root.context_id, out);
  absl::StrAppend(&out, "\nMessages: ", root.message_count,
                  "\nHas Summary: ", root.has_summary ? "true" : "false");
  if (graph.root_summary.has_value()) {
    const VizSummary& summary = *graph.root_summary;
    // The seed's wording, "messages" even for one.
    absl::StrAppend(&out, "\nSummary: ", summary.message_count,
                    " messages summarized");
    if (!summary.key_insights.empty()) {
      out += "\nKey Insights: ";
      for (size_t i = 0; i < summary.key_insights.size(); ++i) {
        if (i > 0) out += ", ";
        AppendTextEscaped(summary.key_insights[i], out);
      }
    }
  }
  bool first_related = true;
  for (const VizNode& node : graph.nodes) {
    if (node.depth != 1) continue;
    out += first_related ? "\nRelated Contexts: " : ", ";
    first_related = false;
    AppendTextEscaped(node.context_id, out);
  }
  if (!graph.edges.empty()) out += "\nEdges:";
  for (const VizEdge& edge : graph.edges) {
    out += "\n  ";
    AppendTextEscaped(graph.nodes[edge.source].context_id, out);
    out += " -> ";
    AppendTextEscaped(graph.nodes[edge.target].context_id, out);
    absl::StrAppend(&out, " (", edge.type, " ", FormatVizWeight(edge.weight),
                    ")");
  }
  if (graph.truncated) {
    absl::StrAppend(&out, "\nTruncated: ", TruncatedNote(graph));
  }
  return out;
}

absl::StatusOr<std::string> RenderViz(const VizGraph& graph, VizFormat format) {
  switch (format) {
    case VizFormat::kJson: {
      JsonWriter writer;
      CTXKIT_RETURN_IF_ERROR(WriteVizJson(writer, graph));
      return std::move(writer).Finish();
    }
    case VizFormat::kMermaid:
      return RenderMermaid(graph);
    case VizFormat::kText:
      return RenderText(graph);
    case VizFormat::kDot:
      return RenderDot(graph);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("format is %d; it must be one of VizFormat's values",
                      static_cast<int>(format)));
}

}  // namespace ctxkit::internal
