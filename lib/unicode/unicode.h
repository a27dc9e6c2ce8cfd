// Unicode 16.0 character properties for the tokenizer's pre-tokenization
// patterns, and a UTF-8 decoder for text that is already known to be valid.
//
// The patterns of the BPE encodings (tiktoken's cl100k_base, o200k_base, ...)
// classify characters by general category (\p{L}, \p{Lu}, \p{N}, \p{M}, ...)
// and by \s, which in those regex engines is the Unicode White_Space property
// (U+0085 is white space, U+FEFF and U+200B are not). The tables are generated
// from the Unicode Character Database by lib/unicode/generate_tables.mjs;
// code points unassigned in Unicode 16.0, surrogates and private-use
// characters belong to no class.
//
// Thread safety: everything here is pure and reads only constant tables.

#ifndef CTXKIT_LIB_UNICODE_UNICODE_H_
#define CTXKIT_LIB_UNICODE_UNICODE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ctxkit::internal::unicode {

inline constexpr char kUnicodeVersion[] = "16.0.0";

// Class bits returned by Classes(). A code point has at most one of the
// general-category bits kLu..kN or kWhiteSpace (White_Space characters are
// all separators or controls), plus kL whenever it has one of the five letter
// bits.
inline constexpr uint32_t kLu = 1u << 0;          // Uppercase_Letter
inline constexpr uint32_t kLl = 1u << 1;          // Lowercase_Letter
inline constexpr uint32_t kLt = 1u << 2;          // Titlecase_Letter
inline constexpr uint32_t kLm = 1u << 3;          // Modifier_Letter
inline constexpr uint32_t kLo = 1u << 4;          // Other_Letter
inline constexpr uint32_t kM = 1u << 5;           // Mark (Mn, Mc, Me)
inline constexpr uint32_t kN = 1u << 6;           // Number (Nd, Nl, No)
inline constexpr uint32_t kWhiteSpace = 1u << 7;  // White_Space property
inline constexpr uint32_t kL = 1u << 8;           // Letter (any of the five)

inline constexpr uint32_t kLetterBits = kLu | kLl | kLt | kLm | kLo;

// The generated two-stage table (lib/unicode/unicode_tables.inc). Its values
// hold the bits kLu..kWhiteSpace; kL is derived. Use Classes() instead.
inline constexpr int kClassBlockShift = 7;
extern const uint8_t kClassStage1[0x110000 >> kClassBlockShift];
extern const uint8_t kClassStage2[];

// Returns the class bits of `cp`: 0 for code points in no class (symbols,
// punctuation, controls other than white space, unassigned, surrogates,
// private use) and for values above U+10FFFF.
inline uint32_t Classes(char32_t cp) {
  if (cp >= 0x110000) return 0;
  const uint32_t v =
      kClassStage2[(static_cast<uint32_t>(kClassStage1[cp >> kClassBlockShift])
                    << kClassBlockShift) |
                   (cp & ((1u << kClassBlockShift) - 1))];
  return v | ((v & kLetterBits) != 0 ? kL : 0);
}

inline bool IsLetter(char32_t cp) { return (Classes(cp) & kL) != 0; }
inline bool IsNumber(char32_t cp) { return (Classes(cp) & kN) != 0; }
inline bool IsMark(char32_t cp) { return (Classes(cp) & kM) != 0; }
inline bool IsWhiteSpace(char32_t cp) {
  return (Classes(cp) & kWhiteSpace) != 0;
}

// Returns whether `cp` is equivalent to the ASCII letter `lower` under simple
// case folding (Case_Folding statuses C and S), as a regex's (?i:...) matches
// it: for 's' that is s, S and U+017F LATIN SMALL LETTER LONG S; for 'k' it is
// k, K and U+212A KELVIN SIGN. Precondition: 'a' <= lower <= 'z'.
bool FoldsToAsciiLetter(char32_t cp, char lower);

// One decoded character: its code point and its length in bytes (1..4).
struct Utf8Char {
  char32_t code_point;
  uint32_t length;
};

// Decodes the character whose first byte `p` points to. Precondition (not
// checked): p points into valid UTF-8 (see lib/json/utf8.h) at the first byte
// of a character. Reads only that character's bytes.
inline Utf8Char DecodeUtf8(const unsigned char* p) {
  const uint32_t b0 = p[0];
  if (b0 < 0x80) return {b0, 1};
  if (b0 < 0xE0) return {((b0 & 0x1F) << 6) | (p[1] & 0x3F), 2};
  if (b0 < 0xF0) {
    return {((b0 & 0x0F) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3F), 3};
  }
  return {((b0 & 0x07) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
              (p[3] & 0x3F),
          4};
}

// Decodes the character starting at byte `pos` of `text`. Preconditions (not
// checked): `text` is valid UTF-8, pos < text.size(), and `pos` is the first
// byte of a character.
inline Utf8Char DecodeUtf8(std::string_view text, size_t pos) {
  return DecodeUtf8(reinterpret_cast<const unsigned char*>(text.data()) + pos);
}

// Returns the length in bytes of the character whose first byte is `lead`,
// for valid UTF-8.
inline uint32_t Utf8Length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

}  // namespace ctxkit::internal::unicode

#endif  // CTXKIT_LIB_UNICODE_UNICODE_H_
