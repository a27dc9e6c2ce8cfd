// The MCP tool adapters (programs/ctxkit/tools/*_tool.cc) called directly,
// as the session calls them, over a temporary store: the documents they
// return (fields and values, checked against the library's own figures),
// their errors in seed 000's form, progress and cancellation. Every
// argument object is checked against the tool's input_schema and every
// answer against its output_schema with the server's schema validator, so
// a schema that does not describe what the adapter does fails here.

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/store.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/host/json_text.h"
#include "programs/ctxkit/host/services.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/mcp/schema.h"
#include "programs/ctxkit/tools/adapters.h"
#include "simdjson.h"
#include "tests/host/host_fixture.h"

namespace ctxkit {
namespace {

using mcp::ToolSpec;
using testing::StoreContext;

// One call's answer, parsed.
struct Result {
  mcp::ToolOutput output;
  std::unique_ptr<simdjson::dom::parser> parser;
  simdjson::dom::element root;

  bool Has(std::string_view pointer) const {
    return root.at_pointer(pointer).error() == simdjson::SUCCESS;
  }
  std::string Str(std::string_view pointer) const {
    std::string_view value;
    const auto error = root.at_pointer(pointer).get_string().get(value);
    INFO(pointer, " in ", output.json);
    REQUIRE(error == simdjson::SUCCESS);
    return std::string(value);
  }
  int64_t Int(std::string_view pointer) const {
    int64_t value = 0;
    const auto error = root.at_pointer(pointer).get_int64().get(value);
    INFO(pointer, " in ", output.json);
    REQUIRE(error == simdjson::SUCCESS);
    return value;
  }
  double Num(std::string_view pointer) const {
    double value = 0;
    const auto error = root.at_pointer(pointer).get_double().get(value);
    INFO(pointer, " in ", output.json);
    REQUIRE(error == simdjson::SUCCESS);
    return value;
  }
  bool Bool(std::string_view pointer) const {
    bool value = false;
    const auto error = root.at_pointer(pointer).get_bool().get(value);
    INFO(pointer, " in ", output.json);
    REQUIRE(error == simdjson::SUCCESS);
    return value;
  }
  bool IsNull(std::string_view pointer) const {
    simdjson::dom::element value;
    return root.at_pointer(pointer).get(value) == simdjson::SUCCESS &&
           value.is_null();
  }
  size_t Size(std::string_view pointer) const {
    simdjson::dom::array value;
    const auto error = root.at_pointer(pointer).get_array().get(value);
    INFO(pointer, " in ", output.json);
    REQUIRE(error == simdjson::SUCCESS);
    return value.size();
  }
};

// Checks `value` against `schema_json` with the server's validator.
void CheckSchema(std::string_view schema_json, simdjson::dom::element value,
                 std::string_view what) {
  auto schema = mcp::Schema::Compile(schema_json);
  INFO(what);
  REQUIRE_MESSAGE(schema.ok(), schema.status().message());
  const auto problems = (*schema)->Validate(value);
  INFO(what, ": ", mcp::SchemaProblemsToJson(problems), " for ",
       simdjson::minify(value));
  CHECK(problems.empty());
}

// With CTXKIT_TOOLS_DUMP=FILE set, every answer is appended to FILE as a
// line {"tool":...,"output":...}, so that a JSON Schema implementation other
// than the server's (the MCP SDK's Ajv) can check it against the schemas.
void Dump(const ToolSpec& tool, const std::string& json) {
  const char* path = std::getenv("CTXKIT_TOOLS_DUMP");
  if (path == nullptr || json.empty()) return;
  std::ofstream out(path, std::ios::app);
  out << "{\"tool\":" << program::JsonQuote(tool.name) << ",\"output\":" << json
      << "}\n";
}

// Calls `tool` with `args_json` as the session would, after checking the
// arguments against its input schema; checks the answer against its output
// schema.
Result Call(const ToolSpec& tool, StoreContext& ctx, std::string_view args_json,
            bool args_valid = true) {
  simdjson::dom::parser args_parser;
  simdjson::dom::element args;
  REQUIRE(args_parser.parse(args_json).get(args) == simdjson::SUCCESS);
  simdjson::dom::object object;
  REQUIRE(args.get_object().get(object) == simdjson::SUCCESS);
  if (args_valid) CheckSchema(tool.input_schema, args, "input_schema");
  Result result;
  result.output = tool.handler(object, ctx);
  Dump(tool, result.output.json);
  if (result.output.json.empty()) return result;  // cancelled
  result.parser = std::make_unique<simdjson::dom::parser>();
  INFO(result.output.json);
  REQUIRE(result.parser->parse(result.output.json).get(result.root) ==
          simdjson::SUCCESS);
  CheckSchema(tool.output_schema, result.root, "output_schema");
  if (result.Has("/success")) {
    CHECK(result.Bool("/success") != result.output.is_error);
  } else {
    CHECK_FALSE(result.output.is_error);  // compact_chat: seed 001's document
  }
  return result;
}

// The seed's validation error for one path.
void CheckValidationError(const Result& r, std::string_view path,
                          std::string_view message = "Required") {
  INFO(r.output.json);
  CHECK(r.output.is_error);
  CHECK(r.Str("/error") == "Validation error");
  CHECK(r.Str("/details/0/path/0") == path);
  if (!message.empty()) CHECK(r.Str("/details/0/message") == message);
}

size_t Tokens(std::string_view model, std::string_view text) {
  auto count = CountTokens(model, text);
  REQUIRE(count.ok());
  return count->tokens;
}

TEST_CASE("every tool's schemas compile and name the tool") {
  for (const ToolSpec* tool :
       {&tools::ManageConversationTool(), &tools::CompressContextTool(),
        &tools::CompactChatTool(), &tools::CountTokensTool(),
        &tools::SmartCacheTool(), &tools::TrackReferencesTool(),
        &tools::OptimizeQueryTool()}) {
    INFO(tool->name);
    auto input = mcp::Schema::Compile(tool->input_schema);
    CHECK_MESSAGE(input.ok(), input.status().message());
    auto output = mcp::Schema::Compile(tool->output_schema);
    CHECK_MESSAGE(output.ok(), output.status().message());
    CHECK((tool->handler != nullptr));
    CHECK(!tool->description.empty());
  }
  CHECK(tools::ManageConversationTool().name == "manage_conversation");
  if (const char* path = std::getenv("CTXKIT_TOOLS_DUMP")) {
    std::ofstream out(std::string(path) + ".schemas");
    for (const ToolSpec* tool :
         {&tools::ManageConversationTool(), &tools::CompressContextTool(),
          &tools::CompactChatTool(), &tools::CountTokensTool(),
          &tools::SmartCacheTool(), &tools::TrackReferencesTool(),
          &tools::OptimizeQueryTool()}) {
      out << "{\"tool\":" << program::JsonQuote(tool->name)
          << ",\"input\":" << program::MinifyJson(tool->input_schema)
          << ",\"output\":" << program::MinifyJson(tool->output_schema)
          << "}\n";
    }
  }
  CHECK(tools::CompactChatTool().name == "compact_chat");
}

TEST_CASE("manage_conversation: create, add_message, get, list, delete") {
  StoreContext ctx;
  const ToolSpec& tool = tools::ManageConversationTool();

  Result created = Call(tool, ctx,
                        R"({"action":"create","title":"Code Review Session",
                            "metadata":{"project":"mcp-optimizer"}})");
  CHECK(created.Str("/message") ==
        "Conversation \"Code Review Session\" created successfully");
  const std::string id = created.Str("/conversation/id");
  CHECK(id.size() == 36);
  CHECK(created.Str("/conversation/model") == "claude-3-5-sonnet");
  CHECK(created.Int("/conversation/total_tokens") == 0);
  CHECK(created.Int("/conversation/message_count") == 0);
  CHECK(created.Str("/conversation/metadata/project") == "mcp-optimizer");

