// ctxkit::Compactor: fits a chat history into a token budget, keeping what
// matters and never breaking the conversation's structure.
//
//   ctxkit::Compactor compactor;
//   ctxkit::CompactionOptions options;
//   options.max_tokens = 8000;
//   options.model = "gpt-4o";
//   auto result = compactor.Compact(history_json, options);
//   // result->messages_json: the compacted history, in the input's format
//   // result->budget_met, result->compacted_tokens (exact, o200k_base)
//
// Formats (ChatFormat). A history is a JSON array of messages, or an object
// {"messages": [...]} (other members ignored). A message may hold only the
// members message_count.h lists ("Message members"): another member is an
// error naming it, never silently ignored.
//   kOpenAI     system/developer/user/assistant/tool roles, string or
//               part-array content, "tool_calls", "tool_call_id", "name"
//   kAnthropic  user/assistant roles (plus leading system messages), content
//               blocks text, tool_use, tool_result, thinking, image, ...;
//               block fields such as cache_control are kept as given
//   kPlain      the pgEdge agent's {role, content} with string content
// kAuto detects: any Anthropic-only block (tool_use, tool_result, thinking,
// redacted_thinking, image with "source", document) or "cache_control"
// means kAnthropic; any OpenAI-only feature ("tool_calls", "tool_call_id",
// role tool, "name", image_url/input_audio parts, "function_call") means
// kOpenAI; otherwise string contents only mean kPlain and text blocks
// kOpenAI. Kept messages are emitted as the input's message objects,
// minified, members in their order (string escapes are normalized: "\u00e9"
// comes back as "é"); summaries are new messages in the same format.
//
// The task. The task is the user's actual request, found as a person would:
// the last user message with text before the first assistant turn that is
// not a demonstration, a worked example shown first (SWE-agent's "Here is a
// demonstration ... --- DEMONSTRATION ---", few-shot blocks, "<example>",
// "example session", a line starting "Example:", or messages flagged
// "is_demo": true). A demonstration marked so may span turns: the assistant
// turns after it, up to the next user request, are the example's.
// Demonstrations are contextual (summarized like other context) and their
// edits and errors never reach a summary. With explain, the task's and the
// demonstrations' MessageDecision::detail says why.
//
// What is kept. Must-keep messages: system and developer messages, anchors
// (while keep_anchors: the task, user corrections and refusals, tool
// definitions, SQL DDL), the last message's unit, and what the next turn
// needs (while keep_anchors): the final decision (the last assistant text),
// the latest plan, the latest user request and the last test or program
// run's result. Everything else is dropped in order of value (transient,
// routine, contextual, important; oldest first; the recent window and the
// newest important messages last) until the target is met, and dropped
// units that still fit are given back.
//
// Budget. Tokens are counted exactly with one tokenizer, the one the model
// (else token_counter_type) names, by the rules of CountMessages()
// (message_count.h): compacted_tokens equals CountMessages() of the output.
// When the must-keep messages and a summary of the rest do not fit, they
// degrade gracefully, the largest first: each is cut in proportion to the
// square of what it holds above its floor (a short final answer is left
// whole while a long system prompt gives), down to the floor (a system
// prompt keeps its first and last paragraphs, the task its
// first paragraph, code and error blocks, command output its traceback's
// last frame, exception and error lines and its last line, other text its
// first paragraph; at most 64..192 tokens of them), never to a bare marker;
// when a first round leaves more than a tenth of the target unused, the
// cuts are redone with that room, so the budget is not wasted. Status is
// then kDegraded and must_keep_cut_tokens says how much was cut. What the
// next turn needs is let go first, one kind at a time (the latest plan, the
// last result, the latest request, the final decision: it becomes the last
// thing dropped), when even the floors do not fit or the result still
// exceeds the target after the cuts. When the rest still does not fit,
// status is kInfeasible, budget_met is false and over_budget_by says by how
// much.
//
// Cuts. A message is cut around a visible marker line, "[... ctxkit cut N
// lines (M tokens) ...]", keeping whole lines, its head and its tail
// (command output keeps two thirds of its room for the tail, where errors
// and test summaries are), and its floor's lines first; a single line longer
// than its share is cut at a token boundary, never inside a character.
//
// Summaries. Dropped runs get summaries in the pgEdge agent's "[Compressed
// context:
// ...]" form: the files edited, every distinct error line of command output
// (with a traceback's exception line), what the user asked, decisions,
// names, calls, tools and SQL tables, as far as the summary's allowance goes
// (least useful items first given up; the message count never). A summary
// takes what its facts need, up to a tenth of the tokens it replaces and
// max_summary_tokens; all of them together at most a fifth of the target.
// Runs are grouped so that there is at most one summary per ten kept
// messages (at least two allowed): a group's summary stands where its first
// run was.
//
// Structure. Tool calls and their results are kept or dropped together;
// original order is preserved; leading system messages stay first; in the
// Anthropic format the first non-system message stays a user message and
// roles keep alternating (a summary that would break this is folded into the
// next kept message). ValidateChatHistory() checks all of this.
//
// Determinism. The same input and options give the same bytes.
//
// Cancellation. A compaction polls CompactionOptions::cancel (the JSON entry
// points take it as an argument) by the contract of ctxkit/cancel.h: at the
// start, between messages while it counts, classifies, digests, cuts and
// assembles them, before each call of the host's Summarizer, and once more
// before it writes the cache, analytics or a compacted view. Once the check
// says true it returns CANCELLED and has written nothing; a check that
// never does leaves the result byte for byte as without one. Not polled:
// parsing the JSON (simdjson, gigabytes a second), planning (a few passes
// over the units that read no text), reading a stored conversation, and
// writing the response document once the result is made.
//
// Thread safety: a Compactor is immutable after construction; every method
// may run concurrently from many threads (the Cache and Analytics it is
// given are thread-safe; a Summarizer must be too). Results are values owned
// by the caller.

