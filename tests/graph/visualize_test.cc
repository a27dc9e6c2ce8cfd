// The visualize renderers: exact output of a small graph in every format,
// the checks of CheckVizGraph, and hostile context ids read back by small
// parsers written here (independent of the renderers' escaping code) that
// fail on any quote, newline, comment or entity an id could inject.

#include "lib/graph/visualize.h"

#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lib/json/json_writer.h"
#include "simdjson.h"

namespace ctxkit::internal {
namespace {

using std::string_literals::operator""s;

// Debian's Abseil has its own string_view; the tests compare std ones.
std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string_view::npos;
       nl = text.find('\n', start)) {
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  lines.push_back(text.substr(start));
  return lines;
}

VizGraph SmallGraph() {
  VizGraph graph;
  graph.nodes = {{.context_id = "auth",
                  .message_count = 3,
                  .has_summary = true,
                  .depth = 0},
                 {.context_id = "session store",
                  .message_count = 1,
                  .has_summary = false,
                  .depth = 1},
                 {.context_id = "db",
                  .message_count = 0,
                  .has_summary = true,
                  .depth = 2}};
  graph.edges = {
      {.source = 0, .target = 1, .type = "references", .weight = 0.8},
      {.source = 1, .target = 2, .type = "continues", .weight = 0.125},
      {.source = 2, .target = 0, .type = "parent", .weight = 1.0}};
  VizSummary summary;
  summary.message_count = 2;
  summary.key_insights = {"use OAuth", "drop cookies"};
  summary.code_blocks = {{.language = "ts", .importance = 0.5}};
  graph.root_summary = summary;
  return graph;
}

VizGraph RootOnly() {
  VizGraph graph;
  graph.nodes = {{.context_id = "lonely",
                  .message_count = 1,
                  .has_summary = false,
                  .depth = 0}};
  return graph;
}

std::string Json(const VizGraph& graph) {
  absl::StatusOr<std::string> json = RenderViz(graph, VizFormat::kJson);
  REQUIRE_MESSAGE(json.ok(), json.status());
  return *json;
}

template <typename Render>
std::string Ok(Render render, const VizGraph& graph) {
  absl::StatusOr<std::string> text = render(graph);
  REQUIRE_MESSAGE(text.ok(), text.status());
  return *text;
}

// ---------------------------------------------------------------------------
// Exact output of a small graph.

TEST_CASE("json of a small graph is the seed's fields plus nodes and edges") {
  CHECK(Json(SmallGraph()) ==
        R"({"success":true,"contextId":"auth","messageCount":3,)"
        R"("hasSummary":true,"summary":{"keyInsights":["use OAuth",)"
        R"("drop cookies"],"messageCount":2,"codeBlocks":[{"language":"ts",)"
        R"("importance":0.5}]},"relatedContexts":[{"contextId":)"
        R"("session store"}],"nodes":[{"id":"n0","contextId":"auth",)"
        R"("messageCount":3,"hasSummary":true,"depth":0},{"id":"n1",)"
        R"("contextId":"session store","messageCount":1,"hasSummary":false,)"
        R"("depth":1},{"id":"n2","contextId":"db","messageCount":0,)"
        R"("hasSummary":true,"depth":2}],"edges":[{"source":"n0",)"
        R"("target":"n1","type":"references","weight":0.8},{"source":"n1",)"
        R"("target":"n2","type":"continues","weight":0.125},)"
        R"({"source":"n2","target":"n0","type":"parent","weight":1.0}],)"
        R"("truncated":false})");
}

TEST_CASE("mermaid of a small graph") {
  CHECK(Ok(RenderMermaid, SmallGraph()) ==
        "graph LR\n"
        "n0([\"auth (3 messages, summarized)\"]);\n"
        "n1[\"session store (1 message)\"];\n"
        "n2[\"db (0 messages, summarized)\"];\n"
        "n0 -- \"references 0.8\" --> n1;\n"
        "n1 -- \"continues 0.125\" --> n2;\n"
        "n2 -- \"parent 1\" --> n0;\n");
}

TEST_CASE("dot of a small graph") {
  CHECK(Ok(RenderDot, SmallGraph()) ==
        "digraph context {\n"
        "  node [shape=box];\n"
        "  n0 [label=\"auth (3 messages, summarized)\", style=bold];\n"
        "  n1 [label=\"session store (1 message)\"];\n"
        "  n2 [label=\"db (0 messages, summarized)\"];\n"
        "  n0 -> n1 [label=\"references 0.8\"];\n"
        "  n1 -> n2 [label=\"continues 0.125\"];\n"
        "  n2 -> n0 [label=\"parent 1\"];\n"
        "}\n");
}

TEST_CASE("text of a small graph is the seed's lines, then the edges") {
  CHECK(Ok(RenderText, SmallGraph()) ==
        "Context ID: auth\n"
        "Messages: 3\n"
        "Has Summary: true\n"
        "Summary: 2 messages summarized\n"
        "Key Insights: use OAuth, drop cookies\n"
        "Related Contexts: session store\n"
        "Edges:\n"
        "  auth -> session store (references 0.8)\n"
        "  session store -> db (continues 0.125)\n"
        "  db -> auth (parent 1)");
}

TEST_CASE("RenderViz dispatches to each format") {
  const VizGraph graph = SmallGraph();
  CHECK(*RenderViz(graph, VizFormat::kMermaid) == *RenderMermaid(graph));
  CHECK(*RenderViz(graph, VizFormat::kDot) == *RenderDot(graph));
  CHECK(*RenderViz(graph, VizFormat::kText) == *RenderText(graph));
  JsonWriter writer;
  REQUIRE(WriteVizJson(writer, graph).ok());
  CHECK(*RenderViz(graph, VizFormat::kJson) == *std::move(writer).Finish());
}

// ---------------------------------------------------------------------------
// Root only, no summary, truncated.

TEST_CASE("a root without summary or neighbours") {
  const VizGraph graph = RootOnly();
  CHECK(Json(graph) ==
        R"({"success":true,"contextId":"lonely","messageCount":1,)"
        R"("hasSummary":false,"summary":null,"relatedContexts":[],)"
        R"("nodes":[{"id":"n0","contextId":"lonely","messageCount":1,)"
        R"("hasSummary":false,"depth":0}],"edges":[],"truncated":false})");
  CHECK(Ok(RenderMermaid, graph) ==
        "graph LR\nn0([\"lonely (1 message)\"]);\n");
  CHECK(Ok(RenderDot, graph) ==
        "digraph context {\n  node [shape=box];\n"
        "  n0 [label=\"lonely (1 message)\", style=bold];\n}\n");
  // The seed writes no Summary, Key Insights or Related Contexts line then.
  CHECK(Ok(RenderText, graph) ==
        "Context ID: lonely\nMessages: 1\nHas Summary: false");
}

TEST_CASE("a summary without insights has no Key Insights line") {
  VizGraph graph = RootOnly();
  graph.nodes[0].has_summary = true;
  graph.root_summary = VizSummary{.message_count = 1};
  CHECK(Ok(RenderText, graph) ==
        "Context ID: lonely\nMessages: 1\nHas Summary: true\n"
        "Summary: 1 messages summarized");
  CHECK(
      Json(graph).find(
          R"("summary":{"keyInsights":[],"messageCount":1,"codeBlocks":[]})") !=
      std::string::npos);
}

TEST_CASE("a truncated graph says so in every format") {
  VizGraph graph = SmallGraph();
  graph.truncated = true;
  CHECK(Json(graph).ends_with(R"(,"truncated":true})"));
  CHECK(Ok(RenderMermaid, graph)
            .ends_with("n2 -- \"parent 1\" --> n0;\n"
                       "%% truncated: showing the nearest 3 contexts\n"));
  CHECK(Ok(RenderDot, graph)
            .ends_with("  n2 -> n0 [label=\"parent 1\"];\n"
                       "  // truncated: showing the nearest 3 contexts\n}\n"));
  CHECK(Ok(RenderText, graph)
            .ends_with("  db -> auth (parent 1)\n"
                       "Truncated: showing the nearest 3 contexts"));
}

TEST_CASE("related contexts are the depth-1 nodes in order") {
  VizGraph graph = RootOnly();
  graph.nodes.push_back({.context_id = "b", .depth = 1});
  graph.nodes.push_back({.context_id = "c", .depth = 1});
  graph.nodes.push_back({.context_id = "far", .depth = 3});
  CHECK(Json(graph).find(
            R"("relatedContexts":[{"contextId":"b"},{"contextId":"c"}],)") !=
        std::string::npos);
  CHECK(Ok(RenderText, graph).ends_with("\nRelated Contexts: b, c"));
}

TEST_CASE("weights print rounded to 3 decimals without trailing zeros") {
  CHECK(FormatVizWeight(0.8) == "0.8");
  CHECK(FormatVizWeight(1) == "1");
  CHECK(FormatVizWeight(0) == "0");
  CHECK(FormatVizWeight(-0.0) == "0");
  CHECK(FormatVizWeight(0.125) == "0.125");
  CHECK(FormatVizWeight(0.1234) == "0.123");
  CHECK(FormatVizWeight(0.9996) == "1");
  CHECK(FormatVizWeight(0.0004) == "0");
  CHECK(FormatVizWeight(0.30000000000000004) == "0.3");
  CHECK(FormatVizWeight(0.05) == "0.05");
  CHECK(FormatVizWeight(0.001) == "0.001");
  CHECK(FormatVizWeight(0.0625) == "0.063");  // a half rounds up
  CHECK(FormatVizWeight(0.0005) == "0.001");
  CHECK(FormatVizWeight(0.999) == "0.999");
  // Outside [0, 1] (never a stored weight) the same trimming applies.
  CHECK(FormatVizWeight(2.5) == "2.5");
  CHECK(FormatVizWeight(-0.0001) == "0");
  CHECK(FormatVizWeight(10) == "10");
}

// ---------------------------------------------------------------------------
// Bad input.

TEST_CASE("ParseVizFormat accepts the four names and names the field") {
  CHECK(*ParseVizFormat("format", "json") == VizFormat::kJson);
  CHECK(*ParseVizFormat("format", "mermaid") == VizFormat::kMermaid);
  CHECK(*ParseVizFormat("format", "text") == VizFormat::kText);
  CHECK(*ParseVizFormat("format", "dot") == VizFormat::kDot);
  for (std::string_view bad : {"svg", "JSON", "", " json", "json\n"}) {
    CAPTURE(bad);
    absl::StatusOr<VizFormat> parsed = ParseVizFormat("args.format", bad);
    REQUIRE(!parsed.ok());
    CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Message(parsed.status()).starts_with("args.format is '"));
    CHECK(Message(parsed.status())
              .ends_with("it must be json, mermaid, text or dot"));
  }
  absl::StatusOr<VizFormat> invalid = ParseVizFormat("format", "\xFF");
  REQUIRE(!invalid.ok());
  CHECK(Message(invalid.status()).starts_with("format is not valid UTF-8"));
}

