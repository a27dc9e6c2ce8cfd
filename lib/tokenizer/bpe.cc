#include "lib/tokenizer/bpe.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/tokenizer/symbol_trie.h"
#include "lib/tokenizer/whitespace_trie.h"

namespace ctxkit::internal {
namespace {

constexpr uint32_t kNoRank = Vocabulary::kNoToken;

uint32_t RankOf(const Vocabulary& vocab, std::string_view bytes) {
  return vocab.RankOrNone(bytes);
}

// Calls emit(token) for each final part of `piece`, in order.
//
// tiktoken's method: each part has the rank of merging it with the next
// part; each round merges the first minimum and updates the two ranks that
// changed. The merged part's token is the rank just merged, so no part is
// ever looked up twice.
//
// Parts are kept by the byte position they start at and never move: a merge
// unlinks the right-hand part and gives it rank kNoRank, so it can never be
// the minimum again. The minimum is then a branch-free scan over one small
// array (a branch there mispredicts about every other part on text whose
// pieces do not repeat, such as base64), and no memmove runs per merge.
// MergeSmall's knowledge of the whole piece: nothing (AnyPiece), or that it
// is no token (WholeIsNoToken), so a lookup of all of it can only miss.
struct AnyPiece {
  bool Whole(size_t, size_t) const { return false; }
};
struct WholeIsNoToken {
  size_t size;
  bool Whole(size_t begin, size_t end) const {
    return begin == 0 && end == size;
  }
};

template <typename Emit, typename Known = AnyPiece>
void MergeSmall(const Vocabulary& vocab, std::string_view piece, Emit&& emit,
                Known known = {}) {
  const size_t n = piece.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(piece.data());
  uint32_t rank[kBpeHeapThreshold];   // of merging the part at i with the next
  uint32_t token[kBpeHeapThreshold];  // of the part at i
  uint8_t next[kBpeHeapThreshold + 1];
  uint8_t prev[kBpeHeapThreshold + 1];
  static_assert(kBpeHeapThreshold <= 255, "positions must fit in uint8_t");
  for (size_t i = 0; i + 1 < n; ++i) {
    rank[i] = vocab.PairRank(bytes[i], bytes[i + 1]);
  }
  rank[n - 1] = kNoRank;
  for (size_t i = 0; i < n; ++i) {
    token[i] = vocab.ByteRank(bytes[i]);
    next[i] = static_cast<uint8_t>(i + 1);
    prev[i + 1] = static_cast<uint8_t>(i);
  }
  next[n] = static_cast<uint8_t>(n);
  // The rank of the token spanning [begin, end): at least three bytes here.
  auto span_rank = [&](size_t begin, size_t end) -> uint32_t {
    if (known.Whole(begin, end)) return kNoRank;
    return vocab.RankOrNone(piece.substr(begin, end - begin));
  };
  for (;;) {
    // The minimum of (rank, position) is the leftmost lowest rank.
    uint64_t min_key = ~uint64_t{0};
    for (size_t i = 0; i + 1 < n; ++i) {
      min_key = std::min(min_key, uint64_t{rank[i]} << 32 | i);
    }
    const auto best = static_cast<uint32_t>(min_key >> 32);
    if (best == kNoRank) break;
    const auto at = static_cast<size_t>(static_cast<uint32_t>(min_key));
    const size_t gone = next[at];
    const size_t after = next[gone];
    token[at] = best;
    rank[gone] = kNoRank;
    next[at] = static_cast<uint8_t>(after);
    prev[after] = static_cast<uint8_t>(at);
    rank[at] = after < n ? span_rank(at, next[after]) : kNoRank;
    if (at > 0) rank[prev[at]] = span_rank(prev[at], after);
  }
  for (size_t i = 0; i < n; i = next[i]) emit(token[i]);
}

// The same merges over a doubly linked list of runs, each run being `count`
// equal tokens side by side, with a min-heap of candidate merges keyed by
// (rank, byte position): popping the smallest key is "the leftmost
// lowest-rank pair", as in tiktoken. Adjacent runs always hold different
// tokens (equal neighbours are joined), so a run's candidates are:
//   - "self": its first two tokens, at its start;
//   - "next": its last token with the next run's first, at its last token.
// A heap entry carries its run's version; any change to a run bumps the
// version and pushes its current candidates, so older entries are skipped.
//
// Popping a run's self candidate (rank r, merged token m) would have tiktoken
// merge the run's pairs one after another, left to right, for as long as no
// pair formed meanwhile ranks below r: the previous run's last token with m,
// m with the t still to its right, or m with m. When none of those ranks
// below r, all floor(count / 2) pairs merge in one step; otherwise only the
// first does, and the heap decides what comes next. Either way the sequence
// of merges, and so the result, is tiktoken's.
//
// Every part is a token, so the rank of merging two parts depends only on
// their two ids; the ranks found are cached by id pair instead of hashing
// ever longer byte strings again.
class RunMerger {
 public:
  RunMerger(const Vocabulary& vocab, std::string_view piece)
      : vocab_(vocab), piece_(piece) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(piece.data());
    for (size_t i = 0; i < piece.size();) {
      size_t j = i + 1;
      while (j < piece.size() && bytes[j] == bytes[i]) ++j;
      const uint32_t id = static_cast<uint32_t>(runs_.size());
      runs_.push_back(Run{
          static_cast<uint32_t>(i), static_cast<uint32_t>(j - i), 1,
          vocab.ByteRank(bytes[i]), id == 0 ? kNone : id - 1, kNone, 0, true});
      if (id > 0) runs_[id - 1].next = id;
      i = j;
    }
  }

  // Runs the merges; then Each(emit) calls emit(token, count) run by run.
  void Merge() {
    for (uint32_t i = 0; i < runs_.size(); ++i) PushCandidates(i);
    while (!heap_.empty()) {
      const Entry top = heap_.top();
      heap_.pop();
      const Run& run = runs_[top.run];
      if (!run.alive || (run.version & 0x7FFFFFFFu) != top.version) continue;
      const auto rank = static_cast<uint32_t>(top.key >> 32);
      if (top.self) {
        MergeSelf(top.run, rank);
      } else {
        MergeNext(top.run, rank);
      }
    }
  }

  template <typename Emit>
  void Each(Emit&& emit) const {
    for (uint32_t i = head_; i != kNone; i = runs_[i].next) {
      emit(runs_[i].token, runs_[i].count);
    }
  }

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  struct Run {
    uint32_t start;   // byte offset of its first token in the piece
    uint32_t count;   // tokens in the run
    uint32_t length;  // bytes per token
    uint32_t token;
    uint32_t prev;
    uint32_t next;
    uint32_t version;
    bool alive;
  };

  struct Entry {
    uint64_t key;  // rank << 32 | byte position
    uint32_t run;
    uint32_t version : 31;
    uint32_t self : 1;
    bool operator>(const Entry& other) const { return key > other.key; }
  };

  // The rank of the token spanning `length` bytes at `start`, made of tokens
  // `left` then `right`.
  uint32_t PairRank(uint32_t start, uint32_t length, uint32_t left,
                    uint32_t right) {
    if (length == 2) {
      return vocab_.PairRank(static_cast<unsigned char>(piece_[start]),
                             static_cast<unsigned char>(piece_[start + 1]));
    }
    auto [it, inserted] =
        pair_ranks_.try_emplace(uint64_t{left} << 32 | right, kNoRank);
    if (inserted) it->second = RankOf(vocab_, piece_.substr(start, length));
    return it->second;
  }

  uint32_t LastStart(const Run& run) const {
    return run.start + (run.count - 1) * run.length;
  }

  void Push(uint32_t rank, uint32_t position, uint32_t run, bool self) {
    if (rank == kNoRank) return;
    heap_.push(Entry{uint64_t{rank} << 32 | position, run,
                     runs_[run].version & 0x7FFFFFFFu, self ? 1u : 0u});
  }

  void PushCandidates(uint32_t i) {
    const Run& run = runs_[i];
    if (run.count >= 2) {
      Push(PairRank(run.start, 2 * run.length, run.token, run.token), run.start,
           i, true);
    }
    if (run.next != kNone) {
      const Run& next = runs_[run.next];
      Push(PairRank(LastStart(run), run.length + next.length, run.token,
                    next.token),
           LastStart(run), i, false);
    }
  }

  // Invalidates run i's heap entries and pushes its current candidates.
  void Refresh(uint32_t i) {
    if (i == kNone) return;
    ++runs_[i].version;
    PushCandidates(i);
  }

  uint32_t NewRun(uint32_t start, uint32_t count, uint32_t length,
                  uint32_t token) {
    runs_.push_back(Run{start, count, length, token, kNone, kNone, 0, true});
    return static_cast<uint32_t>(runs_.size() - 1);
  }

  void Link(uint32_t left, uint32_t right) {
    if (left == kNone) head_ = right;
    if (left != kNone) runs_[left].next = right;
    if (right != kNone) runs_[right].prev = left;
  }

