#include "programs/ctxkit/host/text.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

namespace ctxkit::program {

std::string FormatBytes(uint64_t bytes) {
  static constexpr std::array<const char*, 7> kUnits = {
      "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  uint64_t whole = bytes;
  bool exact = true;
  while (whole >= 1024 && unit + 1 < kUnits.size()) {
    exact = exact && whole % 1024 == 0;
    whole /= 1024;
    ++unit;
  }
  char buffer[48];
  if (exact) {
    std::snprintf(buffer, sizeof(buffer), "%llu %s",
                  static_cast<unsigned long long>(whole), kUnits[unit]);
  } else {
    double scaled = static_cast<double>(bytes);
    for (size_t i = 0; i < unit; ++i) scaled /= 1024.0;
    std::snprintf(buffer, sizeof(buffer), "%.1f %s", scaled, kUnits[unit]);
  }
  return buffer;
}

std::string FormatDuration(std::chrono::nanoseconds duration) {
  const double ns = static_cast<double>(duration.count());
  char buffer[48];
  if (ns < 1e6) {
    std::snprintf(buffer, sizeof(buffer), "%.0f us", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buffer, sizeof(buffer), "%.2f ms", ns / 1e6);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.2f s", ns / 1e9);
  }
  return buffer;
}

namespace {

// Edits between `a` and `b` (insertions, deletions, substitutions, and
// swaps of two neighbours, the commonest typo), for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t width = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * width);
  const auto at = [&](size_t i, size_t j) -> size_t& {
    return d[i * width + j];
  };
  for (size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1,
                           at(i - 1, j - 1) + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

// Length of the valid UTF-8 sequence starting at text[i], or 0 if there is
// none (overlong forms, surrogates and values past U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  const unsigned char lead = byte(i);
  size_t length = 0;
  unsigned char min_second = 0x80, max_second = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) min_second = 0xA0;
    if (lead == 0xED) max_second = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) min_second = 0x90;
    if (lead == 0xF4) max_second = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text, i);
      if (length > 0) {
        out.append(text.substr(i, length));
        i += length;
        continue;
      }
    } else if (c == '\\') {
      out += "\\\\";
      ++i;
      continue;
    } else if (c >= 0x20 && c != 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof(escaped), "\\x%02X", c);
    out += escaped;
    ++i;
  }
  return out;
}

std::string DidYouMean(std::string_view given,
                       std::span<const std::string_view> candidates) {
  std::string_view best;
  size_t best_distance = std::max<size_t>(2, given.size() / 3) + 1;
  for (const std::string_view candidate : candidates) {
    if (given.size() >= 3 && candidate.starts_with(given)) {
      best = candidate;
      break;
    }
    const size_t distance = EditDistance(given, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best.empty() ? "" : "; did you mean '" + Printable(best) + "'?";
}

}  // namespace ctxkit::program
