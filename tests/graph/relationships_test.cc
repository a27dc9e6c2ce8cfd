// ContextGraph's relationships beyond context_graph_test.cc: the batch
// AddRelationships (order, upserts within a batch, all-or-nothing, errors
// naming edges[i]), and the graph.in values that copy an edge's record
// (kept current by every write; the filter fields alone or an empty value,
// as older builds wrote them, still read, the rest through graph.out).

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/base/key_codec.h"
#include "lib/base/record_codec.h"
#include "lib/graph/graph_records.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::Contains;
using testing::Must;

struct Graph : testing::GraphFixture {
  void Add(const std::string& id) {
    Must(graph->AddMessage(id, {.role = MessageRole::kUser, .content = id}));
  }

  std::vector<std::string> Related(const std::string& id,
                                   RelatedOptions options = {}) {
    return Must(graph->Related(id, options)).context_ids;
  }

  // Sets every graph.in value to `value` behind the graph's back.
  void OverwriteInValues(const std::string& value) {
    Database in = Must(store->OpenDatabase("graph.in"));
    REQUIRE(store
                ->Update([&](WriteTransaction& txn) -> Status {
                  std::vector<std::string> keys;
                  {
                    Cursor c = Must(txn.NewCursor(in));
                    for (c.SeekToFirst(); c.Valid(); c.Next()) {
                      keys.emplace_back(c.key());
                    }
                  }
                  for (const std::string& k : keys) {
                    Status s = txn.Put(in, k, value);
                    if (!s.ok()) return s;
                  }
                  return Status();
                })
                .ok());
  }

  // Rewrites every graph.in value as graph format 3 wrote it: version 1 and
  // the edge's filter fields only, encoded here independently of the
  // library's decoder.
  void InValuesAsFormat3() {
    Database in = Must(store->OpenDatabase("graph.in"));
    Database out = Must(store->OpenDatabase("graph.out"));
    REQUIRE(store
                ->Update([&](WriteTransaction& txn) -> Status {
                  std::vector<std::pair<std::string, std::string>> values;
                  {
                    Cursor c = Must(txn.NewCursor(in));
                    for (c.SeekToFirst(); c.Valid(); c.Next()) {
                      const std::string_view key = c.key();
                      REQUIRE(key.size() == internal::kEdgeKeySize);
                      const uint64_t target =
                          internal::ReadBigEndian64(key.data());
                      const auto type = static_cast<uint8_t>(key[8]);
                      const uint64_t source =
                          internal::ReadBigEndian64(key.data() + 9);
                      absl::StatusOr<internal::EdgeRecord> edge =
                          internal::DecodeEdge(Must(txn.Get(
                              out, internal::EdgeKey(source, type, target))));
                      REQUIRE(edge.ok());
                      const internal::EdgeRecord& r = *edge;
                      std::string v(1, '\1');
                      internal::AppendBigEndian64(
                          &v, std::bit_cast<uint64_t>(r.weight));
                      internal::PutSignedVarint(&v, r.valid_at);
                      internal::PutSignedVarint(&v, r.invalid_at);
                      internal::PutSignedVarint(&v, r.expired_at);
                      internal::PutVarint(&v, r.serial);
                      internal::PutVarint(&v, r.flags);
                      values.emplace_back(key, std::move(v));
                    }
                  }
                  for (const auto& [k, v] : values) {
                    Status s = txn.Put(in, k, v);
                    if (!s.ok()) return s;
                  }
                  return Status();
                })
                .ok());
  }
};

// How the graph.in values of CheckInEdgeQueries were written.
enum class InValues { kAsWritten, kFormat3, kEmptied };

using testing::CheckError;

TEST_CASE("a batch adds in order, upserts within itself, creates ends") {
  Graph g;
  for (const char* id : {"a", "b", "c"}) g.Add(id);
  std::vector<RelationshipUpsert> added = Must(g.graph->AddRelationships({
      {.source = "a", .target = "c", .type = "references", .weight = 0.5},
      {.source = "b", .target = "a", .type = "continues"},
      {.source = "a", .target = "b", .type = "similar", .weight = 0.25},
      // The first edge again: an update, keeping its place.
      {.source = "a",
       .target = "c",
       .type = "references",
       .weight = 0.75,
       .metadata = R"({"k":1})"},
      // A new context, then an edge that needs it to exist.
      {.source = "a",
       .target = "fresh",
       .type = "child",
       .create_missing = true},
      {.source = "fresh", .target = "b", .type = "references"},
  }));
  REQUIRE(added.size() == 6);
  CHECK(added[0].created);
  CHECK(added[1].created);
  CHECK_FALSE(added[3].created);
  CHECK(added[3].relationship.weight == 0.75);
  CHECK(added[3].relationship.metadata == R"({"k":1})");
  CHECK(added[4].created);
  CHECK(added[5].relationship.source == "fresh");
  CHECK(g.Related("a") == std::vector<std::string>{"c", "b", "fresh"});
  RelatedResult incoming =
      Must(g.graph->Related("b", {.direction = EdgeDirection::kIncoming}));
  REQUIRE(incoming.edges.size() == 2);
  CHECK(incoming.edges[0].relationship.source == "a");
  CHECK(incoming.edges[0].relationship.weight == 0.25);
  CHECK(incoming.edges[1].relationship.source == "fresh");
  GraphVerifyReport report = Must(g.graph->Verify());
  CHECK(report.ok);
  CHECK(report.edges == 5);
  CHECK(report.contexts == 4);
}

