// The open-addressing index a Vocabulary finds tokens by their bytes with:
// one for tokens of 3 or 4 bytes, one for longer tokens (1 and 2 bytes have
// direct tables in Vocabulary).
//
// Each slot is one word: the rank in the low 24 bits (Vocabulary::kMaxRank
// fits) and a 40-bit key above it. A token of 3 or 4 bytes is its own key
// (its length and bytes), so finding one never touches the token bytes; and
// there are few enough of them (27k in cl100k_base, 44k in o200k_base) that
// their index stays in cache. Most of the merge loop's lookups are of such
// strings: a pair of one- or two-byte parts. A longer token's key is 39 bits
// of its hash with the top bit set, which the Vocabulary checks against the
// token bytes on a match. A zero word is an empty slot: every key is
// non-zero.
//
// Each slot also has a control byte in a separate array: 0 when empty, else
// 0x80 | 7 bits of the hash. The control array is an eighth of the slots'
// size and stays in cache, so a lookup that misses (most of the merge loop's
// lookups do) usually ends there without loading a slot at all.
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
inline constexpr uint64_t kHashedKeyFlag = uint64_t{1} << 39;
inline constexpr uint32_t kMiss = 0xFFFFFFFFu;

// Linear probing over a power-of-two capacity, load <= 1/2. Immutable once
// built, so any number of threads may read it.
struct Index {
  std::unique_ptr<uint64_t[]> slots;
  std::unique_ptr<uint8_t[]> control;
  uint64_t mask = 0;  // capacity - 1

  size_t MemoryUsage() const { return slots ? (mask + 1) * 9 : 0; }
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

// The key of 3 or 4 bytes: the bytes and their length.
inline SlotKey ShortKey(const char* data, size_t size) {
  // Fixed-size loads: a memcpy of a variable size is a call, and reading its
  // result back stalls on store forwarding.
  const auto* u = reinterpret_cast<const unsigned char*>(data);
  uint32_t bytes;
  if (size == 4) {
    std::memcpy(&bytes, data, 4);
  } else {
    bytes = uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16;
  }
  const uint64_t key = uint64_t{size} << 32 | bytes;
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

// The rank of the 3 or 4 bytes at `data` in the short index, or kMiss.
inline uint32_t FindShort(const Index& index, const char* data, size_t size) {
  const SlotKey k = ShortKey(data, size);
  const uint8_t control = ControlByte(k.hash);
  for (uint64_t i = k.hash & index.mask;; i = (i + 1) & index.mask) {
    const uint8_t c = index.control[i];
    if (c == 0) return kMiss;
    if (c != control) continue;
    const uint64_t word = index.slots[i];
    if (word >> kRankBits == k.key) return static_cast<uint32_t>(word & kRankMask);
  }
}

}  // namespace ctxkit::internal::token_index

#endif  // CTXKIT_LIB_TOKENIZER_TOKEN_INDEX_H_
