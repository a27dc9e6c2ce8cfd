// The compactor's JSON entry points as C++ users and the C ABI both reach
// them: unknown keys and unknown models refused with the closest valid
// names, the budget figures beside the document, the services' rule table
// under a request's rules, and the stored-conversation variant with its
// view version. Also the closest-key helper they share with the host's
// configuration.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/classifier.h"
#include "ctxkit/compactor.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/base/field_check.h"
#include "simdjson.h"
#include "tests/compactor/history_builders.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

using compactor_test::Array;
using compactor_test::Msg;

// A history of `turns` user/assistant rounds of about 60 tokens each.
std::string History(int turns) {
  std::vector<std::string> m = {Msg("system", "You are a travel agent.")};
  for (int i = 0; i < turns; ++i) {
    std::string words;
    for (int w = 0; w < 25; ++w) words += "city " + std::to_string(w) + " ";
    m.push_back(Msg("user", "Question " + std::to_string(i) + ": " + words));
    m.push_back(Msg("assistant", "Answer " + std::to_string(i) + ": " + words));
  }
  return Array(m);
}

std::string Request(std::string_view members, const std::string& history) {
  return "{" + std::string(members) + R"("messages":)" + history + "}";
}

std::string ErrorOf(const StatusOr<std::string>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kInvalidArgument);
  return result.status().message();
}

TEST_CASE("the closest known key") {
  constexpr std::string_view kKnown[] = {"max_tokens", "recent_window",
                                         "options", "model"};
  using internal::ClosestName;
  CHECK(ClosestName("max_token", kKnown) == "max_tokens");
  CHECK(ClosestName("MAX_TOKENS", kKnown) == "max_tokens");
  CHECK(ClosestName("recnet_window", kKnown) == "recent_window");  // a swap
  CHECK(ClosestName("tokens", kKnown) == "max_tokens");  // a part of it
  CHECK(ClosestName("modle", kKnown) == "model");
  CHECK(ClosestName("colour", kKnown).empty());  // nothing is close
  CHECK(ClosestName("", kKnown).empty());
  CHECK(ClosestName(std::string(1000, 'm'), kKnown).empty());

  CHECK(internal::UnknownKeyError("", "max_token", kKnown).message() ==
        "unknown key 'max_token'; did you mean 'max_tokens'?");
  CHECK(internal::UnknownKeyError("--config", "colour", kKnown).message() ==
        "--config: unknown key 'colour' (known: max_tokens, recent_window, "
        "options, model)");
}

TEST_CASE("CompactJson refuses unknown keys, naming the closest") {
  const Compactor c;
  const std::string h = History(30);
  CHECK(ErrorOf(c.CompactJson(Request(R"("max_token":2000,)", h))) ==
        "unknown key 'max_token'; did you mean 'max_tokens'?");
  CHECK(ErrorOf(c.CompactJson(
            Request(R"("options":{"enable_sumarization":false},)", h))) ==
        "options: unknown key 'enable_sumarization'; did you mean "
        "'enable_summarization'?");
  CHECK(ErrorOf(c.CompactJson(Request(R"("preserveRecent":3,)", h))) ==
        "unknown key 'preserveRecent'; did you mean 'preserve_recent'?");
  // Nothing close: every member is listed instead.
  const std::string far = ErrorOf(c.CompactJson(Request(R"("zzz":1,)", h)));
  CHECK(far.find("unknown key 'zzz' (known: messages, max_tokens,") == 0);
  CHECK(far.find("estimate_unknown_model") != std::string::npos);
  // A rule's unknown field, likewise.
  CHECK(ErrorOf(c.CompactJson(Request(
            R"("rules":[{"name":"r","tier":"anchor","contans_any":["x"]}],)",
            h))) ==
        "rules[0]: unknown key 'contans_any'; did you mean 'contains_any'?");

  // The same request spelled right compacts to the budget it names: the
  // typo above would otherwise have kept the 100,000-token default.
  CompactionBudget budget;
  auto ok = c.CompactJson(Request(R"("max_tokens":600,)", h), &budget);
  REQUIRE(ok.ok());
  CHECK(budget.target_tokens == 600);
  CHECK(budget.compacted_tokens <= 600);
}

