// ctxkit::ConversationStore: conversations and their messages, with token
// counts taken at insertion and totals kept up to date in the same
// transaction as every write, so that statistics never rescan messages.
//
//   auto store = ctxkit::Store::Open("/var/lib/agent");
//   auto convs = ctxkit::ConversationStore::Open(**store);
//   auto conv = (*convs)->Create({.title = "Code Review Session"});
//   auto added = (*convs)->AddMessage(
//       conv->id, {.role = ctxkit::MessageRole::kUser,
//                  .content = "Please review..."});
//   // added->message.tokens, added->conversation.total_tokens
//   auto stats = (*convs)->AggregateStats();   // O(models + days), no scan
//
// Token counts. A message's `tokens` is what its text costs with the
// conversation's model (ModelRegistry::Default().CountTokens, a flagged
// heuristic for unknown models): its content, plus for each OpenAI tool call
// the function's name, its arguments (a string as is, an object as minified
// JSON) and 3 tokens of markup (MessageCountOptions::tokens_per_tool_call),
// exactly as CountMessages() counts a tool call. `name` and `tool_call_id`
// are not in `tokens`: they are part of the chat framing, which
// ConversationDetail::actual_tokens adds for the whole history. The model of
// a conversation never changes, so counts stay comparable.
//
// Input and output. Statistics call user, system and tool tokens "input" and
// assistant tokens "output", as the MCP Token Optimizer's token-stats does.
//
// Validation. Every method checks all its arguments before writing anything
// and names the offending field: INVALID_ARGUMENT for a malformed id, an
// empty or oversized field, invalid UTF-8, metadata that is not a JSON
// object, a bad role or tool_calls document, a limit out of range, a
// malformed cursor; NOT_FOUND (naming the id) for an id that does not exist.
// A failed call changes nothing. Byte limits are in ConversationLimits.
//
// Storage (sub-databases of the Store; layouts in conversation_store.cc):
// "conversations" (id -> record), "conversations.messages" (id + seq ->
// message), "conversations.message_ids" (message id -> id + seq),
// "conversations.by_created" (created_at + id, for listing) and
// "conversations.stats" (store-wide totals, per model and per UTC day) and
// "conversations.compacted_views" (id + version -> compacted view; layout in
// compacted_views.cc).
//
// Deleting a conversation deletes, in the same write transaction, its
// messages, its compacted views and whatever the references and cache parts
// hold for it.
//
// Thread safety: every method of ConversationStore may be called from any
// number of threads at once. Writes are serialized by the Store; reads run on
// snapshots and never see half of a write. Results are plain values owned by
// the caller.

#ifndef CTXKIT_CONVERSATIONS_H_
#define CTXKIT_CONVERSATIONS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"

namespace ctxkit {

namespace internal {
struct ConversationStoreAccess;
}  // namespace internal

// Byte limits of the fields callers give, checked before anything is
// written (INVALID_ARGUMENT naming the field and the limit).
struct ConversationLimits {
  static constexpr size_t kMaxTitleBytes = 1024;  // 1 KiB
  static constexpr size_t kMaxModelBytes = 256;
  static constexpr size_t kMaxMetadataBytes = 64 * 1024;  // 64 KiB
  static constexpr size_t kMaxContentBytes = 16 << 20;    // 16 MiB
  static constexpr size_t kMaxNameBytes = 256;
  static constexpr size_t kMaxToolCallsBytes = 1 << 20;  // 1 MiB
  static constexpr size_t kMaxToolCallIdBytes = 256;
  // Most messages in one AddMessages() call, and most ids in one
  // SetCompressed() or DeleteMessages() call.
  static constexpr size_t kMaxBatchMessages = 100000;
  // Total content of one AddMessages() call.
  static constexpr size_t kMaxBatchBytes = size_t{256} << 20;  // 256 MiB
  // List() limits: 1..kMaxListLimit, default kDefaultListLimit.
  static constexpr uint32_t kMaxListLimit = 1000;
  static constexpr uint32_t kDefaultListLimit = 20;
  // Conversation::last_message keeps this many characters (code points) of
  // the last message's content, followed by "..." when it was longer.
  static constexpr size_t kLastMessagePreviewChars = 100;
};

enum class MessageRole : uint8_t {
  kUser = 0,
  kAssistant = 1,
  kSystem = 2,
  kTool = 3
};

// "user", "assistant", "system" or "tool"; static storage.
CTXKIT_EXPORT const char* MessageRoleName(MessageRole role) noexcept;
// The role named `name` (exactly as MessageRoleName spells it).
// INVALID_ARGUMENT naming "role" and the four names otherwise.
CTXKIT_EXPORT StatusOr<MessageRole> ParseMessageRole(std::string_view name);

// A conversation and its running totals.
struct Conversation {
  std::string id;  // lower-case UUID v4
  std::string title;
  std::string model;
  std::string metadata;    // a JSON object, as given (default "{}")
  int64_t created_at = 0;  // ms since the epoch
  int64_t updated_at = 0;  // last create, update or message change
  uint64_t message_count = 0;
  uint64_t total_tokens = 0;  // sum of its messages' tokens
  uint64_t user_tokens = 0;
  uint64_t assistant_tokens = 0;
  uint64_t system_tokens = 0;
  uint64_t tool_tokens = 0;
  uint64_t compressed_count = 0;   // messages with is_compressed
  uint64_t compressed_tokens = 0;  // their tokens
  // Preview of the newest message's content (see
  // ConversationLimits::kLastMessagePreviewChars); empty with no messages.
  std::string last_message;
  int64_t last_message_at = 0;  // its created_at; 0 with no messages

