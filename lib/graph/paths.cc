#include "lib/graph/paths.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace ctxkit::internal {
namespace {

// The node reached by crossing `edge` from `from`. A "both" adjacency hands
// over in-edges unreversed, so the far end is whichever endpoint is not
// `from`. Self-loops lead nowhere new, and an edge that does not touch
// `from` is a broken adjacency, not a way forward.
bool FarEnd(const PathEdge& edge, uint64_t from, uint64_t* next) {
  if (edge.source == edge.target) return false;
  if (edge.source == from) {
    *next = edge.target;
    return true;
  }
  if (edge.target == from) {
    *next = edge.source;
    return true;
  }
  return false;
}

// Whether `a` is the better of two edges joining the same two consecutive
// nodes: the heavier, then the smaller type, then by (source, target). NaN
// ranks below every weight so that this is a total order and the choice
// does not depend on the order the adjacency emits in.
bool PreferEdge(const PathEdge& a, const PathEdge& b) {
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  const double wa = std::isnan(a.weight) ? kNone : a.weight;
  const double wb = std::isnan(b.weight) ? kNone : b.weight;
  if (wa != wb) return wa > wb;
  if (a.type != b.type) return a.type < b.type;
  if (a.source != b.source) return a.source < b.source;
  return a.target < b.target;
}

PathResult Found(std::vector<uint64_t> nodes, std::vector<PathEdge> edges) {
  PathResult result;
  result.found = true;
  result.nodes = std::move(nodes);
  result.edges = std::move(edges);
  result.total_weight = 1;
  for (const PathEdge& edge : result.edges) result.total_weight *= edge.weight;
  return result;
}

// ---------------------------------------------------------------------------
// Fewest hops: bidirectional breadth-first search.
//
// The lexicographic rule is kept without predecessor lists. On the forward
// side each layer is ranked by its smallest path from the source: two such
// paths of equal length ending in v and w compare as (their predecessors'
// ranks, v and w), so a node only needs its best-ranked predecessor, and the
// ranks follow from one sort per layer. On the backward side every neighbour
// one layer nearer the target completes a shortest path, so the smallest
// one is the lexicographic choice. The answer crosses the meeting layer at
// the best-ranked meeting node: paths through different meeting nodes
// differ before the meeting, and the tail after it is already the smallest.

struct ForwardMark {
  int depth = 0;
  size_t rank = 0;       // within its layer, valid once the layer is complete
  size_t pred_rank = 0;  // the rank of `pred` in the previous layer
  uint64_t pred = 0;
  PathEdge edge;  // joins pred and this node
};

struct BackwardMark {
  int depth = 0;
  uint64_t next = 0;  // the smallest neighbour one layer nearer the target
  PathEdge edge;      // joins this node and next
};

// The path of the forward chain to `meeting`, then `edge` to `next` (a
// backward node) and the backward chain from `next` to the target; `edge`
// null when `meeting` is on both sides (then `next` is `meeting`).
PathResult JoinHops(const PathQuery& query,
                    const absl::flat_hash_map<uint64_t, ForwardMark>& forward,
                    const absl::flat_hash_map<uint64_t, BackwardMark>& backward,
                    uint64_t meeting, const PathEdge* edge, uint64_t next) {
  std::vector<uint64_t> nodes;
  std::vector<PathEdge> edges;
  for (uint64_t node = meeting; node != query.source;) {
    const ForwardMark& mark = forward.find(node)->second;
    nodes.push_back(node);
    edges.push_back(mark.edge);
    node = mark.pred;
  }
  nodes.push_back(query.source);
  std::reverse(nodes.begin(), nodes.end());
  std::reverse(edges.begin(), edges.end());
  if (edge != nullptr) {
    nodes.push_back(next);
    edges.push_back(*edge);
  }
  for (uint64_t node = next; node != query.target;) {
    const BackwardMark& mark = backward.find(node)->second;
    nodes.push_back(mark.next);
    edges.push_back(mark.edge);
    node = mark.next;
  }
  return Found(std::move(nodes), std::move(edges));
}

// Neither side expands more of its last layer than the answer needs, since
// the last layer is the largest one read (on graph_bench's 3,000 queries
// this cuts the adjacency reads from 344k to 267k, the same answers):
//  - forward: the layer is expanded in rank order, so the first node whose
//    expansion meets the other side is the answer's predecessor; once its
//    edges are all read (parallel edges), its smallest meeting neighbour
//    is the best-ranked meeting node and the rest of the layer is skipped;
//  - backward: the first meeting fixes the length, so the backward
//    expansion stops there and the answer is the first node of the forward
//    layer, in rank order, with a neighbour in the backward layer just
//    expanded from; its smallest such neighbour is the next node (what the
//    whole backward expansion would have kept as its mark) and the edge
//    between them the preferred one of the edges joining them.
absl::StatusOr<PathResult> FewestHops(const PathQuery& query,
                                      PathAdjacency adjacency) {
  absl::flat_hash_map<uint64_t, ForwardMark> forward;
  absl::flat_hash_map<uint64_t, BackwardMark> backward;
  forward[query.source].pred = query.source;
  backward[query.target].next = query.target;
  std::vector<uint64_t> forward_layer{query.source};
  std::vector<uint64_t> backward_layer{query.target};
  std::vector<uint64_t> grown;
  std::vector<std::pair<size_t, uint64_t>> order;
  int forward_depth = 0;
  int backward_depth = 0;
  // Edges read per node expanded so far, to size the maps before a layer
  // grows them: the last layer reads thousands of edges, and growing a map
  // of marks by doubling moves every mark each time.
  size_t expanded = 0;
  size_t emitted = 0;
  auto reserve_for = [&](auto& marks, size_t layer) {
    if (expanded == 0) return;
    constexpr size_t kMostReserved = size_t{1} << 20;
    marks.reserve(std::min(kMostReserved,
                           marks.size() + layer * (emitted / expanded + 1)));
  };

  // Before each expansion no node is on both sides, so every path is longer
  // than forward_depth + backward_depth; the first expansion that meets the
  // other side therefore finds the shortest length, and all its meeting
  // nodes lie on shortest paths.
  while (forward_depth + backward_depth < query.max_hops &&
         !forward_layer.empty() && !backward_layer.empty()) {
    grown.clear();
    if (forward_layer.size() <= backward_layer.size()) {
      const int depth = forward_depth + 1;
      bool met = false;
      uint64_t best = 0;
      reserve_for(forward, forward_layer.size());
      for (size_t rank = 0; rank < forward_layer.size() && !met; ++rank) {
        const uint64_t from = forward_layer[rank];
        ++expanded;
        absl::Status status =
            adjacency(from, /*backward=*/false, [&](const PathEdge& edge) {
              ++emitted;
              uint64_t to = 0;
              if (!FarEnd(edge, from, &to)) return;
              auto [it, inserted] = forward.try_emplace(to);
              ForwardMark& mark = it->second;
              if (inserted) {
                mark.depth = depth;
                mark.pred_rank = rank;
                mark.pred = from;
                mark.edge = edge;
                grown.push_back(to);
                if (backward.contains(to) && (!met || to < best)) {
                  met = true;
                  best = to;
                }
                return;
              }
              // The layer is expanded in rank order, so the first node to
              // reach `to` is its best predecessor; later edges from that
              // same node are parallel edges.
              if (mark.pred == from && mark.depth == depth &&
                  PreferEdge(edge, mark.edge)) {
                mark.edge = edge;
              }
            });
        if (!status.ok()) return status;
      }
      if (met) return JoinHops(query, forward, backward, best, nullptr, best);
      order.clear();
      for (uint64_t node : grown) {
        order.emplace_back(forward.find(node)->second.pred_rank, node);
      }
      std::sort(order.begin(), order.end());
      for (size_t i = 0; i < order.size(); ++i) {
        grown[i] = order[i].second;
        forward.find(grown[i])->second.rank = i;
      }
      forward_layer.swap(grown);
      forward_depth = depth;
      continue;
    }
    const int depth = backward_depth + 1;
    bool met = false;
    reserve_for(backward, backward_layer.size());
    for (size_t i = 0; i < backward_layer.size() && !met; ++i) {
      const uint64_t from = backward_layer[i];
      ++expanded;
      absl::Status status =
          adjacency(from, /*backward=*/true, [&](const PathEdge& edge) {
            ++emitted;
            uint64_t to = 0;
            if (!FarEnd(edge, from, &to)) return;
            if (forward.contains(to)) met = true;
            auto [it, inserted] = backward.try_emplace(to);
            BackwardMark& mark = it->second;
            if (inserted) {
              mark.depth = depth;
              mark.next = from;
              mark.edge = edge;
              grown.push_back(to);
              return;
            }
            if (mark.depth != depth) return;
            if (from < mark.next ||
                (from == mark.next && PreferEdge(edge, mark.edge))) {
              mark.next = from;
              mark.edge = edge;
            }
          });
      if (!status.ok()) return status;
    }
    if (!met) {
      backward_layer.swap(grown);
      backward_depth = depth;
      continue;
    }
    // The meeting nodes are the forward layer's nodes with a neighbour at
    // backward_depth (one nearer would make a path shorter than the
    // invariant allows, so every backward neighbour is at that depth).
    for (const uint64_t from : forward_layer) {
      bool joined = false;
      uint64_t next = 0;
      PathEdge best_edge;
      absl::Status status =
          adjacency(from, /*backward=*/false, [&](const PathEdge& edge) {
            uint64_t to = 0;
            if (!FarEnd(edge, from, &to)) return;
            auto it = backward.find(to);
            if (it == backward.end() || it->second.depth != backward_depth) {
              return;
            }
            if (!joined || to < next ||
                (to == next && PreferEdge(edge, best_edge))) {
              joined = true;
              next = to;
              best_edge = edge;
            }
          });
      if (!status.ok()) return status;
      if (joined) {
        return JoinHops(query, forward, backward, from, &best_edge, next);
      }
    }
    return absl::InternalError(
        "path search: the backward side met the forward layer, but no "
        "forward node reaches it");
  }
  return PathResult{};
}

// ---------------------------------------------------------------------------
// Largest product: bidirectional Dijkstra over (node, hops) states.
//
// Products are kept exactly rather than as sums of -ln(weight), which order
// paths the same way: a float has a 24-bit significand, so a product of h
// weights is an integer below 2^(24h) times a power of two. Floating sums
// and products depend on the order of their terms, so two paths over the
// same weights in another order could differ in the last bit and the tie
// rules would then hinge on rounding; exact products tie exactly when the
// real products are equal.
//
// A state is (node, hops) because the best product to a node may need more
// hops than the limit leaves. States are settled in the order (product
// descending, hops, node). A state is dropped when a state of its node with
// fewer hops has at least its product, since that one is at least as good
// for every continuation. With weights at most 1 every predecessor on a
// best path to a state is settled before the state, so the path kept for
// it, the lexicographically smallest of its best, is final when it is
// settled, and the first settled state of the target is the answer.

// A weight as mantissa * 2^exponent with an odd mantissa below 2^24.
struct Factor {
  uint32_t mantissa = 1;
  int exponent = 0;
};

// False for the weights that make an edge impassable (<= 0 and NaN).
// Weights above 1 are outside the contract; they count as 1 here so that no
// edge makes a path better by lengthening it, which Dijkstra relies on.
bool ToFactor(float weight, Factor* factor) {
  if (!(weight > 0)) return false;
  int exponent = 0;
  const float fraction = std::frexp(std::min(weight, 1.0f), &exponent);
  // Exact: a float's significand has at most 24 bits, subnormals included.
  const uint32_t mantissa = static_cast<uint32_t>(std::ldexp(fraction, 24));
  const int zeros = std::countr_zero(mantissa);
  factor->mantissa = mantissa >> zeros;
  factor->exponent = exponent - 24 + zeros;
  return true;
}

// Enough 32-bit limbs for a product of `hops` factors.
size_t LimbsFor(int hops) {
  return std::max<size_t>(1, (24 * static_cast<size_t>(hops) + 31) / 32);
}

// The 32 bits of a mantissa at bit positions [low, low + 32), zero outside.
uint32_t Window(const uint32_t* limbs, size_t count, int64_t low) {
  if (low <= -32) return 0;
  if (low < 0) return limbs[0] << static_cast<int>(-low);
  const size_t index = static_cast<size_t>(low / 32);
  const int shift = static_cast<int>(low % 32);
  const uint32_t lower = index < count ? limbs[index] : 0;
  if (shift == 0) return lower;
  const uint32_t upper = index + 1 < count ? limbs[index + 1] : 0;
  return (lower >> shift) | (upper << (32 - shift));
}

// A product, mantissa * 2^(top - bits). `top` and `lead` order almost all
// pairs without reading the limbs.
struct Product {
  const uint32_t* limbs = nullptr;
  size_t count = 0;
  int bits = 0;       // of the mantissa, which is never zero
  int64_t top = 0;    // the value lies in [2^(top - 1), 2^top)
  uint64_t lead = 0;  // the mantissa's first 64 bits, from its top bit
};

uint64_t Lead(const uint32_t* limbs, size_t count, int bits) {
  return uint64_t{Window(limbs, count, bits - 32)} << 32 |
         Window(limbs, count, bits - 64);
}

// <0, 0, >0 as a < b, a == b, a > b, exactly.
int Compare(const Product& a, const Product& b) {
  if (a.top != b.top) return a.top < b.top ? -1 : 1;
  if (a.lead != b.lead) return a.lead < b.lead ? -1 : 1;
  const int longest = std::max(a.bits, b.bits);
  for (int64_t from_top = 96; from_top - 32 < longest; from_top += 32) {
    const uint32_t wa = Window(a.limbs, a.count, a.bits - from_top);
    const uint32_t wb = Window(b.limbs, b.count, b.bits - from_top);
    if (wa != wb) return wa < wb ? -1 : 1;
  }
  return 0;
}

// The exact product of `a` and `b`, its limbs in `out`.
Product MultiplyProducts(const Product& a, const Product& b,
                         std::vector<uint32_t>* out) {
  out->assign(a.count + b.count, 0);
  for (size_t i = 0; i < a.count; ++i) {
    uint64_t carry = 0;
    for (size_t j = 0; j < b.count; ++j) {
      const uint64_t digit =
          uint64_t{a.limbs[i]} * b.limbs[j] + (*out)[i + j] + carry;
      (*out)[i + j] = static_cast<uint32_t>(digit);
      carry = digit >> 32;
    }
    (*out)[i + b.count] = static_cast<uint32_t>(carry);
  }
  size_t last = out->size() - 1;
  while ((*out)[last] == 0) --last;
  const int bits = static_cast<int>(32 * last) +
                   static_cast<int>(std::bit_width((*out)[last]));
  const int64_t exponent = (a.top - a.bits) + (b.top - b.bits);
  return Product{out->data(), out->size(), bits, exponent + bits,
                 Lead(out->data(), out->size(), bits)};
}

// A factor as a Product whose one limb is `*limb`.
Product FactorProduct(const Factor& factor, uint32_t* limb) {
  *limb = factor.mantissa;
  const int bits = static_cast<int>(std::bit_width(factor.mantissa));
  return Product{limb, 1, bits, factor.exponent + bits, Lead(limb, 1, bits)};
}

constexpr uint32_t kNoState = std::numeric_limits<uint32_t>::max();

struct State {
  uint64_t node = 0;
  int hops = 0;
  bool settled = false;
  uint32_t pred = kNoState;     // the state one hop nearer this side's start
  uint32_t sibling = kNoState;  // the next state of the same node
  size_t heap_position = 0;
  size_t offset = 0;  // of the product's LimbsFor(hops) limbs in the arena
  int bits = 1;
  int64_t top = 1;
  uint64_t lead = uint64_t{1} << 63;
  PathEdge edge;  // joins pred's node and this node
};

struct NodeStates {
  int settled_hops = std::numeric_limits<int>::max();  // the fewest settled
  uint32_t first = kNoState;
};

// One side of the bidirectional largest-product search: Dijkstra over
// (node, hops) states from its start, forward from the source along the
// adjacency's forward edges, or backward from the target along its backward
// edges.
//
// A state is (node, hops) because the best product to a node may need more
// hops than the limit leaves. States are settled in the order (product
// descending, hops, node). A state is dropped when a state of its node with
// fewer hops has at least its product, since that one is at least as good
// for every continuation. With weights at most 1 every predecessor on a
// best path to a state is settled before the state, so the path kept for
// it is final when it is settled. That kept path is the smallest of its
// best ones as the tie rule reads a whole path, from source to target: on
// the forward side the lexicographically smallest prefix; on the backward
// side, the suffix whose next node (toward the target) is smallest, since
// two suffixes of one state with equal hops can only differ there first
// (each node has one state per hop count, so equal next nodes are one
// state and one suffix).
class ProductSide {
 public:
  ProductSide(uint64_t start, bool backward, int max_hops,
              PathAdjacency adjacency)
      : start_(start),
        backward_(backward),
        max_hops_(max_hops),
        adjacency_(adjacency) {
    limbs_.push_back(1);  // the empty product
    states_.emplace_back().node = start;
    nodes_[start].first = 0;
    Push(0);
  }

