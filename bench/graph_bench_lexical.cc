// graph_bench, lexical part (spec context-graph.md 2.5): SearchContexts
// top-5 over 100k contexts, and the index update of a batch of 100
// messages added to one context.
//
// The corpus is synthetic: a vocabulary of 50,000 made-up words drawn with
// a Zipf (s = 1) distribution, 20 messages of 60 words per context. The
// shared data (a few dozen transcripts) is far too small for 100k contexts.
// Building the index takes minutes, so it is built once into
// /dev/shm/ctxkit_graph_bench_lexical_<kCorpusVersion>_<contexts> (or
// $CTXKIT_BENCH_DIR/...) and reused; change kCorpusVersion when the corpus
// or the index layout changes.
//
// Search latency percentiles (p50_us, p99_us, max_us) are counters, taken
// over a fixed set of 200 queries of 3..12 words drawn from the same
// distribution.

#include <benchmark/benchmark.h>
#include <time.h>

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
#include "lib/graph/lexical.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

using graph_bench::Contexts;
using graph_bench::SetPercentiles;
using graph_bench::ThreadCpuMicros;

constexpr const char* kCorpusVersion = "v2";  // v2: lexical term ids
constexpr size_t kVocabulary = 50'000;
constexpr size_t kMessagesPerContext = 20;
constexpr size_t kWordsPerMessage = 60;