  const std::string content =
      "Please review this function: function add(a, b) { return a + b; }";
  Result added = Call(tool, ctx,
                      R"({"action":"add_message","conversation_id":")" + id +
                          R"(","role":"user","content":)" +
                          program::JsonQuote(content) + "}");
  const int64_t tokens =
      static_cast<int64_t>(Tokens("claude-3-5-sonnet", content));
  CHECK(added.Str("/message/role") == "user");
  CHECK(added.Int("/message/tokens") == tokens);
  CHECK_FALSE(added.Has("/message/content"));  // not echoed
  CHECK(added.Int("/conversation/total_tokens") == tokens);
  CHECK(added.Int("/conversation/message_count") == 1);

  Result batch =
      Call(tool, ctx,
           R"({"action":"add_message","conversation_id":")" + id +
               R"(","messages":[{"role":"assistant","content":"Looks fine."},
                             {"role":"user","content":"Thanks"}]})");
  CHECK(batch.Int("/added") == 2);
  CHECK(batch.Size("/messages") == 2);
  CHECK(batch.Int("/conversation/message_count") == 3);
  CHECK(batch.Int("/messages/1/seq") == 3);

  Result got =
      Call(tool, ctx, R"({"action":"get","conversation_id":")" + id + R"("})");
  CHECK(got.Size("/messages") == 3);
  CHECK(got.Str("/messages/0/content") == content);
  CHECK(got.Bool("/messages/0/is_compressed") == false);
  auto detail = ctx.services().conversations->Get(id);
  REQUIRE(detail.ok());
  CHECK(got.Int("/actual_tokens") ==
        static_cast<int64_t>(detail->actual_tokens));
  CHECK(got.Int("/actual_tokens") > got.Int("/conversation/total_tokens"));

  Result bare = Call(tool, ctx,
                     R"({"action":"get","conversation_id":")" + id +
                         R"(","include_messages":false})");
  CHECK_FALSE(bare.Has("/messages"));
  CHECK(bare.Int("/conversation/message_count") == 3);

  Call(tool, ctx, R"({"action":"create","title":"Second","model":"gpt-4o"})");
  Result page = Call(tool, ctx, R"({"action":"list","limit":1})");
  CHECK(page.Int("/total") == 2);
  CHECK(page.Int("/showing") == 1);
  CHECK(page.Str("/conversations/0/title") == "Second");
  const std::string cursor = page.Str("/next_cursor");
  Result next = Call(
      tool, ctx, R"({"action":"list","limit":1,"cursor":")" + cursor + R"("})");
  CHECK(next.Str("/conversations/0/id") == id);
  CHECK(next.IsNull("/next_cursor"));
  Result all = Call(tool, ctx, R"({"action":"list"})");
  CHECK(all.Int("/showing") == 2);

  Result deleted = Call(
      tool, ctx, R"({"action":"delete","conversation_id":")" + id + R"("})");
  CHECK(deleted.Str("/message") ==
        "Conversation \"Code Review Session\" deleted successfully");
  CHECK(deleted.Int("/messages_deleted") == 3);

  Result gone =
      Call(tool, ctx, R"({"action":"get","conversation_id":")" + id + R"("})");
  CHECK(gone.output.is_error);
  CHECK(gone.Str("/error") == "Conversation not found");
}

