// The MCP session (programs/ctxkit/mcp/session.h): the protocol around the
// tools, driven through Handle as a transport would.

#include "programs/ctxkit/mcp/session.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/context_graph_seed.h"
#include "doctest/doctest.h"
#include "programs/ctxkit/host/services.h"
#include "simdjson.h"
#include "tests/host/host_fixture.h"

namespace ctxkit::mcp {
namespace {

using testing::TempServices;

// Collects what the session sends.
class Collector final : public Outbound {
 public:
  void Send(std::string message) override {
    messages_.push_back(std::move(message));
  }
  std::vector<std::string> Take() { return std::move(messages_); }

 private:
  std::vector<std::string> messages_;
};

// The one reply to `message`, parsed.
struct Reply {
  std::string text;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
};

std::unique_ptr<Reply> Call(Session& session, std::string_view message) {
  Collector out;
  session.Handle(message, out);
  std::vector<std::string> sent = out.Take();
  REQUIRE(!sent.empty());
  auto reply = std::make_unique<Reply>();
  reply->text = sent.back();
  REQUIRE(reply->parser.parse(reply->text).get(reply->root) ==
          simdjson::SUCCESS);
  return reply;
}

int64_t ErrorCode(const Reply& reply) {
  int64_t code = 0;
  REQUIRE_MESSAGE(reply.root["error"]["code"].get(code) == simdjson::SUCCESS,
                  reply.text);
  return code;
}

std::string_view Str(simdjson::dom::element e) {
  std::string_view s;
  REQUIRE(e.get(s) == simdjson::SUCCESS);
  return s;
}

TEST_CASE("initialize negotiates the protocol revision") {
  TempServices services;
  for (std::string_view version :
       {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    Session session(services.get());
    CHECK(session.protocol_version().empty());
    auto reply = Call(session, R"({"jsonrpc":"2.0","id":1,"method":"initialize",
        "params":{"protocolVersion":")" +
                                   std::string(version) +
                                   R"(","capabilities":{},
        "clientInfo":{"name":"t","version":"1"}}})");
    CHECK(Str(reply->root["result"]["protocolVersion"]) == version);
    CHECK(Str(reply->root["result"]["serverInfo"]["name"]) == "ctxkit");
    CHECK(reply->root["result"]["capabilities"]["tools"].is_object());
    CHECK(reply->root["result"]["capabilities"]["completions"].is_object());
    CHECK(session.protocol_version() == version);
  }
  Session session(services.get());
  auto reply = Call(session, R"({"jsonrpc":"2.0","id":"a","method":"initialize",
      "params":{"protocolVersion":"1999-01-01","capabilities":{}}})");
  CHECK(Str(reply->root["result"]["protocolVersion"]) ==
        kLatestProtocolVersion);
  CHECK(Str(reply->root["id"]) == "a");
  CHECK_FALSE(session.initialized());
  Collector out;
  session.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                 out);
  CHECK(out.Take().empty());
  CHECK(session.initialized());
}

