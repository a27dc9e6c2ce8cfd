// A byte-pair-encoding vocabulary: the mergeable tokens of an encoding (byte
// strings) and their ranks, which are also their token ids.
//
// A Vocabulary comes from one of two forms:
//   - the compact binary form that ctxkit builds into the library for its
//     built-in vocabularies (lib/tokenizer/data/*.ctxvocab, see
//     embedded_vocabularies.h), read by FromCompact (FromStaticCompact for
//     the built-in ones, whose token bytes it then uses in place);
//   - the tiktoken text form, one "<base64 of the token bytes> <rank>" line
//     per token, as in OpenAI's *.tiktoken files, read by FromTiktoken.
//
// The compact form also records the encoding's pre-tokenization pattern,
// special tokens and explicit vocabulary size as its source published them;
// the tiktoken form carries none of these, so they are empty for it.
//
// Ranks need not be contiguous: a rank that no token has (the legacy Claude
// vocabulary leaves ranks 0..4 to its special tokens) is "unused".
//
// Thread safety: a Vocabulary is immutable once constructed; any number of
// threads may call its const methods concurrently without synchronization.
// It is move-only because it holds several megabytes: share one by pointer.
// A moved-from Vocabulary is empty: size() is 0 and every lookup misses.

#ifndef CTXKIT_LIB_TOKENIZER_VOCABULARY_H_
#define CTXKIT_LIB_TOKENIZER_VOCABULARY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tokenizer/symbol_trie.h"
#include "lib/tokenizer/token_index.h"

namespace ctxkit::internal {

// A special token as recorded in a compact vocabulary: its text and rank.
struct SpecialToken {
  std::string text;
  uint32_t rank = 0;

  friend bool operator==(const SpecialToken&, const SpecialToken&) = default;
};

class Vocabulary {
 public:
  // No rank of any vocabulary reaches this: it bounds the memory a crafted
  // file can make a loader allocate (a rank table of 4 bytes per rank).
  static constexpr uint32_t kMaxRank = (1u << 24) - 1;

  // Parses the compact binary form (layout documented in vocabulary.cc and in
  // lib/tokenizer/data/generate_vocabularies.mjs, which writes it). Every
  // field is validated, so any input, however truncated or corrupted, yields
  // either a Vocabulary or an error, never undefined behaviour:
  //   INVALID_ARGUMENT  not a compact vocabulary (bad magic) or a format
  //                     version this build does not read;
  //   DATA_LOSS         truncated, checksum mismatch, or inconsistent content
  //                     (bad varint, counts or lengths that do not add up,
  //                     duplicate token bytes, a rank above kMaxRank, ...).
  // `data` is copied; it need not outlive the call.
  static absl::StatusOr<Vocabulary> FromCompact(std::string_view data);

  // FromCompact for data that outlives the Vocabulary, such as the
  // library's embedded vocabularies (embedded_vocabularies.h): the token
  // bytes, most of the data, are used where they are instead of copied, so
  // they cost no heap and their pages, read-only and file-backed, can be
  // shared and reclaimed. Same validation and errors as FromCompact.
  static absl::StatusOr<Vocabulary> FromStaticCompact(std::string_view data);

  // Parses the tiktoken text form: lines "<base64> <rank>" separated by "\n"
  // ("\r\n" is accepted; empty lines are skipped, as tiktoken does). The
  // base64 must be standard, padded and canonical, and decode to at least one
  // byte; the rank is decimal digits, at most kMaxRank. Ranks may come in any
  // order and may leave gaps. Errors are INVALID_ARGUMENT with a message that
  // names the 1-based line number (and, for duplicates, the earlier line):
  // bad base64, missing or non-numeric rank, duplicate token bytes, duplicate
  // rank, or no token at all. `text` is not retained.
  static absl::StatusOr<Vocabulary> FromTiktoken(std::string_view text);

  Vocabulary(Vocabulary&&) noexcept;
  Vocabulary& operator=(Vocabulary&&) noexcept;
  Vocabulary(const Vocabulary&) = delete;
  Vocabulary& operator=(const Vocabulary&) = delete;
  ~Vocabulary();