  // user + system + tool tokens.
  uint64_t input_tokens() const {
    return user_tokens + system_tokens + tool_tokens;
  }
  // assistant tokens.
  uint64_t output_tokens() const { return assistant_tokens; }
};

// A message to add.
struct NewMessage {
  MessageRole role = MessageRole::kUser;
  // 0..kMaxContentBytes bytes of UTF-8 (empty is allowed: an assistant turn
  // may carry only tool calls).
  std::string content = {};
  // Optional participant name, 1..kMaxNameBytes.
  std::optional<std::string> name = {};
  // Optional OpenAI tool calls, assistant messages only: a JSON array of
  // objects, each with an object "function" holding a string "name" and
  // "arguments" that is a string, an object or null; at most
  // kMaxToolCallsBytes. Stored as given.
  std::optional<std::string> tool_calls = {};
  // Optional id of the call a tool message answers, tool messages only,
  // 1..kMaxToolCallIdBytes.
  std::optional<std::string> tool_call_id = {};
  bool is_compressed = false;
};

// A stored message.
struct Message {
  // Lower-case UUID v7: its first 48 bits are created_at (ms), so ids of
  // later messages sort after earlier ones.
  std::string id;
  std::string conversation_id;
  uint64_t seq = 0;  // 1, 2, ... in order of addition; never reused
  MessageRole role = MessageRole::kUser;
  std::string content;
  std::optional<std::string> name;
  std::optional<std::string> tool_calls;
  std::optional<std::string> tool_call_id;
  uint64_t tokens = 0;  // see "Token counts" above
  bool is_compressed = false;
  int64_t created_at = 0;
};

struct NewConversation {
  // 1..kMaxTitleBytes bytes of UTF-8.
  std::string title = {};
  // 1..kMaxModelBytes; need not be a model ModelRegistry knows (such a
  // conversation is counted with EstimateTokens()).
  std::string model = std::string(kDefaultModel);
  // A JSON object, at most kMaxMetadataBytes.
  std::string metadata = "{}";
};

// What Update changes; an unset field stays as it is. At least one must be
// set.
struct ConversationUpdate {
  std::optional<std::string> title = {};
  std::optional<std::string> metadata = {};
};

struct AddMessageResult {
  Message message;
  Conversation conversation;  // after the addition
};

struct AddMessagesResult {
  std::vector<Message> messages;  // in the order given
  Conversation conversation;      // after the addition
};

struct ConversationDetail {
  Conversation conversation;
  // In order of seq; empty unless messages were asked for.
  std::vector<Message> messages;
  // The whole history as a chat request for the conversation's model:
  // message tokens plus the per-message framing and reply priming of its
  // format, equal to CountMessagesForModel (message_count.h) of the history
  // as an OpenAI message array. Summed from the tokens stored with each
  // message plus the framing, so the content is not tokenized again: should
  // the registry count the model differently now than when a message was
  // added (a tokenizer added or a model registered since), that message's
  // part stays as it was counted then, as in total_tokens.
  uint64_t actual_tokens = 0;
  // True when CountMessagesForModel says the count is exact.
  bool actual_tokens_exact = false;
};

struct ConversationPage {
  // Newest first (created_at descending, then id descending).
  std::vector<Conversation> conversations;
  // Pass to List() for the next page; empty when this page is the last.
  std::string next_cursor;
  // Conversations in the store.
  uint64_t total = 0;
};

struct DeletedConversation {
  Conversation conversation;  // as it was before deletion
  uint64_t messages_deleted = 0;
  // Compacted views, and references, cache entries, ... removed with it by
  // the other parts.
  uint64_t dependent_records_deleted = 0;
};

// ---- Statistics -----------------------------------------------------------

// Context-window status thresholds, in percent of the model's window:
// "safe" below kLimitWarningPercent, "warning" from kLimitWarningPercent to
// below kLimitCriticalPercent, "critical" from kLimitCriticalPercent up;
// "unknown" when the model's window is unknown (ModelRegistry says 0).
inline constexpr double kLimitWarningPercent = 75.0;
inline constexpr double kLimitCriticalPercent = 90.0;

struct TokenLimit {
  uint64_t model_limit = 0;  // context window; 0 when unknown
  uint64_t current_usage = 0;
  double percentage = 0;  // 100 * usage / limit, unrounded; 0 if unknown
  std::string status;     // "safe" | "warning" | "critical" | "unknown"
  // Seed 000's count_tokens "recommendation": what to do about it, and
  // whether compressing is advised (warning and critical).
  std::string action;
  bool should_compress = false;
};

// `usage` against `model_limit` by the thresholds above. Pure; thread-safe.
CTXKIT_EXPORT TokenLimit ComputeTokenLimit(uint64_t usage,
                                           uint64_t model_limit);

// ComputeTokenLimit with the context window ModelRegistry::Default() gives
// `model` (0, hence "unknown", for an unknown model).
CTXKIT_EXPORT TokenLimit TokenLimitForModel(std::string_view model,
                                            uint64_t usage);

struct ModelUsage {
  std::string model;
  uint64_t conversations = 0;
  uint64_t messages = 0;
  uint64_t input_tokens = 0;
  uint64_t output_tokens = 0;
};

// Tokens of the messages stored that were created on one UTC day.
struct DailyUsage {
  int64_t day = 0;   // days since 1970-01-01 (negative before)
  std::string date;  // "YYYY-MM-DD"
  uint64_t messages = 0;
  uint64_t input_tokens = 0;
  uint64_t output_tokens = 0;
  uint64_t tokens() const { return input_tokens + output_tokens; }
};

// Store-wide figures, kept incrementally; they describe the messages stored
// now (deleting a conversation removes its tokens from every figure,
// including the per-day ones).
struct AggregateStats {
  uint64_t conversations = 0;
  uint64_t messages = 0;
  uint64_t user_tokens = 0;
  uint64_t assistant_tokens = 0;
  uint64_t system_tokens = 0;
  uint64_t tool_tokens = 0;
  uint64_t input_tokens = 0;   // user + system + tool
  uint64_t output_tokens = 0;  // assistant
  uint64_t total_tokens = 0;   // input + output
  uint64_t compressed_messages = 0;
  uint64_t compressed_tokens = 0;
  std::vector<ModelUsage> by_model;  // sorted by model name
  std::vector<DailyUsage> days;      // days with messages, oldest first
  // Trends over `days`: daily_average = total tokens / number of days with
  // messages (0 when none); weekly_average = 7 * daily_average; the day with
  // the most tokens (the earliest on a tie), "" and 0 when none.
  double daily_average = 0;
  double weekly_average = 0;
  std::string peak_day;
  uint64_t peak_tokens = 0;
};

struct TimelinePoint {
  int64_t timestamp = 0;           // the message's created_at
  uint64_t cumulative_tokens = 0;  // tokens up to and including it
  uint64_t message_tokens = 0;
};

struct ConversationStats {
  Conversation conversation;
  uint64_t total_tokens = 0;
  uint64_t input_tokens = 0;   // user + system + tool
  uint64_t output_tokens = 0;  // assistant
  uint64_t user_tokens = 0;
  uint64_t assistant_tokens = 0;
  uint64_t message_count = 0;
  double avg_tokens_per_message = 0;  // total / count, unrounded; 0 if empty
  // compressed_count / message_count (0 if empty).
  double compression_ratio = 0;
  // One point per message in order (at most max_timeline_points, see
  // ConversationStore::ConversationStats).
  std::vector<TimelinePoint> timeline;
  TokenLimit token_limit;  // total_tokens against the model's window
};

// One optimization tip, as the MCP Token Optimizer's optimization-tips lists
// them.
struct OptimizationTip {
  std::string category;  // "token_management", "caching", ...
  std::string priority;  // "high" | "medium" | "low"
  std::string tip;
  std::string action;
};

// Thresholds of the tip rules below.
struct TipThresholds {
  // Average tokens per conversation that make store-wide usage "high"
  // and "moderate".
  static constexpr uint64_t kHighAverageConversationTokens = 20000;
  static constexpr uint64_t kModerateAverageConversationTokens = 5000;
  // Cache hit rates (percent) below which caching is "poor" / "fair".
  static constexpr double kLowCacheHitRate = 20.0;
  static constexpr double kFairCacheHitRate = 50.0;
  // Messages that make a conversation "long" / "very long".
  static constexpr uint64_t kManyMessages = 40;
  static constexpr uint64_t kVeryManyMessages = 200;
  // Messages from which never having compressed is worth a tip.
  static constexpr uint64_t kCompressionWorthMessages = 10;
  // Average tokens per message above which messages are "long".
  static constexpr double kLongMessageTokens = 1000.0;
};

// Store-wide tips, in this order:
//   token_management: no conversations -> low "No conversations tracked
//     yet"; average tokens per conversation >= kHighAverage... -> high;
//     >= kModerateAverage... -> medium "Token usage is moderate across
//     conversations"; else low "Token usage is healthy".
//   caching (only when `cache_hit_rate`, in percent, is given): below
//     kLowCacheHitRate -> high; below kFairCacheHitRate -> medium; else low
//     "Cache is performing well".
//   compression: at least kCompressionWorthMessages messages and none
//     compressed -> medium "No messages have been compressed yet".
//   best_practices: always two low tips (optimize_query, track_references).
// Pure; thread-safe.
CTXKIT_EXPORT std::vector<OptimizationTip> GeneralTips(
    const AggregateStats& stats, std::optional<double> cache_hit_rate);

// Tips for one conversation, in this order:
//   token_management: "critical" -> high "Token usage is approaching model
//     limit"; "warning" -> medium; "unknown" -> low (window unknown).
//   conversation_length: >= kVeryManyMessages -> high; >= kManyMessages ->
//     medium "Conversation has many messages" (compress_context remove_old).
//   compression: >= kCompressionWorthMessages messages, none compressed ->
//     medium "No messages have been compressed yet".
//   message_size: average above kLongMessageTokens -> medium (move large
//     material to track_references).
//   none of the above -> one low token_management tip "Conversation is
//     within healthy limits".
// Pure; thread-safe.
CTXKIT_EXPORT std::vector<OptimizationTip> ConversationTips(
    const ConversationStats& stats);

// ---- JSON documents ---------------------------------------------------------
//
// The one writer of each result's document: the C ABI returns these bytes,
// the `ctxkit conv` and `stats` commands print them, and the MCP tools and
// resources return them inside the MCP Token Optimizer's envelope ("success"
// first, "message" last), so no surface can drift from another. Every document
// is compact UTF-8 JSON, one object whose first member is "schema_version":1;
// field names are the MCP Token Optimizer's where it has the field. An optional
// value that is absent is null, never left out.
//
// A conversation object is
//   {"id","title","model","created_at","updated_at","total_tokens",
//    "message_count","metadata" (the stored object),"last_message" (the
//    newest message's preview; null with no messages),"last_message_at"
//    (null with no messages),"input_tokens","output_tokens","user_tokens",
//    "assistant_tokens","system_tokens","tool_tokens","compressed_count",
//    "compressed_tokens"}
// and a message object
//   {"id","conversation_id","seq","role","content" (in the documents of
//    AddMessage(s) "content_bytes", its size in bytes, instead: the caller
//    has just sent it, and it may be megabytes),"name","tool_calls" (the
//    stored array),"tool_call_id" (these three null when not set),"tokens",
//    "is_compressed","created_at"}.
//
// Errors: INVALID_ARGUMENT only when a stored string is not valid UTF-8 or
// stored metadata / tool calls are not valid JSON (never for records
// ConversationStore wrote). Pure functions; thread-safe; the caller owns the
// result.

struct CacheStats;  // ctxkit/cache.h

// Create and Update: {"schema_version":1,"conversation":{...}}.
CTXKIT_EXPORT StatusOr<std::string> ConversationToJson(
    const Conversation& conversation);

// Get: {"schema_version":1,"conversation":{...},"messages":[...] (only with
// `include_messages`),"actual_tokens","actual_tokens_exact"}.
CTXKIT_EXPORT StatusOr<std::string> ConversationDetailToJson(
    const ConversationDetail& detail, bool include_messages);

// List: {"schema_version":1,"conversations":[...],"total" (in the store),
// "showing" (on this page),"next_cursor" (null on the last page)}.
CTXKIT_EXPORT StatusOr<std::string> ConversationPageToJson(
    const ConversationPage& page);

// AddMessage: {"schema_version":1,"message":{... content_bytes instead of
// content},"conversation":{...}}.
CTXKIT_EXPORT StatusOr<std::string> AddMessageResultToJson(
    const AddMessageResult& result);

// AddMessages: {"schema_version":1,"messages":[{... content_bytes instead
// of content}],"conversation":{...}}.
CTXKIT_EXPORT StatusOr<std::string> AddMessagesResultToJson(
    const AddMessagesResult& result);

// Delete: {"schema_version":1,"deleted":true,"conversation":{... as it
// was},"messages_deleted","dependent_records_deleted"}.
CTXKIT_EXPORT StatusOr<std::string> DeletedConversationToJson(
    const DeletedConversation& deleted);

// AggregateStats as the MCP Token Optimizer's token-stats://aggregate:
// {"schema_version":1,"overview":{"total_conversations","total_messages",
//  "total_input_tokens","total_output_tokens","total_cached_tokens",
//  "total_tokens","total_user_tokens","total_assistant_tokens",
//  "total_system_tokens","total_tool_tokens","compressed_messages",
//  "compressed_tokens"},"by_model":{"<model>":{"conversations","messages",
//  "input_tokens","output_tokens","cached_tokens"}},"cache_efficiency":
//  {"cache_hit_rate","tokens_saved"},"trends":{"daily_average",
//  "weekly_average","peak_day","peak_tokens"},"days":[{"date","day",
//  "messages","input_tokens","output_tokens","tokens"}],"tips":[{"category",
//  "priority","tip","action"}] (GeneralTips)}
// `cache` (may be null) is the Cache's Stats() of the same store: cached
// figures are the tokens its hits saved over its lifetime, per model too
// (models only the cache has seen are listed with zero conversation
// figures), and the tips judge its hit rate once it has been asked. Without
// it, total_cached_tokens, each cached_tokens and cache_efficiency are null.
// There is no "estimated_cost_savings": ctxkit keeps no price list.
CTXKIT_EXPORT StatusOr<std::string> AggregateStatsToJson(
    const AggregateStats& stats, const CacheStats* cache = nullptr);

// ConversationStats as the MCP Token Optimizer's
// token-stats://{conversation_id}:
// {"schema_version":1,"conversation_id","title","model","statistics":
//  {"total_tokens","input_tokens","output_tokens","message_count",
//  "avg_tokens_per_message","total_user_tokens","total_assistant_tokens",
//  "compression_ratio"},"timeline":[{"timestamp","cumulative_tokens",
//  "message_tokens"}],"token_limit":{"model_limit","current_usage",
//  "percentage","status","action","should_compress"},"tips":[...]
//  (ConversationTips)}
// No "cached_tokens": the cache keeps no per-conversation hit figures.
CTXKIT_EXPORT StatusOr<std::string> ConversationStatsToJson(
    const ConversationStats& stats);

// Seed 000's optimization-tips://general without its static "resources":
// {"schema_version":1,"overview":{"total_conversations","total_messages",
//  "total_tokens","cache_hit_rate" (null when not given)},"tips":[...]}
// with GeneralTips(stats, cache_hit_rate).
CTXKIT_EXPORT StatusOr<std::string> GeneralTipsToJson(
    const AggregateStats& stats, std::optional<double> cache_hit_rate);

// Seed 000's optimization-tips://{conversation_id}: {"schema_version":1,
// "conversation":{"id","title","model","current_tokens","message_count"},
// "tips":[...] (ConversationTips),"token_limit":{...}}.
CTXKIT_EXPORT StatusOr<std::string> ConversationTipsToJson(
    const ConversationStats& stats);

// ---- Compacted views -------------------------------------------------------
//
// Compacting a stored conversation (Compactor::CompactConversation) never
// touches its messages: the result is saved beside them as a compacted view,
// numbered 1, 2, ... per conversation in order of saving (a version is never
// reused: views go only with their conversation). Views are plain records:
// adding, changing or deleting messages leaves every view as it was, and
// source_message_count / source_last_seq tell which messages a view was made
// from (messages with seq > source_last_seq were added after it). Views are
// not part of any token total or statistic of the conversation or the store.

// Byte limits of a view's documents (INVALID_ARGUMENT naming the field and
// the limit).
struct CompactedViewLimits {
  static constexpr size_t kMaxMessagesJsonBytes = size_t{64} << 20;  // 64 MiB
  static constexpr size_t kMaxInfoJsonBytes = size_t{1} << 20;       // 1 MiB
};

// A view to save.
struct NewCompactedView {
  // The compacted history: a JSON array of message objects (any message
  // format; stored byte for byte as given), 2..kMaxMessagesJsonBytes bytes
  // of UTF-8.
  std::string messages_json = "[]";
  // What the compaction reported (its compaction_info, strategy, ...): a JSON
  // object, stored as given, at most kMaxInfoJsonBytes.
  std::string info_json = "{}";
  // How many messages the view was made from, and the seq of the newest of
  // them. source_last_seq must not exceed the last seq the conversation has
  // handed out, and source_message_count must not exceed source_last_seq
  // (seqs start at 1 and are never reused).
  uint64_t source_message_count = 0;
  uint64_t source_last_seq = 0;
  // The view's token count as the compactor measured it (stored as given).
  uint64_t tokens = 0;
};

// A stored view.
struct CompactedView {
  std::string conversation_id;
  uint64_t version = 0;    // 1, 2, ... per conversation
  int64_t created_at = 0;  // ms since the epoch, when it was saved
  // As saved; empty in ListCompactedViews results (see messages_bytes).
  std::string messages_json;
  std::string info_json;
  uint64_t messages_bytes = 0;  // size of messages_json as stored
  uint64_t source_message_count = 0;
  uint64_t source_last_seq = 0;
  uint64_t tokens = 0;
};

// ---- The store ------------------------------------------------------------

struct ConversationOptions {
  // Time source in ms since the epoch; empty = the wall clock. Tests set it.
  std::function<int64_t()> clock;
  // Source of the random bits of new ids (64 per call): conversation ids
  // (UUID v4) and message ids (UUID v7's random part). Empty = the kernel's
  // random numbers. With a seeded source and `clock`, the same calls give
  // byte-identical records and responses (tests, replays); ids are then
  // only as unique as the source makes them. Called from whichever thread
  // writes, so it must be thread-safe when the store is shared.
  std::function<uint64_t()> random;
};

class CTXKIT_EXPORT ConversationStore {
 public:
  // Opens (creating if needed) the conversation sub-databases of `store`,
  // which must outlive the returned object, and the delete hooks of the
  // references and cache parts. Errors: those of Store::OpenDatabase (e.g.
  // NOT_FOUND for a read-only store that never held conversations).
  static StatusOr<std::unique_ptr<ConversationStore>> Open(
      Store& store, ConversationOptions options = {});

