#include "lib/tokenizer/encoding.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#define XXH_INLINE_ALL
#include "lib/base/absl_string_view.h"
#include "lib/json/utf8.h"
#include "lib/tokenizer/bpe.h"
#include "xxhash.h"

namespace ctxkit::internal {

absl::StatusOr<std::unique_ptr<Encoding>> Encoding::Create(
    std::string name, std::shared_ptr<const Vocabulary> vocabulary,
    PretokenPattern pattern, std::vector<SpecialToken> specials,
    InputNormalization normalization) {
  // Merging starts from single bytes, so every byte must be a token.
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    if (!vocabulary->Rank(std::string_view(&byte, 1)).has_value()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "encoding %s: byte 0x%02X is not a token, so some text could not "
          "be encoded",
          name, b));
    }
  }
  std::unique_ptr<Encoding> e(new Encoding(std::move(vocabulary)));
  // Never reused, unlike an address, so a cached piece of an encoding that
  // has been destroyed can never match a new one.
  static std::atomic<uint32_t> next_id{1};
  e->id_ = next_id.fetch_add(1);
  e->name_ = std::move(name);
  e->vocabulary_size_ = e->vocabulary_->size();
  for (size_t i = 0; i < specials.size(); ++i) {
    const SpecialToken& special = specials[i];
    if (special.text.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("encoding %s: empty special token", e->name_));
    }
    if (!e->special_index_.emplace(special.text, static_cast<int>(i)).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("encoding %s: special token '%s' listed twice",
                          e->name_, special.text));
    }
    if (!e->vocabulary_->Bytes(special.rank).empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "encoding %s: special token '%s' has id %u, which is a regular token",
          e->name_, special.text, special.rank));
    }
    // Two texts may share an id (o200k_harmony's reserved range covers
    // <|endofprompt|>); decoding uses the first one listed.
    e->special_by_id_.emplace(special.rank, static_cast<int>(i));
    e->vocabulary_size_ = std::max(e->vocabulary_size_, special.rank + 1);
    e->special_first_byte_[static_cast<unsigned char>(special.text[0])] = true;
    e->special_lengths_.push_back(special.text.size());
  }
  int first_bytes = 0;
  for (int b = 0; b < 256; ++b) {
    if (e->special_first_byte_[b]) {
      ++first_bytes;
      e->single_first_byte_ = b;
    }
  }
  if (first_bytes != 1) e->single_first_byte_ = -1;
  std::sort(e->special_lengths_.begin(), e->special_lengths_.end(),
            std::greater<size_t>());
  e->special_lengths_.erase(
      std::unique(e->special_lengths_.begin(), e->special_lengths_.end()),
      e->special_lengths_.end());
  e->pattern_ = pattern;
  e->normalization_ = normalization;
  e->specials_ = std::move(specials);
  return e;
}

std::string_view Encoding::Normalize(
    std::string_view valid_utf8, std::string* storage,
    std::vector<unicode::NfkcStretch>* stretches) const {
  if (normalization_ == InputNormalization::kNone) {
    if (stretches != nullptr) stretches->clear();
    return valid_utf8;
  }
  return unicode::NfkcNormalizeView(valid_utf8, storage, stretches);
}

absl::StatusOr<std::vector<bool>> Encoding::Resolve(
    const SpecialTokenSet& set, std::string_view option) const {
  std::vector<bool> marked(specials_.size(), set.is_all());
  for (const std::string& text : set.tokens()) {
    auto it = special_index_.find(text);
    if (it == special_index_.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s names '%s', which is not a special token of %s",
                          option, text, name_));
    }
    marked[it->second] = true;
  }
  return marked;
}