#ifndef CTXKIT_COMPACTOR_H_
#define CTXKIT_COMPACTOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/cancel.h"
#include "ctxkit/classifier.h"
#include "ctxkit/export.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"

namespace ctxkit {

class Analytics;
class Cache;
class ConversationStore;

enum class ChatFormat : uint8_t { kAuto, kOpenAI, kAnthropic, kPlain };
// "auto", "openai", "anthropic", "plain"; static storage.
CTXKIT_EXPORT const char* ChatFormatName(ChatFormat format) noexcept;
// INVALID_ARGUMENT naming "format" and the four names otherwise.
CTXKIT_EXPORT StatusOr<ChatFormat> ParseChatFormat(std::string_view name);

enum class CompactionStrategy : uint8_t {
  // Classify; drop transient messages; summarize routine, then contextual,
  // then important spans, oldest first, until the target is met.
  kSmart,
  // Summarize everything outside the recent window and the anchors.
  kSummarize,
  // Drop the oldest messages (keeping system messages and anchors), no
  // summaries.
  kRemoveOld,
  // Merge consecutive same-role text messages and drop near-duplicates
  // (repeated views of the same file, identical outputs) keeping the last.
  kCompressSimilar,
};
// "smart", "summarize", "remove_old", "compress_similar"; static storage.
CTXKIT_EXPORT const char* CompactionStrategyName(CompactionStrategy s) noexcept;
CTXKIT_EXPORT StatusOr<CompactionStrategy> ParseCompactionStrategy(
    std::string_view name);

// The ranges of CompactionOptions' numeric fields, for callers that check
// input before calling (a CLI, a tool schema): Compact() refuses a value
// outside them with INVALID_ARGUMENT naming the option.
inline constexpr int64_t kCompactionMaxTokensLimit = int64_t{1} << 40;
// recent_window and min_important_messages.
inline constexpr int64_t kCompactionCountLimit = int64_t{1} << 31;
inline constexpr int64_t kCompactionMinSummaryTokens = 16;
inline constexpr int64_t kCompactionMaxSummaryTokens = int64_t{1} << 20;
inline constexpr double kCompactionMinTargetRatio = 0.1;
inline constexpr double kCompactionMaxTargetRatio = 0.9;

// Every strategy ends by enforcing the budget the way kSmart does, so the
// budget guarantee holds for all of them.
struct CompactionOptions {
  int64_t max_tokens = 100000;  // 1..kCompactionMaxTokensLimit
  // Messages at the end kept before anything older
  // (0..kCompactionCountLimit); the last message is always kept.
  int64_t recent_window = 10;
  bool keep_anchors = true;
  // Keep the classifier's "tool_result" rule: tool results no more specific
  // rule claims (file views, searches and errors have their own) are
  // contextual rather than routine. False removes the rule.
  bool preserve_tool_results = true;
  // Keep the "schema_info" rule (schema talk is important). False removes it.
  bool preserve_schema_info = true;
  bool enable_summarization = true;  // dropped spans become summaries
  // The newest this many important messages before the recent window go
  // after every other older message, just before the window (0..2^31).
  int64_t min_important_messages = 3;
  // "generic", "openai", "anthropic", "ollama" (CountMessagesForCounterType)
  // or empty: the model decides, else "anthropic" for Anthropic input and
  // "openai" otherwise.
  std::string token_counter_type;
  // A model name (ModelRegistry): its tokenizer and message format count.
  // Takes precedence over token_counter_type. A name the registry does not
  // know is INVALID_ARGUMENT naming the closest known ones, unless
  // estimate_unknown_model is set.
  std::string model;
  // Count an unknown `model` with EstimateTokens() instead of refusing it;
  // the result then says so (CompactionResult::method is kHeuristic,
  // encoding is empty).
  bool estimate_unknown_model = false;
  // The registered Summarizer writes the summaries, with ctxkit's
  // extractive one as its fallback. ctxkit's own summaries always carry the
  // enhanced form's entities, errors, actions and decisions.
  bool enable_llm_summarization = false;
  bool enable_caching = false;
  int64_t cache_ttl_ms = 3600 * 1000;  // 0 = never expires
  bool enable_analytics = false;
  CompactionStrategy strategy = CompactionStrategy::kSmart;
  // When set (0.1..0.9), the target is also at most this share of the
  // history's tokens.
  std::optional<double> target_ratio;
  ChatFormat format = ChatFormat::kAuto;
  // Fill CompactionResult::decisions.
  bool explain = false;
  // Each summary message costs at most this many tokens
  // (kCompactionMinSummaryTokens..kCompactionMaxSummaryTokens). A
  // summary takes what its facts need: about 200 tokens for a short span,
  // up to a tenth of a long one's tokens, all summaries together at most a
  // fifth of the target (see "Summaries").
  int64_t max_summary_tokens = 65536;
  // The classifier to use (e.g. the built-in table plus the caller's rules,
  // see Classifier::AddRule); null = Classifier::Default().
  std::shared_ptr<const Classifier> classifier;
  // Asked on the compacting thread, between units of work, whether to stop
  // (ctxkit/cancel.h has the contract: how often, CANCELLED, nothing
  // written); empty = never. Not part of the cache key: it changes whether
  // a result comes, never which.
  CancelCheck cancel;
};

// A dropped span, as a Summarizer receives it.
struct SummaryRequest {
  std::string messages_json;  // the span's messages, a JSON array
  std::string extractive;     // ctxkit's own summary of it
  size_t message_count = 0;
  size_t max_tokens = 0;  // the summary message's token allowance
};

// A host-provided summarizer (e.g. an LLM call). Its text replaces the
// extractive summary; on error, or when its text does not fit max_tokens,
// the extractive summary is used and the failure is counted in
// CompactionResult::summarizer_failures.
class CTXKIT_EXPORT Summarizer {
 public:
  virtual ~Summarizer();
  virtual StatusOr<std::string> Summarize(const SummaryRequest& request) = 0;
};

// What happened to one input message (CompactionOptions::explain).
struct MessageDecision {
  enum class Action : uint8_t {
    kKept,        // emitted as given
    kTruncated,   // emitted with its largest text cut
    kSummarized,  // dropped, folded into a summary
    kDropped,     // dropped without summary (transient, remove_old)
    kMerged,      // merged into a neighbour (compress_similar)
  };
  size_t index = 0;
  Tier tier = Tier::kRoutine;
  std::string rule;  // the classification rule that fired
  Action action = Action::kKept;
  // Why it was kept or dropped: "system", "anchor", "recent_window",
  // "last_message", "tool_pair", "budget", "duplicate", ...
  std::string reason;
  // More about the choice when there is more to say, else empty: why a
  // message is the task, a demonstration, or the user's text before the
  // task (see "The task").
  std::string detail;
  size_t tokens = 0;
};
CTXKIT_EXPORT const char* DecisionActionName(
    MessageDecision::Action a) noexcept;

struct CompactionSummary {
  std::vector<std::string> topics;
  std::vector<std::string> tables;
  std::vector<std::string> tools;
  std::string description;  // "[Compressed context: ...]"
};

struct CompactedMessage {
  std::string json;            // minified message object
  size_t tokens = 0;           // with its per-message overhead
  bool is_compressed = false;  // a summary, or holds one, or was truncated
  // Index of the input message it is (or starts with); empty for a summary.
  std::optional<size_t> source_index;
};

// How a result stands against its budget.
enum class BudgetStatus : uint8_t {
  // Within the target, every must-keep message whole.
  kMet,
  // Within the target, but the must-keep messages alone did not fit: some
  // were cut (never below their floors, see "Budget");
  // CompactionResult::must_keep_cut_tokens says how much.
  kDegraded,
  // Over the target even with every must-keep message at its floor;
  // over_budget_by says by how much.
  kInfeasible,
};
// "met", "degraded", "infeasible"; static storage.
CTXKIT_EXPORT const char* BudgetStatusName(BudgetStatus status) noexcept;

struct CompactionResult {
  ChatFormat format = ChatFormat::kOpenAI;  // resolved
  CompactionStrategy strategy = CompactionStrategy::kSmart;
  std::vector<CompactedMessage> messages;
  std::string messages_json;  // the same, as one JSON array
  CompactionSummary summary;  // over everything dropped
  size_t original_tokens = 0;
  size_t compacted_tokens = 0;  // token_estimate
  size_t target_tokens = 0;     // min(max_tokens, target_ratio share)
  bool budget_met = true;       // status != kInfeasible
  BudgetStatus status = BudgetStatus::kMet;
  size_t over_budget_by = 0;  // compacted - target_tokens when not met
  // Text tokens cut from must-keep messages (system prompts, anchors, the
  // task, the last message, what the next turn needs): > 0 exactly when
  // status is kDegraded, or kInfeasible with cuts made.
  size_t must_keep_cut_tokens = 0;
  size_t original_count = 0;
  size_t compacted_count = 0;
  size_t dropped_count = 0;  // input messages not emitted as themselves
  size_t anchor_count = 0;
  size_t summary_count = 0;
  size_t truncated_count = 0;
  size_t summarizer_failures = 0;
  int64_t tokens_saved() const {
    return static_cast<int64_t>(original_tokens) -
           static_cast<int64_t>(compacted_tokens);
  }
  // compacted / original tokens (1 for an empty count).
  double compression_ratio = 1;
  std::string encoding;  // empty when EstimateTokens() counted
  CountMethod method = CountMethod::kTokenizer;
  bool from_cache = false;
  std::vector<MessageDecision> decisions;  // when explain
};

// What a Compactor works with. Every member is optional. The cache,
// analytics and registry are borrowed and must outlive the Compactor; the
// summarizer and classifier are shared and kept alive by it.
struct CompactorServices {
  Cache* cache = nullptr;
  Analytics* analytics = nullptr;
  const ModelRegistry* registry = nullptr;  // null = ModelRegistry::Default()
  std::shared_ptr<Summarizer> summarizer;
  // The rule table of every compaction whose options name no classifier:
  // typically the built-in table with the host's own rules added
  // (Classifier::AddRule). A request's "rules" (CompactJson) are added to a
  // copy of it, so they come after its added rules and before its built-in
  // ones. Null = Classifier::Default().
  std::shared_ptr<const Classifier> classifier;
};

// How a result stands against its budget: CompactionResult's figures, for
// callers of the JSON entry points that act on them without parsing the
// document (the C ABI returns OUT_OF_RANGE when !met()).
struct CompactionBudget {
  BudgetStatus status = BudgetStatus::kMet;
  size_t target_tokens = 0;
  size_t compacted_tokens = 0;
  size_t over_budget_by = 0;
  size_t must_keep_cut_tokens = 0;
  bool met() const { return status != BudgetStatus::kInfeasible; }
};

class CTXKIT_EXPORT Compactor {
 public:
  explicit Compactor(CompactorServices services = {});
  ~Compactor();
  Compactor(const Compactor&) = delete;
  Compactor& operator=(const Compactor&) = delete;

