// Rule matching: where a compiled rule's pattern matches segmented text,
// whether its conditions hold there, and which rule wins at a word.
//
// Rules are indexed by their first word, so a word that starts no rule costs
// one hash lookup.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/optimizer/optimizer_impl.h"

namespace ctxkit {
namespace {

using internal::AheadOf;
using internal::Alternative;
using internal::BehindOf;
using internal::ClauseEnd;
using internal::ClauseStart;
using internal::Detection;
using internal::IsBlank;
using internal::IsNegation;
using internal::IsSpaceToken;
using internal::kFillerBit;
using internal::kHedgingBit;
using internal::kPolitenessBit;
using internal::kRedundantBit;
using internal::kVagueBit;
using internal::PrevWord;
using internal::SentenceStart;
using internal::TextTokenKind;

}  // namespace

size_t QueryOptimizer::Impl::NextWordIndex(const std::vector<TextToken>& in,
                                           size_t pos) {
  if (pos < in.size() && in[pos].kind == TextTokenKind::kWord) return pos;
  if (pos + 1 < in.size() && IsSpaceToken(in[pos]) && !IsBlank(in[pos]) &&
      in[pos + 1].kind == TextTokenKind::kWord) {
    return pos + 1;
  }
  return kNpos;
}

size_t QueryOptimizer::Impl::MatchWords(const std::vector<TextToken>& in,
                                        const std::vector<std::string>& words,
                                        size_t pos, bool first,
                                        bool allow_skip) const {
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

size_t QueryOptimizer::Impl::MatchFrom(const std::vector<TextToken>& in,
                                       const CompiledRule& r, size_t elem,
                                       size_t pos, bool first,
                                       bool allow_skip) const {
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

bool QueryOptimizer::Impl::ConditionsHold(const CompiledRule& r,
                                          const Behind& b,
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
  if (q.keep_after_negation && prev_word != nullptr &&
      IsNegation(prev_word->key)) {
    return false;
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

size_t QueryOptimizer::Impl::BestMatch(const std::vector<TextToken>& in,
                                       size_t i, int mask, bool allow_skip,
                                       const Behind& behind,
                                       size_t* end) const {
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

std::vector<Detection> QueryOptimizer::Impl::Detect(
    const std::vector<TextToken>& in, int mask) const {
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

}  // namespace ctxkit
