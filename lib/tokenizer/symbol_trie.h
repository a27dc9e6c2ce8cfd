// The tokens of a vocabulary that are made only of "symbol" bytes (ASCII
// bytes that are neither letters nor digits: whitespace, punctuation and
// control characters), as a trie that lists every token that is a prefix of
// a text in one walk over its bytes.
//
// The long-piece merger (bpe.cc) uses it on pieces made only of such bytes,
// the runs of whitespace and punctuation that pre-tokenization leaves whole:
// every token that can start at a position of such a piece is a symbol token,
// so the trie lists all the candidates there. It is small (cl100k_base has
// 5,853 symbol tokens, 9,536 trie nodes), so it is built on first use, by
// the Vocabulary that owns it.
//
// A double array: node s has the child t = base[s] + code(byte) when
// check[t] == s, so each byte of a walk is one array access. Each token's
// node links to the node of its longest proper prefix that is a token, so
// the candidates at a position are one walk to the longest, then links.
//
// Its tokens made only of whitespace are also kept as a WhitespaceTrie
// (whitespace_trie.h), for pieces made only of whitespace.

#ifndef CTXKIT_LIB_TOKENIZER_SYMBOL_TRIE_H_
#define CTXKIT_LIB_TOKENIZER_SYMBOL_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/tokenizer/whitespace_trie.h"

namespace ctxkit::internal {

class SymbolTrie {
 public:
  // Tokens longer than this are left out (no built-in vocabulary has a
  // symbol token over 128 bytes): a walk lists prefixes up to this long.
  static constexpr size_t kMaxLength = 255;
  static constexpr uint32_t kNoToken = 0xFFFFFFFFu;
  // No node: the root, which is never a token.
  static constexpr uint32_t kNoNode = 0;

  // An empty trie: every walk finds nothing.
  SymbolTrie();

  // `rank_of(bytes)` is the vocabulary's lookup (kNoToken for no token) and
  // `token(rank)` gives the bytes of each rank below `size` (empty for an
  // unused rank); the trie holds every token made only of symbol bytes and
  // at most kMaxLength long, with the merges that byte-pair merging makes
  // on its bytes alone (see Compatible).
  template <typename RankOf, typename TokenBytes>
  static SymbolTrie Build(uint32_t size, RankOf&& rank_of, TokenBytes&& token) {
    SymbolTrie trie;
    std::vector<Pending> pending;
    for (uint32_t rank = 0; rank < size; ++rank) {
      const std::string_view bytes = token(rank);
      if (bytes.empty() || bytes.size() > kMaxLength) continue;
      bool symbols = true;
      for (const char c : bytes) {
        symbols = symbols && IsSymbol(static_cast<unsigned char>(c));
      }
      if (symbols) pending.push_back({bytes, rank});
    }
    trie.Assemble(pending);
    for (uint32_t s = 0; s < trie.slots_.size(); ++s) {
      if (trie.slots_[s].rank == kNoToken) continue;
      trie.RecordMerges(s, trie.token_bytes_[s], rank_of);
    }
    trie.Link();
    trie.whitespace_ = WhitespaceTrie::Build(
        [&trie](uint32_t node, unsigned char byte) {
          return trie.Child(node, byte);
        },
        [&trie](uint32_t node) { return trie.slots_[node].rank; },
        [&trie](uint32_t node) { return trie.infos_[node].reachable; });
    trie.token_bytes_.clear();
    trie.token_bytes_.shrink_to_fit();
    trie.steps_.shrink_to_fit();
    return trie;
  }

  // ASCII, and not a letter or a digit.
  static bool IsSymbol(unsigned char b) {
    return b < 0x80 && !((b >= '0' && b <= '9') || (b >= 'A' && b <= 'Z') ||
                         (b >= 'a' && b <= 'z'));
  }

  // The node of the longest token that is a prefix of the `size` bytes at
  // `text`, or kNoNode when none is.
  uint32_t Longest(const unsigned char* text, size_t size) const {
    const size_t limit = size < kMaxLength ? size : kMaxLength;
    const Slot* slots = slots_.data();
    const size_t slot_count = slots_.size();
    uint32_t s = 0;
    uint32_t longest = kNoNode;
    for (size_t i = 0; i < limit; ++i) {
      const uint32_t t = slots[s].base + code_[text[i]];
      if (t >= slot_count || slots[t].check != s) break;
      s = t;
      if (slots[s].rank != kNoToken) longest = s;
    }
    return longest;
  }

  // The node of the longest proper prefix of token `node` that is a token,
  // or kNoNode: the next candidate at the same position.
  uint32_t Shorter(uint32_t node) const { return infos_[node].shorter; }

  // The length in bytes of token `node`.
  size_t Length(uint32_t node) const { return infos_[node].length; }

  uint32_t Rank(uint32_t node) const { return slots_[node].rank; }

  // The child of `node` by `byte`, or kNoNode.
  uint32_t Child(uint32_t node, unsigned char byte) const {
    const uint32_t t = slots_[node].base + code_[byte];
    if (code_[byte] == 0 || t >= slots_.size() || slots_[t].check != node) {
      return kNoNode;
    }
    return t;
  }

  // The same tokens' whitespace-only ones (node numbers of their own; its
  // TrieNode gives this trie's).
  const WhitespaceTrie& whitespace() const { return whitespace_; }

  // Whether the token of `node` merges into itself alone.
  bool Reachable(uint32_t node) const { return infos_[node].reachable; }