TEST_CASE("JSON-RPC errors carry the right codes and the session goes on") {
  TempServices services;
  Session session(services.get());
  CHECK(ErrorCode(*Call(session, "{not json")) == kParseError);
  CHECK(ErrorCode(
            *Call(session, R"({"jsonrpc":"1.0","id":1,"method":"ping"})")) ==
        kInvalidRequest);
  CHECK(ErrorCode(
            *Call(session, R"({"jsonrpc":"2.0","id":null,"method":"ping"})")) ==
        kInvalidRequest);
  CHECK(ErrorCode(
            *Call(session, R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})")) ==
        kInvalidRequest);
  CHECK(ErrorCode(*Call(session, R"({"jsonrpc":"2.0","id":1,"method":7})")) ==
        kInvalidRequest);
  CHECK(ErrorCode(*Call(session, "[]")) == kInvalidRequest);
  CHECK(ErrorCode(*Call(session, "42")) == kInvalidRequest);
  auto unknown =
      Call(session, R"({"jsonrpc":"2.0","id":2,"method":"server/discover"})");
  CHECK(ErrorCode(*unknown) == kMethodNotFound);
  CHECK(unknown->text.find("server/discover") != std::string::npos);
  CHECK(ErrorCode(*Call(
            session,
            R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":[]})")) ==
        kInvalidParams);
  CHECK(
      ErrorCode(*Call(
          session,
          R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}})")) ==
      kInvalidParams);
  CHECK(
      ErrorCode(*Call(
          session,
          R"({"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"loud"}})")) ==
      kInvalidParams);
  CHECK(
      ErrorCode(*Call(
          session,
          R"({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"nowhere://x"}})")) ==
      kResourceNotFound);
  CHECK(
      ErrorCode(*Call(
          session,
          R"({"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"nope"}})")) ==
      kInvalidParams);
  // Still serving.
  auto ping = Call(session, R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  CHECK(ping->root["result"].is_object());
  // Notifications and responses get no reply, even unknown ones.
  Collector out;
  session.Handle(R"({"jsonrpc":"2.0","method":"notifications/whatever"})", out);
  session.Handle(R"({"jsonrpc":"2.0","id":9,"result":{}})", out);
  session.Handle(
      R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})",
      out);
  CHECK(out.Take().empty());
}

TEST_CASE("a batch is answered by an array, notifications left out") {
  TempServices services;
  Session session(services.get());
  Collector out;
  session.Handle(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},
                     {"jsonrpc":"2.0","method":"notifications/initialized"},
                     {"jsonrpc":"2.0","id":2,"method":"nope"}])",
                 out);
  const std::vector<std::string> sent = out.Take();
  REQUIRE(sent.size() == 1);
  simdjson::dom::parser parser;
  simdjson::dom::array replies;
  REQUIRE(parser.parse(sent[0]).get(replies) == simdjson::SUCCESS);
  CHECK(replies.size() == 2);
  CHECK(session.initialized());
}

TEST_CASE("lists are paginated with opaque cursors") {
  host::HostConfig config;
  config.page_size = 2;
  TempServices services(config);
  Session session(services.get());
  struct List {
    const char* method;
    const char* key;
    size_t total;
  };
  for (const List& list :
       {List{"tools/list", "tools", Tools().size()},
        List{"resources/list", "resources", Resources().size()},
        List{"resources/templates/list", "resourceTemplates",
             ResourceTemplates().size()},
        List{"prompts/list", "prompts", Prompts().size()}}) {
    // Named, not structured bindings: Clang 14 cannot capture those in
    // CAPTURE's lambda.
    const std::string_view method = list.method;
    const char* const key = list.key;
    const size_t total = list.total;
    CAPTURE(method);
    size_t seen = 0, pages = 0;
    std::string cursor;
    do {
      std::string request = R"({"jsonrpc":"2.0","id":1,"method":")" +
                            std::string(method) + R"(","params":{)";
      if (!cursor.empty()) request += R"("cursor":")" + cursor + R"(")";
      request += "}}";
      auto reply = Call(session, request);
      simdjson::dom::array items;
      REQUIRE_MESSAGE(
          reply->root["result"][key].get(items) == simdjson::SUCCESS,
          reply->text);
      CHECK(items.size() <= 2);
      seen += items.size();
      ++pages;
      std::string_view next;
      cursor =
          reply->root["result"]["nextCursor"].get(next) == simdjson::SUCCESS
              ? std::string(next)
              : std::string();
    } while (!cursor.empty() && pages < 100);
    CHECK(seen == total);
    CHECK(pages == (total + 1) / 2);
  }
  // A cursor of one list is no cursor of another, and garbage is refused.
  auto first =
      Call(session, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  const std::string tools_cursor(Str(first->root["result"]["nextCursor"]));
  CHECK(
      ErrorCode(*Call(
          session,
          R"({"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{"cursor":")" +
              tools_cursor + R"("}})")) == kInvalidParams);
  CHECK(
      ErrorCode(*Call(
          session,
          R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"zzz"}})")) ==
      kInvalidParams);
}