  bool empty() const { return heap_.empty(); }

  size_t frontier() const { return heap_.size(); }
  // The product of the state SettleNext would take. Precondition: !empty().
  Product TopProduct() const { return ProductOf(heap_[0]); }

  const State& state(uint32_t id) const { return states_[id]; }
  Product ProductOf(uint32_t id) const {
    const State& s = states_[id];
    return Product{limbs_.data() + s.offset, LimbsFor(s.hops), s.bits, s.top,
                   s.lead};
  }
  // The first state of `node` (follow State::sibling), kNoState if none.
  uint32_t FirstState(uint64_t node) const {
    auto it = nodes_.find(node);
    return it == nodes_.end() ? kNoState : it->second.first;
  }

  // Takes the next state; its id when that settles it, kNoState when a
  // state of its node with fewer hops was settled first (it is dominated).
  uint32_t SettleNext() {
    const uint32_t id = Pop();
    State& s = states_[id];
    NodeStates& states = nodes_.find(s.node)->second;
    if (s.hops >= states.settled_hops) return kNoState;
    states.settled_hops = s.hops;
    s.settled = true;
    return id;
  }

  // Relaxes every edge of settled state `id` (unless it is at max_hops),
  // calling crossing(id, edge, far end, factor) first for each passable one
  // so that the caller can join it to the other side. Errors: the
  // adjacency's.
  template <typename Crossing>
  absl::Status Expand(uint32_t id, Crossing&& crossing) {
    const uint64_t node = states_[id].node;
    const int hops = states_[id].hops;
    if (hops >= max_hops_) return absl::OkStatus();
    absl::StatusOr<std::pair<size_t, size_t>> range = EdgesOf(node);
    if (!range.ok()) return range.status();
    for (size_t i = range->first; i < range->second; ++i) {
      const PathEdge edge = edges_[i];
      uint64_t to = 0;
      Factor factor;
      if (!FarEnd(edge, node, &to) || !ToFactor(edge.weight, &factor)) {
        continue;
      }
      crossing(id, edge, to, factor);
      Relax(id, node, hops + 1, edge, to, factor);
    }
    return absl::OkStatus();
  }

