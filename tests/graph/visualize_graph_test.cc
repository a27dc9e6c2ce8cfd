// ContextGraph::Visualize: the neighbourhood it gathers (depth, both
// directions, current edges only, archived contexts left out, the node
// limit) in each format, and bad input. The renderers' own output rules
// are visualize_test.cc's.

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "ctxkit/context_graph.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::Contains;
using testing::Must;

struct Graph : testing::GraphFixture {
  Graph() : GraphFixture(testing::ManualGraphOptions()) {
    // a -> b -> c -> d, and e -> a; a -> x invalidated.
    for (const char* id : {"a", "b", "c", "d", "e", "x"}) {
      Must(graph->AddMessage(id, {.content = std::string("about ") + id}));
    }
    Relate("a", "b", 0.5);
    Relate("b", "c", 0.25);
    Relate("c", "d", 1);
    Relate("e", "a", 0.8);
    Relate("a", "x", 0.9);
    Must(graph->InvalidateRelationship("a", "x", "references"));
  }

  void Relate(const std::string& s, const std::string& t, double w) {
    Must(graph->AddRelationship(
        {.source = s, .target = t, .type = "references", .weight = w}));
  }

  std::string Viz(const VisualizeOptions& o) {
    return Must(graph->Visualize("a", o));
  }
};

TEST_CASE("the neighbourhood grows with depth, both ways, current edges only") {
  Graph g;
  std::string text = g.Viz({.depth = 1, .format = "text"});
  CHECK(Contains(text, "Context ID: a"));
  CHECK(Contains(text, "Related Contexts: b, e"));
  CHECK(!Contains(text, "a -> x"));  // its edge was invalidated
  CHECK(Contains(text, "  a -> b (references 0.5)"));
  CHECK(Contains(text, "  e -> a (references 0.8)"));
  text = g.Viz({.depth = 3, .format = "text"});
  CHECK(Contains(text, "  c -> d (references 1)"));
  text = g.Viz({.depth = 2, .format = "text"});
  CHECK(Contains(text, "  b -> c (references 0.25)"));
  CHECK(!Contains(text, "c -> d"));
  const std::string alone = g.Viz({.include_related = false, .format = "text"});
  CHECK(!Contains(alone, "Related Contexts"));
}

TEST_CASE("every format renders, and the node limit says it cut") {
  Graph g;
  const std::string json = g.Viz({.depth = 3});
  CHECK(Contains(json, R"("contextId":"a")"));
  CHECK(Contains(json, R"("truncated":false)"));
  CHECK(Contains(g.Viz({.format = "mermaid"}), "graph LR"));
  CHECK(Contains(g.Viz({.format = "dot"}), "digraph"));
  const std::string cut = g.Viz({.depth = 3, .max_nodes = 2});
  CHECK(Contains(cut, R"("truncated":true)"));
}

TEST_CASE("archived contexts are left out of the picture") {
  Graph g;
  for (int i = 0; i < 12; ++i) {
    Must(g.graph->AddMessage("filler-" + std::to_string(i), {.content = "f"}));
  }
  g.clock.Advance(30LL * 86400000);
  Must(g.graph->AddMessage("a", {.content = "again"}));
  Must(g.graph->Cleanup("a"));  // b and e are related: kept; c, d go
  const std::string text = g.Viz({.depth = 3, .format = "text"});
  CHECK(Contains(text, "a -> b"));
  CHECK(!Contains(text, "b -> c"));
}

TEST_CASE("Visualize names the bad field") {
  Graph g;
  auto check = [&](const std::string& id, const VisualizeOptions& o,
                   StatusCode code, const std::string& needle) {
    Status s = g.graph->Visualize(id, o).status();
    INFO(s.ToString());
    CHECK(s.code() == code);
    CHECK(Contains(s.message(), needle));
  };
  check("a", {.format = "svg"}, StatusCode::kInvalidArgument, "format");
  check("a", {.depth = 4}, StatusCode::kInvalidArgument, "depth");
  check("a", {.max_nodes = 0}, StatusCode::kInvalidArgument, "maxNodes");
  check("nope", {}, StatusCode::kNotFound, "contextId 'nope'");
}

}  // namespace
}  // namespace ctxkit