void CheckRejected(const VizGraph& graph, std::string_view message) {
  CAPTURE(message);
  const absl::Status check = CheckVizGraph(graph);
  CHECK(check.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(check) == message);
  for (VizFormat format : {VizFormat::kJson, VizFormat::kMermaid,
                           VizFormat::kText, VizFormat::kDot}) {
    CAPTURE(static_cast<int>(format));
    absl::StatusOr<std::string> out = RenderViz(graph, format);
    REQUIRE(!out.ok());
    CHECK(out.status() == check);
  }
  // A failed WriteVizJson leaves the writer as it was: the array around it
  // still closes into valid JSON.
  JsonWriter writer;
  writer.BeginArray();
  CHECK(WriteVizJson(writer, graph) == check);
  writer.Int(1).EndArray();
  CHECK(*std::move(writer).Finish() == "[1]");
}

TEST_CASE("CheckVizGraph names the bad field, and every renderer fails") {
  CheckRejected(VizGraph{},
                "nodes is empty; it must hold at least the root context");
  {
    VizGraph g = RootOnly();
    g.nodes[0].depth = 1;
    CheckRejected(g, "nodes[0].depth is 1; the root's depth must be 0");
  }
  {
    VizGraph g = SmallGraph();
    g.nodes[2].depth = 0;
    CheckRejected(g,
                  "nodes[2].depth is 0; only the root (nodes[0]) has depth 0");
  }
  {
    VizGraph g = SmallGraph();
    g.nodes[2].context_id = "auth";
    CheckRejected(g, "nodes[2].context_id repeats nodes[0].context_id");
  }
  {
    VizGraph g = SmallGraph();
    g.nodes[1].context_id = "ok\xC3";
    CheckRejected(g,
                  "nodes[1].context_id is not valid UTF-8: invalid byte 0xC3 "
                  "at offset 2 (truncated sequence)");
  }
  {
    VizGraph g = SmallGraph();
    g.edges[1].target = 3;
    CheckRejected(g, "edges[1].target is 3; the graph has 3 nodes");
  }
  {
    VizGraph g = SmallGraph();
    g.edges[2].source = std::numeric_limits<size_t>::max();
    CheckRejected(g, absl::StrCat("edges[2].source is ",
                                  std::numeric_limits<size_t>::max(),
                                  "; the graph has 3 nodes"));
  }
  {
    VizGraph g = SmallGraph();
    g.edges[0].type = "Similar";
    CheckRejected(g,
                  "edges[0].type is 'Similar'; it must be similar, continues, "
                  "references, parent or child");
  }
  {
    VizGraph g = SmallGraph();
    g.edges[0].type = "\xFF";
    CheckRejected(g,
                  "edges[0].type is not valid UTF-8: invalid byte 0xFF at "
                  "offset 0 (byte never appears in UTF-8)");
  }
  for (double weight :
       {1.5, -0.1, std::nan(""), std::numeric_limits<double>::infinity()}) {
    CAPTURE(weight);
    VizGraph g = SmallGraph();
    g.edges[1].weight = weight;
    const absl::Status status = CheckVizGraph(g);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Message(status).starts_with("edges[1].weight is "));
    CHECK(Message(status).ends_with("; it must be between 0 and 1"));
  }
  {
    VizGraph g = SmallGraph();
    g.root_summary.reset();
    CheckRejected(g,
                  "root_summary is missing while nodes[0].has_summary is true");
  }
  {
    VizGraph g = RootOnly();
    g.root_summary = VizSummary{};
    CheckRejected(
        g, "root_summary is present while nodes[0].has_summary is false");
  }
  {
    VizGraph g = SmallGraph();
    g.root_summary->key_insights.push_back("\xC0\x80");
    CheckRejected(g,
                  "root_summary.key_insights[2] is not valid UTF-8: invalid "
                  "byte 0xC0 at offset 0 (overlong encoding)");
  }
  {
    VizGraph g = SmallGraph();
    g.root_summary->code_blocks.push_back(
        {.language = "py", .importance = std::nan("")});
    const absl::Status status = CheckVizGraph(g);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Message(status).starts_with(
        "root_summary.code_blocks[1].importance is "));
  }
}

