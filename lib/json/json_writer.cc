#include "lib/json/json_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

// Typical documents are small; this avoids the first few regrowths without
// costing much when many writers are short-lived.
constexpr size_t kInitialCapacity = 256;
constexpr size_t kInitialDepth = 8;

constexpr char kHexDigits[] = "0123456789abcdef";

// Bytes at which a run of verbatim-copied text must stop. 0xE2 stops the
// UTF-8 run because it starts U+2028 and U+2029, which JSON allows raw but
// JavaScript does not; the check for the rest of the sequence happens at the
// stop.
constexpr std::array<bool, 256> MakeStopTable(bool ascii_only) {
  std::array<bool, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = true;
  table['"'] = true;
  table['\\'] = true;
  table[0x7F] = true;
  if (ascii_only) {
    for (int c = 0x80; c < 0x100; ++c) table[c] = true;
  } else {
    table[0xE2] = true;
  }
  return table;
}
constexpr std::array<bool, 256> kStopUtf8 = MakeStopTable(false);
constexpr std::array<bool, 256> kStopAscii = MakeStopTable(true);

// Whether all 8 bytes of `word` are printable ASCII other than '"' and '\\',
// i.e. can be copied verbatim in either mode. Each test is the classic
// "has a byte that ..." bit trick; they are exact as booleans, which is all
// that is needed here.
inline bool IsPlainWord(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const uint64_t below_space = (word - kOnes * 0x20) & ~word & kHigh;
  // A byte <= 0x7E stays below 0x80 when incremented; 0x7F does not, and
  // bytes >= 0x80 already have the high bit.
  const uint64_t at_least_del = ((word + kOnes) | word) & kHigh;
  const uint64_t quote_bits = word ^ (kOnes * '"');
  const uint64_t quote = (quote_bits - kOnes) & ~quote_bits & kHigh;
  const uint64_t backslash_bits = word ^ (kOnes * '\\');
  const uint64_t backslash = (backslash_bits - kOnes) & ~backslash_bits & kHigh;
  return (below_space | at_least_del | quote | backslash) == 0;
}

}  // namespace

JsonWriter::JsonWriter() : JsonWriter(Options()) {}

JsonWriter::JsonWriter(Options options) : options_(options) {
  out_.reserve(kInitialCapacity);
  stack_.reserve(kInitialDepth);
}

void JsonWriter::Reserve(size_t extra) {
  if (out_.capacity() - out_.size() < extra) {
    // Grow geometrically even though callers ask for exact amounts.
    out_.reserve(std::max(out_.size() + extra, 2 * out_.capacity()));
  }
}

void JsonWriter::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

void JsonWriter::Misuse(const std::string& what) {
  Fail(absl::InternalError("JSON writer misuse: " + what));
}

std::string JsonWriter::Path(bool include_current) const {
  std::string path;
  for (size_t depth = 0; depth < stack_.size(); ++depth) {
    const Frame& frame = stack_[depth];
    const bool innermost = depth + 1 == stack_.size();
    if (innermost && !include_current) break;
    if (frame.is_object) {
      if (innermost && !frame.key_pending) break;
      if (!path.empty()) path.push_back('.');
      path.append(out_, frame.key_begin, frame.key_end - frame.key_begin);
    } else {
      // An enclosing array has already counted the element being written;
      // the innermost one counts it only once the value starts.
      const size_t index = innermost ? frame.count : frame.count - 1;
      absl::StrAppend(&path, "[", index, "]");
    }
  }
  return path;
}

std::string JsonWriter::DescribePath(bool include_current) const {
  std::string path = Path(include_current);
  if (path.empty()) return "the top level";
  return absl::StrCat("\"", path, "\"");
}

bool JsonWriter::ValueAllowed(const char* kind) {
  if (!status_.ok()) return false;
  if (stack_.empty()) {
    if (!wrote_root_) return true;
    Misuse(absl::StrCat("a second top-level value (", kind, ")"));
    return false;
  }
  const Frame& top = stack_.back();
  if (top.is_object && !top.key_pending) {
    Misuse(absl::StrCat(kind, " value where an object key is required, in ",
                        "the object at ", DescribePath(false)));
    return false;
  }
  return true;
}

