// Tests of ctxkit::QueryOptimizer: seed 000's example, the content guarantee
// on generated queries, idempotence, each rule family's conditions, every
// bad input, max_tokens, custom rules and the JSON shape.

#include "ctxkit/query_optimizer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ctxkit/model_registry.h"
#include "lib/json/json_reader.h"
#include "lib/optimizer/segmenter.h"

namespace ctxkit {
namespace {

const char kSeedQuery[] =
    "I was just wondering if you could maybe help me understand how to "
    "really optimize my prompts for better token usage, basically.";

QueryOptimization Run(std::string_view query, OptimizeOptions o = {}) {
  StatusOr<QueryOptimization> r = QueryOptimizer::Default().Optimize(query, o);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *std::move(r);
}

std::string Opt(std::string_view query,
                OptimizationGoal goal = OptimizationGoal::kBoth) {
  OptimizeOptions o;
  o.goal = goal;
  return Run(query, o).optimized_query;
}

const QueryIssue* FindIssue(const QueryOptimization& r, IssueType type) {
  for (const QueryIssue& i : r.issues) {
    if (i.type == type) return &i;
  }
  return nullptr;
}

size_t Tokens(std::string_view text) {
  StatusOr<TokenCount> c = CountTokens("claude-3-5-sonnet", text);
  REQUIRE(c.ok());
  return c->tokens;
}

TEST_CASE("seed 000 example: issues found and a large saving") {
  const QueryOptimization r = Run(kSeedQuery);
  CHECK(r.original_query == kSeedQuery);
  CHECK(r.original_tokens == Tokens(kSeedQuery));
  CHECK(r.optimized_tokens == Tokens(r.optimized_query));
  CHECK(r.optimized_query ==
        "Help me understand how to optimize my prompts for better token "
        "usage.");
  const QueryIssue* filler = FindIssue(r, IssueType::kFillerWords);
  REQUIRE(filler != nullptr);
  CHECK(filler->words ==
        std::vector<std::string>{"just", "maybe", "really", "basically"});
  CHECK(filler->occurrences == 4);
  CHECK(filler->impact != Impact::kLow);
  const QueryIssue* hedge = FindIssue(r, IssueType::kHedging);
  REQUIRE(hedge != nullptr);
  CHECK(hedge->words.size() == 1);
  const QueryIssue* verbosity = FindIssue(r, IssueType::kVerbosity);
  REQUIRE(verbosity != nullptr);
  REQUIRE(verbosity->score.has_value());
  CHECK(*verbosity->score >= 0.4);
  CHECK(verbosity->impact == Impact::kHigh);
  CHECK(r.tokens_saved == static_cast<int64_t>(r.original_tokens) -
                              static_cast<int64_t>(r.optimized_tokens));
  CHECK(r.tokens_saved >= 10);
  CHECK(r.reduction_percent >= 40.0);
  CHECK(r.clarity_score > r.original_clarity_score);
  CHECK(r.clarity_score >= 0.9);
  CHECK(std::find(r.improvements.begin(), r.improvements.end(),
                  "Removed filler words (4)") != r.improvements.end());
  CHECK(std::find(r.improvements.begin(), r.improvements.end(),
                  "Preserved core meaning") != r.improvements.end());
  REQUIRE(r.recommendations.size() >= 2);
  bool direct = false;
  for (const QueryRecommendation& rec : r.recommendations) {
    CHECK(rec.tokens_saved > 0);
    if (rec.suggestion.find("direct language") != std::string::npos) {
      direct = true;
    }
  }
  CHECK(direct);
  CHECK(r.tokens_exact == false);  // claude-3-5: an estimate
}

TEST_CASE("rules: fillers, negation, determiners, clause edges") {
  // "just" restricts here ("merely slow"); only "really" is padding.
  CHECK(Opt("It is just really slow.") == "It is just slow.");
  CHECK(Opt("It is not really slow.") == "It is not really slow.");
  CHECK(Opt("It isn't very fast.") == "It isn't very fast.");
  CHECK(Opt("What kind of lock is this?") == "What kind of lock is this?");
  // A hedge in a statement says how sure the writer is: it stays.
  CHECK(Opt("The cache is kind of slow.") == "The cache is kind of slow.");
  CHECK(Opt("Actually, the test fails.") == "The test fails.");
  CHECK(Opt("What does it actually return?") ==
        "What does it actually return?");
  CHECK(Opt("It fails, actually.") == "It fails.");
  CHECK(Opt("The parser, basically, ignores tabs.") ==
        "The parser ignores tabs.");
  CHECK(Opt("Use the very first row.") == "Use the very first row.");
  CHECK(Opt("just-in-time compilation") == "just-in-time compilation");
}

TEST_CASE("rules: hedged requests become direct requests") {
  CHECK(Opt("Could you explain how the cache works?") ==
        "Explain how the cache works.");
  CHECK(Opt("Can you run Python code?") == "Can you run Python code?");
  CHECK(Opt("Hi, could you please review this diff? Thanks in advance!") ==
        "Review this diff.");
  CHECK(Opt("I was wondering if you could help me with `foo()`.") ==
        "Help me with `foo()`.");
  CHECK(Opt("i was wondering if you could help me") == "help me");
  CHECK(Opt("Please, if you don't mind, explain the error.") ==
        "Explain the error.");
  CHECK(Opt("I think maybe the index is stale.") ==
        "I think maybe the index is stale.");
  CHECK(Opt("Maybe you could rename the variable?") == "Rename the variable.");
  CHECK(Opt("I guess so.") == "I guess so.");
  CHECK(Opt("Fix the bug. Could you also add a test?") ==
        "Fix the bug. Could you also add a test?");
  CHECK(Opt("- Could you list the files?\n- Thanks!") ==
        "- List the files.\n-");
}

TEST_CASE("rules: redundant phrases") {
  CHECK(Opt("In order to build it, run make.") == "To build it, run make.");
  CHECK(Opt("It failed due to the fact that the disk was full.") ==
        "It failed because the disk was full.");
  CHECK(Opt("Check each and every file at this point in time.") ==
        "Check every file now.");
  // "whether or not" stays: "log it, whether or not it fails" means "in
  // either case".
  CHECK(Opt("Check whether or not it is able to parse it.") ==
        "Check whether or not it can parse it.");
  CHECK(Opt("Don't delete any and all files.") == "Don't delete any files.");
}

TEST_CASE("goals choose what is edited") {
  const char* q = "Could you please explain in order to really understand it?";
  CHECK(Opt(q, OptimizationGoal::kBoth) == "Explain to understand it.");
  // Clarity: the request becomes direct and the phrase shorter, but the
  // filler word and politeness inside the sentence stay.
  CHECK(Opt("Could you explain why it is really slow, please?",
            OptimizationGoal::kImproveClarity) ==
        "Explain why it is really slow, please.");
  CHECK(Opt("Could you explain why it is really slow, please?",
            OptimizationGoal::kReduceTokens) == "Explain why it is slow.");
  // Vague words are flagged, never removed.
  OptimizeOptions o;
  o.goal = OptimizationGoal::kImproveClarity;
  const QueryOptimization r = Run("Fix the stuff and things in the parser.", o);
  CHECK(r.optimized_query == "Fix the stuff and things in the parser.");
  const QueryIssue* vague = FindIssue(r, IssueType::kVagueLanguage);
  REQUIRE(vague != nullptr);
  CHECK(vague->words == std::vector<std::string>{"stuff", "things"});
  CHECK(r.clarity_score < 1.0);
  bool recommended = false;
  for (const QueryRecommendation& rec : r.recommendations) {
    if (rec.suggestion.find("vague") != std::string::npos) recommended = true;
  }
  CHECK(recommended);
}

TEST_CASE("protected spans are never touched") {
  const char* q =
      "Just run `just really basically` and \"really just\" and 'very "
      "quite' on https://example.com/just/really?x=basically and "
      "src/just_really.cc, basically.\n```\njust really\n```\n";
  const std::string out = Opt(q);
  CHECK(out ==
        "Run `just really basically` and \"really just\" and 'very quite' on "
        "https://example.com/just/really?x=basically and src/just_really.cc.\n"
        "```\njust really\n```\n");
  // An unterminated code span protects the rest.
  CHECK(Opt("Really fix `it just really") == "Fix `it just really");
}

// ---- generated queries: the guarantee ----

// Content pieces: each must survive verbatim (a plain word may gain a
// capital first letter). Words are checked below to be absent from every
// rule pattern.
const std::vector<std::string>& ContentPieces() {
  static const std::vector<std::string> kPieces = {
      "`std::vector<int> just_really`",
      "```python\nprint('really basically')\n```",
      "\"just really quite\"",
      "'very basically'",
      "42",
      "3.14159",
      "1,000",
      "snake_case_name",
      "camelCaseName",
      "src/lib/really_just.cc",
      "/usr/local/bin/tool",
      "https://example.com/a/just?q=really",
      "www.example.org/basically",
      "naïve",
      "café",
      "東京タワー",
      "Привет",
      "parser",
      "benchmark",
      "latency",
      "migrate",
      "database",
      "v2.3.1",
      "ctxkit::Store",
      "x86-64",
      "O(n)",
      "README.md",
      "JSON",
  };
  return kPieces;
}

const std::vector<std::string>& Fillers() {
  static const std::vector<std::string> kFillers = {"just",
                                                    "really",
                                                    "basically",
                                                    "literally",
                                                    "very",
                                                    "quite",
                                                    "totally",
                                                    "essentially",
                                                    "maybe",
                                                    "pretty much",
                                                    "definitely",
                                                    "kind of",
                                                    "perhaps",
                                                    "in order to",
                                                    "each and every",
                                                    "at this point in time",
                                                    "please",
                                                    "absolutely",
                                                    "due to the fact that"};
  return kFillers;
}

struct Template {
  std::string prefix;
  std::string middle;
  std::string suffix;
};

const std::vector<Template>& Templates() {
  static const std::vector<Template> kTemplates = {
      {"I was just wondering if you could maybe explain ", " ", "?"},
      {"Could you please review ", " and ", ", basically."},
      {"Hi, ", " is ", " slow. Thanks in advance!"},
      {"Basically, ", ", ", "."},
      {"I think maybe ", " ", " fails."},
      {"Please check ", " (", ") for me."},
      {"", " ", ""},
      {"Can you tell me why ", " calls ", "?\nThanks!"},
      {"It would be great if you could fix ", ", ", " if you don't mind."},
      {"Well, ", "\n\n", " and so on."},
  };
  return kTemplates;
}

// Finds `piece` in `text` at or after `from`, allowing a capitalized first
// letter; returns the end or npos.
size_t FindPiece(const std::string& text, const std::string& piece,
                 size_t from) {
  size_t at = text.find(piece, from);
  if (at == std::string::npos && !piece.empty() && piece[0] >= 'a' &&
      piece[0] <= 'z') {
    std::string cap = piece;
    cap[0] = static_cast<char>(cap[0] - 'a' + 'A');
    at = text.find(cap, from);
  }
  return at == std::string::npos ? at : at + piece.size();
}

TEST_CASE("content words used by the generator are named by no rule") {
  std::set<std::string> rule_words;
  for (const QueryRule& r : QueryOptimizer::Default().rules()) {
    std::string w;
    for (char c : r.pattern + " ") {
      if ((c >= 'a' && c <= 'z') || c == '\'') {
        w.push_back(c);
      } else if (!w.empty()) {
        rule_words.insert(w);
        w.clear();
      }
    }
  }
  for (const char* word : {"parser", "benchmark", "latency", "migrate",
                           "database", "tabs", "calls", "fails", "slow"}) {
    CHECK_MESSAGE(rule_words.count(word) == 0, word);
  }
}

TEST_CASE("generated queries keep all content, in order, and are stable") {
  const auto& pieces = ContentPieces();
  const auto& fillers = Fillers();
  size_t cases = 0;
  size_t saved_total = 0;
  for (size_t t = 0; t < Templates().size(); ++t) {
    const Template& tpl = Templates()[t];
    for (size_t f = 0; f < fillers.size(); ++f) {
      // Two content pieces per query, chosen so every piece pairs with
      // every template.
      const std::string& a = pieces[(t * 7 + f * 3) % pieces.size()];
      const std::string& b = pieces[(t * 5 + f * 11 + 1) % pieces.size()];
      const std::string& filler = fillers[f];
      const std::string& filler2 = fillers[(f + t + 3) % fillers.size()];
      const std::string query = tpl.prefix + filler + " " + a + tpl.middle +
                                filler2 + " " + b + tpl.suffix;
      for (OptimizationGoal goal :
           {OptimizationGoal::kBoth, OptimizationGoal::kReduceTokens,
            OptimizationGoal::kImproveClarity}) {
        ++cases;
        OptimizeOptions o;
        o.goal = goal;
        const QueryOptimization r = Run(query, o);
        const std::string& out = r.optimized_query;
        INFO("query: " << query << "\noptimized: " << out
                       << "\ngoal: " << OptimizationGoalName(goal));
        // The guarantee: both pieces, in order.
        size_t pos = FindPiece(out, a, 0);
        CHECK(pos != std::string::npos);
        if (pos != std::string::npos)
          CHECK(FindPiece(out, b, pos) != std::string::npos);
        // Tidy output.
        CHECK(out.find("  ") == std::string::npos);
        CHECK(out.find(" ,") == std::string::npos);
        CHECK(out.find(",,") == std::string::npos);
        CHECK(out.find(", .") == std::string::npos);
        CHECK(out.find(",.") == std::string::npos);
        CHECK(out.find(" .") == std::string::npos);
        REQUIRE(!out.empty());
        CHECK(out.front() != ' ');
        CHECK(out.front() != ',');
        CHECK(r.original_tokens == Tokens(query));
        CHECK(r.optimized_tokens == Tokens(out));
        if (goal != OptimizationGoal::kImproveClarity) {
          CHECK(r.optimized_tokens <= r.original_tokens);
        }
        if (goal == OptimizationGoal::kBoth) {
          saved_total += r.original_tokens - r.optimized_tokens;
          // Idempotence: nothing more to remove.
          const QueryOptimization again = Run(out, o);
          CHECK(again.optimized_query == out);
          CHECK(FindIssue(again, IssueType::kFillerWords) == nullptr);
          CHECK(FindIssue(again, IssueType::kHedging) == nullptr);
          CHECK(FindIssue(again, IssueType::kRedundantPhrase) == nullptr);
          CHECK(FindIssue(again, IssueType::kPoliteness) == nullptr);
          CHECK(again.tokens_saved == 0);
        }
      }
    }
  }
  CHECK(cases >= 500);
  MESSAGE("generated cases: " << cases
                              << ", tokens saved (goal both): " << saved_total);
}

// ---- validation ----

void ExpectInvalid(const StatusOr<QueryOptimization>& r,
                   std::string_view field) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK_MESSAGE(r.status().message().find(field) != std::string::npos,
                r.status().message());
}

TEST_CASE("every bad input is INVALID_ARGUMENT naming the field") {
  const QueryOptimizer& q = QueryOptimizer::Default();
  ExpectInvalid(q.Optimize(""), "query");
  ExpectInvalid(
      q.Optimize(std::string(QueryOptimizer::kMaxQueryBytes + 1, 'a')),
      "query");
  CHECK(q.Optimize(std::string(QueryOptimizer::kMaxQueryBytes, 'a')).ok());
  ExpectInvalid(q.Optimize("bad \xC3 utf8"), "query");
  ExpectInvalid(q.Optimize("bad \xED\xA0\x80 surrogate"), "query");
  {
    OptimizeOptions o;
    o.context = "";
    ExpectInvalid(q.Optimize("fix it", o), "context");
    o.context = "\xFF";
    ExpectInvalid(q.Optimize("fix it", o), "context");
    o.context = std::string(QueryOptimizer::kMaxContextBytes + 1, 'x');
    ExpectInvalid(q.Optimize("fix it", o), "context");
  }
  {
    OptimizeOptions o;
    o.model = "";
    ExpectInvalid(q.Optimize("fix it", o), "model");
    o.model = "\xC0\xAF";
    ExpectInvalid(q.Optimize("fix it", o), "model");
    o.model = std::string(QueryOptimizer::kMaxModelBytes + 1, 'm');
    ExpectInvalid(q.Optimize("fix it", o), "model");
  }
  {
    OptimizeOptions o;
    o.goal = static_cast<OptimizationGoal>(7);
    ExpectInvalid(q.Optimize("fix it", o), "optimization_goal");
    o.goal = static_cast<OptimizationGoal>(-1);
    ExpectInvalid(q.Optimize("fix it", o), "optimization_goal");
  }
  for (int64_t bad :
       {int64_t{0}, int64_t{-5}, QueryOptimizer::kMaxMaxTokens + 1, INT64_MAX,
        INT64_MIN}) {
    OptimizeOptions o;
    o.max_tokens = bad;
    ExpectInvalid(q.Optimize("fix it", o), "max_tokens");
  }
  StatusOr<OptimizationGoal> g = ParseOptimizationGoal("shorter");
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().message().find("optimization_goal") != std::string::npos);
  CHECK(*ParseOptimizationGoal("reduce_tokens") ==
        OptimizationGoal::kReduceTokens);
  CHECK(*ParseOptimizationGoal("improve_clarity") ==
        OptimizationGoal::kImproveClarity);
  CHECK(*ParseOptimizationGoal("both") == OptimizationGoal::kBoth);
}

