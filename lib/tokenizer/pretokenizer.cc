#include "lib/tokenizer/pretokenizer.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "lib/unicode/unicode.h"

// How the scanners stay linear: each regex alternative is resolved by one
// forward scan of a maximal run of some class, after which the backtracking
// outcome is known without re-reading the run (see each function). A scan
// may look past the piece it returns, but only over text that the next one or
// two pieces consume whole, so every byte is read a bounded number of times.

namespace ctxkit::internal {
namespace {

namespace u = ::ctxkit::internal::unicode;

// Private class bit for '\r' and '\n', the characters that [^\r\n\p{L}\p{N}]
// and [\r\n]+ single out of \s.
constexpr uint32_t kCrLf = 1u << 9;
constexpr uint32_t kLetterNumberSpace = u::kL | u::kN | u::kWhiteSpace;
// o200k's two letter groups: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] ("upper") and
// [\p{Ll}\p{Lm}\p{Lo}\p{M}] ("lower"); Lm, Lo and M are in both.
constexpr uint32_t kUpper = u::kLu | u::kLt | u::kLm | u::kLo | u::kM;
constexpr uint32_t kLower = u::kLl | u::kLm | u::kLo | u::kM;
constexpr uint32_t kBoth = kUpper & kLower;

// Classes of the ASCII characters, so that the common case needs no table
// walk (pretokenizer_data/cases.txt tries every ASCII character in context).
constexpr std::array<uint16_t, 128> kAsciiClasses = [] {
  std::array<uint16_t, 128> t{};
  for (int c = 0; c < 128; ++c) {
    uint32_t v = 0;
    if (c >= 'A' && c <= 'Z') v = u::kLu | u::kL;
    if (c >= 'a' && c <= 'z') v = u::kLl | u::kL;
    if (c >= '0' && c <= '9') v = u::kN;
    if ((c >= '\t' && c <= '\r') || c == ' ') v = u::kWhiteSpace;
    if (c == '\r' || c == '\n') v |= kCrLf;
    t[c] = static_cast<uint16_t>(v);
  }
  return t;
}();

struct Char {
  uint32_t classes;
  uint32_t length;
};

// The character at byte `i` (a character boundary, i < text size).
inline Char At(const unsigned char* s, size_t i) {
  if (s[i] < 0x80) return {kAsciiClasses[s[i]], 1};
  const u::Utf8Char c = u::DecodeUtf8(s + i);
  return {u::Classes(c.code_point), c.length};
}

// End of the maximal run from `i` of characters with a class in `mask`.
inline size_t Run(const unsigned char* s, size_t n, size_t i, uint32_t mask) {
  while (i < n) {
    if (s[i] < 0x80) {
      if ((kAsciiClasses[s[i]] & mask) == 0) break;
      ++i;
    } else {
      const Char c = At(s, i);
      if ((c.classes & mask) == 0) break;
      i += c.length;
    }
  }
  return i;
}

// End of the maximal run from `i` of [^\s\p{L}\p{N}].
inline size_t OtherRun(const unsigned char* s, size_t n, size_t i) {
  while (i < n) {
    if (s[i] < 0x80) {
      if ((kAsciiClasses[s[i]] & kLetterNumberSpace) != 0) break;
      ++i;
    } else {
      const Char c = At(s, i);
      if ((c.classes & kLetterNumberSpace) != 0) break;
      i += c.length;
    }
  }
  return i;
}

// Start of the character that ends at `end` (> 0).
inline size_t PreviousCharStart(const unsigned char* s, size_t end) {
  size_t i = end - 1;
  while ((s[i] & 0xC0) == 0x80) --i;
  return i;
}

// \p{N}{1,3} from `i`, whose character is a number.
inline size_t UpToThreeNumbers(const unsigned char* s, size_t n, size_t i) {
  for (int k = 0; k < 3 && i < n; ++k) {
    const Char c = At(s, i);
    if ((c.classes & u::kN) == 0) break;
    i += c.length;
  }
  return i;
}

inline bool FoldsTo(const unsigned char* s, size_t n, size_t i, char lower,
                    size_t* length) {
  if (i >= n) return false;
  if (s[i] < 0x80) {
    *length = 1;
    return (s[i] | 0x20) == lower;
  }
  const u::Utf8Char c = u::DecodeUtf8(s + i);
  *length = c.length;
  return u::FoldsToAsciiLetter(c.code_point, lower);
}

// Length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at `i`, or 0. The alternatives
// start with distinct letters, so the first that matches is the only one.
size_t CaseInsensitiveContraction(const unsigned char* s, size_t n, size_t i) {
  if (i >= n || s[i] != '\'') return 0;
  size_t a = 0;
  size_t b = 0;
  for (char c : {'s', 't', 'm', 'd'}) {
    if (FoldsTo(s, n, i + 1, c, &a)) return 1 + a;
  }
  if ((FoldsTo(s, n, i + 1, 'r', &a) || FoldsTo(s, n, i + 1, 'v', &a)) &&
      FoldsTo(s, n, i + 1 + a, 'e', &b)) {
    return 1 + a + b;
  }
  if (FoldsTo(s, n, i + 1, 'l', &a) && FoldsTo(s, n, i + 1 + a, 'l', &b))
    return 1 + a + b;
  return 0;
}

// The whitespace alternatives, at `pos` whose character is \s.
//   with_newlines: \s*[\r\n]+|\s+(?!\S)|\s+   (cl100k, o200k)
//   otherwise:     \s+(?!\S)|\s+              (gpt2)
// \s*[\r\n]+ backtracks \s* to the last newline of the run and ends right
// after it. \s+(?!\S) gives back the run's last character when a non-space
// follows, unless that would leave nothing; then \s+ takes the one character.
// The high bit of each byte of `w` that is ASCII and in [lo, hi].
inline uint64_t AsciiRangeBits(uint64_t w, unsigned char lo, unsigned char hi) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  const uint64_t low7 = w & ~kHighs;  // no byte carries into the next
  const uint64_t at_least_lo = low7 + kOnes * (0x80 - lo);
  const uint64_t above_hi = low7 + kOnes * (0x7F - hi);
  return at_least_lo & ~above_hi & ~w & kHighs;
}

size_t Whitespace(const unsigned char* s, size_t n, size_t pos,
                  bool with_newlines) {
  size_t i = pos;
  size_t after_newline = 0;
  // Eight bytes at a time while all are ASCII whitespace (tab to carriage
  // return, space): in long runs of spaces and line ends, a branch on each
  // byte's being a line end mispredicted every few bytes.
  while (n - i >= 8) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHighs = 0x8080808080808080ull;
    uint64_t w;
    std::memcpy(&w, s + i, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    // The high bit of each byte equal to b, exactly: no carry crosses a
    // byte, unlike the classic has-zero-byte trick.
    auto equal = [&](unsigned char b) {
      const uint64_t x = w ^ (kOnes * b);
      return ~(((x & ~kHighs) + ~kHighs) | x) & kHighs;
    };
    const uint64_t blank = equal(' ') | AsciiRangeBits(w, '\t', '\r');
    if (blank != kHighs) break;
    const uint64_t line_end = equal('\n') | equal('\r');
    if (line_end != 0) {
      after_newline =
          i + (63 - static_cast<unsigned>(__builtin_clzll(line_end))) / 8 + 1;
    }
    i += 8;
  }
  while (i < n) {
    if (s[i] < 0x80) {
      const uint32_t c = kAsciiClasses[s[i]];
      if ((c & u::kWhiteSpace) == 0) break;
      ++i;
      if (c & kCrLf) after_newline = i;
    } else {
      const Char c = At(s, i);
      if ((c.classes & u::kWhiteSpace) == 0) break;
      i += c.length;
    }
  }
  if (with_newlines && after_newline != 0) return after_newline;
  if (i == n) return i;
  const size_t last = PreviousCharStart(s, i);
  return last > pos ? last : i;
}

size_t NextGpt2(const unsigned char* s, size_t n, size_t pos) {
  const unsigned char b = s[pos];
  if (b == '\'' && pos + 1 < n) {
    const unsigned char c = s[pos + 1];
    if (c == 's' || c == 'd' || c == 'm' || c == 't') return pos + 2;
    if (pos + 2 < n) {
      const unsigned char d = s[pos + 2];
      if ((c == 'l' && d == 'l') || (c == 'v' && d == 'e') ||
          (c == 'r' && d == 'e')) {
        return pos + 3;
      }
    }
  }
  if (b == ' ' && pos + 1 < n) {
    const Char next = At(s, pos + 1);
    if (next.classes & u::kL) return Run(s, n, pos + 1 + next.length, u::kL);
    if (next.classes & u::kN) return Run(s, n, pos + 1 + next.length, u::kN);
    if ((next.classes & kLetterNumberSpace) == 0)
      return OtherRun(s, n, pos + 1 + next.length);
  }
  const Char c = At(s, pos);
  if (c.classes & u::kL) return Run(s, n, pos + c.length, u::kL);
  if (c.classes & u::kN) return Run(s, n, pos + c.length, u::kN);
  if ((c.classes & u::kWhiteSpace) == 0) return OtherRun(s, n, pos + c.length);
  return Whitespace(s, n, pos, /*with_newlines=*/false);
}

// [\r\n]* (cl100k) or [\r\n/]* (o200k) after a run of other characters.
inline size_t NewlineTail(const unsigned char* s, size_t n, size_t i,
                          bool slash) {
  while (i < n && (s[i] == '\r' || s[i] == '\n' || (slash && s[i] == '/'))) ++i;
  return i;
}

size_t NextCl100k(const unsigned char* s, size_t n, size_t pos) {
  if (s[pos] == '\'') {
    if (const size_t m = CaseInsensitiveContraction(s, n, pos)) return pos + m;
  }
  const Char c = At(s, pos);
  if (c.classes & u::kL) return Run(s, n, pos + c.length, u::kL);
  // [^\r\n\p{L}\p{N}]\p{L}+; if no letter follows, the optional prefix backs
  // off and \p{L}+ fails at `pos`, which is not a letter.
  const size_t next = pos + c.length;
  if ((c.classes & (u::kL | u::kN | kCrLf)) == 0 && next < n) {
    const Char d = At(s, next);
    if (d.classes & u::kL) return Run(s, n, next + d.length, u::kL);
  }
  if (c.classes & u::kN) return UpToThreeNumbers(s, n, pos);
  if (s[pos] == ' ' && next < n) {
    const Char d = At(s, next);
    if ((d.classes & kLetterNumberSpace) == 0) {
      return NewlineTail(s, n, OtherRun(s, n, next + d.length),
                         /*slash=*/false);
    }
  }
  if ((c.classes & u::kWhiteSpace) == 0) {
    return NewlineTail(s, n, OtherRun(s, n, next), /*slash=*/false);
  }
  return Whitespace(s, n, pos, /*with_newlines=*/true);
}

// o200k's letter alternatives at `p` (after the optional prefix):
//   A = [upper]*[lower]+C?   and   B = [upper]+[lower]*C?
// [upper]* takes the maximal upper run [p, upper_end) and gives characters
// back until [lower]+ can start. The first start it finds is upper_end if
// that character is lower (then [lower]+ runs on greedily), else the last
// character of the run that is in both groups (then [lower]+ takes exactly
// it: what follows in the run is Lu/Lt, which is not lower). C? takes a
// contraction if one follows. If neither start exists, A fails; then the
// upper run holds only Lu/Lt and no lower character follows it, so B, if the
// run is not empty, is exactly the run plus C?.
struct LetterMatch {
  size_t end;        // end of A, or 0 if A fails
  size_t upper_end;  // end of the upper run (== p when empty)
};

LetterMatch O200kLetters(const unsigned char* s, size_t n, size_t p) {
  size_t i = p;
  size_t last_both_end = 0;
  while (i < n) {
    uint32_t classes;
    uint32_t length;
    if (s[i] < 0x80) {
      classes = kAsciiClasses[s[i]];
      length = 1;
    } else {
      const Char c = At(s, i);
      classes = c.classes;
      length = c.length;
    }
    if ((classes & kUpper) == 0) {
      if (classes & kLower) {
        const size_t j = Run(s, n, i + length, kLower);
        return {j + CaseInsensitiveContraction(s, n, j), i};
      }
      break;
    }
    i += length;
    if (classes & kBoth) last_both_end = i;
  }
  if (last_both_end != 0) {
    return {last_both_end + CaseInsensitiveContraction(s, n, last_both_end), i};
  }
  return {0, i};
}

// ASCII fast path of o200k's letter alternatives, for a letter at `p` that
// starts the match (`p` is pos, or pos + 1 after an ASCII prefix). With ASCII
// letters alone the groups do not overlap: A is [A-Z]*[a-z]+ and, when no
// lowercase letter follows the capitals, B is [A-Z]+; either way the match
// ends where the lowercase run ends. Returns 0 if a non-ASCII character ends
// a run: it might be a letter or mark, so the general scanner decides.
//
// Where eight bytes remain, both runs are found in one word: the high bit of
// each byte says whether it is in 'A'..'Z' (or 'a'..'z'), and the runs end
// at the lowest clear bits. Words of mixed case are mostly runs of one to
// three letters (base64, identifiers), whose two byte-at-a-time loops each
// mispredicted their end.

inline size_t O200kAsciiLetters(const unsigned char* s, size_t n, size_t p) {
  size_t i = p;
  bool in_lower = false;
  if (n - p >= 8) {
    constexpr uint64_t kHighs = 0x8080808080808080ull;
    uint64_t w;
    std::memcpy(&w, s + p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);  // byte k of the text in bits 8k..8k+7
#endif
    const uint64_t upper = AsciiRangeBits(w, 'A', 'Z');
    const uint64_t lower = AsciiRangeBits(w, 'a', 'z');
    // Bytes before the first that is not upper, then before the first
    // after those that is not lower (the word's byte 8 counts as neither).
    const uint64_t not_upper = ~upper & kHighs;
    const unsigned uppers =
        not_upper == 0 ? 8
                       : static_cast<unsigned>(__builtin_ctzll(not_upper)) / 8;
    const uint64_t not_lower = (~lower & kHighs) >> (8 * uppers % 64);
    const unsigned lowers =
        uppers == 8 || not_lower == 0
            ? 8 - uppers
            : static_cast<unsigned>(__builtin_ctzll(not_lower)) / 8;
    i = p + uppers + lowers;
    if (uppers + lowers < 8) {
      if (s[i] >= 0x80) return 0;
      if (s[i] == '\'') i += CaseInsensitiveContraction(s, n, i);
      return i;
    }
    // A run that reaches the word's end goes on byte by byte below, in
    // the lowercase run once one has begun.
    in_lower = lowers != 0;
  }
  if (!in_lower) {
    while (i < n && static_cast<unsigned>(s[i] - 'A') < 26u) ++i;
  }
  while (i < n && static_cast<unsigned>(s[i] - 'a') < 26u) ++i;
  if (i < n && s[i] >= 0x80) return 0;
  if (i < n && s[i] == '\'') i += CaseInsensitiveContraction(s, n, i);
  return i;
}

size_t NextO200k(const unsigned char* s, size_t n, size_t pos) {
  if (s[pos] < 0x80) {
    const uint32_t classes = kAsciiClasses[s[pos]];
    size_t end = 0;
    if (classes & u::kL) {
      end = O200kAsciiLetters(s, n, pos);
    } else if ((classes & (u::kN | kCrLf)) == 0 && pos + 1 < n &&
               s[pos + 1] < 0x80 && (kAsciiClasses[s[pos + 1]] & u::kL) != 0) {
      end = O200kAsciiLetters(s, n, pos + 1);
    }
    if (end != 0) return end;
  }
  const Char c = At(s, pos);
  const size_t next = pos + c.length;
  if ((c.classes & (u::kL | u::kN | kCrLf)) == 0) {
    // The prefix [^\r\n\p{L}\p{N}] is taken first: A then (if A fails with
    // and without it) B, each with the prefix before without.
    if (next < n) {
      const LetterMatch with_prefix = O200kLetters(s, n, next);
      if (with_prefix.end != 0) return with_prefix.end;
      // A without the prefix: a mark at `pos` is in both groups, so A
      // matches there (see O200kLetters); other prefix characters are in
      // neither group.
      if (c.classes & u::kM) return O200kLetters(s, n, pos).end;
      if (with_prefix.upper_end > next) {
        return with_prefix.upper_end +
               CaseInsensitiveContraction(s, n, with_prefix.upper_end);
      }
    } else if (c.classes & u::kM) {
      return O200kLetters(s, n, pos).end;
    }
  } else if (c.classes & u::kL) {
    const LetterMatch m = O200kLetters(s, n, pos);
    if (m.end != 0) return m.end;
    return m.upper_end + CaseInsensitiveContraction(s, n, m.upper_end);
  }
  if (c.classes & u::kN) return UpToThreeNumbers(s, n, pos);
  if (s[pos] == ' ' && next < n) {
    const Char d = At(s, next);
    if ((d.classes & kLetterNumberSpace) == 0) {
      return NewlineTail(s, n, OtherRun(s, n, next + d.length), /*slash=*/true);
    }
  }
  if ((c.classes & u::kWhiteSpace) == 0) {
    return NewlineTail(s, n, OtherRun(s, n, next), /*slash=*/true);
  }
  return Whitespace(s, n, pos, /*with_newlines=*/true);
}

}  // namespace

size_t NextPiece(PretokenPattern pattern, std::string_view text, size_t pos) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  switch (pattern) {
    case PretokenPattern::kGpt2:
      return NextGpt2(s, text.size(), pos);
    case PretokenPattern::kCl100k:
      return NextCl100k(s, text.size(), pos);
    case PretokenPattern::kO200k:
      return NextO200k(s, text.size(), pos);
  }
  return text.size();
}

std::vector<std::string_view> SplitIntoPieces(PretokenPattern pattern,
                                              std::string_view text) {
  std::vector<std::string_view> pieces;
  ForEachPiece(pattern, text,
               [&](std::string_view piece) { pieces.push_back(piece); });
  return pieces;
}

}  // namespace ctxkit::internal
