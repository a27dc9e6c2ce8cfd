// ParseChatHistory: format detection, the input checks and their messages,
// units of tool calls and results, text extraction, and the message
// rewrites (PrependText, LargestText, ReplaceLargestText).

#include "lib/compactor/chat_history.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "ctxkit/compactor.h"

namespace ctxkit::internal {
namespace {

using Units = std::vector<std::pair<size_t, size_t>>;

ChatHistory MustParse(std::string_view json,
                      ChatFormat format = ChatFormat::kAuto) {
  absl::StatusOr<ChatHistory> history = ParseChatHistoryJson(json, format);
  INFO(json);
  REQUIRE_MESSAGE(history.ok(), history.status().ToString());
  return *std::move(history);
}

// The INVALID_ARGUMENT message of parsing `json`.
std::string ParseError(std::string_view json,
                       ChatFormat format = ChatFormat::kAuto) {
  absl::StatusOr<ChatHistory> history = ParseChatHistoryJson(json, format);
  INFO(json);
  REQUIRE_FALSE(history.ok());
  CHECK(history.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(history.status().message());
}

TEST_CASE("format detection") {
  SUBCASE("string contents only: plain") {
    ChatHistory h = MustParse(
        R"([{"role":"system","content":"s"},{"role":"user","content":"hi"},)"
        R"({"role":"assistant","content":"hello","created_at":3}])");
    CHECK(h.format == ChatFormat::kPlain);
    REQUIRE(h.messages.size() == 3);
    CHECK(h.messages[2].json ==
          R"({"role":"assistant","content":"hello","created_at":3})");
  }
  SUBCASE("text parts: openai") {
    CHECK(
        MustParse(R"([{"role":"user","content":[{"type":"text","text":"a"}]}])")
            .format == ChatFormat::kOpenAI);
  }
  SUBCASE("null or absent content: openai") {
    CHECK(MustParse(R"([{"role":"user","content":null}])").format ==
          ChatFormat::kOpenAI);
    CHECK(MustParse(R"([{"role":"user"}])").format == ChatFormat::kOpenAI);
  }
  SUBCASE("openai-only features") {
    const char* cases[] = {
        R"([{"role":"user","content":"a","name":"bob"}])",
        R"([{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}])",
        R"([{"role":"assistant","content":"x","function_call":{"name":"f","arguments":"{}"}}])",
        R"([{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x"}}]}])",
        R"([{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"","format":"wav"}}]}])",
    };
    for (const char* json : cases) {
      CHECK_MESSAGE(MustParse(json).format == ChatFormat::kOpenAI, json);
    }
  }
  SUBCASE("anthropic-only features") {
    const char* cases[] = {
        R"([{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}])",
        R"([{"role":"user","content":[{"type":"thinking","thinking":"hm","signature":"x"}]}])",
        R"([{"role":"user","content":[{"type":"redacted_thinking","data":"x"}]}])",
        R"([{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":""}}]}])",
        R"([{"role":"user","content":[{"type":"document","source":{"type":"text","data":"x"}}]}])",
        R"([{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}])",
        R"([{"role":"user","content":"a","cache_control":{"type":"ephemeral"}}])",
    };
    for (const char* json : cases) {
      CHECK_MESSAGE(MustParse(json).format == ChatFormat::kAnthropic, json);
    }
  }
  SUBCASE("an object with messages") {
    ChatHistory h = MustParse(
        R"({"model":"x","messages":[{"role":"user","content":"hi"}]})");
    CHECK(h.format == ChatFormat::kPlain);
    CHECK(h.messages.size() == 1);
  }
  SUBCASE("explicit format is kept") {
    CHECK(MustParse(R"([{"role":"user","content":"hi"}])", ChatFormat::kOpenAI)
              .format == ChatFormat::kOpenAI);
    CHECK(
        MustParse(R"([{"role":"user","content":"hi"}])", ChatFormat::kAnthropic)
            .format == ChatFormat::kAnthropic);
  }
}