  // Whether the token of node `left`, whose bytes end at `boundary`, and
  // the token of node `right`, whose bytes start there, merge back into
  // themselves when merged together (byte-pair merging as tiktoken does it,
  // on their bytes alone). `rank_of` looks up bytes in the vocabulary.
  //
  // Until a merge crosses the boundary, each side makes the merges it makes
  // alone, in its own order: the lowest rank is the lowest on its side, and
  // the leftmost on a tie is the leftmost there. So the two sides' recorded
  // merges are replayed in the order merging the whole would make them (by
  // rank, the left side first on a tie), and at each step the pair across
  // the boundary (the left side's last part, the right side's first) is
  // compared with the next merge on each side: it merges first, and the
  // tokens are not compatible, when its rank is below the left side's next
  // merge and not above the right side's.
  template <typename RankOf>
  bool Compatible(uint32_t left, uint32_t right, const char* boundary,
                  RankOf&& rank_of) const {
    const Info& a = infos_[left];
    const Info& b = infos_[right];
    if (!a.reachable || !b.reachable) return false;
    const Step* sa = steps_.data() + a.steps;
    const Step* sb = steps_.data() + b.steps + b.count;
    const Step* const ea = sa + a.count;
    const Step* const eb = sb + b.count;
    size_t last = 1;   // bytes of the left side's last part
    size_t first = 1;  // bytes of the right side's first part
    uint32_t across = rank_of(std::string_view(boundary - last, last + first));
    for (;;) {
      const uint32_t ra = sa < ea ? sa->rank : kNoToken;
      const uint32_t rb = sb < eb ? sb->rank : kNoToken;
      if (across < ra && across <= rb) return false;
      if (sa == ea && sb == eb) return true;
      if (ra <= rb) {
        if (sa->edge != 0) {
          last = sa->edge;
          across = rank_of(std::string_view(boundary - last, last + first));
        }
        ++sa;
      } else {
        if (sb->edge != 0) {
          first = sb->edge;
          across = rank_of(std::string_view(boundary - last, last + first));
        }
        ++sb;
      }
    }
  }

  // The number of tokens it holds.
  size_t token_count() const { return token_count_; }

  // Heap bytes held.
  size_t MemoryUsage() const {
    return slots_.capacity() * sizeof(Slot) + infos_.capacity() * sizeof(Info) +
           steps_.capacity() * sizeof(Step) + whitespace_.MemoryUsage();
  }

 private:
  struct Slot {
    uint32_t base = 0;
    uint32_t check = kFree;  // the parent's slot; kFree when unused
    uint32_t rank = kNoToken;
  };
  // A merge a token's bytes make alone. A left side cares about its last
  // part and a right side about its first, so each token's merges are
  // recorded twice: as a left side (edge: the new last part's length when
  // the merge makes it, else 0) and as a right side (the first part's).
  struct Step {
    uint32_t rank;
    uint32_t edge;
  };
  struct Info {
    uint32_t steps = 0;  // as a left side at steps, as a right side at
                         // steps + count
    uint32_t count = 0;
    uint32_t shorter = kNoNode;
    uint16_t length = 0;
    bool reachable = false;
  };
  struct Pending {
    std::string_view bytes;
    uint32_t rank;
  };
  static constexpr uint32_t kFree = 0xFFFFFFFFu;

  void Assemble(std::vector<Pending>& tokens);
  // Sets each node's length and Shorter link.
  void Link();

  // Fills infos_[node] and its steps by merging `bytes` as tiktoken does.
  template <typename RankOf>
  void RecordMerges(uint32_t node, std::string_view bytes, RankOf&& rank_of) {
    const size_t n = bytes.size();
    // Part boundaries: parts are [cuts[i], cuts[i + 1]).
    std::vector<size_t> cuts(n + 1);
    for (size_t i = 0; i <= n; ++i) cuts[i] = i;
    std::vector<Step> as_left;
    std::vector<Step> as_right;
    for (;;) {
      uint32_t best = kNoToken;
      size_t at = 0;
      for (size_t i = 0; i + 2 < cuts.size(); ++i) {
        const uint32_t r =
            rank_of(bytes.substr(cuts[i], cuts[i + 2] - cuts[i]));
        if (r < best) {
          best = r;
          at = i;
        }
      }
      if (best == kNoToken) break;
      const size_t begin = cuts[at];
      const size_t end = cuts[at + 2];
      as_left.push_back(
          {best, end == n ? static_cast<uint32_t>(end - begin) : 0u});
      as_right.push_back(
          {best, begin == 0 ? static_cast<uint32_t>(end - begin) : 0u});
      cuts.erase(cuts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    }
    Info& info = infos_[node];
    info.steps = static_cast<uint32_t>(steps_.size());
    info.count = static_cast<uint32_t>(as_left.size());
    info.reachable = cuts.size() == 2 && rank_of(bytes) == slots_[node].rank;
    steps_.insert(steps_.end(), as_left.begin(), as_left.end());
    steps_.insert(steps_.end(), as_right.begin(), as_right.end());
  }

  std::vector<Slot> slots_;  // slot 0 is the root
  std::vector<Info> infos_;  // by slot
  std::vector<Step> steps_;
  std::vector<std::string_view> token_bytes_;  // by slot, while building
  uint8_t code_[256];                          // 1.. for a symbol byte, else 0
  size_t token_count_ = 0;
  WhitespaceTrie whitespace_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_SYMBOL_TRIE_H_
