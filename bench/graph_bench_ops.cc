// graph_bench, write side (spec context-graph.md 2.5): batched AddMessages
// with exact token counting, and Summarize of a 1,000-message context.
//
//   AddMessages/batch100/auto     100 messages per call to one of 100
//                                 contexts, the default options (automatic
//                                 summaries every 10 messages, auto-links,
//                                 cleanups every 10): items/s = messages/s
//   AddMessages/batch100/manual   the same with nothing automatic
//   Summarize/1000_messages       Summarize(force) of a context of 1,000
//                                 messages (it reads the newest 200)
//
// Stores go to $CTXKIT_BENCH_DIR, else /dev/shm, synced as the defaults say
// (tmpfs makes the fsync free: the figure is ctxkit's cost, not the
// disk's). Messages are made-up English-like sentences from a fixed seed.

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"

namespace {

[[noreturn]] void Fail(const std::string& what, const ctxkit::Status& status) {
  std::fprintf(stderr, "graph_bench: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  std::exit(1);
}

// A fresh store in its own directory, removed when this goes.
class FreshGraph {
 public:
  explicit FreshGraph(ctxkit::ContextGraphOptions options) {
    const char* base = getenv("CTXKIT_BENCH_DIR");
    std::string dir =
        std::string(base != nullptr && *base != '\0' ? base : "/dev/shm") +
        "/ctxkit-graph-ops-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) {
      std::perror("graph_bench: mkdtemp");
      std::exit(1);
    }
    dir_ = dir;
    auto store = ctxkit::Store::Open(dir_ + "/db");
    if (!store.ok()) Fail("open", store.status());
    store_ = *std::move(store);
    auto convs = ctxkit::ConversationStore::Open(*store_);
    if (!convs.ok()) Fail("conversations", convs.status());
    convs_ = *std::move(convs);
    auto graph = ctxkit::ContextGraph::Open(*store_, *convs_, options);
    if (!graph.ok()) Fail("graph", graph.status());
    graph_ = *std::move(graph);
  }
  ~FreshGraph() {
    graph_.reset();
    convs_.reset();
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ctxkit::ContextGraph& graph() { return *graph_; }

 private:
  std::string dir_;
  std::unique_ptr<ctxkit::Store> store_;
  std::unique_ptr<ctxkit::ConversationStore> convs_;
  std::unique_ptr<ctxkit::ContextGraph> graph_;
};

// Sentences of 8..30 words from a small vocabulary, with some code and
// errors, as agents' messages have.
std::vector<ctxkit::GraphMessage> Messages(size_t n, uint64_t seed) {
  static const char* const kWords[] = {
      "the",   "login",   "token",  "refresh", "fails",   "when",
      "cache", "is",      "cold",   "we",      "should",  "retry",
      "with",  "backoff", "error:", "timeout", "in",      "auth.ts",
      "fixed", "by",      "moving", "session", "store",   "to",
      "redis", "decided", "keep",   "tests",   "passing", "deploy"};
  std::mt19937_64 rng(seed);
  std::vector<ctxkit::GraphMessage> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].role =
        i % 2 ? ctxkit::MessageRole::kAssistant : ctxkit::MessageRole::kUser;
    for (uint64_t w = 0, words = 8 + rng() % 23; w < words; ++w) {
      out[i].content += kWords[rng() % std::size(kWords)];
      out[i].content += ' ';
    }
    if (rng() % 10 == 0) out[i].content += "\n```ts\nretry(login)\n```\n";
    if (rng() % 8 == 0) out[i].importance = "high";
  }
  return out;
}

void BM_AddMessages(benchmark::State& state) {
  ctxkit::ContextGraphOptions options;
  if (state.range(0) == 0) {
    options.auto_summarize = false;
    options.auto_cleanup_contexts = false;
  }
  FreshGraph fresh(options);
  const std::vector<ctxkit::GraphMessage> batch = Messages(100, 1);
  uint64_t i = 0;
  for (auto _ : state) {
    auto added =
        fresh.graph().AddMessages("ctx-" + std::to_string(i++ % 100), batch);
    if (!added.ok()) Fail("add", added.status());
    benchmark::DoNotOptimize(added->messages.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 100);
}
BENCHMARK(BM_AddMessages)
    ->Name("AddMessages/batch100/auto")
    ->Arg(1)
    ->Iterations(300)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AddMessages)
    ->Name("AddMessages/batch100/manual")
    ->Arg(0)
    ->Iterations(300)
    ->Unit(benchmark::kMillisecond);

void BM_Summarize(benchmark::State& state) {
  ctxkit::ContextGraphOptions options;
  options.auto_summarize = false;
  options.auto_cleanup_contexts = false;
  FreshGraph fresh(options);
  const std::vector<ctxkit::GraphMessage> all = Messages(1000, 2);
  for (size_t start = 0; start < all.size(); start += 100) {
    std::vector<ctxkit::GraphMessage> part(all.begin() + start,
                                           all.begin() + start + 100);
    auto added = fresh.graph().AddMessages("big", part);
    if (!added.ok()) Fail("add", added.status());
  }
  for (auto _ : state) {
    auto summary = fresh.graph().Summarize("big", {.force = true});
    if (!summary.ok()) Fail("summarize", summary.status());
    benchmark::DoNotOptimize(summary->summary.data());
  }
}
BENCHMARK(BM_Summarize)
    ->Name("Summarize/1000_messages")
    ->Iterations(100)
    ->Unit(benchmark::kMillisecond);

}  // namespace
