// ContextGraph: contexts over conversations, messages with importance and
// tags, relationships with their two times, the related query, paths,
// deletion both ways, and Verify against damage done behind its back.

#include "ctxkit/context_graph.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/store.h"
#include "ctxkit/store_check.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::Contains;
using testing::Must;
using testing::TempDir;

struct Graph : testing::GraphFixture {
  AddGraphMessagesResult Add(const std::string& id, const std::string& content,
                             const std::string& importance = "",
                             std::vector<std::string> tags = {}) {
    return Must(graph->AddMessage(id, {.role = MessageRole::kUser,
                                       .content = content,
                                       .importance = importance,
                                       .tags = std::move(tags)}));
  }

  void Relate(const std::string& source, const std::string& target,
              const std::string& type, double weight = 0.8) {
    Must(graph->AddRelationship(
        {.source = source, .target = target, .type = type, .weight = weight}));
  }
};

using testing::CheckError;

std::vector<std::string> RelatedIds(Graph& g, const std::string& id,
                                    RelatedOptions options = {}) {
  return Must(g.graph->Related(id, options)).context_ids;
}

TEST_CASE(
    "a context is created by its first message and backed by a "
    "conversation") {
  Graph g;
  const std::string text = "Move the login flow to OAuth device codes";
  AddGraphMessagesResult first = g.Add("auth-refactor", text, "HIGH", {"auth"});
  CHECK(first.created);
  CHECK(first.context_id == "auth-refactor");
  REQUIRE(first.messages.size() == 1);
  CHECK(first.messages[0].seq == 1);
  CHECK(first.messages[0].importance == Importance::kHigh);
  CHECK(first.messages[0].tokens ==
        Must(CountTokens(std::string(kDefaultModel), text)).tokens);

  ConversationDetail conv = Must(g.convs->Get(first.conversation_id));
  CHECK(conv.conversation.title == "auth-refactor");
  CHECK(conv.conversation.metadata == R"({"context_id":"auth-refactor"})");
  CHECK(conv.conversation.model == kDefaultModel);
  REQUIRE(conv.messages.size() == 1);
  CHECK(conv.messages[0].content == text);
  CHECK(conv.messages[0].id == first.messages[0].message_id);

  g.clock.Advance(1000);
  AddGraphMessagesResult second = g.Add("auth-refactor", "ok", "", {});
  CHECK_FALSE(second.created);
  CHECK(second.conversation_id == first.conversation_id);
  CHECK(second.messages[0].seq == 2);
  CHECK(second.messages[0].importance == Importance::kMedium);

  ContextDetail detail = Must(g.graph->Retrieve("auth-refactor"));
  CHECK(detail.context.conversation_id == first.conversation_id);
  CHECK(detail.context.message_count == 2);
  CHECK(detail.context.total_tokens ==
        first.messages[0].tokens + second.messages[0].tokens);
  CHECK(detail.messages_since_summary == 2);
  CHECK(detail.tokens_since_summary == detail.context.total_tokens);
  CHECK(detail.high_since_summary == 1);
  CHECK(detail.context.last_activity_at == detail.context.created_at + 1000);
  REQUIRE(detail.messages.size() == 2);
  CHECK(detail.messages[0].content == text);
  CHECK(detail.messages[0].tags == std::vector<std::string>{"auth"});
  CHECK(ImportanceValue(detail.messages[0].importance) == 0.75);
  CHECK(ImportanceName(detail.messages[0].importance) == "high");
  CHECK(detail.messages[1].timestamp == detail.context.created_at + 1000);
  g.CheckVerified();
}

