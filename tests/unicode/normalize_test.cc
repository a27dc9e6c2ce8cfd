// Tests of NFKC (lib/unicode/normalize.h): every NFKC identity of Unicode
// 16.0's NormalizationTest.txt (data/nfkc_conformance.txt, written by
// lib/unicode/generate_normalization.mjs), its Part 1 rule that every code
// point it does not list is left unchanged, hand-picked cases, the quick
// check and the no-copy view, invalid UTF-8, and a differential test of the
// segmented fast path against the whole-text algorithm.

#include "lib/unicode/normalize.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace ctxkit::internal::unicode {
namespace {

std::string Utf8(std::u32string_view cps) {
  std::string out;
  for (char32_t c : cps) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::string Hex(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    static constexpr char kDigits[] = "0123456789ABCDEF";
    if (!out.empty()) out += ' ';
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// "1E0A 323" -> UTF-8 of U+1E0A U+0323.
std::u32string ParseField(std::string_view field) {
  std::u32string out;
  std::istringstream in{std::string(field)};
  std::string word;
  while (in >> word)
    out += static_cast<char32_t>(std::stoul(word, nullptr, 16));
  return out;
}

std::vector<std::string> Split(const std::string& line, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = line.find(sep, start);
    out.push_back(line.substr(start, at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

struct Conformance {
  // Each case: the inputs (c1 and the other distinct columns) and c4.
  struct Case {
    std::vector<std::string> inputs;
    std::string expected;
    int part;
    int line;
  };
  std::vector<Case> cases;
  std::unordered_set<char32_t> part1;
};

Conformance LoadConformance() {
  Conformance data;
  std::ifstream in(CTXKIT_NFKC_CONFORMANCE, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " CTXKIT_NFKC_CONFORMANCE);
  std::string line;
  int part = -1;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("@Part", 0) == 0) {
      part = std::stoi(line.substr(5));
      continue;
    }
    const std::vector<std::string> fields = Split(line, ';');
    REQUIRE(fields.size() >= 2);
    Conformance::Case c;
    c.part = part;
    c.line = line_number;
    const std::u32string source = ParseField(fields[0]);
    c.expected = Utf8(fields[1].empty() ? source : ParseField(fields[1]));
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i == 1 && fields[i].empty()) continue;
      c.inputs.push_back(Utf8(ParseField(fields[i])));
    }
    if (part == 1) {
      REQUIRE(source.size() == 1);
      data.part1.insert(source[0]);
    }
    data.cases.push_back(std::move(c));
  }
  return data;
}

const Conformance& Data() {
  static const Conformance* const data = new Conformance(LoadConformance());
  return *data;
}

TEST_CASE("every NFKC identity of NormalizationTest.txt (Unicode 16.0)") {
  const Conformance& data = Data();
  // 19965 lines in six parts; the file says so in its header.
  CHECK(data.cases.size() == 19965);
  CHECK(data.part1.size() > 17000);
  int checked = 0;
  int failures = 0;
  int parts_seen[6] = {};
  for (const Conformance::Case& c : data.cases) {
    ++parts_seen[c.part];
    for (const std::string& input : c.inputs) {
      ++checked;
      const std::string got = NfkcNormalize(input);
      const std::string slow = NfkcNormalizeWithoutQuickCheck(input);
      std::string storage;
      const std::string_view view = NfkcNormalizeView(input, &storage);
      // A text that passes the quick check is its own NFKC.
      const bool quick_yes = IsNfkcQuickCheckYes(input);
      if (got != c.expected || slow != c.expected || view != c.expected ||
          (quick_yes && input != c.expected)) {
        if (++failures <= 20) {
          FAIL_CHECK("line " << c.line << " (part " << c.part << "): input "
                             << Hex(input) << " expected " << Hex(c.expected)
                             << " got " << Hex(got) << " / slow " << Hex(slow)
                             << " / view " << Hex(view) << " quick check "
                             << quick_yes);
        }
      }
    }
  }
  CHECK(failures == 0);
  CHECK(checked > 41000);
  for (int part = 0; part < 6; ++part) CHECK(parts_seen[part] > 0);
  MESSAGE(checked << " NFKC identities checked");
}

TEST_CASE("NFKC leaves every code point not in Part 1 unchanged") {
  const Conformance& data = Data();
  int checked = 0;
  int failures = 0;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (data.part1.count(cp) != 0) continue;
    const std::string s = Utf8(std::u32string(1, cp));
    ++checked;
    if (NfkcNormalize(s) != s && ++failures <= 20) {
      FAIL_CHECK("U+" << Hex(s) << " changed to " << Hex(NfkcNormalize(s)));
    }
  }
  CHECK(failures == 0);
  CHECK(checked > 1000000);
}

TEST_CASE("empty and ASCII") {
  CHECK(NfkcNormalize("") == "");
  CHECK(IsNfkcQuickCheckYes(""));
  std::string ascii;
  for (int i = 0; i < 1000; ++i) ascii += static_cast<char>(i % 128);
  CHECK(IsNfkcQuickCheckYes(ascii));
  CHECK(NfkcNormalize(ascii) == ascii);
  std::string storage = "untouched";
  const std::string_view view = NfkcNormalizeView(ascii, &storage);
  CHECK(view.data() == ascii.data());
  CHECK(view.size() == ascii.size());
  CHECK(storage == "untouched");
}

TEST_CASE("already-normalized text in other scripts is not copied") {
  const std::string text =
      "日本語のテキスト, 한국어 텍스트, Ελληνικά, русский, العربية, "
      "हिन्दी, café, naïve, 🎉";
  CHECK(IsNfkcQuickCheckYes(text));
  std::string storage;
  CHECK(NfkcNormalizeView(text, &storage).data() == text.data());
  CHECK(NfkcNormalize(text) == text);
}

TEST_CASE("compatibility characters") {
  CHECK(NfkcNormalize("\uFB01") == "fi");       // ligature fi
  CHECK(NfkcNormalize("\uFB03ce") == "ffice");  // ligature ffi
  CHECK(NfkcNormalize("\uFF21\uFF22\uFF23\uFF11\uFF12") ==
        "ABC12");                                    // fullwidth
  CHECK(NfkcNormalize("a\u3000b") == "a b");         // ideographic space
  CHECK(NfkcNormalize("\u00A0") == " ");             // no-break space
  CHECK(NfkcNormalize("\u210C") == "H");             // black-letter H
  CHECK(NfkcNormalize("\u212A") == "K");             // Kelvin sign
  CHECK(NfkcNormalize("\u212B") == "\u00C5");        // Angstrom sign
  CHECK(NfkcNormalize("\u017F") == "s");             // long s
  CHECK(NfkcNormalize("\u1E9B") == "\u1E61");        // long s with dot
  CHECK(NfkcNormalize("\u2460") == "1");             // circled 1
  CHECK(NfkcNormalize("\u00BD") == "1\u20442");      // one half
  CHECK(NfkcNormalize("x\u00B2") == "x2");           // superscript 2
  CHECK(NfkcNormalize("\u2026") == "...");           // ellipsis
  CHECK(NfkcNormalize("\u338F") == "kg");            // square kg
  CHECK(NfkcNormalize("\uFF76\uFF9E") == "\u30AC");  // halfwidth ga
  CHECK(NfkcNormalize("\u0958") == "\u0915\u093C");  // excluded
  CHECK(NfkcNormalize("\uFDFA").size() > 30);        // 18 letters
  CHECK_FALSE(IsNfkcQuickCheckYes("\uFB01"));
  CHECK_FALSE(IsNfkcQuickCheckYes("abc\u212A"));
}

TEST_CASE("composition and canonical order") {
  CHECK(NfkcNormalize("Cafe\u0301") == "Caf\u00E9");
  CHECK(NfkcNormalize("e\u0301\u0301") == "\u00E9\u0301");
  // dot below (220) sorts before acute (230), then both compose.
  CHECK(NfkcNormalize("s\u0307\u0323") == "\u1E69");
  CHECK(NfkcNormalize("\u1E0A\u0323") == "\u1E0C\u0307");
  // A precomposed letter passes the quick check but decomposes when a mark
  // that sorts before its own follows.
  CHECK(NfkcNormalize("\u00C0\u0323") == "\u1EA0\u0300");
  // Marks in order but not composable stay; out of order they are sorted.
  CHECK(NfkcNormalize("x\u0591\u05AE") == "x\u0591\u05AE");
  CHECK(NfkcNormalize("x\u05AE\u0591") == "x\u0591\u05AE");
  CHECK_FALSE(IsNfkcQuickCheckYes("x\u05AE\u0591"));
  // A leading mark has no starter to compose with.
  CHECK(NfkcNormalize("\u0301e") == "\u0301e");
}

TEST_CASE("Hangul") {
  CHECK(NfkcNormalize("\u1100\u1161") == "\uAC00");
  CHECK(NfkcNormalize("\u1100\u1161\u11A8") == "\uAC01");
  CHECK(NfkcNormalize("\uAC00\u11A8") == "\uAC01");
  CHECK(NfkcNormalize("\uAC01\u11A8") == "\uAC01\u11A8");  // LVT + T stays
  CHECK(NfkcNormalize("\uAC00\u11A7") == "\uAC00\u11A7");  // U+11A7 is no T
  CHECK(NfkcNormalize("\u3131\u314F") == "\uAC00");        // compatibility jamo
  CHECK(NfkcNormalize("\uFFA1") == "\u1100");              // halfwidth jamo
  CHECK(NfkcNormalize("\uD7A3") == "\uD7A3");
  CHECK(IsNfkcQuickCheckYes("\uAC00\uD7A3"));
  CHECK_FALSE(IsNfkcQuickCheckYes("\u1100\u1161"));
}

TEST_CASE("long runs of combining marks are reordered as a whole") {
  // 40 pairs of acute (230) and grave below (220): no Stream-Safe limit.
  std::u32string in = U"a";
  for (int i = 0; i < 40; ++i) in += U"\u0301\u0316";
  std::u32string want = U"\u00E1";
  want += std::u32string(40, U'\u0316');
  want += std::u32string(39, U'\u0301');
  CHECK(NfkcNormalize(Utf8(in)) == Utf8(want));
  CHECK(NfkcNormalizeWithoutQuickCheck(Utf8(in)) == Utf8(want));
  // Long run already in order: unchanged, and the quick check says so.
  std::u32string ordered = U"x";
  ordered += std::u32string(50, U'\u0316');
  ordered += std::u32string(50, U'\u0591');  // 220 too, not composable
  CHECK(IsNfkcQuickCheckYes(Utf8(ordered)));
  CHECK(NfkcNormalize(Utf8(ordered)) == Utf8(ordered));
  // 100 000 marks in one segment stay linear (stable_sort).
  std::u32string many = U"o";
  for (int i = 0; i < 50000; ++i) many += U"\u0308\u0323";
  const std::string out = NfkcNormalize(Utf8(many));
  CHECK(out.rfind("\u1ECD", 0) == 0);  // o + dot below
}

TEST_CASE("the view points into storage only when something changed") {
  const std::string text = "plain text, then \uFB01 and more plain text";
  std::string storage;
  const std::string_view view = NfkcNormalizeView(text, &storage);
  CHECK(view == "plain text, then fi and more plain text");
  CHECK(view.data() == storage.data());
}

TEST_CASE("invalid UTF-8 passes through and separates its neighbours") {
  CHECK(NfkcNormalize("\xFF") == "\xFF");
  CHECK(NfkcNormalize("a\xC0\x80z") == "a\xC0\x80z");      // overlong
  CHECK(NfkcNormalize("\xED\xA0\x80") == "\xED\xA0\x80");  // surrogate
  CHECK(NfkcNormalize("x\xE2\x82") == "x\xE2\x82");        // truncated
  CHECK(NfkcNormalize("\xF0\x9F\x98") == "\xF0\x9F\x98");  // truncated
  // Nothing composes across an invalid byte, and text around it still
  // normalizes.
  CHECK(NfkcNormalize("e\xFF\u0301") == "e\xFF\u0301");
  CHECK(NfkcNormalize("\uFB01\xFF\uFB01") ==
        "fi\xFF"
        "fi");
  CHECK(NfkcNormalize("e\u0301\x80") == "\u00E9\x80");
  CHECK(IsNfkcQuickCheckYes("abc\xFF"));
}

// Random texts over characters that exercise every path: boundaries,
// compatibility characters, marks that compose, sort or do neither, Hangul
// jamo and syllables, Unicode 16 compositions. The segmented fast path must
// agree with the whole-text algorithm, NFKC must be idempotent, and a line
// feed (a starter that composes with nothing) must split the result.
TEST_CASE("segmented normalization equals the whole-text algorithm") {
  const std::u32string alphabet =
      U"aeosAEK \n.1\u00C0\u00E9\u00C5\u212B\u212A\u017F\uFB01\uFF21\u3000"
      U"\u0300\u0301\u0308\u0316\u0323\u0327\u0591\u05AE\u0345\u0344\u0F73"
      U"\u1100\u1161\u11A8\uAC00\uAC01\u3131\uFFA1\u1E0A\u1E9B\u0958\u093C"
      U"\U000113C2\U000113B8\U000113C5\u00A8\u0385\u1FEE\u4E00\u3099\u304B"
      U"\uFF76\uFF9E";
  std::mt19937 rng(20240915);
  int failures = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    const int length = 1 + static_cast<int>(rng() % 24);
    std::u32string cps;
    for (int i = 0; i < length; ++i) cps += alphabet[rng() % alphabet.size()];
    const std::string text = Utf8(cps);
    const std::string fast = NfkcNormalize(text);
    const std::string slow = NfkcNormalizeWithoutQuickCheck(text);
    const bool ok = fast == slow && NfkcNormalize(fast) == fast &&
                    (!IsNfkcQuickCheckYes(text) || fast == text);
    const size_t lf = text.find('\n');
    const bool split_ok = lf == std::string::npos ||
                          fast == NfkcNormalize(text.substr(0, lf)) + "\n" +
                                      NfkcNormalize(text.substr(lf + 1));
    if ((!ok || !split_ok) && ++failures <= 10) {
      FAIL_CHECK("input " << Hex(text) << " fast " << Hex(fast) << " slow "
                          << Hex(slow));
    }
  }
  CHECK(failures == 0);
}

// The stretches NfkcNormalizeView reports let callers map output offsets
// back: at every character boundary outside them, and at their ends, NFKC of
// the input prefix is the output prefix.
TEST_CASE("stretches line the output up with the input") {
  std::string storage;
  std::vector<NfkcStretch> stretches = {{1, 2, 3, 4}};
  CHECK(NfkcNormalizeView("plain", &storage, &stretches) == "plain");
  CHECK(stretches.empty());
  const std::string text = "ab \uFB01x e\u0301 \u212Ay";
  const std::string_view out = NfkcNormalizeView(text, &storage, &stretches);
  CHECK(out == "ab fix \u00E9 Ky");
  REQUIRE(stretches.size() == 3);
  CHECK(stretches[0].input_begin == 3);  // the ligature alone
  CHECK(stretches[0].output_end - stretches[0].output_begin == 2);  // "fi"

  const std::u32string alphabet =
      U"ab \n\u00C0\u0300\u0301\u0316\u0323\uFB01\u212A\u1100\u1161\uAC00"
      U"\u11A8\u3000\u00BD\u0958\u4E00";
  std::mt19937 rng(7);
  int failures = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::u32string cps;
    for (int i = 1 + static_cast<int>(rng() % 16); i > 0; --i) {
      cps += alphabet[rng() % alphabet.size()];
    }
    const std::string in = Utf8(cps);
    const std::string normalized(NfkcNormalizeView(in, &storage, &stretches));
    size_t s = 0;
    for (size_t p = 0; p <= in.size(); ++p) {
      if (p < in.size() && (static_cast<unsigned char>(in[p]) & 0xC0) == 0x80) {
        continue;
      }
      while (s < stretches.size() && stretches[s].input_end < p) ++s;
      size_t mapped;
      if (s < stretches.size() && p > stretches[s].input_begin &&
          p < stretches[s].input_end) {
        continue;  // inside a stretch: no promise
      } else if (s < stretches.size() && p == stretches[s].input_end) {
        mapped = stretches[s].output_end;
      } else if (s == 0) {
        mapped = p;
      } else {
        mapped = p - stretches[s - 1].input_end + stretches[s - 1].output_end;
      }
      if (NfkcNormalize(in.substr(0, p)) != normalized.substr(0, mapped) &&
          ++failures <= 10) {
        FAIL_CHECK("input " << Hex(in) << " cut at " << p);
      }
    }
  }
  CHECK(failures == 0);
}

}  // namespace
}  // namespace ctxkit::internal::unicode
