// ValidateChatHistory, ChatFormatName and ParseChatFormat: valid histories
// of each format pass; each violation is rejected naming its message.

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "ctxkit/compactor.h"
#include "ctxkit/status.h"

namespace ctxkit {
namespace {

void CheckValid(std::string_view json, ChatFormat format = ChatFormat::kAuto) {
  Status status = ValidateChatHistory(json, format);
  INFO(json);
  CHECK_MESSAGE(status.ok(), status.ToString());
}

std::string Violation(std::string_view json,
                      ChatFormat format = ChatFormat::kAuto) {
  Status status = ValidateChatHistory(json, format);
  INFO(json);
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  return status.message();
}

constexpr std::string_view kOpenAI =
    R"({"messages":[{"role":"system","content":"You are helpful."},)"
    R"({"role":"developer","content":"Be brief."},)"
    R"({"role":"user","content":[{"type":"text","text":"What is in a.py?"},)"
    R"({"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}}]},)"
    R"({"role":"assistant","content":null,"tool_calls":[)"
    R"({"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"p\":\"a.py\"}"}},)"
    R"({"id":"call_2","type":"function","function":{"name":"stat","arguments":"{}"}}]},)"
    R"({"role":"tool","tool_call_id":"call_2","content":"4 KB"},)"
    R"({"role":"tool","tool_call_id":"call_1","content":"print 1"},)"
    R"({"role":"assistant","content":"It prints 1."},)"
    R"({"role":"user","content":"Thanks","name":"bob"},)"
    R"({"role":"system","content":"Mid-conversation system notes are fine in OpenAI."},)"
    R"({"role":"assistant","content":[{"type":"refusal","refusal":"No."}]}],"model":"gpt-4o"})";

constexpr std::string_view kAnthropic =
    R"([{"role":"system","content":"You are an agent."},)"
    R"({"role":"user","content":[{"type":"text","text":"Fix the test","cache_control":{"type":"ephemeral"}}]},)"
    R"({"role":"assistant","content":[{"type":"thinking","thinking":"Let me run it.","signature":"sig"},)"
    R"({"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"pytest"}},)"
    R"({"type":"tool_use","id":"toolu_2","name":"view","input":{"path":"a.py"}}]},)"
    R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"1 failed"},)"
    R"({"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"def f(): pass"}]},)"
    R"({"type":"text","text":"Go on."}]},)"
    R"({"role":"assistant","content":"Fixed."},)"
    R"({"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},)"
    R"({"role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"bash","input":{}}]}])";

constexpr std::string_view kPlain =
    R"([{"role":"system","content":"s"},{"role":"user","content":"hi"},)"
    R"({"role":"assistant","content":"hello"},{"role":"user","content":"again"},)"
    R"({"role":"user","content":"and again"}])";

TEST_CASE("valid histories of each format") {
  CheckValid(kOpenAI);
  CheckValid(kOpenAI, ChatFormat::kOpenAI);
  CheckValid(kAnthropic);
  CheckValid(kAnthropic, ChatFormat::kAnthropic);
  CheckValid(kPlain);
  CheckValid(kPlain, ChatFormat::kPlain);
  CheckValid(kPlain, ChatFormat::kOpenAI);
  // A pending OpenAI call in the last message.
  CheckValid(
      R"([{"role":"user","content":"u"},{"role":"assistant","content":null,)"
      R"("tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}])");
  // Anthropic: only system messages, or a leading developer message.
  CheckValid(R"([{"role":"system","content":"s"}])", ChatFormat::kAnthropic);
  CheckValid(
      R"([{"role":"developer","content":"d"},{"role":"user","content":"u"}])",
      ChatFormat::kAnthropic);
}

TEST_CASE("bad documents") {
  CHECK(Violation("[]") == "messages must not be empty");
  CHECK(Violation("\"x\"") ==
        "chat history must be an array of messages or an object with "
        "\"messages\" (got string)");
  CHECK(Violation(R"({"messages":3})") ==
        "messages must be an array (got number)");
  CHECK(Violation("[").rfind("chat history is not valid JSON", 0) == 0);
  CHECK(
      Violation(
          R"([{"role":"user","content":"a"},{"role":"robot","content":"b"}])") ==
      "messages[1].role must be one of system, developer, user, assistant, "
      "tool (got \"robot\")");
  CHECK(Violation(R"([{"role":"user","content":1.5}])") ==
        "messages[0].content must be a string, an array of content blocks or "
        "null (got number)");
}

