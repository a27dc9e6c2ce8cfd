#include "lib/compactor/next_turn.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "lib/compactor/ascii.h"
#include "simdjson.h"

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
  for (size_t i = 0; i < s.size(); ++i)
    (*buffer)[i] = absl::ascii_tolower(s[i]);
  return *buffer;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '#' ||
          s.front() == '*' || s.front() == '-' || s.front() == '>')) {
    s.remove_prefix(1);
  }
  return s;
}

bool HasOwnText(const ChatMessage& m) { return TrimmedSize(m.text) > 0; }

// A request says more than an acknowledgement does.
constexpr size_t kMinRequestBytes = 16;

bool IsPlanTool(std::string_view name) {
  for (std::string_view tool :
       {"todowrite", "todo_write", "update_plan", "update_todos", "write_todos",
        "plan", "set_plan", "create_plan"}) {
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

// The shell command in a call's JSON arguments: the string value of its
// "command" (or "cmd", "script") member, escapes resolved; the arguments as
// given when they are not such an object.
std::string CommandInArguments(std::string_view arguments) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(arguments.data(), arguments.size()).get(object) !=
      simdjson::SUCCESS) {
    return std::string(arguments);
  }
  for (std::string_view key : {"command", "cmd", "script"}) {
    std::string_view value;
    if (object[key].get_string().get(value) == simdjson::SUCCESS) {
      return std::string(value);
    }
  }
  return std::string();
}

// The command that produced result message `k`: for a tool result, the
// shell command of the call it answers (a call without one is named by its
// tool: "run_tests"); for a SWE-agent observation, the command of the
// assistant turn before it.
std::string CommandOf(const ChatHistory& h, size_t k) {
  const ChatMessage& m = h.messages[k];
  if (!m.result_ids.empty()) {
    for (size_t j = k; j-- > 0;) {
      const ChatMessage& caller = h.messages[j];
      if (caller.calls.empty()) continue;
      for (const ToolCall& call : caller.calls) {
        for (const std::string& id : m.result_ids) {
          if (call.id != id) continue;
          std::string command = CommandInArguments(
              std::string_view(call.arguments).substr(0, kCommandHeadBytes));
          return command.empty() ? call.name : command;
        }
      }
      break;
    }
    return std::string();
  }
  if (k > 0 && h.messages[k - 1].role == "assistant") {
    return std::string(TurnCommand(h.messages[k - 1].text));
  }
  return std::string();
}

// The simple commands of a shell line, each as its words: split at ";",
// "&&", "||", "|" and line breaks; leading "VAR=value", "sudo", "time",
// "env", "nohup" dropped; a program's directory dropped ("/usr/bin/python3"
// is "python3", "./run.sh" stays as it is: running a file of the project).
std::vector<std::vector<std::string_view>> SimpleCommands(
    std::string_view line) {
  std::vector<std::vector<std::string_view>> out;
  std::vector<std::string_view> words;
  auto flush = [&] {
    size_t i = 0;
    while (i < words.size() && (words[i].find('=') != std::string_view::npos ||
                                words[i] == "sudo" || words[i] == "time" ||
                                words[i] == "env" || words[i] == "nohup")) {
      ++i;
    }
    if (i < words.size()) {
      std::vector<std::string_view> command(words.begin() + i, words.end());
      std::string_view& program = command[0];
      const size_t slash = program.rfind('/');
      if (slash != std::string_view::npos && program.substr(0, 2) != "./") {
        program.remove_prefix(slash + 1);
      }
      out.push_back(std::move(command));
    }
    words.clear();
  };
  size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == ';' || c == '|' || c == '&' || c == '\n' || c == '(' || c == ')') {
      flush();
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    const size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' &&
           line[i] != ';' && line[i] != '|' && line[i] != '&' &&
           line[i] != '\n' && line[i] != '\r' && line[i] != ')') {
      ++i;
    }
    std::string_view word = line.substr(begin, i - begin);
    if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') &&
        word.back() == word.front()) {
      word = word.substr(1, word.size() - 2);
    }
    words.push_back(word);
  }
  flush();
  return out;
}

bool IsOneOf(std::string_view word,
             std::initializer_list<std::string_view> list) {
  for (std::string_view w : list) {
    if (word == w) return true;
  }
  return false;
}

