#include "lib/compactor/plan.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ctxkit::internal {
namespace {

std::vector<size_t> DropOrder(const std::vector<Item>& items,
                              CompactionStrategy strategy) {
  std::vector<size_t> order;
  order.reserve(items.size());
  auto add = [&](auto&& pred) {
    for (size_t k = 0; k < items.size(); ++k) {
      const Item& item = items[k];
      if (!item.must_keep && !item.forced && pred(item)) order.push_back(k);
    }
  };
  if (strategy == CompactionStrategy::kRemoveOld) {
    add([](const Item& i) { return !i.recent; });
    add([](const Item& i) { return i.recent; });
    return order;
  }
  auto old = [](const Item& i) {
    return !i.recent && !i.min_important && !i.needed;
  };
  add([&](const Item& i) { return old(i) && i.tier == Tier::kTransient; });
  add([&](const Item& i) { return old(i) && i.tier == Tier::kRoutine; });
  add([&](const Item& i) { return old(i) && i.tier == Tier::kContextual; });
  add([&](const Item& i) { return old(i) && i.tier == Tier::kImportant; });
  add([&](const Item& i) { return old(i) && i.tier == Tier::kAnchor; });
  add([](const Item& i) { return !i.recent && i.min_important && !i.needed; });
  add([](const Item& i) { return i.recent && !i.needed; });
  add([](const Item& i) { return i.needed; });
  return order;
}

// Summaries are estimated as the runs' reservations, but together never
// above the share the assembly lets them take; the markers that keep
// Anthropic roles alternating come on top of it.
int64_t Capped(const PlanInput& in, const Runs& runs, int64_t summaries) {
  const int64_t extra = runs.placeholder_extra();
  return std::min(summaries - extra, in.share) + extra;
}

// A Runs holding exactly the items flagged in `dropped`; the estimate.
int64_t Rebuild(const PlanInput& in, const std::vector<char>& dropped,
                Runs* runs) {
  const std::vector<Item>& items = *in.items;
  *runs = Runs(items.size(), in.reserve, in.placeholder);
  int64_t kept = in.priming;
  int64_t summaries = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    if (!dropped[k]) {
      kept += items[k].cost();
      continue;
    }
    summaries += runs->Drop(k, items[k].summary_weight(), items[k].messages());
  }
  return kept + Capped(in, *runs, summaries);
}

}  // namespace

Runs::Runs(size_t n, int64_t reserve, int64_t placeholder)
    : reserve_(reserve),
      placeholder_(placeholder),
      start_(n),
      end_(n),
      weight_(n, 0),
      messages_(n, 0),
      dropped_(n) {}

int64_t Runs::SummaryCost(int64_t w) const {
  if (reserve_ < kMinSummaryTokens || w < kMinSummaryTokens) return 0;
  const int64_t want = std::max(kBaseSummaryTokens, w / kSummaryDivisor);
  return std::min({reserve_, w, want});
}

int64_t Runs::Cost(int64_t w, size_t messages) const {
  const int64_t summary = SummaryCost(w);
  return messages % 2 == 1 ? std::max(summary, placeholder_) : summary;
}

int64_t Runs::Drop(size_t i, int64_t w, size_t messages) {
  const bool l = i > 0 && dropped_[i - 1];
  const bool r = i + 1 < dropped_.size() && dropped_[i + 1];
  const size_t a = l ? start_[i - 1] : i;
  const size_t b = r ? end_[i + 1] : i;
  const int64_t before = (l ? Cost(weight_[a], messages_[a]) : 0) +
                         (r ? Cost(weight_[i + 1], messages_[i + 1]) : 0);
  const int64_t summaries_before =
      (l ? SummaryCost(weight_[a]) : 0) + (r ? SummaryCost(weight_[i + 1]) : 0);
  weight_[a] = (l ? weight_[a] : 0) + (r ? weight_[i + 1] : 0) + w;
  messages_[a] = (l ? messages_[a] : 0) + (r ? messages_[i + 1] : 0) + messages;
  end_[a] = b;
  start_[b] = a;
  dropped_[i] = true;
  if (!l && !r) ++count_;
  if (l && r) --count_;
  const int64_t change = Cost(weight_[a], messages_[a]) - before;
  placeholder_extra_ += change - (SummaryCost(weight_[a]) - summaries_before);
  return change;
}