// ---------------------------------------------------------------------------
// Independent readers of the diagrams. They accept only the shapes the
// header documents and report the first line that deviates.

struct ParsedDiagram {
  std::string error;                // empty when the text parsed
  std::vector<std::string> labels;  // node labels as written (escaped)
  std::vector<std::string> edge_labels;
  std::vector<std::pair<std::string, std::string>> edges;  // node names
  size_t comments = 0;
};

bool IsNodeName(std::string_view s) {
  if (s.size() < 2 || s[0] != 'n') return false;
  for (char c : s.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A rendered label may hold no byte that starts a new line or a control, nor
// U+0085, U+2028, U+2029 or a bidirectional control, raw.
std::string RawControlIn(std::string_view label) {
  static const std::string_view kForbidden[] = {"\xC2\x85",     "\xE2\x80\xA8",
                                                "\xE2\x80\xA9", "\xE2\x80\xAE",
                                                "\xE2\x80\x8F", "\xE2\x81\xA6"};
  for (unsigned char c : label) {
    if (c < 0x20 || c == 0x7F) return absl::StrCat("control byte ", int{c});
  }
  for (std::string_view f : kForbidden) {
    if (label.find(f) != std::string_view::npos) return "invisible control";
  }
  return "";
}

// Mermaid: `graph LR`, then `nK(["..."]);` (root) or `nK["..."];`, edges
// `nA -- "..." --> nB;`, and `%% ` comments. In a label every '#' must open
// an entity code and none of " % < > & ` may appear raw.
std::string MermaidLabelProblem(std::string_view label) {
  for (size_t i = 0; i < label.size(); ++i) {
    const char c = label[i];
    if (c == '%' || c == '<' || c == '>' || c == '&' || c == '`') {
      return absl::StrCat("raw '", std::string(1, c), "' at ", i);
    }
    if (c == '#') {
      size_t j = i + 1;
      while (j < label.size() &&
             (std::isalnum(static_cast<unsigned char>(label[j])) != 0)) {
        ++j;
      }
      if (j == i + 1 || j >= label.size() || label[j] != ';') {
        return absl::StrCat("'#' not opening an entity at ", i);
      }
    }
  }
  return RawControlIn(label);
}

ParsedDiagram ParseMermaid(std::string_view text) {
  ParsedDiagram out;
  if (!text.ends_with('\n')) {
    out.error = "no final newline";
    return out;
  }
  std::vector<std::string_view> lines =
      SplitLines(text.substr(0, text.size() - 1));
  if (lines.empty() || lines[0] != "graph LR") {
    out.error = "first line is not 'graph LR'";
    return out;
  }
  for (size_t k = 1; k < lines.size(); ++k) {
    std::string_view line = lines[k];
    auto fail = [&](std::string_view why) {
      out.error = absl::StrCat("line ", k, " (", std::string(why),
                               "): ", std::string(line));
      return out;
    };
    if (line.starts_with("%% ")) {
      if (line.starts_with("%%{")) return fail("directive");
      ++out.comments;
      continue;
    }
    const size_t name_end = line.find_first_of("([ ");
    if (name_end == std::string_view::npos ||
        !IsNodeName(line.substr(0, name_end))) {
      return fail("no node name");
    }
    std::string_view rest = line.substr(name_end);
    if (rest.starts_with("([\"") || rest.starts_with("[\"")) {
      const bool root = rest[0] == '(';
      rest.remove_prefix(root ? 3 : 2);
      const size_t close = rest.find('"');
      if (close == std::string_view::npos) return fail("unclosed label");
      if (rest.substr(close) != (root ? "\"]);" : "\"];")) {
        return fail("text after the label");
      }
      const std::string label(rest.substr(0, close));
      if (std::string why = MermaidLabelProblem(label); !why.empty()) {
        return fail(why);
      }
      out.labels.push_back(label);
      continue;
    }
    if (!rest.starts_with(" -- \"")) return fail("neither node nor edge");
    rest.remove_prefix(5);
    const size_t close = rest.find('"');
    if (close == std::string_view::npos) return fail("unclosed edge label");
    const std::string label(rest.substr(0, close));
    rest.remove_prefix(close + 1);
    if (!rest.starts_with(" --> ") || !rest.ends_with(';')) {
      return fail("bad arrow");
    }
    const std::string_view target = rest.substr(5, rest.size() - 6);
    if (!IsNodeName(target)) return fail("bad target");
    if (std::string why = MermaidLabelProblem(label); !why.empty()) {
      return fail(why);
    }
    out.edge_labels.push_back(label);
    out.edges.emplace_back(std::string(line.substr(0, name_end)),
                           std::string(target));
  }
  return out;
}

// Mermaid's entity codes back to characters (the few named ones and
// decimal numbers), as Mermaid shows them.
std::string DecodeMermaid(std::string_view label) {
  std::string out;
  for (size_t i = 0; i < label.size(); ++i) {
    if (label[i] != '#') {
      out += label[i];
      continue;
    }
    const size_t end = label.find(';', i);
    const std::string_view name = label.substr(i + 1, end - i - 1);
    if (name == "quot") {
      out += '"';
    } else if (name == "amp") {
      out += '&';
    } else if (name == "lt") {
      out += '<';
    } else if (name == "gt") {
      out += '>';
    } else {
      out += static_cast<char>(std::stoi(std::string(name)));
    }
    i = end;
  }
  return out;
}

// A DOT double-quoted string starting at `s[0] == '"'`: its content up to
// the closing unescaped quote, with \" and \\ decoded, \n as a newline and
// any other backslash pair kept as written; `*end` is the index after the
// closing quote. False when the string does not close.
bool ReadDotString(std::string_view s, std::string* decoded, size_t* end) {
  decoded->clear();
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '"') {
      *end = i + 1;
      return true;
    }
    if (s[i] == '\\') {
      if (i + 1 >= s.size()) return false;
      const char next = s[++i];
      if (next == '"' || next == '\\') {
        *decoded += next;
      } else if (next == 'n') {
        *decoded += '\n';
      } else {
        *decoded += '\\';
        *decoded += next;
      }
      continue;
    }
    *decoded += s[i];
  }
  return false;
}

