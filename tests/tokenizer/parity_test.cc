// Exact parity with tiktoken: every golden case (texts encoded by
// tiktoken@1.0.22, OpenAI's Rust core, with encode_ordinary and with every
// special token allowed) must come out id for id, and Count must agree. The
// same for "claude" against @anthropic-ai/tokenizer@0.0.4, which encodes the
// NFKC of the text.

#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ctxkit/tokenizer.h"
#include "tests/tokenizer/golden_reader.h"

namespace ctxkit::internal {
namespace {

std::string Preview(const std::vector<uint32_t>& ids, size_t from) {
  std::ostringstream out;
  for (size_t i = from; i < ids.size() && i < from + 8; ++i)
    out << ids[i] << ' ';
  return out.str();
}

// Checks every case of `file`; returns the number checked.
size_t CheckFile(std::string_view file) {
  auto cases = ReadGoldenFile(GoldenPath(file));
  REQUIRE_MESSAGE(cases.ok(), std::string(cases.status().message()));
  std::map<std::string, size_t> checked_by_encoding;
  size_t mismatches = 0;
  EncodeOptions all;
  all.allowed_special = SpecialTokenSet::All();
  for (const GoldenCase& c : *cases) {
    auto tokenizer = Tokenizer::ForEncoding(c.encoding);
    REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.status().ToString());
    const bool special = c.mode == GoldenCase::Mode::kAllSpecial;
    auto ids = special ? (*tokenizer)->Encode(c.text, all)
                       : (*tokenizer)->EncodeOrdinary(c.text);
    auto count =
        special ? (*tokenizer)->Count(c.text, all)
                : (*tokenizer)
                      ->Count(c.text,
                              EncodeOptions{SpecialTokenSet::None(),
                                            SpecialTokenSet::None(), false});
    // The caller-buffer path, into a buffer of exactly the right size.
    std::vector<uint32_t> buffer(c.ids.size());
    const EncodeOptions& options =
        special ? all
                : EncodeOptions{SpecialTokenSet::None(),
                                SpecialTokenSet::None(), false};
    auto written = (*tokenizer)->EncodeInto(c.text, buffer, options);
    const bool into_ok =
        written.ok() && *written == c.ids.size() && buffer == c.ids;
    ++checked_by_encoding[c.encoding];
    if (ids.ok() && *ids == c.ids && count.ok() && *count == c.ids.size() &&
        into_ok) {
      continue;
    }
    ++mismatches;
    if (mismatches > 10) continue;  // enough to diagnose
    size_t at = 0;
    if (ids.ok()) {
      while (at < ids->size() && at < c.ids.size() && (*ids)[at] == c.ids[at])
        ++at;
    }
    FAIL_CHECK(
        c.encoding << " " << GoldenModeName(c.mode) << " " << c.label
                   << ": first difference at id " << at << ": expected "
                   << Preview(c.ids, at) << "got "
                   << (ids.ok() ? Preview(*ids, at) : ids.status().ToString())
                   << (count.ok() && *count != c.ids.size() ? " (count differs)"
                                                            : "")
                   << (into_ok ? "" : " (EncodeInto differs)"));
  }
  for (const auto& [encoding, n] : checked_by_encoding) {
    MESSAGE(file << ": " << encoding << ": " << n << " cases");
  }
  CHECK(mismatches == 0);
  return cases->size();
}

TEST_CASE("tiktoken golden corpus: 100% parity") {
  CHECK(CheckFile(kGoldenCorpusFile) >= 18000);
}

TEST_CASE("gpt-tokenizer TestPlans vectors: 100% parity") {
  CHECK(CheckFile(kGoldenTestPlansFile) == 313);
}

TEST_CASE("long runs of whitespace and punctuation: 100% parity") {
  // 37 texts of 0.3 to 8 KB (blank CRLF lines, "-=" rules, one CJK
  // character repeated, indentation, the benchmark's random whitespace and
  // punctuation mixes, ...), each one long piece or a few, in r50k, p50k,
  // cl100k and o200k (148 cases): the long-piece mergers' worst cases.
  CHECK(CheckFile(kGoldenLongRunsFile) == 148);
}

TEST_CASE("claude golden corpus (@anthropic-ai/tokenizer): 100% parity") {
  // 1960 texts in both modes; none left out for a Unicode version
  // difference (the file's header says how many were).
  CHECK(CheckFile(kGoldenClaudeFile) == 3920);
}

}  // namespace
}  // namespace ctxkit::internal
