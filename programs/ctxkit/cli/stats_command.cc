// `stats` and `conv stats`: the figures of a store, from the totals the
// parts keep up to date with every write (no scan of messages, except for
// one conversation's timeline). `conv stats [ID]` prints the library's
// token-stats document (conversations.h: the bytes the C ABI returns and the
// token-stats resources serve); `stats` prints the aggregate one with the
// cache's figures and appends the cache's and the references' documents.

#include <memory>
#include <optional>
#include <string>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/record_flags.h"
#include "programs/ctxkit/cli/store_location.h"
#include "programs/ctxkit/tools/record_json.h"

namespace ctxkit::program {

const Flag kTimelinePointsFlag{
    "--timeline-points",
    "N",
    "with ID: keep at most N timeline points (default 0: one per message)",
    {},
    true};

Status RunConvStats(const Args& args, std::ostream& out) {
  auto points = NumberFlag(args, kTimelinePointsFlag, "max_timeline_points");
  if (!points.ok()) return points.status();
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location, StoreCreation::kNever);
  if (!store.ok()) return store.status();
  auto conversations = ConversationStore::Open(**store);
  if (!conversations.ok()) return conversations.status();
  if (!args.positional().empty()) {
    auto stats =
        (*conversations)
            ->ConversationStats(args.positional()[0],
                                static_cast<size_t>(points->value_or(0)));
    if (!stats.ok()) return stats.status();
    return PrintDocument(ConversationStatsToJson(*stats), out);
  }
  auto stats = (*conversations)->AggregateStats();
  if (!stats.ok()) return stats.status();
  return PrintDocument(AggregateStatsToJson(*stats), out);
}

Status RunStats(const Args& args, std::ostream& out) {
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location, StoreCreation::kNever);
  if (!store.ok()) return store.status();
  auto conversations = ConversationStore::Open(**store);
  if (!conversations.ok()) return conversations.status();
  auto references = ReferenceStore::Open(**store);
  if (!references.ok()) return references.status();
  auto cache = Cache::Open(**store);
  if (!cache.ok()) return cache.status();

  auto aggregate = (*conversations)->AggregateStats();
  if (!aggregate.ok()) return aggregate.status();
  auto cache_stats = (*cache)->Stats();
  if (!cache_stats.ok()) return cache_stats.status();
  auto cache_json = CacheStatsToJson(*cache_stats);
  if (!cache_json.ok()) return cache_json.status();
  auto reference_stats = (*references)->Stats();
  if (!reference_stats.ok()) return reference_stats.status();
  auto references_json = ReferenceStatsToJson(*reference_stats);
  if (!references_json.ok()) return references_json.status();

  auto document = AggregateStatsToJson(*aggregate, &*cache_stats);
  if (!document.ok()) return document.status();
  out << AppendMembers(*document, "\"cache\":" + *cache_json +
                                      ",\"references\":" + *references_json)
      << "\n";
  return Status::Ok();
}

}  // namespace ctxkit::program
