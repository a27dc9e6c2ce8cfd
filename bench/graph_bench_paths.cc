// ContextGraph's Related and FindPath at the size of the spec's targets
// (context-graph.md §2.5): 100k contexts, about 1M edges (mean out-degree
// 10), single thread.
//
//   build/rel/bench/graph_bench --benchmark_filter='Related|Path'
//
// The graph is built once (seeded: the same graph on every machine) in
// $CTXKIT_GRAPH_BENCH_DIR, else /dev/shm/ctxkit-graph-bench-<layout> (the
// store and graph formats, graph_bench::LayoutTag()), and reused by later
// runs of a build with the same layout. It has no parent or child edges.
// Building it takes about 35 s (325 MB); a store left incomplete by an
// interrupted build is rebuilt. Every run checks the store with Verify
// first (a few seconds), so that a damaged store cannot pass for a fast one.
//
// Every benchmark times each call itself and reports, besides Google
// Benchmark's mean, the counters p50_us, p99_us and max_us of the calls'
// wall time (the targets are p99s), cpu_p50_us and cpu_p99_us of their
// thread CPU time (which a busy machine's waits for a core do not inflate)
// and `found` (the share of calls that returned a non-empty answer, so that
// a broken search cannot look fast):
//   Related/out_type, Related/in_type   one type, one direction
//   Related/both_all                    every type, both directions
//   Path/unweighted, Path/weighted      random pairs, max_hops 6, "both"
//   Cleanup/dry_run_100k                cleanup's keep-set over every
//                                       context (dry run: no change)
// $CTXKIT_GRAPH_BENCH_WEIGHTED_ITERS sets the weighted path's call count
// (default 300).

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/graph_bench_shared.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"

