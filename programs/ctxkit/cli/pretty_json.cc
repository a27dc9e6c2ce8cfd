#include "programs/ctxkit/cli/pretty_json.h"

#include <cstddef>

namespace ctxkit::program {

namespace {

void Indent(int depth, std::string& out) {
  out.push_back('\n');
  out.append(static_cast<size_t>(depth > 0 ? depth : 0) * 2, ' ');
}

void PrettyLine(std::string_view line, std::string& out) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      out.push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        out.push_back(c);
        break;
      case '{':
      case '[': {
        out.push_back(c);
        // An empty object or array stays on its line: "{}", "[]".
        const char close = c == '{' ? '}' : ']';
        if (i + 1 < line.size() && line[i + 1] == close) {
          out.push_back(close);
          ++i;
        } else {
          Indent(++depth, out);
        }
        break;
      }
      case '}':
      case ']':
        Indent(--depth, out);
        out.push_back(c);
        break;
      case ',':
        out.push_back(c);
        Indent(depth, out);
        break;
      case ':':
        out.append(": ");
        break;
      case ' ':
      case '\t':
        break;  // the program's JSON is compact; indentation replaces these
      default:
        out.push_back(c);
    }
  }
}

}  // namespace

std::string PrettyJsonLines(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (!line.empty() && (line.front() == '{' || line.front() == '[')) {
      PrettyLine(line, out);
    } else {
      out.append(line);
    }
    if (end == std::string_view::npos) break;
    out.push_back('\n');
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace ctxkit::program
