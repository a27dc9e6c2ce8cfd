// graph_bench, hybrid part (spec context-graph.md 2.5): the public
// ContextGraph::FindSimilar, top 5, over 100k contexts that each have
// messages (so the lexical index is populated) and a 384-dim vector:
//
//   HybridSearchTop5    method hybrid (both rankings, fused by RRF)
//   HybridKeywordTop5   method keyword on the same store and queries
//   HybridVectorTop5    method vector on the same store and queries
//
// so that what the fusion itself costs shows as the difference. Each reports
// p50/p99/max of wall time (p50_us...) and of the thread's CPU time
// (cpu_p50_us...), and `found`, the results per query.
//
// The corpus: 3 messages of 12..24 words per context, drawn with a Zipf
// (s = 1) distribution from 20,000 made-up words (fewer messages than the
// lexical part's 20, so that the store stays cheap to build: 3.6 minutes
// and 835 MB on the shared two-core machine at load 7). Each
// context's vector is the built-in hashed embedder's (MakeHashedEmbedder,
// 384 dims) of its messages' text, stored with SetEmbedding; the same
// embedder, installed with SetEmbedder, embeds the queries, so the vector
// ranking agrees with the words as a host's model would, roughly. Queries
// are 200 fixed texts of 3..8 words from the same distribution.
//
// The store is built once into
// /dev/shm/ctxkit_graph_bench_hybrid_<kCorpusVersion>_<layout>_<contexts>
// (or $CTXKIT_BENCH_DIR/...; graph_bench_shared.h's StoreDir) and reused;
// change kCorpusVersion when the corpus changes (a layout change names a
// new store by itself). $CTXKIT_BENCH_CONTEXTS overrides the 100k
// (its own store).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_inputs.h"
#include "bench/graph_bench_shared.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"

namespace {

using ctxkit::graph_bench::Contexts;
using ctxkit::graph_bench::SetPercentiles;
using ctxkit::graph_bench::ThreadCpuMicros;

constexpr const char* kCorpusVersion = "v1";
constexpr uint32_t kDims = 384;
constexpr size_t kVocabulary = 20'000;
constexpr size_t kMessagesPerContext = 3;

[[noreturn]] void Fail(const char* what, const ctxkit::Status& status) {
  std::fprintf(stderr, "graph_bench: %s: %s\n", what,
               status.ToString().c_str());
  std::exit(1);
}

// Made-up words: distinct, deterministic ("hw" + base-26 letters of the
// rank, scrambled so that spelling says nothing of frequency).
std::vector<std::string> Vocabulary() {
  std::vector<std::string> words;
  words.reserve(kVocabulary);
  for (uint64_t i = 0; i < kVocabulary; ++i) {
    uint64_t x = (i * 7919 + 13) % kVocabulary;
    std::string w = "hw";
    do {
      w.push_back(static_cast<char>('a' + x % 26));
      x /= 26;
    } while (x > 0);
    words.push_back(std::move(w));
  }
  return words;
}

// Zipf(s = 1) ranks over the vocabulary, by inverting its CDF.
class Zipf {
 public:
  Zipf() : cdf_(kVocabulary) {
    double sum = 0;
    for (size_t i = 0; i < kVocabulary; ++i) {
      cdf_[i] = (sum += 1.0 / static_cast<double>(i + 1));
    }
    for (double& c : cdf_) c /= sum;
  }
  size_t Next(ctxkit::bench::SplitMix64& rng) const {
    const double u =
        static_cast<double>(rng.Next() >> 11) * (1.0 / 9007199254740992.0);
    const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
    return std::min<size_t>(kVocabulary - 1, it - cdf_.begin());
  }

 private:
  std::vector<double> cdf_;
};

std::string Text(ctxkit::bench::SplitMix64& rng, const Zipf& zipf,
                 const std::vector<std::string>& words, size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) text.push_back(' ');
    text += words[zipf.Next(rng)];
  }
  return text;
}

struct Bench {
  std::unique_ptr<ctxkit::Store> store;
  std::unique_ptr<ctxkit::ConversationStore> conversations;
  std::unique_ptr<ctxkit::ContextGraph> graph;
  std::vector<std::string> queries;
};