TEST_CASE("max_tokens cuts at a clause, else at a word") {
  const std::string q =
      "Could you please explain the café migration plan for the database "
      "東京タワー in detail, covering every step and rollback?";
  for (int64_t max : {1, 2, 3, 5, 8, 13, 21}) {
    OptimizeOptions o;
    o.max_tokens = max;
    const QueryOptimization r = Run(q, o);
    INFO("max " << max << ": " << r.optimized_query);
    CHECK(r.truncated);
    // Within the budget, or only the first word, reported as over it.
    CHECK((r.optimized_tokens <= static_cast<size_t>(max)) !=
          r.over_max_tokens);
    if (r.over_max_tokens) CHECK(r.optimized_query == "Explain");
    CHECK(r.optimized_tokens == Tokens(r.optimized_query));
    // A prefix of the untruncated optimization ending a word or a clause.
    const std::string full = Opt(q);
    REQUIRE(full.size() > r.optimized_query.size());
    CHECK(full.compare(0, r.optimized_query.size(), r.optimized_query) == 0);
    const char next = full[r.optimized_query.size()];
    CHECK((next == ' ' || next == ','));
    CHECK(!r.improvements.empty());
    for (const std::string& i : r.improvements) {
      CHECK(i.find("meaning") == std::string::npos);
    }
    CHECK(r.improvements.back().find("max_tokens") != std::string::npos);
    CHECK(r.recommendations.front().priority == "high");
  }
  {
    // A clause end that fits wins over a longer cut at a word.
    const std::string clause =
        "Explain the café migration plan for the database 東京タワー in "
        "detail,";
    OptimizeOptions o;
    for (size_t extra : {0, 1, 2}) {
      o.max_tokens = static_cast<int64_t>(Tokens(clause) + extra);
      CHECK(Run(q, o).optimized_query == clause);
    }
  }
  OptimizeOptions o;
  o.max_tokens = 1000;
  const QueryOptimization r = Run(q, o);
  CHECK_FALSE(r.truncated);
  CHECK_FALSE(r.over_max_tokens);
  // An unknown model truncates by the estimate.
  o.model = "no-such-model";
  o.max_tokens = 4;
  const QueryOptimization u = Run(q, o);
  CHECK(u.truncated);
  CHECK(u.optimized_tokens <= 4);
  CHECK_FALSE(u.tokens_exact);
  // An exact model.
  o.model = "gpt-4o";
  o.max_tokens = 6;
  const QueryOptimization e = Run(q, o);
  CHECK(e.tokens_exact);
  CHECK(e.optimized_tokens <= 6);
}

