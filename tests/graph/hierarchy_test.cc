// The context hierarchy: links from parent and child relationships, one
// parent, no cycles, the depth limit, links that follow their edges'
// removal and invalidation, deletion, hierarchical and meta summaries, and
// Verify against damage done behind the graph's back.

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::Contains;
using testing::Must;

struct Graph : testing::GraphFixture {
  explicit Graph(ContextGraphOptions options = testing::ManualGraphOptions())
      : GraphFixture(std::move(options)) {}

  void Add(const std::string& id, const std::string& content = "hello",
           const std::string& importance = "") {
    Must(graph->AddMessage(id, {.role = MessageRole::kUser,
                                .content = content,
                                .importance = importance}));
  }

  Status Relate(const std::string& source, const std::string& target,
                const std::string& type, bool replace = false) {
    return graph
        ->AddRelationship({.source = source,
                           .target = target,
                           .type = type,
                           .replace_parent = replace})
        .status();
  }

  ContextHierarchy H(const std::string& id) {
    return Must(graph->Hierarchy(id));
  }
};

using testing::CheckError;

TEST_CASE("parent and child edges state the same link, either way round") {
  Graph g;
  for (const char* id : {"root", "a", "b"}) g.Add(id);
  // "root parent a": root is a's parent. "b child root": b is root's child.
  REQUIRE(g.Relate("root", "a", "parent").ok());
  REQUIRE(g.Relate("b", "root", "child").ok());
  ContextHierarchy root = g.H("root");
  CHECK(!root.parent.has_value());
  CHECK(root.depth == 0);
  CHECK(root.children == std::vector<std::string>{"a", "b"});
  ContextHierarchy a = g.H("a");
  CHECK(a.parent == "root");
  CHECK(a.ancestors == std::vector<std::string>{"root"});
  CHECK(a.depth == 1);
  CHECK(g.H("b").parent == "root");
  // Stating a link again, by the other edge type, changes nothing.
  REQUIRE(g.Relate("a", "root", "child").ok());
  CHECK(g.H("a").parent == "root");
  IdPage page = Must(g.graph->ListHierarchies());
  CHECK(page.ids == std::vector<std::string>{"root"});
  g.CheckVerified();
}

TEST_CASE(
    "one parent: a second is refused unless replaced, and the old "
    "link's edges are invalidated, not deleted") {
  Graph g;
  for (const char* id : {"p1", "p2", "c"}) g.Add(id);
  REQUIRE(g.Relate("p1", "c", "parent").ok());
  CheckError(g.Relate("p2", "c", "parent"), StatusCode::kAlreadyExists,
             "'c' already has a parent");
  CHECK(g.H("c").parent == "p1");
  g.clock.Advance(5);
  REQUIRE(g.Relate("p2", "c", "parent", /*replace=*/true).ok());
  CHECK(g.H("c").parent == "p2");
  CHECK(g.H("p1").children.empty());
  // The old edge is expired: gone from the current view, kept in history.
  CHECK(Must(g.graph->Related("p1")).context_ids.empty());
  RelatedResult all = Must(g.graph->Related("p1", {.include_expired = true}));
  REQUIRE(all.edges.size() == 1);
  CHECK(all.edges[0].relationship.expired_at != 0);
  g.CheckVerified();
}

TEST_CASE("cycles and depth beyond maxHierarchyDepth are refused") {
  ContextGraphOptions o = testing::ManualGraphOptions();
  o.max_hierarchy_depth = 3;
  Graph g(o);
  for (const char* id : {"r", "a", "b", "c", "d", "x", "y"}) g.Add(id);
  REQUIRE(g.Relate("r", "a", "parent").ok());
  REQUIRE(g.Relate("a", "b", "parent").ok());
  REQUIRE(g.Relate("b", "c", "parent").ok());  // c is 3 levels below r
  CheckError(g.Relate("c", "r", "parent"), StatusCode::kFailedPrecondition,
             "would create a cycle");
  CheckError(g.Relate("r", "a", "child"), StatusCode::kFailedPrecondition,
             "would create a cycle");
  CheckError(g.Relate("c", "d", "parent"), StatusCode::kFailedPrecondition,
             "maxHierarchyDepth (3)");
  // A subtree counts with its height: x -> y hung under b puts y at 4.
  REQUIRE(g.Relate("x", "y", "parent").ok());
  CheckError(g.Relate("b", "x", "parent"), StatusCode::kFailedPrecondition,
             "4 levels below its root");
  REQUIRE(g.Relate("a", "x", "parent").ok());
  CHECK(g.H("y").ancestors == std::vector<std::string>{"x", "a", "r"});
  CHECK(g.H("y").depth == 3);
  // A failed call changed nothing.
  CHECK(!g.H("d").parent.has_value());
  CHECK(Must(g.graph->Related("c", {.direction = EdgeDirection::kOutgoing}))
            .context_ids.empty());
  g.CheckVerified();
}