  // Joins run i with its neighbours where they hold the same token; returns
  // the run that now covers i's tokens.
  uint32_t Join(uint32_t i) {
    const uint32_t prev = runs_[i].prev;
    if (prev != kNone && runs_[prev].token == runs_[i].token) {
      runs_[prev].count += runs_[i].count;
      runs_[i].alive = false;
      Link(prev, runs_[i].next);
      i = prev;
    }
    const uint32_t next = runs_[i].next;
    if (next != kNone && runs_[next].token == runs_[i].token) {
      runs_[i].count += runs_[next].count;
      runs_[next].alive = false;
      Link(i, runs_[next].next);
    }
    return i;
  }

  // Merges pairs of run i's tokens into token `merged`, from the left.
  void MergeSelf(uint32_t i, uint32_t merged) {
    Run run = runs_[i];
    const uint32_t r = merged;
    const uint32_t width = 2 * run.length;
    uint32_t pairs = 1;
    if (run.count >= 4) {
      const bool prev_ok =
          run.prev == kNone ||
          PairRank(LastStart(runs_[run.prev]), runs_[run.prev].length + width,
                   runs_[run.prev].token, merged) > r;
      const bool right_ok =
          PairRank(run.start, width + run.length, merged, run.token) > r;
      const bool twice_ok =
          run.count < 6 || PairRank(run.start, 2 * width, merged, merged) > r;
      if (prev_ok && right_ok && twice_ok) pairs = run.count / 2;
    }
    const uint32_t rest = run.count - 2 * pairs;
    runs_[i].token = merged;
    runs_[i].count = pairs;
    runs_[i].length = width;
    if (rest > 0) {
      const uint32_t tail =
          NewRun(run.start + pairs * width, rest, run.length, run.token);
      Link(tail, run.next);
      Link(i, tail);
      Refresh(tail);
    }
    const uint32_t joined = Join(i);
    Refresh(joined);
    Refresh(runs_[joined].prev);
  }

  // Merges run i's last token with the next run's first into `merged`.
  void MergeNext(uint32_t i, uint32_t merged) {
    const uint32_t j = runs_[i].next;
    const uint32_t at = LastStart(runs_[i]);
    const uint32_t m = NewRun(at, 1, runs_[i].length + runs_[j].length, merged);
    uint32_t left = i;
    if (--runs_[i].count == 0) {
      runs_[i].alive = false;
      left = runs_[i].prev;
    }
    uint32_t right = j;
    runs_[j].start += runs_[j].length;
    if (--runs_[j].count == 0) {
      runs_[j].alive = false;
      right = runs_[j].next;
    }
    Link(left, m);
    Link(m, right);
    const uint32_t joined = Join(m);
    Refresh(joined);
    Refresh(runs_[joined].prev);
    // The right run lost its first token: its self candidate moved.
    if (runs_[joined].next != kNone && runs_[joined].next == j) Refresh(j);
  }

  const Vocabulary& vocab_;
  std::string_view piece_;
  std::vector<Run> runs_;
  uint32_t head_ = 0;  // the first run
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  absl::flat_hash_map<uint64_t, uint32_t> pair_ranks_;
};

template <typename Emit>
void MergeRuns(const Vocabulary& vocab, std::string_view piece, Emit&& emit) {
  RunMerger merger(vocab, piece);
  merger.Merge();
  merger.Each([&](uint32_t token, uint32_t count) {
    for (uint32_t k = 0; k < count; ++k) emit(token);
  });
}

// Appends the merge of `bytes` (not empty) to `out`: the array method when
// it is short enough, else the run heap.
void MergeAny(const Vocabulary& vocab, std::string_view bytes,
              std::vector<uint32_t>* out) {
  auto emit = [&](uint32_t token) { out->push_back(token); };
  if (bytes.size() < kBpeHeapThreshold) {
    MergeSmall(vocab, bytes, emit);
  } else {
    MergeRuns(vocab, bytes, emit);
  }
}

// ---- Merging a long piece segment by segment ----
//
// Why it is exact. Call two tokens a, b "compatible" when merging the bytes
// of a then b (on their own, from single bytes) gives exactly a, b. Then a
// sequence of tokens is the merge of its bytes if and only if every two
// neighbours are compatible (and, for a single token, it merges to itself):
//  - If: suppose the merge of the whole text made a merge across the
//    boundary between neighbours t[i] and t[i+1], and look at the first such
//    merge. Until then each token's bytes only merged within themselves, and
//    each merge there was the lowest-ranked (leftmost on a tie) pair of the
//    whole text, so also of the bytes of t[i] t[i+1] alone, boundary pair
//    included. So merging t[i] t[i+1] alone makes the same merges in the same
//    order, up to and including the one across the boundary: the pair is not
//    compatible. Hence no merge crosses a boundary, each token's bytes merge
//    as they would alone, and alone they give that token (a compatible pair
//    shows it for both of its tokens).
//  - Only if: in the merge of the whole text no merge crosses between
//    neighbours; every merge within t[i] t[i+1] had a rank below the pair
//    across their boundary at the time (else that pair would have merged),
//    so merging the two alone makes the same merges and stops at t[i], t[i+1].
//
// So a long piece is cut into short segments, each merged alone with the
// cheap array method (and remembered, since long pieces repeat themselves:
// blank lines, rules of '-=', runs of one character), and where the last
// token of one and the first of the next are not compatible, a few tokens
// around the cut are merged again until both ends of the redone stretch are
// compatible with what surrounds it. Every check is of the rule above, so
// the result is the merge of the whole piece, whatever the cut points;
// these are only chosen where a cut is likely to be a token boundary (the
// byte pair that would merge last), so that few stretches need redoing.

// Segments are this long, except the last one of a piece.
constexpr size_t kMinSegment = 16;
constexpr size_t kMaxSegment = 32;
// Past this much redone text at one cut, or this much in all beyond the
// piece's length, the piece goes to the run heap instead (a very long token
// that the segments keep cutting, such as in a run of one letter).
constexpr size_t kMaxRedo = 2048;
constexpr size_t kRedoAllowance = 4096;

// Per-thread memory of segments merged and pairs checked, keyed by the
// vocabulary's cache tag as well as the bytes or ids, so an entry never
// serves another vocabulary, and a hit compares the full key, so it is
// exact. Per thread, so Encode from any number of threads needs no lock;
// about 380 KB a thread, allocated on its first long piece and freed when
// the thread ends.
constexpr size_t kSegmentCacheSize = 1024;  // entries, a power of two
constexpr size_t kMaxCachedSegmentIds = 16;

struct SegmentCacheEntry {
  uint64_t hash;
  uint32_t tag;  // 0: empty
  uint8_t length;
  uint8_t count;
  char bytes[kMaxSegment];
  uint32_t ids[kMaxCachedSegmentIds];
};

// Which pairs of tokens are compatible, as one 64-bit word per pair: the
// two ranks (below 2^24, Vocabulary::kMaxRank), the answer, and the
// generation it was written in. Random runs of whitespace check some
// 36,000 distinct pairs a megabyte, over and over: a direct-mapped table of
// 8,192 pairs lost one check in four to another pair and redid it (a
// replay of both tokens' merges, with hashed lookups), the main cost of
// such runs. Four ways per set and four times the pairs keep nearly all.
//
// Entries carry no vocabulary tag: the table serves one vocabulary at a
// time, and a piece of another starts a new generation, which makes every
// older entry a miss; only when the 15-bit generation wraps is the table
// cleared, so no entry of an earlier vocabulary can ever be read back.
class PairMemo {
 public:
  static constexpr size_t kSets = size_t{1} << 13;  // of kWays entries
  static constexpr size_t kWays = 4;

  // Makes `tag` the vocabulary whose pairs the memo holds.
  void Use(uint32_t tag) {
    if (tag == tag_) return;
    tag_ = tag;
    if (++generation_ == kGenerations) {
      std::fill(std::begin(entries_), std::end(entries_), uint64_t{0});
      generation_ = 1;
    }
  }

  // 1 or 0 when the memo knows whether `left` then `right` are compatible,
  // else -1.
  int Find(uint32_t left, uint32_t right) const {
    const uint64_t key = Key(left, right);
    const uint64_t* set = Set(key);
    // All ways compared without a branch: which one holds the pair, if
    // any, is unpredictable. A pair is in one way at most, or has one
    // answer wherever it is.
    int known = -1;
    for (size_t w = 0; w < kWays; ++w) {
      const bool match = (set[w] & ~kAnswerBit) == key;
      known = match ? static_cast<int>((set[w] & kAnswerBit) != 0) : known;
    }
    return known;
  }

  // Records the answer, evicting the set's oldest entry.
  void Add(uint32_t left, uint32_t right, bool compatible) {
    const uint64_t key = Key(left, right);
    uint64_t* set = Set(key);
    for (size_t w = kWays - 1; w > 0; --w) set[w] = set[w - 1];
    set[0] = key | (compatible ? kAnswerBit : 0);
  }

 private:
  static constexpr uint64_t kAnswerBit = uint64_t{1} << 48;
  static constexpr uint32_t kGenerations = 1u << 15;
  static_assert(Vocabulary::kMaxRank < (1u << 24));

