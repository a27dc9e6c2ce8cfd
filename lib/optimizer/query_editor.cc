// Editing: rules applied in one left-to-right pass over segmented text,
// repeated until nothing changes, and the check of the guarantee on the
// result.
//
// Why an output-driven pass: a rule's look-behind conditions (sentence
// start, "not after") are evaluated on the text as already edited, so
// "Hi, could you please explain X?" first loses "Hi," and then sees "could
// you" at a sentence start. Look-ahead conditions see the input, so the pass
// is repeated (at most kMaxPasses times) until it is a fixed point; that is
// what makes optimizing an optimized query a no-op.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/optimizer/optimizer_impl.h"

namespace ctxkit {
namespace {

using internal::BehindOf;
using internal::CapitalizeFirst;
using internal::ClauseStart;
using internal::HasNewline;
using internal::IsPunct;
using internal::IsSpaceToken;
using internal::kFillerBit;
using internal::kHedgingBit;
using internal::kPolitenessBit;
using internal::kRedundantBit;
using internal::SentenceStart;
using internal::TextToken;
using internal::TextTokenKind;

constexpr int kMaxPasses = 4;

}  // namespace

void QueryOptimizer::Impl::Emit(PassState& st, TextToken t) {
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

size_t QueryOptimizer::Impl::Apply(const std::vector<TextToken>& in, size_t i,
                                   size_t end, size_t r, PassState& st,
                                   Applied& applied) const {
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
          filler_words.count(in[k].key) > 0) {
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
      while (!st.out.empty() && IsSpaceToken(st.out.back())) st.out.pop_back();
      st.out.pop_back();
      j = k + 1;
    } else if (next == nullptr || next_newline || IsPunct(next, ".!?)]}")) {
      // "usage, basically." -> "usage."
      while (!st.out.empty() && IsSpaceToken(st.out.back())) st.out.pop_back();
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
      if (!st.out.empty() && IsSpaceToken(st.out.back()) && HasNewline(in[j]) &&
          !HasNewline(st.out.back())) {
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

std::vector<TextToken> QueryOptimizer::Impl::EditPass(
    const std::vector<TextToken>& in, int mask, Applied& applied) const {
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

std::string QueryOptimizer::Impl::Edit(std::string_view text, int mask,
                                       Applied& applied) const {
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

std::string QueryOptimizer::Impl::CollapseWhitespace(std::string_view text) {
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

bool QueryOptimizer::Impl::PreservesContent(std::string_view original,
                                            std::string_view optimized) const {
  const std::vector<TextToken> a = internal::Segment(original);
  const std::vector<TextToken> b = internal::Segment(optimized);
  std::vector<const TextToken*> seq;
  for (const TextToken& t : b) {
    if (t.kind == TextTokenKind::kWord || t.kind == TextTokenKind::kProtected) {
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

}  // namespace ctxkit
