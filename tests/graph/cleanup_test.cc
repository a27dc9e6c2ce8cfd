// ContextGraph::Cleanup and Restore: the seed 0.1.1 keep-set (current,
// similar, related, parent, siblings, children, important, recent) and its
// reasons, archive hiding a context from the queries until restored,
// delete mode, dry runs, the minContexts floor, the automatic cleanup of
// AddMessage, and bad input.

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::Contains;
using testing::Must;

constexpr int64_t kDay = 86400000;

struct Graph : testing::GraphFixture {
  explicit Graph(ContextGraphOptions options = testing::ManualGraphOptions())
      : GraphFixture(std::move(options)) {}

  AddGraphMessagesResult Add(const std::string& id, const std::string& content,
                             const std::string& importance = "") {
    return Must(graph->AddMessage(id, {.role = MessageRole::kUser,
                                       .content = content,
                                       .importance = importance}));
  }

  void Relate(const std::string& s, const std::string& t,
              const std::string& type) {
    Must(graph->AddRelationship({.source = s, .target = t, .type = type}));
  }

  // Ten old unrelated contexts, then a month later the current one and
  // one of each kind the keep-set keeps.
  void Build() {
    for (int i = 0; i < 10; ++i) {
      Add("old-" + std::to_string(i),
          "unrelated chatter number " + std::to_string(i) + " about lunch");
    }
    Add("important", "deploy the hotfix now", "critical");
    Must(graph->Summarize("important"));  // importance_score 1.0
    Add("similar", "rotate the oauth signing keys for the gateway");
    Add("parent", "the auth epic");
    Add("sibling", "the auth epic, other part");
    Add("related", "notes");
    clock.Advance(30 * kDay);
    Add("current", "rotate the oauth signing keys for the gateway today");
    Add("kid", "a subtask");
    clock.Advance(10 * kDay);  // "kid" and "current" are no longer recent
    Add("fresh", "something from today");
    Relate("parent", "current", "parent");
    Relate("parent", "sibling", "parent");
    Relate("current", "kid", "parent");
    Relate("related", "current", "references");
  }
};

