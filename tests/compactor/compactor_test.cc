// ctxkit::Compactor: its guarantees on hand-built histories —
// budget, structure, determinism, summaries, strategies, explanations,
// bad input, the summarizer callback, caching, analytics and stored
// conversations. compactor_property_test.cc checks the same guarantees on
// thousands of generated histories.

#include "ctxkit/compactor.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/analytics.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/store.h"
#include "lib/json/json_writer.h"
#include "simdjson.h"
#include "tests/compactor/history_builders.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

using compactor_test::Array;
using compactor_test::Msg;

std::string Filler(int n, std::string_view word = "lorem") {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += word;
    out += ' ';
    out += std::to_string(i);
    out += ' ';
  }
  return out;
}

// A coding-agent style OpenAI history: system, task, then `turns` rounds of
// an assistant tool call, its result and a short assistant reply.
std::string AgentHistory(int turns) {
  std::vector<std::string> m;
  m.push_back(Msg("system", "You are a coding agent. Use the tools."));
  m.push_back(Msg("user", "Fix the failing test in src/parser.py please."));
  for (int t = 0; t < turns; ++t) {
    const std::string id = "call_" + std::to_string(t);
    m.push_back(
        R"({"role":"assistant","content":null,"tool_calls":[{"id":")" + id +
        R"(","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"src/mod)" +
        std::to_string(t) + R"(.py\"}"}}]})");
    m.push_back(R"({"role":"tool","tool_call_id":")" + id + R"(","content":")" +
                Filler(40, "def") + R"("})");
    m.push_back(Msg("assistant", "Read module " + std::to_string(t) + ". " +
                                     Filler(10, "looks")));
  }
  m.push_back(Msg("user", "ok"));
  m.push_back(Msg("assistant", "Done: the test passes now."));
  return Array(m);
}

size_t Recount(const CompactionResult& r, std::string_view model) {
  StatusOr<MessageCount> n = CountMessagesForModel(model, r.messages_json);
  REQUIRE(n.ok());
  return n->total;
}

CompactionResult MustCompact(const Compactor& c, std::string_view json,
                             const CompactionOptions& o) {
  StatusOr<CompactionResult> r = c.Compact(json, o);
  if (!r.ok()) FAIL(r.status().message());
  return *std::move(r);
}

CompactionOptions Gpt4o(int64_t max_tokens) {
  CompactionOptions o;
  o.model = "gpt-4o";
  o.max_tokens = max_tokens;
  o.recent_window = 3;
  return o;
}

TEST_CASE("within budget, the history comes back byte for byte") {
  const std::string json = AgentHistory(3);
  Compactor c;
  CompactionResult r = MustCompact(c, json, Gpt4o(100000));
  simdjson::dom::parser p;
  CHECK(r.messages_json == simdjson::minify(p.parse(json).value()));
  CHECK(r.budget_met);
  CHECK(r.dropped_count == 0);
  CHECK(r.summary_count == 0);
  CHECK(r.compacted_tokens == r.original_tokens);
  CHECK(r.compacted_tokens == Recount(r, "gpt-4o"));
  CHECK(r.encoding == "o200k_base");
}

TEST_CASE("a tight budget is met exactly, with tool pairs intact") {
  const std::string json = AgentHistory(30);
  Compactor c;
  for (int64_t budget : {2000, 1000, 600, 300}) {
    CAPTURE(budget);
    CompactionResult r = MustCompact(c, json, Gpt4o(budget));
    CHECK(r.budget_met);
    CHECK(r.compacted_tokens <= static_cast<size_t>(budget));
    CHECK(r.compacted_tokens == Recount(r, "gpt-4o"));
    CHECK(ValidateChatHistory(r.messages_json, ChatFormat::kOpenAI).ok());
    CHECK(r.original_tokens > r.compacted_tokens);
    CHECK(r.summary_count >= 1);
    // The system prompt and the task are anchors: first, unchanged.
    CHECK(r.messages_json.find("You are a coding agent") < 40);
    CHECK(r.messages_json.find("Fix the failing test") != std::string::npos);
    CHECK(r.messages_json.find("Done: the test passes now.") !=
          std::string::npos);
    CHECK(r.messages_json.find("[Compressed context:") != std::string::npos);
  }
}

