// CG-18: with an injected clock and id source, the same operation sequence
// gives byte-identical responses, ids included, on two fresh stores.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/context_graph_seed.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::GraphFixture;

// Every seed tool and context_memory action, with automatic summaries,
// links and cleanups firing along the way.
std::vector<std::string> Run(uint64_t seed) {
  ContextGraphOptions options;
  options.message_limit_threshold = 3;
  options.cleanup_every = 5;
  options.similarity_threshold = 0.2;
  // The fixture's random source is seeded before the graph writes anything.
  GraphFixture f(options);
  f.random.state->store(seed);
  std::vector<std::string> out;
  const auto tool = [&](std::string_view name, const std::string& args) {
    out.push_back(graph::CallSeedTool(*f.graph, name, args).json);
    f.clock.Advance(250);
  };
  const auto memory = [&](const std::string& request) {
    out.push_back(graph::ContextMemory(*f.graph, request).json);
    f.clock.Advance(250);
  };
  const char* topics[] = {"oauth login tokens", "redis session store",
                          "login page layout", "token refresh errors"};
  for (int i = 0; i < 16; ++i) {
    const std::string id = "ctx/" + std::to_string(i % 6);
    tool("add_message", R"({"contextId":")" + id + R"(","message":"message )" +
                            std::to_string(i) + " about " + topics[i % 4] +
                            R"(","role":")" + (i % 2 ? "assistant" : "user") +
                            R"(","importance":")" +
                            (i % 5 ? "medium" : "HIGH") + R"(","tags":["t)" +
                            std::to_string(i % 3) + R"("]})");
  }
  tool("add_relationship",
       R"({"sourceContextId":"ctx/0","targetContextId":"ctx/1",)"
       R"("relationshipType":"parent","weight":0.9})");
  tool("add_relationship",
       R"({"sourceContextId":"ctx/1","targetContextId":"ctx/2",)"
       R"("relationshipType":"continues"})");
  memory(R"({"action":"add","contextId":"ctx/9","role":"user",)"
         R"("content":"new context about oauth"})");
  memory(R"({"action":"add_relationship","contextId":"ctx/9",)"
         R"("targetId":"ctx/0","relationshipType":"references","strength":2})");
  tool("get_related_contexts", R"({"contextId":"ctx/1"})");
  tool("get_similar_contexts", R"({"query":"oauth login","limit":3})");
  tool("summarize_context", R"({"contextId":"ctx/1"})");
  tool("retrieve_context", R"({"contextId":"ctx/1"})");
  tool("visualize_context",
       R"({"contextId":"ctx/0","depth":2,"format":"mermaid"})");
  for (const char* action :
       {"retrieve", "summarize", "get_related", "get_hierarchy", "get_meta"}) {
    memory(std::string(R"({"action":")") + action +
           R"(","contextId":"ctx/0"})");
  }
  memory(R"({"action":"find_similar","contextId":"ctx/0",)"
         R"("searchText":"session store"})");
  memory(R"({"action":"find_path","contextId":"ctx/9","targetId":"ctx/2"})");
  memory(R"({"action":"cleanup","contextId":"ctx/9"})");
  tool("retrieve_context", R"({"contextId":"no such context"})");
  return out;
}

TEST_CASE("the same calls give the same bytes, ids included") {
  const std::vector<std::string> first = Run(7);
  const std::vector<std::string> second = Run(7);
  REQUIRE(first.size() == second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    INFO("call ", i, ": ", first[i]);
    CHECK(first[i] == second[i]);
  }
  // The sequence reached what makes bytes differ when anything leaks: new
  // conversations (ids), automatic summaries, and time.
  const auto any = [&](std::string_view needle) {
    for (const std::string& a : first) {
      if (a.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  CHECK(any(R"("conversationId":")"));
  CHECK(any(R"("summarized":true)"));
  CHECK(any(R"("lastUpdated":)"));

  // Another seed gives other ids: the source is what decides them.
  const std::vector<std::string> other = Run(8);
  REQUIRE(other.size() == first.size());
  CHECK(other.front() != first.front());
}

}  // namespace
}  // namespace ctxkit
