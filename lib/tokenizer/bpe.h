// Byte-pair merging of one pre-tokenized piece, exactly as tiktoken does it:
// starting from single bytes, repeatedly merge the adjacent pair whose
// concatenation has the lowest rank in the vocabulary, the leftmost one on a
// tie, until no adjacent pair is a token.
//
// Short pieces use tiktoken's array scan (quadratic, but fastest for the few
// bytes most pieces have); long ones use a heap over a linked list, so that a
// 1 MB piece (a run of one letter, a base64 blob) costs O(n log n) rather
// than O(n^2). Both produce the same merges.

#ifndef CTXKIT_LIB_TOKENIZER_BPE_H_
#define CTXKIT_LIB_TOKENIZER_BPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/tokenizer/vocabulary.h"

namespace ctxkit::internal {

// Pieces at least this long take the heap path.
inline constexpr size_t kBpeHeapThreshold = 128;

// Appends the token ids of `piece` to `out`. Precondition: `piece` is not
// empty and every single byte is a token of `vocab` (checked when an
// encoding is built). Thread-safe: `vocab` is only read.
void BytePairEncode(const Vocabulary& vocab, std::string_view piece,
                    std::vector<uint32_t>* out);

// The number of ids BytePairEncode would append.
size_t BytePairCount(const Vocabulary& vocab, std::string_view piece);

// BytePairEncode with a chosen method, without the whole-token shortcut, so
// tests can check that both methods merge alike on any piece. kArray needs
// piece.size() < kBpeHeapThreshold.
enum class BpeMethod { kArray, kHeap };
void BytePairEncodeWith(BpeMethod method, const Vocabulary& vocab,
                        std::string_view piece, std::vector<uint32_t>* out);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_BPE_H_
