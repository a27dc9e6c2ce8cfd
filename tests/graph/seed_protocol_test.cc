// The seed protocol (ctxkit/context_graph_seed.h): the nine d6c45ab tools,
// context_memory's ten actions with 0.1.1's messages and status codes, the
// REST routes with percent-decoded ids, the stdin lines, errors that name
// the field and change nothing. (Equal answers for equal call sequences:
// determinism_test.cc.)

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/context_graph_seed.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using graph::CallSeedTool;
using graph::ContextMemory;
using graph::LegacyLine;
using graph::SeedAnswer;
using graph::SeedRest;
using testing::Contains;
using testing::Must;

struct Proto : testing::GraphFixture {
  Proto() : GraphFixture(testing::ManualGraphOptions()) {}

  SeedAnswer Tool(std::string_view tool, std::string_view args) {
    SeedAnswer a = CallSeedTool(*graph, tool, args);
    INFO(tool, " ", args, " -> ", a.http_status, " ", a.json);
    return a;
  }
  SeedAnswer Mem(std::string_view request) {
    return ContextMemory(*graph, request);
  }
  void Add(const std::string& id, const std::string& text) {
    Must(graph->AddMessage(id, {.role = MessageRole::kUser, .content = text}));
  }
};

void CheckAnswer(const SeedAnswer& a, int status, bool is_error,
                 const std::string& needle) {
  INFO(a.http_status, " ", a.json);
  CHECK(a.http_status == status);
  CHECK(a.is_error == is_error);
  CHECK(Contains(a.json, needle));
}

TEST_CASE("the tool list has the nine seed tools, then context_memory") {
  std::vector<std::string> names;
  for (const graph::SeedToolInfo& t : graph::SeedTools()) {
    names.emplace_back(t.name);
    CHECK(Contains(t.input_schema, "\"type\":\"object\""));
  }
  CHECK(names ==
        std::vector<std::string>{
            "ping", "add_message", "retrieve_context", "get_similar_contexts",
            "add_relationship", "get_related_contexts", "summarize_context",
            "visualize_context", "get_context_metrics", "context_memory"});
  CHECK(Contains(graph::SeedTools()[1].input_schema, "\"HIGH\""));
  CHECK(Contains(graph::SeedTools()[1].input_schema, "\"high\""));
}

TEST_CASE_FIXTURE(Proto, "ping and add_message") {
  CHECK(Tool("ping", "{}").json == "pong");
  SeedAnswer a = Tool("add_message",
                      R"({"contextId":"c1","message":"Move login to OAuth",)"
                      R"("role":"user","importance":"HIGH","tags":["auth"]})");
  CheckAnswer(a, 200, false,
              R"("success":true,"message":"Message added to context: c1")");
  CHECK(Contains(a.json, R"("seq":1,)"));
  CHECK(Contains(a.json, R"("importance":0.75,"importanceLevel":"high")"));
  CHECK(Contains(a.json, R"("tags":["auth"])"));

  CheckAnswer(Tool("add_message", R"({"contextId":"c2","message":"x"})"), 400,
              true, R"({"success":false,"error":"role is required"})");
  CheckAnswer(
      Tool("add_message", R"({"contextId":"c2","message":"x","role":"user",)"
                          R"("tags":["a",3]})"),
      400, true, "tags[1] must be a string");
  CheckAnswer(Tool("add_message", R"({"contextId":"c2","message":"x",)"
                                  R"("role":"user","importance":"urgent"})"),
              400, true, "importance");
  CheckAnswer(
      Tool("add_message", R"({"contextId":7,"message":"x","role":"user"})"),
      400, true, "contextId must be a string");
  CheckAnswer(Tool("add_message", "[1]"), 400, true, "arguments must be");
  CheckAnswer(Tool("add_message", "{"), 400, true, "not valid JSON");
  // None of the refused calls wrote anything.
  CHECK(graph->Retrieve("c2").status().code() == StatusCode::kNotFound);
  CheckAnswer(Tool("nope", "{}"), 404, true, "Unknown tool: nope");
}