  // Hop distances from this side's start over passable edges, by a
  // breadth-first search of the first layers: exact up to known_depth_,
  // and more than that for every node not found. The layers stop growing
  // at max_depth or when the next one to expand is larger than
  // max_layer, since each node expanded costs an adjacency read. The other
  // side prunes with them: a state (v, h) can only be on a path within
  // max_hops when h plus v's distance to this side's start fits.
  absl::Status Survey(int max_depth, size_t max_layer) {
    std::vector<uint64_t> layer{start_};
    std::vector<uint64_t> next;
    distance_[start_] = 0;
    known_depth_ = 0;
    while (known_depth_ < max_depth && !layer.empty() &&
           layer.size() <= max_layer) {
      next.clear();
      for (uint64_t node : layer) {
        absl::StatusOr<std::pair<size_t, size_t>> range = EdgesOf(node);
        if (!range.ok()) return range.status();
        for (size_t i = range->first; i < range->second; ++i) {
          uint64_t to = 0;
          Factor factor;
          if (FarEnd(edges_[i], node, &to) &&
              ToFactor(edges_[i].weight, &factor) &&
              distance_.try_emplace(to, known_depth_ + 1).second) {
            next.push_back(to);
          }
        }
      }
      layer.swap(next);
      ++known_depth_;
    }
    return absl::OkStatus();
  }

