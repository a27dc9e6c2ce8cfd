// The statistics documents of seed 000's token-stats and optimization-tips
// resources, written once for both users: the `stats` / `conv stats`
// commands (stats_command.cc) and the MCP resources (tools/resources.cc).
// The library has public ...ToJson() writers for the cache and references
// but none for conversation statistics, so these are the program's.
//
// Every writer appends members to the object `json` is currently inside
// (the caller opens and closes it), so a document can combine several.
// Thread safety: pure functions over caller-owned values.

#ifndef CTXKIT_PROGRAMS_CTXKIT_TOOLS_STATS_JSON_H_
#define CTXKIT_PROGRAMS_CTXKIT_TOOLS_STATS_JSON_H_

#include <optional>
#include <vector>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "programs/ctxkit/host/record_common.h"

namespace ctxkit::tools {

// "tips":[{"category","priority","tip","action"}...] in the given order.
void WriteTips(program::JsonOut& json, const std::vector<OptimizationTip>& tips);

// token-stats://aggregate's members: "overview" (seed fields, then the
// per-role and compression figures), "by_model", "cache_efficiency" (only
// with `cache`), "trends" and "days" (one entry per UTC day with messages).
// With `cache` (may be null), cached tokens are the cache's lifetime tokens
// saved, per model too; models only the cache has seen are listed with zero
// conversation figures. No "estimated_cost_savings": the library knows no
// prices.
void WriteAggregateStats(program::JsonOut& json, const AggregateStats& stats,
                         const CacheStats* cache);

// token-stats://{conversation_id}'s members: "conversation_id", "title",
// "model", "statistics", "timeline" and "token_limit" (WriteTokenLimit).
// No "cached_tokens": the cache keeps no per-conversation hit figures.
void WriteConversationStats(program::JsonOut& json,
                            const ConversationStats& stats);

// "token_limit":{"model_limit","current_usage","percentage","status",
// "action","should_compress"}.
void WriteTokenLimit(program::JsonOut& json, const TokenLimit& limit);

// The cache's hit rate when it has been asked at least once (a hit or a
// miss), else nullopt: before any lookup the rate means nothing, and
// GeneralTips then leaves out its caching tip.
std::optional<double> UsedCacheHitRate(const CacheStats& stats);

}  // namespace ctxkit::tools

#endif  // CTXKIT_PROGRAMS_CTXKIT_TOOLS_STATS_JSON_H_
