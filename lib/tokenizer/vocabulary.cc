#include "lib/tokenizer/vocabulary.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "lib/json/utf8.h"

// Inlined so that the hash of a short token (most lookups are 2 to 16 bytes)
// costs no call into the shared library.
#define XXH_INLINE_ALL
#include <xxhash.h>

// The compact form, version 1. Integers in the header are little-endian u32;
// "varint" is unsigned LEB128, minimal, at most 5 bytes.
//   header (kHeaderSize bytes): "CTXVOCAB", version, payload size, checksum
//     of the payload (CompactChecksum)
//   payload:
//     varint token count
//     varint explicit_n_vocab + 1 (0: none)
//     varint pattern length, pattern bytes (UTF-8)
//     varint special count; per special, in strictly increasing rank order:
//       varint text length (>= 1), text bytes (UTF-8), varint rank
//     varint run count; per run of consecutive used ranks, in order:
//       varint gap from the end of the previous run (the first run's from 0;
//       >= 1 for later runs, which would otherwise be one run), varint count
//       (>= 1)
//     varint byte length (>= 1) of each token, in rank order
//     the token bytes, concatenated in rank order, filling the payload

namespace ctxkit::internal {

namespace {

constexpr std::string_view kMagic = "CTXVOCAB";
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 20;
using token_index::ControlByte;
using token_index::kMaxInlineToken;
using token_index::kRankBits;
using token_index::kRankMask;
using token_index::ShortKey;
using token_index::SlotKey;
static_assert(Vocabulary::kMaxRank <= kRankMask);

// For 5 bytes or more; its low bits pick the slot, its top 7 are the
// control byte's.
inline uint64_t LongHash(const char* data, size_t size) {
  return XXH3_64bits(data, size);
}

// memcmp(a, b, size) == 0 for the long index's candidates (size >= 5):
// most are under 17 bytes, and two overlapping loads of each compare them
// without a call to the library's memcmp for a size known only at run time
// (on base64, whose merges look up many 5- to 8-byte strings, Encode with
// o200k_base took about 3% less time).
inline bool SameBytes(const char* a, const char* b, size_t size) {
  if (size > 16) return std::memcmp(a, b, size) == 0;
  if (size >= 8) {
    uint64_t a0, a1, b0, b1;
    std::memcpy(&a0, a, 8);
    std::memcpy(&b0, b, 8);
    std::memcpy(&a1, a + size - 8, 8);
    std::memcpy(&b1, b + size - 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  uint32_t a0, a1, b0, b1;  // 4 <= size < 8
  std::memcpy(&a0, a, 4);
  std::memcpy(&b0, b, 4);
  std::memcpy(&a1, a + size - 4, 4);
  std::memcpy(&b1, b + size - 4, 4);
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

uint32_t LoadLe32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | (static_cast<uint32_t>(u[1]) << 8) |
         (static_cast<uint32_t>(u[2]) << 16) |
         (static_cast<uint32_t>(u[3]) << 24);
}

void AppendLe32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

void AppendVarint(std::string& out, uint32_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Bounds-checked reading of the compact payload. Every failure becomes
// DATA_LOSS naming what was being read and where.
class PayloadReader {
 public:
  explicit PayloadReader(std::string_view payload) : payload_(payload) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return payload_.size() - pos_; }

  absl::Status Corrupt(std::string_view what) const {
    return absl::DataLossError(absl::StrFormat(
        "compact vocabulary is corrupt: %s (payload offset %d of %d)", what,
        pos_, payload_.size()));
  }

  absl::Status Varint(std::string_view what, uint32_t* out) {
    uint32_t value = 0;
    for (int i = 0; i < 5; ++i) {
      if (pos_ >= payload_.size()) {
        return Corrupt(absl::StrFormat("%s: varint runs past the end", what));
      }
      const auto byte = static_cast<unsigned char>(payload_[pos_++]);
      if (i == 4 && byte > 0x0F) {
        return Corrupt(absl::StrFormat("%s: varint exceeds 32 bits", what));
      }
      value |= static_cast<uint32_t>(byte & 0x7F) << (7 * i);
      if ((byte & 0x80) == 0) {
        if (byte == 0 && i > 0) {
          return Corrupt(absl::StrFormat("%s: varint is not minimal", what));
        }
        *out = value;
        return absl::OkStatus();
      }
    }
    return Corrupt(absl::StrFormat("%s: varint longer than 5 bytes", what));
  }

  absl::Status Bytes(std::string_view what, uint32_t size,
                     std::string_view* out) {
    if (size > remaining()) {
      return Corrupt(
          absl::StrFormat("%s: %d bytes run past the end", what, size));
    }
    *out = payload_.substr(pos_, size);
    pos_ += size;
    return absl::OkStatus();
  }

 private:
  std::string_view payload_;
  size_t pos_ = 0;
};

// Decodes strict, padded, canonical standard base64 (non-zero padding bits
// would give two spellings of one token). Returns false on anything else.
bool DecodeBase64(std::string_view in, std::string& out) {
  static constexpr std::array<int8_t, 256> kValue = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 64; ++i) {
      t[static_cast<unsigned char>(kBase64Alphabet[i])] =
          static_cast<int8_t>(i);
    }
    return t;
  }();
  if (in.empty() || in.size() % 4 != 0) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = in[i + j];
      if (c == '=' && last && j >= 2) {
        v[j] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;  // data after padding
      v[j] = kValue[static_cast<unsigned char>(c)];
      if (v[j] < 0) return false;
    }
    const uint32_t n = (static_cast<uint32_t>(v[0]) << 18) |
                       (static_cast<uint32_t>(v[1]) << 12) |
                       (static_cast<uint32_t>(v[2]) << 6) |
                       static_cast<uint32_t>(v[3]);
    if (pad == 2 && (n & 0xFFFF) != 0) return false;
    if (pad == 1 && (n & 0xFF) != 0) return false;
    out.push_back(static_cast<char>(n >> 16));
    if (pad < 2) out.push_back(static_cast<char>(n >> 8));
    if (pad < 1) out.push_back(static_cast<char>(n));
  }
  return true;
}

void AppendBase64(std::string& out, std::string_view in) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t n = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    out.push_back(kBase64Alphabet[n >> 18]);
    out.push_back(kBase64Alphabet[(n >> 12) & 63]);
    out.push_back(kBase64Alphabet[(n >> 6) & 63]);
    out.push_back(kBase64Alphabet[n & 63]);
  }
  if (i + 1 == in.size()) {
    const uint32_t n = p[i] << 16;
    out.push_back(kBase64Alphabet[n >> 18]);
    out.push_back(kBase64Alphabet[(n >> 12) & 63]);
    out.append("==");
  } else if (i + 2 == in.size()) {
    const uint32_t n = (p[i] << 16) | (p[i + 1] << 8);
    out.push_back(kBase64Alphabet[n >> 18]);
    out.push_back(kBase64Alphabet[(n >> 12) & 63]);
    out.push_back(kBase64Alphabet[(n >> 6) & 63]);
    out.push_back('=');
  }
}