  // At most the hop distance between `node` and this side's start.
  int DistanceBound(uint64_t node) const {
    auto it = distance_.find(node);
    return it != distance_.end() ? it->second : known_depth_ + 1;
  }

  // The side whose DistanceBound prunes this side's states.
  void set_other(const ProductSide* other) { other_ = other; }

  // The nodes and edges from this side's start to state `id`'s node, in
  // that order (reversed by the caller for the backward side).
  void Chain(uint32_t id, std::vector<uint64_t>* nodes,
             std::vector<PathEdge>* edges) const {
    for (; states_[id].pred != kNoState; id = states_[id].pred) {
      nodes->push_back(states_[id].node);
      edges->push_back(states_[id].edge);
    }
    nodes->push_back(states_[id].node);
    std::reverse(nodes->begin(), nodes->end());
    std::reverse(edges->begin(), edges->end());
  }

 private:
  // The edges of `node`, as [first, second) of edges_: read from the
  // adjacency once, since a node is expanded once per hop count it is
  // settled at and the survey reads some of them first.
  absl::StatusOr<std::pair<size_t, size_t>> EdgesOf(uint64_t node) {
    auto it = adjacent_.find(node);
    if (it != adjacent_.end()) return it->second;
    const size_t begin = edges_.size();
    absl::Status status = adjacency_(
        node, backward_, [&](const PathEdge& e) { edges_.push_back(e); });
    if (!status.ok()) return status;
    return adjacent_.emplace(node, std::make_pair(begin, edges_.size()))
        .first->second;
  }