TEST_CASE("tools/call validates arguments against the input schema") {
  TempServices services;
  Session session(services.get());
  auto reply = Call(session, R"({"jsonrpc":"2.0","id":1,"method":"tools/call",
      "params":{"name":"manage_conversation","arguments":{"action":"invalid"}}})");
  simdjson::dom::element result = reply->root["result"];
  CHECK(result["isError"].get_bool().value() == true);
  CHECK(result["structuredContent"]["success"].get_bool().value() == false);
  CHECK(Str(result["structuredContent"]["error"]) == "Validation error");
  CHECK(Str(result["structuredContent"]["details"].at(0)["path"].at(0)) ==
        "action");
  // The text is the same document.
  CHECK(Str(result["content"].at(0)["text"]) ==
        simdjson::minify(result["structuredContent"]));
  // Absent arguments are an empty object: the schema says what is missing.
  auto missing = Call(session, R"({"jsonrpc":"2.0","id":2,"method":"tools/call",
      "params":{"name":"count_tokens"}})");
  CHECK(missing->root["result"]["isError"].get_bool().value() == true);
  CHECK(missing->text.find("Required") != std::string::npos);
}

TEST_CASE("a tool call returns structuredContent and the same text") {
  TempServices services;
  Session session(services.get());
  auto reply = Call(session, R"({"jsonrpc":"2.0","id":1,"method":"tools/call",
      "params":{"name":"count_tokens","arguments":{"input":"hello world",
      "model":"gpt-4"}}})");
  simdjson::dom::element result = reply->root["result"];
  CHECK(result["isError"].get_bool().value() == false);
  CHECK(result["structuredContent"]["success"].get_bool().value() == true);
  CHECK(result["structuredContent"]["tokens"].get_uint64().value() == 2);
  CHECK(Str(result["content"].at(0)["text"]) ==
        simdjson::minify(result["structuredContent"]));
}

TEST_CASE("log messages follow logging/setLevel") {
  TempServices services;
  Session session(services.get());
  const std::string bad_call = R"({"jsonrpc":"2.0","id":1,"method":"tools/call",
      "params":{"name":"count_tokens","arguments":{}}})";
  Collector quiet;
  session.Handle(bad_call, quiet);
  CHECK(quiet.Take().size() == 1);  // the reply only: info < warning
  Call(
      session,
      R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}})");
  Collector loud;
  session.Handle(bad_call, loud);
  const std::vector<std::string> sent = loud.Take();
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].find(R"("method":"notifications/message")") !=
        std::string::npos);
  CHECK(sent[0].find(R"("level":"info")") != std::string::npos);
}

// A count_tokens call with a progress token over kLongCallMessages
// messages: count_tokens reports every thousand of them.
constexpr int kLongCallMessages = 200000;

std::string LongCountCall(std::string_view id, std::string_view token) {
  std::string call =
      R"({"jsonrpc":"2.0","id":)" + std::string(id) +
      R"(,"method":"tools/call","params":{"_meta":{"progressToken":)" +
      std::string(token) +
      R"(},"name":"count_tokens","arguments":{"model":"gpt-4","input":[)";
  for (int i = 0; i < kLongCallMessages; ++i) {
    if (i != 0) call += ",";
    call += R"({"role":"user","content":"message number )" + std::to_string(i) +
            R"( about the build"})";
  }
  call += "]}}}";
  return call;
}

// Calls `on_first` on the request's thread, from within Send, when the
// first progress notification goes out: the request is then still running
// however fast the machine is, which a second thread cannot know.
class OnFirstProgress final : public Outbound {
 public:
  explicit OnFirstProgress(std::function<void()> on_first)
      : on_first_(std::move(on_first)) {}
  void Send(std::string message) override {
    const bool first = !seen_ && message.find(R"("notifications/progress")") !=
                                     std::string::npos;
    messages_.push_back(std::move(message));
    if (first) {
      seen_ = true;
      on_first_();
    }
  }
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::function<void()> on_first_;
  bool seen_ = false;
  std::vector<std::string> messages_;
};

