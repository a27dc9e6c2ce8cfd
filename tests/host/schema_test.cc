// The validator of tool arguments (programs/ctxkit/mcp/schema.h).

#include "programs/ctxkit/mcp/schema.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "doctest/doctest.h"
#include "programs/ctxkit/mcp/catalog.h"

namespace ctxkit::mcp {
namespace {

std::unique_ptr<Schema> Compiled(std::string_view json) {
  auto schema = Schema::Compile(json);
  REQUIRE_MESSAGE(schema.ok(), schema.status().ToString());
  return *std::move(schema);
}

// The problems of `value` (JSON text) as "path message" lines.
std::vector<std::string> Problems(const Schema& schema, std::string_view value,
                                  size_t max = 20) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(value.data(), value.size()).get(root) ==
          simdjson::SUCCESS);
  std::vector<std::string> out;
  for (const SchemaProblem& p : schema.Validate(root, max)) {
    out.push_back(p.path_json + " " + p.message);
  }
  return out;
}

constexpr std::string_view kConversation = R"({
  "type": "object",
  "properties": {
    "action": {"type": "string",
               "enum": ["create", "add_message", "get", "list", "delete"]},
    "title": {"type": "string", "minLength": 1, "maxLength": 5},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "metadata": {"type": "object"},
    "input": {"anyOf": [{"type": "string"},
                        {"type": "array", "items": {"type": "object",
                          "properties": {"role": {"type": "string"}},
                          "required": ["role"]}}]}
  },
  "required": ["action"],
  "additionalProperties": false
})";

TEST_CASE("a matching value has no problems") {
  auto schema = Compiled(kConversation);
  CHECK(Problems(*schema, R"({"action":"create"})").empty());
  CHECK(Problems(*schema,
                 R"({"action":"list","limit":1000,"ratio":0.5,"tags":["a"],
                     "metadata":{"x":[1]},"title":"héllo",
                     "input":[{"role":"user"}]})")
            .empty());
  // 5.0 is an integer in JSON Schema.
  CHECK(Problems(*schema, R"({"action":"list","limit":5.0})").empty());
}

TEST_CASE("problems name the path and read like the seed's") {
  auto schema = Compiled(kConversation);
  CHECK(Problems(*schema, "{}") ==
        std::vector<std::string>{R"(["action"] Required)"});
  CHECK(
      Problems(*schema, R"({"action":"invalid"})") ==
      std::vector<std::string>{
          R"(["action"] Invalid enum value. Expected 'create' | )"
          R"('add_message' | 'get' | 'list' | 'delete', received 'invalid')"});
  CHECK(Problems(*schema, R"({"action":7})") ==
        std::vector<std::string>{
            R"(["action"] Expected string, received number)"});
  CHECK(Problems(*schema, R"({"action":"list","limit":0})") ==
        std::vector<std::string>{
            R"(["limit"] Number must be greater than or equal to 1)"});
  CHECK(Problems(*schema, R"({"action":"list","limit":2.5})") ==
        std::vector<std::string>{
            R"(["limit"] Expected integer, received number)"});
  CHECK(Problems(*schema, R"({"action":"list","ratio":1})") ==
        std::vector<std::string>{R"(["ratio"] Number must be less than 1)"});
  CHECK(Problems(*schema, R"({"action":"list","title":""})") ==
        std::vector<std::string>{
            R"(["title"] String must contain at least 1 character(s))"});
  // Characters, not bytes: five two-byte characters fit.
  CHECK(Problems(*schema, R"({"action":"list","title":"ééééé"})").empty());
  CHECK(Problems(*schema, R"({"action":"list","tags":["a",2,"c"]})") ==
        std::vector<std::string>{
            R"(["tags"] Array must contain at most 2 element(s))",
            R"(["tags",1] Expected string, received number)"});
  CHECK(Problems(*schema, R"({"action":"list","extra":1})") ==
        std::vector<std::string>{R"(["extra"] Unrecognized key: 'extra')"});
  // A misspelled property names the one most likely meant.
  CHECK(Problems(*schema, R"({"action":"list","titel":"x"})") ==
        std::vector<std::string>{
            R"(["titel"] Unrecognized key: 'titel'; did you mean 'title'?)"});
}

TEST_CASE("anyOf reports the closest alternative") {
  auto schema = Compiled(kConversation);
  CHECK(Problems(*schema, R"({"action":"get","input":[{"role":"user"},{}]})") ==
        std::vector<std::string>{R"(["input",1,"role"] Required)"});
  CHECK(Problems(*schema, R"({"action":"get","input":true})").size() == 1);
}

TEST_CASE("oneOf needs exactly one match") {
  auto schema = Compiled(R"({"oneOf":[{"type":"number"},{"type":"integer"}]})");
  CHECK(Problems(*schema, "1.5").empty());
  CHECK(Problems(*schema, "2") ==
        std::vector<std::string>{
            "[] Invalid input: matches 2 alternatives, expected exactly one"});
}

TEST_CASE("the number of problems is bounded") {
  auto schema = Compiled(R"({"type":"array","items":{"type":"string"}})");
  std::string many = "[";
  for (int i = 0; i < 1000; ++i) many += i == 0 ? "1" : ",1";
  many += "]";
  CHECK(Problems(*schema, many, 5).size() == 5);
}

TEST_CASE("member names made of digits stay strings in the path") {
  auto schema =
      Compiled(R"({"type":"object","additionalProperties":{"type":"string"}})");
  CHECK(Problems(*schema, R"({"12":3})") ==
        std::vector<std::string>{R"(["12"] Expected string, received number)"});
}

TEST_CASE("a schema outside the subset is refused when compiled") {
  for (std::string_view bad : {
           R"({"type":"object","patternProperties":{}})",
           R"({"type":"strings"})",
           R"({"required":"action"})",
           R"({"minLength":-1})",
           R"({"anyOf":[]})",
           R"([1])",
           R"({"type":)",
       }) {
    CAPTURE(bad);
    auto schema = Schema::Compile(bad);
    CHECK_FALSE(schema.ok());
    CHECK(schema.status().code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("every tool's schemas compile and its input schema is an object") {
  for (const ToolSpec& tool : Tools()) {
    CAPTURE(tool.name);
    auto input = Schema::Compile(tool.input_schema);
    CHECK_MESSAGE(input.ok(), input.status().ToString());
    if (!tool.output_schema.empty()) {
      auto output = Schema::Compile(tool.output_schema);
      CHECK_MESSAGE(output.ok(), output.status().ToString());
    }
    CHECK(tool.input_schema.find(R"("type")") != std::string_view::npos);
  }
}

TEST_CASE("SchemaProblemsToJson writes seed 000's details") {
  CHECK(SchemaProblemsToJson({{R"(["action"])", "Required"}}) ==
        R"([{"path":["action"],"message":"Required"}])");
  CHECK(SchemaProblemsToJson({}) == "[]");
}

}  // namespace
}  // namespace ctxkit::mcp
