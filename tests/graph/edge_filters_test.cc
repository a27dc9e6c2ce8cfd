// The metadata and tag filters of Related and FindPath (RelatedOptions::
// metadata and tags, PathOptions::metadata): what each keeps, that paging
// and `total` count only what they keep, that in-edges are filtered like
// out-edges, and their errors.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::CheckError;
using testing::Must;

struct Graph : testing::GraphFixture {
  void Add(const std::string& id, std::vector<std::string> tags = {}) {
    Must(graph->AddMessage(id, {.role = MessageRole::kUser,
                                .content = "about " + id,
                                .tags = std::move(tags)}));
  }
  void Edge(const std::string& from, const std::string& to,
            const std::string& type, const std::string& metadata,
            double weight = 0.8) {
    Must(graph->AddRelationship({.source = from,
                                 .target = to,
                                 .type = type,
                                 .weight = weight,
                                 .metadata = metadata}));
  }
  RelatedResult Related(const std::string& id, RelatedOptions options) {
    return Must(graph->Related(id, options));
  }
  RelatedResult WithMetadata(const std::string& id,
                             const std::string& metadata) {
    RelatedOptions o;
    o.metadata = metadata;
    return Related(id, o);
  }
  RelatedResult WithTags(const std::string& id, std::vector<std::string> tags) {
    RelatedOptions o;
    o.tags = std::move(tags);
    return Related(id, o);
  }
};

using Ids = std::vector<std::string>;

// a's edges, in insertion order: a->b (a host's, labelled), a->c (an
// auto-link's metadata), a->d, and d->a coming in.
struct Star : Graph {
  Star() {
    Add("a");
    Add("b", {"db"});
    Add("c", {"db", "auth"});
    Add("d");
    Edge("a", "b", "references", R"({"source":"manual","labels":["x","y"]})");
    Edge("a", "c", "similar", R"({"auto":true,"method":"keyword"})");
    Edge("a", "d", "references", R"({"n":1})");
    Edge("d", "a", "continues", R"({"source":"manual"})");
  }
};

TEST_CASE_FIXTURE(Star, "a metadata filter keeps the edges that contain it") {
  CHECK(WithMetadata("a", "").context_ids == Ids{"b", "c", "d"});
  CHECK(WithMetadata("a", "").total == 4);
  CHECK(WithMetadata("a", "{}").total == 4);

  RelatedResult auto_links = WithMetadata("a", R"({"auto":true})");
  CHECK(auto_links.context_ids == Ids{"c"});
  CHECK(auto_links.total == 1);

  // null: the member is absent, so every edge but the auto-link.
  RelatedResult by_hand = WithMetadata("a", R"({"auto":null})");
  CHECK(by_hand.context_ids == Ids{"b", "d"});
  CHECK(by_hand.total == 3);

  CHECK(WithMetadata("a", R"({"labels":["y"]})").context_ids == Ids{"b"});
  CHECK(WithMetadata("a", R"({"labels":["y","z"]})").context_ids.empty());
  CHECK(WithMetadata("a", R"({"n":1.0})").context_ids == Ids{"d"});
  CHECK(WithMetadata("a", R"({"n":"1"})").total == 0);
  CHECK(WithMetadata("a", R"({"nothing":"here"})").total == 0);
}

TEST_CASE_FIXTURE(Star, "in-edges are filtered by their own metadata") {
  RelatedOptions o;
  o.direction = EdgeDirection::kIncoming;
  o.metadata = R"({"source":"manual"})";
  RelatedResult in = Related("a", o);
  CHECK(in.context_ids == Ids{"d"});
  REQUIRE(in.edges.size() == 1);
  CHECK(in.edges[0].direction == EdgeDirection::kIncoming);
  CHECK(in.edges[0].relationship.type == "continues");

  // Both ways: a->b and d->a carry source:manual, a->d does not.
  o.direction = EdgeDirection::kBoth;
  RelatedResult both = Related("a", o);
  CHECK(both.context_ids == Ids{"b", "d"});
  REQUIRE(both.edges.size() == 2);
  CHECK(both.edges[0].relationship.target == "b");
  CHECK(both.edges[1].relationship.source == "d");

  o.metadata = R"({"auto":true})";
  o.direction = EdgeDirection::kIncoming;
  CHECK(Related("a", o).total == 0);
}

