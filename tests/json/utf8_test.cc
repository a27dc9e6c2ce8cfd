// Tests of IsValidUtf8 / ValidateUtf8 against a reference decoder written
// independently here (decode to a code point, then check its range), over
// exhaustive short inputs and many random ones, on both the scalar path and
// simdjson's path for long inputs.

#include "lib/json/utf8.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace ctxkit::internal {
namespace {

// Fixed so failures reproduce; CTXKIT_TEST_SEED overrides it to explore.
uint64_t TestSeed() {
  if (const char* env = std::getenv("CTXKIT_TEST_SEED")) {
    return std::strtoull(env, nullptr, 0);
  }
  return 0x5eed2024;
}

// Returns the offset of the first byte of the first ill-formed sequence, or
// nullopt if `s` is valid: decode each sequence by its lead byte's length
// class, then reject overlong, surrogate and out-of-range results.
std::optional<size_t> ReferenceFirstError(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    size_t length;
    uint32_t code_point;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code_point = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code_point = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code_point = lead & 0x07;
    } else {
      return i;  // continuation byte or F8..FF
    }
    if (s.size() - i < length) return i;
    for (size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<unsigned char>(s[i + k]);
      if ((byte & 0xC0) != 0x80) return i;
      code_point = (code_point << 6) | (byte & 0x3F);
    }
    constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kMinimum[length]) return i;
    if (code_point >= 0xD800 && code_point <= 0xDFFF) return i;
    if (code_point > 0x10FFFF) return i;
    i += length;
  }
  return std::nullopt;
}

void AppendUtf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// The message ValidateUtf8 must produce for an error at `offset` of `s`.
std::string ExpectedPrefix(std::string_view what, std::string_view s,
                           size_t offset) {
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02X",
                static_cast<unsigned char>(s[offset]));
  return std::string(what) + " is not valid UTF-8: invalid byte " + byte +
         " at offset " + std::to_string(offset) + " (";
}

// Checks IsValidUtf8 and ValidateUtf8 against the reference for `s`.
void CheckAgainstReference(std::string_view s) {
  const std::optional<size_t> expected = ReferenceFirstError(s);
  CHECK(IsValidUtf8(s) == !expected.has_value());
  const absl::Status status = ValidateUtf8(s, "text");
  if (!expected.has_value()) {
    CHECK(status.ok());
  } else {
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(status.message())
              .starts_with(ExpectedPrefix("text", s, *expected)));
  }
}

// simdjson only takes over from the scalar loop for inputs of 64 bytes or
// more; padding with ASCII moves a short case onto that path while keeping
// its verdict and shifting its offset predictably.
const std::string kAsciiPadding(80, 'p');

TEST_CASE("valid text is accepted") {
  for (std::string_view s :
       {std::string_view(""), std::string_view("hello"),
        std::string_view("\0nul\0", 5), std::string_view("\x7F"),
        std::string_view("\xC2\x80"), std::string_view("\xDF\xBF"),
        std::string_view("\xE0\xA0\x80"), std::string_view("\xED\x9F\xBF"),
        std::string_view("\xEE\x80\x80"), std::string_view("\xEF\xBF\xBF"),
        std::string_view("\xF0\x90\x80\x80"),
        std::string_view("\xF4\x8F\xBF\xBF"),
        std::string_view("caf\xC3\xA9 \xE2\x80\xA8 \xF0\x9F\x98\x80")}) {
    CAPTURE(s);
    CHECK(IsValidUtf8(s));
    CHECK(IsValidUtf8(kAsciiPadding + std::string(s) + kAsciiPadding));
    CHECK(ValidateUtf8(s, "text").ok());
  }
}

