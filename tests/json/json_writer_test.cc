// Tests of JsonWriter: exact output for fixed inputs, byte-exact round trips
// of random text and numbers through simdjson, path-naming errors, and
// structural misuse.

#include "lib/json/json_writer.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lib/json/utf8.h"
#include "simdjson.h"

namespace ctxkit::internal {
namespace {

// Fixed so failures reproduce; CTXKIT_TEST_SEED overrides it to explore.
uint64_t TestSeed() {
  if (const char* env = std::getenv("CTXKIT_TEST_SEED")) {
    return std::strtoull(env, nullptr, 0);
  }
  return 0x5eed2024;
}

// Finishes `writer`, requiring success.
std::string Finished(JsonWriter& writer) {
  absl::StatusOr<std::string> json = std::move(writer).Finish();
  REQUIRE_MESSAGE(json.ok(), json.status().ToString());
  return *std::move(json);
}

// Finishes `writer`, requiring failure with `code`; returns the message.
std::string FinishError(JsonWriter& writer, absl::StatusCode code) {
  absl::StatusOr<std::string> json = std::move(writer).Finish();
  REQUIRE_FALSE(json.ok());
  CHECK(json.status().code() == code);
  return std::string(json.status().message());
}

std::string WriteString(std::string_view value, bool ascii_only = false) {
  JsonWriter writer(JsonWriter::Options{.ascii_only = ascii_only});
  writer.String(value);
  return Finished(writer);
}

// The specified escaping, one code point at a time, as the writer's bulk
// copying must reproduce it.
void AppendReferenceEscape(std::string& out, uint32_t code_point,
                           bool ascii_only) {
  auto u_escape = [&out](uint32_t unit) {
    char buffer[16];
    std::snprintf(buffer, sizeof(buffer), "\\u%04x", unit);
    out += buffer;
  };
  switch (code_point) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  if (code_point < 0x20 || code_point == 0x7F || code_point == 0x2028 ||
      code_point == 0x2029) {
    u_escape(code_point);
  } else if (code_point < 0x80 || !ascii_only) {
    AppendUtf8(code_point, &out);
  } else if (code_point < 0x10000) {
    u_escape(code_point);
  } else {
    u_escape(0xD800 + ((code_point - 0x10000) >> 10));
    u_escape(0xDC00 + ((code_point - 0x10000) & 0x3FF));
  }
}

struct RandomText {
  std::string utf8;
  std::vector<uint32_t> code_points;

