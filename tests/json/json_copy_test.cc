// WriteJsonValue: stored JSON text becomes a value of the document.

#include "lib/json/json_copy.h"

#include <doctest/doctest.h>

#include <string>

#include "lib/json/json_writer.h"

namespace ctxkit::internal {
namespace {

std::string Wrap(std::string_view stored, JsonWriter::Options options = {}) {
  JsonWriter writer(options);
  writer.BeginObject().Key("metadata");
  REQUIRE(WriteJsonValue(writer, stored, "metadata").ok());
  writer.Key("n").Int(1).EndObject();
  auto out = std::move(writer).Finish();
  REQUIRE(out.ok());
  return *out;
}

TEST_CASE("every kind of value is copied, compacted") {
  CHECK(
      Wrap(R"( { "a" : [1, -2, 18446744073709551615, 1.5, true, false, null],
                   "b": {"c": "x\"y"} } )") ==
      R"({"metadata":{"a":[1,-2,18446744073709551615,1.5,true,false,null],"b":{"c":"x\"y"}},"n":1})");
  CHECK(Wrap("\"plain\"") == R"({"metadata":"plain","n":1})");
  CHECK(Wrap("[]") == R"({"metadata":[],"n":1})");
}

TEST_CASE("the writer's escaping applies to the copy") {
  CHECK(Wrap("{\"k\":\"caf\xC3\xA9\"}", {.ascii_only = true}) ==
        R"({"metadata":{"k":"caf\u00e9"},"n":1})");
  CHECK(Wrap(R"({"k":"\u2028"})") == R"({"metadata":{"k":"\u2028"},"n":1})");
}

TEST_CASE("invalid stored text is an error and writes nothing") {
  for (std::string_view bad :
       {"", "{", "{\"a\":}", "[1,]", "\"\xFF\"", "1 2"}) {
    JsonWriter writer;
    writer.BeginArray();
    const absl::Status s = WriteJsonValue(writer, bad, "metadata");
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(s.message().find("metadata") != std::string_view::npos);
    writer.Int(7).EndArray();
    auto out = std::move(writer).Finish();
    REQUIRE(out.ok());
    CHECK(*out == "[7]");
  }
}

}  // namespace
}  // namespace ctxkit::internal