// DOT: the header lines, `  nK [label="..."];` (the root with
// `, style=bold`), `  nA -> nB [label="..."];`, `  // ` comments and `}`.
// Labels are returned decoded; a raw '&' must be "&amp;", and no raw
// control character may appear.
ParsedDiagram ParseDot(std::string_view text) {
  ParsedDiagram out;
  if (!text.ends_with("}\n")) {
    out.error = "does not end with '}'";
    return out;
  }
  std::vector<std::string_view> lines =
      SplitLines(text.substr(0, text.size() - 1));
  if (lines.size() < 3 || lines[0] != "digraph context {" ||
      lines[1] != "  node [shape=box];" || lines.back() != "}") {
    out.error = "bad header or footer";
    return out;
  }
  for (size_t k = 2; k + 1 < lines.size(); ++k) {
    std::string_view line = lines[k];
    auto fail = [&](std::string_view why) {
      out.error = absl::StrCat("line ", k, " (", std::string(why),
                               "): ", std::string(line));
      return out;
    };
    if (line.starts_with("  // ")) {
      ++out.comments;
      continue;
    }
    if (!line.starts_with("  ")) return fail("not indented");
    line.remove_prefix(2);
    const size_t name_end = line.find(' ');
    if (name_end == std::string_view::npos ||
        !IsNodeName(line.substr(0, name_end))) {
      return fail("no node name");
    }
    std::string_view rest = line.substr(name_end);
    std::string target;
    if (rest.starts_with(" -> ")) {
      rest.remove_prefix(4);
      const size_t target_end = rest.find(' ');
      if (target_end == std::string_view::npos ||
          !IsNodeName(rest.substr(0, target_end))) {
        return fail("bad target");
      }
      target = std::string(rest.substr(0, target_end));
      rest.remove_prefix(target_end);
    }
    if (!rest.starts_with(" [label=\"")) return fail("no label");
    rest.remove_prefix(8);
    std::string decoded;
    size_t end = 0;
    if (!ReadDotString(rest, &decoded, &end)) return fail("unclosed label");
    const std::string_view raw = rest.substr(1, end - 2);
    const std::string_view after = rest.substr(end);
    if (after != "];" && !(target.empty() && after == ", style=bold];")) {
      return fail("text after the label");
    }
    if (std::string why = RawControlIn(raw); !why.empty()) return fail(why);
    for (size_t amp = raw.find('&'); amp != std::string_view::npos;
         amp = raw.find('&', amp + 1)) {
      if (raw.substr(amp, 5) != "&amp;") return fail("raw '&'");
    }
    // Undo the &amp; entity as Graphviz would.
    std::string shown;
    for (size_t i = 0; i < decoded.size(); ++i) {
      shown += decoded[i];
      if (decoded.compare(i, 5, "&amp;") == 0) i += 4;
    }
    if (target.empty()) {
      out.labels.push_back(shown);
    } else {
      out.edge_labels.push_back(shown);
      out.edges.emplace_back(std::string(line.substr(0, name_end)), target);
    }
  }
  return out;
}

