// CheckStore: the page walk of lib/store, then each part's recount.

#include "ctxkit/store_check.h"

#include <utility>

#include "lib/cache/cache_check.h"
#include "lib/conversations/conversation_check.h"
#include "lib/graph/graph_check.h"
#include "lib/references/index_check.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/page_check.h"
#include "lib/store/store_impl.h"
#include "lib/store/store_internal.h"

namespace ctxkit {
namespace {

absl::StatusOr<StoreCheckReport> Check(Store& store) {
  internal::StoreImpl& impl = internal::StoreAccess::Impl(store);
  CTXKIT_ASSIGN_OR_RETURN(internal::PageCheckSummary pages, impl.CheckPages());
  StoreCheckReport report;
  report.path = impl.path();
  report.transaction_id = pages.txnid;
  report.page_size = pages.page_size;
  report.pages = pages.pages;
  report.used_pages = pages.used_pages;
  report.free_pages = pages.free_pages;
  report.unaccounted_pages = pages.unaccounted_pages;
  for (internal::TreeCheck& t : pages.trees) {
    report.trees.push_back({std::move(t.name), t.record.entries,
                            t.record.branch_pages, t.record.leaf_pages,
                            t.record.overflow_pages, t.record.depth});
  }

  // Each recount reads its own snapshot, taken after the walk's: a part is
  // consistent within itself at every commit, so no false alarm comes of it.
  internal::ConversationCheckSummary conversations;
  CTXKIT_RETURN_IF_ERROR(
      internal::CheckConversationTotals(store, &conversations));
  report.conversations = conversations.conversations;
  report.messages = conversations.messages;
  internal::IndexCheckSummary references;
  CTXKIT_RETURN_IF_ERROR(internal::CheckReferenceIndex(store, &references));
  report.references = references.references;
  internal::CacheCheckSummary cache;
  CTXKIT_RETURN_IF_ERROR(internal::CheckCacheTotals(store, &cache));
  report.cache_entries = cache.entries;
  internal::GraphCheckSummary graph;
  CTXKIT_RETURN_IF_ERROR(internal::CheckGraph(store, &graph));
  report.contexts = graph.contexts;
  report.relationships = graph.relationships;
  return report;
}

}  // namespace

StatusOr<StoreCheckReport> CheckStore(Store& store) {
  return internal::ToPublic(Check(store));
}

}  // namespace ctxkit
