// mcp_session_bench: the in-process cost of the MCP server loop
// (mcp::Session::Handle), without process, pipe or thread hand-off, to
// separate the protocol's share of a stdio round trip
// (mcp_stdio_roundtrip) from the transport's.
//
//   mcp_session_bench [--benchmark_filter=...] [Google Benchmark flags]
//
//   BM_Ping                       Handle of a ping request: parsing, dispatch
//                                 and the reply, no tool.
//   BM_CountTokens/text1k         tools/call count_tokens of the same 1 KB
//                                 English text as mcp_stdio_roundtrip,
//                                 model gpt-4o: schema validation, the
//                                 adapter, the result document.
//   BM_CountTokens/messages100    the same for its 100-message history.
//   BM_TokenizerCount             Tokenizer::Count of the text alone
//                                 (o200k_base, gpt-4o's encoding): the
//                                 library's share.
// Counters: bytes_per_second of the request line, reply_bytes.
//
// One Services over a fresh store in $CTXKIT_BENCH_DIR, $TMPDIR or /tmp,
// removed at exit. Single thread. Prints the load average at the start and
// the end.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "ctxkit/store.h"
#include "ctxkit/tokenizer.h"
#include "examples/ctxkit/host/config.h"
#include "examples/ctxkit/host/services.h"
#include "examples/ctxkit/mcp/session.h"

namespace {

std::string LoadAverage() {
  double load[3];
  if (getloadavg(load, 3) != 3) return "unknown";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return text;
}

std::string JsonString(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

// The same 1,024 bytes as mcp_stdio_roundtrip's text1k.
std::string EnglishText() {
  std::string text;
  for (const char* name : {"/usr/share/common-licenses/GPL-3",
                           "/usr/share/common-licenses/Apache-2.0"}) {
    std::ifstream in(name, std::ios::binary);
    if (!in) continue;
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string all = buffer.str();
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

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

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

std::string Words(Rng& rng, size_t bytes) {
  std::string out;
  while (out.size() < bytes) {
    if (!out.empty()) out += ' ';
    out += kWords[rng.Next() % std::size(kWords)];
  }
  return out;
}

// The same history as mcp_stdio_roundtrip's messages100.
std::string History100() {
  Rng rng(0x6d63703130300001ULL);
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

// One store for the whole run, removed at exit.
class Fixture {
 public:
  static Fixture& Get() {
    static Fixture* const fixture = new Fixture;
    return *fixture;
  }
  ctxkit::host::Services& services() { return *services_; }
  void Close() {
    services_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

 private:
  Fixture() {
    std::string base = "/tmp";
    for (const char* var : {"CTXKIT_BENCH_DIR", "TMPDIR"}) {
      const char* v = std::getenv(var);
      if (v != nullptr && *v != '\0') {
        base = v;
        break;
      }
    }
    dir_ = base + "/ctxkit-mcp-session-bench-XXXXXX";
    if (mkdtemp(dir_.data()) == nullptr) {
      std::fprintf(stderr, "mkdtemp %s failed\n", dir_.c_str());
      std::exit(1);
    }
    auto store = ctxkit::Store::Open(dir_ + "/db");
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      std::exit(1);
    }
    ctxkit::host::HostConfig config;
    config.db_path = dir_ + "/db";
    auto services = ctxkit::host::OpenServices(config, *std::move(store));
    if (!services.ok()) {
      std::fprintf(stderr, "%s\n", services.status().ToString().c_str());
      std::exit(1);
    }
    services_ = *std::move(services);
  }

  std::string dir_;
  std::unique_ptr<ctxkit::host::Services> services_;
};

// Keeps the last message: what a transport would write.
class LastMessage final : public ctxkit::mcp::Outbound {
 public:
  void Send(std::string message) override { last = std::move(message); }
  std::string last;
};

void RunRequest(benchmark::State& state, const std::string& request) {
  ctxkit::mcp::Session session(Fixture::Get().services());
  LastMessage out;
  session.Handle(request, out);  // warm: parser buffers, schemas, tokenizer
  if (out.last.find(R"("error":{)") != std::string::npos ||
      (out.last.find(R"("isError":true)") != std::string::npos)) {
    state.SkipWithError(("request failed: " + out.last.substr(0, 300)).c_str());
    return;
  }
  for (auto _ : state) {
    session.Handle(request, out);
    benchmark::DoNotOptimize(out.last.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(request.size()));
  state.counters["reply_bytes"] = static_cast<double>(out.last.size());
}

std::string CountTokensRequest(const std::string& input_json) {
  return R"({"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"count_tokens","arguments":{"input":)" +
         input_json + R"(,"model":"gpt-4o"}}})";
}

void BM_Ping(benchmark::State& state) {
  RunRequest(state, R"({"jsonrpc":"2.0","id":42,"method":"ping"})");
}
BENCHMARK(BM_Ping);

void BM_CountTokens(benchmark::State& state, bool messages) {
  const std::string input = messages ? History100() : JsonString(EnglishText());
  RunRequest(state, CountTokensRequest(input));
}
BENCHMARK_CAPTURE(BM_CountTokens, text1k, false);
BENCHMARK_CAPTURE(BM_CountTokens, messages100, true);

void BM_TokenizerCount(benchmark::State& state) {
  auto tokenizer = ctxkit::Tokenizer::ForEncoding("o200k_base");
  if (!tokenizer.ok()) {
    state.SkipWithError(tokenizer.status().ToString().c_str());
    return;
  }
  const std::string text = EnglishText();
  size_t tokens = 0;
  for (auto _ : state) {
    auto n = (*tokenizer)->Count(text);
    tokens = n.ok() ? *n : 0;
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_TokenizerCount);

}  // namespace

int main(int argc, char** argv) {
  std::printf("load average at start: %s\n", LoadAverage().c_str());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  Fixture::Get().Close();
  std::printf("load average at end: %s\n", LoadAverage().c_str());
  return 0;
}