TEST_CASE("input errors name the message and field") {
  CHECK(ParseError("[]") == "messages must not be empty");
  CHECK(ParseError(R"({"messages":[]})") == "messages must not be empty");
  CHECK(ParseError("[1]") == "messages[0] must be an object (got number)");
  CHECK(ParseError("{}") == "messages is required");
  CHECK(ParseError("3") ==
        "chat history must be an array of messages or an object with "
        "\"messages\" (got number)");
  CHECK(ParseError("[{").rfind("chat history is not valid JSON", 0) == 0);
  CHECK(ParseError(R"([{"content":"x"}])") == "messages[0].role is required");
  // A misspelled member is never silently kept or ignored.
  CHECK(ParseError(
            R"([{"role":"assistant","content":null,"tool_calls":[{"id":"c1",)"
            R"("type":"function","function":{"name":"ls","arguments":"{}"}}]},)"
            R"({"role":"tool","tool_call_idd":"c1","content":"a.txt"}])") ==
        "messages[1]: unknown key 'tool_call_idd'; did you mean "
        "'tool_call_id'?");
  CHECK(ParseError(R"([{"role":7,"content":"x"}])") ==
        "messages[0].role must be a string (got number)");
  CHECK(ParseError(
            R"([{"role":"user","content":"a"},{"role":"user","content":"b"},)"
            R"({"role":"robot","content":"x"}])") ==
        "messages[2].role must be one of system, developer, user, assistant, "
        "tool (got \"robot\")");
  CHECK(
      ParseError(absl::StrFormat(R"([{"role":"%s\u00e9%s"}])",
                                 std::string(79, 'r'), std::string(50, 'x'))) ==
      absl::StrFormat(
          "messages[0].role must be one of system, developer, user, "
          "assistant, tool (got \"%s...\")",
          std::string(79, 'r')));
  CHECK(ParseError(
            R"([{"role":"user","content":"a"},{"role":"user","content":"b"},)"
            R"({"role":"user","content":"c"},{"role":"user","content":7}])") ==
        "messages[3].content must be a string, an array of content blocks or "
        "null (got number)");
  CHECK(
      ParseError(R"([{"role":"user","content":{}}])", ChatFormat::kAnthropic) ==
      "messages[0].content must be a string or an array of content blocks "
      "(got object)");
  CHECK(ParseError(R"([{"role":"user","content":null}])",
                   ChatFormat::kAnthropic) ==
        "messages[0].content must be a string or an array of content blocks "
        "(got null)");
  CHECK(ParseError(R"([{"role":"user"}])", ChatFormat::kAnthropic) ==
        "messages[0].content is required");
  CHECK(ParseError(R"([{"role":"user","content":["x"]}])") ==
        "messages[0].content[0] must be an object (got string)");
  CHECK(ParseError(R"([{"role":"user","content":[{"text":"x"}]}])") ==
        "messages[0].content[0].type is required");
  CHECK(ParseError(R"([{"role":"user","content":[{"type":1}]}])") ==
        "messages[0].content[0].type must be a string (got number)");
  CHECK(
      ParseError(R"([{"role":"user","content":[{"type":"text","text":5}]}])") ==
      "messages[0].content[0].text must be a string (got number)");
  CHECK(ParseError(R"([{"role":"user","content":[{"type":"text"}]}])") ==
        "messages[0].content[0].text is required");
  CHECK(ParseError(R"([{"role":"user","content":"a","name":3}])") ==
        "messages[0].name must be a string (got number)");
  CHECK(ParseError(R"([{"role":"tool","content":"a"}])") ==
        "messages[0].tool_call_id is required");
  CHECK(ParseError(R"([{"role":"tool","content":"a","tool_call_id":1}])") ==
        "messages[0].tool_call_id must be a string (got number)");
  CHECK(ParseError(R"([{"role":"user","content":"a","tool_calls":[]}])") ==
        "messages[0].tool_calls: only assistant messages make tool calls");
  CHECK(ParseError(R"([{"role":"assistant","content":"a","tool_calls":{}}])") ==
        "messages[0].tool_calls must be an array or null (got object)");
  CHECK(
      ParseError(
          R"([{"role":"assistant","tool_calls":[{"function":{"name":"f"}}]}])") ==
      "messages[0].tool_calls[0].id is required");
  CHECK(ParseError(R"([{"role":"assistant","tool_calls":[{"id":"c"}]}])") ==
        "messages[0].tool_calls[0].function is required");
  CHECK(
      ParseError(
          R"([{"role":"assistant","tool_calls":[{"id":"c","function":{}}]}])") ==
      "messages[0].tool_calls[0].function.name is required");
  CHECK(
      ParseError(
          R"([{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":1}}]}])") ==
      "messages[0].tool_calls[0].function.arguments must be a string or an "
      "object (got number)");
  CHECK(ParseError(R"([{"role":"user","content":"a","tool_call_id":"c"}])") ==
        "messages[0].tool_call_id: only tool messages answer tool calls");
}

