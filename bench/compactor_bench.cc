// compactor_bench: the speed of ctxkit::Compactor, single
// thread, exact token counting included.
//
//   compactor_bench [--benchmark_filter=...] [Google Benchmark flags]
//
// Inputs: synthetic agent histories of N messages (N = 1,000, 2,000, 4,000,
// 8,000, 10,000, 16,000), about 150 bytes of JSON per message on average
// (10,000 messages: 1.48 MB OpenAI, 1.62 MB Anthropic): a system prompt and
// a task, then user and assistant turns; a quarter of the assistant turns
// call tools (1-2 calls, each answered by a tool result). The text is
// English-like words from a fixed list drawn by SplitMix64 (fixed seed), so
// every run compacts the same bytes.
//   BM_Compact/format:F/messages:N  Compactor::Compact to 50 % of the
//       history's tokens, strategy smart, model gpt-4o (o200k_base, exact
//       counts); F = 0: OpenAI (tool_calls + tool messages), F = 1:
//       Anthropic (tool_use blocks answered by tool_result blocks).
//   BM_CountOnly/format:F/messages:N  CountMessagesForModel of the same
//       history: the tokenizing share of the above.
// Counters: bytes_per_second, messages, input_bytes, tokens (before),
// compacted (after), budget_met, time_per_message (seconds).
//
// After the table it prints the figures against the compactor's targets
// (1,000 messages < 5 ms, 10,000 messages < 40 ms, linear cost) and the load
// average at the start and the end.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "bench/bench_inputs.h"
#include "ctxkit/compactor.h"
#include "ctxkit/message_count.h"

namespace {

constexpr char kModel[] = "gpt-4o";

using ctxkit::bench::LoadAverage;
using ctxkit::bench::SplitMix64;
using ctxkit::bench::Words;

// A history of exactly `n` messages (n >= 4).
std::string MakeHistory(size_t n, bool anthropic) {
  SplitMix64 rng(0xC0FFEE00 + n * 2 + (anthropic ? 1 : 0));
  std::string out = "[";
  size_t count = 0;
  auto add = [&](const std::string& m) {
    if (count > 0) out += ',';
    out += m;
    ++count;
  };
  auto text = [&](size_t lo, size_t hi) {
    return Words(rng, rng.Range(lo, hi));
  };
  add("{\"role\":\"system\",\"content\":\"You are a coding agent. " +
      text(100, 200) + "\"}");
  add("{\"role\":\"user\",\"content\":\"Task: " + text(100, 200) + "\"}");
  size_t next_id = 0;
  // Alternate assistant / user turns; a tool turn is an assistant message
  // plus its results (OpenAI: one tool message per call; Anthropic: one user
  // message with the tool_result blocks, which is also the user's turn).
  bool assistant_turn = true;
  while (count < n) {
    const size_t left = n - count;
    if (assistant_turn) {
      const size_t calls = rng.Range(1, 2);
      const size_t needed = anthropic ? 2 : 1 + calls;
      if (rng.Percent(25) && left >= needed + 1) {
        std::string ids[2];
        for (size_t c = 0; c < calls; ++c)
          ids[c] = "call_" + std::to_string(next_id++);
        if (anthropic) {
          std::string m =
              "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
              "\"text\":\"" +
              text(30, 80) + "\"}";
          for (size_t c = 0; c < calls; ++c) {
            m += ",{\"type\":\"tool_use\",\"id\":\"" + ids[c] +
                 "\",\"name\":\"bash\",\"input\":{\"command\":\"" +
                 text(10, 40) + "\"}}";
          }
          add(m + "]}");
          std::string r = "{\"role\":\"user\",\"content\":[";
          for (size_t c = 0; c < calls; ++c) {
            if (c > 0) r += ',';
            r += "{\"type\":\"tool_result\",\"tool_use_id\":\"" + ids[c] +
                 "\",\"content\":\"" + text(40, 180) + "\"}";
          }
          add(r + "]}");
          // The results were the user's turn: the assistant speaks next.
          continue;
        }
        std::string m =
            "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[";
        for (size_t c = 0; c < calls; ++c) {
          if (c > 0) m += ',';
          m += "{\"id\":\"" + ids[c] +
               "\",\"type\":\"function\",\"function\":{\"name\":\"bash\","
               "\"arguments\":"
               "\"{\\\"command\\\":\\\"" +
               text(10, 40) + "\\\"}\"}}";
        }
        add(m + "]}");
        for (size_t c = 0; c < calls; ++c) {
          add("{\"role\":\"tool\",\"tool_call_id\":\"" + ids[c] +
              "\",\"content\":\"" + text(50, 190) + "\"}");
        }
        continue;  // the assistant reads the results and speaks again
      }
      add("{\"role\":\"assistant\",\"content\":\"" + text(30, 170) + "\"}");
    } else {
      add("{\"role\":\"user\",\"content\":\"" + text(20, 140) + "\"}");
    }
    assistant_turn = !assistant_turn;
  }
  out += "]";
  return out;
}

struct Input {
  std::string json;
  size_t tokens = 0;
};

const Input& History(size_t n, bool anthropic) {
  static std::map<std::pair<size_t, bool>, Input> cache;
  auto [it, inserted] = cache.try_emplace({n, anthropic});
  if (inserted) {
    it->second.json = MakeHistory(n, anthropic);
    auto count = ctxkit::CountMessagesForModel(kModel, it->second.json);
    if (!count.ok()) {
      std::fprintf(stderr, "compactor_bench: %s\n",
                   count.status().ToString().c_str());
      std::exit(1);
    }
    it->second.tokens = count->total;
    if (ctxkit::Status v = ctxkit::ValidateChatHistory(it->second.json);
        !v.ok()) {
      std::fprintf(stderr, "compactor_bench: generated history invalid: %s\n",
                   v.ToString().c_str());
      std::exit(1);
    }
  }
  return it->second;
}

void BM_Compact(benchmark::State& state) {
  const bool anthropic = state.range(0) == 1;
  const size_t n = static_cast<size_t>(state.range(1));
  const Input& input = History(n, anthropic);
  const ctxkit::Compactor compactor;
  ctxkit::CompactionOptions options;
  options.model = kModel;
  options.strategy = ctxkit::CompactionStrategy::kSmart;
  options.max_tokens = static_cast<int64_t>(input.tokens / 2);
  size_t compacted = 0;
  bool met = false;
  for (auto _ : state) {
    auto result = compactor.Compact(input.json, options);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    compacted = result->compacted_tokens;
    met = result->budget_met;
    benchmark::DoNotOptimize(result->messages_json.data());
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * input.json.size()));
  state.counters["messages"] = static_cast<double>(n);
  state.counters["input_bytes"] = static_cast<double>(input.json.size());
  state.counters["tokens"] = static_cast<double>(input.tokens);
  state.counters["compacted"] = static_cast<double>(compacted);
  state.counters["budget_met"] = met ? 1 : 0;
  state.counters["time_per_message"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                  benchmark::Counter::kInvert);
}

