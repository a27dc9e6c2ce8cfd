#include "lib/compactor/error_lines.h"

#include <string_view>

#include "absl/strings/ascii.h"

namespace ctxkit::internal {
namespace {

bool IsWordChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

bool Contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  return s;
}

// A word that names an error when a colon follows it.
bool IsErrorWord(std::string_view w) {
  if (w == "error" || w == "Error" || w == "ERROR" || w == "fatal" ||
      w == "FATAL" || w == "panic") {
    return true;
  }
  return (w.size() > 5 && w.ends_with("Error")) ||
         (w.size() > 9 && w.ends_with("Exception")) ||
         (w.size() > 5 && w.ends_with("Fault"));
}

}  // namespace

bool IsErrorLine(std::string_view line) {
  std::string_view s = TrimLeft(line);
  while (s.starts_with("- ") || s.starts_with("* ")) s = TrimLeft(s.substr(2));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  if (s.size() < 4) return false;
  // "123:" / "123 |": a line of a file being shown, whatever it says.
  size_t digits = 0;
  while (digits < s.size() && absl::ascii_isdigit(s[digits])) ++digits;
  if (digits > 0 && digits < s.size() &&
      (s[digits] == ':' || TrimLeft(s.substr(digits)).starts_with("|"))) {
    return false;
  }
  for (std::string_view code :
       {"except ", "except:", "raise ", "catch ", "catch(", "throw ", "} catch",
        "if err", "return err"}) {
    if (s.starts_with(code)) return false;
  }
  if (s.starts_with("FAILED ") || s.starts_with("ERROR ") ||
      s.ends_with(" FAILED") || s.starts_with("error[E")) {
    return true;
  }
  for (std::string_view phrase :
       {"command not found", "No such file", "Permission denied", "TIMED OUT",
        "timed out", "Segmentation fault", "npm ERR!", "syntax error",
        "make: *** ", "returned non-zero", "non-zero exit", "nonzero exit"}) {
    if (Contains(s, phrase)) return true;
  }
  // A non-zero exit: "exit code 2", "exit status 1", "exited with code 127".
  for (std::string_view phrase :
       {"exit code ", "exit status ", "exited with code ", "exit code: "}) {
    for (size_t at = s.find(phrase); at != std::string_view::npos;
         at = s.find(phrase, at + 1)) {
      const size_t digit = at + phrase.size();
      if (digit < s.size() && s[digit] >= '1' && s[digit] <= '9') return true;
      if (digit < s.size() && s[digit] == '-') return true;
    }
  }
  // A word naming an error, followed by ':' and then text or the end.
  for (size_t i = 0; i < s.size();) {
    if (!IsWordChar(s[i])) {
      ++i;
      continue;
    }
    const size_t begin = i;
    while (i < s.size() && (IsWordChar(s[i]) || s[i] == '.')) ++i;
    std::string_view word = s.substr(begin, i - begin);
    const size_t dot = word.rfind('.');
    if (dot != std::string_view::npos) word.remove_prefix(dot + 1);
    if (i < s.size() && s[i] == ':' && (i + 1 == s.size() || s[i + 1] == ' ') &&
        IsErrorWord(word)) {
      return true;
    }
  }
  return false;
}

bool IsExceptionLine(std::string_view line) {
  if (line.empty() || line[0] == ' ' || line[0] == '\t') return false;
  size_t i = 0;
  while (i < line.size() && (IsWordChar(line[i]) || line[i] == '.')) ++i;
  if (i == 0) return false;
  return i == line.size() || line[i] == ':' || line[i] == '\r';
}

}  // namespace ctxkit::internal