  ~ConversationStore();
  ConversationStore(const ConversationStore&) = delete;
  ConversationStore& operator=(const ConversationStore&) = delete;

  // A new conversation with a fresh id and created_at == updated_at == now.
  // INVALID_ARGUMENT naming title, model or metadata.
  StatusOr<Conversation> Create(const NewConversation& conversation);

  // Appends one message. Its tokens are counted before the write
  // transaction. INVALID_ARGUMENT naming conversation_id, role, content,
  // name, tool_calls (with the path inside it) or tool_call_id; NOT_FOUND
  // naming the conversation.
  StatusOr<AddMessageResult> AddMessage(std::string_view conversation_id,
                                        const NewMessage& message);

  // Appends 1..kMaxBatchMessages messages in one transaction (all or
  // none), all with created_at == now. Fields are named
  // "messages[i].<field>". Otherwise as AddMessage.
  StatusOr<AddMessagesResult> AddMessages(
      std::string_view conversation_id,
      const std::vector<NewMessage>& messages);

  // The conversation, with its messages when `include_messages`, and
  // actual_tokens (always computed: it reads every message's record, but
  // tokenizes only names and tool_call_ids).
  // INVALID_ARGUMENT for a malformed id; NOT_FOUND naming it.
  StatusOr<ConversationDetail> Get(std::string_view id,
                                   bool include_messages = true) const;

