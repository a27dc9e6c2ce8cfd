// ContextGraph summaries: what an extractive summary holds, versions and
// their history, the automatic triggers (and the seed's never-reset count
// fixed), the host summarizer and its fallbacks, the token allowance, and
// the pure extraction helpers against hand-written expectations.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/model_registry.h"
#include "lib/graph/summary_builder.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::Contains;
using testing::Must;

struct Graph : testing::GraphFixture {
  using GraphFixture::GraphFixture;

  AddGraphMessagesResult Add(const std::string& id, MessageRole role,
                             const std::string& content,
                             const std::string& importance = "") {
    return Must(graph->AddMessage(
        id, {.role = role, .content = content, .importance = importance}));
  }
};

ContextGraphOptions Manual() { return testing::ManualGraphOptions(); }

uint64_t Tokens(const std::string& text) {
  return Must(CountTokens(kDefaultModel, text)).tokens;
}

TEST_CASE("an extractive summary holds the seed's fields and ctxkit's facts") {
  Graph g(Manual());
  g.Add("ctx", MessageRole::kUser, "Why does the login test fail?", "high");
  g.Add("ctx", MessageRole::kAssistant,
        "Here is the fix:\n```python\ndef login():\n    return True\n```\n");
  g.Add("ctx", MessageRole::kTool,
        "Traceback (most recent call last):\n  File \"a.py\", line 1\n"
        "KeyError: 'user'");
  g.Add("ctx", MessageRole::kUser, "ok", "low");
  g.clock.Advance(1000);
  const ContextSummary s = Must(g.graph->Summarize("ctx"));
  CHECK(s.context_id == "ctx");
  CHECK(s.version == 1);
  CHECK(s.message_count == 4);
  CHECK(s.summarizer == "extractive");
  CHECK(s.created_at == s.last_updated);
  CHECK(s.last_updated > 0);
  CHECK(Contains(s.summary, "This context contains 4 messages."));
  CHECK(Contains(s.summary,
                 "Recent user queries: Why does the login test fail? | ok"));
  CHECK(Contains(s.summary, "Recent assistant responses: Here is the fix:"));
  CHECK(Contains(s.summary, "KeyError: 'user'"));
  REQUIRE(s.code_blocks.size() == 1);
  CHECK(s.code_blocks[0].language == "python");
  CHECK(s.code_blocks[0].code == "def login():\n    return True");
  CHECK(s.code_blocks[0].importance == 0.5);
  // The error first, then the user's question (the seed's rule).
  REQUIRE(s.key_insights.size() == 2);
  CHECK(s.key_insights[0] == "KeyError: 'user'");
  CHECK(s.key_insights[1] == "Why does the login test fail?");
  // One high message of four: 0.5 + 0.5 * 1/4.
  CHECK(s.importance_score == doctest::Approx(0.625));
  CHECK(s.tokens_used == Tokens(s.summary));
  CHECK(s.token_limit == 512);
  CHECK(s.related_contexts.empty());
}

TEST_CASE(
    "versions count up, an unchanged context keeps its summary, and "
    "the history keeps the newest versions") {
  ContextGraphOptions o = Manual();
  o.summary_history = 3;
  Graph g(o);
  g.Add("ctx", MessageRole::kUser, "first");
  CHECK(Must(g.graph->Summarize("ctx")).version == 1);
  // Nothing new: the same version, unless forced.
  CHECK(Must(g.graph->Summarize("ctx")).version == 1);
  CHECK(Must(g.graph->Summarize("ctx", {.force = true})).version == 2);
  for (int i = 0; i < 3; ++i) {
    g.clock.Advance(10);
    g.Add("ctx", MessageRole::kUser, "more " + std::to_string(i));
    CHECK(Must(g.graph->Summarize("ctx")).version == 3 + i);
  }
  ContextDetail d = Must(g.graph->Retrieve("ctx", {.summary_history = true}));
  REQUIRE(d.summary.has_value());
  CHECK(d.summary->version == 5);
  REQUIRE(d.summary_history.size() == 3);
  CHECK(d.summary_history[0].version == 5);
  CHECK(d.summary_history[1].version == 4);
  CHECK(d.summary_history[2].version == 3);
  // created_at is the first version's time; last_updated each one's own.
  CHECK(d.summary_history[0].created_at == d.summary_history[2].created_at);
  CHECK(d.summary_history[0].last_updated > d.summary_history[1].last_updated);
  CHECK(Contains(d.summary->summary, "more 2"));
  ContextDetail plain =
      Must(g.graph->Retrieve("ctx", {.include_summary = false}));
  CHECK(!plain.summary.has_value());
  CHECK(plain.summary_history.empty());
  GraphVerifyReport report = Must(g.graph->Verify());
  CHECK(report.ok);
}

