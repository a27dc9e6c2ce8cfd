// manage_conversation (seed 000): create, add_message, get, list and delete
// over the library's ConversationStore. Each answer is the library's
// document for the result (conversations.h, the bytes the C ABI returns and
// `ctxkit conv` prints) in seed 000's envelope (record_json.h).
//
// Beyond the seed: add_message also takes "messages" (many messages in one
// transaction), the OpenAI fields name, tool_calls and tool_call_id, and the
// role "tool"; list takes "cursor" (the previous page's next_cursor).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/conversations.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/tools/adapters.h"
#include "programs/ctxkit/tools/arguments.h"
#include "programs/ctxkit/tools/record_json.h"
#include "simdjson.h"

namespace ctxkit::tools {

namespace {

using mcp::ToolOutput;
using mcp::ToolStatusError;
using mcp::ToolValidationError;

constexpr std::string_view kInputSchema = R"({
  "type": "object",
  "properties": {
    "action": {
      "type": "string",
      "enum": ["create", "add_message", "get", "list", "delete"],
      "description": "What to do."
    },
    "title": {
      "type": "string", "minLength": 1,
      "description": "create: the conversation's title (required)."
    },
    "model": {
      "type": "string", "minLength": 1,
      "description": "create: the model whose tokenizer counts its messages (default: the server's default model, claude-3-5-sonnet); fixed for the conversation's life."
    },
    "metadata": {
      "type": "object",
      "description": "create: any JSON object stored with the conversation."
    },
    "conversation_id": {
      "type": "string", "minLength": 1,
      "description": "add_message, get, delete: the conversation (required)."
    },
    "role": {
      "type": "string", "enum": ["user", "assistant", "system", "tool"],
      "description": "add_message: the message's role (required unless messages is given)."
    },
    "content": {
      "type": "string",
      "description": "add_message: the message's text (required unless tool_calls or messages is given)."
    },
    "name": {"type": "string", "minLength": 1, "description": "add_message: the participant's name."},
    "tool_call_id": {"type": "string", "minLength": 1, "description": "add_message, role tool: the call it answers."},
    "tool_calls": {
      "type": "array", "items": {"type": "object"},
      "description": "add_message, role assistant: OpenAI tool calls."
    },
    "messages": {
      "type": "array", "minItems": 1, "maxItems": 100000,
      "description": "add_message: several messages added at once, all or none (instead of role and content).",
      "items": {
        "type": "object",
        "properties": {
          "role": {"type": "string", "enum": ["user", "assistant", "system", "tool"]},
          "content": {"type": "string"},
          "name": {"type": "string", "minLength": 1},
          "tool_call_id": {"type": "string", "minLength": 1},
          "tool_calls": {"type": "array", "items": {"type": "object"}}
        },
        "required": ["role"],
        "additionalProperties": false
      }
    },
    "include_messages": {
      "type": "boolean", "default": true,
      "description": "get: include the messages."
    },
    "limit": {
      "type": "integer", "minimum": 1, "maximum": 1000, "default": 20,
      "description": "list: conversations per page, newest first."
    },
    "cursor": {
      "type": "string",
      "description": "list: the next_cursor of the previous page."
    }
  },
  "required": ["action"],
  "additionalProperties": false
})";

// A conversation object as conversations.h's writers write it.
constexpr std::string_view kConversationSchema = R"({
  "type": "object",
  "properties": {
    "id": {"type": "string"},
    "title": {"type": "string"},
    "model": {"type": "string"},
    "created_at": {"type": "integer"},
    "updated_at": {"type": "integer"},
    "total_tokens": {"type": "integer", "minimum": 0},
    "message_count": {"type": "integer", "minimum": 0},
    "input_tokens": {"type": "integer", "minimum": 0},
    "output_tokens": {"type": "integer", "minimum": 0},
    "last_message": {"type": ["string", "null"]},
    "last_message_at": {"type": ["integer", "null"]},
    "metadata": {"type": "object"}
  },
  "required": ["id", "title", "model", "created_at", "updated_at", "total_tokens", "message_count", "metadata"]
})";

// A message object as conversations.h's writers write it (content_bytes
// instead of content in add_message's answer).
constexpr std::string_view kMessageSchema = R"({
  "type": "object",
  "properties": {
    "id": {"type": "string"},
    "conversation_id": {"type": "string"},
    "seq": {"type": "integer", "minimum": 1},
    "role": {"type": "string", "enum": ["user", "assistant", "system", "tool"]},
    "content": {"type": "string"},
    "content_bytes": {"type": "integer", "minimum": 0},
    "name": {"type": ["string", "null"]},
    "tool_calls": {"type": ["array", "null"]},
    "tool_call_id": {"type": ["string", "null"]},
    "tokens": {"type": "integer", "minimum": 0},
    "is_compressed": {"type": "boolean"},
    "created_at": {"type": "integer"}
  },
  "required": ["id", "role", "tokens", "is_compressed", "created_at"]
})";