TEST_CASE("tool results must answer a preceding call") {
  const std::string prefix =
      R"([{"role":"system","content":"s"},{"role":"user","content":"u"},)"
      R"({"role":"assistant","content":null,"tool_calls":[)"
      R"({"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"call_1","content":"r"},)"
      R"({"role":"assistant","content":"done"},)";
  CHECK(
      ParseError(prefix +
                 R"({"role":"tool","tool_call_id":"call_9","content":"x"}])") ==
      "messages[5].tool_call_id: no tool call with id \"call_9\" precedes it");
  // The id exists, but in an earlier assistant message.
  CHECK(
      ParseError(prefix +
                 R"({"role":"tool","tool_call_id":"call_1","content":"x"}])") ==
      "messages[5].tool_call_id: no tool call with id \"call_1\" precedes it");
  CHECK(ParseError(R"([{"role":"tool","tool_call_id":"a","content":"x"}])") ==
        "messages[0].tool_call_id: no tool call with id \"a\" precedes it");
  // Answered twice.
  CHECK(
      ParseError(
          R"([{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f"}}]},)"
          R"({"role":"tool","tool_call_id":"a","content":"x"},)"
          R"({"role":"tool","tool_call_id":"a","content":"y"}])") ==
      "messages[2].tool_call_id: tool call \"a\" is already answered");
  // Duplicate ids in one message.
  CHECK(
      ParseError(
          R"([{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f"}},)"
          R"({"id":"a","function":{"name":"g"}}]}])") ==
      "messages[0].tool_calls[1].id: duplicate tool call id \"a\"");
  // Anthropic.
  CHECK(
      ParseError(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":[{"type":"text","text":"t"},)"
          R"({"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},)"
          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"},)"
          R"({"type":"tool_result","tool_use_id":"toolu_2","content":"x"}]}])") ==
      "messages[2].content[1].tool_use_id: no tool call with id \"toolu_2\" "
      "precedes it");
}

TEST_CASE("unanswered calls are only allowed in the last message") {
  CHECK(
      ParseError(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":null,"tool_calls":[)"
          R"({"id":"a","function":{"name":"f"}},{"id":"b","function":{"name":"g"}}]},)"
          R"({"role":"tool","tool_call_id":"a","content":"x"},)"
          R"({"role":"user","content":"next"}])") ==
      "messages[1].tool_calls[1]: tool call \"b\" has no result (only the "
      "last message may hold unanswered calls)");
  // Partially answered at the end of the history: still an error.
  CHECK(
      ParseError(
          R"([{"role":"assistant","content":null,"tool_calls":[)"
          R"({"id":"a","function":{"name":"f"}},{"id":"b","function":{"name":"g"}}]},)"
          R"({"role":"tool","tool_call_id":"b","content":"x"}])") ==
      "messages[0].tool_calls[0]: tool call \"a\" has no result (only the "
      "last message may hold unanswered calls)");
  CHECK(
      ParseError(
          R"([{"role":"user","content":"u"},)"
          R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},)"
          R"({"role":"user","content":"no result"}])") ==
      "messages[1].content[0]: tool call \"t1\" has no result (only the last "
      "message may hold unanswered calls)");

  // A pending call in the last message is fine: an agent mid-turn.
  ChatHistory h = MustParse(
      R"([{"role":"user","content":"u"},)"
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}])");
  CHECK(h.units == Units{{0, 1}, {1, 2}});
  CHECK(h.messages[1].calls.size() == 1);
}