// The README's example, as written there.
TEST_CASE("the README example") {
  TempDir dir;
  auto store = Store::Open(dir.Sub("s"));
  REQUIRE(store.ok());
  auto convs = ctxkit::ConversationStore::Open(**store);
  auto graph = ctxkit::ContextGraph::Open(**store, **convs);
  auto added = (*graph)->AddMessage(
      "auth-refactor",
      {.content = "Move login to OAuth", .importance = "HIGH"});
  added =
      (*graph)->AddMessage("session-store", {.content = "Sessions in Redis"});
  auto edge =
      (*graph)->AddRelationship({.source = "auth-refactor",
                                 .target = "session-store",
                                 .type = "references",  // similar, continues,
                                 .weight = 0.9});  // references, parent, child
  auto related = (*graph)->Related("auth-refactor");  // {"session-store"}
  auto path = (*graph)->FindPath("session-store", "auth-refactor");
  auto ended = (*graph)->InvalidateRelationship(
      "auth-refactor", "session-store", "references");  // kept, not current
  auto similar = (*graph)->FindSimilar("oauth login");  // auth-refactor first
  auto summary = (*graph)->Summarize("auth-refactor");  // version 1
  auto picture = (*graph)->Visualize("auth-refactor", {.format = "mermaid"});

  REQUIRE(added.ok());
  REQUIRE(edge.ok());
  REQUIRE(ended.ok());
  REQUIRE(related.ok());
  CHECK(related->context_ids == std::vector<std::string>{"session-store"});
  REQUIRE(path.ok());
  CHECK(path->path ==
        std::vector<std::string>{"session-store", "auth-refactor"});
  CHECK(Must((*graph)->Related("auth-refactor")).context_ids.empty());
  CHECK(Must((*graph)->Related("auth-refactor", {.include_expired = true}))
            .edges[0]
            .relationship.weight == 0.9);
  REQUIRE(similar.ok());
  REQUIRE(!similar->contexts.empty());
  CHECK(similar->contexts[0].context_id == "auth-refactor");
  REQUIRE(summary.ok());
  CHECK(summary->version == 1);
  REQUIRE(picture.ok());
  CHECK(picture->starts_with("graph LR"));
}

TEST_CASE("ids are byte-exact, of any length up to 1024 bytes") {
  Graph g;
  const std::string nfc = "caf\xC3\xA9";   // é precomposed
  const std::string nfd = "cafe\xCC\x81";  // e + combining acute
  const std::string long_id(1024, 'x');    // beyond LMDB's 511-byte keys
  const std::vector<std::string> ids = {"a/b", "a:b", "a_b", nfc, nfd, long_id};
  for (const std::string& id : ids) g.Add(id, "message for " + id);
  for (const std::string& id : ids) {
    ContextDetail d = Must(g.graph->Retrieve(id));
    CHECK(d.context.context_id == id);
    REQUIRE(d.messages.size() == 1);
    CHECK(d.messages[0].content == "message for " + id);
  }
  CHECK(Must(g.graph->ListContexts(100)).contexts.size() == ids.size());

  CheckError(
      g.graph->AddMessage(std::string(1025, 'x'), {.content = "m"}).status(),
      StatusCode::kInvalidArgument, "contextId");
  CheckError(
      g.graph->AddMessage(std::string("a\0b", 3), {.content = "m"}).status(),
      StatusCode::kInvalidArgument, "NUL");
  CheckError(g.graph->AddMessage("\xFF", {.content = "m"}).status(),
             StatusCode::kInvalidArgument, "contextId is not valid UTF-8");
  CheckError(g.graph->AddMessage("", {.content = "m"}).status(),
             StatusCode::kInvalidArgument, "contextId must not be empty");
  CheckError(g.graph->Retrieve("unknown").status(), StatusCode::kNotFound,
             "contextId 'unknown' is not a context");
  g.CheckVerified();
}