std::string OutputSchema() {
  const std::string conversation(kConversationSchema);
  const std::string message(kMessageSchema);
  return R"({
  "type": "object",
  "properties": {
    "success": {"type": "boolean"},
    "schema_version": {"type": "integer"},
    "conversation": )" +
         conversation + R"(,
    "message": {"anyOf": [{"type": "string"}, )" +
         message + R"(]},
    "messages": {"type": "array", "items": )" +
         message + R"(},
    "added": {"type": "integer", "minimum": 1},
    "actual_tokens": {"type": "integer", "minimum": 0},
    "actual_tokens_exact": {"type": "boolean"},
    "conversations": {"type": "array", "items": )" +
         conversation + R"(},
    "total": {"type": "integer", "minimum": 0},
    "showing": {"type": "integer", "minimum": 0},
    "next_cursor": {"type": ["string", "null"]},
    "deleted": {"type": "boolean"},
    "messages_deleted": {"type": "integer", "minimum": 0},
    "dependent_records_deleted": {"type": "integer", "minimum": 0},
    "error": {"type": "string"},
    "details": {"type": "array"}
  },
  "required": ["success"]
})";
}

// How often (in messages) add_message reports progress on a batch.
constexpr size_t kProgressEvery = 1000;

// The NewMessage of one message object (the tool's own arguments, or an
// item of "messages"); `path` prefixes the field names of errors.
std::optional<ToolOutput> ReadMessage(simdjson::dom::object source,
                                      const std::string& path,
                                      NewMessage& message) {
  const std::optional<std::string_view> role = StringArg(source, "role");
  if (!role.has_value()) return ToolValidationError(path + "role", "Required");
  auto parsed = ParseMessageRole(*role);
  if (!parsed.ok()) {
    return ToolValidationError(path + "role", parsed.status().message());
  }
  message.role = *parsed;
  if (auto name = StringArg(source, "name")) message.name = std::string(*name);
  if (auto id = StringArg(source, "tool_call_id")) {
    message.tool_call_id = std::string(*id);
  }
  if (auto calls = Arg(source, "tool_calls")) {
    message.tool_calls = ElementJson(*calls);
  }
  const std::optional<std::string_view> content = StringArg(source, "content");
  // An assistant turn may consist of tool calls alone.
  if (!content.has_value() && !message.tool_calls.has_value()) {
    return ToolValidationError(path + "content", "Required");
  }
  if (content.has_value()) message.content = std::string(*content);
  return std::nullopt;
}

ToolOutput Create(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::optional<std::string_view> title = StringArg(args, "title");
  if (!title.has_value()) return ToolValidationError("title", "Required");
  NewConversation request;
  request.title = std::string(*title);
  request.model = std::string(
      StringArg(args, "model").value_or(ctx.services().config.default_model));
  if (auto metadata = Arg(args, "metadata")) {
    request.metadata = ElementJson(*metadata);
  }
  auto created = ctx.services().conversations->Create(request);
  if (!created.ok()) {
    return LibraryError(created.status(), "Conversation",
                        {"title", "model", "metadata"});
  }
  ctx.Log(mcp::LogLevel::kInfo, "created conversation " + created->id);
  auto document = ConversationToJson(*created);
  if (!document.ok()) return ToolStatusError(document.status(), "Conversation");
  return Success(program::WithSuccess(
      *document,
      "Conversation \"" + created->title + "\" created successfully"));
}

ToolOutput AddMessage(simdjson::dom::object args, std::string_view id,
                      mcp::RequestContext& ctx) {
  ConversationStore& conversations = *ctx.services().conversations;
  const std::optional<simdjson::dom::element> batch = Arg(args, "messages");
  if (!batch.has_value()) {
    NewMessage message;
    if (auto error = ReadMessage(args, "", message)) return *error;
    auto added = conversations.AddMessage(id, message);
    if (!added.ok()) {
      return LibraryError(added.status(), "Conversation",
                          {"conversation_id", "role", "content", "name",
                           "tool_calls", "tool_call_id", "messages"});
    }
    auto document = AddMessageResultToJson(*added);
    if (!document.ok()) {
      return ToolStatusError(document.status(), "Conversation");
    }
    return Success(program::WithSuccess(*document));
  }
  for (std::string_view single :
       {"role", "content", "name", "tool_call_id", "tool_calls"}) {
    if (Arg(args, single).has_value()) {
      return ToolValidationError(
          single, "Give either messages or one message's fields, not both");
    }
  }
  simdjson::dom::array items;
  if (batch->get_array().get(items) != simdjson::SUCCESS) {
    return ToolValidationError("messages", "Expected array");
  }
  std::vector<NewMessage> messages;
  messages.reserve(items.size());
  const size_t total = items.size();
  size_t index = 0;
  for (simdjson::dom::element item : items) {
    if (ctx.Cancelled()) return ToolOutput{};
    simdjson::dom::object object;
    const std::string path = "messages[" + std::to_string(index) + "].";
    if (item.get_object().get(object) != simdjson::SUCCESS) {
      return ToolValidationError(path.substr(0, path.size() - 1),
                                 "Expected object");
    }
    NewMessage& message = messages.emplace_back();
    if (auto error = ReadMessage(object, path, message)) return *error;
    ++index;
    if (index % kProgressEvery == 0) {
      ctx.Progress(static_cast<double>(index), static_cast<double>(total),
                   "messages read");
    }
  }
  if (ctx.Cancelled()) return ToolOutput{};
  auto added = conversations.AddMessages(id, messages);
  if (!added.ok()) {
    return LibraryError(added.status(), "Conversation",
                        {"conversation_id", "messages"});
  }
  ctx.Progress(static_cast<double>(total), static_cast<double>(total),
               "messages added");
  auto document = AddMessagesResultToJson(*added);
  if (!document.ok()) return ToolStatusError(document.status(), "Conversation");
  return Success(program::WithSuccess(
      *document, std::nullopt,
      "\"added\":" + std::to_string(added->messages.size())));
}

