// The needle rules of bench/compaction_quality; quality_needles.h states
// them.

#include "bench/quality_needles.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::bench {
namespace {

bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsIdentifierChar(char c) {
  return IsAsciiLetter(c) || IsDigit(c) || c == '_';
}

// The length of the dotted identifier at the start of `s` ("a.b_c.D"), 0
// when `s` does not start with one.
size_t DottedIdentifier(std::string_view s) {
  size_t n = 0;
  while (true) {
    if (n >= s.size() || !(IsAsciiLetter(s[n]) || s[n] == '_')) return 0;
    while (n < s.size() && IsIdentifierChar(s[n])) ++n;
    if (n + 1 < s.size() && s[n] == '.' &&
        (IsAsciiLetter(s[n + 1]) || s[n + 1] == '_')) {
      ++n;
      continue;
    }
    return n;
  }
}

// Rule 1: `line` starts with an exception name and ':' or ends there.
bool IsExceptionLine(std::string_view line) {
  const size_t n = DottedIdentifier(line);
  if (n == 0) return false;
  std::string_view name = line.substr(0, n);
  name = name.substr(
      name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  if (!name.ends_with("Error") && !name.ends_with("Exception")) return false;
  return n == line.size() || line[n] == ':';
}

}  // namespace

const char* NeedleKindName(NeedleKind kind) {
  switch (kind) {
    case NeedleKind::kTask:
      return "task";
    case NeedleKind::kError:
      return "errors";
    case NeedleKind::kEditedFile:
      return "edited files";
    case NeedleKind::kLastResult:
      return "last result";
    case NeedleKind::kFinalDecision:
      return "final decision";
  }
  return "?";
}

std::string_view Trim(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

std::string_view TrimAll(std::string_view text) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
  };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(Trim(text.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

std::string Excerpt(std::string_view text) {
  if (text.size() <= kMaxExcerpt) return std::string(text);
  size_t n = kMaxExcerpt;
  // Byte n starts the part cut off; back off while it continues a sequence.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return std::string(text.substr(0, n));
}

std::string DistinctiveLine(std::string_view text) {
  for (std::string_view line : Lines(text)) {
    if (line.size() >= kMinDistinctive) return Excerpt(line);
  }
  return Excerpt(TrimAll(text));
}

bool IsErrorLine(std::string_view line, std::string* excerpt) {
  line = Trim(line);
  while (line.size() > 2 && (line[0] == '-' || line[0] == '*') &&
         line[1] == ' ') {
    line = Trim(line.substr(2));
  }
  if (line.empty()) return false;
  // An editor's numbered view ("1474:    except ValueError:") is code.
  {
    size_t digits = 0;
    while (digits < line.size() && IsDigit(line[digits])) ++digits;
    if (digits > 0 && digits < line.size() && line[digits] == ':') {
      return false;
    }
  }
  std::string_view found;
  // A flake8 code ("E999 ") in front of an exception name is the linter's,
  // not the exception's.
  std::string_view after_code = line;
  if (line.size() > 5 && line[0] >= 'A' && line[0] <= 'Z' && IsDigit(line[1]) &&
      IsDigit(line[2]) && IsDigit(line[3]) && line[4] == ' ') {
    after_code = line.substr(5);
  }
  if (IsExceptionLine(after_code)) {
    found = after_code;
  } else if (line.starts_with("error:") || line.starts_with("Error:") ||
             line.starts_with("ERROR:") || line.starts_with("fatal:")) {
    found = line;
  } else {
    for (std::string_view marker :
         {"No such file or directory", ": No such file", "command not found",
          "Permission denied", "Segmentation fault", "TIMED OUT"}) {
      if (line.find(marker) != std::string_view::npos) {
        found = line;
        break;
      }
    }
    if (found.empty() &&
        (line.starts_with("FAILED ") || line.starts_with("ERROR ")) &&
        line.find("::") != std::string_view::npos) {
      found = line;
    }
  }
  if (found.empty()) return false;
  if (excerpt != nullptr) *excerpt = Excerpt(found);
  return true;
}

void AddNeedle(std::vector<Needle>* needles, NeedleKind kind,
               std::string excerpt) {
  if (excerpt.empty()) return;
  for (const Needle& n : *needles) {
    if (n.kind == kind && n.excerpt == excerpt) return;
  }
  needles->push_back({kind, std::move(excerpt)});
}

void AddErrorNeedles(std::vector<Needle>* needles, std::string_view text) {
  for (std::string_view line : Lines(text)) {
    std::string excerpt;
    if (IsErrorLine(line, &excerpt)) {
      AddNeedle(needles, NeedleKind::kError, std::move(excerpt));
    }
  }
}

}  // namespace ctxkit::bench
