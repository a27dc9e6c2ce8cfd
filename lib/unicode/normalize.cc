#include "lib/unicode/normalize.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/utf8.h"
#include "lib/unicode/unicode.h"

namespace ctxkit::internal::unicode {
namespace {

struct CompositionPair {
  char32_t first;
  char32_t second;
  char32_t composite;
};

constexpr int kNormBlockShift = 7;
constexpr int kMaxDecompositionLength = 18;

#include "lib/unicode/normalization_tables.inc"

// Fields of a table value; generate_normalization.mjs documents them.
constexpr uint32_t kCccMask = 0xFF;
constexpr uint32_t kQcNotYes = 1u << 8;
constexpr uint32_t kCombinesBackward = 1u << 9;
constexpr uint32_t kCombinesForward = 1u << 10;
constexpr int kLengthShift = 11;
constexpr uint32_t kLengthMask = 0x1F;
constexpr int kOffsetShift = 16;
static_assert(kMaxDecompositionLength <= static_cast<int>(kLengthMask));

// Hangul syllables (Unicode chapter 3.12): composed and decomposed by
// arithmetic rather than tables.
constexpr char32_t kSBase = 0xAC00;
constexpr char32_t kLBase = 0x1100;
constexpr char32_t kVBase = 0x1161;
constexpr char32_t kTBase = 0x11A7;
constexpr char32_t kLCount = 19;
constexpr char32_t kVCount = 21;
constexpr char32_t kTCount = 28;
constexpr char32_t kNCount = kVCount * kTCount;
constexpr char32_t kSCount = kLCount * kNCount;

// Precondition: cp <= U+10FFFF.
inline uint32_t Props(char32_t cp) {
  return kNormStage2[(static_cast<uint32_t>(kNormStage1[cp >> kNormBlockShift])
                      << kNormBlockShift) |
                     (cp & ((1u << kNormBlockShift) - 1))];
}

// Whether NFKC can restart before a character with these properties:
// nothing before it interacts with it or anything after it, because its
// decomposition (or itself) starts with a starter that never composes
// backward, which no mark can be reordered across and which blocks
// composition from before it. Every character that passes the quick check
// with class 0 is one (the generator checks); so are most compatibility
// characters (U+FB01 LATIN SMALL LIGATURE FI), which keeps the stretches
// that are rewritten short.
inline bool HasBoundaryBefore(uint32_t props) {
  if ((props & kCccMask) != 0) return false;
  if ((props & kQcNotYes) == 0) return true;
  if ((props & kCombinesBackward) != 0) return false;
  const uint32_t length = (props >> kLengthShift) & kLengthMask;
  if (length == 0) return false;
  const uint32_t first = Props(kDecompositionPool[props >> kOffsetShift]);
  return (first & (kCccMask | kCombinesBackward)) == 0;
}

// Decodes the character at p (with `avail` > 0 bytes readable): returns its
// length and stores its code point, or returns 0 when p[0] does not start a
// well-formed UTF-8 sequence. Reads at most `avail` bytes.
inline uint32_t DecodeChecked(const unsigned char* p, size_t avail,
                              char32_t* cp) {
  const uint32_t b0 = p[0];
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  if (b0 < 0xC2) return 0;
  if (b0 < 0xE0) {
    if (avail < 2 || (p[1] & 0xC0) != 0x80) return 0;
    *cp = ((b0 & 0x1F) << 6) | (p[1] & 0x3F);
    return 2;
  }
  if (b0 < 0xF0) {
    if (avail < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
    const char32_t c =
        ((b0 & 0x0F) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3F);
    if (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return 3;
  }
  if (b0 < 0xF5) {
    if (avail < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
        (p[3] & 0xC0) != 0x80) {
      return 0;
    }
    const char32_t c = ((b0 & 0x07) << 18) | ((p[1] & 0x3Fu) << 12) |
                       ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3F);
    if (c < 0x10000 || c > 0x10FFFF) return 0;
    *cp = c;
    return 4;
  }
  return 0;
}

// Runs the quick check from `pos`, which must be 0 or a boundary. Returns the
// position of the first character that fails it (text.size() if none) and
// sets *segment_start to the last boundary at or before that character,
// where normalization of the failing stretch must begin.
size_t ScanQuickCheck(std::string_view text, size_t pos,
                      size_t* segment_start) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t boundary = pos;
  uint32_t last_ccc = 0;
  while (pos < n) {
    if (p[pos] < 0x80) {
      // ASCII never changes and every ASCII character is a boundary.
      while (pos + 8 <= n) {
        uint64_t word;
        std::memcpy(&word, p + pos, 8);
        if ((word & 0x8080808080808080u) != 0) break;
        pos += 8;
      }
      while (pos < n && p[pos] < 0x80) ++pos;
      boundary = pos - 1;
      last_ccc = 0;
      continue;
    }
    char32_t cp;
    const uint32_t length = DecodeChecked(p + pos, n - pos, &cp);
    if (length == 0) {
      // An invalid byte passes through and separates its neighbours.
      ++pos;
      boundary = pos;
      last_ccc = 0;
      continue;
    }
    const uint32_t props = Props(cp);
    const uint32_t ccc = props & kCccMask;
    if ((props & kQcNotYes) != 0 || (ccc != 0 && ccc < last_ccc)) {
      *segment_start = HasBoundaryBefore(props) ? pos : boundary;
      return pos;
    }
    if (ccc == 0) boundary = pos;
    last_ccc = ccc;
    pos += length;
  }
  *segment_start = boundary;
  return n;
}

// Returns the end of the stretch that must be normalized as a whole when the
// character at `pos` fails the quick check: the next boundary after it, an
// invalid byte, or text.size().
size_t SegmentEnd(std::string_view text, size_t pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  pos += Utf8Length(p[pos]);
  while (pos < n) {
    if (p[pos] < 0x80) return pos;
    char32_t cp;
    const uint32_t length = DecodeChecked(p + pos, n - pos, &cp);
    if (length == 0 || HasBoundaryBefore(Props(cp))) return pos;
    pos += length;
  }
  return n;
}

struct Decomposed {
  char32_t code_point;
  uint32_t ccc;
};

void AppendDecomposition(char32_t cp, std::vector<Decomposed>* out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out->push_back({kLBase + s / kNCount, 0});
    out->push_back({kVBase + (s % kNCount) / kTCount, 0});
    if (s % kTCount != 0) out->push_back({kTBase + s % kTCount, 0});
    return;
  }
  const uint32_t props = Props(cp);
  const uint32_t length = (props >> kLengthShift) & kLengthMask;
  if (length == 0) {
    out->push_back({cp, props & kCccMask});
    return;
  }
  const char32_t* d = kDecompositionPool + (props >> kOffsetShift);
  for (uint32_t i = 0; i < length; ++i) {
    out->push_back({d[i], Props(d[i]) & kCccMask});
  }
}

// Canonical ordering: a stable sort by class of each run of non-starters.
void ReorderMarks(std::vector<Decomposed>* chars) {
  auto by_ccc = [](const Decomposed& a, const Decomposed& b) {
    return a.ccc < b.ccc;
  };
  const size_t n = chars->size();
  size_t i = 0;
  while (i < n) {
    if ((*chars)[i].ccc == 0) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < n && (*chars)[end].ccc != 0) ++end;
    if (end - i > 1) {
      // Runs are almost always a handful of marks; insertion sort is
      // quickest there, and stable_sort keeps very long runs n log n.
      auto first = chars->begin() + static_cast<std::ptrdiff_t>(i);
      auto last = chars->begin() + static_cast<std::ptrdiff_t>(end);
      if (end - i <= 16) {
        for (auto it = first + 1; it != last; ++it) {
          const Decomposed x = *it;
          auto hole = it;
          while (hole != first && (hole - 1)->ccc > x.ccc) {
            *hole = *(hole - 1);
            --hole;
          }
          *hole = x;
        }
      } else {
        std::stable_sort(first, last, by_ccc);
      }
    }
    i = end;
  }
}