TEST_CASE("manage_conversation: what the schema cannot say") {
  StoreContext ctx;
  const ToolSpec& tool = tools::ManageConversationTool();
  CheckValidationError(Call(tool, ctx, R"({"action":"get"})"),
                       "conversation_id");
  CheckValidationError(Call(tool, ctx, R"({"action":"delete"})"),
                       "conversation_id");
  CheckValidationError(Call(tool, ctx, R"({"action":"create"})"), "title");
  const std::string id = Call(tool, ctx, R"({"action":"create","title":"t"})")
                             .Str("/conversation/id");
  const std::string prefix =
      R"({"action":"add_message","conversation_id":")" + id + "\"";
  CheckValidationError(Call(tool, ctx, prefix + R"(,"content":"x"})"), "role");
  CheckValidationError(Call(tool, ctx, prefix + R"(,"role":"user"})"),
                       "content");
  CheckValidationError(
      Call(
          tool, ctx,
          prefix +
              R"(,"role":"user","content":"x","messages":[{"role":"user","content":"y"}]})"),
      "role", "");
  CheckValidationError(
      Call(tool, ctx, prefix + R"(,"messages":[{"role":"user"}]})"),
      "messages[0].content");
  // A malformed tool call: the library's check, naming the field.
  Result bad_calls =
      Call(tool, ctx, prefix + R"(,"role":"assistant","tool_calls":[{}]})");
  CheckValidationError(bad_calls, "tool_calls",
                       "tool_calls[0].function is required");
  CHECK(bad_calls.Int("/details/0/path/1") == 0);
  CHECK(bad_calls.Str("/details/0/path/2") == "function");
  // Unknown and malformed ids.
  Result unknown = Call(
      tool, ctx,
      R"({"action":"delete","conversation_id":"00000000-0000-4000-8000-000000000000"})");
  CHECK(unknown.Str("/error") == "Conversation not found");
  Result malformed =
      Call(tool, ctx, R"({"action":"get","conversation_id":"nope"})");
  CHECK(malformed.Str("/error") == "Validation error");
}

TEST_CASE(
    "manage_conversation: a large batch reports progress and stops when "
    "cancelled") {
  StoreContext ctx;
  const ToolSpec& tool = tools::ManageConversationTool();
  const std::string id = Call(tool, ctx, R"({"action":"create","title":"big"})")
                             .Str("/conversation/id");
  std::string args = R"({"action":"add_message","conversation_id":")" + id +
                     R"(","messages":[)";
  for (int i = 0; i < 2500; ++i) {
    args += (i ? "," : "");
    args += R"({"role":")" + std::string(i % 2 ? "assistant" : "user") +
            R"(","content":"message )" + std::to_string(i) + "\"}";
  }
  args += "]}";
  Result added = Call(tool, ctx, args);
  CHECK(added.Int("/added") == 2500);
  CHECK(added.Int("/conversation/message_count") == 2500);
  REQUIRE(ctx.progress.size() == 3);
  CHECK(ctx.progress[0].first == 1000);
  CHECK(ctx.progress[1].first == 2000);
  CHECK(ctx.progress[2].first == 2500);
  CHECK(ctx.progress[2].second == 2500);

  ctx.cancelled = true;
  Result cancelled = Call(tool, ctx, args);
  CHECK(cancelled.output.json.empty());
  auto detail = ctx.services().conversations->Get(id, false);
  REQUIRE(detail.ok());
  CHECK(detail->conversation.message_count == 2500);  // nothing added
}