  // Never 0, the empty entry: the generation is at least 1.
  uint64_t Key(uint32_t left, uint32_t right) const {
    return uint64_t{generation_} << 49 | uint64_t{left} << 24 | right;
  }
  const uint64_t* Set(uint64_t key) const {
    return entries_ + (Mix(key) & (kSets - 1)) * kWays;
  }
  uint64_t* Set(uint64_t key) {
    return entries_ + (Mix(key) & (kSets - 1)) * kWays;
  }
  static uint64_t Mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    return h ^ (h >> 29);
  }

  alignas(64) uint64_t entries_[kSets * kWays] = {};
  uint32_t tag_ = 0;  // no vocabulary has tag 0
  uint32_t generation_ = 0;
};

struct SegmentCaches {
  SegmentCacheEntry segments[kSegmentCacheSize] = {};
  PairMemo pairs;
  // A long piece's tokens and their ends, kept from piece to piece: a fresh
  // vector of a megabyte piece costs a page fault per 4 KB on first touch,
  // as much as merging the piece.
  std::vector<uint32_t> ids;
  std::vector<uint32_t> ends;
  // SymbolMerger's trie nodes of ids, the longest candidate where each of
  // ids starts, and positions known not to be token boundaries, a bit each.
  std::vector<uint32_t> nodes;
  std::vector<uint64_t> dead;
  std::vector<uint32_t> longest;
  // WhitespaceMerger's longest token ending at each position.
  std::vector<uint16_t> ending;
  // Compatible()'s scratch.
  std::string pair_bytes;
  std::vector<uint32_t> pair_ids;

  // Past this many entries the piece buffers are released after the piece,
  // so that one huge piece does not keep its memory for the life of the
  // thread.
  static constexpr size_t kMaxKept = size_t{1} << 22;

  // Empties the piece buffers for a merger's new piece; their capacity
  // stays.
  void StartPiece() {
    ids.clear();
    ends.clear();
    nodes.clear();
    longest.clear();
  }
  // Releases the piece buffers when the piece just merged grew one past
  // kMaxKept.
  void EndPiece() {
    if (ids.capacity() <= kMaxKept && ending.capacity() <= kMaxKept) return;
    std::vector<uint32_t>().swap(ids);
    std::vector<uint32_t>().swap(ends);
    std::vector<uint32_t>().swap(nodes);
    std::vector<uint64_t>().swap(dead);
    std::vector<uint32_t>().swap(longest);
    std::vector<uint16_t>().swap(ending);
  }
};

SegmentCaches& ThreadSegmentCaches() {
  thread_local std::unique_ptr<SegmentCaches> caches;
  if (caches == nullptr) caches = std::make_unique<SegmentCaches>();
  return *caches;
}

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 33);
}

// Whether tokens `left` then `right` of `vocab` merge back into themselves,
// through the thread's pair memo (which must be in use for `vocab`).
bool Compatible(const Vocabulary& vocab, SegmentCaches& caches, uint32_t left,
                uint32_t right) {
  if (const int known = caches.pairs.Find(left, right); known >= 0) {
    return known != 0;
  }
  caches.pair_bytes.assign(vocab.Bytes(left));
  caches.pair_bytes.append(vocab.Bytes(right));
  caches.pair_ids.clear();
  MergeAny(vocab, caches.pair_bytes, &caches.pair_ids);
  const bool compatible = caches.pair_ids.size() == 2 &&
                          caches.pair_ids[0] == left &&
                          caches.pair_ids[1] == right;
  caches.pairs.Add(left, right, compatible);
  return compatible;
}

uint64_t HashBytes(std::string_view bytes) {
  uint64_t h = bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    h = Mix(h ^ word);
  }
  if (i < bytes.size()) {
    uint64_t word = 0;
    std::memcpy(&word, bytes.data() + i, bytes.size() - i);
    h = Mix(h ^ word ^ 0x9E3779B97F4A7C15ull);
  }
  return h;
}

class SegmentMerger {
 public:
  SegmentMerger(const Vocabulary& vocab, std::string_view piece)
      : vocab_(vocab),
        piece_(piece),
        bytes_(reinterpret_cast<const unsigned char*>(piece.data())),
        caches_(ThreadSegmentCaches()),
        redo_budget_(piece.size() + kRedoAllowance),
        ids_(caches_.ids),
        ends_(caches_.ends) {
    caches_.pairs.Use(vocab.cache_tag());
    caches_.StartPiece();
  }

  ~SegmentMerger() { caches_.EndPiece(); }
  SegmentMerger(const SegmentMerger&) = delete;
  SegmentMerger& operator=(const SegmentMerger&) = delete;

  // Merges the whole piece; false if it gave up (see kMaxRedo), leaving
  // ids() unspecified. With `only_if_repetitive` it also gives up as soon
  // as the segments are seen to miss the cache more than one time in four,
  // or the cuts to need more than half the bytes merged again (a run of
  // one long token): another merger does better.
  bool Merge(bool only_if_repetitive = false) {
    ids_.reserve(piece_.size() / 2 + 1);
    ends_.reserve(piece_.size() / 2 + 1);
    uint32_t segment[kMaxSegment];
    size_t segments = 0;
    for (size_t begin = 0; begin < piece_.size(); ++segments) {
      if (only_if_repetitive &&
          ((misses_ > kMissesSeen && misses_ * 4 > segments) ||
           (redone_ > kRedoSeen && redone_ > begin / 2))) {
        not_repetitive_ = true;
        return false;
      }
      const size_t end = NextCut(begin);
      size_t m = MergeSegment(begin, end, segment);
      // The last tokens of a segment are the likeliest to change once the
      // text after it is seen, so unless it ends the piece they are left
      // to the next segment, which then starts at a token boundary that
      // had right context. In a periodic run (a rule of "-=") the segments
      // then repeat, phase and all, and hit the cache; cutting only at
      // rare pairs kept them out of phase, and every cut was redone.
      if (end < piece_.size() && m > 1) m -= m > 2 ? 2 : 1;
      begin = Stitch(begin, segment, m);
      if (begin == kGaveUp) return false;
    }
    return true;
  }

  const std::vector<uint32_t>& ids() const { return ids_; }

  // Whether Merge(true) gave up because the piece does not repeat itself.
  bool not_repetitive() const { return not_repetitive_; }

 private:
  // Where the segment starting at `begin` ends: at the byte pair between
  // kMinSegment and kMaxSegment bytes on whose merge the vocabulary puts the
  // highest rank (none: higher than any), the last of equals, so that a
  // cut usually falls between two tokens and repeated text is cut the same
  // way each time.
  size_t NextCut(size_t begin) const {
    if (piece_.size() - begin <= kMaxSegment) return piece_.size();
    size_t best = begin + kMinSegment;
    uint32_t best_rank = 0;
    for (size_t cut = best; cut <= begin + kMaxSegment; ++cut) {
      const uint32_t rank = vocab_.PairRank(bytes_[cut - 1], bytes_[cut]);
      if (rank >= best_rank) {
        best_rank = rank;
        best = cut;
      }
    }
    return best;
  }

  // The ids of piece_[begin, end) merged alone, into `out`; returns how many.
  size_t MergeSegment(size_t begin, size_t end, uint32_t* out) {
    const std::string_view bytes = piece_.substr(begin, end - begin);
    const uint64_t hash = HashBytes(bytes);
    SegmentCacheEntry& entry = caches_.segments[hash & (kSegmentCacheSize - 1)];
    if (entry.tag == vocab_.cache_tag() && entry.hash == hash &&
        entry.length == bytes.size() &&
        std::memcmp(entry.bytes, bytes.data(), bytes.size()) == 0) {
      std::copy_n(entry.ids, entry.count, out);
      return entry.count;
    }
    ++misses_;
    size_t n = 0;
    MergeSmall(vocab_, bytes, [&](uint32_t token) { out[n++] = token; });
    if (n <= kMaxCachedSegmentIds) {
      entry.tag = vocab_.cache_tag();
      entry.hash = hash;
      entry.length = static_cast<uint8_t>(bytes.size());
      entry.count = static_cast<uint8_t>(n);
      std::memcpy(entry.bytes, bytes.data(), bytes.size());
      std::copy_n(out, n, entry.ids);
    }
    return n;
  }

  bool Compatible(uint32_t left, uint32_t right) {
    return internal::Compatible(vocab_, caches_, left, right);
  }

  void Append(uint32_t id, size_t end) {
    ids_.push_back(id);
    ends_.push_back(static_cast<uint32_t>(end));
  }

