// Tests of the phrase matcher, the classifier and its built-in rule table.

#include "ctxkit/classifier.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/compactor/phrase_matcher.h"
#include "simdjson.h"

namespace ctxkit {
namespace {

using internal::PhraseMatcher;

// A message described in the test, turned into MessageFacts on demand.
struct Msg {
  std::string role = "assistant";
  std::string text;
  std::vector<std::string_view> tool_names;
  std::vector<std::string_view> tool_arguments;
  std::string result_tool_name;
  bool is_tool_result = false;
  bool is_error = false;
  bool is_task = false;
  bool is_demonstration = false;

  MessageFacts Facts() const {
    MessageFacts facts;
    facts.role = role;
    facts.text = text;
    facts.tool_names = tool_names;
    facts.tool_arguments = tool_arguments;
    facts.result_tool_name = result_tool_name;
    facts.is_tool_result = is_tool_result;
    facts.is_error = is_error;
    facts.is_task = is_task;
    facts.is_demonstration = is_demonstration;
    return facts;
  }
};

Msg User(std::string text) {
  Msg m;
  m.role = "user";
  m.text = std::move(text);
  return m;
}
Msg Assistant(std::string text) {
  Msg m;
  m.text = std::move(text);
  return m;
}
// An OpenAI tool message answering a call of `tool`.
Msg ToolResult(std::string tool, std::string text) {
  Msg m;
  m.role = "tool";
  m.text = std::move(text);
  m.result_tool_name = std::move(tool);
  m.is_tool_result = true;
  return m;
}
// A SWE-agent observation: a user message ending in the shell prompt.
Msg Observation(std::string output, std::string open_file = "n/a") {
  return User(output + "\n(Open file: " + open_file +
              ")\n(Current directory: /marshmallow-code__marshmallow)\n"
              "bash-$");
}

std::string RuleOf(const Classifier& c, const Msg& m) {
  return std::string(c.Classify(m.Facts()).rule);
}

const Classifier& Builtin() {
  static const auto* const kClassifier =
      new Classifier(Classifier::WithBuiltinRules());
  return *kClassifier;
}

std::vector<uint32_t> BruteForce(const std::vector<std::string>& phrases,
                                 std::string_view text) {
  auto lower = [](std::string s) {
    for (char& c : s) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return s;
  };
  const std::string t = lower(std::string(text));
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < phrases.size(); ++i) {
    if (!phrases[i].empty() && t.find(lower(phrases[i])) != std::string::npos) {
      ids.push_back(i);
    }
  }
  return ids;
}

TEST_CASE("PhraseMatcher finds overlapping phrases ignoring ASCII case") {
  const std::vector<std::string> phrases = {
      "he", "she", "his", "hers", "", "HE", "\xC3\xA9t\xC3\xA9"};
  PhraseMatcher matcher(phrases);
  CHECK(matcher.phrase_count() == 7);
  CHECK(matcher.FindAll("uSHers") == std::vector<uint32_t>{0, 1, 3, 5});
  CHECK(matcher.FindAll("nothing") == std::vector<uint32_t>{});
  CHECK(matcher.FindAll("") == std::vector<uint32_t>{});
  // Non-ASCII bytes compare exactly: "ÉTÉ" is not "été".
  CHECK(matcher.FindAll("un \xC3\xA9t\xC3\xA9 chaud") ==
        std::vector<uint32_t>{6});
  CHECK(matcher.FindAll("\xC3\x89T\xC3\x89") == std::vector<uint32_t>{});

  // Every occurrence, with the offset just past it.
  std::vector<std::pair<uint32_t, size_t>> hits;
  matcher.Scan("ushers he", [&](uint32_t id, size_t end) {
    if (id <= 3) hits.emplace_back(id, end);
  });
  const std::set<std::pair<uint32_t, size_t>> got(hits.begin(), hits.end());
  CHECK(got ==
        std::set<std::pair<uint32_t, size_t>>{{1, 4}, {0, 4}, {3, 6}, {0, 9}});
}

TEST_CASE("PhraseMatcher with no phrases matches nothing") {
  PhraseMatcher empty;
  CHECK(empty.FindAll("anything") == std::vector<uint32_t>{});
  const std::vector<std::string> only_empty = {""};
  CHECK(PhraseMatcher(only_empty).FindAll("x") == std::vector<uint32_t>{});
}

TEST_CASE("PhraseMatcher agrees with a brute-force search") {
  std::mt19937 rng(12345);
  const std::string alphabet = "abAB c\n:\xC3";
  auto random_string = [&](size_t max_len) {
    std::string s(std::uniform_int_distribution<size_t>(0, max_len)(rng), ' ');
    for (char& c : s) {
      c = alphabet[std::uniform_int_distribution<size_t>(
          0, alphabet.size() - 1)(rng)];
    }
    return s;
  };
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> phrases;
    const int n = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int i = 0; i < n; ++i) phrases.push_back(random_string(5));
    PhraseMatcher matcher(phrases);
    for (int k = 0; k < 5; ++k) {
      const std::string text = random_string(60);
      REQUIRE(matcher.FindAll(text) == BruteForce(phrases, text));
    }
  }
}

TEST_CASE("TierName and ParseTier") {
  const Tier tiers[] = {Tier::kAnchor, Tier::kImportant, Tier::kContextual,
                        Tier::kRoutine, Tier::kTransient};
  const char* names[] = {"anchor", "important", "contextual", "routine",
                         "transient"};
  for (size_t i = 0; i < 5; ++i) {
    CHECK(std::string(TierName(tiers[i])) == names[i]);
    StatusOr<Tier> parsed = ParseTier(names[i]);
    REQUIRE(parsed.ok());
    CHECK(*parsed == tiers[i]);
  }
  CHECK(ParseTier("Anchor").ok());
  StatusOr<Tier> bad = ParseTier("vital");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message().find("anchor, important, contextual, "
                                    "routine, transient") != std::string::npos);
  CHECK(bad.status().message().find("\"vital\"") != std::string::npos);
}

TEST_CASE("an empty classifier calls everything routine by default") {
  Classifier empty;
  CHECK(empty.rules().empty());
  const Classification c = empty.Classify(User("hello").Facts());
  CHECK(c.tier == Tier::kRoutine);
  CHECK(c.rule == "default");
  CHECK(empty.RulesJson() == "[]");
}