TEST_CASE("an unknown model is refused unless an estimate is asked for") {
  const Compactor c;
  const std::string h = History(4);
  const std::string error =
      ErrorOf(c.CompactJson(Request(R"("model":"gpt4o",)", h)));
  CHECK(error.find("model: unknown model \"gpt4o\"; did you mean gpt-4o") == 0);
  CHECK(error.find("estimate_unknown_model") != std::string::npos);

  auto estimated = c.CompactJson(
      Request(R"("model":"gpt4o","estimate_unknown_model":true,)", h));
  REQUIRE(estimated.ok());
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(*estimated).value();
  CHECK(doc["counting"].get_string().value() == "estimate");
  CHECK(doc["encoding"].get_string().value() == "");

  // The options, from C++.
  CompactionOptions o;
  // Not a misspelt claude name: "claude-" is a prefix entry, so any
  // claude-... name is known.
  o.model = "gtp-4o";
  auto refused = c.Compact(h, o);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(refused.status().message().find("did you mean gpt-4o") !=
        std::string::npos);
  o.estimate_unknown_model = true;
  auto result = c.Compact(h, o);
  REQUIRE(result.ok());
  CHECK(result->method == CountMethod::kHeuristic);
  // A known model is counted exactly whatever the flag says.
  o.model = "gpt-4o";
  result = c.Compact(h, o);
  REQUIRE(result.ok());
  CHECK(result->method == CountMethod::kTokenizer);
}

TEST_CASE("CompactJson returns the budget figures beside the document") {
  const Compactor c;
  std::vector<std::string> m;
  for (int i = 0; i < 20; ++i)
    m.push_back(Msg("system", "rule " + std::to_string(i)));
  m.push_back(Msg("user", "go"));
  CompactionBudget budget;
  budget.target_tokens = 12345;  // overwritten
  auto doc = c.CompactJson(
      R"({"max_tokens":5,"model":"gpt-4o","messages":)" + Array(m) + "}",
      &budget);
  REQUIRE(doc.ok());
  CHECK_FALSE(budget.met());
  CHECK(budget.status == BudgetStatus::kInfeasible);
  CHECK(budget.target_tokens == 5);
  CHECK(budget.over_budget_by == budget.compacted_tokens - 5);
  simdjson::dom::parser p;
  simdjson::dom::element root = p.parse(*doc).value();
  CHECK(root["budget"]["status"].get_string().value() == "infeasible");
  CHECK(root["budget"]["over_by"].get_uint64().value() ==
        budget.over_budget_by);
  CHECK(root["token_estimate"].get_uint64().value() == budget.compacted_tokens);

  // On error *budget is left alone.
  CompactionBudget untouched;
  untouched.target_tokens = 7;
  CHECK_FALSE(
      c.CompactJson(R"({"max_token":5,"messages":[]})", &untouched).ok());
  CHECK(untouched.target_tokens == 7);
}

TEST_CASE("a bare array of messages is a request with every default") {
  const Compactor c;
  const std::string h = History(3);
  auto bare = c.CompactJson(h);
  auto wrapped = c.CompactJson(Request("", h));
  REQUIRE(bare.ok());
  REQUIRE(wrapped.ok());
  CHECK(*bare == *wrapped);
}

