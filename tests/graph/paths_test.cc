// Path search over a caller-supplied adjacency: the tie rules on small
// graphs built by hand, a cross-check against exhaustive enumeration on
// random small graphs, and agreement with independent searches on a large
// random graph.

#include "lib/graph/paths.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ctxkit::internal {
namespace {

using Nodes = std::vector<uint64_t>;

PathEdge E(uint64_t source, uint64_t target, float weight = 1,
           uint8_t type = 0) {
  return PathEdge{source, target, type, weight};
}

bool SameEdge(const PathEdge& a, const PathEdge& b) {
  return a.source == b.source && a.target == b.target && a.type == b.type &&
         (a.weight == b.weight ||
          (std::isnan(a.weight) && std::isnan(b.weight)));
}

std::string Show(const PathEdge& e) {
  return std::to_string(e.source) + "->" + std::to_string(e.target) + " t" +
         std::to_string(e.type) + " w" + std::to_string(e.weight);
}

// An edge list served as paths.h describes an adjacency: "directed" gives
// out-edges forward and in-edges backward, "both" gives both on each side,
// each edge as stored. Optionally the order is scrambled and edges
// repeated, which the contract allows, so that no answer may depend on
// emission order; an error can be injected.
class TestGraph {
 public:
  explicit TestGraph(bool both = false) : both_(both) {}

  TestGraph& Add(const PathEdge& edge) {
    edges_.push_back(edge);
    out_[edge.source].push_back(edge);
    in_[edge.target].push_back(edge);
    return *this;
  }
  TestGraph& Add(uint64_t source, uint64_t target, float weight = 1,
                 uint8_t type = 0) {
    return Add(E(source, target, weight, type));
  }

  const std::vector<PathEdge>& edges() const { return edges_; }
  bool both() const { return both_; }

  void Scramble(std::mt19937_64* rng) { rng_ = rng; }
  // The call numbered `call` (from 0), or every call from the backward side
  // when `backward_only`, returns DataLoss.
  void FailAt(int call, bool backward_only = false) {
    fail_at_ = call;
    fail_backward_only_ = backward_only;
  }

  int calls() const { return calls_; }
  int backward_calls() const { return backward_calls_; }

  absl::Status Adjacency(uint64_t node, bool backward, PathEmit emit) {
    const int call = calls_++;
    if (backward) ++backward_calls_;
    if (fail_backward_only_ ? backward : call == fail_at_) {
      return absl::DataLossError("injected");
    }
    std::vector<PathEdge> list;
    auto append = [&](const std::map<uint64_t, std::vector<PathEdge>>& side) {
      auto it = side.find(node);
      if (it != side.end()) {
        list.insert(list.end(), it->second.begin(), it->second.end());
      }
    };
    if (both_) {
      append(out_);
      append(in_);
    } else {
      append(backward ? in_ : out_);
    }
    if (rng_ != nullptr && !list.empty()) {
      const size_t repeats = (*rng_)() % 3;
      for (size_t i = 0; i < repeats; ++i) {
        list.push_back(list[(*rng_)() % list.size()]);
      }
      std::shuffle(list.begin(), list.end(), *rng_);
    }
    for (const PathEdge& edge : list) emit(edge);
    return absl::OkStatus();
  }

  absl::StatusOr<PathResult> Find(uint64_t source, uint64_t target,
                                  int max_hops, bool weighted) {
    PathQuery query;
    query.source = source;
    query.target = target;
    query.max_hops = max_hops;
    query.weighted = weighted;
    return FindPath(query, [this](uint64_t node, bool backward, PathEmit emit) {
      return Adjacency(node, backward, emit);
    });
  }

  // For the tests where an error is not the point.
  PathResult Path(uint64_t source, uint64_t target, int max_hops = 6,
                  bool weighted = false) {
    absl::StatusOr<PathResult> result =
        Find(source, target, max_hops, weighted);
    REQUIRE_MESSAGE(result.ok(), result.status().ToString());
    const PathResult& path = *result;
    // Shape promises that hold for every answer.
    if (path.found) {
      REQUIRE(!path.nodes.empty());
      CHECK(path.nodes.front() == source);
      CHECK(path.nodes.back() == target);
      REQUIRE(path.edges.size() == path.nodes.size() - 1);
      CHECK(static_cast<int>(path.edges.size()) <= std::max(max_hops, 0));
      double product = 1;
      for (size_t i = 0; i < path.edges.size(); ++i) {
        const PathEdge& e = path.edges[i];
        const bool joins =
            (e.source == path.nodes[i] && e.target == path.nodes[i + 1]) ||
            (both_ && e.target == path.nodes[i] &&
             e.source == path.nodes[i + 1]);
        CHECK_MESSAGE(joins, Show(e));
        CHECK(std::any_of(edges_.begin(), edges_.end(),
                          [&](const PathEdge& s) { return SameEdge(s, e); }));
        product *= e.weight;
      }
      CHECK((path.total_weight == product ||
             (std::isnan(path.total_weight) && std::isnan(product))));
    } else {
      CHECK(path.nodes.empty());
      CHECK(path.edges.empty());
      CHECK(path.total_weight == 0);
    }
    return path;
  }