// The primary composite of `first` and `second`, or 0 when there is none.
char32_t Compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase &&
      second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount &&
      (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  if ((Props(first) & kCombinesForward) == 0 ||
      (Props(second) & kCombinesBackward) == 0) {
    return 0;
  }
  const CompositionPair* end = kCompositionPairs + std::size(kCompositionPairs);
  const CompositionPair* it = std::lower_bound(
      kCompositionPairs, end, CompositionPair{first, second, 0},
      [](const CompositionPair& a, const CompositionPair& b) {
        return a.first != b.first ? a.first < b.first : a.second < b.second;
      });
  if (it != end && it->first == first && it->second == second) {
    return it->composite;
  }
  return 0;
}

// Canonical composition (UAX #15 section 3.3) of a reordered decomposition.
void ComposeAll(std::vector<Decomposed>* chars) {
  const size_t n = chars->size();
  if (n == 0) return;
  Decomposed* c = chars->data();
  size_t starter = 0;
  bool have_starter = c[0].ccc == 0;
  // 256: a leading non-starter blocks everything until the next starter.
  uint32_t last_ccc = have_starter ? 0 : 256;
  size_t kept = 1;
  for (size_t i = 1; i < n; ++i) {
    const Decomposed ch = c[i];
    // Not blocked: nothing kept since the starter, or every kept mark since
    // it has a lower class.
    if (have_starter && (last_ccc == 0 || last_ccc < ch.ccc)) {
      const char32_t composite = Compose(c[starter].code_point, ch.code_point);
      if (composite != 0) {
        c[starter].code_point = composite;
        continue;
      }
    }
    if (ch.ccc == 0) {
      starter = kept;
      have_starter = true;
    }
    last_ccc = ch.ccc;
    c[kept++] = ch;
  }
  chars->resize(kept);
}