  // Appends the m ids of the segment that starts at `begin`, redoing the
  // tokens around the cut when the two sides are not compatible. Returns
  // where the tokens now in ids_ end (the next segment starts there), or
  // kGaveUp.
  static constexpr size_t kGaveUp = SIZE_MAX;
  size_t Stitch(size_t begin, const uint32_t* segment, size_t m) {
    const size_t t = ids_.size();
    if (t == 0 || Compatible(ids_[t - 1], segment[0])) {
      size_t end = begin;
      for (size_t i = 0; i < m; ++i) {
        end += vocab_.Bytes(segment[i]).size();
        Append(segment[i], end);
      }
      return end;
    }
    // Redo the last k tokens before the cut and the first j after it.
    size_t k = 1;
    size_t j = 1;
    for (;;) {
      k = std::min(k, t);
      j = std::min(j, m);
      const size_t from = k == t ? 0 : ends_[t - k - 1];
      size_t to = begin;
      for (size_t i = 0; i < j; ++i) to += vocab_.Bytes(segment[i]).size();
      if (to - from > kMaxRedo || to - from > redo_budget_) return kGaveUp;
      redo_budget_ -= to - from;
      redone_ += to - from;
      redo_.clear();
      MergeAny(vocab_, piece_.substr(from, to - from), &redo_);
      // Where the redone stretch begins (ends) with the token that was
      // there, its neighbour pair is one that was already compatible.
      const bool left_ok = k == t || redo_.front() == ids_[t - k] ||
                           Compatible(ids_[t - k - 1], redo_.front());
      const bool right_ok = j == m || redo_.back() == segment[j - 1] ||
                            Compatible(redo_.back(), segment[j]);
      if (left_ok && right_ok) {
        ids_.resize(t - k);
        ends_.resize(t - k);
        // A stretch that reaches the end of the segment's tokens was merged
        // without what follows: its last tokens are left to the next
        // segment, as Merge leaves a segment's (else each such tail is
        // wrong again at the next cut and redone, over and over, in a
        // periodic run).
        size_t keep = redo_.size();
        if (j == m && to < piece_.size() && keep > 1) keep -= keep > 2 ? 2 : 1;
        size_t end = from;
        for (size_t i = 0; i < keep; ++i) {
          end += vocab_.Bytes(redo_[i]).size();
          Append(redo_[i], end);
        }
        for (size_t i = j; i < m; ++i) {
          end += vocab_.Bytes(segment[i]).size();
          Append(segment[i], end);
        }
        return end;
      }
      if (!left_ok) k *= 2;
      if (!right_ok) j *= 2;
    }
  }

  const Vocabulary& vocab_;
  std::string_view piece_;
  const unsigned char* bytes_;
  SegmentCaches& caches_;
  size_t redo_budget_;
  std::vector<uint32_t>& ids_;   // the thread's, cleared for this piece
  std::vector<uint32_t>& ends_;  // ends_[i]: where ids_[i] ends in the piece
  std::vector<uint32_t> redo_;
  size_t misses_ = 0;  // segments not found in the cache
  size_t redone_ = 0;  // bytes merged again around cuts
  bool not_repetitive_ = false;
  // Merge(true) judges the cache's hit rate past this many misses, and the
  // share of bytes redone past this many.
  static constexpr size_t kMissesSeen = 16;
  static constexpr size_t kRedoSeen = 1024;
};

// Whether every byte of `piece` is a symbol byte (SymbolTrie::IsSymbol).
bool AllSymbols(std::string_view piece) {
  unsigned char other = 0;
  for (const char c : piece) {
    const auto b = static_cast<unsigned char>(c);
    other |=
        static_cast<unsigned char>(b >= 0x80 || (b >= '0' && b <= '9') ||
                                   ((b | 0x20) >= 'a' && (b | 0x20) <= 'z'));
  }
  return other == 0;
}

// ---- Merging a long piece of symbols, left to right ----
//
// The rule above also says where the merge's tokens can be: the first k
// tokens of the merge of a text are the merge of the bytes they cover (their
// neighbours are compatible), so whatever sequence of tokens covers a prefix
// with every two neighbours compatible (and, alone, a token that merges into
// itself) is the merge of that prefix, and the only one. So the merge of the
// whole piece can be found by a search from the left (the method of GitHub's
// `bpe` crate): at each position try the tokens that start there (longest
// first, see Take) and keep the first one compatible with the token before
// it; when
// none is, the position is not a boundary of the merge (what precedes it is
// the only merge of that prefix, so no other path reaches it differently):
// mark it, step back one token and try that position's shorter tokens.
// Each position is marked at most once, so the search is linear in the
// piece, and it ends with every neighbour pair checked: the result is the
// merge, whatever order the candidates were tried in.
//
// Candidates come from the vocabulary's symbol trie, which lists every token
// that is a prefix of the text when the text is all symbol bytes; pieces
// with other bytes are left to the segments, and pieces made only of
// whitespace to WhitespaceMerger below. Checks go through the thread's pair
// cache: whitespace and punctuation use a few hundred tokens, so nearly
// every check is a hit. Random mixes of whitespace and punctuation, which
// defeat the segment cache, cost a trie walk and a cached check per token.
class SymbolMerger {
 public:
  SymbolMerger(const Vocabulary& vocab, std::string_view piece)
      : vocab_(vocab),
        trie_(vocab.symbol_trie()),
        piece_(piece),
        bytes_(reinterpret_cast<const unsigned char*>(piece.data())),
        caches_(ThreadSegmentCaches()),
        ids_(caches_.ids),
        ends_(caches_.ends),
        nodes_(caches_.nodes),
        dead_(caches_.dead),
        longest_(caches_.longest) {
    caches_.pairs.Use(vocab.cache_tag());
    caches_.StartPiece();
  }

  ~SymbolMerger() { caches_.EndPiece(); }
  SymbolMerger(const SymbolMerger&) = delete;
  SymbolMerger& operator=(const SymbolMerger&) = delete;

  // Merges the whole piece; false if the search found no merge (only when
  // the trie misses a candidate, as it would a symbol token over
  // SymbolTrie::kMaxLength bytes), leaving ids() unspecified.
  bool Merge() {
    const size_t n = piece_.size();
    dead_.assign(n / 64 + 1, 0);
    ids_.reserve(n / 2 + 1);
    ends_.reserve(n / 2 + 1);
    nodes_.reserve(n / 2 + 1);
    longest_.reserve(n / 2 + 1);
    size_t pos = 0;
    uint32_t longest = trie_.Longest(bytes_, n);
    uint32_t node = Take(pos, longest, longest, /*second=*/false);
    for (;;) {
      if (node != SymbolTrie::kNoNode) {
        pos += trie_.Length(node);
        ids_.push_back(trie_.Rank(node));
        ends_.push_back(static_cast<uint32_t>(pos));
        nodes_.push_back(node);
        longest_.push_back(longest);
        if (pos == n) return true;
        longest = trie_.Longest(bytes_ + pos, n - pos);
        node = Take(pos, longest, longest, /*second=*/false);
        continue;
      }
      if (ids_.empty()) return false;
      dead_[pos / 64] |= uint64_t{1} << (pos % 64);
      const uint32_t back = nodes_.back();
      longest = longest_.back();
      ids_.pop_back();
      ends_.pop_back();
      nodes_.pop_back();
      longest_.pop_back();
      pos = ends_.empty() ? 0 : ends_.back();
      node = Take(pos, longest, trie_.Shorter(back),
                  SplitsRun(pos + trie_.Length(back)));
    }
  }

  const std::vector<uint32_t>& ids() const { return ids_; }

 private:
  bool Dead(size_t pos) const { return (dead_[pos / 64] >> (pos % 64)) & 1; }

  // Whether `end` falls between two equal bytes.
  bool SplitsRun(size_t end) const {
    return end < piece_.size() && bytes_[end - 1] == bytes_[end];
  }

  // The first candidate at `pos`, from `node` on, that may follow the
  // tokens so far and ends at no dead position, or kNoNode. Candidates are
  // tried longest first, those that end inside a run of one byte after all
  // others (the second pass): the low-rank merges of such runs ("\n\n",
  // two spaces) make a token boundary there rare, and each wrong guess costs
  // a step forward and back.
  uint32_t Take(size_t pos, uint32_t longest, uint32_t node, bool second) {
    const size_t n = piece_.size();
    for (;;) {
      for (; node != SymbolTrie::kNoNode; node = trie_.Shorter(node)) {
        const size_t end = pos + trie_.Length(node);
        if (SplitsRun(end) != second) continue;
        if (end < n && Dead(end)) continue;
        if (Fits(node, pos)) return node;
      }
      if (second) return SymbolTrie::kNoNode;
      second = true;
      node = longest;
    }
  }

  // Whether the token of trie node `node`, starting at `pos`, may follow
  // the tokens so far: it merges into itself when it is the first, else it
  // is compatible with the one before (through the thread's pair cache).
  bool Fits(uint32_t node, size_t pos) {
    if (ids_.empty()) return trie_.Reachable(node);
    const uint32_t left = ids_.back();
    const uint32_t right = trie_.Rank(node);
    if (const int known = caches_.pairs.Find(left, right); known >= 0) {
      return known != 0;
    }
    const bool compatible = trie_.Compatible(
        nodes_.back(), node, piece_.data() + pos,
        [this](std::string_view bytes) { return vocab_.RankOrNone(bytes); });
    caches_.pairs.Add(left, right, compatible);
    return compatible;
  }