  // Compacts `history_json` (see Formats). Errors: INVALID_ARGUMENT naming
  // the message index and field (malformed JSON, unknown role, content of
  // the wrong type, a tool result with an unknown id, an empty history) or
  // the option; the tokenizer's and, with caching, the cache's errors. An
  // infeasible budget is not an error: see budget_met. CANCELLED when
  // options.cancel says so (see Cancellation).
  StatusOr<CompactionResult> Compact(std::string_view history_json,
                                     const CompactionOptions& options) const;

  // Compacts the stored conversation `conversation_id` (its messages in the
  // OpenAI format) and stores the result beside it as a new compacted view
  // (ConversationStore::SaveCompactedView); the messages are not touched.
  // Options that name neither a model nor a token_counter_type count with
  // the conversation's model; that stored name is estimated when the
  // registry does not know it (conversations may hold any model name, and
  // their own token counts are estimated alike). Returns the view's version
  // in *version when `version` is not null. Errors as Compact() plus the
  // store's (NOT_FOUND for an unknown conversation); a cancelled call
  // (options.cancel) saves no view.
  StatusOr<CompactionResult> CompactConversation(
      ConversationStore& conversations, std::string_view conversation_id,
      const CompactionOptions& options, uint64_t* version = nullptr) const;

  // The JSON entry point: `request_json` is the pgEdge agent's POST
  // /api/chat/compact body, or a bare array of messages (every default).
  // Members (all optional but "messages"):
  //   messages            the history (see Formats)
  //   max_tokens, recent_window, keep_anchors, model, estimate_unknown_model,
  //   format, strategy, target_ratio, explain, max_summary_tokens
  //                       the CompactionOptions of the same names (format
  //                       and strategy by name)
  //   preserve_recent     the MCP Token Optimizer's name for recent_window
  //   options             {preserve_tool_results, preserve_schema_info,
  //                       enable_summarization, min_important_messages,
  //                       token_counter_type, enable_llm_summarization,
  //                       enable_caching, cache_ttl_ms, enable_analytics}
  //   rules               an array as Classifier::AddRulesJson, added to
  //                       the services' table (see CompactorServices)
  //   response            "chat_compact" (default) or "compress_context"
  // When a key occurs twice the first occurrence counts; null is the same
  // as absent. The response is the pgEdge agent's {messages, summary,
  // token_estimate, compaction_info} plus "schema_version", "budget",
  // "format", "strategy", "encoding", "counting", "from_cache" and, with
  // explain, "decisions"; with "response": "compress_context", the MCP Token
  // Optimizer's shape (CompressContextResponseJson). An infeasible budget is
  // not an error: the document's "budget" says so, and so does *budget when
  // `budget` is not null (left untouched on error).
  // Errors: INVALID_ARGUMENT naming the member for an unknown key (with the
  // closest known one: "unknown key 'max_token'; did you mean
  // 'max_tokens'?", "options: unknown key ..."), a value of the wrong type
  // or out of range, a rule that clashes with the services' table
  // ("rules[0].name ..."), an unknown model; otherwise as Compact().
  StatusOr<std::string> CompactJson(std::string_view request_json,
                                    CompactionBudget* budget = nullptr) const;
  // As above, asking `cancel` whether to stop (see Cancellation): CANCELLED
  // once it says so, *budget then untouched. `cancel` is only used during
  // the call.
  StatusOr<std::string> CompactJson(std::string_view request_json,
                                    const CancelCheck& cancel,
                                    CompactionBudget* budget = nullptr) const;