TEST_CASE("count_tokens: text, exact counts and the recommendation") {
  StoreContext ctx;
  const ToolSpec& tool = tools::CountTokensTool();
  const std::string text =
      "Hello, world! This is a test message for token counting.";
  Result r = Call(tool, ctx, R"({"input":)" + program::JsonQuote(text) + "}");
  const size_t tokens = Tokens("claude-3-5-sonnet", text);
  CHECK(r.Int("/tokens") == static_cast<int64_t>(tokens));
  CHECK(r.Str("/model") == "claude-3-5-sonnet");
  CHECK(r.Str("/family") == "claude");
  CHECK(r.Int("/limit") == 200000);
  CHECK(r.Num("/percentage") ==
        doctest::Approx(100.0 * static_cast<double>(tokens) / 200000)
            .epsilon(0.01));
  CHECK(r.Str("/recommendation/status") == "safe");
  CHECK(r.Str("/recommendation/action") ==
        "Token usage is healthy. No action needed.");
  CHECK(r.Bool("/recommendation/shouldCompress") == false);
  CHECK(r.Str("/input_type") == "text");
  CHECK(r.Str("/encoding") == "claude");
  CHECK_FALSE(r.Has("/breakdown"));

  Result quiet = Call(
      tool, ctx,
      R"({"input":"hello","include_recommendations":false,"model":"gpt-4o"})");
  CHECK_FALSE(quiet.Has("/recommendation"));
  CHECK(quiet.Str("/family") == "gpt");
  CHECK(quiet.Bool("/exact") == true);
  CHECK(quiet.Int("/tokens") ==
        static_cast<int64_t>(Tokens("gpt-4o", "hello")));

  // Near the window: "warning" from 75%, "critical" from 90%.
  auto info = ModelRegistry::Default().Find("gpt-4");
  REQUIRE(info.ok());
  const uint64_t window = info->context_window;
  REQUIRE(window > 0);
  std::string big;
  for (uint64_t i = 0; i < window * 8 / 10; ++i) big += " hello";
  Result warning =
      Call(tool, ctx, R"({"input":")" + big + R"(","model":"gpt-4"})");
  CHECK(warning.Int("/tokens") == static_cast<int64_t>(Tokens("gpt-4", big)));
  CHECK(warning.Str("/recommendation/status") == "warning");
  CHECK(warning.Bool("/recommendation/shouldCompress") == true);
  for (uint64_t i = 0; i < window * 15 / 100; ++i) big += " hello";
  Result critical =
      Call(tool, ctx, R"({"input":")" + big + R"(","model":"gpt-4"})");
  CHECK(critical.Str("/recommendation/status") == "critical");

  Result unknown =
      Call(tool, ctx, R"({"input":"hello there","model":"my-own-model"})");
  CHECK(unknown.Str("/family") == "generic");
  CHECK(unknown.IsNull("/limit"));
  CHECK(unknown.IsNull("/percentage"));
  CHECK(unknown.Str("/recommendation/status") == "unknown");
  CHECK(unknown.Str("/method") == "heuristic");
  CHECK(unknown.Bool("/exact") == false);
  CHECK(unknown.Int("/tokens") ==
        static_cast<int64_t>(EstimateTokens("hello there")));

  // Any other object is counted as its compact JSON text.
  Result object = Call(
      tool, ctx, R"({"input":{"a": [1, 2], "b": "text"},"model":"gpt-4o"})");
  CHECK(object.Str("/input_type") == "object");
  CHECK(object.Int("/tokens") ==
        static_cast<int64_t>(Tokens("gpt-4o", R"({"a":[1,2],"b":"text"})")));
}

