// The context graph's share of deleting a conversation: ConversationStore
// calls this hook inside its own write transaction, so a conversation and
// the context it backs go together or not at all.

#ifndef CTXKIT_LIB_GRAPH_DELETE_HOOK_H_
#define CTXKIT_LIB_GRAPH_DELETE_HOOK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "ctxkit/store.h"
#include "lib/store/conversation_hook.h"

namespace ctxkit::internal {

// A hook whose OnConversationDeleted(txn, conversation_id) deletes the
// context backed by that conversation, if any, with everything of the
// graph's that belongs to it (DeleteContextRecords), and returns how many
// records went. It opens the graph's sub-databases now, so call it outside
// any transaction; on a read-only store made before the graph existed it
// does nothing, as no context can exist there. Errors: those of opening
// them. `store` must outlive the hook, which is immutable and thread-safe.
absl::StatusOr<std::unique_ptr<ConversationDeleteHook>> MakeGraphDeleteHook(
    Store& store);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_DELETE_HOOK_H_
