// The records of the conversations part: keys, the binary conversation and
// message records, and the id and error helpers every file of the part
// shares.
//
// On-disk layout (all integers in values are LEB128 varints, "svarint" a
// zig-zag varint, "lp" a varint length followed by that many bytes; every
// value starts with a version byte, 1 here, so later releases can migrate):
//
// "conversations"            key: conversation id (36 bytes, lower case)
//   1 | svarint created_at | svarint updated_at | lp title | lp model |
//   lp metadata | varint last seq handed out | varint message_count |
//   varint user, assistant, system, tool tokens | varint compressed_count |
//   varint compressed_tokens | lp last_message | svarint last_message_at
// "conversations.messages"   key: conversation id + big-endian u64 seq, so a
//                            conversation's messages are one ordered range
//   1 | lp message id | u8 role | u8 flags (1 compressed, 2 has name,
//   4 has tool_calls, 8 has tool_call_id) | varint tokens |
//   svarint created_at | lp content | [lp name] [lp tool_calls]
//   [lp tool_call_id] (present as the flags say)
// "conversations.message_ids" key: message id (36 bytes)
//   value: conversation id + big-endian u64 seq (the messages key)
// "conversations.by_created" key: big-endian OrderedFromSigned(created_at)
//                            + conversation id; value empty. Listing walks
//                            it backwards; a list cursor is one such key.
// "conversations.stats"      store-wide totals, changed in the transaction
//                            of every write:
//   "g"                   1 | varint conversations | varint messages |
//                         varint user, assistant, system, tool tokens |
//                         varint compressed_messages | varint compressed_tokens
//   "m" + model name      1 | varint conversations | varint messages |
//                         varint user, assistant, system, tool tokens
//                         (removed when everything is 0)
//   "d" + big-endian OrderedFromSigned(UTC day)
//                         1 | varint messages | varint input | varint output
//                         (removed when everything is 0)
// "conversations.compacted_views" key: conversation id + big-endian u64
//                            version; layout in compacted_views.cc

#ifndef CTXKIT_LIB_CONVERSATIONS_CONVERSATION_RECORDS_H_
#define CTXKIT_LIB_CONVERSATIONS_CONVERSATION_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/conversations.h"

namespace ctxkit::internal {

inline constexpr uint8_t kRecordVersion = 1;
inline constexpr size_t kIdSize = 36;
inline constexpr size_t kMessageKeySize = kIdSize + 8;
inline constexpr size_t kCreatedKeySize = 8 + kIdSize;

inline constexpr uint8_t kFlagCompressed = 1;
inline constexpr uint8_t kFlagName = 2;
inline constexpr uint8_t kFlagToolCalls = 4;
inline constexpr uint8_t kFlagToolCallId = 8;

inline constexpr char kGlobalStatsKey[] = "g";
inline constexpr char kModelStatsPrefix = 'm';
inline constexpr char kDayStatsPrefix = 'd';

// DATA_LOSS: "conversation store record is corrupt: <what>".
absl::Status DataLoss(std::string_view what);
// NOT_FOUND naming conversation `id`.
absl::Status ConversationNotFound(std::string_view id);

// Printable ASCII only, so an echoed value can never break a message.
bool IsUuidPrintable(std::string_view s);

// A caller's id, checked (INVALID_ARGUMENT naming `field`) and lower-cased
// (IsUuid accepts either case; keys are lower case).
absl::StatusOr<std::string> NormalizeId(std::string_view field,
                                        std::string_view id);

// Keys of "conversations.by_created" and of the day and model records of
// "conversations.stats" (see the layout above).
std::string CreatedKey(int64_t created_at, std::string_view id);
std::string DayKey(int64_t day);
std::string ModelKey(std::string_view model);

inline size_t RoleIndex(MessageRole role) { return static_cast<size_t>(role); }
inline bool IsInputRole(MessageRole role) {
  return role != MessageRole::kAssistant;
}

// The conversation record of `c`; `next_seq` is the last seq handed out.
std::string EncodeConversation(const Conversation& c, uint64_t next_seq);
// Fills `c` (and its id, `id`) from its record; DATA_LOSS if malformed.
absl::Status DecodeConversation(std::string_view id, std::string_view value,
                                Conversation* c, uint64_t* next_seq);

// The token counter of `c` that messages of `role` add to.
uint64_t& RoleTokens(Conversation& c, MessageRole role);

// A decoded message whose strings point into the record.
struct MessageView {
  std::string_view id;
  MessageRole role = MessageRole::kUser;
  uint8_t flags = 0;
  uint64_t tokens = 0;
  int64_t created_at = 0;
  std::string_view content;
  std::string_view name;
  std::string_view tool_calls;
  std::string_view tool_call_id;
  bool compressed() const { return (flags & kFlagCompressed) != 0; }
  // Whether the message makes at least one tool call: it has tool_calls
  // and that array (valid JSON, checked when the message was added) is not
  // empty.
  bool makes_calls() const;
};

std::string EncodeMessage(std::string_view id, const NewMessage& m,
                          uint64_t tokens, int64_t created_at);
std::string EncodeMessageView(const MessageView& m);
// The message record stored under `key`; DATA_LOSS (naming the message when
// `key` is a messages key) if malformed.
absl::StatusOr<MessageView> DecodeMessage(std::string_view key,
                                          std::string_view value);
// DATA_LOSS naming the message when a text of `m` is not UTF-8. Not part of
// DecodeMessage, which counting paths call on every message: only where the
// text is handed out (Get with messages, the last-message preview) and in
// the store check.
absl::Status CheckMessageText(std::string_view key, const MessageView& m);
Message ToMessage(std::string_view key, const MessageView& v);

// The first kLastMessagePreviewChars code points of (valid UTF-8) `content`,
// with "..." when cut.
std::string Preview(std::string_view content);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CONVERSATIONS_CONVERSATION_RECORDS_H_