TEST_CASE("the same input gives the same bytes") {
  const std::string json = AgentHistory(25);
  Compactor c;
  CompactionOptions o = Gpt4o(700);
  o.explain = true;
  StatusOr<std::string> a = c.CompactJson(
      R"({"model":"gpt-4o","max_tokens":700,"explain":true,"messages":)" +
      json + "}");
  StatusOr<std::string> b = c.CompactJson(
      R"({"model":"gpt-4o","max_tokens":700,"explain":true,"messages":)" +
      json + "}");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
  CHECK(MustCompact(c, json, o).messages_json ==
        MustCompact(c, json, o).messages_json);
}

TEST_CASE("the seed 001 response has its fields") {
  const std::string json = AgentHistory(20);
  Compactor c;
  StatusOr<std::string> out = c.CompactJson(
      R"({"max_tokens":800,"recent_window":4,"keep_anchors":true,)"
      R"("options":{"token_counter_type":"openai","min_important_messages":3},)"
      R"("messages":)" +
      json + "}");
  REQUIRE(out.ok());
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(*out).value();
  CHECK(doc["messages"].get_array().value().size() > 0);
  CHECK(doc["summary"]["description"].get_string().value().starts_with(
      "[Compressed context:"));
  CHECK(doc["summary"]["tools"].get_array().value().size() >= 1);
  const int64_t estimate = doc["token_estimate"].get_int64().value();
  CHECK(estimate <= 800);
  simdjson::dom::object info = doc["compaction_info"].get_object().value();
  CHECK(info["original_count"].get_int64().value() == 2 + 3 * 20 + 2);
  CHECK(info["compacted_count"].get_int64().value() ==
        static_cast<int64_t>(doc["messages"].get_array().value().size()));
  CHECK(info["dropped_count"].get_int64().value() > 0);
  CHECK(info["anchor_count"].get_int64().value() >= 2);
  CHECK(info["tokens_saved"].get_int64().value() > 0);
  CHECK(info["compression_ratio"].get_double().value() < 1.0);
  CHECK(doc["budget"]["met"].get_bool().value());
  CHECK(doc["encoding"].get_string().value() == "cl100k_base");
  // token_estimate is the exact cl100k count of the messages returned.
  StatusOr<MessageCount> n = CountMessagesForCounterType(
      "openai", simdjson::minify(doc["messages"].get_array().value()));
  REQUIRE(n.ok());
  CHECK(static_cast<int64_t>(n->total) == estimate);
}

TEST_CASE("explain gives every message its tier, rule and fate") {
  std::vector<std::string> m = {
      Msg("system", "You are helpful."),
      Msg("user", "Build a CSV parser in C."),
      Msg("assistant", Filler(60)),
      Msg("user", "thanks"),
      Msg("assistant", "Error: segmentation fault in parse_line()"),
      Msg("assistant", Filler(60)),
      Msg("user", "Actually, use Rust instead."),
      Msg("assistant", "Switching to Rust."),
  };
  CompactionOptions o = Gpt4o(160);
  o.recent_window = 1;
  o.explain = true;
  Compactor c;
  CompactionResult r = MustCompact(c, Array(m), o);
  REQUIRE(r.decisions.size() == m.size());
  CHECK(r.decisions[0].tier == Tier::kAnchor);
  CHECK(r.decisions[0].rule == "system_prompt");
  CHECK(r.decisions[0].reason == "system");
  CHECK(r.decisions[1].rule == "task");
  CHECK(r.decisions[3].tier == Tier::kTransient);
  CHECK(r.decisions[3].action != MessageDecision::Action::kKept);
  CHECK(r.decisions[4].tier == Tier::kImportant);
  CHECK(r.decisions[6].tier == Tier::kAnchor);  // a user correction
  CHECK(r.decisions[6].action == MessageDecision::Action::kKept);
  CHECK(r.decisions[7].reason == "last_message");
  // Routine text goes before the important error.
  CHECK(r.decisions[2].action == MessageDecision::Action::kSummarized);
  CHECK(r.budget_met);
}