TEST_CASE("built-in anchors") {
  const Classifier& c = Builtin();
  Msg system;
  system.role = "system";
  system.text = "You are a helpful assistant.";
  CHECK(RuleOf(c, system) == "system_prompt");
  CHECK(c.Classify(system.Facts()).tier == Tier::kAnchor);
  system.role = "developer";
  CHECK(RuleOf(c, system) == "system_prompt");

  Msg task = User("Fix the TimeDelta serialization precision bug. Thanks");
  task.is_task = true;
  CHECK(RuleOf(c, task) == "task");
  // Even a first request that looks like an acknowledgement is the task.
  Msg short_task = User("ok");
  short_task.is_task = true;
  CHECK(RuleOf(c, short_task) == "task");
  // A demonstration is full of edits and errors that never happened: it is
  // contextual, whatever it holds.
  Msg demo = User(
      "--- DEMONSTRATION ---\nedit 3:3\nend_of_edit\n"
      "Traceback (most recent call last):\nValueError: x");
  demo.is_demonstration = true;
  CHECK(RuleOf(c, demo) == "demonstration");
  CHECK(c.Classify(demo.Facts()).tier == Tier::kContextual);

  CHECK(RuleOf(c, User(R"(Use this tool: {"name": "get_weather", )"
                       R"("input_schema": {"type": "object"}})")) ==
        "tool_definition");
  CHECK(RuleOf(c, Assistant(R"([{"type": "function", "function": )"
                            R"({"name": "f", "parameters": {}}}])")) ==
        "tool_definition");
  // Near miss: the same text as a tool result is output, not a definition.
  CHECK(RuleOf(c, ToolResult("bash", R"({"input_schema": 1})")) ==
        "tool_result");

  CHECK(RuleOf(c, Assistant("CREATE TABLE users (id serial PRIMARY KEY, "
                            "email text NOT NULL);")) == "sql_ddl");
  CHECK(RuleOf(c, ToolResult("sql",
                             "ALTER TABLE orders ADD COLUMN note "
                             "text;")) == "sql_ddl");
  CHECK(RuleOf(c, User("please drop index idx_users_email")) == "sql_ddl");
  // Near miss: creating a table in Python is not DDL.
  CHECK(RuleOf(c, Assistant("Call op.create_table('users') next.")) ==
        "default");

  CHECK(RuleOf(c, User("Actually, use PostgreSQL 16.")) == "user_correction");
  CHECK(RuleOf(c, User("  no, the other file")) == "user_correction");
  CHECK(RuleOf(c, User("No that's the staging DB")) == "user_correction");
  CHECK(RuleOf(c, User("Wrong directory.")) == "user_correction");
  CHECK(RuleOf(c, User("Hmm, that's wrong: it should be UTC.")) ==
        "user_correction_phrase");
  CHECK(RuleOf(c, User("I meant the orders table")) ==
        "user_correction_phrase");
  CHECK(RuleOf(c, User("Use httpx instead of requests")) ==
        "user_correction_phrase");
  CHECK(RuleOf(c, User("Hmm, that is NOT what I asked for")) ==
        "user_correction_phrase");
  CHECK(RuleOf(c, User("you misunderstood the issue")) ==
        "user_correction_phrase");
  CHECK(c.Classify(User("I meant the orders table").Facts()).tier ==
        Tier::kAnchor);
  // Near misses: "Now"/"Nothing" do not start with "no ", an assistant
  // saying "instead" is not a user correction, "No problem" is chatter, a
  // shell transcript quoting "instead" is not the user speaking.
  CHECK(RuleOf(c, User("Now run the tests please")) == "user_message");
  CHECK(RuleOf(c, User("Nothing else to add, carry on.")) == "user_message");
  CHECK(RuleOf(c, Assistant("I will use httpx instead.")) == "default");
  CHECK(RuleOf(c, User("No problem")) == "acknowledgement");
  CHECK(RuleOf(c, Observation("# use a list instead of a tuple")) ==
        "shell_output");
}

TEST_CASE("built-in transient rules") {
  const Classifier& c = Builtin();
  for (const char* text :
       {"ok", "OK.", "Okay!", "thanks", "Thank you!", "got it", "Sure", "great",
        "cool", "yes", "Done.", "sounds good", "Perfect!!", "\xF0\x9F\x91\x8D",
        "  thanks  "}) {
    CAPTURE(text);
    CHECK(RuleOf(c, User(text)) == "acknowledgement");
    CHECK(RuleOf(c, Assistant(text)) == "acknowledgement");
    CHECK(c.Classify(User(text).Facts()).tier == Tier::kTransient);
  }
  // Near misses: more than an acknowledgement, a tool result, or a turn
  // that also calls a tool.
  CHECK(RuleOf(c, User("ok, now add a test for the empty case")) ==
        "user_message");
  CHECK(RuleOf(c, User("thanks, but what about timezones?")) == "user_message");
  CHECK(RuleOf(c, ToolResult("bash", "ok")) == "tool_result");
  Msg done_with_call = Assistant("Done.");
  done_with_call.tool_names = {"submit"};
  CHECK(RuleOf(c, done_with_call) == "default");

  CHECK(RuleOf(c, Assistant("")) == "empty");
  Msg call_only = Assistant("");
  call_only.tool_names = {"bash"};
  call_only.tool_arguments = {R"({"command":"ls"})"};
  CHECK(RuleOf(c, call_only) == "default");
  // A user message without text (an image) is not dropped as empty.
  CHECK(RuleOf(c, User("")) == "user_message");
}

