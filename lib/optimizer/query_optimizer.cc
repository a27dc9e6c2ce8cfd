// QueryOptimizer: rule matching over segmented text (lib/optimizer/
// segmenter.h), edits applied in one left-to-right pass repeated until
// nothing changes, and a check of the guarantee on the result.
//
// Why an output-driven pass: a rule's look-behind conditions (sentence
// start, "not after") are evaluated on the text as already edited, so
// "Hi, could you please explain X?" first loses "Hi," and then sees "could
// you" at a sentence start. Look-ahead conditions see the input, so the pass
// is repeated (at most kMaxPasses times) until it is a fixed point; that is
// what makes optimizing an optimized query a no-op.

#include "ctxkit/query_optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/base/field_check.h"
#include "lib/json/json_writer.h"
#include "lib/json/utf8.h"
#include "lib/optimizer/segmenter.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"

namespace ctxkit {
namespace {

using internal::TextToken;
using internal::TextTokenKind;

constexpr size_t kNpos = static_cast<size_t>(-1);
constexpr int kMaxPasses = 4;
constexpr size_t kMaxPatternElements = 32;
constexpr size_t kLongSentenceWords = 35;

// Rule kinds as bits, so a pass can enable a set of them.
constexpr int kFillerBit = 1 << 0;
constexpr int kHedgingBit = 1 << 1;
constexpr int kRedundantBit = 1 << 2;
constexpr int kPolitenessBit = 1 << 3;
constexpr int kVagueBit = 1 << 4;
constexpr int kAllEditing =
    kFillerBit | kHedgingBit | kRedundantBit | kPolitenessBit;

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

bool IsSpaceToken(const TextToken& t) {
  return t.kind == TextTokenKind::kSpace;
}
bool HasNewline(const TextToken& t) {
  return t.kind == TextTokenKind::kSpace &&
         t.text.find('\n') != std::string::npos;
}
bool IsBlank(const TextToken& t) {
  return t.kind == TextTokenKind::kSpace &&
         std::count(t.text.begin(), t.text.end(), '\n') >= 2;
}
bool IsPunct(const TextToken* t, std::string_view set) {
  if (t == nullptr || t->kind != TextTokenKind::kPunct) return false;
  if (t->text == "\xE2\x80\xA6") return set.find('.') != std::string_view::npos;
  return t->text.size() == 1 && set.find(t->text[0]) != std::string_view::npos;
}
bool IsBullet(const TextToken* t) {
  return t != nullptr && t->kind == TextTokenKind::kWord &&
         (t->text == "-" || t->text == "*" || t->text == "+" ||
          t->text == ">" || t->text == "\xE2\x80\xA2");
}

// What precedes a position: the nearest non-space token and whether a line
// break lies between.
struct Behind {
  const TextToken* prev = nullptr;
  bool newline = false;
};
Behind BehindOf(const std::vector<TextToken>& v, size_t end) {
  Behind b;
  size_t k = end;
  while (k > 0 && IsSpaceToken(v[k - 1])) {
    if (HasNewline(v[k - 1])) b.newline = true;
    --k;
  }
  if (k > 0) b.prev = &v[k - 1];
  return b;
}
bool ClauseStart(const Behind& b) {
  return b.prev == nullptr || b.newline || IsPunct(b.prev, ".!?,;:([{") ||
         IsBullet(b.prev);
}
bool SentenceStart(const Behind& b) {
  return b.prev == nullptr || b.newline || IsPunct(b.prev, ".!?:") ||
         IsBullet(b.prev);
}
const TextToken* PrevWord(const Behind& b) {
  if (b.prev == nullptr || b.newline || b.prev->kind != TextTokenKind::kWord) {
    return nullptr;
  }
  return b.prev;
}

struct Ahead {
  const TextToken* next = nullptr;
  bool newline = false;
};
Ahead AheadOf(const std::vector<TextToken>& v, size_t end) {
  Ahead a;
  size_t k = end;
  if (k < v.size() && IsSpaceToken(v[k])) {
    a.newline = HasNewline(v[k]);
    ++k;
  }
  if (k < v.size()) a.next = &v[k];
  return a;
}
bool ClauseEnd(const Ahead& a) {
  return a.next == nullptr || a.newline || IsPunct(a.next, ",;:.!?)]}");
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

std::string CapitalizeFirst(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') {
    s[0] = static_cast<char>(s[0] - 'a' + 'A');
  }
  return s;
}

double Round(double v, double scale) { return std::round(v * scale) / scale; }

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

}  // namespace

struct QueryOptimizer::Impl {
  std::vector<QueryRule> rules;
  std::vector<CompiledRule> compiled;
  std::unordered_map<std::string, std::vector<size_t>> by_first_word;
  WordSet skippable;   // words of single-word, anywhere filler rules
  WordSet vocabulary;  // every word of every editing rule's pattern
  const ModelRegistry* registry = nullptr;