TEST_CASE("max_tokens never drops or enters a sentence holding a limit") {
  const std::string q =
      "Archive the old entries, but do not delete the log files.";
  OptimizeOptions o;
  o.max_tokens = 7;
  const QueryOptimization r = Run(q, o);
  CHECK(r.optimized_query == q);
  CHECK_FALSE(r.truncated);
  CHECK(r.over_max_tokens);
  CHECK(r.optimized_tokens > 7);
  REQUIRE(!r.improvements.empty());
  CHECK(r.improvements.back().find("over max_tokens 7") != std::string::npos);
  CHECK(r.recommendations.front().priority == "high");
  StatusOr<std::string> json = ToJson(r);
  REQUIRE(json.ok());
  CHECK(json->find(R"("truncated":false,"over_max_tokens":true)") !=
        std::string::npos);

  // Sentences after the last limit go whole; the limit stays.
  o.max_tokens = 8;
  const QueryOptimization cut =
      Run("Don't clear the queue. Check the logs, then restart the worker.", o);
  CHECK(cut.truncated);
  CHECK_FALSE(cut.over_max_tokens);
  CHECK(cut.optimized_query.rfind("Don't clear the queue.", 0) == 0);
  CHECK(cut.optimized_query.find("restart") == std::string::npos);

  // A condition protects its sentence like a negation.
  o.max_tokens = 3;
  const QueryOptimization cond =
      Run("Retry the request if it fails with a 503. Log it.", o);
  CHECK(cond.optimized_query == "Retry the request if it fails with a 503.");
  CHECK(cond.truncated);
  CHECK(cond.over_max_tokens);
}