TEST_CASE("built-in error rules on agent output") {
  const Classifier& c = Builtin();
  const std::string pytest_failure =
      "============================= test session starts "
      "==============================\n"
      "collected 3 items\n\n"
      "tests/test_fields.py ..F                                         "
      "[100%]\n\n"
      "=================================== FAILURES "
      "===================================\n"
      "_______________________ test_timedelta_precision "
      "_______________________\n\n"
      "    def test_timedelta_precision():\n"
      ">       assert field.serialize('d', obj) == 345\n"
      "E       assert 344 == 345\n\n"
      "tests/test_fields.py:12: AssertionError\n"
      "=========================== short test summary info "
      "============================\n"
      "FAILED tests/test_fields.py::test_timedelta_precision - assert 344 "
      "== 345\n"
      "========================= 1 failed, 2 passed in 0.12s "
      "==========================\n";
  CHECK(RuleOf(c, ToolResult("bash", pytest_failure)) == "test_failure");
  CHECK(RuleOf(c, Observation(pytest_failure)) == "test_failure");
  CHECK(c.Classify(ToolResult("bash", pytest_failure).Facts()).tier ==
        Tier::kImportant);
  CHECK(RuleOf(c, ToolResult("Bash",
                             "--- FAIL: TestParse (0.00s)\n    parse_test.go:"
                             "14: got 1, want 2\nFAIL\nFAIL\texample.com/p\t"
                             "0.004s\n")) == "test_failure");
  CHECK(RuleOf(c, ToolResult("Bash",
                             "Tests:       1 failed, 4 passed, 5 "
                             "total\n")) == "test_failure");
  CHECK(RuleOf(c, ToolResult("Bash",
                             "Ran 4 tests in 0.002s\n\nFAILED "
                             "(failures=1)\n")) == "test_failure");

  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"/repo/reproduce.py\", line 9, in <module>\n"
      "    print(td_field.serialize(\"td_field\", obj))\n"
      "ZeroDivisionError: division by zero\n";
  CHECK(RuleOf(c, ToolResult("bash", traceback)) == "stack_trace");
  CHECK(RuleOf(c, ToolResult("bash",
                             "TypeError: x is undefined\n    at parse "
                             "(/app/src/parse.js:10:5)\n    at main "
                             "(/app/src/index.js:3:1)")) == "stack_trace");
  CHECK(RuleOf(c, ToolResult("bash",
                             "thread 'main' panicked at src/main.rs:4:5:\n"
                             "index out of bounds")) == "stack_trace");

  CHECK(RuleOf(c, ToolResult("bash",
                             "make: *** [Makefile:12: all] Error "
                             "2")) == "nonzero_exit");
  CHECK(RuleOf(c, ToolResult("bash", "Process exited with code 137")) ==
        "nonzero_exit");
  CHECK(RuleOf(c, ToolResult("bash",
                             "subprocess.CalledProcessError: "
                             "Command 'x' returned non-zero exit "
                             "status 2.")) == "nonzero_exit");

  CHECK(RuleOf(c, Observation("bash: foo: command not found")) ==
        "error_output");
  CHECK(RuleOf(c, ToolResult("bash",
                             "ls: cannot access 'x': No such file "
                             "or directory")) == "error_output");
  CHECK(RuleOf(c, ToolResult("bash", "src/a.c:3:5: error: 'x' undeclared")) ==
        "error_output");
  CHECK(RuleOf(c, ToolResult("bash", "fatal: not a git repository")) ==
        "error_output");
  CHECK(RuleOf(c, ToolResult("bash",
                             "panic: runtime error: index out of "
                             "range [3] with length 3")) == "error_output");
  CHECK(RuleOf(c, ToolResult("bash", "Segmentation fault (core dumped)")) ==
        "error_output");
  CHECK(RuleOf(c, Assistant("The error: is a missing colon on line 4.")) ==
        "error_output");

  Msg flagged = ToolResult("Bash", "something went sideways");
  flagged.is_error = true;
  CHECK(RuleOf(c, flagged) == "tool_error");

  CHECK(RuleOf(c, Observation(
                      "Your proposed edit has introduced new syntax "
                      "error(s). Please understand the fixes and retry your "
                      "edit commmand.\n\nERRORS:\n- E999 IndentationError: "
                      "unexpected indent\n[File: /repo/src/fields.py (1997 "
                      "lines total)]\n1475:return int(x)\n")) == "edit_failed");

  // Near misses: words that merely contain "error" or "fail", success exit
  // codes, and a passing run.
  CHECK(RuleOf(c, ToolResult("bash", "errorless terror; exit code 0")) ==
        "tool_result");
  CHECK(RuleOf(c, ToolResult("bash", "Process exited with code 0")) ==
        "tool_result");
  CHECK(RuleOf(c, Assistant("Errors are handled by the failover layer.")) ==
        "default");
  CHECK(RuleOf(c, ToolResult("bash",
                             "collected 3 items\n\n"
                             "tests/test_fields.py ...  [100%]\n\n"
                             "============ 3 passed in 0.05s "
                             "============\n")) == "test_result");
  CHECK(c.Classify(ToolResult("bash", "3 passed in 0.05s").Facts()).tier ==
        Tier::kContextual);
  CHECK(RuleOf(c, ToolResult("cargo",
                             "test result: ok. 5 passed; 0 failed; "
                             "0 ignored")) == "test_result");
}

