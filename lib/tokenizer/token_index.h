// The open-addressing indexes a Vocabulary finds tokens by their bytes with:
// one for tokens of 3 or 4 bytes, one for longer tokens (1 and 2 bytes have
// direct tables in Vocabulary).
//
// A slot of the short index is one word: the rank in the low 24 bits
// (Vocabulary::kMaxRank fits) and a 40-bit key above it, the token's length
// and bytes, so finding one never touches the token bytes; and there are few
// enough of them (27k in cl100k_base, 44k in o200k_base) that their index
// stays in cache. Most of the merge loop's lookups are of such strings: a
// pair of one- or two-byte parts. A zero word is an empty slot: every key is
// non-zero.
//
// A slot of the long index is the rank alone (4 bytes, not 8: the long
// tokens are three quarters of a vocabulary, and their index was the largest
// part of its memory). A candidate is checked against the token bytes, which
// a hit has to compare anyway; the control bytes below make a candidate that
// is not the token rare (1 in 128 per occupied slot probed).
//
// Each slot also has a control byte in a separate array: 0 when empty, else
// 0x80 | 7 bits of the hash. The control array is an eighth of the short
// slots' size and stays in cache, so a lookup that misses (most of the merge
// loop's lookups do) usually ends there without loading a slot at all.
//
// The short lookup is inline because the merge loop calls it for nearly
// every pair it considers.

#ifndef CTXKIT_LIB_TOKENIZER_TOKEN_INDEX_H_
#define CTXKIT_LIB_TOKENIZER_TOKEN_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace ctxkit::internal::token_index {

inline constexpr int kRankBits = 24;
inline constexpr uint64_t kRankMask = (uint64_t{1} << kRankBits) - 1;
inline constexpr size_t kMaxInlineToken = 4;
inline constexpr uint32_t kMiss = 0xFFFFFFFFu;

// Control bytes are read kGroup at a time; the control array has kGroup
// bytes past its end that repeat its first ones.
inline constexpr size_t kGroup = 8;

// Linear probing over a power-of-two capacity (load <= 1/2 for the short
// index, <= 3/4 for the long one: see Vocabulary::BuildIndex). Immutable once
// built, so any number of threads may read them.
struct Index {  // the short index
  std::unique_ptr<uint64_t[]> slots;
  std::unique_ptr<uint8_t[]> control;
  uint64_t mask = 0;  // capacity - 1

  size_t MemoryUsage() const { return slots ? (mask + 1) * 9 + kGroup : 0; }
};
struct LongIndex {
  std::unique_ptr<uint32_t[]> ranks;  // meaningful where control is not 0
  std::unique_ptr<uint8_t[]> control;
  uint64_t mask = 0;  // capacity - 1

  size_t MemoryUsage() const { return ranks ? (mask + 1) * 5 + kGroup : 0; }
};

// A full slot's control byte: the hash's top 7 bits (the low bits pick the
// slot, so these are independent of the position).
inline uint8_t ControlByte(uint64_t hash) {
  return static_cast<uint8_t>(0x80 | hash >> 57);
}

// A slot key and the hash that places it.
struct SlotKey {
  uint64_t key;
  uint64_t hash;
};

// The key of 3 or 4 bytes: their length and bytes.
inline SlotKey ShortKey(const char* data, size_t size) {
  // The first two and the last two bytes (overlapping for 3 bytes) identify
  // 3 or 4 bytes of a known size. Two fixed-size loads, no branch on the
  // size (it mispredicts on text like base64) and no variable-size memcpy
  // (a call, and reading its result back stalls on store forwarding).
  uint16_t head;
  uint16_t tail;
  std::memcpy(&head, data, 2);
  std::memcpy(&tail, data + size - 2, 2);
  const uint64_t key =
      uint64_t{size} << 32 | uint64_t{tail} << 16 | uint64_t{head};
  // A 64-bit finalizer (MurmurHash3's fmix64) spreads the few key bits over
  // the whole word more cheaply than hashing the bytes.
  uint64_t h = key;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return {key, h};
}

// The slots of the group at `start` whose control byte is `control`, as the
// high bit of their byte in `candidates`, up to the first empty slot (the
// key cannot lie beyond it); `has_empty` when the group has one. SWAR: a
// byte-wise compare with the fingerprint and with 0 by the classic
// has-zero-byte trick, whose lowest flagged byte is always a true one (a
// higher flag may be false: callers check the slot).
struct GroupMatch {
  uint64_t candidates;
  bool has_empty;
};
inline GroupMatch MatchGroup(const uint8_t* control_bytes, uint64_t start,
                             uint8_t control) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  uint64_t group;
  std::memcpy(&group, control_bytes + start, kGroup);
  const uint64_t diff = group ^ (kOnes * control);
  const uint64_t match = (diff - kOnes) & ~diff & kHighs;
  const uint64_t empty = (group - kOnes) & ~group & kHighs;
  const uint64_t before = empty == 0 ? ~uint64_t{0} : (empty & -empty) - 1;
  return {match & before, empty != 0};
}

// The rank of the 3 or 4 bytes at `data` in the short index, or kMiss.
//
// Whether a string is a token is exactly what the merge loop does not know
// in advance, so a branch on "found" mispredicts on text such as base64.
// This looks at kGroup control bytes at once (MatchGroup) and picks the
// answer with conditional moves. It branches only when the group cannot decide:
// a fingerprint shared by another key (1 in 128), or kGroup occupied slots in
// a row (rare at load <= 1/2), and then probes one slot at a time.
inline uint32_t FindShort(const Index& index, const char* data, size_t size) {
  const SlotKey k = ShortKey(data, size);
  const uint8_t control = ControlByte(k.hash);
  const uint64_t start = k.hash & index.mask;
  const GroupMatch g = MatchGroup(index.control.get(), start, control);
  const uint64_t candidates = g.candidates;
  const int offset = candidates == 0 ? 0 : __builtin_ctzll(candidates) / 8;
  const uint64_t word = index.slots[(start + offset) & index.mask];
  const bool found = candidates != 0 && word >> kRankBits == k.key;
  const bool decided = found || (candidates == 0 && g.has_empty);
  if (__builtin_expect(decided, 1)) {
    return found ? static_cast<uint32_t>(word & kRankMask) : kMiss;
  }
  for (uint64_t i = start;; i = (i + 1) & index.mask) {
    const uint8_t c = index.control[i];
    if (c == 0) return kMiss;
    if (c != control) continue;
    const uint64_t w = index.slots[i];
    if (w >> kRankBits == k.key) return static_cast<uint32_t>(w & kRankMask);
  }
}

}  // namespace ctxkit::internal::token_index

#endif  // CTXKIT_LIB_TOKENIZER_TOKEN_INDEX_H_
