#include "lib/tokenizer/bpe.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace ctxkit::internal {
namespace {

constexpr uint32_t kNoRank = std::numeric_limits<uint32_t>::max();

uint32_t RankOf(const Vocabulary& vocab, std::string_view bytes) {
  const std::optional<uint32_t> rank = vocab.Rank(bytes);
  return rank ? *rank : kNoRank;
}

// Calls emit(begin, end) for each final part of `piece`, in order.
//
// tiktoken's method: parts[i] holds a boundary and the rank of merging the
// part starting there with the next one; each round merges the first
// minimum and updates the two ranks that changed.
template <typename Emit>
void MergeSmall(const Vocabulary& vocab, std::string_view piece, Emit&& emit) {
  struct Part {
    uint32_t start;
    uint32_t rank;
  };
  const size_t n = piece.size();
  Part stack_parts[kBpeHeapThreshold + 1];
  Part* parts = stack_parts;
  size_t count = n + 1;
  for (size_t i = 0; i + 1 < n; ++i) {
    parts[i] = {static_cast<uint32_t>(i), RankOf(vocab, piece.substr(i, 2))};
  }
  parts[n - 1] = {static_cast<uint32_t>(n - 1), kNoRank};
  parts[n] = {static_cast<uint32_t>(n), kNoRank};

  // The rank of merging the parts at i and i + 1 (spanning to i + 2).
  auto pair_rank = [&](size_t i) -> uint32_t {
    if (i + 3 >= count) return kNoRank;
    return RankOf(vocab, piece.substr(parts[i].start,
                                      parts[i + 3].start - parts[i].start));
  };
  while (count > 2) {
    uint32_t best = kNoRank;
    size_t at = 0;
    for (size_t i = 0; i + 1 < count; ++i) {
      if (parts[i].rank < best) {
        best = parts[i].rank;
        at = i;
      }
    }
    if (best == kNoRank) break;
    parts[at].rank = pair_rank(at);
    if (at > 0) parts[at - 1].rank = pair_rank(at - 1);
    std::copy(parts + at + 2, parts + count, parts + at + 1);
    --count;
  }
  for (size_t i = 0; i + 1 < count; ++i) emit(parts[i].start, parts[i + 1].start);
}

// The same merges with a min-heap keyed by (rank, start): popping the
// smallest key is "the leftmost lowest-rank pair". Entries made stale by a
// merge are skipped when popped: a node's entry is current only if the node
// is alive and still has that rank.
//
// Every part is always a token, so the rank of merging two parts depends
// only on their two token ids; long pieces (runs, blobs) meet the same few
// pairs again and again, so those ranks are cached by id pair instead of
// hashing ever longer byte strings.
template <typename Emit>
void MergeLarge(const Vocabulary& vocab, std::string_view piece, Emit&& emit) {
  const size_t n = piece.size();
  struct Node {
    uint32_t start;
    uint32_t next;   // index of the next alive node; n for the end
    uint32_t prev;   // index of the previous alive node; kNoRank for none
    uint32_t token;  // this part's token id
    uint32_t rank;   // rank of merging this part with the next one
    bool alive;
  };
  std::vector<Node> nodes(n + 1);
  for (size_t i = 0; i <= n; ++i) {
    nodes[i] = {static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1),
                i == 0 ? kNoRank : static_cast<uint32_t>(i - 1),
                i < n ? RankOf(vocab, piece.substr(i, 1)) : kNoRank, kNoRank,
                true};
  }
  absl::flat_hash_map<uint64_t, uint32_t> pair_ranks;
  auto merged_rank = [&](uint32_t i) -> uint32_t {
    const uint32_t next = nodes[i].next;
    if (next >= n) return kNoRank;
    const uint64_t key = uint64_t{nodes[i].token} << 32 | nodes[next].token;
    auto [it, inserted] = pair_ranks.try_emplace(key, kNoRank);
    if (inserted) {
      const uint32_t after = nodes[next].next;
      it->second = RankOf(
          vocab, piece.substr(nodes[i].start, nodes[after].start - nodes[i].start));
    }
    return it->second;
  };
  using Entry = uint64_t;  // rank << 32 | node index (index == start)
  std::vector<Entry> heap;
  heap.reserve(n);
  for (uint32_t i = 0; i + 1 < n; ++i) {
    nodes[i].rank = merged_rank(i);
    if (nodes[i].rank != kNoRank) heap.push_back(Entry{nodes[i].rank} << 32 | i);
  }
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue(
      std::greater<Entry>(), std::move(heap));
  while (!queue.empty()) {
    const Entry top = queue.top();
    queue.pop();
    const uint32_t i = static_cast<uint32_t>(top);
    const uint32_t rank = static_cast<uint32_t>(top >> 32);
    if (!nodes[i].alive || nodes[i].rank != rank) continue;
    // Merge i with its next part; the merged part is the token `rank`.
    const uint32_t gone = nodes[i].next;
    nodes[gone].alive = false;
    nodes[i].next = nodes[gone].next;
    nodes[nodes[gone].next].prev = i;
    nodes[i].token = rank;
    nodes[i].rank = merged_rank(i);
    if (nodes[i].rank != kNoRank) queue.push(Entry{nodes[i].rank} << 32 | i);
    const uint32_t prev = nodes[i].prev;
    if (prev != kNoRank) {
      nodes[prev].rank = merged_rank(prev);
      if (nodes[prev].rank != kNoRank) queue.push(Entry{nodes[prev].rank} << 32 | prev);
    }
  }
  for (uint32_t i = 0; i < n; i = nodes[i].next) emit(nodes[i].start, nodes[nodes[i].next].start);
}

template <typename Emit>
void Merge(const Vocabulary& vocab, std::string_view piece, Emit&& emit) {
  if (piece.size() < kBpeHeapThreshold) {
    MergeSmall(vocab, piece, emit);
  } else {
    MergeLarge(vocab, piece, emit);
  }
}

}  // namespace

void BytePairEncode(const Vocabulary& vocab, std::string_view piece,
                    std::vector<uint32_t>* out) {
  if (const std::optional<uint32_t> whole = vocab.Rank(piece)) {
    out->push_back(*whole);
    return;
  }
  Merge(vocab, piece, [&](uint32_t begin, uint32_t end) {
    out->push_back(RankOf(vocab, piece.substr(begin, end - begin)));
  });
}

void BytePairEncodeWith(BpeMethod method, const Vocabulary& vocab,
                        std::string_view piece, std::vector<uint32_t>* out) {
  auto emit = [&](uint32_t begin, uint32_t end) {
    out->push_back(RankOf(vocab, piece.substr(begin, end - begin)));
  };
  if (method == BpeMethod::kArray) {
    MergeSmall(vocab, piece, emit);
  } else {
    MergeLarge(vocab, piece, emit);
  }
}

size_t BytePairCount(const Vocabulary& vocab, std::string_view piece) {
  if (vocab.Rank(piece)) return 1;
  size_t count = 0;
  Merge(vocab, piece, [&](uint32_t, uint32_t) { ++count; });
  return count;
}

}  // namespace ctxkit::internal
