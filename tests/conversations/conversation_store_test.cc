// ConversationStore: every API path, every bad-input case, totals against a
// full recount, list pagination and the delete cascade.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"
#include "tests/conversations/test_helpers.h"

namespace ctxkit {
namespace {

using testing::Contains;
using testing::Fixture;
using testing::Msg;
using testing::Must;

uint64_t Tokens(const std::string& model, const std::string& text) {
  return Must(CountTokens(model, text)).tokens;
}

void CheckError(const Status& s, StatusCode code, const std::string& needle) {
  INFO(s.ToString());
  CHECK(s.code() == code);
  CHECK(Contains(s.message(), needle));
}

TEST_CASE("create, add, get: ids, tokens, totals and actual_tokens") {
  Fixture f;
  Conversation c = Must(f.convs->Create(
      {.title = "Code Review Session",
       .metadata = R"({"project":"mcp-optimizer","reviewer":"alice"})"}));
  CHECK(c.id.size() == 36);
  CHECK(c.model == "claude-3-5-sonnet");
  CHECK(c.created_at == f.clock.now->load());
  CHECK(c.updated_at == c.created_at);
  CHECK(c.total_tokens == 0);
  CHECK(c.message_count == 0);

  f.clock.Advance(1000);
  const std::string content =
      "Please review this function: function add(a, b) { return a + b; }";
  AddMessageResult a =
      Must(f.convs->AddMessage(c.id, Msg(MessageRole::kUser, content)));
  CHECK(a.message.id.size() == 36);
  CHECK(a.message.id != c.id);
  CHECK(a.message.seq == 1);
  CHECK(a.message.tokens == Tokens("claude-3-5-sonnet", content));
  CHECK(a.message.created_at == c.created_at + 1000);
  CHECK_FALSE(a.message.is_compressed);
  CHECK(a.conversation.total_tokens == a.message.tokens);
  CHECK(a.conversation.user_tokens == a.message.tokens);
  CHECK(a.conversation.message_count == 1);
  CHECK(a.conversation.updated_at == c.created_at + 1000);
  CHECK(a.conversation.last_message == content);

  NewMessage reply = Msg(MessageRole::kAssistant, "Looks fine.");
  reply.tool_calls =
      R"([{"id":"call_1","type":"function","function":{"name":"lint","arguments":"{\"file\":\"a.js\"}"}}])";
  AddMessageResult b = Must(f.convs->AddMessage(c.id, reply));
  // Content + name + arguments + 3 per call, as CountMessages counts calls.
  CHECK(b.message.tokens == Tokens(c.model, "Looks fine.") +
                                Tokens(c.model, "lint") +
                                Tokens(c.model, "{\"file\":\"a.js\"}") + 3);
  NewMessage tool = Msg(MessageRole::kTool, "0 problems");
  tool.tool_call_id = "call_1";
  tool.name = "lint";
  Must(f.convs->AddMessage(c.id, tool));
  Must(f.convs->AddMessage(c.id, Msg(MessageRole::kSystem, "Be brief.")));

  ConversationDetail d = Must(f.convs->Get(c.id));
  REQUIRE(d.messages.size() == 4);
  CHECK(d.conversation.title == "Code Review Session");
  CHECK(d.conversation.metadata ==
        R"({"project":"mcp-optimizer","reviewer":"alice"})");
  CHECK(d.messages[0].content == content);
  CHECK(d.messages[1].tool_calls == reply.tool_calls);
  CHECK(d.messages[2].tool_call_id == std::optional<std::string>("call_1"));
  CHECK(d.messages[2].name == std::optional<std::string>("lint"));
  CHECK_FALSE(d.messages[0].name.has_value());
  for (size_t i = 0; i < 4; ++i) CHECK(d.messages[i].seq == i + 1);
  uint64_t sum = 0;
  for (const Message& m : d.messages) sum += m.tokens;
  CHECK(d.conversation.total_tokens == sum);
  CHECK(d.conversation.input_tokens() + d.conversation.output_tokens() == sum);
  CHECK(d.conversation.assistant_tokens == b.message.tokens);
  CHECK(d.conversation.last_message == "Be brief.");

  // actual_tokens is CountMessagesForModel of the same history.
  const std::string history =
      R"([{"role":"user","content":)"
      "\"" +
      std::string(
          "Please review this function: function add(a, b) { return "
          "a + b; }") +
      "\"},"
      R"({"role":"assistant","content":"Looks fine.","tool_calls":)" +
      *reply.tool_calls + "}," +
      R"({"role":"tool","content":"0 problems","name":"lint","tool_call_id":"call_1"},)"
      R"({"role":"system","content":"Be brief."}])";
  MessageCount expected = Must(CountMessagesForModel(c.model, history));
  CHECK(d.actual_tokens == expected.total);
  CHECK(d.actual_tokens > sum);

  ConversationDetail without = Must(f.convs->Get(c.id, false));
  CHECK(without.messages.empty());
  CHECK(without.actual_tokens == d.actual_tokens);

  // Upper-case ids are the same conversation.
  std::string upper = c.id;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  CHECK(Must(f.convs->Get(upper)).conversation.id == c.id);
}

