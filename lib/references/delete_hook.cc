#include "lib/references/delete_hook.h"

#include <memory>
#include <string>
#include <vector>

#include "lib/references/index.h"
#include "lib/status/status_macros.h"

namespace ctxkit::internal {
namespace {

class ReferenceDeleteHook final : public ConversationDeleteHook {
 public:
  explicit ReferenceDeleteHook(ReferenceDbs dbs) : dbs_(dbs) {}

  absl::StatusOr<uint64_t> OnConversationDeleted(
      WriteTransaction& txn, std::string_view conversation_id) const override {
    if (conversation_id.empty()) return 0;
    CTXKIT_ASSIGN_OR_RETURN(
        std::vector<std::string> ids,
        ConversationReferenceIds(txn, dbs_, conversation_id));
    uint64_t deleted = 0;
    for (const std::string& id : ids) {
      CTXKIT_ASSIGN_OR_RETURN(bool gone, DeleteReferenceInTxn(txn, dbs_, id));
      deleted += gone ? 1 : 0;
    }
    return deleted;
  }

 private:
  const ReferenceDbs dbs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ConversationDeleteHook>> MakeReferenceDeleteHook(
    Store& store) {
  CTXKIT_ASSIGN_OR_RETURN(ReferenceDbs dbs, OpenReferenceDbs(store));
  return std::unique_ptr<ConversationDeleteHook>(
      std::make_unique<ReferenceDeleteHook>(dbs));
}

}  // namespace ctxkit::internal