  const Vocabulary& vocab_;
  const SymbolTrie& trie_;
  std::string_view piece_;
  const unsigned char* bytes_;
  SegmentCaches& caches_;
  std::vector<uint32_t>& ids_;    // the thread's, cleared for this piece
  std::vector<uint32_t>& ends_;   // ends_[i]: where ids_[i] ends in the piece
  std::vector<uint32_t>& nodes_;  // nodes_[i]: ids_[i]'s trie node
  std::vector<uint64_t>& dead_;   // positions that are not boundaries
  // The longest candidate where ids_[i] starts.
  std::vector<uint32_t>& longest_;
};

// ---- Merging a long piece of whitespace, right to left ----
//
// The same search, mirrored: the last k tokens of the merge of a text are
// the merge of the bytes they cover, so it can run from the end of the
// piece to its start, trying the tokens that end at each position (longest
// first, the Unlikely ones last) and keeping the
// first compatible with the token after it; a position where none is, is
// not a boundary of the merge. For whitespace the tokens that end at every
// position come from one pass of the whitespace trie's automaton
// (whitespace_trie.h) before the search, where the search from the left
// walked the symbol trie again from each position it reached: on random
// whitespace that walk, with its mispredicted end, was most of the time.
class WhitespaceMerger {
 public:
  // Precondition: vocab.symbol_trie().whitespace().usable() and
  // WhitespaceTrie::Applies(piece).
  WhitespaceMerger(const Vocabulary& vocab, std::string_view piece)
      : vocab_(vocab),
        symbols_(vocab.symbol_trie()),
        trie_(symbols_.whitespace()),
        piece_(piece),
        bytes_(reinterpret_cast<const unsigned char*>(piece.data())),
        caches_(ThreadSegmentCaches()),
        ids_(caches_.ids),
        starts_(caches_.ends),
        states_(caches_.nodes),
        dead_(caches_.dead),
        longest_(caches_.longest),
        ending_(caches_.ending) {
    caches_.StartPiece();
  }

  ~WhitespaceMerger() { caches_.EndPiece(); }
  WhitespaceMerger(const WhitespaceMerger&) = delete;
  WhitespaceMerger& operator=(const WhitespaceMerger&) = delete;

  // Merges the whole piece; false if the search found no merge (only when
  // a token is missing from the trie, as one over SymbolTrie::kMaxLength
  // bytes would be), leaving ids() unspecified.
  bool Merge() {
    const size_t n = piece_.size();
    dead_.assign(n / 64 + 1, 0);
    ending_.resize(n + 1);
    trie_.Scan(bytes_, n, ending_.data());
    ids_.reserve(n / 2 + 1);
    starts_.reserve(n / 2 + 1);
    states_.reserve(n / 2 + 1);
    longest_.reserve(n / 2 + 1);
    size_t pos = n;
    uint32_t longest = ending_[n];
    uint32_t state = Take(pos, longest, longest, /*second=*/false);
    for (;;) {
      if (state != WhitespaceTrie::kNoNode) {
        pos -= trie_.Length(state);
        ids_.push_back(trie_.Rank(state));
        starts_.push_back(static_cast<uint32_t>(pos));
        states_.push_back(state);
        longest_.push_back(longest);
        if (pos == 0) {
          std::reverse(ids_.begin(), ids_.end());
          return true;
        }
        longest = ending_[pos];
        state = Take(pos, longest, longest, /*second=*/false);
        continue;
      }
      if (ids_.empty()) return false;
      dead_[pos / 64] |= uint64_t{1} << (pos % 64);
      const uint32_t back = states_.back();
      longest = longest_.back();
      ids_.pop_back();
      starts_.pop_back();
      states_.pop_back();
      longest_.pop_back();
      pos = starts_.empty() ? n : starts_.back();
      state = Take(pos, longest, trie_.Shorter(back),
                   Unlikely(pos - trie_.Length(back), back));
    }
  }

  // The tokens, in order, after Merge returned true.
  const std::vector<uint32_t>& ids() const { return ids_; }

 private:
  bool Dead(size_t pos) const { return (dead_[pos / 64] >> (pos % 64)) & 1; }

  // Whether the token of `state`, starting at `start`, is an unlikely
  // guess, tried only after the others: it starts inside a run of one byte,
  // or the two bytes across its start make a pair of lower rank than its
  // own first two (in " \n   \n" the token "\n   \n" is compatible with
  // what follows, but " \n" merges first and takes its line feed).
  bool Unlikely(size_t start, uint32_t state) const {
    if (start == 0) return false;
    if (bytes_[start - 1] == bytes_[start]) return true;
    const uint32_t across = vocab_.PairRank(bytes_[start - 1], bytes_[start]);
    const uint32_t inside =
        trie_.Length(state) < 2
            ? kNoRank
            : vocab_.PairRank(bytes_[start], bytes_[start + 1]);
    return across < inside;
  }

  // The first candidate ending at `pos`, from `state` on, that may precede
  // the tokens so far and starts at no dead position, or kNoNode: longest
  // first, the Unlikely ones after all others (the second pass).
  uint32_t Take(size_t pos, uint32_t longest, uint32_t state, bool second) {
    for (;;) {
      for (; state != WhitespaceTrie::kNoNode; state = trie_.Shorter(state)) {
        const size_t start = pos - trie_.Length(state);
        if (Unlikely(start, state) != second) continue;
        if (start > 0 && Dead(start)) continue;
        if (Fits(state, pos)) return state;
      }
      if (second) return WhitespaceTrie::kNoNode;
      second = true;
      state = longest;
    }
  }

  // Whether the token of `state`, ending at `pos`, may precede the tokens
  // so far: it merges into itself when it is the last of the piece, else it
  // is compatible with the one after (remembered by the whitespace trie).
  bool Fits(uint32_t state, size_t pos) {
    if (ids_.empty()) return trie_.Reachable(state);
    const uint32_t after = states_.back();
    return trie_.Compatible(state, after, [&] {
      return symbols_.Compatible(
          trie_.TrieNode(state), trie_.TrieNode(after), piece_.data() + pos,
          [this](std::string_view bytes) { return vocab_.RankOrNone(bytes); });
    });
  }

  const Vocabulary& vocab_;
  const SymbolTrie& symbols_;
  const WhitespaceTrie& trie_;
  std::string_view piece_;
  const unsigned char* bytes_;
  SegmentCaches& caches_;
  // The thread's buffers, cleared for this piece. The tokens are found
  // last first: ids_[i] starts at starts_[i] and is the token of state
  // states_[i]; longest_[i] is the longest candidate where it ends.
  std::vector<uint32_t>& ids_;
  std::vector<uint32_t>& starts_;
  std::vector<uint32_t>& states_;
  std::vector<uint64_t>& dead_;  // positions that are not boundaries
  std::vector<uint32_t>& longest_;
  std::vector<uint16_t>& ending_;  // WhitespaceTrie::Scan's
};

// ---- Cutting a long piece of symbols where no token can cross ----
//
// A merge only ever joins two parts into a token whose bytes are the text
// it covers. So where no token of the vocabulary contains the two bytes on
// either side of a position, no part of the merge can ever span it: every
// merge happens on one side, and each side, having the lowest-ranked pair
// of the whole text whenever one of its pairs merges, makes the merges it
// makes alone, in the same order. The merge of the piece is then the
// merges of its stretches between such positions, side by side, exactly.
//
// Random punctuation has such a position every three or four bytes (no
// token of cl100k_base has "$@" or "~;" in it), so its stretches are short
// and merge cheaply alone, without a single compatibility check; runs of
// whitespace have few (tokens combine spaces, tabs and line ends every
// way), and keep going to the search or the segments whole.

// The pairs of symbol bytes that some token of one vocabulary made only of
// symbol bytes has side by side, a bit each; and, hashed to a bit each, the
// triples of its symbol tokens of three bytes or more.
struct InnerPairs {
  // 65,536 bits.
  struct Bits {
    uint64_t words[65536 / 64] = {};
    bool Test(size_t i) const { return (words[i >> 6] >> (i & 63)) & 1; }
    void Set(size_t i) { words[i >> 6] |= uint64_t{1} << (i & 63); }
  };

  uint32_t tag = 0;  // the vocabulary's cache tag; 0: none yet
  Bits pairs;        // by Pair()
  // By TripleBit(): the first three bytes of the 2,000 or so tokens of three
  // bytes or more, and every three bytes side by side in them. A triple
  // reads as set when it is not about once in thirty, which costs only an
  // exact merge or a check that was not needed.
  Bits openings;
  Bits triples;

  // The pair `a` `b` as an index, the same as Vocabulary::PairRanks'.
  static size_t Pair(unsigned char a, unsigned char b) {
    return size_t{a} << 8 | b;
  }
  // The 24 bits of `pair` then `c` hashed to 16.
  static size_t TripleBit(size_t pair, unsigned char c) {
    return (static_cast<uint32_t>(pair << 8 | c) * 0x9E3779B1u) >> 16;
  }
  bool Has(size_t pair) const { return pairs.Test(pair); }
  bool Has(unsigned char a, unsigned char b) const { return Has(Pair(a, b)); }
  // False when no token of three bytes or more opens with `pair` then `c`.
  bool MayOpenLong(size_t pair, unsigned char c) const {
    return openings.Test(TripleBit(pair, c));
  }
  // False when no token has `pair` then `c` side by side.
  bool MayHold(size_t pair, unsigned char c) const {
    return triples.Test(TripleBit(pair, c));
  }
};