 private:
  bool both_;
  std::vector<PathEdge> edges_;
  std::map<uint64_t, std::vector<PathEdge>> out_;
  std::map<uint64_t, std::vector<PathEdge>> in_;
  std::mt19937_64* rng_ = nullptr;
  int calls_ = 0;
  int backward_calls_ = 0;
  int fail_at_ = -1;
  bool fail_backward_only_ = false;
};

// Both searches, for the cases where the two must agree.
constexpr bool kModes[] = {false, true};

TEST_CASE("a chain is found forward only, with its edges as stored") {
  TestGraph graph;
  graph.Add(1, 2, 0.5f, 7).Add(2, 3, 0.25f, 1).Add(3, 4, 1.0f, 2);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    PathResult path = graph.Path(1, 4, 6, weighted);
    REQUIRE(path.found);
    CHECK(path.nodes == Nodes{1, 2, 3, 4});
    REQUIRE(path.edges.size() == 3);
    CHECK(SameEdge(path.edges[0], E(1, 2, 0.5f, 7)));
    CHECK(SameEdge(path.edges[1], E(2, 3, 0.25f, 1)));
    CHECK(SameEdge(path.edges[2], E(3, 4, 1.0f, 2)));
    CHECK(path.total_weight == 0.125);
    CHECK(graph.Path(2, 4, 6, weighted).nodes == Nodes{2, 3, 4});
    CHECK(graph.Path(1, 2, 6, weighted).nodes == Nodes{1, 2});
    CHECK_FALSE(graph.Path(4, 1, 6, weighted).found);
  }
}

TEST_CASE("among shortest paths the smallest node sequence wins") {
  // 1,2,8,9 is the answer although 7 < 8 and the paths through 3 and 4 are
  // offered first: the sequence is decided at its first difference.
  TestGraph graph;
  graph.Add(1, 4).Add(4, 6).Add(6, 9);
  graph.Add(1, 3).Add(3, 7).Add(7, 9);
  graph.Add(1, 2).Add(2, 8).Add(8, 9);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    CHECK(graph.Path(1, 9, 6, weighted).nodes == Nodes{1, 2, 8, 9});
  }

  // 6 is reached from 4 and from 5 on the forward side (the fan-in at 7
  // makes the backward side the larger): its predecessor must be 5,
  // whose path 1,2,5 is smaller, not the smaller node 4, reached by 1,3,4.
  TestGraph ranked;
  ranked.Add(1, 3).Add(1, 2).Add(3, 4).Add(2, 5).Add(4, 6).Add(5, 6).Add(6, 7);
  for (uint64_t n = 100; n < 110; ++n) ranked.Add(n, 7);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    CHECK(ranked.Path(1, 7, 6, weighted).nodes == Nodes{1, 2, 5, 6, 7});
  }

  // Five hops, so that the two sides meet in the middle with several
  // meeting nodes: the smallest first step wins over smaller nodes near the
  // target, and after the shared prefix 1,5,20 the step to 30 wins over a
  // smaller node (39) one hop later.
  TestGraph longer;
  for (Nodes p : {Nodes{1, 6, 10, 11, 12, 100}, Nodes{1, 5, 21, 25, 41, 100},
                  Nodes{1, 5, 20, 31, 39, 100}, Nodes{1, 5, 20, 30, 40, 100},
                  Nodes{1, 6, 9, 13, 2, 100}}) {
    for (size_t i = 0; i + 1 < p.size(); ++i) longer.Add(p[i], p[i + 1]);
  }
  // A fan-out at the source makes the backward side expand too.
  for (uint64_t n = 50; n < 60; ++n) longer.Add(1, n);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    CHECK(longer.Path(1, 100, 6, weighted).nodes ==
          Nodes{1, 5, 20, 30, 40, 100});
    CHECK(longer.Path(6, 100, 6, weighted).nodes == Nodes{6, 9, 13, 2, 100});
  }
}

TEST_CASE("fewest hops: the last layer is read only as far as the answer") {
  // Backward meeting: the backward layer {7, 5} (in the order 100's edges
  // come) meets the forward layer first at 3 (through 7), but the answer
  // goes through 2, ranked first, and from 2 to 5, the smaller of its two
  // backward neighbours.
  for (bool both : {false, true}) {
    CAPTURE(both);
    TestGraph graph(both);
    graph.Add(1, 2).Add(1, 3).Add(1, 4);
    graph.Add(7, 100).Add(5, 100);
    graph.Add(3, 7).Add(2, 7).Add(2, 5);
    CHECK(graph.Path(1, 100).nodes == Nodes{1, 2, 5, 100});
  }
  // Parallel edges between the meeting node and the next: the preferred
  // one, whichever the forward read meets first.
  TestGraph parallel;
  parallel.Add(1, 2).Add(1, 3).Add(1, 4);
  parallel.Add(7, 100).Add(5, 100);
  parallel.Add(3, 7).Add(2, 5, 0.5f, 2).Add(2, 5, 0.5f, 1).Add(2, 5, 0.25f, 0);
  PathResult path = parallel.Path(1, 100);
  REQUIRE(path.edges.size() == 3);
  CHECK(SameEdge(path.edges[1], E(2, 5, 0.5f, 1)));

  // Forward meeting: the source's twenty neighbours each lead to the
  // target's side, so the search stops after the first of them (rank 0,
  // node 10) instead of reading all twenty: 1 + 1 + 20 reads would be the
  // whole layer.
  TestGraph wide;
  for (uint64_t n = 10; n < 30; ++n) wide.Add(1, n).Add(n, 200 + n);
  for (uint64_t n = 10; n < 30; ++n) wide.Add(200 + n, 500);
  for (uint64_t n = 0; n < 40; ++n) wide.Add(600 + n, 500);  // a wide fan-in
  path = wide.Path(1, 500);
  CHECK(path.nodes == Nodes{1, 10, 210, 500});
  CHECK(wide.calls() < 10);
}

