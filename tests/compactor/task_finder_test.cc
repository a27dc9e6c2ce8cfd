// FindTask: the user's request is found behind demonstrations, few-shot
// blocks and acknowledgements, as the rule in task_finder.h says, and a
// request that shows an example is still the request.

#include "lib/compactor/task_finder.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "ctxkit/compactor.h"
#include "tests/compactor/history_builders.h"

namespace ctxkit::internal {
namespace {

using compactor_test::MustParse;

// SWE-agent's demonstration_template around a short demonstration.
constexpr std::string_view kSweAgentDemo =
    "Here is a demonstration of how to correctly accomplish this task.\\nIt "
    "is included to show you how to correctly use the interface.\\nYou do "
    "not need to follow exactly what is done in the demonstration.\\n--- "
    "DEMONSTRATION ---\\nISSUE: fix foo\\nedit 3:3\\n    return 1\\n"
    "end_of_edit\\n--- END OF DEMONSTRATION ---\\n";

TEST_CASE("the task is the request after a SWE-agent demonstration") {
  const std::string json =
      std::string(R"([{"role":"system","content":"You are an agent."},)"
                  R"({"role":"user","content":")") +
      std::string(kSweAgentDemo) +
      R"("},{"role":"user","content":"ISSUE:\nTimeDelta rounds 345 to 344"},)"
      R"({"role":"assistant","content":"Let me look."},)"
      R"({"role":"user","content":"ok"}])";
  const TaskFinding f = FindTask(MustParse(json));
  CHECK(f.task == 2);
  CHECK(f.roles[1] == OpeningRole::kDemonstration);
  CHECK(f.roles[0] == OpeningRole::kNone);
  CHECK(f.roles[3] == OpeningRole::kNone);
  CHECK(f.details[1].find("here is a demonstration") != std::string::npos);
  CHECK(f.details[2].find("1 demonstration message before it") !=
        std::string::npos);
}

TEST_CASE("a single opening request is the task even with an example in it") {
  const TaskFinding f = FindTask(MustParse(
      R"([{"role":"user","content":"Parse dates.\nExample: 2024-01-01"},)"
      R"({"role":"assistant","content":"Sure."}])"));
  CHECK(f.task == 0);
  CHECK(f.details[0].find("every one carries a demonstration marker") !=
        std::string::npos);
}

TEST_CASE("an example after the request is a demonstration") {
  const TaskFinding f = FindTask(MustParse(
      R"([{"role":"user","content":"Write a function that reverses words."},)"
      R"({"role":"user","content":"Example:\ninput: a b\noutput: b a"},)"
      R"({"role":"assistant","content":"def f(s): ..."}])"));
  CHECK(f.task == 0);
  CHECK(f.roles[1] == OpeningRole::kDemonstration);
}

TEST_CASE("a trailing acknowledgement does not take the task's place") {
  const TaskFinding f = FindTask(MustParse(
      R"([{"role":"user","content":"Migrate the users table to UUID keys."},)"
      R"({"role":"user","content":"go ahead"},)"
      R"({"role":"assistant","content":"Starting."}])"));
  CHECK(f.task == 0);
  CHECK(f.roles[1] == OpeningRole::kNone);
}

TEST_CASE("earlier user text before the request is context, not the task") {
  const TaskFinding f = FindTask(MustParse(
      R"([{"role":"user","content":"Here is my build log: error: x"},)"
      R"({"role":"user","content":"Why does the build fail on CI only?"},)"
      R"({"role":"assistant","content":"Because..."}])"));
  CHECK(f.task == 1);
  CHECK(f.roles[0] == OpeningRole::kBeforeTask);
  CHECK(f.details[0].find("message 1") != std::string::npos);
}

TEST_CASE("demonstration turns flagged is_demo do not end the opening") {
  // SWE-agent's put_demos_in_history: the demonstration's own turns, each
  // flagged, then the real request.
  const TaskFinding f = FindTask(MustParse(
      R"([{"role":"system","content":"agent"},)"
      R"({"role":"user","content":"ISSUE: demo issue","is_demo":true},)"
      R"({"role":"assistant","content":"ls","is_demo":true},)"
      R"({"role":"user","content":"ISSUE: the real issue text"},)"
      R"({"role":"assistant","content":"find_file x"}])"));
  CHECK(f.task == 3);
  CHECK(f.roles[1] == OpeningRole::kDemonstration);
  CHECK(f.roles[2] == OpeningRole::kDemonstration);
  CHECK(f.details[2].find("is_demo") != std::string::npos);
}

TEST_CASE("with no request before the first assistant turn, the first one") {
  const TaskFinding f = FindTask(
      MustParse(R"([{"role":"assistant","content":"How can I help?"},)"
                R"({"role":"user","content":"Rename the config module."},)"
                R"({"role":"user","content":"thanks"}])"));
  CHECK(f.task == 1);
  CHECK(f.details[1].find("first user request") != std::string::npos);
}

TEST_CASE("no user text at all: no task") {
  const TaskFinding f = FindTask(MustParse(
      R"([{"role":"system","content":"s"},{"role":"assistant","content":"a"}])"));
  CHECK(f.task == TaskFinding::kNoTask);
}

TEST_CASE("markers: case, line starts and the tail of long messages") {
  CHECK(DemonstrationMarker("--- Demonstration ---") ==
        "--- demonstration ---");
  CHECK(DemonstrationMarker("intro\nEXAMPLES:\n1") == "examples:");
  // "example:" counts only at a line start; prose mentioning one does not.
  CHECK(DemonstrationMarker("see the example: below").empty());
  CHECK(DemonstrationMarker("For example, run it").empty());
  std::string long_text(100 * 1024, 'x');
  long_text += "\n--- END OF DEMONSTRATION ---\n";
  CHECK(DemonstrationMarker(long_text) == "end of demonstration");
}

}  // namespace
}  // namespace ctxkit::internal