TEST_CASE("importance and tags: checked, matched in any case, de-duplicated") {
  Graph g;
  CHECK(g.Add("c", "m", "Critical").messages[0].importance ==
        Importance::kCritical);
  CHECK(g.Add("c", "m", "low").messages[0].importance == Importance::kLow);
  CHECK(g.Add("c", "m", "", {"b", "a", "b", "c", "a"}).messages[0].tags ==
        std::vector<std::string>{"b", "a", "c"});

  CheckError(g.graph->AddMessage("c", {.content = "m", .importance = "urgent"})
                 .status(),
             StatusCode::kInvalidArgument,
             "importance is 'urgent'; it must be low, medium, high or "
             "critical");
  CheckError(
      g.graph->AddMessage("c", {.content = "m", .tags = {"ok", ""}}).status(),
      StatusCode::kInvalidArgument, "tags[1] must not be empty");
  CheckError(
      g.graph
          ->AddMessage("c", {.content = "m", .tags = {std::string(129, 't')}})
          .status(),
      StatusCode::kInvalidArgument, "tags[0] is 129 bytes");
  CheckError(g.graph
                 ->AddMessage("c", {.content = "m",
                                    .tags = std::vector<std::string>(65, "t")})
                 .status(),
             StatusCode::kInvalidArgument, "tags holds 65 tags");
  // In a batch, the error names the message; nothing of the batch is kept.
  const Status batch =
      g.graph
          ->AddMessages("new-context", {{.content = "fine"},
                                        {.content = "bad", .importance = "x"}})
          .status();
  CheckError(batch, StatusCode::kInvalidArgument, "messages[1].importance");
  CheckError(
      g.graph->AddMessages("c", {{.content = "m", .importance = "x"}}).status(),
      StatusCode::kInvalidArgument, "messages[0].importance");
  CHECK(g.graph->Retrieve("new-context").status().code() ==
        StatusCode::kNotFound);
  CHECK(Must(g.graph->Retrieve("c")).context.message_count == 3);
  g.CheckVerified();
}

TEST_CASE("retrieve pages from the newest backwards") {
  Graph g;
  std::vector<GraphMessage> batch;
  for (int i = 1; i <= 10; ++i) {
    batch.push_back({.content = "message " + std::to_string(i)});
  }
  AddGraphMessagesResult added = Must(g.graph->AddMessages("paged", batch));
  REQUIRE(added.messages.size() == 10);
  CHECK(added.messages[9].seq == 10);

  ContextDetail newest = Must(g.graph->Retrieve("paged", {.limit = 3}));
  REQUIRE(newest.messages.size() == 3);
  CHECK(newest.messages[0].content == "message 8");
  CHECK(newest.messages[2].content == "message 10");
  ContextDetail before =
      Must(g.graph->Retrieve("paged", {.limit = 3, .before_seq = 8}));
  REQUIRE(before.messages.size() == 3);
  CHECK(before.messages[0].seq == 5);
  CHECK(before.messages[2].seq == 7);
  CHECK(Must(g.graph->Retrieve("paged", {.limit = 5, .before_seq = 3}))
            .messages.size() == 2);
  CheckError(g.graph->Retrieve("paged", {.limit = 0}).status(),
             StatusCode::kInvalidArgument, "limit");
}