// The history as the OpenAI message array ConversationDetail::actual_tokens
// describes, built from the stored messages.
std::string HistoryJson(const std::vector<Message>& messages) {
  internal::JsonWriter w;
  w.BeginArray();
  for (const Message& m : messages) {
    w.BeginObject()
        .Key("role")
        .String(MessageRoleName(m.role))
        .Key("content")
        .String(m.content);
    if (m.name) w.Key("name").String(*m.name);
    if (m.tool_calls) w.Key("tool_calls").TrustedValue(*m.tool_calls);
    if (m.tool_call_id) w.Key("tool_call_id").String(*m.tool_call_id);
    w.EndObject();
  }
  w.EndArray();
  auto json = std::move(w).Finish();
  REQUIRE(json.ok());
  return *json;
}

TEST_CASE("actual_tokens and its exactness equal a full recount") {
  // Every message format and counting path: o200k and cl100k (OpenAI),
  // the claude vocabulary (Anthropic), llama3 without its tokenizer (the
  // heuristic in the Llama 3 format), an unknown model (the heuristic,
  // OpenAI) and a tokenizer in the Llama 3 format (registered here).
  ModelInfo llama_like;
  llama_like.name = "ctxkit-test-llama-o200k";
  llama_like.encoding = "o200k_base";
  llama_like.message_format = MessageFormat::kLlama3;
  REQUIRE(ModelRegistry::Default().Register(llama_like).ok());
  const std::vector<std::string> models = {
      "gpt-4o",      "gpt-4",      "claude-3-5-sonnet",
      "llama3.1:8b", "my-own-llm", "ctxkit-test-llama-o200k"};
  const std::vector<std::string> texts = {
      "",
      "Please review this function: function add(a, b) { return a + b; }",
      "Grüße, 世界! 🎉 naïve café",
      "special-token text <|endoftext|> and <|im_start|> stays text",
      "  leading and trailing whitespace \n\n",
      "def f(x):\n    return x * 2  # doubles\n",
      std::string(3000, 'a') + " " + std::string(500, '7'),
  };
  const std::vector<std::string> calls = {
      R"([{"id":"call_1","type":"function","function":{"name":"lint","arguments":"{\"file\":\"a.js\"}"}}])",
      R"([{"id":"c2","type":"function","function":{"name":"run_sql","arguments":{"q":"SELECT 1","n":[1,2]}}},{"id":"c3","function":{"name":"noop","arguments":null}},{"id":"c4","function":{"name":"bare"}}])",
      "[]",
      " [ \n ] ",
  };
  std::mt19937 rng(14);
  for (const std::string& model : models) {
    INFO(model);
    Fixture f;
    // One history of text alone (exact wherever the model's tokenizer is)
    // and one with everything.
    for (bool with_extras : {false, true}) {
      Conversation c = Must(f.convs->Create({.title = "t", .model = model}));
      std::vector<NewMessage> batch;
      for (int i = 0; i < 40; ++i) {
        const MessageRole role = static_cast<MessageRole>(rng() % 4);
        NewMessage m = Msg(role, texts[rng() % texts.size()]);
        if (with_extras) {
          if (rng() % 3 == 0) m.name = i % 2 ? "alice" : "Bob_the-2nd";
          if (role == MessageRole::kAssistant && rng() % 2 == 0) {
            m.tool_calls = calls[rng() % calls.size()];
          }
          if (role == MessageRole::kTool && rng() % 4 != 0) {
            m.tool_call_id = "call_" + std::to_string(i);
          }
        }
        batch.push_back(std::move(m));
      }
      Must(f.convs->AddMessages(c.id, {batch.begin(), batch.begin() + 10}));
      for (size_t i = 10; i < batch.size(); ++i) {
        Must(f.convs->AddMessage(c.id, batch[i]));
      }
      const ConversationDetail d = Must(f.convs->Get(c.id));
      const MessageCount full =
          Must(CountMessagesForModel(model, HistoryJson(d.messages)));
      CHECK(d.actual_tokens == full.total);
      CHECK(d.actual_tokens_exact == full.exact);
      const ConversationDetail bare = Must(f.convs->Get(c.id, false));
      CHECK(bare.actual_tokens == full.total);
      CHECK(bare.actual_tokens_exact == full.exact);
    }
    // Empty: the reply priming alone.
    Conversation empty = Must(f.convs->Create({.title = "e", .model = model}));
    const ConversationDetail d = Must(f.convs->Get(empty.id));
    const MessageCount full = Must(CountMessagesForModel(model, "[]"));
    CHECK(d.actual_tokens == full.total);
    CHECK(d.actual_tokens_exact == full.exact);
  }
  CHECK(ModelRegistry::Default()
            .Unregister("ctxkit-test-llama-o200k", /*is_prefix=*/false)
            .ok());
}

TEST_CASE("tokens use the conversation's model; unknown models estimate") {
  Fixture f;
  const std::string text = "The quick brown fox jumps over the lazy dog 12345.";
  for (const char* model : {"gpt-4", "gpt-4o", "claude-3-opus", "my-own-llm"}) {
    Conversation c = Must(f.convs->Create({.title = "t", .model = model}));
    auto a = Must(f.convs->AddMessage(c.id, Msg(MessageRole::kUser, text)));
    CHECK(a.message.tokens == Tokens(model, text));
  }
  CHECK(Tokens("my-own-llm", text) == EstimateTokens(text));
}