// Parses a decimal rank: digits only, no sign, at most kMaxRank.
bool ParseRank(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > Vocabulary::kMaxRank) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// A printable excerpt of untrusted input for an error message.
std::string Excerpt(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out;
  for (const char c : s.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F && c != '"' && c != '\\') {
      out.push_back(c);
    } else {
      out += absl::StrFormat("\\x%02X", u);
    }
  }
  if (s.size() > kMax) out += "...";
  return absl::StrFormat("\"%s\"", out);
}

}  // namespace

uint32_t CompactChecksum(std::string_view payload) {
  // Each step (xor a word, rotate, multiply by an odd constant) is a
  // bijection of the state, so changing any one word always changes the
  // result; the final mix only spreads the bits.
  uint32_t h = 0x811C9DC5u ^ static_cast<uint32_t>(payload.size());
  const size_t whole = payload.size() / 4 * 4;
  auto step = [&h](uint32_t w) {
    const uint32_t x = h ^ w;
    h = ((x << 13) | (x >> 19)) * 0x9E3779B1u;
  };
  for (size_t i = 0; i < whole; i += 4) step(LoadLe32(payload.data() + i));
  if (whole < payload.size()) {
    char tail[4] = {0, 0, 0, 0};
    std::memcpy(tail, payload.data() + whole, payload.size() - whole);
    step(LoadLe32(tail));
  }
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  return h;
}