Bench& TheBench() {
  static Bench* bench = [] {
    auto* b = new Bench();
    const std::string dir =
        ctxkit::graph_bench::StoreDir(std::string("hybrid_") + kCorpusVersion);
    const bool exists = std::filesystem::exists(dir + "/complete");
    if (!exists) std::filesystem::remove_all(dir);
    ctxkit::StoreOptions store_options;
    store_options.map_size = uint64_t{2} << 30;
    store_options.sync = ctxkit::StoreSync::kDataOnly;
    auto store = ctxkit::Store::Open(dir, store_options);
    if (!store.ok()) Fail("Store::Open", store.status());
    b->store = *std::move(store);
    auto conversations = ctxkit::ConversationStore::Open(*b->store);
    if (!conversations.ok()) Fail("conversations", conversations.status());
    b->conversations = *std::move(conversations);
    // Nothing automatic: the build stores messages and vectors only, and
    // the queries do not depend on these options.
    ctxkit::ContextGraphOptions options;
    options.auto_summarize = false;
    options.auto_cleanup_contexts = false;
    options.fallback_to_keyword_match = false;  // a bench that falls back lies
    auto embedder = ctxkit::MakeHashedEmbedder(kDims);
    if (!embedder.ok()) Fail("embedder", embedder.status());
    options.embedder = *embedder;
    auto graph = ctxkit::ContextGraph::Open(*b->store, *b->conversations,
                                            std::move(options));
    if (!graph.ok()) Fail("ContextGraph::Open", graph.status());
    b->graph = *std::move(graph);

    const std::vector<std::string> words = Vocabulary();
    const Zipf zipf;
    ctxkit::bench::SplitMix64 query_rng(7);
    for (int i = 0; i < 200; ++i) {
      b->queries.push_back(Text(query_rng, zipf, words, query_rng.Range(3, 8)));
    }
    if (exists) return b;

    std::fprintf(stderr, "graph_bench: storing %llu contexts in %s ...\n",
                 static_cast<unsigned long long>(Contexts()), dir.c_str());
    const auto start = std::chrono::steady_clock::now();
    ctxkit::bench::SplitMix64 rng(15);
    std::vector<float> vector(kDims);
    for (uint64_t c = 0; c < Contexts(); ++c) {
      const std::string id = "ctx-" + std::to_string(c);
      std::vector<ctxkit::GraphMessage> messages(kMessagesPerContext);
      std::string all;
      for (size_t m = 0; m < kMessagesPerContext; ++m) {
        messages[m].role = m % 2 ? ctxkit::MessageRole::kAssistant
                                 : ctxkit::MessageRole::kUser;
        messages[m].content = Text(rng, zipf, words, rng.Range(12, 24));
        all += messages[m].content;
        all.push_back('\n');
      }
      auto added = b->graph->AddMessages(id, messages);
      if (!added.ok()) Fail("AddMessages", added.status());
      const std::string_view texts[] = {all};
      const ctxkit::Status embedded = (*embedder)->Embed(texts, vector);
      if (!embedded.ok()) Fail("Embed", embedded);
      const ctxkit::Status set = b->graph->SetEmbedding(id, vector);
      if (!set.ok()) Fail("SetEmbedding", set);
    }
    std::fprintf(
        stderr, "graph_bench: built %s in %.1f s\n", dir.c_str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    std::FILE* f = std::fopen((dir + "/complete").c_str(), "w");
    if (f != nullptr) std::fclose(f);
    return b;
  }();
  return *bench;
}

// One FindSimilar top 5 per iteration with `method`, cycling over the
// queries; the first query is run once before timing, so that the vector
// scan copy is loaded (Open's cost, measured by VectorLoad) outside it.
void RunSimilar(benchmark::State& state, ctxkit::SimilarityMethod method,
                const char* name) {
  Bench& b = TheBench();
  ctxkit::SimilarOptions options;
  options.limit = 5;
  options.method = method;
  {
    auto warm = b.graph->FindSimilar(b.queries[0], options);
    if (!warm.ok()) Fail("FindSimilar", warm.status());
    if (warm->method != name) {
      std::fprintf(stderr, "graph_bench: FindSimilar ran %s, not %s\n",
                   warm->method.c_str(), name);
      std::exit(1);
    }
  }
  std::vector<double> us, cpu;
  size_t i = 0, found = 0;
  for (auto _ : state) {
    const std::string& q = b.queries[i++ % b.queries.size()];
    const double cpu0 = ThreadCpuMicros();
    const auto start = std::chrono::steady_clock::now();
    auto similar = b.graph->FindSimilar(q, options);
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    cpu.push_back(ThreadCpuMicros() - cpu0);
    if (!similar.ok()) Fail("FindSimilar", similar.status());
    found += similar->contexts.size();
  }
  SetPercentiles(state, std::move(cpu), "cpu_");
  SetPercentiles(state, std::move(us));
  state.counters["found"] =
      static_cast<double>(found) /
      static_cast<double>(std::max<int64_t>(1, state.iterations()));
}

void BM_HybridSearchTop5(benchmark::State& state) {
  RunSimilar(state, ctxkit::SimilarityMethod::kHybrid, "hybrid");
}
void BM_HybridKeywordTop5(benchmark::State& state) {
  RunSimilar(state, ctxkit::SimilarityMethod::kKeyword, "keyword");
}
void BM_HybridVectorTop5(benchmark::State& state) {
  RunSimilar(state, ctxkit::SimilarityMethod::kVector, "vector");
}
BENCHMARK(BM_HybridSearchTop5)->Iterations(400)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HybridKeywordTop5)->Iterations(400)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HybridVectorTop5)->Iterations(400)->Unit(benchmark::kMicrosecond);

}  // namespace
