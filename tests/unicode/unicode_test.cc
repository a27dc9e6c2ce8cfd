// Tests of the Unicode 16.0 property tables and helpers (lib/unicode): spot
// checks of each class at the characters the tokenizer patterns care about,
// whole-table invariants and counts (which the generator printed from the
// Unicode data), case folding, and the UTF-8 decoder over every code point.

#include "lib/unicode/unicode.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace ctxkit::internal::unicode {
namespace {

constexpr uint32_t kGeneralBits = kLu | kLl | kLt | kLm | kLo | kM | kN;

TEST_CASE("letters, by category") {
  CHECK(Classes(U'A') == (kLu | kL));
  CHECK(Classes(U'z') == (kLl | kL));
  CHECK(Classes(0x00C9) == (kLu | kL));   // É
  CHECK(Classes(0x00DF) == (kLl | kL));   // ß
  CHECK(Classes(0x01C5) == (kLt | kL));   // ǅ
  CHECK(Classes(0x1F88) == (kLt | kL));   // ᾈ
  CHECK(Classes(0x02B0) == (kLm | kL));   // ʰ
  CHECK(Classes(0x3005) == (kLm | kL));   // 々
  CHECK(Classes(0x4E00) == (kLo | kL));   // CJK 一
  CHECK(Classes(0x20000) == (kLo | kL));  // CJK extension B
  CHECK(Classes(0x0627) == (kLo | kL));   // Arabic alef
  CHECK(Classes(0x0915) == (kLo | kL));   // Devanagari ka
  CHECK(Classes(0xAC00) == (kLo | kL));   // Hangul syllable
  CHECK(Classes(0x00AA) == (kLo | kL));   // ª is Lo since Unicode 6.1
}

TEST_CASE("marks and numbers") {
  CHECK(Classes(0x0301) == kM);   // combining acute (Mn)
  CHECK(Classes(0x0903) == kM);   // Devanagari visarga (Mc)
  CHECK(Classes(0x093F) == kM);   // Devanagari vowel sign i (Mc)
  CHECK(Classes(0x064E) == kM);   // Arabic fatha
  CHECK(Classes(0x20DD) == kM);   // combining enclosing circle (Me)
  CHECK(Classes(0xFE0F) == kM);   // variation selector 16
  CHECK(Classes(0xE0100) == kM);  // variation selector 17
  CHECK(Classes(U'0') == kN);
  CHECK(Classes(U'9') == kN);
  CHECK(Classes(0x0660) == kN);   // Arabic-Indic zero (Nd)
  CHECK(Classes(0x0966) == kN);   // Devanagari zero
  CHECK(Classes(0x2167) == kN);   // Roman numeral eight (Nl)
  CHECK(Classes(0x00BD) == kN);   // ½ (No)
  CHECK(Classes(0x00B2) == kN);   // ² (No)
  CHECK(Classes(0x3007) == kN);   // 〇 (Nl)
  CHECK(Classes(0x1D7CE) == kN);  // mathematical bold zero
}

TEST_CASE("White_Space is \\s of the patterns") {
  for (char32_t cp : {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680,
                      0x2000, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000}) {
    CAPTURE(static_cast<uint32_t>(cp));
    CHECK(Classes(cp) == kWhiteSpace);
    CHECK(IsWhiteSpace(cp));
  }
  // Not White_Space, though some regex engines' \s include them.
  for (char32_t cp : {0x1C, 0x1F, 0xFEFF, 0x200B, 0x180E, 0x2060, 0x00AD}) {
    CAPTURE(static_cast<uint32_t>(cp));
    CHECK(Classes(cp) == 0);
  }
  int count = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) count += IsWhiteSpace(cp) ? 1 : 0;
  CHECK(count == 25);
}

TEST_CASE("punctuation, symbols, emoji and format characters are in no class") {
  for (char32_t cp : {U'!', U'\'', U'/', U'_', U'~', U'\0', U'\x7f',
                      char32_t{0x00A9}, char32_t{0x2019}, char32_t{0x3002},
                      char32_t{0x1F600}, char32_t{0x1F468}, char32_t{0x200D},
                      char32_t{0x1F3FB}, char32_t{0x20AC}}) {
    CAPTURE(static_cast<uint32_t>(cp));
    CHECK(Classes(cp) == 0);
  }
}