TEST_CASE("count_tokens: messages and their breakdown") {
  StoreContext ctx;
  const ToolSpec& tool = tools::CountTokensTool();
  const std::string messages =
      R"([{"role":"user","content":"What is 2+2?"},{"role":"assistant","content":"2+2 equals 4."}])";
  Result r =
      Call(tool, ctx, R"({"input":)" + messages + R"(,"model":"gpt-4"})");
  auto count = CountMessagesForModel("gpt-4", messages);
  REQUIRE(count.ok());
  const int64_t content = static_cast<int64_t>(
      Tokens("gpt-4", "What is 2+2?") + Tokens("gpt-4", "2+2 equals 4."));
  CHECK(r.Int("/tokens") == static_cast<int64_t>(count->total));
  CHECK(r.Str("/family") == "gpt");
  CHECK(r.Str("/input_type") == "messages");
  CHECK(r.Int("/breakdown/content_tokens") == content);
  CHECK(r.Int("/breakdown/overhead_tokens") ==
        static_cast<int64_t>(count->total) - content);
  CHECK(r.Int("/breakdown/conversation_tokens") ==
        static_cast<int64_t>(count->reply_priming));
  CHECK(r.Int("/breakdown/message_count") == 2);
  CHECK(r.Bool("/exact") == true);

  // A chat request object with system and tools.
  Result request = Call(
      tool, ctx,
      R"({"input":{"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"hi there"}]}]},"model":"claude-3-5-sonnet"})");
  CHECK(request.Str("/input_type") == "chat_request");
  CHECK(request.Int("/breakdown/system_tokens") > 0);
  CHECK(request.Int("/breakdown/content_tokens") ==
        static_cast<int64_t>(Tokens("claude-3-5-sonnet", "hi there")));

  Result bad = Call(tool, ctx, R"({"input":[{"role":"user","content":5}]})");
  CheckValidationError(bad, "input", "");
  CHECK(bad.Str("/details/0/message").rfind("input[0].content", 0) == 0);
}

TEST_CASE(
    "count_tokens: progress over many messages, cancellation, conversation "
    "context") {
  StoreContext ctx;
  const ToolSpec& tool = tools::CountTokensTool();
  std::string messages = "[";
  for (int i = 0; i < 2500; ++i) {
    messages += (i ? "," : "");
    messages += R"({"role":"user","content":"message number )" +
                std::to_string(i) + "\"}";
  }
  messages += "]";
  Result r =
      Call(tool, ctx, R"({"input":)" + messages + R"(,"model":"gpt-4o"})");
  auto count = CountMessagesForModel("gpt-4o", messages);
  REQUIRE(count.ok());
  CHECK(r.Int("/tokens") == static_cast<int64_t>(count->total));
  CHECK(r.Int("/breakdown/message_count") == 2500);
  REQUIRE(ctx.progress.size() == 2);
  CHECK(ctx.progress[0] == std::make_pair(1000.0, 2500.0));
  CHECK(ctx.progress[1] == std::make_pair(2000.0, 2500.0));

  ctx.cancelled = true;
  CHECK(Call(tool, ctx, R"({"input":)" + messages + "}").output.json.empty());
  ctx.cancelled = false;

  const std::string id =
      Call(tools::ManageConversationTool(), ctx,
           R"({"action":"create","title":"c","model":"gpt-4o"})")
          .Str("/conversation/id");
  Call(tools::ManageConversationTool(), ctx,
       R"({"action":"add_message","conversation_id":")" + id +
           R"(","role":"user","content":"an earlier question"})");
  auto detail = ctx.services().conversations->Get(id, false);
  REQUIRE(detail.ok());
  Result with =
      Call(tool, ctx, R"({"input":"hello","conversation_id":")" + id + R"("})");
  CHECK(with.Str("/model") == "gpt-4o");  // the conversation's
  CHECK(with.Int("/conversation/tokens") ==
        static_cast<int64_t>(detail->actual_tokens));
  CHECK(with.Int("/conversation/combined_tokens") ==
        with.Int("/tokens") + static_cast<int64_t>(detail->actual_tokens));
  Result missing = Call(
      tool, ctx,
      R"({"input":"x","conversation_id":"00000000-0000-4000-8000-000000000000"})");
  CHECK(missing.Str("/error") == "Conversation not found");
}

