#include "lib/tokenizer/bpe.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"

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
template <typename Emit>
void MergeSmall(const Vocabulary& vocab, std::string_view piece, Emit&& emit) {
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
void MergeLarge(const Vocabulary& vocab, std::string_view piece, Emit&& emit) {
  RunMerger merger(vocab, piece);
  merger.Merge();
  merger.Each([&](uint32_t token, uint32_t count) {
    for (uint32_t k = 0; k < count; ++k) emit(token);
  });
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
  MergeLarge(vocab, piece, [&](uint32_t token) { out->push_back(token); });
}

size_t BytePairEncodeShort(const Vocabulary& vocab, std::string_view piece,
                           uint32_t* ids) {
  if (const uint32_t whole = RankOf(vocab, piece); whole != kNoRank) {
    ids[0] = whole;
    return 1;
  }
  size_t n = 0;
  MergeSmall(vocab, piece, [&](uint32_t token) { ids[n++] = token; });
  return n;
}

void BytePairEncodeWith(BpeMethod method, const Vocabulary& vocab,
                        std::string_view piece, std::vector<uint32_t>* out) {
  auto emit = [&](uint32_t token) { out->push_back(token); };
  if (method == BpeMethod::kArray) {
    MergeSmall(vocab, piece, emit);
  } else {
    MergeLarge(vocab, piece, emit);
  }
}

size_t BytePairCount(const Vocabulary& vocab, std::string_view piece) {
  if (piece.size() < kBpeHeapThreshold) {
    uint32_t ids[kBpeHeapThreshold];
    return BytePairEncodeShort(vocab, piece, ids);
  }
  if (vocab.Rank(piece)) return 1;
  RunMerger merger(vocab, piece);
  merger.Merge();
  size_t count = 0;
  merger.Each([&](uint32_t, uint32_t n) { count += n; });
  return count;
}

}  // namespace ctxkit::internal