TEST_CASE("format features of another format are rejected") {
  CHECK(
      ParseError(
          R"([{"role":"user","content":"a"},{"role":"tool","tool_call_id":"x","content":"r"}])",
          ChatFormat::kAnthropic) ==
      "messages[1].role \"tool\" is not valid in the anthropic format (tool "
      "results are tool_result blocks in a user message)");
  CHECK(ParseError(R"([{"role":"tool","tool_call_id":"x","content":"r"}])",
                   ChatFormat::kPlain) ==
        "messages[0].role \"tool\" is not valid in the plain format");
  CHECK(ParseError(R"([{"role":"assistant","content":"a","tool_calls":[]}])",
                   ChatFormat::kAnthropic) ==
        "messages[0].tool_calls is an OpenAI field, not valid in the anthropic "
        "format");
  CHECK(ParseError(R"([{"role":"user","content":"a","name":"n"}])",
                   ChatFormat::kPlain) ==
        "messages[0].name is an OpenAI field, not valid in the plain format");
  CHECK(
      ParseError(
          R"([{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}])",
          ChatFormat::kOpenAI) ==
      "messages[0].content[0].type \"tool_use\" is an Anthropic block, not "
      "valid in the openai format");
  CHECK(
      ParseError(
          R"([{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}])",
          ChatFormat::kAnthropic) ==
      "messages[0].content[0].type \"image_url\" is an OpenAI block, not "
      "valid in the anthropic format");
  CHECK(
      ParseError(R"([{"role":"user","content":[{"type":"text","text":"a"}]}])",
                 ChatFormat::kPlain) ==
      "messages[0].content must be a string in the plain format (got array)");
  CHECK(ParseError(R"([{"role":"user","content":null}])", ChatFormat::kPlain) ==
        "messages[0].content must be a string in the plain format (got null)");
  CHECK(ParseError(R"([{"role":"user"}])", ChatFormat::kPlain) ==
        "messages[0].content is required");
  // Explicit null OpenAI fields are "unset" and fine everywhere.
  CHECK(MustParse(
            R"([{"role":"user","content":"a","name":null,"tool_calls":null}])",
            ChatFormat::kAnthropic)
            .messages.size() == 1);
  // Blocks in the wrong role.
  CHECK(
      ParseError(
          R"([{"role":"user","content":[{"type":"tool_use","id":"t","name":"f"}]}])") ==
      "messages[0].content[0]: tool_use blocks belong in assistant messages "
      "(role is \"user\")");
  CHECK(
      ParseError(
          R"([{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t"}]}])") ==
      "messages[0].content[0]: tool_result blocks belong in user messages "
      "(role is \"assistant\")");
  CHECK(
      ParseError(
          R"([{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":5}]}])") ==
      "messages[0].content[0].content must be a string or an array of "
      "content blocks (got number)");
  CHECK(
      ParseError(
          R"([{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":"yes"}]}])") ==
      "messages[0].content[0].is_error must be a boolean (got string)");
  CHECK(ParseError(R"([{"role":"user","content":[{"type":"tool_result"}]}])") ==
        "messages[0].content[0].tool_use_id is required");
}