TEST_CASE("smart_cache: store, retrieve, check, stats, clear") {
  StoreContext ctx;
  const ToolSpec& tool = tools::SmartCacheTool();
  const std::string content =
      "You are a helpful coding assistant specialized in TypeScript and React.";
  Result stored = Call(tool, ctx,
                       R"({"action":"store","content":")" + content +
                           R"(","prefix":"system-prompts","ttl":3600000})");
  const std::string key = stored.Str("/key");
  CHECK(key.rfind("system-prompts:", 0) == 0);
  CHECK(stored.Int("/tokens") ==
        static_cast<int64_t>(Tokens("claude-3-5-sonnet", content)));
  CHECK(stored.Int("/expires_at") == stored.Int("/created_at") + 3600000);
  CHECK(stored.Str("/message") == "Content cached successfully");
  CHECK(stored.Bool("/already_cached") == false);
  Result again = Call(tool, ctx,
                      R"({"action":"store","content":")" + content +
                          R"(","prefix":"system-prompts"})");
  CHECK(again.Str("/key") == key);
  CHECK(again.Bool("/already_cached") == true);
  CHECK(again.IsNull("/expires_at"));

  Result got =
      Call(tool, ctx, R"({"action":"retrieve","key":")" + key + R"("})");
  CHECK(got.Str("/content") == content);
  CHECK(got.Int("/hit_count") == 1);
  CHECK(got.Str("/model") == "claude-3-5-sonnet");

  Result hit =
      Call(tool, ctx, R"({"action":"check","content":")" + content + R"("})");
  CHECK(hit.Bool("/exists") == true);
  CHECK(hit.Str("/key") == key);
  CHECK(hit.Int("/tokens_saved") == stored.Int("/tokens"));
  CHECK(hit.Str("/message") == "Content already cached");
  Result miss =
      Call(tool, ctx, R"({"action":"check","content":"something else"})");
  CHECK(miss.Bool("/exists") == false);
  CHECK(miss.Str("/message") == "Content not found in cache");

  // A key of the caller's own.
  Result own =
      Call(tool, ctx,
           R"({"action":"store","key":"greeting","content":"Hello there"})");
  CHECK(own.Str("/lookup_key") == "greeting");
  Result by_own = Call(tool, ctx, R"({"action":"retrieve","key":"greeting"})");
  CHECK(by_own.Str("/content") == "Hello there");
  CHECK(by_own.Str("/key") == own.Str("/key"));

  Result absent = Call(
      tool, ctx,
      R"({"action":"retrieve","key":"default:00000000000000000000000000000000"})");
  CHECK(absent.Str("/error") == "Cache entry not found");
  CHECK(Call(tool, ctx, R"({"action":"retrieve","key":"nothing-stored"})")
            .Str("/error") == "Cache entry not found");
  CheckValidationError(Call(tool, ctx, R"({"action":"retrieve"})"), "key");
  CheckValidationError(Call(tool, ctx, R"({"action":"store"})"), "content");
  CheckValidationError(Call(tool, ctx, R"({"action":"check"})"), "content");
  CheckValidationError(
      Call(tool, ctx,
           R"({"action":"store","content":"x","prefix":"bad prefix"})"),
      "prefix", "");

  Result stats = Call(tool, ctx, R"({"action":"stats"})");
  CHECK(stats.Int("/stats/total_entries") == 2);
  CHECK(stats.Int("/stats/total_hits") == 3);
  CHECK(stats.Int("/report/overview/total_entries") == 2);

  Result cleared =
      Call(tool, ctx, R"({"action":"clear","prefix":"system-prompts"})");
  CHECK(cleared.Int("/cleared") == 1);
  CHECK(cleared.Str("/message") ==
        "Cleared 1 cache entry with prefix 'system-prompts'");
  Result rest = Call(tool, ctx, R"({"action":"clear"})");
  CHECK(rest.Int("/cleared") == 1);
  CHECK(rest.IsNull("/prefix"));
  CHECK(rest.Str("/message") == "Cleared 1 cache entry");
}

TEST_CASE("track_references: add, get, list, search, delete") {
  StoreContext ctx;
  const ToolSpec& tool = tools::TrackReferencesTool();
  const std::string conversation = Call(tools::ManageConversationTool(), ctx,
                                        R"({"action":"create","title":"c"})")
                                       .Str("/conversation/id");
  const std::string content =
      "function countTokens(text: string): number { /* ... */ }";
  CheckValidationError(
      Call(tool, ctx, R"({"action":"add","title":"t","content":"c"})"),
      "conversation_id");
  Result added = Call(
      tool, ctx,
      R"({"action":"add","conversation_id":")" + conversation +
          R"(","type":"code","title":"Token Counter Implementation","content":")" +
          content + R"(","metadata":{"language":"typescript"}})");
  const std::string id = added.Str("/reference/id");
  CHECK(added.Str("/reference/conversation_id") == conversation);
  CHECK(added.Str("/reference/type") == "code");
  CHECK(added.Int("/reference/tokens") ==
        static_cast<int64_t>(Tokens("claude-3-5-sonnet", content)));
  CHECK(added.Str("/message") == "Reference added successfully");
  CHECK_FALSE(added.Has("/reference/content"));

  Result note =
      Call(tool, ctx,
           R"({"action":"add","conversation_id":")" + conversation +
               R"(","title":"Plain","content":"nothing relevant here"})");
  CHECK(note.Str("/reference/type") == "note");

  Result got =
      Call(tool, ctx, R"({"action":"get","reference_id":")" + id + R"("})");
  CHECK(got.Str("/reference/content") == content);
  CHECK(got.Str("/reference/metadata/language") == "typescript");

  Result list =
      Call(tool, ctx,
           R"({"action":"list","conversation_id":")" + conversation + R"("})");
  CHECK(list.Int("/total") == 2);
  CHECK(list.Int("/statistics/total_references") == 2);
  CHECK(list.Str("/references/0/title") == "Token Counter Implementation");

  Result found =
      Call(tool, ctx, R"({"action":"search","search_query":"token counter"})");
  CHECK(found.Int("/total") == 1);
  CHECK(found.Int("/total_matches") == 1);
  CHECK(found.Str("/results/0/id") == id);
  CHECK(found.Num("/results/0/relevance") > 0);
  CHECK(found.Num("/results/0/relevance") <= 1);
  CheckValidationError(Call(tool, ctx, R"({"action":"search"})"),
                       "search_query");
  CheckValidationError(
      Call(tool, ctx, R"({"action":"search","search_query":"!!!"})"),
      "search_query", "");

  Result deleted =
      Call(tool, ctx, R"({"action":"delete","reference_id":")" + id + R"("})");
  CHECK(deleted.Str("/message") == "Reference deleted successfully");
  CHECK(Call(tool, ctx, R"({"action":"get","reference_id":")" + id + R"("})")
            .Str("/error") == "Reference not found");
  CheckValidationError(Call(tool, ctx, R"({"action":"get"})"), "reference_id");
}

