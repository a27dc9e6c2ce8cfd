#include "lib/json/utf8.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "simdjson.h"

namespace ctxkit::internal {
namespace {

// Below this length simdjson's runtime dispatch costs more than it saves; the
// scalar loop, which skips ASCII a word at a time, is faster for the short
// keys and field values that dominate ctxkit's traffic.
constexpr size_t kSimdThreshold = 64;

constexpr uint64_t kHighBits = 0x8080808080808080ULL;

struct Utf8Error {
  size_t offset;       // of the first byte of the ill-formed sequence
  const char* reason;  // static string
};

// The reference implementation: a direct transcription of Unicode's table of
// well-formed byte sequences (Table 3-7), which also says why a sequence is
// ill-formed. Used for short inputs and to locate the error that the fast
// path only detects.
std::optional<Utf8Error> FindUtf8Error(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    if (n - i >= 8) {
      uint64_t word;
      std::memcpy(&word, p + i, sizeof(word));
      if ((word & kHighBits) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned char lead = p[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length;
    // The second byte of some sequences has a narrower range than 80..BF;
    // outside it the sequence encodes something UTF-8 forbids.
    unsigned char second_min = 0x80;
    unsigned char second_max = 0xBF;
    const char* second_reason = nullptr;
    if (lead < 0xC0) {
      return Utf8Error{i, "unexpected continuation byte"};
    } else if (lead < 0xC2) {
      return Utf8Error{i, "overlong encoding"};
    } else if (lead < 0xE0) {
      length = 2;
    } else if (lead < 0xF0) {
      length = 3;
      if (lead == 0xE0) {
        second_min = 0xA0;
        second_reason = "overlong encoding";
      } else if (lead == 0xED) {
        second_max = 0x9F;
        second_reason = "surrogate code point";
      }
    } else if (lead < 0xF5) {
      length = 4;
      if (lead == 0xF0) {
        second_min = 0x90;
        second_reason = "overlong encoding";
      } else if (lead == 0xF4) {
        second_max = 0x8F;
        second_reason = "code point above U+10FFFF";
      }
    } else if (lead < 0xF8) {
      return Utf8Error{i, "code point above U+10FFFF"};
    } else {
      return Utf8Error{i, "byte never appears in UTF-8"};
    }
    for (size_t k = 1; k < length; ++k) {
      if (i + k >= n) return Utf8Error{i, "truncated sequence"};
      const unsigned char byte = p[i + k];
      if (byte < 0x80 || byte > 0xBF) {
        return Utf8Error{i, "missing continuation byte"};
      }
      if (k == 1 && (byte < second_min || byte > second_max)) {
        return Utf8Error{i, second_reason};
      }
    }
    i += length;
  }
  return std::nullopt;
}

// The length of the maximal subpart at the start of `p` (which begins an
// ill-formed sequence): a lead byte that could start a sequence and the
// continuation bytes that still fit it, or 1 for a byte that starts nothing.
// Unicode's recommended practice replaces each maximal subpart with one
// U+FFFD, as Python's errors="replace" and the WHATWG decoder do.
size_t MaximalSubpart(const unsigned char* p, size_t n) {
  const unsigned char lead = p[0];
  size_t length;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead < 0xE0) {
    length = 2;
  } else if (lead >= 0xE0 && lead < 0xF0) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead < 0xF5) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return 1;
  }
  size_t k = 1;
  for (; k < length && k < n; ++k) {
    const unsigned char lo = k == 1 ? second_min : 0x80;
    const unsigned char hi = k == 1 ? second_max : 0xBF;
    if (p[k] < lo || p[k] > hi) break;
  }
  return k;
}

}  // namespace

std::string ReplaceInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0;
  while (i < s.size()) {
    const std::optional<Utf8Error> error = FindUtf8Error(s.substr(i));
    if (!error.has_value()) {
      out.append(s.substr(i));
      break;
    }
    out.append(s.substr(i, error->offset));
    out.append("\xEF\xBF\xBD");  // U+FFFD
    i += error->offset;
    i += MaximalSubpart(p + i, s.size() - i);
  }
  return out;
}

bool IsValidUtf8(std::string_view s) {
  if (s.size() >= kSimdThreshold) {
    return simdjson::validate_utf8(s.data(), s.size());
  }
  return !FindUtf8Error(s).has_value();
}

absl::Status ValidateUtf8(std::string_view s, std::string_view what) {
  if (IsValidUtf8(s)) return absl::OkStatus();
  const std::optional<Utf8Error> error = FindUtf8Error(s);
  if (!error.has_value()) {
    // Only reachable if simdjson and the table above ever disagree; still
    // reject, since simdjson would reject the text inside a document too.
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not valid UTF-8", what));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is not valid UTF-8: invalid byte 0x%02X at offset %d (%s)", what,
      static_cast<unsigned char>(s[error->offset]), error->offset,
      error->reason));
}

void AppendUtf8(char32_t cp, std::string* out) {
  char b[4];
  size_t n;
  if (cp < 0x80) {
    b[0] = static_cast<char>(cp);
    n = 1;
  } else if (cp < 0x800) {
    b[0] = static_cast<char>(0xC0 | (cp >> 6));
    b[1] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = static_cast<char>(0xE0 | (cp >> 12));
    b[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    b[2] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    b[0] = static_cast<char>(0xF0 | (cp >> 18));
    b[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    b[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    b[3] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 4;
  }
  out->append(b, n);
}

}  // namespace ctxkit::internal
