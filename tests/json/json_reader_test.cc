// Tests of the simdjson reading helpers: parse errors, UTF-8 errors, reading
// exactly the given bytes, and the typed field accessors' values and
// field-named errors.

#include "lib/json/json_reader.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/json/json_writer.h"
#include "simdjson.h"

namespace ctxkit::internal {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("well-formed documents parse") {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root =
      ParseJson(parser, R"({"a":[1,2],"b":"x"})", "request");
  REQUIRE(root.ok());
  CHECK(root->is_object());
  // The parser can be reused for the next document.
  root = ParseJson(parser, " 42 ", "request");
  REQUIRE(root.ok());
  CHECK(root->get_int64().value_unsafe() == 42);
}

TEST_CASE("malformed JSON is INVALID_ARGUMENT naming the document") {
  simdjson::dom::parser parser;
  for (std::string_view bad :
       {std::string_view(""), std::string_view("   "), std::string_view("{"),
        std::string_view("[1,]"), std::string_view(R"({"a":})"),
        std::string_view(R"({"a" 1})"), std::string_view("nul"),
        std::string_view("{} x"), std::string_view("[1] [2]"),
        std::string_view("\"unterminated"), std::string_view("'single'"),
        std::string_view("\"raw\ncontrol\""), std::string_view("01"),
        std::string_view("1e400"), std::string_view(R"("\ud800")"),
        std::string_view("\"a\"\0", 4)}) {
    CAPTURE(bad);
    const std::string message = ErrorOf(ParseJson(parser, bad, "chat history"));
    CHECK(message.starts_with("chat history is not valid JSON: "));
    CHECK(message.size() > std::strlen("chat history is not valid JSON: "));
  }
  std::string deep(2000, '[');
  deep += std::string(2000, ']');
  CHECK(ErrorOf(ParseJson(parser, deep, "doc"))
            .starts_with("doc is not valid JSON: "));
}

TEST_CASE("invalid UTF-8 is INVALID_ARGUMENT with the offset") {
  simdjson::dom::parser parser;
  CHECK(ErrorOf(ParseJson(parser, "{\"a\":\"x\xFF\"}", "chat history")) ==
        "chat history is not valid UTF-8: invalid byte 0xFF at offset 7 (byte "
        "never appears in UTF-8)");
  CHECK(ErrorOf(ParseJson(parser, "[\"\xED\xA0\x80\"]", "doc")) ==
        "doc is not valid UTF-8: invalid byte 0xED at offset 2 (surrogate "
        "code point)");
  CHECK(ErrorOf(ParseJson(parser, "{\"\xC0\x80\":1}", "doc")) ==
        "doc is not valid UTF-8: invalid byte 0xC0 at offset 2 (overlong "
        "encoding)");
  // Outside strings too.
  CHECK(ErrorOf(ParseJson(parser, "[1, \xE2\x82]", "doc")) ==
        "doc is not valid UTF-8: invalid byte 0xE2 at offset 4 (missing "
        "continuation byte)");
}

TEST_CASE("only the given bytes are read") {
  simdjson::dom::parser parser;
  // Bytes after the view would make the document invalid if read.
  const std::string buffer = "[1,2]]]]garbage";
  absl::StatusOr<element> root =
      ParseJson(parser, std::string_view(buffer).substr(0, 5), "doc");
  REQUIRE(root.ok());
  CHECK(root->is_array());

  // A document ending exactly at a page that cannot be read: simdjson
  // reading its padding from the caller's memory would crash here.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapping = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mapping != MAP_FAILED);
  char* base = static_cast<char*>(mapping);
  REQUIRE(mprotect(base + page, page, PROT_NONE) == 0);
  const std::string_view json = R"({"role":"user","content":"hello"})";
  char* start = base + page - json.size();
  std::memcpy(start, json.data(), json.size());
  root = ParseJson(parser, std::string_view(start, json.size()), "doc");
  REQUIRE(root.ok());
  object message;
  REQUIRE(root->get_object().get(message) == simdjson::SUCCESS);
  absl::StatusOr<std::string_view> content =
      GetString(message, "content", "doc");
  REQUIRE(content.ok());
  CHECK(*content == "hello");
  // A malformed document at the edge is rejected, not overrun.
  std::memcpy(base + page - 3, "[1,", 3);
  CHECK_FALSE(
      ParseJson(parser, std::string_view(base + page - 3, 3), "doc").ok());
  munmap(mapping, 2 * page);
}

constexpr std::string_view kFields = R"({
  "s": "text", "empty": "", "nul": "a\u0000b",
  "i": -5, "zero": 0, "i_max": 9223372036854775807,
  "u_max": 18446744073709551615,
  "d": 1.5, "d_int": 3.0, "d_exp": 1e3,
  "t": true, "f": false,
  "o": {"inner": 1}, "a": [1, "two"],
  "n": null,
  "dup": 1, "dup": 2
})";

