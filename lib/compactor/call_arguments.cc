#include "lib/compactor/call_arguments.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lib/compactor/summary.h"
#include "lib/compactor/summary_keywords.h"
#include "lib/compactor/summary_text.h"
#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

constexpr size_t kArgumentsScanBytes = 32 * 1024;
// The short form of a call's arguments is shorter than a name, so a call
// stays one glance.
constexpr size_t kMaxShortArgsBytes = 60;

// Decodes the JSON string starting at json[*pos] == '"' into *out (escapes
// resolved; bad \u escapes become U+FFFD) and moves *pos past it. Tolerates
// malformed input: an unterminated string ends at the end of `json`.
void DecodeJsonString(std::string_view json, size_t* pos, std::string* out) {
  out->clear();
  size_t i = *pos + 1;
  auto hex4 = [json](size_t at, uint32_t* value) {
    if (at + 4 > json.size()) return false;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = json[at + k];
      v <<= 4;
      if (IsDigit(c)) {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    *value = v;
    return true;
  };
  while (i < json.size() && json[i] != '"') {
    const char c = json[i];
    if (c != '\\') {
      out->push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= json.size()) {
      ++i;
      break;
    }
    const char e = json[i + 1];
    i += 2;
    switch (e) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 'b':
      case 'f':
        out->push_back(' ');
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(i, &cp)) {
          AppendUtf8(0xFFFD, out);
          break;
        }
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low = 0;
          if (i + 1 < json.size() && json[i] == '\\' && json[i + 1] == 'u' &&
              hex4(i + 2, &low) && low >= 0xDC00 && low <= 0xDFFF) {
            i += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        AppendUtf8(static_cast<char32_t>(cp), out);
        break;
      }
      default:
        out->push_back(e);
        break;  // \" \\ \/ and anything else
    }
  }
  *pos = i < json.size() ? i + 1 : json.size();
}

// Whether `word`, the target of a shell write, names a file: path
// characters and a letter, not an option, variable or descriptor. (Unlike
// LooksLikePath, any name counts here: the shell is writing to it.)
bool IsWrittenName(std::string_view word) {
  if (word.empty() || word.size() > 255 || word[0] == '-' || word[0] == '$' ||
      word[0] == '&' || StartsWith(word, "/dev/")) {
    return false;
  }
  bool letter = false;
  for (char c : word) {
    if (!IsPathChar(c)) return false;
    letter = letter || IsAlpha(c);
  }
  return letter;
}

}  // namespace

void ReadArguments(std::string_view json, std::string* text, std::string* value,
                   CallArguments* call) {
  json = CutUtf8(json, kArgumentsScanBytes);
  size_t i = 0;
  while (i < json.size() && (IsAsciiSpace(json[i]) || json[i] == '\n')) ++i;
  if (i == json.size() || (json[i] != '{' && json[i] != '[')) {
    // Not JSON: the text itself.
    text->append(json);
    text->push_back('\n');
    call->short_form = MakeItem(json, kMaxShortArgsBytes);
    return;
  }
  int depth = 0;
  std::string key;
  std::string short_form;
  auto add_short = [&short_form](std::string_view v) {
    if (short_form.size() > kMaxShortArgsBytes) return;
    const size_t newline = v.find('\n');
    if (!short_form.empty()) short_form += ", ";
    short_form.append(CutUtf8(v.substr(0, newline), kMaxShortArgsBytes + 4));
    if (newline != std::string_view::npos) short_form += " ...";
  };
  while (i < json.size()) {
    const char c = json[i];
    if (c == '{' || c == '[') {
      if (depth == 1) add_short("...");
      ++depth;
      ++i;
    } else if (c == '}' || c == ']') {
      --depth;
      ++i;
    } else if (c == '"') {
      DecodeJsonString(json, &i, value);
      size_t next = i;
      while (next < json.size() &&
             (IsAsciiSpace(json[next]) || json[next] == '\n')) {
        ++next;
      }
      if (next < json.size() && json[next] == ':') {
        if (depth == 1) key = *value;
        i = next + 1;
        continue;
      }
      text->append(*value);
      text->push_back('\n');
      if (depth == 1) {
        if (call->path.empty() && IsPathKey(key)) {
          call->path = MakeItem(*value, kMaxDigestItemBytes);
        }
        if (key == "command" && call->command.empty()) {
          call->command = CutUtf8(*value, 4096);
        }
        add_short(*value);
      }
    } else if (IsWordChar(c) || c == '-') {
      const size_t begin = i;
      while (i < json.size() && (IsWordChar(json[i]) || json[i] == '.' ||
                                 json[i] == '-' || json[i] == '+')) {
        ++i;
      }
      if (depth == 1) add_short(json.substr(begin, i - begin));
    } else {
      ++i;
    }
  }
  call->short_form = MakeItem(short_form, kMaxShortArgsBytes);
}

std::string_view ShellWrittenFile(std::string_view line) {
  line = TrimSpace(line);
  auto word_after = [](std::string_view s, size_t at) {
    while (at < s.size() && s[at] == ' ') ++at;
    size_t end = at;
    while (end < s.size() && s[end] != ' ' && s[end] != ';' && s[end] != '|' &&
           s[end] != '&' && s[end] != ')' && s[end] != '\'' && s[end] != '"') {
      ++end;
    }
    return s.substr(at, end - at);
  };
  if (StartsWith(line, "create ")) {
    const std::string_view p = word_after(line, 7);
    return IsWrittenName(p) ? p : std::string_view();
  }
  if (StartsWith(line, "sed -i")) {
    const size_t space = line.rfind(' ');
    const std::string_view p = line.substr(space + 1);
    return IsWrittenName(p) ? p : std::string_view();
  }
  const size_t tee = line.find("tee ");
  if (tee != std::string_view::npos && (tee == 0 || line[tee - 1] == ' ')) {
    size_t at = tee + 4;
    if (StartsWith(line.substr(at), "-a ")) at += 3;
    const std::string_view p = word_after(line, at);
    if (IsWrittenName(p)) return p;
  }
  for (size_t pos = line.find('>'); pos != std::string_view::npos;
       pos = line.find('>', pos + 1)) {
    if (pos > 0 && (line[pos - 1] == '2' || line[pos - 1] == '&' ||
                    line[pos - 1] == '-' || line[pos - 1] == '=')) {
      continue;
    }
    size_t at = pos + 1;
    if (at < line.size() && line[at] == '>') ++at;
    if (at < line.size() && line[at] == '&') continue;
    const std::string_view p = word_after(line, at);
    if (IsWrittenName(p)) return p;
  }
  return {};
}

}  // namespace ctxkit::internal
