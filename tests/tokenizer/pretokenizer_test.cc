// Tests of the pre-tokenizer (lib/tokenizer/pretokenizer.h). The heart is
// differential: pretokenizer_data/cases.txt holds strings written to reach
// every branch of the three patterns, plus seeded random mixes, with the
// splits that node's backtracking RegExp engine gives (see generate.mjs
// there); every case must split identically here. More case files, such as a
// local fuzz run's, can be checked by naming them in CTXKIT_PRETOKENIZER_CASES
// (':'-separated).

#include "lib/tokenizer/pretokenizer.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

constexpr PretokenPattern kPatterns[] = {
    PretokenPattern::kGpt2, PretokenPattern::kCl100k, PretokenPattern::kO200k};
constexpr const char* kPatternNames[] = {"gpt2", "cl100k", "o200k"};

std::vector<std::string> Split(PretokenPattern pattern, std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view piece : SplitIntoPieces(pattern, text))
    out.emplace_back(piece);
  return out;
}

// Undoes generate.mjs's escaping: "\\" and \u{hex}.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
    } else if (s[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else {
      REQUIRE(s.substr(i, 3) == "\\u{");
      const size_t close = s.find('}', i);
      REQUIRE(close != std::string_view::npos);
      AppendUtf8(static_cast<char32_t>(std::stoul(
                     std::string(s.substr(i + 3, close - i - 3)), nullptr, 16)),
                 &out);
      i = close;
    }
  }
  return out;
}

std::vector<size_t> Lengths(std::string_view field) {
  std::vector<size_t> out;
  size_t start = 0;
  while (start <= field.size()) {
    size_t comma = field.find(',', start);
    if (comma == std::string_view::npos) comma = field.size();
    out.push_back(std::stoul(std::string(field.substr(start, comma - start))));
    start = comma + 1;
  }
  return out;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    out.push_back(
        line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) return out;
    start = tab + 1;
  }
}

struct FileResult {
  size_t cases = 0;
  size_t mismatches = 0;
};

// Checks every case of `path`; reports the first few mismatches in full.
FileResult CheckCaseFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  FileResult result;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string_view> fields = Fields(line);
    REQUIRE(fields.size() == 4);
    const std::string text = Unescape(fields[0]);
    REQUIRE(IsValidUtf8(text));
    ++result.cases;
    std::vector<size_t> expected;
    for (int p = 0; p < 3; ++p) {
      if (fields[p + 1] != "=") expected = Lengths(fields[p + 1]);
      std::vector<size_t> actual;
      size_t pos = 0;
      while (pos < text.size()) {
        const size_t end = NextPiece(kPatterns[p], text, pos);
        REQUIRE(end > pos);
        REQUIRE(end <= text.size());
        actual.push_back(end - pos);
        pos = end;
      }
      if (actual != expected) {
        if (++result.mismatches <= 20) {
          std::ostringstream a, e;
          for (size_t n : actual) a << n << ',';
          for (size_t n : expected) e << n << ',';
          FAIL_CHECK(kPatternNames[p] << " splits case " << result.cases << " ["
                                      << fields[0] << "] as " << a.str()
                                      << " not " << e.str());
        }
      }
    }
  }
  return result;
}

TEST_CASE("every case from the regex engine splits identically") {
  const FileResult committed =
      CheckCaseFile(std::string(CTXKIT_PRETOKENIZER_DATA) + "/cases.txt");
  MESSAGE("cases.txt: " << committed.cases << " cases, " << committed.mismatches
                        << " mismatches");
  CHECK(committed.cases > 10000);
  CHECK(committed.mismatches == 0);
  if (const char* extra = std::getenv("CTXKIT_PRETOKENIZER_CASES")) {
    std::string_view list = extra;
    while (!list.empty()) {
      const size_t colon = list.find(':');
      const std::string path(list.substr(0, colon));
      const FileResult r = CheckCaseFile(path);
      MESSAGE(path << ": " << r.cases << " cases, " << r.mismatches
                   << " mismatches");
      CHECK(r.mismatches == 0);
      list = colon == std::string_view::npos ? std::string_view()
                                             : list.substr(colon + 1);
    }
  }
}