  // One page of conversations, newest first. `limit` in 1..kMaxListLimit;
  // `cursor` empty for the first page, else a next_cursor of an earlier
  // page (conversations created or deleted in between do not make a later
  // page repeat or skip others). INVALID_ARGUMENT naming limit or cursor.
  StatusOr<ConversationPage> List(
      uint32_t limit = ConversationLimits::kDefaultListLimit,
      std::string_view cursor = {}) const;

  // Changes title and/or metadata; updated_at = now. INVALID_ARGUMENT naming
  // the field (or "title or metadata" when neither is set); NOT_FOUND.
  StatusOr<Conversation> Update(std::string_view id,
                                const ConversationUpdate& update);

  // Deletes the conversation, its messages and (through the other parts'
  // hooks) its references and cached results, in one transaction.
  // INVALID_ARGUMENT for a malformed id; NOT_FOUND naming it.
  StatusOr<DeletedConversation> Delete(std::string_view id);

  // Sets is_compressed of the given messages (duplicates allowed; 1..
  // kMaxBatchMessages ids). INVALID_ARGUMENT naming "message_ids[i]";
  // NOT_FOUND naming the conversation or a message id that is not one of
  // its messages. Returns the conversation after the change.
  StatusOr<Conversation> SetCompressed(
      std::string_view conversation_id,
      const std::vector<std::string>& message_ids, bool is_compressed);