TEST_CASE("optimize_query: the seed's example") {
  StoreContext ctx;
  const ToolSpec& tool = tools::OptimizeQueryTool();
  const std::string query =
      "I was just wondering if you could maybe help me understand how to "
      "really optimize my prompts for better token usage, basically.";
  Result r = Call(tool, ctx,
                  R"({"query":")" + query + R"(","optimization_goal":"both"})");
  auto expected = ctx.services().optimizer->Optimize(query);
  REQUIRE(expected.ok());
  CHECK(r.Str("/original/query") == query);
  CHECK(r.Int("/original/tokens") ==
        static_cast<int64_t>(expected->original_tokens));
  CHECK(r.Str("/optimized/query") == expected->optimized_query);
  CHECK(r.Int("/optimized/tokens") < r.Int("/original/tokens"));
  CHECK(r.Str("/optimized/query").find("basically") == std::string::npos);
  CHECK(r.Int("/analysis/tokens_saved") == expected->tokens_saved);
  CHECK(r.Str("/model") == "claude-3-5-sonnet");

  Result capped =
      Call(tool, ctx,
           R"({"query":")" + query + R"(","max_tokens":3,"model":"gpt-4o"})");
  CHECK(capped.Int("/optimized/tokens") <= 3);
  CHECK(capped.Bool("/optimized/truncated") == true);
}

// `n` messages, user and assistant in turn, "Step i: <text>", as a JSON
// array.
std::string Steps(int n, std::string_view text) {
  std::string messages = "[";
  for (int i = 0; i < n; ++i) {
    messages += (i ? "," : "");
    messages += R"({"role":")" + std::string(i % 2 ? "assistant" : "user") +
                R"(","content":"Step )" + std::to_string(i) + ": " +
                std::string(text) + R"("})";
  }
  return messages + "]";
}

TEST_CASE("compress_context: a stored conversation, saved as a view") {
  StoreContext ctx;
  const ToolSpec& tool = tools::CompressContextTool();
  const ToolSpec& conv = tools::ManageConversationTool();
  const std::string id =
      Call(conv, ctx, R"({"action":"create","title":"long","model":"gpt-4o"})")
          .Str("/conversation/id");
  CheckValidationError(
      Call(tool, ctx, R"({"conversation_id":")" + id + R"("})"),
      "conversation_id", "");  // no messages yet
  const std::string messages =
      Steps(30,
            "we looked at the users table and the orders table again, and "
            "discussed how the caching layer keeps results for an hour.");
  Call(conv, ctx,
       R"({"action":"add_message","conversation_id":")" + id +
           R"(","messages":)" + messages + "}");

  Result r = Call(tool, ctx, R"({"conversation_id":")" + id + R"("})");
  CHECK(r.Int("/original_message_count") == 30);
  CHECK(r.Str("/strategy") == "smart");
  CHECK(r.Int("/compressed_tokens") <= r.Int("/original_tokens") / 2 + 1);
  CHECK(r.Int("/tokens_saved") ==
        r.Int("/original_tokens") - r.Int("/compressed_tokens"));
  CHECK(r.Size("/compressed_messages") ==
        static_cast<size_t>(r.Int("/compressed_message_count")));
  CHECK(r.Str("/conversation_id") == id);
  CHECK(r.Int("/view_version") == 1);
  auto view = ctx.services().conversations->GetCompactedView(id);
  REQUIRE(view.ok());
  CHECK(view->version == 1);
  CHECK(view->tokens == static_cast<uint64_t>(r.Int("/compressed_tokens")));

  Result old = Call(
      tool, ctx,
      R"({"conversation_id":")" + id +
          R"(","strategy":"remove_old","preserve_recent":3,"target_ratio":0.3})");
  CHECK(old.Str("/strategy") == "remove_old");
  CHECK(old.Int("/view_version") == 2);
  // The stored messages are untouched.
  auto detail = ctx.services().conversations->Get(id, false);
  REQUIRE(detail.ok());
  CHECK(detail->conversation.message_count == 30);

  CHECK(Call(tool, ctx,
             R"({"conversation_id":"00000000-0000-4000-8000-000000000000"})")
            .Str("/error") == "Conversation not found");
  ctx.cancelled = true;
  CHECK(Call(tool, ctx, R"({"conversation_id":")" + id + R"("})")
            .output.json.empty());
}