// Appends NFKC(segment) to *out. `segment` is valid UTF-8 (SegmentEnd stops
// at invalid bytes). `scratch` is reused between segments.
void NormalizeSegment(std::string_view segment,
                      std::vector<Decomposed>* scratch, std::string* out) {
  scratch->clear();
  size_t pos = 0;
  while (pos < segment.size()) {
    const Utf8Char ch = DecodeUtf8(segment, pos);
    AppendDecomposition(ch.code_point, scratch);
    pos += ch.length;
  }
  ReorderMarks(scratch);
  ComposeAll(scratch);
  for (const Decomposed& d : *scratch) AppendUtf8(d.code_point, out);
}

// Writes NFKC(text) into *out and returns true, or returns false without
// touching *out when `text` passes the quick check. Appends the stretches
// that went through NormalizeSegment to *stretches unless it is null.
bool Normalize(std::string_view text, std::string* out,
               std::vector<NfkcStretch>* stretches) {
  size_t segment_start = 0;
  size_t pos = ScanQuickCheck(text, 0, &segment_start);
  if (pos == text.size()) return false;
  out->clear();
  out->reserve(text.size() + text.size() / 4 + 16);
  std::vector<Decomposed> scratch;
  size_t copied = 0;
  while (pos < text.size()) {
    const size_t end = SegmentEnd(text, pos);
    out->append(text.data() + copied, segment_start - copied);
    const size_t output_begin = out->size();
    NormalizeSegment(text.substr(segment_start, end - segment_start), &scratch,
                     out);
    if (stretches != nullptr) {
      stretches->push_back({segment_start, end, output_begin, out->size()});
    }
    copied = end;
    pos = ScanQuickCheck(text, end, &segment_start);
  }
  out->append(text.data() + copied, text.size() - copied);
  return true;
}

}  // namespace

bool IsNfkcQuickCheckYes(std::string_view utf8) {
  size_t segment_start;
  return ScanQuickCheck(utf8, 0, &segment_start) == utf8.size();
}

std::string NfkcNormalize(std::string_view utf8) {
  std::string out;
  if (!Normalize(utf8, &out, nullptr)) out.assign(utf8.data(), utf8.size());
  return out;
}

std::string_view NfkcNormalizeView(std::string_view utf8, std::string* storage,
                                   std::vector<NfkcStretch>* stretches) {
  if (stretches != nullptr) stretches->clear();
  if (!Normalize(utf8, storage, stretches)) return utf8;
  return *storage;
}

std::string NfkcNormalizeWithoutQuickCheck(std::string_view utf8) {
  std::string out;
  std::vector<Decomposed> scratch;
  NormalizeSegment(utf8, &scratch, &out);
  return out;
}

}  // namespace ctxkit::internal::unicode
