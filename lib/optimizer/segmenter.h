// The query optimizer's view of text: a sequence of tokens that are either
// whitespace, punctuation, words, or protected spans (code, quotes, URLs)
// that no rule may look into. Splitting this way first is what makes the
// optimizer's guarantee structural: rules only see words, and a protected
// span is one opaque token that is copied through byte for byte.
//
// Thread safety: pure functions.

#ifndef CTXKIT_LIB_OPTIMIZER_SEGMENTER_H_
#define CTXKIT_LIB_OPTIMIZER_SEGMENTER_H_

#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::internal {

enum class TextTokenKind { kSpace, kWord, kPunct, kProtected };

struct TextToken {
  TextTokenKind kind = TextTokenKind::kWord;
  std::string text;
  // For words made only of ASCII letters and apostrophes (' or U+2019): the
  // word in ASCII lower case with "'" for the apostrophe. Empty for every
  // other token, so such tokens never match a rule.
  std::string key;
};

// Splits `text` (valid UTF-8) into tokens whose texts concatenate to `text`.
//  - Space: a maximal run of ASCII whitespace.
//  - Protected: a ``` fence to the next ``` (or the end); a run of N
//    backticks to the next run of exactly N (or the end); "..." and the
//    curly double quotes to the closing quote (or the end); '...' and the
//    curly single quotes when the quote starts a word and a closing quote
//    that ends a word follows (otherwise it is an apostrophe); a URL
//    (scheme://..., www., mailto:) starting a word, to the next whitespace,
//    less trailing sentence punctuation.
//  - Punct: one of ( [ { < before a word, or one of . , ! ? ; : ) ] } > and
//    the ellipsis at a word's end, one token per character.
//  - Word: the rest of a run of non-whitespace characters (so "snake_case",
//    "src/main.cc", "3.14", "don't" are single words).
std::vector<TextToken> Segment(std::string_view text);

// The key Segment() gives a word's text (see TextToken::key).
std::string WordKey(std::string_view word);

// True for a word that may be capitalized without changing what it names:
// non-empty, only ASCII lower-case letters, apostrophes and hyphens.
bool IsPlainLowercaseWord(std::string_view word);

// Concatenates the tokens' texts.
std::string JoinTokens(const std::vector<TextToken>& tokens);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_OPTIMIZER_SEGMENTER_H_