// Ids no renderer may be broken by. All are distinct and valid UTF-8.
std::vector<std::string> HostileIds() {
  return {
      "root \"quoted\"",
      "\"",
      "a\\\"b",
      "back\\slash\\",
      "C:\\Users\\me\\proj",
      "line1\nline2",
      "cr\rlf\r\n",
      "x --> y",
      "a]b[c",
      "[(\"x\")]",
      "n0[\"fake\"];",
      "%%{init: {'theme':'dark'}}%%",
      "%% comment",
      "<script>alert(1)</script>",
      "<b>bold</b>&nbsp;",
      "#quot;",
      "#35;",
      "a;b;",
      "&lt;&amp;&#34;",
      "\x01\x02\x1b[31mred\x7f",
      "\t",
      "nul\0byte"s,
      "\xC2\x85next-line",
      "\xE2\x80\xA8sep\xE2\x80\xA9",
      "\xE2\x80\xAE"
      "evil\xE2\x81\xA6",
      "`md`",
      "\\N \\G \\l \\E",
      "end",
      "style:#x;",
      "graph TD",
      "}",
      "subgraph x",
      "click n1 call alert()",
      "n1",
      " ",
      "",
      "x\\",
      "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x99\x82",
      "-- \"similar 1\" -->",
      "// comment",
  };
}