TEST_CASE("each kind of ill-formed sequence is rejected with its offset") {
  struct Case {
    std::string_view bytes;
    std::string_view reason;
  };
  const Case cases[] = {
      {"\xC0\x80", "overlong encoding"},
      {"\xC1\xBF", "overlong encoding"},
      {"\xE0\x80\x80", "overlong encoding"},
      {"\xE0\x9F\xBF", "overlong encoding"},
      {"\xF0\x80\x80\x80", "overlong encoding"},
      {"\xF0\x8F\xBF\xBF", "overlong encoding"},
      {"\xED\xA0\x80", "surrogate code point"},
      {"\xED\xBF\xBF", "surrogate code point"},
      {"\xF4\x90\x80\x80", "code point above U+10FFFF"},
      {"\xF5\x80\x80\x80", "code point above U+10FFFF"},
      {"\xE2\x82", "truncated sequence"},
      {"\xF0\x9F\x98", "truncated sequence"},
      {"\xC3", "truncated sequence"},
      {"\xC3\x41", "missing continuation byte"},
      {"\xE2\x28\xA1", "missing continuation byte"},
      {"\x80", "unexpected continuation byte"},
      {"\xBF", "unexpected continuation byte"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.bytes);
    // A truncated sequence is one cut short by the end of the text.
    const std::string text = "abc" + std::string(c.bytes) +
                             (c.reason == "truncated sequence" ? "" : "def");
    CHECK_FALSE(IsValidUtf8(c.bytes));
    CHECK_FALSE(IsValidUtf8(text));
    CHECK_FALSE(IsValidUtf8(kAsciiPadding + text));
    const absl::Status status = ValidateUtf8(text, "message.content");
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(status.message() == ExpectedPrefix("message.content", text, 3) +
                                  std::string(c.reason) + ")");
  }
  // F5..FF can never appear at all.
  for (int byte = 0xF5; byte <= 0xFF; ++byte) {
    CAPTURE(byte);
    const std::string text = std::string("x") + static_cast<char>(byte);
    CHECK_FALSE(IsValidUtf8(text));
    CHECK_FALSE(IsValidUtf8(text + kAsciiPadding));
    const absl::Status status = ValidateUtf8(text, "field");
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(status.message())
              .starts_with(ExpectedPrefix("field", text, 1)));
  }
}

TEST_CASE("the message format is exact") {
  const absl::Status status =
      ValidateUtf8("0123456789abcdef\xC3", "message.content");
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(status.message() ==
        "message.content is not valid UTF-8: invalid byte 0xC3 at offset 16 "
        "(truncated sequence)");
}

TEST_CASE("all strings of up to two bytes agree with the reference") {
  for (int a = 0; a < 256; ++a) {
    std::string one(1, static_cast<char>(a));
    CheckAgainstReference(one);
    for (int b = 0; b < 256; ++b) {
      const std::string two = one + static_cast<char>(b);
      CheckAgainstReference(two);
      CHECK(IsValidUtf8(kAsciiPadding + two) == IsValidUtf8(two));
    }
  }
}

