// JsonContainsFilter: the containment rules its header lists, one case per
// rule, and its errors.

#include "lib/json/json_match.h"

#include <doctest/doctest.h>

#include <string>

namespace ctxkit::internal {
namespace {

bool Match(const std::string& filter, const std::string& document) {
  absl::StatusOr<JsonContainsFilter> f =
      JsonContainsFilter::Compile(filter, "metadata");
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  return f->Matches(document);
}

TEST_CASE("members are matched by value; extra document members are ignored") {
  CHECK(Match(R"({})", R"({})"));
  CHECK(Match(R"({})", R"({"a":1})"));
  CHECK(Match(R"({"a":"x"})", R"({"a":"x","b":2})"));
  CHECK_FALSE(Match(R"({"a":"x"})", R"({"a":"y"})"));
  CHECK_FALSE(Match(R"({"a":"x"})", R"({"b":"x"})"));
  CHECK_FALSE(Match(R"({"a":"1"})", R"({"a":1})"));  // types differ
  CHECK(Match(R"({"auto":true})", R"({"auto":true,"method":"keyword"})"));
  CHECK_FALSE(Match(R"({"auto":true})", R"({"auto":false})"));
  CHECK_FALSE(Match(R"({"auto":true})", R"({"auto":1})"));
  CHECK(Match(R"({"a":"x","b":false})", R"({"b":false,"a":"x"})"));
  CHECK_FALSE(Match(R"({"a":"x","b":false})", R"({"a":"x"})"));
}

TEST_CASE("numbers compare by value") {
  CHECK(Match(R"({"n":1})", R"({"n":1.0})"));
  CHECK(Match(R"({"n":0.5})", R"({"n":5e-1})"));
  CHECK(Match(R"({"n":-3})", R"({"n":-3})"));
  CHECK_FALSE(Match(R"({"n":1})", R"({"n":1.5})"));
  CHECK_FALSE(Match(R"({"n":1})", R"({"n":"1"})"));
}

TEST_CASE("null asks for an absent or null member") {
  CHECK(Match(R"({"auto":null})", R"({"note":"by hand"})"));
  CHECK(Match(R"({"auto":null})", R"({"auto":null})"));
  CHECK_FALSE(Match(R"({"auto":null})", R"({"auto":true})"));
  CHECK_FALSE(Match(R"({"auto":null})", R"({"auto":false})"));
}

TEST_CASE("objects match recursively; arrays by containment") {
  CHECK(Match(R"({"src":{"file":"a.cc"}})",
              R"({"src":{"file":"a.cc","line":3}})"));
  CHECK_FALSE(Match(R"({"src":{"file":"a.cc"}})", R"({"src":"a.cc"})"));
  CHECK_FALSE(
      Match(R"({"src":{"file":"a.cc"}})", R"({"src":{"file":"b.cc"}})"));
  CHECK(Match(R"({"labels":["x"]})", R"({"labels":["y","x"]})"));
  CHECK(Match(R"({"labels":[]})", R"({"labels":[]})"));
  CHECK(Match(R"({"labels":["x","x"]})", R"({"labels":["x"]})"));
  CHECK_FALSE(Match(R"({"labels":["x","z"]})", R"({"labels":["y","x"]})"));
  CHECK_FALSE(Match(R"({"labels":["x"]})", R"({"labels":"x"})"));
  CHECK(Match(R"({"a":[{"k":1}]})", R"({"a":[{"k":2},{"k":1,"j":0}]})"));
}

TEST_CASE("a repeated key: the last occurrence counts, in both texts") {
  CHECK(Match(R"({"a":1,"a":2})", R"({"a":2})"));
  CHECK_FALSE(Match(R"({"a":1,"a":2})", R"({"a":1})"));
  CHECK(Match(R"({"a":2})", R"({"a":1,"a":2})"));
  CHECK_FALSE(Match(R"({"a":1})", R"({"a":1,"a":2})"));
}

TEST_CASE("a document that is not an object, or not JSON, matches nothing") {
  CHECK_FALSE(Match(R"({})", R"([])"));
  CHECK_FALSE(Match(R"({})", R"("x")"));
  CHECK_FALSE(Match(R"({})", R"({"a":)"));
  CHECK_FALSE(Match(R"({})", ""));
}

TEST_CASE("one filter is tried on many documents") {
  absl::StatusOr<JsonContainsFilter> f =
      JsonContainsFilter::Compile(R"({"k":"v"})", "metadata");
  REQUIRE(f.ok());
  CHECK_FALSE(f->empty());
  CHECK(f->Matches(R"({"k":"v"})"));
  CHECK_FALSE(f->Matches(R"({"k":"w"})"));
  CHECK(f->Matches(R"({"x":[1,2,3],"k":"v"})"));
  JsonContainsFilter moved = std::move(*f);
  CHECK(moved.Matches(R"({"k":"v"})"));
}

TEST_CASE("a filter that is not one JSON object is refused, naming it") {
  for (const char* bad : {"[]", "1", "\"x\"", "null", "{", "", "{} {}"}) {
    absl::StatusOr<JsonContainsFilter> f =
        JsonContainsFilter::Compile(bad, "metadata");
    CAPTURE(bad);
    REQUIRE_FALSE(f.ok());
    CHECK(f.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(f.status().message()).find("metadata") !=
          std::string::npos);
  }
  absl::StatusOr<JsonContainsFilter> empty =
      JsonContainsFilter::Compile("{}", "metadata");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

}  // namespace
}  // namespace ctxkit::internal
