// Context-window status and optimization tips: pure functions of the
// figures ConversationStore keeps, so that the host program and the C API
// can combine them with other parts' figures (cache hit rate).

#include <optional>
#include <string>
#include <vector>

#include "ctxkit/conversations.h"
#include "ctxkit/model_registry.h"

namespace ctxkit {

TokenLimit ComputeTokenLimit(uint64_t usage, uint64_t model_limit) {
  TokenLimit out;
  out.model_limit = model_limit;
  out.current_usage = usage;
  if (model_limit == 0) {
    out.status = "unknown";
    out.action =
        "The model's context window is unknown; register it to track usage.";
    return out;
  }
  out.percentage =
      100.0 * static_cast<double>(usage) / static_cast<double>(model_limit);
  if (out.percentage >= kLimitCriticalPercent) {
    out.status = "critical";
    out.action =
        "Token usage is near the model limit. Compress the context now.";
    out.should_compress = true;
  } else if (out.percentage >= kLimitWarningPercent) {
    out.status = "warning";
    out.action = "Token usage is high. Consider compressing older messages.";
    out.should_compress = true;
  } else {
    out.status = "safe";
    out.action = "Token usage is healthy. No action needed.";
  }
  return out;
}

TokenLimit TokenLimitForModel(std::string_view model, uint64_t usage) {
  return ComputeTokenLimit(
      usage, ModelRegistry::Default().Resolve(model).info.context_window);
}

namespace {

OptimizationTip Tip(const char* category, const char* priority, const char* tip,
                    const char* action) {
  return OptimizationTip{category, priority, tip, action};
}

}  // namespace

std::vector<OptimizationTip> GeneralTips(const AggregateStats& stats,
                                         std::optional<double> cache_hit_rate) {
  using T = TipThresholds;
  std::vector<OptimizationTip> tips;
  if (stats.conversations == 0) {
    tips.push_back(Tip("token_management", "low",
                       "No conversations tracked yet",
                       "Create a conversation with manage_conversation to "
                       "track token usage"));
  } else {
    const uint64_t average = stats.total_tokens / stats.conversations;
    if (average >= T::kHighAverageConversationTokens) {
      tips.push_back(Tip("token_management", "high",
                         "Token usage is high across conversations",
                         "Use compress_context on long conversations to "
                         "reduce token count"));
    } else if (average >= T::kModerateAverageConversationTokens) {
      tips.push_back(Tip("token_management", "medium",
                         "Token usage is moderate across conversations",
                         "Consider compressing older messages in long "
                         "conversations"));
    } else {
      tips.push_back(Tip("token_management", "low",
                         "Token usage is healthy across conversations",
                         "No action needed"));
    }
  }
  if (cache_hit_rate) {
    if (*cache_hit_rate < T::kLowCacheHitRate) {
      tips.push_back(Tip("caching", "high", "Cache hit rate is low",
                         "Cache system prompts and reused context with "
                         "smart_cache"));
    } else if (*cache_hit_rate < T::kFairCacheHitRate) {
      tips.push_back(Tip("caching", "medium", "Cache hit rate could improve",
                         "Use stable cache keys and prefixes for repeated "
                         "prompts"));
    } else {
      tips.push_back(Tip("caching", "low", "Cache is performing well",
                         "Continue using cached prompts for token savings"));
    }
  }
  if (stats.messages >= T::kCompressionWorthMessages &&
      stats.compressed_messages == 0) {
    tips.push_back(Tip("compression", "medium",
                       "No messages have been compressed yet",
                       "Try compress_context to reduce token usage"));
  }
  tips.push_back(Tip("best_practices", "low",
                     "Use optimize_query before sending long prompts",
                     "Optimize queries to remove filler words and improve "
                     "clarity"));
  tips.push_back(Tip("best_practices", "low",
                     "Track reference materials separately",
                     "Use track_references for code snippets, docs, and URLs"));
  return tips;
}

std::vector<OptimizationTip> ConversationTips(const ConversationStats& stats) {
  using T = TipThresholds;
  std::vector<OptimizationTip> tips;
  const std::string& status = stats.token_limit.status;
  if (status == "critical") {
    tips.push_back(Tip("token_management", "high",
                       "Token usage is approaching model limit",
                       "Use compress_context tool to reduce token count"));
  } else if (status == "warning") {
    tips.push_back(Tip("token_management", "medium",
                       "Token usage is above 75% of the model limit",
                       "Plan to compress older messages with "
                       "compress_context"));
  } else if (status == "unknown") {
    tips.push_back(Tip("token_management", "low",
                       "The model's context window is unknown",
                       "Use a model ctxkit knows so usage can be checked "
                       "against its limit"));
  }
  if (stats.message_count >= T::kVeryManyMessages) {
    tips.push_back(Tip("conversation_length", "high",
                       "Conversation is very long",
                       "Use compress_context with 'summarize' or 'smart' "
                       "strategy"));
  } else if (stats.message_count >= T::kManyMessages) {
    tips.push_back(Tip("conversation_length", "medium",
                       "Conversation has many messages",
                       "Use compress_context with 'remove_old' strategy"));
  }
  if (stats.message_count >= T::kCompressionWorthMessages &&
      stats.conversation.compressed_count == 0) {
    tips.push_back(Tip("compression", "medium",
                       "No messages have been compressed yet",
                       "Try compress_context to reduce token usage"));
  }
  if (stats.avg_tokens_per_message > T::kLongMessageTokens) {
    tips.push_back(Tip("message_size", "medium", "Messages are long on average",
                       "Move large code and documents to track_references "
                       "and refer to them"));
  }
  if (tips.empty()) {
    tips.push_back(Tip("token_management", "low",
                       "Conversation is within healthy limits",
                       "No action needed"));
  }
  return tips;
}

}  // namespace ctxkit