  // Offers the path to `from`, a settled state, followed by `edge`.
  void Relax(uint32_t from, uint64_t from_node, int hops, const PathEdge& edge,
             uint64_t to, const Factor& factor) {
    if (other_ != nullptr && hops + other_->DistanceBound(to) > max_hops_) {
      return;
    }
    NodeStates& states = nodes_[to];
    if (states.settled_hops <= hops) return;
    const Product product = Multiply(states_[from], factor, hops);
    uint32_t id = kNoState;
    for (uint32_t other = states.first; other != kNoState;
         other = states_[other].sibling) {
      if (states_[other].hops == hops) {
        id = other;
      } else if (states_[other].hops < hops &&
                 Compare(ProductOf(other), product) >= 0) {
        return;
      }
    }
    if (id == kNoState) {
      id = static_cast<uint32_t>(states_.size());
      State& state = states_.emplace_back();
      state.node = to;
      state.hops = hops;
      state.pred = from;
      state.sibling = states.first;
      state.offset = limbs_.size();
      Assign(product, &state);
      state.edge = edge;
      limbs_.insert(limbs_.end(), scratch_.begin(), scratch_.end());
      states.first = id;
      Push(id);
      return;
    }
    const int order = Compare(product, ProductOf(id));
    if (order < 0) return;
    State& state = states_[id];
    if (order > 0) {
      std::copy(scratch_.begin(), scratch_.end(),
                limbs_.begin() + static_cast<ptrdiff_t>(state.offset));
      Assign(product, &state);
      state.pred = from;
      state.edge = edge;
      SiftUp(state.heap_position);
    } else if (state.pred == from) {
      if (PreferEdge(edge, state.edge)) state.edge = edge;
    } else if (backward_ ? from_node < states_[state.pred].node
                         : PathBefore(from, state.pred)) {
      state.pred = from;
      state.edge = edge;
    }
  }