namespace {

uint32_t NewCacheTag() {
  // Wrapping around would take four billion vocabularies; 0 stays free for
  // "empty" in the caches.
  static std::atomic<uint32_t> next{1};
  uint32_t tag = next.fetch_add(1, std::memory_order_relaxed);
  if (tag == 0) tag = next.fetch_add(1, std::memory_order_relaxed);
  return tag;
}

}  // namespace

struct Vocabulary::LazySymbolTrie {
  std::once_flag once;
  SymbolTrie trie;
  std::atomic<bool> built{false};  // for MemoryUsage, which does not build
};

Vocabulary::Vocabulary()
    : cache_tag_(NewCacheTag()),
      symbol_trie_(std::make_unique<LazySymbolTrie>()) {}
// Moves leave the source empty (size() == 0, every lookup misses) rather
// than with counts that no longer match its moved-away arrays.
Vocabulary::Vocabulary(Vocabulary&& other) noexcept
    : cache_tag_(NewCacheTag()) {
  *this = std::move(other);
}

Vocabulary& Vocabulary::operator=(Vocabulary&& other) noexcept {
  if (this == &other) return *this;
  blob_ = std::exchange(other.blob_, nullptr);
  owned_blob_ = std::move(other.owned_blob_);
  blob_size_ = std::exchange(other.blob_size_, 0);
  block_offsets_ = std::exchange(other.block_offsets_, {});
  offsets_in_block_ = std::exchange(other.offsets_in_block_, {});
  block_shift_ = std::exchange(other.block_shift_, 0);
  short_ranks_ = std::move(other.short_ranks_);
  short_index_ = std::exchange(other.short_index_, {});
  long_index_ = std::exchange(other.long_index_, {});
  size_ = std::exchange(other.size_, 0);
  token_count_ = std::exchange(other.token_count_, 0);
  pattern_ = std::exchange(other.pattern_, {});
  special_tokens_ = std::exchange(other.special_tokens_, {});
  explicit_n_vocab_ = std::exchange(other.explicit_n_vocab_, std::nullopt);
  // The tag goes with the tokens; the emptied source must not share it.
  cache_tag_ = std::exchange(other.cache_tag_, NewCacheTag());
  symbol_trie_ = std::move(other.symbol_trie_);
  return *this;
}
Vocabulary::~Vocabulary() = default;

const SymbolTrie& Vocabulary::symbol_trie() const {
  static const SymbolTrie* const kEmpty = new SymbolTrie();
  if (symbol_trie_ == nullptr) return *kEmpty;
  std::call_once(symbol_trie_->once, [this] {
    symbol_trie_->trie = SymbolTrie::Build(
        size_, [this](std::string_view bytes) { return RankOrNone(bytes); },
        [this](uint32_t rank) { return Bytes(rank); });
    symbol_trie_->built.store(true, std::memory_order_release);
  });
  return symbol_trie_->trie;
}

bool Vocabulary::symbol_trie_built() const {
  return symbol_trie_ != nullptr &&
         symbol_trie_->built.load(std::memory_order_acquire);
}

