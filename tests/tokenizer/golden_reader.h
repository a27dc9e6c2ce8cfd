// Reader of the golden token-id files under tests/tokenizer/golden/: the ids
// that the reference tokenizer (npm tiktoken@1.0.22, the WebAssembly build of
// OpenAI's Rust core) produced for a corpus of edge-case texts, committed so
// that ctxkit's parity tests need no node at test time.
//
// The files are written by tests/tokenizer/golden/generate_golden.mjs, whose
// `--check` mode proves that they match the reference byte for byte. Format
// (version 1; tests/tokenizer/golden/README.md has the rationale):
//
//   header  "ctxkit-golden 1\n", then zero or more comment lines that start
//           with '#' and end with '\n', then one empty line "\n"
//   body    varint n_encodings, then n_encodings strings (encoding names)
//           varint n_texts, then per text:
//             string label, string text,
//             varint n_results (>= 1), then per result:
//               varint encoding index, byte mode (0 kOrdinary, 1 kAllSpecial),
//               varint n_ids, then n_ids varints (the token ids)
//   trailer CRC-32 (IEEE 802.3 polynomial, as zlib's crc32) of every byte
//           before it, 4 bytes little-endian
//
// varint: unsigned LEB128 of a value < 2^32, minimal length (at most 5 bytes).
// string: varint byte length, then the bytes; labels and texts are UTF-8.
//
// Test-only code: not part of the library.

#ifndef CTXKIT_TESTS_TOKENIZER_GOLDEN_READER_H_
#define CTXKIT_TESTS_TOKENIZER_GOLDEN_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ctxkit::internal {

// One reference result: the ids tiktoken returned for `text` under
// `encoding` in `mode`.
struct GoldenCase {
  // The encoding's name: tiktoken's "r50k_base", "p50k_base", "p50k_edit",
  // "cl100k_base" or "o200k_base", or "claude" (whose reference,
  // @anthropic-ai/tokenizer, encodes the NFKC of the text).
  std::string encoding;
  enum class Mode {
    // encode_ordinary(text): special-token text is ordinary text.
    kOrdinary,
    // encode(text, allowed_special="all"): every special token of the
    // encoding that appears in the text becomes its id.
    kAllSpecial,
  } mode;
  // Well-formed UTF-8 (may be empty, may contain NUL).
  std::string text;
  std::vector<uint32_t> ids;
  // Unique per text within a file, e.g. "contraction/s/S" or
  // "testplans/cl100k_base/12"; every result of one text shares it.
  std::string label;
};

// File names, inside GoldenDir(), of the committed golden files.
// The generated corpus: every text under every encoding in both modes.
inline constexpr std::string_view kGoldenCorpusFile = "tiktoken_corpus.golden";
// gpt-tokenizer's TestPlans.txt (MIT licence), kOrdinary only.
inline constexpr std::string_view kGoldenTestPlansFile =
    "gpt_tokenizer_testplans.golden";
// The corpus plus NFKC cases under "claude", from @anthropic-ai/tokenizer.
inline constexpr std::string_view kGoldenClaudeFile = "claude_corpus.golden";
// Long runs of whitespace, punctuation and repeated characters (mode 0).
inline constexpr std::string_view kGoldenLongRunsFile = "long_runs.golden";

// Returns the directory holding the golden files, as CMake passed it to this
// library (CTXKIT_GOLDEN_DIR, the source directory's tests/tokenizer/golden),
// so tests find the files from any working directory.
std::string GoldenDir();

// Returns GoldenDir() + "/" + file_name.
std::string GoldenPath(std::string_view file_name);

// Returns "ordinary" or "all_special", for test messages.
std::string_view GoldenModeName(GoldenCase::Mode mode);

// Parses the contents of a golden file. `name` only labels error messages.
// Returns the results in file order (texts in order, each text's results in
// order), one GoldenCase per result.
// Errors: DATA_LOSS naming the problem and its byte offset if the bytes are
// not a well-formed version-1 file: bad magic or unsupported version, header
// without its ending empty line, CRC mismatch, truncated or overlong varint,
// value out of range, count larger than the remaining bytes allow, encoding
// index out of range, unknown mode, invalid UTF-8 in a label or text, empty
// or non-[a-z0-9_] encoding name, duplicate label, duplicate
// (encoding, mode) for one text, bytes left over. Never crashes or allocates
// more than a small multiple of the input size, whatever the input.
// Thread safety: pure; may be called concurrently.
absl::StatusOr<std::vector<GoldenCase>> ParseGolden(std::string_view bytes,
                                                    std::string_view name);

// Reads and parses the golden file at `path` (see ParseGolden).
// Errors: NOT_FOUND if it does not exist, another code with the system's
// message if it cannot be read, FAILED_PRECONDITION if it is larger than
// 256 MiB, and ParseGolden's errors.
absl::StatusOr<std::vector<GoldenCase>> ReadGoldenFile(const std::string& path);

// CRC-32 (IEEE 802.3, reflected, init and final xor 0xFFFFFFFF; zlib's
// crc32). Exposed so tests can build well-formed files to corrupt.
uint32_t GoldenCrc32(std::string_view bytes);

}  // namespace ctxkit::internal

#endif  // CTXKIT_TESTS_TOKENIZER_GOLDEN_READER_H_