TEST_CASE("a batch with one bad edge names it and writes nothing") {
  Graph g;
  g.Add("a");
  g.Add("b");
  auto add = [&](std::vector<NewRelationship> edges) {
    return g.graph->AddRelationships(edges).status();
  };
  const NewRelationship good = {
      .source = "a", .target = "b", .type = "similar"};
  CheckError(
      add({good,
           {.source = "a", .target = "b", .type = "similar", .weight = 2}}),
      StatusCode::kInvalidArgument, "edges[1].weight is 2");
  CheckError(add({good, good, {.source = "a", .target = "b", .type = "kin"}}),
             StatusCode::kInvalidArgument,
             "edges[2].relationshipType is 'kin'");
  CheckError(add({{.source = "", .target = "b", .type = "similar"}}),
             StatusCode::kInvalidArgument, "edges[0].source");
  CheckError(add({good, {.source = "b", .target = "b", .type = "similar"}}),
             StatusCode::kInvalidArgument, "edges[1].target is the source");
  CheckError(add({good,
                  {.source = "a",
                   .target = "b",
                   .type = "similar",
                   .metadata = "[]"}}),
             StatusCode::kInvalidArgument, "edges[1].metadata");
  // Found only inside the write: the edges before it were written and are
  // rolled back.
  CheckError(add({good, {.source = "a", .target = "zz", .type = "similar"}}),
             StatusCode::kNotFound, "edges[1].target 'zz' is not a context");
  CheckError(
      add({good,
           {.source = "a", .target = "b", .type = "similar", .invalid_at = 1}}),
      StatusCode::kInvalidArgument,
      "edges[1].invalidAt (1) must not be before validAt");
  CheckError(add({}), StatusCode::kInvalidArgument, "edges has 0 entries");
  CheckError(add(std::vector<NewRelationship>(100001, good)),
             StatusCode::kInvalidArgument, "edges has 100001 entries");
  CHECK(Must(g.graph->Related("a")).total == 0);
  CHECK(Must(g.graph->Verify()).edges == 0);
  // A single AddRelationship's errors are not prefixed.
  CheckError(
      g.graph
          ->AddRelationship(
              {.source = "a", .target = "b", .type = "similar", .weight = 2})
          .status(),
      StatusCode::kInvalidArgument, "weight is 2");
}

