// ASCII case and white-space helpers shared by the compactor's text rules
// (markers, plans, commands, protected lines), over absl/strings/ascii.h's
// per-byte ones. They compare bytes; non-ASCII bytes only ever equal
// themselves.
//
// Thread safety: pure functions.

#ifndef CTXKIT_LIB_COMPACTOR_ASCII_H_
#define CTXKIT_LIB_COMPACTOR_ASCII_H_

#include <cstddef>
#include <string_view>

#include "absl/strings/ascii.h"

namespace ctxkit::internal {

// Whether `s` starts with `lower_prefix` (given in lower case), ASCII case
// ignored.
inline bool StartsWithNoCase(std::string_view s,
                             std::string_view lower_prefix) {
  if (s.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (absl::ascii_tolower(s[i]) != lower_prefix[i]) return false;
  }
  return true;
}

// Whether `hay` contains `lower_needle` (given in lower case), ASCII case
// ignored.
inline bool ContainsNoCase(std::string_view hay,
                           std::string_view lower_needle) {
  if (lower_needle.empty()) return true;
  for (size_t i = 0; i + lower_needle.size() <= hay.size(); ++i) {
    if (StartsWithNoCase(hay.substr(i), lower_needle)) return true;
  }
  return false;
}

inline bool IsAsciiBlankChar(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

// The size of `s` without its leading and trailing spaces, tabs and line
// breaks.
inline size_t TrimmedSize(std::string_view s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && IsAsciiBlankChar(s[begin])) ++begin;
  while (end > begin && IsAsciiBlankChar(s[end - 1])) --end;
  return end - begin;
}

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_ASCII_H_