// Root = the first id; every other node is at depth 1 or 2, joined to the
// root and to the next node, with one self-loop.
VizGraph HostileGraph() {
  const std::vector<std::string> ids = HostileIds();
  VizGraph graph;
  for (size_t i = 0; i < ids.size(); ++i) {
    graph.nodes.push_back({.context_id = ids[i],
                           .message_count = i,
                           .has_summary = i % 3 == 0,
                           .depth = i == 0 ? 0 : 1 + static_cast<int>(i % 2)});
  }
  constexpr std::string_view kTypes[] = {"similar", "continues", "references",
                                         "parent", "child"};
  for (size_t i = 1; i < ids.size(); ++i) {
    graph.edges.push_back({.source = 0,
                           .target = i,
                           .type = std::string(kTypes[i % 5]),
                           .weight = static_cast<double>(i) / ids.size()});
    if (i + 1 < ids.size()) {
      graph.edges.push_back({.source = i + 1,
                             .target = i,
                             .type = std::string(kTypes[(i + 2) % 5]),
                             .weight = 0.5});
    }
  }
  graph.edges.push_back(
      {.source = 3, .target = 3, .type = "similar", .weight = 1});
  VizSummary summary;
  summary.message_count = 7;
  summary.key_insights = {"insight\nwith newline", "\"quoted\" #35;",
                          "\xE2\x80\xAE"};
  summary.code_blocks = {{.language = "c\"\n", .importance = 0.25}};
  graph.root_summary = summary;
  graph.truncated = true;
  return graph;
}

std::string Tail(const VizNode& node) {
  return absl::StrCat(" (", node.message_count,
                      node.message_count == 1 ? " message" : " messages",
                      node.has_summary ? ", summarized)" : ")");
}

