// What surrounds a position in segmented text (segmenter.h), as the rules'
// conditions and the edits read it: space tokens and line breaks, the
// punctuation on either side, and whether a clause or a sentence starts or
// ends there.
//
// Thread safety: pure functions. A Behind or Ahead points into the token
// vector it was read from and is valid while that vector is unchanged.

#ifndef CTXKIT_LIB_OPTIMIZER_TOKEN_CONTEXT_H_
#define CTXKIT_LIB_OPTIMIZER_TOKEN_CONTEXT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "lib/optimizer/segmenter.h"

namespace ctxkit::internal {

bool IsSpaceToken(const TextToken& t);
// A space token holding a line break.
bool HasNewline(const TextToken& t);
// A space token holding a blank line, which no match may cross.
bool IsBlank(const TextToken& t);
// `t` is punctuation among the ASCII characters of `set` (an ellipsis
// counts as '.'); false for nullptr.
bool IsPunct(const TextToken* t, std::string_view set);
// `t` is a list bullet: "-", "*", "+", ">" or U+2022.
bool IsBullet(const TextToken* t);

// What precedes a position: the nearest non-space token and whether a line
// break lies between.
struct Behind {
  const TextToken* prev = nullptr;
  bool newline = false;
};
// What precedes v[end] (end may be v.size()).
Behind BehindOf(const std::vector<TextToken>& v, size_t end);
bool ClauseStart(const Behind& b);
bool SentenceStart(const Behind& b);
// The word right before the position on the same line, or nullptr.
const TextToken* PrevWord(const Behind& b);

// What follows a position: the next token after at most one space token,
// and whether that space breaks the line.
struct Ahead {
  const TextToken* next = nullptr;
  bool newline = false;
};
Ahead AheadOf(const std::vector<TextToken>& v, size_t end);
bool ClauseEnd(const Ahead& a);

// A word key (TextToken::key) that negates what follows it: "not", "no",
// "never", "without", "nor", ... or any word ending in "n't". Rules that keep
// a word after a negation ("not just", "never simply") read this, and so
// does truncation (IsConstraint()).
bool IsNegation(std::string_view key);
// A word key that limits what the sentence holding it allows: a negation, a
// condition ("if", "unless", "except", "until", ...), a restriction ("only",
// "just", "merely", ...), a bound ("at least", "exactly") or an obligation
// ("must", "always", "avoid"). Dropping such a sentence, or cutting into
// it, can turn a limit into permission ("do not delete the logs" -> "do"),
// so max_tokens truncation never does.
bool IsConstraint(std::string_view key);

// `s` with its first byte upper-cased when it is an ASCII lower-case letter.
std::string CapitalizeFirst(std::string s);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_OPTIMIZER_TOKEN_CONTEXT_H_