TEST_CASE_FIXTURE(Proto, "retrieve_context and summarize_context") {
  CheckAnswer(Tool("retrieve_context", R"({"contextId":"missing"})"), 404, true,
              R"({"success":false,"error":"Context not found"})");
  CHECK(Tool("retrieve_context", R"({"contextId":"missing"})").json ==
        R"({"success":false,"error":"Context not found"})");
  Add("c", "We decided to use Postgres for the session store.");
  SeedAnswer r = Tool("retrieve_context", R"({"contextId":"c"})");
  CheckAnswer(r, 200, false, R"({"success":true,"contextId":"c","messages":[)");
  CHECK(Contains(r.json, R"("hasSummary":false,"summary":null)"));
  CHECK(Contains(r.json, R"("parentContextId":null,"childContextIds":[])"));
  CheckAnswer(Tool("retrieve_context", R"({"contextId":"c","limit":0})"), 400,
              true, "limit is 0");

  // The seed answered "" here; this is the summary object.
  SeedAnswer s = Tool("summarize_context", R"({"contextId":"c"})");
  CheckAnswer(s, 200, false, R"({"success":true,"contextId":"c","summary":")");
  CHECK(Contains(s.json, R"("version":1,)"));
  CHECK(!Contains(s.json, R"("summary":"")"));
  CheckAnswer(Tool("summarize_context", R"({"contextId":"nobody"})"), 404, true,
              "\"success\":false");
  CHECK(Contains(Tool("retrieve_context", R"({"contextId":"c"})").json,
                 R"("hasSummary":true,"summary":{"contextId":"c")"));
}

TEST_CASE_FIXTURE(Proto, "relationships, related, similar, visualize") {
  Add("a", "login page uses oauth tokens");
  Add("b", "oauth token refresh for the login page");
  CheckAnswer(Tool("add_relationship",
                   R"({"sourceContextId":"a","targetContextId":"zz",)"
                   R"("relationshipType":"references"})"),
              404, true, "zz");
  CheckAnswer(Tool("add_relationship",
                   R"({"sourceContextId":"a","targetContextId":"b",)"
                   R"("relationshipType":"references","weight":1.5})"),
              400, true, "weight");
  CheckAnswer(Tool("add_relationship",
                   R"({"sourceContextId":"a","targetContextId":"b",)"
                   R"("relationshipType":"friend"})"),
              400, true, "relationshipType");
  CHECK(Must(graph->Verify()).edges == 0);
  SeedAnswer e = Tool("add_relationship",
                      R"({"sourceContextId":"a","targetContextId":"b",)"
                      R"("relationshipType":"references","weight":0.5,)"
                      R"("metadata":{"why":"shared"}})");
  CheckAnswer(e, 200, false,
              R"x("message":"Relationship added: a -> b (references)")x");
  CHECK(Contains(e.json, R"("weight":0.5,"metadata":{"why":"shared"})"));
  CHECK(
      Contains(e.json, R"("invalidAt":null,"expiredAt":null,"created":true)"));

  CHECK(Tool("get_related_contexts", R"({"contextId":"a"})").json == "[\"b\"]");
  CHECK(Tool("get_related_contexts",
             R"({"contextId":"b","direction":"outgoing"})")
            .json == "[]");
  CheckAnswer(
      Tool("get_related_contexts", R"({"contextId":"a","direction":"up"})"),
      400, true, R"(direction is \"up\")");
  // The filters ctxkit adds to the seed's tool.
  CHECK(Tool("get_related_contexts",
             R"({"contextId":"a","metadata":{"why":"shared"}})")
            .json == "[\"b\"]");
  CHECK(Tool("get_related_contexts",
             R"({"contextId":"a","metadata":{"why":"other"}})")
            .json == "[]");
  CHECK(Tool("get_related_contexts", R"({"contextId":"a","tags":["none"]})")
            .json == "[]");
  CheckAnswer(Tool("get_related_contexts", R"({"contextId":"a","metadata":1})"),
              400, true, "metadata");
  CheckAnswer(Tool("get_related_contexts", R"({"contextId":"a","tags":[""]})"),
              400, true, "tags[0]");

  SeedAnswer sim =
      Tool("get_similar_contexts", R"({"query":"oauth login","limit":1})");
  CheckAnswer(sim, 200, false, R"([{"contextId":")");
  CheckAnswer(Tool("get_similar_contexts", R"({"limit":1})"), 400, true,
              "query is required");

  CheckAnswer(Tool("visualize_context", R"({"contextId":"a"})"), 200, false,
              R"({"success":true,"contextId":"a")");
  CheckAnswer(Tool("visualize_context", R"({"contextId":"a","format":"text"})"),
              200, false, R"("format":"text","text":"Context ID: a)");
  CheckAnswer(Tool("visualize_context", R"({"contextId":"a","depth":4})"), 400,
              true, "depth is 4");
  CheckAnswer(Tool("visualize_context", "{}"), 200, false,
              R"("sessions":[{"contextId":")");
  CheckAnswer(Tool("get_context_metrics", R"({"period":"year"})"), 400, true,
              "period");
  // The graph's own counts; the call figures need an Analytics
  // (metrics_test.cc).
  CheckAnswer(Tool("get_context_metrics", "{}"), 200, false,
              R"({"success":true,"period":"week")");
  CheckAnswer(Tool("get_context_metrics", R"({"period":"day"})"), 200, false,
              R"("contexts":)");
}