  static void Assign(const Product& product, State* state) {
    state->bits = product.bits;
    state->top = product.top;
    state->lead = product.lead;
  }

  // The product of `state`'s and `factor`, in scratch_, sized for `hops`.
  Product Multiply(const State& state, const Factor& factor, int hops) {
    const Product base{limbs_.data() + state.offset, LimbsFor(state.hops),
                       state.bits, state.top, state.lead};
    scratch_.assign(LimbsFor(hops), 0);
    uint64_t carry = 0;
    for (size_t i = 0; i < base.count; ++i) {
      const uint64_t digit = uint64_t{base.limbs[i]} * factor.mantissa + carry;
      scratch_[i] = static_cast<uint32_t>(digit);
      carry = digit >> 32;
    }
    // No carry is lost: the product stays below 2^(24 * hops).
    if (carry != 0 && base.count < scratch_.size()) {
      scratch_[base.count] = static_cast<uint32_t>(carry);
    }
    size_t last = scratch_.size() - 1;
    while (scratch_[last] == 0) --last;
    const int bits = static_cast<int>(32 * last) +
                     static_cast<int>(std::bit_width(scratch_[last]));
    const int64_t exponent = base.top - base.bits + factor.exponent;
    return Product{scratch_.data(), scratch_.size(), bits, exponent + bits,
                   Lead(scratch_.data(), scratch_.size(), bits)};
  }

  // Whether the kept path to `a` is lexicographically smaller than the one
  // to `b`, two distinct settled states with the same number of hops. The
  // paths share everything from the first state where they meet, and
  // distinct states of equal hops have distinct nodes.
  bool PathBefore(uint32_t a, uint32_t b) const {
    uint64_t node_a = 0;
    uint64_t node_b = 0;
    while (a != b) {
      node_a = states_[a].node;
      node_b = states_[b].node;
      a = states_[a].pred;
      b = states_[b].pred;
    }
    return node_a < node_b;
  }

  // Settling order: larger product, then fewer hops, then smaller node.
  bool Before(uint32_t a, uint32_t b) const {
    const State& sa = states_[a];
    const State& sb = states_[b];
    if (sa.top != sb.top) return sa.top > sb.top;
    if (sa.lead != sb.lead) return sa.lead > sb.lead;
    const int order = Compare(ProductOf(a), ProductOf(b));
    if (order != 0) return order > 0;
    if (sa.hops != sb.hops) return sa.hops < sb.hops;
    return sa.node < sb.node;
  }

  void Place(size_t position, uint32_t id) {
    heap_[position] = id;
    states_[id].heap_position = position;
  }

  void Push(uint32_t id) {
    heap_.push_back(id);
    SiftUp(heap_.size() - 1);
  }

  void SiftUp(size_t position) {
    const uint32_t id = heap_[position];
    while (position > 0) {
      const size_t parent = (position - 1) / 2;
      if (!Before(id, heap_[parent])) break;
      Place(position, heap_[parent]);
      position = parent;
    }
    Place(position, id);
  }

  uint32_t Pop() {
    const uint32_t top = heap_[0];
    const uint32_t last = heap_.back();
    heap_.pop_back();
    if (heap_.empty()) return top;
    size_t position = 0;
    for (;;) {
      size_t child = 2 * position + 1;
      if (child >= heap_.size()) break;
      if (child + 1 < heap_.size() && Before(heap_[child + 1], heap_[child])) {
        ++child;
      }
      if (!Before(heap_[child], last)) break;
      Place(position, heap_[child]);
      position = child;
    }
    Place(position, last);
    return top;
  }

