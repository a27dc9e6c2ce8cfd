// ctxkit::QueryOptimizer: finds what makes a prompt longer or vaguer than it
// needs to be (filler words, hedges, wordy phrases, politeness padding,
// indirect requests, vague words) and rewrites it shorter and more direct,
// without ever dropping what the prompt is about or changing what it says.
//
//   auto result = ctxkit::QueryOptimizer::Default().Optimize(
//       "I was just wondering if you could maybe help me understand how to "
//       "really optimize my prompts for better token usage, basically.");
//   // result->optimized_query == "Help me understand how to optimize my "
//   //                            "prompts for better token usage."
//   auto json = ctxkit::ToJson(*result);  // the MCP Token Optimizer's
//   optimize_query shape
//
// The guarantee. The optimized query keeps, in their original order and
// byte for byte, every code span (`...`, ``` fenced blocks ```, including an
// unterminated one, which runs to the end), every quoted string ("...",
// '...', and their curly forms), every URL, and every word that no rule's
// pattern names: numbers, identifiers (snake_case, camelCase, paths, dotted
// names: any word holding a character other than an ASCII letter or an
// apostrophe), non-ASCII words and ordinary content words. Rules only ever
// match runs of plain ASCII words outside those spans. Only the first letter
// of a word may change (capitalized when it comes to start a sentence, and
// only when it is a plain lower-case word), and a '?' may become '.' when a
// question-form request ("Could you explain X?") becomes an instruction
// ("Explain X."). Optimize() verifies this on its own output and, should the
// check ever fail, returns the query unchanged. The one deliberate exception
// is max_tokens: the truncated query is then a prefix of the optimized one.
//
// Meaning. Words are kept where they change what the prompt says, even when
// they are elsewhere padding: "just", "only", "simply", "really" after a
// negation ("don't just copy", "not just about speed"); "just" where it
// restricts ("just the standard library", "just one"); hedges in statements
// of belief ("I think maybe the issue is X", "it might be the cache",
// "maybe the server is down"), which say how sure the writer is. Hedges
// are removed only from requests ("Could you maybe check the logs?" ->
// "Check the logs."). tests/optimizer/meaning_table.tsv lists sentences of
// each kind with the outputs allowed for them.
//
// Thread safety: a QueryOptimizer is immutable after construction; Optimize()
// and every other const method may be called concurrently from any number of
// threads. It keeps no state between calls and touches no Store.

#ifndef CTXKIT_QUERY_OPTIMIZER_H_
#define CTXKIT_QUERY_OPTIMIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"