TEST_CASE("relationships: upsert, merge, the related order and filters") {
  Graph g;
  for (const char* id : {"a", "b", "c", "d"}) g.Add(id, id);
  g.Relate("a", "c", "references");
  g.Relate("d", "a", "continues");
  g.Relate("a", "b", "similar", 0.4);
  g.Relate("b", "a", "references");

  // Outgoing first, then incoming, each in the order first added.
  CHECK(RelatedIds(g, "a") == std::vector<std::string>{"c", "b", "d"});
  RelatedResult all = Must(g.graph->Related("a"));
  REQUIRE(all.edges.size() == 4);
  CHECK(all.total == 4);
  CHECK(all.edges[0].relationship.target == "c");
  CHECK(all.edges[1].relationship.type == "similar");
  CHECK(all.edges[2].direction == EdgeDirection::kIncoming);
  CHECK(all.edges[2].relationship.source == "d");
  CHECK(all.edges[3].relationship.source == "b");
  CHECK(RelatedIds(g, "a", {.direction = EdgeDirection::kIncoming}) ==
        std::vector<std::string>{"d", "b"});
  CHECK(RelatedIds(g, "a", {.type = "references"}) ==
        std::vector<std::string>{"c", "b"});
  CHECK(RelatedIds(g, "a", {.min_weight = 0.5}) ==
        std::vector<std::string>{"c", "d", "b"});
  RelatedResult page = Must(g.graph->Related("a", {.limit = 2, .offset = 1}));
  CHECK(page.total == 4);
  CHECK(page.context_ids == std::vector<std::string>{"b", "d"});

  // An upsert keeps the edge's place and merges its metadata.
  g.clock.Advance(50);
  RelationshipUpsert first = Must(
      g.graph->AddRelationship({.source = "a",
                                .target = "c",
                                .type = "references",
                                .weight = 0.9,
                                .metadata = R"({"why":"imports","keep":1})"}));
  CHECK_FALSE(first.created);
  RelationshipUpsert again = Must(
      g.graph->AddRelationship({.source = "a",
                                .target = "c",
                                .type = "references",
                                .weight = 1,
                                .metadata = R"({"why":null,"more":true})"}));
  CHECK(again.relationship.metadata == R"({"keep":1,"more":true})");
  CHECK(again.relationship.weight == 1);
  CHECK(again.relationship.updated_at == again.relationship.created_at + 50);
  CHECK(RelatedIds(g, "a") == std::vector<std::string>{"c", "b", "d"});
  g.CheckVerified();
}

TEST_CASE("relationships: every bad field is named, and nothing is written") {
  Graph g;
  g.Add("a", "a");
  g.Add("b", "b");
  auto add = [&](NewRelationship e) {
    return g.graph->AddRelationship(e).status();
  };
  CheckError(add({.source = "a", .target = "zz", .type = "similar"}),
             StatusCode::kNotFound, "target 'zz' is not a context");
  CheckError(add({.source = "zz", .target = "a", .type = "similar"}),
             StatusCode::kNotFound, "source 'zz' is not a context");
  CheckError(add({.source = "a", .target = "a", .type = "similar"}),
             StatusCode::kInvalidArgument, "itself");
  CheckError(add({.source = "a", .target = "b", .type = "likes"}),
             StatusCode::kInvalidArgument,
             "relationshipType is 'likes'; it must be one of similar, "
             "continues, references, parent, child");
  CheckError(
      add({.source = "a", .target = "b", .type = "similar", .weight = 1.5}),
      StatusCode::kInvalidArgument, "weight is 1.5");
  CheckError(
      add({.source = "a", .target = "b", .type = "similar", .weight = -0.1}),
      StatusCode::kInvalidArgument, "weight");
  CheckError(
      add({.source = "a", .target = "b", .type = "similar", .metadata = "[1]"}),
      StatusCode::kInvalidArgument, "metadata");
  CheckError(add({.source = "a",
                  .target = "b",
                  .type = "similar",
                  .valid_at = 100,
                  .invalid_at = 99}),
             StatusCode::kInvalidArgument,
             "invalidAt (99) must not be before validAt (100)");
  CHECK(Must(g.graph->Related("a")).total == 0);
  CHECK(Must(g.graph->Verify()).edges == 0);

  // create_missing makes both ends, with their conversations.
  RelationshipUpsert made =
      Must(g.graph->AddRelationship({.source = "new-1",
                                     .target = "new-2",
                                     .type = "continues",
                                     .create_missing = true}));
  CHECK(made.created);
  CHECK(Must(g.graph->Retrieve("new-2")).context.message_count == 0);
  CHECK(RelatedIds(g, "new-2") == std::vector<std::string>{"new-1"});
  g.CheckVerified();
}

