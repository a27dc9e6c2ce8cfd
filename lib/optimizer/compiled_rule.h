// A QueryRule compiled for matching: its kind as a bit, its pattern parsed
// into elements (words, groups of alternatives, optional groups), its word
// lists into sets. QueryOptimizer::Create() compiles every rule once; the
// compiled rules are then read, never changed, so they may be shared by
// threads.

#ifndef CTXKIT_LIB_OPTIMIZER_COMPILED_RULE_H_
#define CTXKIT_LIB_OPTIMIZER_COMPILED_RULE_H_

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"
#include "ctxkit/query_optimizer.h"

namespace ctxkit::internal {

// Rule kinds as bits, so a pass can enable a set of them.
inline constexpr int kFillerBit = 1 << 0;
inline constexpr int kHedgingBit = 1 << 1;
inline constexpr int kRedundantBit = 1 << 2;
inline constexpr int kPolitenessBit = 1 << 3;
inline constexpr int kVagueBit = 1 << 4;
inline constexpr int kAllEditing =
    kFillerBit | kHedgingBit | kRedundantBit | kPolitenessBit;

// The bit of a rule of `type`; 0 for kVerbosity and values out of range,
// which no rule may have.
int CategoryBit(IssueType type);

// The kinds of rule that edit for `goal` (vague words are only reported).
int GoalMask(OptimizationGoal goal);

struct Alternative {
  std::vector<std::string> words;
};
struct Element {
  std::vector<Alternative> alts;
  bool optional = false;
};

using WordSet = std::unordered_set<std::string>;

struct CompiledRule {
  QueryRule rule;
  std::vector<Element> elements;
  int bit = 0;
  WordSet not_after;
  WordSet next_in;
  WordSet next_not_in;
};

// Parses QueryRule::pattern (see query_optimizer.h for its grammar). Errors,
// INVALID_ARGUMENT naming `field`: an empty pattern, one over
// kMaxPatternBytes, an unclosed or nested group, an empty alternative, a
// word that is not lower-case ASCII letters and apostrophes, a group not
// followed by a space, more than 32 elements, an optional first element.
absl::StatusOr<std::vector<Element>> ParsePattern(std::string_view p,
                                                  std::string_view field);

// `list` as a set. INVALID_ARGUMENT naming `field`[k] for a word that is not
// lower-case ASCII letters and apostrophes.
absl::StatusOr<WordSet> CompileWordList(const std::vector<std::string>& list,
                                        std::string_view field);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_OPTIMIZER_COMPILED_RULE_H_
