#include "lib/graph/ignore_patterns.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "lib/base/field_check.h"

namespace ctxkit::internal {
namespace {

// The length of the UTF-8 character `s` starts with (1 for a stray byte:
// the ids are checked UTF-8, so that only guards the arithmetic).
size_t CharLength(std::string_view s) {
  const auto b = static_cast<unsigned char>(s[0]);
  size_t n = 1;
  if (b >= 0xF0) {
    n = 4;
  } else if (b >= 0xE0) {
    n = 3;
  } else if (b >= 0xC0) {
    n = 2;
  }
  return n <= s.size() ? n : 1;
}

// The code point of the character `s` starts with.
char32_t Decode(std::string_view s, size_t n) {
  const auto b = static_cast<unsigned char>(s[0]);
  if (n == 1) return b;
  char32_t cp = b & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
  }
  return cp;
}

// The end of the class that starts at p[i] == '[' (the index after its
// ']'), or npos when it is not closed.
size_t ClassEnd(std::string_view p, size_t i) {
  size_t j = i + 1;
  if (j < p.size() && (p[j] == '!' || p[j] == '^')) ++j;
  if (j < p.size() && p[j] == ']') ++j;  // a leading ']' is literal
  while (j < p.size() && p[j] != ']') {
    if (p[j] == '\\' && j + 1 < p.size()) ++j;
    ++j;
  }
  return j < p.size() ? j + 1 : std::string_view::npos;
}

// Whether character `c` is in the class p[begin, end) ("[...]").
bool InClass(std::string_view p, size_t begin, size_t end, char32_t c) {
  size_t j = begin + 1;
  bool negated = false;
  if (p[j] == '!' || p[j] == '^') {
    negated = true;
    ++j;
  }
  bool in = false;
  bool first = true;
  while (j < end - 1 && (first || p[j] != ']')) {
    first = false;
    if (p[j] == '\\' && j + 1 < end - 1) ++j;
    size_t n = CharLength(p.substr(j));
    const char32_t lo = Decode(p.substr(j), n);
    j += n;
    char32_t hi = lo;
    if (j + 1 < end - 1 && p[j] == '-') {
      ++j;
      if (p[j] == '\\' && j + 1 < end - 1) ++j;
      n = CharLength(p.substr(j));
      hi = Decode(p.substr(j), n);
      j += n;
    }
    if (lo <= c && c <= hi) in = true;
  }
  return in != negated;
}

// Glob matching of p[pi..] against t[ti..], remembering the states that
// failed so that patterns full of stars stay O(|p| * |t|^2).
class Matcher {
 public:
  Matcher(std::string_view p, std::string_view t)
      : p_(p), t_(t), failed_((p.size() + 1) * (t.size() + 1), 0) {}

  bool Match(size_t pi, size_t ti) {
    uint8_t& failed = failed_[pi * (t_.size() + 1) + ti];
    if (failed) return false;
    const bool ok = Step(pi, ti);
    if (!ok) failed = 1;
    return ok;
  }

 private:
  bool Step(size_t pi, size_t ti) {
    if (pi == p_.size()) return ti == t_.size();
    const char c = p_[pi];
    if (c == '*') {
      const bool any = pi + 1 < p_.size() && p_[pi + 1] == '*';
      const size_t rest = pi + (any ? 2 : 1);
      for (size_t i = ti; i <= t_.size(); ++i) {
        if (Match(rest, i)) return true;
        if (i < t_.size() && !any && t_[i] == '/') return false;
      }
      return false;
    }
    if (ti == t_.size()) return false;
    const size_t n = CharLength(t_.substr(ti));
    if (c == '?') return t_[ti] != '/' && Match(pi + 1, ti + n);
    if (c == '[') {
      const size_t end = ClassEnd(p_, pi);
      if (t_[ti] == '/' || !InClass(p_, pi, end, Decode(t_.substr(ti), n))) {
        return false;
      }
      return Match(end, ti + n);
    }
    size_t literal = pi;
    if (c == '\\' && pi + 1 < p_.size()) ++literal;
    return p_[literal] == t_[ti] && Match(literal + 1, ti + 1);
  }

  std::string_view p_;
  std::string_view t_;
  std::vector<uint8_t> failed_;
};

bool Glob(std::string_view p, std::string_view t) {
  return Matcher(p, t).Match(0, 0);
}

}  // namespace

absl::Status CheckIgnorePatterns(const std::vector<std::string>& patterns) {
  if (patterns.size() > kMaxIgnorePatterns) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ignore_patterns holds %d patterns; the limit is %d",
                        patterns.size(), kMaxIgnorePatterns));
  }
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string field = absl::StrFormat("ignore_patterns[%d]", i);
    const std::string& p = patterns[i];
    if (absl::Status s = CheckText(field, p, kMaxIgnorePatternBytes); !s.ok()) {
      return s;
    }
    if (p[0] == '!') {
      return absl::InvalidArgumentError(
          field +
          ": negation ('!') is not supported; escape a leading ! as "
          "\\!");
    }
    if (p == "/" || p == "//") {
      return absl::InvalidArgumentError(field + ": matches nothing");
    }
    for (size_t j = 0; j < p.size(); ++j) {
      if (p[j] == '\\') {
        ++j;
      } else if (p[j] == '[' && ClassEnd(p, j) == std::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: '[' at offset %d is not closed", field, j));
      }
    }
  }
  return absl::OkStatus();
}

bool MatchesIgnorePattern(std::string_view pattern, std::string_view id) {
  std::string_view p = pattern;
  const bool anchored = !p.empty() && p.front() == '/';
  if (anchored) p.remove_prefix(1);
  // A trailing '/' (gitignore's "directory") names the same segment: a
  // context id has no directories of its own.
  if (!p.empty() && p.back() == '/' &&
      !(p.size() >= 2 && p[p.size() - 2] == '\\')) {
    p.remove_suffix(1);
  }
  if (p.empty()) return false;
  if (!anchored && p.find('/') == std::string_view::npos) {
    // Any one segment.
    size_t start = 0;
    while (true) {
      const size_t end = id.find('/', start);
      const std::string_view segment =
          id.substr(start, end == std::string_view::npos ? id.size() - start
                                                         : end - start);
      if (Glob(p, segment)) return true;
      if (end == std::string_view::npos) return false;
      start = end + 1;
    }
  }
  // From the start: the id, or the part of it above any '/'.
  for (size_t end = id.find('/'); end != std::string_view::npos;
       end = id.find('/', end + 1)) {
    if (Glob(p, id.substr(0, end))) return true;
  }
  return Glob(p, id);
}

absl::Status CheckNotIgnored(const std::vector<std::string>& patterns,
                             std::string_view field, std::string_view id) {
  for (const std::string& p : patterns) {
    if (MatchesIgnorePattern(p, id)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s matches ignore pattern %s", field, p));
    }
  }
  return absl::OkStatus();
}

}  // namespace ctxkit::internal