std::pair<int, size_t> Encoding::FindSpecial(
    std::string_view text, size_t from, const std::vector<bool>& wanted) const {
  for (size_t pos = from; pos < text.size(); ++pos) {
    if (single_first_byte_ >= 0) {
      // Every special token starts with the same byte (for the built-in
      // encodings, '<'): let memchr skip to the next one.
      const void* hit =
          std::memchr(text.data() + pos, single_first_byte_, text.size() - pos);
      if (hit == nullptr) break;
      pos = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    } else if (!special_first_byte_[static_cast<unsigned char>(text[pos])]) {
      continue;
    }
    // Longest first, so a special token that extends another one wins.
    for (size_t length : special_lengths_) {
      if (length > text.size() - pos) continue;
      auto it = special_index_.find(AV(text.substr(pos, length)));
      if (it != special_index_.end() && wanted[it->second]) {
        return {it->second, pos};
      }
    }
  }
  return {-1, std::string_view::npos};
}

template <typename Sink>
absl::Status Encoding::EncodeValid(std::string_view text,
                                   const EncodeOptions& options,
                                   Sink&& sink) const {
  absl::StatusOr<std::vector<bool>> allowed =
      Resolve(options.allowed_special, "allowed_special");
  if (!allowed.ok()) return allowed.status();
  absl::StatusOr<std::vector<bool>> disallowed =
      Resolve(options.disallowed_special, "disallowed_special");
  if (!disallowed.ok()) return disallowed.status();
  // As in tiktoken, "all" disallowed means all that are not allowed.
  bool any_allowed = false;
  bool any_disallowed = false;
  for (size_t i = 0; i < specials_.size(); ++i) {
    if ((*allowed)[i]) (*disallowed)[i] = false;
    any_allowed = any_allowed || (*allowed)[i];
    any_disallowed = any_disallowed || (*disallowed)[i];
  }
  if (any_disallowed) {
    const auto [index, offset] = FindSpecial(text, 0, *disallowed);
    if (index >= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the text contains the special token '%s' at byte offset %u, which "
          "is disallowed: allow it to encode it as a special token, or "
          "exclude it from disallowed_special to encode it as plain text",
          specials_[index].text, offset));
    }
  }

  // A sink that can say it has enough (EncodePrefix's) stops the loop
  // between pieces; the pieces before are those of the whole text, since a
  // piece's end depends only on the bytes before it and the one after.
  auto full = [&] {
    if constexpr (requires { sink.Full(); }) {
      return sink.Full();
    } else {
      return false;
    }
  };
  auto encode_ordinary = [&](std::string_view segment) {
    size_t pos = 0;
    while (pos < segment.size() && !full()) {
      const size_t end = NextPiece(pattern_, segment, pos);
      sink(segment.substr(pos, end - pos));
      pos = end;
    }
  };
  size_t start = 0;
  while (any_allowed && !full()) {
    const auto [index, offset] = FindSpecial(text, start, *allowed);
    if (index < 0) break;
    // tiktoken pre-tokenizes each stretch between special tokens on its
    // own: a piece never reaches across a special token.
    encode_ordinary(text.substr(start, offset - start));
    if (full()) return absl::OkStatus();
    sink(specials_[index].rank);
    start = offset + specials_[index].text.size();
  }
  if (!full()) encode_ordinary(text.substr(start));
  return absl::OkStatus();
}

template <typename Sink>
absl::Status Encoding::EncodeAny(std::string_view text,
                                 const EncodeOptions& options,
                                 Sink&& sink) const {
  std::string replaced;
  if (!IsValidUtf8(text)) {
    if (!options.replace_invalid_utf8) return ValidateUtf8(text, "text");
    replaced = ReplaceInvalidUtf8(text);
    text = replaced;
  }
  if (normalization_ == InputNormalization::kNone) {
    return EncodeValid(text, options, sink);
  }
  // Text that passes NFKC's quick check (most text) is neither copied nor
  // changed; only the stretches around characters that may change are
  // rewritten.
  std::string normalized;
  return EncodeValid(unicode::NfkcNormalizeView(text, &normalized), options,
                     sink);
}

