// Text analysis for the reference search index: how titles, contents and
// queries become index terms. Documents and queries go through the same
// function, so a query term matches exactly the terms indexed for a
// document, and deleting a document re-derives exactly the terms it added.
//
// Rules (kAnalyzerVersion 1; changing any of them changes the terms of stored
// documents, so the version is recorded in the store and checked on open):
//   - A word is a maximal run of letters, numbers and marks (Unicode 16.0
//     general categories L*, N*, M*, lib/unicode) and underscores. Anything
//     else (punctuation, symbols, white space, controls) separates words.
//     Leading and trailing underscores are dropped; a run of underscores
//     alone is no word.
//   - A word splits into parts at underscores and at case changes: before an
//     upper-case or title-case letter that follows a lower-case letter or a
//     digit ("countTokens" -> count, Tokens; "utf8Decode" -> utf8, Decode),
//     and before the last upper-case letter of an upper-case run that is
//     followed by a lower-case letter ("HTMLParser" -> HTML, Parser). Digits
//     stay with the part they follow.
//   - Terms are lower-cased: ASCII A-Z become a-z. Other characters are kept
//     as they are (there is no full Unicode case mapping in ctxkit yet), so
//     "Ärger" and "ärger" are distinct terms.
//   - A word of one part yields one term. A word of several parts yields
//     every part and also the whole word (lower-cased, underscores kept), so
//     "count_tokens" matches the queries "count_tokens", "count" and
//     "tokens", and "countTokens" matches "counttokens" and "CountTokens".
//   - A term longer than kMaxTermBytes is cut to its first kMaxTermBytes
//     bytes, at a character boundary, so it always fits an LMDB key.
//
// Thread safety: pure functions.

#ifndef CTXKIT_LIB_REFERENCES_ANALYZER_H_
#define CTXKIT_LIB_REFERENCES_ANALYZER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"

namespace ctxkit::internal {

inline constexpr uint32_t kAnalyzerVersion = 1;
inline constexpr size_t kMaxTermBytes = 128;

// Appends the terms of `text`, in order of occurrence with repetitions, to
// `terms`. Precondition: `text` is valid UTF-8 (not checked).
void AnalyzeText(std::string_view text, std::vector<std::string>* terms);

// Where one term of AnalyzeText came from.
struct TermSpan {
  // The term before lower-casing: a view into the analyzed text. The term
  // is this with ASCII A-Z lower-cased (already cut to kMaxTermBytes).
  std::string_view raw;
  // The bytes of the text the term stands for, [begin, end): the part or
  // whole word, not cut to kMaxTermBytes.
  size_t begin = 0;
  size_t end = 0;
};

// Calls `fn` with each term of `text` exactly as AnalyzeText yields them
// (same order, same split: one word splitter serves both) and where it came
// from. The views point into `text`. Precondition: valid UTF-8.
void ForEachTermSpan(std::string_view text,
                     absl::FunctionRef<void(const TermSpan&)> fn);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_REFERENCES_ANALYZER_H_
