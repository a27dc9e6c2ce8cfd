// Internals of ConversationStore shared with its tests and with the parts
// that build on it.

#ifndef CTXKIT_LIB_CONVERSATIONS_CONVERSATION_STORE_INTERNAL_H_
#define CTXKIT_LIB_CONVERSATIONS_CONVERSATION_STORE_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/store/conversation_hook.h"

namespace ctxkit::internal {

// ConversationStore::Open with the given delete hooks instead of the
// references and cache parts' ones, so that tests can observe and fail the
// cascade. Errors as Open.
absl::StatusOr<std::unique_ptr<ConversationStore>>
OpenConversationStoreWithHooks(
    Store& store, ConversationOptions options,
    std::vector<std::unique_ptr<ConversationDeleteHook>> hooks);

// The UTC day (days since 1970-01-01, rounding towards minus infinity) of a
// time in ms since the epoch, and its "YYYY-MM-DD" form.
int64_t DayOfMillis(int64_t millis);
std::string DateOfDay(int64_t day);

// What the message-id index db stores and the messages db is keyed by:
// the conversation id followed by the big-endian sequence number.
std::string MessageKey(std::string_view conversation_id, uint64_t seq);

// ---- Writing conversations inside another part's transaction ----
//
// The context graph keeps its own records beside a conversation and writes
// both in one commit, so that a crash leaves both or neither. The work that
// needs no transaction (checking, token counting) is done first, outside
// the writer lock.

// A batch checked, counted with `model`'s tokenizer and encoded, with its
// message ids and time fixed; what AppendPreparedMessages writes.
struct PreparedMessages {
  std::string model;
  int64_t now = 0;
  std::vector<Message> messages;  // conversation_id and seq not yet set
  std::vector<std::string> values;
  std::string preview;
};

// What ConversationStore::AddMessages checks and counts, for a conversation
// whose model is `model`. INVALID_ARGUMENT naming the field (messages[i].…
// unless `single`); thread-safe.
absl::StatusOr<PreparedMessages> PrepareMessages(
    const ConversationStore& conversations, std::string_view model,
    const NewMessage* batch, size_t count, bool single);

// Appends `prepared` to conversation `id` (normalized, see
// NormalizeConversationId) in `txn`, with the statistics AddMessages keeps.
// NOT_FOUND naming the conversation; ABORTED when its model is no longer
// `prepared.model` (prepare again). `prepared` is left intact, so a retried
// transaction can append it again.
absl::StatusOr<AddMessagesResult> AppendPreparedMessages(
    const ConversationStore& conversations, WriteTransaction& txn,
    const std::string& id, const PreparedMessages& prepared);

// ConversationStore::Create split the same way: CheckNewConversation checks
// and fills in the id and times (INVALID_ARGUMENT naming the field);
// WriteNewConversation writes the result in `txn`.
absl::StatusOr<Conversation> CheckNewConversation(
    const ConversationStore& conversations, const NewConversation& c);
absl::Status WriteNewConversation(const ConversationStore& conversations,
                                  WriteTransaction& txn, const Conversation& c);

// ConversationStore::Delete of conversation `id` (normalized) in `txn`,
// with its delete hooks (so a context graph's records go too). NOT_FOUND
// naming it.
absl::StatusOr<DeletedConversation> DeleteConversationIn(
    const ConversationStore& conversations, WriteTransaction& txn,
    const std::string& id);

// Conversation `id` (normalized) as stored in `txn`, and the last seq it
// handed out. NOT_FOUND naming it.
absl::Status ReadConversationIn(const ConversationStore& conversations,
                                const Transaction& txn, const std::string& id,
                                Conversation* c, uint64_t* last_seq);

// The newest `limit` messages of conversation `id` (normalized) whose seq
// is below `before_seq` (0: all), oldest first, as stored in `txn`.
// DATA_LOSS for a damaged message.
absl::StatusOr<std::vector<Message>> NewestMessagesIn(
    const ConversationStore& conversations, const Transaction& txn,
    const std::string& id, uint64_t before_seq, size_t limit);

// ---- For compacted_views.cc ----

// The parts of a ConversationStore's state the compacted views use.
struct CompactedViewContext {
  Store* store = nullptr;
  Database conversations;
  // "conversations.compacted_views"; invalid on a read-only store made
  // before views existed (which then has none).
  Database views;
  const ConversationOptions* options = nullptr;  // its clock
};
CompactedViewContext CompactedViewContextOf(
    const ConversationStore::Impl& impl);

// A caller's conversation id checked (INVALID_ARGUMENT naming `field`) and
// lower-cased, exactly as the other methods check theirs.
absl::StatusOr<std::string> NormalizeConversationId(std::string_view field,
                                                    std::string_view id);

// Conversation `id` (normalized) in `txn` and the last seq it handed out;
// NOT_FOUND naming it.
absl::Status ReadConversationRecord(const Transaction& txn,
                                    Database conversations, std::string_view id,
                                    Conversation* c, uint64_t* last_seq);

// Deletes every compacted view of conversation `id` in `txn` (Delete's
// transaction); returns how many. Defined in compacted_views.cc.
absl::StatusOr<uint64_t> DeleteCompactedViews(WriteTransaction& txn,
                                              Database views,
                                              std::string_view id);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CONVERSATIONS_CONVERSATION_STORE_INTERNAL_H_
