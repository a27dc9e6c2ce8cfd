#include "programs/ctxkit/host/json_out.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "programs/ctxkit/host/json_text.h"

namespace ctxkit::program {

void JsonOut::Separate() {
  if (need_comma_) text_.push_back(',');
  need_comma_ = true;
}

JsonOut& JsonOut::BeginObject() {
  Separate();
  text_.push_back('{');
  need_comma_ = false;
  return *this;
}

JsonOut& JsonOut::EndObject() {
  text_.push_back('}');
  need_comma_ = true;
  return *this;
}

JsonOut& JsonOut::BeginArray() {
  Separate();
  text_.push_back('[');
  need_comma_ = false;
  return *this;
}

JsonOut& JsonOut::EndArray() {
  text_.push_back(']');
  need_comma_ = true;
  return *this;
}

JsonOut& JsonOut::Key(std::string_view key) {
  Separate();
  text_.append(JsonQuote(key)).push_back(':');
  // The value follows the key without a comma.
  need_comma_ = false;
  return *this;
}

JsonOut& JsonOut::String(std::string_view value) {
  Separate();
  text_.append(JsonQuote(value));
  return *this;
}

JsonOut& JsonOut::Uint(uint64_t value) {
  Separate();
  text_.append(std::to_string(value));
  return *this;
}

JsonOut& JsonOut::Int(int64_t value) {
  Separate();
  text_.append(std::to_string(value));
  return *this;
}

JsonOut& JsonOut::Double(double value) {
  Separate();
  if (!std::isfinite(value)) {
    text_.append("null");
    return *this;
  }
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  text_.append(buffer, result.ptr);
  return *this;
}

JsonOut& JsonOut::Bool(bool value) {
  Separate();
  text_.append(value ? "true" : "false");
  return *this;
}

JsonOut& JsonOut::Null() {
  Separate();
  text_.append("null");
  return *this;
}

JsonOut& JsonOut::Raw(std::string_view json) {
  Separate();
  text_.append(MinifyJson(json));
  return *this;
}

std::string MinifyJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < json.size()) {
        out.push_back(json[++i]);
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out.push_back(c);
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace ctxkit::program
