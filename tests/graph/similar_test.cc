// ContextGraph::FindSimilar over the lexical index: a context is found by
// its messages with no summary (the seed's summary-only search never found
// one), the filters (limit, exclude, tags, minimum similarity), the method
// fallback, bad input, and the index following summaries, message
// deletion and context deletion (Verify recomputes it).

#include <doctest/doctest.h>

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

  void Add(const std::string& id, const std::string& content,
           std::vector<std::string> tags = {}) {
    Must(graph->AddMessage(id, {.role = MessageRole::kUser,
                                .content = content,
                                .tags = std::move(tags)}));
  }

  std::vector<std::string> Ids(const std::string& text,
                               const SimilarOptions& options = {}) {
    std::vector<std::string> ids;
    for (const SimilarContext& c :
         Must(graph->FindSimilar(text, options)).contexts) {
      ids.push_back(c.context_id);
    }
    return ids;
  }
};

void Corpus(Graph& g) {
  g.Add("auth", "Move the login flow to OAuth and refresh the access token",
        {"security"});
  g.Add("auth", "The OAuth callback rejects an expired token");
  g.Add("db", "Add a Postgres index before the orders migration", {"infra"});
  g.Add("ui", "Fix the CSS grid layout of the settings page");
}

TEST_CASE("contexts are found by their messages, best first") {
  Graph g;
  Corpus(g);
  SimilarResult r = Must(g.graph->FindSimilar("oauth token refresh"));
  CHECK(r.method == "keyword");
  REQUIRE(!r.contexts.empty());
  CHECK(r.contexts[0].context_id == "auth");
  CHECK(r.contexts[0].similarity > 0);
  CHECK(r.contexts[0].similarity <= 1);
  CHECK(r.contexts[0].score == r.contexts[0].signals.bm25);
  CHECK(r.contexts[0].similarity == r.contexts[0].signals.tfidf);
  CHECK(r.contexts[0].method == "keyword");
  // Words nobody used find nothing; so does text without words.
  CHECK(g.Ids("kubernetes helm").empty());
  CHECK(g.Ids("?!").empty());
  CHECK(g.Ids("postgres index") == std::vector<std::string>{"db"});
}

TEST_CASE("limit, exclude, tags and minSimilarity filter the answer") {
  Graph g;
  Corpus(g);
  g.Add("auth2", "OAuth token rotation for the mobile login", {"security"});
  CHECK(g.Ids("oauth token login", {.limit = 1}).size() == 1);
  std::vector<std::string> both = g.Ids("oauth token login");
  CHECK(both.size() == 2);
  std::vector<std::string> rest =
      g.Ids("oauth token login", {.exclude = {both[0], "unknown"}});
  CHECK(rest == std::vector<std::string>{both[1]});
  CHECK(g.Ids("oauth token", {.tags = {"security"}}).size() == 2);
  CHECK(g.Ids("oauth token index", {.tags = {"infra"}}) ==
        std::vector<std::string>{"db"});
  CHECK(g.Ids("oauth token", {.tags = {"security", "infra"}}).empty());
  // A similarity of 1 is an identical document only.
  CHECK(g.Ids("oauth token", {.min_similarity = 1}).empty());
}

TEST_CASE("vector and hybrid fall back to keyword, or are unavailable") {
  {
    Graph g;
    Corpus(g);
    SimilarResult r = Must(
        g.graph->FindSimilar("oauth", {.method = SimilarityMethod::kHybrid}));
    CHECK(r.method == "keyword");
    CHECK(r.contexts.size() == 1);
  }
  ContextGraphOptions strict = testing::ManualGraphOptions();
  strict.fallback_to_keyword_match = false;
  Graph g(strict);
  Corpus(g);
  Status s =
      g.graph->FindSimilar("oauth", {.method = SimilarityMethod::kVector})
          .status();
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(Contains(s.message(), "embedder"));
  CHECK(Must(g.graph->FindSimilar("oauth",
                                  {.method = SimilarityMethod::kKeyword}))
            .contexts.size() == 1);
}

TEST_CASE("FindSimilar names the bad field") {
  Graph g;
  Corpus(g);
  struct Case {
    std::string text;
    SimilarOptions options;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"", {}, "text"},
      {"x", {.limit = 0}, "limit"},
      {"x", {.limit = 101}, "limit"},
      {"x", {.min_similarity = 1.5}, "minSimilarity"},
      {"x", {.tags = {"ok", ""}}, "tags[1]"},
      {std::string(64 * 1024 + 1, 'a'), {}, "text"},
  };
  for (const Case& c : cases) {
    Status s = g.graph->FindSimilar(c.text, c.options).status();
    INFO(c.field, " ", s.ToString());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(Contains(s.message(), c.field));
  }
}