std::optional<std::pair<uint32_t, uint32_t>> Vocabulary::BuildIndex() {
  constexpr size_t kShortRanks = 256 + 65536;
  short_ranks_ = std::make_unique_for_overwrite<uint32_t[]>(kShortRanks);
  std::fill_n(short_ranks_.get(), kShortRanks, kNoToken);
  uint64_t short_count = 0;
  uint64_t long_count = 0;
  for (uint32_t rank = 0; rank < size_; ++rank) {
    const uint32_t length = Offset(rank + 1) - Offset(rank);
    if (length >= 3) ++(length <= kMaxInlineToken ? short_count : long_count);
  }
  // Load at most 1/2 for the short index, whose group probe wants an empty
  // slot among any 8; at most 3/4 for the long one, where the control bytes
  // make a long probe cheap and the slots are most of the memory.
  auto capacity_for = [](uint64_t count, uint64_t load_num, uint64_t load_den) {
    uint64_t capacity = 16;
    while (capacity * load_num < count * load_den) capacity *= 2;
    return capacity;
  };
  // kGroup extra control bytes mirror the first ones, so a group load at the
  // last slots needs no wrap-around (see token_index.h).
  const uint64_t short_capacity = capacity_for(short_count, 1, 2);
  short_index_.slots = std::make_unique<uint64_t[]>(short_capacity);  // empty
  short_index_.control =
      std::make_unique<uint8_t[]>(short_capacity + token_index::kGroup);
  short_index_.mask = short_capacity - 1;
  const uint64_t long_capacity = capacity_for(long_count, 3, 4);
  // Only the control bytes say which slots are empty.
  long_index_.ranks = std::make_unique_for_overwrite<uint32_t[]>(long_capacity);
  long_index_.control =
      std::make_unique<uint8_t[]>(long_capacity + token_index::kGroup);
  long_index_.mask = long_capacity - 1;

  const char* blob = blob_;
  for (uint32_t rank = 0; rank < size_; ++rank) {
    const uint32_t begin = Offset(rank);
    const uint32_t length = Offset(rank + 1) - begin;
    if (length == 0) continue;
    const auto* bytes = reinterpret_cast<const unsigned char*>(blob + begin);
    if (length <= 2) {
      uint32_t& entry =
          short_ranks_[length == 1 ? bytes[0]
                                   : 256 + (bytes[0] << 8 | bytes[1])];
      if (entry != kNoToken) return std::make_pair(entry, rank);
      entry = rank;
      continue;
    }
    if (length <= kMaxInlineToken) {
      token_index::Index& index = short_index_;
      const SlotKey k = ShortKey(blob + begin, length);
      for (uint64_t i = k.hash & index.mask;; i = (i + 1) & index.mask) {
        uint64_t& slot = index.slots[i];
        if (slot == 0) {
          slot = k.key << kRankBits | rank;
          index.control[i] = ControlByte(k.hash);
          break;
        }
        if (slot >> kRankBits == k.key) {
          return std::make_pair(static_cast<uint32_t>(slot & kRankMask), rank);
        }
      }
      continue;
    }
    token_index::LongIndex& index = long_index_;
    const uint64_t hash = LongHash(blob + begin, length);
    const uint8_t control = ControlByte(hash);
    for (uint64_t i = hash & index.mask;; i = (i + 1) & index.mask) {
      if (index.control[i] == 0) {
        index.ranks[i] = rank;
        index.control[i] = control;
        break;
      }
      if (index.control[i] != control) continue;
      const uint32_t other = index.ranks[i];
      const uint32_t other_begin = Offset(other);
      if (Offset(other + 1) - other_begin == length &&
          std::memcmp(blob + other_begin, blob + begin, length) == 0) {
        return std::make_pair(other, rank);
      }
    }
  }
  std::copy_n(short_index_.control.get(), token_index::kGroup,
              short_index_.control.get() + short_index_.mask + 1);
  std::copy_n(long_index_.control.get(), token_index::kGroup,
              long_index_.control.get() + long_index_.mask + 1);
  return std::nullopt;
}

uint32_t Vocabulary::FindLong(const char* data, size_t size) const {
  const uint64_t hash = LongHash(data, size);
  const uint8_t control = ControlByte(hash);
  const token_index::LongIndex& index = long_index_;
  // kGroup control bytes at a time (see token_index::FindShort): at the long
  // index's higher load a miss still ends after one group load, usually.
  for (uint64_t start = hash & index.mask;;
       start = (start + token_index::kGroup) & index.mask) {
    const token_index::GroupMatch g =
        token_index::MatchGroup(index.control.get(), start, control);
    for (uint64_t c = g.candidates; c != 0; c &= c - 1) {
      // A fingerprint match, or a false flag of MatchGroup's above the first
      // true one: either way the token's bytes decide.
      const uint64_t slot = (start + __builtin_ctzll(c) / 8) & index.mask;
      if (index.control[slot] != control) continue;
      const uint32_t rank = index.ranks[slot];
      const uint32_t begin = Offset(rank);
      if (Offset(rank + 1) - begin == size &&
          SameBytes(blob_ + begin, data, size)) {
        return rank;
      }
    }
    if (g.has_empty) return kNoToken;
  }
}