  // The rank of the token whose bytes are exactly `token_bytes`, or nullopt
  // when no token has them (including the empty string). This is the BPE
  // merge loop's lookup, so it allocates nothing and probes a flat table.
  std::optional<uint32_t> Rank(std::string_view token_bytes) const {
    const uint32_t rank = RankOrNone(token_bytes);
    if (rank == kNoToken) return std::nullopt;
    return rank;
  }

  // No token has this rank; what the lookups below return for a miss.
  static constexpr uint32_t kNoToken = 0xFFFFFFFFu;

  // Rank() without the optional, for the merge loop.
  uint32_t RankOrNone(std::string_view token_bytes) const {
    if (short_ranks_ == nullptr) return kNoToken;
    const auto* u = reinterpret_cast<const unsigned char*>(token_bytes.data());
    switch (token_bytes.size()) {
      case 0:
        return kNoToken;
      case 1:
        return short_ranks_[u[0]];
      case 2:
        return short_ranks_[256 + (u[0] << 8 | u[1])];
      case 3:
      case 4:
        return token_index::FindShort(short_index_, token_bytes.data(),
                                      token_bytes.size());
      default:
        return FindLong(token_bytes.data(), token_bytes.size());
    }
  }

  // The rank of the one-byte token `b`, or kNoToken. Direct table lookups:
  // every merge starts from single bytes and their pairs, and these two
  // tables answer those without hashing.
  uint32_t ByteRank(unsigned char b) const {
    return short_ranks_ ? short_ranks_[b] : kNoToken;
  }

  // The rank of the two-byte token `a` `b`, or kNoToken.
  uint32_t PairRank(unsigned char a, unsigned char b) const {
    return short_ranks_ ? short_ranks_[256 + (a << 8 | b)] : kNoToken;
  }

  // PairRank's table, 65,536 ranks indexed by a << 8 | b, for loops that
  // look up a pair per byte; null only in a moved-from Vocabulary. Valid as
  // long as this Vocabulary lives.
  const uint32_t* PairRanks() const {
    return short_ranks_ ? short_ranks_.get() + 256 : nullptr;
  }

  // The bytes of the token of rank `rank`; empty for an unused rank and for
  // rank >= size(). The view stays valid as long as this Vocabulary lives
  // (a move keeps it valid: the bytes do not move).
  std::string_view Bytes(uint32_t rank) const;

  // One past the highest rank that has a token (0 for no token, which no
  // constructor produces).
  uint32_t size() const { return size_; }

  // The number of tokens, which is size() minus the unused ranks.
  uint32_t token_count() const { return token_count_; }

  // Approximate number of heap bytes this vocabulary holds (the symbol
  // trie included once it is built).
  size_t MemoryUsage() const;

  // The trie of this vocabulary's tokens made only of ASCII bytes that are
  // not letters or digits (symbol_trie.h), built on the first call: only
  // long runs of whitespace or punctuation need it. Thread-safe; the
  // reference stays valid as long as this Vocabulary lives (a moved-from
  // Vocabulary has an empty trie).
  const SymbolTrie& symbol_trie() const;
  // Whether symbol_trie() has been built, without building it: for callers
  // that can do without it and use it only once something has paid for it.
  bool symbol_trie_built() const;

  // A number no other Vocabulary of this process has had (a moved-from one
  // gets a new one), for caches that outlive a single call: keyed by it, an
  // entry can never be taken for one of a later vocabulary at the same
  // address. Never 0.
  uint32_t cache_tag() const { return cache_tag_; }

  // The encoding's pre-tokenization regular expression as published by the
  // vocabulary's source, or empty (always empty after FromTiktoken).
  const std::string& pattern() const { return pattern_; }

  // The source's special tokens in rank order (empty after FromTiktoken).
  // Their ranks are never those of mergeable tokens.
  const std::vector<SpecialToken>& special_tokens() const {
    return special_tokens_;
  }