namespace ctxkit {

// What an Optimize() call aims for. The goal chooses which kinds of rules may
// edit the query (every kind is always *reported* in the issues):
//   kReduceTokens   filler words, politeness, hedges (including hedged
//                   requests, which can only be removed by making the request
//                   direct) and redundant phrases.
//   kImproveClarity hedges and hedged requests (restructured into direct
//                   requests) and redundant phrases (the replacement is also
//                   the clearer word); filler words and politeness stay;
//                   vague words are flagged with a recommendation. Whitespace
//                   is left as it is.
//   kBoth           everything of both.
enum class OptimizationGoal {
  kReduceTokens = 0,
  kImproveClarity = 1,
  kBoth = 2
};

// "reduce_tokens", "improve_clarity", "both"; "unknown" for a value outside
// the enumeration. Static storage.
CTXKIT_EXPORT std::string_view OptimizationGoalName(OptimizationGoal goal);

// The goal named by `name` (exactly as OptimizationGoalName() spells it).
// INVALID_ARGUMENT naming "optimization_goal" and the accepted names otherwise.
CTXKIT_EXPORT StatusOr<OptimizationGoal> ParseOptimizationGoal(
    std::string_view name);

// The kinds of issue. Each rule has one of the first five kinds.
enum class IssueType {
  kFillerWords = 0,      // "filler_words": just, really, basically, ...
  kHedging = 1,          // "hedging": could you maybe, I was wondering, ...
  kRedundantPhrase = 2,  // "redundant_phrase": in order to -> to, ...
  kPoliteness = 3,       // "politeness": please, thanks in advance, ...
  kVagueLanguage = 4,    // "vague_language": stuff, things, ... (flag only)
  kVerbosity = 5,        // "verbosity": the query as a whole (score only)
};

// The snake_case name shown above; "unknown" outside the enumeration.
CTXKIT_EXPORT std::string_view IssueTypeName(IssueType type);

enum class Impact { kLow = 0, kModerate = 1, kHigh = 2 };
// "low", "moderate", "high"; "unknown" outside the enumeration.
CTXKIT_EXPORT std::string_view ImpactName(Impact impact);

// Where a rule's match may start.
enum class RulePosition {
  kAnywhere = 0,
  // After the start of the text, a line break, or one of . ! ? , ; : (
  kClauseStart = 1,
  // After the start of the text, a line break, one of . ! ? : or a list
  // bullet (- * + > and the Unicode bullet).
  kSentenceStart = 2,
  // At a clause start, or followed by a clause end (see RuleFollow).
  kClauseEdge = 3,
};

// What must follow a rule's match.
enum class RuleFollow {
  kAnything = 0,
  // One of , ; : . ! ? ) or a line break or the end of the text.
  kClauseEnd = 1,
  // A word (so that "I guess so." keeps its "I guess").
  kWord = 2,
};

// One rule of the table. The built-in table is BuiltinRules() (its source,
// lib/optimizer/builtin_rules.cc, is the documentation of every entry);
// callers add their own through QueryOptimizerOptions::rules.
//
// Matching: a pattern matches a run of words separated only by whitespace
// (not by a blank line, punctuation or a protected span), compared ignoring
// ASCII case, with the typographic apostrophe read as "'". While the
// optimizer removes filler words, single-word filler rules' words may also
// sit between a pattern's words and are removed with the match ("I was
// really wondering if ..."). Where several rules match at one word, the
// longest match wins, then the earlier rule.
struct QueryRule {
  // What the match is reported as; kVerbosity is not a rule kind.
  IssueType type = IssueType::kFillerWords;
  // Space-separated elements, each a word ([a-z'] only, lower case) or a
  // group "(alt|alt|...)" whose alternatives are one or more words; a group
  // followed by '?' is optional. The first element must not be optional.
  // At most 1 KiB and 32 elements. Example:
  //   "(i was|i am|i'm) (just)? wondering (if|whether) you (could|can)"
  std::string pattern = {};
  // What the match becomes: empty removes it (and the punctuation that only
  // served it: "usage, basically." -> "usage."); otherwise plain text of at
  // most 256 bytes, capitalized when the match was. Must be empty for
  // kVagueLanguage rules (they never edit) and restructure rules.
  std::string replacement = {};
  RulePosition position = RulePosition::kAnywhere;
  RuleFollow follow = RuleFollow::kAnything;
  // A hedged request opener: removing it leaves the request itself, whose
  // first word is capitalized (when the opener was), and turns the '?' that
  // ends the sentence, if any, into '.'. Requires kSentenceStart and
  // type kHedging.
  bool restructure = false;
  // Not after a negation: "not", "no", "never", "without", "nor", ... or a
  // word ending in "n't" ("not really", "don't just").
  bool keep_after_negation = false;
  // Not directly after one of these words ("the very first").
  std::vector<std::string> not_after = {};
  // If not empty, the next word must be one of these (request verbs after
  // "could you").
  std::vector<std::string> next_word_in = {};
  // The next word must not be one of these.
  std::vector<std::string> next_word_not_in = {};
};

// How a QueryOptimizer is built.
struct QueryOptimizerOptions {
  // Start from BuiltinRules(); false: only `rules`.
  bool builtin_rules = true;
  // Extra rules, after the built-in ones (so on a tie a built-in rule wins).
  // At most kMaxRules in all.
  std::vector<QueryRule> rules = {};
  // The registry counting tokens and truncating; null means
  // ModelRegistry::Default(). Must outlive the optimizer.
  const ModelRegistry* registry = nullptr;
};

// One Optimize() call's inputs besides the query. Field names are those of
// the MCP Token Optimizer's optimize_query tool.
struct OptimizeOptions {
  // Text the query will be sent with; counted, and searched for sentences the
  // query repeats. When set: not empty, valid UTF-8, at most
  // QueryOptimizer::kMaxContextBytes.
  std::optional<std::string> context = std::nullopt;
  // Model whose tokenizer counts (ModelRegistry names; an unknown model is
  // counted by EstimateTokens() and the result says tokens_exact false).
  // Not empty, valid UTF-8, at most kMaxModelBytes.
  std::string model = std::string(kDefaultModel);
  OptimizationGoal goal = OptimizationGoal::kBoth;
  // When set, the optimized query is cut to fit this many tokens, by
  // dropping text from its end, 1..kMaxMaxTokens. Meaning comes before the
  // budget, as a caller who sends the result to an agent needs: a cut
  // never drops or enters a sentence that holds a negation, a condition or
  // a restriction ("Archive the entries, but do not delete the logs" is
  // never cut to "Archive the entries, but do", nor to "Archive the
  // entries."), nor anything before such a sentence, and never splits a
  // word, a code span or a quoted string. Within that, the longest prefix
  // that fits and ends a clause (at . ! ? , ; : a line break) is kept; when
  // none fits, the longest that fits and ends a word; when none fits
  // either, the shortest allowed prefix, which is then over the budget
  // (QueryOptimization::over_max_tokens; possibly the whole query, not
  // truncated).
  std::optional<int64_t> max_tokens = std::nullopt;
};

// One kind of issue found in the original query.
struct QueryIssue {
  IssueType type = IssueType::kFillerWords;
  // The distinct words or phrases found, lower case (phrases with single
  // spaces), in order of first appearance. Empty for kVerbosity.
  std::vector<std::string> words;
  // How many matches in all (a word found twice counts twice).
  size_t occurrences = 0;
  // kVerbosity only: the share of the original's tokens that carry no
  // content, 1 - tokens(query with every removable phrase removed) /
  // tokens(query), rounded to 2 decimals. Reported when >= 0.10.
  std::optional<double> score;
  // Share s of the original's tokens this kind of issue costs (for
  // verbosity, the score): high when s >= 0.25, moderate when >= 0.05, low
  // otherwise. Vague words, which cost no tokens: low for 1, moderate for 2
  // or 3, high for more.
  Impact impact = Impact::kLow;
  // kRedundantPhrase: "in order to -> to" for each distinct phrase.
  std::vector<std::string> suggestions;
};

struct QueryRecommendation {
  std::string priority;     // "high", "medium" or "low"
  std::string suggestion;   // an instruction for the person writing prompts
  size_t tokens_saved = 0;  // tokens following it alone would save
};

// The result of Optimize(): everything the MCP Token Optimizer's optimize_query
// response holds, plus a few fields it lacks (marked). Plain values, owned.
struct QueryOptimization {
  std::string model;                                // (extra) as asked
  OptimizationGoal goal = OptimizationGoal::kBoth;  // (extra)
  // (extra) Whether counts come from the model's own tokenizer (see
  // TokenCount::exact; false for Claude 3+ and unknown models).
  bool tokens_exact = false;