TEST_CASE_FIXTURE(Proto, "context_memory: the ten actions and 0.1.1's texts") {
  CheckAnswer(Mem(R"({"action":"get_meta"})"), 400, true,
              R"({"success":false,"message":"Missing required parameters: )"
              R"(action and contextId are required"})");
  CheckAnswer(Mem(R"({"action":"fly","contextId":"c"})"), 400, true,
              "Unknown action: fly. Supported actions are 'add', 'retrieve', "
              "'summarize', 'get_related', 'get_hierarchy', 'get_meta', "
              "'find_similar', 'add_relationship', 'find_path', and "
              "'cleanup'");
  CheckAnswer(Mem(R"({"action":"add","contextId":"c","content":"x"})"), 400,
              true, "role and content are required");
  CheckAnswer(Mem(R"({"action":"add","contextId":"c","role":"user",)"
                  R"("content":"x","importance":5})"),
              400, true, "importance must be a string");
  CHECK(graph->Retrieve("c").status().code() == StatusCode::kNotFound);

  CheckAnswer(Mem(R"({"action":"add","contextId":"c","role":"user",)"
                  R"("content":"Why does the build fail on arm64?",)"
                  R"("importance":"High"})"),
              200, false,
              R"({"success":true,"message":"Message added to context 'c'")");
  CheckAnswer(Mem(R"({"action":"retrieve","contextId":"c"})"), 200, false,
              R"("message":"Retrieved context for 'c'","contextId":"c")");
  CheckAnswer(Mem(R"({"action":"retrieve","contextId":"none"})"), 404, true,
              "none");
  CheckAnswer(Mem(R"({"action":"summarize","contextId":"c"})"), 200, false,
              R"("message":"Summary generated for context 'c'","summary":{)");
  CheckAnswer(Mem(R"({"action":"summarize","contextId":"none"})"), 200, false,
              R"({"success":false,"message":"Could not generate summary for )"
              R"(context 'none'","summary":null)");

  CheckAnswer(Mem(R"({"action":"add_relationship","contextId":"c",)"
                  R"("targetId":"d"})"),
              400, true, "targetId and relationshipType are required");
  CheckAnswer(Mem(R"({"action":"add_relationship","contextId":"c",)"
                  R"("targetId":"d","relationshipType":"bogus"})"),
              400, true, "Invalid relationship type: bogus");
  CheckAnswer(
      Mem(R"({"action":"add_relationship","contextId":"c",)"
          R"("targetId":"d","relationshipType":"parent","strength":"x"})"),
      400, true, "strength must be a number");
  // createMissing: d did not exist; the strength is clamped and said so.
  SeedAnswer rel = Mem(R"({"action":"add_relationship","contextId":"c",)"
                       R"("targetId":"d","relationshipType":"parent",)"
                       R"("strength":3})");
  CheckAnswer(rel, 200, false,
              R"("message":"Added parent relationship from 'c' to 'd'",)"
              R"("clamped":true,)");
  CHECK(Contains(rel.json, R"("weight":1.0,)"));
  CHECK(Must(graph->Retrieve("d")).context.message_count == 0);
  CHECK(!Contains(Mem(R"({"action":"add_relationship","contextId":"c",)"
                      R"("targetId":"d","relationshipType":"references"})")
                      .json,
                  "clamped"));

  CheckAnswer(Mem(R"({"action":"get_related","contextId":"c"})"), 200, false,
              R"("message":"Retrieved related contexts for 'c'",)"
              R"("relatedContexts":["d"])");
  CheckAnswer(Mem(R"({"action":"get_hierarchy","contextId":"d"})"), 200, false,
              R"("message":"Retrieved hierarchical information for 'd'",)"
              R"("hierarchicalStructure":{"parent":"c","children":[])");
  CheckAnswer(
      Mem(R"({"action":"get_meta","contextId":"c"})"), 200, false,
      R"("message":"Retrieved 0 meta-summary IDs","metaSummaryIds":[])");
  SeedAnswer meta =
      Mem(R"({"action":"get_meta","contextId":"c","metaId":"m"})");
  CHECK(meta.http_status == 200);
  CHECK(meta.json ==
        R"({"success":false,"message":"Meta-summary with ID 'm' not found"})");
  Must(graph->CreateMetaSummary("m", {"c"}));
  CheckAnswer(Mem(R"({"action":"get_meta","contextId":"c","metaId":"m"})"), 200,
              false,
              R"("message":"Retrieved meta-summary 'm'","metaSummary":{)");

  CheckAnswer(Mem(R"({"action":"find_similar","contextId":"c"})"), 400, true,
              "searchText is required");
  CheckAnswer(Mem(R"({"action":"find_similar","contextId":"c",)"
                  R"("searchText":"arm64 build","limit":0})"),
              400, true, "limit is 0");
  CheckAnswer(Mem(R"({"action":"find_similar","contextId":"c",)"
                  R"("searchText":"arm64 build"})"),
              200, false,
              R"("message":"Found 1 similar contexts to the search text",)"
              R"("similarContexts":[{"contextId":"c")");

  CheckAnswer(Mem(R"({"action":"find_path","contextId":"c"})"), 400, true,
              "targetId is required");
  CheckAnswer(Mem(R"({"action":"find_path","contextId":"c","targetId":"d"})"),
              200, false,
              R"("message":"Found path with 2 nodes between 'c' and 'd'",)"
              R"("found":true,"path":["c","d"])");
  CheckAnswer(Mem(R"({"action":"find_path","contextId":"c","targetId":"q"})"),
              200, false,
              R"("message":"No path found between 'c' and 'q'","found":false,)"
              R"("path":[])");
  CheckAnswer(Mem(R"({"action":"cleanup","contextId":"c"})"), 200, false,
              R"("message":"Cleaned up 0 irrelevant contexts",)"
              R"("cleanedContexts":[])");
  CheckAnswer(Mem(R"({"action":"cleanup","contextId":"q"})"), 404, true, "q");
  // The same protocol through the tool list.
  CheckAnswer(
      Tool("context_memory", R"({"action":"get_related","contextId":"d"})"),
      200, false, R"("relatedContexts":["c"])");
  CheckVerified();
}