  const uint64_t start_;
  const bool backward_;
  const int max_hops_;
  PathAdjacency adjacency_;
  const ProductSide* other_ = nullptr;
  absl::flat_hash_map<uint64_t, int> distance_;  // from Survey
  int known_depth_ = 0;
  std::vector<State> states_;
  absl::flat_hash_map<uint64_t, NodeStates> nodes_;
  std::vector<uint32_t> limbs_;  // every state's product, LimbsFor(hops) each
  std::vector<uint32_t> heap_;
  std::vector<uint32_t> scratch_;
  // The edges of each expanded node: [first, second) of edges_.
  absl::flat_hash_map<uint64_t, std::pair<size_t, size_t>> adjacent_;
  std::vector<PathEdge> edges_;
};

// Largest product: bidirectional Dijkstra, one ProductSide from each end.
//
// Each step settles a state on the side whose next state has the larger
// product (in -ln terms the smaller cost, so the two costs rise together;
// on the bench graph it settles about a third fewer states than choosing
// the smaller frontier) and joins it to the other side's settled states: at its
// own node (a prefix and a suffix that meet there) and across each of its
// edges. mu is the best path so joined. The search stops once top_f * top_b <
// mu, where top_f and top_b are the products of the states each side would
// settle next (the -ln form of the usual rule, top_f + top_b >= mu, with ">"
// since ties must be found too). Why that finds the answer: take the best
// path P, fewest hops and smallest node sequence among the best, with k
// hops, prefix products p_i and suffix products q_i (p_i * q_i = the
// product of P). Its i-hop prefix is a best and smallest i-hop path to x_i
// and no state of x_i with fewer hops is as good (either would give a
// better, shorter or smaller path, a walk shortened into a path where
// needed), so the forward state (x_i, i) is P's prefix, and likewise the
// backward state (x_i, k - i) its suffix. If P's product exceeded
// top_f * top_b, every i would have p_i > top_f or q_i > top_b, so that
// state would be settled on that side; the forward ones form a prefix of
// P, the backward ones a suffix, and where they touch (a node settled on
// both sides, or an edge between the last forward one and the first
// backward one) P was joined when the later of the two was settled. So
// after the stop no unseen path beats or ties mu, and the best joined path
// by the tie rule is the answer.
class BidirectionalBestProduct {
 public:
  // The distance survey of each side (ProductSide::Survey): two layers
  // cost about 1 + the degree adjacency reads, which the search reuses,
  // and restrict the last two hops of the other side to the few nodes near
  // this side's start.
  static constexpr int kSurveyDepth = 2;
  static constexpr size_t kSurveyLayer = 256;

  BidirectionalBestProduct(const PathQuery& query, PathAdjacency adjacency)
      : query_(query),
        forward_(query.source, /*backward=*/false, query.max_hops, adjacency),
        backward_(query.target, /*backward=*/true, query.max_hops, adjacency) {}

  absl::StatusOr<PathResult> Run() {
    forward_.set_other(&backward_);
    backward_.set_other(&forward_);
    absl::Status status =
        forward_.Survey(std::min(query_.max_hops, kSurveyDepth), kSurveyLayer);
    if (status.ok()) {
      status = backward_.Survey(std::min(query_.max_hops, kSurveyDepth),
                                kSurveyLayer);
    }
    // Both starts are settled first: the stopping argument needs them, and
    // a side whose heap runs dry has settled every state it can reach.
    if (status.ok()) status = Step(/*is_forward=*/true);
    if (status.ok()) status = Step(/*is_forward=*/false);
    while (status.ok() && !forward_.empty() && !backward_.empty()) {
      if (found_) {
        const Product bound = MultiplyProducts(
            forward_.TopProduct(), backward_.TopProduct(), &bound_limbs_);
        if (Compare(bound, BestProduct()) < 0) break;
      }
      status =
          Step(Compare(forward_.TopProduct(), backward_.TopProduct()) >= 0);
    }
    if (!status.ok()) return status;
    if (!found_) return PathResult{};
    return Found(best_nodes_, best_edges_);
  }

 private:
  // Settles the next state of one side, joins it to the other side's
  // settled states, and expands it. Errors: the adjacency's.
  absl::Status Step(bool is_forward) {
    ProductSide& side = is_forward ? forward_ : backward_;
    ProductSide& other = is_forward ? backward_ : forward_;
    const uint32_t id = side.SettleNext();
    if (id == kNoState) return absl::OkStatus();
    const uint64_t node = side.state(id).node;
    const int hops = side.state(id).hops;
    for (uint32_t o = other.FirstState(node); o != kNoState;
         o = other.state(o).sibling) {
      if (other.state(o).settled &&
          hops + other.state(o).hops <= query_.max_hops) {
        Offer(is_forward ? id : o, is_forward ? o : id, nullptr, nullptr);
      }
    }
    return side.Expand(id, [&](uint32_t from, const PathEdge& edge, uint64_t to,
                               const Factor& factor) {
      for (uint32_t o = other.FirstState(to); o != kNoState;
           o = other.state(o).sibling) {
        if (other.state(o).settled &&
            hops + 1 + other.state(o).hops <= query_.max_hops) {
          Offer(is_forward ? from : o, is_forward ? o : from, &edge, &factor);
        }
      }
    });
  }

