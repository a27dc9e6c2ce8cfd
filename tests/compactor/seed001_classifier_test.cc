// Seed 001's own classifier test cases (pgEdge/pgedge-postgres-mcp,
// internal/compactor/classifier_test.go), classified by ctxkit.
//
// Each of the seed's 39 tier expectations is one row. The message is built
// as the JSON the seed's test helpers build (createMessage: {role,
// content}; createToolMessage: an assistant message whose content is one
// Anthropic tool_use block with input {"query": ...}) and classified
// through ctxkit::Compactor with explain, so that the row covers parsing,
// the facts the engine derives and the rule table. Every row agrees with
// the seed unless it says why ctxkit deliberately differs; the test prints
// the agreement table for the closing note.
//
// The seed's text (seeds/001, "Message Classification") describes the
// tiers as: anchor - schema changes, user corrections, tool schemas;
// important - query analysis, errors, insights; contextual - useful
// context; routine - standard messages; transient - short
// acknowledgements.

#include <doctest/doctest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_inputs.h"
#include "ctxkit/classifier.h"
#include "ctxkit/compactor.h"

namespace ctxkit {
namespace {

struct SeedCase {
  const char* seed_test;  // the Go test function, without "TestClassifier_"
  const char* role;
  // The message text, or for a tool message the call's "query" input.
  const char* content;
  const char* tool;  // non-null: createToolMessage(role, tool, content)
  // NewClassifier's argument in the seed's test.
  bool preserve_tool_results;
  Tier seed;
  std::optional<Tier> seed_also;  // the seed accepts either tier
  Tier ctxkit;
  const char* rule;
  // Empty when ctxkit agrees with the seed; else why it deliberately
  // differs (the test then requires that it does differ).
  const char* differs_because;
};

constexpr Tier kA = Tier::kAnchor;
constexpr Tier kI = Tier::kImportant;
constexpr Tier kC = Tier::kContextual;
constexpr Tier kR = Tier::kRoutine;
constexpr Tier kT = Tier::kTransient;

// One case a row (formatted, each would take ten lines).
// clang-format off
const std::vector<SeedCase>& Cases() {
  static const auto* const kCases = new std::vector<SeedCase>{
      {"UserCorrections", "user", "Actually, I meant the employees table",
       nullptr, false, kA, {}, kA, "user_correction", ""},
      {"UserCorrections", "user", "Correction: use users instead", nullptr,
       false, kA, {}, kA, "user_correction", ""},
      {"UserCorrections", "user", "That's wrong, should be orders", nullptr,
       false, kA, {}, kA, "user_correction_phrase", ""},
      {"UserCorrections", "user", "No, instead use the products table",
       nullptr, false, kA, {}, kA, "user_correction", ""},
      {"UserCorrections", "user", "Regular question about tables", nullptr,
       false, kC, {}, kC, "user_message", ""},

      {"SchemaMessages", "assistant", "CREATE TABLE users (id INT PRIMARY KEY)",
       nullptr, false, kA, {}, kA, "sql_ddl", ""},
      {"SchemaMessages", "assistant",
       "ALTER TABLE employees ADD COLUMN name VARCHAR(100)", nullptr, false, kA,
       {}, kA, "sql_ddl", ""},
      {"SchemaMessages", "assistant", "DROP TABLE old_data", nullptr, false, kA,
       {}, kA, "sql_ddl", ""},
      {"SchemaMessages", "assistant", "CREATE INDEX idx_name ON users(name)",
       nullptr, false, kA, {}, kA, "sql_ddl", ""},
      {"SchemaMessages", "assistant", "Regular query result", nullptr, false,
       kR, {}, kR, "default", ""},

      {"QueryAnalysis", "assistant", "EXPLAIN ANALYZE SELECT * FROM users",
       nullptr, false, kI, {}, kI, "query_plan", ""},
      {"QueryAnalysis", "assistant", "Query plan shows sequential scan",
       nullptr, false, kI, {}, kI, "query_plan", ""},
      {"QueryAnalysis", "assistant", "Execution time: 45ms", nullptr, false, kI,
       {}, kI, "query_plan", ""},
      {"QueryAnalysis", "assistant", "Index scan on users_pkey", nullptr, false,
       kI, {}, kI, "query_plan", ""},
      {"QueryAnalysis", "assistant", "Simple response", nullptr, false, kR, {},
       kR, "default", ""},

      {"ErrorMessages", "assistant", "ERROR: syntax error at or near 'SELECT'",
       nullptr, false, kI, {}, kI, "sql_error", ""},
      {"ErrorMessages", "assistant", "Error: table does not exist", nullptr,
       false, kI, {}, kI, "error_output", ""},
      {"ErrorMessages", "assistant", "ERROR 42P01: undefined_table", nullptr,
       false, kI, {}, kI, "sql_error", ""},
      {"ErrorMessages", "assistant", "Permission denied for relation users",
       nullptr, false, kI, {}, kI, "error_output", ""},
      {"ErrorMessages", "assistant", "Success message", nullptr, false, kR, {},
       kR, "default", ""},

      {"InsightMessages", "assistant", "Key finding: The index is not being used",
       nullptr, false, kI, {}, kI, "decision_note", ""},
      {"InsightMessages", "assistant", "Important: This query is very slow",
       nullptr, false, kI, {}, kI, "decision_note", ""},
      {"InsightMessages", "assistant", "Note: Consider adding an index",
       nullptr, false, kI, {}, kI, "decision_note", ""},
      {"InsightMessages", "assistant", "Warning: High memory usage detected",
       nullptr, false, kI, {}, kI, "decision_note", ""},
      {"InsightMessages", "assistant", "Recommendation: Use prepared statements",
       nullptr, false, kI, {}, kI, "decision_note", ""},
      {"InsightMessages", "assistant", "Regular observation", nullptr, false,
       kR, {}, kR, "default", ""},

      // The seed's text does not list documentation references; its code
      // and tests make them important, and ctxkit follows.
      {"DocumentationReferences", "assistant",
       "Documentation: https://postgresql.org/docs/current/sql-select.html",
       nullptr, false, kI, {}, kI, "doc_reference", ""},
      {"DocumentationReferences", "assistant",
       "From docs: Indexes improve query performance", nullptr, false, kI, {},
       kI, "doc_reference", ""},
      {"DocumentationReferences", "assistant",
       "See postgresql.org for more information", nullptr, false, kI, {}, kI,
       "doc_reference", ""},
      {"DocumentationReferences", "assistant", "Regular comment", nullptr,
       false, kR, {}, kR, "default", ""},

      {"ShortAcknowledgments", "user", "ok", nullptr, false, kT, {}, kT,
       "acknowledgement", ""},
      {"ShortAcknowledgments", "user", "yes", nullptr, false, kT, {}, kT,
       "acknowledgement", ""},
      {"ShortAcknowledgments", "user", "no", nullptr, false, kT, {}, kA,
       "user_refusal",
       "a bare \"no\" refuses what the assistant proposed: it is no "
       "acknowledgement, and ctxkit keeps it as it keeps \"No.\" and "
       "\"No, ...\" (user corrections)"},
      {"ShortAcknowledgments", "user", "thanks", nullptr, false, kT, {}, kT,
       "acknowledgement", ""},
      {"ShortAcknowledgments", "user", "got it", nullptr, false, kT, {}, kT,
       "acknowledgement", ""},
      {"ShortAcknowledgments", "user",
       "This is a longer question with more content?", nullptr, false, kC, {},
       kC, "user_message", ""},

      {"ToolMessages", "assistant", "SELECT * FROM pg_tables", "get_schema_info",
       true, kA, kI, kA, "schema_tool", ""},
      {"ToolMessages", "assistant", "EXPLAIN SELECT * FROM users",
       "execute_explain", true, kI, {}, kI, "query_analysis_tool", ""},

      {"SystemMessages", "system", "System initialization message", nullptr,
       false, kI, {}, kA, "system_prompt",
       "system prompts are anchors in ctxkit, a stronger promise: they are "
       "the instructions and are never dropped"},
  };
  return *kCases;
}
// clang-format on

using bench::JsonString;

std::string TextMessage(std::string_view role, std::string_view content) {
  return "{\"role\":" + JsonString(role) +
         ",\"content\":" + JsonString(content) + "}";
}

struct CaseHistory {
  std::string json;
  size_t index = 0;  // of the case's message
};

// The case's message placed where its position decides nothing: after a
// first exchange (so it is not the task) and followed by another message
// (so it is not the last), as in the seed document's example request. A
// system message goes first, where system messages live; its role alone
// classifies it. A tool message's call is answered by the next message, as
// the Anthropic API requires; tool_use blocks need an id there too, which
// the seed's helper leaves out.
CaseHistory HistoryFor(const SeedCase& c) {
  const std::string task = TextMessage("user", "Show me the users table");
  const std::string reply = TextMessage("assistant", "Here's the schema...");
  const std::string_view role = c.role;
  if (c.tool != nullptr) {
    const std::string call =
        "{\"role\":" + JsonString(role) +
        ",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":" +
        JsonString(c.tool) + ",\"input\":{\"query\":" + JsonString(c.content) +
        "}}]}";
    const std::string result =
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
        "\"tool_use_id\":\"toolu_01\",\"content\":\"3 rows\"}]}";
    return {"[" + task + "," + reply + "," +
                TextMessage("user", "And the plan?") + "," + call + "," +
                result + "," + TextMessage("assistant", "Done.") + "]",
            3};
  }
  if (role == "system") {
    return {"[" + TextMessage(role, c.content) + "," + task + "," + reply +
                "," + TextMessage("user", "And the orders table?") + "]",
            0};
  }
  if (role == "user") {
    return {"[" + task + "," + reply + "," + TextMessage(role, c.content) +
                "," + TextMessage("assistant", "Let me look.") + "]",
            2};
  }
  return {"[" + task + "," + reply + "," +
              TextMessage("user", "And the orders table?") + "," +
              TextMessage(role, c.content) + "," +
              TextMessage("user", "Go on.") + "]",
          3};
}

std::string SeedTiers(const SeedCase& c) {
  std::string s = TierName(c.seed);
  if (c.seed_also) s += std::string(" or ") + TierName(*c.seed_also);
  return s;
}

bool SeedAccepts(const SeedCase& c, Tier tier) {
  return tier == c.seed || (c.seed_also && tier == *c.seed_also);
}

TEST_CASE("ctxkit agrees with seed 001's classifier tests, or says why not") {
  const std::vector<SeedCase>& cases = Cases();
  // classifier_test.go's nine tier tests hold 5+5+5+5+6+4+6+2+1 cases.
  REQUIRE(cases.size() == 39);

  Compactor compactor;
  std::string table =
      "| # | case | seed tier | ctxkit tier | rule | agree? |\n"
      "|---|---|---|---|---|---|\n";
  size_t agreeing = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const SeedCase& c = cases[i];
    const CaseHistory history = HistoryFor(c);
    CAPTURE(c.seed_test);
    CAPTURE(c.content);
    CAPTURE(history.json);
    CompactionOptions options;
    options.explain = true;
    options.preserve_tool_results = c.preserve_tool_results;
    StatusOr<CompactionResult> result =
        compactor.Compact(history.json, options);
    REQUIRE_MESSAGE(result.ok(), result.status().message());
    REQUIRE(result->decisions.size() > history.index);
    const MessageDecision& decision = result->decisions[history.index];
    CHECK(decision.index == history.index);
    CHECK(decision.tier == c.ctxkit);
    CHECK(decision.rule == c.rule);

    const bool agrees = SeedAccepts(c, decision.tier);
    const std::string_view because = c.differs_because;
    // A row without a reason must agree; a reason must not outlive the
    // difference it explains.
    CHECK(agrees == because.empty());
    if (agrees) ++agreeing;

    std::string shown =
        c.tool != nullptr
            ? std::string(c.tool) + " {\"query\": \"" + c.content + "\"}"
            : std::string("\"") + c.content + "\"";
    table += "| " + std::to_string(i + 1) + " | " + c.seed_test + ": " +
             c.role + " " + shown + " | " + SeedTiers(c) + " | " +
             TierName(decision.tier) + " | " + decision.rule + " | " +
             (agrees ? std::string("yes")
                     : "no, deliberately: " + std::string(because)) +
             " |\n";
  }
  table += "\nAgreement: " + std::to_string(agreeing) + " of " +
           std::to_string(cases.size()) +
           " (every other row differs "
           "deliberately).\n";
  std::fputs(table.c_str(), stdout);
  std::fflush(stdout);
  CHECK(agreeing == 37);
}

}  // namespace
}  // namespace ctxkit