namespace {

// A per-thread cache of recently seen short pieces and their ids. Text is
// repetitive at the piece level (words, indentation, punctuation), and a hit
// here is one access to a small table instead of a lookup in the
// vocabulary's large one (or a whole merge). Entries are checked against the
// full piece bytes and the encoding's id, so a hit is always exact.
constexpr size_t kMaxCachedPiece = 14;
constexpr size_t kMaxCachedIds = 4;
constexpr size_t kPieceCacheSize = 4096;  // entries, a power of two

struct PieceCacheEntry {
  uint64_t hash;
  uint32_t owner;  // Encoding id; 0 marks an empty entry
  uint8_t length;
  uint8_t count;  // ids the piece encodes to
  bool has_ids;   // ids[] holds them (count <= kMaxCachedIds)
  char bytes[kMaxCachedPiece];
  uint32_t ids[kMaxCachedIds];
};
// Four ids fit in the padding three would leave: a 48-byte entry either way.
static_assert(sizeof(PieceCacheEntry) == 48);

// The cache pays for itself on text that repeats its pieces (prose, code)
// and only costs on text that does not (base64, hex dumps, random
// identifiers), where every lookup misses and every miss rewrites an entry.
// So each thread watches its hit rate, per piece length (in base64 the short
// digit pieces repeat and the letter runs never do), over windows of kWindow
// lookups: below 1 in 16 it consults the cache for only one piece of that
// length in 16 (enough to notice when the text turns repetitive again) until
// a window's rate recovers. This only decides whether to look; a hit is
// exact either way.
class PieceCache {
 public:
  PieceCacheEntry& Slot(uint64_t hash) {
    if (entries_ == nullptr)
      entries_.reset(new PieceCacheEntry[kPieceCacheSize]());
    return entries_[hash & (kPieceCacheSize - 1)];
  }
  bool Consult(size_t length) {
    Stats& s = stats_[length];
    return !s.sparse || (++s.skipped & 15) == 0;
  }
  void Record(size_t length, bool hit) {
    Stats& s = stats_[length];
    s.hits += hit ? 1 : 0;
    if (++s.lookups == kWindow) {
      s.sparse = s.hits * 16 < s.lookups;
      s.lookups = s.hits = 0;
    }
  }