TEST_CASE("a directed adjacency follows edge direction, 'both' does not") {
  std::vector<PathEdge> edges = {E(1, 2, 0.5f), E(3, 2, 0.5f), E(3, 4, 0.5f)};
  TestGraph directed(false);
  TestGraph both(true);
  for (const PathEdge& e : edges) {
    directed.Add(e);
    both.Add(e);
  }
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    CHECK_FALSE(directed.Path(1, 4, 6, weighted).found);
    CHECK_FALSE(directed.Path(4, 1, 6, weighted).found);
    CHECK(directed.Path(3, 2, 6, weighted).nodes == Nodes{3, 2});

    PathResult path = both.Path(1, 4, 6, weighted);
    REQUIRE(path.found);
    CHECK(path.nodes == Nodes{1, 2, 3, 4});
    REQUIRE(path.edges.size() == 3);
    // Edges crossed against their direction come back as stored.
    CHECK(SameEdge(path.edges[1], E(3, 2, 0.5f)));
    CHECK(path.total_weight == 0.125);
    PathResult back = both.Path(4, 1, 6, weighted);
    CHECK(back.nodes == Nodes{4, 3, 2, 1});
    REQUIRE(back.edges.size() == 3);
    CHECK(SameEdge(back.edges[0], E(3, 4, 0.5f)));
  }
}

TEST_CASE("max_hops cuts off a longer path") {
  TestGraph graph;
  graph.Add(1, 2).Add(2, 3).Add(3, 4).Add(4, 5);
  graph.Add(1, 10).Add(10, 11).Add(11, 12).Add(12, 13).Add(13, 5);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    CHECK_FALSE(graph.Path(1, 5, 3, weighted).found);
    CHECK(graph.Path(1, 5, 4, weighted).nodes == Nodes{1, 2, 3, 4, 5});
    CHECK(graph.Path(1, 5, 5, weighted).nodes == Nodes{1, 2, 3, 4, 5});
    CHECK(graph.Path(1, 2, 1, weighted).nodes == Nodes{1, 2});
    CHECK_FALSE(graph.Path(1, 3, 1, weighted).found);
  }
  // Only 1 -> 10 -> ... reaches 13 within five hops.
  CHECK(graph.Path(1, 13, 4).nodes == Nodes{1, 10, 11, 12, 13});
  CHECK_FALSE(graph.Path(1, 13, 3).found);
}