void Vocabulary::SetOffsets(const std::vector<uint32_t>& offsets) {
  // The largest block that fits: 256 ranks for the built-in vocabularies,
  // whose blocks of 256 tokens hold at most 4 KB. A block of one rank always
  // fits, so a tiktoken file, however long its tokens, has a layout.
  const size_t count = offsets.size();
  uint32_t shift = kMaxBlockShift;
  for (;; --shift) {
    bool fits = true;
    for (size_t r = 0; r < count && fits; ++r) {
      fits = offsets[r] - offsets[r >> shift << shift] <= 0xFFFF;
    }
    if (fits || shift == 0) break;
  }
  block_shift_ = shift;
  block_offsets_.resize(((count - 1) >> shift) + 1);
  offsets_in_block_.resize(count);
  for (size_t r = 0; r < count; ++r) {
    const uint32_t block_start = offsets[r >> shift << shift];
    block_offsets_[r >> shift] = block_start;
    offsets_in_block_[r] = static_cast<uint16_t>(offsets[r] - block_start);
  }
}

std::string_view Vocabulary::Bytes(uint32_t rank) const {
  if (rank >= size_) return {};
  const uint32_t begin = Offset(rank);
  return std::string_view(blob_ + begin, Offset(rank + 1) - begin);
}

size_t Vocabulary::MemoryUsage() const {
  size_t total = sizeof(*this) + (owned_blob_ ? blob_size_ : 0) +
                 block_offsets_.capacity() * sizeof(uint32_t) +
                 offsets_in_block_.capacity() * sizeof(uint16_t) +
                 (short_ranks_ ? (256 + 65536) * sizeof(uint32_t) : 0) +
                 short_index_.MemoryUsage() + long_index_.MemoryUsage() +
                 pattern_.capacity() +
                 special_tokens_.capacity() * sizeof(SpecialToken);
  for (const SpecialToken& s : special_tokens_) total += s.text.capacity();
  if (symbol_trie_ != nullptr) total += sizeof(LazySymbolTrie);
  if (symbol_trie_built()) total += symbol_trie_->trie.MemoryUsage();
  return total;
}

absl::StatusOr<Vocabulary> Vocabulary::FromCompact(std::string_view data) {
  return ParseCompact(data, /*borrow=*/false);
}

absl::StatusOr<Vocabulary> Vocabulary::FromStaticCompact(
    std::string_view data) {
  return ParseCompact(data, /*borrow=*/true);
}

