// Byte-pair merging: the array and heap methods make the same merges on any
// piece, every piece decodes back to itself, and counting agrees with
// encoding.

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "lib/tokenizer/bpe.h"
#include "lib/tokenizer/embedded_vocabularies.h"
#include "lib/tokenizer/vocabulary.h"

namespace ctxkit::internal {
namespace {

const Vocabulary& Cl100k() {
  static const Vocabulary* vocab = [] {
    auto v = Vocabulary::FromCompact(EmbeddedVocabularyData("cl100k_base"));
    REQUIRE(v.ok());
    return new Vocabulary(std::move(*v));
  }();
  return *vocab;
}

std::string Join(const Vocabulary& vocab, const std::vector<uint32_t>& ids) {
  std::string out;
  for (uint32_t id : ids) out += vocab.Bytes(id);
  return out;
}

// Pieces of the kinds BPE meets: words, repeated letters, digits, bytes of
// multi-byte characters, random bytes, and base64-like runs.
std::string RandomPiece(std::mt19937& rng, size_t length) {
  static const std::string alphabets[] = {
      "abcdefghijklmnopqrstuvwxyz", "aaaaaaab", " \t\n",
      "0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
      "\xe4\xbd\xa0\xe5\xa5\xbd\xf0\x9f\x98\x80\xc3\xa9"};
  const std::string& alphabet = alphabets[rng() % std::size(alphabets)];
  std::string piece;
  const bool raw_bytes = rng() % 5 == 0;
  for (size_t i = 0; i < length; ++i) {
    piece += raw_bytes ? static_cast<char>(rng() % 256)
                       : alphabet[rng() % alphabet.size()];
  }
  return piece;
}

TEST_CASE("array and heap merging agree on every piece") {
  const Vocabulary& vocab = Cl100k();
  std::mt19937 rng(20261122);
  for (int round = 0; round < 3000; ++round) {
    const size_t length = 1 + rng() % (kBpeHeapThreshold - 1);
    const std::string piece = RandomPiece(rng, length);
    std::vector<uint32_t> by_array, by_heap, best;
    BytePairEncodeWith(BpeMethod::kArray, vocab, piece, &by_array);
    BytePairEncodeWith(BpeMethod::kHeap, vocab, piece, &by_heap);
    BytePairEncode(vocab, piece, &best);
    REQUIRE_MESSAGE(by_array == by_heap, "piece of " << length << " bytes");
    CHECK(best == by_array);
    CHECK(Join(vocab, by_array) == piece);
    CHECK(BytePairCount(vocab, piece) == by_array.size());
  }
}

TEST_CASE("long pieces decode back to themselves") {
  const Vocabulary& vocab = Cl100k();
  std::mt19937 rng(7);
  for (size_t length : {kBpeHeapThreshold, size_t{1000}, size_t{20000}}) {
    const std::string piece = RandomPiece(rng, length);
    std::vector<uint32_t> ids;
    BytePairEncode(vocab, piece, &ids);
    CHECK(Join(vocab, ids) == piece);
    CHECK(BytePairCount(vocab, piece) == ids.size());
  }
  // A run of one letter: merges into long tokens, never one per byte.
  const std::string run(100000, 'a');
  std::vector<uint32_t> ids;
  BytePairEncode(vocab, run, &ids);
  CHECK(Join(vocab, ids) == run);
  CHECK(ids.size() < run.size() / 4);
}

TEST_CASE("a whole-token piece is one id") {
  const Vocabulary& vocab = Cl100k();
  std::vector<uint32_t> ids;
  BytePairEncode(vocab, "hello", &ids);
  REQUIRE(ids.size() == 1);
  CHECK(vocab.Bytes(ids[0]) == "hello");
}

}  // namespace
}  // namespace ctxkit::internal
