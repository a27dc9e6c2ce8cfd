// The implementation behind ctxkit::QueryOptimizer, one file a step:
//   compiled_rule.cc        rules compiled for matching (Create())
//   rule_matcher.cc         finding rule matches in segmented text
//   query_editor.cc         the edit passes and the check of the guarantee
//   optimize.cc             Optimize(): from a query to its result
//   optimization_report.cc  issues, improvements, clarity, recommendations
//
// Thread safety: Create() builds an Impl and nothing changes it afterwards;
// its const methods may run on any number of threads at once.

#ifndef CTXKIT_LIB_OPTIMIZER_OPTIMIZER_IMPL_H_
#define CTXKIT_LIB_OPTIMIZER_OPTIMIZER_IMPL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/query_optimizer.h"
#include "lib/optimizer/compiled_rule.h"
#include "lib/optimizer/segmenter.h"
#include "lib/optimizer/token_context.h"

namespace ctxkit::internal {

// A match found by Detect().
struct Detection {
  int bit = 0;
  size_t rule = 0;
  std::string phrase;  // the matched words' keys, space-separated
  std::string text;    // the matched text as written
  bool restructure = false;
};

// Counts of what edits did, summed over passes.
struct Applied {
  size_t filler = 0;
  size_t hedging = 0;
  size_t restructured = 0;
  size_t redundant = 0;
  size_t politeness = 0;
  size_t Total() const {
    return filler + hedging + restructured + redundant + politeness;
  }
};

// The query as edited for its goal, before any truncation.
struct Rewrite {
  std::string text;
  size_t tokens = 0;  // text's count
  Applied applied;    // all zero when the query was kept as it was
  bool collapsed = false;
  // The edit kept the content (PreservesContent); when not, `text` is the
  // query.
  bool verified = false;
};

// What Optimize() found in the query before editing it, for the steps that
// report on it.
struct Findings {
  std::vector<TextToken> tokens;  // the query, segmented
  std::vector<Detection> found;   // every match of every kind
  // The query's token count, at least 1: shares of it decide impacts and
  // priorities.
  double denom = 1.0;
  // Tokens saved by each editing kind alone (filler, hedging, redundant,
  // politeness; the fifth, vague words, never edits), and the share saved
  // by all of them together.
  size_t saved_by[5] = {0, 0, 0, 0, 0};
  double verbosity = 0.0;
};

// `v` rounded to a multiple of 1 / `scale` (100: two decimals), as the
// result's figures are given.
inline double Round(double v, double scale) {
  return std::round(v * scale) / scale;
}

// The improvements list of `res` (whose truncated, over_max_tokens and
// optimized_tokens are final): what the edits did, the collapse of
// whitespace, what max_tokens did; "No changes needed" when there was
// nothing. "Preserved core meaning" only when nothing was cut.
std::vector<std::string> Improvements(const Applied& applied, bool collapsed,
                                      const QueryOptimization& res,
                                      std::optional<int64_t> max_tokens);

// Where max_tokens may cut a text: after a word or protected span (`clause`
// false) or after clause punctuation (. ! ? , ; :), before a line break or
// at the end (`clause` true), never before the end of the last sentence
// that holds a constraint word (IsConstraint()). That end is the first
// point when it is not the start. Ascending; empty for a text without
// words.
struct CutPoint {
  size_t end = 0;  // the prefix [0, end) is kept
  bool clause = false;
};
std::vector<CutPoint> CutPoints(std::string_view text);

}  // namespace ctxkit::internal

namespace ctxkit {

struct QueryOptimizer::Impl {
  using Ahead = internal::Ahead;
  using Applied = internal::Applied;
  using Behind = internal::Behind;
  using CompiledRule = internal::CompiledRule;
  using Detection = internal::Detection;
  using Findings = internal::Findings;
  using Rewrite = internal::Rewrite;
  using TextToken = internal::TextToken;
  using WordSet = internal::WordSet;

  static constexpr size_t kNpos = static_cast<size_t>(-1);

  std::vector<QueryRule> rules;
  std::vector<CompiledRule> compiled;
  std::unordered_map<std::string, std::vector<size_t>> by_first_word;
  // Words of single-word filler rules allowed anywhere; inside another
  // rule's match they count as filler words removed.
  WordSet filler_words;
  // Those of them whose rule has no condition: a pattern may skip them.
  WordSet skippable;
  WordSet vocabulary;  // every word of every editing rule's pattern
  const ModelRegistry* registry = nullptr;

  // ---- matching (rule_matcher.cc) ----