  Product BestProduct() const {
    return Product{best_limbs_.data(), best_limbs_.size(), best_bits_,
                   best_top_, best_lead_};
  }

  // The path of forward state f, then `edge` (when not null), then
  // backward state b's suffix.
  void Join(uint32_t f, uint32_t b, const PathEdge* edge,
            std::vector<uint64_t>* nodes, std::vector<PathEdge>* edges) const {
    nodes->clear();
    edges->clear();
    forward_.Chain(f, nodes, edges);
    if (edge != nullptr) edges->push_back(*edge);
    std::vector<uint64_t> tail_nodes;
    std::vector<PathEdge> tail_edges;
    backward_.Chain(b, &tail_nodes, &tail_edges);
    // Chain runs from the target; the suffix runs toward it.
    nodes->insert(nodes->end(), tail_nodes.rbegin() + (edge == nullptr),
                  tail_nodes.rend());
    edges->insert(edges->end(), tail_edges.rbegin(), tail_edges.rend());
  }

  // Offers the path forward state f + edge + backward state b (an edge of
  // factor `factor`; none when both states are at one node).
  void Offer(uint32_t f, uint32_t b, const PathEdge* edge,
             const Factor* factor) {
    Product product = MultiplyProducts(forward_.ProductOf(f),
                                       backward_.ProductOf(b), &offer_limbs_);
    if (factor != nullptr) {
      uint32_t limb = 0;
      product = MultiplyProducts(product, FactorProduct(*factor, &limb),
                                 &offer_limbs2_);
    }
    const int hops = forward_.state(f).hops + backward_.state(b).hops +
                     (edge != nullptr ? 1 : 0);
    if (found_) {
      const int order = Compare(product, BestProduct());
      if (order < 0) return;
      if (order == 0) {
        if (hops > best_hops_) return;
        if (hops == best_hops_) {
          Join(f, b, edge, &nodes_, &edges_);
          if (!PathIsBefore(nodes_, edges_)) return;
          Keep(product, hops);
          return;
        }
      }
    }
    Join(f, b, edge, &nodes_, &edges_);
    Keep(product, hops);
  }

  // Whether (nodes, edges) comes before the best path: the smaller node
  // sequence, then (parallel edges) the preferred edges.
  bool PathIsBefore(const std::vector<uint64_t>& nodes,
                    const std::vector<PathEdge>& edges) const {
    if (nodes != best_nodes_) return nodes < best_nodes_;
    for (size_t i = 0; i < edges.size(); ++i) {
      if (PreferEdge(edges[i], best_edges_[i])) return true;
      if (PreferEdge(best_edges_[i], edges[i])) return false;
    }
    return false;
  }

  // Makes the path in nodes_ / edges_, of `product`, the best.
  void Keep(const Product& product, int hops) {
    best_limbs_.assign(product.limbs, product.limbs + product.count);
    best_bits_ = product.bits;
    best_top_ = product.top;
    best_lead_ = product.lead;
    best_hops_ = hops;
    best_nodes_.swap(nodes_);
    best_edges_.swap(edges_);
    found_ = true;
  }

  const PathQuery query_;
  ProductSide forward_;
  ProductSide backward_;
  bool found_ = false;
  std::vector<uint32_t> best_limbs_;
  int best_bits_ = 0;
  int64_t best_top_ = 0;
  uint64_t best_lead_ = 0;
  int best_hops_ = 0;
  std::vector<uint64_t> best_nodes_;
  std::vector<PathEdge> best_edges_;
  std::vector<uint64_t> nodes_;
  std::vector<PathEdge> edges_;
  std::vector<uint32_t> bound_limbs_;
  std::vector<uint32_t> offer_limbs_;
  std::vector<uint32_t> offer_limbs2_;
};

}  // namespace

absl::StatusOr<PathResult> FindPath(const PathQuery& query,
                                    PathAdjacency adjacency) {
  if (query.source == query.target) {
    return Found({query.source}, {});
  }
  if (query.weighted) {
    return BidirectionalBestProduct(query, adjacency).Run();
  }
  return FewestHops(query, adjacency);
}

}  // namespace ctxkit::internal
