// CG-17's concurrency: eight threads of this process and a second process
// (graph_peer, the kill test's writer) work on one store at once, reading
// and writing the same contexts. Every call either succeeds or fails with
// one of the refusals the mix provokes on purpose (a second parent, a
// cycle, a context another thread deleted); afterwards Verify() and
// CheckStore() find nothing wrong. Under ThreadSanitizer this is the
// graph's race check.

#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "ctxkit/store_check.h"
#include "tests/unit/peer_process.h"
#include "tests/unit/test_util.h"

namespace ctxkit::testing {
namespace {

constexpr int kThreads = 8;
constexpr int kOpsPerThread = 120;

bool Refusal(const Status& s) {
  return s.code() == StatusCode::kAlreadyExists ||
         s.code() == StatusCode::kFailedPrecondition ||
         s.code() == StatusCode::kNotFound;
}

// One thread's mix; the contexts c0..c23 are the peer's too. Returns the
// first unexpected error, or "" when there was none.
std::string Work(ContextGraph& graph, uint64_t seed,
                 std::atomic<uint64_t>& done) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](uint64_t n) { return rng() % n; };
  const auto context = [&] { return "c" + std::to_string(pick(24)); };
  static const char* const kWords[] = {"oauth", "token", "login",  "cache",
                                       "index", "query", "deploy", "error",
                                       "graph", "path",  "store",  "merge"};
  static const char* const kTypes[] = {"similar", "continues", "references",
                                       "parent", "child"};
  const auto check = [](const Status& s) -> std::string {
    return s.ok() || Refusal(s) ? "" : s.ToString();
  };
  for (int i = 0; i < kOpsPerThread; ++i) {
    const uint64_t op = pick(100);
    std::string error;
    if (op < 35) {
      GraphMessage m;
      m.role = pick(2) ? MessageRole::kUser : MessageRole::kAssistant;
      for (uint64_t w = 0, n = 2 + pick(8); w < n; ++w) {
        m.content += kWords[pick(std::size(kWords))];
        m.content += ' ';
      }
      m.importance = pick(4) == 0 ? "HIGH" : "medium";
      error = check(graph.AddMessage(context(), m).status());
    } else if (op < 50) {
      const std::string s = context(), t = context();
      if (s == t) continue;
      error = check(
          graph
              .AddRelationship({.source = s,
                                .target = t,
                                .type = kTypes[pick(std::size(kTypes))],
                                .weight = static_cast<double>(pick(101)) / 100})
              .status());
    } else if (op < 60) {
      error = check(graph.Related(context()).status());
    } else if (op < 68) {
      error =
          check(graph.FindPath(context(), context(), {.weighted = pick(2) == 0})
                    .status());
    } else if (op < 76) {
      error =
          check(graph.FindSimilar(kWords[pick(std::size(kWords))]).status());
    } else if (op < 84) {
      error = check(graph.Retrieve(context(), {.limit = 5}).status());
    } else if (op < 89) {
      error = check(graph.Summarize(context(), {.force = true}).status());
    } else if (op < 92) {
      error = check(graph.Visualize(context(), {.depth = 2}).status());
    } else if (op < 94) {
      error = check(graph.ListContexts(20).status());
    } else if (op < 96) {
      error = check(
          graph.Cleanup(context(), {.min_contexts = 4, .keep_recent_days = 0})
              .status());
    } else if (op < 98) {
      error = check(graph.Restore(context()));
    } else {
      error = check(graph.DeleteContext(context()));
    }
    if (!error.empty()) return error;
    done.fetch_add(1);
  }
  return "";
}

TEST_CASE("8 threads and a second process share the graph") {
  TempDir dir;
  const std::string path = dir.Sub("store");
  auto store = Must(Store::Open(path));
  auto convs = Must(ConversationStore::Open(*store));
  ContextGraphOptions options;
  options.message_limit_threshold = 4;
  options.cleanup_every = 7;
  options.similarity_threshold = 0.3;
  auto graph = Must(ContextGraph::Open(*store, *convs, options));

  PeerProcess peer = StartProcess(CTXKIT_GRAPH_PEER, {path, "8080"});
  bool eof = false;
  bool ready = false;
  uint64_t peer_writes = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready && !eof && std::chrono::steady_clock::now() < deadline) {
    for (const std::string& line : ReadLines(peer, 10, &eof)) {
      ready = ready || line == "ready";
    }
  }
  REQUIRE_MESSAGE(ready, "graph_peer never became ready");

  std::atomic<uint64_t> done{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&graph, &done, &errors, t] {
      errors[t] = Work(*graph, 1000 + t, done);
    });
  }
  // Keep the peer's pipe drained while the threads run, so it never blocks
  // on a full pipe (and keeps writing concurrently).
  std::atomic<bool> finished{false};
  std::thread joiner([&] {
    for (std::thread& th : threads) th.join();
    finished = true;
  });
  while (!finished && !eof) {
    for (const std::string& line : ReadLines(peer, 20, &eof)) {
      REQUIRE_MESSAGE(line.rfind("ERR", 0) != 0, "graph_peer: ", line);
      ++peer_writes;
    }
  }
  joiner.join();
  REQUIRE_MESSAGE(!eof, "graph_peer exited by itself");
  kill(peer.pid, SIGKILL);
  for (const std::string& line : ReadToEnd(peer)) {
    REQUIRE_MESSAGE(line.rfind("ERR", 0) != 0, "graph_peer: ", line);
    ++peer_writes;
  }
  WaitPeer(peer);

  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK_MESSAGE(errors[t].empty(), errors[t]);
  }
  MESSAGE("calls done by the threads: ", done.load(),
          "; writes the peer acknowledged meanwhile: ", peer_writes);
  CHECK(done.load() > kThreads * kOpsPerThread / 2);
  CHECK(peer_writes > 0);

  GraphVerifyReport report = Must(graph->Verify());
  std::string problems;
  for (const std::string& p : report.problems) problems += p + "; ";
  CHECK_MESSAGE(report.ok, problems);
  CHECK(CheckStore(*store).ok());
}

}  // namespace
}  // namespace ctxkit::testing