TEST_CASE("weights <= 0 and NaN are impassable when weighted only") {
  // The unweighted search counts hops and ignores weights entirely, so a
  // weight-0 edge is as good as any there.
  for (float blocked :
       {0.0f, -0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    CAPTURE(blocked);
    TestGraph graph;
    graph.Add(1, 2, blocked).Add(2, 3, 1.0f);
    graph.Add(1, 4, 0.5f).Add(4, 5, 0.5f).Add(5, 3, 0.5f);
    PathResult unweighted = graph.Path(1, 3, 6, false);
    CHECK(unweighted.nodes == Nodes{1, 2, 3});
    PathResult weighted = graph.Path(1, 3, 6, true);
    CHECK(weighted.nodes == Nodes{1, 4, 5, 3});
    CHECK(weighted.total_weight == 0.125);
    CHECK_FALSE(graph.Path(1, 2, 6, true).found);
    CHECK(graph.Path(1, 2, 6, false).found);
  }
}

TEST_CASE("weighted: three hops of 0.9 beat one hop of 0.5 unless cut off") {
  TestGraph graph;
  graph.Add(1, 2, 0.9f).Add(2, 3, 0.9f).Add(3, 4, 0.9f).Add(1, 4, 0.5f);
  const double ninety = 0.9f;
  PathResult best = graph.Path(1, 4, 3, true);
  CHECK(best.nodes == Nodes{1, 2, 3, 4});
  CHECK(best.total_weight == ninety * ninety * ninety);
  PathResult cut = graph.Path(1, 4, 2, true);
  CHECK(cut.nodes == Nodes{1, 4});
  CHECK(cut.total_weight == 0.5);
  CHECK(graph.Path(1, 4, 3, false).nodes == Nodes{1, 4});
}

TEST_CASE("weighted: the best product to a node may need too many hops") {
  // Node 4 is best reached over three weight-1 hops, but then 5 is out of
  // reach within three hops; a Dijkstra over nodes alone, which keeps only
  // the best way to 4, would miss 1,4,5.
  TestGraph graph;
  graph.Add(1, 2, 1.0f).Add(2, 3, 1.0f).Add(3, 4, 1.0f);
  graph.Add(1, 4, 0.6f).Add(4, 5, 0.9f);
  PathResult three = graph.Path(1, 5, 3, true);
  CHECK(three.nodes == Nodes{1, 4, 5});
  CHECK(three.total_weight == double{0.6f} * double{0.9f});
  PathResult four = graph.Path(1, 5, 4, true);
  CHECK(four.nodes == Nodes{1, 2, 3, 4, 5});
  CHECK(four.total_weight == double{0.9f});
}

TEST_CASE("weighted ties: fewer hops, then the smaller node sequence") {
  // 1,2,9 is lexicographically smaller than 1,9 but has more hops.
  TestGraph fewer;
  fewer.Add(1, 9, 0.25f).Add(1, 2, 0.5f).Add(2, 9, 0.5f);
  CHECK(fewer.Path(1, 9, 6, true).nodes == Nodes{1, 9});
  // Weight-1 detours tie with the direct edge and lose on hops.
  TestGraph ones;
  ones.Add(1, 2, 1.0f).Add(2, 3, 1.0f).Add(1, 3, 1.0f);
  CHECK(ones.Path(1, 3, 6, true).nodes == Nodes{1, 3});

  TestGraph same;
  same.Add(1, 3, 0.5f).Add(3, 9, 0.8f).Add(1, 2, 0.8f).Add(2, 9, 0.5f);
  CHECK(same.Path(1, 9, 6, true).nodes == Nodes{1, 2, 9});

  // The same four weights in another order are an exact tie, although
  // multiplying them in path order in double gives the later path a larger
  // product: ties must not depend on rounding.
  const float a = 0.3f, b = 0.9f, c = 0.7f, d = 0.9f;
  const double first = ((double{a} * b) * c) * d;
  const double second = ((double{b} * a) * d) * c;
  REQUIRE(first < second);
  TestGraph permuted;
  permuted.Add(1, 5, b).Add(5, 6, a).Add(6, 7, d).Add(7, 9, c);
  permuted.Add(1, 2, a).Add(2, 3, b).Add(3, 4, c).Add(4, 9, d);
  PathResult path = permuted.Path(1, 9, 6, true);
  CHECK(path.nodes == Nodes{1, 2, 3, 4, 9});
  CHECK(path.total_weight == first);

  // Products that differ only 2^-70 apart, beyond what a double holds:
  // (1 - 3u)^2 against (1 - u)^2 (1 - 4u) with u = 2^-24, which agree in
  // their terms in u and u^2. The larger wins over the smaller sequence.
  const float u = std::ldexp(1.0f, -24);
  TestGraph close;
  close.Add(1, 2, 1 - u).Add(2, 3, 1 - u).Add(3, 9, 1 - 4 * u);
  close.Add(1, 5, 1.0f).Add(5, 6, 1 - 3 * u).Add(6, 9, 1 - 3 * u);
  CHECK(close.Path(1, 9, 6, true).nodes == Nodes{1, 5, 6, 9});
  // The same with (1 - u)(1 - 4u)^2 against (1 - 2u)^2 (1 - 5u): 2^-70
  // apart, and equal in their first 64 bits.
  TestGraph closer;
  closer.Add(1, 2, 1 - 2 * u).Add(2, 3, 1 - 2 * u).Add(3, 9, 1 - 5 * u);
  closer.Add(1, 5, 1 - u).Add(5, 6, 1 - 4 * u).Add(6, 9, 1 - 4 * u);
  CHECK(closer.Path(1, 9, 6, true).nodes == Nodes{1, 5, 6, 9});

  // A genuinely larger product still wins over a smaller sequence.
  TestGraph larger;
  larger.Add(1, 2, 0.5f).Add(2, 9, 0.5f).Add(1, 3, 0.5f).Add(3, 9, 0.5000001f);
  CHECK(larger.Path(1, 9, 6, true).nodes == Nodes{1, 3, 9});
}

TEST_CASE("parallel edges: the heaviest, then the smallest type, then order") {
  TestGraph graph;
  graph.Add(1, 2, 0.5f, 3).Add(1, 2, 0.7f, 5).Add(1, 2, 0.7f, 2);
  graph.Add(1, 2, 0.7f, 4).Add(1, 2, 0.0f, 0);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    PathResult path = graph.Path(1, 2, 6, weighted);
    REQUIRE(path.edges.size() == 1);
    CHECK(SameEdge(path.edges[0], E(1, 2, 0.7f, 2)));
  }

  // In a "both" graph, 1->2 and 2->1 join the same nodes: (source, target)
  // order decides when weight and type tie, whichever way it is crossed.
  TestGraph both(true);
  both.Add(2, 1, 0.5f, 1).Add(1, 2, 0.5f, 1).Add(2, 1, 0.4f, 0);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    PathResult forth = both.Path(1, 2, 6, weighted);
    REQUIRE(forth.edges.size() == 1);
    CHECK(SameEdge(forth.edges[0], E(1, 2, 0.5f, 1)));
    PathResult back = both.Path(2, 1, 6, weighted);
    REQUIRE(back.edges.size() == 1);
    CHECK(SameEdge(back.edges[0], E(1, 2, 0.5f, 1)));
  }

  // Parallel edges inside a path, where the backward side picks them (the
  // fan-out at 1 makes the forward side the larger).
  TestGraph inner;
  for (uint64_t n = 10; n < 14; ++n) inner.Add(1, n).Add(n, 2);
  inner.Add(2, 3, 0.6f, 9).Add(2, 3, 0.8f, 9).Add(2, 3, 0.8f, 8);
  inner.Add(3, 4, 0.2f, 1).Add(3, 4, 0.2f, 0).Add(3, 4, 0.1f, 0);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    PathResult path = inner.Path(1, 4, 6, weighted);
    CHECK(path.nodes == Nodes{1, 10, 2, 3, 4});
    REQUIRE(path.edges.size() == 4);
    CHECK(SameEdge(path.edges[2], E(2, 3, 0.8f, 8)));
    CHECK(SameEdge(path.edges[3], E(3, 4, 0.2f, 0)));
  }
}

TEST_CASE("self-loops are ignored") {
  for (bool both : kModes) {
    TestGraph graph(both);
    graph.Add(1, 1, 1.0f).Add(1, 2, 0.5f).Add(2, 2, 1.0f).Add(2, 3, 0.5f);
    graph.Add(5, 5, 1.0f);
    for (bool weighted : kModes) {
      CAPTURE(both);
      CAPTURE(weighted);
      PathResult path = graph.Path(1, 3, 6, weighted);
      CHECK(path.nodes == Nodes{1, 2, 3});
      CHECK(path.total_weight == 0.25);
      CHECK_FALSE(graph.Path(5, 1, 6, weighted).found);
      CHECK_FALSE(graph.Path(1, 5, 6, weighted).found);
    }
  }
}

