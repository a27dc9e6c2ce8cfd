// mcp_stdio_roundtrip: the round-trip latency of `count_tokens` and of seed
// 003's `get_related_contexts` over the MCP stdio transport, as an MCP client
// sees it.
//
//   mcp_stdio_roundtrip [--ctxkit PATH] [--calls N] [--warmup N]
//
// Starts `ctxkit mcp --db <fresh temporary store>` with pipes on its stdin
// and stdout (fork/exec; its stderr is inherited), initializes the session,
// then sends `tools/call` requests one at a time -- write the line, wait for
// the reply line -- and reports the latency of each exchange:
//   text1k:       count_tokens of a 1 KB English text (1,024 bytes of the
//                 licence texts in /usr/share/common-licenses, else a
//                 built-in paragraph), model gpt-4o;
//   messages100:  count_tokens of a 100-message chat history (system prompt,
//                 user and assistant turns, some tool calls and results,
//                 18.6 KB of JSON in all, SplitMix64 words as in
//                 compactor_bench), model gpt-4o;
//   related:      get_related_contexts of a context with 10 outgoing
//                 `references` edges (type and direction given), in a graph
//                 of 100 contexts (spec context-graph.md 2.5: p50 <= 100 us).
// For each: p50, p90, p99 and max in microseconds, and calls per second,
// over --calls timed calls (10,000 by default) after --warmup untimed ones
// (200). Every reply is checked to be the result of its request (its id,
// "isError":false); anything else stops the program with exit status 1.
//
// PATH defaults to the ctxkit program of the same build (CMake passes it
// as CTXKIT_BENCH_PROGRAM). The store goes to $CTXKIT_BENCH_DIR, $TMPDIR or
// /tmp and is removed at exit.
//
// Single client, single request in flight: the figure is latency, not the
// server's throughput under load. The load average is printed before and
// after: a busy machine makes every number meaningless.

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_inputs.h"

#ifndef CTXKIT_BENCH_PROGRAM
#define CTXKIT_BENCH_PROGRAM "ctxkit"
#endif

namespace {

using ctxkit::bench::EnglishText1K;
using ctxkit::bench::History100;
using ctxkit::bench::JsonString;
using ctxkit::bench::LoadAverage;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "mcp_stdio_roundtrip: %s\n", what.c_str());
  std::exit(1);
}

// ---- The server process -----------------------------------------------------