TEST_CASE("last_message is a preview of at most 100 characters") {
  Fixture f;
  Conversation c = Must(f.convs->Create({.title = "t"}));
  std::string long_text;
  for (int i = 0; i < 150; ++i) long_text += "\xC3\xA9";  // é
  auto a = Must(f.convs->AddMessage(c.id, Msg(MessageRole::kUser, long_text)));
  CHECK(a.conversation.last_message == long_text.substr(0, 200) + "...");
  std::string exact(100, 'x');
  a = Must(f.convs->AddMessage(c.id, Msg(MessageRole::kUser, exact)));
  CHECK(a.conversation.last_message == exact);
}

TEST_CASE("AddMessages: one transaction, in order, same totals as one by one") {
  Fixture f;
  Conversation one = Must(f.convs->Create({.title = "one", .model = "gpt-4"}));
  Conversation batch =
      Must(f.convs->Create({.title = "batch", .model = "gpt-4"}));
  std::vector<NewMessage> messages;
  for (int i = 0; i < 50; ++i) {
    messages.push_back(
        Msg(i % 3 == 0 ? MessageRole::kAssistant : MessageRole::kUser,
            "message number " + std::to_string(i) + " with some words in it"));
  }
  messages[7].is_compressed = true;
  for (const auto& m : messages) Must(f.convs->AddMessage(one.id, m));
  AddMessagesResult r = Must(f.convs->AddMessages(batch.id, messages));
  REQUIRE(r.messages.size() == 50);
  for (size_t i = 0; i < 50; ++i) {
    CHECK(r.messages[i].seq == i + 1);
    CHECK(r.messages[i].content == messages[i].content);
  }
  ConversationDetail a = Must(f.convs->Get(one.id));
  ConversationDetail b = Must(f.convs->Get(batch.id));
  CHECK(a.conversation.total_tokens == b.conversation.total_tokens);
  CHECK(a.conversation.user_tokens == b.conversation.user_tokens);
  CHECK(a.conversation.assistant_tokens == b.conversation.assistant_tokens);
  CHECK(b.conversation.compressed_count == 1);
  CHECK(b.conversation.compressed_tokens == r.messages[7].tokens);
  CHECK(a.actual_tokens == b.actual_tokens);
  CHECK(r.conversation.total_tokens == b.conversation.total_tokens);
  CHECK(b.conversation.last_message == messages.back().content);

  // A bad message anywhere rejects the whole batch.
  messages[30].content = std::string("\xFF", 1);
  CheckError(f.convs->AddMessages(batch.id, messages).status(),
             StatusCode::kInvalidArgument, "messages[30].content");
  CHECK(Must(f.convs->Get(batch.id)).conversation.message_count == 50);
}

TEST_CASE("update and delete") {
  Fixture f;
  Conversation c = Must(f.convs->Create({.title = "old"}));
  f.clock.Advance(5);
  Conversation u = Must(f.convs->Update(c.id, {.title = "new"}));
  CHECK(u.title == "new");
  CHECK(u.metadata == "{}");
  CHECK(u.updated_at == c.created_at + 5);
  u = Must(f.convs->Update(c.id, {.metadata = R"({"k":1})"}));
  CHECK(u.title == "new");
  CHECK(u.metadata == R"({"k":1})");
  Must(f.convs->AddMessages(
      c.id, {Msg(MessageRole::kUser, "a"), Msg(MessageRole::kAssistant, "b")}));
  DeletedConversation del = Must(f.convs->Delete(c.id));
  CHECK(del.conversation.title == "new");
  CHECK(del.messages_deleted == 2);
  CheckError(f.convs->Get(c.id).status(), StatusCode::kNotFound, c.id);
  CheckError(f.convs->Delete(c.id).status(), StatusCode::kNotFound, c.id);
  CHECK(f.Entries("conversations") == 0);
  CHECK(f.Entries("conversations.messages") == 0);
  CHECK(f.Entries("conversations.message_ids") == 0);
  CHECK(f.Entries("conversations.by_created") == 0);
  AggregateStats s = Must(f.convs->AggregateStats());
  CHECK(s.conversations == 0);
  CHECK(s.messages == 0);
  CHECK(s.total_tokens == 0);
  CHECK(s.by_model.empty());
  CHECK(s.days.empty());
}