TEST_CASE(
    "openai units: a multi-call assistant message and its tool messages") {
  ChatHistory h = MustParse(
      R"([{"role":"system","content":"You are an agent."},)"
      R"({"role":"user","content":"Fix the bug"},)"
      R"({"role":"assistant","content":"Looking.","tool_calls":[)"
      R"({"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.py\"}"}},)"
      R"({"id":"call_2","type":"function","function":{"name":"run","arguments":"{\"cmd\":\"pytest\"}"}},)"
      R"({"id":"call_3","type":"function","function":{"name":"grep","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"call_2","content":"1 failed"},)"
      R"({"role":"tool","tool_call_id":"call_1","name":"read_file","content":"def f(): pass"},)"
      R"({"role":"tool","tool_call_id":"call_3","content":[{"type":"text","text":"a.py:1"}]},)"
      R"({"role":"assistant","content":"ok","tool_calls":[)"
      R"({"id":"call_4","type":"function","function":{"name":"edit","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"call_4","content":"edited"},)"
      R"({"role":"assistant","content":"Done."}])");
  CHECK(h.format == ChatFormat::kOpenAI);
  CHECK(h.units == Units{{0, 1}, {1, 2}, {2, 6}, {6, 8}, {8, 9}});
  const ChatMessage& a = h.messages[2];
  CHECK(a.role == "assistant");
  REQUIRE(a.calls.size() == 3);
  CHECK(a.calls[0].id == "call_1");
  CHECK(a.calls[0].name == "read_file");
  CHECK(a.calls[0].arguments == R"({"path":"a.py"})");
  CHECK(a.calls[1].name == "run");
  CHECK(a.text == "Looking.");
  CHECK_FALSE(a.text_only);
  CHECK(h.messages[3].result_ids == std::vector<std::string>{"call_2"});
  CHECK(h.messages[3].result_tool_name == "run");
  CHECK(h.messages[4].result_tool_name == "read_file");
  CHECK(h.messages[5].result_tool_name == "grep");
  CHECK(h.messages[5].text == "a.py:1");
  CHECK(h.messages[3].text == "1 failed");
  CHECK_FALSE(h.messages[3].text_only);
  CHECK_FALSE(h.messages[3].is_error);
  CHECK(h.messages[1].text_only);
  CHECK(h.messages[0].text_only);
  for (size_t i = 0; i < h.messages.size(); ++i)
    CHECK(h.messages[i].index == i);
  // Ollama-style object arguments are kept as minified JSON.
  ChatHistory o = MustParse(
      R"([{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":{ "x" : [1, 2] }}}]}])");
  CHECK(o.messages[0].calls[0].arguments == R"({"x":[1,2]})");
}

TEST_CASE("openai units: many calls go through the hash index") {
  std::string json =
      R"([{"role":"user","content":"go"},{"role":"assistant","tool_calls":[)";
  const int kCalls = 50;
  for (int c = 0; c < kCalls; ++c) {
    if (c > 0) json += ",";
    json += absl::StrFormat(R"({"id":"c%d","function":{"name":"f%d"}})", c, c);
  }
  json += "]}";
  for (int c = kCalls - 1; c >= 0; --c) {
    json += absl::StrFormat(
        R"(,{"role":"tool","tool_call_id":"c%d","content":"r"})", c);
  }
  json += R"(,{"role":"user","content":"thanks"}])";
  ChatHistory h = MustParse(json);
  CHECK(h.units == Units{{0, 1}, {1, 2 + kCalls}, {2 + kCalls, 3 + kCalls}});
  CHECK(h.messages[2].result_tool_name == absl::StrFormat("f%d", kCalls - 1));
  // One missing among many.
  std::string missing = json;
  missing.replace(missing.find(R"("tool_call_id":"c7")"), 19,
                  R"("tool_call_id":"zz")");
  CHECK(
      ParseError(missing) ==
      absl::StrFormat(
          "messages[%d].tool_call_id: no tool call with id \"zz\" precedes it",
          2 + (kCalls - 1 - 7)));
  std::string dup = json;
  dup.replace(dup.find(R"({"id":"c9")"), 10, R"({"id":"c8")");
  CHECK(ParseError(dup) ==
        "messages[1].tool_calls[9].id: duplicate tool call id \"c8\"");
}