  // original
  std::string original_query;
  size_t original_tokens = 0;
  std::vector<QueryIssue> issues;  // in IssueType order

  // optimized
  std::string optimized_query;
  size_t optimized_tokens = 0;
  // E.g. "Removed filler words (4)", "Simplified structure (1 hedged request
  // made direct)", "Preserved core meaning" (only when nothing was cut),
  // "Truncated to 10 tokens (max_tokens): ...", "Kept 12 tokens, over
  // max_tokens 7: ..."; "No changes needed" when nothing changed.
  std::vector<std::string> improvements;
  bool truncated = false;  // (extra) max_tokens cut the optimized query
  // (extra) max_tokens was set and optimized_tokens still exceeds it (see
  // OptimizeOptions::max_tokens).
  bool over_max_tokens = false;

  // analysis
  int64_t tokens_saved = 0;        // original_tokens - optimized_tokens
  double reduction_percent = 0.0;  // 100 * tokens_saved / original, 1 decimal
  // Of the optimized query, in [0, 1], 2 decimals: 1 minus penalties, each
  // capped: 0.04 per filler word (cap 0.3), 0.10 per hedge (0.3), 0.03 per
  // redundant phrase (0.15), 0.02 per politeness phrase (0.1), 0.05 per
  // vague word (0.25), 0.05 per sentence over 35 words (0.15).
  double clarity_score = 1.0;
  double original_clarity_score = 1.0;  // (extra) the same, of the original
  // Sorted high, medium, low, then by tokens_saved, larger first.
  std::vector<QueryRecommendation> recommendations;

