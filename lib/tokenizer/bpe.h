// Byte-pair merging of one pre-tokenized piece, exactly as tiktoken does it:
// starting from single bytes, repeatedly merge the adjacent pair whose
// concatenation has the lowest rank in the vocabulary, the leftmost one on a
// tie, until no adjacent pair is a token.
//
// Short pieces use tiktoken's array scan (quadratic, but fastest for the few
// bytes most pieces have). Long ones use a heap over runs of equal tokens:
// the same merges in O(n log n), where a run of one token (1 MB of spaces,
// of '=' or of one letter) merges all its pairs in one step whenever
// tiktoken's order would merge them one after another, so such a piece
// costs O(log n) steps instead of n.

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
// bytes); returns how many it wrote. Allocates nothing.
size_t BytePairEncodeShort(const Vocabulary& vocab, std::string_view piece,
                           uint32_t* ids);

// The number of ids BytePairEncode would append.
size_t BytePairCount(const Vocabulary& vocab, std::string_view piece);

// BytePairEncode with a chosen method, without the whole-token shortcut, so
// tests can check that both methods merge alike on any piece. kArray needs
// piece.size() < kBpeHeapThreshold.
enum class BpeMethod { kArray, kRuns };
void BytePairEncodeWith(BpeMethod method, const Vocabulary& vocab,
                        std::string_view piece, std::vector<uint32_t>* out);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_BPE_H_
