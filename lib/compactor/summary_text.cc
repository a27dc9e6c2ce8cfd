#include "lib/compactor/summary_text.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace ctxkit::internal {

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (IsAsciiSpace(s.front()) || s.front() == '\n')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (IsAsciiSpace(s.back()) || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string_view CutUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string MakeItem(std::string_view raw, size_t max) {
  std::string out;
  out.reserve(std::min(raw.size(), max + 4));
  bool pending_space = false;
  for (char c : raw) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F || c == ' ') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
    if (out.size() > max + 4) break;  // enough to know it must be cut
  }
  if (out.size() > max) {
    out.resize(CutUtf8(out, max - 3).size());
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "...";
  }
  return out;
}

}  // namespace ctxkit::internal
