#include "lib/optimizer/compiled_rule.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

constexpr size_t kMaxPatternElements = 32;

bool IsPatternWord(std::string_view w) {
  if (w.empty()) return false;
  for (char c : w) {
    if (!((c >= 'a' && c <= 'z') || c == '\'')) return false;
  }
  return true;
}

absl::Status PatternError(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", field, why));
}

}  // namespace

int CategoryBit(IssueType type) {
  switch (type) {
    case IssueType::kFillerWords:
      return kFillerBit;
    case IssueType::kHedging:
      return kHedgingBit;
    case IssueType::kRedundantPhrase:
      return kRedundantBit;
    case IssueType::kPoliteness:
      return kPolitenessBit;
    case IssueType::kVagueLanguage:
      return kVagueBit;
    case IssueType::kVerbosity:
      return 0;
  }
  return 0;
}

int GoalMask(OptimizationGoal goal) {
  switch (goal) {
    case OptimizationGoal::kReduceTokens:
      return kAllEditing;
    case OptimizationGoal::kImproveClarity:
      return kHedgingBit | kRedundantBit;
    case OptimizationGoal::kBoth:
      return kAllEditing;
  }
  return 0;
}

absl::StatusOr<std::vector<Element>> ParsePattern(std::string_view p,
                                                  std::string_view field) {
  if (p.empty()) return PatternError(field, "must not be empty");
  if (p.size() > QueryOptimizer::kMaxPatternBytes) {
    return PatternError(
        field, absl::StrFormat("is %d bytes; the limit is %d", p.size(),
                               QueryOptimizer::kMaxPatternBytes));
  }
  auto split_words = [](std::string_view s) {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && s[i] == ' ') ++i;
      size_t j = i;
      while (j < s.size() && s[j] != ' ') ++j;
      if (j > i) words.emplace_back(s.substr(i, j - i));
      i = j;
    }
    return words;
  };
  std::vector<Element> elements;
  size_t i = 0;
  while (i < p.size()) {
    if (p[i] == ' ') {
      ++i;
      continue;
    }
    Element e;
    if (p[i] == '(') {
      const size_t close = p.find(')', i);
      if (close == std::string_view::npos) {
        return PatternError(field,
                            absl::StrFormat("unclosed '(' at offset %d", i));
      }
      std::string_view body = p.substr(i + 1, close - i - 1);
      if (body.find('(') != std::string_view::npos) {
        return PatternError(field, "groups cannot nest");
      }
      size_t start = 0;
      while (true) {
        const size_t bar = body.find('|', start);
        std::string_view alt_text = body.substr(
            start, bar == std::string_view::npos ? std::string_view::npos
                                                 : bar - start);
        Alternative alt;
        alt.words = split_words(alt_text);
        if (alt.words.empty()) {
          return PatternError(field,
                              absl::StrFormat("empty alternative in group at "
                                              "offset %d",
                                              i));
        }
        for (const std::string& w : alt.words) {
          if (!IsPatternWord(w)) {
            return PatternError(field,
                                absl::StrFormat("word \"%s\" is not lower-case "
                                                "ASCII letters and apostrophes",
                                                w));
          }
        }
        e.alts.push_back(std::move(alt));
        if (bar == std::string_view::npos) break;
        start = bar + 1;
      }
      i = close + 1;
      if (i < p.size() && p[i] == '?') {
        e.optional = true;
        ++i;
      }
      if (i < p.size() && p[i] != ' ') {
        return PatternError(field,
                            absl::StrFormat("expected a space after the group "
                                            "ending at offset %d",
                                            close));
      }
    } else {
      size_t j = i;
      while (j < p.size() && p[j] != ' ') ++j;
      std::string w(p.substr(i, j - i));
      if (!IsPatternWord(w)) {
        return PatternError(
            field, absl::StrFormat("word \"%s\" is not lower-case ASCII "
                                   "letters and apostrophes",
                                   w));
      }
      e.alts.push_back(Alternative{{std::move(w)}});
      i = j;
    }
    elements.push_back(std::move(e));
    if (elements.size() > kMaxPatternElements) {
      return PatternError(field, absl::StrFormat("has more than %d elements",
                                                 kMaxPatternElements));
    }
  }
  if (elements.empty()) return PatternError(field, "must not be empty");
  if (elements[0].optional) {
    return PatternError(field, "the first element must not be optional");
  }
  return elements;
}

absl::StatusOr<WordSet> CompileWordList(const std::vector<std::string>& list,
                                        std::string_view field) {
  WordSet set;
  for (size_t k = 0; k < list.size(); ++k) {
    if (!IsPatternWord(list[k])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s[%d] \"%s\" is not lower-case ASCII letters and apostrophes",
          field, k, internal::IsValidUtf8(list[k]) ? list[k] : "?"));
    }
    set.insert(list[k]);
  }
  return set;
}

}  // namespace ctxkit::internal