TEST_CASE("Anthropic histories keep alternation and tool blocks together") {
  std::vector<std::string> m;
  m.push_back(
      R"({"role":"user","content":[{"type":"text","text":"Find the bug in app.py","cache_control":{"type":"ephemeral"}}]})");
  for (int t = 0; t < 12; ++t) {
    const std::string id = "toolu_" + std::to_string(t);
    m.push_back(R"({"role":"assistant","content":[{"type":"text","text":")" +
                Filler(15, "thinking") + R"("},{"type":"tool_use","id":")" +
                id + R"(","name":"bash","input":{"command":"cat app.py"}}]})");
    m.push_back(
        R"({"role":"user","content":[{"type":"tool_result","tool_use_id":")" +
        id + R"(","content":")" + Filler(30, "line") + R"("}]})");
  }
  m.push_back(Msg("assistant", "The bug is on line 3."));
  const std::string json = Array(m);
  Compactor c;
  for (int64_t budget : {1500, 800, 400}) {
    CAPTURE(budget);
    CompactionOptions o;
    o.max_tokens = budget;
    o.recent_window = 2;
    CompactionResult r = MustCompact(c, json, o);
    CHECK(r.format == ChatFormat::kAnthropic);
    CHECK(r.encoding == "claude");
    CHECK(r.budget_met);
    CHECK(r.compacted_tokens <= static_cast<size_t>(budget));
    Status valid = ValidateChatHistory(r.messages_json, ChatFormat::kAnthropic);
    CHECK_MESSAGE(valid.ok(), valid.message());
    StatusOr<MessageCount> n =
        CountMessagesForCounterType("anthropic", r.messages_json);
    REQUIRE(n.ok());
    CHECK(n->total == r.compacted_tokens);
    // The task's cache_control survives.
    CHECK(r.messages_json.find(R"("cache_control":{"type":"ephemeral"})") !=
          std::string::npos);
  }
}

TEST_CASE("Anthropic roles alternate even when runs are dropped unsummarized") {
  // Found by the fuzzer: with no room for summaries, dropping an odd run
  // left two user messages side by side.
  const std::string json =
      R"([{"role":"user","content":"What is in main.go?"},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"view_file","input":{"path":"main.go"}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"package main\nfunc main() {}"},{"type":"text","text":"thanks"}]},)"
      R"({"role":"assistant","content":"It is an empty program."},)"
      R"({"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"text","text":"and this?"}]}])";
  Compactor c;
  for (CompactionStrategy strategy :
       {CompactionStrategy::kSmart, CompactionStrategy::kRemoveOld,
        CompactionStrategy::kSummarize, CompactionStrategy::kCompressSimilar}) {
    for (int64_t budget : {5, 1620, 1700}) {
      for (bool summaries : {true, false}) {
        CAPTURE(budget);
        CAPTURE(static_cast<int>(strategy));
        CompactionOptions o;
        o.max_tokens = budget;
        o.recent_window = 0;
        o.strategy = strategy;
        o.enable_summarization = summaries;
        CompactionResult r = MustCompact(c, json, o);
        Status valid =
            ValidateChatHistory(r.messages_json, ChatFormat::kAnthropic);
        CHECK_MESSAGE(valid.ok(), valid.message(), " ", r.messages_json);
        StatusOr<MessageCount> n =
            CountMessagesForCounterType("anthropic", r.messages_json);
        REQUIRE(n.ok());
        CHECK(n->total == r.compacted_tokens);
      }
    }
  }
}

TEST_CASE("must-keep messages that cannot fit are truncated with a marker") {
  std::vector<std::string> m = {
      Msg("system", "Rules: " + Filler(400, "rule")),
      Msg("user", "Summarize the rules."),
      Msg("assistant", Filler(50)),
      Msg("user", "Go on: " + Filler(300, "détail")),
  };
  Compactor c;
  CompactionResult r = MustCompact(c, Array(m), Gpt4o(500));
  CHECK(r.budget_met);
  CHECK(r.compacted_tokens <= 500);
  CHECK(r.compacted_tokens == Recount(r, "gpt-4o"));
  CHECK(r.truncated_count >= 1);
  CHECK(r.messages_json.find("[... ctxkit cut ") != std::string::npos);
  // The cut is at a character boundary: the output is valid UTF-8 JSON.
  simdjson::dom::parser p;
  CHECK(!p.parse(r.messages_json).error());
}

TEST_CASE("an infeasible budget says so and by how much") {
  // Only framing is left once every text is cut to nothing: 20 messages
  // of anchors cost more than 5 tokens whatever is done.
  std::vector<std::string> m;
  for (int i = 0; i < 20; ++i)
    m.push_back(Msg("system", "rule " + std::to_string(i)));
  m.push_back(Msg("user", "go"));
  Compactor c;
  CompactionResult r = MustCompact(c, Array(m), Gpt4o(5));
  CHECK_FALSE(r.budget_met);
  CHECK(r.over_budget_by == r.compacted_tokens - 5);
  CHECK(r.over_budget_by > 0);
  CHECK(r.compacted_tokens == Recount(r, "gpt-4o"));
  CHECK(ValidateChatHistory(r.messages_json).ok());
}

