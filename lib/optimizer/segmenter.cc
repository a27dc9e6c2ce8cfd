#include "lib/optimizer/segmenter.h"

#include <cstddef>

#include "absl/strings/ascii.h"

namespace ctxkit::internal {
namespace {

constexpr std::string_view kLeftDoubleQuote = "\xE2\x80\x9C";   // U+201C
constexpr std::string_view kRightDoubleQuote = "\xE2\x80\x9D";  // U+201D
constexpr std::string_view kLeftSingleQuote = "\xE2\x80\x98";   // U+2018
constexpr std::string_view kRightSingleQuote = "\xE2\x80\x99";  // U+2019
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";          // U+2026

bool IsOpener(char c) { return c == '(' || c == '[' || c == '{' || c == '<'; }
bool IsTrailingPunct(char c) {
  switch (c) {
    case '.':
    case ',':
    case '!':
    case '?':
    case ';':
    case ':':
    case ')':
    case ']':
    case '}':
    case '>':
      return true;
    default:
      return false;
  }
}
bool At(std::string_view s, size_t i, std::string_view what) {
  return s.substr(i, what.size()) == what;
}
// A character that continues a word after a closing-quote candidate: then
// the quote is an apostrophe or a possessive, not the end of a quotation.
// Non-ASCII bytes count as letters, which errs towards not protecting.
bool ContinuesWord(std::string_view s, size_t i) {
  if (i >= s.size()) return false;
  const unsigned char c = static_cast<unsigned char>(s[i]);
  return absl::ascii_isalnum(c) || c == '_' || c >= 0x80;
}
bool AtWordStart(std::string_view s, size_t i) {
  return i == 0 || absl::ascii_isspace(s[i - 1]) || IsOpener(s[i - 1]);
}

// Length of a URL's scheme part ("https://", "www.", "mailto:") at i, or 0.
size_t UrlPrefix(std::string_view s, size_t i) {
  auto lower_at = [&](size_t k, std::string_view what) {
    if (k + what.size() > s.size()) return false;
    for (size_t m = 0; m < what.size(); ++m) {
      if (absl::ascii_tolower(s[k + m]) != what[m]) return false;
    }
    return true;
  };
  if (lower_at(i, "www.")) return 4;
  if (lower_at(i, "mailto:")) return 7;
  if (i >= s.size() || !absl::ascii_isalpha(s[i])) return 0;
  size_t k = i + 1;
  while (k < s.size() && (absl::ascii_isalnum(s[k]) || s[k] == '+' ||
                          s[k] == '.' || s[k] == '-')) {
    ++k;
  }
  if (At(s, k, "://")) return k + 3 - i;
  return 0;
}

// End (exclusive) of a single-quoted span opened by `open_len` bytes at i,
// or npos when no closing quote ends a word.
size_t SingleQuoteEnd(std::string_view s, size_t i, size_t open_len,
                      std::string_view close) {
  size_t from = i + open_len;
  while (true) {
    const size_t j = s.find(close, from);
    if (j == std::string_view::npos) return j;
    if (j > i + open_len && !absl::ascii_isspace(s[j - 1]) &&
        !ContinuesWord(s, j + close.size())) {
      return j + close.size();
    }
    from = j + 1;
  }
}

}  // namespace

std::string WordKey(std::string_view word) {
  std::string key;
  key.reserve(word.size());
  for (size_t i = 0; i < word.size();) {
    const char c = word[i];
    if (absl::ascii_isalpha(c)) {
      key.push_back(absl::ascii_tolower(c));
      ++i;
    } else if (c == '\'') {
      key.push_back('\'');
      ++i;
    } else if (At(word, i, kRightSingleQuote)) {
      key.push_back('\'');
      i += kRightSingleQuote.size();
    } else {
      return std::string();
    }
  }
  return key;
}

bool IsPlainLowercaseWord(std::string_view word) {
  if (word.empty() || !(word[0] >= 'a' && word[0] <= 'z')) return false;
  for (char c : word) {
    if (!((c >= 'a' && c <= 'z') || c == '\'' || c == '-')) return false;
  }
  return true;
}

std::string JoinTokens(const std::vector<TextToken>& tokens) {
  std::string out;
  for (const TextToken& t : tokens) out += t.text;
  return out;
}

std::vector<TextToken> Segment(std::string_view s) {
  std::vector<TextToken> tokens;
  auto emit = [&](TextTokenKind kind, size_t begin, size_t end) {
    TextToken t;
    t.kind = kind;
    t.text = std::string(s.substr(begin, end - begin));
    if (kind == TextTokenKind::kWord) t.key = WordKey(t.text);
    tokens.push_back(std::move(t));
  };
  // Emits s[begin, end) as a word or protected span of `kind`, with its
  // trailing sentence punctuation split off as punctuation tokens.
  auto emit_peeled = [&](TextTokenKind kind, size_t begin, size_t end) {
    size_t core_end = end;
    while (core_end > begin) {
      if (IsTrailingPunct(s[core_end - 1])) {
        --core_end;
      } else if (core_end - begin >= kEllipsis.size() &&
                 At(s, core_end - kEllipsis.size(), kEllipsis)) {
        core_end -= kEllipsis.size();
      } else {
        break;
      }
    }
    if (core_end > begin) emit(kind, begin, core_end);
    for (size_t k = core_end; k < end;) {
      const size_t len = At(s, k, kEllipsis) ? kEllipsis.size() : 1;
      emit(TextTokenKind::kPunct, k, k + len);
      k += len;
    }
  };

  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const char c = s[i];
    if (absl::ascii_isspace(c)) {
      size_t j = i;
      while (j < n && absl::ascii_isspace(s[j])) ++j;
      emit(TextTokenKind::kSpace, i, j);
      i = j;
      continue;
    }
    if (At(s, i, "```")) {
      const size_t close = s.find("```", i + 3);
      const size_t end = close == std::string_view::npos ? n : close + 3;
      emit(TextTokenKind::kProtected, i, end);
      i = end;
      continue;
    }
    if (c == '`') {
      size_t run = 0;
      while (i + run < n && s[i + run] == '`') ++run;
      size_t end = n;
      for (size_t k = i + run; k < n;) {
        if (s[k] != '`') {
          ++k;
          continue;
        }
        size_t r = 0;
        while (k + r < n && s[k + r] == '`') ++r;
        if (r == run) {
          end = k + r;
          break;
        }
        k += r;
      }
      emit(TextTokenKind::kProtected, i, end);
      i = end;
      continue;
    }
    if (c == '"') {
      const size_t close = s.find('"', i + 1);
      const size_t end = close == std::string_view::npos ? n : close + 1;
      emit(TextTokenKind::kProtected, i, end);
      i = end;
      continue;
    }
    if (At(s, i, kLeftDoubleQuote)) {
      const size_t close =
          s.find(kRightDoubleQuote, i + kLeftDoubleQuote.size());
      const size_t end = close == std::string_view::npos
                             ? n
                             : close + kRightDoubleQuote.size();
      emit(TextTokenKind::kProtected, i, end);
      i = end;
      continue;
    }
    if (AtWordStart(s, i)) {
      size_t end = std::string_view::npos;
      if (c == '\'') {
        end = SingleQuoteEnd(s, i, 1, "'");
      } else if (At(s, i, kLeftSingleQuote)) {
        end = SingleQuoteEnd(s, i, kLeftSingleQuote.size(), kRightSingleQuote);
      }
      if (end != std::string_view::npos) {
        emit(TextTokenKind::kProtected, i, end);
        i = end;
        continue;
      }
      if (IsOpener(c)) {
        emit(TextTokenKind::kPunct, i, i + 1);
        ++i;
        continue;
      }
      if (UrlPrefix(s, i) > 0) {
        size_t j = i;
        while (j < n && !absl::ascii_isspace(s[j])) ++j;
        emit_peeled(TextTokenKind::kProtected, i, j);
        i = j;
        continue;
      }
    }
    // A word: up to whitespace or the start of a code span or double quote.
    size_t j = i;
    while (j < n && !absl::ascii_isspace(s[j]) && s[j] != '`' && s[j] != '"' &&
           !At(s, j, kLeftDoubleQuote)) {
      ++j;
    }
    if (j == i) ++j;  // unreachable: s[i] starts none of the above
    emit_peeled(TextTokenKind::kWord, i, j);
    i = j;
  }
  return tokens;
}

}  // namespace ctxkit::internal