TEST_CASE("context: counted, and repeated sentences recommended away") {
  OptimizeOptions o;
  o.context = "The parser reads the config file from disk at startup.";
  const QueryOptimization r = Run(
      "The parser reads the config file from disk at startup. Why is it slow?",
      o);
  REQUIRE(r.context_tokens.has_value());
  CHECK(*r.context_tokens == Tokens(*o.context));
  bool found = false;
  for (const QueryRecommendation& rec : r.recommendations) {
    if (rec.suggestion.find("context") != std::string::npos) {
      found = true;
      CHECK(rec.tokens_saved > 0);
    }
  }
  CHECK(found);
}

TEST_CASE("custom rules extend the table; bad rules are named") {
  QueryOptimizerOptions options;
  QueryRule r;
  r.type = IssueType::kRedundantPhrase;
  r.pattern = "at the (end|conclusion) of the (sprint|iteration)";
  r.replacement = "after the sprint";
  options.rules.push_back(r);
  QueryRule f;
  f.type = IssueType::kFillerWords;
  f.pattern = "frankly";
  options.rules.push_back(f);
  StatusOr<std::unique_ptr<QueryOptimizer>> opt =
      QueryOptimizer::Create(options);
  REQUIRE(opt.ok());
  StatusOr<QueryOptimization> res =
      (*opt)->Optimize("Frankly, ship it at the end of the iteration.");
  REQUIRE(res.ok());
  CHECK(res->optimized_query == "Ship it after the sprint.");

  auto bad = [](QueryRule rule, std::string_view what) {
    QueryOptimizerOptions o;
    o.rules.push_back(QueryRule{});
    o.rules[0].pattern = "ok";
    o.rules.push_back(std::move(rule));
    StatusOr<std::unique_ptr<QueryOptimizer>> c = QueryOptimizer::Create(o);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(c.status().message().find(what) != std::string::npos,
                  c.status().message());
  };
  QueryRule x;
  x.pattern = "";
  bad(x, "rules[1].pattern");
  x.pattern = "Upper";
  bad(x, "rules[1].pattern");
  x.pattern = "(a|b";
  bad(x, "rules[1].pattern");
  x.pattern = "(a|)";
  bad(x, "rules[1].pattern");
  x.pattern = "(a)? b";
  bad(x, "rules[1].pattern");
  x.pattern = "a";
  x.type = IssueType::kVerbosity;
  bad(x, "rules[1].type");
  x.type = IssueType::kVagueLanguage;
  x.replacement = "b";
  bad(x, "rules[1].replacement");
  x.type = IssueType::kFillerWords;
  x.replacement = "\xFF";
  bad(x, "rules[1].replacement");
  x.replacement = "";
  x.restructure = true;
  bad(x, "rules[1].restructure");
  x.restructure = false;
  x.not_after = {"ok", "Not OK"};
  bad(x, "rules[1].not_after[1]");
  x.not_after = {};
  x.next_word_in = {""};
  bad(x, "rules[1].next_word_in[0]");
  x.next_word_in = {};
  x.position = static_cast<RulePosition>(9);
  bad(x, "rules[1].position");
}

