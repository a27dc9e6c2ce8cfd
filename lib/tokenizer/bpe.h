// Byte-pair merging of one pre-tokenized piece, exactly as tiktoken does it:
// starting from single bytes, repeatedly merge the adjacent pair whose
// concatenation has the lowest rank in the vocabulary, the leftmost one on a
// tie, until no adjacent pair is a token.
//
// Short pieces use tiktoken's array scan (quadratic, but fastest for the few
// bytes most pieces have). Long ones are cut into segments of 8 to 24 bytes,
// each merged alone by the array scan (and remembered per thread, since a
// long piece repeats itself: blank lines, rules of "-=", runs of one
// character), and checked at each cut: the tokens are the merge of the
// whole piece exactly when every two neighbours merge back into themselves
// (bpe.cc proves it), and where two do not, the tokens around the cut are
// merged again. A piece made only of ASCII symbols (whitespace, punctuation)
// is first cut where no token of the vocabulary has the two bytes on either
// side of the cut side by side (every few bytes in random punctuation):
// the merge never crosses such a cut, so each stretch is merged alone.
// A stretch whose segments neither repeat nor fall on token boundaries
// (random mixes of spaces and newlines) is merged instead by a search over
// the vocabulary's symbol tokens, which keeps a token only when it is
// compatible with its neighbour, by the same rule, and steps back when no
// token fits: linear in the piece. It runs from the left over a trie
// (symbol_trie.h), or, for a stretch made only of whitespace, from the right
// over an automaton that finds in one pass the tokens ending at every
// position (whitespace_trie.h). A piece
// that keeps defeating the cuts (one very long token, as in a run of one
// letter) goes to a heap over runs of equal tokens: the same merges in
// O(n log n), where a run of one token merges all its pairs in one step
// whenever tiktoken's order would merge them one after another.

#ifndef CTXKIT_LIB_TOKENIZER_BPE_H_
#define CTXKIT_LIB_TOKENIZER_BPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/tokenizer/vocabulary.h"

namespace ctxkit::internal {

// Pieces at least this long take the run-heap path.
inline constexpr size_t kBpeHeapThreshold = 128;

// Appends the token ids of `piece` to `out`. Precondition: `piece` is not
// empty and every single byte is a token of `vocab` (checked when an
// encoding is built). Thread-safe: `vocab` is only read.
void BytePairEncode(const Vocabulary& vocab, std::string_view piece,
                    std::vector<uint32_t>* out);

// BytePairEncode for a piece shorter than kBpeHeapThreshold, into `ids`,
// which must have room for piece.size() ids (a piece never has more ids than
// bytes); returns how many it wrote. Thread-safe as BytePairEncode.
// Allocates only for pieces of symbols: once per thread and vocabulary the
// tables that long symbol pieces use too (24 KB), and per call the search's
// buffers for a piece that repeats a byte in most places.
size_t BytePairEncodeShort(const Vocabulary& vocab, std::string_view piece,
                           uint32_t* ids);

// The number of ids BytePairEncode would append.
size_t BytePairCount(const Vocabulary& vocab, std::string_view piece);

// BytePairEncode with a chosen method, without the whole-token shortcut, so
// tests can check that the methods merge alike on any piece. kArray needs
// piece.size() < kBpeHeapThreshold; kRuns is the run heap alone; kSegments
// is the segments (the run heap when they give up); kSymbols the left-to-
// right search over the symbol trie (the run heap when the piece is not all
// symbols or the search gives up); kWhitespace the same search over the
// whitespace trie (the run heap when the piece is not all whitespace);
// kLong is what BytePairEncode uses for long pieces (stretches of symbols,
// else segments, else the run heap).
enum class BpeMethod { kArray, kRuns, kSegments, kSymbols, kWhitespace, kLong };
void BytePairEncodeWith(BpeMethod method, const Vocabulary& vocab,
                        std::string_view piece, std::vector<uint32_t>* out);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_BPE_H_
