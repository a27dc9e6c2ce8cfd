// The compaction part of `ctxkit demo` (see demo_compaction.h).

#include "programs/ctxkit/cli/demo_compaction.h"

#include <array>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/compactor.h"
#include "programs/ctxkit/host/json_text.h"
#include "programs/ctxkit/host/text.h"

namespace ctxkit::program {

namespace {

constexpr int kRounds = 24;  // each: read a file, run the tests, reply
constexpr double kShare = 0.25;

std::string Text(std::string_view role, std::string_view content) {
  return "{\"role\":" + JsonQuote(role) + ",\"content\":" + JsonQuote(content) +
         "}";
}

std::string Call(int id, std::string_view tool, std::string_view arguments) {
  return "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
         "\"call_" +
         std::to_string(id) +
         "\",\"type\":\"function\",\"function\":{\"name\":" + JsonQuote(tool) +
         ",\"arguments\":" + JsonQuote(arguments) + "}}]}";
}

std::string Result(int id, std::string_view content) {
  return "{\"role\":\"tool\",\"tool_call_id\":\"call_" + std::to_string(id) +
         "\",\"content\":" + JsonQuote(content) + "}";
}

// A source file's text, long enough to matter in a context window.
std::string Source(int n) {
  std::string out;
  for (int line = 0; line < 30; ++line) {
    out += "def handler_" + std::to_string(n) + "_" + std::to_string(line) +
           "(request):\n    return render(request, 'page.html', {'id': " +
           std::to_string(line) + "})\n";
  }
  return out;
}

std::string Session() {
  std::vector<std::string> m;
  m.push_back(Text("system",
                   "You are a coding agent working in a Django repository. "
                   "Use the tools to read files, run commands and edit code."));
  m.push_back(Text("user",
                   "The view tests fail since the upgrade: make "
                   "tests/test_views.py pass without changing the tests."));
  int id = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = "app/views_" + std::to_string(round) + ".py";
    m.push_back(Call(id, "read_file", "{\"path\":\"" + path + "\"}"));
    m.push_back(Result(id++, Source(round)));
    m.push_back(
        Call(id, "bash", "{\"command\":\"pytest -q tests/test_views.py\"}"));
    if (round == kRounds / 2) {
      m.push_back(Result(id++,
                         "FAILED tests/test_views.py::test_index - "
                         "TypeError: render() got an unexpected keyword "
                         "argument 'context_instance'\n1 failed, 11 passed"));
      m.push_back(Text("assistant",
                       "Note: render() lost context_instance in Django 1.10; "
                       "the call in app/views_12.py must change."));
      m.push_back(
          Call(id, "edit_file",
               "{\"path\":\"app/views_12.py\",\"old\":\"context_instance=ctx\","
               "\"new\":\"\"}"));
      m.push_back(Result(id++, "The file app/views_12.py has been edited."));
    } else {
      m.push_back(Result(id++, "1 failed, 11 passed in 0.41s"));
      m.push_back(Text("assistant", "Not this module; reading the next one."));
    }
    if (round % 6 == 5) m.push_back(Text("user", "ok"));
  }
  m.push_back(
      Call(id, "bash", "{\"command\":\"pytest -q tests/test_views.py\"}"));
  m.push_back(Result(id++, "12 passed in 0.38s"));
  m.push_back(Text("assistant",
                   "Done: app/views_12.py no longer passes context_instance; "
                   "all 12 view tests pass."));
  std::string json = "[";
  for (size_t i = 0; i < m.size(); ++i) {
    if (i > 0) json += ",";
    json += m[i];
  }
  return json + "]";
}

}  // namespace

Status RunCompactionDemo(std::ostream& out) {
  const std::string history = Session();
  Compactor compactor;
  CompactionOptions options;
  options.model = "gpt-4o";
  options.target_ratio = kShare;
  options.recent_window = 4;
  options.explain = true;
  const auto start = std::chrono::steady_clock::now();
  StatusOr<CompactionResult> result = compactor.Compact(history, options);
  const auto took = std::chrono::steady_clock::now() - start;
  if (!result.ok()) return result.status();
  if (Status valid = ValidateChatHistory(result->messages_json, result->format);
      !valid.ok()) {
    return valid;
  }
  std::array<size_t, 5> tiers{};
  for (const MessageDecision& d : result->decisions) {
    ++tiers[static_cast<size_t>(d.tier)];
  }
  out << "compacted a built-in coding-agent session for gpt-4o ("
      << result->encoding << ") to " << static_cast<int>(kShare * 100)
      << " % of its tokens in " << FormatDuration(took) << ":\n"
      << "  messages            " << result->original_count << " -> "
      << result->compacted_count << " (" << result->summary_count
      << " summaries)\n"
      << "  tokens              " << result->original_tokens << " -> "
      << result->compacted_tokens << " (target " << result->target_tokens
      << ", " << (result->budget_met ? "met" : "not met") << ")\n"
      << "  tiers               ";
  for (size_t t = 0; t < tiers.size(); ++t) {
    out << (t > 0 ? ", " : "") << TierName(static_cast<Tier>(t)) << " "
        << tiers[t];
  }
  out << "\n  structure           valid (tool calls with their results)\n";
  for (const CompactedMessage& m : result->messages) {
    if (!m.is_compressed || m.source_index.has_value()) continue;
    out << "  first summary       " << Printable(m.json.substr(0, 400))
        << (m.json.size() > 400 ? "..." : "") << "\n";
    break;
  }
  return Status::Ok();
}

}  // namespace ctxkit::program