  // ---- matching ----

  static size_t NextWordIndex(const std::vector<TextToken>& in, size_t pos) {
    if (pos < in.size() && in[pos].kind == TextTokenKind::kWord) return pos;
    if (pos + 1 < in.size() && IsSpaceToken(in[pos]) && !IsBlank(in[pos]) &&
        in[pos + 1].kind == TextTokenKind::kWord) {
      return pos + 1;
    }
    return kNpos;
  }

  size_t MatchWords(const std::vector<TextToken>& in,
                    const std::vector<std::string>& words, size_t pos,
                    bool first, bool allow_skip) const {
    for (size_t k = 0; k < words.size(); ++k) {
      const bool at_start = first && k == 0;
      size_t w = at_start ? pos : NextWordIndex(in, pos);
      if (w == kNpos) return kNpos;
      if (allow_skip && !at_start) {
        while (in[w].key != words[k] && skippable.count(in[w].key) > 0) {
          w = NextWordIndex(in, w + 1);
          if (w == kNpos) return kNpos;
        }
      }
      if (in[w].key != words[k]) return kNpos;
      pos = w + 1;
    }
    return pos;
  }

  // The end (token index past the last word) of the longest match of
  // elements [elem, ...) starting at `pos`, or kNpos.
  size_t MatchFrom(const std::vector<TextToken>& in, const CompiledRule& r,
                   size_t elem, size_t pos, bool first, bool allow_skip) const {
    if (elem == r.elements.size()) return first ? kNpos : pos;
    size_t best = kNpos;
    auto better = [&](size_t e) {
      if (e != kNpos && (best == kNpos || e > best)) best = e;
    };
    for (const Alternative& alt : r.elements[elem].alts) {
      const size_t p = MatchWords(in, alt.words, pos, first, allow_skip);
      if (p != kNpos) better(MatchFrom(in, r, elem + 1, p, false, allow_skip));
    }
    if (r.elements[elem].optional) {
      better(MatchFrom(in, r, elem + 1, pos, first, allow_skip));
    }
    return best;
  }

  bool ConditionsHold(const CompiledRule& r, const Behind& b,
                      const Ahead& a) const {
    const QueryRule& q = r.rule;
    switch (q.position) {
      case RulePosition::kAnywhere:
        break;
      case RulePosition::kClauseStart:
        if (!ClauseStart(b)) return false;
        break;
      case RulePosition::kSentenceStart:
        if (!SentenceStart(b)) return false;
        break;
      case RulePosition::kClauseEdge:
        if (!ClauseStart(b) && !ClauseEnd(a)) return false;
        break;
    }
    switch (q.follow) {
      case RuleFollow::kAnything:
        break;
      case RuleFollow::kClauseEnd:
        if (!ClauseEnd(a)) return false;
        break;
      case RuleFollow::kWord:
        if (a.next == nullptr || a.next->kind != TextTokenKind::kWord) {
          return false;
        }
        break;
    }
    const TextToken* prev_word = PrevWord(b);
    if (prev_word != nullptr && r.not_after.count(prev_word->key) > 0) {
      return false;
    }
    if (q.keep_after_negation && prev_word != nullptr) {
      const std::string& k = prev_word->key;
      if (k == "not" || k == "never" || k == "cannot" || EndsWith(k, "n't")) {
        return false;
      }
    }
    const bool next_is_word =
        a.next != nullptr && a.next->kind == TextTokenKind::kWord;
    if (!r.next_in.empty() &&
        (!next_is_word || r.next_in.count(a.next->key) == 0)) {
      return false;
    }
    if (next_is_word && r.next_not_in.count(a.next->key) > 0) return false;
    return true;
  }

  // The best rule of the kinds in `mask` matching at word `i` of `in`, given
  // what precedes it (`behind`: the input when detecting, the output when
  // editing). Returns the rule index and sets *end, or kNpos.
  size_t BestMatch(const std::vector<TextToken>& in, size_t i, int mask,
                   bool allow_skip, const Behind& behind, size_t* end) const {
    auto it = by_first_word.find(in[i].key);
    if (it == by_first_word.end()) return kNpos;
    size_t best_rule = kNpos;
    size_t best_end = 0;
    for (size_t r : it->second) {
      const CompiledRule& rule = compiled[r];
      if ((rule.bit & mask) == 0) continue;
      const size_t e = MatchFrom(in, rule, 0, i, true, allow_skip);
      if (e == kNpos || (best_rule != kNpos && e <= best_end)) continue;
      if (!ConditionsHold(rule, behind, AheadOf(in, e))) continue;
      best_rule = r;
      best_end = e;
    }
    if (best_rule != kNpos) *end = best_end;
    return best_rule;
  }