TEST_CASE("a link lasts while an edge states it") {
  Graph g;
  g.Add("p");
  g.Add("c");
  REQUIRE(g.Relate("p", "c", "parent").ok());
  REQUIRE(g.Relate("c", "p", "child").ok());
  REQUIRE(g.graph->RemoveRelationship("p", "c", "parent").ok());
  CHECK(g.H("c").parent == "p");  // the child edge still states it
  REQUIRE(g.graph->InvalidateRelationship("c", "p", "child").ok());
  CHECK(!g.H("c").parent.has_value());
  CHECK(g.H("p").children.empty());
  g.CheckVerified();
  // Asserting the edge again links again.
  REQUIRE(g.Relate("c", "p", "child").ok());
  CHECK(g.H("c").parent == "p");
  g.CheckVerified();
}

TEST_CASE("deleting a context unlinks it; its children become roots") {
  Graph g;
  for (const char* id : {"g", "p", "c1", "c2"}) g.Add(id);
  REQUIRE(g.Relate("g", "p", "parent").ok());
  REQUIRE(g.Relate("p", "c1", "parent").ok());
  REQUIRE(g.Relate("p", "c2", "parent").ok());
  REQUIRE(g.graph->DeleteContext("p").ok());
  CHECK(g.H("g").children.empty());
  CHECK(!g.H("c1").parent.has_value());
  CHECK(g.H("c2").depth == 0);
  CHECK(g.Entries("graph.hier") == 0);
  CHECK(g.Entries("graph.kids") == 0);
  g.CheckVerified();
}

TEST_CASE(
    "a child's new summary rewrites its ancestors' hierarchical "
    "summaries") {
  Graph g;
  g.Add("top");
  g.Add("mid");
  g.Add("a", "Why is the build red?\n```sh\nmake test\n```", "critical");
  g.Add("b", "notes", "low");
  REQUIRE(g.Relate("top", "mid", "parent").ok());
  REQUIRE(g.Relate("mid", "a", "parent").ok());
  REQUIRE(g.Relate("mid", "b", "parent").ok());
  CHECK(!g.H("mid").hierarchical_summary.has_value());

  g.clock.Advance(10);
  Must(g.graph->Summarize("a"));
  ContextHierarchy mid = g.H("mid");
  REQUIRE(mid.hierarchical_summary.has_value());
  const HierarchicalSummary& hs = *mid.hierarchical_summary;
  CHECK(hs.parent_context_id == "mid");
  CHECK(hs.child_context_ids == std::vector<std::string>{"a", "b"});
  CHECK(hs.version == 1);
  CHECK(hs.hierarchy_level == 1);
  CHECK(hs.message_count == 2);
  // a has a summary (score 1.0: one critical message of one); b none (0.5).
  CHECK(hs.importance_score == doctest::Approx(0.75));
  CHECK(Contains(hs.summary,
                 "Hierarchical summary of 2 child contexts (2 messages in "
                 "all)."));
  CHECK(Contains(hs.summary, "Most important: a (1.00), b (0.50)."));
  // a's block has importance 1.0 (>= 0.7), so it is carried up.
  REQUIRE(hs.code_blocks.size() == 1);
  CHECK(hs.code_blocks[0].code == "make test");
  CHECK(hs.key_insights == std::vector<std::string>{"Why is the build red?"});
  // The grandparent is rewritten too.
  REQUIRE(g.H("top").hierarchical_summary.has_value());
  CHECK(g.H("top").hierarchical_summary->child_context_ids ==
        std::vector<std::string>{"mid"});

  Must(g.graph->Summarize("b"));
  CHECK(g.H("mid").hierarchical_summary->version == 2);
  g.CheckVerified();

  // Off: no hierarchical summaries are written.
  ContextGraphOptions off = testing::ManualGraphOptions();
  off.hierarchical_context = false;
  auto flat = Must(ContextGraph::Open(*g.store, *g.convs, off));
  Must(flat->Summarize("a", {.force = true}));
  CHECK(g.H("mid").hierarchical_summary->version == 2);
}