class Server {
 public:
  Server(const std::string& program, const std::string& db) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
      Die(std::string("pipe: ") + std::strerror(errno));
    }
    pid_ = fork();
    if (pid_ < 0) Die(std::string("fork: ") + std::strerror(errno));
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      execl(program.c_str(), program.c_str(), "mcp", "--db", db.c_str(),
            static_cast<char*>(nullptr));
      std::fprintf(stderr, "mcp_stdio_roundtrip: cannot run %s: %s\n",
                   program.c_str(), std::strerror(errno));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
  }

  ~Server() {
    if (in_ >= 0) close(in_);  // EOF: the server exits cleanly
    if (out_ >= 0) close(out_);
    if (pid_ > 0) {
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }

  void Send(std::string_view line) {
    while (!line.empty()) {
      const ssize_t n = write(in_, line.data(), line.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        Die(std::string("writing to the server: ") + std::strerror(errno));
      }
      line.remove_prefix(static_cast<size_t>(n));
    }
  }

  // The next line the server wrote, without its newline.
  std::string ReadLine() {
    for (;;) {
      const size_t newline = buffer_.find('\n', scanned_);
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        scanned_ = 0;
        return line;
      }
      scanned_ = buffer_.size();
      char chunk[65536];
      const ssize_t n = read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Die("the server closed its output (did it start?)");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // The reply to request `id`, skipping notifications.
  std::string Reply(uint64_t id) {
    const std::string prefix =
        R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + ",";
    for (;;) {
      std::string line = ReadLine();
      if (line.find(R"("method":)") != std::string::npos &&
          line.find(R"("id":)") == std::string::npos) {
        continue;  // a notification (a log message)
      }
      if (line.rfind(prefix, 0) != 0) {
        Die("unexpected reply to request " + std::to_string(id) + ": " +
            line.substr(0, 500));
      }
      return line;
    }
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
  size_t scanned_ = 0;
};

// ---- Measuring --------------------------------------------------------------

struct Figures {
  double p50, p90, p99, max, calls_per_second;
};

double Percentile(const std::vector<double>& sorted, double p) {
  const size_t index = static_cast<size_t>(p * (sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

std::string CallRequest(uint64_t id, const std::string& tool,
                        const std::string& arguments) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + arguments + "}}\n";
}

void CheckReply(const std::string& tool, const std::string& reply) {
  if (reply.find(R"("isError":false)") == std::string::npos ||
      reply.find(R"("error":{)") != std::string::npos) {
    Die(tool + " failed: " + reply.substr(0, 1000));
  }
}

Figures Measure(Server& server, uint64_t& next_id, const std::string& tool,
                const std::string& arguments, int warmup, int calls) {
  auto request = [&](uint64_t id) { return CallRequest(id, tool, arguments); };
  auto check = [&](const std::string& reply) { CheckReply(tool, reply); };
  for (int i = 0; i < warmup; ++i) {
    const uint64_t id = next_id++;
    server.Send(request(id));
    check(server.Reply(id));
  }
  std::vector<double> micros;
  micros.reserve(static_cast<size_t>(calls));
  // Requests are built before the clock starts: the figure is the round
  // trip, not the client's string building.
  std::vector<std::string> requests;
  requests.reserve(static_cast<size_t>(calls));
  for (int i = 0; i < calls; ++i) requests.push_back(request(next_id + i));
  const auto all_start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    const uint64_t id = next_id++;
    const auto start = std::chrono::steady_clock::now();
    server.Send(requests[static_cast<size_t>(i)]);
    const std::string reply = server.Reply(id);
    const auto end = std::chrono::steady_clock::now();
    micros.push_back(
        std::chrono::duration<double, std::micro>(end - start).count());
    if (i % 1000 == 0) check(reply);
  }
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - all_start)
                             .count();
  std::sort(micros.begin(), micros.end());
  return {Percentile(micros, 0.50), Percentile(micros, 0.90),
          Percentile(micros, 0.99), micros.back(), calls / seconds};
}

void Print(const char* name, size_t bytes, const Figures& f) {
  std::printf("%-12s %8zu %9.1f %9.1f %9.1f %9.1f %10.0f\n", name, bytes, f.p50,
              f.p90, f.p99, f.max, f.calls_per_second);
}

}  // namespace

int main(int argc, char** argv) {
  std::string program = CTXKIT_BENCH_PROGRAM;
  int calls = 10000, warmup = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--ctxkit") {
      program = value();
    } else if (arg == "--calls") {
      calls = std::atoi(value().c_str());
    } else if (arg == "--warmup") {
      warmup = std::atoi(value().c_str());
    } else {
      Die("usage: mcp_stdio_roundtrip [--ctxkit PATH] [--calls N] "
          "[--warmup N]");
    }
  }
  if (calls < 1 || warmup < 0) Die("--calls must be >= 1, --warmup >= 0");
  signal(SIGPIPE, SIG_IGN);

  std::string base;
  for (const char* var : {"CTXKIT_BENCH_DIR", "TMPDIR"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') {
      base = v;
      break;
    }
  }
  if (base.empty()) base = "/tmp";
  std::string dir = base + "/ctxkit-mcp-bench-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    Die("mkdtemp " + dir + ": " + std::strerror(errno));
  }
  const std::string db = dir + "/db";

  std::printf("program: %s\nload average at start: %s\n", program.c_str(),
              LoadAverage().c_str());
  std::fflush(stdout);  // before the server's stderr line
  const std::string text = EnglishText1K();
  const std::string history = History100();
  {
    Server server(program, db);
    uint64_t next_id = 1;
    server.Send(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp_stdio_roundtrip","version":"1"}}})"
        "\n");
    const std::string init = server.Reply(0);
    if (init.find(R"("protocolVersion")") == std::string::npos) {
      Die("initialize failed: " + init);
    }
    server.Send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                "\n");

    std::printf(
        "%d calls each (after %d warm-up calls), one in flight; "
        "latency in microseconds\n",
        calls, warmup);
    std::printf("%-12s %8s %9s %9s %9s %9s %10s\n", "input", "bytes", "p50",
                "p90", "p99", "max", "calls/s");
    const Figures t =
        Measure(server, next_id, "count_tokens",
                R"({"input":)" + JsonString(text) + R"(,"model":"gpt-4o"})",
                warmup, calls);
    Print("text1k", text.size(), t);
    const Figures m = Measure(
        server, next_id, "count_tokens",
        R"({"input":)" + history + R"(,"model":"gpt-4o"})", warmup, calls);
    Print("messages100", history.size(), m);

    // The graph: 100 contexts, c0 with 10 outgoing references edges.
    const auto setup = [&](const std::string& tool, const std::string& args) {
      const uint64_t id = next_id++;
      server.Send(CallRequest(id, tool, args));
      CheckReply(tool, server.Reply(id));
    };
    for (int c = 0; c < 100; ++c) {
      setup("add_message", R"({"contextId":"c)" + std::to_string(c) +
                               R"(","message":"context )" + std::to_string(c) +
                               R"( notes","role":"user"})");
    }
    for (int e = 1; e <= 10; ++e) {
      setup("add_relationship",
            R"({"sourceContextId":"c0","targetContextId":"c)" +
                std::to_string(e * 7) +
                R"(","relationshipType":"references"})");
    }
    const std::string related_args =
        R"({"contextId":"c0","relationshipType":"references","direction":"outgoing"})";
    const Figures r = Measure(server, next_id, "get_related_contexts",
                              related_args, warmup, calls);
    Print("related", related_args.size(), r);
    std::printf("target: text1k p50 < 100 us: %s\n",
                t.p50 < 100 ? "MET" : "NOT MET");
    std::printf("target: related p50 <= 100 us: %s\n",
                r.p50 <= 100 ? "MET" : "NOT MET");
  }
  std::printf("load average at end: %s\n", LoadAverage().c_str());
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return 0;
}