  // Every match of the kinds in `mask`, each kind scanned on its own from
  // left to right, longest match first, without overlaps within a kind.
  std::vector<Detection> Detect(const std::vector<TextToken>& in,
                                int mask) const {
    std::vector<Detection> found;
    for (int bit :
         {kFillerBit, kHedgingBit, kRedundantBit, kPolitenessBit, kVagueBit}) {
      if ((mask & bit) == 0) continue;
      size_t i = 0;
      while (i < in.size()) {
        if (in[i].kind != TextTokenKind::kWord || in[i].key.empty()) {
          ++i;
          continue;
        }
        size_t end = 0;
        const size_t r = BestMatch(in, i, bit, (mask & kFillerBit) != 0,
                                   BehindOf(in, i), &end);
        if (r == kNpos) {
          ++i;
          continue;
        }
        Detection d;
        d.bit = bit;
        d.rule = r;
        d.restructure = compiled[r].rule.restructure;
        for (size_t k = i; k < end; ++k) {
          d.text += in[k].text;
          if (in[k].kind == TextTokenKind::kWord) {
            if (!d.phrase.empty()) d.phrase += ' ';
            d.phrase += in[k].key;
          }
        }
        found.push_back(std::move(d));
        i = end;
      }
    }
    return found;
  }

  // ---- editing ----

  struct PassState {
    std::vector<TextToken> out;
    bool capitalize_next = false;
    bool question_pending = false;
  };

  static void Emit(PassState& st, TextToken t) {
    if (t.kind == TextTokenKind::kSpace) {
      if (HasNewline(t)) st.question_pending = false;
      st.out.push_back(std::move(t));
      return;
    }
    if (st.capitalize_next) {
      if (t.kind == TextTokenKind::kWord &&
          internal::IsPlainLowercaseWord(t.text)) {
        t.text = CapitalizeFirst(std::move(t.text));
      }
      st.capitalize_next = false;
    }
    if (st.question_pending && t.kind == TextTokenKind::kPunct) {
      if (t.text == "?") {
        t.text = ".";
        st.question_pending = false;
      } else if (IsPunct(&t, ".!")) {
        st.question_pending = false;
      }
    }
    st.out.push_back(std::move(t));
  }

  // Applies rule `r` matched on in[i, end); returns where to continue.
  size_t Apply(const std::vector<TextToken>& in, size_t i, size_t end, size_t r,
               PassState& st, Applied& applied) const {
    const CompiledRule& rule = compiled[r];
    const bool first_upper = in[i].text[0] >= 'A' && in[i].text[0] <= 'Z';
    const Behind behind = BehindOf(st.out, st.out.size());
    const bool sentence_start = SentenceStart(behind);
    const bool clause_start = ClauseStart(behind);

    switch (rule.bit) {
      case kFillerBit:
        ++applied.filler;
        break;
      case kHedgingBit:
        ++(rule.rule.restructure ? applied.restructured : applied.hedging);
        break;
      case kRedundantBit:
        ++applied.redundant;
        break;
      case kPolitenessBit:
        ++applied.politeness;
        break;
      default:
        break;
    }
    // Filler words swallowed inside a longer match count as fillers too.
    if (rule.bit != kFillerBit) {
      for (size_t k = i; k < end; ++k) {
        if (in[k].kind == TextTokenKind::kWord &&
            skippable.count(in[k].key) > 0) {
          ++applied.filler;
        }
      }
    }

    if (!rule.rule.replacement.empty()) {
      TextToken t;
      t.kind = TextTokenKind::kWord;
      t.text = first_upper ? CapitalizeFirst(rule.rule.replacement)
                           : rule.rule.replacement;
      t.key = internal::WordKey(t.text);
      Emit(st, std::move(t));
      return end;
    }

    size_t j = end;
    size_t k = j;
    if (k < in.size() && IsSpaceToken(in[k])) ++k;
    const TextToken* next = k < in.size() ? &in[k] : nullptr;
    const bool next_newline = k > j && HasNewline(in[j]);
    if (IsPunct(behind.prev, ",;") && !behind.newline) {
      if (IsPunct(next, ",")) {
        // A parenthetical ", basically," goes with both its commas.
        while (!st.out.empty() && IsSpaceToken(st.out.back()))
          st.out.pop_back();
        st.out.pop_back();
        j = k + 1;
      } else if (next == nullptr || next_newline || IsPunct(next, ".!?)]}")) {
        // "usage, basically." -> "usage."
        while (!st.out.empty() && IsSpaceToken(st.out.back()))
          st.out.pop_back();
        st.out.pop_back();
      }
    } else if (clause_start) {
      if (IsPunct(next, ",;") && !next_newline) {
        j = k + 1;  // "Basically, the" -> "the"
      } else if (sentence_start && IsPunct(next, ".!?") && !next_newline) {
        // The whole sentence was padding ("Thanks!"): drop its end too.
        j = k;
        while (j < in.size() && IsPunct(&in[j], ".!?")) ++j;
      }
    }
    if (sentence_start && (first_upper || st.capitalize_next)) {
      st.capitalize_next = true;
    }
    if (rule.rule.restructure) st.question_pending = true;

    // Whitespace: never two runs in a row, none at the start, none before
    // closing punctuation.
    if (j < in.size() && IsSpaceToken(in[j])) {
      if (st.out.empty() || IsSpaceToken(st.out.back()) ||
          IsPunct(&st.out.back(), "([{")) {
        if (!st.out.empty() && IsSpaceToken(st.out.back()) &&
            HasNewline(in[j]) && !HasNewline(st.out.back())) {
          st.out.back() = in[j];
        }
        ++j;
      }
    } else if (!st.out.empty() && IsSpaceToken(st.out.back()) &&
               (j == in.size() || IsPunct(&in[j], ",;:.!?)]}"))) {
      if (j == in.size() || !HasNewline(st.out.back())) st.out.pop_back();
    }
    return j;
  }

