// What the next turn of an agent needs from the history besides the task:
// where the session stands (the final decision), what it means to do next
// (the latest plan), and what its last test run said. The compactor keeps
// these messages as it keeps anchors (compactor.h, "What is kept").
//
// The rules, each a plain reading of the history from its end:
//   final decision  the last assistant message with text of its own (not
//                   only tool calls or thinking).
//   latest plan     the last assistant message that lays out a plan: a line
//                   starting "Plan:", "## Plan", "Next steps:", "Steps:",
//                   "TODO:", "My plan" or "Here's my plan", three or more
//                   numbered lines ("1." ... "3.") in a turn that speaks of
//                   a plan, steps or what comes next, or a call of a plan or
//                   to-do tool (TodoWrite, todo_write, update_plan, ...).
//   latest request  the last user message with the user's own words (text
//                   of its own, beside any tool results it carries; not
//                   command output, not a demonstration), at least 16 bytes
//                   long (shorter ones are "ok", "go on"): in a chat the
//                   newest ask is the current goal.
//   last result     the result of the last test or program run: a tool
//                   result or SWE-agent observation whose command runs tests
//                   (pytest, unittest, go test, cargo test, npm test, jest,
//                   ctest, make test, ...) or a program (python, node,
//                   ./binary, make, a compiler, ...), or whose output is a
//                   test runner's summary ("N passed", "Ran N tests", "test
//                   result:", "FAILED (failures="); not file views, searches
//                   or edits.
//
// Thread safety: reentrant.

#ifndef CTXKIT_LIB_COMPACTOR_NEXT_TURN_H_
#define CTXKIT_LIB_COMPACTOR_NEXT_TURN_H_

#include <cstddef>
#include <optional>
#include <string_view>

#include "lib/compactor/chat_history.h"

namespace ctxkit::internal {

struct NextTurnNeeds {
  std::optional<size_t> final_decision;  // message indices
  std::optional<size_t> latest_plan;
  std::optional<size_t> latest_request;
  std::optional<size_t> last_result;
};

// Linear in the messages' text sizes in the worst case; usually stops after
// the last few messages. Demonstration turns (ChatMessage::is_demo) are
// never chosen.
NextTurnNeeds FindNextTurnNeeds(const ChatHistory& history);

// The command an assistant turn of SWE-agent's text form runs: the first
// line of its ``` block or <command> block (a heredoc's body is content).
// Empty when the turn has no such block. Points into `text`.
std::string_view TurnCommand(std::string_view text);

// Whether a shell command line runs tests: one of its simple commands
// (split at ";", "&&", "||", "|", line breaks) starts with a test runner
// (pytest, tox, jest, ctest, "go test", "cargo test", "npm test", "make
// test", "python -m pytest", "python test_x.py" or "...reproduce...", ...).
// A command that only names a runner ("cat pytest.ini", "grep pytest",
// "pip install pytest") does not. A one-word command naming a test tool
// ("run_tests") does.
bool LooksLikeTestCommand(std::string_view command);
// Whether a shell command line runs tests or a program (an interpreter, a
// compiler or build, a file of the project such as "./run.sh"), as opposed
// to reading, searching, listing, editing or installing.
bool LooksLikeProgramRun(std::string_view command);
// Whether command output is a test runner's summary.
bool LooksLikeTestOutput(std::string_view output);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_NEXT_TURN_H_