TEST_CASE("required fields of each type") {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root = ParseJson(parser, kFields, "req");
  REQUIRE(root.ok());
  const absl::StatusOr<object> obj = AsObject(*root, "req");
  REQUIRE(obj.ok());

  CHECK(*GetString(*obj, "s", "req") == "text");
  CHECK(*GetString(*obj, "empty", "req") == "");
  CHECK(*GetString(*obj, "nul", "req") == std::string_view("a\0b", 3));
  CHECK(*GetInt64(*obj, "i", "req") == -5);
  CHECK(*GetInt64(*obj, "i_max", "req") == std::numeric_limits<int64_t>::max());
  CHECK(*GetUint64(*obj, "zero", "req") == 0);
  CHECK(*GetUint64(*obj, "i_max", "req") ==
        uint64_t{std::numeric_limits<int64_t>::max()});
  CHECK(*GetUint64(*obj, "u_max", "req") ==
        std::numeric_limits<uint64_t>::max());
  CHECK(*GetDouble(*obj, "d", "req") == 1.5);
  CHECK(*GetDouble(*obj, "d_int", "req") == 3.0);
  CHECK(*GetDouble(*obj, "d_exp", "req") == 1000.0);
  CHECK(*GetDouble(*obj, "i", "req") == -5.0);
  CHECK(*GetBool(*obj, "t", "req") == true);
  CHECK(*GetBool(*obj, "f", "req") == false);
  const absl::StatusOr<object> inner = GetObject(*obj, "o", "req");
  REQUIRE(inner.ok());
  CHECK(*GetInt64(*inner, "inner", "req.o") == 1);
  const absl::StatusOr<array> list = GetArray(*obj, "a", "req");
  REQUIRE(list.ok());
  CHECK(list->size() == 2);
  // The first of duplicate keys wins.
  CHECK(*GetInt64(*obj, "dup", "req") == 1);
}

TEST_CASE("missing and mistyped required fields are named") {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root = ParseJson(parser, kFields, "req");
  REQUIRE(root.ok());
  const object obj = root->get_object().value_unsafe();

  CHECK(ErrorOf(GetString(obj, "missing", "req")) == "req.missing is required");
  CHECK(ErrorOf(GetString(obj, "missing", "")) == "missing is required");
  CHECK(ErrorOf(GetObject(obj, "S", "messages[3]")) ==
        "messages[3].S is required");  // keys are case-sensitive
  CHECK(ErrorOf(GetString(obj, "i", "req")) ==
        "req.i must be a string (got number)");
  CHECK(ErrorOf(GetString(obj, "n", "req")) ==
        "req.n must be a string (got null)");
  CHECK(ErrorOf(GetInt64(obj, "s", "req")) ==
        "req.s must be an integer (got string)");
  CHECK(ErrorOf(GetInt64(obj, "d", "req")) ==
        "req.d must be an integer (got a number with a fraction or exponent)");
  CHECK(ErrorOf(GetInt64(obj, "d_int", "req")) ==
        "req.d_int must be an integer (got a number with a fraction or "
        "exponent)");
  CHECK(ErrorOf(GetInt64(obj, "u_max", "req")) ==
        "req.u_max must be an integer no greater than 9223372036854775807 "
        "(got 18446744073709551615)");
  CHECK(ErrorOf(GetUint64(obj, "i", "req")) ==
        "req.i must be a non-negative integer (got -5)");
  CHECK(ErrorOf(GetUint64(obj, "t", "req")) ==
        "req.t must be a non-negative integer (got boolean)");
  CHECK(ErrorOf(GetUint64(obj, "d_exp", "req")) ==
        "req.d_exp must be an integer (got a number with a fraction or "
        "exponent)");
  CHECK(ErrorOf(GetDouble(obj, "s", "req")) ==
        "req.s must be a number (got string)");
  CHECK(ErrorOf(GetBool(obj, "zero", "req")) ==
        "req.zero must be a boolean (got number)");
  CHECK(ErrorOf(GetObject(obj, "a", "req")) ==
        "req.a must be an object (got array)");
  CHECK(ErrorOf(GetArray(obj, "o", "req")) ==
        "req.o must be an array (got object)");
}