  std::vector<TextToken> EditPass(const std::vector<TextToken>& in, int mask,
                                  Applied& applied) const {
    PassState st;
    st.out.reserve(in.size());
    size_t i = 0;
    while (i < in.size()) {
      if (in[i].kind == TextTokenKind::kWord && !in[i].key.empty()) {
        size_t end = 0;
        const size_t r = BestMatch(in, i, mask, (mask & kFillerBit) != 0,
                                   BehindOf(st.out, st.out.size()), &end);
        if (r != kNpos) {
          i = Apply(in, i, end, r, st, applied);
          continue;
        }
      }
      Emit(st, in[i]);
      ++i;
    }
    return std::move(st.out);
  }

  // Edits to a fixed point.
  std::string Edit(std::string_view text, int mask, Applied& applied) const {
    std::string current(text);
    if (mask == 0) return current;
    std::vector<TextToken> tokens = internal::Segment(current);
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      std::string next = internal::JoinTokens(EditPass(tokens, mask, applied));
      if (next == current) break;
      current = std::move(next);
      tokens = internal::Segment(current);
    }
    return current;
  }

  // Runs of spaces between words become one space; spaces before a line
  // break and at the end go. Indentation at a line start stays.
  static std::string CollapseWhitespace(std::string_view text) {
    std::vector<TextToken> tokens = internal::Segment(text);
    for (size_t i = 0; i < tokens.size(); ++i) {
      TextToken& t = tokens[i];
      if (!IsSpaceToken(t) || i == 0) continue;
      if (i + 1 == tokens.size()) {
        const size_t last_newline = t.text.rfind('\n');
        t.text = last_newline == std::string::npos
                     ? std::string()
                     : t.text.substr(0, last_newline + 1);
      } else if (!HasNewline(t)) {
        t.text = " ";
      } else {
        const size_t first_newline = t.text.find('\n');
        t.text = t.text.substr(first_newline);
      }
    }
    return internal::JoinTokens(tokens);
  }

  // The guarantee: every protected span, and every word no editing rule
  // names, of `original` appears in `optimized`, in order (a word may only
  // have its first letter's case changed).
  bool PreservesContent(std::string_view original,
                        std::string_view optimized) const {
    const std::vector<TextToken> a = internal::Segment(original);
    const std::vector<TextToken> b = internal::Segment(optimized);
    std::vector<const TextToken*> seq;
    for (const TextToken& t : b) {
      if (t.kind == TextTokenKind::kWord ||
          t.kind == TextTokenKind::kProtected) {
        seq.push_back(&t);
      }
    }
    auto same = [](const TextToken& x, const TextToken& y) {
      if (x.kind != y.kind || x.text.size() != y.text.size()) return false;
      if (x.text == y.text) return true;
      if (x.kind != TextTokenKind::kWord) return false;
      return CapitalizeFirst(x.text) == CapitalizeFirst(y.text) &&
             x.text.substr(1) == y.text.substr(1);
    };
    size_t j = 0;
    for (const TextToken& t : a) {
      const bool content = t.kind == TextTokenKind::kProtected ||
                           (t.kind == TextTokenKind::kWord &&
                            (t.key.empty() || vocabulary.count(t.key) == 0));
      if (!content) continue;
      while (j < seq.size() && !same(t, *seq[j])) ++j;
      if (j == seq.size()) return false;
      ++j;
    }
    return true;
  }