void JsonWriter::StartValue() {
  if (stack_.empty()) {
    wrote_root_ = true;
    return;
  }
  Frame& top = stack_.back();
  if (top.is_object) {
    top.key_pending = false;
  } else {
    if (top.count > 0) out_.push_back(',');
    ++top.count;
  }
}

void JsonWriter::BeginContainer(bool is_object) {
  if (!ValueAllowed(is_object ? "object" : "array")) return;
  StartValue();
  out_.push_back(is_object ? '{' : '[');
  stack_.push_back(Frame{.is_object = is_object});
}

void JsonWriter::EndContainer(bool is_object) {
  if (!status_.ok()) return;
  const char* call = is_object ? "EndObject()" : "EndArray()";
  if (stack_.empty()) {
    Misuse(absl::StrCat(call, " with no open container"));
    return;
  }
  const Frame& top = stack_.back();
  if (top.is_object != is_object) {
    Misuse(absl::StrCat(call, " closing the ",
                        top.is_object ? "object" : "array", " at ",
                        DescribePath(false)));
    return;
  }
  if (top.key_pending) {
    Misuse(absl::StrCat(call, " after Key() without a value, in the object at ",
                        DescribePath(false)));
    return;
  }
  stack_.pop_back();
  out_.push_back(is_object ? '}' : ']');
}

