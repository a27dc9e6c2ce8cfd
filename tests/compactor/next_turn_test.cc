// FindNextTurnNeeds and its helpers, read from next_turn.h: the final
// decision, the latest plan, the latest request and the last test or
// program run are each found by the plain rule the header states, the
// look-alikes it excludes (tool-call-only turns, acknowledgements, command
// output, file views and searches, demonstration turns) are passed over,
// and TurnCommand / LooksLikeTestCommand / LooksLikeTestOutput read
// commands and outputs as documented. The compactor keeps what this finds
// as it keeps anchors, so a miss here loses what the next turn acts on.

#include "lib/compactor/next_turn.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/compactor.h"
#include "lib/compactor/chat_history.h"
#include "lib/json/json_writer.h"
#include "tests/compactor/history_builders.h"

namespace ctxkit::internal {
namespace {

using compactor_test::Array;
using compactor_test::Call;
using compactor_test::Msg;
using compactor_test::MustParse;
using compactor_test::Result;

// A SWE-agent observation: command output with the agent's status lines.
std::string Observation(std::string_view output) {
  return Msg("user", std::string(output) +
                         "\n(Open file: /repo/src/marshmallow/fields.py)\n"
                         "(Current directory: /repo)\nbash-$");
}

TEST_CASE("final decision: the last assistant turn with text of its own") {
  const ChatHistory h = MustParse(Array({
      Msg("system", "You are a coding agent."),
      Msg("user", "Fix the rounding bug in TimeDelta serialization."),
      Msg("assistant", "The bug is in _serialize: it truncates. I'll round."),
      Call("c1", "read_file", R"({"path":"src/fields.py"})"),
      Result("c1", "def _serialize(self, value): ..."),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  // The newer assistant turn only calls a tool: not a decision.
  REQUIRE(needs.final_decision.has_value());
  CHECK(*needs.final_decision == 2);
}

TEST_CASE("final decision: a turn that only thinks is passed over") {
  const ChatHistory h = MustParse(
      R"([{"role":"user","content":"Which index should the orders table use?"},)"
      R"({"role":"assistant","content":[{"type":"text","text":"Use a B-tree on (customer_id, created_at)."}]},)"
      R"({"role":"user","content":"And for the invoices table, which one?"},)"
      R"({"role":"assistant","content":[{"type":"thinking","thinking":"The invoices are read by number.","signature":"c2lnbmF0dXJl"}]}])");
  REQUIRE(h.format == ChatFormat::kAnthropic);
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.final_decision.has_value());
  CHECK(*needs.final_decision == 1);
}

TEST_CASE("latest plan: each plan form the header lists") {
  for (std::string_view plan : {
           "Plan:\n- read the test\n- fix the parser",
           "## Plan\nFirst reproduce, then fix.",
           "Next steps: rerun the failing test after the patch.",
           "Steps:\n- a\n- b",
           "TODO: update the changelog once the fix lands.",
           "My plan is to reproduce the bug first and then patch fields.py.",
           "Here's my plan: reproduce, patch, test.",
           "I'll do this in steps:\n1. reproduce the bug\n2. patch "
           "fields.py\n3. run the tests",
       }) {
    CAPTURE(plan);
    const ChatHistory h = MustParse(Array({
        Msg("user", "Fix the rounding bug in TimeDelta serialization."),
        Msg("assistant", plan),
        Msg("user", "sounds good, go ahead"),
        Msg("assistant", "Reproducing now: the value comes out as 344."),
    }));
    const NextTurnNeeds needs = FindNextTurnNeeds(h);
    REQUIRE(needs.latest_plan.has_value());
    CHECK(*needs.latest_plan == 1);
    CHECK(*needs.final_decision == 3);
  }
}

TEST_CASE("latest plan: the newest one wins") {
  const ChatHistory h = MustParse(Array({
      Msg("user", "Fix the rounding bug in TimeDelta serialization."),
      Msg("assistant", "Plan:\n- reproduce\n- patch"),
      Msg("user", "the reproduction shows 344 instead of 345"),
      Msg("assistant", "Plan:\n- patch _serialize to round\n- add a test"),
      Msg("user", "ok go on then, please"),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.latest_plan.has_value());
  CHECK(*needs.latest_plan == 3);
}

TEST_CASE("latest plan: a numbered explanation is not a plan") {
  const ChatHistory h = MustParse(Array({
      Msg("user", "How does the cache eviction work in this module?"),
      Msg("assistant",
          "It works like this:\n1. entries carry an expiry\n2. a sweep "
          "removes expired entries\n3. the oldest go first when full"),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  CHECK_FALSE(needs.latest_plan.has_value());
  REQUIRE(needs.final_decision.has_value());
  CHECK(*needs.final_decision == 1);
}

TEST_CASE("latest plan: a call of a plan or to-do tool") {
  for (std::string_view tool : {"TodoWrite", "todo_write", "update_plan"}) {
    CAPTURE(tool);
    const ChatHistory h = MustParse(Array({
        Msg("user", "Migrate the users table to UUID primary keys."),
        Call("c1", tool, R"({"todos":[{"content":"write the migration"}]})"),
        Result("c1", "Todos have been modified successfully."),
        Msg("assistant", "Writing the migration now."),
    }));
    const NextTurnNeeds needs = FindNextTurnNeeds(h);
    REQUIRE(needs.latest_plan.has_value());
    CHECK(*needs.latest_plan == 1);
  }
}

TEST_CASE("latest request: the newest user words, not an acknowledgement") {
  const ChatHistory h = MustParse(Array({
      Msg("user", "Fix the rounding bug in TimeDelta serialization."),
      Msg("assistant", "Done: it rounds half to even now."),
      Msg("user", "Now also add a regression test for 345 ms."),
      Msg("assistant", "Added tests/test_fields.py::test_round_345."),
      Msg("user", "ok"),
      Msg("assistant", "Anything else?"),
      Msg("user", "go on"),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.latest_request.has_value());
  CHECK(*needs.latest_request == 2);
}

TEST_CASE(
    "latest request: text beside tool results counts, results alone do not") {
  // Anthropic: a user turn answering a call may carry the next request.
  const ChatHistory h = MustParse(
      R"([{"role":"user","content":"List the failing tests in this repository."},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"bash","input":{"command":"pytest -q"}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"2 failed, 10 passed in 1.2s"},)"
      R"({"type":"text","text":"Also skip the slow tests from now on."}]},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"bash","input":{"command":"pytest -q -m 'not slow'"}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"1 failed, 8 passed in 0.4s"}]}])");
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.latest_request.has_value());
  CHECK(*needs.latest_request == 2);
}

TEST_CASE(
    "latest request: command output and demonstrations are not requests") {
  const std::string json = Array({
      Msg("system", "You are an autonomous programmer."),
      R"({"role":"user","content":"ISSUE: a demo issue about demo_module.py","is_demo":true})",
      R"({"role":"assistant","content":"```\nls\n```","is_demo":true})",
      Msg("user", "ISSUE: TimeDelta serialization rounds 345 to 344."),
      Msg("assistant", "Let me reproduce.\n```\npython reproduce.py\n```"),
      Observation("344\nthis output is long enough to look like words"),
  });
  const NextTurnNeeds needs = FindNextTurnNeeds(MustParse(json));
  REQUIRE(needs.latest_request.has_value());
  CHECK(*needs.latest_request == 3);
}

TEST_CASE("demonstration turns are never chosen") {
  const ChatHistory h = MustParse(Array({
      Msg("user", "ISSUE: TimeDelta serialization rounds 345 to 344."),
      Msg("assistant", "Looking at the field now."),
      R"({"role":"user","content":"ISSUE: the demonstration's own issue text","is_demo":true})",
      R"({"role":"assistant","content":"Plan:\n- the demo's plan\n- more","is_demo":true})",
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.final_decision.has_value());
  CHECK(*needs.final_decision == 1);
  CHECK_FALSE(needs.latest_plan.has_value());
  REQUIRE(needs.latest_request.has_value());
  CHECK(*needs.latest_request == 0);
}

TEST_CASE("last result: the last test run, not a later file view or search") {
  const ChatHistory h = MustParse(Array({
      Msg("user", "Make the parser tests pass, they fail since Monday."),
      Call("c1", "bash", R"({"command":"pytest -q tests/test_parser.py"})"),
      Result("c1", "F.\nFAILED tests/test_parser.py::test_dates\n1 failed"),
      Call("c2", "read_file", R"({"path":"src/parser.py"})"),
      Result("c2", "def parse(s):\n    return s"),
      Call("c3", "bash", R"({"command":"grep -rn parse_date src"})"),
      Result("c3", "src/parser.py:10: def parse_date(s):"),
      Call(
          "c4", "str_replace_editor",
          R"({"command":"str_replace","path":"src/parser.py","old_str":"a","new_str":"b"})"),
      Result("c4", "The file src/parser.py has been edited."),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.last_result.has_value());
  CHECK(*needs.last_result == 2);
}

TEST_CASE("last result: a program run counts as a run") {
  const ChatHistory h = MustParse(Array({
      Msg("user", "The CLI crashes on empty input; find out why please."),
      Call("c1", "bash", R"({"command":"python cli.py --input empty.txt"})"),
      Result("c1", "Traceback (most recent call last):\nIndexError: list"),
      Call("c2", "read_file", R"({"path":"cli.py"})"),
      Result("c2", "import sys\nlines = open(sys.argv[2]).read().split()"),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.last_result.has_value());
  CHECK(*needs.last_result == 2);
}

// A history whose last tool results are those of `first` then `second`
// (each a bash command), with plain outputs: which one is the last result
// (kNone for neither).
constexpr size_t kNone = 99;
size_t LastResultOf(std::string_view first, std::string_view second) {
  JsonWriter a;
  a.BeginObject().Key("command").String(first).EndObject();
  JsonWriter b;
  b.BeginObject().Key("command").String(second).EndObject();
  const ChatHistory h = MustParse(Array({
      Msg("user", "Find out why the service fails to start on CI."),
      Call("c1", "bash", *std::move(a).Finish()),
      Result("c1", "some output\nmore output"),
      Call("c2", "bash", *std::move(b).Finish()),
      Result("c2", "other output\nlast line"),
  }));
  return FindNextTurnNeeds(h).last_result.value_or(kNone);
}

TEST_CASE("last result: program runs of every kind the header names") {
  for (std::string_view run :
       {"node server.js --check", "./build/app --self-test", "make",
        "gcc -o demo demo.c", "cargo test", "go test ./...",
        "python -c 'import app'", "npm test"}) {
    CAPTURE(run);
    CHECK(LastResultOf("ls -la", run) == 4);
  }
}

TEST_CASE("last result: views, searches and edits after a run do not count") {
  for (std::string_view other :
       {"cat src/app.py", "ls -la build", "grep -rn parse_date src",
        "find . -name '*.cfg'", "sed -i 's/a/b/' src/app.py"}) {
    CAPTURE(other);
    CHECK(LastResultOf("pytest -q", other) == 2);
  }
}

TEST_CASE("last result: views and searches that name a runner do not count") {
  // next_turn.h: the last result is a test or program run's, "not file
  // views, searches or edits". These views and searches only mention a
  // runner or an interpreter in a path or a pattern.
  for (std::string_view other :
       {"cat Makefile", "grep -rn make_request src", "cat pytest.ini",
        "grep -rn 'python' docs", "grep -n jest package.json"}) {
    CAPTURE(other);
    CHECK(LastResultOf("pytest -q", other) == 2);
  }
}

TEST_CASE("last result: output that is a runner's summary counts") {
  // The call's arguments name no runner; the output shows it ran tests.
  const ChatHistory h = MustParse(Array({
      Msg("user", "Check that everything still works after the rename."),
      Call("c1", "run_target", R"({"target":"check-all"})"),
      Result("c1", "collected 12 items\n\n===== 12 passed in 0.31s ====="),
      Call("c2", "read_file", R"({"path":"README.md"})"),
      Result("c2", "# Project\nUsage: ..."),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.last_result.has_value());
  CHECK(*needs.last_result == 2);
}

TEST_CASE("last result: SWE-agent observations of test and program runs") {
  const ChatHistory h = MustParse(Array({
      Msg("system", "You are an autonomous programmer."),
      Msg("user", "ISSUE: TimeDelta serialization rounds 345 to 344."),
      Msg("assistant", "Reproduce first.\n```\npython reproduce.py\n```"),
      Observation("344"),
      Msg("assistant", "Open the field.\n```\nopen src/fields.py 1474\n```"),
      Observation("[File: /repo/src/fields.py (1997 lines total)]\n1474:x"),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  REQUIRE(needs.last_result.has_value());
  CHECK(*needs.last_result == 3);
}

TEST_CASE("no plan, no run: those needs stay empty") {
  const ChatHistory h = MustParse(Array({
      Msg("user", "What is the capital of Australia, and why not Sydney?"),
      Msg("assistant", "Canberra: it was a compromise between two cities."),
  }));
  const NextTurnNeeds needs = FindNextTurnNeeds(h);
  CHECK_FALSE(needs.latest_plan.has_value());
  CHECK_FALSE(needs.last_result.has_value());
  CHECK(needs.final_decision == std::optional<size_t>(1));
  CHECK(needs.latest_request == std::optional<size_t>(0));
}

TEST_CASE("TurnCommand: the first line of a ``` or <command> block") {
  std::string_view text = "Let me search.\n```\nfind_file \"fields.py\"\n```";
  std::string_view command = TurnCommand(text);
  CHECK(command == "find_file \"fields.py\"");
  // It points into the text.
  CHECK(command.data() >= text.data());
  CHECK(command.data() + command.size() <= text.data() + text.size());

  CHECK(TurnCommand("Listing.\n<command>\nls -la src\n</command>") ==
        "ls -la src");
  CHECK(TurnCommand("```bash\npytest -q tests\n```") == "pytest -q tests");
  // A heredoc's body is content, not the command.
  CHECK(TurnCommand("```\ncat <<'EOF' > reproduce.py\nprint(1)\nEOF\n```") ==
        "cat <<'EOF' > reproduce.py");
  CHECK(TurnCommand("I think the bug is in the rounding.").empty());
  CHECK(TurnCommand("").empty());
}

TEST_CASE("LooksLikeTestCommand: test runners, not other commands") {
  for (std::string_view command :
       {"pytest -q tests/", "python -m pytest -x",
        "python -m unittest discover", "go test ./...", "cargo test --all",
        "npm test", "npx jest src", "ctest --output-on-failure", "make test",
        R"({"command":"cd /repo && pytest tests/test_a.py"})"}) {
    CAPTURE(command);
    CHECK(LooksLikeTestCommand(command));
  }
  for (std::string_view command :
       {"ls -la", "cat setup.py", "grep -rn parse_date src", "git diff",
        "find . -name '*.py'", "python setup.py build", ""}) {
    CAPTURE(command);
    CHECK_FALSE(LooksLikeTestCommand(command));
  }
}

TEST_CASE("LooksLikeTestCommand: commands that only name a runner") {
  // "Whether a shell command line ... runs tests": reading a runner's
  // configuration, searching for its name or installing it runs no tests.
  for (std::string_view command :
       {"cat pytest.ini", "grep -rn pytest setup.cfg", "pip install pytest",
        "cat jest.config.js"}) {
    CAPTURE(command);
    CHECK_FALSE(LooksLikeTestCommand(command));
  }
}

TEST_CASE("LooksLikeTestOutput: runner summaries, even after a long log") {
  for (std::string_view output :
       {"===== 3 passed in 0.12s =====", "Ran 5 tests in 0.003s\n\nOK",
        "test result: ok. 4 passed; 0 failed; 0 ignored",
        "Ran 2 tests in 0.1s\n\nFAILED (failures=2)",
        "===== 1 failed, 11 passed in 2.01s ====="}) {
    CAPTURE(output);
    CHECK(LooksLikeTestOutput(output));
  }
  std::string log;
  for (int i = 0; i < 2000; ++i) {
    log += "tests/test_mod.py::test_case_" + std::to_string(i) + " PASSED\n";
  }
  log += "===== 2000 passed in 12.34s =====\n";
  CHECK(LooksLikeTestOutput(log));

  for (std::string_view output :
       {"total 12\ndrwxr-xr-x 2 root root 4096 src",
        "def test_round():\n    assert round(0.345, 2) == 0.35",
        "[File: /repo/src/fields.py (1997 lines total)]", ""}) {
    CAPTURE(output);
    CHECK_FALSE(LooksLikeTestOutput(output));
  }
}

}  // namespace
}  // namespace ctxkit::internal
