// Throughput, first-use time and memory of ctxkit::Tokenizer, single thread.
//
//   build/release/bench/tokenizer_bench --benchmark_counters_tabular=true
//
// Count/<encoding>/<input> and Encode/<encoding>/<input>: bytes per second
// (SetBytesProcessed) on each input of bench/tokenizer_inputs.h, for
// cl100k_base, o200k_base and r50k_base; the counter `tokens` is the count.
//
// FirstUse/<encoding>: the one-time cost of the first ForEncoding in a
// process, for those three and p50k_base. Each iteration starts this program
// afresh (exec of /proc/self/exe), which times its first ForEncoding and reads
// its resident memory before and after from /proc/self/status; the time
// reported is the child's (manual time). Counters: rss_anon_kb (heap the
// encoding built), rss_file_kb (file pages it mapped: the embedded
// vocabulary's, and as many neighbouring ones as the kernel maps with them,
// which varies: see bench/README.md), rss_kb (both), tiktoken_file_kb (the size
// of OpenAI's .tiktoken file for the encoding, for comparison) and
// rss_per_tiktoken (rss_kb / tiktoken_file_kb).
//
// Truncate/<encoding>/100_of_16MiB: Tokenizer::Truncate of 16 MiB of text
// (the english input repeated) to 100 tokens, which must cost the 100
// tokens and a pass over the bytes (UTF-8 and special-token checks), not
// the tokenizing of all of it.
//
// Each of these (and those below) runs 5 times unless --benchmark_
// repetitions says otherwise, and shows only the statistics over the runs
// (--benchmark_display_aggregates_only=false shows every run): _mean,
// _median, _stddev, _cv, and _min and _max. The best run is _min's time and
// _max's bytes_per_second; the median is the figure to compare, since a
// shared machine makes the best run a matter of luck.
//
// When linked with ctxkit_testing (built with CTXKIT_BUILD_TESTS), the two
// parts of that first use, in a loop in this process (the vocabulary's pages
// already resident):
//   ParseVocabulary/<encoding>: internal::Vocabulary::FromStaticCompact over
//     the embedded data, which ForEncoding does once per vocabulary;
//   BuildEncoding/<encoding>: internal::BuildBuiltinEncoding, which builds a
//     fresh Encoding over the vocabulary already parsed and shared.

#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/tokenizer_inputs.h"
#include "ctxkit/tokenizer.h"

#if CTXKIT_BENCH_HAVE_INTERNAL
#include "lib/tokenizer/builtin_encodings.h"
#include "lib/tokenizer/embedded_vocabularies.h"
#include "lib/tokenizer/vocabulary.h"
#endif