// A few splits spelled out, as documentation of what the patterns do.
TEST_CASE("examples") {
  using V = std::vector<std::string>;
  CHECK(Split(PretokenPattern::kGpt2, "Hello world  foo\n\nbar") ==
        V{"Hello", " world", " ", " foo", "\n", "\n", "bar"});
  CHECK(Split(PretokenPattern::kCl100k, "Hello world  foo\n\nbar") ==
        V{"Hello", " world", " ", " foo", "\n\n", "bar"});
  CHECK(Split(PretokenPattern::kGpt2, "I'M don't") ==
        V{"I", "'", "M", " don", "'t"});
  CHECK(Split(PretokenPattern::kCl100k, "I'M don'\xC5\xBF") ==
        V{"I", "'M", " don", "'\xC5\xBF"});
  CHECK(Split(PretokenPattern::kO200k, "I'M don't") == V{"I'M", " don't"});
  // The Kelvin sign folds to k, which is no contraction.
  CHECK(Split(PretokenPattern::kCl100k, "x'\xE2\x84\xAA") ==
        V{"x", "'\xE2\x84\xAA"});
  CHECK(Split(PretokenPattern::kCl100k, "12345 .x") ==
        V{"123", "45", " .", "x"});
  CHECK(Split(PretokenPattern::kCl100k, "a.\n\nb") == V{"a", ".\n\n", "b"});
  CHECK(Split(PretokenPattern::kO200k, "a./\n/b") == V{"a", "./\n/", "b"});
  CHECK(Split(PretokenPattern::kO200k, "HTTPServer camelCase") ==
        V{"HTTPServer", " camel", "Case"});
  // U+0085 is \s; U+FEFF is not.
  CHECK(Split(PretokenPattern::kGpt2, "a\xC2\x85\xC2\x85z") ==
        V{"a", "\xC2\x85", "\xC2\x85", "z"});
  CHECK(Split(PretokenPattern::kCl100k, "a\xC2\x85\xC2\x85z") ==
        V{"a", "\xC2\x85", "\xC2\x85z"});
  CHECK(Split(PretokenPattern::kGpt2, "a \xEF\xBB\xBFz") ==
        V{"a", " \xEF\xBB\xBF", "z"});
}

// Pieces tile random valid text and end on character boundaries.
TEST_CASE("pieces tile random text") {
  std::mt19937 rng(12345);
  const char32_t alphabet[] = {'a',    'Z',     ' ',    '\n',  '\r',   '\t',
                               '\'',   's',     '/',    '.',   '1',    0x85,
                               0xA0,   0x301,   0x2B0,  0x1C5, 0x4E00, 0x3000,
                               0xFEFF, 0x1F600, 0x200D, 0x660, 0x17F,  0x212A};
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int length = static_cast<int>(rng() % 40);
    for (int i = 0; i < length; ++i) {
      AppendUtf8(alphabet[rng() % (sizeof(alphabet) / sizeof(alphabet[0]))],
                 &text);
    }
    for (PretokenPattern pattern : kPatterns) {
      size_t total = 0;
      for (std::string_view piece : SplitIntoPieces(pattern, text)) {
        REQUIRE(!piece.empty());
        REQUIRE(IsValidUtf8(piece));
        total += piece.size();
      }
      REQUIRE(total == text.size());
    }
  }
}

// Inputs on which a backtracking engine, or a careless scanner, goes
// quadratic; here each must finish at once (timings are reported separately,
// not asserted). Checks the piece count so the work is not optimized away.
TEST_CASE("long runs") {
  constexpr size_t kSize = 1 << 20;
  std::string base64;
  const char kB64[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::mt19937 rng(7);
  for (size_t i = 0; i < kSize; ++i) base64 += kB64[rng() % 64];
  std::string mixed_newlines;
  while (mixed_newlines.size() < kSize)
    mixed_newlines += (rng() % 3 == 0) ? "\n" : " ";
  const std::string inputs[] = {std::string(kSize, 'a'),
                                std::string(kSize, ' '),
                                mixed_newlines,
                                std::string(kSize, '7'),
                                base64,
                                std::string(kSize, 'A') + "a"};
  for (const std::string& text : inputs) {
    for (PretokenPattern pattern : kPatterns) {
      size_t pieces = 0;
      size_t total = 0;
      ForEachPiece(pattern, text, [&](std::string_view piece) {
        ++pieces;
        total += piece.size();
      });
      CHECK(total == text.size());
      CHECK(pieces > 0);
    }
  }
  CHECK(Split(PretokenPattern::kCl100k, std::string(kSize, 'a')).size() == 1);
  CHECK(Split(PretokenPattern::kCl100k, std::string(kSize, '7')).size() ==
        (kSize + 2) / 3);
}

}  // namespace
}  // namespace ctxkit::internal