TEST_CASE("the services' rule table, with a request's rules after its own") {
  auto table = std::make_shared<Classifier>(Classifier::WithBuiltinRules());
  REQUIRE(
      table
          ->AddRulesJson(
              R"([{"name":"city_talk","tier":"anchor","contains_any":["Question 1:"]}])")
          .ok());
  CompactorServices services;
  services.classifier = table;
  const Compactor c(services);
  const std::string h = History(3);
  auto doc = c.CompactJson(Request(
      R"("explain":true,"rules":[{"name":"answers","tier":"transient","contains_any":["Answer "]},)"
      R"({"name":"q1","tier":"important","contains_any":["Question 1:"]}],)",
      h));
  REQUIRE(doc.ok());
  simdjson::dom::parser p;
  simdjson::dom::element root = p.parse(*doc).value();
  std::vector<std::string> rules;
  for (simdjson::dom::element d : root["decisions"].get_array()) {
    rules.emplace_back(d["rule"].get_string().value());
  }
  REQUIRE(rules.size() == 7);
  CHECK(rules[3] == "city_talk");  // the services' rule comes first
  CHECK(rules[4] == "answers");    // then the request's, before built-ins

  // A request's rule may not take the name of the services' own.
  CHECK(
      ErrorOf(c.CompactJson(Request(
          R"("rules":[{"name":"city_talk","tier":"routine","contains_any":["x"]}],)",
          h))) == "rules[0].name \"city_talk\" is already used");

  // Options that name their own classifier replace the table.
  CompactionOptions o;
  o.explain = true;
  o.classifier = Classifier::Default();
  auto result = c.Compact(h, o);
  REQUIRE(result.ok());
  CHECK(result->decisions[3].rule != "city_talk");
}

TEST_CASE("CompactConversationJson: options without messages, the view saved") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto convs = ConversationStore::Open(**store);
  REQUIRE(convs.ok());
  // Conversations may hold any model name: theirs is estimated.
  auto conv = (*convs)->Create({.title = "t", .model = "my-local-model"});
  REQUIRE(conv.ok());
  std::vector<NewMessage> batch;
  for (int i = 0; i < 30; ++i) {
    batch.push_back(
        {.role = i % 2 ? MessageRole::kAssistant : MessageRole::kUser,
         .content = "message " + std::to_string(i) +
                    " about the weather in many cities today"});
  }
  REQUIRE((*convs)->AddMessages(conv->id, batch).ok());
  const Compactor c;

  CompactionBudget budget;
  uint64_t version = 0;
  auto doc = c.CompactConversationJson(
      **convs, conv->id, R"({"max_tokens":200})", &budget, &version);
  REQUIRE(doc.ok());
  CHECK(version == 1);
  CHECK(budget.met());
  CHECK(budget.target_tokens == 200);
  const std::string head = R"({"schema_version":1,"conversation_id":")" +
                           conv->id + R"(","view_version":1,"messages":)";
  CHECK(doc->substr(0, head.size()) == head);
  simdjson::dom::parser p;
  simdjson::dom::element root = p.parse(*doc).value();
  CHECK(root["counting"].get_string().value() == "estimate");
  auto view = (*convs)->GetCompactedView(conv->id);
  REQUIRE(view.ok());
  CHECK(view->version == 1);

  // Empty options are the defaults; seed 000's shape puts the view first.
  doc = c.CompactConversationJson(**convs, conv->id, "");
  REQUIRE(doc.ok());
  doc = c.CompactConversationJson(**convs, conv->id,
                                  R"({"response":"compress_context"})", nullptr,
                                  &version);
  REQUIRE(doc.ok());
  CHECK(version == 3);
  CHECK(doc->find(R"({"conversation_id":")" + conv->id +
                  R"(","view_version":3,"success":true,)") == 0);

  // Unknown keys, messages, and a caller's unknown model are refused, and
  // no view is saved for them.
  CHECK(ErrorOf(c.CompactConversationJson(**convs, conv->id,
                                          R"({"max_token":100})")) ==
        "unknown key 'max_token'; did you mean 'max_tokens'?");
  CHECK(ErrorOf(
            c.CompactConversationJson(**convs, conv->id, R"({"messages":[]})"))
            .find("messages: not allowed") == 0);
  CHECK(ErrorOf(c.CompactConversationJson(**convs, conv->id,
                                          R"({"model":"my-local-model"})"))
            .find("model: unknown model") == 0);
  view = (*convs)->GetCompactedView(conv->id);
  REQUIRE(view.ok());
  CHECK(view->version == 3);
  CHECK(c.CompactConversationJson(**convs, conv->id, "[]").status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ctxkit
