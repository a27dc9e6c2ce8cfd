// Byte-pair merging: the array and run-heap methods make the same merges as
// a plain transcription of tiktoken's loop on any piece (including the long
// repetitive ones where the run heap merges many pairs at once, and crafted
// vocabularies where it must not), every piece decodes back to itself, and
// counting agrees with encoding.

#include "lib/tokenizer/bpe.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "lib/tokenizer/embedded_vocabularies.h"
#include "lib/tokenizer/symbol_trie.h"
#include "lib/tokenizer/vocabulary.h"
#include "lib/tokenizer/whitespace_trie.h"

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

Vocabulary LoadEmbedded(const char* name) {
  auto v = Vocabulary::FromCompact(EmbeddedVocabularyData(name));
  REQUIRE(v.ok());
  return std::move(*v);
}

// tiktoken's _byte_pair_merge written out as plainly as possible (cubic, for
// tests only): the oracle the fast methods are held to.
std::vector<uint32_t> ReferenceMerge(const Vocabulary& vocab,
                                     std::string_view piece) {
  std::vector<size_t> bounds;
  for (size_t i = 0; i <= piece.size(); ++i) bounds.push_back(i);
  for (;;) {
    std::optional<uint32_t> best;
    size_t at = 0;
    for (size_t i = 0; i + 2 < bounds.size(); ++i) {
      const auto rank =
          vocab.Rank(piece.substr(bounds[i], bounds[i + 2] - bounds[i]));
      if (rank && (!best || *rank < *best)) {
        best = rank;
        at = i;
      }
    }
    if (!best) break;
    bounds.erase(bounds.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  std::vector<uint32_t> ids;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    ids.push_back(
        *vocab.Rank(piece.substr(bounds[i], bounds[i + 1] - bounds[i])));
  }
  return ids;
}

// Long pieces with the repetition the run heap exploits: runs of one byte of
// random lengths, repeated short units, whitespace mixes.
std::string RepetitivePiece(std::mt19937& rng, size_t length) {
  static const std::string units[] = {"a",   " ",    "=",        "-",
                                      "ab",  "\n ",  "\t",       "0",
                                      "xyz", "  \n", "\xc3\xa9", "aaab"};
  std::string piece;
  while (piece.size() < length) {
    const std::string& unit = units[rng() % std::size(units)];
    const size_t repeat = 1 + rng() % (rng() % 4 == 0 ? 200 : 12);
    for (size_t k = 0; k < repeat && piece.size() < length; ++k) piece += unit;
  }
  return piece;
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
      "abcdefghijklmnopqrstuvwxyz",
      "aaaaaaab",
      " \t\n",
      "0123456789",
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
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

TEST_CASE("array and run-heap merging agree on every piece") {
  const Vocabulary& vocab = Cl100k();
  std::mt19937 rng(20261122);
  for (int round = 0; round < 3000; ++round) {
    const size_t length = 1 + rng() % (kBpeHeapThreshold - 1);
    const std::string piece = RandomPiece(rng, length);
    std::vector<uint32_t> by_array, by_heap, best;
    BytePairEncodeWith(BpeMethod::kArray, vocab, piece, &by_array);
    BytePairEncodeWith(BpeMethod::kRuns, vocab, piece, &by_heap);
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

TEST_CASE("the run heap merges long repetitive pieces exactly as tiktoken") {
  std::mt19937 rng(99);
  for (const char* name : {"r50k_base", "cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    for (int round = 0; round < 12; ++round) {
      const size_t length = kBpeHeapThreshold + rng() % 700;
      const std::string piece = RepetitivePiece(rng, length);
      std::vector<uint32_t> ids;
      BytePairEncodeWith(BpeMethod::kRuns, vocab, piece, &ids);
      REQUIRE_MESSAGE(ids == ReferenceMerge(vocab, piece),
                      std::string(name) << ", piece of " << length << " bytes");
    }
    for (const char unit : {'a', ' ', '\n', '='}) {
      for (size_t length : {size_t{200}, size_t{511}, size_t{1024}}) {
        const std::string run(length, unit);
        std::vector<uint32_t> ids;
        BytePairEncodeWith(BpeMethod::kRuns, vocab, run, &ids);
        CHECK_MESSAGE(ids == ReferenceMerge(vocab, run),
                      std::string(name) << ", run of " << length);
      }
    }
  }
}

// A vocabulary where merging a run's pairs left to right is NOT what
// tiktoken does: a pair formed by the first merge outranks the rest, so the
// run heap has to fall back to one merge at a time.
TEST_CASE("the run heap stops batching when a new pair outranks the run") {
  // Ranks: a b c, then "aaa" before "aa" (m+t outranks t+t), "aaaa" before
  // "aa" (m+m), "caa" before "aa" (previous token + m).
  const char* lines[][2] = {{"YQ==", "0"}, {"Yg==", "1"},     {"Yw==", "2"},
                            {"YWFh", "3"}, {"YWFhYQ==", "4"}, {"Y2Fh", "5"},
                            {"YWE=", "6"}, {"YmI=", "7"}};
  std::string text;
  for (const auto& line : lines)
    text += std::string(line[0]) + " " + line[1] + "\n";
  auto vocab = Vocabulary::FromTiktoken(text);
  REQUIRE(vocab.ok());
  std::mt19937 rng(5);
  for (int round = 0; round < 200; ++round) {
    std::string piece;
    const size_t length = kBpeHeapThreshold + rng() % 300;
    while (piece.size() < length) {
      piece.append(1 + rng() % 20, "abc"[rng() % 3]);
    }
    std::vector<uint32_t> ids;
    BytePairEncodeWith(BpeMethod::kRuns, *vocab, piece, &ids);
    REQUIRE_MESSAGE(ids == ReferenceMerge(*vocab, piece), piece);
  }
}

// Long pieces made of what merges slowest: mixed runs of
// whitespace (both line ends, tabs, indentation), of punctuation, of one
// CJK character or several, and periodic units such as "-=" or "\r\n",
// with now and then a long run of one byte or a stray letter.
std::string MixedPiece(std::mt19937& rng, size_t length) {
  static const std::string kUnits[] = {" ",
                                       "\n",
                                       "\r\n",
                                       "\t",
                                       "  ",
                                       "    ",
                                       "-=",
                                       "=",
                                       "-",
                                       "*",
                                       "#",
                                       "~",
                                       ".",
                                       "!?",
                                       "//",
                                       "\xE7\x9A\x84",
                                       "\xE6\x97\xA5",
                                       "\xE3\x80\x82",
                                       "\xF0\x9F\x99\x82",
                                       "a",
                                       "_",
                                       "{}",
                                       "\"",
                                       "'"};
  std::string piece;
  // Each piece draws from a few units, as real runs do.
  std::vector<std::string> units;
  const size_t kinds = 1 + rng() % 4;
  for (size_t k = 0; k < kinds; ++k)
    units.push_back(kUnits[rng() % std::size(kUnits)]);
  while (piece.size() < length) {
    const std::string& unit = units[rng() % units.size()];
    const size_t repeat = 1 + rng() % (rng() % 8 == 0 ? 300 : 6);
    for (size_t k = 0; k < repeat && piece.size() < length; ++k) piece += unit;
  }
  return piece;
}

TEST_CASE("segment merging agrees with the run heap on long mixed pieces") {
  std::mt19937 rng(20261126);
  for (const char* name : {"r50k_base", "cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    for (int round = 0; round < 400; ++round) {
      const size_t length = kBpeHeapThreshold + rng() % 3000;
      const std::string piece =
          round % 2 == 0 ? MixedPiece(rng, length) : RandomPiece(rng, length);
      std::vector<uint32_t> by_segments, by_runs;
      BytePairEncodeWith(BpeMethod::kSegments, vocab, piece, &by_segments);
      BytePairEncodeWith(BpeMethod::kRuns, vocab, piece, &by_runs);
      REQUIRE_MESSAGE(by_segments == by_runs, name << ", round " << round
                                                   << ", " << length
                                                   << " bytes");
    }
  }
}

// Ranks that make cuts go wrong: "aaa" before "aa", "caa" before "aa",
// and long tokens across every likely cut; a, b and c spelled as the three
// bytes of `abc`.
Vocabulary CraftedVocabulary(std::string_view abc) {
  static const char* const kTokens[] = {"a",   "b",  "c",      "aaa", "aaaa",
                                        "caa", "aa", "bb",     "ab",  "bc",
                                        "abc", "ca", "abcabc", "bcab"};
  std::string text;
  for (size_t rank = 0; rank < std::size(kTokens); ++rank) {
    std::string token = kTokens[rank];
    for (char& ch : token) ch = abc[static_cast<size_t>(ch - 'a')];
    text += absl::Base64Escape(token) + " " + std::to_string(rank) + "\n";
  }
  auto vocab = Vocabulary::FromTiktoken(text);
  REQUIRE(vocab.ok());
  return std::move(*vocab);
}

// Checks each of `methods` against tiktoken's loop on 300 long pieces of
// runs of the three bytes of `abc` in CraftedVocabulary(abc).
void CheckCrafted(std::string_view abc, uint32_t seed,
                  std::initializer_list<BpeMethod> methods) {
  const Vocabulary vocab = CraftedVocabulary(abc);
  std::mt19937 rng(seed);
  for (int round = 0; round < 300; ++round) {
    std::string piece;
    const size_t length = kBpeHeapThreshold + rng() % 400;
    while (piece.size() < length) {
      if (rng() % 3 == 0) {
        piece += abc;
      } else {
        piece.append(1 + rng() % 20, abc[rng() % 3]);
      }
    }
    const std::vector<uint32_t> expected = ReferenceMerge(vocab, piece);
    for (BpeMethod method : methods) {
      std::vector<uint32_t> ids;
      BytePairEncodeWith(method, vocab, piece, &ids);
      REQUIRE_MESSAGE(ids == expected, "round " << round);
    }
  }
}

TEST_CASE(
    "segment merging agrees with tiktoken's loop on crafted vocabularies") {
  CheckCrafted("abc", 11, {BpeMethod::kSegments});
}

// Long pieces of symbol bytes only (ASCII, no letter or digit), as
// pre-tokenization leaves runs of whitespace and punctuation: the shapes of
// MixedPiece, and random mixes of single symbols.
std::string SymbolPiece(std::mt19937& rng, size_t length) {
  static const std::string kUnits[] = {
      " ", "\n", "\r\n", "\t", "  ", "    ", "-=", "=",  "-", "*",
      "#", "~",  ".",    "!?", "//", "_",    "{}", "\"", "'", "\x01"};
  static const std::string kSymbols = " \t\n\r-=*#~_.:;!?/+()[]{}&%$@^`'\",\\>";
  std::string piece;
  if (rng() % 3 == 0) {
    // Random bytes of a few symbols: nothing repeats for long.
    const size_t kinds = 2 + rng() % 6;
    std::string alphabet;
    for (size_t k = 0; k < kinds; ++k)
      alphabet += kSymbols[rng() % kSymbols.size()];
    while (piece.size() < length) piece += alphabet[rng() % alphabet.size()];
    return piece;
  }
  std::vector<std::string> units;
  const size_t kinds = 1 + rng() % 4;
  for (size_t k = 0; k < kinds; ++k)
    units.push_back(kUnits[rng() % std::size(kUnits)]);
  while (piece.size() < length) {
    const std::string& unit = units[rng() % units.size()];
    const size_t repeat = 1 + rng() % (rng() % 8 == 0 ? 300 : 6);
    for (size_t k = 0; k < repeat && piece.size() < length; ++k) piece += unit;
  }
  return piece;
}

// The (length, node) of every token of `trie` that is a prefix of the
// `size` bytes at `text`, shortest first, by its Longest and Shorter links.
std::vector<std::pair<uint32_t, uint32_t>> TriePrefixes(
    const SymbolTrie& trie, const unsigned char* text, size_t size) {
  std::vector<std::pair<uint32_t, uint32_t>> found;
  for (uint32_t node = trie.Longest(text, size); node != SymbolTrie::kNoNode;
       node = trie.Shorter(node)) {
    found.emplace_back(static_cast<uint32_t>(trie.Length(node)), node);
  }
  std::reverse(found.begin(), found.end());
  return found;
}

TEST_CASE(
    "the symbol trie lists exactly the symbol tokens that prefix a text") {
  std::mt19937 rng(31);
  for (const char* name : {"r50k_base", "cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    const SymbolTrie& trie = vocab.symbol_trie();
    CHECK(trie.token_count() > 500);
    for (int round = 0; round < 40; ++round) {
      const std::string text = SymbolPiece(rng, 300);
      for (size_t pos = 0; pos < text.size(); pos += 1 + rng() % 7) {
        std::vector<std::pair<uint32_t, uint32_t>> found, expected;
        for (const auto& [length, node] : TriePrefixes(
                 trie,
                 reinterpret_cast<const unsigned char*>(text.data()) + pos,
                 text.size() - pos)) {
          found.emplace_back(length, trie.Rank(node));
        }
        for (size_t len = 1; pos + len <= text.size() && len <= 255; ++len) {
          if (auto rank = vocab.Rank(std::string_view(text).substr(pos, len)))
            expected.emplace_back(static_cast<uint32_t>(len), *rank);
        }
        REQUIRE_MESSAGE(found == expected, name << " at " << pos);
      }
    }
  }
}

TEST_CASE("the symbol trie's pair check agrees with merging the pair") {
  std::mt19937 rng(37);
  for (const char* name : {"r50k_base", "cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    const SymbolTrie& trie = vocab.symbol_trie();
    auto rank_of = [&](std::string_view b) { return vocab.RankOrNone(b); };
    size_t compatible = 0;
    size_t checked = 0;
    for (int round = 0; round < 400; ++round) {
      // Two tokens side by side, each one that starts there, at random.
      const std::string text = SymbolPiece(rng, 160);
      const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
      const size_t pos = rng() % 32;
      const auto lefts = TriePrefixes(trie, bytes + pos, text.size() - pos);
      REQUIRE(!lefts.empty());
      const auto [la, na] = lefts[rng() % lefts.size()];
      const size_t mid = pos + la;
      if (mid >= text.size()) continue;
      const auto rights = TriePrefixes(trie, bytes + mid, text.size() - mid);
      REQUIRE(!rights.empty());
      for (const auto& [lb, nb] : rights) {
        const std::vector<uint32_t> merged =
            ReferenceMerge(vocab, std::string_view(text).substr(pos, la + lb));
        const bool expected =
            merged == std::vector<uint32_t>{trie.Rank(na), trie.Rank(nb)};
        REQUIRE(trie.Compatible(na, nb, text.data() + mid, rank_of) ==
                expected);
        compatible += expected;
        ++checked;
      }
    }
    // Both answers must have been exercised.
    CHECK(compatible > 50);
    CHECK(checked - compatible > 50);
  }
}

// Whitespace only, as pre-tokenization leaves it between paragraphs: runs
// of spaces, tabs and line feeds, CRLF, now and then a vertical tab or a
// form feed, or random bytes of a few of them.
std::string WhitespacePiece(std::mt19937& rng, size_t length) {
  static const std::string kBytes = " \t\n\r\v\f";
  std::string piece;
  if (rng() % 4 == 0) {
    const std::string alphabet = kBytes.substr(0, 2 + rng() % 5);
    while (piece.size() < length) piece += alphabet[rng() % alphabet.size()];
  } else {
    while (piece.size() < length) {
      switch (rng() % 8) {
        case 0:
        case 1:
          piece.append(1 + rng() % (rng() % 8 == 0 ? 100 : 12), ' ');
          break;
        case 2:
          piece.append(1 + rng() % 3, '\t');
          break;
        case 3:
          piece += "\r\n";
          break;
        case 4:
          piece += kBytes[rng() % kBytes.size()];
          break;
        default:
          piece.append(1 + rng() % 3, '\n');
      }
    }
  }
  piece.resize(length);
  return piece;
}

TEST_CASE(
    "the whitespace trie's scan lists every whitespace token that ends at "
    "each position") {
  std::mt19937 rng(47);
  for (const char* name : {"r50k_base", "cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    const WhitespaceTrie& trie = vocab.symbol_trie().whitespace();
    REQUIRE(trie.usable());
    for (int round = 0; round < 40; ++round) {
      const std::string text = WhitespacePiece(rng, 1 + rng() % 400);
      std::vector<uint16_t> ending(text.size() + 1);
      trie.Scan(reinterpret_cast<const unsigned char*>(text.data()),
                text.size(), ending.data());
      for (size_t end = 0; end <= text.size(); ++end) {
        std::vector<std::pair<size_t, uint32_t>> found, expected;
        for (uint32_t state = ending[end]; state != WhitespaceTrie::kNoNode;
             state = trie.Shorter(state)) {
          found.emplace_back(trie.Length(state), trie.Rank(state));
        }
        for (size_t len = std::min<size_t>(end, 255); len > 0; --len) {
          if (auto rank =
                  vocab.Rank(std::string_view(text).substr(end - len, len))) {
            expected.emplace_back(len, *rank);
          }
        }
        REQUIRE_MESSAGE(found == expected, name << " at " << end);
      }
    }
  }
}

TEST_CASE("the whitespace trie remembers each pair's answer") {
  std::mt19937 rng(53);
  for (const char* name : {"cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    const SymbolTrie& symbols = vocab.symbol_trie();
    const WhitespaceTrie& trie = symbols.whitespace();
    auto rank_of = [&](std::string_view b) { return vocab.RankOrNone(b); };
    size_t compatible = 0;
    size_t checked = 0;
    for (int round = 0; round < 300; ++round) {
      // Two tokens side by side: the longest ending at `mid`, and each one
      // ending further on.
      const std::string text = WhitespacePiece(rng, 120);
      std::vector<uint16_t> ending(text.size() + 1);
      trie.Scan(reinterpret_cast<const unsigned char*>(text.data()),
                text.size(), ending.data());
      const size_t mid = 1 + rng() % 40;
      const uint32_t left = ending[mid];
      REQUIRE(left != WhitespaceTrie::kNoNode);
      for (size_t end = mid + 1; end < text.size() && end < mid + 60; ++end) {
        for (uint32_t right = ending[end]; right != WhitespaceTrie::kNoNode;
             right = trie.Shorter(right)) {
          if (end - trie.Length(right) != mid) continue;
          const std::string_view both = std::string_view(text).substr(
              mid - trie.Length(left), trie.Length(left) + trie.Length(right));
          const bool expected =
              ReferenceMerge(vocab, both) ==
              std::vector<uint32_t>{trie.Rank(left), trie.Rank(right)};
          int worked_out = 0;
          auto work_out = [&] {
            ++worked_out;
            return symbols.Compatible(trie.TrieNode(left), trie.TrieNode(right),
                                      text.data() + mid, rank_of);
          };
          REQUIRE(trie.Compatible(left, right, work_out) == expected);
          REQUIRE(trie.Compatible(left, right, work_out) == expected);
          // The second answer, at least, came from the table.
          REQUIRE(worked_out <= 1);
          compatible += expected;
          ++checked;
        }
      }
    }
    CHECK(compatible > 50);
    CHECK(checked - compatible > 50);
  }
}

// Checks `method` on long pieces made by `make(rng, length)` in each
// vocabulary of `names`: against tiktoken's loop on `short_rounds` pieces of
// up to `short_extra` bytes past kBpeHeapThreshold, and against the run heap
// (held to that loop above), as each method of `also` must agree too, on
// `long_rounds` pieces of up to `long_extra` bytes past it.
template <typename Make>
void CheckLongMerges(BpeMethod method, std::initializer_list<BpeMethod> also,
                     std::initializer_list<const char*> names, uint32_t seed,
                     int short_rounds, size_t short_extra, int long_rounds,
                     size_t long_extra, Make&& make) {
  std::mt19937 rng(seed);
  for (const char* name : names) {
    const Vocabulary vocab = LoadEmbedded(name);
    for (int round = 0; round < short_rounds; ++round) {
      const size_t length = kBpeHeapThreshold + rng() % short_extra;
      const std::string piece = make(rng, length);
      std::vector<uint32_t> ids;
      BytePairEncodeWith(method, vocab, piece, &ids);
      REQUIRE_MESSAGE(
          ids == ReferenceMerge(vocab, piece),
          name << ", round " << round << ", " << length << " bytes");
    }
    for (int round = 0; round < long_rounds; ++round) {
      const size_t length = kBpeHeapThreshold + rng() % long_extra;
      const std::string piece = make(rng, length);
      std::vector<uint32_t> by_runs;
      BytePairEncodeWith(BpeMethod::kRuns, vocab, piece, &by_runs);
      for (BpeMethod other : also) {
        std::vector<uint32_t> ids;
        BytePairEncodeWith(other, vocab, piece, &ids);
        REQUIRE_MESSAGE(ids == by_runs, name << ", round " << round);
      }
    }
  }
}

TEST_CASE(
    "the whitespace search merges long whitespace pieces exactly as "
    "tiktoken") {
  CheckLongMerges(
      BpeMethod::kWhitespace,
      {BpeMethod::kWhitespace, BpeMethod::kSymbols, BpeMethod::kLong},
      {"r50k_base", "p50k_base", "cl100k_base", "o200k_base"}, 59, 40, 480, 30,
      20000, WhitespacePiece);
}

TEST_CASE("threads merging whitespace at once fill one pair table alike") {
  // A fresh vocabulary: its symbol trie is built, and its table of
  // whitespace pairs filled, by the four threads racing on first use.
  const Vocabulary vocab = LoadEmbedded("cl100k_base");
  std::mt19937 rng(67);
  std::vector<std::string> pieces;
  std::vector<std::vector<uint32_t>> expected;
  for (int i = 0; i < 8; ++i) {
    pieces.push_back(WhitespacePiece(rng, 4000 + rng() % 4000));
    expected.emplace_back();
    BytePairEncodeWith(BpeMethod::kRuns, vocab, pieces.back(),
                       &expected.back());
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < pieces.size(); ++i) {
        const size_t k = (i + 2 * t) % pieces.size();
        std::vector<uint32_t> ids;
        BytePairEncodeWith(BpeMethod::kWhitespace, vocab, pieces[k], &ids);
        if (ids != expected[k]) ++mismatches;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(mismatches.load() == 0);
}

TEST_CASE("the symbol search merges long symbol pieces exactly as tiktoken") {
  CheckLongMerges(BpeMethod::kSymbols, {BpeMethod::kSymbols, BpeMethod::kLong},
                  {"r50k_base", "cl100k_base", "o200k_base"}, 41, 20, 400, 60,
                  4000, SymbolPiece);
}

TEST_CASE("the symbol search agrees with tiktoken's loop on crafted ranks") {
  CheckCrafted("-= ", 43, {BpeMethod::kSymbols, BpeMethod::kLong});
}

TEST_CASE(
    "the whitespace search agrees with tiktoken's loop on crafted ranks") {
  REQUIRE(CraftedVocabulary("\t\n ").symbol_trie().whitespace().usable());
  CheckCrafted("\t\n ", 61, {BpeMethod::kWhitespace, BpeMethod::kLong});
}

// Long runs of the alphabets that merge slowest: random
// spaces and newlines, mixed indentation and line ends, random ASCII
// punctuation, punctuation with blanks, and repeated units of them (CRLF
// blank lines, rules of "-="), as pre-tokenization leaves them whole.
std::string TroublesomeRun(std::mt19937& rng, size_t length) {
  static const std::string kPunctuation = "-=*#~_.:;!?/+()[]{}&%$@^`'\",\\>|<";
  std::string piece;
  switch (rng() % 5) {
    case 0:  // spaces and newlines
      while (piece.size() < length) piece += rng() % 4 == 0 ? '\n' : ' ';
      break;
    case 1:  // indentation, blank lines and both line ends
      while (piece.size() < length) {
        switch (rng() % 6) {
          case 0:
            piece.append(1 + rng() % 12, ' ');
            break;
          case 1:
            piece.append(1 + rng() % 3, '\t');
            break;
          case 2:
            piece += "\r\n";
            break;
          default:
            piece.append(1 + rng() % 2, '\n');
        }
      }
      break;
    case 2:  // punctuation, a byte at a time
      while (piece.size() < length)
        piece += kPunctuation[rng() % kPunctuation.size()];
      break;
    case 3:  // punctuation and blanks
      while (piece.size() < length) {
        piece += rng() % 3 == 0 ? " \t\n"[rng() % 3]
                                : kPunctuation[rng() % kPunctuation.size()];
      }
      break;
    default: {  // a unit repeated, now and then broken
      static const std::string kUnits[] = {"\r\n", "-=",   "==", "- ", "*-",
                                           "\t\n", "  \n", "#",  "//", ".,"};
      const std::string& unit = kUnits[rng() % std::size(kUnits)];
      while (piece.size() < length) {
        piece += unit;
        if (rng() % 50 == 0) piece += kPunctuation[rng() % kPunctuation.size()];
      }
    }
  }
  piece.resize(length);
  return piece;
}

TEST_CASE("long runs of whitespace and punctuation merge exactly as tiktoken") {
  // Against tiktoken's loop itself on pieces of up to 600 bytes, and
  // against the run heap (held to the same loop above) on pieces of up to
  // 20,000, in every built-in vocabulary.
  std::mt19937 rng(20261126);
  for (const char* name :
       {"r50k_base", "p50k_base", "cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    for (int round = 0; round < 50; ++round) {
      const size_t length = kBpeHeapThreshold + rng() % 480;
      const std::string piece = TroublesomeRun(rng, length);
      std::vector<uint32_t> ids;
      BytePairEncodeWith(BpeMethod::kLong, vocab, piece, &ids);
      REQUIRE_MESSAGE(
          ids == ReferenceMerge(vocab, piece),
          name << ", round " << round << ", " << length << " bytes");
    }
    for (int round = 0; round < 40; ++round) {
      const size_t length = kBpeHeapThreshold + rng() % 20000;
      const std::string piece = TroublesomeRun(rng, length);
      std::vector<uint32_t> by_long, by_runs;
      BytePairEncodeWith(BpeMethod::kLong, vocab, piece, &by_long);
      BytePairEncodeWith(BpeMethod::kRuns, vocab, piece, &by_runs);
      REQUIRE_MESSAGE(by_long == by_runs, name << ", round " << round << ", "
                                               << length << " bytes");
    }
  }
}

TEST_CASE("a stretch between uncrossable positions is merged, not looked up") {
  // "-#=" is a token the merges cannot reach ("-#" and "#=" are none), and
  // no token has "= " or " -" in it, so the stretch "-#=" stands alone
  // between blanks: tiktoken merges it into three tokens, as it would any
  // part of a piece; only a whole piece is taken as one token.
  const char* lines[][2] = {{"LQ==", "0"}, {"Iw==", "1"}, {"PQ==", "2"},
                            {"IA==", "3"}, {"LSM9", "4"}, {"LS0=", "5"},
                            {"ICA=", "6"}, {"PT0=", "7"}, {"LT0=", "8"},
                            {"LS0t", "9"}};
  std::string text;
  for (const auto& line : lines)
    text += std::string(line[0]) + " " + line[1] + "\n";
  auto vocab = Vocabulary::FromTiktoken(text);
  REQUIRE(vocab.ok());
  std::mt19937 rng(47);
  static const std::string kUnits[] = {"-#=", " ", "  ", "--", "=", "-=", "#"};
  size_t checked = 0;
  for (int round = 0; round < 200; ++round) {
    std::string piece;
    const size_t length = kBpeHeapThreshold + rng() % 300;
    while (piece.size() < length) piece += kUnits[rng() % std::size(kUnits)];
    std::vector<uint32_t> ids;
    BytePairEncodeWith(BpeMethod::kLong, *vocab, piece, &ids);
    REQUIRE_MESSAGE(ids == ReferenceMerge(*vocab, piece), piece);
    checked += piece.find(" -#= ") != std::string::npos;
  }
  CHECK(checked > 20);
}

TEST_CASE("short pieces of repeated symbols merge exactly as tiktoken") {
  // Lines of ASCII tables and rules, 32 to 127 bytes: once the symbol trie
  // is built they are searched, not merged by rescanning; either way the
  // ids must be tiktoken's.
  static const std::string kUnits[] = {"-", "=", "+",  "|",  "~",  "*", "#",
                                       ".", "_", "-+", "=|", "\n", " "};
  std::mt19937 rng(20261128);
  for (const char* name :
       {"r50k_base", "p50k_base", "cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    REQUIRE_FALSE(vocab.symbol_trie_built());
    for (const bool built : {false, true}) {
      if (built) vocab.symbol_trie();
      CHECK(vocab.symbol_trie_built() == built);
      for (int round = 0; round < 150; ++round) {
        const size_t length = 32 + rng() % 96;
        std::string piece;
        while (piece.size() < length) {
          const std::string& unit = kUnits[rng() % std::size(kUnits)];
          const size_t repeat = 1 + rng() % 24;
          for (size_t k = 0; k < repeat && piece.size() < length; ++k)
            piece += unit;
        }
        piece.resize(length);
        std::vector<uint32_t> ids;
        BytePairEncode(vocab, piece, &ids);
        REQUIRE_MESSAGE(ids == ReferenceMerge(vocab, piece),
                        name << ", trie built " << built << ", " << piece);
      }
    }
  }
}

TEST_CASE(
    "short pieces of symbols merge exactly as tiktoken, before and "
    "after the thread has the tables of long ones") {
  // Random punctuation cut by spaces and whole symbol tokens side by side,
  // 4 to 127 bytes, and every symbol token alone: a thread merges them by
  // rescanning until it has the pair tables that long symbol pieces build, then
  // in pairs. Both must give tiktoken's ids, and so must a piece that is a
  // token.
  static const char kSymbols[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \n\t";
  for (const char* name :
       {"r50k_base", "p50k_base", "cl100k_base", "o200k_base"}) {
    const Vocabulary vocab = LoadEmbedded(name);
    std::vector<std::string> symbol_tokens;
    for (uint32_t rank = 0; rank < vocab.size(); ++rank) {
      const std::string_view bytes = vocab.Bytes(rank);
      if (bytes.size() < 4 || bytes.size() >= kBpeHeapThreshold) continue;
      if (std::all_of(bytes.begin(), bytes.end(), [](char c) {
            return SymbolTrie::IsSymbol(static_cast<unsigned char>(c));
          })) {
        symbol_tokens.emplace_back(bytes);
      }
    }
    REQUIRE(symbol_tokens.size() > 100);
    // A fresh thread, so that it starts without the tables; it reports its
    // first wrong piece here, where an assertion may stop the test.
    size_t wrong = 0;
    std::string first_wrong;
    std::thread([&] {
      std::mt19937 rng(20261126);
      // tiktoken takes a piece that is a token whole, merged or not.
      auto check = [&](const std::string& piece, const char* when) {
        std::vector<uint32_t> ids;
        BytePairEncode(vocab, piece, &ids);
        const std::optional<uint32_t> whole = vocab.Rank(piece);
        if (ids != (whole ? std::vector<uint32_t>{*whole}
                          : ReferenceMerge(vocab, piece)) &&
            wrong++ == 0) {
          first_wrong = std::string(when) + ": " + piece;
        }
      };
      auto check_tokens = [&](const char* when) {
        for (const std::string& token : symbol_tokens) check(token, when);
      };
      auto random_piece = [&] {
        std::string piece;
        const size_t length = 4 + rng() % 124;
        if (rng() % 2 == 0) {  // tokens side by side
          while (piece.size() < length) {
            piece += symbol_tokens[rng() % symbol_tokens.size()];
          }
        } else {  // random punctuation, spaces and newlines
          while (piece.size() < length) {
            piece += kSymbols[rng() % (sizeof(kSymbols) - 1)];
          }
        }
        piece.resize(std::min(piece.size(), kBpeHeapThreshold - 1));
        return piece;
      };
      check_tokens("before the tables");
      for (int round = 0; round < 400; ++round) {
        check(random_piece(), "before the tables");
      }
      std::string long_piece;
      while (long_piece.size() < 4 * kBpeHeapThreshold) {
        long_piece += kSymbols[rng() % (sizeof(kSymbols) - 1)];
      }
      check(long_piece, "the long piece");
      check_tokens("after the tables");
      for (int round = 0; round < 2000; ++round) {
        check(random_piece(), "after the tables");
      }
    }).join();
    CHECK_MESSAGE(wrong == 0, std::string(name)
                                  << ", " << wrong << " pieces wrong, first "
                                  << first_wrong);
  }
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