TEST_CASE("automatic summaries: message count, high messages, tokens") {
  SUBCASE("every message_limit_threshold messages") {
    ContextGraphOptions o;
    o.message_limit_threshold = 3;
    Graph g(o);
    CHECK(!g.Add("c", MessageRole::kUser, "one").summarized);
    CHECK(!g.Add("c", MessageRole::kAssistant, "two").summarized);
    AddGraphMessagesResult third = g.Add("c", MessageRole::kUser, "three");
    CHECK(third.summarized);
    CHECK(third.summary_version == 1);
    ContextDetail d = Must(g.graph->Retrieve("c"));
    CHECK(d.messages_since_summary == 0);
    REQUIRE(d.summary.has_value());
    CHECK(d.summary->message_count == 3);
    // A batch counts each message once.
    AddGraphMessagesResult batch = Must(g.graph->AddMessages(
        "c", {{.content = "a"}, {.content = "b"}, {.content = "c"}}));
    CHECK(batch.summarized);
    CHECK(batch.summary_version == 2);
  }
  SUBCASE("two high or critical messages, counted since the last summary") {
    Graph g;
    CHECK(!g.Add("c", MessageRole::kUser, "x", "HIGH").summarized);
    CHECK(g.Add("c", MessageRole::kUser, "y", "critical").summarized);
    // The seed kept counting the whole context: every later message would
    // summarize again. Here the count restarts.
    CHECK(!g.Add("c", MessageRole::kUser, "z", "high").summarized);
    CHECK(!g.Add("c", MessageRole::kUser, "w", "low").summarized);
    CHECK(g.Add("c", MessageRole::kUser, "v", "high").summarized);
  }
  SUBCASE("tokens reaching the share of the context window") {
    ContextGraphOptions o;
    o.context_window_tokens = 100;
    o.token_limit_percentage = 50;
    Graph g(o);
    CHECK(!g.Add("c", MessageRole::kUser, "short").summarized);
    std::string long_text;
    for (int i = 0; i < 60; ++i) long_text += "word ";
    REQUIRE(Tokens(long_text) >= 50);
    CHECK(g.Add("c", MessageRole::kUser, long_text).summarized);
  }
  SUBCASE("auto_summarize off") {
    Graph g(Manual());
    for (int i = 0; i < 12; ++i) {
      CHECK(!g.Add("c", MessageRole::kUser, "m", "critical").summarized);
    }
    CHECK(!Must(g.graph->Retrieve("c")).summary.has_value());
  }
}

struct FakeSummarizer : Summarizer {
  std::string text;
  bool fail = false;
  std::vector<SummaryRequest> requests;
  StatusOr<std::string> Summarize(const SummaryRequest& request) override {
    requests.push_back(request);
    if (fail) return Status(StatusCode::kUnavailable, "model down");
    return text;
  }
};

TEST_CASE("a host summarizer writes the text; its failures fall back") {
  auto host = std::make_shared<FakeSummarizer>();
  ContextGraphOptions o = Manual();
  o.summarizer = host;
  Graph g(o);
  g.Add("c", MessageRole::kUser, "Please \"quote\" this");
  g.Add("c", MessageRole::kAssistant, "done");
  host->text = "The user asked for a quote.";
  ContextSummary s = Must(g.graph->Summarize("c"));
  CHECK(s.summarizer == "host");
  CHECK(s.summary == host->text);
  CHECK(s.tokens_used == Tokens(host->text));
  REQUIRE(host->requests.size() == 1);
  CHECK(host->requests[0].message_count == 2);
  CHECK(host->requests[0].max_tokens == 512);
  CHECK(host->requests[0].messages_json ==
        R"([{"role":"user","content":"Please \"quote\" this"},)"
        R"({"role":"assistant","content":"done"}])");
  CHECK(Contains(host->requests[0].extractive, "This context contains 2"));

  host->fail = true;
  s = Must(g.graph->Summarize("c", {.force = true}));
  CHECK(s.summarizer == "extractive");
  CHECK(Contains(s.summary, "This context contains 2 messages."));

  host->fail = false;
  host->text.clear();
  for (int i = 0; i < 600; ++i) host->text += "too long ";
  s = Must(g.graph->Summarize("c", {.force = true}));
  CHECK(s.summarizer == "extractive");
  CHECK(s.version == 3);
}

TEST_CASE("the summary fits max_summary_tokens") {
  ContextGraphOptions o = Manual();
  o.max_summary_tokens = 16;
  Graph g(o);
  for (int i = 0; i < 30; ++i) {
    g.Add("c", MessageRole::kTool,
          "error: test_" + std::to_string(i) + " failed in src/module_" +
              std::to_string(i) + ".py");
  }
  ContextSummary s = Must(g.graph->Summarize("c"));
  CHECK(s.tokens_used <= 16);
  CHECK(s.tokens_used == Tokens(s.summary));
  CHECK(Contains(s.summary, "This context contains 30 messages."));
}