TEST_CASE("compact_chat: seed 001's request and response") {
  StoreContext ctx;
  const ToolSpec& tool = tools::CompactChatTool();
  std::string messages = "[";
  for (int i = 0; i < 20; ++i) {
    messages += (i ? "," : "");
    messages += R"({"role":")" + std::string(i % 2 ? "assistant" : "user") +
                R"(","content":"Show me the users table, part )" +
                std::to_string(i) +
                R"(, with every column and the indexes on it."})";
  }
  messages += "]";
  Result r = Call(
      tool, ctx,
      R"({"messages":)" + messages +
          R"(,"max_tokens":200,"recent_window":4,"keep_anchors":true,"options":{"token_counter_type":"openai"}})");
  CHECK_FALSE(r.Has("/success"));
  CHECK(r.Int("/compaction_info/original_count") == 20);
  CHECK(r.Int("/token_estimate") <= 200);
  CHECK(r.Int("/compaction_info/compacted_count") ==
        static_cast<int64_t>(r.Size("/messages")));
  CHECK(r.Has("/summary/description"));

  // The library's own response for the same request.
  auto expected = ctx.services().compactor->CompactJson(
      R"({"messages":)" + messages +
      R"(,"max_tokens":200,"recent_window":4,"keep_anchors":true,"options":{"token_counter_type":"openai"}})");
  REQUIRE(expected.ok());
  CHECK(r.output.json == *expected);

  Result empty = Call(tool, ctx, R"({"messages":[]})", /*args_valid=*/false);
  CHECK(empty.output.is_error);
  CHECK(empty.Str("/error") == "Validation error");
}

TEST_CASE(
    "compact_chat, compress_context and count_tokens stop inside the library "
    "once the request is cancelled") {
  // Large enough that the library asks many times: a cancellation that
  // comes after the adapter's own check still stops the work.
  StoreContext ctx;
  const std::string messages =
      Steps(600, "the orders table, its indexes and the slow query again.");
  const std::string id = Call(tools::ManageConversationTool(), ctx,
                              R"({"action":"create","title":"t"})")
                             .Str("/conversation/id");
  Call(tools::ManageConversationTool(), ctx,
       R"({"action":"add_message","conversation_id":")" + id +
           R"(","messages":)" + messages + "}");
  struct Case {
    const ToolSpec* tool;
    std::string args;
  };
  const Case cases[] = {
      {&tools::CompactChatTool(),
       R"({"messages":)" + messages + R"(,"max_tokens":500})"},
      {&tools::CompressContextTool(),
       R"({"conversation_id":")" + id + R"(","max_tokens":500})"},
      {&tools::CountTokensTool(),
       R"({"input":)" + messages + R"(,"model":"gpt-4o"})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.tool->name);
    ctx.cancel_at = 0;
    ctx.asked = 0;
    Result whole = Call(*c.tool, ctx, c.args);
    CHECK_FALSE(whole.output.json.empty());
    const size_t asked = ctx.asked;
    CHECK(asked > 3);  // the library asked too, not only the adapter
    // Cancelled at the third question, inside the library: no answer, and
    // not one question more.
    ctx.cancel_at = 3;
    ctx.asked = 0;
    Result cancelled = Call(*c.tool, ctx, c.args);
    CHECK(cancelled.output.json.empty());
    CHECK(ctx.asked == 3);
  }
  // The cancelled compress_context saved no view: one whole run, one view.
  auto views = ctx.services().conversations->ListCompactedViews(id);
  REQUIRE(views.ok());
  CHECK(views->size() == 1);
}

}  // namespace
}  // namespace ctxkit
