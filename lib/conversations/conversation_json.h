// What the public conversation writers (conversations.h, "JSON documents")
// share with the rest of the library: the conversation and message objects
// as a JsonWriter's next value, and the reader of the C ABI's batch of new
// messages. Thread safety: pure functions of their arguments.

#ifndef CTXKIT_LIB_CONVERSATIONS_CONVERSATION_JSON_H_
#define CTXKIT_LIB_CONVERSATIONS_CONVERSATION_JSON_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/conversations.h"
#include "lib/json/json_writer.h"

namespace ctxkit::internal {

// The conversation / message objects of conversations.h as the writer's
// next value. Errors as the public writers' (the writer may then hold a
// partial value: discard it).
absl::Status WriteConversationJson(JsonWriter& writer, const Conversation& c);
// Without `include_content`, "content_bytes" (its size) stands in place of
// "content".
absl::Status WriteMessageJson(JsonWriter& writer, const Message& m,
                              bool include_content);

// Reads a JSON array of messages to add:
//   [{"role": "user"|"assistant"|"system"|"tool", "content": string,
//     "name"?: string, "tool_calls"?: array (kept as minified JSON text),
//     "tool_call_id"?: string, "is_compressed"?: bool}, ...]
// (absent and null optional members are the same). Only the JSON shape is
// checked here; ConversationStore::AddMessages checks the values.
// INVALID_ARGUMENT naming the path ("messages[2].role") for malformed JSON,
// a non-array, a non-object element, a missing or mistyped member, a member
// not listed above (with the closest listed one) or an unknown role;
// RESOURCE_EXHAUSTED for a document beyond the parser.
absl::StatusOr<std::vector<NewMessage>> ParseNewMessagesJson(
    std::string_view json);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CONVERSATIONS_CONVERSATION_JSON_H_