  // The source's explicit_n_vocab (mergeable plus special tokens), when it
  // gives one. Recorded as published, not checked: the legacy Claude
  // vocabulary states 64739 although it has 65000 ranks.
  std::optional<uint32_t> explicit_n_vocab() const { return explicit_n_vocab_; }

  // The canonical tiktoken text: for each token in rank order, standard
  // padded base64 of its bytes, a space, the decimal rank and "\n". For the
  // OpenAI vocabularies this is byte for byte the published .tiktoken file.
  std::string ToTiktoken() const;

  // The compact binary form of this vocabulary, byte for byte what the
  // generator writes for the same content, so
  // FromCompact(x)->ToCompact() == x for every canonical x.
  std::string ToCompact() const;

 private:
  Vocabulary();

  // FromCompact, with the token bytes copied or (`borrow`) used in place.
  static absl::StatusOr<Vocabulary> ParseCompact(std::string_view data,
                                                 bool borrow);

  // Stores `offsets` (size_ + 1 of them: where each rank's bytes start in
  // blob_, then the end) as block_offsets_ and offsets_in_block_.
  void SetOffsets(const std::vector<uint32_t>& offsets);

  // Where the bytes of `rank` (at most size_) start in blob_.
  uint32_t Offset(uint32_t rank) const {
    return block_offsets_[rank >> block_shift_] + offsets_in_block_[rank];
  }

  // Builds the lookup tables over the tokens in blob_ (Offset). On duplicate
  // token bytes returns the two ranks that share them and leaves the index
  // incomplete; the caller then discards the object.
  std::optional<std::pair<uint32_t, uint32_t>> BuildIndex();

  // The rank of `size` (5 or more) bytes at `data`, or kNoToken.
  uint32_t FindLong(const char* data, size_t size) const;

  // Token bytes of all ranks, concatenated in rank order: owned_blob_, or
  // the caller's data after FromStaticCompact (owned_blob_ then null).
  const char* blob_ = nullptr;
  std::unique_ptr<char[]> owned_blob_;
  size_t blob_size_ = 0;
  // Offset(r)..Offset(r+1) delimit rank r's bytes in blob_, equal for an
  // unused rank. Two bytes a rank rather than four (four were a fifth of a
  // built-in vocabulary's heap): offsets_in_block_ (size_ + 1 entries) counts
  // from the start of the rank's block of 2^block_shift_ ranks, which
  // block_offsets_ holds, and SetOffsets picks the largest block (up to
  // 2^kMaxBlockShift ranks) whose tokens all start within 64 KiB of its
  // first.
  static constexpr uint32_t kMaxBlockShift = 8;
  std::vector<uint32_t> block_offsets_;
  std::vector<uint16_t> offsets_in_block_;
  uint32_t block_shift_ = 0;
  // Lookup by bytes, in three tiers by token length (see vocabulary.cc):
  // direct tables for 1 and 2 bytes, an index of 3- and 4-byte tokens small
  // enough to stay in cache, and an index of the longer ones.
  //
  // Ranks of the one-byte tokens (256 entries) then of the two-byte tokens
  // (65,536 entries, indexed by first byte << 8 | second byte): 257 KiB.
  std::unique_ptr<uint32_t[]> short_ranks_;
  token_index::Index short_index_;     // tokens of 3 or 4 bytes
  token_index::LongIndex long_index_;  // tokens of 5 bytes or more
  uint32_t size_ = 0;
  uint32_t token_count_ = 0;
  uint32_t cache_tag_;
  // symbol_trie(), built once; null in a moved-from Vocabulary.
  struct LazySymbolTrie;
  std::unique_ptr<LazySymbolTrie> symbol_trie_;
  std::string pattern_;
  std::vector<SpecialToken> special_tokens_;
  std::optional<uint32_t> explicit_n_vocab_;
};

// The checksum stored in a compact vocabulary's header, over its payload.
// Exposed so that tests can build structurally corrupt data that still has a
// valid checksum, and so that the generator's copy can be checked against it.
uint32_t CompactChecksum(std::string_view payload);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_VOCABULARY_H_