bool HasControl(std::string_view id) { return !RawControlIn(id).empty(); }

TEST_CASE("hostile ids: mermaid keeps every node and edge, labels intact") {
  const VizGraph graph = HostileGraph();
  const std::string text = Ok(RenderMermaid, graph);
  const ParsedDiagram parsed = ParseMermaid(text);
  REQUIRE_MESSAGE(parsed.error.empty(), parsed.error);
  REQUIRE(parsed.labels.size() == graph.nodes.size());
  REQUIRE(parsed.edges.size() == graph.edges.size());
  CHECK(parsed.comments == 1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const VizNode& node = graph.nodes[i];
    CAPTURE(node.context_id);
    if (!HasControl(node.context_id)) {
      CHECK(DecodeMermaid(parsed.labels[i]) == node.context_id + Tail(node));
    }
  }
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    CHECK(parsed.edges[i].first == absl::StrCat("n", graph.edges[i].source));
    CHECK(parsed.edges[i].second == absl::StrCat("n", graph.edges[i].target));
  }
  // Controls show as visible escapes, not as raw bytes or nothing.
  CHECK(text.find("n5[\"line1\\nline2 (5 messages)\"];") != std::string::npos);
  CHECK(text.find("\"\\x01\\x02\\x1B[31mred\\x7F (19 messages)\"") !=
        std::string::npos);
  CHECK(text.find("\"nul\\x00byte ") != std::string::npos);
  CHECK(text.find("\"\\u{202E}evil\\u{2066} ") != std::string::npos);
  CHECK(text.find("#37;#37;{init: {'theme':'dark'}}#37;#37;") !=
        std::string::npos);
  CHECK(text.find("#60;script#62;alert(1)#60;/script#62;") !=
        std::string::npos);
  // Non-ASCII text stays readable.
  CHECK(text.find("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x99\x82 (") !=
        std::string::npos);
}

TEST_CASE("hostile ids: dot keeps every node and edge, labels intact") {
  const VizGraph graph = HostileGraph();
  const std::string text = Ok(RenderDot, graph);
  const ParsedDiagram parsed = ParseDot(text);
  REQUIRE_MESSAGE(parsed.error.empty(), parsed.error);
  REQUIRE(parsed.labels.size() == graph.nodes.size());
  REQUIRE(parsed.edges.size() == graph.edges.size());
  CHECK(parsed.comments == 1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const VizNode& node = graph.nodes[i];
    CAPTURE(node.context_id);
    // A newline is DOT's own \n; the other controls are shown escaped.
    std::string id_without_newlines = node.context_id;
    std::erase(id_without_newlines, '\n');
    if (!HasControl(id_without_newlines)) {
      CHECK(parsed.labels[i] == node.context_id + Tail(node));
    }
  }
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    CHECK(parsed.edges[i].first == absl::StrCat("n", graph.edges[i].source));
    CHECK(parsed.edges[i].second == absl::StrCat("n", graph.edges[i].target));
  }
  CHECK(text.find("[label=\"cr\\\\rlf\\\\r\\n (6 messages, summarized)\"]") !=
        std::string::npos);
  CHECK(text.find("[label=\"\\\\N \\\\G \\\\l \\\\E (26 messages)\"]") !=
        std::string::npos);
  CHECK(text.find("[label=\"&amp;lt;&amp;amp;&amp;#34; (18 messages,") !=
        std::string::npos);
}

TEST_CASE("hostile ids: text has exactly the lines it should") {
  const VizGraph graph = HostileGraph();
  const std::string text = Ok(RenderText, graph);
  const std::vector<std::string_view> lines = SplitLines(text);
  // 3 seed lines, Summary, Key Insights, Related Contexts, Edges:, one per
  // edge, Truncated.
  REQUIRE(lines.size() == 3 + 3 + 1 + graph.edges.size() + 1);
  CHECK(lines[0] == "Context ID: root \"quoted\"");
  CHECK(lines[1] == "Messages: 0");
  CHECK(lines[2] == "Has Summary: true");
  CHECK(lines[3] == "Summary: 7 messages summarized");
  CHECK(lines[4] ==
        "Key Insights: insight\\nwith newline, \"quoted\" #35;, \\u{202E}");
  CHECK(
      lines[5].starts_with("Related Contexts: a\\\"b, C:\\Users\\me\\proj, "
                           "cr\\rlf\\r\\n, "));
  CHECK(lines[6] == "Edges:");
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    CAPTURE(i);
    CHECK(lines[7 + i].starts_with("  "));
    CHECK(lines[7 + i].ends_with(")"));
  }
  CHECK(lines.back() == "Truncated: showing the nearest 40 contexts");
  for (std::string_view line : lines) {
    CHECK(RawControlIn(line).empty());
  }
}

