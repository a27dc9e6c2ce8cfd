// `conv create|add|get|list|update|delete`: conversations and their
// messages (ctxkit::ConversationStore). Every command prints the library's
// document for its result (conversations.h, "JSON documents": the bytes the
// C ABI returns and manage_conversation wraps) on one line.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ctxkit/conversations.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/record_flags.h"
#include "programs/ctxkit/cli/store_location.h"

namespace ctxkit::program {

const Flag kConvTitleFlag{"--title", "TEXT", "the conversation's title"};
const Flag kConvModelFlag{
    .name = "--model",
    .value_name = "MODEL",
    .help =
        "the model whose tokenizer counts its messages (default "
        "claude-3-5-sonnet); fixed for the conversation's life",
    .check = CheckModelFlag};
const Flag kConvMetadataFlag{"--metadata", "JSON",
                             "a JSON object stored with it (default {})"};
const Flag kRoleFlag{"--role", "ROLE", "user, assistant, system or tool"};
const Flag kNameFlag{"--name", "NAME", "the participant's name"};
const Flag kToolCallIdFlag{"--tool-call-id", "ID",
                           "the call a tool message answers"};
const Flag kToolCallsFlag{"--tool-calls", "JSON",
                          "an assistant message's OpenAI tool calls (a JSON "
                          "array)"};
const Flag kCompressedFlag{"--compressed", "",
                           "mark the message as a compressed one"};
const Flag kNoMessagesFlag{"--no-messages", "",
                           "leave the messages out (actual_tokens stays)"};
const Flag kListLimitFlag{
    .name = "--limit",
    .value_name = "N",
    .help = "conversations per page, 1..1000 (default 20)",
    .is_number = true,
    .library_range = true};
const Flag kCursorFlag{"--cursor", "CURSOR",
                       "continue after an earlier page (its next_cursor)"};

namespace {

struct OpenedConversations {
  std::unique_ptr<Store> store;
  std::unique_ptr<ConversationStore> conversations;
};

StatusOr<OpenedConversations> OpenConversations(const Args& args,
                                                StoreCreation creation) {
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location, creation);
  if (!store.ok()) return store.status();
  OpenedConversations opened;
  opened.store = *std::move(store);
  auto conversations = ConversationStore::Open(*opened.store);
  if (!conversations.ok()) return conversations.status();
  opened.conversations = *std::move(conversations);
  return opened;
}

// The one positional ID of a command; the parser guarantees it is there.
const std::string& IdArgument(const Args& args) { return args.positional()[0]; }

}  // namespace

Status RunConvCreate(const Args& args, std::ostream& out) {
  NewConversation request;
  if (const std::string* title = args.Value(kConvTitleFlag.name)) {
    request.title = *title;
  }
  if (const std::string* model = args.Value(kConvModelFlag.name)) {
    request.model = *model;
  }
  if (const std::string* metadata = args.Value(kConvMetadataFlag.name)) {
    request.metadata = *metadata;
  }
  auto opened = OpenConversations(args, StoreCreation::kIfMissing);
  if (!opened.ok()) return opened.status();
  auto created = opened->conversations->Create(request);
  if (!created.ok()) return created.status();
  return PrintDocument(ConversationToJson(*created), out);
}

StatusOr<MessageRole> RoleOf(const Args& args) {
  const std::string* role = args.Value(kRoleFlag.name);
  if (role == nullptr) {
    return Status(StatusCode::kInvalidArgument,
                  "role: missing; give --role user|assistant|system|tool");
  }
  return ParseMessageRole(*role);
}

Status RunConvAdd(const Args& args, std::ostream& out) {
  NewMessage message;
  auto role = RoleOf(args);
  if (!role.ok()) return role.status();
  message.role = *role;
  if (const std::string* name = args.Value(kNameFlag.name)) {
    message.name = *name;
  }
  if (const std::string* id = args.Value(kToolCallIdFlag.name)) {
    message.tool_call_id = *id;
  }
  if (const std::string* calls = args.Value(kToolCallsFlag.name)) {
    message.tool_calls = *calls;
  }
  message.is_compressed = args.Has(kCompressedFlag.name);
  // An assistant turn may consist of tool calls alone.
  auto content =
      ReadContent(args, 1, "content", ConversationLimits::kMaxContentBytes,
                  message.tool_calls.has_value());
  if (!content.ok()) return content.status();
  if (content->has_value()) message.content = **std::move(content);

  auto opened = OpenConversations(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto added = opened->conversations->AddMessage(IdArgument(args), message);
  if (!added.ok()) return added.status();
  return PrintDocument(AddMessageResultToJson(*added), out);
}

Status RunConvGet(const Args& args, std::ostream& out) {
  auto opened = OpenConversations(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  const bool with_messages = !args.Has(kNoMessagesFlag.name);
  auto detail = opened->conversations->Get(IdArgument(args), with_messages);
  if (!detail.ok()) return detail.status();
  return PrintDocument(ConversationDetailToJson(*detail, with_messages), out);
}

Status RunConvList(const Args& args, std::ostream& out) {
  auto limit = Uint32NumberFlag(args, kListLimitFlag, "limit", 1,
                                ConversationLimits::kMaxListLimit);
  if (!limit.ok()) return limit.status();
  const uint32_t page_size =
      limit->value_or(ConversationLimits::kDefaultListLimit);
  const std::string* cursor = args.Value(kCursorFlag.name);
  auto opened = OpenConversations(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto page = opened->conversations->List(
      page_size, cursor == nullptr ? std::string_view() : *cursor);
  if (!page.ok()) return page.status();
  return PrintDocument(ConversationPageToJson(*page), out);
}

Status RunConvUpdate(const Args& args, std::ostream& out) {
  ConversationUpdate update;
  if (const std::string* title = args.Value(kConvTitleFlag.name)) {
    update.title = *title;
  }
  if (const std::string* metadata = args.Value(kConvMetadataFlag.name)) {
    update.metadata = *metadata;
  }
  auto opened = OpenConversations(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto updated = opened->conversations->Update(IdArgument(args), update);
  if (!updated.ok()) return updated.status();
  return PrintDocument(ConversationToJson(*updated), out);
}

Status RunConvDelete(const Args& args, std::ostream& out) {
  auto opened = OpenConversations(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto deleted = opened->conversations->Delete(IdArgument(args));
  if (!deleted.ok()) return deleted.status();
  return PrintDocument(DeletedConversationToJson(*deleted), out);
}

}  // namespace ctxkit::program
