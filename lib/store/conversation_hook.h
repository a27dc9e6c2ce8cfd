// How parts that keep data belonging to a conversation (references, cached
// results) take part in deleting it: ConversationStore::Delete calls each
// part's hook inside its own write transaction, so a conversation and
// everything that belongs to it go together or not at all.

#ifndef CTXKIT_LIB_STORE_CONVERSATION_HOOK_H_
#define CTXKIT_LIB_STORE_CONVERSATION_HOOK_H_

#include <cstdint>
#include <string_view>

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
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_CONVERSATION_HOOK_H_