  // Deletes the given messages of the conversation (duplicates allowed;
  // 1..kMaxBatchMessages ids), updating every total; seq numbers of the
  // others do not change. Errors as SetCompressed.
  StatusOr<Conversation> DeleteMessages(
      std::string_view conversation_id,
      const std::vector<std::string>& message_ids);

  // Store-wide figures, from the maintained totals: reads one record per
  // model and per day with messages, never the messages.
  StatusOr<ctxkit::AggregateStats> AggregateStats() const;

  // Figures of one conversation; its timeline reads its messages (once),
  // keeping at most `max_timeline_points` points (0 = all): when there are
  // more, every k-th message's point is kept plus the last, so the curve
  // keeps its shape. INVALID_ARGUMENT for a malformed id; NOT_FOUND.
  StatusOr<ctxkit::ConversationStats> ConversationStats(
      std::string_view id, size_t max_timeline_points = 0) const;

  // ---- Compacted views (see "Compacted views" above) ----

  // Saves `view` as the conversation's next version (latest + 1, decided in
  // the write transaction, so concurrent saves get distinct versions), with
  // created_at = now. Checks everything before writing; a failed call writes
  // nothing. INVALID_ARGUMENT naming conversation_id, messages_json (not
  // UTF-8, not JSON, not an array, "messages_json[i]" not an object, over
  // the limit), info_json (not a JSON object, over the limit),
  // source_last_seq or source_message_count; NOT_FOUND naming the
  // conversation. Returns the view as stored.
  StatusOr<CompactedView> SaveCompactedView(std::string_view conversation_id,
                                            const NewCompactedView& view);

  // Version `version` of the conversation's views, or the latest when 0.
  // INVALID_ARGUMENT for a malformed id; NOT_FOUND naming the conversation,
  // or the version (also when the conversation has no view at all).
  StatusOr<CompactedView> GetCompactedView(std::string_view conversation_id,
                                           uint64_t version = 0) const;

  // Every view of the conversation, oldest version first, WITHOUT
  // messages_json (empty; messages_bytes says how large it is): a listing
  // reads only the small part of each record. Use GetCompactedView for the
  // messages. Empty when the conversation has no views. Errors as
  // GetCompactedView's for the conversation.
  StatusOr<std::vector<CompactedView>> ListCompactedViews(
      std::string_view conversation_id) const;

  struct CTXKIT_NO_EXPORT Impl;

 private:
  CTXKIT_NO_EXPORT explicit ConversationStore(std::unique_ptr<Impl> impl);
  friend struct Impl;
  friend struct internal::ConversationStoreAccess;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ctxkit

#endif  // CTXKIT_CONVERSATIONS_H_