TEST_CASE("SetCompressed and DeleteMessages keep totals and preview") {
  Fixture f;
  Conversation c = Must(f.convs->Create({.title = "t"}));
  AddMessagesResult r = Must(f.convs->AddMessages(
      c.id, {Msg(MessageRole::kUser, "first question here"),
             Msg(MessageRole::kAssistant, "first answer, longer than that"),
             Msg(MessageRole::kUser, "second question")}));
  Conversation after = Must(f.convs->SetCompressed(
      c.id, {r.messages[0].id, r.messages[1].id, r.messages[0].id}, true));
  CHECK(after.compressed_count == 2);
  CHECK(after.compressed_tokens == r.messages[0].tokens + r.messages[1].tokens);
  CHECK(Must(f.convs->AggregateStats()).compressed_messages == 2);
  after = Must(f.convs->SetCompressed(c.id, {r.messages[1].id}, false));
  CHECK(after.compressed_count == 1);
  CHECK(Must(f.convs->Get(c.id)).messages[1].is_compressed == false);
  CHECK(Must(f.convs->Get(c.id)).messages[0].is_compressed == true);

  after = Must(f.convs->DeleteMessages(c.id, {r.messages[2].id}));
  CHECK(after.message_count == 2);
  CHECK(after.last_message == "first answer, longer than that");
  CHECK(after.total_tokens == r.messages[0].tokens + r.messages[1].tokens);
  after =
      Must(f.convs->DeleteMessages(c.id, {r.messages[0].id, r.messages[1].id}));
  CHECK(after.message_count == 0);
  CHECK(after.total_tokens == 0);
  CHECK(after.compressed_count == 0);
  CHECK(after.last_message.empty());
  CHECK(after.last_message_at == 0);
  // Seq numbers are never reused.
  auto next = Must(f.convs->AddMessage(c.id, Msg(MessageRole::kUser, "again")));
  CHECK(next.message.seq == 4);

  // Messages of another conversation, and deleted ones, are NOT_FOUND.
  Conversation other = Must(f.convs->Create({.title = "other"}));
  CheckError(f.convs->SetCompressed(other.id, {next.message.id}, true).status(),
             StatusCode::kNotFound, next.message.id);
  CheckError(f.convs->DeleteMessages(c.id, {r.messages[0].id}).status(),
             StatusCode::kNotFound, r.messages[0].id);
  // A failure part-way changes nothing.
  CheckError(f.convs->DeleteMessages(c.id, {next.message.id, r.messages[0].id})
                 .status(),
             StatusCode::kNotFound, r.messages[0].id);
  CHECK(Must(f.convs->Get(c.id)).conversation.message_count == 1);
}

// ---- Bad input ----