absl::StatusOr<Vocabulary> Vocabulary::ParseCompact(std::string_view data,
                                                    bool borrow) {
  if (data.empty()) {
    return absl::InvalidArgumentError("compact vocabulary is empty");
  }
  if (data.substr(0, kMagic.size()) !=
      kMagic.substr(0, std::min(data.size(), kMagic.size()))) {
    return absl::InvalidArgumentError(
        "not a compact vocabulary: the data does not start with \"CTXVOCAB\"");
  }
  if (data.size() < kHeaderSize) {
    return absl::DataLossError(absl::StrFormat(
        "compact vocabulary is truncated: %d bytes, shorter than its %d-byte "
        "header",
        data.size(), kHeaderSize));
  }
  const uint32_t version = LoadLe32(data.data() + 8);
  if (version != kFormatVersion) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compact vocabulary has format version %d; this build reads only "
        "version %d",
        version, kFormatVersion));
  }
  const uint32_t payload_size = LoadLe32(data.data() + 12);
  const std::string_view payload = data.substr(kHeaderSize);
  if (payload.size() != payload_size) {
    return absl::DataLossError(absl::StrFormat(
        "compact vocabulary is %s: its header announces %d payload bytes, "
        "%d are present",
        payload.size() < payload_size ? "truncated" : "corrupt", payload_size,
        payload.size()));
  }
  const uint32_t checksum = CompactChecksum(payload);
  if (checksum != LoadLe32(data.data() + 16)) {
    return absl::DataLossError(absl::StrFormat(
        "compact vocabulary is corrupt: payload checksum 0x%08X, header says "
        "0x%08X",
        checksum, LoadLe32(data.data() + 16)));
  }

  Vocabulary v;
  PayloadReader in(payload);
  uint32_t token_count = 0;
  if (auto s = in.Varint("token count", &token_count); !s.ok()) return s;
  // Each token takes at least a length byte and one byte of data, which also
  // bounds what a crafted count can make us allocate.
  if (token_count == 0 || token_count > kMaxRank + 1 ||
      token_count > in.remaining() / 2) {
    return in.Corrupt(
        absl::StrFormat("impossible token count %d", token_count));
  }
  uint32_t n_vocab_plus_one = 0;
  if (auto s = in.Varint("explicit_n_vocab", &n_vocab_plus_one); !s.ok()) {
    return s;
  }
  if (n_vocab_plus_one != 0) v.explicit_n_vocab_ = n_vocab_plus_one - 1;

  uint32_t length = 0;
  std::string_view text;
  if (auto s = in.Varint("pattern length", &length); !s.ok()) return s;
  if (auto s = in.Bytes("pattern", length, &text); !s.ok()) return s;
  if (!IsValidUtf8(text)) return in.Corrupt("pattern is not valid UTF-8");
  v.pattern_ = std::string(text);

  uint32_t special_count = 0;
  if (auto s = in.Varint("special token count", &special_count); !s.ok()) {
    return s;
  }
  if (special_count > in.remaining() / 2) {
    return in.Corrupt(
        absl::StrFormat("impossible special token count %d", special_count));
  }
  v.special_tokens_.reserve(special_count);
  for (uint32_t i = 0; i < special_count; ++i) {
    SpecialToken special;
    if (auto s = in.Varint("special token length", &length); !s.ok()) return s;
    if (length == 0) return in.Corrupt("empty special token");
    if (auto s = in.Bytes("special token", length, &text); !s.ok()) return s;
    if (!IsValidUtf8(text)) return in.Corrupt("special token is not UTF-8");
    special.text = std::string(text);
    if (auto s = in.Varint("special token rank", &special.rank); !s.ok()) {
      return s;
    }
    if (special.rank > kMaxRank) {
      return in.Corrupt(absl::StrFormat("special token rank %d exceeds %d",
                                        special.rank, kMaxRank));
    }
    if (i > 0 && special.rank <= v.special_tokens_.back().rank) {
      return in.Corrupt("special token ranks are not strictly increasing");
    }
    for (const SpecialToken& earlier : v.special_tokens_) {
      if (earlier.text == special.text) {
        return in.Corrupt(absl::StrFormat("special token %s appears twice",
                                          Excerpt(special.text)));
      }
    }
    v.special_tokens_.push_back(std::move(special));
  }

  uint32_t run_count = 0;
  if (auto s = in.Varint("run count", &run_count); !s.ok()) return s;
  if (run_count == 0 || run_count > token_count) {
    return in.Corrupt(absl::StrFormat("impossible run count %d", run_count));
  }
  std::vector<std::pair<uint32_t, uint32_t>> runs;  // first rank, count
  runs.reserve(run_count);
  uint64_t end = 0;
  uint64_t counted = 0;
  for (uint32_t i = 0; i < run_count; ++i) {
    uint32_t gap = 0;
    uint32_t count = 0;
    if (auto s = in.Varint("run gap", &gap); !s.ok()) return s;
    if (auto s = in.Varint("run length", &count); !s.ok()) return s;
    if (count == 0 || (i > 0 && gap == 0)) {
      return in.Corrupt("empty or unmerged run of ranks");
    }
    const uint64_t first = end + gap;
    end = first + count;
    counted += count;
    if (end > static_cast<uint64_t>(kMaxRank) + 1) {
      return in.Corrupt(absl::StrFormat("ranks exceed %d", kMaxRank));
    }
    runs.emplace_back(static_cast<uint32_t>(first), count);
  }
  if (counted != token_count) {
    return in.Corrupt(absl::StrFormat(
        "the runs hold %d ranks, the token count is %d", counted, token_count));
  }
  v.size_ = static_cast<uint32_t>(end);
  v.token_count_ = token_count;

  // Token lengths, turned directly into the offsets of every rank.
  std::vector<uint32_t> offsets(static_cast<size_t>(v.size_) + 1);
  uint64_t offset = 0;
  uint32_t rank = 0;
  for (const auto& [first, count] : runs) {
    for (; rank < first; ++rank) offsets[rank] = static_cast<uint32_t>(offset);
    for (uint32_t k = 0; k < count; ++k, ++rank) {
      offsets[rank] = static_cast<uint32_t>(offset);
      if (auto s = in.Varint("token length", &length); !s.ok()) return s;
      if (length == 0) {
        return in.Corrupt(absl::StrFormat("token of rank %d is empty", rank));
      }
      offset += length;
      if (offset > in.remaining()) {
        return in.Corrupt(absl::StrFormat(
            "token lengths exceed the remaining data at rank %d", rank));
      }
    }
  }
  offsets[v.size_] = static_cast<uint32_t>(offset);
  if (offset != in.remaining()) {
    return in.Corrupt(absl::StrFormat(
        "token lengths add up to %d bytes, %d bytes of token data remain",
        offset, in.remaining()));
  }
  std::string_view bytes;
  if (auto s = in.Bytes("token bytes", static_cast<uint32_t>(offset), &bytes);
      !s.ok()) {
    return s;
  }
  v.blob_size_ = bytes.size();
  if (borrow) {
    v.blob_ = bytes.data();
  } else {
    v.owned_blob_ = std::make_unique_for_overwrite<char[]>(bytes.size());
    std::memcpy(v.owned_blob_.get(), bytes.data(), bytes.size());
    v.blob_ = v.owned_blob_.get();
  }
  v.SetOffsets(offsets);

  for (const SpecialToken& special : v.special_tokens_) {
    if (!v.Bytes(special.rank).empty()) {
      return in.Corrupt(absl::StrFormat(
          "special token %s has rank %d, which a mergeable token also has",
          Excerpt(special.text), special.rank));
    }
  }
  if (auto duplicate = v.BuildIndex()) {
    return in.Corrupt(absl::StrFormat("ranks %d and %d have the same bytes %s",
                                      duplicate->first, duplicate->second,
                                      Excerpt(v.Bytes(duplicate->first))));
  }
  return v;
}

