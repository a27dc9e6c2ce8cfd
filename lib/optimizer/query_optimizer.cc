// QueryOptimizer's public face: the names of its enumerators, Create(),
// which compiles the rule table (compiled_rule.h), and the calls that hand
// over to the implementation (optimizer_impl.h lists its files).

#include "ctxkit/query_optimizer.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/base/field_check.h"
#include "lib/json/utf8.h"
#include "lib/optimizer/optimizer_impl.h"
#include "lib/status/status_internal.h"

namespace ctxkit {
namespace {

using internal::Alternative;
using internal::CategoryBit;
using internal::CompiledRule;
using internal::CompileWordList;
using internal::Element;
using internal::kFillerBit;
using internal::kVagueBit;
using internal::ParsePattern;
using internal::WordSet;

}  // namespace

std::string_view OptimizationGoalName(OptimizationGoal goal) {
  switch (goal) {
    case OptimizationGoal::kReduceTokens:
      return "reduce_tokens";
    case OptimizationGoal::kImproveClarity:
      return "improve_clarity";
    case OptimizationGoal::kBoth:
      return "both";
  }
  return "unknown";
}

StatusOr<OptimizationGoal> ParseOptimizationGoal(std::string_view name) {
  for (OptimizationGoal g :
       {OptimizationGoal::kReduceTokens, OptimizationGoal::kImproveClarity,
        OptimizationGoal::kBoth}) {
    if (name == OptimizationGoalName(g)) return g;
  }
  std::string shown = internal::IsValidUtf8(name) && name.size() <= 64
                          ? std::string(name)
                          : std::string("(not shown)");
  return Status(StatusCode::kInvalidArgument,
                absl::StrFormat("optimization_goal \"%s\" is not one of "
                                "reduce_tokens, improve_clarity, both",
                                shown));
}

std::string_view IssueTypeName(IssueType type) {
  switch (type) {
    case IssueType::kFillerWords:
      return "filler_words";
    case IssueType::kHedging:
      return "hedging";
    case IssueType::kRedundantPhrase:
      return "redundant_phrase";
    case IssueType::kPoliteness:
      return "politeness";
    case IssueType::kVagueLanguage:
      return "vague_language";
    case IssueType::kVerbosity:
      return "verbosity";
  }
  return "unknown";
}

std::string_view ImpactName(Impact impact) {
  switch (impact) {
    case Impact::kLow:
      return "low";
    case Impact::kModerate:
      return "moderate";
    case Impact::kHigh:
      return "high";
  }
  return "unknown";
}

QueryOptimizer::QueryOptimizer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
QueryOptimizer::~QueryOptimizer() = default;

StatusOr<std::unique_ptr<QueryOptimizer>> QueryOptimizer::Create(
    QueryOptimizerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->registry = options.registry != nullptr ? options.registry
                                               : &ModelRegistry::Default();
  if (options.builtin_rules) impl->rules = BuiltinRules();
  const size_t builtin_count = impl->rules.size();
  if (builtin_count + options.rules.size() > kMaxRules) {
    return Status(
        StatusCode::kInvalidArgument,
        absl::StrFormat("rules holds %d rules; the limit is %d",
                        builtin_count + options.rules.size(), kMaxRules));
  }
  for (QueryRule& r : options.rules) impl->rules.push_back(std::move(r));

  for (size_t idx = 0; idx < impl->rules.size(); ++idx) {
    const QueryRule& q = impl->rules[idx];
    // Errors name the caller's index into options.rules.
    const std::string field =
        idx < builtin_count ? absl::StrFormat("builtin_rules[%d]", idx)
                            : absl::StrFormat("rules[%d]", idx - builtin_count);
    auto fail = [&](std::string_view what) {
      return Status(StatusCode::kInvalidArgument,
                    absl::StrFormat("%s.%s", field, what));
    };
    CompiledRule c;
    c.rule = q;
    c.bit = CategoryBit(q.type);
    if (c.bit == 0) {
      return fail(
          "type must be filler_words, hedging, redundant_phrase, "
          "politeness or vague_language");
    }
    absl::StatusOr<std::vector<Element>> elements =
        ParsePattern(q.pattern, field + ".pattern");
    if (!elements.ok()) return internal::ToPublic(elements.status());
    c.elements = *std::move(elements);
    if (absl::Status s = internal::CheckText(
            field + ".replacement", q.replacement, kMaxReplacementBytes, true);
        !s.ok()) {
      return internal::ToPublic(s);
    }
    if (q.replacement.find_first_of("\n\r") != std::string::npos) {
      return fail("replacement must be one line");
    }
    if (!q.replacement.empty() &&
        (q.type == IssueType::kVagueLanguage || q.restructure)) {
      return fail(
          "replacement must be empty for vague_language and "
          "restructure rules");
    }
    if (q.restructure && (q.position != RulePosition::kSentenceStart ||
                          q.type != IssueType::kHedging)) {
      return fail(
          "restructure requires type hedging and position "
          "kSentenceStart");
    }
    const int position = static_cast<int>(q.position);
    const int follow = static_cast<int>(q.follow);
    if (position < 0 || position > 3) return fail("position is out of range");
    if (follow < 0 || follow > 2) return fail("follow is out of range");
    absl::StatusOr<WordSet> set =
        CompileWordList(q.not_after, field + ".not_after");
    if (!set.ok()) return internal::ToPublic(set.status());
    c.not_after = *std::move(set);
    set = CompileWordList(q.next_word_in, field + ".next_word_in");
    if (!set.ok()) return internal::ToPublic(set.status());
    c.next_in = *std::move(set);
    set = CompileWordList(q.next_word_not_in, field + ".next_word_not_in");
    if (!set.ok()) return internal::ToPublic(set.status());
    c.next_not_in = *std::move(set);

    for (const Alternative& alt : c.elements[0].alts) {
      std::vector<size_t>& list = impl->by_first_word[alt.words[0]];
      if (list.empty() || list.back() != idx) list.push_back(idx);
    }
    if (c.bit != kVagueBit) {
      for (const Element& e : c.elements) {
        for (const Alternative& alt : e.alts) {
          for (const std::string& w : alt.words) impl->vocabulary.insert(w);
        }
      }
    }
    if (c.bit == kFillerBit && c.elements.size() == 1 &&
        q.position == RulePosition::kAnywhere) {
      // A skipped word's own conditions are not checked, so only a filler
      // that is padding wherever it stands may be skipped.
      const bool unconditional =
          q.follow == RuleFollow::kAnything && q.next_word_in.empty();
      for (const Alternative& alt : c.elements[0].alts) {
        if (alt.words.size() != 1) continue;
        impl->filler_words.insert(alt.words[0]);
        if (unconditional) impl->skippable.insert(alt.words[0]);
      }
    }
    impl->compiled.push_back(std::move(c));
  }
  return std::unique_ptr<QueryOptimizer>(new QueryOptimizer(std::move(impl)));
}

const QueryOptimizer& QueryOptimizer::Default() {
  static const QueryOptimizer* const kDefault = [] {
    StatusOr<std::unique_ptr<QueryOptimizer>> created = Create();
    // The built-in table is tested; failing here is a build defect.
    if (!created.ok()) {
      std::fprintf(stderr, "ctxkit: built-in query rules are invalid: %s\n",
                   created.status().ToString().c_str());
      std::abort();
    }
    return created->release();
  }();
  return *kDefault;
}

StatusOr<QueryOptimization> QueryOptimizer::Optimize(
    std::string_view query, const OptimizeOptions& options) const {
  return internal::ToPublic(impl_->Optimize(query, options));
}

const std::vector<QueryRule>& QueryOptimizer::rules() const {
  return impl_->rules;
}

}  // namespace ctxkit
