// The tokens of a vocabulary made only of whitespace (space, tab, line
// feed, carriage return, vertical tab, form feed), as a small dense
// automaton, for the long-piece merger (bpe.cc) on pieces made only of
// whitespace: random mixes of blank lines, indentation and CRLF.
//
// SymbolTrie answers the same questions for every symbol token, a walk from
// each position where a token may start, with two dependent loads a byte and
// a mispredicted exit at every walk's end. Whitespace tokens number about
// 400 in cl100k_base and o200k_base, so here their prefixes are an
// Aho-Corasick automaton of a few hundred states of 16 bytes each: one pass
// over a piece, one table load a byte and no branch on the text, gives the
// longest token ending at every position, and the merger searches from the
// right (bpe.cc).
//
// It also remembers which pairs of its tokens are compatible (the question
// of SymbolTrie::Compatible), in one table for every thread that reads it:
// random whitespace checks some 40,000 distinct pairs again and again, and
// a direct table answers each in one load, where the thread's hashed pair
// memo missed and replayed.

#ifndef CTXKIT_LIB_TOKENIZER_WHITESPACE_TRIE_H_
#define CTXKIT_LIB_TOKENIZER_WHITESPACE_TRIE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace ctxkit::internal {

class WhitespaceTrie {
 public:
  // No state: the root, which is never a token.
  static constexpr uint32_t kNoNode = 0;
  // Past this many whitespace tokens (no built-in vocabulary has 500), or
  // 65,535 states, the automaton is left empty (usable() is false) and
  // callers use SymbolTrie.
  static constexpr size_t kMaxTokens = 1024;

  WhitespaceTrie() = default;
  WhitespaceTrie(WhitespaceTrie&&) noexcept = default;
  WhitespaceTrie& operator=(WhitespaceTrie&&) noexcept = default;

  // Builds it from a trie whose root is node 0 and whose paths are at most
  // 255 bytes long (SymbolTrie): `child(node, byte)` gives a node's child
  // by a byte (0 for none), `rank(node)` its token (SymbolTrie::kNoToken
  // for none) and `reachable(node)` whether that token merges into itself
  // alone.
  template <typename Child, typename Rank, typename Reachable>
  static WhitespaceTrie Build(Child&& child, Rank&& rank,
                              Reachable&& reachable) {
    WhitespaceTrie trie;
    // The trie's whitespace paths, breadth first, so that a state's parent
    // and its failure state come before it.
    std::vector<uint32_t> nodes = {0};
    trie.next_.assign(kCodes, 0);
    std::vector<bool> is_child(kCodes, false);
    for (size_t s = 0; s < nodes.size(); ++s) {
      for (unsigned code = 0; code < kWhitespace.size(); ++code) {
        const uint32_t c =
            child(nodes[s], static_cast<unsigned char>(kWhitespace[code]));
        if (c == 0) continue;
        if (nodes.size() >= kNoState) return WhitespaceTrie();
        trie.next_[s * kCodes + code] = static_cast<uint16_t>(nodes.size());
        is_child[s * kCodes + code] = true;
        nodes.push_back(c);
        trie.next_.resize(nodes.size() * kCodes, 0);
        is_child.resize(nodes.size() * kCodes, false);
      }
    }
    trie.states_.resize(nodes.size());
    trie.trie_nodes_ = nodes;
    // Aho-Corasick: fail[s] is the state of the longest proper suffix of
    // s's bytes that is a state; a missing transition is the failure
    // state's, so the scan takes one transition a byte.
    std::vector<uint16_t> fail(nodes.size(), 0);
    trie.ending_.assign(nodes.size(), 0);
    size_t tokens = 0;
    for (size_t s = 0; s < nodes.size(); ++s) {
      State& state = trie.states_[s];
      if (s != 0) {
        state.rank = rank(nodes[s]);
        trie.ending_[s] = trie.ending_[fail[s]];
        if (state.rank != kNoRank) {
          if (tokens == kMaxTokens) return WhitespaceTrie();
          state.token = static_cast<uint16_t>(tokens++);
          state.reachable = reachable(nodes[s]);
          state.shorter = trie.ending_[fail[s]];
          trie.ending_[s] = static_cast<uint16_t>(s);
        }
      }
      for (unsigned code = 0; code < kWhitespace.size(); ++code) {
        uint16_t& to = trie.next_[s * kCodes + code];
        const uint16_t through_fail =
            s == 0 ? 0 : trie.next_[fail[s] * kCodes + code];
        if (is_child[s * kCodes + code]) {
          fail[to] = through_fail;
          trie.states_[to].length = static_cast<uint8_t>(state.length + 1);
        } else {
          to = through_fail;
        }
      }
    }
    trie.tokens_ = tokens;
    for (int b = 0; b < 256; ++b) trie.code_[b] = kNotWhitespace;
    for (unsigned code = 0; code < kWhitespace.size(); ++code) {
      trie.code_[static_cast<unsigned char>(kWhitespace[code])] =
          static_cast<uint8_t>(code);
    }
    // Value-initialized: every pair starts unknown.
    trie.pairs_ = std::make_unique<std::atomic<uint64_t>[]>(trie.PairWords());
    return trie;
  }