  // CompactConversation() driven by JSON: `options_json` holds the members
  // of a CompactJson request except "messages" (which is refused: the
  // stored messages are compacted); empty means every default. Returns the
  // CompactJson response document with "conversation_id" and
  // "view_version" (the version of the view saved) first, after
  // "schema_version" in the pgEdge agent's shape. *budget and *version as
  // CompactJson and CompactConversation. Errors as both.
  StatusOr<std::string> CompactConversationJson(
      ConversationStore& conversations, std::string_view conversation_id,
      std::string_view options_json, CompactionBudget* budget = nullptr,
      uint64_t* version = nullptr) const;
  // As above, asking `cancel` whether to stop (see Cancellation): CANCELLED
  // once it says so, with no view saved and *budget and *version untouched.
  StatusOr<std::string> CompactConversationJson(
      ConversationStore& conversations, std::string_view conversation_id,
      std::string_view options_json, const CancelCheck& cancel,
      CompactionBudget* budget = nullptr, uint64_t* version = nullptr) const;

 private:
  struct CTXKIT_NO_EXPORT Impl;
  std::unique_ptr<Impl> impl_;
};

// the MCP Token Optimizer's compress_context response for `result`: success,
// original_tokens, compressed_tokens, tokens_saved, compression_ratio,
// original_message_count, compressed_message_count, strategy and
// compressed_messages [{role, content, tokens, is_compressed}].
CTXKIT_EXPORT StatusOr<std::string> CompressContextResponseJson(
    const CompactionResult& result);

// Checks that `history_json` is a history a model API accepts in `format`
// (kAuto detects): known roles; content of the right types; system and
// developer messages only before all others (kAnthropic) ; every tool
// result answering a call of the assistant message right before it (only
// other results between), every call answered (the last message may hold
// unanswered calls); for kAnthropic the first non-system message is a user
// message, roles alternate and results are tool_result blocks at the start
// of the next user message. OK, or INVALID_ARGUMENT naming the first
// offending "messages[i].<field>" and the rule.
CTXKIT_EXPORT Status ValidateChatHistory(std::string_view history_json,
                                         ChatFormat format = ChatFormat::kAuto);

}  // namespace ctxkit

#endif  // CTXKIT_COMPACTOR_H_