absl::StatusOr<Vocabulary> Vocabulary::FromTiktoken(std::string_view text) {
  struct Entry {
    uint32_t rank;
    uint32_t line;
    uint32_t offset;  // into `decoded`
    uint32_t length;
  };
  std::vector<Entry> entries;
  std::string decoded;
  // A line of n base64 characters decodes to at most 3n/4 bytes and a
  // token's line is at least 7 bytes long ("XX== 0\n"): rough but tight.
  decoded.reserve(text.size() / 2);
  entries.reserve(text.size() / 12);
  uint32_t line_number = 0;
  bool sorted = true;
  size_t pos = 0;
  while (pos < text.size()) {
    ++line_number;
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tiktoken line %d: expected \"<base64> <rank>\", found no rank in %s",
          line_number, Excerpt(line)));
    }
    const std::string_view b64 = line.substr(0, space);
    const std::string_view rank_text = line.substr(space + 1);
    Entry e{0, line_number, 0, 0};
    if (!ParseRank(rank_text, &e.rank)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tiktoken line %d: rank %s is not a decimal number from 0 to %d",
          line_number, Excerpt(rank_text), kMaxRank));
    }
    const size_t before = decoded.size();
    if (before + b64.size() > 0xFFFFFFFFu) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tiktoken line %d: vocabulary exceeds 4 GiB of token bytes",
          line_number));
    }
    if (!DecodeBase64(b64, decoded)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tiktoken line %d: token %s is not canonical padded base64 of at "
          "least one byte",
          line_number, Excerpt(b64)));
    }
    e.offset = static_cast<uint32_t>(before);
    e.length = static_cast<uint32_t>(decoded.size() - before);
    if (!entries.empty() && e.rank <= entries.back().rank) sorted = false;
    entries.push_back(e);
  }
  if (entries.empty()) {
    return absl::InvalidArgumentError(
        "tiktoken vocabulary has no token (the text is empty or blank)");
  }
  if (!sorted) {
    std::stable_sort(
        entries.begin(), entries.end(),
        [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
  }
  for (size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].rank == entries[i - 1].rank) {
      const uint32_t first = std::min(entries[i - 1].line, entries[i].line);
      const uint32_t second = std::max(entries[i - 1].line, entries[i].line);
      return absl::InvalidArgumentError(absl::StrFormat(
          "tiktoken line %d: rank %d is already used on line %d", second,
          entries[i].rank, first));
    }
  }

  Vocabulary v;
  v.token_count_ = static_cast<uint32_t>(entries.size());
  v.size_ = entries.back().rank + 1;
  v.blob_size_ = decoded.size();
  v.owned_blob_ = std::make_unique_for_overwrite<char[]>(decoded.size());
  v.blob_ = v.owned_blob_.get();
  std::vector<uint32_t> offsets(static_cast<size_t>(v.size_) + 1);
  uint32_t offset = 0;
  uint32_t rank = 0;
  for (const Entry& e : entries) {
    for (; rank <= e.rank; ++rank) offsets[rank] = offset;
    std::memcpy(v.owned_blob_.get() + offset, decoded.data() + e.offset,
                e.length);
    offset += e.length;
  }
  offsets[v.size_] = offset;
  v.SetOffsets(offsets);
  if (auto duplicate = v.BuildIndex()) {
    // Ranks map to entries through the sorted order.
    auto line_of = [&entries](uint32_t r) {
      return std::lower_bound(
                 entries.begin(), entries.end(), r,
                 [](const Entry& e, uint32_t x) { return e.rank < x; })
          ->line;
    };
    const uint32_t line_a = line_of(duplicate->first);
    const uint32_t line_b = line_of(duplicate->second);
    const uint32_t first = std::min(line_a, line_b);
    const uint32_t second = std::max(line_a, line_b);
    return absl::InvalidArgumentError(absl::StrFormat(
        "tiktoken line %d: token %s duplicates the token on line %d", second,
        Excerpt(v.Bytes(duplicate->first)), first));
  }
  return v;
}

