// Count and Encode throughput of ctxkit::Tokenizer on the benchmark inputs,
// as JSON lines, for bench/compare_tokenizers.mjs: that script runs this
// program and the node tokenizers in one run on the same bytes.
//
//   tokenizer_throughput [--encodings=cl100k_base,o200k_base,r50k_base]
//                        [--inputs=english,cjk,...] [--min-time=0.5]
//                        [--timeout=30] [--write-inputs=DIR] [--ids-dir=DIR]
//                        [--pathological-bytes=1048576]
//
// --write-inputs writes each input's exact bytes to DIR/<input>.txt (and
// DIR/inputs.jsonl describing them) before measuring those same bytes, so
// the peers can read identical text. --ids-dir writes the token ids of each
// (encoding, input) to DIR/<encoding>.<input>.ids (uint32 little-endian), so
// that the script can compare ids, not only counts. --pathological-bytes
// sets the size of the generated inputs (1 MiB by default).
//
// Every (encoding, input) pair runs in a forked child process: its first
// ForEncoding is the one-time load a real process pays (reported as
// load_ms, with the resident memory it added), and a pair that takes longer
// than --timeout seconds is reported as {"status":"timeout"} instead of
// stopping the run. Output, one line per pair:
//
//   {"encoding":"cl100k_base","input":"english","bytes":265000,
//    "count_mb_s":..,"encode_mb_s":..,"tokens":..,"first_count_ms":..,
//    "load_ms":..,"load_rss_kb":..,"status":"ok"}
//
// MB is 10^6 bytes. Single thread.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_inputs.h"
#include "bench/tokenizer_inputs.h"
#include "ctxkit/tokenizer.h"

namespace {

using ctxkit::bench::BenchInput;
using ctxkit::bench::JsonString;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<std::string> encodings = {"cl100k_base", "o200k_base",
                                        "r50k_base"};
  std::vector<std::string> inputs;  // empty: all
  double min_time = 0.5;
  unsigned timeout = 30;
  std::string write_inputs;
  std::string ids_dir;
  size_t pathological_bytes = ctxkit::bench::kDefaultPathologicalBytes;
};

std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    out.emplace_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

[[noreturn]] void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--encodings=a,b] [--inputs=x,y] [--min-time=S] "
               "[--timeout=S] [--write-inputs=DIR] [--ids-dir=DIR] "
               "[--pathological-bytes=N]\n",
               argv0);
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view flag) -> const char* {
      if (arg.substr(0, flag.size()) == flag && arg.size() > flag.size() &&
          arg[flag.size()] == '=') {
        return argv[i] + flag.size() + 1;
      }
      return nullptr;
    };
    const char* v = nullptr;
    if ((v = value("--encodings")) != nullptr) {
      o.encodings = SplitCommas(v);
    } else if ((v = value("--inputs")) != nullptr) {
      o.inputs = SplitCommas(v);
    } else if ((v = value("--min-time")) != nullptr) {
      o.min_time = std::atof(v);
    } else if ((v = value("--timeout")) != nullptr) {
      o.timeout = static_cast<unsigned>(std::atoi(v));
    } else if ((v = value("--write-inputs")) != nullptr) {
      o.write_inputs = v;
    } else if ((v = value("--ids-dir")) != nullptr) {
      o.ids_dir = v;
    } else if ((v = value("--pathological-bytes")) != nullptr) {
      o.pathological_bytes = static_cast<size_t>(std::strtoull(v, nullptr, 10));
      if (o.pathological_bytes == 0) Usage(argv[0]);
    } else {
      Usage(argv[0]);
    }
  }
  return o;
}

// FNV-1a, 64 bits: the script hashes the files it reads the same way to
// prove that the peers saw these exact bytes.
uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Resident set size in KiB, from /proc/self/statm.
long ResidentKiB() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long size = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  if (n != 2) return -1;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

[[noreturn]] void ChildFail(const std::string& what) {
  std::fprintf(stderr, "tokenizer_throughput: %s\n", what.c_str());
  std::fflush(stderr);
  _exit(3);
}

// Runs `op` once, then again until `min_time` seconds have passed; returns
// {seconds of the first run, MB/s over the repeats (or the first run alone
// if it already took min_time)}.
template <typename Op>
std::pair<double, double> Measure(size_t bytes, double min_time, Op op) {
  const Clock::time_point t0 = Clock::now();
  op();
  const double first = Seconds(Clock::now() - t0);
  if (first >= min_time) return {first, bytes / first / 1e6};
  size_t reps = 0;
  const Clock::time_point t1 = Clock::now();
  double elapsed = 0;
  do {
    op();
    ++reps;
    elapsed = Seconds(Clock::now() - t1);
  } while (elapsed < min_time);
  return {first, static_cast<double>(bytes) * reps / elapsed / 1e6};
}

