#include "bench/bench_inputs.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

namespace ctxkit::bench {

namespace {

constexpr const char* kWords[] = {
    "the",    "parser", "returns",         "value",       "for",      "each",
    "line",   "of",     "input",           "and",         "then",     "we",
    "check",  "module", "config",          "loader",      "path",     "build",
    "with",   "flags",  "cache",           "layer",       "runs",     "when",
    "files",  "are",    "small",           "list",        "sorted",   "by",
    "name",   "test",   "src/app/main.py", "lib/util.cc", "function", "error",
    "result", "output", "table",           "query",       "index",    "users",
    "orders", "select", "update",          "schema",      "pipeline", "stage",
    "buffer", "offset", "token",           "request",     "server",   "client",
};

}  // namespace

std::string Words(SplitMix64& rng, size_t bytes) {
  std::string out;
  while (out.size() < bytes) {
    if (!out.empty()) out += ' ';
    out += kWords[rng.Next() % std::size(kWords)];
  }
  return out;
}

std::string LoadAverage() {
  double load[3];
  if (getloadavg(load, 3) != 3) return "unknown";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return text;
}

std::string EnglishText1K() {
  std::string text;
  for (const char* name : {"/usr/share/common-licenses/GPL-3",
                           "/usr/share/common-licenses/Apache-2.0"}) {
    std::ifstream in(name, std::ios::binary);
    if (!in) continue;
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string all = buffer.str();
    // Skip the title block: prose starts at the preamble.
    const size_t start = all.find("The GNU General Public License is a free");
    text = all.substr(start == std::string::npos ? 0 : start);
    break;
  }
  if (text.empty()) {
    const std::string paragraph =
        "Token budgets decide what an agent remembers. When a conversation "
        "grows past the model's window, the oldest turns are summarized or "
        "dropped, and the facts they carried are lost unless something keeps "
        "them: the task, the errors seen, the files edited, the last test "
        "run. A compactor keeps those and compresses the rest. ";
    while (text.size() < 1024) text += paragraph;
  }
  size_t size = std::min<size_t>(1024, text.size());
  while (size > 0 && (static_cast<unsigned char>(text[size]) & 0xC0) == 0x80) {
    --size;
  }
  return text.substr(0, size);
}

std::string History100() {
  SplitMix64 rng(0x6d63703130300001ULL);
  std::string out = "[";
  auto add = [&](const std::string& message) {
    if (out.size() > 1) out += ',';
    out += message;
  };
  add(R"({"role":"system","content":)" +
      JsonString("You are a coding agent. " + Words(rng, 160)) + "}");
  add(R"({"role":"user","content":)" + JsonString("Task: " + Words(rng, 200)) +
      "}");
  int call = 0;
  for (size_t count = 2; count < 100;) {
    const bool assistant = count % 2 == 0;
    if (assistant && count % 8 == 2 && count + 1 < 100) {
      const std::string id = "call_" + std::to_string(++call);
      add(R"({"role":"assistant","content":"","tool_calls":[{"id":")" + id +
          R"(","type":"function","function":{"name":"run","arguments":)" +
          JsonString(R"({"cmd":")" + Words(rng, 30) + R"("})") + "}}]}");
      add(R"({"role":"tool","tool_call_id":")" + id + R"(","content":)" +
          JsonString(Words(rng, 220)) + "}");
      count += 2;
      continue;
    }
    add(std::string(R"({"role":")") + (assistant ? "assistant" : "user") +
        R"(","content":)" + JsonString(Words(rng, 60 + rng.Next() % 140)) +
        "}");
    ++count;
  }
  out += "]";
  return out;
}

}  // namespace ctxkit::bench
