// The texts the tokenizer benchmarks run on, shared by tokenizer_bench and
// tokenizer_throughput (and, through the files tokenizer_throughput writes,
// by the node peers in compare_tokenizers.mjs).
//
// Nothing here is committed text: the real inputs are read at run time from
// files every Debian machine has (licences, system headers, the Python
// standard library, translations), the pathological ones are generated from
// a fixed seed. A source missing on a machine is skipped and named in
// InputSet::skipped, so a run says what it did not measure. See
// bench/README.md for what each input is.

#ifndef CTXKIT_BENCH_TOKENIZER_INPUTS_H_
#define CTXKIT_BENCH_TOKENIZER_INPUTS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::bench {

struct BenchInput {
  // Short identifier used in benchmark names and JSON: "english", "code_c",
  // "code_python", "cjk", "letter_run", "spaces", "base64", "digits",
  // "newlines_spaces".
  std::string name;
  // Where the bytes come from, for the report.
  std::string source;
  // Valid UTF-8 containing no "<|" (so no special-token text: every encoder
  // treats it alike whatever its special-token defaults are).
  std::string text;
  // A generated worst case rather than real text.
  bool pathological = false;
};

struct InputSet {
  std::vector<BenchInput> inputs;
  // One line per input (or part of one) that could not be built, and why.
  std::vector<std::string> skipped;
};

// The size of each generated (pathological) input unless told otherwise.
inline constexpr size_t kDefaultPathologicalBytes = size_t{1} << 20;

// Builds every input. Deterministic for a given machine: files are read in
// sorted path order and the generated inputs use fixed seeds. Reads a few
// MB; takes well under a second with a warm page cache. Never fails: what
// cannot be read is skipped and listed. `pathological_bytes` sets the size
// of the generated inputs: smaller ones let the peers that cannot finish
// 1 MiB check ctxkit's ids on the same shapes of text.
InputSet BuildInputs(size_t pathological_bytes = kDefaultPathologicalBytes);

// The same inputs, built once per process on first call. Thread-safe.
const InputSet& SharedInputs();

// True if `text` is valid UTF-8 (no overlong forms, surrogates or code
// points above U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace ctxkit::bench

#endif  // CTXKIT_BENCH_TOKENIZER_INPUTS_H_
