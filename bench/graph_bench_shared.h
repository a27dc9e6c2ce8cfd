// What graph_bench's parts share: the number of contexts and where each
// part's store lives (paths: the layout tag), and what they report beside
// Google Benchmark's mean: latency percentiles as counters, and the calling
// thread's CPU time (under a shared machine's load, wall time includes the
// time the thread waited for a core; CPU time does not).

#ifndef CTXKIT_BENCH_GRAPH_BENCH_SHARED_H_
#define CTXKIT_BENCH_GRAPH_BENCH_SHARED_H_

#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "ctxkit/store.h"
#include "lib/graph/graph_records.h"

namespace ctxkit::graph_bench {

// The contexts each part's store holds: 100k, or $CTXKIT_BENCH_CONTEXTS for
// a quick run (which gets its own store, see StoreDir).
inline uint64_t Contexts() {
  static const uint64_t n = [] {
    const char* v = std::getenv("CTXKIT_BENCH_CONTEXTS");
    const uint64_t parsed = v != nullptr ? std::strtoull(v, nullptr, 10) : 0;
    return parsed > 0 ? parsed : uint64_t{100'000};
  }();
  return n;
}

// "s<store format>g<graph format>": names the layout a store is written in,
// so that a build with another layout builds its own store instead of
// timing one that an older build wrote (and Open upgraded or reads through
// a compatibility path).
inline std::string LayoutTag() {
  return "s" + std::to_string(Store::kFormatVersion) + "g" +
         std::to_string(internal::kGraphFormatVersion);
}

// $CTXKIT_BENCH_DIR (else /dev/shm) + "/ctxkit_graph_bench_<name>_<layout>_
// <n>": the directory a part builds its store in once and reuses; `name`
// carries the part and its corpus version, so a changed corpus gets a new
// store, and LayoutTag() a changed layout.
inline std::string StoreDir(const std::string& name) {
  const char* base = std::getenv("CTXKIT_BENCH_DIR");
  return std::string(base && *base ? base : "/dev/shm") +
         "/ctxkit_graph_bench_" + name + "_" + LayoutTag() + "_" +
         std::to_string(Contexts());
}

// The calling thread's CPU time, in microseconds.
inline double ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 +
         static_cast<double>(ts.tv_nsec) / 1e3;
}

// Sets <prefix>p50_us, p99_us and max_us from the samples `us`.
inline void SetPercentiles(benchmark::State& state, std::vector<double> us,
                           const std::string& prefix = "") {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  auto at = [&](double p) {
    return us[std::min(us.size() - 1, static_cast<size_t>(
                                          p * static_cast<double>(us.size())))];
  };
  state.counters[prefix + "p50_us"] = at(0.50);
  state.counters[prefix + "p99_us"] = at(0.99);
  state.counters[prefix + "max_us"] = us.back();
}

}  // namespace ctxkit::graph_bench

#endif  // CTXKIT_BENCH_GRAPH_BENCH_SHARED_H_