// The child's work for one pair; prints one JSON line and exits.
[[noreturn]] void RunPair(const Options& o, const std::string& encoding,
                          const BenchInput& input) {
  alarm(o.timeout);
  const long rss_before = ResidentKiB();
  const Clock::time_point t0 = Clock::now();
  auto tok = ctxkit::Tokenizer::ForEncoding(encoding);
  const double load_ms = Seconds(Clock::now() - t0) * 1e3;
  const long rss_after = ResidentKiB();
  if (!tok.ok()) ChildFail(encoding + ": " + tok.status().ToString());
  const ctxkit::Tokenizer& t = **tok;
  const std::string& text = input.text;

  size_t tokens = 0;
  auto [first_count_s, count_mb_s] = Measure(text.size(), o.min_time, [&] {
    auto n = t.Count(text);
    if (!n.ok()) ChildFail("Count: " + n.status().ToString());
    tokens = *n;
  });
  std::vector<uint32_t> ids;
  auto [first_encode_s, encode_mb_s] = Measure(text.size(), o.min_time, [&] {
    auto r = t.Encode(text);
    if (!r.ok()) ChildFail("Encode: " + r.status().ToString());
    ids = std::move(r).value();
  });
  if (ids.size() != tokens) {
    ChildFail(encoding + " on " + input.name + ": Encode gave " +
              std::to_string(ids.size()) + " ids, Count " +
              std::to_string(tokens));
  }
  if (!o.ids_dir.empty()) {
    std::ofstream out(o.ids_dir + "/" + encoding + "." + input.name + ".ids",
                      std::ios::binary);
    for (uint32_t id : ids) {
      const unsigned char le[4] = {static_cast<unsigned char>(id),
                                   static_cast<unsigned char>(id >> 8),
                                   static_cast<unsigned char>(id >> 16),
                                   static_cast<unsigned char>(id >> 24)};
      out.write(reinterpret_cast<const char*>(le), 4);
    }
    if (!out) ChildFail("cannot write ids to " + o.ids_dir);
  }
  std::printf(
      "{\"encoding\":%s,\"input\":%s,\"bytes\":%zu,\"count_mb_s\":%.3f,"
      "\"encode_mb_s\":%.3f,\"tokens\":%zu,\"first_count_ms\":%.3f,"
      "\"first_encode_ms\":%.3f,\"load_ms\":%.3f,\"load_rss_kb\":%ld,"
      "\"status\":\"ok\"}\n",
      JsonString(encoding).c_str(), JsonString(input.name).c_str(), text.size(),
      count_mb_s, encode_mb_s, tokens, first_count_s * 1e3,
      first_encode_s * 1e3, load_ms, rss_after - rss_before);
  std::fflush(stdout);
  _exit(0);
}

bool Selected(const Options& o, const std::string& name) {
  if (o.inputs.empty()) return true;
  for (const std::string& n : o.inputs) {
    if (n == name) return true;
  }
  return false;
}

void WriteInputs(const std::string& dir,
                 const std::vector<const BenchInput*>& inputs) {
  std::ofstream index(dir + "/inputs.jsonl");
  for (const BenchInput* in : inputs) {
    std::ofstream out(dir + "/" + in->name + ".txt", std::ios::binary);
    out.write(in->text.data(), static_cast<std::streamsize>(in->text.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s/%s.txt\n", dir.c_str(),
                   in->name.c_str());
      std::exit(1);
    }
    char hash[17];
    std::snprintf(hash, sizeof(hash), "%016" PRIx64, Fnv1a64(in->text));
    index << "{\"input\":" << JsonString(in->name)
          << ",\"bytes\":" << in->text.size() << ",\"fnv1a64\":\"" << hash
          << "\",\"pathological\":" << (in->pathological ? "true" : "false")
          << ",\"source\":" << JsonString(in->source) << "}\n";
  }
  if (!index) {
    std::fprintf(stderr, "cannot write %s/inputs.jsonl\n", dir.c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  const ctxkit::bench::InputSet set =
      ctxkit::bench::BuildInputs(o.pathological_bytes);
  for (const std::string& s : set.skipped) {
    std::fprintf(stderr, "skipped input: %s\n", s.c_str());
  }
  std::vector<const BenchInput*> inputs;
  for (const BenchInput& in : set.inputs) {
    if (Selected(o, in.name)) inputs.push_back(&in);
  }
  for (const std::string& n : o.inputs) {
    bool found = false;
    for (const BenchInput* in : inputs) found = found || in->name == n;
    if (!found)
      std::fprintf(stderr, "skipped input: %s (not available)\n", n.c_str());
  }
  if (!o.write_inputs.empty()) WriteInputs(o.write_inputs, inputs);

  int failures = 0;
  for (const std::string& encoding : o.encodings) {
    for (const BenchInput* in : inputs) {
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = fork();
      if (pid < 0) {
        std::perror("fork");
        return 1;
      }
      if (pid == 0) RunPair(o, encoding, *in);
      int wstatus = 0;
      if (waitpid(pid, &wstatus, 0) < 0) {
        std::perror("waitpid");
        return 1;
      }
      if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) continue;
      const bool timeout = WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGALRM;
      std::printf(
          "{\"encoding\":%s,\"input\":%s,\"bytes\":%zu,\"status\":\"%s\"}\n",
          JsonString(encoding).c_str(), JsonString(in->name).c_str(),
          in->text.size(), timeout ? "timeout" : "crash");
      ++failures;
    }
  }
  std::fflush(stdout);
  return failures == 0 ? 0 : 1;
}