TEST_CASE("hostile ids: json parses and gives every id back exactly") {
  const VizGraph graph = HostileGraph();
  const std::string json = Json(graph);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(json).get(doc) == simdjson::SUCCESS);
  CHECK(doc["success"].get_bool().value() == true);
  CHECK(doc["contextId"].get_string().value() == graph.nodes[0].context_id);
  CHECK(doc["messageCount"].get_uint64().value() == 0);
  CHECK(doc["hasSummary"].get_bool().value() == true);
  CHECK(doc["truncated"].get_bool().value() == true);
  simdjson::dom::element summary = doc["summary"];
  CHECK(summary["messageCount"].get_uint64().value() == 7);
  CHECK(summary["keyInsights"].get_array().size() == 3);
  CHECK(summary["keyInsights"].at(0).get_string().value() ==
        "insight\nwith newline");
  CHECK(summary["codeBlocks"].at(0)["language"].get_string().value() ==
        "c\"\n");
  CHECK(summary["codeBlocks"].at(0)["importance"].get_double().value() == 0.25);
  simdjson::dom::array nodes = doc["nodes"].get_array();
  REQUIRE(nodes.size() == graph.nodes.size());
  size_t depth_one = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    simdjson::dom::element node = nodes.at(i);
    CHECK(node["id"].get_string().value() == absl::StrCat("n", i));
    CHECK(node["contextId"].get_string().value() == graph.nodes[i].context_id);
    CHECK(node["depth"].get_int64().value() == graph.nodes[i].depth);
    depth_one += graph.nodes[i].depth == 1 ? 1 : 0;
  }
  CHECK(doc["relatedContexts"].get_array().size() == depth_one);
  simdjson::dom::array edges = doc["edges"].get_array();
  REQUIRE(edges.size() == graph.edges.size());
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    simdjson::dom::element edge = edges.at(i);
    CHECK(edge["source"].get_string().value() ==
          absl::StrCat("n", graph.edges[i].source));
    CHECK(edge["target"].get_string().value() ==
          absl::StrCat("n", graph.edges[i].target));
    CHECK(edge["type"].get_string().value() == graph.edges[i].type);
    CHECK(edge["weight"].get_double().value() == graph.edges[i].weight);
  }
}

TEST_CASE("500 nodes render in every format") {
  VizGraph graph;
  graph.nodes.push_back({.context_id = "root", .depth = 0});
  for (size_t i = 1; i < 500; ++i) {
    graph.nodes.push_back({.context_id = absl::StrCat("ctx-", i),
                           .message_count = i,
                           .depth = i < 20 ? 1 : (i < 200 ? 2 : 3)});
    graph.edges.push_back({.source = i < 20 ? 0 : i % 20,
                           .target = i,
                           .type = "references",
                           .weight = 0.001 * static_cast<double>(i)});
  }
  graph.truncated = true;
  const ParsedDiagram mermaid = ParseMermaid(Ok(RenderMermaid, graph));
  REQUIRE_MESSAGE(mermaid.error.empty(), mermaid.error);
  CHECK(mermaid.labels.size() == 500);
  CHECK(mermaid.edges.size() == 499);
  CHECK(mermaid.edge_labels.back() == "references 0.499");
  const ParsedDiagram dot = ParseDot(Ok(RenderDot, graph));
  REQUIRE_MESSAGE(dot.error.empty(), dot.error);
  CHECK(dot.labels.size() == 500);
  CHECK(dot.edges.size() == 499);
  const std::string text = Ok(RenderText, graph);
  const std::vector<std::string_view> lines = SplitLines(text);
  CHECK(lines.size() == 3 + 1 + 1 + 499 + 1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const std::string json = Json(graph);
  REQUIRE(parser.parse(json).get(doc) == simdjson::SUCCESS);
  CHECK(doc["nodes"].get_array().size() == 500);
  CHECK(doc["edges"].get_array().size() == 499);
  CHECK(doc["relatedContexts"].get_array().size() == 19);
}

TEST_CASE("the same graph always renders the same bytes") {
  const VizGraph graph = HostileGraph();
  for (VizFormat format : {VizFormat::kJson, VizFormat::kMermaid,
                           VizFormat::kText, VizFormat::kDot}) {
    CHECK(*RenderViz(graph, format) == *RenderViz(HostileGraph(), format));
  }
}

}  // namespace
}  // namespace ctxkit::internal