// Made-up words: distinct, 3..10 lower-case letters, deterministic.
std::vector<std::string> MakeVocabulary() {
  std::vector<std::string> words;
  words.reserve(kVocabulary);
  std::mt19937_64 rng(42);
  while (words.size() < kVocabulary) {
    std::string w;
    const size_t len = 3 + rng() % 8;
    for (size_t j = 0; j < len; ++j)
      w.push_back("abcdefghijklmnopqrstuvwxyz"[rng() % 26]);
    words.push_back(std::move(w));
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  while (words.size() < kVocabulary)
    words.push_back("w" + std::to_string(words.size()));
  // Ranks in random order, so frequency is unrelated to spelling.
  std::shuffle(words.begin(), words.end(), rng);
  return words;
}

class Zipf {
 public:
  explicit Zipf(size_t n) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
      cdf_[i] = (sum += 1.0 / static_cast<double>(i + 1));
    for (double& c : cdf_) c /= sum;
  }
  size_t operator()(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::min<size_t>(
        std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin(),
        cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

struct Corpus {
  std::vector<std::string> vocab = MakeVocabulary();
  Zipf zipf{kVocabulary};

  std::string Text(std::mt19937_64& rng, size_t words) const {
    std::string text;
    for (size_t i = 0; i < words; ++i) {
      if (i > 0) text.push_back(i % 12 == 0 ? '.' : ' ');
      if (i % 12 == 0 && i > 0) text.push_back(' ');
      text += vocab[zipf(rng)];
    }
    return text;
  }
};

const Corpus& TheCorpus() {
  static const Corpus* corpus = new Corpus();
  return *corpus;
}

struct Bench {
  std::unique_ptr<Store> store;
  LexicalDbs dbs;
};

void Fail(const absl::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "graph_bench: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

// The 100k-context store, built on first use.
Bench& TheBench() {
  static Bench* bench = [] {
    auto* b = new Bench();
    const std::string dir =
        graph_bench::StoreDir(std::string("lexical_") + kCorpusVersion);
    const bool exists = std::filesystem::exists(dir + "/complete");
    if (!exists) std::filesystem::remove_all(dir);
    StoreOptions options;
    options.map_size = uint64_t{1} << 30;
    options.sync = StoreSync::kDataOnly;
    auto store = Store::Open(dir, options);
    if (!store.ok()) {
      std::fprintf(stderr, "graph_bench: open %s: %s\n", dir.c_str(),
                   store.status().ToString().c_str());
      std::exit(1);
    }
    b->store = std::move(store).value();
    auto dbs = OpenLexicalDbs(*b->store);
    Fail(dbs.status(), "OpenLexicalDbs");
    b->dbs = *dbs;
    if (exists) return b;
    std::fprintf(stderr, "graph_bench: building %llu contexts in %s ...\n",
                 static_cast<unsigned long long>(Contexts()), dir.c_str());
    const auto start = std::chrono::steady_clock::now();
    const Corpus& corpus = TheCorpus();
    std::mt19937_64 rng(7);
    constexpr uint64_t kPerTxn = 500;
    for (uint64_t first = 1; first <= Contexts(); first += kPerTxn) {
      std::vector<TermCounts> docs;
      for (uint64_t seq = first; seq < first + kPerTxn && seq <= Contexts();
           ++seq) {
        TermCounts doc;
        for (size_t m = 0; m < kMessagesPerContext; ++m) {
          AddCounts(&doc, CountTerms(corpus.Text(rng, kWordsPerMessage), 1));
        }
        docs.push_back(std::move(doc));
      }
      Fail(StoreUpdate(*b->store,
                       [&](WriteTransaction& txn) {
                         for (size_t i = 0; i < docs.size(); ++i) {
                           CTXKIT_RETURN_IF_ERROR(AddContextTerms(
                               txn, b->dbs, first + i, docs[i]));
                         }
                         return absl::OkStatus();
                       }),
           "building");
      if ((first / kPerTxn) % 20 == 0) {
        std::fprintf(stderr, "  %llu contexts\n",
                     static_cast<unsigned long long>(first - 1));
      }
    }
    std::FILE* f = std::fopen((dir + "/complete").c_str(), "w");
    if (f != nullptr) std::fclose(f);
    std::fprintf(
        stderr, "graph_bench: built in %.1f s\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    return b;
  }();
  return *bench;
}

std::vector<std::string> Queries() {
  const Corpus& corpus = TheCorpus();
  std::mt19937_64 rng(1234);
  std::vector<std::string> queries;
  for (int i = 0; i < 200; ++i)
    queries.push_back(corpus.Text(rng, 3 + rng() % 10));
  return queries;
}

// One query per iteration, cycling over the fixed set.
void BM_LexicalSearchTop5(benchmark::State& state) {
  Bench& b = TheBench();
  const std::vector<std::string> queries = Queries();
  std::vector<double> us, cpu;
  size_t i = 0;
  uint64_t hits = 0;
  for (auto _ : state) {
    const std::string& q = queries[i++ % queries.size()];
    const double cpu0 = ThreadCpuMicros();
    const auto start = std::chrono::steady_clock::now();
    auto txn = StoreBeginRead(*b.store);
    Fail(txn.status(), "BeginRead");
    auto result = SearchContexts(*txn, b.dbs, q, 5, nullptr);
    Fail(result.status(), "SearchContexts");
    hits += result->size();
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    cpu.push_back(ThreadCpuMicros() - cpu0);
  }
  SetPercentiles(state, std::move(cpu), "cpu_");
  state.counters["hits_per_query"] =
      static_cast<double>(hits) / static_cast<double>(std::max<size_t>(1, i));
  SetPercentiles(state, std::move(us));
}
BENCHMARK(BM_LexicalSearchTop5)
    ->Iterations(2000)
    ->Unit(benchmark::kMicrosecond);

// The same with a filter that rejects every other candidate (as the graph's
// archived/excluded/tag filter would), so 4 x 5 accepted take about 40 calls.
void BM_LexicalSearchTop5Filtered(benchmark::State& state) {
  Bench& b = TheBench();
  const std::vector<std::string> queries = Queries();
  std::vector<double> us, cpu;
  size_t i = 0;
  for (auto _ : state) {
    const std::string& q = queries[i++ % queries.size()];
    const double cpu0 = ThreadCpuMicros();
    const auto start = std::chrono::steady_clock::now();
    auto txn = StoreBeginRead(*b.store);
    Fail(txn.status(), "BeginRead");
    auto result = SearchContexts(*txn, b.dbs, q, 5,
                                 [](uint64_t seq) { return seq % 2 == 0; });
    Fail(result.status(), "SearchContexts");
    benchmark::DoNotOptimize(result->data());
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    cpu.push_back(ThreadCpuMicros() - cpu0);
  }
  SetPercentiles(state, std::move(cpu), "cpu_");
  SetPercentiles(state, std::move(us));
}
BENCHMARK(BM_LexicalSearchTop5Filtered)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);

// The index delta of 100 messages of ~60 words merged into one and added to
// an existing context, in a write transaction that is then aborted (so the
// store stays as built). Timed: AddContextTerms only; the analysis
// (CountTerms + AddCounts of the 100 messages) is reported as analyze_us.
void BM_LexicalAddBatch100(benchmark::State& state) {
  Bench& b = TheBench();
  const Corpus& corpus = TheCorpus();
  std::mt19937_64 rng(99);
  std::vector<double> analyze_us, add_us, add_cpu_us;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<std::string> texts;
    for (int m = 0; m < 100; ++m)
      texts.push_back(corpus.Text(rng, kWordsPerMessage));
    const uint64_t seq = 1 + rng() % Contexts();
    state.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    TermCounts delta;
    for (const std::string& t : texts) AddCounts(&delta, CountTerms(t, 1));
    const auto t1 = std::chrono::steady_clock::now();
    double add = 0, add_cpu = 0;
    const absl::Status s = StoreUpdate(*b.store, [&](WriteTransaction& txn) {
      const double c0 = ThreadCpuMicros();
      const auto a0 = std::chrono::steady_clock::now();
      absl::Status st = AddContextTerms(txn, b.dbs, seq, delta);
      add = std::chrono::duration<double, std::micro>(
                std::chrono::steady_clock::now() - a0)
                .count();
      add_cpu = ThreadCpuMicros() - c0;
      if (!st.ok()) return st;
      return absl::CancelledError("abort on purpose");
    });
    if (!absl::IsCancelled(s)) Fail(s, "AddContextTerms");
    analyze_us.push_back(
        std::chrono::duration<double, std::micro>(t1 - t0).count());
    add_us.push_back(add);
    add_cpu_us.push_back(add_cpu);
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  };
  state.counters["analyze_us"] = mean(analyze_us);
  state.counters["index_us"] = mean(add_us);
  state.counters["index_us_per_msg"] = mean(add_us) / 100;
  state.counters["index_cpu_us_per_msg"] = mean(add_cpu_us) / 100;
  SetPercentiles(state, add_us);
  SetPercentiles(state, add_cpu_us, "cpu_");
}
BENCHMARK(BM_LexicalAddBatch100)
    ->Iterations(300)
    ->Unit(benchmark::kMicrosecond);

// One 60-word message added alone (no batching), for comparison.
void BM_LexicalAddOneMessage(benchmark::State& state) {
  Bench& b = TheBench();
  const Corpus& corpus = TheCorpus();
  std::mt19937_64 rng(98);
  std::vector<double> add_us, add_cpu_us;
  for (auto _ : state) {
    state.PauseTiming();
    const TermCounts delta = CountTerms(corpus.Text(rng, kWordsPerMessage), 1);
    const uint64_t seq = 1 + rng() % Contexts();
    state.ResumeTiming();
    double add = 0, add_cpu = 0;
    const absl::Status s = StoreUpdate(*b.store, [&](WriteTransaction& txn) {
      const double c0 = ThreadCpuMicros();
      const auto a0 = std::chrono::steady_clock::now();
      absl::Status st = AddContextTerms(txn, b.dbs, seq, delta);
      add = std::chrono::duration<double, std::micro>(
                std::chrono::steady_clock::now() - a0)
                .count();
      add_cpu = ThreadCpuMicros() - c0;
      if (!st.ok()) return st;
      return absl::CancelledError("abort on purpose");
    });
    if (!absl::IsCancelled(s)) Fail(s, "AddContextTerms");
    add_us.push_back(add);
    add_cpu_us.push_back(add_cpu);
  }
  SetPercentiles(state, add_us);
  SetPercentiles(state, add_cpu_us, "cpu_");
}
BENCHMARK(BM_LexicalAddOneMessage)
    ->Iterations(2000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ctxkit::internal