TEST_CASE("all three-byte strings with a non-ASCII lead agree") {
  // Every lead from 0x80 and every pair after it: 8M inputs, each checked
  // with a plain CHECK only on disagreement to keep the run fast.
  size_t mismatches = 0;
  std::string s(3, '\0');
  std::string padded = kAsciiPadding + s;
  for (int a = 0x80; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (int c = 0; c < 256; ++c) {
        s[0] = static_cast<char>(a);
        s[1] = static_cast<char>(b);
        s[2] = static_cast<char>(c);
        const bool expected = !ReferenceFirstError(s).has_value();
        if (IsValidUtf8(s) != expected) ++mismatches;
        // The simdjson path, sampled: it is slower per call.
        if ((c & 0x0F) == 0 || c >= 0x7E) {
          padded.replace(kAsciiPadding.size(), 3, s);
          if (IsValidUtf8(padded) != expected) ++mismatches;
        }
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("four-byte sequences at the range boundaries agree") {
  const int interesting[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90,
                             0x9F, 0xA0, 0xBF, 0xC0, 0xF4, 0xFF};
  for (int a = 0xF0; a < 0x100; ++a) {
    for (int b : interesting) {
      for (int c : interesting) {
        for (int d : interesting) {
          std::string s = {static_cast<char>(a), static_cast<char>(b),
                           static_cast<char>(c), static_cast<char>(d)};
          CheckAgainstReference(s);
          CheckAgainstReference(kAsciiPadding + s);
          CheckAgainstReference(s + kAsciiPadding);
        }
      }
    }
  }
}

TEST_CASE("every valid code point is accepted and its neighbours checked") {
  std::string text;
  for (uint32_t code_point = 0; code_point <= 0x10FFFF; ++code_point) {
    if (code_point >= 0xD800 && code_point <= 0xDFFF) continue;
    text.clear();
    AppendUtf8(text, code_point);
    if (!IsValidUtf8(text)) {
      FAIL("code point U+" << std::hex << code_point << " rejected");
    }
  }
  // The encoder above writes surrogates and values past U+10FFFF the same
  // way; those must be rejected.
  for (uint32_t code_point :
       {0xD800u, 0xDBFFu, 0xDC00u, 0xDFFFu, 0x110000u, 0x13FFFFu}) {
    text.clear();
    AppendUtf8(text, code_point);
    CHECK_FALSE(IsValidUtf8(text));
    CHECK_FALSE(IsValidUtf8(kAsciiPadding + text));
  }
}

// Mostly valid text with a few random corruptions, so that errors land at
// all positions and in all contexts, short and long.
std::string RandomMaybeValid(std::mt19937_64& rng) {
  std::string s;
  const size_t code_points =
      std::uniform_int_distribution<size_t>(0, rng() % 4 == 0 ? 300 : 40)(rng);
  for (size_t i = 0; i < code_points; ++i) {
    uint32_t code_point;
    switch (rng() % 5) {
      case 0:
      case 1:
        code_point = static_cast<uint32_t>(rng() % 0x80);
        break;
      case 2:
        code_point = static_cast<uint32_t>(0x80 + rng() % (0x800 - 0x80));
        break;
      case 3:
        code_point = static_cast<uint32_t>(0x800 + rng() % (0x10000 - 0x800));
        if (code_point >= 0xD800 && code_point <= 0xDFFF) code_point -= 0x1000;
        break;
      default:
        code_point =
            static_cast<uint32_t>(0x10000 + rng() % (0x110000 - 0x10000));
        break;
    }
    AppendUtf8(s, code_point);
  }
  const int corruptions = static_cast<int>(rng() % 4);
  for (int i = 0; i < corruptions && !s.empty(); ++i) {
    const size_t at = rng() % s.size();
    switch (rng() % 4) {
      case 0:
        s[at] = static_cast<char>(rng());
        break;
      case 1:
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(at),
                 static_cast<char>(rng()));
        break;
      case 2:
        s.resize(at);
        break;
      default:
        s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8)));
        break;
    }
  }
  return s;
}

TEST_CASE("random byte strings agree with the reference decoder") {
  const uint64_t seed = TestSeed();
  INFO("seed = " << seed << " (rerun with CTXKIT_TEST_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  int valid = 0;
  int invalid = 0;
  for (int i = 0; i < 50000; ++i) {
    std::string s;
    if (i % 10 == 0) {
      // Raw random bytes: almost always invalid, early.
      s.resize(rng() % 100);
      for (char& c : s) c = static_cast<char>(rng());
    } else {
      s = RandomMaybeValid(rng);
    }
    CAPTURE(i);
    CheckAgainstReference(s);
    (ReferenceFirstError(s).has_value() ? invalid : valid)++;
  }
  // Both outcomes must be well represented for the comparison to mean much.
  CHECK(valid > 10000);
  CHECK(invalid > 10000);
}

}  // namespace
}  // namespace ctxkit::internal