// A thread's InnerPairs, for the last four vocabularies it has seen (24 KB
// each).
struct KeptInnerPairs {
  static constexpr size_t kKept = 4;
  InnerPairs tables[kKept];
  size_t next = 0;
};
thread_local std::unique_ptr<KeptInnerPairs> kept_inner_pairs;

// The thread's InnerPairs for `vocab` if it has been built, else null.
const InnerPairs* BuiltInnerPairs(const Vocabulary& vocab) {
  if (kept_inner_pairs == nullptr) return nullptr;
  for (const InnerPairs& table : kept_inner_pairs->tables) {
    if (table.tag == vocab.cache_tag()) return &table;
  }
  return nullptr;
}

// The thread's InnerPairs for `vocab`: built by one pass over its tokens
// (3-6 ms) the first time a thread meets a long symbol piece of that
// vocabulary, or enough short ones (ShortSymbolsSeenEnough).
const InnerPairs& ThreadInnerPairs(const Vocabulary& vocab) {
  if (const InnerPairs* built = BuiltInnerPairs(vocab)) return *built;
  if (kept_inner_pairs == nullptr) {
    kept_inner_pairs = std::make_unique<KeptInnerPairs>();
  }
  KeptInnerPairs* kept = kept_inner_pairs.get();
  InnerPairs& table = kept->tables[kept->next];
  kept->next = (kept->next + 1) % KeptInnerPairs::kKept;
  table = InnerPairs{};
  for (uint32_t rank = 0; rank < vocab.size(); ++rank) {
    const std::string_view bytes = vocab.Bytes(rank);
    if (bytes.size() < 2) continue;
    bool symbols = true;
    for (const char c : bytes) {
      symbols = symbols && SymbolTrie::IsSymbol(static_cast<unsigned char>(c));
    }
    if (!symbols) continue;
    const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
    for (size_t i = 0; i + 1 < bytes.size(); ++i) {
      const size_t pair = InnerPairs::Pair(u[i], u[i + 1]);
      table.pairs.Set(pair);
      if (i + 2 < bytes.size()) {
        const size_t triple = InnerPairs::TripleBit(pair, u[i + 2]);
        table.triples.Set(triple);
        if (i == 0) table.openings.Set(triple);
      }
    }
  }
  table.tag = vocab.cache_tag();
  return table;
}

// Appends the merge `merger` found; false when it found none.
template <typename Merger, typename Emit>
bool MergeWith(Merger&& merger, Emit&& emit) {
  if (!merger.Merge()) return false;
  for (uint32_t id : merger.ids()) emit(id);
  return true;
}

// The search from the right over the whitespace trie for a piece made only
// of whitespace, else the search from the left over the symbol trie; false
// when it found no merge.
template <typename Emit>
bool MergeBySearch(const Vocabulary& vocab, std::string_view piece,
                   Emit&& emit) {
  if (vocab.symbol_trie().whitespace().usable() &&
      WhitespaceTrie::Applies(piece)) {
    return MergeWith(WhitespaceMerger(vocab, piece), emit);
  }
  return MergeWith(SymbolMerger(vocab, piece), emit);
}

// A long piece of symbols, whole: the segments when it repeats itself, else
// the search; the run heap when both give up.
template <typename Emit>
void MergeSymbolRun(const Vocabulary& vocab, std::string_view piece,
                    Emit&& emit) {
  // A piece that repeats itself (blank lines, rules of "-=") is fastest
  // from the segment cache; the search walks the trie as deep as the
  // longest token at each position, as long as 128 bytes in such runs.
  // A run of one token (a letter, a space) defeats the cuts and goes to
  // the run heap, as below.
  bool not_repetitive;
  {
    SegmentMerger segments(vocab, piece);
    if (segments.Merge(/*only_if_repetitive=*/true)) {
      for (uint32_t id : segments.ids()) emit(id);
      return;
    }
    not_repetitive = segments.not_repetitive();
  }
  if (not_repetitive && MergeBySearch(vocab, piece, emit)) return;
  MergeRuns(vocab, piece, emit);
}

// Between the cuts, most of random punctuation merges in pairs of bytes
// only, and that merge needs no search. Where no token of three bytes or
// more is made, each pair's rank is fixed from the start, and a merged pair
// makes three bytes or more with either neighbour, which is no token: the
// merge is "take the pairs in order of (rank, position), each one whose two
// bytes are both still free", and pair j is taken exactly when neither
// neighbour was taken before it. Its left neighbour goes first when its
// rank is lower or equal, and is then taken exactly when nothing blocked it
// from its own left: in a run of pairs each going after the one on its
// left, the first is free on its left, the second blocked, the third free,
// and so on. Likewise to the right, with a strictly lower rank going first.
// So the pairs taken follow from where such runs start, which a few word
// operations find for 64 pairs at a time.
//
// Whether that is the merge is then checked: the merge of a text is the one
// tokenization of it into compatible neighbours, and two neighbours of the
// pairs' tokenization can only be incompatible when a longer token may
// open within their bytes (with pairs only, they merge back into
// themselves). Only those are checked, through the thread's pair memo; a
// stretch with an incompatible pair is merged alone, exactly, instead.
// Merging every stretch alone cost a call, a setup and a scan per merge,
// most of the cost of random punctuation.

// A chunk's positions, a bit each: position j is bit j % 64 of word j / 64.
constexpr size_t kChunk = 256;
constexpr size_t kChunkWords = kChunk / 64;
using ChunkBits = std::array<uint64_t, kChunkWords>;

// Bits [0, end).
ChunkBits FirstBits(size_t end) {
  ChunkBits out{};
  for (size_t w = 0; w < kChunkWords; ++w) {
    const size_t from = w * 64;
    out[w] = end >= from + 64 ? ~uint64_t{0}
             : end > from     ? (uint64_t{1} << (end - from)) - 1
                              : 0;
  }
  return out;
}

// Bit j of the result is bit j + k of `x`, for k in [1, 63].
ChunkBits ShiftDown(const ChunkBits& x, unsigned k) {
  ChunkBits out{};
  for (size_t w = 0; w < kChunkWords; ++w) {
    out[w] = x[w] >> k | (w + 1 < kChunkWords ? x[w + 1] << (64 - k) : 0);
  }
  return out;
}

// The chunk's positions in reverse order: bit j becomes bit kChunk - 1 - j.
ChunkBits Reversed(const ChunkBits& x) {
  ChunkBits out{};
  for (size_t w = 0; w < kChunkWords; ++w) {
    uint64_t v = __builtin_bswap64(x[kChunkWords - 1 - w]);
    v = (v >> 4 & 0x0F0F0F0F0F0F0F0Full) | (v & 0x0F0F0F0F0F0F0F0Full) << 4;
    v = (v >> 2 & 0x3333333333333333ull) | (v & 0x3333333333333333ull) << 2;
    v = (v >> 1 & 0x5555555555555555ull) | (v & 0x5555555555555555ull) << 1;
    out[w] = v;
  }
  return out;
}

// The set bits of `runs` at an even distance from the lowest bit of their
// run of set bits. Adding a run's lowest bit to the run clears it by the
// carry, so the runs that start at even positions are found apart from
// those that start at odd ones, and each keeps the bits of its own parity.
ChunkBits EvenInRuns(const ChunkBits& runs) {
  constexpr uint64_t kEven = 0x5555555555555555ull;
  ChunkBits out{};
  uint64_t carry = 0;  // 1: the word before ends inside a run
  uint64_t even = 0;   // 1: that run reaches bit 0 at an even distance
  for (size_t w = 0; w < kChunkWords; ++w) {
    const uint64_t x = runs[w];
    const uint64_t starts = x & ~(x << 1 | carry);
    // A run going on from the word before counts as starting at bit 0, at
    // an even position when its distance there is even, else at an odd.
    const uint64_t goes_on = x & carry;
    const uint64_t even_starts = (starts & kEven) | (goes_on & even);
    const uint64_t odd_starts = (starts & ~kEven) | (goes_on & (even ^ 1));
    out[w] =
        (x & ~(x + even_starts) & kEven) | (x & ~(x + odd_starts) & ~kEven);
    carry = x >> 63;
    even = (out[w] >> 63 ^ 1) & carry;
  }
  return out;
}

// MergeSmall's knowledge of a stretch of symbols: a span whose first three
// bytes open no token of three bytes or more is no token.
struct NoLongOpening {
  const InnerPairs& inner;
  const unsigned char* bytes;  // the stretch's
  bool Whole(size_t begin, size_t) const {
    return !inner.MayOpenLong(InnerPairs::Pair(bytes[begin], bytes[begin + 1]),
                              bytes[begin + 2]);
  }
};