  std::string Escaped(bool ascii_only) const {
    std::string out = "\"";
    for (uint32_t code_point : code_points) {
      AppendReferenceEscape(out, code_point, ascii_only);
    }
    out += "\"";
    return out;
  }
};

// Text mixing every class of character the writer treats differently,
// including runs of plain ASCII long enough for its word-at-a-time copying.
RandomText MakeRandomText(std::mt19937_64& rng) {
  RandomText text;
  auto pick = [&rng](uint32_t low, uint32_t high) {  // inclusive
    return static_cast<uint32_t>(low + rng() % (high - low + 1));
  };
  const size_t pieces = rng() % 8 == 0 ? rng() % 200 : rng() % 16;
  for (size_t i = 0; i < pieces; ++i) {
    switch (rng() % 12) {
      case 0:
      case 1: {  // a run of printable ASCII
        const size_t run = rng() % 24;
        for (size_t k = 0; k < run; ++k) {
          text.code_points.push_back(pick(0x20, 0x7E));
        }
        break;
      }
      case 2:  // any control character, NUL included
        text.code_points.push_back(pick(0x00, 0x1F));
        break;
      case 3:
        text.code_points.push_back(rng() % 2 ? '"' : '\\');
        break;
      case 4:
        text.code_points.push_back(0x7F);
        break;
      case 5:
        text.code_points.push_back(pick(0x80, 0x7FF));
        break;
      case 6: {
        uint32_t code_point = pick(0x800, 0xFFFF - 0x800);
        if (code_point >= 0xD800) code_point += 0x800;  // skip surrogates
        text.code_points.push_back(code_point);
        break;
      }
      case 7:
        text.code_points.push_back(rng() % 2 ? 0x2028 : 0x2029);
        break;
      case 8:  // neighbours of U+2028 share its first two bytes
        text.code_points.push_back(pick(0x2000, 0x203F));
        break;
      case 9:
        text.code_points.push_back(0xFEFF);
        break;
      case 10:
        text.code_points.push_back(pick(0x10000, 0x10FFFF));
        break;
      default:
        text.code_points.push_back(0);
        break;
    }
  }
  for (uint32_t code_point : text.code_points) {
    AppendUtf8(code_point, &text.utf8);
  }
  return text;
}

TEST_CASE("fixed strings have the exact expected output") {
  CHECK(WriteString("") == "\"\"");
  CHECK(WriteString("plain text") == "\"plain text\"");
  CHECK(WriteString("a\"b\\c/d") == "\"a\\\"b\\\\c/d\"");
  CHECK(WriteString(std::string_view("\0", 1)) == "\"\\u0000\"");
  CHECK(WriteString("line\nnext\ttab\r") == "\"line\\nnext\\ttab\\r\"");
  CHECK(WriteString("\x7F") == "\"\\u007f\"");
  CHECK(WriteString("caf\xC3\xA9") == "\"caf\xC3\xA9\"");
  CHECK(WriteString("caf\xC3\xA9", true) == "\"caf\\u00e9\"");
  CHECK(WriteString("\xE2\x80\xA8|\xE2\x80\xA9") == "\"\\u2028|\\u2029\"");
  CHECK(WriteString("\xE2\x80\xA8|\xE2\x80\xA9", true) ==
        "\"\\u2028|\\u2029\"");
  CHECK(WriteString("\xE2\x80\xA7\xE2\x80\xAA\xE2\x82\xAC") ==
        "\"\xE2\x80\xA7\xE2\x80\xAA\xE2\x82\xAC\"");
  CHECK(WriteString("\xEF\xBB\xBF") == "\"\xEF\xBB\xBF\"");
  CHECK(WriteString("\xEF\xBB\xBF", true) == "\"\\ufeff\"");
  CHECK(WriteString("\xF0\x9F\x98\x80", true) == "\"\\ud83d\\ude00\"");
  CHECK(WriteString("\xF4\x8F\xBF\xBF", true) == "\"\\udbff\\udfff\"");
  CHECK(WriteString("0123456789abcdef\"0123456789abcdef") ==
        "\"0123456789abcdef\\\"0123456789abcdef\"");
}

TEST_CASE("every control character is escaped") {
  const char* const expected[32] = {
      "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005",
      "\\u0006", "\\u0007", "\\b",     "\\t",     "\\n",     "\\u000b",
      "\\f",     "\\r",     "\\u000e", "\\u000f", "\\u0010", "\\u0011",
      "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
      "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d",
      "\\u001e", "\\u001f"};
  std::string all;
  std::string all_expected = "\"";
  for (int c = 0; c < 0x20; ++c) {
    CAPTURE(c);
    const std::string one(1, static_cast<char>(c));
    // (StrCat rather than operator+, which trips GCC 12's -Wrestrict at -O3.)
    CHECK(WriteString(one) == absl::StrCat("\"", expected[c], "\""));
    CHECK(WriteString(one, true) == absl::StrCat("\"", expected[c], "\""));
    // Inside a long plain run too, where copying is word-at-a-time.
    CHECK(WriteString(absl::StrCat("abcdefghij", one, "klmnopqrstu")) ==
          absl::StrCat("\"abcdefghij", expected[c], "klmnopqrstu\""));
    all += one;
    all_expected += expected[c];
  }
  CHECK(WriteString(all) == all_expected + "\"");
}

TEST_CASE("random text round-trips byte-exactly through simdjson") {
  const uint64_t seed = TestSeed();
  INFO("seed = " << seed << " (rerun with CTXKIT_TEST_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  simdjson::dom::parser parser;
  size_t strings_checked = 0;
  for (int document = 0; document < 400; ++document) {
    for (bool ascii_only : {false, true}) {
      CAPTURE(document);
      CAPTURE(ascii_only);
      // {"<key 0>":"<value 0>",...,"<key n-1>":"<value n-1>"} followed by
      // all values again as an array under one more random key.
      std::vector<RandomText> keys;
      std::vector<RandomText> values;
      const size_t members = 1 + rng() % 12;
      for (size_t i = 0; i < members; ++i) {
        keys.push_back(MakeRandomText(rng));
        values.push_back(MakeRandomText(rng));
      }
      const RandomText list_key = MakeRandomText(rng);

      JsonWriter writer(JsonWriter::Options{.ascii_only = ascii_only});
      std::string expected = "{";
      writer.BeginObject();
      for (size_t i = 0; i < members; ++i) {
        writer.Key(keys[i].utf8).String(values[i].utf8);
        expected += keys[i].Escaped(ascii_only) + ":" +
                    values[i].Escaped(ascii_only) + ",";
      }
      writer.Key(list_key.utf8).BeginArray();
      expected += list_key.Escaped(ascii_only) + ":[";
      for (size_t i = 0; i < members; ++i) {
        writer.String(values[i].utf8);
        if (i > 0) expected += ",";
        expected += values[i].Escaped(ascii_only);
      }
      writer.EndArray().EndObject();
      expected += "]}";
      const std::string json = Finished(writer);

      CHECK(json == expected);
      bool raw_control = false;
      bool raw_non_ascii = false;
      for (char c : json) {
        raw_control |= static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
        raw_non_ascii |= static_cast<unsigned char>(c) >= 0x80;
      }
      CHECK_FALSE(raw_control);
      if (ascii_only) CHECK_FALSE(raw_non_ascii);
      CHECK(json.find("\xE2\x80\xA8") == std::string::npos);
      CHECK(json.find("\xE2\x80\xA9") == std::string::npos);

      simdjson::dom::element root;
      REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
      simdjson::dom::object object;
      REQUIRE(root.get_object().get(object) == simdjson::SUCCESS);
      size_t index = 0;
      for (simdjson::dom::key_value_pair member : object) {
        std::string_view value;
        if (index < members) {
          CHECK(member.key == keys[index].utf8);
          REQUIRE(member.value.get_string().get(value) == simdjson::SUCCESS);
          CHECK(value == values[index].utf8);
          strings_checked += 2;
        } else {
          CHECK(member.key == list_key.utf8);
          simdjson::dom::array array;
          REQUIRE(member.value.get_array().get(array) == simdjson::SUCCESS);
          size_t element = 0;
          for (simdjson::dom::element item : array) {
            REQUIRE(element < members);
            REQUIRE(item.get_string().get(value) == simdjson::SUCCESS);
            CHECK(value == values[element].utf8);
            ++element;
            ++strings_checked;
          }
          CHECK(element == members);
        }
        ++index;
      }
      CHECK(index == members + 1);
    }
  }
  CHECK(strings_checked > 5000);
}

TEST_CASE("invalid UTF-8 is rejected naming the path and offset") {
  struct Case {
    std::string_view bytes;
    const char* detail;
  };
  const Case cases[] = {
      {"\xC0\x80", "invalid byte 0xC0 at offset 3 (overlong encoding)"},
      {"\xE0\x80\x80", "invalid byte 0xE0 at offset 3 (overlong encoding)"},
      {"\xF0\x80\x80\x80", "invalid byte 0xF0 at offset 3 (overlong encoding)"},
      {"\xED\xA0\x80", "invalid byte 0xED at offset 3 (surrogate code point)"},
      {"\xF4\x90\x80\x80",
       "invalid byte 0xF4 at offset 3 (code point above U+10FFFF)"},
      {"\xE2\x82", "invalid byte 0xE2 at offset 3 (truncated sequence)"},
      {"\x80", "invalid byte 0x80 at offset 3 (unexpected continuation byte)"},
      {"\xF5", "invalid byte 0xF5 at offset 3 (code point above U+10FFFF)"},
      {"\xF8", "invalid byte 0xF8 at offset 3 (byte never appears in UTF-8)"},
      {"\xFF", "invalid byte 0xFF at offset 3 (byte never appears in UTF-8)"},
  };
  for (bool ascii_only : {false, true}) {
    for (const Case& c : cases) {
      CAPTURE(c.detail);
      const std::string bad = "abc" + std::string(c.bytes);
      JsonWriter::Options options{.ascii_only = ascii_only};
      {
        JsonWriter writer(options);
        writer.BeginObject().Key("databases").BeginArray();
        writer.BeginObject().Key("name").String("one").EndObject();
        writer.BeginObject().Key("name").String("two").EndObject();
        writer.BeginObject().Key("name").String(bad);
        CHECK(writer.status().code() == absl::StatusCode::kInvalidArgument);
        // Later calls, even valid ones, leave the first error in place.
        writer.EndObject().EndArray().EndObject();
        CHECK(FinishError(writer, absl::StatusCode::kInvalidArgument) ==
              std::string("JSON string at \"databases[2].name\" is not valid "
                          "UTF-8: ") +
                  c.detail);
      }
      {
        JsonWriter writer(options);
        writer.BeginArray().Int(1).BeginObject().Key(bad).Null();
        CHECK(FinishError(writer, absl::StatusCode::kInvalidArgument) ==
              std::string("JSON object key in the object at \"[1]\" is not "
                          "valid UTF-8: ") +
                  c.detail);
      }
      {
        JsonWriter writer(options);
        writer.String(bad);
        CHECK(FinishError(writer, absl::StatusCode::kInvalidArgument) ==
              std::string("JSON string at the top level is not valid UTF-8: ") +
                  c.detail);
      }
    }
  }
  // Long text goes through the SIMD validator; the offset is still exact.
  JsonWriter writer;
  writer.BeginObject().Key("k").String(std::string(100, 'x') + "\xFF");
  CHECK(FinishError(writer, absl::StatusCode::kInvalidArgument) ==
        "JSON string at \"k\" is not valid UTF-8: invalid byte 0xFF at offset "
        "100 (byte never appears in UTF-8)");
}

TEST_CASE("integers are exact at the limits") {
  JsonWriter writer;
  writer.BeginArray()
      .Int(std::numeric_limits<int64_t>::min())
      .Int(std::numeric_limits<int64_t>::max())
      .Int(0)
      .Int(-1)
      .Uint(std::numeric_limits<uint64_t>::max())
      .Uint(0)
      .EndArray();
  const std::string json = Finished(writer);
  CHECK(json ==
        "[-9223372036854775808,9223372036854775807,0,-1,"
        "18446744073709551615,0]");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
  int64_t i = 0;
  uint64_t u = 0;
  CHECK(root.at(0).get(i) == simdjson::SUCCESS);
  CHECK(i == std::numeric_limits<int64_t>::min());
  CHECK(root.at(1).get(i) == simdjson::SUCCESS);
  CHECK(i == std::numeric_limits<int64_t>::max());
  CHECK(root.at(4).get(u) == simdjson::SUCCESS);
  CHECK(u == std::numeric_limits<uint64_t>::max());
}

std::string WriteDouble(double value) {
  JsonWriter writer;
  writer.Double(value);
  return Finished(writer);
}

TEST_CASE("doubles are shortest, round-trip and stay floating point") {
  CHECK(WriteDouble(0.0) == "0.0");
  CHECK(WriteDouble(-0.0) == "-0.0");
  CHECK(WriteDouble(2.0) == "2.0");
  CHECK(WriteDouble(-17.0) == "-17.0");
  CHECK(WriteDouble(0.1) == "0.1");
  CHECK(WriteDouble(1.5) == "1.5");
  CHECK(WriteDouble(1e300) == "1e+300");
  CHECK(WriteDouble(1e16) == "1e+16");
  CHECK(WriteDouble(123456789.0) == "123456789.0");
  CHECK(WriteDouble(5e-324) == "5e-324");
  CHECK(WriteDouble(std::numeric_limits<double>::max()) ==
        "1.7976931348623157e+308");
  CHECK(WriteDouble(std::numeric_limits<double>::lowest()) ==
        "-1.7976931348623157e+308");

  const uint64_t seed = TestSeed();
  INFO("seed = " << seed << " (rerun with CTXKIT_TEST_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  simdjson::dom::parser parser;
  size_t checked = 0;
  for (int batch = 0; batch < 100; ++batch) {
    std::vector<double> values;
    while (values.size() < 1000) {
      uint64_t bits = rng();
      // Also cover "nice" values: small integers, short decimals.
      if (bits % 8 == 0) {
        const double nice =
            static_cast<double>(static_cast<int64_t>(rng() % 2000001) -
                                1000000) /
            std::pow(10.0, static_cast<double>(rng() % 8));
        bits = std::bit_cast<uint64_t>(nice);
      }
      const double value = std::bit_cast<double>(bits);
      if (std::isfinite(value)) values.push_back(value);
    }
    JsonWriter writer;
    writer.BeginArray();
    for (double value : values) writer.Double(value);
    writer.EndArray();
    const std::string json = Finished(writer);
    simdjson::dom::element root;
    REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
    simdjson::dom::array array;
    REQUIRE(root.get_array().get(array) == simdjson::SUCCESS);
    size_t index = 0;
    for (simdjson::dom::element item : array) {
      CAPTURE(values[index]);
      // Typed as a double, never read back as an integer.
      CHECK(item.type() == simdjson::dom::element_type::DOUBLE);
      double parsed = 0;
      REQUIRE(item.get_double().get(parsed) == simdjson::SUCCESS);
      CHECK(std::bit_cast<uint64_t>(parsed) ==
            std::bit_cast<uint64_t>(values[index]));
      ++index;
      ++checked;
    }
    CHECK(index == values.size());
  }
  CHECK(checked == 100000);
}

TEST_CASE("NaN and infinities are rejected") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  {
    JsonWriter writer;
    writer.BeginArray().Int(1).Double(nan).EndArray();
    CHECK(FinishError(writer, absl::StatusCode::kInvalidArgument) ==
          "JSON cannot represent NaN at \"[1]\"");
  }
  {
    JsonWriter writer;
    writer.BeginObject().Key("stats").BeginObject().Key("ratio").Double(inf);
    CHECK(FinishError(writer, absl::StatusCode::kInvalidArgument) ==
          "JSON cannot represent infinity at \"stats.ratio\"");
  }
  {
    JsonWriter writer;
    writer.Double(-inf);
    CHECK(FinishError(writer, absl::StatusCode::kInvalidArgument) ==
          "JSON cannot represent -infinity at the top level");
  }
  {
    JsonWriter writer;
    writer.Double(std::bit_cast<double>(uint64_t{0xFFF8000000000001}));
    CHECK(writer.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("other values and nesting produce valid JSON") {
  JsonWriter writer;
  writer.BeginObject()
      .Key("a")
      .BeginArray()
      .Int(1)
      .Bool(true)
      .Bool(false)
      .Null()
      .String("x")
      .BeginObject()
      .Key("b")
      .BeginArray()
      .EndArray()
      .EndObject()
      .BeginArray()
      .BeginArray()
      .EndArray()
      .EndArray()
      .EndArray()
      .Key("c")
      .BeginObject()
      .EndObject()
      .Key("")
      .Double(0.5)
      .EndObject();
  CHECK(writer.status().ok());
  const std::string json = Finished(writer);
  CHECK(json == R"({"a":[1,true,false,null,"x",{"b":[]},[[]]],"c":{},"":0.5})");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  CHECK(parser.parse(json).get(root) == simdjson::SUCCESS);

  // Scalars and empty containers are whole documents too.
  for (auto write :
       {+[](JsonWriter& w) { w.Null(); }, +[](JsonWriter& w) { w.Bool(true); },
        +[](JsonWriter& w) { w.Int(-3); },
        +[](JsonWriter& w) { w.BeginArray().EndArray(); },
        +[](JsonWriter& w) { w.BeginObject().EndObject(); }}) {
    JsonWriter scalar;
    write(scalar);
    const std::string text = Finished(scalar);
    CHECK(parser.parse(text).get(root) == simdjson::SUCCESS);
  }
}

// A random JSON value, written through JsonWriter and compared with what
// simdjson reads back.
struct Node {
  enum Kind { kNull, kBool, kInt, kUint, kDouble, kString, kArray, kObject };
  Kind kind = kNull;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  double number = 0;
  std::string text;
  std::vector<Node> children;
  std::vector<std::string> keys;  // of an object's children
};

Node MakeRandomNode(std::mt19937_64& rng, int depth) {
  Node node;
  const int kinds = depth >= 6 ? 6 : 8;
  node.kind = static_cast<Node::Kind>(rng() % kinds);
  switch (node.kind) {
    case Node::kNull:
      break;
    case Node::kBool:
      node.boolean = rng() % 2;
      break;
    case Node::kInt:
      node.integer = static_cast<int64_t>(rng());
      break;
    case Node::kUint:
      node.unsigned_integer = rng() | (uint64_t{1} << 63);
      break;
    case Node::kDouble:
      node.number = static_cast<double>(static_cast<int64_t>(rng())) / 1e7;
      break;
    case Node::kString:
      node.text = MakeRandomText(rng).utf8;
      break;
    case Node::kArray:
    case Node::kObject: {
      const size_t count = rng() % 5;
      for (size_t i = 0; i < count; ++i) {
        node.keys.push_back(MakeRandomText(rng).utf8);
        node.children.push_back(MakeRandomNode(rng, depth + 1));
      }
      break;
    }
  }
  return node;
}

void Write(const Node& node, JsonWriter& writer) {
  switch (node.kind) {
    case Node::kNull:
      writer.Null();
      break;
    case Node::kBool:
      writer.Bool(node.boolean);
      break;
    case Node::kInt:
      writer.Int(node.integer);
      break;
    case Node::kUint:
      writer.Uint(node.unsigned_integer);
      break;
    case Node::kDouble:
      writer.Double(node.number);
      break;
    case Node::kString:
      writer.String(node.text);
      break;
    case Node::kArray:
      writer.BeginArray();
      for (const Node& child : node.children) Write(child, writer);
      writer.EndArray();
      break;
    case Node::kObject:
      writer.BeginObject();
      for (size_t i = 0; i < node.children.size(); ++i) {
        writer.Key(node.keys[i]);
        Write(node.children[i], writer);
      }
      writer.EndObject();
      break;
  }
}

void CheckSame(const Node& node, simdjson::dom::element element) {
  switch (node.kind) {
    case Node::kNull:
      CHECK(element.is_null());
      break;
    case Node::kBool:
      CHECK(element.get_bool().value_unsafe() == node.boolean);
      break;
    case Node::kInt:
      CHECK(element.get_int64().value_unsafe() == node.integer);
      break;
    case Node::kUint:
      CHECK(element.get_uint64().value_unsafe() == node.unsigned_integer);
      break;
    case Node::kDouble:
      CHECK(element.get_double().value_unsafe() == node.number);
      break;
    case Node::kString:
      CHECK(element.get_string().value_unsafe() == node.text);
      break;
    case Node::kArray: {
      simdjson::dom::array array;
      REQUIRE(element.get_array().get(array) == simdjson::SUCCESS);
      size_t i = 0;
      for (simdjson::dom::element item : array) {
        REQUIRE(i < node.children.size());
        CheckSame(node.children[i++], item);
      }
      CHECK(i == node.children.size());
      break;
    }
    case Node::kObject: {
      simdjson::dom::object object;
      REQUIRE(element.get_object().get(object) == simdjson::SUCCESS);
      size_t i = 0;
      for (simdjson::dom::key_value_pair member : object) {
        REQUIRE(i < node.children.size());
        CHECK(member.key == node.keys[i]);
        CheckSame(node.children[i++], member.value);
      }
      CHECK(i == node.children.size());
      break;
    }
  }
}

TEST_CASE("random nested documents parse back to the same tree") {
  const uint64_t seed = TestSeed();
  INFO("seed = " << seed << " (rerun with CTXKIT_TEST_SEED=" << seed << ")");
  std::mt19937_64 rng(seed + 1);
  simdjson::dom::parser parser;
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    const Node tree = MakeRandomNode(rng, 0);
    for (bool ascii_only : {false, true}) {
      JsonWriter writer(JsonWriter::Options{.ascii_only = ascii_only});
      Write(tree, writer);
      const std::string json = Finished(writer);
      simdjson::dom::element root;
      REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
      CheckSame(tree, root);
    }
  }
}

TEST_CASE("deep nesting stays balanced") {
  JsonWriter writer;
  for (int i = 0; i < 500; ++i) writer.BeginArray().BeginObject().Key("k");
  writer.Int(7);
  for (int i = 0; i < 500; ++i) writer.EndObject().EndArray();
  const std::string json = Finished(writer);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  CHECK(parser.parse(json).get(root) == simdjson::SUCCESS);
}

TEST_CASE("structural misuse is INTERNAL and never yields output") {
  struct Case {
    const char* name;
    void (*calls)(JsonWriter&);
    const char* message;
  };
  const Case cases[] = {
      {"value where a key is required",
       [](JsonWriter& w) { w.BeginObject().Key("a").Int(1).Int(2); },
       "JSON writer misuse: integer value where an object key is required, in "
       "the object at the top level"},
      {"nested value where a key is required",
       [](JsonWriter& w) {
         w.BeginObject().Key("list").BeginArray().BeginObject().String("x");
       },
       "JSON writer misuse: string value where an object key is required, in "
       "the object at \"list[0]\""},
      {"key outside any object", [](JsonWriter& w) { w.Key("a"); },
       "JSON writer misuse: Key() outside any object"},
      {"key in an array", [](JsonWriter& w) { w.BeginArray().Null().Key("a"); },
       "JSON writer misuse: Key() in the array at the top level"},
      {"two keys in a row",
       [](JsonWriter& w) { w.BeginObject().Key("a").Key("b"); },
       "JSON writer misuse: Key() after Key() without a value, in the object "
       "at the top level"},
      {"EndArray closing an object",
       [](JsonWriter& w) { w.BeginObject().Key("o").BeginObject().EndArray(); },
       "JSON writer misuse: EndArray() closing the object at \"o\""},
      {"EndObject closing an array",
       [](JsonWriter& w) { w.BeginArray().EndObject(); },
       "JSON writer misuse: EndObject() closing the array at the top level"},
      {"EndObject after a key",
       [](JsonWriter& w) { w.BeginObject().Key("a").EndObject(); },
       "JSON writer misuse: EndObject() after Key() without a value, in the "
       "object at the top level"},
      {"end with nothing open", [](JsonWriter& w) { w.EndArray(); },
       "JSON writer misuse: EndArray() with no open container"},
      {"end after the document",
       [](JsonWriter& w) { w.BeginObject().EndObject().EndObject(); },
       "JSON writer misuse: EndObject() with no open container"},
      {"two top-level values", [](JsonWriter& w) { w.Int(1).Int(2); },
       "JSON writer misuse: a second top-level value (integer)"},
      {"two top-level containers",
       [](JsonWriter& w) { w.BeginArray().EndArray().BeginObject(); },
       "JSON writer misuse: a second top-level value (object)"},
      {"unclosed containers",
       [](JsonWriter& w) { w.BeginObject().Key("a").BeginArray().Int(1); },
       "JSON writer misuse: Finish() with 2 unclosed container(s), the "
       "innermost at \"a\""},
      {"nothing written", [](JsonWriter&) {},
       "JSON writer misuse: Finish() before any value was written"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    JsonWriter writer;
    c.calls(writer);
    const absl::Status first = writer.status();
    if (!first.ok()) {
      // The error is sticky: nothing later replaces or clears it.
      writer.Null().EndArray().String("\xFF").Double(std::nan(""));
      CHECK(writer.status() == first);
    }
    CHECK(FinishError(writer, absl::StatusCode::kInternal) == c.message);
  }
}

TEST_CASE("a moved writer carries on") {
  JsonWriter first;
  first.BeginArray().Int(1);
  JsonWriter second = std::move(first);
  second.Int(2).EndArray();
  CHECK(Finished(second) == "[1,2]");
}

}  // namespace
}  // namespace ctxkit::internal