TEST_CASE("optional fields") {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root = ParseJson(parser, kFields, "req");
  REQUIRE(root.ok());
  const object obj = root->get_object().value_unsafe();

  // Absent or null: nullopt.
  for (std::string_view field : {"missing", "n"}) {
    CAPTURE(field);
    CHECK(GetOptionalString(obj, field, "req")->has_value() == false);
    CHECK(GetOptionalInt64(obj, field, "req")->has_value() == false);
    CHECK(GetOptionalUint64(obj, field, "req")->has_value() == false);
    CHECK(GetOptionalDouble(obj, field, "req")->has_value() == false);
    CHECK(GetOptionalBool(obj, field, "req")->has_value() == false);
    CHECK(GetOptionalObject(obj, field, "req")->has_value() == false);
    CHECK(GetOptionalArray(obj, field, "req")->has_value() == false);
  }
  // Present: the value.
  CHECK(GetOptionalString(obj, "s", "req")->value() == "text");
  CHECK(GetOptionalInt64(obj, "i", "req")->value() == -5);
  CHECK(GetOptionalUint64(obj, "u_max", "req")->value() ==
        std::numeric_limits<uint64_t>::max());
  CHECK(GetOptionalDouble(obj, "d", "req")->value() == 1.5);
  CHECK(GetOptionalBool(obj, "f", "req")->value() == false);
  CHECK(GetOptionalObject(obj, "o", "req")->value().size() == 1);
  CHECK(GetOptionalArray(obj, "a", "req")->value().size() == 2);
  // Present with the wrong type: the same errors as required fields.
  CHECK(ErrorOf(GetOptionalString(obj, "t", "req")) ==
        "req.t must be a string (got boolean)");
  CHECK(ErrorOf(GetOptionalInt64(obj, "d", "req")) ==
        "req.d must be an integer (got a number with a fraction or exponent)");
  CHECK(ErrorOf(GetOptionalUint64(obj, "i", "req")) ==
        "req.i must be a non-negative integer (got -5)");
  CHECK(ErrorOf(GetOptionalDouble(obj, "a", "req")) ==
        "req.a must be a number (got array)");
  CHECK(ErrorOf(GetOptionalBool(obj, "s", "req")) ==
        "req.s must be a boolean (got string)");
  CHECK(ErrorOf(GetOptionalObject(obj, "s", "req")) ==
        "req.s must be an object (got string)");
  CHECK(ErrorOf(GetOptionalArray(obj, "i", "")) ==
        "i must be an array (got number)");
}

TEST_CASE("values in hand and paths") {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root = ParseJson(
      parser, R"([{"role":"user"}, "oops", 7, -1, 2.5, true])", "history");
  REQUIRE(root.ok());
  CHECK(ErrorOf(AsObject(*root, "history")) ==
        "history must be an object (got array)");
  const array items = AsArray(*root, "history").value();
  std::vector<element> elements(items.begin(), items.end());
  REQUIRE(elements.size() == 6);
  CHECK(AsObject(elements[0], JsonIndexPath("history", 0)).ok());
  CHECK(ErrorOf(AsObject(elements[1], JsonIndexPath("history", 1))) ==
        "history[1] must be an object (got string)");
  CHECK(*AsString(elements[1], "x") == "oops");
  CHECK(*AsInt64(elements[2], "x") == 7);
  CHECK(*AsUint64(elements[2], "x") == 7);
  CHECK(ErrorOf(AsUint64(elements[3], "history[3]")) ==
        "history[3] must be a non-negative integer (got -1)");
  CHECK(*AsDouble(elements[4], "x") == 2.5);
  CHECK(*AsBool(elements[5], "x") == true);
  CHECK(ErrorOf(AsString(elements[5], "history[5]")) ==
        "history[5] must be a string (got boolean)");

  CHECK(JsonPath("", "role") == "role");
  CHECK(JsonPath("history[0]", "role") == "history[0].role");
  CHECK(JsonIndexPath("history", 12) == "history[12]");
}

TEST_CASE("what JsonWriter writes, the reader reads") {
  JsonWriter writer;
  writer.BeginObject()
      .Key("schema_version")
      .Int(1)
      .Key("name")
      .String("caf\xC3\xA9 \xE2\x80\xA8")
      .Key("tokens")
      .Uint(std::numeric_limits<uint64_t>::max())
      .Key("ratio")
      .Double(0.25)
      .Key("whole")
      .Double(2.0)
      .Key("ok")
      .Bool(true)
      .Key("tags")
      .BeginArray()
      .String("a")
      .EndArray()
      .EndObject();
  absl::StatusOr<std::string> json = std::move(writer).Finish();
  REQUIRE(json.ok());
  simdjson::dom::parser parser;
  absl::StatusOr<element> root = ParseJson(parser, *json, "doc");
  REQUIRE(root.ok());
  const object obj = AsObject(*root, "doc").value();
  CHECK(*GetInt64(obj, "schema_version", "doc") == 1);
  CHECK(*GetString(obj, "name", "doc") == "caf\xC3\xA9 \xE2\x80\xA8");
  CHECK(*GetUint64(obj, "tokens", "doc") ==
        std::numeric_limits<uint64_t>::max());
  CHECK(*GetDouble(obj, "ratio", "doc") == 0.25);
  CHECK(*GetDouble(obj, "whole", "doc") == 2.0);
  CHECK(ErrorOf(GetInt64(obj, "whole", "doc"))
            .starts_with("doc.whole must be an integer"));
  CHECK(*GetBool(obj, "ok", "doc"));
  CHECK(GetArray(obj, "tags", "doc")->size() == 1);
}

}  // namespace
}  // namespace ctxkit::internal