 private:
  static constexpr uint32_t kWindow = 512;
  struct Stats {
    uint32_t lookups = 0;
    uint32_t hits = 0;
    uint32_t skipped = 0;
    bool sparse = false;
  };
  std::unique_ptr<PieceCacheEntry[]> entries_;
  Stats stats_[kMaxCachedPiece + 1];
};

PieceCache& ThreadPieceCache() {
  thread_local PieceCache cache;
  return cache;
}

bool Matches(const PieceCacheEntry& e, uint32_t owner, uint64_t hash,
             std::string_view piece) {
  return e.owner == owner && e.hash == hash && e.length == piece.size() &&
         std::memcmp(e.bytes, piece.data(), piece.size()) == 0;
}

void Remember(PieceCacheEntry& e, uint32_t owner, uint64_t hash,
              std::string_view piece, size_t count, const uint32_t* ids) {
  if (count > 255) return;
  e.owner = owner;
  e.hash = hash;
  e.length = static_cast<uint8_t>(piece.size());
  std::memcpy(e.bytes, piece.data(), piece.size());
  e.count = static_cast<uint8_t>(count);
  e.has_ids = ids != nullptr && count <= kMaxCachedIds;
  if (e.has_ids) std::copy(ids, ids + count, e.ids);
}

uint64_t PieceHash(std::string_view piece) {
  return XXH3_64bits(piece.data(), piece.size());
}

// The ids of `piece` (at most kMaxCachedPiece bytes) through the thread's
// cache; returns how many. Writes them to `ids` (room for kMaxCachedPiece)
// unless kCountOnly and the cache knew the count.
template <bool kCountOnly>
size_t CachedPieceIds(PieceCache& cache, const Vocabulary& vocabulary,
                      uint32_t owner, std::string_view piece, uint32_t* ids) {
  if (!cache.Consult(piece.size())) {
    return BytePairEncodeShort(vocabulary, piece, ids);
  }
  const uint64_t hash = PieceHash(piece);
  PieceCacheEntry& entry = cache.Slot(hash);
  const bool hit =
      Matches(entry, owner, hash, piece) && (kCountOnly || entry.has_ids);
  cache.Record(piece.size(), hit);
  if (hit) {
    // All four slots in one fixed-size copy (`ids` has room for
    // kMaxCachedPiece), cheaper than a loop of entry.count.
    static_assert(kMaxCachedPiece >= kMaxCachedIds);
    if (!kCountOnly) std::memcpy(ids, entry.ids, sizeof entry.ids);
    return entry.count;
  }
  // Encoding (rather than only counting) costs little more and lets a later
  // Encode hit the cache too.
  const size_t n = BytePairEncodeShort(vocabulary, piece, ids);
  Remember(entry, owner, hash, piece, n, ids);
  return n;
}

// Sinks receive either a piece to merge or a special token's id.
// Ids collect in a small buffer and reach the vector in blocks: a
// push_back per id (a capacity check and a store through the vector's
// pointers) cost more than the merging does on text the cache knows.
struct EncodeSink {
  static constexpr size_t kBufferSize = 512;
  // A constructor rather than aggregate initialization: the buffer needs no
  // initial value.
  EncodeSink(PieceCache& c, const Vocabulary& v, uint32_t o,
             std::vector<uint32_t>* ids)
      : cache(c), vocabulary(v), owner(o), out(ids) {}
  PieceCache& cache;  // this thread's, looked up once per call
  const Vocabulary& vocabulary;
  uint32_t owner;
  std::vector<uint32_t>* out;
  size_t used = 0;
  uint32_t buffer[kBufferSize];

  void Flush() {
    out->insert(out->end(), buffer, buffer + used);
    used = 0;
  }
  void MakeRoom(size_t n) {
    if (used + n > kBufferSize) Flush();
  }
  void operator()(std::string_view piece) {
    if (piece.size() > kMaxCachedPiece) {
      Flush();
      BytePairEncode(vocabulary, piece, out);
      return;
    }
    MakeRoom(kMaxCachedPiece);
    used +=
        CachedPieceIds<false>(cache, vocabulary, owner, piece, buffer + used);
  }
  void operator()(uint32_t special_id) {
    MakeRoom(1);
    buffer[used++] = special_id;
  }
};

// Writes ids into a caller's buffer while they fit, and counts them all, so
// the caller learns the size it needs. Long pieces go through a per-thread
// scratch vector: no allocation once it has grown.
struct SpanSink {
  PieceCache& cache;  // this thread's, looked up once per call
  const Vocabulary& vocabulary;
  uint32_t owner;
  std::vector<uint32_t>* scratch;
  std::span<uint32_t> out;
  size_t* count;
  void Emit(const uint32_t* ids, size_t n) const {
    if (*count < out.size()) {
      std::copy(ids, ids + std::min(n, out.size() - *count),
                out.begin() + *count);
    }
    *count += n;
  }
  void operator()(std::string_view piece) const {
    if (piece.size() > kMaxCachedPiece) {
      scratch->clear();
      BytePairEncode(vocabulary, piece, scratch);
      Emit(scratch->data(), scratch->size());
      return;
    }
    if (out.size() - std::min(*count, out.size()) >= kMaxCachedPiece) {
      // Room for any short piece: write the ids in place.
      *count += CachedPieceIds<false>(cache, vocabulary, owner, piece,
                                      out.data() + *count);
      return;
    }
    uint32_t ids[kMaxCachedPiece];
    Emit(ids, CachedPieceIds<false>(cache, vocabulary, owner, piece, ids));
  }
  void operator()(uint32_t special_id) const { Emit(&special_id, 1); }
};

struct CountSink {
  PieceCache& cache;  // this thread's, looked up once per call
  const Vocabulary& vocabulary;
  uint32_t owner;
  size_t* count;
  void operator()(std::string_view piece) const {
    if (piece.size() > kMaxCachedPiece) {
      *count += BytePairCount(vocabulary, piece);
      return;
    }
    uint32_t ids[kMaxCachedPiece];
    *count += CachedPieceIds<true>(cache, vocabulary, owner, piece, ids);
  }
  void operator()(uint32_t) const { ++*count; }
};

}  // namespace