TEST_CASE("openai structure") {
  // A tool message that does not directly follow its call message.
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"f"}}]},)"
          R"({"role":"tool","tool_call_id":"c","content":"r"},)"
          R"({"role":"assistant","content":"a"},)"
          R"({"role":"tool","tool_call_id":"c","content":"again"}])") ==
      "messages[4].tool_call_id: no tool call with id \"c\" precedes it");
  // A user message between the call and its result.
  CHECK(
      Violation(
          R"([{"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"f"}}]},)"
          R"({"role":"user","content":"u"},)"
          R"({"role":"tool","tool_call_id":"c","content":"r"}])") ==
      "messages[0].tool_calls[0]: tool call \"c\" has no result (only the "
      "last message may hold unanswered calls)");
  // An unanswered call that is not in the last message.
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"f"}}]},)"
          R"({"role":"assistant","content":"a"}])") ==
      "messages[1].tool_calls[0]: tool call \"c\" has no result (only the "
      "last message may hold unanswered calls)");
  // Anthropic blocks in an explicitly OpenAI history.
  CHECK(
      Violation(
          R"([{"role":"user","content":[{"type":"thinking","thinking":"x"}]}])",
          ChatFormat::kOpenAI) ==
      "messages[0].content[0].type \"thinking\" is an Anthropic block, not "
      "valid in the openai format");
}

TEST_CASE("anthropic structure") {
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},{"role":"assistant","content":"a"},)"
          R"({"role":"system","content":"late"}])",
          ChatFormat::kAnthropic) ==
      "messages[2].role: system messages must come before all others in the "
      "anthropic format (messages[1] is assistant)");
  CHECK(
      Violation(
          R"([{"role":"system","content":"s"},{"role":"assistant","content":"a"},)"
          R"({"role":"user","content":"u"}])",
          ChatFormat::kAnthropic) ==
      "messages[1].role must be user: the first non-system message of an "
      "anthropic history (got \"assistant\")");
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},{"role":"assistant","content":"a"},)"
          R"({"role":"assistant","content":"b"}])",
          ChatFormat::kAnthropic) ==
      "messages[2].role: roles must alternate in the anthropic format "
      "(messages[1] is also assistant)");
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},{"role":"user","content":[{"type":"text","text":"v","cache_control":{"type":"ephemeral"}}]}])") ==
      "messages[1].role: roles must alternate in the anthropic format "
      "(messages[0] is also user)");
  // tool_result blocks after other content.
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},)"
          R"({"type":"tool_use","id":"t2","name":"g","input":{}}]},)"
          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"},)"
          R"({"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"t2"}]}])") ==
      "messages[2].content[2]: tool_result blocks must come before every "
      "other block of their message (content[1] is not one)");
  // A result for a call of an older assistant message.
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},)"
          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]},)"
          R"({"role":"assistant","content":"ok"},)"
          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}])") ==
      "messages[4].content[0].tool_use_id: no tool call with id \"t1\" "
      "precedes it");
  // Results split over two user messages break alternation.
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},)"
          R"({"type":"tool_use","id":"t2","name":"g","input":{}}]},)"
          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]},)"
          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t2"}]}])") ==
      "messages[3].role: roles must alternate in the anthropic format "
      "(messages[2] is also user)");
  // An unanswered tool_use not in the last message.
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},)"
          R"({"role":"user","content":"no result"}])") ==
      "messages[1].content[1]: tool call \"t1\" has no result (only the "
      "last message may hold unanswered calls)");
  // OpenAI features in an explicitly Anthropic history.
  CHECK(
      Violation(
          R"([{"role":"user","content":"u"},{"role":"tool","tool_call_id":"c","content":"r"}])",
          ChatFormat::kAnthropic) ==
      "messages[1].role \"tool\" is not valid in the anthropic format (tool "
      "results are tool_result blocks in a user message)");
}

TEST_CASE("plain structure") {
  CHECK(Violation(R"([{"role":"user","content":["a"]}])", ChatFormat::kPlain) ==
        "messages[0].content must be a string in the plain format (got array)");
}

TEST_CASE("ChatFormatName and ParseChatFormat") {
  for (ChatFormat format : {ChatFormat::kAuto, ChatFormat::kOpenAI,
                            ChatFormat::kAnthropic, ChatFormat::kPlain}) {
    StatusOr<ChatFormat> parsed = ParseChatFormat(ChatFormatName(format));
    REQUIRE(parsed.ok());
    CHECK(*parsed == format);
  }
  CHECK(std::string_view(ChatFormatName(ChatFormat::kOpenAI)) == "openai");
  StatusOr<ChatFormat> bad = ParseChatFormat("OpenAI");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(
      bad.status().message() ==
      "format must be one of auto, openai, anthropic, plain (got \"OpenAI\")");
}

}  // namespace
}  // namespace ctxkit