  absl::StatusOr<size_t> Count(std::string_view model, std::string_view text,
                               bool* exact) const {
    StatusOr<TokenCount> c = registry->CountTokens(model, text);
    CTXKIT_RETURN_IF_ERROR(c.status());
    if (exact != nullptr) *exact = c->exact;
    return c->tokens;
  }

  absl::StatusOr<std::string> Truncate(std::string_view model,
                                       std::string_view text,
                                       size_t max_tokens) const {
    std::string_view cut;
    StatusOr<std::shared_ptr<const Tokenizer>> tok =
        registry->TokenizerFor(model);
    if (tok.ok()) {
      EncodeOptions options;
      options.disallowed_special = SpecialTokenSet::None();
      StatusOr<Truncation> t = (*tok)->Truncate(text, max_tokens, options);
      CTXKIT_RETURN_IF_ERROR(t.status());
      cut = t->text;
    } else if (tok.status().code() == StatusCode::kNotFound ||
               tok.status().code() == StatusCode::kFailedPrecondition) {
      // Counted by the heuristic: the longest prefix ending on a character
      // boundary whose estimate fits.
      size_t lo = 0;
      size_t hi = text.size();
      while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        while (mid < text.size() &&
               (static_cast<unsigned char>(text[mid]) & 0xC0) == 0x80) {
          ++mid;
        }
        if (mid > hi) mid = hi;
        if (EstimateTokens(text.substr(0, mid)) <= max_tokens) {
          if (mid == lo) break;
          lo = mid;
        } else {
          hi = mid - 1;
          while (hi > lo &&
                 (static_cast<unsigned char>(text[hi]) & 0xC0) == 0x80) {
            --hi;
          }
        }
      }
      cut = text.substr(0, lo);
    } else {
      return internal::ToAbsl(tok.status());
    }
    size_t n = cut.size();
    while (n > 0 && (cut[n - 1] == ' ' || cut[n - 1] == '\t' ||
                     cut[n - 1] == '\n' || cut[n - 1] == '\r')) {
      --n;
    }
    return std::string(cut.substr(0, n));
  }

  static double Clarity(const std::vector<Detection>& found,
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
    size_t long_sentences = 0;
    size_t words = 0;
    for (const TextToken& t : tokens) {
      if (t.kind == TextTokenKind::kWord ||
          t.kind == TextTokenKind::kProtected) {
        ++words;
      } else if (IsPunct(&t, ".!?") || HasNewline(t)) {
        if (words > kLongSentenceWords) ++long_sentences;
        words = 0;
      }
    }
    if (words > kLongSentenceWords) ++long_sentences;
    double score = 1.0;
    score -= std::min(0.30, 0.04 * static_cast<double>(filler));
    score -= std::min(0.30, 0.10 * static_cast<double>(hedging));
    score -= std::min(0.15, 0.03 * static_cast<double>(redundant));
    score -= std::min(0.10, 0.02 * static_cast<double>(polite));
    score -= std::min(0.25, 0.05 * static_cast<double>(vague));
    score -= std::min(0.15, 0.05 * static_cast<double>(long_sentences));
    return Round(std::clamp(score, 0.0, 1.0), 100.0);
  }

  absl::StatusOr<QueryOptimization> Optimize(std::string_view query,
                                             const OptimizeOptions& o) const;
};

namespace {

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

}  // namespace

