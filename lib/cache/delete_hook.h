// The cache's part in deleting a conversation: entries stored with that
// conversation_id go in the conversation store's own write transaction.

#ifndef CTXKIT_LIB_CACHE_DELETE_HOOK_H_
#define CTXKIT_LIB_CACHE_DELETE_HOOK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "ctxkit/store.h"
#include "lib/store/conversation_hook.h"

namespace ctxkit::internal {

// A hook that removes every cache entry whose conversation_id is the deleted
// conversation, with its content, index rows and share of the statistics
// (entries, bytes, hits, tokens saved: exactly as Cache::Clear would).
// Lifetime counters (lifetime hits, misses, tokens saved) are kept: those
// savings happened.
//
// Hit counts still waiting in an open Cache's memory batch for a removed entry
// are dropped when that Cache flushes (each entry carries a creation serial,
// so they can never be credited to a later entry under the same key).
//
// Opens the cache's sub-databases, so call it outside any Update(). The hook
// holds only database handles: it stays valid as long as `store` does and is
// thread-safe. Errors: those of Store::OpenDatabase.
absl::StatusOr<std::unique_ptr<ConversationDeleteHook>> MakeCacheDeleteHook(
    Store& store);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CACHE_DELETE_HOOK_H_