void BM_CountOnly(benchmark::State& state) {
  const bool anthropic = state.range(0) == 1;
  const size_t n = static_cast<size_t>(state.range(1));
  const Input& input = History(n, anthropic);
  for (auto _ : state) {
    auto count = ctxkit::CountMessagesForModel(kModel, input.json);
    benchmark::DoNotOptimize(count);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * input.json.size()));
  state.counters["messages"] = static_cast<double>(n);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"format", "messages"});
  for (int64_t format : {0, 1}) {
    for (int64_t n : {1000, 2000, 4000, 8000, 10000, 16000})
      b->Args({format, n});
  }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Compact)->Apply(Sizes);
BENCHMARK(BM_CountOnly)->Apply(Sizes);

class Recorder : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred || r.iterations == 0) continue;
      const auto n = static_cast<double>(r.iterations);
      seconds_[r.benchmark_name()] = {r.real_accumulated_time / n,
                                      r.cpu_accumulated_time / n};
    }
  }
  // {wall, cpu} seconds per iteration of `name`, or null.
  const std::pair<double, double>* Find(const std::string& name) const {
    auto it = seconds_.find(name);
    return it == seconds_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, std::pair<double, double>> seconds_;
};

void PrintSummary(const Recorder& rec) {
  std::printf(
      "\n== Targets (1,000 messages < 5 ms, 10,000 < 40 ms): wall clock "
      "(cpu) ==\n");
  for (int format : {0, 1}) {
    const char* format_name = format == 0 ? "OpenAI" : "Anthropic";
    for (auto [n, target_ms] : {std::pair<int, double>{1000, 5}, {10000, 40}}) {
      const std::string name = "BM_Compact/format:" + std::to_string(format) +
                               "/messages:" + std::to_string(n);
      const auto* f = rec.Find(name);
      if (f == nullptr) continue;
      std::printf(
          "  %-9s %6d messages: %8.3f ms (cpu %8.3f)  target < %g ms  %s\n",
          format_name, n, f->first * 1e3, f->second * 1e3, target_ms,
          f->first * 1e3 < target_ms ? "MET" : "NOT MET");
    }
    std::printf("  %-9s linearity, us per message, wall (cpu):", format_name);
    for (int n : {1000, 2000, 4000, 8000, 10000, 16000}) {
      const auto* f = rec.Find("BM_Compact/format:" + std::to_string(format) +
                               "/messages:" + std::to_string(n));
      if (f != nullptr)
        std::printf("  %d: %.2f (%.2f)", n, f->first * 1e6 / n,
                    f->second * 1e6 / n);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const std::string load_start = LoadAverage();
  benchmark::AddCustomContext("load_average_start", load_start);
  benchmark::AddCustomContext("model", kModel);
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder);
  PrintSummary(recorder);
  std::printf("\nload average (1, 5, 15 min): start %s, end %s\n",
              load_start.c_str(), LoadAverage().c_str());
  benchmark::Shutdown();
  return 0;
}