TEST_CASE_FIXTURE(Star, "paging counts only the edges the filter keeps") {
  RelatedOptions o;
  o.metadata = R"({"auto":null})";
  o.limit = 1;
  o.offset = 1;
  RelatedResult page = Related("a", o);
  CHECK(page.total == 3);
  CHECK(page.context_ids == Ids{"d"});
  REQUIRE(page.edges.size() == 1);
  CHECK(page.edges[0].relationship.target == "d");
  o.offset = 3;
  CHECK(Related("a", o).edges.empty());
}

TEST_CASE_FIXTURE(Star, "a tag filter keeps the other ends that carry them") {
  CHECK(WithTags("a", {"db"}).context_ids == Ids{"b", "c"});
  CHECK(WithTags("a", {"db", "auth"}).context_ids == Ids{"c"});
  CHECK(WithTags("a", {"auth", "db"}).total == 1);
  CHECK(WithTags("a", {"nope"}).total == 0);
  // A tag on a later message counts too.
  Add("d", {"auth"});
  CHECK(WithTags("a", {"auth"}).context_ids == Ids{"c", "d"});
  CHECK(WithTags("a", {"auth"}).total == 3);  // c, d (out), d (in)

  RelatedOptions o;
  o.tags = {"db"};
  o.metadata = R"({"auto":null})";
  CHECK(Related("a", o).context_ids == Ids{"b"});
}

TEST_CASE_FIXTURE(Star, "a bad filter is refused, naming the field") {
  RelatedOptions o;
  for (const char* bad : {"[1]", "1", "{", "\"auto\"", "null"}) {
    CAPTURE(bad);
    o.metadata = bad;
    CheckError(graph->Related("a", o).status(), StatusCode::kInvalidArgument,
               "metadata");
  }
  o.metadata = "{\"a\":\"\xff\"}";
  CheckError(graph->Related("a", o).status(), StatusCode::kInvalidArgument,
             "metadata");
  o.metadata = "{\"a\":\"" +
               std::string(ContextGraphLimits::kMaxMetadataBytes, 'x') + "\"}";
  CheckError(graph->Related("a", o).status(), StatusCode::kInvalidArgument,
             "metadata");
  o = {};
  o.tags = {"db", ""};
  CheckError(graph->Related("a", o).status(), StatusCode::kInvalidArgument,
             "tags[1]");
  o.tags.assign(ContextGraphLimits::kMaxTags + 1, "t");
  CheckError(graph->Related("a", o).status(), StatusCode::kInvalidArgument,
             "tags");

  PathOptions p;
  p.metadata = "[]";
  CheckError(graph->FindPath("a", "b", p).status(),
             StatusCode::kInvalidArgument, "metadata");
  CheckVerified();
}

// x -> y directly (a host's edge), and x -> m -> y through reviewed edges,
// one of them stored the other way round (y -> m) so that an in-edge is
// crossed too.
struct Detour : Graph {
  Detour() {
    for (const char* id : {"x", "m", "y"}) Add(id);
    Edge("x", "y", "references", R"({"reviewed":false})", 0.9);
    Edge("x", "m", "continues", R"({"reviewed":true,"by":"ana"})", 0.5);
    Edge("y", "m", "references", R"({"reviewed":true})", 0.5);
  }
  PathResult Path(const std::string& metadata, bool weighted = false) {
    PathOptions o;
    o.metadata = metadata;
    o.weighted = weighted;
    return Must(graph->FindPath("x", "y", o));
  }
};

TEST_CASE_FIXTURE(Detour, "a path crosses only the edges the filter keeps") {
  for (bool weighted : {false, true}) {
    CAPTURE(weighted);
    CHECK(Path("", weighted).path == Ids{"x", "y"});
    CHECK(Path("{}", weighted).path == Ids{"x", "y"});
    PathResult reviewed = Path(R"({"reviewed":true})", weighted);
    CHECK(reviewed.found);
    CHECK(reviewed.path == Ids{"x", "m", "y"});
    REQUIRE(reviewed.edges.size() == 2);
    CHECK(reviewed.edges[1].source == "y");  // crossed against its direction
    CHECK(reviewed.total_weight == doctest::Approx(0.25));

    PathResult none = Path(R"({"reviewed":true,"by":"ana"})", weighted);
    CHECK_FALSE(none.found);
    CHECK(none.reason == "no path within maxHops");
  }
  // Outgoing only: y -> m cannot be crossed from m to y.
  PathOptions o;
  o.direction = EdgeDirection::kOutgoing;
  o.metadata = R"({"reviewed":true})";
  CHECK_FALSE(Must(graph->FindPath("x", "y", o)).found);
}

}  // namespace
}  // namespace ctxkit
