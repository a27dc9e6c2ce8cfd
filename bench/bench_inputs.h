// Deterministic inputs the benchmarks share: a seeded generator (also the
// compactor's property test's), English-like words, the 1 KB English text and
// the 100-message chat history of the MCP benchmarks, and the small helpers
// their reports use. The same on every machine and in every run, so figures
// from different runs compare.

#ifndef CTXKIT_BENCH_BENCH_INPUTS_H_
#define CTXKIT_BENCH_BENCH_INPUTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ctxkit::bench {

// SplitMix64: a small, well-known generator.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // A value in [lo, hi].
  uint64_t Range(uint64_t lo, uint64_t hi) {
    return lo + Next() % (hi - lo + 1);
  }
  // True `p` times in 100.
  bool Percent(int p) { return static_cast<int>(Next() % 100) < p; }
  // One of `items`, each as likely.
  template <typename T, size_t N>
  const T& Pick(const T (&items)[N]) {
    return items[Next() % N];
  }

 private:
  uint64_t state_;
};

// Words from a fixed list of code-review vocabulary (paths and identifiers
// among them), separated by spaces, until the text has at least `bytes`.
std::string Words(SplitMix64& rng, size_t bytes);

// `text` as a JSON string literal (quotes, backslashes and control
// characters escaped; other bytes as they are). Invalid UTF-8 stays invalid,
// so that the MCP fuzzer's requests can still carry it to the server.
inline std::string JsonString(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

// The 1-, 5- and 15-minute load averages ("0.52 0.61 0.70"), for reports.
std::string LoadAverage();

// 1,024 bytes of English prose (the GPL's preamble when the system has it,
// else a fixed paragraph), never cutting a UTF-8 sequence.
std::string EnglishText1K();

// A 100-message OpenAI-format history as a JSON array: system prompt, task,
// then alternating turns; every fourth assistant turn calls a tool that the
// next message answers. About 19 KB.
std::string History100();

}  // namespace ctxkit::bench

#endif  // CTXKIT_BENCH_BENCH_INPUTS_H_