TEST_CASE("source == target is a path of no edges, without the adjacency") {
  TestGraph graph;
  graph.Add(1, 2).Add(2, 1);
  graph.FailAt(0);  // any call would fail
  for (bool weighted : kModes) {
    for (uint64_t node : {uint64_t{1}, uint64_t{42}}) {
      CAPTURE(weighted);
      absl::StatusOr<PathResult> path = graph.Find(node, node, 6, weighted);
      REQUIRE(path.ok());
      CHECK(path->found);
      CHECK(path->nodes == Nodes{node});
      CHECK(path->edges.empty());
      CHECK(path->total_weight == 1.0);
    }
  }
  CHECK(graph.calls() == 0);
}

TEST_CASE("no path and unknown nodes give found == false") {
  TestGraph graph;
  graph.Add(1, 2).Add(3, 4).Add(uint64_t{1} << 63, 1);
  for (bool weighted : kModes) {
    CAPTURE(weighted);
    CHECK_FALSE(graph.Path(1, 4, 16, weighted).found);
    CHECK_FALSE(graph.Path(1, 99, 16, weighted).found);
    CHECK_FALSE(graph.Path(99, 1, 16, weighted).found);
    CHECK(graph.Path(uint64_t{1} << 63, 2, 16, weighted).nodes ==
          Nodes{uint64_t{1} << 63, 1, 2});
  }
}

TEST_CASE("an adjacency error stops the search and is returned") {
  for (bool weighted : kModes) {
    for (int call : {0, 1, 2}) {
      CAPTURE(weighted);
      CAPTURE(call);
      TestGraph graph;
      graph.Add(1, 2).Add(2, 3).Add(3, 4).Add(4, 5);
      graph.FailAt(call);
      absl::StatusOr<PathResult> path = graph.Find(1, 5, 6, weighted);
      CHECK(path.status().code() == absl::StatusCode::kDataLoss);
      CHECK(path.status().message() == "injected");
      CHECK(graph.calls() == call + 1);
    }
  }
  // The backward side's errors too (the forward frontier is the larger).
  TestGraph graph;
  for (uint64_t n = 10; n < 14; ++n) graph.Add(1, n).Add(n, 2);
  graph.Add(2, 3);
  graph.FailAt(-1, /*backward_only=*/true);
  absl::StatusOr<PathResult> path = graph.Find(1, 3, 6, false);
  CHECK(path.status().code() == absl::StatusCode::kDataLoss);
  CHECK(graph.backward_calls() == 1);
}

TEST_CASE("weighted: the first join of the two sides need not be the best") {
  // The sides meet first on 1 -> 2 -> 9 (0.9 then 0.1); the best path,
  // 0.6^3, is longer and is joined later, before the stopping rule holds.
  TestGraph graph;
  graph.Add(1, 2, 0.9f).Add(2, 9, 0.1f);
  graph.Add(1, 3, 0.6f).Add(3, 4, 0.6f).Add(4, 9, 0.6f);
  PathResult path = graph.Path(1, 9, 6, true);
  CHECK(path.nodes == Nodes{1, 3, 4, 9});
  CHECK(path.total_weight == doctest::Approx(0.216));
  // The same from the target's side: a heavy edge into the target that
  // leads back to a weak start.
  TestGraph mirrored;
  mirrored.Add(1, 2, 0.1f).Add(2, 9, 0.9f);
  mirrored.Add(1, 3, 0.6f).Add(3, 4, 0.6f).Add(4, 9, 0.6f);
  CHECK(mirrored.Path(1, 9, 6, true).nodes == Nodes{1, 3, 4, 9});
  CHECK(mirrored.Path(1, 9, 2, true).nodes == Nodes{1, 2, 9});
}

TEST_CASE("weighted: the search runs from both ends") {
  // Many ways out of the source and one into the target: the backward side
  // is used (and its error returned), as a one-sided search would not.
  TestGraph graph;
  for (uint64_t n = 10; n < 14; ++n) graph.Add(1, n, 0.5f).Add(n, 2, 0.5f);
  graph.Add(2, 3, 0.5f);
  graph.FailAt(-1, /*backward_only=*/true);
  absl::StatusOr<PathResult> path = graph.Find(1, 3, 6, true);
  CHECK(path.status().code() == absl::StatusCode::kDataLoss);
  CHECK(graph.backward_calls() == 1);
}

TEST_CASE("weights above 1 count as 1 when ranking and are reported as given") {
  TestGraph graph;
  graph.Add(1, 2, 2.0f).Add(2, 3, 0.5f);
  PathResult path = graph.Path(1, 3, 6, true);
  CHECK(path.nodes == Nodes{1, 2, 3});
  CHECK(path.total_weight == 1.0);
  graph.Add(1, 3, 0.9f);
  CHECK(graph.Path(1, 3, 6, true).nodes == Nodes{1, 3});
  TestGraph infinite;
  infinite.Add(1, 2, std::numeric_limits<float>::infinity()).Add(2, 3, 0.5f);
  CHECK(infinite.Path(1, 3, 6, true).nodes == Nodes{1, 2, 3});
}

TEST_CASE("max_hops below 1 finds only the empty path") {
  TestGraph graph;
  graph.Add(1, 2);
  for (bool weighted : kModes) {
    CHECK_FALSE(graph.Path(1, 2, 0, weighted).found);
    CHECK(graph.Path(1, 1, 0, weighted).found);
  }
}

// ---------------------------------------------------------------------------
// Exhaustive reference.
//
// The best walk is a simple path: a repeated node closes a cycle whose
// weights (at most 1) cannot raise the product and whose hops only add, so
// enumerating simple paths is enough. Between two consecutive nodes the
// best edge by the parallel-edge rule is the heaviest, so it is also the
// one that maximizes the product.

struct Reference {
  bool found = false;
  Nodes nodes;
  std::vector<PathEdge> edges;
  double product = 0;
};

