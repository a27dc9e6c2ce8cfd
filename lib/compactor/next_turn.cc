#include "lib/compactor/next_turn.h"

#include <cstddef>
#include <optional>
#include <string_view>

#include "lib/compactor/ascii.h"

namespace ctxkit::internal {
namespace {

// Only the ends of a long output are read for a runner's summary (runners
// print it last), only the head of a command, only the head of a turn for a
// plan (plans are laid out first), and only the newest messages: a plan or
// a test run older than that is no longer where the session stands, and
// the search stays a small fixed cost on 10,000-message histories.
constexpr size_t kOutputTailBytes = 1024;
constexpr size_t kCommandHeadBytes = 1024;
constexpr size_t kPlanHeadBytes = 2048;
constexpr size_t kSearchMessages = 1000;

// `s` lowercased into `buffer` (ASCII only): each phrase is then one find.
std::string_view Lowered(std::string_view s, std::string* buffer) {
  buffer->resize(s.size());
  for (size_t i = 0; i < s.size(); ++i) (*buffer)[i] = AsciiLower(s[i]);
  return *buffer;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' ||
                        s.front() == '#' || s.front() == '*' ||
                        s.front() == '-' || s.front() == '>')) {
    s.remove_prefix(1);
  }
  return s;
}

bool HasOwnText(const ChatMessage& m) { return TrimmedSize(m.text) > 0; }

// A request says more than an acknowledgement does.
constexpr size_t kMinRequestBytes = 16;



bool IsPlanTool(std::string_view name) {
  for (std::string_view tool :
       {"todowrite", "todo_write", "update_plan", "update_todos",
        "write_todos", "plan", "set_plan", "create_plan"}) {
    if (name.size() == tool.size() && StartsWithNoCase(name, tool)) return true;
  }
  return false;
}

