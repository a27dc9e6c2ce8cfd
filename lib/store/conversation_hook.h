// How parts that keep data belonging to a conversation (references, cached
// results, a context of the graph) take part in deleting it or some of its
// messages: ConversationStore::Delete and DeleteMessages call each part's
// hook inside their own write transaction, so a conversation or message and
// everything that belongs to it go together or not at all.

#ifndef CTXKIT_LIB_STORE_CONVERSATION_HOOK_H_
#define CTXKIT_LIB_STORE_CONVERSATION_HOOK_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

class ConversationDeleteHook {
 public:
  virtual ~ConversationDeleteHook() = default;

  // Deletes everything of this part that belongs to `conversation_id`, in
  // `txn`, keeping the part's indexes and statistics consistent. Returns how
  // many records went. Like any function run by Store::Update, it may run
  // twice (map growth) and must have no effect outside `txn`. Thread-safe.
  virtual absl::StatusOr<uint64_t> OnConversationDeleted(
      WriteTransaction& txn, std::string_view conversation_id) const = 0;

  // Deletes what this part keeps for message `seq` of `conversation_id`,
  // which ConversationStore::DeleteMessages is deleting in `txn` (same
  // rules as above); `content` is the message's text (what an index of it
  // must take back), valid during the call. Parts that keep nothing per
  // message keep the default.
  virtual absl::Status OnMessageDeleted(WriteTransaction& txn,
                                        std::string_view conversation_id,
                                        uint64_t seq,
                                        std::string_view content) const {
    (void)txn;
    (void)conversation_id;
    (void)seq;
    (void)content;
    return absl::OkStatus();
  }
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_CONVERSATION_HOOK_H_