std::map<std::string, std::vector<std::string>> Reasons(
    const CleanupResult& r) {
  std::map<std::string, std::vector<std::string>> out;
  for (const KeptContext& k : r.kept) out[k.context_id] = k.reasons;
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST_CASE("the keep-set and its reasons; archive hides, restore returns") {
  Graph g;
  g.Build();
  const CleanupResult dry =
      Must(g.graph->Cleanup("current", {.dry_run = true}));
  std::vector<std::string> old;
  for (int i = 0; i < 10; ++i) old.push_back("old-" + std::to_string(i));
  CHECK(Sorted(dry.cleaned_contexts) == old);
  auto reasons = Reasons(dry);
  CHECK(reasons["current"] == std::vector<std::string>{"current"});
  CHECK(reasons["similar"] == std::vector<std::string>{"similar"});
  CHECK(reasons["related"] == std::vector<std::string>{"related"});
  CHECK(reasons["parent"] == std::vector<std::string>{"related", "parent"});
  CHECK(reasons["sibling"] == std::vector<std::string>{"sibling"});
  CHECK(reasons["kid"] == std::vector<std::string>{"related", "child"});
  CHECK(reasons["important"] == std::vector<std::string>{"important"});
  CHECK(reasons["fresh"] == std::vector<std::string>{"recent"});
  CHECK(reasons.size() == 8);
  // A dry run changed nothing.
  CHECK(Must(g.graph->ListContexts(100)).contexts.size() == 18);

  const CleanupResult done = Must(g.graph->Cleanup("current"));
  CHECK(done.cleaned_contexts == dry.cleaned_contexts);
  CHECK(Must(g.graph->ListContexts(100)).contexts.size() == 8);
  ContextPage all =
      Must(g.graph->ListContexts(100, {}, /*include_archived=*/true));
  CHECK(all.contexts.size() == 18);
  size_t archived = 0;
  for (const ContextInfo& c : all.contexts) archived += c.archived;
  CHECK(archived == 10);
  // Hidden from similar, related and paths; the messages stay.
  CHECK(Must(g.graph->FindSimilar("lunch chatter")).contexts.empty());
  CHECK(Must(g.graph->FindSimilar("lunch chatter",
                                  {.limit = 20, .include_archived = true}))
            .contexts.size() == 10);
  CHECK(Must(g.graph->Retrieve("old-3")).messages.size() == 1);
  CHECK(Must(g.graph->Retrieve("old-3")).context.archived);
  g.Relate("old-3", "fresh", "references");
  CHECK(Must(g.graph->Related("fresh")).context_ids.empty());
  CHECK(
      Must(g.graph->Related("fresh", {.include_archived = true})).context_ids ==
      std::vector<std::string>{"old-3"});
  PathResult path = Must(g.graph->FindPath("old-3", "fresh"));
  CHECK(!path.found);
  CHECK(path.reason == "source is archived");
  CHECK(Must(g.graph->FindPath("old-3", "fresh", {.include_archived = true}))
            .found);
  // A second cleanup finds nothing more to do.
  CHECK(Must(g.graph->Cleanup("current")).cleaned_contexts.empty());

  REQUIRE(g.graph->Restore("old-3").ok());
  REQUIRE(g.graph->Restore("old-3").ok());  // not archived: unchanged
  CHECK(!Must(g.graph->Retrieve("old-3")).context.archived);
  CHECK(Must(g.graph->Related("fresh")).context_ids ==
        std::vector<std::string>{"old-3"});
  CHECK(Must(g.graph->Verify()).ok);
}

TEST_CASE("delete mode deletes the contexts with their conversations") {
  Graph g;
  g.Build();
  const CleanupResult r =
      Must(g.graph->Cleanup("current", {.mode = CleanupMode::kDelete}));
  CHECK(r.cleaned_contexts.size() == 10);
  CHECK(Must(g.graph->ListContexts(100, {}, true)).contexts.size() == 8);
  CHECK(g.graph->Retrieve("old-0").status().code() == StatusCode::kNotFound);
  CHECK(Must(g.convs->List(100)).conversations.size() == 8);
  CHECK(Must(g.graph->Verify()).ok);
}

TEST_CASE("at most minContexts live contexts: nothing goes") {
  Graph g;
  g.Build();  // 18 contexts
  const CleanupResult r =
      Must(g.graph->Cleanup("current", {.min_contexts = 18}));
  CHECK(r.cleaned_contexts.empty());
  CHECK(r.kept.size() == 18);
  CHECK(Reasons(r)["old-0"] == std::vector<std::string>{"below minContexts"});
  // keepRecentDays widens "recent".
  const CleanupResult wide = Must(
      g.graph->Cleanup("current", {.dry_run = true, .keep_recent_days = 60}));
  CHECK(wide.cleaned_contexts.empty());
}

TEST_CASE("AddMessage cleans up every cleanup_every messages") {
  ContextGraphOptions o = testing::ManualGraphOptions();
  o.auto_cleanup_contexts = true;
  o.cleanup_every = 2;
  Graph g(o);
  for (int i = 0; i < 11; ++i) g.Add("old-" + std::to_string(i), "x");
  g.clock.Advance(30 * kDay);
  AddGraphMessagesResult first = g.Add("now", "a");  // message 1 of "now"
  CHECK(first.cleaned.empty());
  AddGraphMessagesResult second = g.Add("now", "b");  // message 2: cleanup
  CHECK(second.cleaned.size() == 11);
  CHECK(Must(g.graph->ListContexts(100)).contexts.size() == 1);
  CHECK(Must(g.graph->Verify()).ok);
}

TEST_CASE("Cleanup and Restore name the bad field") {
  Graph g;
  g.Add("a", "x");
  Status s = g.graph->Cleanup("nope").status();
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(Contains(s.message(), "currentId 'nope'"));
  s = g.graph->Cleanup("a", {.similarity_factor = 2}).status();
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s.message(), "similarityFactor"));
  s = g.graph->Restore("nope");
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(Contains(s.message(), "contextId 'nope'"));
  ContextGraphOptions bad;
  bad.cleanup_every = 0;
  s = ContextGraph::Open(*g.store, *g.convs, bad).status();
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s.message(), "cleanup_every"));
}

}  // namespace
}  // namespace ctxkit
