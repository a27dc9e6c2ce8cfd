// `stats` and `conv stats`: the figures of a store, from the totals the
// parts keep up to date with every write (no scan of messages, except for
// one conversation's timeline). Shapes follow seed 000's token-stats
// resources, written by tools/stats_json.h, which the MCP resources share;
// `stats` adds the cache's and the references' documents.

#include <memory>
#include <optional>
#include <string>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/host/record_common.h"
#include "programs/ctxkit/host/store_location.h"
#include "programs/ctxkit/tools/stats_json.h"

namespace ctxkit::program {

const Flag kTimelinePointsFlag{
    "--timeline-points", "N",
    "with ID: keep at most N timeline points (default 0: one per message)",
    {},
    true};

Status RunConvStats(const Args& args, std::ostream& out) {
  auto points = NumberFlag(args, kTimelinePointsFlag, "max_timeline_points");
  if (!points.ok()) return points.status();
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location);
  if (!store.ok()) return store.status();
  auto conversations = ConversationStore::Open(**store);
  if (!conversations.ok()) return conversations.status();
  JsonOut json;
  json.BeginObject();
  if (!args.positional().empty()) {
    auto stats = (*conversations)
                     ->ConversationStats(args.positional()[0],
                                         static_cast<size_t>(points->value_or(0)));
    if (!stats.ok()) return stats.status();
    tools::WriteConversationStats(json, *stats);
    tools::WriteTips(json, ConversationTips(*stats));
  } else {
    auto stats = (*conversations)->AggregateStats();
    if (!stats.ok()) return stats.status();
    tools::WriteAggregateStats(json, *stats, nullptr);
    tools::WriteTips(json, GeneralTips(*stats, std::nullopt));
  }
  json.EndObject();
  out << json.str() << "\n";
  return Status::Ok();
}

Status RunStats(const Args& args, std::ostream& out) {
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location);
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

  JsonOut json;
  json.BeginObject();
  tools::WriteAggregateStats(json, *aggregate, &*cache_stats);
  json.Key("cache").Raw(*cache_json);
  json.Key("references").Raw(*references_json);
  tools::WriteTips(
      json, GeneralTips(*aggregate, tools::UsedCacheHitRate(*cache_stats)));
  json.EndObject();
  out << json.str() << "\n";
  return Status::Ok();
}

}  // namespace ctxkit::program
