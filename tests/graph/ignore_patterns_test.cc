// ContextGraphOptions::ignore_patterns: the globs, Open's checks, and the
// writes they refuse.

#include "lib/graph/ignore_patterns.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit::testing {
namespace {

using internal::MatchesIgnorePattern;

TEST_CASE("gitignore-style globs over ids") {
  // A pattern without '/' matches any one segment, and what is below it.
  CHECK(MatchesIgnorePattern("node_modules", "node_modules"));
  CHECK(MatchesIgnorePattern("node_modules", "web/node_modules/x"));
  CHECK_FALSE(MatchesIgnorePattern("node_modules", "node_modules2"));
  CHECK(MatchesIgnorePattern("*.log", "logs/today.log"));
  CHECK_FALSE(MatchesIgnorePattern("*.log", "today.log.txt"));
  CHECK(MatchesIgnorePattern(".*.log", ".hidden.log"));
  CHECK_FALSE(MatchesIgnorePattern(".*.log", "visible.log"));
  CHECK(MatchesIgnorePattern("tmp-?", "tmp-1"));
  CHECK(MatchesIgnorePattern("tmp-?", "tmp-é"));  // one character
  CHECK_FALSE(MatchesIgnorePattern("tmp-?", "tmp-12"));
  CHECK(MatchesIgnorePattern("[a-c]x", "bx"));
  CHECK_FALSE(MatchesIgnorePattern("[!a-c]x", "bx"));
  CHECK(MatchesIgnorePattern("[!a-c]x", "dx"));
  CHECK(MatchesIgnorePattern("build/", "build/out"));
  // With '/', from the start; '*' stays in a segment, '**' crosses.
  CHECK(MatchesIgnorePattern("a/*", "a/b"));
  CHECK(MatchesIgnorePattern("a/*", "a/b/c"));  // below a matched "a/b"
  CHECK_FALSE(MatchesIgnorePattern("a/*", "x/a/b"));
  CHECK(MatchesIgnorePattern("/tmp", "tmp/1"));
  CHECK_FALSE(MatchesIgnorePattern("/tmp", "x/tmp"));
  CHECK(MatchesIgnorePattern("a/**/z", "a/b/c/z"));
  CHECK_FALSE(MatchesIgnorePattern("a/*/z", "a/b/c/z"));
  // Byte-exact, as ids are: no case folding, ':' and '_' are not '/'.
  CHECK_FALSE(MatchesIgnorePattern("Build", "build"));
  CHECK_FALSE(MatchesIgnorePattern("a/b", "a:b"));
  CHECK(MatchesIgnorePattern("\\*", "*"));
  CHECK_FALSE(MatchesIgnorePattern("\\*", "x"));
  // Many stars stay fast (the failed states are remembered).
  CHECK_FALSE(
      MatchesIgnorePattern("*a*a*a*a*a*a*a*a*a*a*b", std::string(1000, 'a')));
}

TEST_CASE("Open checks the patterns") {
  Fixture base;
  auto open = [&](std::vector<std::string> patterns) {
    ContextGraphOptions o = ManualGraphOptions();
    o.ignore_patterns = std::move(patterns);
    return ContextGraph::Open(*base.store, *base.convs, o).status();
  };
  CHECK(open({"node_modules", "*.log"}).ok());
  CheckError(open({"ok", ""}), StatusCode::kInvalidArgument,
             "ignore_patterns[1]");
  CheckError(open({"!keep"}), StatusCode::kInvalidArgument,
             "ignore_patterns[0]: negation");
  CheckError(open({"[abc"}), StatusCode::kInvalidArgument,
             "ignore_patterns[0]: '[' at offset 0 is not closed");
  CheckError(open({std::string("\xff")}), StatusCode::kInvalidArgument,
             "ignore_patterns[0]");
  CheckError(open(std::vector<std::string>(1001, "x")),
             StatusCode::kInvalidArgument, "ignore_patterns holds 1001");
}

TEST_CASE("matching ids are refused on add and create_missing only") {
  ContextGraphOptions o = ManualGraphOptions();
  o.ignore_patterns = {"node_modules", "*.log"};
  GraphFixture f(o);
  CheckError(
      f.graph->AddMessage("web/node_modules/x", {.content = "hi"}).status(),
      StatusCode::kInvalidArgument,
      "contextId matches ignore pattern node_modules");
  CheckError(f.graph->AddMessages("run.log", {{.content = "hi"}}).status(),
             StatusCode::kInvalidArgument,
             "contextId matches ignore pattern *.log");
  REQUIRE(f.graph->AddMessage("src", {.content = "hi"}).ok());
  CheckError(f.graph
                 ->AddRelationship({.source = "src",
                                    .target = "x.log",
                                    .type = "references",
                                    .create_missing = true})
                 .status(),
             StatusCode::kInvalidArgument,
             "target matches ignore pattern *.log");
  // Nothing was written by the refused calls.
  CHECK(Must(f.graph->ListContexts()).contexts.size() == 1);
  // No implicit defaults: only the configured patterns apply.
  REQUIRE(f.graph->AddMessage(".git", {.content = "hi"}).ok());
  REQUIRE(f.graph->AddMessage("dist", {.content = "hi"}).ok());
  f.CheckVerified();
}

}  // namespace
}  // namespace ctxkit::testing