bool IsPython(std::string_view program) {
  return program.substr(0, 6) == "python";
}

// The command a launcher runs ("npx jest", "poetry run pytest", "bundle
// exec rspec"), or `c` itself.
std::vector<std::string_view> Launched(const std::vector<std::string_view>& c) {
  const std::string_view next = c.size() > 1 ? c[1] : std::string_view();
  size_t skip = 0;
  if (IsOneOf(c[0], {"npx", "pnpx", "uvx", "bunx"})) {
    skip = 1;
  } else if ((IsOneOf(c[0], {"poetry", "pipenv", "uv", "pdm", "hatch"}) &&
              next == "run") ||
             (c[0] == "bundle" && next == "exec")) {
    skip = 2;
  }
  if (skip == 0 || c.size() <= skip) return c;
  return std::vector<std::string_view>(c.begin() + static_cast<ptrdiff_t>(skip),
                                       c.end());
}

// Whether one simple command runs tests.
bool RunsTests(const std::vector<std::string_view>& command) {
  const std::vector<std::string_view> c = Launched(command);
  const std::string_view p = c[0];
  const std::string_view next = c.size() > 1 ? c[1] : std::string_view();
  if (IsOneOf(p, {"pytest", "py.test", "tox", "nosetests", "nox", "jest",
                  "mocha", "vitest", "rspec", "phpunit", "ctest", "runtests.py",
                  "./runtests.py"})) {
    return true;
  }
  if (IsOneOf(p, {"go", "cargo", "npm", "yarn", "pnpm", "make", "mvn", "gradle",
                  "./gradlew", "dotnet", "bazel", "mix", "deno", "bun"}) &&
      (next == "test" || next == "check" ||
       (next == "run" && c.size() > 2 && c[2].substr(0, 4) == "test"))) {
    return true;
  }
  if (IsPython(p)) {
    if (next == "-m" && c.size() > 2 &&
        IsOneOf(c[2], {"pytest", "unittest", "nose", "tox"})) {
      return true;
    }
    // "python test_x.py", "python reproduce.py": an agent's own check.
    for (size_t i = 1; i < c.size(); ++i) {
      if (c[i].find("test") != std::string_view::npos ||
          c[i].find("reproduce") != std::string_view::npos) {
        return true;
      }
    }
  }
  return false;
}

// Whether one simple command runs a program (an interpreter, a build, a
// file of the project): what an agent does to see whether its work works,
// as opposed to reading, searching, listing, editing or installing.
bool RunsProgram(const std::vector<std::string_view>& c) {
  const std::string_view p = c[0];
  const std::string_view next = c.size() > 1 ? c[1] : std::string_view();
  if (p.substr(0, 2) == "./") return true;
  if (IsPython(p)) return next != "-m" || c.size() < 3 || c[2] != "pip";
  if (IsOneOf(p, {"node",    "ruby",   "perl",      "php",  "java",    "deno",
                  "bun",     "gcc",    "g++",       "cc",   "c++",     "clang",
                  "clang++", "rustc",  "javac",     "make", "cmake",   "ninja",
                  "mvn",     "gradle", "./gradlew", "npx",  "ts-node", "julia",
                  "Rscript", "gdb",    "valgrind"})) {
    return true;
  }
  if (IsOneOf(p, {"go", "cargo", "dotnet"})) {
    return IsOneOf(next, {"run", "build", "test", "check"});
  }
  if (IsOneOf(p, {"npm", "yarn", "pnpm"})) {
    return IsOneOf(next, {"run", "start", "test", "exec"});
  }
  if (IsOneOf(p, {"bash", "sh", "zsh"})) {
    return c.size() > 1 && next.substr(0, 1) != "-";
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
  for (const auto& c : SimpleCommands(command.substr(0, kCommandHeadBytes))) {
    if (RunsTests(c)) return true;
  }
  // A tool of its own for tests ("run_tests", "test").
  return command.find(' ') == std::string_view::npos &&
         command.find("test") != std::string_view::npos;
}

bool LooksLikeProgramRun(std::string_view command) {
  for (const auto& c : SimpleCommands(command.substr(0, kCommandHeadBytes))) {
    if (RunsTests(c) || RunsProgram(c)) return true;
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
        const std::string command = CommandOf(history, k);
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