TEST_CASE("anthropic units: tool_use and tool_result, is_error") {
  ChatHistory h = MustParse(
      R"([{"role":"user","content":[{"type":"text","text":"Fix it","cache_control":{"type":"ephemeral"}}]},)"
      R"({"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},)"
      R"({"type":"text","text":"Running tests."},)"
      R"({"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"pytest -x"}},)"
      R"({"type":"tool_use","id":"toolu_2","name":"view","input":{"path":"a.py"}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"def f(): pass"},)"
      R"({"type":"tool_result","tool_use_id":"toolu_1","is_error":true,)"
      R"("content":[{"type":"text","text":"FAILED test_a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":""}}]},)"
      R"({"type":"text","text":"see above"}]},)"
      R"({"role":"assistant","content":"Fixed."}])");
  CHECK(h.format == ChatFormat::kAnthropic);
  CHECK(h.units == Units{{0, 1}, {1, 3}, {3, 4}});
  const ChatMessage& a = h.messages[1];
  REQUIRE(a.calls.size() == 2);
  CHECK(a.calls[0].id == "toolu_1");
  CHECK(a.calls[0].name == "bash");
  CHECK(a.calls[0].arguments == R"({"command":"pytest -x"})");
  CHECK(a.text == "Running tests.");  // not the thinking
  const ChatMessage& r = h.messages[2];
  CHECK(r.result_ids == std::vector<std::string>{"toolu_2", "toolu_1"});
  CHECK(r.result_tool_name == "view");
  CHECK(r.is_error);
  CHECK(r.text == "def f(): pass\nFAILED test_a\nsee above");
  CHECK(r.largest_text_bytes == std::string_view("def f(): pass").size());
  CHECK_FALSE(r.text_only);
  CHECK(h.messages[0].text_only);
  CHECK(
      h.messages[0].json ==
      R"({"role":"user","content":[{"type":"text","text":"Fix it","cache_control":{"type":"ephemeral"}}]})");
  CHECK_FALSE(h.messages[2].is_error == h.messages[3].is_error);

  // Pending tool_use in the last message.
  ChatHistory p = MustParse(
      R"([{"role":"user","content":"u"},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}])");
  CHECK(p.units == Units{{0, 1}, {1, 2}});
}

TEST_CASE("text and largest_text_bytes") {
  ChatHistory h = MustParse(
      R"([{"role":"user","content":[{"type":"text","text":"ab"},{"type":"image_url","image_url":{"url":"u"}},)"
      R"({"type":"text","text":"cdef"},{"type":"text","text":""}]},)"
      R"({"role":"assistant","content":[{"type":"refusal","refusal":"no way, too long a refusal"}]},)"
      R"({"role":"assistant","content":null,"refusal":"I can't."},)"
      R"({"role":"user","content":"caf\u00e9"}])");
  CHECK(h.messages[0].text == "ab\ncdef");
  CHECK(h.messages[0].largest_text_bytes == 4);
  CHECK_FALSE(h.messages[0].text_only);
  CHECK(h.messages[1].text == "no way, too long a refusal");
  CHECK(h.messages[1].largest_text_bytes == 0);
  CHECK(h.messages[2].text == "I can't.");
  CHECK(h.messages[2].largest_text_bytes == 0);
  CHECK(h.messages[2].text_only);
  CHECK(h.messages[3].text == "caf\xc3\xa9");
  CHECK(h.messages[3].largest_text_bytes == 5);
  CHECK(h.messages[3].json ==
        "{\"role\":\"user\",\"content\":\"caf\xc3\xa9\"}");
}

TEST_CASE("TextMessageJson") {
  CHECK(TextMessageJson("user", "a \"b\"\n") ==
        R"({"role":"user","content":"a \"b\"\n"})");
  CHECK(TextMessageJson("assistant", "bad \xff") ==
        "{\"role\":\"assistant\",\"content\":\"bad \xef\xbf\xbd\"}");
}