TEST_CASE("characters new in Unicode 16.0") {
  CHECK(Classes(0x10D50) == (kLu | kL));  // Garay capital letter
  CHECK(Classes(0x10D70) == (kLl | kL));  // Garay small letter
  CHECK(Classes(0x10D4A) == (kLo | kL));  // Garay letter
  CHECK(Classes(0x10D40) == kN);          // Garay digit zero
  CHECK(Classes(0x10D69) == kM);          // Garay vowel sign
  CHECK(Classes(0x105C0) == (kLo | kL));  // Todhri letter
  CHECK(Classes(0x1C89) == (kLu | kL));   // Cyrillic capital tje
  CHECK(Classes(0x1C8A) == (kLl | kL));   // Cyrillic small tje
}

TEST_CASE("unassigned, private use, surrogates and out of range") {
  CHECK(Classes(0x0378) == 0);    // unassigned
  CHECK(Classes(0x10FFFF) == 0);  // noncharacter
  CHECK(Classes(0xFFFE) == 0);
  CHECK(Classes(0xE000) == 0);  // private use
  CHECK(Classes(0xF0000) == 0);
  CHECK(Classes(0x2FFFF) == 0);
  for (char32_t cp = 0xD800; cp <= 0xDFFF; ++cp) CHECK(Classes(cp) == 0);
  CHECK(Classes(0x110000) == 0);
  CHECK(Classes(0xFFFFFFFF) == 0);
}

TEST_CASE("whole table: at most one class, kL derived, counts from the data") {
  int lu = 0, ll = 0, lt = 0, lm = 0, lo = 0, m = 0, n = 0, letters = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    const uint32_t c = Classes(cp);
    const uint32_t general = c & (kGeneralBits | kWhiteSpace);
    REQUIRE((general & (general - 1)) == 0);
    REQUIRE(((c & kL) != 0) == ((c & kLetterBits) != 0));
    REQUIRE((c & ~(kGeneralBits | kWhiteSpace | kL)) == 0);
    lu += (c & kLu) ? 1 : 0;
    ll += (c & kLl) ? 1 : 0;
    lt += (c & kLt) ? 1 : 0;
    lm += (c & kLm) ? 1 : 0;
    lo += (c & kLo) ? 1 : 0;
    m += (c & kM) ? 1 : 0;
    n += (c & kN) ? 1 : 0;
    letters += IsLetter(cp) ? 1 : 0;
  }
  // The counts generate_tables.mjs wrote in unicode_tables.inc.
  CHECK(lu == 1858);
  CHECK(ll == 2258);
  CHECK(lt == 31);
  CHECK(lm == 404);
  CHECK(lo == 136477);
  CHECK(m == 2501);
  CHECK(n == 1911);
  CHECK(letters == lu + ll + lt + lm + lo);
}

TEST_CASE("simple case folding to ASCII letters") {
  for (char c = 'a'; c <= 'z'; ++c) {
    CHECK(FoldsToAsciiLetter(static_cast<char32_t>(c), c));
    CHECK(FoldsToAsciiLetter(static_cast<char32_t>(c - 'a' + 'A'), c));
  }
  CHECK(FoldsToAsciiLetter(0x017F, 's'));  // ſ
  CHECK(FoldsToAsciiLetter(0x212A, 'k'));  // Kelvin sign
  CHECK_FALSE(FoldsToAsciiLetter(0x212A, 's'));
  CHECK_FALSE(FoldsToAsciiLetter(0x017F, 't'));
  CHECK_FALSE(FoldsToAsciiLetter(0x0130, 'i'));  // İ folds only under F/T
  CHECK_FALSE(FoldsToAsciiLetter(0x0131, 'i'));  // ı has no folding
  CHECK_FALSE(
      FoldsToAsciiLetter(0xFF33, 's'));  // fullwidth S folds to fullwidth s
  CHECK_FALSE(FoldsToAsciiLetter(U's', 't'));
  for (char c = 'a'; c <= 'z'; ++c) {
    for (char32_t other : {U'[', U'@', U'`', U'{', U'0', U' ', U'\x7f'}) {
      CHECK_FALSE(FoldsToAsciiLetter(other, c));
    }
  }
  int extras = 0;
  for (char32_t cp = 0x80; cp < 0x110000; ++cp) {
    for (char c = 'a'; c <= 'z'; ++c)
      extras += FoldsToAsciiLetter(cp, c) ? 1 : 0;
  }
  CHECK(extras == 2);
}

std::string Encode(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

TEST_CASE("DecodeUtf8 decodes every scalar value") {
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string s = "x" + Encode(cp) + "y";
    const Utf8Char c = DecodeUtf8(s, 1);
    REQUIRE(c.code_point == cp);
    REQUIRE(c.length == s.size() - 2);
    REQUIRE(Utf8Length(static_cast<unsigned char>(s[1])) == c.length);
  }
}

}  // namespace
}  // namespace ctxkit::internal::unicode