TEST_CASE_FIXTURE(Proto, "REST routes, percent-decoded ids") {
  Add("a/b", "slash");
  Add("a_b", "underscore");
  Must(graph->AddRelationship(
      {.source = "a/b", .target = "a_b", .type = "references"}));
  CheckAnswer(SeedRest(*graph, "GET", "/", ""), 200, false,
              R"({"name":"prompt-context","description":"Memory Context )");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a%2Fb", ""), 200, false,
              R"({"success":true,"message":"Found 1 related contexts for )"
              R"('a/b'","relatedContexts":["a_b"]})");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a_b?direction=outgoing", ""),
              200, false, R"("relatedContexts":[])");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a_b?type=references", ""), 200,
              false, R"("relatedContexts":["a/b"])");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a_b?type=nope", ""), 400, true,
              "Invalid relationship type: nope");
  // The filters: metadata as percent-encoded JSON, tags one per `tag`.
  Must(graph->AddMessage("a/b", {.role = MessageRole::kUser,
                                 .content = "tagged",
                                 .tags = {"t1", "t 2"}}));
  CheckAnswer(SeedRest(*graph, "GET",
                       "/related/a_b?metadata=%7B%22auto%22%3Anull%7D", ""),
              200, false, R"("relatedContexts":["a/b"])");
  CheckAnswer(SeedRest(*graph, "GET",
                       "/related/a_b?metadata=%7B%22auto%22%3Atrue%7D", ""),
              200, false, R"("relatedContexts":[])");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a_b?metadata=%5B%5D", ""), 400,
              true, "metadata must be a JSON object");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a_b?tag=t1&tag=t%202", ""), 200,
              false, R"("relatedContexts":["a/b"])");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a_b?tag=t1&tag=t3", ""), 200,
              false, R"("relatedContexts":[])");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a_b?tag=", ""), 400, true,
              "tags[0]");
  CheckAnswer(SeedRest(*graph, "GET", "/similar?text=slash&tag=t3", ""), 200,
              false, R"("similarContexts":[])");
  CheckAnswer(SeedRest(*graph, "GET", "/similar?text=slash&tag=t1", ""), 200,
              false, R"("similarContexts":[{"contextId":"a/b")");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a%3Ab", ""), 404, true, "a:b");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a/b", ""), 404, true,
              "Not found");
  CheckAnswer(SeedRest(*graph, "GET", "/related/a%2", ""), 400, true,
              "two hex digits");
  CheckAnswer(SeedRest(*graph, "GET", "/contexts", ""), 200, false,
              R"("message":"Retrieved 2 context IDs","contextIds":[)");
  CheckAnswer(SeedRest(*graph, "GET", "/hierarchies", ""), 200, false,
              R"("hierarchicalIds":[])");
  CheckAnswer(SeedRest(*graph, "GET", "/meta-summaries", ""), 200, false,
              R"("metaSummaryIds":[])");
  CheckAnswer(SeedRest(*graph, "GET", "/similar?limit=2", ""), 400, true,
              "Missing required parameter: text");
  CheckAnswer(SeedRest(*graph, "GET", "/similar?text=slash&limit=x", ""), 400,
              true, "limit must be an integer");
  CheckAnswer(SeedRest(*graph, "GET", "/similar?text=slash", ""), 200, false,
              R"("message":"Found 1 similar contexts","similarContexts":[)"
              R"({"contextId":"a/b")");
  CheckAnswer(SeedRest(*graph, "POST", "/tools/context_memory",
                       R"({"action":"get_related","contextId":"a_b"})"),
              200, false, R"("relatedContexts":["a/b"])");
  CheckAnswer(SeedRest(*graph, "GET", "/tools/context_memory", ""), 405, true,
              "use POST");
  CheckAnswer(SeedRest(*graph, "DELETE", "/contexts", ""), 405, true,
              "use GET");
  CheckAnswer(SeedRest(*graph, "GET", "/elsewhere", ""), 404, true,
              "Not found: GET /elsewhere");
}

TEST_CASE_FIXTURE(Proto, "stdin lines") {
  SeedAnswer a = LegacyLine(
      *graph, R"({"id":7,"tool":"context_memory","inputs":{"action":"add",)"
              R"("contextId":"c","role":"user","content":"hi"}})");
  CheckAnswer(a, 200, false,
              R"({"id":7,"outputs":{"success":true,"message":"Message added )"
              R"(to context 'c'")");
  CHECK(LegacyLine(*graph, R"({"id":"x","tool":"other","inputs":{}})").json ==
        R"({"id":"x","error":{"code":404,"message":"Unknown tool: other"}})");
  CHECK(LegacyLine(*graph, R"({"id":[1],"tool":"context_memory",)"
                           R"("inputs":{"action":"retrieve"}})")
            .json == R"({"id":[1],"error":{"code":400,"message":"Missing )"
                     R"(required parameters: action and contextId are )"
                     R"(required"}})");
  CheckAnswer(LegacyLine(*graph, "not json"), 400, true,
              R"({"id":null,"error":{"code":400,"message":"line is not valid)");
  CheckAnswer(LegacyLine(*graph, R"({"id":1,"tool":"context_memory"})"), 400,
              true, "inputs is required");
}

}  // namespace
}  // namespace ctxkit