  // (extra) Only when a context was given.
  std::optional<size_t> context_tokens;
};

class CTXKIT_EXPORT QueryOptimizer {
 public:
  static constexpr size_t kMaxQueryBytes = 64 * 1024;
  static constexpr size_t kMaxContextBytes = 1024 * 1024;
  static constexpr size_t kMaxModelBytes = 256;
  static constexpr int64_t kMaxMaxTokens = 10'000'000;
  static constexpr size_t kMaxRules = 4096;
  static constexpr size_t kMaxPatternBytes = 1024;
  static constexpr size_t kMaxReplacementBytes = 256;

  // An optimizer with the given rules. INVALID_ARGUMENT naming the rule and
  // field ("rules[3].pattern: ...", "rules[0].next_word_in[2] ...") for a
  // rule that breaks QueryRule's requirements, or for more than kMaxRules.
  static StatusOr<std::unique_ptr<QueryOptimizer>> Create(
      QueryOptimizerOptions options = {});

  // The process-wide optimizer with the built-in rules and the default
  // registry; created on first use, never destroyed.
  static const QueryOptimizer& Default();

  // The built-in rule table (a fresh copy).
  static std::vector<QueryRule> BuiltinRules();

  ~QueryOptimizer();
  QueryOptimizer(const QueryOptimizer&) = delete;
  QueryOptimizer& operator=(const QueryOptimizer&) = delete;

  // Analyzes and optimizes `query`. Errors, each INVALID_ARGUMENT naming the
  // field: "query" empty, over kMaxQueryBytes or not valid UTF-8; "context"
  // likewise when set (limit kMaxContextBytes); "model" empty, over
  // kMaxModelBytes or not valid UTF-8; "optimization_goal" not one of the
  // enumerators; "max_tokens" outside 1..kMaxMaxTokens. Errors of the
  // model's tokenizer (e.g. DATA_LOSS of a damaged vocabulary) are returned
  // as they are. Nothing is retained from the arguments.
  StatusOr<QueryOptimization> Optimize(
      std::string_view query, const OptimizeOptions& options = {}) const;

  // The rules in effect, built-in ones first.
  const std::vector<QueryRule>& rules() const;

 private:
  struct CTXKIT_NO_EXPORT Impl;
  CTXKIT_NO_EXPORT explicit QueryOptimizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The one document of an optimization, which the C ABI
// (ctxkit_query_optimize) returns, `ctxkit optimize` prints and the
// optimize_query tool returns inside the MCP Token Optimizer's envelope
// ("success" first):
//   {"schema_version":1,
//    "original":{"query","tokens","issues":[{"type", "words" (filler_words,
//    vague_language) or "phrases" (hedging, redundant_phrase, politeness),
//    "occurrences", "score" (verbosity), "impact", "suggestions"
//    (redundant_phrase)}]},
//    "optimized":{"query","tokens","improvements","truncated",
//    "over_max_tokens"},
//    "analysis":{"tokens_saved","reduction_percent","clarity_score",
//    "original_clarity_score","recommendations":[{"priority","suggestion",
//    "tokens_saved"}]},
//    "model","optimization_goal","tokens_exact",
//    "context":{"tokens","combined_original_tokens",
//    "combined_optimized_tokens"} (only with a context)}
// INVALID_ARGUMENT if a string of `result` is not valid UTF-8 (never for a
// result Optimize() returned).
CTXKIT_EXPORT StatusOr<std::string> ToJson(const QueryOptimization& result);

}  // namespace ctxkit

#endif  // CTXKIT_QUERY_OPTIMIZER_H_