TEST_CASE("bad input is rejected, naming the field, and writes nothing") {
  Fixture f;
  Conversation c = Must(f.convs->Create({.title = "t"}));
  auto added = Must(f.convs->AddMessage(c.id, Msg(MessageRole::kUser, "hi")));
  const uint64_t txn_before = Must(f.store->Info()).last_transaction_id;
  const std::string missing = "00000000-0000-4000-8000-000000000000";
  const std::string bad_utf8("ab\xC3", 3);

  struct Case {
    const char* what;
    Status status;
    StatusCode code;
    std::string needle;
  };
  std::vector<Case> cases;
  auto add = [&](const char* what, Status s, StatusCode code,
                 std::string needle) {
    cases.push_back({what, std::move(s), code, std::move(needle)});
  };
  const auto kInvalid = StatusCode::kInvalidArgument;
  const auto kNotFound = StatusCode::kNotFound;

  // Create.
  add("empty title", f.convs->Create({.title = ""}).status(), kInvalid,
      "title");
  add("long title", f.convs->Create({.title = std::string(1025, 'a')}).status(),
      kInvalid, "title is 1025 bytes");
  add("utf8 title", f.convs->Create({.title = bad_utf8}).status(), kInvalid,
      "title");
  add("empty model", f.convs->Create({.title = "t", .model = ""}).status(),
      kInvalid, "model");
  add("long model",
      f.convs->Create({.title = "t", .model = std::string(257, 'm')}).status(),
      kInvalid, "model");
  add("metadata array",
      f.convs->Create({.title = "t", .metadata = "[1]"}).status(), kInvalid,
      "metadata must be an object");
  add("metadata broken",
      f.convs->Create({.title = "t", .metadata = "{\"a\":"}).status(), kInvalid,
      "metadata is not valid JSON");
  add("metadata empty",
      f.convs->Create({.title = "t", .metadata = ""}).status(), kInvalid,
      "metadata");
  add("metadata big",
      f.convs
          ->Create({.title = "t",
                    .metadata = "{\"a\":\"" + std::string(70000, 'x') + "\"}"})
          .status(),
      kInvalid, "metadata is");
  add("metadata utf8",
      f.convs
          ->Create({.title = "t", .metadata = "{\"a\":\"" + bad_utf8 + "\"}"})
          .status(),
      kInvalid, "metadata");

  // AddMessage.
  add("bad conversation id",
      f.convs->AddMessage("nope", Msg(MessageRole::kUser, "x")).status(),
      kInvalid, "conversation_id must be a UUID");
  add("binary conversation id",
      f.convs
          ->AddMessage(std::string("\xFF\x00", 2), Msg(MessageRole::kUser, "x"))
          .status(),
      kInvalid, "conversation_id must be a UUID");
  add("missing conversation",
      f.convs->AddMessage(missing, Msg(MessageRole::kUser, "x")).status(),
      kNotFound, missing);
  NewMessage bad_role = Msg(static_cast<MessageRole>(9), "x");
  add("bad role", f.convs->AddMessage(c.id, bad_role).status(), kInvalid,
      "role");
  add("bad content",
      f.convs->AddMessage(c.id, Msg(MessageRole::kUser, bad_utf8)).status(),
      kInvalid, "content is not valid UTF-8");
  add("huge content",
      f.convs
          ->AddMessage(
              c.id, Msg(MessageRole::kUser, std::string((16 << 20) + 1, 'a')))
          .status(),
      kInvalid, "content is 16777217 bytes");
  NewMessage m = Msg(MessageRole::kUser, "x");
  m.name = "";
  add("empty name", f.convs->AddMessage(c.id, m).status(), kInvalid, "name");
  m.name = std::string(257, 'n');
  add("long name", f.convs->AddMessage(c.id, m).status(), kInvalid, "name");
  m = Msg(MessageRole::kUser, "x");
  m.tool_call_id = "call_1";
  add("tool_call_id on user", f.convs->AddMessage(c.id, m).status(), kInvalid,
      "tool_call_id is only allowed on tool messages");
  m = Msg(MessageRole::kTool, "x");
  m.tool_call_id = "";
  add("empty tool_call_id", f.convs->AddMessage(c.id, m).status(), kInvalid,
      "tool_call_id");
  m = Msg(MessageRole::kUser, "x");
  m.tool_calls = "[]";
  add("tool_calls on user", f.convs->AddMessage(c.id, m).status(), kInvalid,
      "tool_calls is only allowed on assistant messages");
  m = Msg(MessageRole::kAssistant, "");
  m.tool_calls = "{}";
  add("tool_calls object", f.convs->AddMessage(c.id, m).status(), kInvalid,
      "tool_calls must be an array");
  m.tool_calls = "[{\"id\":\"x\"}]";
  add("tool_calls no function", f.convs->AddMessage(c.id, m).status(), kInvalid,
      "tool_calls[0].function is required");
  m.tool_calls =
      R"([{"function":{"name":"f","arguments":"{}"}},{"function":{"arguments":"{}"}}])";
  add("tool_calls no name", f.convs->AddMessage(c.id, m).status(), kInvalid,
      "tool_calls[1].function.name is required");
  m.tool_calls = R"([{"function":{"name":"f","arguments":7}}])";
  add("tool_calls bad arguments", f.convs->AddMessage(c.id, m).status(),
      kInvalid, "tool_calls[0].function.arguments must be a string");
  m.tool_calls = "[";
  add("tool_calls broken", f.convs->AddMessage(c.id, m).status(), kInvalid,
      "tool_calls is not valid JSON");
  m.tool_calls = "";
  add("tool_calls empty", f.convs->AddMessage(c.id, m).status(), kInvalid,
      "tool_calls must not be empty");
  add("empty batch", f.convs->AddMessages(c.id, {}).status(), kInvalid,
      "messages holds 0 messages");
  add("batch bad role",
      f.convs->AddMessages(c.id, {Msg(MessageRole::kUser, "a"), bad_role})
          .status(),
      kInvalid, "messages[1].role");

  // Get, List, Update, Delete.
  add("get bad id", f.convs->Get("x").status(), kInvalid, "id must be a UUID");
  add("get missing", f.convs->Get(missing).status(), kNotFound, missing);
  add("list limit 0", f.convs->List(0).status(), kInvalid, "limit is 0");
  add("list limit 1001", f.convs->List(1001).status(), kInvalid,
      "limit is 1001");
  add("list cursor garbage", f.convs->List(10, "!!!").status(), kInvalid,
      "cursor");
  add("list cursor short", f.convs->List(10, "AAAA").status(), kInvalid,
      "cursor");
  add("update nothing", f.convs->Update(c.id, {}).status(), kInvalid,
      "title or metadata");
  add("update empty title", f.convs->Update(c.id, {.title = ""}).status(),
      kInvalid, "title");
  add("update bad metadata",
      f.convs->Update(c.id, {.metadata = "\"s\""}).status(), kInvalid,
      "metadata must be an object");
  add("update missing", f.convs->Update(missing, {.title = "x"}).status(),
      kNotFound, missing);
  add("update bad id", f.convs->Update("1", {.title = "x"}).status(), kInvalid,
      "id");
  add("delete bad id", f.convs->Delete("").status(), kInvalid, "id");
  add("delete missing", f.convs->Delete(missing).status(), kNotFound, missing);

  // SetCompressed, DeleteMessages.
  add("compress no ids", f.convs->SetCompressed(c.id, {}, true).status(),
      kInvalid, "message_ids");
  add("compress bad id",
      f.convs->SetCompressed(c.id, {added.message.id, "zz"}, true).status(),
      kInvalid, "message_ids[1]");
  add("compress missing id",
      f.convs->SetCompressed(c.id, {missing}, true).status(), kNotFound,
      missing);
  add("compress missing conversation",
      f.convs->SetCompressed(missing, {added.message.id}, true).status(),
      kNotFound, missing);
  add("delete messages missing",
      f.convs->DeleteMessages(c.id, {missing}).status(), kNotFound, missing);
  add("stats bad id", f.convs->ConversationStats("x").status(), kInvalid, "id");
  add("stats missing", f.convs->ConversationStats(missing).status(), kNotFound,
      missing);

  for (const Case& k : cases) {
    INFO(k.what << ": " << k.status.ToString());
    CHECK(k.status.code() == k.code);
    CHECK(Contains(k.status.message(), k.needle));
  }
  // Nothing was committed by any of them.
  CHECK(Must(f.store->Info()).last_transaction_id == txn_before);
  CHECK(ParseMessageRole("assistant").value() == MessageRole::kAssistant);
  CheckError(ParseMessageRole("robot").status(), kInvalid, "role is \"robot\"");
  CHECK(std::string(MessageRoleName(MessageRole::kTool)) == "tool");
}

// ---- Listing ----

