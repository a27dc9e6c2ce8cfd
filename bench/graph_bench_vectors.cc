// graph_bench, vector part (spec context-graph.md 2.5): the exact int8 scan
// with float rescoring, top-5 over 100k vectors of 384 dims, its recall@5
// against exact float32 search, and the time to build the scan copy from
// the store (what ContextGraph::Open pays).
//
// The vectors are random (standard normal components): the hardest case
// for a quantized scan, since the cosines of the best matches are close
// together. Queries are 100 further random vectors. The store is built once
// into /dev/shm/ctxkit_graph_bench_vectors_<kVersion>_<layout>_<contexts>_
// <dims> (or $CTXKIT_BENCH_DIR/...; graph_bench_shared.h's StoreDir) and
// reused; $CTXKIT_BENCH_CONTEXTS overrides the 100k.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/graph_bench_shared.h"
#include "ctxkit/store.h"
#include "lib/graph/vectors.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

using graph_bench::Contexts;

constexpr const char* kVersion = "v1";
constexpr uint32_t kDims = 384;

void Fail(const absl::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "graph_bench: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

std::vector<float> RandomVector(std::mt19937_64& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(kDims);
  for (float& x : v) x = normal(rng);
  return v;
}

struct Bench {
  std::unique_ptr<Store> store;
  VectorDbs dbs;
  std::vector<std::vector<float>> vectors;  // seq - 1
};

Bench& TheBench() {
  static Bench* bench = [] {
    auto* b = new Bench();
    const std::string dir =
        graph_bench::StoreDir(std::string("vectors_") + kVersion) + "_" +
        std::to_string(kDims);
    const bool exists = std::filesystem::exists(dir + "/complete");
    if (!exists) std::filesystem::remove_all(dir);
    StoreOptions options;
    options.map_size = uint64_t{1} << 30;
    options.sync = StoreSync::kDataOnly;
    auto store = Store::Open(dir, options);
    Fail(ToAbsl(store.status()), "Store::Open");
    b->store = std::move(store).value();
    auto dbs = OpenVectorDbs(*b->store);
    Fail(dbs.status(), "OpenVectorDbs");
    b->dbs = *dbs;
    std::mt19937_64 rng(384);
    for (uint64_t i = 0; i < Contexts(); ++i) {
      b->vectors.push_back(RandomVector(rng));
    }
    if (exists) return b;
    std::fprintf(stderr, "graph_bench: storing %llu vectors in %s ...\n",
                 static_cast<unsigned long long>(Contexts()), dir.c_str());
    constexpr uint64_t kPerTxn = 2000;
    for (uint64_t first = 0; first < Contexts(); first += kPerTxn) {
      Fail(StoreUpdate(*b->store,
                       [&](WriteTransaction& txn) {
                         for (uint64_t i = first;
                              i < std::min(Contexts(), first + kPerTxn); ++i) {
                           CTXKIT_RETURN_IF_ERROR(PutVector(
                               txn, b->dbs, i + 1, b->vectors[i], "bench"));
                         }
                         return absl::OkStatus();
                       }),
           "PutVector");
    }
    std::FILE* f = std::fopen((dir + "/complete").c_str(), "w");
    if (f != nullptr) std::fclose(f);
    return b;
  }();
  return *bench;
}

std::vector<std::vector<float>> Queries() {
  std::mt19937_64 rng(5);
  std::vector<std::vector<float>> q;
  for (int i = 0; i < 100; ++i) q.push_back(RandomVector(rng));
  return q;
}

// The exact float top 5 (seqs), by the same cosine the rescoring uses.
std::vector<uint64_t> ExactTop5(const Bench& b, const std::vector<float>& q) {
  std::vector<std::pair<double, uint64_t>> all;
  all.reserve(b.vectors.size());
  for (size_t i = 0; i < b.vectors.size(); ++i) {
    all.push_back({Cosine(q, b.vectors[i]), i + 1});
  }
  std::partial_sort(all.begin(), all.begin() + 5, all.end(),
                    [](const auto& x, const auto& y) {
                      if (x.first != y.first) return x.first > y.first;
                      return x.second < y.second;
                    });
  std::vector<uint64_t> top;
  for (int i = 0; i < 5; ++i) top.push_back(all[i].second);
  return top;
}

using graph_bench::SetPercentiles;
using graph_bench::ThreadCpuMicros;

// Building the scan copy from the store, as Open does.
void BM_VectorLoad(benchmark::State& state) {
  Bench& b = TheBench();
  std::vector<double> us;
  for (auto _ : state) {
    VectorIndex index;
    const auto start = std::chrono::steady_clock::now();
    auto txn = StoreBeginRead(*b.store);
    Fail(txn.status(), "BeginRead");
    auto n = index.Size(*txn, b.dbs);
    Fail(n.status(), "Size");
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    state.counters["vectors"] = static_cast<double>(*n);
  }
  SetPercentiles(state, std::move(us));
}
BENCHMARK(BM_VectorLoad)->Iterations(5)->Unit(benchmark::kMillisecond);

// One top-5 query per iteration, cycling over the fixed set; recall@5 is
// counted over the set against ExactTop5.
void BM_VectorSearchTop5(benchmark::State& state) {
  Bench& b = TheBench();
  const std::vector<std::vector<float>> queries = Queries();
  std::vector<std::vector<uint64_t>> exact;
  for (const auto& q : queries) exact.push_back(ExactTop5(b, q));
  VectorIndex index;
  {
    auto txn = StoreBeginRead(*b.store);
    Fail(txn.status(), "BeginRead");
    Fail(index.Size(*txn, b.dbs).status(), "Size");
  }
  std::vector<double> us, cpu;
  size_t i = 0, found = 0, asked = 0;
  for (auto _ : state) {
    const size_t qi = i++ % queries.size();
    const double cpu0 = ThreadCpuMicros();
    const auto start = std::chrono::steady_clock::now();
    auto txn = StoreBeginRead(*b.store);
    Fail(txn.status(), "BeginRead");
    auto hits = index.Search(*txn, b.dbs, queries[qi], 5,
                             [](uint64_t) { return true; });
    Fail(hits.status(), "Search");
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    cpu.push_back(ThreadCpuMicros() - cpu0);
    if (i <= queries.size()) {
      for (size_t k = 0; k < hits->size() && k < 5; ++k) {
        found += std::find(exact[qi].begin(), exact[qi].end(),
                           (*hits)[k].seq) != exact[qi].end();
      }
      asked += 5;
    }
  }
  SetPercentiles(state, std::move(cpu), "cpu_");
  SetPercentiles(state, std::move(us));
  state.counters["recall_at_5"] =
      static_cast<double>(found) /
      static_cast<double>(std::max<size_t>(1, asked));
}
BENCHMARK(BM_VectorSearchTop5)->Iterations(300)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ctxkit::internal