TEST_CASE("built-in file rules on agent transcripts") {
  const Classifier& c = Builtin();
  // Claude Code tools: the call and its result.
  Msg edit_call = Assistant("Let me fix the rounding.");
  edit_call.tool_names = {"Edit"};
  edit_call.tool_arguments = {
      R"({"file_path":"/repo/src/fields.py","old_string":"int(","new_string":"int(round("})"};
  CHECK(RuleOf(c, edit_call) == "file_edit");
  CHECK(c.Classify(edit_call.Facts()).tier == Tier::kImportant);
  CHECK(RuleOf(c, ToolResult("Edit",
                             "The file /repo/src/fields.py has been "
                             "updated.")) == "file_edit");
  Msg multi = Assistant("");
  multi.tool_names = {"TodoWrite", "MultiEdit"};
  multi.tool_arguments = {"{}", "{}"};
  CHECK(RuleOf(c, multi) == "file_edit");

  // str_replace_editor: editing commands are edits, "view" is a view.
  Msg sre = Assistant("");
  sre.tool_names = {"str_replace_editor"};
  sre.tool_arguments = {
      R"({"command": "str_replace", "path": "/testbed/a.py", "old_str": "x", "new_str": "y"})"};
  CHECK(RuleOf(c, sre) == "file_edit_command");
  sre.tool_arguments = {R"({"command": "view", "path": "/testbed/a.py"})"};
  CHECK(RuleOf(c, sre) == "file_view_command");
  CHECK(RuleOf(c, ToolResult("str_replace_editor",
                             "The file /testbed/a.py has been edited. Here's "
                             "the result of running `cat -n` on a snippet of "
                             "/testbed/a.py:\n     1\timport os\n")) ==
        "file_edit_text");
  CHECK(RuleOf(c, ToolResult("str_replace_editor",
                             "Here's the result of running `cat -n` on "
                             "/testbed/a.py:\n     1\tdef f():\n     2\t"
                             "    raise ValueError: bad\n")) ==
        "file_view_text");

  // A shell edit and a shell view.
  Msg sed = Assistant("");
  sed.tool_names = {"bash"};
  sed.tool_arguments = {R"({"command":"sed -i 's/a/b/' src/x.py"})"};
  CHECK(RuleOf(c, sed) == "file_edit_shell");
  Msg cat = Assistant("Let me look at the file.");
  cat.tool_names = {"bash"};
  cat.tool_arguments = {R"({"command": "cat src/marshmallow/fields.py"})"};
  CHECK(RuleOf(c, cat) == "file_view_shell");
  CHECK(c.Classify(cat.Facts()).tier == Tier::kRoutine);

  // Diffs and SWE-agent edits in text.
  const std::string diff =
      "diff --git a/tests/missing_colon.py b/tests/missing_colon.py\n"
      "index 20edef5..5857437 100755\n"
      "--- a/tests/missing_colon.py\n+++ b/tests/missing_colon.py\n"
      "@@ -1,7 +1,7 @@\n-def division(a, b)\n+def division(a, b):\n";
  CHECK(RuleOf(c, ToolResult("submit", diff)) == "file_edit_text");
  CHECK(RuleOf(c, Assistant("Let's fix the indentation.\n```\nedit "
                            "1475:1475\n        return int(round(x))\n"
                            "end_of_edit\n```")) == "file_edit_text");
  CHECK(RuleOf(c, Observation("[File: /repo/reproduce.py (9 lines total)]\n"
                              "1:from marshmallow.fields import TimeDelta\n"
                              "File updated. Please review the changes and "
                              "make sure they are correct.",
                              "/repo/reproduce.py")) == "file_edit_text");

  // Views: Claude Code Read, SWE-agent open, whose source is full of
  // "error: " and "Exception" that must not make it important.
  Msg read = Assistant("");
  read.tool_names = {"Read"};
  read.tool_arguments = {R"({"file_path":"/repo/src/fields.py"})"};
  CHECK(RuleOf(c, read) == "file_view");
  const std::string source =
      "     1\xE2\x86\x92import os\n     2\xE2\x86\x92try:\n     3\xE2\x86\x92"
      "    x()\n     4\xE2\x86\x92"
      "except ValueError: pass  # error: ignored\n";
  CHECK(RuleOf(c, ToolResult("Read", source)) == "file_view");
  CHECK(RuleOf(c, ToolResult("some_reader", source)) == "file_view_text");
  CHECK(RuleOf(c, Observation("[File: /repo/src/marshmallow/fields.py (1997 "
                              "lines total)]\n(1458 more lines above)\n"
                              "1466:            raise ValueError(msg)\n"
                              "1467:    except Exception: # note: rare\n",
                              "/repo/src/marshmallow/fields.py")) ==
        "file_view_text");
  CHECK(RuleOf(c, Observation("Found 1 matches for \"fields.py\" in "
                              "/repo/src:\n/repo/src/marshmallow/fields.py")) ==
        "file_search_text");
  Msg grep = Assistant("");
  grep.tool_names = {"Grep"};
  CHECK(RuleOf(c, grep) == "file_search");

  // Plain shell output in SWE-agent observations is routine; a Claude Code
  // Bash result is a tool result.
  CHECK(RuleOf(c, Observation("AUTHORS.rst\nCHANGELOG.rst\nsetup.py")) ==
        "shell_output");
  CHECK(RuleOf(c, Observation("Your command ran successfully and did not "
                              "produce any output.")) == "shell_output");
  CHECK(RuleOf(c, ToolResult("Bash", "AUTHORS.rst\nsetup.py")) ==
        "tool_result");
  CHECK(c.Classify(ToolResult("Bash", "x").Facts()).tier == Tier::kContextual);
  // Near miss: a file named like a diff marker in prose is not a diff.
  CHECK(RuleOf(c, Assistant("I'll update a/b testing docs.")) == "default");
}

TEST_CASE("built-in plan, decision and schema rules") {
  const Classifier& c = Builtin();
  CHECK(RuleOf(c, ToolResult("psql",
                             "                 QUERY PLAN\n"
                             "Seq Scan on users  (cost=0.00..35.50 rows=10 "
                             "width=36)\n  Filter: (email = 'a'::text)\n")) ==
        "query_plan");
  CHECK(RuleOf(c, Assistant("Run EXPLAIN ANALYZE SELECT * FROM orders;")) ==
        "query_plan");
  CHECK(RuleOf(c, Assistant("Index Scan using users_pkey on users")) ==
        "query_plan");
  // Near miss: "explain" in prose.
  CHECK(RuleOf(c, Assistant("Let me explain the approach.")) == "default");

  CHECK(RuleOf(c, Assistant("Important: the cache is per process.")) ==
        "decision_note");
  CHECK(RuleOf(c, Assistant("Note: tests must run with TZ=UTC.")) ==
        "decision_note");
  CHECK(RuleOf(c, User("Recommendation: keep the old API for a release.")) ==
        "decision_note");
  CHECK(RuleOf(c, Assistant("We decided to use round() rather than "
                            "truncation.")) == "decision_note");
  CHECK(RuleOf(c, Assistant("So we will go with option B.")) ==
        "decision_note");
  CHECK(RuleOf(c, Assistant("Warning: this drops data.")) == "decision_note");
  // Near misses: pip's warning in a tool result is not a decision; a
  // "notebook" is not a "note:".
  CHECK(RuleOf(c, ToolResult("bash",
                             "Warning: Running pip as the 'root' "
                             "user")) == "tool_result");
  CHECK(RuleOf(c, Assistant("Open the notebook.")) == "default");

  CHECK(RuleOf(c, ToolResult("psql",
                             "Table \"public.users\"\n Column | Type\n"
                             "--------+------\n id     | integer\n")) ==
        "schema_info");
  CHECK(RuleOf(c, Assistant("users.id is the primary key and orders.user_id "
                            "a foreign key")) == "schema_info");
  CHECK(RuleOf(c, User("run \\d users to see it")) == "schema_info");
  CHECK(c.Classify(User("run \\d users").Facts()).tier == Tier::kImportant);
  // Near miss: a marshmallow Schema class is not a table schema.
  CHECK(RuleOf(c, Assistant("The Schema class serializes fields.")) ==
        "default");
}

// An assistant message calling `tool` with `arguments` (JSON text).
Msg Call(std::string_view tool, std::string_view arguments,
         std::string text = "") {
  Msg m = Assistant(std::move(text));
  m.tool_names = {tool};
  m.tool_arguments = {arguments};
  return m;
}

TEST_CASE("built-in rules read commands inside call arguments") {
  const Classifier& c = Builtin();
  // Edits sent as a shell tool's command: SWE-agent's edit command and its
  // str_replace_editor commands, a Codex patch.
  const Msg swe_edit = Call(
      "bash",
      R"({"command":"edit 12:14\n        return int(round(x))\nend_of_edit"})");
  CHECK(RuleOf(c, swe_edit) == "file_edit_text");
  CHECK(c.Classify(swe_edit.Facts()).tier == Tier::kImportant);
  CHECK(RuleOf(c, Call("bash",
                       R"({"command": "str_replace_editor str_replace )"
                       R"(/testbed/a.py --old_str 'x' --new_str 'y'"})")) ==
        "file_edit_text");
  CHECK(RuleOf(c, Call("execute_bash",
                       R"({"command":"str_replace_editor create /testbed/)"
                       R"(b.py --file_text 'print(1)'"})")) ==
        "file_edit_text");
  CHECK(
      RuleOf(c, Call("shell", R"({"command":["apply_patch","*** Begin Patch\n)"
                              R"(*** Update File: a.py\n@@\n-x\n+y\n*** End )"
                              R"(Patch\n"]})")) == "file_edit_text");
  // Near misses: view and search commands in the same places stay routine.
  for (const char* arguments :
       {R"({"command": "str_replace_editor view /testbed/a.py"})",
        R"({"command":"open src/marshmallow/fields.py 1474"})",
        R"({"command":"grep -rn end_of_file src"})",
        R"({"command":"goto 1474"})"}) {
    CAPTURE(arguments);
    const Msg view = Call("bash", arguments);
    CHECK(RuleOf(c, view) == "default");
    CHECK(c.Classify(view.Facts()).tier == Tier::kRoutine);
  }
  // The phrase must be in the arguments of a call: prose naming the
  // command is not an edit.
  CHECK(RuleOf(c, Assistant("I will use str_replace_editor to view it.")) ==
        "default");

  // SQL sent to a query tool: DDL is DDL, EXPLAIN asks for a plan, a plain
  // query is the seed's contextual query tool.
  const Msg ddl =
      Call("query_database", R"j({"query":"CREATE TABLE audit (id serial)"})j");
  CHECK(RuleOf(c, ddl) == "sql_ddl");
  CHECK(c.Classify(ddl.Facts()).tier == Tier::kAnchor);
  CHECK(RuleOf(c, Call("bash", R"({"command":"psql -c 'ALTER TABLE orders ADD )"
                               R"(COLUMN note text'"})")) == "sql_ddl");
  const Msg plan =
      Call("query_database",
           R"({"query":"EXPLAIN ANALYZE SELECT * FROM orders WHERE id = 1"})");
  CHECK(RuleOf(c, plan) == "query_plan");
  CHECK(c.Classify(plan.Facts()).tier == Tier::kImportant);
  const Msg select_call =
      Call("query_database", R"({"query":"SELECT * FROM orders LIMIT 10"})");
  CHECK(RuleOf(c, select_call) == "query_tool");
  CHECK(c.Classify(select_call.Facts()).tier == Tier::kContextual);
  // Near miss: the Python name of a DDL call is not DDL.
  CHECK(RuleOf(c, Call("bash",
                       R"({"command":"python -c 'op.create_table(1)'"})")) ==
        "default");
}

TEST_CASE("built-in rules for seed 001's tools") {
  const Classifier& c = Builtin();
  const Msg schema = Call("get_schema_info", R"({"schema_name":"public"})");
  CHECK(RuleOf(c, schema) == "schema_tool");
  CHECK(c.Classify(schema.Facts()).tier == Tier::kAnchor);
  CHECK(RuleOf(c, ToolResult("get_schema_info",
                             "Schema: public\nTable: users")) == "schema_tool");
  CHECK(RuleOf(c, Call("pg_dump_schema", "{}")) == "schema_tool");
  // Near miss: a failed schema call is an error, not a schema.
  Msg failed = ToolResult("get_schema_info", "connection refused");
  failed.is_error = true;
  CHECK(RuleOf(c, failed) == "tool_error");

  const Msg explain = Call("execute_explain", R"({"query":"SELECT 1"})");
  CHECK(RuleOf(c, explain) == "query_analysis_tool");
  CHECK(c.Classify(explain.Facts()).tier == Tier::kImportant);
  CHECK(RuleOf(c, ToolResult("analyze_query", "3 rows")) ==
        "query_analysis_tool");

  CHECK(RuleOf(c, ToolResult("query_database", "id\tname\n1\talice\n")) ==
        "query_tool");
  CHECK(RuleOf(c, Call("count_rows", R"({"table":"users"})")) == "query_tool");
  // An error from a query tool is still an error.
  CHECK(RuleOf(c, ToolResult("query_database",
                             "ERROR: relation \"orders\" does not exist "
                             "(SQLSTATE 42P01)")) == "sql_error");

  const Msg search = Call("similarity_search", R"({"query":"vacuum"})");
  CHECK(RuleOf(c, search) == "search_tool");
  CHECK(c.Classify(search.Facts()).tier == Tier::kContextual);
  // Documentation pages a search returns are tool output, not a user or
  // assistant citing the docs.
  CHECK(RuleOf(c, ToolResult("search_documentation",
                             "From docs: https://www.postgresql.org/docs/")) ==
        "search_tool");
  CHECK(RuleOf(c, ToolResult("search_knowledgebase", "VACUUM reclaims")) ==
        "search_tool");
}

TEST_CASE("built-in SQL error, plan, finding and documentation rules") {
  const Classifier& c = Builtin();
  CHECK(RuleOf(c, Assistant("ERROR 42P01: undefined_table")) == "sql_error");
  CHECK(RuleOf(c, Assistant("ERROR 23505 duplicate key")) == "sql_error");
  CHECK(RuleOf(c, ToolResult("bash",
                             "psql:init.sql:3: ERROR:  relation \"users\" "
                             "does not exist")) == "sql_error");
  CHECK(RuleOf(c, ToolResult("bash",
                             "pq: duplicate key value violates unique "
                             "constraint \"users_email_key\"")) == "sql_error");
  CHECK(RuleOf(c, ToolResult("python",
                             "psycopg2.errors.UndefinedColumn: column x")) ==
        "sql_error");
  CHECK(RuleOf(c, ToolResult("mysql", "Table 'shop.users' doesn't exist")) ==
        "sql_error");
  CHECK(RuleOf(c, Assistant("syntax error at or near \"FORM\"")) ==
        "sql_error");
  CHECK(c.Classify(Assistant("SQLSTATE 40P01").Facts()).tier ==
        Tier::kImportant);
  // Near misses: a number after "error", "does not exist" in prose, a
  // syntax error discussed.
  CHECK(RuleOf(c, Assistant("Error 42 times in the log, all retried.")) ==
        "default");
  CHECK(RuleOf(c, Assistant("If the file does not exist, create it.")) ==
        "default");
  CHECK(RuleOf(c, Assistant("We fixed a syntax error in the parser.")) ==
        "default");

  CHECK(RuleOf(c, Assistant("Index scan on users_pkey")) == "query_plan");
  CHECK(RuleOf(c, Assistant("The plan does a Seq Scan over orders.")) ==
        "query_plan");
  CHECK(RuleOf(c, Assistant("A sequential scan reads every page.")) ==
        "query_plan");
  CHECK(RuleOf(c, ToolResult("psql",
                             "  Filter: (id = 1)\n  Rows Removed by Filter: "
                             "999\n")) == "query_plan");
  // Near misses: scanning and indexes in other senses.
  CHECK(RuleOf(c, Assistant("Scan the index on users for gaps.")) == "default");
  CHECK(RuleOf(c, Assistant("I will index the scanned files.")) == "default");

  CHECK(RuleOf(c, Assistant("Key finding: the index is not used")) ==
        "decision_note");
  CHECK(RuleOf(c, Assistant("Key findings: two slow joins")) ==
        "decision_note");
  CHECK(RuleOf(c, Assistant("Insight: most rows are dead")) == "decision_note");
  // Near misses: without the colon, "insightful".
  CHECK(RuleOf(c, Assistant("The key finding was small.")) == "default");
  CHECK(RuleOf(c, Assistant("An insightful question.")) == "default");

  CHECK(RuleOf(c, Assistant("Documentation: https://postgresql.org/docs/")) ==
        "doc_reference");
  CHECK(RuleOf(c, Assistant("From the docs: VACUUM reclaims storage")) ==
        "doc_reference");
  CHECK(RuleOf(c, User("see postgresql.org/docs/16/mvcc.html")) ==
        "doc_reference");
  CHECK(c.Classify(Assistant("From docs: x").Facts()).tier == Tier::kImportant);
  // Near misses: the word without its colon, a fetched page, shell output.
  CHECK(RuleOf(c, Assistant("See the documentation for details.")) ==
        "default");
  CHECK(RuleOf(c, ToolResult("fetch", "www.postgresql.org: VACUUM")) ==
        "tool_result");
  CHECK(RuleOf(c, Observation("Downloading ftp.postgresql.org/pub/x.tar")) ==
        "shell_output");
}

TEST_CASE("built-in user refusals") {
  const Classifier& c = Builtin();
  for (const char* text : {"no", "No", "  nah  ", "Stop.", "cancel!"}) {
    CAPTURE(text);
    CHECK(RuleOf(c, User(text)) == "user_refusal");
    CHECK(c.Classify(User(text).Facts()).tier == Tier::kAnchor);
  }
  // "No." and "no thanks" are corrections (anchors too).
  CHECK(RuleOf(c, User("No.")) == "user_correction");
  CHECK(RuleOf(c, User("no thanks")) == "user_correction");
  // Near misses: the assistant saying no, words that start with "no", and
  // "no problem" (an acknowledgement).
  CHECK(RuleOf(c, Assistant("no")) == "default");
  CHECK(RuleOf(c, User("now")) == "user_message");
  CHECK(RuleOf(c, User("nothing")) == "user_message");
  CHECK(RuleOf(c, User("no problem")) == "acknowledgement");
  CHECK(RuleOf(c, User("stop the server after the tests")) == "user_message");
}

TEST_CASE("the engine's fixed rule names exist with their tiers") {
  const Classifier& c = Builtin();
  const std::pair<const char*, Tier> fixed[] = {
      {"system_prompt", Tier::kAnchor},
      {"task", Tier::kAnchor},
      {"demonstration", Tier::kContextual},
      {"tool_result", Tier::kContextual},
      {"schema_info", Tier::kImportant},
      {"acknowledgement", Tier::kTransient}};
  for (const auto& entry : fixed) {
    const std::string name = entry.first;
    CAPTURE(name);
    bool found = false;
    for (const ClassificationRule& rule : c.rules()) {
      if (rule.name == name) {
        found = true;
        CHECK(rule.tier == entry.second);
      }
    }
    CHECK(found);
  }
  // Every built-in rule is documented.
  for (const ClassificationRule& rule : c.rules()) {
    CAPTURE(rule.name);
    CHECK_FALSE(rule.description.empty());
  }
}

TEST_CASE("removing tool_result lets tool output fall through") {
  Classifier c = Classifier::WithBuiltinRules();
  REQUIRE(c.RemoveRule("tool_result").ok());
  CHECK(RuleOf(c, ToolResult("Bash", "AUTHORS.rst")) == "default");
  CHECK(RuleOf(c, ToolResult("Bash", "fatal: bad revision")) == "error_output");
  REQUIRE(c.RemoveRule("schema_info").ok());
  CHECK(RuleOf(c, Assistant("the primary key is id")) == "default");
  const Status missing = c.RemoveRule("schema_info");
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK(missing.message().find("schema_info") != std::string::npos);
}

TEST_CASE("added rules come before the built-in ones, in order") {
  Classifier c = Classifier::WithBuiltinRules();
  const size_t builtin_count = c.rules().size();
  ClassificationRule deploy;
  deploy.name = "deploy_log";
  deploy.tier = Tier::kImportant;
  deploy.contains_any = {"deployed to production"};
  REQUIRE(c.AddRule(deploy).ok());
  ClassificationRule thanks;
  thanks.name = "keep_thanks";
  thanks.tier = Tier::kAnchor;
  thanks.equals_any = {"thanks"};
  REQUIRE(c.AddRule(thanks).ok());
  REQUIRE(c.rules().size() == builtin_count + 2);
  CHECK(c.rules()[0].name == "deploy_log");
  CHECK(c.rules()[1].name == "keep_thanks");
  CHECK(c.rules()[2].name == "system_prompt");

  Classification got = c.Classify(User("Thanks!").Facts());
  CHECK(got.rule == "keep_thanks");
  CHECK(got.tier == Tier::kAnchor);
  got = c.Classify(ToolResult("bash", "v1.2 Deployed to production").Facts());
  CHECK(got.rule == "deploy_log");
  CHECK(got.tier == Tier::kImportant);
  // The user rule wins over a built-in anchor too.
  Msg system;
  system.role = "system";
  system.text = "deployed to production";
  CHECK(RuleOf(c, system) == "deploy_log");

  // Removing an added rule keeps the insertion point right.
  REQUIRE(c.RemoveRule("deploy_log").ok());
  ClassificationRule later;
  later.name = "later";
  later.tier = Tier::kTransient;
  later.roles = {"tool"};
  REQUIRE(c.AddRule(later).ok());
  CHECK(c.rules()[0].name == "keep_thanks");
  CHECK(c.rules()[1].name == "later");
  CHECK(c.rules()[2].name == "system_prompt");
  // Built-ins can be removed as well.
  REQUIRE(c.RemoveRule("acknowledgement").ok());
  CHECK(RuleOf(c, Assistant("ok")) == "default");
}

TEST_CASE("rule criteria") {
  Classifier c;
  ClassificationRule r;
  r.name = "all";
  r.tier = Tier::kImportant;
  r.roles = {"assistant"};
  r.contains_any = {"deploy"};
  r.contains_none = {"dry run"};
  r.starts_with_any = {"  Step"};
  r.tool_names_any = {"kubectl"};
  r.arguments_contains_any = {"apply"};
  r.min_chars = 15;
  r.max_chars = 100;
  r.is_tool_result = false;
  r.has_tool_calls = true;
  r.predicate = [](const MessageFacts& f) { return f.index != 7; };
  REQUIRE(c.AddRule(r).ok());

  Msg m = Assistant("\n step 1: deploy it");
  m.tool_names = {"KUBECTL"};
  m.tool_arguments = {R"({"args":"apply -f x.yaml"})"};
  CHECK(RuleOf(c, m) == "all");
  auto fails = [&](auto change) {
    Msg copy = m;
    change(copy);
    return RuleOf(c, copy) == "default";
  };
  CHECK(fails([](Msg& x) { x.role = "user"; }));
  CHECK(fails([](Msg& x) { x.text = "\n step 1: ship it now"; }));
  CHECK(fails([](Msg& x) { x.text = "\n step 1: deploy (dry run)"; }));
  CHECK(fails([](Msg& x) { x.text = "first step: deploy it"; }));
  CHECK(fails([](Msg& x) { x.tool_names = {"helm"}; }));
  CHECK(fails([](Msg& x) { x.tool_arguments = {R"({"args":"get pods"})"}; }));
  CHECK(fails([](Msg& x) { x.text = "step deploy"; }));
  CHECK(fails([](Msg& x) { x.text = "step: deploy" + std::string(100, '!'); }));
  CHECK(fails([](Msg& x) { x.is_tool_result = true; }));
  CHECK(fails([](Msg& x) {
    x.tool_names.clear();
    x.tool_arguments.clear();
  }));
  MessageFacts seventh = m.Facts();
  seventh.index = 7;
  CHECK(c.Classify(seventh).rule == "default");

  // tool_names_any also matches the tool a result answers.
  Classifier answered;
  ClassificationRule k;
  k.name = "k8s";
  k.tier = Tier::kAnchor;
  k.tool_names_any = {"kubectl"};
  REQUIRE(answered.AddRule(k).ok());
  CHECK(RuleOf(answered, ToolResult("kubectl", "pod/x created")) == "k8s");

  // equals_any trims spaces and trailing ".!" on both sides.
  Classifier eq;
  ClassificationRule e;
  e.name = "hi";
  e.tier = Tier::kTransient;
  e.equals_any = {" Hello there! "};
  REQUIRE(eq.AddRule(e).ok());
  CHECK(RuleOf(eq, User("hello there")) == "hi");
  CHECK(RuleOf(eq, User("\tHELLO THERE...!\n")) == "hi");
  CHECK(RuleOf(eq, User("hello there, friend")) == "default");
  CHECK(RuleOf(eq, User("oh hello there")) == "default");
}

TEST_CASE("match_arguments lets the text lists read call arguments") {
  Classifier c;
  ClassificationRule r;
  r.name = "deploy";
  r.tier = Tier::kImportant;
  r.contains_any = {"deploy "};
  r.contains_none = {"--dry-run"};
  r.match_arguments = true;
  REQUIRE(c.AddRule(r).ok());
  ClassificationRule text_only;
  text_only.name = "text_only";
  text_only.tier = Tier::kContextual;
  text_only.contains_any = {"rollback "};
  REQUIRE(c.AddRule(text_only).ok());
  // The same phrase as a text criterion of one rule and an argument
  // criterion of another: each place sets only its own rule's slot.
  ClassificationRule args_only;
  args_only.name = "args_only";
  args_only.tier = Tier::kAnchor;
  args_only.arguments_contains_any = {"rollback "};
  REQUIRE(c.AddRule(args_only).ok());
  ClassificationRule lead;
  lead.name = "lead";
  lead.tier = Tier::kTransient;
  lead.starts_with_any = {R"({"cmd":"status)"};
  lead.match_arguments = true;
  REQUIRE(c.AddRule(lead).ok());

  CHECK(RuleOf(c, Assistant("deploy it")) == "deploy");
  CHECK(RuleOf(c, Call("kubectl", R"({"cmd":"deploy web"})")) == "deploy");
  // Any call's arguments will do.
  Msg two = Assistant("");
  two.tool_names = {"a", "b"};
  two.tool_arguments = {"{}", R"({"cmd":"deploy web"})"};
  CHECK(RuleOf(c, two) == "deploy");
  // contains_none looks in both places too.
  CHECK(RuleOf(c, Call("kubectl", R"({"cmd":"deploy web --dry-run"})")) ==
        "default");
  CHECK(RuleOf(c, Call("kubectl", R"({"cmd":"deploy web"})",
                       "first a --dry-run")) == "default");

  CHECK(RuleOf(c, Assistant("rollback now")) == "text_only");
  CHECK(RuleOf(c, Call("kubectl", R"({"cmd":"rollback web"})")) == "args_only");

  CHECK(RuleOf(c, Call("kubectl", R"(  {"cmd":"status"})")) == "lead");
  CHECK(RuleOf(c, Call("kubectl", R"({"x":1,"cmd":"status"})")) == "default");

  // Without match_arguments the arguments are not read.
  Classifier plain;
  r.match_arguments = false;
  REQUIRE(plain.AddRule(r).ok());
  CHECK(RuleOf(plain, Call("kubectl", R"({"cmd":"deploy web"})")) == "default");
  CHECK(RuleOf(plain, Assistant("deploy it")) == "deploy");

  // equals_any and the length limits still see the text only.
  Classifier eq;
  ClassificationRule e;
  e.name = "short";
  e.tier = Tier::kTransient;
  e.contains_any = {"go"};
  e.max_chars = 5;
  e.match_arguments = true;
  REQUIRE(eq.AddRule(e).ok());
  CHECK(RuleOf(eq, Call("x", R"({"cmd":"go and do a long task"})")) == "short");
}

TEST_CASE("AddRule rejects bad rules naming the field") {
  Classifier c = Classifier::WithBuiltinRules();
  auto error_of = [&](ClassificationRule r) {
    const Status s = c.AddRule(std::move(r));
    CHECK(s.code() == StatusCode::kInvalidArgument);
    return s.message();
  };
  ClassificationRule good;
  good.name = "good";
  good.contains_any = {"x"};

  ClassificationRule r = good;
  r.name = "Bad Name";
  CHECK(error_of(r).find("rule.name must be 1 to 64") != std::string::npos);
  r.name = std::string(65, 'a');
  CHECK(error_of(r).find("rule.name") != std::string::npos);
  r.name = "default";
  CHECK(error_of(r).find("reserved") != std::string::npos);
  r.name = "tool_result";
  CHECK(error_of(r).find("rule.name \"tool_result\" is already used") !=
        std::string::npos);

  r = good;
  r.contains_any = {"a", ""};
  CHECK(error_of(r) == "rule.contains_any[1] is empty");
  r = good;
  r.equals_any = {"..."};
  CHECK(error_of(r).find("rule.equals_any[0] is blank") != std::string::npos);
  r = good;
  r.roles = {"user", "bot"};
  CHECK(error_of(r).find("rule.roles[1] must be one of system") !=
        std::string::npos);
  r = good;
  r.tool_names_any = {std::string(1025, 'x')};
  CHECK(error_of(r).find("rule.tool_names_any[0] is longer than 1024") !=
        std::string::npos);
  r = good;
  r.contains_none = {"\xFF"};
  CHECK(error_of(r) == "rule.contains_none[0] is not valid UTF-8");
  r = good;
  r.min_chars = 5;
  r.max_chars = 4;
  CHECK(error_of(r).find("rule.min_chars (5) exceeds rule.max_chars (4)") !=
        std::string::npos);
  r = ClassificationRule();
  r.name = "nothing";
  CHECK(error_of(r).find("sets no criterion") != std::string::npos);
  r = good;
  r.tier = static_cast<Tier>(9);
  CHECK(error_of(r).find("rule.tier") != std::string::npos);
  // match_arguments modifies the text lists; it is no criterion alone.
  r = ClassificationRule();
  r.name = "args";
  r.match_arguments = true;
  r.arguments_contains_any = {"x"};
  CHECK(error_of(r).find("rule.match_arguments needs contains_any, "
                         "contains_none or starts_with_any") !=
        std::string::npos);

  // Failed adds leave the table as it was.
  CHECK(c.rules().size() == Classifier::WithBuiltinRules().rules().size());
  CHECK(c.AddRule(good).ok());
}

TEST_CASE("AddRule enforces the size limits") {
  Classifier c;
  ClassificationRule big;
  big.tier = Tier::kRoutine;
  for (int i = 0; i < 100; ++i)
    big.contains_any.push_back(std::string(600, 'a' + i % 26));
  big.name = "big1";
  REQUIRE(c.AddRule(big).ok());
  big.name = "big2";
  const Status s = c.AddRule(big);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("exceed 65536 bytes") != std::string::npos);
  CHECK(c.rules().size() == 1);
}