std::string Vocabulary::ToTiktoken() const {
  std::string out;
  // Base64 is 4/3 of the bytes plus padding; a rank and its separators at
  // most 9 more characters.
  out.reserve(blob_size_ * 4 / 3 + static_cast<size_t>(token_count_) * 12);
  char digits[16];
  for (uint32_t rank = 0; rank < size_; ++rank) {
    const std::string_view bytes = Bytes(rank);
    if (bytes.empty()) continue;
    AppendBase64(out, bytes);
    out.push_back(' ');
    int n = 0;
    uint32_t r = rank;
    do {
      digits[n++] = static_cast<char>('0' + r % 10);
      r /= 10;
    } while (r != 0);
    while (n > 0) out.push_back(digits[--n]);
    out.push_back('\n');
  }
  return out;
}

std::string Vocabulary::ToCompact() const {
  std::string payload;
  payload.reserve(blob_size_ + static_cast<size_t>(token_count_) * 2 + 4096);
  AppendVarint(payload, token_count_);
  AppendVarint(payload, explicit_n_vocab_ ? *explicit_n_vocab_ + 1 : 0);
  AppendVarint(payload, static_cast<uint32_t>(pattern_.size()));
  payload += pattern_;
  AppendVarint(payload, static_cast<uint32_t>(special_tokens_.size()));
  for (const SpecialToken& special : special_tokens_) {
    AppendVarint(payload, static_cast<uint32_t>(special.text.size()));
    payload += special.text;
    AppendVarint(payload, special.rank);
  }
  std::vector<std::pair<uint32_t, uint32_t>> runs;
  for (uint32_t rank = 0; rank < size_; ++rank) {
    if (Bytes(rank).empty()) continue;
    if (!runs.empty() && runs.back().first + runs.back().second == rank) {
      ++runs.back().second;
    } else {
      runs.emplace_back(rank, 1);
    }
  }
  AppendVarint(payload, static_cast<uint32_t>(runs.size()));
  uint32_t end = 0;
  for (const auto& [first, count] : runs) {
    AppendVarint(payload, first - end);
    AppendVarint(payload, count);
    end = first + count;
  }
  for (uint32_t rank = 0; rank < size_; ++rank) {
    const size_t length = Bytes(rank).size();
    if (length != 0) AppendVarint(payload, static_cast<uint32_t>(length));
  }
  payload.append(blob_, blob_size_);

  std::string out(kMagic);
  AppendLe32(out, kFormatVersion);
  AppendLe32(out, static_cast<uint32_t>(payload.size()));
  AppendLe32(out, CompactChecksum(payload));
  out += payload;
  return out;
}

}  // namespace ctxkit::internal