TEST_CASE("invalidation keeps the fact and hides it from the present") {
  Graph g;
  g.Add("a", "a");
  g.Add("b", "b");
  const int64_t t0 = g.clock.now->load();
  g.Relate("a", "b", "references");
  g.clock.Advance(1000);
  Relationship ended =
      Must(g.graph->InvalidateRelationship("a", "b", "references"));
  CHECK(ended.invalid_at == t0 + 1000);
  CHECK(ended.expired_at == t0 + 1000);
  CHECK(RelatedIds(g, "a").empty());
  CHECK(RelatedIds(g, "a", {.include_expired = true}) ==
        std::vector<std::string>{"b"});
  CheckError(g.graph->InvalidateRelationship("a", "b", "references").status(),
             StatusCode::kFailedPrecondition, "already invalidated");
  CheckError(g.graph->InvalidateRelationship("a", "b", "similar").status(),
             StatusCode::kNotFound,
             "there is no similar relationship from 'a' to 'b'");

  // A fact with a validity window: seen only inside it.
  g.Relate("b", "a", "continues");
  CheckError(
      g.graph->InvalidateRelationship("b", "a", "continues", t0).status(),
      StatusCode::kFailedPrecondition, "must not be before");
  Must(g.graph->AddRelationship({.source = "a",
                                 .target = "b",
                                 .type = "similar",
                                 .valid_at = t0 + 5000,
                                 .invalid_at = t0 + 9000}));
  CHECK(RelatedIds(g, "a", {.type = "similar"}).empty());  // now is t0+1000
  CHECK(RelatedIds(g, "a", {.type = "similar", .as_of = t0 + 5000}) ==
        std::vector<std::string>{"b"});
  CHECK(RelatedIds(g, "a", {.type = "similar", .as_of = t0 + 9000}).empty());

  // Added again: current again, from now on.
  g.clock.Advance(10);
  RelationshipUpsert back = Must(g.graph->AddRelationship(
      {.source = "a", .target = "b", .type = "references"}));
  CHECK_FALSE(back.created);
  CHECK(back.relationship.expired_at == 0);
  CHECK(back.relationship.invalid_at == 0);
  CHECK(RelatedIds(g, "a", {.type = "references"}) ==
        std::vector<std::string>{"b"});

  CHECK(g.graph->RemoveRelationship("a", "b", "references").ok());
  CheckError(g.graph->RemoveRelationship("a", "b", "references"),
             StatusCode::kNotFound, "no references relationship");
  CHECK(RelatedIds(g, "b", {.type = "references"}).empty());
  g.CheckVerified();
}