TEST_CASE("AddRulesJson reads rules, all or nothing") {
  Classifier c = Classifier::WithBuiltinRules();
  const size_t builtin_count = c.rules().size();
  const Status ok = c.AddRulesJson(R"([
    {"name": "deploy", "tier": "important", "description": "deploys",
     "roles": ["tool"], "contains_any": ["deployed to"],
     "contains_none": ["dry run"], "is_tool_result": true, "min_chars": 3,
     "max_chars": null},
    {"name": "greeting", "tier": "transient", "equals_any": ["hello"],
     "starts_with_any": ["hel"], "tool_names_any": [], "is_error": false,
     "is_task": false, "has_tool_calls": false,
     "arguments_contains_any": [], "match_arguments": true}
  ])");
  REQUIRE(ok.ok());
  REQUIRE(c.rules().size() == builtin_count + 2);
  CHECK_FALSE(c.rules()[0].match_arguments);
  CHECK(c.rules()[1].match_arguments);
  CHECK(c.rules()[0].name == "deploy");
  CHECK(c.rules()[0].description == "deploys");
  CHECK(c.rules()[0].min_chars == 3u);
  CHECK_FALSE(c.rules()[0].max_chars.has_value());
  CHECK(c.rules()[1].name == "greeting");
  CHECK(RuleOf(c, ToolResult("x", "deployed to prod")) == "deploy");
  CHECK(RuleOf(c, User("Hello!")) == "greeting");

  auto error_of = [&](std::string_view json) {
    const Status s = c.AddRulesJson(json);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(c.rules().size() == builtin_count + 2);
    return s.message();
  };
  CHECK(error_of("[").find("rules is not valid JSON") != std::string::npos);
  CHECK(error_of("{}").find("rules must be an array") != std::string::npos);
  CHECK(error_of("[1]").find("rules[0] must be an object") !=
        std::string::npos);
  CHECK(error_of(R"([{"tier": "anchor", "roles": ["user"]}])") ==
        "rules[0].name is required");
  CHECK(error_of(R"([{"name": "a", "roles": ["user"]}])") ==
        "rules[0].tier is required");
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "roles": ["user"]},
                     {"name": "b", "tier": "vital", "roles": ["user"]}])")
            .find("rules[1].tier: tier must be one of") != std::string::npos);
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "roles": ["user"]},
                     {"name": "b", "tier": "anchor", "roles": ["user", 3]}])")
            .find("rules[1].roles[1] must be a string") != std::string::npos);
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "roles": ["user"]},
                     {"name": "b", "tier": "anchor", "contains_any": [""]}])") ==
        "rules[1].contains_any[0] is empty");
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "roles": ["user"]},
                     {"name": "a", "tier": "anchor", "roles": ["user"]}])") ==
        "rules[1].name \"a\" is already used");
  CHECK(error_of(
            R"([{"name": "deploy", "tier": "anchor", "roles": ["user"]}])") ==
        "rules[0].name \"deploy\" is already used");
  CHECK(
      error_of(R"([{"name": "a", "tier": "anchor", "contans_any": ["x"]}])") ==
      "rules[0]: unknown key 'contans_any'; did you mean 'contains_any'?");
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "min_chars": -1}])")
            .find("rules[0].min_chars") != std::string::npos);
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "is_error": "yes"}])")
            .find("rules[0].is_error must be") != std::string::npos);
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "contains_any": ["x"],
                      "match_arguments": 1}])")
            .find("rules[0].match_arguments must be") != std::string::npos);
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "roles": ["user"],
                      "match_arguments": true}])")
            .find("rules[0].match_arguments needs contains_any") !=
        std::string::npos);
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "match_argument": 1}])") ==
        "rules[0]: unknown key 'match_argument'; did you mean "
        "'match_arguments'?");
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "roles": ["user"],
                      "has_predicate": true}])")
            .find("rules[0].has_predicate") != std::string::npos);
  // Nothing close: every field is listed.
  CHECK(error_of(R"([{"name": "a", "tier": "anchor", "roles": ["user"],
                      "colour": "red"}])")
            .find("rules[0]: unknown key 'colour' (known: name, tier, "
                  "description, roles,") == 0);
  CHECK(error_of(R"([{"name": "a", "tier": "anchor"}])")
            .find("rules[0] sets no criterion") != std::string::npos);
  CHECK(c.AddRulesJson("[]").ok());
}

