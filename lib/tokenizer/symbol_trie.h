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
// It also remembers which pairs of whitespace tokens are compatible (see
// Compatible), one table for every thread that reads the trie: random runs
// of spaces, tabs and line ends check a few tens of thousands of such pairs
// over and over, and a direct table answers each in one load.

#ifndef CTXKIT_LIB_TOKENIZER_SYMBOL_TRIE_H_
#define CTXKIT_LIB_TOKENIZER_SYMBOL_TRIE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace ctxkit::internal {

class SymbolTrie {
 public:
  // Tokens longer than this are left out (no built-in vocabulary has a
  // symbol token over 128 bytes): a walk lists prefixes up to this long.
  static constexpr size_t kMaxLength = 255;
  static constexpr uint32_t kNoToken = 0xFFFFFFFFu;
  // No node: the root, which is never a token.
  static constexpr uint32_t kNoNode = 0;
  // Whitespace tokens past this many (by rank) have their pairs remembered
  // by the caller instead (no built-in vocabulary has 500).
  static constexpr size_t kMaxWhitespaceTokens = 1024;

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
    trie.LinkAndNumber();
    trie.token_bytes_.clear();
    trie.token_bytes_.shrink_to_fit();
    trie.steps_.shrink_to_fit();
    return trie;
  }

  SymbolTrie(SymbolTrie&&) noexcept = default;
  SymbolTrie& operator=(SymbolTrie&&) noexcept = default;

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

  // Whether both tokens are among the whitespace tokens whose pairs this
  // trie remembers (Compatible is then a table lookup after the first call).
  bool RemembersPair(uint32_t left, uint32_t right) const {
    return infos_[left].whitespace != kNotWhitespace &&
           infos_[right].whitespace != kNotWhitespace;
  }

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
  //
  // For a pair of whitespace tokens (RemembersPair) the answer is kept, and
  // read back by the next call from any thread: it depends only on the two
  // tokens, so threads that race to write it write the same bits.
  template <typename RankOf>
  bool Compatible(uint32_t left, uint32_t right, const char* boundary,
                  RankOf&& rank_of) const {
    if (!RemembersPair(left, right)) {
      return Replay(left, right, boundary, rank_of);
    }
    const size_t pair = size_t{infos_[left].whitespace} * whitespace_count_ +
                        infos_[right].whitespace;
    std::atomic<uint64_t>& word = whitespace_pairs_[pair / 32];
    const unsigned shift = static_cast<unsigned>(pair % 32) * 2;
    const uint64_t known = word.load(std::memory_order_relaxed) >> shift & 3;
    if (known != 0) return known == kCompatibleBits;
    const bool compatible = Replay(left, right, boundary, rank_of);
    word.fetch_or((compatible ? kCompatibleBits : kIncompatibleBits) << shift,
                  std::memory_order_relaxed);
    return compatible;
  }

  // The number of tokens it holds.
  size_t token_count() const { return token_count_; }

  // Heap bytes held.
  size_t MemoryUsage() const {
    return slots_.capacity() * sizeof(Slot) + infos_.capacity() * sizeof(Info) +
           steps_.capacity() * sizeof(Step) +
           WhitespaceWords() * sizeof(std::atomic<uint64_t>);
  }

 private:
  // Compatible, worked out from the two tokens' recorded merges.
  template <typename RankOf>
  bool Replay(uint32_t left, uint32_t right, const char* boundary,
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
  static constexpr uint16_t kNotWhitespace = 0xFFFF;
  static_assert(kMaxWhitespaceTokens < kNotWhitespace);
  // Two bits a whitespace pair: 0 not yet known.
  static constexpr uint64_t kCompatibleBits = 2;
  static constexpr uint64_t kIncompatibleBits = 1;
  struct Info {
    uint32_t steps = 0;  // as a left side at steps, as a right side at
                         // steps + count
    uint32_t count = 0;
    uint32_t shorter = kNoNode;
    uint16_t length = 0;
    uint16_t whitespace = kNotWhitespace;  // index among whitespace tokens
    bool reachable = false;
  };
  struct Pending {
    std::string_view bytes;
    uint32_t rank;
  };
  static constexpr uint32_t kFree = 0xFFFFFFFFu;

  void Assemble(std::vector<Pending>& tokens);
  // Sets each token's length and Shorter link, numbers the whitespace
  // tokens and allocates their pair table.
  void LinkAndNumber();
  size_t WhitespaceWords() const {
    return (whitespace_count_ * whitespace_count_ + 31) / 32;
  }

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
  size_t whitespace_count_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> whitespace_pairs_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_SYMBOL_TRIE_H_