std::vector<RunGroup> SummaryGroups(const std::vector<Item>& items,
                                    const Runs& runs) {
  std::vector<std::pair<size_t, size_t>> all;
  size_t kept_messages = 0;
  for (size_t k = 0; k < items.size();) {
    if (!runs.dropped(k)) {
      kept_messages += items[k].messages();
      ++k;
      continue;
    }
    size_t e = k;
    while (e < items.size() && runs.dropped(e)) ++e;
    all.emplace_back(k, e);
    k = e;
  }
  const size_t cap = std::max(
      kMinSummaryCap, (kept_messages + kKeptPerSummary - 1) / kKeptPerSummary);
  std::vector<RunGroup> out;
  if (all.size() <= cap) {
    for (const auto& run : all) out.push_back(RunGroup{{run}});
    return out;
  }
  // Groups of about equal dropped weight: a long run is a group of its own,
  // short ones share one.
  std::vector<int64_t> weight(all.size(), 0);
  int64_t total = 0;
  for (size_t r = 0; r < all.size(); ++r) {
    for (size_t k = all[r].first; k < all[r].second; ++k) {
      weight[r] += std::max<int64_t>(items[k].summary_weight(), 1);
    }
    total += weight[r];
  }
  int64_t done = 0;
  for (size_t r = 0; r < all.size(); ++r) {
    // The group this run starts in, by the weight before it.
    const size_t g = static_cast<size_t>(static_cast<double>(done) *
                                         static_cast<double>(cap) /
                                         static_cast<double>(total));
    if (out.empty() || (g >= out.size() && out.size() < cap))
      out.emplace_back();
    out.back().runs.push_back(all[r]);
    done += weight[r];
  }
  return out;
}

int64_t Estimate(const PlanInput& in, const Runs& runs) {
  const std::vector<Item>& items = *in.items;
  int64_t kept = in.priming;
  int64_t summaries = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    if (!runs.dropped(k)) {
      kept += items[k].cost();
    } else if (k == 0 || !runs.dropped(k - 1)) {
      summaries += runs.CostOfRunAt(k);
    }
  }
  return kept + Capped(in, runs, summaries);
}

int64_t Plan(const PlanInput& in, int64_t target, Runs* out) {
  const std::vector<Item>& items = *in.items;
  const size_t n = items.size();
  std::vector<char> dropped(n, 0);
  Runs runs(n, in.reserve, in.placeholder);
  int64_t kept = in.priming;
  int64_t summaries = 0;
  for (const Item& item : items) kept += item.cost();
  auto drop = [&](size_t k) {
    summaries += runs.Drop(k, items[k].summary_weight(), items[k].messages());
    kept -= items[k].cost();
    dropped[k] = 1;
  };
  for (size_t k = 0; k < n; ++k) {
    if (items[k].forced) drop(k);
  }
  const bool must_fit = in.strategy == CompactionStrategy::kSmart ||
                        in.strategy == CompactionStrategy::kRemoveOld;
  if (kept + Capped(in, runs, summaries) <= target && must_fit) {
    *out = std::move(runs);
    return kept + Capped(in, runs, summaries);
  }
  std::vector<size_t> sequence;  // in the order dropped
  for (size_t k : DropOrder(items, in.strategy)) {
    if (kept + Capped(in, runs, summaries) <= target) break;
    drop(k);
    sequence.push_back(k);
  }
  const int64_t total = kept + Capped(in, runs, summaries);
  // remove_old promises a suffix; a plan that cannot fit has nothing left to
  // give back.
  if (total > target || sequence.empty() ||
      in.strategy == CompactionStrategy::kRemoveOld) {
    *out = std::move(runs);
    return total;
  }
  // Step 3: give back, most valuable first (the reverse of the drop order),
  // what fits with the worst case of the summary it may add (a run split in
  // two may reserve another summary, within the share). Transient chatter
  // is never wanted back.
  int64_t kept_bound = kept;
  int64_t extra_bound = runs.placeholder_extra();
  int64_t summary_bound = summaries - extra_bound;
  for (auto it = sequence.rbegin(); it != sequence.rend(); ++it) {
    const size_t k = *it;
    if (items[k].transient) continue;
    const bool splits = k > 0 && dropped[k - 1] && k + 1 < n && dropped[k + 1];
    const int64_t more_summary = summary_bound + (splits ? in.reserve : 0);
    const int64_t more_extra = extra_bound + in.placeholder;
    if (kept_bound + items[k].cost() + std::min(more_summary, in.share) +
            more_extra >
        target) {
      continue;
    }
    dropped[k] = 0;
    kept_bound += items[k].cost();
    summary_bound = more_summary;
    extra_bound = more_extra;
  }
  Runs final_runs;
  const int64_t final_total = Rebuild(in, dropped, &final_runs);
  if (final_total <= target) {
    *out = std::move(final_runs);
    return final_total;
  }
  *out = std::move(runs);
  return total;
}

}  // namespace ctxkit::internal