// One chunk of a long piece of symbol bytes, up to kChunk bytes ending at a
// cut, merged in pairs where that is the merge. Not a template, so that the
// three callers of MergeSymbols share one copy.
class PairChunk {
 public:
  PairChunk(const Vocabulary& vocab, const InnerPairs& inner)
      : vocab_(vocab), inner_(inner), pair_ranks_(vocab.PairRanks()) {}

  // False when the vocabulary cannot be merged in pairs (moved from).
  bool usable() const { return pair_ranks_ != nullptr; }

  // Merges the chunk that starts at `bytes`: the `window` bytes up to
  // their last cut (all of them when `ends_piece`). Returns its length, or
  // 0 when the window has no cut.
  size_t Merge(const unsigned char* bytes, size_t window, bool ends_piece);

  // After Merge: where tokens start, a bit each.
  const ChunkBits& starts() const { return starts_; }
  // The token starting at `at`, a start.
  uint32_t Token(size_t at) const {
    const uint32_t mask = 0 - static_cast<uint32_t>(Taken(at));
    return (rank_[at] & mask) | (vocab_.ByteRank(bytes_[at]) & ~mask);
  }
  // The stretches to merge alone instead, in order: [redo(2i), redo(2i+1)),
  // then kNoStart.
  uint32_t redo(size_t i) const { return redo_[i]; }
  static constexpr uint32_t kNoStart = UINT32_MAX;

 private:
  bool Taken(size_t at) const { return taken_[at >> 6] >> (at & 63) & 1; }
  // Whether no token can cross position `at` of a chunk of `length` bytes:
  // a cut, or where the two bytes across are no token and no three bytes
  // around them are in any (a longer token across `at` would hold one of
  // those). Finer than the cuts, so a stretch merged alone is shorter.
  bool Uncrossable(size_t at, size_t length) const {
    if (at == 0 || at >= length) return true;
    const unsigned char* b = bytes_;
    const size_t pair = InnerPairs::Pair(b[at - 1], b[at]);
    if (!inner_.Has(pair)) return true;
    if (pair_ranks_[pair] != kNoRank) return false;
    return (at < 2 ||
            !inner_.MayHold(InnerPairs::Pair(b[at - 2], b[at - 1]), b[at])) &&
           (at + 1 >= length || !inner_.MayHold(pair, b[at + 1]));
  }
  size_t TokenEnd(size_t at) const { return at + 1 + Taken(at); }
  // Finds the neighbours to check and records the stretches of those that
  // are incompatible.
  void Check(size_t length, const ChunkBits& opens);

  const Vocabulary& vocab_;
  const InnerPairs& inner_;
  const uint32_t* pair_ranks_;
  SegmentCaches* caches_ = nullptr;  // the thread's, once a check needs it
  const unsigned char* bytes_ = nullptr;
  uint32_t rank_[kChunk];  // of the pair at j
  ChunkBits taken_{};
  ChunkBits starts_{};
  uint32_t redo_[2 * kChunk + 1];
};

size_t PairChunk::Merge(const unsigned char* bytes, size_t window,
                        bool ends_piece) {
  const unsigned char* b = bytes_ = bytes;
  // The chunk ends at the window's last cut, the piece's end at the latest.
  size_t length = window;
  if (!ends_piece) {
    while (length > 0 && inner_.Has(b[length - 1], b[length])) --length;
    if (length == 0) return 0;
  }
  // The pairs' ranks (none across a cut: a two-byte token has its pair
  // inside) and where a token of three bytes or more may open, one byte
  // each; then, in a loop the compiler vectorizes, which pairs go after
  // their left neighbour and which are tokens; then the bytes packed into
  // bits, eight by a multiplication.
  // Zeroed only as far as the packing reads: short pieces come here too,
  // and clearing all of the three arrays took a fifth of their time.
  uint8_t opens8[kChunk];
  uint8_t after_left8[kChunk];
  uint8_t ranked8[kChunk];
  const size_t packed = (length + 7) & ~size_t{7};
  std::memset(opens8, 0, packed);
  std::memset(after_left8, 0, packed);
  std::memset(ranked8, 0, packed);
  size_t j = 0;
  for (; j + 2 < length; ++j) {
    const size_t pair = InnerPairs::Pair(b[j], b[j + 1]);
    rank_[j] = pair_ranks_[pair];
    opens8[j] = inner_.MayOpenLong(pair, b[j + 2]);
  }
  if (j + 1 < length) rank_[j] = pair_ranks_[InnerPairs::Pair(b[j], b[j + 1])];
  rank_[length - 1] = kNoRank;  // the pair across the chunk's end
  // after_left8[0] stays 0: the first pair has no left neighbour.
  for (j = 1; j + 1 < length; ++j) {
    after_left8[j] = rank_[j - 1] <= rank_[j];
  }
  for (j = 0; j < length; ++j) ranked8[j] = rank_[j] != kNoRank;
  ChunkBits opens{};
  ChunkBits after_left{};
  ChunkBits ranked{};
  auto pack = [](const uint8_t* bytes8) {
    uint64_t eight;
    std::memcpy(&eight, bytes8, 8);
    return (eight * 0x0102040810204080ull) >> 56;
  };
  for (size_t at = 0; at < length; at += 8) {
    const unsigned shift = at & 63;
    opens[at >> 6] |= pack(opens8 + at) << shift;
    after_left[at >> 6] |= pack(after_left8 + at) << shift;
    ranked[at >> 6] |= pack(ranked8 + at) << shift;
  }
  // Pair j goes after its right neighbour when that one's rank is strictly
  // lower, which is pair j + 1 not going after pair j; the last pair's
  // right neighbour crosses the chunk's end, and is no pair.
  const ChunkBits within = FirstBits(length >= 2 ? length - 2 : 0);
  const ChunkBits after_right_of = ShiftDown(after_left, 1);
  ChunkBits after_right{};
  for (size_t w = 0; w < kChunkWords; ++w) {
    after_right[w] = ~after_right_of[w] & within[w];
  }
  const ChunkBits blocked_left = EvenInRuns(after_left);
  const ChunkBits blocked_right = Reversed(EvenInRuns(Reversed(after_right)));
  const ChunkBits inside = FirstBits(length);
  for (size_t w = 0; w < kChunkWords; ++w) {
    taken_[w] = ranked[w] & ~blocked_left[w] & ~blocked_right[w];
    opens[w] &= within[w];
  }
  for (size_t w = 0; w < kChunkWords; ++w) {
    const uint64_t covered = taken_[w] << 1 | (w > 0 ? taken_[w - 1] >> 63 : 0);
    starts_[w] = ~covered & inside[w];
  }
  Check(length, opens);
  return length;
}

void PairChunk::Check(size_t length, const ChunkBits& opens) {
  // Those where a longer token may open at the first's start or, when both
  // are pairs, at its second byte.
  const ChunkBits taken1 = ShiftDown(taken_, 1);
  const ChunkBits taken2 = ShiftDown(taken_, 2);
  const ChunkBits opens1 = ShiftDown(opens, 1);
  size_t redos = 0;
  for (size_t w = 0; w < kChunkWords; ++w) {
    uint64_t check =
        starts_[w] & ((taken_[w] & (opens[w] | (opens1[w] & taken2[w]))) |
                      (~taken_[w] & opens[w] & taken1[w]));
    for (; check != 0; check &= check - 1) {
      const size_t first = w * 64 + static_cast<size_t>(__builtin_ctzll(check));
      if (redos > 0 && first < redo_[redos - 1]) continue;  // redone anyway
      const size_t second = TokenEnd(first);
      if (caches_ == nullptr) {
        caches_ = &ThreadSegmentCaches();
        caches_->pairs.Use(vocab_.cache_tag());
      }
      if (Compatible(vocab_, *caches_, Token(first), Token(second))) continue;
      size_t from = first;
      while (!Uncrossable(from, length)) --from;
      size_t to = TokenEnd(second);
      while (!Uncrossable(to, length)) ++to;
      redo_[redos++] = static_cast<uint32_t>(from);
      redo_[redos++] = static_cast<uint32_t>(to);
    }
  }
  redo_[redos] = kNoStart;
}

// A piece made only of symbol bytes, and no token whole, a chunk of
// stretches between the positions no token can cross at a time: in pairs
// where that is the merge, else stretch by stretch.
template <typename Emit>
void MergeSymbols(const Vocabulary& vocab, const InnerPairs& inner,
                  std::string_view piece, Emit&& emit) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  auto merge_stretch = [&](size_t begin, size_t end) {
    const size_t length = end - begin;
    if (length < kBpeHeapThreshold) {
      // Merged, never looked up whole: a stretch that is a token the
      // merges cannot reach (tiktoken takes a piece whole, not a part of
      // one) merges into several.
      MergeSmall(vocab, piece.substr(begin, length), emit,
                 NoLongOpening{inner, bytes + begin});
    } else {
      MergeSymbolRun(vocab, piece.substr(begin, length), emit);
    }
  };
  PairChunk chunk(vocab, inner);
  if (!chunk.usable()) {
    merge_stretch(0, n);
    return;
  }
  size_t begin = 0;
  while (begin < n) {
    const size_t window = std::min(kChunk, n - begin);
    const size_t length =
        chunk.Merge(bytes + begin, window, begin + window == n);
    // A window with no cut (whitespace, a repeated rule) ends the search:
    // the rest of the piece is merged whole, which is as exact and spares
    // the passes to pieces that gain nothing from them.
    if (length == 0) {
      merge_stretch(begin, n);
      return;
    }
    size_t r = 0;
    size_t skip_to = 0;  // the end of the stretch last merged alone
    for (size_t w = 0; w < kChunkWords; ++w) {
      for (uint64_t bits = chunk.starts()[w]; bits != 0; bits &= bits - 1) {
        const size_t at = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
        if (at < skip_to) continue;
        if (at == chunk.redo(r)) {
          skip_to = chunk.redo(r + 1);
          merge_stretch(begin + at, begin + skip_to);
          r += 2;
          continue;
        }
        emit(chunk.Token(at));
      }
    }
    begin += length;
  }
}

