// The report of an optimization: the issues found and their impact, the
// improvements made, the clarity scores, and the recommendations, most
// urgent first. Impacts and priorities are shares of the query's tokens, so
// a long query needs proportionally more of an issue to rate it high.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/optimizer/optimizer_impl.h"

namespace ctxkit {
namespace {

using internal::Detection;
using internal::Findings;
using internal::HasNewline;
using internal::IsPunct;
using internal::kFillerBit;
using internal::kHedgingBit;
using internal::kPolitenessBit;
using internal::kRedundantBit;
using internal::kVagueBit;
using internal::Round;
using internal::TextToken;
using internal::TextTokenKind;

constexpr size_t kLongSentenceWords = 35;

Impact ImpactOfShare(double share) {
  if (share >= 0.25) return Impact::kHigh;
  if (share >= 0.05) return Impact::kModerate;
  return Impact::kLow;
}

std::string PriorityOfShare(double share) {
  if (share >= 0.10) return "high";
  if (share >= 0.03) return "medium";
  return "low";
}

int PriorityRank(const std::string& p) {
  if (p == "high") return 0;
  if (p == "medium") return 1;
  return 2;
}

std::string Quoted(const std::vector<std::string>& words, size_t max) {
  std::string out;
  for (size_t k = 0; k < words.size() && k < max; ++k) {
    if (k > 0) out += ", ";
    out += "'" + words[k] + "'";
  }
  return out;
}

std::string NormalizeForSearch(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

// Sentences (ended by ".!?" or a line break) of more than kLongSentenceWords
// words and protected spans.
size_t CountLongSentences(const std::vector<TextToken>& tokens) {
  size_t long_sentences = 0;
  size_t words = 0;
  for (const TextToken& t : tokens) {
    if (t.kind == TextTokenKind::kWord || t.kind == TextTokenKind::kProtected) {
      ++words;
    } else if (IsPunct(&t, ".!?") || HasNewline(t)) {
      if (words > kLongSentenceWords) ++long_sentences;
      words = 0;
    }
  }
  if (words > kLongSentenceWords) ++long_sentences;
  return long_sentences;
}

// The sentences of `tokens` of six words or more that `context` already
// holds, compared with runs of whitespace folded and ASCII case ignored.
std::vector<std::string> RepeatedSentences(const std::vector<TextToken>& tokens,
                                           std::string_view context) {
  const std::string haystack = NormalizeForSearch(context);
  std::vector<std::string> repeated;
  std::string sentence;
  size_t words = 0;
  auto flush = [&]() {
    if (words >= 6) {
      const std::string needle = NormalizeForSearch(sentence);
      if (!needle.empty() && haystack.find(needle) != std::string::npos) {
        repeated.push_back(sentence);
      }
    }
    sentence.clear();
    words = 0;
  };
  for (const TextToken& t : tokens) {
    if (IsPunct(&t, ".!?") || HasNewline(t)) {
      flush();
      continue;
    }
    if (t.kind == TextTokenKind::kWord || t.kind == TextTokenKind::kProtected) {
      ++words;
    }
    sentence += t.text;
  }
  flush();
  return repeated;
}

// One recommendation for each editing kind that saves tokens, and one for
// vague words; in that order.
std::vector<QueryRecommendation> EditRecommendations(
    const Findings& f, const std::vector<QueryIssue>& issues) {
  std::vector<QueryRecommendation> recs;
  auto first_of = [&](int bit, bool restructure_only) -> const Detection* {
    for (const Detection& d : f.found) {
      if (d.bit == bit && (!restructure_only || d.restructure)) return &d;
    }
    return nullptr;
  };
  auto words_of = [&](IssueType type) -> std::vector<std::string> {
    for (const QueryIssue& issue : issues) {
      if (issue.type == type) return issue.words;
    }
    return {};
  };
  auto add = [&](std::string priority, std::string suggestion, size_t saved) {
    recs.push_back(
        QueryRecommendation{std::move(priority), std::move(suggestion), saved});
  };
  if (f.saved_by[0] > 0) {
    add(PriorityOfShare(static_cast<double>(f.saved_by[0]) / f.denom),
        "Remove unnecessary qualifiers like " +
            Quoted(words_of(IssueType::kFillerWords), 2),
        f.saved_by[0]);
  }
  if (f.saved_by[1] > 0) {
    const Detection* d = first_of(kHedgingBit, true);
    std::string text;
    if (d != nullptr) {
      text = "Use direct language instead of '" + d->text + "'";
    } else {
      text = "Drop hedges like " + Quoted(words_of(IssueType::kHedging), 2) +
             " and state the request directly";
    }
    add(PriorityOfShare(static_cast<double>(f.saved_by[1]) / f.denom),
        std::move(text), f.saved_by[1]);
  }
  if (f.saved_by[2] > 0) {
    std::vector<std::string> s;
    for (const QueryIssue& issue : issues) {
      if (issue.type == IssueType::kRedundantPhrase) s = issue.suggestions;
    }
    std::string text = "Use shorter phrasing: ";
    for (size_t k = 0; k < s.size() && k < 2; ++k) {
      if (k > 0) text += ", ";
      text += s[k];
    }
    add(PriorityOfShare(static_cast<double>(f.saved_by[2]) / f.denom),
        std::move(text), f.saved_by[2]);
  }
  if (f.saved_by[3] > 0) {
    add(PriorityOfShare(static_cast<double>(f.saved_by[3]) / f.denom),
        "Drop politeness padding like " +
            Quoted(words_of(IssueType::kPoliteness), 2) +
            ": it costs tokens and adds no instruction",
        f.saved_by[3]);
  }
  if (first_of(kVagueBit, false) != nullptr) {
    add("medium",
        "Replace vague words like " +
            Quoted(words_of(IssueType::kVagueLanguage), 2) +
            " with the specific names, values or files meant",
        0);
  }
  return recs;
}

}  // namespace

namespace internal {

std::vector<std::string> Improvements(const Applied& applied, bool collapsed,
                                      const QueryOptimization& res,
                                      std::optional<int64_t> max_tokens) {
  std::vector<std::string> improvements;
  if (applied.filler > 0) {
    improvements.push_back(
        absl::StrFormat("Removed filler words (%d)", applied.filler));
  }
  if (applied.restructured > 0) {
    improvements.push_back(absl::StrFormat(
        "Simplified structure (%d hedged request%s made direct)",
        applied.restructured, applied.restructured == 1 ? "" : "s"));
  }
  if (applied.hedging > 0) {
    improvements.push_back(
        absl::StrFormat("Removed hedging (%d)", applied.hedging));
  }
  if (applied.redundant > 0) {
    improvements.push_back(
        absl::StrFormat("Replaced redundant phrases (%d)", applied.redundant));
  }
  if (applied.politeness > 0) {
    improvements.push_back(
        absl::StrFormat("Removed politeness padding (%d)", applied.politeness));
  }
  if (collapsed) improvements.push_back("Collapsed extra whitespace");
  // A cut drops what the query said after it, so the claim is only made
  // of an uncut query.
  if ((applied.Total() > 0 || collapsed) && !res.truncated) {
    improvements.push_back("Preserved core meaning");
  }
  if (res.truncated) {
    improvements.push_back(absl::StrFormat(
        "Truncated to %d tokens (max_tokens): the text after the cut was "
        "dropped",
        res.optimized_tokens));
  }
  if (res.over_max_tokens && max_tokens.has_value()) {
    improvements.push_back(absl::StrFormat(
        "Kept %d tokens, over max_tokens %d: no shorter cut keeps whole "
        "words and every sentence holding a negation, condition or "
        "restriction",
        res.optimized_tokens, *max_tokens));
  }
  if (improvements.empty()) improvements.push_back("No changes needed");

  return improvements;
}

}  // namespace internal

std::vector<QueryIssue> QueryOptimizer::Impl::Issues(const Findings& f) const {
  std::vector<QueryIssue> issues;
  struct Kind {
    int bit;
    IssueType type;
    int saved_index;
  };
  const Kind kinds[5] = {{kFillerBit, IssueType::kFillerWords, 0},
                         {kHedgingBit, IssueType::kHedging, 1},
                         {kRedundantBit, IssueType::kRedundantPhrase, 2},
                         {kPolitenessBit, IssueType::kPoliteness, 3},
                         {kVagueBit, IssueType::kVagueLanguage, 4}};
  for (const Kind& kind : kinds) {
    QueryIssue issue;
    issue.type = kind.type;
    for (const Detection& d : f.found) {
      if (d.bit != kind.bit) continue;
      ++issue.occurrences;
      if (std::find(issue.words.begin(), issue.words.end(), d.phrase) ==
          issue.words.end()) {
        issue.words.push_back(d.phrase);
        if (kind.bit == kRedundantBit) {
          const std::string& rep = compiled[d.rule].rule.replacement;
          issue.suggestions.push_back(
              d.phrase + " -> " +
              (rep.empty() ? std::string("(remove)") : rep));
        }
      }
    }
    if (issue.occurrences == 0) continue;
    if (kind.bit == kVagueBit) {
      issue.impact = issue.occurrences >= 4   ? Impact::kHigh
                     : issue.occurrences >= 2 ? Impact::kModerate
                                              : Impact::kLow;
    } else {
      issue.impact = ImpactOfShare(
          static_cast<double>(f.saved_by[kind.saved_index]) / f.denom);
    }
    issues.push_back(std::move(issue));
  }
  if (f.verbosity >= 0.10) {
    QueryIssue issue;
    issue.type = IssueType::kVerbosity;
    issue.score = f.verbosity;
    issue.occurrences = 1;
    issue.impact = ImpactOfShare(f.verbosity);
    issues.push_back(std::move(issue));
  }

  return issues;
}

double QueryOptimizer::Impl::Clarity(const std::vector<Detection>& found,
                                     const std::vector<TextToken>& tokens) {
  size_t filler = 0, hedging = 0, redundant = 0, polite = 0, vague = 0;
  for (const Detection& d : found) {
    switch (d.bit) {
      case kFillerBit:
        ++filler;
        break;
      case kHedgingBit:
        ++hedging;
        break;
      case kRedundantBit:
        ++redundant;
        break;
      case kPolitenessBit:
        ++polite;
        break;
      case kVagueBit:
        ++vague;
        break;
      default:
        break;
    }
  }
  const size_t long_sentences = CountLongSentences(tokens);
  double score = 1.0;
  score -= std::min(0.30, 0.04 * static_cast<double>(filler));
  score -= std::min(0.30, 0.10 * static_cast<double>(hedging));
  score -= std::min(0.15, 0.03 * static_cast<double>(redundant));
  score -= std::min(0.10, 0.02 * static_cast<double>(polite));
  score -= std::min(0.25, 0.05 * static_cast<double>(vague));
  score -= std::min(0.15, 0.05 * static_cast<double>(long_sentences));
  return Round(std::clamp(score, 0.0, 1.0), 100.0);
}

absl::Status QueryOptimizer::Impl::Recommend(const Findings& f,
                                             const OptimizeOptions& o,
                                             size_t untruncated_tokens,
                                             QueryOptimization& res) const {
  res.recommendations = EditRecommendations(f, res.issues);
  auto add = [&](std::string priority, std::string suggestion, size_t saved) {
    res.recommendations.push_back(
        QueryRecommendation{std::move(priority), std::move(suggestion), saved});
  };
  {
    const size_t long_sentences =
        CountLongSentences(internal::Segment(res.optimized_query));
    if (long_sentences > 0) {
      add("low",
          absl::StrFormat("Split the %d sentence%s over %d words into shorter "
                          "ones",
                          long_sentences, long_sentences == 1 ? "" : "s",
                          kLongSentenceWords),
          0);
    }
  }
  if (res.truncated || res.over_max_tokens) {
    add("high",
        absl::StrFormat("The optimized query was still %d tokens, over "
                        "max_tokens %d, so it was %s: shorten it or raise "
                        "max_tokens",
                        untruncated_tokens, *o.max_tokens,
                        res.truncated ? "cut" : "kept whole"),
        untruncated_tokens - res.optimized_tokens);
  }

  if (o.context.has_value()) {
    absl::StatusOr<size_t> n = Count(o.model, *o.context, nullptr);
    if (!n.ok()) return n.status();
    res.context_tokens = *n;
    const std::vector<std::string> repeated =
        RepeatedSentences(f.tokens, *o.context);
    size_t repeated_tokens = 0;
    for (const std::string& sentence : repeated) {
      absl::StatusOr<size_t> c = Count(o.model, sentence, nullptr);
      if (!c.ok()) return c.status();
      repeated_tokens += *c;
    }
    if (!repeated.empty()) {
      add(PriorityOfShare(static_cast<double>(repeated_tokens) / f.denom),
          absl::StrFormat("Refer to the context instead of repeating the %d "
                          "sentence%s it already contains",
                          repeated.size(), repeated.size() == 1 ? "" : "s"),
          repeated_tokens);
    }
  }

  std::stable_sort(
      res.recommendations.begin(), res.recommendations.end(),
      [](const QueryRecommendation& a, const QueryRecommendation& b) {
        const int ra = PriorityRank(a.priority);
        const int rb = PriorityRank(b.priority);
        if (ra != rb) return ra < rb;
        return a.tokens_saved > b.tokens_saved;
      });
  return absl::OkStatus();
}

}  // namespace ctxkit