bool Better(const PathEdge& a, const PathEdge& b) {
  auto key = [](const PathEdge& e) {
    const float w = std::isnan(e.weight) ? -1.0f : e.weight;
    return std::make_tuple(-w, e.type, e.source, e.target);
  };
  return key(a) < key(b);
}

class Exhaustive {
 public:
  Exhaustive(const TestGraph& graph, bool weighted) : weighted_(weighted) {
    for (const PathEdge& e : graph.edges()) {
      if (e.source == e.target) continue;
      if (weighted && !(e.weight > 0)) continue;
      Offer(e.source, e.target, e);
      if (graph.both()) Offer(e.target, e.source, e);
    }
  }

  // Best paths from `source` to every node, within max_hops.
  std::map<uint64_t, Reference> From(uint64_t source, int max_hops) {
    max_hops_ = max_hops;
    best_.clear();
    top_.clear();
    path_ = {source};
    edges_.clear();
    if (weighted_) {
      pass_ = 0;
      Walk(1.0);
    }
    pass_ = 1;
    Walk(1.0);
    Reference self;
    self.found = true;
    self.nodes = {source};
    self.product = 1;
    best_[source] = self;
    return best_;
  }

 private:
  void Offer(uint64_t from, uint64_t to, const PathEdge& e) {
    auto [it, inserted] = links_[from].try_emplace(to, e);
    if (!inserted && Better(e, it->second)) it->second = e;
  }

  void Walk(double product) {
    const uint64_t at = path_.back();
    if (path_.size() > 1) Record(at, product);
    if (static_cast<int>(path_.size()) > max_hops_) return;
    auto it = links_.find(at);
    if (it == links_.end()) return;
    for (const auto& [to, edge] : it->second) {
      if (std::find(path_.begin(), path_.end(), to) != path_.end()) continue;
      path_.push_back(to);
      edges_.push_back(edge);
      Walk(product * edge.weight);
      path_.pop_back();
      edges_.pop_back();
    }
  }

  void Record(uint64_t at, double product) {
    if (pass_ == 0) {
      auto [it, inserted] = top_.try_emplace(at, product);
      if (!inserted) it->second = std::max(it->second, product);
      return;
    }
    // Products within a relative 1e-12 of the best are ties: the weights
    // include values whose products are equal as real numbers but rounded
    // differently in double.
    if (weighted_ && product < top_[at] * (1 - 1e-12)) return;
    Reference& best = best_[at];
    if (best.found) {
      if (path_.size() > best.nodes.size()) return;
      if (path_.size() == best.nodes.size() && path_ >= best.nodes) return;
    }
    best.found = true;
    best.nodes = path_;
    best.edges = edges_;
    best.product = product;
  }

  bool weighted_;
  std::map<uint64_t, std::map<uint64_t, PathEdge>> links_;
  int max_hops_ = 0;
  int pass_ = 0;
  std::map<uint64_t, double> top_;
  std::map<uint64_t, Reference> best_;
  Nodes path_;
  std::vector<PathEdge> edges_;
};