// A long piece: stretches of symbols when it is all symbol bytes, else
// segments; the run heap when the segments give up.
template <typename Emit>
void MergeLarge(const Vocabulary& vocab, std::string_view piece, Emit&& emit) {
  // The segment and symbol mergers keep token ends as 32-bit offsets.
  if (piece.size() > UINT32_MAX) {
    MergeRuns(vocab, piece, emit);
    return;
  }
  if (AllSymbols(piece)) {
    MergeSymbols(vocab, ThreadInnerPairs(vocab), piece, emit);
    return;
  }
  SegmentMerger segments(vocab, piece);
  if (segments.Merge()) {
    for (uint32_t id : segments.ids()) emit(id);
    return;
  }
  MergeRuns(vocab, piece, emit);
}

// Whether a short piece of symbols may use the tables that long ones build
// on first use (a thread's InnerPairs, the symbol trie): those that are
// built, else all once the thread has merged kBuildAfter bytes of such
// pieces without them (about 2 ms). Building them (3-6 ms for InnerPairs,
// 17-34 ms with the symbol trie) would multiply the time of a short text.
bool ShortSymbolsSeenEnough(size_t bytes) {
  constexpr size_t kBuildAfter = size_t{64} << 10;
  thread_local size_t merged_slowly = 0;
  if (merged_slowly >= kBuildAfter) return true;
  merged_slowly += bytes;
  return false;
}

// Whether a byte is repeated in most places of `piece` (the rules and
// borders of ASCII tables, "=====", "~~~~"): the search from the left
// merges those in one pass, where the pairs leave long stretches to merge
// alone.
bool Repetitive(std::string_view piece) {
  size_t repeats = 0;
  for (size_t i = 1; i < piece.size(); ++i) repeats += piece[i] == piece[i - 1];
  return 2 * repeats >= piece.size();
}

// Merges a short piece (under kBpeHeapThreshold bytes) made only of
// symbols as long ones are: in pairs (MergeSymbols), or by the search from
// the left when it is Repetitive. MergeSmall rescans the piece for every
// merge and looks up every span it makes; on random punctuation cut by
// spaces this is about 1.5 times as fast. False, having emitted nothing,
// when the piece is not all symbols, is whitespace alone (short pieces of
// indentation, which the pairs made slower), is too short to gain, or
// while the tables it needs are not worth building
// (ShortSymbolsSeenEnough).
template <typename Emit>
bool MergeShortSymbols(const Vocabulary& vocab, std::string_view piece,
                       Emit&& emit) {
  constexpr size_t kMinLength = 8;
  if (piece.size() < kMinLength || !AllSymbols(piece) ||
      WhitespaceTrie::Applies(piece)) {
    return false;
  }
  const InnerPairs* inner = BuiltInnerPairs(vocab);
  const bool trie = vocab.symbol_trie_built();
  const bool seen_enough =
      (inner != nullptr && trie) || ShortSymbolsSeenEnough(piece.size());
  if (inner == nullptr) {
    if (!seen_enough) return false;
    inner = &ThreadInnerPairs(vocab);
  }
  // A piece whose first three bytes open no token of three bytes or more
  // is no token; any other is looked up whole first, as tiktoken does.
  const auto* b = reinterpret_cast<const unsigned char*>(piece.data());
  if (inner->MayOpenLong(InnerPairs::Pair(b[0], b[1]), b[2])) {
    if (const uint32_t whole = RankOf(vocab, piece); whole != kNoRank) {
      emit(whole);
      return true;
    }
  }
  if ((trie || seen_enough) && Repetitive(piece) &&
      MergeWith(SymbolMerger(vocab, piece), emit)) {
    return true;
  }
  MergeSymbols(vocab, *inner, piece, emit);
  return true;
}

}  // namespace

void BytePairEncode(const Vocabulary& vocab, std::string_view piece,
                    std::vector<uint32_t>* out) {
  if (piece.size() < kBpeHeapThreshold) {
    uint32_t ids[kBpeHeapThreshold];
    const size_t n = BytePairEncodeShort(vocab, piece, ids);
    out->insert(out->end(), ids, ids + n);
    return;
  }
  if (const std::optional<uint32_t> whole = vocab.Rank(piece)) {
    out->push_back(*whole);
    return;
  }
  // Appended a block at a time: the callers of emit are many and large,
  // and GCC left a call to push_back per token in some of them.
  constexpr size_t kBlock = 256;
  uint32_t block[kBlock];
  size_t held = 0;
  MergeLarge(vocab, piece, [&](uint32_t token) {
    block[held++] = token;
    if (held == kBlock) {
      out->insert(out->end(), block, block + kBlock);
      held = 0;
    }
  });
  out->insert(out->end(), block, block + held);
}

size_t BytePairEncodeShort(const Vocabulary& vocab, std::string_view piece,
                           uint32_t* ids) {
  size_t n = 0;
  auto emit = [&](uint32_t token) { ids[n++] = token; };
  if (MergeShortSymbols(vocab, piece, emit)) return n;
  if (const uint32_t whole = RankOf(vocab, piece); whole != kNoRank) {
    ids[0] = whole;
    return 1;
  }
  // The piece is no token, so no merge can make all of it one: two bytes
  // stay two, and three bytes make at most one merge, of their lower-ranked
  // pair (the left one on a tie). Pieces of three bytes that are no token
  // are a third of those of random words (base64) and needed no lookup
  // beyond the pair table, where the general loop made one more.
  const auto* b = reinterpret_cast<const unsigned char*>(piece.data());
  if (piece.size() == 2) {
    ids[0] = vocab.ByteRank(b[0]);
    ids[1] = vocab.ByteRank(b[1]);
    return 2;
  }
  if (piece.size() == 3) {
    const uint32_t left = vocab.PairRank(b[0], b[1]);
    const uint32_t right = vocab.PairRank(b[1], b[2]);
    if (left == kNoRank && right == kNoRank) {
      ids[0] = vocab.ByteRank(b[0]);
      ids[1] = vocab.ByteRank(b[1]);
      ids[2] = vocab.ByteRank(b[2]);
      return 3;
    }
    if (left <= right) {
      ids[0] = left;
      ids[1] = vocab.ByteRank(b[2]);
    } else {
      ids[0] = vocab.ByteRank(b[0]);
      ids[1] = right;
    }
    return 2;
  }
  MergeSmall(vocab, piece, emit, WholeIsNoToken{piece.size()});
  return n;
}

void BytePairEncodeWith(BpeMethod method, const Vocabulary& vocab,
                        std::string_view piece, std::vector<uint32_t>* out) {
  auto emit = [&](uint32_t token) { out->push_back(token); };
  switch (method) {
    case BpeMethod::kArray:
      MergeSmall(vocab, piece, emit);
      return;
    case BpeMethod::kRuns:
      MergeRuns(vocab, piece, emit);
      return;
    case BpeMethod::kSegments: {
      SegmentMerger segments(vocab, piece);
      if (segments.Merge()) {
        for (uint32_t id : segments.ids()) emit(id);
      } else {
        MergeRuns(vocab, piece, emit);
      }
      return;
    }
    case BpeMethod::kSymbols:
      if (!AllSymbols(piece) || !MergeWith(SymbolMerger(vocab, piece), emit)) {
        MergeRuns(vocab, piece, emit);
      }
      return;
    case BpeMethod::kWhitespace:
      if (!vocab.symbol_trie().whitespace().usable() ||
          !WhitespaceTrie::Applies(piece) ||
          !MergeWith(WhitespaceMerger(vocab, piece), emit)) {
        MergeRuns(vocab, piece, emit);
      }
      return;
    case BpeMethod::kLong:
      MergeLarge(vocab, piece, emit);
      return;
  }
}

size_t BytePairCount(const Vocabulary& vocab, std::string_view piece) {
  if (piece.size() < kBpeHeapThreshold) {
    uint32_t ids[kBpeHeapThreshold];
    return BytePairEncodeShort(vocab, piece, ids);
  }
  if (vocab.Rank(piece)) return 1;
  size_t count = 0;
  MergeLarge(vocab, piece, [&](uint32_t) { ++count; });
  return count;
}

}  // namespace ctxkit::internal