TEST_CASE(
    "the recent window alone over the target still terminates within budget") {
  std::vector<std::string> m = {Msg("user", "Task: refactor.")};
  for (int i = 0; i < 40; ++i) {
    m.push_back(Msg(i % 2 == 0 ? "assistant" : "user", Filler(30)));
  }
  CompactionOptions o = Gpt4o(200);
  o.recent_window = 40;
  o.strategy = CompactionStrategy::kSmart;
  Compactor c;
  CompactionResult r = MustCompact(c, Array(m), o);
  CHECK(r.budget_met);
  CHECK(r.compacted_tokens <= 200);
}

TEST_CASE("strategies") {
  const std::string json = AgentHistory(20);
  Compactor c;
  SUBCASE("remove_old drops without summaries, oldest first") {
    CompactionOptions o = Gpt4o(900);
    o.strategy = CompactionStrategy::kRemoveOld;
    o.explain = true;
    CompactionResult r = MustCompact(c, json, o);
    CHECK(r.budget_met);
    CHECK(r.summary_count == 0);
    CHECK(r.messages_json.find("[Compressed context:") == std::string::npos);
    // Kept non-anchor messages form a suffix of the history.
    bool dropping = true;
    for (const MessageDecision& d : r.decisions) {
      if (d.reason == "system" || d.reason == "anchor") continue;
      if (d.action == MessageDecision::Action::kKept) dropping = false;
      if (!dropping) CHECK(d.action == MessageDecision::Action::kKept);
    }
  }
  SUBCASE("summarize replaces everything before the recent window") {
    CompactionOptions o = Gpt4o(100000);
    o.strategy = CompactionStrategy::kSummarize;
    CompactionResult r = MustCompact(c, json, o);
    CHECK(r.summary_count == 1);
    CHECK(r.compacted_count <= 2 + 1 + 3 + 2);
    CHECK(r.compacted_tokens < r.original_tokens);
    CHECK(ValidateChatHistory(r.messages_json).ok());
  }
  SUBCASE("compress_similar merges same-role runs and repeated views") {
    std::vector<std::string> m = {
        Msg("user", "Look at config.yaml"),
        R"({"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"config.yaml\"}"}}]})",
        R"({"role":"tool","tool_call_id":"a","content":"port: 80"})",
        Msg("assistant", "First remark."),
        Msg("assistant", "Second remark."),
        R"({"role":"assistant","content":null,"tool_calls":[{"id":"b","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"config.yaml\",\"limit\":20}"}}]})",
        R"({"role":"tool","tool_call_id":"b","content":"port: 80"})",
        // The final decision is kept whole, so it comes after the merge.
        Msg("assistant", "The port is 80."),
        Msg("user", "And now?"),
    };
    CompactionOptions o = Gpt4o(100000);
    o.strategy = CompactionStrategy::kCompressSimilar;
    o.recent_window = 0;
    o.explain = true;
    CompactionResult r = MustCompact(c, Array(m), o);
    CHECK(ValidateChatHistory(r.messages_json).ok());
    CHECK(r.decisions[1].reason == "duplicate");
    CHECK(r.decisions[2].reason == "duplicate");
    CHECK(r.decisions[5].action == MessageDecision::Action::kKept);
    CHECK(r.decisions[4].action == MessageDecision::Action::kMerged);
    CHECK(r.messages_json.find("First remark.\\n\\nSecond remark.") !=
          std::string::npos);
    CHECK(r.compacted_tokens == Recount(r, "gpt-4o"));
  }
}

TEST_CASE("target_ratio bounds the target") {
  const std::string json = AgentHistory(20);
  CompactionOptions o = Gpt4o(100000);
  o.target_ratio = 0.3;
  Compactor c;
  CompactionResult r = MustCompact(c, json, o);
  CHECK(r.target_tokens == static_cast<size_t>(r.original_tokens * 0.3));
  CHECK(r.compacted_tokens <= r.target_tokens);
  CHECK(r.budget_met);
}

