#include "programs/ctxkit/host/json_text.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace ctxkit::program {

namespace {

constexpr int kMaxDepth = 512;

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

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  StatusOr<std::string> LineText() {
    SkipSpace();
    std::string result;
    if (Peek() == '"') {
      if (!String(&result)) return error_;
    } else if (Peek() == '{') {
      std::optional<std::string> found;
      if (!Object(&found)) return error_;
      if (!found.has_value()) {
        return Fail(0, "the object has no \"text\" member");
      }
      result = std::move(*found);
    } else {
      return Fail(pos_,
                  "expected a JSON string or an object with a string "
                  "\"text\"");
    }
    SkipSpace();
    if (pos_ != text_.size())
      return Fail(pos_, "unexpected data after the value");
    return result;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool AtEnd() const { return pos_ >= text_.size(); }

  void SkipSpace() {
    while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                        text_[pos_] == '\r' || text_[pos_] == '\n')) {
      ++pos_;
    }
  }

  Status Fail(size_t at, std::string_view what) {
    error_ = Status(StatusCode::kInvalidArgument,
                    std::string(what) + " at byte " + std::to_string(at));
    return error_;
  }
  bool FailFalse(size_t at, std::string_view what) {
    Fail(at, what);
    return false;
  }

  bool Expect(char c) {
    if (Peek() != c) {
      return FailFalse(pos_, std::string("expected '") + c + "'");
    }
    ++pos_;
    return true;
  }

  bool Hex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return FailFalse(pos_, "truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text_[pos_ + k];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return FailFalse(pos_ + k, "invalid hex digit in \\u escape");
      }
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  // A string starting at '"'; its decoded value goes to *out (may be null
  // to skip it).
  bool String(std::string* out) {
    ++pos_;  // the opening quote
    while (true) {
      if (AtEnd()) return FailFalse(pos_, "unterminated string");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return FailFalse(pos_, "control character in a string");
      }
      if (c != '\\') {
        if (out != nullptr) out->push_back(c);
        ++pos_;
        continue;
      }
      const size_t escape = pos_++;
      if (AtEnd()) return FailFalse(escape, "unterminated escape");
      const char e = text_[pos_++];
      char plain = 0;
      switch (e) {
        case '"':
          plain = '"';
          break;
        case '\\':
          plain = '\\';
          break;
        case '/':
          plain = '/';
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return FailFalse(escape, "lone low surrogate in \\u escape");
          }
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low;
            if (text_.substr(pos_, 2) != "\\u") {
              return FailFalse(escape, "lone high surrogate in \\u escape");
            }
            pos_ += 2;
            if (!Hex4(&low)) return false;
            if (low < 0xDC00 || low > 0xDFFF) {
              return FailFalse(escape, "lone high surrogate in \\u escape");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          if (out != nullptr) AppendUtf8(cp, out);
          continue;
        }
        default:
          return FailFalse(escape, "invalid escape");
      }
      if (out != nullptr) out->push_back(plain);
    }
  }

  bool Number() {
    const size_t start = pos_;
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
    } else if (Peek() >= '1' && Peek() <= '9') {
      while (Peek() >= '0' && Peek() <= '9') ++pos_;
    } else {
      return FailFalse(start, "invalid number");
    }
    if (Peek() == '.') {
      ++pos_;
      if (!(Peek() >= '0' && Peek() <= '9')) {
        return FailFalse(start, "invalid number");
      }
      while (Peek() >= '0' && Peek() <= '9') ++pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!(Peek() >= '0' && Peek() <= '9')) {
        return FailFalse(start, "invalid number");
      }
      while (Peek() >= '0' && Peek() <= '9') ++pos_;
    }
    return true;
  }

  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return FailFalse(pos_, "invalid value");
    }
    pos_ += word.size();
    return true;
  }

  // Any value, skipped.
  bool Value(int depth) {
    if (depth > kMaxDepth) return FailFalse(pos_, "nesting too deep");
    SkipSpace();
    switch (Peek()) {
      case '"':
        return String(nullptr);
      case '{':
        return ObjectSkip(depth);
      case '[': {
        ++pos_;
        SkipSpace();
        if (Peek() == ']') {
          ++pos_;
          return true;
        }
        while (true) {
          if (!Value(depth + 1)) return false;
          SkipSpace();
          if (Peek() == ']') {
            ++pos_;
            return true;
          }
          if (!Expect(',')) return false;
        }
      }
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        if (Peek() == '-' || (Peek() >= '0' && Peek() <= '9')) return Number();
        return FailFalse(pos_, AtEnd() ? "missing value" : "invalid value");
    }
  }

  bool ObjectSkip(int depth) { return Members(depth, nullptr); }

  // The top-level object; "text" goes to *found.
  bool Object(std::optional<std::string>* found) { return Members(1, found); }

  bool Members(int depth, std::optional<std::string>* found) {
    ++pos_;  // '{'
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (Peek() != '"') return FailFalse(pos_, "expected a member name");
      const size_t key_at = pos_;
      std::string key;
      if (!String(&key)) return false;
      SkipSpace();
      if (!Expect(':')) return false;
      SkipSpace();
      if (found != nullptr && key == "text") {
        if (found->has_value()) {
          return FailFalse(key_at, "duplicate member \"text\"");
        }
        if (Peek() != '"') {
          return FailFalse(pos_, "member \"text\" must be a string");
        }
        std::string value;
        if (!String(&value)) return false;
        *found = std::move(value);
      } else if (!Value(depth + 1)) {
        return false;
      }
      SkipSpace();
      if (Peek() == '}') {
        ++pos_;
        return true;
      }
      if (!Expect(',')) return false;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  Status error_;
};

}  // namespace

StatusOr<std::string> ParseJsonLineText(std::string_view line) {
  return Parser(line).LineText();
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
