// MergePatch against the examples of RFC 7386, appendix A, and its errors.

#include "lib/json/merge_patch.h"

#include <doctest/doctest.h>

#include <string>

namespace ctxkit::internal {
namespace {

std::string Merged(const std::string& target, const std::string& patch) {
  absl::StatusOr<std::string> out =
      MergePatch(target, patch, "target", "patch");
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  return *out;
}

TEST_CASE("the RFC 7386 appendix A examples") {
  CHECK(Merged(R"({"a":"b"})", R"({"a":"c"})") == R"({"a":"c"})");
  CHECK(Merged(R"({"a":"b"})", R"({"b":"c"})") == R"({"a":"b","b":"c"})");
  CHECK(Merged(R"({"a":"b"})", R"({"a":null})") == R"({})");
  CHECK(Merged(R"({"a":"b","b":"c"})", R"({"a":null})") == R"({"b":"c"})");
  CHECK(Merged(R"({"a":["b"]})", R"({"a":"c"})") == R"({"a":"c"})");
  CHECK(Merged(R"({"a":"c"})", R"({"a":["b"]})") == R"({"a":["b"]})");
  CHECK(Merged(R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})") ==
        R"({"a":{"b":"d"}})");
  CHECK(Merged(R"({"a":[{"b":"c"}]})", R"({"a":[1]})") == R"({"a":[1]})");
  CHECK(Merged(R"(["a","b"])", R"(["c","d"])") == R"(["c","d"])");
  CHECK(Merged(R"({"a":"b"})", R"(["c"])") == R"(["c"])");
  CHECK(Merged(R"({"a":"foo"})", "null") == "null");
  CHECK(Merged(R"({"a":"foo"})", R"("bar")") == R"("bar")");
  CHECK(Merged(R"({"e":null})", R"({"a":1})") == R"({"e":null,"a":1})");
  CHECK(Merged(R"([1,2])", R"({"a":"b","c":null})") == R"({"a":"b"})");
  CHECK(Merged(R"({})", R"({"a":{"bb":{"ccc":null}}})") ==
        R"({"a":{"bb":{}}})");
}

TEST_CASE("order, numbers and an empty patch") {
  // The target's order is kept; new members follow in the patch's order.
  CHECK(Merged(R"({"z":1,"a":2})", R"({"m":3,"a":4,"b":5})") ==
        R"({"z":1,"a":4,"m":3,"b":5})");
  CHECK(Merged(R"({"n":12345678901234,"f":0.5})", "{}") ==
        R"({"n":12345678901234,"f":0.5})");
  CHECK(Merged(R"({"k":"v"})", R"({"k":{"deep":true}})") ==
        R"({"k":{"deep":true}})");
  // A key repeated in the patch: its last value counts, once.
  CHECK(Merged(R"({"a":1,"b":2})", R"({"a":5,"a":null,"c":3,"c":4})") ==
        R"({"b":2,"c":4})");
}

TEST_CASE("a text that is not JSON is named") {
  absl::StatusOr<std::string> bad =
      MergePatch("{", R"({"a":1})", "stored metadata", "metadata");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).find("stored metadata") !=
        std::string::npos);
  bad = MergePatch("{}", R"({"a":)", "stored metadata", "metadata");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("metadata") !=
        std::string::npos);
}

}  // namespace
}  // namespace ctxkit::internal