TEST_CASE("random small graphs agree with exhaustive enumeration") {
  std::mt19937_64 rng(20240611);
  const float kWeights[] = {1.0f, 0.5f, 0.25f, 0.75f, 0.125f,
                            0.9f, 0.6f, 0.3f,  0.0f};
  int compared = 0;
  int found = 0;
  for (int seed = 0; seed < 400; ++seed) {
    const int n = 6 + static_cast<int>(rng() % 7);
    // Node numbers unrelated to the order edges are added in, some large.
    Nodes ids;
    while (static_cast<int>(ids.size()) < n) {
      const uint64_t id = rng() % 3 == 0 ? rng() : rng() % 64;
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    const bool both = seed % 2 == 1;
    TestGraph graph(both);
    const int m = n + static_cast<int>(rng() % static_cast<uint64_t>(n + 1));
    for (int i = 0; i < m; ++i) {
      const uint64_t s = ids[rng() % ids.size()];
      const uint64_t t = ids[rng() % ids.size()];
      const int repeats = rng() % 8 == 0 ? 2 : 1;
      for (int r = 0; r < repeats; ++r) {
        // Separate statements: argument evaluation order is unspecified,
        // and the graphs must not depend on the compiler.
        const float weight = kWeights[rng() % std::size(kWeights)];
        graph.Add(s, t, weight, static_cast<uint8_t>(rng() % 3));
      }
    }
    graph.Scramble(&rng);
    Nodes targets = ids;
    targets.push_back(ids.back() + 1000);  // not in the graph
    for (bool weighted : kModes) {
      Exhaustive reference(graph, weighted);
      for (int q = 0; q < 3; ++q) {
        const uint64_t source = targets[rng() % targets.size()];
        const int max_hops = 1 + static_cast<int>(rng() % 16);
        std::map<uint64_t, Reference> best = reference.From(source, max_hops);
        for (uint64_t target : targets) {
          CAPTURE(seed);
          CAPTURE(both);
          CAPTURE(weighted);
          CAPTURE(source);
          CAPTURE(target);
          CAPTURE(max_hops);
          const Reference& want = best[target];
          PathResult got = graph.Path(source, target, max_hops, weighted);
          ++compared;
          REQUIRE(got.found == want.found);
          if (!got.found) continue;
          ++found;
          CHECK(got.nodes == want.nodes);
          REQUIRE(got.edges.size() == want.edges.size());
          for (size_t i = 0; i < got.edges.size(); ++i) {
            CHECK_MESSAGE(SameEdge(got.edges[i], want.edges[i]),
                          (Show(got.edges[i]) + " vs " + Show(want.edges[i])));
          }
          CHECK(got.total_weight == want.product);
        }
      }
    }
  }
  // The comparison must not pass vacuously.
  CHECK(compared > 10000);
  CHECK(found > compared / 3);
}

TEST_CASE("weighted: heavy ties on random graphs agree with enumeration") {
  // Weights of 1 and powers of two make many paths tie exactly, so the
  // answer hangs on the tie rules wherever the two sides of the search
  // meet.
  std::mt19937_64 rng(99);
  const float kWeights[] = {1.0f, 1.0f, 0.5f, 0.25f};
  int compared = 0;
  int found = 0;
  for (int seed = 0; seed < 300; ++seed) {
    const int n = 5 + static_cast<int>(rng() % 8);
    Nodes ids;
    while (static_cast<int>(ids.size()) < n) {
      const uint64_t id = rng() % 40;
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    const bool both = seed % 2 == 0;
    TestGraph graph(both);
    const int m = n + static_cast<int>(rng() % static_cast<uint64_t>(2 * n));
    for (int i = 0; i < m; ++i) {
      const uint64_t s = ids[rng() % ids.size()];
      const uint64_t t = ids[rng() % ids.size()];
      const float weight = kWeights[rng() % std::size(kWeights)];
      graph.Add(s, t, weight, static_cast<uint8_t>(rng() % 2));
    }
    graph.Scramble(&rng);
    Exhaustive reference(graph, /*weighted=*/true);
    for (int q = 0; q < 3; ++q) {
      const uint64_t source = ids[rng() % ids.size()];
      const int max_hops = 1 + static_cast<int>(rng() % 8);
      std::map<uint64_t, Reference> best = reference.From(source, max_hops);
      for (uint64_t target : ids) {
        CAPTURE(seed);
        CAPTURE(source);
        CAPTURE(target);
        CAPTURE(max_hops);
        const Reference& want = best[target];
        PathResult got = graph.Path(source, target, max_hops, true);
        ++compared;
        REQUIRE(got.found == want.found);
        if (!got.found) continue;
        ++found;
        CHECK(got.nodes == want.nodes);
        REQUIRE(got.edges.size() == want.edges.size());
        for (size_t i = 0; i < got.edges.size(); ++i) {
          CHECK_MESSAGE(SameEdge(got.edges[i], want.edges[i]),
                        (Show(got.edges[i]) + " vs " + Show(want.edges[i])));
        }
        CHECK(got.total_weight == want.product);
      }
    }
  }
  CHECK(compared > 3000);
  CHECK(found > compared / 3);
}

// ---------------------------------------------------------------------------
// A large random graph, against independent whole-graph searches.

class LargeGraph {
 public:
  LargeGraph(uint64_t nodes, int degree, std::mt19937_64* rng)
      : out_(nodes), in_(nodes) {
    const float kWeights[] = {1.0f, 0.9f, 0.8f, 0.75f, 0.6f, 0.5f, 0.3f, 0.1f};
    for (uint64_t s = 0; s < nodes; ++s) {
      for (int i = 0; i < degree; ++i) {
        const uint64_t target = (*rng)() % nodes;
        const float weight = kWeights[(*rng)() % std::size(kWeights)];
        const PathEdge e =
            E(s, target, weight, static_cast<uint8_t>((*rng)() % 4));
        out_[e.source].push_back(e);
        in_[e.target].push_back(e);
      }
    }
  }

  // reversed: the graph with every edge turned around, served by swapping
  // the two sides (the edges themselves stay as stored).
  absl::StatusOr<PathResult> Find(uint64_t source, uint64_t target,
                                  int max_hops, bool weighted, bool reversed,
                                  bool both = false) const {
    PathQuery query;
    query.source = source;
    query.target = target;
    query.max_hops = max_hops;
    query.weighted = weighted;
    return FindPath(query, [&](uint64_t node, bool backward, PathEmit emit) {
      if (node >= out_.size()) return absl::OkStatus();
      if (both || backward != reversed) {
        for (const PathEdge& e : in_[node]) emit(e);
      }
      if (both || backward == reversed) {
        for (const PathEdge& e : out_[node]) emit(e);
      }
      return absl::OkStatus();
    });
  }

  // Hop distances from `from`, along edges or against them.
  std::vector<int> Distances(uint64_t from, bool against) const {
    std::vector<int> distance(out_.size(), -1);
    std::deque<uint64_t> queue{from};
    distance[from] = 0;
    while (!queue.empty()) {
      const uint64_t at = queue.front();
      queue.pop_front();
      for (const PathEdge& e : against ? in_[at] : out_[at]) {
        const uint64_t next = against ? e.source : e.target;
        if (distance[next] < 0) {
          distance[next] = distance[at] + 1;
          queue.push_back(next);
        }
      }
    }
    return distance;
  }

  // The lexicographically smallest shortest path, chosen greedily from the
  // source with the distances to the target.
  Nodes SmallestShortest(uint64_t source, uint64_t target) const {
    const std::vector<int> to_target = Distances(target, true);
    Nodes path{source};
    if (to_target[source] < 0) return {};
    for (uint64_t at = source; at != target;) {
      uint64_t next = std::numeric_limits<uint64_t>::max();
      for (const PathEdge& e : out_[at]) {
        if (e.target != at && to_target[e.target] == to_target[at] - 1) {
          next = std::min(next, e.target);
        }
      }
      path.push_back(next);
      at = next;
    }
    return path;
  }

  // For each hop count up to max_hops, the largest product of a walk of
  // exactly that many hops to `target` (walks suffice: with weights <= 1 a
  // cycle never helps).
  std::vector<double> BestProducts(uint64_t source, uint64_t target,
                                   int max_hops) const {
    std::vector<double> now(out_.size(), 0);
    now[source] = 1;
    std::vector<double> best{source == target ? 1.0 : 0.0};
    for (int h = 1; h <= max_hops; ++h) {
      std::vector<double> next(out_.size(), 0);
      for (uint64_t s = 0; s < out_.size(); ++s) {
        if (now[s] == 0) continue;
        for (const PathEdge& e : out_[s]) {
          if (e.target == s) continue;
          next[e.target] = std::max(next[e.target], now[s] * e.weight);
        }
      }
      now.swap(next);
      best.push_back(now[target]);
    }
    return best;
  }

 private:
  std::vector<std::vector<PathEdge>> out_;
  std::vector<std::vector<PathEdge>> in_;
};

bool Close(double a, double b) {
  return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b));
}