TEST_CASE("progress is reported for a long call that asks for it") {
  TempServices services;
  Session session(services.get());
  Collector out;
  session.Handle(LongCountCall("1", R"("tok")"), out);
  const std::vector<std::string> sent = out.Take();
  REQUIRE(sent.size() >= 3);
  // Spaced by work (catalog.h): count_tokens reports every thousand
  // messages, half a hundredth of the total, so every other report goes.
  simdjson::dom::parser parser;
  double last = 0;
  for (size_t i = 0; i + 1 < sent.size(); ++i) {
    simdjson::dom::element note;
    REQUIRE(parser.parse(sent[i]).get(note) == simdjson::SUCCESS);
    CHECK(Str(note["method"]) == "notifications/progress");
    CHECK(Str(note["params"]["progressToken"]) == "tok");
    CHECK(note["params"]["total"].get_double().value() == kLongCallMessages);
    const double progress = note["params"]["progress"].get_double().value();
    if (i == 0) {
      CHECK(progress == 1000);
    } else {
      CHECK(progress - last >= kLongCallMessages / 100);
    }
    CHECK(progress < kLongCallMessages);
    last = progress;
  }
  CHECK(sent.size() - 1 == size_t{kLongCallMessages / 2000});
  CHECK(sent.back().find(R"("result")") != std::string::npos);
}

TEST_CASE("without a progress token a long call sends only its reply") {
  TempServices services;
  Session session(services.get());
  std::string call = LongCountCall("2", R"("tok")");
  const std::string meta = R"("_meta":{"progressToken":"tok"},)";
  call.erase(call.find(meta), meta.size());
  Collector out;
  session.Handle(call, out);
  const std::vector<std::string> sent = out.Take();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].find(R"("result")") != std::string::npos);
}

TEST_CASE("a cancelled request stops and gets no reply") {
  TempServices services;
  Session session(services.get());
  Collector cancel_out;
  OnFirstProgress out([&] {
    session.Handle(R"({"jsonrpc":"2.0","method":"notifications/cancelled",
                       "params":{"requestId":77,"reason":"user"}})",
                   cancel_out);
  });
  session.Handle(LongCountCall("77", "5"), out);
  CHECK(cancel_out.Take().empty());
  // Only the progress sent before the cancellation, and no reply.
  REQUIRE(out.messages().size() == 1);
  CHECK(out.messages()[0].find(R"("notifications/progress")") !=
        std::string::npos);
  // The id is free again and the session still serves.
  auto ping = Call(session, R"({"jsonrpc":"2.0","id":77,"method":"ping"})");
  CHECK(ping->root["result"].is_object());
}

TEST_CASE("a request id still in flight is refused") {
  TempServices services;
  Session session(services.get());
  std::unique_ptr<Reply> twice;
  OnFirstProgress out([&] {
    twice = Call(session, R"({"jsonrpc":"2.0","id":8,"method":"ping"})");
    session.CancelAll();
  });
  session.Handle(LongCountCall("8", "1"), out);
  REQUIRE(twice != nullptr);
  CHECK(ErrorCode(*twice) == kInvalidRequest);
}

TEST_CASE("an oversized message gets an error with id null") {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string reply = Session::TooLargeReply(1024);
  REQUIRE(parser.parse(reply).get(root) == simdjson::SUCCESS);
  CHECK(root["error"]["code"].get_int64().value() == kInvalidRequest);
  CHECK(root["id"].is_null());
  CHECK(reply.find("1024") != std::string::npos);
}