TEST_CASE("paths: fewest hops, best product, direction, types, expiry") {
  Graph g;
  for (const char* id : {"a", "b", "c", "d", "e", "lonely"}) g.Add(id, id);
  g.Relate("a", "b", "continues", 0.9);
  g.Relate("b", "c", "continues", 0.9);
  g.Relate("c", "d", "continues", 0.9);
  g.Relate("a", "d", "similar", 0.5);
  g.Relate("e", "d", "references", 0.7);

  PathResult shortest = Must(g.graph->FindPath("a", "d"));
  CHECK(shortest.found);
  CHECK(shortest.path == std::vector<std::string>{"a", "d"});
  REQUIRE(shortest.edges.size() == 1);
  CHECK(shortest.edges[0].type == "similar");
  CHECK(shortest.total_weight == doctest::Approx(0.5));

  PathResult best = Must(g.graph->FindPath("a", "d", {.weighted = true}));
  CHECK(best.path == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(best.total_weight == doctest::Approx(0.729));
  PathResult capped =
      Must(g.graph->FindPath("a", "d", {.max_hops = 2, .weighted = true}));
  CHECK(capped.path == std::vector<std::string>{"a", "d"});

  // e -> d only, so a reaches e only against an edge's direction.
  CHECK(Must(g.graph->FindPath("a", "e")).path ==
        std::vector<std::string>{"a", "d", "e"});
  PathResult directed = Must(
      g.graph->FindPath("a", "e", {.direction = EdgeDirection::kOutgoing}));
  CHECK_FALSE(directed.found);
  CHECK(directed.path.empty());
  CHECK(directed.reason == "no path within maxHops");
  CHECK(Must(g.graph->FindPath("a", "d", {.types = {"continues"}})).path ==
        std::vector<std::string>{"a", "b", "c", "d"});

  // Ended within the millisecond it was added: allowed, and no longer seen.
  Must(g.graph->InvalidateRelationship("a", "d", "similar"));
  CHECK(Must(g.graph->FindPath("a", "d")).path.size() == 4);
  CHECK(Must(g.graph->FindPath("a", "d", {.include_expired = true}))
            .path.size() == 2);

  PathResult self = Must(g.graph->FindPath("a", "a"));
  CHECK(self.found);
  CHECK(self.path == std::vector<std::string>{"a"});
  CHECK(Must(g.graph->FindPath("a", "lonely")).found == false);
  CHECK(Must(g.graph->FindPath("nobody", "a")).reason == "source not found");
  CHECK(Must(g.graph->FindPath("a", "nobody")).reason == "target not found");
  CheckError(g.graph->FindPath("a", "d", {.max_hops = 17}).status(),
             StatusCode::kInvalidArgument, "maxHops");
  CheckError(
      g.graph->FindPath("a", "d", {.direction = EdgeDirection::kIncoming})
          .status(),
      StatusCode::kInvalidArgument, "direction");
  CheckError(g.graph->FindPath("a", "d", {.types = {"sibling"}}).status(),
             StatusCode::kInvalidArgument, "relationshipType");
}

TEST_CASE(
    "deleting a context or its conversation removes both and every "
    "edge") {
  Graph g;
  for (const char* id : {"a", "b", "c"}) g.Add(id, id);
  g.Relate("a", "b", "references");
  g.Relate("c", "a", "continues");
  g.Relate("b", "c", "similar");
  const std::string conversation =
      Must(g.graph->Retrieve("a")).context.conversation_id;

  REQUIRE(g.graph->DeleteContext("a").ok());
  CHECK(g.graph->Retrieve("a").status().code() == StatusCode::kNotFound);
  CHECK(g.convs->Get(conversation).status().code() == StatusCode::kNotFound);
  CHECK(RelatedIds(g, "b") == std::vector<std::string>{"c"});
  CHECK(RelatedIds(g, "c") == std::vector<std::string>{"b"});
  GraphVerifyReport report = Must(g.graph->Verify());
  CHECK(report.ok);
  CHECK(report.contexts == 2);
  CHECK(report.edges == 1);
  CheckError(g.graph->DeleteContext("a"), StatusCode::kNotFound,
             "contextId 'a' is not a context");

  // The other way: the conversation deleted through ConversationStore.
  const std::string b_conversation =
      Must(g.graph->Retrieve("b")).context.conversation_id;
  DeletedConversation deleted = Must(g.convs->Delete(b_conversation));
  CHECK(deleted.dependent_records_deleted > 0);
  CHECK(g.graph->Retrieve("b").status().code() == StatusCode::kNotFound);
  CHECK(RelatedIds(g, "c").empty());
  // The id can be used again: a new context, with a new conversation.
  AddGraphMessagesResult again = g.Add("b", "back");
  CHECK(again.created);
  CHECK(again.conversation_id != b_conversation);
  report = Must(g.graph->Verify());
  CHECK(report.ok);
  CHECK(report.contexts == 2);
  CHECK(report.edges == 0);
  CHECK(report.messages == 2);
}

TEST_CASE("messages deleted from the conversation take their graph records") {
  Graph g;
  AddGraphMessagesResult added = Must(g.graph->AddMessages(
      "ctx", {{.content = "one", .tags = {"a"}},
              {.content = "two", .importance = "high", .tags = {"b"}},
              {.content = "three", .tags = {"c"}}}));
  Must(g.convs->DeleteMessages(added.conversation_id,
                               {added.messages[1].message_id}));
  ContextDetail detail = Must(g.graph->Retrieve("ctx"));
  REQUIRE(detail.messages.size() == 2);
  CHECK(detail.messages[0].tags == std::vector<std::string>{"a"});
  CHECK(detail.messages[1].content == "three");
  CHECK(detail.messages[1].tags == std::vector<std::string>{"c"});
  GraphVerifyReport report = Must(g.graph->Verify());
  CHECK(report.ok);
  CHECK(report.messages == 2);
}

TEST_CASE("list: the most recently active first, page by page") {
  Graph g;
  for (int i = 0; i < 5; ++i) {
    g.Add("ctx-" + std::to_string(i), "m");
    g.clock.Advance(10);
  }
  g.Add("ctx-1", "active again");
  ContextPage first = Must(g.graph->ListContexts(2));
  REQUIRE(first.contexts.size() == 2);
  CHECK(first.contexts[0].context_id == "ctx-1");
  CHECK(first.contexts[0].message_count == 2);
  CHECK(first.contexts[1].context_id == "ctx-4");
  REQUIRE_FALSE(first.next_cursor.empty());
  ContextPage second = Must(g.graph->ListContexts(2, first.next_cursor));
  REQUIRE(second.contexts.size() == 2);
  CHECK(second.contexts[0].context_id == "ctx-3");
  CHECK(second.contexts[1].context_id == "ctx-2");
  ContextPage last = Must(g.graph->ListContexts(2, second.next_cursor));
  REQUIRE(last.contexts.size() == 1);
  CHECK(last.contexts[0].context_id == "ctx-0");
  CHECK(last.next_cursor.empty());
  CheckError(g.graph->ListContexts(2, "not-a-cursor!").status(),
             StatusCode::kInvalidArgument, "cursor");
  CheckError(g.graph->ListContexts(0).status(), StatusCode::kInvalidArgument,
             "limit");
}

TEST_CASE("verify finds what was damaged behind the graph's back") {
  Graph g;
  g.Add("a", "a");
  g.Add("b", "b");
  g.Relate("a", "b", "references");
  g.CheckVerified();
  StoreCheckReport whole = Must(CheckStore(*g.store));

  CHECK(whole.contexts == 2);
  CHECK(whole.relationships == 1);
  Database in = Must(g.store->OpenDatabase("graph.in"));
  Database stats = Must(g.store->OpenDatabase("graph.stats"));

  SUBCASE("a lost in-edge") {
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  Cursor c = Must(txn.NewCursor(in));
                  c.SeekToFirst();
                  REQUIRE(c.Valid());
                  const std::string key(c.key());
                  return txn.Delete(in, key).status();
                })
                .ok());
    GraphVerifyReport report = Must(g.graph->Verify());
    CHECK_FALSE(report.ok);
    REQUIRE_FALSE(report.problems.empty());
    CHECK(Contains(report.problems[0], "has no in-edge"));
    // And `ctxkit store check` says so.
    const Status checked = CheckStore(*g.store).status();
    CheckError(checked, StatusCode::kDataLoss, "the context graph of store");
    CHECK(Contains(checked.message(), "has no in-edge"));
  }
  SUBCASE("totals that disagree with a recount") {
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  auto deleted = txn.Delete(stats, "totals");
                  REQUIRE(deleted.ok());
                  CHECK(*deleted);
                  return deleted.status();
                })
                .ok());
    GraphVerifyReport report = Must(g.graph->Verify());
    CHECK_FALSE(report.ok);
    bool named = false;
    for (const std::string& p : report.problems) {
      named = named || Contains(p, "totals count 0 contexts; there are 2");
    }
    CHECK(named);
  }
  SUBCASE("a lost format version") {
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  return txn.Delete(stats, "format").status();
                })
                .ok());
    GraphVerifyReport report = Must(g.graph->Verify());
    CHECK_FALSE(report.ok);
    REQUIRE(report.problems.size() == 1);
    CHECK(Contains(report.problems[0], "no recorded format version"));
  }
}