TEST_CASE("a summary reads only the newest summary_window messages") {
  ContextGraphOptions o = Manual();
  o.summary_window = 2;
  Graph g(o);
  g.Add("c", MessageRole::kUser, "Is the old question kept?");
  g.Add("c", MessageRole::kUser, "new one");
  g.Add("c", MessageRole::kUser, "newest");
  ContextSummary s = Must(g.graph->Summarize("c"));
  CHECK(Contains(s.summary, "3 messages; the newest 2 were read."));
  CHECK(!Contains(s.summary, "old question"));
  CHECK(s.key_insights.empty());
}

TEST_CASE("summary errors name the field") {
  Graph g(Manual());
  Status s = g.graph->Summarize("missing").status();
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(Contains(s.message(), "contextId 'missing'"));
  CHECK(g.graph->Summarize("").status().code() == StatusCode::kInvalidArgument);
  // A context made by a relationship has no messages.
  g.Add("a", MessageRole::kUser, "x");
  Must(g.graph->AddRelationship({.source = "a",
                                 .target = "empty",
                                 .type = "references",
                                 .create_missing = true}));
  s = g.graph->Summarize("empty").status();
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(s.message(), "no messages"));

  struct Bad {
    const char* field;
    void (*set)(ContextGraphOptions&);
  };
  const Bad bad[] = {
      {"message_limit_threshold",
       [](ContextGraphOptions& o) { o.message_limit_threshold = 0; }},
      {"token_limit_percentage",
       [](ContextGraphOptions& o) { o.token_limit_percentage = 101; }},
      {"max_summary_tokens",
       [](ContextGraphOptions& o) { o.max_summary_tokens = 15; }},
      {"summary_window", [](ContextGraphOptions& o) { o.summary_window = 0; }},
      {"summary_history",
       [](ContextGraphOptions& o) { o.summary_history = 1001; }},
      // Counted by an estimate, not exactly: refused (ConversationStore
      // alone allows it).
      {"model 'no-such-model'",
       [](ContextGraphOptions& o) { o.model = "no-such-model"; }},
  };
  for (const Bad& b : bad) {
    ContextGraphOptions o;
    b.set(o);
    Status open = ContextGraph::Open(*g.store, *g.convs, o).status();
    INFO(b.field);
    CHECK(open.code() == StatusCode::kInvalidArgument);
    CHECK(Contains(open.message(), b.field));
  }
}

TEST_CASE("deleting a context deletes its summaries") {
  Graph g(Manual());
  g.Add("c", MessageRole::kUser, "x");
  Must(g.graph->Summarize("c"));
  Must(g.graph->Summarize("c", {.force = true}));
  CHECK(g.Entries("graph.sum") == 2);
  CHECK(g.graph->DeleteContext("c").ok());
  CHECK(g.Entries("graph.sum") == 0);
  CHECK(Must(g.graph->Verify()).ok);
}

TEST_CASE("FindCodeBlocks follows the seed's fence pattern") {
  using internal::FindCodeBlocks;
  auto blocks = FindCodeBlocks("a ```js\nx()\n``` b ```\nplain\n``` c", 0.75);
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].language == "js");
  CHECK(blocks[0].code == "x()");
  CHECK(blocks[0].importance == 0.75);
  CHECK(blocks[1].language.empty());
  CHECK(blocks[1].code == "plain");
  // A language word must end at the line break; otherwise it is code.
  blocks = FindCodeBlocks("```c++ x\n```", 0.5);
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].language.empty());
  CHECK(blocks[0].code == "c++ x");
  // An unclosed fence is no block.
  CHECK(FindCodeBlocks("```py\nnever closed", 0.5).empty());
  // A huge block is cut at a character boundary.
  std::string big = "```\n" + std::string(5000, 'x') + "\xC3\xA9```";
  blocks = FindCodeBlocks(big, 0.5);
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].code.size() == ContextGraphLimits::kMaxCodeBlockBytes);
}

TEST_CASE("QuestionSentences keeps sentences ending in ? or ! over 10 bytes") {
  using internal::QuestionSentences;
  const std::vector<std::string> got = QuestionSentences(
      "Fix the bug. Why is the cache empty?? Stop! Does this scale well?!");
  REQUIRE(got.size() == 2);
  CHECK(got[0] == "Why is the cache empty??");
  CHECK(got[1] == "Does this scale well?!");
  CHECK(QuestionSentences("no questions here.").empty());
}

}  // namespace
}  // namespace ctxkit