TEST_CASE("ToJson gives seed 000's response shape") {
  OptimizeOptions o;
  o.context = "Some context.";
  const QueryOptimization r = Run(kSeedQuery, o);
  StatusOr<std::string> json = ToJson(r);
  REQUIRE(json.ok());
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> doc =
      internal::ParseJson(parser, *json, "result");
  REQUIRE(doc.ok());
  simdjson::dom::object root = doc->get_object().value();
  simdjson::dom::object original = root["original"].get_object().value();
  CHECK(std::string_view(original["query"].get_string().value()) == kSeedQuery);
  CHECK(original["tokens"].get_uint64().value() == r.original_tokens);
  simdjson::dom::array issues = original["issues"].get_array().value();
  simdjson::dom::object first = issues.at(0).get_object().value();
  CHECK(std::string_view(first["type"].get_string().value()) == "filler_words");
  CHECK(first["words"].get_array().value().size() == 4);
  CHECK(std::string_view(first["impact"].get_string().value()) == "moderate");
  bool verbosity = false;
  for (simdjson::dom::element e : issues) {
    simdjson::dom::object issue = e.get_object().value();
    if (std::string_view(issue["type"].get_string().value()) == "verbosity") {
      verbosity = true;
      CHECK(issue["score"].get_double().value() > 0.4);
    }
  }
  CHECK(verbosity);
  simdjson::dom::object optimized = root["optimized"].get_object().value();
  CHECK(std::string_view(optimized["query"].get_string().value()) ==
        r.optimized_query);
  CHECK(optimized["tokens"].get_uint64().value() == r.optimized_tokens);
  CHECK(optimized["improvements"].get_array().value().size() ==
        r.improvements.size());
  simdjson::dom::object analysis = root["analysis"].get_object().value();
  CHECK(analysis["tokens_saved"].get_int64().value() == r.tokens_saved);
  CHECK(analysis["reduction_percent"].get_double().value() ==
        r.reduction_percent);
  CHECK(analysis["clarity_score"].get_double().value() == r.clarity_score);
  simdjson::dom::array recs = analysis["recommendations"].get_array().value();
  REQUIRE(recs.size() == r.recommendations.size());
  simdjson::dom::object rec = recs.at(0).get_object().value();
  CHECK(std::string_view(rec["priority"].get_string().value()) == "high");
  CHECK(rec["tokens_saved"].get_uint64().value() > 0);
  CHECK(root["context"]["tokens"].get_uint64().value() == *r.context_tokens);
  MESSAGE(*json);
}

TEST_CASE("segmenter: protected spans, words, punctuation") {
  using internal::Segment;
  using internal::TextTokenKind;
  const std::string text =
      "Use `a b` and \"c d\" or 'e f' (see https://x.io/y). don't snake_case!";
  const auto tokens = Segment(text);
  CHECK(internal::JoinTokens(tokens) == text);
  std::vector<std::string> protected_spans;
  for (const auto& t : tokens) {
    if (t.kind == TextTokenKind::kProtected) protected_spans.push_back(t.text);
  }
  CHECK(protected_spans == std::vector<std::string>{"`a b`", "\"c d\"", "'e f'",
                                                    "https://x.io/y"});
  CHECK(internal::WordKey("Don\xE2\x80\x99t") == "don't");
  CHECK(internal::WordKey("snake_case") == "");
  CHECK(internal::WordKey("caf\xC3\xA9") == "");
}

TEST_CASE("concurrent use gives the same results") {
  const std::string expected = Opt(kSeedQuery);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < 20; ++k) {
        StatusOr<QueryOptimization> r =
            QueryOptimizer::Default().Optimize(kSeedQuery);
        if (!r.ok() || r->optimized_query != expected) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(mismatches.load() == 0);
}

}  // namespace
}  // namespace ctxkit