absl::StatusOr<QueryOptimization> QueryOptimizer::Impl::Optimize(
    std::string_view query, const OptimizeOptions& o) const {
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

  QueryOptimization res;
  res.model = o.model;
  res.goal = o.goal;
  res.original_query = std::string(query);
  bool exact = false;
  absl::StatusOr<size_t> original_tokens = Count(o.model, query, &exact);
  if (!original_tokens.ok()) return original_tokens.status();
  res.original_tokens = *original_tokens;
  res.tokens_exact = exact;
  const double denom =
      res.original_tokens == 0 ? 1.0 : static_cast<double>(res.original_tokens);

  const std::vector<TextToken> tokens = internal::Segment(query);
  const std::vector<Detection> found = Detect(tokens, kAllEditing | kVagueBit);

  // The optimized text.
  const int mask = GoalMask(o.goal);
  Applied applied;
  std::string optimized = Edit(query, mask, applied);
  bool collapsed = false;
  if (o.goal != OptimizationGoal::kImproveClarity) {
    std::string c = CollapseWhitespace(optimized);
    if (c != optimized) {
      collapsed = true;
      optimized = std::move(c);
    }
  }
  bool verified = PreservesContent(query, optimized);
  if (!verified) {
    optimized = std::string(query);
    applied = Applied();
    collapsed = false;
  }
  absl::StatusOr<size_t> optimized_tokens = Count(o.model, optimized, nullptr);
  if (!optimized_tokens.ok()) return optimized_tokens.status();
  if (o.goal == OptimizationGoal::kReduceTokens &&
      *optimized_tokens > res.original_tokens) {
    optimized = std::string(query);
    optimized_tokens = res.original_tokens;
    applied = Applied();
    collapsed = false;
  }
  const size_t untruncated_tokens = *optimized_tokens;

  // Savings of each kind alone, and of everything (verbosity).
  size_t saved_by[5] = {0, 0, 0, 0, 0};
  const int bits[4] = {kFillerBit, kHedgingBit, kRedundantBit, kPolitenessBit};
  for (int k = 0; k < 4; ++k) {
    const bool present =
        std::any_of(found.begin(), found.end(),
                    [&](const Detection& d) { return d.bit == bits[k]; });
    if (!present) continue;
    Applied ignored;
    std::string alone = Edit(query, bits[k], ignored);
    if (!PreservesContent(query, alone)) continue;
    absl::StatusOr<size_t> n = Count(o.model, alone, nullptr);
    if (!n.ok()) return n.status();
    if (*n < res.original_tokens) saved_by[k] = res.original_tokens - *n;
  }
  double verbosity = 0.0;
  {
    size_t all_tokens = untruncated_tokens;
    if (mask != kAllEditing || !verified) {
      Applied ignored;
      std::string all = Edit(query, kAllEditing, ignored);
      if (PreservesContent(query, all)) {
        absl::StatusOr<size_t> n = Count(o.model, all, nullptr);
        if (!n.ok()) return n.status();
        all_tokens = *n;
      } else {
        all_tokens = res.original_tokens;
      }
    }
    if (all_tokens < res.original_tokens) {
      verbosity = Round(
          static_cast<double>(res.original_tokens - all_tokens) / denom, 100.0);
    }
  }

  // Issues.
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
    for (const Detection& d : found) {
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
          static_cast<double>(saved_by[kind.saved_index]) / denom);
    }
    res.issues.push_back(std::move(issue));
  }
  if (verbosity >= 0.10) {
    QueryIssue issue;
    issue.type = IssueType::kVerbosity;
    issue.score = verbosity;
    issue.occurrences = 1;
    issue.impact = ImpactOfShare(verbosity);
    res.issues.push_back(std::move(issue));
  }

  // Truncation.
  if (o.max_tokens.has_value() &&
      untruncated_tokens > static_cast<size_t>(*o.max_tokens)) {
    absl::StatusOr<std::string> cut =
        Truncate(o.model, optimized, static_cast<size_t>(*o.max_tokens));
    if (!cut.ok()) return cut.status();
    optimized = *std::move(cut);
    optimized_tokens = Count(o.model, optimized, nullptr);
    if (!optimized_tokens.ok()) return optimized_tokens.status();
    res.truncated = true;
  }

  res.optimized_query = optimized;
  res.optimized_tokens = *optimized_tokens;
  res.tokens_saved = static_cast<int64_t>(res.original_tokens) -
                     static_cast<int64_t>(res.optimized_tokens);
  res.reduction_percent =
      Round(100.0 * static_cast<double>(res.tokens_saved) / denom, 10.0);

  // Improvements.
  if (applied.filler > 0) {
    res.improvements.push_back(
        absl::StrFormat("Removed filler words (%d)", applied.filler));
  }
  if (applied.restructured > 0) {
    res.improvements.push_back(absl::StrFormat(
        "Simplified structure (%d hedged request%s made direct)",
        applied.restructured, applied.restructured == 1 ? "" : "s"));
  }
  if (applied.hedging > 0) {
    res.improvements.push_back(
        absl::StrFormat("Removed hedging (%d)", applied.hedging));
  }
  if (applied.redundant > 0) {
    res.improvements.push_back(
        absl::StrFormat("Replaced redundant phrases (%d)", applied.redundant));
  }
  if (applied.politeness > 0) {
    res.improvements.push_back(
        absl::StrFormat("Removed politeness padding (%d)", applied.politeness));
  }
  if (collapsed) res.improvements.push_back("Collapsed extra whitespace");
  if (applied.Total() > 0 || collapsed) {
    res.improvements.push_back("Preserved core meaning");
  }
  if (res.truncated) {
    res.improvements.push_back(absl::StrFormat(
        "Truncated to %d tokens (max_tokens)", res.optimized_tokens));
  }
  if (res.improvements.empty()) res.improvements.push_back("No changes needed");

  // Clarity.
  res.original_clarity_score = Clarity(found, tokens);
  {
    const std::vector<TextToken> opt_tokens = internal::Segment(optimized);
    res.clarity_score =
        Clarity(Detect(opt_tokens, kAllEditing | kVagueBit), opt_tokens);
  }

  // Recommendations.
  auto first_of = [&](int bit, bool restructure_only) -> const Detection* {
    for (const Detection& d : found) {
      if (d.bit == bit && (!restructure_only || d.restructure)) return &d;
    }
    return nullptr;
  };
  auto words_of = [&](IssueType type) -> std::vector<std::string> {
    for (const QueryIssue& issue : res.issues) {
      if (issue.type == type) return issue.words;
    }
    return {};
  };
  auto add = [&](std::string priority, std::string suggestion, size_t saved) {
    res.recommendations.push_back(
        QueryRecommendation{std::move(priority), std::move(suggestion), saved});
  };
  if (saved_by[0] > 0) {
    add(PriorityOfShare(static_cast<double>(saved_by[0]) / denom),
        "Remove unnecessary qualifiers like " +
            Quoted(words_of(IssueType::kFillerWords), 2),
        saved_by[0]);
  }
  if (saved_by[1] > 0) {
    const Detection* d = first_of(kHedgingBit, true);
    std::string text;
    if (d != nullptr) {
      text = "Use direct language instead of '" + d->text + "'";
    } else {
      text = "Drop hedges like " + Quoted(words_of(IssueType::kHedging), 2) +
             " and state the request directly";
    }
    add(PriorityOfShare(static_cast<double>(saved_by[1]) / denom),
        std::move(text), saved_by[1]);
  }
  if (saved_by[2] > 0) {
    std::vector<std::string> s;
    for (const QueryIssue& issue : res.issues) {
      if (issue.type == IssueType::kRedundantPhrase) s = issue.suggestions;
    }
    std::string text = "Use shorter phrasing: ";
    for (size_t k = 0; k < s.size() && k < 2; ++k) {
      if (k > 0) text += ", ";
      text += s[k];
    }
    add(PriorityOfShare(static_cast<double>(saved_by[2]) / denom),
        std::move(text), saved_by[2]);
  }
  if (saved_by[3] > 0) {
    add(PriorityOfShare(static_cast<double>(saved_by[3]) / denom),
        "Drop politeness padding like " +
            Quoted(words_of(IssueType::kPoliteness), 2) +
            ": it costs tokens and adds no instruction",
        saved_by[3]);
  }
  if (first_of(kVagueBit, false) != nullptr) {
    add("medium",
        "Replace vague words like " +
            Quoted(words_of(IssueType::kVagueLanguage), 2) +
            " with the specific names, values or files meant",
        0);
  }
  {
    size_t long_sentences = 0;
    size_t words = 0;
    for (const TextToken& t : internal::Segment(optimized)) {
      if (t.kind == TextTokenKind::kWord ||
          t.kind == TextTokenKind::kProtected) {
        ++words;
      } else if (IsPunct(&t, ".!?") || HasNewline(t)) {
        if (words > kLongSentenceWords) ++long_sentences;
        words = 0;
      }
    }
    if (words > kLongSentenceWords) ++long_sentences;
    if (long_sentences > 0) {
      add("low",
          absl::StrFormat("Split the %d sentence%s over %d words into shorter "
                          "ones",
                          long_sentences, long_sentences == 1 ? "" : "s",
                          kLongSentenceWords),
          0);
    }
  }
  if (res.truncated) {
    add("high",
        absl::StrFormat("The optimized query was still %d tokens, over "
                        "max_tokens %d, so it was cut: shorten it or raise "
                        "max_tokens",
                        untruncated_tokens, *o.max_tokens),
        untruncated_tokens - res.optimized_tokens);
  }

  // Context.
  if (o.context.has_value()) {
    absl::StatusOr<size_t> n = Count(o.model, *o.context, nullptr);
    if (!n.ok()) return n.status();
    res.context_tokens = *n;
    // Sentences of the query the context already holds.
    const std::string haystack = NormalizeForSearch(*o.context);
    size_t repeated = 0;
    size_t repeated_tokens = 0;
    std::string sentence;
    size_t words = 0;
    auto flush = [&]() -> absl::Status {
      if (words >= 6) {
        const std::string needle = NormalizeForSearch(sentence);
        if (!needle.empty() && haystack.find(needle) != std::string::npos) {
          ++repeated;
          absl::StatusOr<size_t> c = Count(o.model, sentence, nullptr);
          if (!c.ok()) return c.status();
          repeated_tokens += *c;
        }
      }
      sentence.clear();
      words = 0;
      return absl::OkStatus();
    };
    for (const TextToken& t : tokens) {
      if (IsPunct(&t, ".!?") || HasNewline(t)) {
        if (absl::Status s = flush(); !s.ok()) return s;
        continue;
      }
      if (t.kind == TextTokenKind::kWord ||
          t.kind == TextTokenKind::kProtected) {
        ++words;
      }
      sentence += t.text;
    }
    if (absl::Status s = flush(); !s.ok()) return s;
    if (repeated > 0) {
      add(PriorityOfShare(static_cast<double>(repeated_tokens) / denom),
          absl::StrFormat("Refer to the context instead of repeating the %d "
                          "sentence%s it already contains",
                          repeated, repeated == 1 ? "" : "s"),
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
  return res;
}

// ---- public API ----

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
    if (c.bit == kFillerBit && q.position == RulePosition::kAnywhere &&
        q.follow == RuleFollow::kAnything && c.elements.size() == 1) {
      for (const Alternative& alt : c.elements[0].alts) {
        if (alt.words.size() == 1) impl->skippable.insert(alt.words[0]);
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

StatusOr<std::string> ToJson(const QueryOptimization& r) {
  internal::JsonWriter w;
  w.BeginObject().Key("schema_version").Int(1);
  w.Key("original").BeginObject();
  w.Key("query").String(r.original_query);
  w.Key("tokens").Uint(r.original_tokens);
  w.Key("issues").BeginArray();
  for (const QueryIssue& issue : r.issues) {
    w.BeginObject();
    w.Key("type").String(IssueTypeName(issue.type));
    if (issue.type != IssueType::kVerbosity) {
      const bool words = issue.type == IssueType::kFillerWords ||
                         issue.type == IssueType::kVagueLanguage;
      w.Key(words ? "words" : "phrases").BeginArray();
      for (const std::string& s : issue.words) w.String(s);
      w.EndArray();
      w.Key("occurrences").Uint(issue.occurrences);
    }
    if (issue.score.has_value()) w.Key("score").Double(*issue.score);
    w.Key("impact").String(ImpactName(issue.impact));
    if (!issue.suggestions.empty()) {
      w.Key("suggestions").BeginArray();
      for (const std::string& s : issue.suggestions) w.String(s);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  w.Key("optimized").BeginObject();
  w.Key("query").String(r.optimized_query);
  w.Key("tokens").Uint(r.optimized_tokens);
  w.Key("improvements").BeginArray();
  for (const std::string& s : r.improvements) w.String(s);
  w.EndArray();
  w.Key("truncated").Bool(r.truncated);
  w.EndObject();

  w.Key("analysis").BeginObject();
  w.Key("tokens_saved").Int(r.tokens_saved);
  w.Key("reduction_percent").Double(r.reduction_percent);
  w.Key("clarity_score").Double(r.clarity_score);
  w.Key("original_clarity_score").Double(r.original_clarity_score);
  w.Key("recommendations").BeginArray();
  for (const QueryRecommendation& rec : r.recommendations) {
    w.BeginObject();
    w.Key("priority").String(rec.priority);
    w.Key("suggestion").String(rec.suggestion);
    w.Key("tokens_saved").Uint(rec.tokens_saved);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  w.Key("model").String(r.model);
  w.Key("optimization_goal").String(OptimizationGoalName(r.goal));
  w.Key("tokens_exact").Bool(r.tokens_exact);
  if (r.context_tokens.has_value()) {
    w.Key("context").BeginObject();
    w.Key("tokens").Uint(*r.context_tokens);
    w.Key("combined_original_tokens")
        .Uint(*r.context_tokens + r.original_tokens);
    w.Key("combined_optimized_tokens")
        .Uint(*r.context_tokens + r.optimized_tokens);
    w.EndObject();
  }
  w.EndObject();
  return internal::ToPublic(std::move(w).Finish());
}

}  // namespace ctxkit