  static size_t NextWordIndex(const std::vector<TextToken>& in, size_t pos);
  size_t MatchWords(const std::vector<TextToken>& in,
                    const std::vector<std::string>& words, size_t pos,
                    bool first, bool allow_skip) const;
  // The end (token index past the last word) of the longest match of
  // elements [elem, ...) starting at `pos`, or kNpos.
  size_t MatchFrom(const std::vector<TextToken>& in, const CompiledRule& r,
                   size_t elem, size_t pos, bool first, bool allow_skip) const;
  bool ConditionsHold(const CompiledRule& r, const Behind& b,
                      const Ahead& a) const;
  // The best rule of the kinds in `mask` matching at word `i` of `in`, given
  // what precedes it (`behind`: the input when detecting, the output when
  // editing). Returns the rule index and sets *end, or kNpos.
  size_t BestMatch(const std::vector<TextToken>& in, size_t i, int mask,
                   bool allow_skip, const Behind& behind, size_t* end) const;
  // Every match of the kinds in `mask`, each kind scanned on its own from
  // left to right, longest match first, without overlaps within a kind.
  std::vector<Detection> Detect(const std::vector<TextToken>& in,
                                int mask) const;

  // ---- editing (query_editor.cc) ----

  struct PassState {
    std::vector<TextToken> out;
    bool capitalize_next = false;
    bool question_pending = false;
  };

  static void Emit(PassState& st, TextToken t);
  // Applies rule `r` matched on in[i, end); returns where to continue.
  size_t Apply(const std::vector<TextToken>& in, size_t i, size_t end, size_t r,
               PassState& st, Applied& applied) const;
  std::vector<TextToken> EditPass(const std::vector<TextToken>& in, int mask,
                                  Applied& applied) const;
  // Edits to a fixed point.
  std::string Edit(std::string_view text, int mask, Applied& applied) const;
  // Runs of spaces between words become one space; spaces before a line
  // break and at the end go. Indentation at a line start stays.
  static std::string CollapseWhitespace(std::string_view text);
  // The guarantee: every protected span, and every word no editing rule
  // names, of `original` appears in `optimized`, in order (a word may only
  // have its first letter's case changed).
  bool PreservesContent(std::string_view original,
                        std::string_view optimized) const;

  // ---- the steps of Optimize() (optimize.cc) ----

  absl::StatusOr<QueryOptimization> Optimize(std::string_view query,
                                             const OptimizeOptions& o) const;
  // The argument checks Optimize() documents, in the order it lists them.
  static absl::Status CheckArguments(std::string_view query,
                                     const OptimizeOptions& o);
  // `text`'s tokens for `model`; *exact (when not null) says whether the
  // count is exact or the heuristic's. Errors: the registry's.
  absl::StatusOr<size_t> Count(std::string_view model, std::string_view text,
                               bool* exact) const;
  // Edits `query` for o.goal and keeps the edit only if it preserves the
  // content and, for kReduceTokens, does not cost tokens.
  absl::StatusOr<Rewrite> RewriteQuery(std::string_view query,
                                       const OptimizeOptions& o,
                                       size_t original_tokens) const;
  // Fills f.saved_by and f.verbosity: each editing kind found is applied
  // alone and counted, and so are all of them unless `all_editing_tokens`
  // already holds that count.
  absl::Status MeasureSavings(std::string_view query, std::string_view model,
                              size_t original_tokens,
                              std::optional<size_t> all_editing_tokens,
                              Findings& f) const;
  // Cuts res.optimized_query to `max_tokens` for `model` at a CutPoint: the
  // longest fitting prefix ending a clause, else the longest fitting one
  // ending a word, else the shortest allowed one. Sets res.truncated when
  // anything was cut and res.over_max_tokens when the result still exceeds
  // `max_tokens`; counts the result again. Errors: Count()'s.
  absl::Status TruncateResult(std::string_view model, size_t max_tokens,
                              QueryOptimization& res) const;

  // ---- the report (optimization_report.cc) ----

  // One issue per kind found, then verbosity when all edits together save
  // at least a tenth of the tokens.
  std::vector<QueryIssue> Issues(const Findings& f) const;
  // 1 minus penalties for each kind of issue and for long sentences, in
  // [0, 1], two decimals.
  static double Clarity(const std::vector<Detection>& found,
                        const std::vector<TextToken>& tokens);
  // Sets res.recommendations from the findings and the rest of `res` (its
  // issues, its optimized query, its truncation from `untruncated_tokens`
  // to o.max_tokens) and, when o.context is set, res.context_tokens.
  // Errors: Count()'s.
  absl::Status Recommend(const Findings& f, const OptimizeOptions& o,
                         size_t untruncated_tokens,
                         QueryOptimization& res) const;
};

}  // namespace ctxkit

#endif  // CTXKIT_LIB_OPTIMIZER_OPTIMIZER_IMPL_H_