ToolOutput Get(simdjson::dom::object args, std::string_view id,
               mcp::RequestContext& ctx) {
  const bool with_messages = BoolArg(args, "include_messages").value_or(true);
  auto detail = ctx.services().conversations->Get(id, with_messages);
  if (!detail.ok()) {
    return LibraryError(detail.status(), "Conversation", {"conversation_id"});
  }
  auto document = ConversationDetailToJson(*detail, with_messages);
  if (!document.ok()) return ToolStatusError(document.status(), "Conversation");
  return Success(program::WithSuccess(*document));
}

ToolOutput List(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const int64_t limit =
      IntArg(args, "limit").value_or(ConversationLimits::kDefaultListLimit);
  if (limit < 1 || limit > ConversationLimits::kMaxListLimit) {
    return ToolValidationError(
        "limit", "Must be between 1 and " +
                     std::to_string(ConversationLimits::kMaxListLimit));
  }
  auto page = ctx.services().conversations->List(
      static_cast<uint32_t>(limit), StringArg(args, "cursor").value_or(""));
  if (!page.ok()) {
    return LibraryError(page.status(), "Conversation", {"limit", "cursor"});
  }
  auto document = ConversationPageToJson(*page);
  if (!document.ok()) return ToolStatusError(document.status(), "Conversation");
  return Success(program::WithSuccess(*document));
}

ToolOutput Delete(std::string_view id, mcp::RequestContext& ctx) {
  auto deleted = ctx.services().conversations->Delete(id);
  if (!deleted.ok()) {
    return LibraryError(deleted.status(), "Conversation", {"conversation_id"});
  }
  ctx.Log(mcp::LogLevel::kInfo, "deleted conversation " + std::string(id));
  auto document = DeletedConversationToJson(*deleted);
  if (!document.ok()) return ToolStatusError(document.status(), "Conversation");
  return Success(program::WithSuccess(
      *document, "Conversation \"" + deleted->conversation.title +
                     "\" deleted successfully"));
}

ToolOutput Handle(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::string_view action = StringArg(args, "action").value_or("");
  if (action == "create") return Create(args, ctx);
  if (action == "list") return List(args, ctx);
  if (action != "add_message" && action != "get" && action != "delete") {
    return ToolValidationError(
        "action",
        "Invalid enum value. Expected 'create' | 'add_message' | 'get' | "
        "'list' | 'delete', received '" +
            std::string(action) + "'");
  }
  const std::optional<std::string_view> id = StringArg(args, "conversation_id");
  if (!id.has_value()) {
    return ToolValidationError("conversation_id", "Required");
  }
  if (action == "add_message") return AddMessage(args, *id, ctx);
  if (action == "get") return Get(args, *id, ctx);
  return Delete(*id, ctx);
}

}  // namespace

const mcp::ToolSpec& ManageConversationTool() {
  static const std::string* const kOutputSchema =
      new std::string(OutputSchema());
  static const mcp::ToolSpec kSpec{
      .name = "manage_conversation",
      .title = "Manage conversations",
      .description =
          "Create, retrieve, list and delete conversations and add messages "
          "to them, with automatic token tracking. Actions: create (title, "
          "model, metadata), add_message (conversation_id, role, content; or "
          "messages for several at once), get (conversation_id, "
          "include_messages), list (limit, cursor), delete "
          "(conversation_id). Every message's tokens are counted when it is "
          "added, with the tokenizer of the conversation's model.",
      .input_schema = kInputSchema,
      .output_schema = *kOutputSchema,
      .handler = &Handle,
      .read_only = false,
      .destructive = true,
      .idempotent = false,
  };
  return kSpec;
}

}  // namespace ctxkit::tools
