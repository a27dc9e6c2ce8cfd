// JSON documents of ConversationStore's results, for the C ABI and the CLI,
// in the shapes of seed 000's manage_conversation tool and its
// conversation-history, token-stats and optimization-tips resources (field
// names as the seed spells them; fields the seed lacks are added after
// them). Every document is a compact UTF-8 JSON object beginning with
// "schema_version":1.
//
// A conversation is written as
//   {"id","title","model","created_at","updated_at","total_tokens",
//    "message_count","metadata" (the stored object, as a value),
//    "last_message","last_message_at","input_tokens","output_tokens",
//    "user_tokens","assistant_tokens","system_tokens","tool_tokens",
//    "compressed_count","compressed_tokens"}
// and a message as
//   {"id","conversation_id","seq","role","content" (see include_content),
//    "name","tool_calls" (the stored array, as a value),"tool_call_id"
//    (these three only when set),"tokens","is_compressed","created_at"}.
//
// Errors: INVALID_ARGUMENT only when a stored string is not valid UTF-8 or
// stored metadata / tool calls are not valid JSON (never for records
// ConversationStore wrote). Results are owned by the caller. Every function
// is pure and thread-safe.

#ifndef CTXKIT_LIB_CONVERSATIONS_CONVERSATION_JSON_H_
#define CTXKIT_LIB_CONVERSATIONS_CONVERSATION_JSON_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "lib/json/json_writer.h"

namespace ctxkit::internal {

// The conversation / message object above as the writer's next value.
// Errors as above (the writer may then hold a partial value: discard it).
absl::Status WriteConversationJson(JsonWriter& writer, const Conversation& c);
absl::Status WriteMessageJson(JsonWriter& writer, const Message& m,
                              bool include_content);

// {"schema_version":1,"conversation":{...}} (Create, Update).
absl::StatusOr<std::string> ConversationToJson(const Conversation& c);

// {"schema_version":1,"conversation":{...},"messages":[...] (only when
//  include_messages),"actual_tokens","actual_tokens_exact"}
absl::StatusOr<std::string> ConversationDetailToJson(
    const ConversationDetail& detail, bool include_messages);

// {"schema_version":1,"conversations":[...],"total" (in the store),
//  "showing" (on this page),"next_cursor" (a string, or null on the last
//  page)}
absl::StatusOr<std::string> ConversationPageToJson(
    const ConversationPage& page);

// {"schema_version":1,"message":{... without content},"conversation":{...}}
absl::StatusOr<std::string> AddMessageResultToJson(
    const AddMessageResult& result);

// {"schema_version":1,"messages":[{... without content}],"conversation":{...}}
absl::StatusOr<std::string> AddMessagesResultToJson(
    const AddMessagesResult& result);

// {"schema_version":1,"deleted":true,"conversation":{... as it was},
//  "messages_deleted","dependent_records_deleted"}
absl::StatusOr<std::string> DeletedConversationToJson(
    const DeletedConversation& deleted);

// token-stats://aggregate without the cache's figures (total_cached_tokens,
// cached_tokens, cache_efficiency come from the cache part):
// {"schema_version":1,"overview":{"total_conversations","total_messages",
//  "total_input_tokens","total_output_tokens","total_tokens",
//  "total_user_tokens","total_assistant_tokens","total_system_tokens",
//  "total_tool_tokens","compressed_messages","compressed_tokens"},
//  "by_model":{"<model>":{"conversations","messages","input_tokens",
//  "output_tokens"}},"trends":{"daily_average","weekly_average","peak_day",
//  "peak_tokens"},"days":[{"date","day","messages","input_tokens",
//  "output_tokens","tokens"}]}
//
// With `cache` (the Cache's Stats() of the same store), the seed's cached
// figures too: overview "total_cached_tokens", by_model "cached_tokens" (the
// tokens the cache saved for entries stored with that model, over the
// cache's lifetime) and "cache_efficiency":{"cache_hit_rate","tokens_saved"}.
// The seed's "estimated_cost_savings" is not produced: ctxkit keeps no
// price list.
absl::StatusOr<std::string> AggregateStatsToJson(
    const AggregateStats& stats, const CacheStats* cache = nullptr);

// token-stats://{id} without cached_tokens:
// {"schema_version":1,"conversation_id","title","model","statistics":
//  {"total_tokens","input_tokens","output_tokens","message_count",
//  "avg_tokens_per_message","total_user_tokens","total_assistant_tokens",
//  "compression_ratio"},"timeline":[{"timestamp","cumulative_tokens",
//  "message_tokens"}],"token_limit":{"model_limit","current_usage",
//  "percentage","status","action","should_compress"}}
absl::StatusOr<std::string> ConversationStatsToJson(
    const ConversationStats& stats);

// optimization-tips://general without "resources" (static text the host
// adds): {"schema_version":1,"overview":{"total_conversations",
// "total_messages","total_tokens","cache_hit_rate" (only when given)},
// "tips":[{"category","priority","tip","action"}]}
absl::StatusOr<std::string> GeneralTipsToJson(
    const AggregateStats& stats, std::optional<double> cache_hit_rate,
    const std::vector<OptimizationTip>& tips);

// optimization-tips://{id}: {"schema_version":1,"conversation":{"id",
// "title","model","current_tokens","message_count"},"tips":[...]}
absl::StatusOr<std::string> ConversationTipsToJson(
    const ConversationStats& stats, const std::vector<OptimizationTip>& tips);

// Reads a JSON array of messages to add:
//   [{"role": "user"|"assistant"|"system"|"tool", "content": string,
//     "name"?: string, "tool_calls"?: array (kept as minified JSON text),
//     "tool_call_id"?: string, "is_compressed"?: bool}, ...]
// (absent and null optional members are the same). Only the JSON shape is
// checked here; ConversationStore::AddMessages checks the values.
// INVALID_ARGUMENT naming the path ("messages[2].role") for malformed JSON,
// a non-array, a non-object element, a missing or mistyped member or an
// unknown role; RESOURCE_EXHAUSTED for a document beyond the parser.
absl::StatusOr<std::vector<NewMessage>> ParseNewMessagesJson(
    std::string_view json);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CONVERSATIONS_CONVERSATION_JSON_H_