TEST_CASE(
    "the project meta summary appears at the threshold and is "
    "rewritten in place") {
  ContextGraphOptions o = testing::ManualGraphOptions();
  o.meta_summary_threshold = 2;
  Graph g(o);
  for (const char* id : {"p1", "p2", "c1", "c2"}) g.Add(id);
  REQUIRE(g.Relate("p1", "c1", "parent").ok());
  REQUIRE(g.Relate("p2", "c2", "parent").ok());
  Must(g.graph->Summarize("c1"));
  CHECK(Must(g.graph->ListMetaSummaries()).ids.empty());
  Must(g.graph->Summarize("c2"));
  IdPage metas = Must(g.graph->ListMetaSummaries());
  CHECK(metas.ids == std::vector<std::string>{std::string(kProjectMetaId)});
  MetaSummary m = Must(g.graph->GetMetaSummary(kProjectMetaId));
  CHECK(m.version == 1);
  CHECK(m.context_ids == std::vector<std::string>{"p1", "p2"});
  CHECK(m.hierarchy_level == 2);
  Must(g.graph->Summarize("c1", {.force = true}));
  Must(g.graph->Summarize("c2", {.force = true}));
  m = Must(g.graph->GetMetaSummary(kProjectMetaId));
  CHECK(m.version == 3);  // one record, versioned: not one per update
  CHECK(Must(g.graph->ListMetaSummaries()).ids.size() == 1);
  g.CheckVerified();
}

TEST_CASE("explicit meta summaries keep the code blocks contexts share") {
  Graph g;
  const std::string block = "```py\nshared()\n```";
  g.Add("a", "one " + block);
  g.Add("b", "two " + block + "\n```py\nonly_b()\n```");
  g.Add("c", "three");
  Must(g.graph->Summarize("a"));
  Must(g.graph->Summarize("b"));
  MetaSummary m =
      Must(g.graph->CreateMetaSummary("release", {"a", "b", "c", "a"}));
  CHECK(m.id == "release");
  CHECK(m.version == 1);
  CHECK(m.context_ids == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(m.shared_code_blocks.size() == 1);
  CHECK(m.shared_code_blocks[0].code == "shared()");
  CHECK(Contains(m.summary, "Meta summary of 3 contexts (3 messages in all)."));
  CHECK(Must(g.graph->CreateMetaSummary("release", {"c"})).version == 2);

  CheckError(g.graph->CreateMetaSummary("x", {}).status(),
             StatusCode::kInvalidArgument, "contextIds");
  CheckError(g.graph->CreateMetaSummary("x", {"a", "nope"}).status(),
             StatusCode::kNotFound, "contextIds[1] 'nope'");
  CheckError(g.graph->CreateMetaSummary("", {"a"}).status(),
             StatusCode::kInvalidArgument, "metaId");
  CheckError(g.graph->GetMetaSummary("missing").status(), StatusCode::kNotFound,
             "metaId 'missing'");
  CHECK(Must(g.graph->ListMetaSummaries()).ids ==
        std::vector<std::string>{"release"});
}

TEST_CASE("hierarchies page by cursor") {
  Graph g;
  for (const char* id : {"p1", "p2", "p3", "k1", "k2", "k3", "k4"}) g.Add(id);
  REQUIRE(g.Relate("p1", "k1", "parent").ok());
  REQUIRE(g.Relate("p1", "k2", "parent").ok());
  REQUIRE(g.Relate("p2", "k3", "parent").ok());
  REQUIRE(g.Relate("p3", "k4", "parent").ok());
  std::vector<std::string> seen;
  std::string cursor;
  do {
    IdPage page = Must(g.graph->ListHierarchies(1, cursor));
    CHECK(page.ids.size() == 1);
    seen.insert(seen.end(), page.ids.begin(), page.ids.end());
    cursor = page.next_cursor;
  } while (!cursor.empty());
  CHECK(seen == std::vector<std::string>{"p1", "p2", "p3"});
  CheckError(g.graph->ListHierarchies(1, "bogus").status(),
             StatusCode::kInvalidArgument, "cursor");
  CheckError(g.graph->Hierarchy("nope").status(), StatusCode::kNotFound,
             "contextId 'nope'");
}

TEST_CASE("Verify finds a lost child link and a link no edge states") {
  Graph g;
  g.Add("p");
  g.Add("c");
  REQUIRE(g.Relate("p", "c", "parent").ok());
  g.CheckVerified();
  Database kids = Must(g.store->OpenDatabase("graph.kids"));
  Database out = Must(g.store->OpenDatabase("graph.out"));
  auto drop_first = [&](Database db) {
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  Cursor c = Must(txn.NewCursor(db));
                  c.SeekToFirst();
                  REQUIRE(c.Valid());
                  const std::string key(c.key());
                  return txn.Delete(db, key).status();
                })
                .ok());
  };
  SUBCASE("child link") {
    drop_first(kids);
    GraphVerifyReport report = Must(g.graph->Verify());
    CHECK_FALSE(report.ok);
    REQUIRE_FALSE(report.problems.empty());
    CHECK(Contains(report.problems[0], "has no child entry"));
  }
  SUBCASE("stating edge") {
    drop_first(out);
    GraphVerifyReport report = Must(g.graph->Verify());
    CHECK_FALSE(report.ok);
    bool found = false;
    for (const std::string& p : report.problems) {
      found = found || Contains(p, "stated by no current edge");
    }
    CHECK(found);
  }
}

}  // namespace
}  // namespace ctxkit