absl::Status Encoding::Encode(std::string_view text,
                              const EncodeOptions& options,
                              std::vector<uint32_t>* out) const {
  // Prose runs near 4.7 bytes a token and source code near 3.6: reserving a
  // token per 3 bytes covers both without regrowth (a regrowth copies
  // everything so far), and pages reserved but never written cost nothing.
  out->reserve(out->size() + text.size() / 3 + 1);
  const size_t before = out->size();
  EncodeSink sink{ThreadPieceCache(), *vocabulary_, id_, out};
  absl::Status status = EncodeAny(text, options, sink);
  sink.Flush();
  if (!status.ok()) out->resize(before);
  return status;
}

namespace {

// EncodeSink that reports when more than `limit` ids have been emitted.
struct PrefixSink : EncodeSink {
  PrefixSink(PieceCache& c, const Vocabulary& v, uint32_t o,
             std::vector<uint32_t>* ids, size_t l)
      : EncodeSink(c, v, o, ids), limit(l) {}
  bool Full() const { return out->size() + used > limit; }
  size_t limit;
};

}  // namespace

absl::Status Encoding::EncodePrefix(std::string_view text,
                                    const EncodeOptions& options, size_t limit,
                                    std::vector<uint32_t>* out) const {
  const size_t before = out->size();
  PrefixSink sink{ThreadPieceCache(), *vocabulary_, id_, out,
                  limit > SIZE_MAX - before ? SIZE_MAX : before + limit};
  absl::Status status = EncodeAny(text, options, sink);
  sink.Flush();
  if (!status.ok()) out->resize(before);
  return status;
}

absl::StatusOr<size_t> Encoding::EncodeInto(std::string_view text,
                                            const EncodeOptions& options,
                                            std::span<uint32_t> out) const {
  thread_local std::vector<uint32_t> scratch;
  size_t count = 0;
  absl::Status status = EncodeAny(
      text, options,
      SpanSink{ThreadPieceCache(), *vocabulary_, id_, &scratch, out, &count});
  if (!status.ok()) return status;
  return count;
}

absl::StatusOr<size_t> Encoding::Count(std::string_view text,
                                       const EncodeOptions& options) const {
  size_t count = 0;
  absl::Status status = EncodeAny(
      text, options, CountSink{ThreadPieceCache(), *vocabulary_, id_, &count});
  if (!status.ok()) return status;
  return count;
}

absl::StatusOr<std::string_view> Encoding::TokenBytes(uint32_t id) const {
  std::string_view bytes = vocabulary_->Bytes(id);
  if (!bytes.empty()) return bytes;
  if (auto it = special_by_id_.find(id); it != special_by_id_.end()) {
    return std::string_view(specials_[it->second].text);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("token id %u is not a token of %s (ids run to %u)", id,
                      name_, vocabulary_size_ - 1));
}

absl::StatusOr<std::string> Encoding::Decode(
    std::span<const uint32_t> ids) const {
  std::string out;
  out.reserve(ids.size() * 4);
  for (size_t i = 0; i < ids.size(); ++i) {
    absl::StatusOr<std::string_view> bytes = TokenBytes(ids[i]);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ids[%u]: %s", i, bytes.status().message()));
    }
    out.append(*bytes);
  }
  return out;
}

}  // namespace ctxkit::internal
