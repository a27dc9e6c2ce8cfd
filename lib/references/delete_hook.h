// The references part's share of deleting a conversation: ConversationStore
// calls this hook inside its own write transaction, so a conversation and
// its references go together or not at all.

#ifndef CTXKIT_LIB_REFERENCES_DELETE_HOOK_H_
#define CTXKIT_LIB_REFERENCES_DELETE_HOOK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "ctxkit/store.h"
#include "lib/store/conversation_hook.h"

namespace ctxkit::internal {

// A hook whose OnConversationDeleted(txn, conversation_id) removes every
// reference of `conversation_id` with its search postings, secondary index
// entries and statistics (the conversation's and the global), and returns how
// many references went (0 when it had none; an empty or unknown id is not an
// error). It opens the references part's sub-databases now, so call it
// outside any transaction (as ConversationStore::Open does); errors are
// those of opening them (see OpenReferenceDbs). `store` must outlive the
// hook. The hook is immutable and thread-safe.
absl::StatusOr<std::unique_ptr<ConversationDeleteHook>> MakeReferenceDeleteHook(
    Store& store);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_REFERENCES_DELETE_HOOK_H_