TEST_CASE("a graph written in a newer layout is refused, not misread") {
  Graph g;
  Database stats = Must(g.store->OpenDatabase("graph.stats"));
  // Opening and checking a graph write nothing; its first context records
  // the layout.
  CHECK(Must(CheckStore(*g.store)).contexts == 0);
  CHECK(Must(g.store->BeginRead()).Get(stats, "format").status().code() ==
        StatusCode::kNotFound);
  g.Add("a", "a");
  auto set_format = [&](std::string value) {
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  return txn.Put(stats, "format", value);
                })
                .ok());
  };
  const std::string v1("\0\0\0\1", 4), v4("\0\0\0\4", 4), v5("\0\0\0\5", 4);
  auto recorded = [&] {
    return std::string(Must(Must(g.store->BeginRead()).Get(stats, "format")));
  };
  CHECK(recorded() == v4);
  set_format(v5);
  CheckError(ContextGraph::Open(*g.store, *g.convs).status(),
             StatusCode::kFailedPrecondition,
             "has format 5; this build of ctxkit reads format 4");
  set_format("x");
  CheckError(ContextGraph::Open(*g.store, *g.convs).status(),
             StatusCode::kDataLoss, "format version");
  // An older graph is read as it is; the first write records this build's
  // version, so that an older build no longer writes to it.
  set_format(v1);
  CHECK(Must(CheckStore(*g.store)).contexts == 1);
  CHECK(ContextGraph::Open(*g.store, *g.convs).ok());
  CHECK(recorded() == v1);
  g.Add("a", "more");
  CHECK(recorded() == v4);
  CHECK(Must(g.graph->Verify()).ok);
}