// Seed 003's clients: d6c45ab's test client calls tools/call with no
// initialize (SDK 1.8.0 allowed it), and 0.1.1's speak {"id","tool",
// "inputs"} lines without jsonrpc.
TEST_CASE("seed 003: tools/call before initialize, and 0.1.1's stdin lines") {
  TempServices services;
  Session session(services.get());
  auto added = Call(session, R"({"jsonrpc":"2.0","id":1,"method":"tools/call",
      "params":{"name":"add_message","arguments":{"contextId":"a/b",
      "message":"Rotate the keys","role":"user","importance":"HIGH"}}})");
  CHECK_FALSE(session.initialized());
  bool is_error = true;
  REQUIRE(added->root["result"]["isError"].get(is_error) == simdjson::SUCCESS);
  CHECK_FALSE(is_error);
  CHECK(Str(added->root["result"]["structuredContent"]["importanceLevel"]) ==
        "high");

  // Answers that are not objects go as text only.
  auto pong = Call(session, R"({"jsonrpc":"2.0","id":2,"method":"tools/call",
      "params":{"name":"ping"}})");
  CHECK(Str(pong->root["result"]["content"].at(0)["text"]) == "pong");
  CHECK(pong->root["result"]["structuredContent"].error() ==
        simdjson::NO_SUCH_FIELD);

  auto line = Call(session, R"({"id":"r1","tool":"context_memory",
      "inputs":{"action":"retrieve","contextId":"a/b"}})");
  CHECK(Str(line->root["id"]) == "r1");
  CHECK(Str(line->root["outputs"]["message"]) == "Retrieved context for 'a/b'");
  CHECK(line->root["jsonrpc"].error() == simdjson::NO_SUCH_FIELD);

  auto other = Call(session, R"({"id":3,"tool":"track_references",
      "inputs":{}})");
  int64_t code = 0;
  REQUIRE(other->root["error"]["code"].get(code) == simdjson::SUCCESS);
  CHECK(code == 404);
  CHECK(Str(other->root["error"]["message"]) ==
        "Unknown tool: track_references");

  // A message with neither jsonrpc nor tool is still JSON-RPC's error.
  auto neither = Call(session, R"({"id":4,"method":"ping"})");
  CHECK(ErrorCode(*neither) == -32600);
}

TEST_CASE("tools/list has seed 003's ten tools, in the library's order") {
  std::vector<std::string_view> listed;
  for (const ToolSpec& tool : Tools()) listed.push_back(tool.name);
  std::vector<std::string_view> seed;
  for (const graph::SeedToolInfo& tool : graph::SeedTools()) {
    seed.push_back(tool.name);
  }
  REQUIRE(seed.size() == 10);
  REQUIRE(listed.size() >= seed.size());
  CHECK(std::vector<std::string_view>(listed.end() - 10, listed.end()) == seed);
}

}  // namespace
}  // namespace ctxkit::mcp

namespace ctxkit::mcp {
namespace {

TEST_CASE("library errors become seed 000 tool errors") {
  const ToolOutput invalid = ToolStatusError(
      Status(StatusCode::kInvalidArgument, "title: must not be empty"),
      "Conversation");
  CHECK(invalid.is_error);
  CHECK(invalid.json ==
        R"({"success":false,"error":"Validation error","details":)"
        R"([{"path":[],"message":"title: must not be empty"}]})");
  const ToolOutput missing = ToolStatusError(
      Status(StatusCode::kNotFound, "no conversation abc"), "Conversation");
  CHECK(missing.json ==
        R"({"success":false,"error":"Conversation not found","details":)"
        R"([{"message":"no conversation abc"}]})");
  const ToolOutput failed = ToolStatusError(
      Status(StatusCode::kResourceExhausted, "map full"), "Conversation");
  CHECK(failed.json ==
        R"({"success":false,"error":"Operation failed","details":)"
        R"([{"code":"RESOURCE_EXHAUSTED","message":"map full"}]})");
  CHECK(ToolValidationError("action", "Required").json ==
        R"({"success":false,"error":"Validation error","details":)"
        R"([{"path":["action"],"message":"Required"}]})");
}

}  // namespace
}  // namespace ctxkit::mcp