TEST_CASE("the index follows summaries, deleted messages and contexts") {
  Graph g;
  Corpus(g);
  g.CheckVerified();
  Must(g.graph->Summarize("auth"));
  Must(g.graph->Summarize("auth", {.force = true}));  // replaces its terms
  g.CheckVerified();
  // Deleting a message through the conversation takes its words back.
  ContextDetail db = Must(g.graph->Retrieve("db"));
  std::vector<Message> messages =
      Must(g.convs->Get(db.context.conversation_id)).messages;
  REQUIRE(messages.size() == 1);
  Must(g.convs->DeleteMessages(db.context.conversation_id, {messages[0].id}));
  CHECK(g.Ids("postgres").empty());
  g.CheckVerified();
  for (const char* id : {"auth", "db", "ui"}) {
    REQUIRE(g.graph->DeleteContext(id).ok());
  }
  CHECK(g.Entries("graph.lex.terms") == 0);
  CHECK(g.Entries("graph.lex.postings") == 0);
  CHECK(g.Entries("graph.lex.df") == 0);
  g.CheckVerified();
}

TEST_CASE("Verify finds a lexical index out of step with the messages") {
  Graph g;
  Corpus(g);
  Database terms = Must(g.store->OpenDatabase("graph.lex.terms"));
  REQUIRE(g.store
              ->Update([&](WriteTransaction& txn) {
                Cursor c = Must(txn.NewCursor(terms));
                c.SeekToFirst();
                REQUIRE(c.Valid());
                const std::string key(c.key());
                return txn.Delete(terms, key).status();
              })
              .ok());
  GraphVerifyReport report = Must(g.graph->Verify());
  CHECK_FALSE(report.ok);
  bool found = false;
  for (const std::string& p : report.problems) {
    found = found || Contains(p, "lexical index");
  }
  CHECK(found);
}

TEST_CASE(
    "a summary links its most similar contexts, and unlinks them when "
    "they stop being similar") {
  ContextGraphOptions o = testing::ManualGraphOptions();
  o.similarity_threshold = 0.5;
  Graph g(o);
  g.Add("a", "rotate the oauth signing keys of the gateway");
  g.Add("b", "rotate the oauth signing keys of the gateway");
  g.Add("c", "rotate the oauth signing keys of the gateway");
  g.Add("far", "bake bread with sourdough starter");
  // The caller's own similar edge to c is the caller's: never rewritten.
  Must(g.graph->AddRelationship(
      {.source = "a", .target = "c", .type = "similar", .weight = 0.1}));
  Must(g.graph->Summarize("a"));
  RelatedResult r = Must(g.graph->Related(
      "a", {.type = "similar", .direction = EdgeDirection::kOutgoing}));
  REQUIRE(r.edges.size() == 2);
  const RelatedEdge* auto_edge = nullptr;
  for (const RelatedEdge& e : r.edges) {
    if (e.context_id == "b") auto_edge = &e;
    if (e.context_id == "c") {
      CHECK(e.relationship.weight == 0.1);
      CHECK(e.relationship.metadata == "{}");
    }
  }
  REQUIRE(auto_edge != nullptr);
  CHECK(auto_edge->relationship.weight > 0.5);
  CHECK(auto_edge->relationship.metadata ==
        R"({"auto":true,"method":"keyword","summaryVersion":1})");
  g.CheckVerified();

  // a's talk moves on: its next summary no longer resembles b.
  for (int i = 0; i < 30; ++i) {
    g.Add("a", "bake bread with sourdough starter and rye flour " +
                   std::to_string(i));
  }
  g.clock.Advance(5);
  Must(g.graph->Summarize("a"));
  r = Must(g.graph->Related(
      "a", {.type = "similar", .direction = EdgeDirection::kOutgoing}));
  bool b_current = false;
  for (const RelatedEdge& e : r.edges) b_current |= e.context_id == "b";
  CHECK(!b_current);
  RelatedResult history =
      Must(g.graph->Related("a", {.type = "similar",
                                  .direction = EdgeDirection::kOutgoing,
                                  .include_expired = true}));
  bool b_expired = false;
  for (const RelatedEdge& e : history.edges) {
    if (e.context_id == "b") b_expired = e.relationship.expired_at != 0;
  }
  CHECK(b_expired);
  g.CheckVerified();
}

TEST_CASE("auto_link_limit 0 writes no auto-links") {
  ContextGraphOptions o = testing::ManualGraphOptions();
  o.auto_link_limit = 0;
  Graph g(o);
  g.Add("a", "same words here");
  g.Add("b", "same words here");
  Must(g.graph->Summarize("a"));
  CHECK(Must(g.graph->Related("a")).context_ids.empty());
}

}  // namespace
}  // namespace ctxkit