TEST_CASE("bad input is INVALID_ARGUMENT naming the message and field") {
  Compactor c;
  CompactionOptions o;
  struct Case {
    std::string json;
    std::string expect;
  };
  const Case cases[] = {
      {"[", "not valid JSON"},
      {"[]", "messages must not be empty"},
      {R"([{"role":"robot","content":"x"}])", "messages[0].role"},
      {R"([{"role":"user","content":"a"},{"role":"user","content":5}])",
       "messages[1].content"},
      {R"([{"role":"user","content":"a"},{"role":"tool","tool_call_id":"zz","content":"r"}])",
       "messages[1].tool_call_id"},
      {R"(42)", "chat history must be"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.json);
    StatusOr<CompactionResult> r = c.Compact(k.json, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(r.status().message().find(k.expect) != std::string::npos,
                  r.status().message());
  }
  StatusOr<std::string> neg = c.CompactJson(
      R"({"max_tokens":-5,"messages":[{"role":"user","content":"x"}]})");
  REQUIRE_FALSE(neg.ok());
  CHECK(neg.status().code() == StatusCode::kInvalidArgument);
  CHECK(neg.status().message().find("max_tokens") != std::string::npos);
  o.target_ratio = 0.95;
  StatusOr<CompactionResult> ratio =
      c.Compact(R"([{"role":"user","content":"x"}])", o);
  REQUIRE_FALSE(ratio.ok());
  CHECK(ratio.status().message().find("target_ratio") != std::string::npos);
}

class FixedSummarizer : public Summarizer {
 public:
  explicit FixedSummarizer(bool fail) : fail_(fail) {}
  StatusOr<std::string> Summarize(const SummaryRequest& request) override {
    ++calls;
    last_count = request.message_count;
    saw_extractive = request.extractive.starts_with("[Compressed context:");
    if (fail_) return Status(StatusCode::kUnavailable, "model down");
    return std::string("LLM SUMMARY of ") +
           std::to_string(request.message_count) + " messages";
  }
  int calls = 0;
  size_t last_count = 0;
  bool saw_extractive = false;

 private:
  bool fail_;
};

TEST_CASE("a registered summarizer writes summaries; failures fall back") {
  const std::string json = AgentHistory(20);
  CompactionOptions o = Gpt4o(700);
  o.enable_llm_summarization = true;
  auto good = std::make_shared<FixedSummarizer>(false);
  CompactorServices good_services;
  good_services.summarizer = good;
  Compactor with_good(good_services);
  CompactionResult r = MustCompact(with_good, json, o);
  CHECK(good->calls == static_cast<int>(r.summary_count));
  CHECK(good->saw_extractive);
  CHECK(r.messages_json.find("LLM SUMMARY of") != std::string::npos);
  CHECK(r.summarizer_failures == 0);
  CHECK(r.budget_met);

  auto bad = std::make_shared<FixedSummarizer>(true);
  CompactorServices bad_services;
  bad_services.summarizer = bad;
  Compactor with_bad(bad_services);
  CompactionResult f = MustCompact(with_bad, json, o);
  CHECK(bad->calls >= 1);
  CHECK(f.summarizer_failures == static_cast<size_t>(bad->calls));
  CHECK(f.messages_json.find("[Compressed context:") != std::string::npos);
  CHECK(f.budget_met);
}

TEST_CASE("caching returns the stored result for the same request only") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto cache = Cache::Open(**store);
  REQUIRE(cache.ok());
  CompactorServices services;
  services.cache = cache->get();
  Compactor c(services);
  const std::string json = AgentHistory(15);
  CompactionOptions o = Gpt4o(600);
  o.enable_caching = true;
  o.explain = true;
  CompactionResult first = MustCompact(c, json, o);
  CHECK_FALSE(first.from_cache);
  CompactionResult second = MustCompact(c, json, o);
  CHECK(second.from_cache);
  CHECK(second.messages_json == first.messages_json);
  CHECK(second.compacted_tokens == first.compacted_tokens);
  CHECK(second.decisions.size() == first.decisions.size());
  CHECK(second.summary.description == first.summary.description);
  o.max_tokens = 500;  // another option: another entry
  CHECK_FALSE(MustCompact(c, json, o).from_cache);
}

TEST_CASE("analytics records each compaction") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto analytics = Analytics::Open(**store);
  REQUIRE(analytics.ok());
  CompactorServices services;
  services.analytics = analytics->get();
  Compactor c(services);
  CompactionOptions o = Gpt4o(600);
  o.enable_analytics = true;
  CompactionResult r = MustCompact(c, AgentHistory(15), o);
  MustCompact(c, AgentHistory(15), o);
  CHECK(*(*analytics)->CallCount("compact") == 2);
  CHECK(*(*analytics)->Counter("compact.messages_in") ==
        static_cast<int64_t>(2 * r.original_count));
  CHECK(*(*analytics)->Counter("compact.tokens_saved") == 2 * r.tokens_saved());
}