JsonWriter& JsonWriter::BeginObject() {
  BeginContainer(/*is_object=*/true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  EndContainer(/*is_object=*/true);
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeginContainer(/*is_object=*/false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  EndContainer(/*is_object=*/false);
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  if (!status_.ok()) return *this;
  if (stack_.empty() || !stack_.back().is_object) {
    Misuse(stack_.empty()
               ? std::string("Key() outside any object")
               : absl::StrCat("Key() in the array at ", DescribePath(false)));
    return *this;
  }
  if (stack_.back().key_pending) {
    Misuse(absl::StrCat("Key() after Key() without a value, in the object at ",
                        DescribePath(false)));
    return *this;
  }
  if (!IsValidUtf8(key)) {
    Fail(ValidateUtf8(key, absl::StrCat("JSON object key in the object at ",
                                        DescribePath(false))));
    return *this;
  }
  Frame& top = stack_.back();
  if (top.count > 0) out_.push_back(',');
  ++top.count;
  top.key_pending = true;
  // The escaped key will sit between the quotes that WriteEscaped() writes.
  top.key_begin = out_.size() + 1;
  WriteEscaped(key);
  top.key_end = out_.size() - 1;
  out_.push_back(':');
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  if (!ValueAllowed("string")) return *this;
  if (!IsValidUtf8(value)) {
    Fail(ValidateUtf8(value,
                      absl::StrCat("JSON string at ", DescribePath(true))));
    return *this;
  }
  StartValue();
  WriteEscaped(value);
  return *this;
}

template <typename Integer>
JsonWriter& JsonWriter::WriteInteger(Integer value) {
  if (!ValueAllowed("integer")) return *this;
  StartValue();
  char buffer[24];
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  out_.append(buffer, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) { return WriteInteger(value); }

JsonWriter& JsonWriter::Uint(uint64_t value) { return WriteInteger(value); }

JsonWriter& JsonWriter::Double(double value) {
  if (!ValueAllowed("number")) return *this;
  if (!std::isfinite(value)) {
    const char* name = std::isnan(value) ? "NaN"
                       : value > 0       ? "infinity"
                                         : "-infinity";
    Fail(absl::InvalidArgumentError(absl::StrCat("JSON cannot represent ", name,
                                                 " at ", DescribePath(true))));
    return *this;
  }
  StartValue();
  // The shortest round-tripping form is at most 24 characters
  // ("-2.2250738585072014e-308").
  char buffer[32];
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  out_.append(buffer, result.ptr);
  // Integral values short enough for fixed notation come out as bare digits
  // ("2", "-0"), which readers would take for integers (and -0.0 for 0).
  if (std::find_if(buffer, result.ptr,
                   [](char c) { return c == '.' || c == 'e'; }) == result.ptr) {
    out_.append(".0");
  }
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  if (!ValueAllowed("boolean")) return *this;
  StartValue();
  out_.append(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  if (!ValueAllowed("null")) return *this;
  StartValue();
  out_.append("null");
  return *this;
}

JsonWriter& JsonWriter::TrustedValue(std::string_view json) {
  if (!ValueAllowed("value")) return *this;
  if (json.empty()) {
    Misuse("an empty trusted value");
    return *this;
  }
  StartValue();
  out_.append(json);
  return *this;
}

void JsonWriter::WriteCodeUnitEscape(uint32_t unit) {
  const char escape[6] = {'\\',
                          'u',
                          kHexDigits[(unit >> 12) & 0xF],
                          kHexDigits[(unit >> 8) & 0xF],
                          kHexDigits[(unit >> 4) & 0xF],
                          kHexDigits[unit & 0xF]};
  out_.append(escape, sizeof(escape));
}

// `text` is valid UTF-8 (checked by the caller), so sequences are decoded
// without further checks.
void JsonWriter::WriteEscaped(std::string_view text) {
  const bool ascii_only = options_.ascii_only;
  const std::array<bool, 256>& stop = ascii_only ? kStopAscii : kStopUtf8;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  Reserve(n + 2);
  out_.push_back('"');
  size_t run_start = 0;  // first byte not yet copied to out_
  size_t i = 0;
  for (;;) {
    while (n - i >= 8) {
      uint64_t word;
      std::memcpy(&word, p + i, sizeof(word));
      if (!IsPlainWord(word)) break;
      i += 8;
    }
    const size_t limit = std::min(n, i + 8);
    while (i < limit && !stop[p[i]]) ++i;
    if (i == n) break;
    if (i == limit) continue;

    const unsigned char c = p[i];
    if (c == 0xE2 && !ascii_only) {
      if (n - i >= 3 && p[i + 1] == 0x80 &&
          (p[i + 2] == 0xA8 || p[i + 2] == 0xA9)) {
        out_.append(text.data() + run_start, i - run_start);
        out_.append(p[i + 2] == 0xA8 ? "\\u2028" : "\\u2029");
        i += 3;
        run_start = i;
      } else {
        ++i;  // an ordinary character; stays in the run
      }
      continue;
    }

    out_.append(text.data() + run_start, i - run_start);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out_.append("\\\"");
          break;
        case '\\':
          out_.append("\\\\");
          break;
        case '\b':
          out_.append("\\b");
          break;
        case '\f':
          out_.append("\\f");
          break;
        case '\n':
          out_.append("\\n");
          break;
        case '\r':
          out_.append("\\r");
          break;
        case '\t':
          out_.append("\\t");
          break;
        default:  // other control characters and U+007F
          WriteCodeUnitEscape(c);
          break;
      }
      ++i;
    } else {
      uint32_t code_point;
      if (c < 0xE0) {
        code_point = (uint32_t{c} & 0x1F) << 6 | (p[i + 1] & 0x3F);
        i += 2;
      } else if (c < 0xF0) {
        code_point = (uint32_t{c} & 0x0F) << 12 | (p[i + 1] & 0x3F) << 6 |
                     (p[i + 2] & 0x3F);
        i += 3;
      } else {
        code_point = (uint32_t{c} & 0x07) << 18 | (p[i + 1] & 0x3F) << 12 |
                     (p[i + 2] & 0x3F) << 6 | (p[i + 3] & 0x3F);
        i += 4;
      }
      if (code_point < 0x10000) {
        WriteCodeUnitEscape(code_point);
      } else {
        code_point -= 0x10000;
        WriteCodeUnitEscape(0xD800 + (code_point >> 10));
        WriteCodeUnitEscape(0xDC00 + (code_point & 0x3FF));
      }
    }
    run_start = i;
  }
  out_.append(text.data() + run_start, n - run_start);
  out_.push_back('"');
}

absl::StatusOr<std::string> JsonWriter::Finish() && {
  if (status_.ok()) {
    if (!stack_.empty()) {
      Misuse(absl::StrCat("Finish() with ", stack_.size(),
                          " unclosed container(s), the innermost at ",
                          DescribePath(false)));
    } else if (!wrote_root_) {
      Misuse("Finish() before any value was written");
    }
  }
  if (!status_.ok()) return status_;
  return std::move(out_);
}

}  // namespace ctxkit::internal
