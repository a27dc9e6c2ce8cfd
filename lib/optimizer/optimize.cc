// Optimize(): the query checked and counted, scanned for every kind of
// issue, edited for its goal, each kind's savings measured, truncated to
// max_tokens, and reported on (optimization_report.cc).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/model_registry.h"
#include "lib/base/field_check.h"
#include "lib/optimizer/optimizer_impl.h"
#include "lib/optimizer/segmenter.h"
#include "lib/optimizer/token_context.h"
#include "lib/status/status_macros.h"
#include "lib/tokenizer/tokenizer_internal.h"

namespace ctxkit {
namespace {

using internal::GoalMask;
using internal::HasNewline;
using internal::IsConstraint;
using internal::IsPunct;
using internal::kAllEditing;
using internal::kFillerBit;
using internal::kHedgingBit;
using internal::kPolitenessBit;
using internal::kRedundantBit;
using internal::kVagueBit;
using internal::Rewrite;
using internal::Round;
using internal::TextToken;
using internal::TextTokenKind;

}  // namespace

absl::StatusOr<QueryOptimization> QueryOptimizer::Impl::Optimize(
    std::string_view query, const OptimizeOptions& o) const {
  if (absl::Status s = CheckArguments(query, o); !s.ok()) return s;

  QueryOptimization res;
  res.model = o.model;
  res.goal = o.goal;
  res.original_query = std::string(query);
  bool exact = false;
  absl::StatusOr<size_t> original_tokens = Count(o.model, query, &exact);
  if (!original_tokens.ok()) return original_tokens.status();
  res.original_tokens = *original_tokens;
  res.tokens_exact = exact;

  Findings f;
  f.denom =
      res.original_tokens == 0 ? 1.0 : static_cast<double>(res.original_tokens);
  f.tokens = internal::Segment(query);
  f.found = Detect(f.tokens, kAllEditing | kVagueBit);

  absl::StatusOr<Rewrite> rewrite = RewriteQuery(query, o, res.original_tokens);
  if (!rewrite.ok()) return rewrite.status();
  // The goal's edit is the edit of every kind when it kept the content:
  // its count is then known.
  const bool all_kinds = GoalMask(o.goal) == kAllEditing && rewrite->verified;
  if (absl::Status s = MeasureSavings(
          query, o.model, res.original_tokens,
          all_kinds ? std::optional<size_t>(rewrite->tokens) : std::nullopt, f);
      !s.ok()) {
    return s;
  }
  res.issues = Issues(f);

  res.optimized_query = rewrite->text;
  res.optimized_tokens = rewrite->tokens;
  if (o.max_tokens.has_value() &&
      rewrite->tokens > static_cast<size_t>(*o.max_tokens)) {
    if (absl::Status s =
            TruncateResult(o.model, static_cast<size_t>(*o.max_tokens), res);
        !s.ok()) {
      return s;
    }
  }
  res.tokens_saved = static_cast<int64_t>(res.original_tokens) -
                     static_cast<int64_t>(res.optimized_tokens);
  res.reduction_percent =
      Round(100.0 * static_cast<double>(res.tokens_saved) / f.denom, 10.0);
  res.improvements = internal::Improvements(
      rewrite->applied, rewrite->collapsed, res, o.max_tokens);

  res.original_clarity_score = Clarity(f.found, f.tokens);
  {
    const std::vector<TextToken> opt_tokens =
        internal::Segment(res.optimized_query);
    res.clarity_score =
        Clarity(Detect(opt_tokens, kAllEditing | kVagueBit), opt_tokens);
  }

  if (absl::Status s = Recommend(f, o, rewrite->tokens, res); !s.ok()) {
    return s;
  }
  return res;
}

absl::Status QueryOptimizer::Impl::CheckArguments(std::string_view query,
                                                  const OptimizeOptions& o) {
  if (absl::Status s = internal::CheckText("query", query, kMaxQueryBytes);
      !s.ok()) {
    return s;
  }
  if (o.context.has_value()) {
    if (absl::Status s =
            internal::CheckText("context", *o.context, kMaxContextBytes);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = internal::CheckText("model", o.model, kMaxModelBytes);
      !s.ok()) {
    return s;
  }
  const int goal_value = static_cast<int>(o.goal);
  if (goal_value < 0 || goal_value > 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "optimization_goal is %d; it must be reduce_tokens, improve_clarity "
        "or both",
        goal_value));
  }
  if (o.max_tokens.has_value()) {
    if (absl::Status s =
            internal::CheckRange("max_tokens", *o.max_tokens, 1, kMaxMaxTokens);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> QueryOptimizer::Impl::Count(std::string_view model,
                                                   std::string_view text,
                                                   bool* exact) const {
  CTXKIT_ASSIGN_OR_RETURN(
      TokenCount c, internal::RegistryCountTokens(*registry, model, text));
  if (exact != nullptr) *exact = c.exact;
  return c.tokens;
}

std::vector<internal::CutPoint> internal::CutPoints(std::string_view text) {
  const std::vector<TextToken> tokens = Segment(text);
  std::vector<CutPoint> cuts;
  // The end of the last sentence holding a constraint word: no cut before
  // it. A sentence ends at . ! ? ; a line break or the end of the text.
  size_t floor = 0;
  bool sentence_limits = false;
  size_t offset = 0;
  for (const TextToken& t : tokens) {
    const size_t end = offset + t.text.size();
    if (t.kind == TextTokenKind::kWord && IsConstraint(t.key)) {
      sentence_limits = true;
    }
    const bool newline = HasNewline(t);
    const bool sentence_end = newline || IsPunct(&t, ".!?;");
    if (sentence_end && sentence_limits) {
      floor = newline ? offset : end;
      sentence_limits = false;
    }
    if (t.kind == TextTokenKind::kWord || t.kind == TextTokenKind::kProtected) {
      cuts.push_back({end, false});
    } else if (IsPunct(&t, ".!?,;:")) {
      if (!cuts.empty() && cuts.back().end == offset) cuts.pop_back();
      cuts.push_back({end, true});
    } else if (newline && !cuts.empty() && cuts.back().end == offset) {
      cuts.back().clause = true;
    }
    offset = end;
  }
  if (sentence_limits) floor = text.size();
  if (!cuts.empty() && cuts.back().end == text.size())
    cuts.back().clause = true;
  std::erase_if(cuts, [&](const CutPoint& c) { return c.end < floor; });
  if (floor > 0 && (cuts.empty() || cuts.front().end != floor)) {
    cuts.insert(cuts.begin(), {floor, true});
  }
  return cuts;
}

absl::Status QueryOptimizer::Impl::TruncateResult(
    std::string_view model, size_t max_tokens, QueryOptimization& res) const {
  const std::string text = res.optimized_query;
  const std::vector<internal::CutPoint> cuts = internal::CutPoints(text);
  if (cuts.empty()) {
    res.over_max_tokens = true;
    return absl::OkStatus();
  }
  // The end of the longest fitting prefix among the cuts (clause ends only,
  // or all), by binary search: counts of prefixes cut at word ends grow
  // with their length in practice; where a tokenizer breaks that, the
  // search may settle on a shorter prefix, never on one that does not fit.
  auto largest_fitting =
      [&](bool clause_only) -> absl::StatusOr<std::optional<size_t>> {
    std::vector<size_t> ends;
    for (const internal::CutPoint& c : cuts) {
      if (!clause_only || c.clause) ends.push_back(c.end);
    }
    std::optional<size_t> best;
    size_t lo = 0;
    size_t hi = ends.size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      absl::StatusOr<size_t> n =
          Count(model, std::string_view(text).substr(0, ends[mid]), nullptr);
      if (!n.ok()) return n.status();
      if (*n <= max_tokens) {
        best = ends[mid];
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return best;
  };
  absl::StatusOr<std::optional<size_t>> end = largest_fitting(true);
  if (!end.ok()) return end.status();
  if (!end->has_value()) {
    end = largest_fitting(false);
    if (!end.ok()) return end.status();
  }
  // Nothing fits: the shortest prefix that may be kept, over the budget.
  const size_t keep = end->has_value() ? **end : cuts.front().end;
  if (keep < text.size()) {
    res.optimized_query = text.substr(0, keep);
    res.truncated = true;
    absl::StatusOr<size_t> n = Count(model, res.optimized_query, nullptr);
    if (!n.ok()) return n.status();
    res.optimized_tokens = *n;
  }
  res.over_max_tokens = res.optimized_tokens > max_tokens;
  return absl::OkStatus();
}

absl::StatusOr<Rewrite> QueryOptimizer::Impl::RewriteQuery(
    std::string_view query, const OptimizeOptions& o,
    size_t original_tokens) const {
  Rewrite r;
  r.text = Edit(query, GoalMask(o.goal), r.applied);
  if (o.goal != OptimizationGoal::kImproveClarity) {
    std::string c = CollapseWhitespace(r.text);
    if (c != r.text) {
      r.collapsed = true;
      r.text = std::move(c);
    }
  }
  r.verified = PreservesContent(query, r.text);
  if (!r.verified) {
    r.text = std::string(query);
    r.applied = Applied();
    r.collapsed = false;
  }
  absl::StatusOr<size_t> tokens = Count(o.model, r.text, nullptr);
  if (!tokens.ok()) return tokens.status();
  r.tokens = *tokens;
  if (o.goal == OptimizationGoal::kReduceTokens && r.tokens > original_tokens) {
    r.text = std::string(query);
    r.tokens = original_tokens;
    r.applied = Applied();
    r.collapsed = false;
  }
  return r;
}

absl::Status QueryOptimizer::Impl::MeasureSavings(
    std::string_view query, std::string_view model, size_t original_tokens,
    std::optional<size_t> all_editing_tokens, Findings& f) const {
  const int bits[4] = {kFillerBit, kHedgingBit, kRedundantBit, kPolitenessBit};
  for (int k = 0; k < 4; ++k) {
    const bool present =
        std::any_of(f.found.begin(), f.found.end(),
                    [&](const Detection& d) { return d.bit == bits[k]; });
    if (!present) continue;
    Applied ignored;
    std::string alone = Edit(query, bits[k], ignored);
    if (!PreservesContent(query, alone)) continue;
    absl::StatusOr<size_t> n = Count(model, alone, nullptr);
    if (!n.ok()) return n.status();
    if (*n < original_tokens) f.saved_by[k] = original_tokens - *n;
  }
  size_t all_tokens = original_tokens;
  if (all_editing_tokens.has_value()) {
    all_tokens = *all_editing_tokens;
  } else {
    Applied ignored;
    std::string all = Edit(query, kAllEditing, ignored);
    if (PreservesContent(query, all)) {
      absl::StatusOr<size_t> n = Count(model, all, nullptr);
      if (!n.ok()) return n.status();
      all_tokens = *n;
    }
  }
  if (all_tokens < original_tokens) {
    f.verbosity = Round(
        static_cast<double>(original_tokens - all_tokens) / f.denom, 100.0);
  }
  return absl::OkStatus();
}

}  // namespace ctxkit
