// Byte-level text helpers of the span digests (summary.h), shared by
// summary.cc, summary_keywords.cc and call_arguments.cc. They read ASCII:
// any other byte is neither a letter, a digit nor a space, so UTF-8 text
// passes through them unchanged.
//
// Thread safety: pure functions.

#ifndef CTXKIT_LIB_COMPACTOR_SUMMARY_TEXT_H_
#define CTXKIT_LIB_COMPACTOR_SUMMARY_TEXT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lib/compactor/ascii.h"

namespace ctxkit::internal {
namespace summary_text {

// One table lookup a byte: the scanner asks these of every byte it reads.
enum CharClass : uint8_t { kOther = 0, kSpace = 1, kWord = 2 };
constexpr std::array<uint8_t, 256> MakeCharClasses() {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
      classes[c] = kSpace;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c >= '0' && c <= '9') || c == '_') {
      classes[c] = kWord;
    }
  }
  return classes;
}
inline constexpr std::array<uint8_t, 256> kCharClasses = MakeCharClasses();

}  // namespace summary_text

// Space, tab, CR, VT or FF; not a line break, which ends a line instead.
inline bool IsAsciiSpace(char c) {
  return summary_text::kCharClasses[static_cast<unsigned char>(c)] ==
         summary_text::kSpace;
}
// [A-Za-z0-9_].
inline bool IsWordChar(char c) {
  return summary_text::kCharClasses[static_cast<unsigned char>(c)] ==
         summary_text::kWord;
}
inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAlpha(char c) { return IsLower(c) || IsUpper(c); }
// A character of a file path: a word character or one of ".", "/", "-",
// "~", "+", "@".
inline bool IsPathChar(char c) {
  return IsWordChar(c) || c == '.' || c == '/' || c == '-' || c == '~' ||
         c == '+' || c == '@';
}

inline bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}
// ASCII case-insensitive; `lower` is lowercase.
inline bool EqualsNoCase(std::string_view s, std::string_view lower) {
  return s.size() == lower.size() && StartsWithNoCase(s, lower);
}

// `s` without leading and trailing spaces and line breaks.
std::string_view TrimSpace(std::string_view s);

// The longest prefix of `s` of at most `max` bytes that does not split a
// UTF-8 sequence (for valid UTF-8 input).
std::string_view CutUtf8(std::string_view s, size_t max);

// `raw` as one display item: control characters and runs of whitespace
// become one space, trimmed, at most `max` bytes (cut at a UTF-8 boundary,
// then "..." so the reader sees the cut).
std::string MakeItem(std::string_view raw, size_t max);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_SUMMARY_TEXT_H_
