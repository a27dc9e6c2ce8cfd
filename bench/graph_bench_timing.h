// What graph_bench's vector and hybrid parts report beside Google
// Benchmark's mean: latency percentiles as counters, and the calling
// thread's CPU time (under a shared machine's load, wall time includes the
// time the thread waited for a core; CPU time does not).

#ifndef CTXKIT_BENCH_GRAPH_BENCH_TIMING_H_
#define CTXKIT_BENCH_GRAPH_BENCH_TIMING_H_

#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ctxkit::graph_bench {

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

#endif  // CTXKIT_BENCH_GRAPH_BENCH_TIMING_H_
