#include "programs/ctxkit/host/json_text.h"

#include <cstddef>
#include <string>

#include "simdjson.h"

namespace ctxkit::program {

namespace {

constexpr size_t kMaxDepth = 512;

// Length of the well-formed UTF-8 sequence at s[i] (1..4), or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

StatusOr<std::string> ParseJsonLineText(std::string_view line) {
  const auto invalid = [](std::string_view what) {
    return Status(StatusCode::kInvalidArgument, std::string(what));
  };
  // One parser per thread: it keeps its buffers between lines, and a JSON
  // Lines file is read one line at a time.
  thread_local simdjson::dom::parser parser;
  thread_local bool sized = false;
  if (!sized) {
    // Deeper nesting than this in a line meant to hold a text is a mistake,
    // refused before it costs a deep parse.
    if (parser.allocate(0, kMaxDepth) != simdjson::SUCCESS) {
      return Status(StatusCode::kResourceExhausted,
                    "cannot allocate the JSON parser");
    }
    sized = true;
  }
  simdjson::dom::element root;
  if (auto error = parser.parse(line.data(), line.size()).get(root); error) {
    return invalid(std::string("not valid JSON: ") +
                   simdjson::error_message(error));
  }
  std::string_view text;
  if (root.get_string().get(text) == simdjson::SUCCESS) {
    return std::string(text);
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return invalid(
        "expected a JSON string or an object with a string "
        "\"text\"");
  }
  // simdjson keeps every member, so a repeated "text" is seen here, and
  // refused: which of the two was meant cannot be told.
  bool found = false;
  for (const simdjson::dom::key_value_pair member : object) {
    if (member.key != "text") continue;
    if (found) return invalid("duplicate member \"text\"");
    found = true;
    if (member.value.get_string().get(text) != simdjson::SUCCESS) {
      return invalid("member \"text\" must be a string");
    }
  }
  if (!found) return invalid("the object has no \"text\" member");
  return std::string(text);
}

std::string JsonQuote(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out.append("\\u00");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
      ++i;
    } else if (const size_t n = Utf8Length(text, i); n == 0) {
      out.append("\\ufffd");
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace ctxkit::program