TEST_CASE("RulesJson round-trips and BuiltinRulesJson is deterministic") {
  const std::string json = BuiltinRulesJson();
  CHECK(json == BuiltinRulesJson());
  CHECK(json == Classifier::WithBuiltinRules().RulesJson());
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
  simdjson::dom::array array;
  REQUIRE(root.get_array().get(array) == simdjson::SUCCESS);
  CHECK(array.size() == Classifier::WithBuiltinRules().rules().size());
  CHECK(json.find(R"({"name":"system_prompt","tier":"anchor",)") == 1);

  // Loading the documented table into an empty classifier gives the same
  // table and the same classifications.
  Classifier loaded;
  REQUIRE(loaded.AddRulesJson(json).ok());
  CHECK(loaded.RulesJson() == json);
  const Classifier& builtin = Builtin();
  CHECK(json.find(R"("match_arguments":true)") != std::string::npos);
  for (const Msg& m :
       {User("thanks"), Observation("bash: x: command not found"),
        ToolResult("Read", "1: x"), Assistant("CREATE TABLE t (a int)"),
        Call("bash", R"({"command":"edit 1:1\nx\nend_of_edit"})"),
        Call("query_database", R"({"query":"DROP TABLE t"})")}) {
    CHECK(loaded.Classify(m.Facts()).rule == builtin.Classify(m.Facts()).rule);
  }

  Classifier with_predicate;
  ClassificationRule p;
  p.name = "p";
  p.predicate = [](const MessageFacts&) { return true; };
  REQUIRE(with_predicate.AddRule(p).ok());
  CHECK(
      with_predicate.RulesJson() ==
      R"([{"name":"p","tier":"routine","description":"","has_predicate":true}])");
}

