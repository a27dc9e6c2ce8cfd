#include "programs/ctxkit/tools/stats_json.h"

#include <cstdint>
#include <map>
#include <string>

namespace ctxkit::tools {

using program::JsonOut;

void WriteTips(JsonOut& json, const std::vector<OptimizationTip>& tips) {
  json.Key("tips").BeginArray();
  for (const OptimizationTip& tip : tips) {
    json.BeginObject()
        .Key("category").String(tip.category)
        .Key("priority").String(tip.priority)
        .Key("tip").String(tip.tip)
        .Key("action").String(tip.action)
        .EndObject();
  }
  json.EndArray();
}

void WriteAggregateStats(JsonOut& json, const AggregateStats& stats,
                         const CacheStats* cache) {
  std::map<std::string, uint64_t> cached_by_model;
  if (cache != nullptr) {
    for (const CacheModelStats& model : cache->by_model) {
      cached_by_model[model.model] = model.lifetime_tokens_saved;
    }
  }
  json.Key("overview").BeginObject()
      .Key("total_conversations").Uint(stats.conversations)
      .Key("total_messages").Uint(stats.messages)
      .Key("total_input_tokens").Uint(stats.input_tokens)
      .Key("total_output_tokens").Uint(stats.output_tokens);
  if (cache != nullptr) {
    json.Key("total_cached_tokens").Uint(cache->lifetime_tokens_saved);
  }
  json.Key("total_tokens").Uint(stats.total_tokens)
      .Key("user_tokens").Uint(stats.user_tokens)
      .Key("assistant_tokens").Uint(stats.assistant_tokens)
      .Key("system_tokens").Uint(stats.system_tokens)
      .Key("tool_tokens").Uint(stats.tool_tokens)
      .Key("compressed_messages").Uint(stats.compressed_messages)
      .Key("compressed_tokens").Uint(stats.compressed_tokens)
      .EndObject();

  json.Key("by_model").BeginObject();
  for (const ModelUsage& model : stats.by_model) {
    json.Key(model.model).BeginObject()
        .Key("conversations").Uint(model.conversations)
        .Key("messages").Uint(model.messages)
        .Key("input_tokens").Uint(model.input_tokens)
        .Key("output_tokens").Uint(model.output_tokens);
    if (cache != nullptr) {
      const auto it = cached_by_model.find(model.model);
      json.Key("cached_tokens")
          .Uint(it == cached_by_model.end() ? 0 : it->second);
      if (it != cached_by_model.end()) cached_by_model.erase(it);
    }
    json.EndObject();
  }
  // Models that only the cache has seen.
  for (const auto& [model, cached] : cached_by_model) {
    json.Key(model).BeginObject()
        .Key("conversations").Uint(0)
        .Key("messages").Uint(0)
        .Key("input_tokens").Uint(0)
        .Key("output_tokens").Uint(0)
        .Key("cached_tokens").Uint(cached)
        .EndObject();
  }
  json.EndObject();

  if (cache != nullptr) {
    json.Key("cache_efficiency").BeginObject()
        .Key("cache_hit_rate").Double(cache->hit_rate)
        .Key("tokens_saved").Uint(cache->lifetime_tokens_saved)
        .EndObject();
  }
  json.Key("trends").BeginObject()
      .Key("daily_average").Double(stats.daily_average)
      .Key("weekly_average").Double(stats.weekly_average)
      .Key("peak_day").String(stats.peak_day)
      .Key("peak_tokens").Uint(stats.peak_tokens)
      .EndObject();
  json.Key("days").BeginArray();
  for (const DailyUsage& day : stats.days) {
    json.BeginObject()
        .Key("date").String(day.date)
        .Key("messages").Uint(day.messages)
        .Key("input_tokens").Uint(day.input_tokens)
        .Key("output_tokens").Uint(day.output_tokens)
        .EndObject();
  }
  json.EndArray();
}

void WriteTokenLimit(JsonOut& json, const TokenLimit& limit) {
  json.Key("token_limit").BeginObject()
      .Key("model_limit").Uint(limit.model_limit)
      .Key("current_usage").Uint(limit.current_usage)
      .Key("percentage").Double(limit.percentage)
      .Key("status").String(limit.status)
      .Key("action").String(limit.action)
      .Key("should_compress").Bool(limit.should_compress)
      .EndObject();
}

void WriteConversationStats(JsonOut& json, const ConversationStats& stats) {
  const Conversation& c = stats.conversation;
  json.Key("conversation_id").String(c.id)
      .Key("title").String(c.title)
      .Key("model").String(c.model)
      .Key("statistics").BeginObject()
      .Key("total_tokens").Uint(stats.total_tokens)
      .Key("input_tokens").Uint(stats.input_tokens)
      .Key("output_tokens").Uint(stats.output_tokens)
      .Key("user_tokens").Uint(stats.user_tokens)
      .Key("assistant_tokens").Uint(stats.assistant_tokens)
      .Key("message_count").Uint(stats.message_count)
      .Key("avg_tokens_per_message").Double(stats.avg_tokens_per_message)
      .Key("compression_ratio").Double(stats.compression_ratio)
      .EndObject();
  json.Key("timeline").BeginArray();
  for (const TimelinePoint& point : stats.timeline) {
    json.BeginObject()
        .Key("timestamp").Int(point.timestamp)
        .Key("cumulative_tokens").Uint(point.cumulative_tokens)
        .Key("message_tokens").Uint(point.message_tokens)
        .EndObject();
  }
  json.EndArray();
  WriteTokenLimit(json, stats.token_limit);
}

std::optional<double> UsedCacheHitRate(const CacheStats& stats) {
  if (stats.lifetime_hits + stats.total_misses == 0) return std::nullopt;
  return stats.hit_rate;
}

}  // namespace ctxkit::tools
