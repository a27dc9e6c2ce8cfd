#include "lib/cache/delete_hook.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/cache/cache_format.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

class CacheDeleteHook final : public ConversationDeleteHook {
 public:
  explicit CacheDeleteHook(CacheDbs dbs) : dbs_(dbs) {}

  absl::StatusOr<uint64_t> OnConversationDeleted(
      WriteTransaction& txn, std::string_view conversation_id) const override {
    if (conversation_id.empty()) return uint64_t{0};
    // Collect first: removing while a cursor walks the same database would
    // invalidate its position.
    std::vector<std::string> keys;
    {
      absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, dbs_.conv);
      CTXKIT_RETURN_IF_ERROR(cursor.status());
      for (cursor->Seek(conversation_id);
           cursor->Valid() && cursor->key().starts_with(conversation_id);
           cursor->Next()) {
        keys.emplace_back(cursor->key().substr(conversation_id.size()));
      }
      CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
    }
    uint64_t removed = 0;
    for (const std::string& key : keys) {
      CTXKIT_ASSIGN_OR_RETURN(std::optional<EntryMeta> meta,
                              FindMeta(dbs_, txn, key));
      if (!meta) continue;
      // An index row for another conversation whose id merely starts with
      // this one cannot occur (ids are fixed-length UUIDs), but be exact.
      if (meta->conversation_id != conversation_id) continue;
      if (absl::Status s =
              RemoveEntry(dbs_, txn, key, *meta, RemoveReason::kExplicit);
          !s.ok()) {
        return s;
      }
      ++removed;
    }
    return removed;
  }

 private:
  const CacheDbs dbs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ConversationDeleteHook>> MakeCacheDeleteHook(
    Store& store) {
  absl::StatusOr<CacheDbs> dbs = CacheDbs::Open(store);
  if (!dbs.ok()) return dbs.status();
  return std::unique_ptr<ConversationDeleteHook>(
      std::make_unique<CacheDeleteHook>(*dbs));
}

}  // namespace ctxkit::internal