TEST_CASE("copies are independent; Default is shared and built-in") {
  Classifier a = Classifier::WithBuiltinRules();
  Classifier b = a;
  ClassificationRule r;
  r.name = "mine";
  r.tier = Tier::kAnchor;
  r.equals_any = {"ok"};
  REQUIRE(b.AddRule(r).ok());
  CHECK(RuleOf(a, User("ok")) == "acknowledgement");
  CHECK(RuleOf(b, User("ok")) == "mine");
  a = b;
  REQUIRE(b.RemoveRule("mine").ok());
  CHECK(RuleOf(a, User("ok")) == "mine");
  CHECK(RuleOf(b, User("ok")) == "acknowledgement");
  Classifier moved = std::move(a);
  CHECK(RuleOf(moved, User("ok")) == "mine");

  std::shared_ptr<const Classifier> d1 = Classifier::Default();
  std::shared_ptr<const Classifier> d2 = Classifier::Default();
  CHECK(d1.get() == d2.get());
  CHECK(d1->RulesJson() == BuiltinRulesJson());
}

TEST_CASE("Classify is deterministic and linear on long texts") {
  const Classifier& c = Builtin();
  std::string big;
  while (big.size() < 200000) {
    big += "1466:            raise ValueError(msg)  # the note says nothing\n";
  }
  Msg m = ToolResult("bash", big + "exit code 2\n");
  const Classification first = c.Classify(m.Facts());
  CHECK(first.rule == "nonzero_exit");
  for (int i = 0; i < 3; ++i) {
    const Classification again = c.Classify(m.Facts());
    CHECK(again.rule == first.rule);
    CHECK(again.tier == first.tier);
  }
}

}  // namespace
}  // namespace ctxkit