namespace {

using ctxkit::Tokenizer;
using ctxkit::bench::BenchInput;
using ctxkit::bench::InputSet;

constexpr const char* kEncodings[] = {"cl100k_base", "o200k_base", "r50k_base"};
// First use also for p50k_base, whose vocabulary is r50k_base's and 24
// whitespace tokens more; its throughput is r50k_base's but on whitespace.
constexpr const char* kFirstUseEncodings[] = {"cl100k_base", "o200k_base",
                                              "r50k_base", "p50k_base"};
constexpr std::string_view kChildFlag = "--first-use-child=";

// Sizes of OpenAI's .tiktoken files ("base64 rank" per line), reconstructed
// from the ranks in the npm package tiktoken@1.0.22 (encoders/*.json); they
// match the files tiktoken downloads.
int64_t TiktokenFileBytes(std::string_view encoding) {
  if (encoding == "r50k_base") return 835554;
  if (encoding == "p50k_base") return 836186;
  if (encoding == "cl100k_base") return 1681126;
  if (encoding == "o200k_base") return 3613922;
  return 0;
}

std::shared_ptr<const Tokenizer> Load(std::string_view encoding) {
  auto tok = Tokenizer::ForEncoding(encoding);
  if (!tok.ok()) {
    std::fprintf(stderr, "ForEncoding(%.*s): %s\n",
                 static_cast<int>(encoding.size()), encoding.data(),
                 tok.status().ToString().c_str());
    std::abort();
  }
  return *tok;
}

void BM_Count(benchmark::State& state, const char* encoding,
              const BenchInput* input) {
  const std::shared_ptr<const Tokenizer> tok = Load(encoding);
  size_t tokens = 0;
  for (auto _ : state) {
    auto n = tok->Count(input->text);
    if (!n.ok()) {
      state.SkipWithError(n.status().ToString().c_str());
      return;
    }
    tokens = *n;
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(input->text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["bytes_per_token"] =
      tokens == 0 ? 0.0 : static_cast<double>(input->text.size()) / tokens;
}

void BM_Encode(benchmark::State& state, const char* encoding,
               const BenchInput* input) {
  const std::shared_ptr<const Tokenizer> tok = Load(encoding);
  size_t tokens = 0;
  for (auto _ : state) {
    auto ids = tok->Encode(input->text);
    if (!ids.ok()) {
      state.SkipWithError(ids.status().ToString().c_str());
      return;
    }
    tokens = ids->size();
    benchmark::DoNotOptimize(ids->data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(input->text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

// Encode into one buffer reused across iterations, as a caller that cares
// does (EncodeInto): the same work as Encode without the fresh vector, whose
// first touch of every page is a page fault that can cost as much as the
// tokenizing does on this kind of virtual machine.
void BM_EncodeInto(benchmark::State& state, const char* encoding,
                   const BenchInput* input) {
  const std::shared_ptr<const Tokenizer> tok = Load(encoding);
  std::vector<uint32_t> buffer(input->text.size() + 1);
  size_t tokens = 0;
  for (auto _ : state) {
    auto n = tok->EncodeInto(input->text, buffer);
    if (!n.ok()) {
      state.SkipWithError(n.status().ToString().c_str());
      return;
    }
    tokens = *n;
    benchmark::DoNotOptimize(buffer.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(input->text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

// CountMany over every real input cut into 64 KiB texts, with the thread
// count as the argument: CountMany/<encoding>/1 against /2 is the scaling on
// this machine's two cores (wall-clock time, as a caller sees it).
void BM_CountMany(benchmark::State& state, const char* encoding,
                  const InputSet* set) {
  const std::shared_ptr<const Tokenizer> tok = Load(encoding);
  constexpr size_t kPiece = size_t{64} << 10;
  std::vector<std::string_view> texts;
  size_t bytes = 0;
  for (const BenchInput& in : set->inputs) {
    if (in.pathological) continue;
    const std::string_view text = in.text;
    size_t at = 0;
    while (at < text.size()) {
      // Cut after a line break so no UTF-8 character is split.
      size_t end = std::min(text.size(), at + kPiece);
      while (end < text.size() && text[end - 1] != '\n') ++end;
      texts.push_back(text.substr(at, end - at));
      bytes += end - at;
      at = end;
    }
  }
  const auto threads = static_cast<unsigned>(state.range(0));
  size_t total = 0;
  for (auto _ : state) {
    auto counts = tok->CountMany(texts, threads);
    if (!counts.ok()) {
      state.SkipWithError(counts.status().ToString().c_str());
      return;
    }
    total = 0;
    for (size_t n : *counts) total += n;
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes));
  state.counters["texts"] = static_cast<double>(texts.size());
  state.counters["tokens"] = static_cast<double>(total);
}

// VmRSS, RssAnon and RssFile of this process, in KiB.
struct Rss {
  long anon_kb = 0;
  long file_kb = 0;
};

Rss ReadRss() {
  Rss rss;
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return rss;
  char line[256];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    long kb = 0;
    if (std::sscanf(line, "RssAnon: %ld kB", &kb) == 1) rss.anon_kb = kb;
    if (std::sscanf(line, "RssFile: %ld kB", &kb) == 1) rss.file_kb = kb;
  }
  std::fclose(f);
  return rss;
}

// The child's side of FirstUse: a fresh process, nothing loaded yet. Prints
// "<nanoseconds> <anon KiB> <file KiB>" and exits.
int FirstUseChild(std::string_view encoding) {
  const Rss before = ReadRss();
  const auto t0 = std::chrono::steady_clock::now();
  auto tok = Tokenizer::ForEncoding(encoding);
  const auto t1 = std::chrono::steady_clock::now();
  const Rss after = ReadRss();
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", tok.status().ToString().c_str());
    return 1;
  }
  std::printf("%lld %ld %ld\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0)
                      .count()),
              after.anon_kb - before.anon_kb, after.file_kb - before.file_kb);
  return 0;
}

// Runs this program as a FirstUse child for `encoding`; false on failure.
bool RunFirstUseChild(const char* encoding, long long* ns, Rss* delta) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const std::string flag = std::string(kChildFlag) + encoding;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl("/proc/self/exe", "tokenizer_bench", flag.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, n);
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) return false;
  return std::sscanf(out.c_str(), "%lld %ld %ld", ns, &delta->anon_kb,
                     &delta->file_kb) == 3;
}

void BM_FirstUse(benchmark::State& state, const char* encoding) {
  double anon_kb = 0, file_kb = 0;
  for (auto _ : state) {
    long long ns = 0;
    Rss delta;
    if (!RunFirstUseChild(encoding, &ns, &delta)) {
      state.SkipWithError("the child process failed");
      return;
    }
    state.SetIterationTime(static_cast<double>(ns) * 1e-9);
    anon_kb += static_cast<double>(delta.anon_kb);
    file_kb += static_cast<double>(delta.file_kb);
  }
  const double iterations = static_cast<double>(state.iterations());
  const double tiktoken_kb =
      static_cast<double>(TiktokenFileBytes(encoding)) / 1024;
  state.counters["rss_anon_kb"] = anon_kb / iterations;
  state.counters["rss_file_kb"] = file_kb / iterations;
  state.counters["rss_kb"] = (anon_kb + file_kb) / iterations;
  state.counters["tiktoken_file_kb"] = tiktoken_kb;
  state.counters["rss_per_tiktoken"] =
      (anon_kb + file_kb) / iterations / tiktoken_kb;
}

#if CTXKIT_BENCH_HAVE_INTERNAL
// The built-in encodings benchmarked here are named after their vocabulary.
void BM_ParseVocabulary(benchmark::State& state, const char* encoding) {
  using ctxkit::internal::Vocabulary;
  const std::string_view data =
      ctxkit::internal::EmbeddedVocabularyData(encoding);
  for (auto _ : state) {
    auto vocabulary = std::make_unique<absl::StatusOr<Vocabulary>>(
        Vocabulary::FromStaticCompact(data));
    if (!vocabulary->ok()) {
      state.SkipWithError(std::string(vocabulary->status().message()).c_str());
      return;
    }
    state.PauseTiming();  // freeing it is not part of first use
    vocabulary.reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(data.size()));
  state.counters["embedded_kb"] = static_cast<double>(data.size()) / 1024;
}

void BM_BuildEncoding(benchmark::State& state, const char* encoding) {
  for (auto _ : state) {
    auto built = ctxkit::internal::BuildBuiltinEncoding(encoding);
    if (!built.ok()) {
      state.SkipWithError(std::string(built.status().message()).c_str());
      return;
    }
    state.PauseTiming();  // freeing it is not part of first use
    built->reset();
    state.ResumeTiming();
  }
}
#endif

void BM_Truncate(benchmark::State& state, const char* encoding,
                 const BenchInput* input) {
  const std::shared_ptr<const Tokenizer> tok = Load(encoding);
  std::string text;
  text.reserve(size_t{16} << 20);
  while (text.size() + input->text.size() <= (size_t{16} << 20)) {
    text += input->text;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    auto cut = tok->Truncate(text, 100);
    if (!cut.ok()) {
      state.SkipWithError(cut.status().ToString().c_str());
      return;
    }
    bytes = cut->text.size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["input_bytes"] = static_cast<double>(text.size());
  state.counters["kept_bytes"] = static_cast<double>(bytes);
}

double Min(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}
double Max(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end());
}

// The statistics every benchmark here reports over its runs beside Google
// Benchmark's mean, median, stddev and cv: the best and the worst run.
benchmark::internal::Benchmark* WithStatistics(
    benchmark::internal::Benchmark* b) {
  return b->ComputeStatistics("min", Min)->ComputeStatistics("max", Max);
}

void RegisterAll() {
  const ctxkit::bench::InputSet& set = ctxkit::bench::SharedInputs();
  std::string skipped;
  for (const std::string& s : set.skipped) {
    if (!skipped.empty()) skipped += "; ";
    skipped += s;
  }
  benchmark::AddCustomContext("skipped_inputs",
                              skipped.empty() ? "none" : skipped);
  for (const BenchInput& in : set.inputs) {
    benchmark::AddCustomContext(
        "input_" + in.name,
        std::to_string(in.text.size()) + " B: " + in.source);
  }
  // First use before anything else, although each child is a fresh process
  // and so does not depend on what this one has loaded.
  for (const char* enc : kFirstUseEncodings) {
    WithStatistics(
        benchmark::RegisterBenchmark((std::string("FirstUse/") + enc).c_str(),
                                     BM_FirstUse, enc))
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
#if CTXKIT_BENCH_HAVE_INTERNAL
  for (const char* enc : kFirstUseEncodings) {
    WithStatistics(benchmark::RegisterBenchmark(
                       (std::string("ParseVocabulary/") + enc).c_str(),
                       BM_ParseVocabulary, enc))
        ->Unit(benchmark::kMillisecond);
  }
  for (const char* enc : kFirstUseEncodings) {
    WithStatistics(benchmark::RegisterBenchmark(
                       (std::string("BuildEncoding/") + enc).c_str(),
                       BM_BuildEncoding, enc))
        ->Unit(benchmark::kMillisecond);
  }
#endif
  for (const char* enc : {"cl100k_base", "o200k_base"}) {
    WithStatistics(
        benchmark::RegisterBenchmark((std::string("CountMany/") + enc).c_str(),
                                     BM_CountMany, enc, &set))
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const char* enc : kEncodings) {
    for (const BenchInput& in : set.inputs) {
      WithStatistics(benchmark::RegisterBenchmark(
                         (std::string("Count/") + enc + "/" + in.name).c_str(),
                         BM_Count, enc, &in))
          ->Unit(benchmark::kMillisecond);
      WithStatistics(benchmark::RegisterBenchmark(
          (std::string("EncodeInto/") + enc + "/" + in.name).c_str(),
          BM_EncodeInto, enc, &in));
      WithStatistics(benchmark::RegisterBenchmark(
                         (std::string("Encode/") + enc + "/" + in.name).c_str(),
                         BM_Encode, enc, &in))
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const BenchInput& in : set.inputs) {
    if (in.name != "english") continue;
    for (const char* enc : kEncodings) {
      WithStatistics(
          benchmark::RegisterBenchmark(
              (std::string("Truncate/") + enc + "/100_of_16MiB").c_str(),
              BM_Truncate, enc, &in))
          ->Unit(benchmark::kMillisecond);
    }
  }
}

// Google Benchmark's flags, with this program's defaults in front so that
// the command line overrides them: 5 runs each, only their statistics shown.
std::vector<char*> WithDefaultFlags(int argc, char** argv) {
  static char repetitions[] = "--benchmark_repetitions=5";
  static char aggregates[] = "--benchmark_display_aggregates_only=true";
  std::vector<char*> args = {argv[0], repetitions, aggregates};
  args.insert(args.end(), argv + 1, argv + argc);
  args.push_back(nullptr);
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 &&
      std::string_view(argv[1]).substr(0, kChildFlag.size()) == kChildFlag) {
    return FirstUseChild(std::string_view(argv[1]).substr(kChildFlag.size()));
  }
  std::vector<char*> args = WithDefaultFlags(argc, argv);
  int args_count = static_cast<int>(args.size()) - 1;
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;
  RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