  // Whether it holds the whitespace tokens (see kMaxTokens).
  bool usable() const { return tokens_ != 0; }

  // Whether every byte of `piece` is whitespace.
  static bool Applies(std::string_view piece) {
    // Tab, line feed, vertical tab, form feed and carriage return are 9-13.
    unsigned char other = 0;
    for (const char c : piece) {
      const auto b = static_cast<unsigned char>(c);
      other |= static_cast<unsigned char>(b != ' ' && b - 9u > 4u);
    }
    return other == 0;
  }

  // For each i in [0, size], writes to ending[i] the state of the longest
  // token that ends where text[i] begins (a suffix of text[0, i)), or
  // kNoNode. Precondition: Applies(text) and usable(). One pass with one
  // table load a byte and no branch that depends on the text.
  void Scan(const unsigned char* text, size_t size, uint16_t* ending) const {
    const uint16_t* next = next_.data();
    const uint16_t* longest = ending_.data();
    uint32_t s = 0;
    ending[0] = kNoNode;
    for (size_t i = 0; i < size; ++i) {
      s = next[s * kCodes + code_[text[i]]];
      ending[i + 1] = longest[s];
    }
  }

  // The state of the longest proper suffix of token `state` that is a
  // token, or kNoNode: the next candidate ending at the same position.
  uint32_t Shorter(uint32_t state) const { return states_[state].shorter; }

  // The length in bytes of token `state`.
  size_t Length(uint32_t state) const { return states_[state].length; }

  // The token (rank) of `state`.
  uint32_t Rank(uint32_t state) const { return states_[state].rank; }

  // Whether the token of `state` merges into itself alone.
  bool Reachable(uint32_t state) const { return states_[state].reachable; }

  // The node of `state` in the trie it was built from.
  uint32_t TrieNode(uint32_t state) const { return trie_nodes_[state]; }

  // Whether tokens `left` then `right` are compatible: the remembered
  // answer, else `work_out()` (SymbolTrie::Compatible on their trie nodes),
  // remembered for the next call from any thread. The answer depends only
  // on the two tokens, so threads that race to write it write the same
  // bits (relaxed atomics: nothing else is published through them).
  template <typename WorkOut>
  bool Compatible(uint32_t left, uint32_t right, WorkOut&& work_out) const {
    const size_t pair =
        size_t{states_[left].token} * tokens_ + states_[right].token;
    std::atomic<uint64_t>& word = pairs_[pair / 32];
    const unsigned shift = static_cast<unsigned>(pair % 32) * 2;
    const uint64_t known = word.load(std::memory_order_relaxed) >> shift & 3;
    if (known != 0) return known == kCompatibleBits;
    const bool compatible = work_out();
    word.fetch_or((compatible ? kCompatibleBits : kIncompatibleBits) << shift,
                  std::memory_order_relaxed);
    return compatible;
  }

  // Heap bytes held.
  size_t MemoryUsage() const {
    return next_.capacity() * sizeof(uint16_t) +
           ending_.capacity() * sizeof(uint16_t) +
           states_.capacity() * sizeof(State) +
           trie_nodes_.capacity() * sizeof(uint32_t) +
           (pairs_ ? PairWords() * sizeof(std::atomic<uint64_t>) : 0);
  }

 private:
  static constexpr std::string_view kWhitespace = " \t\n\r\v\f";
  // Transitions a state: one per whitespace byte, then kNotWhitespace's
  // (to the root; never taken on a piece that Applies).
  static constexpr size_t kCodes = 8;
  static constexpr uint8_t kNotWhitespace = 6;
  static constexpr size_t kNoState = 0xFFFF;
  static constexpr uint32_t kNoRank = 0xFFFFFFFFu;
  // Two bits a pair: 0 not yet known.
  static constexpr uint64_t kCompatibleBits = 2;
  static constexpr uint64_t kIncompatibleBits = 1;

  struct State {
    uint32_t rank = kNoRank;
    uint16_t shorter = 0;
    uint16_t token = 0;  // index among the tokens, for the pair table
    uint8_t length = 0;
    bool reachable = false;
  };

  size_t PairWords() const { return (tokens_ * tokens_ + 31) / 32; }

  std::vector<uint16_t> next_;    // next_[state * kCodes + code]
  std::vector<uint16_t> ending_;  // the longest token that is a suffix
  std::vector<State> states_;
  std::vector<uint32_t> trie_nodes_;
  size_t tokens_ = 0;
  uint8_t code_[256] = {};
  std::unique_ptr<std::atomic<uint64_t>[]> pairs_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_WHITESPACE_TRIE_H_