TEST_CASE("list: newest first, pages without duplicates or misses") {
  Fixture f;
  std::vector<Conversation> all;
  for (int i = 0; i < 57; ++i) {
    // Ties in created_at every third conversation: ordered by id then.
    if (i % 3 != 0) f.clock.Advance(10);
    all.push_back(Must(f.convs->Create({.title = "c" + std::to_string(i)})));
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(a.created_at, a.id) > std::tie(b.created_at, b.id);
  });
  for (uint32_t limit : {1u, 7u, 10u, 57u, 100u}) {
    std::vector<std::string> seen;
    std::string cursor;
    int pages = 0;
    do {
      ConversationPage page = Must(f.convs->List(limit, cursor));
      CHECK(page.total == 57);
      CHECK(page.conversations.size() <= limit);
      for (const auto& c : page.conversations) seen.push_back(c.id);
      cursor = page.next_cursor;
      ++pages;
      REQUIRE(pages <= 60);
    } while (!cursor.empty());
    REQUIRE(seen.size() == all.size());
    for (size_t i = 0; i < all.size(); ++i) CHECK(seen[i] == all[i].id);
    CHECK(pages == static_cast<int>((57 + limit - 1) / limit));
  }
  // Default limit is 20.
  CHECK(Must(f.convs->List()).conversations.size() == 20);

  // A cursor survives deletion of the conversation it ends at and the
  // creation of newer ones.
  ConversationPage first = Must(f.convs->List(10));
  Must(f.convs->Delete(first.conversations.back().id));
  f.clock.Advance(1000);
  Must(f.convs->Create({.title = "newest"}));
  ConversationPage second = Must(f.convs->List(10, first.next_cursor));
  CHECK(second.conversations.front().id == all[10].id);
  CHECK(second.total == 57);

  // Empty store.
  Fixture empty;
  ConversationPage none = Must(empty.convs->List());
  CHECK(none.conversations.empty());
  CHECK(none.next_cursor.empty());
  CHECK(none.total == 0);
}

// ---- Totals against a full recount ----

struct Recount {
  uint64_t conversations = 0, messages = 0, compressed = 0,
           compressed_tokens = 0;
  uint64_t role[4] = {};
  std::map<std::string, ModelUsage> models;
  std::map<int64_t, DailyUsage> days;
};

void CheckAgainstRecount(Fixture& f) {
  Recount r;
  std::string cursor;
  do {
    ConversationPage page = Must(f.convs->List(1000, cursor));
    for (const Conversation& listed : page.conversations) {
      ConversationDetail d = Must(f.convs->Get(listed.id));
      const Conversation& c = d.conversation;
      ++r.conversations;
      ModelUsage& mu = r.models[c.model];
      ++mu.conversations;
      uint64_t role[4] = {}, compressed = 0, compressed_tokens = 0;
      for (const Message& m : d.messages) {
        role[static_cast<int>(m.role)] += m.tokens;
        if (m.is_compressed) {
          ++compressed;
          compressed_tokens += m.tokens;
        }
        ++mu.messages;
        (m.role == MessageRole::kAssistant ? mu.output_tokens
                                           : mu.input_tokens) += m.tokens;
        DailyUsage& du = r.days[internal::DayOfMillis(m.created_at)];
        ++du.messages;
        (m.role == MessageRole::kAssistant ? du.output_tokens
                                           : du.input_tokens) += m.tokens;
      }
      CHECK(c.message_count == d.messages.size());
      CHECK(c.user_tokens == role[0]);
      CHECK(c.assistant_tokens == role[1]);
      CHECK(c.system_tokens == role[2]);
      CHECK(c.tool_tokens == role[3]);
      CHECK(c.total_tokens == role[0] + role[1] + role[2] + role[3]);
      CHECK(c.compressed_count == compressed);
      CHECK(c.compressed_tokens == compressed_tokens);
      if (d.messages.empty()) {
        CHECK(c.last_message.empty());
      } else {
        CHECK(c.last_message_at == d.messages.back().created_at);
        CHECK(std::string(d.messages.back().content, 0, 100) ==
              c.last_message.substr(
                  0, std::min<size_t>(100, c.last_message.size())));
      }
      r.messages += d.messages.size();
      r.compressed += compressed;
      r.compressed_tokens += compressed_tokens;
      for (int i = 0; i < 4; ++i) r.role[i] += role[i];
    }
    cursor = page.next_cursor;
  } while (!cursor.empty());

  AggregateStats s = Must(f.convs->AggregateStats());
  CHECK(s.conversations == r.conversations);
  CHECK(s.messages == r.messages);
  CHECK(s.user_tokens == r.role[0]);
  CHECK(s.assistant_tokens == r.role[1]);
  CHECK(s.system_tokens == r.role[2]);
  CHECK(s.tool_tokens == r.role[3]);
  CHECK(s.input_tokens == r.role[0] + r.role[2] + r.role[3]);
  CHECK(s.output_tokens == r.role[1]);
  CHECK(s.compressed_messages == r.compressed);
  CHECK(s.compressed_tokens == r.compressed_tokens);
  REQUIRE(s.by_model.size() == r.models.size());
  for (const ModelUsage& m : s.by_model) {
    const ModelUsage& e = r.models[m.model];
    CHECK(m.conversations == e.conversations);
    CHECK(m.messages == e.messages);
    CHECK(m.input_tokens == e.input_tokens);
    CHECK(m.output_tokens == e.output_tokens);
  }
  REQUIRE(s.days.size() == r.days.size());
  uint64_t peak = 0;
  for (const DailyUsage& d : s.days) {
    const DailyUsage& e = r.days[d.day];
    CHECK(d.messages == e.messages);
    CHECK(d.input_tokens == e.input_tokens);
    CHECK(d.output_tokens == e.output_tokens);
    CHECK(d.date == internal::DateOfDay(d.day));
    peak = std::max(peak, d.tokens());
  }
  CHECK(s.peak_tokens == peak);
  CHECK(f.Entries("conversations") == r.conversations);
  CHECK(f.Entries("conversations.by_created") == r.conversations);
  CHECK(f.Entries("conversations.messages") == r.messages);
  CHECK(f.Entries("conversations.message_ids") == r.messages);
}