TEST_CASE("PrependText keeps everything else") {
  ChatHistory h = MustParse(
      R"([{"role":"user","content":"question","cache_control":{"type":"ephemeral"}},)"
      R"({"role":"assistant","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}},)"
      R"({"type":"tool_use","id":"t","name":"f","input":{"a":1.5}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"},{"type":"text","text":"more"}]},)"
      R"({"role":"assistant","content":""},)"
      R"({"role":"user","content":[]}])");
  REQUIRE(h.format == ChatFormat::kAnthropic);
  auto p0 = PrependText(h.messages[0], "[S]");
  REQUIRE(p0.ok());
  CHECK(
      *p0 ==
      R"({"role":"user","content":"[S]\n\nquestion","cache_control":{"type":"ephemeral"}})");
  auto p1 = PrependText(h.messages[1], "[S]");
  REQUIRE(p1.ok());
  CHECK(
      *p1 ==
      R"({"role":"assistant","content":[{"type":"text","text":"[S]"},{"type":"text","text":"x","cache_control":{"type":"ephemeral"}},)"
      R"({"type":"tool_use","id":"t","name":"f","input":{"a":1.5}}]})");
  auto p2 = PrependText(h.messages[2], "[S]");
  REQUIRE(p2.ok());
  CHECK(
      *p2 ==
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"},{"type":"text","text":"[S]"},{"type":"text","text":"more"}]})");
  auto p3 = PrependText(h.messages[3], "[S]");
  REQUIRE(p3.ok());
  CHECK(*p3 == R"({"role":"assistant","content":"[S]"})");
  auto p4 = PrependText(h.messages[4], "[S]");
  REQUIRE(p4.ok());
  CHECK(*p4 == R"({"role":"user","content":[{"type":"text","text":"[S]"}]})");

  ChatHistory o = MustParse(
      R"([{"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"c","content":"r"},{"role":"user","name":"bob"}])");
  auto q0 = PrependText(o.messages[0], "s");
  REQUIRE(q0.ok());
  CHECK(
      *q0 ==
      R"({"role":"assistant","content":"s","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]})");
  auto q2 = PrependText(o.messages[2], "s");
  REQUIRE(q2.ok());
  CHECK(*q2 == R"({"role":"user","name":"bob","content":"s"})");
  CHECK_FALSE(PrependText(o.messages[2], "\xff").ok());
}

TEST_CASE("LargestText and ReplaceLargestText") {
  ChatHistory h = MustParse(
      R"([{"role":"user","content":[{"type":"text","text":"short","cache_control":{"type":"ephemeral"}},)"
      R"({"type":"text","text":"the longest text here","cache_control":{"type":"ephemeral"}},)"
      R"({"type":"text","text":"equal length text 21"}]},)"
      R"({"role":"assistant","content":[{"type":"text","text":"calling"},{"type":"tool_use","id":"t","name":"f","input":{"text":"not this one, it is an argument"}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","cache_control":{"type":"ephemeral"},)"
      R"("content":[{"type":"text","text":"a"},{"type":"text","text":"out\u2028put \"quoted\""}]},{"type":"text","text":"x"}]},)"
      R"({"role":"assistant","content":"plain \u007f string"},)"
      R"({"role":"user","content":[{"type":"image","source":{"type":"url","url":"u"}}]}])");
  REQUIRE(h.format == ChatFormat::kAnthropic);

  auto t0 = LargestText(h.messages[0]);
  REQUIRE(t0.ok());
  CHECK(*t0 == "the longest text here");
  CHECK(h.messages[0].largest_text_bytes == t0->size());
  auto r0 = ReplaceLargestText(h.messages[0], "cut [truncated]");
  REQUIRE(r0.ok());
  CHECK(
      *r0 ==
      R"({"role":"user","content":[{"type":"text","text":"short","cache_control":{"type":"ephemeral"}},)"
      R"({"type":"text","text":"cut [truncated]","cache_control":{"type":"ephemeral"}},)"
      R"({"type":"text","text":"equal length text 21"}]})");

  auto t1 = LargestText(h.messages[1]);
  REQUIRE(t1.ok());
  CHECK(*t1 == "calling");

  auto t2 = LargestText(h.messages[2]);
  REQUIRE(t2.ok());
  CHECK(*t2 == "out\xe2\x80\xa8put \"quoted\"");
  CHECK(h.messages[2].largest_text_bytes == t2->size());
  auto r2 = ReplaceLargestText(h.messages[2], "new");
  REQUIRE(r2.ok());
  CHECK(
      *r2 ==
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","cache_control":{"type":"ephemeral"},)"
      R"("content":[{"type":"text","text":"a"},{"type":"text","text":"new"}]},{"type":"text","text":"x"}]})");

  auto r3 = ReplaceLargestText(h.messages[3], "p");
  REQUIRE(r3.ok());
  CHECK(*r3 == R"({"role":"assistant","content":"p"})");
  // The escaped forms of the input survive a round trip.
  CHECK(h.messages[3].json ==
        R"({"role":"assistant","content":"plain \u007f string"})");

  auto t4 = LargestText(h.messages[4]);
  REQUIRE(t4.ok());
  CHECK(t4->empty());
  CHECK(h.messages[4].largest_text_bytes == 0);
  auto r4 = ReplaceLargestText(h.messages[4], "x");
  REQUIRE(r4.ok());
  CHECK(*r4 == h.messages[4].json);

  // A tool_result with string content.
  ChatHistory s = MustParse(
      R"([{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"long output"},{"type":"text","text":"hi"}]}])");
  auto rs = ReplaceLargestText(s.messages[1], "o");
  REQUIRE(rs.ok());
  CHECK(
      *rs ==
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"o"},{"type":"text","text":"hi"}]})");
  CHECK_FALSE(ReplaceLargestText(s.messages[1], "\xc3").ok());
}