TEST_CASE(
    "compacting a stored conversation keeps its messages and versions the "
    "view") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto convs = ConversationStore::Open(**store);
  REQUIRE(convs.ok());
  auto conv = (*convs)->Create({.title = "t", .model = "gpt-4o"});
  REQUIRE(conv.ok());
  std::vector<NewMessage> batch;
  batch.push_back({.role = MessageRole::kSystem, .content = "Be brief."});
  batch.push_back({.role = MessageRole::kUser, .content = "Plan a trip."});
  for (int i = 0; i < 30; ++i) {
    batch.push_back(
        {.role = i % 2 ? MessageRole::kUser : MessageRole::kAssistant,
         .content = Filler(20, "stop")});
  }
  REQUIRE((*convs)->AddMessages(conv->id, batch).ok());
  Compactor c;
  CompactionOptions o;
  o.max_tokens = 300;
  uint64_t v1 = 0;
  uint64_t v2 = 0;
  StatusOr<CompactionResult> r1 =
      c.CompactConversation(**convs, conv->id, o, &v1);
  REQUIRE(r1.ok());
  o.max_tokens = 200;
  StatusOr<CompactionResult> r2 =
      c.CompactConversation(**convs, conv->id, o, &v2);
  REQUIRE(r2.ok());
  CHECK(v1 == 1);
  CHECK(v2 == 2);
  CHECK(r1->encoding == "o200k_base");  // the conversation's model counts
  auto detail = (*convs)->Get(conv->id, true);
  REQUIRE(detail.ok());
  CHECK(detail->messages.size() == batch.size());
  auto view1 = (*convs)->GetCompactedView(conv->id, 1);
  REQUIRE(view1.ok());
  CHECK(view1->messages_json == r1->messages_json);
  auto latest = (*convs)->GetCompactedView(conv->id);
  REQUIRE(latest.ok());
  CHECK(latest->version == 2);
  CHECK(latest->messages_json == r2->messages_json);
  CHECK(
      c.CompactConversation(**convs, "00000000-0000-4000-8000-000000000000", o)
          .status()
          .code() == StatusCode::kNotFound);
}

TEST_CASE("a request may ask for seed 000's response") {
  Compactor c;
  StatusOr<std::string> out = c.CompactJson(
      R"({"strategy":"remove_old","target_ratio":0.5,"preserve_recent":5,)"
      R"("response":"compress_context","model":"gpt-4o","messages":)" +
      AgentHistory(15) + "}");
  REQUIRE(out.ok());
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(*out).value();
  CHECK(doc["success"].get_bool().value());
  CHECK(doc["strategy"].get_string().value() == "remove_old");
  CHECK(doc["compressed_tokens"].get_uint64().value() <=
        doc["original_tokens"].get_uint64().value() / 2);
  StatusOr<std::string> bad = c.CompactJson(
      R"({"response":"xml","messages":[{"role":"user","content":"x"}]})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("response") != std::string::npos);
}

TEST_CASE("seed 000's compress_context response") {
  Compactor c;
  CompactionOptions o = Gpt4o(600);
  CompactionResult r = MustCompact(c, AgentHistory(15), o);
  StatusOr<std::string> json = CompressContextResponseJson(r);
  REQUIRE(json.ok());
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(*json).value();
  CHECK(doc["success"].get_bool().value());
  CHECK(doc["original_tokens"].get_uint64().value() == r.original_tokens);
  CHECK(doc["compressed_tokens"].get_uint64().value() == r.compacted_tokens);
  CHECK(doc["tokens_saved"].get_int64().value() == r.tokens_saved());
  CHECK(doc["original_message_count"].get_uint64().value() == r.original_count);
  CHECK(doc["compressed_message_count"].get_uint64().value() ==
        r.compacted_count);
  CHECK(doc["strategy"].get_string().value() == "smart");
  size_t compressed = 0;
  uint64_t tokens = 0;
  for (simdjson::dom::element m : doc["compressed_messages"].get_array()) {
    if (m["is_compressed"].get_bool().value()) ++compressed;
    tokens += m["tokens"].get_uint64().value();
  }
  CHECK(compressed >= r.summary_count);
  CHECK(tokens + 3 == r.compacted_tokens);  // plus the reply priming
}

}  // namespace
}  // namespace ctxkit
