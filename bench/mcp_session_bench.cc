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
#include <memory>
#include <string>
#include <string_view>

#include "bench/bench_inputs.h"
#include "ctxkit/store.h"
#include "ctxkit/tokenizer.h"
#include "programs/ctxkit/host/config.h"
#include "programs/ctxkit/host/services.h"
#include "programs/ctxkit/mcp/session.h"

namespace {

using ctxkit::bench::EnglishText1K;
using ctxkit::bench::History100;
using ctxkit::bench::JsonString;
using ctxkit::bench::LoadAverage;

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
  const std::string input =
      messages ? History100() : JsonString(EnglishText1K());
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
  const std::string text = EnglishText1K();
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