TEST_CASE("threads adding to shared and own contexts leave a sound graph") {
  Graph g;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&g, t] {
      for (int i = 0; i < kPerThread; ++i) {
        CHECK(g.graph->AddMessage("shared", {.content = "s"}).ok());
        CHECK(g.graph
                  ->AddMessage("own-" + std::to_string(t),
                               {.content = "o", .importance = "high"})
                  .ok());
        if (i % 5 == 0) {
          CHECK(g.graph
                    ->AddRelationship({.source = "shared",
                                       .target = "own-" + std::to_string(t),
                                       .type = "parent"})
                    .ok());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  GraphVerifyReport report = Must(g.graph->Verify());
  std::string problems;
  for (const std::string& p : report.problems) problems += p + "; ";
  INFO(problems);
  CHECK(report.ok);
  CHECK(report.contexts == kThreads + 1);
  CHECK(report.messages == 2 * kThreads * kPerThread);
  // The parent edges, and the auto-links each own context's summaries made
  // to the others (the same text: similarity 1).
  CHECK(report.edges == kThreads + kThreads * (kThreads - 1));
  ContextDetail shared = Must(g.graph->Retrieve("shared", {.limit = 1000}));
  CHECK(shared.context.message_count == kThreads * kPerThread);
  std::vector<uint64_t> seqs;
  for (const GraphMessageView& m : shared.messages) seqs.push_back(m.seq);
  CHECK(std::is_sorted(seqs.begin(), seqs.end()));
  CHECK(seqs.back() == kThreads * kPerThread);
  // Every second high message summarizes (and resets the count); every
  // tenth message of "shared" does.
  ContextDetail own = Must(g.graph->Retrieve("own-2"));
  CHECK(own.high_since_summary == kPerThread % 2);
  REQUIRE(own.summary.has_value());
  CHECK(own.summary->version == kPerThread / 2);
  REQUIRE(shared.summary.has_value());
  CHECK(shared.summary->version == kThreads * kPerThread / 10);
  CHECK(shared.messages_since_summary == 0);
}

}  // namespace
}  // namespace ctxkit