// The queries that read in-edges, over a graph whose in-values are as
// `values` says: as written, as graph format 3 wrote them, or emptied as
// format 1 left them.
void CheckInEdgeQueries(InValues values) {
  CAPTURE(static_cast<int>(values));
  Graph g;
  for (const char* id : {"a", "b", "c", "d"}) g.Add(id);
  const int64_t t0 = g.clock.now->load();
  Must(g.graph->AddRelationships({
      {.source = "b",
       .target = "a",
       .type = "references",
       .weight = 0.9,
       .metadata = R"({"why":"cites"})"},
      {.source = "c", .target = "a", .type = "references", .weight = 0.3},
      {.source = "d",
       .target = "a",
       .type = "similar",
       .weight = 0.6,
       .valid_at = t0 + 100},
      {.source = "c", .target = "b", .type = "continues", .weight = 0.5},
  }));
  Must(g.graph->InvalidateRelationship("c", "a", "references"));
  if (values == InValues::kEmptied) g.OverwriteInValues("");
  if (values == InValues::kFormat3) g.InValuesAsFormat3();
  if (values != InValues::kAsWritten) g.CheckVerified();

  const RelatedOptions in = {.direction = EdgeDirection::kIncoming};
  // c -> a is invalidated, d -> a not yet valid.
  RelatedResult now = Must(g.graph->Related("a", in));
  REQUIRE(now.edges.size() == 1);
  CHECK(now.edges[0].context_id == "b");
  CHECK(now.edges[0].relationship.metadata == R"({"why":"cites"})");
  CHECK(now.edges[0].relationship.weight == doctest::Approx(0.9));
  CHECK(g.Related("a",
                  {.direction = EdgeDirection::kIncoming, .as_of = t0 + 100}) ==
        std::vector<std::string>{"b", "d"});
  CHECK(g.Related("a", {.direction = EdgeDirection::kIncoming,
                        .include_expired = true}) ==
        std::vector<std::string>{"b", "c", "d"});
  CHECK(g.Related("a",
                  {.direction = EdgeDirection::kIncoming, .min_weight = 0.95})
            .empty());

  // Weighted paths from a cross in-edges both ways: a <- b <- c (0.9 * 0.5)
  // beats nothing, since c -> a is expired.
  PathResult path = Must(g.graph->FindPath("a", "c", {.weighted = true}));
  CHECK(path.path == std::vector<std::string>{"a", "b", "c"});
  CHECK(path.total_weight == doctest::Approx(0.45));
  PathResult with_expired = Must(
      g.graph->FindPath("a", "c", {.weighted = true, .include_expired = true}));
  CHECK(with_expired.path == std::vector<std::string>{"a", "b", "c"});
  CHECK(Must(g.graph->FindPath("a", "c", {.include_expired = true})).path ==
        std::vector<std::string>{"a", "c"});

  // Asserted again: current again, whether the in-value was written now or
  // not.
  Must(g.graph->AddRelationship(
      {.source = "c", .target = "a", .type = "references", .weight = 1}));
  CHECK(g.Related("a", in) == std::vector<std::string>{"b", "c"});
  CHECK(Must(g.graph->FindPath("a", "c", {.weighted = true})).path ==
        std::vector<std::string>{"a", "c"});
  g.CheckVerified();
}

TEST_CASE("in-edge values copy the record; older layouts still work") {
  CheckInEdgeQueries(InValues::kAsWritten);
  CheckInEdgeQueries(InValues::kFormat3);
  CheckInEdgeQueries(InValues::kEmptied);
}

TEST_CASE("an in-edge copy that disagrees with graph.out fails Verify") {
  Graph g;
  g.Add("a");
  g.Add("b");
  Must(g.graph->AddRelationships({
      {.source = "a",
       .target = "b",
       .type = "similar",
       .metadata = R"({"k":1})"},
      {.source = "b",
       .target = "a",
       .type = "similar",
       .metadata = R"({"k":2})"},
  }));
  g.CheckVerified();
  // Each in-edge given the other's copy: well formed, but not its record.
  Database in = Must(g.store->OpenDatabase("graph.in"));
  REQUIRE(g.store
              ->Update([&](WriteTransaction& txn) -> Status {
                std::vector<std::pair<std::string, std::string>> entries;
                {
                  Cursor c = Must(txn.NewCursor(in));
                  for (c.SeekToFirst(); c.Valid(); c.Next()) {
                    entries.emplace_back(c.key(), c.value());
                  }
                }
                REQUIRE(entries.size() == 2);
                REQUIRE(entries[0].second != entries[1].second);
                Status s = txn.Put(in, entries[0].first, entries[1].second);
                if (!s.ok()) return s;
                return txn.Put(in, entries[1].first, entries[0].second);
              })
              .ok());
  GraphVerifyReport report = Must(g.graph->Verify());
  CHECK_FALSE(report.ok);
  CHECK(Contains(report.problems.front(), "disagrees with its out-edge"));
}

TEST_CASE("a damaged in-edge value is DATA_LOSS, not a guess") {
  Graph g;
  g.Add("a");
  g.Add("b");
  Must(g.graph->AddRelationships(
      {{.source = "a", .target = "b", .type = "similar"}}));
  SUBCASE("unknown version") { g.OverwriteInValues(std::string(1, '\x07')); }
  SUBCASE("truncated") { g.OverwriteInValues(std::string(1, '\x01')); }
  SUBCASE("a copy cut short") {
    g.OverwriteInValues(std::string("\x02\x01\x3f\xf0", 4));
  }
  CheckError(
      g.graph->Related("b", {.direction = EdgeDirection::kIncoming}).status(),
      StatusCode::kDataLoss, "in-edge");
  CheckError(g.graph->FindPath("b", "a", {.weighted = true}).status(),
             StatusCode::kDataLoss, "in-edge");
  // The out side does not read it.
  CHECK(g.Related("a") == std::vector<std::string>{"b"});
}

}  // namespace
}  // namespace ctxkit