TEST_CASE("a large random graph agrees with whole-graph searches") {
  std::mt19937_64 rng(7);
  const uint64_t kNodes = 100000;
  LargeGraph graph(kNodes, 10, &rng);
  int found = 0;
  int found_weighted = 0;
  for (int q = 0; q < 6; ++q) {
    const uint64_t source = rng() % kNodes;
    const uint64_t target = rng() % kNodes;
    CAPTURE(source);
    CAPTURE(target);

    // Unweighted: the hop count from a plain breadth-first search and the
    // node sequence from a greedy walk over its distances.
    const int distance = graph.Distances(source, false)[target];
    for (int max_hops : {3, 6}) {
      CAPTURE(max_hops);
      absl::StatusOr<PathResult> forward =
          graph.Find(source, target, max_hops, false, false);
      REQUIRE(forward.ok());
      const bool reachable = distance >= 0 && distance <= max_hops;
      REQUIRE(forward->found == reachable);
      absl::StatusOr<PathResult> reverse =
          graph.Find(target, source, max_hops, false, true);
      REQUIRE(reverse.ok());
      CHECK(reverse->found == reachable);
      if (!reachable) continue;
      ++found;
      CHECK(static_cast<int>(forward->edges.size()) == distance);
      CHECK(forward->nodes == graph.SmallestShortest(source, target));
      CHECK(reverse->edges.size() == forward->edges.size());
      // The reversed query crosses the same stored edges backwards.
      for (size_t i = 0; i + 1 < reverse->nodes.size(); ++i) {
        CHECK(reverse->edges[i].source == reverse->nodes[i + 1]);
        CHECK(reverse->edges[i].target == reverse->nodes[i]);
      }
    }

    // "both": either way round gives the same length, and the same product
    // when weighted.
    absl::StatusOr<PathResult> there =
        graph.Find(source, target, 4, false, false, true);
    absl::StatusOr<PathResult> back =
        graph.Find(target, source, 4, false, false, true);
    REQUIRE(there.ok());
    REQUIRE(back.ok());
    CHECK(there->found == back->found);
    CHECK(there->edges.size() == back->edges.size());
    if (q < 2) {
      there = graph.Find(source, target, 4, true, false, true);
      back = graph.Find(target, source, 4, true, false, true);
      REQUIRE(there.ok());
      REQUIRE(back.ok());
      CHECK(there->found == back->found);
      CHECK(Close(there->total_weight, back->total_weight));
      CHECK(there->edges.size() == back->edges.size());
    }

    // Weighted (fewer queries: a best-product search explores every state
    // whose product beats the answer): the product from a layered search
    // over all walks, and the fewest hops among the products that tie
    // with it.
    if (q >= 3) continue;
    const int kMaxHops = 6;
    const std::vector<double> products =
        graph.BestProducts(source, target, kMaxHops);
    const double top = *std::max_element(products.begin(), products.end());
    absl::StatusOr<PathResult> forward =
        graph.Find(source, target, kMaxHops, true, false);
    absl::StatusOr<PathResult> reverse =
        graph.Find(target, source, kMaxHops, true, true);
    REQUIRE(forward.ok());
    REQUIRE(reverse.ok());
    REQUIRE(forward->found == (top > 0));
    CHECK(reverse->found == forward->found);
    if (top == 0) continue;
    ++found_weighted;
    size_t hops = 0;
    while (!Close(products[hops], top)) ++hops;
    CHECK(Close(forward->total_weight, top));
    CHECK(forward->edges.size() == hops);
    CHECK(Close(reverse->total_weight, top));
    CHECK(reverse->edges.size() == hops);
  }
  CHECK(found_weighted > 0);
  CHECK(found > 0);
}

TEST_CASE("searches share no state: concurrent runs give the same answers") {
  std::mt19937_64 rng(11);
  const LargeGraph graph(3000, 4, &rng);
  struct Query {
    uint64_t source;
    uint64_t target;
    bool weighted;
  };
  std::vector<Query> queries;
  for (int i = 0; i < 40; ++i) {
    queries.push_back({rng() % 3000, rng() % 3000, i % 2 == 1});
  }
  auto run_all = [&] {
    std::vector<PathResult> results;
    for (const Query& q : queries) {
      absl::StatusOr<PathResult> result =
          graph.Find(q.source, q.target, 8, q.weighted, false);
      results.push_back(result.ok() ? *result : PathResult{});
    }
    return results;
  };
  const std::vector<PathResult> alone = run_all();
  std::vector<std::vector<PathResult>> parallel(4);
  std::vector<std::thread> threads;
  for (auto& results : parallel) {
    threads.emplace_back([&results, &run_all] { results = run_all(); });
  }
  for (std::thread& thread : threads) thread.join();
  int found = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    found += alone[i].found ? 1 : 0;
    for (const auto& results : parallel) {
      CHECK(results[i].found == alone[i].found);
      CHECK(results[i].nodes == alone[i].nodes);
      CHECK(results[i].total_weight == alone[i].total_weight);
    }
  }
  CHECK(found > 10);
}

}  // namespace
}  // namespace ctxkit::internal
