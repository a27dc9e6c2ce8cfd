#include "programs/ctxkit/host/text.h"

#include <array>
#include <cstdio>

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

}  // namespace ctxkit::program