TEST_CASE("parsing is linear: 10,000 messages") {
  // About 1.5 MB, a quarter of assistant turns with two tool calls.
  std::string json = "[";
  json += R"({"role":"system","content":"You are a coding agent."})";
  const std::string filler(60, 'x');
  int call = 0;
  size_t count = 1;
  for (size_t turn = 0; count < 10000; ++turn) {
    json += absl::StrFormat(
        R"(,{"role":"user","content":"Please look at file src/module_%d.py %s"})",
        count, filler);
    ++count;
    if (turn % 4 == 0) {
      json += absl::StrFormat(
          R"(,{"role":"assistant","content":"Checking.","tool_calls":[)"
          R"({"id":"call_%d","type":"function","function":{"name":"view","arguments":"{\"path\":\"src/a.py\"}"}},)"
          R"({"id":"call_%d","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"pytest\"}"}}]})",
          call, call + 1);
      json += absl::StrFormat(
          R"(,{"role":"tool","tool_call_id":"call_%d","content":"%s%s"})", call,
          filler, filler);
      json += absl::StrFormat(
          R"(,{"role":"tool","tool_call_id":"call_%d","content":"%s%s"})",
          call + 1, filler, filler);
      call += 2;
      count += 3;
    } else {
      json += absl::StrFormat(
          R"(,{"role":"assistant","content":"Here is what I found: %s %s"})",
          filler, filler);
      ++count;
    }
  }
  json += "]";
  const auto start = std::chrono::steady_clock::now();
  ChatHistory h = MustParse(json);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  MESSAGE("parsed ", h.messages.size(), " messages, ", json.size(),
          " bytes in ", ms, " ms");
  CHECK(h.messages.size() >= 10000);
  CHECK(h.format == ChatFormat::kOpenAI);
  // The units tile the history: tool units of 3 messages and single ones.
  size_t covered = 0;
  size_t tool_units = 0;
  bool contiguous = true;
  for (const auto& [begin, end] : h.units) {
    contiguous = contiguous && begin == covered && end > begin;
    if (end - begin == 3) ++tool_units;
    covered = end;
  }
  CHECK(contiguous);
  CHECK(covered == h.messages.size());
  CHECK(tool_units > 800);
  CHECK(tool_units == h.units.size() - (h.messages.size() - 3 * tool_units));
}

}  // namespace
}  // namespace ctxkit::internal