TEST_CASE("incremental totals equal a full recount after random operations") {
  Fixture f;
  std::mt19937 rng(42);
  const char* models[] = {"claude-3-5-sonnet", "gpt-4", "gpt-4o",
                          "no-such-model"};
  const char* words[] = {"token",  "cache", "the",      "optimize",
                         "δοκιμή", "代码",  "function", "(x)",
                         "42",     "\n",    "emoji 😀"};
  auto text = [&] {
    std::string t;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      t += words[rng() % std::size(words)];
      t += ' ';
    }
    return t;
  };
  std::vector<std::string> ids;
  for (int step = 0; step < 600; ++step) {
    // Spread over about ten days so that per-day totals matter.
    f.clock.Advance(static_cast<int64_t>(rng() % 4) * 3600000 + 1);
    const unsigned op = rng() % 100;
    if (ids.empty() || op < 8) {
      ids.push_back(
          Must(f.convs->Create({.title = text(), .model = models[rng() % 4]}))
              .id);
    } else {
      const std::string& id = ids[rng() % ids.size()];
      if (op < 50) {
        NewMessage m = Msg(static_cast<MessageRole>(rng() % 4), text());
        m.is_compressed = rng() % 5 == 0;
        Must(f.convs->AddMessage(id, m));
      } else if (op < 70) {
        std::vector<NewMessage> batch;
        for (unsigned i = 0, n = 1 + rng() % 8; i < n; ++i) {
          batch.push_back(Msg(static_cast<MessageRole>(rng() % 4), text()));
        }
        Must(f.convs->AddMessages(id, batch));
      } else if (op < 80) {
        ConversationDetail d = Must(f.convs->Get(id));
        if (!d.messages.empty()) {
          Must(f.convs->SetCompressed(
              id, {d.messages[rng() % d.messages.size()].id}, rng() % 2 == 0));
        }
      } else if (op < 88) {
        ConversationDetail d = Must(f.convs->Get(id));
        if (!d.messages.empty()) {
          Must(f.convs->DeleteMessages(
              id, {d.messages[rng() % d.messages.size()].id}));
        }
      } else if (op < 93) {
        Must(f.convs->Update(id, {.title = text()}));
      } else {
        const size_t k = rng() % ids.size();
        Must(f.convs->Delete(ids[k]));
        ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    if (step % 150 == 149) CheckAgainstRecount(f);
  }
  CheckAgainstRecount(f);
}

// ---- Cascade ----

class FakeHook : public internal::ConversationDeleteHook {
 public:
  FakeHook(Database db, std::vector<std::string>* calls, bool fail)
      : db_(db), calls_(calls), fail_(fail) {}
  absl::StatusOr<uint64_t> OnConversationDeleted(
      WriteTransaction& txn, std::string_view conversation_id) const override {
    calls_->push_back(std::string(conversation_id));
    if (fail_) return absl::InternalError("hook failed");
    // Deletes this part's record of the conversation, like a real part.
    auto gone = txn.Delete(db_, conversation_id);
    if (!gone.ok()) return absl::InternalError(gone.status().message());
    return *gone ? 1 : 0;
  }

 private:
  Database db_;
  std::vector<std::string>* calls_;
  bool fail_;
};

TEST_CASE("delete cascades through the hooks in the same transaction") {
  testing::TempDir dir;
  auto store = Must(Store::Open(dir.Sub("s")));
  Database side = Must(store->OpenDatabase("test.side"));
  std::vector<std::string> calls;
  auto open = [&](bool failing) {
    std::vector<std::unique_ptr<internal::ConversationDeleteHook>> hooks;
    hooks.push_back(std::make_unique<FakeHook>(side, &calls, failing));
    auto s =
        internal::OpenConversationStoreWithHooks(*store, {}, std::move(hooks));
    REQUIRE(s.ok());
    return std::move(s).value();
  };
  auto convs = open(false);
  Conversation c = Must(convs->Create({.title = "t"}));
  Must(convs->AddMessage(c.id, Msg(MessageRole::kUser, "x")));
  REQUIRE(store
              ->Update([&](WriteTransaction& txn) {
                return txn.Put(side, c.id, "belongs to c");
              })
              .ok());

  // A failing hook aborts the whole delete.
  auto failing = open(true);
  CheckError(failing->Delete(c.id).status(), StatusCode::kInternal,
             "hook failed");
  CHECK(calls == std::vector<std::string>{c.id});
  CHECK(Must(convs->Get(c.id)).messages.size() == 1);
  CHECK(Must(convs->AggregateStats()).messages == 1);

  DeletedConversation d = Must(convs->Delete(c.id));
  CHECK(calls.size() == 2);
  CHECK(calls[1] == c.id);
  CHECK(d.dependent_records_deleted == 1);
  auto txn = Must(store->BeginRead());
  CHECK(txn.Get(side, c.id).status().code() == StatusCode::kNotFound);
}

TEST_CASE("Open wires the references and cache parts' hooks") {
  Fixture f;  // ConversationStore::Open succeeded with the real hooks
  Conversation c = Must(f.convs->Create({.title = "t"}));
  DeletedConversation d = Must(f.convs->Delete(c.id));
  CHECK(d.dependent_records_deleted == 0);
}

// The split AddMessages that the context graph writes through: created and
// appended inside the caller's transaction, together or not at all.
TEST_CASE("prepared conversations and messages join the caller's commit") {
  Fixture f;
  auto c = internal::CheckNewConversation(*f.convs, {.title = "ctx"});
  REQUIRE(c.ok());
  const std::vector<NewMessage> batch = {
      Msg(MessageRole::kUser, "find the failing test"),
      Msg(MessageRole::kAssistant, "tests/store_test.cc fails on line 3")};
  auto prepared = internal::PrepareMessages(*f.convs, c->model, batch.data(),
                                            batch.size(), /*single=*/false);
  REQUIRE(prepared.ok());
  CHECK(prepared->messages[1].tokens == Tokens(c->model, batch[1].content));

  SUBCASE("a transaction that fails afterwards keeps neither") {
    const Status failed = f.store->Update([&](WriteTransaction& txn) {
      if (!internal::WriteNewConversation(*f.convs, txn, *c).ok() ||
          !internal::AppendPreparedMessages(*f.convs, txn, c->id, *prepared)
               .ok()) {
        return Status(StatusCode::kInternal, "the writes themselves failed");
      }
      return Status(StatusCode::kAborted, "the caller's own write failed");
    });
    CHECK(failed.code() == StatusCode::kAborted);
    CHECK(f.convs->Get(c->id).status().code() == StatusCode::kNotFound);
    CHECK(Must(f.convs->AggregateStats()).conversations == 0);
    CHECK(f.Entries("conversations.messages") == 0);
  }

  SUBCASE("a committed one reads back like AddMessages") {
    AddMessagesResult added;
    REQUIRE(f.store
                ->Update([&](WriteTransaction& txn) {
                  auto s = internal::WriteNewConversation(*f.convs, txn, *c);
                  if (!s.ok()) return internal::ToPublic(s);
                  auto r = internal::AppendPreparedMessages(*f.convs, txn,
                                                            c->id, *prepared);
                  if (!r.ok()) return internal::ToPublic(r.status());
                  added = *std::move(r);
                  return Status();
                })
                .ok());
    CHECK(added.messages[0].seq == 1);
    CHECK(added.messages[1].seq == 2);
    CHECK(added.messages[1].conversation_id == c->id);
    ConversationDetail got = Must(f.convs->Get(c->id));
    REQUIRE(got.messages.size() == 2);
    CHECK(got.messages[1].id == added.messages[1].id);
    CHECK(got.messages[1].content == batch[1].content);
    CHECK(got.conversation.total_tokens ==
          prepared->messages[0].tokens + prepared->messages[1].tokens);
    CHECK(Must(f.convs->AggregateStats()).messages == 2);
    // Appended again (a retried transaction): the next seqs, same content.
    f.clock.Advance(5);
    REQUIRE(f.store
                ->Update([&](WriteTransaction& txn) {
                  return internal::ToPublic(internal::AppendPreparedMessages(
                                                *f.convs, txn, c->id, *prepared)
                                                .status());
                })
                .ok());
    CHECK(Must(f.convs->Get(c->id)).conversation.message_count == 4);
  }

  SUBCASE("counted for another model: ABORTED, nothing written") {
    REQUIRE(f.store
                ->Update([&](WriteTransaction& txn) {
                  return internal::ToPublic(
                      internal::WriteNewConversation(*f.convs, txn, *c));
                })
                .ok());
    auto other = internal::PrepareMessages(*f.convs, "gpt-4o", batch.data(),
                                           batch.size(), false);
    REQUIRE(other.ok());
    const Status s = f.store->Update([&](WriteTransaction& txn) {
      return internal::ToPublic(
          internal::AppendPreparedMessages(*f.convs, txn, c->id, *other)
              .status());
    });
    CheckError(s, StatusCode::kAborted, "count them again");
    CHECK(Must(f.convs->Get(c->id)).conversation.message_count == 0);
  }

  SUBCASE("bad input is refused before any transaction") {
    auto none =
        internal::PrepareMessages(*f.convs, c->model, batch.data(), 0, false);
    CheckError(internal::ToPublic(none.status()), StatusCode::kInvalidArgument,
               "must hold 1 to");
    auto bad =
        internal::CheckNewConversation(*f.convs, {.title = "t", .model = ""});
    CheckError(internal::ToPublic(bad.status()), StatusCode::kInvalidArgument,
               "model");
  }
}

}  // namespace
}  // namespace ctxkit