namespace {

constexpr int kContexts = 100000;
constexpr int kOutDegree = 10;
constexpr uint64_t kSeed = 20241127;
// The edges' types: parent and child edges also build the hierarchy (one
// parent each, no cycles, bounded depth), which a random graph would break,
// so the 1M random edges use the other three.
constexpr const char* kTypes[] = {"similar", "continues", "references"};

[[noreturn]] void Fail(const std::string& what, const ctxkit::Status& status) {
  std::fprintf(stderr, "graph_bench: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  std::exit(1);
}

std::string ContextName(int i) {
  char name[32];
  std::snprintf(name, sizeof name, "ctx-%06d", i);
  return name;
}

// The graph's clock: fixed, so the built graph is the same on every run;
// Cleanup moves it 30 days past the contexts' last activity.
std::atomic<int64_t> g_now{1700000000000};

std::string BenchDir() {
  const char* v = getenv("CTXKIT_GRAPH_BENCH_DIR");
  if (v != nullptr && *v != '\0') return v;
  return "/dev/shm/ctxkit-graph-bench-" + ctxkit::graph_bench::LayoutTag();
}

class Graph {
 public:
  static Graph& Get() {
    static Graph* graph = new Graph();
    return *graph;
  }
  ctxkit::ContextGraph& graph() { return *graph_; }
  uint64_t edges() const { return edges_; }

 private:
  Graph() {
    const std::string dir = BenchDir();
    const std::string done = dir + "/complete";
    const bool reuse = std::filesystem::exists(done);
    if (!reuse) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
    ctxkit::StoreOptions options;
    options.map_size = uint64_t{4} << 30;
    // Building commits 100k contexts one by one; the queries never commit.
    options.sync = ctxkit::StoreSync::kDataOnly;
    auto store = ctxkit::Store::Open(dir, options);
    if (!store.ok()) Fail("open " + dir, store.status());
    store_ = *std::move(store);
    auto convs = ctxkit::ConversationStore::Open(*store_);
    if (!convs.ok()) Fail("conversations", convs.status());
    convs_ = *std::move(convs);
    ctxkit::ContextGraphOptions graph_options;
    graph_options.clock = [] { return g_now.load(); };
    auto graph = ctxkit::ContextGraph::Open(*store_, *convs_, graph_options);
    if (!graph.ok()) Fail("graph", graph.status());
    graph_ = *std::move(graph);
    if (!reuse) {
      Build();
      std::ofstream(done) << "built\n";
    }
    auto verify = graph_->Verify();
    if (!verify.ok()) Fail("verify", verify.status());
    if (!verify->ok) {
      std::fprintf(stderr, "graph_bench: the stored graph fails Verify: %s\n",
                   verify->problems.front().c_str());
      std::exit(1);
    }
    edges_ = verify->edges;
  }

  void Build() {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kContexts; ++i) {
      ctxkit::GraphMessage message;
      message.content = "notes of " + ContextName(i);
      auto added = graph_->AddMessage(ContextName(i), message);
      if (!added.ok()) Fail("add context", added.status());
    }
    std::mt19937_64 rng(kSeed);
    std::vector<ctxkit::NewRelationship> batch;
    for (int s = 0; s < kContexts; ++s) {
      for (int k = 0; k < kOutDegree; ++k) {
        int t = static_cast<int>(rng() % (kContexts - 1));
        if (t >= s) ++t;  // no self-loops
        ctxkit::NewRelationship edge;
        edge.source = ContextName(s);
        edge.target = ContextName(t);
        edge.type = kTypes[rng() % std::size(kTypes)];
        // (0, 1]: no impassable edges, few ties.
        edge.weight = 1.0 - static_cast<double>(rng() % 1000000) / 1000000.0;
        batch.push_back(std::move(edge));
      }
      if (batch.size() >= 10000 || s + 1 == kContexts) {
        auto added = graph_->AddRelationships(batch);
        if (!added.ok()) Fail("add edges", added.status());
        batch.clear();
      }
    }
    std::fprintf(
        stderr, "graph_bench: built the graph in %.1f s\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }

  std::unique_ptr<ctxkit::Store> store_;
  std::unique_ptr<ctxkit::ConversationStore> convs_;
  std::unique_ptr<ctxkit::ContextGraph> graph_;
  uint64_t edges_ = 0;
};

// Times each call of `call` (which returns whether it found something) and
// reports the percentiles of its wall time and of the thread's CPU time
// (the first counts a wait for a core on a loaded machine, the second not).
template <typename Call>
void Timed(benchmark::State& state, Call&& call) {
  std::vector<double> micros;
  std::vector<double> cpu;
  micros.reserve(static_cast<size_t>(state.max_iterations));
  cpu.reserve(static_cast<size_t>(state.max_iterations));
  int64_t found = 0;
  uint64_t i = 0;
  for (auto _ : state) {
    const double cpu0 = ctxkit::graph_bench::ThreadCpuMicros();
    const auto start = std::chrono::steady_clock::now();
    const bool hit = call(i++);
    const auto stop = std::chrono::steady_clock::now();
    cpu.push_back(ctxkit::graph_bench::ThreadCpuMicros() - cpu0);
    micros.push_back(
        std::chrono::duration<double, std::micro>(stop - start).count());
    found += hit ? 1 : 0;
  }
  state.counters["found"] =
      static_cast<double>(found) / static_cast<double>(micros.size());
  ctxkit::graph_bench::SetPercentiles(state, std::move(cpu), "cpu_");
  ctxkit::graph_bench::SetPercentiles(state, std::move(micros));
  state.counters["edges"] = static_cast<double>(Graph::Get().edges());
}

// Random contexts, the same on every run.
std::vector<std::string> Picks(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> ids;
  for (size_t i = 0; i < n; ++i) {
    ids.push_back(ContextName(static_cast<int>(rng() % kContexts)));
  }
  return ids;
}

void BM_Related(benchmark::State& state) {
  ctxkit::ContextGraph& graph = Graph::Get().graph();
  const std::vector<std::string> ids = Picks(4096, 1);
  const int mode = static_cast<int>(state.range(0));
  Timed(state, [&](uint64_t i) {
    ctxkit::RelatedOptions options;
    if (mode == 2) {
      options.direction = ctxkit::EdgeDirection::kBoth;
    } else {
      options.type = kTypes[i % std::size(kTypes)];
      options.direction = mode == 0 ? ctxkit::EdgeDirection::kOutgoing
                                    : ctxkit::EdgeDirection::kIncoming;
    }
    auto related = graph.Related(ids[i % ids.size()], options);
    if (!related.ok()) Fail("related", related.status());
    benchmark::DoNotOptimize(related->context_ids.data());
    return !related->context_ids.empty();
  });
}
BENCHMARK(BM_Related)
    ->Name("Related/out_type")
    ->Arg(0)
    ->Iterations(20000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Related)
    ->Name("Related/in_type")
    ->Arg(1)
    ->Iterations(20000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Related)
    ->Name("Related/both_all")
    ->Arg(2)
    ->Iterations(20000)
    ->Unit(benchmark::kMicrosecond);

void BM_Path(benchmark::State& state) {
  ctxkit::ContextGraph& graph = Graph::Get().graph();
  const std::vector<std::string> from = Picks(4096, 2);
  const std::vector<std::string> to = Picks(4096, 3);
  const bool weighted = state.range(0) != 0;
  Timed(state, [&](uint64_t i) {
    ctxkit::PathOptions options;
    options.max_hops = 6;
    options.weighted = weighted;
    auto path =
        graph.FindPath(from[i % from.size()], to[i % to.size()], options);
    if (!path.ok()) Fail("path", path.status());
    return path->found;
  });
}

int WeightedIterations() {
  const char* v = getenv("CTXKIT_GRAPH_BENCH_WEIGHTED_ITERS");
  return v != nullptr && atoi(v) > 0 ? atoi(v) : 300;
}

BENCHMARK(BM_Path)
    ->Name("Path/unweighted")
    ->Arg(0)
    ->Iterations(3000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Path)
    ->Name("Path/weighted")
    ->Arg(1)
    ->Iterations(WeightedIterations())
    ->Unit(benchmark::kMicrosecond);

// Cleanup from one context over the 100k contexts, as a dry run (the store
// is shared by every run and must not change): the pass over the contexts,
// the keep-set (its similar, related and hierarchy contexts) and the answer
// listing every context that would go. found = a run chose some.
void BM_Cleanup(benchmark::State& state) {
  ctxkit::ContextGraph& graph = Graph::Get().graph();
  const std::vector<std::string> from = Picks(64, 4);
  // A context's activity is its last message's time, which the
  // conversations' (wall) clock gave when the graph was built.
  g_now = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count() +
          int64_t{30} * 24 * 3600 * 1000;
  size_t chosen = 0;  // contexts the last call would archive
  Timed(state, [&](uint64_t i) {
    ctxkit::CleanupOptions options;
    options.dry_run = true;
    options.keep_recent_days = 0;
    auto cleaned = graph.Cleanup(from[i % from.size()], options);
    if (!cleaned.ok()) Fail("cleanup", cleaned.status());
    chosen = cleaned->cleaned_contexts.size();
    return chosen > 0;
  });
  state.counters["chosen"] = static_cast<double>(chosen);
}
BENCHMARK(BM_Cleanup)
    ->Name("Cleanup/dry_run_100k")
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