bool LaysOutPlan(const ChatMessage& m) {
  for (const ToolCall& call : m.calls) {
    if (IsPlanTool(call.name)) return true;
  }
  int numbered = 0;
  size_t begin = 0;
  const std::string_view text =
      std::string_view(m.text).substr(0, kPlanHeadBytes);
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = TrimLeft(text.substr(begin, end - begin));
    for (std::string_view marker :
         {"plan:", "next steps:", "steps:", "todo:", "my plan",
          "here's my plan", "here is my plan", "the plan"}) {
      if (StartsWithNoCase(line, marker)) return true;
    }
    if (line == "Plan" || line == "plan") return true;
    if (line.size() >= 3 && line[0] >= '1' && line[0] <= '9' &&
        (line[1] == '.' || line[1] == ')') && line[2] == ' ') {
      ++numbered;
    }
    begin = end + 1;
  }
  // A numbered list is a plan when the turn says it is one; otherwise it is
  // as often an explanation ("here's how it works: 1. ...").
  if (numbered < 3) return false;
  std::string buffer;
  const std::string_view lower = Lowered(text, &buffer);
  for (std::string_view word : {"plan", "next", "step", "i'll ", "i will",
                                "let me", "todo", "going to"}) {
    if (lower.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// The command that produced result message `k`: the arguments of the calls
// it answers, or, for a SWE-agent observation, the assistant turn before it.
std::string_view CommandOf(const ChatHistory& h, size_t k) {
  const ChatMessage& m = h.messages[k];
  if (!m.result_ids.empty()) {
    for (size_t j = k; j-- > 0;) {
      const ChatMessage& caller = h.messages[j];
      if (caller.calls.empty()) continue;
      for (const ToolCall& call : caller.calls) {
        for (const std::string& id : m.result_ids) {
          if (call.id == id) return call.arguments;
        }
      }
      break;
    }
    return {};
  }
  if (k > 0 && h.messages[k - 1].role == "assistant") {
    return TurnCommand(h.messages[k - 1].text);
  }
  return {};
}

// Whether `command` runs a program (an interpreter, a build, a binary of
// the project): what an agent does to see whether its work works, as
// opposed to reading, searching or editing files.
bool LooksLikeProgramRun(std::string_view command) {
  std::string buffer;
  const std::string_view lower =
      Lowered(command.substr(0, kCommandHeadBytes), &buffer);
  for (std::string_view runner :
       {"python", "node ", "ruby ", "perl ", "php ", "java ", "go run",
        "cargo run", "./", "bash ", "sh ", "make", "npm ", "npx ", "yarn ",
        "pnpm ", "deno ", "bun ", "dotnet ", "gcc ", "g++ ", "clang",
        "rustc ", "javac ", "mvn ", "gradle"}) {
    for (size_t at = lower.find(runner); at != std::string_view::npos;
         at = lower.find(runner, at + 1)) {
      const char before = at == 0 ? ' ' : lower[at - 1];
      if (before == ' ' || before == ';' || before == '&' || before == '|' ||
          before == '(' || before == '"' || before == '\'' || before == '`') {
        return true;
      }
    }
  }
  return false;
}

bool IsOutput(const ChatMessage& m) {
  if (!m.result_ids.empty() || m.role == "tool") return true;
  if (m.role != "user") return false;
  const std::string_view t = m.text;
  const std::string_view tail = t.substr(t.size() > 512 ? t.size() - 512 : 0);
  return tail.find("(Current directory:") != std::string_view::npos ||
         tail.find("bash-$") != std::string_view::npos;
}

}  // namespace

std::string_view TurnCommand(std::string_view text) {
  size_t open = text.find("```");
  const size_t tag = text.find("<command>");
  if (tag < open) open = tag;
  if (open == std::string_view::npos) return {};
  open = text.find('\n', open);
  if (open == std::string_view::npos) return {};
  std::string_view line = text.substr(open + 1);
  line = line.substr(0, line.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool LooksLikeTestCommand(std::string_view command) {
  std::string buffer;
  command = Lowered(command.substr(0, kCommandHeadBytes), &buffer);
  for (std::string_view runner :
       {"pytest", "py.test", "unittest", "nosetests", "tox ", "npm test",
        "npm run test", "yarn test", "pnpm test", "go test", "cargo test",
        "make test", "make check", "ctest", "jest", "mocha", "vitest",
        "rspec", "phpunit", "mvn test", "gradle test", "dotnet test",
        "bazel test", "mix test", "runtests"}) {
    if (command.find(runner) != std::string_view::npos) return true;
  }
  // "python test_x.py", "python reproduce.py": an agent's own check.
  const size_t python = command.find("python");
  if (python != std::string_view::npos) {
    const std::string_view rest = command.substr(python);
    const std::string_view line = rest.substr(0, rest.find('\n'));
    return line.find("test") != std::string_view::npos ||
           line.find("reproduce") != std::string_view::npos;
  }
  return false;
}

bool LooksLikeTestOutput(std::string_view output) {
  if (output.size() > kOutputTailBytes) {
    output = output.substr(output.size() - kOutputTailBytes);
  }
  // unittest's "Ran 3 tests in 0.01s", before lowercasing.
  const size_t ran = output.find("Ran ");
  if (ran != std::string_view::npos &&
      output.find(" test", ran) != std::string_view::npos) {
    return true;
  }
  std::string buffer;
  output = Lowered(output, &buffer);
  for (std::string_view summary :
       {" passed in ", " passed,", " failed,", " failed in ", "test result:",
        "failed (failures=", "failed (errors=", "tests passed", "tests failed",
        " passing (", " failing", "test suites:", "all tests passed"}) {
    if (output.find(summary) != std::string_view::npos) return true;
  }
  return false;
}

NextTurnNeeds FindNextTurnNeeds(const ChatHistory& history) {
  NextTurnNeeds needs;
  const auto& messages = history.messages;
  const size_t oldest =
      messages.size() > kSearchMessages ? messages.size() - kSearchMessages : 0;
  for (size_t k = messages.size(); k-- > 0;) {
    const ChatMessage& m = messages[k];
    if (m.is_demo) continue;
    const bool recent = k >= oldest;
    if (!recent && needs.final_decision && needs.latest_request) break;
    if (m.role == "assistant") {
      if (!needs.final_decision && HasOwnText(m)) needs.final_decision = k;
      if (recent && !needs.latest_plan && LaysOutPlan(m)) needs.latest_plan = k;
    } else if (IsOutput(m)) {
      if (recent && !needs.last_result) {
        const std::string_view command = CommandOf(history, k);
        if (LooksLikeTestCommand(command) || LooksLikeProgramRun(command) ||
            LooksLikeTestOutput(m.text)) {
          needs.last_result = k;
        }
      }
      // A turn that answers calls may also carry the user's next request
      // (text blocks beside its tool results; an observation is output).
      if (!needs.latest_request && m.role == "user" && !m.result_ids.empty() &&
          m.own_text_bytes >= kMinRequestBytes) {
        needs.latest_request = k;
      }
    } else if (m.role == "user" && !needs.latest_request &&
               TrimmedSize(m.text) >= kMinRequestBytes) {
      needs.latest_request = k;
    }
    if (needs.final_decision && needs.latest_plan && needs.last_result &&
        needs.latest_request) {
      break;
    }
  }
  return needs;
}

}  // namespace ctxkit::internal
