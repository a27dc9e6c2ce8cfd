// The compaction plan, read from plan.h: a dropped run's summary allowance
// follows the documented formula (reserve cap, a tenth of a long span, no
// summary for a tiny one, a placeholder for an odd Anthropic run) and Runs
// keeps it right through merges; SummaryGroups makes few groups of
// consecutive runs of about equal weight; Plan drops in the documented
// order, gives back what an overshoot left room for, never drops must-keep
// units, always drops forced ones, keeps remove_old a suffix, and its
// estimate is Estimate() (kept units plus the runs' allowances up to the
// share). The engine trusts these numbers to meet budgets, so each is
// checked against an independent computation.

#include "lib/compactor/plan.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace ctxkit::internal {
namespace {

// A one-message unit at `index`.
Item Unit(size_t index, int64_t tokens, Tier tier = Tier::kRoutine) {
  Item item;
  item.begin = index;
  item.end = index + 1;
  item.tier = tier;
  item.tokens = tokens;
  item.transient = tier == Tier::kTransient;
  return item;
}

// Units of `messages[k]` messages each, laid end to end.
std::vector<Item> Units(const std::vector<int64_t>& tokens,
                        const std::vector<size_t>& messages = {}) {
  std::vector<Item> items;
  size_t at = 0;
  for (size_t k = 0; k < tokens.size(); ++k) {
    const size_t n = messages.empty() ? 1 : messages[k];
    Item item = Unit(at, tokens[k]);
    item.end = at + n;
    at += n;
    items.push_back(item);
  }
  return items;
}

// plan.h's allowance of a run of weight w and `messages` messages, written
// from the header's words.
int64_t Allowance(int64_t reserve, int64_t placeholder, int64_t w,
                  size_t messages) {
  int64_t cost = 0;
  if (reserve > 0) {
    cost = std::min(
        {reserve, w, std::max(kBaseSummaryTokens, w / kSummaryDivisor)});
    if (cost < kMinSummaryTokens) cost = 0;  // not written
  }
  if (messages % 2 == 1) cost = std::max(cost, placeholder);
  return cost;
}

// The maximal runs of `dropped`, as [begin, end) pairs.
std::vector<std::pair<size_t, size_t>> RunsOf(
    const std::vector<char>& dropped) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t k = 0; k < dropped.size();) {
    if (!dropped[k]) {
      ++k;
      continue;
    }
    size_t e = k;
    while (e < dropped.size() && dropped[e]) ++e;
    out.emplace_back(k, e);
    k = e;
  }
  return out;
}

std::vector<char> DroppedOf(const Runs& runs, size_t n) {
  std::vector<char> out(n, 0);
  for (size_t k = 0; k < n; ++k) out[k] = runs.dropped(k) ? 1 : 0;
  return out;
}

Runs DropAll(const std::vector<Item>& items, const std::vector<char>& which,
             int64_t reserve, int64_t placeholder) {
  Runs runs(items.size(), reserve, placeholder);
  for (size_t k = 0; k < items.size(); ++k) {
    if (which[k]) {
      runs.Drop(k, items[k].summary_weight(), items[k].messages());
    }
  }
  return runs;
}

// Estimate() written from the header: priming, kept units' costs, and the
// runs' allowances capped by the share.
int64_t ExpectedEstimate(const PlanInput& input,
                         const std::vector<char>& dropped) {
  const std::vector<Item>& items = *input.items;
  int64_t total = input.priming;
  for (size_t k = 0; k < items.size(); ++k) {
    if (!dropped[k]) total += items[k].cost();
  }
  // plan.h: the summaries' allowances count up to the share; what an odd
  // run's placeholder adds beyond its summary's allowance comes on top.
  int64_t summaries = 0;
  int64_t placeholders = 0;
  for (const auto& [b, e] : RunsOf(dropped)) {
    int64_t w = 0;
    size_t messages = 0;
    for (size_t k = b; k < e; ++k) {
      w += items[k].summary_weight();
      messages += items[k].messages();
    }
    const int64_t summary = Allowance(input.reserve, 0, w, messages);
    summaries += summary;
    placeholders +=
        Allowance(input.reserve, input.placeholder, w, messages) - summary;
  }
  return total + std::min(summaries, input.share) + placeholders;
}

TEST_CASE("a run's allowance: min(reserve, w, max(base, w / 10))") {
  Runs runs(6, /*reserve=*/1000, /*placeholder=*/0);
  CHECK(runs.count() == 0);
  // A short span: its summary never costs more than it replaces.
  CHECK(runs.Drop(1, 50, 1) == 50);
  CHECK(runs.count() == 1);
  CHECK(runs.CostOfRunAt(1) == 50);
  // Joined by a long one: a tenth of the weight, above the base.
  CHECK(runs.Drop(2, 5000, 1) == 505 - 50);
  CHECK(runs.count() == 1);
  CHECK(runs.CostOfRunAt(1) == 505);
  // A separate long span is capped by the reserve.
  CHECK(runs.Drop(4, 20000, 1) == 1000);
  CHECK(runs.count() == 2);
  CHECK(runs.CostOfRunAt(4) == 1000);
  // Dropping the unit between them merges the runs into one summary.
  CHECK(runs.Drop(3, 0, 1) == 1000 - 505 - 1000);
  CHECK(runs.count() == 1);
  CHECK(runs.CostOfRunAt(1) == 1000);
  CHECK(runs.dropped(1));
  CHECK(runs.dropped(4));
  CHECK_FALSE(runs.dropped(0));
  CHECK_FALSE(runs.dropped(5));

  // A mid-sized span gets the base allowance.
  Runs base(1, 1000, 0);
  CHECK(base.Drop(0, 600, 1) == kBaseSummaryTokens);
}

TEST_CASE("a summary below kMinSummaryTokens is not reserved") {
  Runs runs(3, 1000, 0);
  CHECK(runs.Drop(0, kMinSummaryTokens - 1, 1) == 0);
  CHECK(runs.CostOfRunAt(0) == 0);
  CHECK(runs.count() == 1);
  CHECK(runs.Drop(2, kMinSummaryTokens, 1) == kMinSummaryTokens);
  // No reserve: no summaries at all.
  Runs none(2, 0, 0);
  CHECK(none.Drop(0, 50000, 1) == 0);
  CHECK(none.CostOfRunAt(0) == 0);
}

TEST_CASE("a reserve below kMinSummaryTokens writes no summary") {
  // plan.h: min(reserve, w, ...) is the cost, "and one below
  // kMinSummaryTokens is not written". A reserve of 10 caps every summary
  // at 10 tokens, below the minimum, so no run should reserve anything.
  Runs runs(2, /*reserve=*/kMinSummaryTokens - 6, 0);
  CHECK(runs.Drop(0, 5000, 1) == 0);
  CHECK(runs.CostOfRunAt(0) == 0);
}

TEST_CASE("Anthropic: a run of an odd number of messages needs a placeholder") {
  Runs runs(4, /*reserve=*/1000, /*placeholder=*/30);
  CHECK(runs.placeholder() == 30);
  CHECK(runs.reserve() == 1000);
  // Transient chatter wants no summary, but one message leaves the same
  // role on both sides.
  CHECK(runs.Drop(0, 0, 1) == 30);
  // Two messages: roles still alternate, nothing needed.
  CHECK(runs.Drop(1, 0, 1) == -30);
  CHECK(runs.CostOfRunAt(0) == 0);
  CHECK(runs.Drop(3, 0, 3) == 30);
  // Merged: seven messages, weight 5000: the summary is above the
  // placeholder anyway.
  CHECK(runs.Drop(2, 5000, 2) == 500 - 30);
  CHECK(runs.CostOfRunAt(0) == 500);
  CHECK(runs.count() == 1);
  // No reserve: the placeholder alone.
  Runs bare(1, 0, 30);
  CHECK(bare.Drop(0, 5000, 1) == 30);
}

TEST_CASE("Runs keeps counts and allowances right in any drop order") {
  std::mt19937 rng(12);
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    const size_t n = 1 + rng() % 40;
    const int64_t reserve = (round % 3 == 0) ? 0 : 16 + rng() % 900;
    const int64_t placeholder = (round % 2 == 0) ? 0 : 1 + rng() % 40;
    std::vector<int64_t> weight(n);
    std::vector<size_t> messages(n);
    for (size_t k = 0; k < n; ++k) {
      weight[k] = rng() % 4 == 0 ? 0 : rng() % 6000;
      messages[k] = 1 + rng() % 3;
    }
    std::vector<size_t> order(n);
    for (size_t k = 0; k < n; ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    Runs runs(n, reserve, placeholder);
    std::vector<char> dropped(n, 0);
    int64_t total = 0;
    for (size_t k : order) {
      total += runs.Drop(k, weight[k], messages[k]);
      dropped[k] = 1;
      const auto all = RunsOf(dropped);
      int64_t expected = 0;
      for (const auto& [b, e] : all) {
        int64_t w = 0;
        size_t m = 0;
        for (size_t i = b; i < e; ++i) {
          w += weight[i];
          m += messages[i];
        }
        const int64_t cost = Allowance(reserve, placeholder, w, m);
        CHECK(runs.CostOfRunAt(b) == cost);
        expected += cost;
      }
      REQUIRE(total == expected);
      REQUIRE(runs.count() == all.size());
    }
    for (size_t k = 0; k < n; ++k) CHECK(runs.dropped(k));
  }
}

// SummaryGroups' promises on one layout: the groups partition the dropped
// runs in order, each group a sequence of consecutive runs, and there are
// at most max(kMinSummaryCap, ceil(kept messages / kKeptPerSummary)).
void CheckGroups(const std::vector<Item>& items, const Runs& runs,
                 const std::vector<RunGroup>& groups) {
  const auto all = RunsOf(DroppedOf(runs, items.size()));
  size_t kept_messages = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    if (!runs.dropped(k)) kept_messages += items[k].messages();
  }
  const size_t cap = std::max(
      kMinSummaryCap, (kept_messages + kKeptPerSummary - 1) / kKeptPerSummary);
  CAPTURE(kept_messages);
  CHECK(groups.size() <= cap);
  std::vector<std::pair<size_t, size_t>> flat;
  for (const RunGroup& g : groups) {
    CHECK_FALSE(g.runs.empty());
    for (const auto& run : g.runs) flat.push_back(run);
  }
  CHECK(flat == all);
}

int64_t GroupWeight(const std::vector<Item>& items, const RunGroup& g) {
  int64_t w = 0;
  for (const auto& [b, e] : g.runs) {
    for (size_t k = b; k < e; ++k) w += items[k].summary_weight();
  }
  return w;
}

TEST_CASE("SummaryGroups: many short runs share a few equal groups") {
  // 100 units alternating dropped and kept: 50 runs, 50 kept messages,
  // so at most 5 groups.
  std::vector<Item> items = Units(std::vector<int64_t>(100, 300));
  std::vector<char> which(100, 0);
  for (size_t k = 0; k < 100; k += 2) which[k] = 1;
  const Runs runs = DropAll(items, which, 1000, 0);
  const std::vector<RunGroup> groups = SummaryGroups(items, runs);
  CheckGroups(items, runs, groups);
  CHECK(groups.size() <= 5);
  REQUIRE_FALSE(groups.empty());
  // About equal weight: each group within one run of the mean.
  const int64_t total = 50 * 300;
  const int64_t mean = total / static_cast<int64_t>(groups.size());
  for (const RunGroup& g : groups) {
    const int64_t w = GroupWeight(items, g);
    CAPTURE(w);
    CHECK(w >= mean - 300);
    CHECK(w <= mean + 300);
  }
}

TEST_CASE("SummaryGroups: the cap counts kept messages, not units") {
  // 41 runs between 40 kept units of three messages each: 120 kept
  // messages allow up to 12 groups.
  std::vector<int64_t> tokens;
  std::vector<size_t> messages;
  std::vector<char> which;
  for (int k = 0; k < 81; ++k) {
    const bool drop = k % 2 == 0;
    tokens.push_back(500);
    messages.push_back(drop ? 1 : 3);
    which.push_back(drop ? 1 : 0);
  }
  std::vector<Item> items = Units(tokens, messages);
  const Runs runs = DropAll(items, which, 1000, 0);
  const std::vector<RunGroup> groups = SummaryGroups(items, runs);
  CheckGroups(items, runs, groups);
  CHECK(groups.size() <= 12);
}

TEST_CASE("SummaryGroups: a heavy run is not lumped with light ones") {
  // One run of 10,000 tokens, then 20 runs of 100 between 20 kept units:
  // at most 2 groups, and the most equal split keeps the heavy run alone.
  std::vector<int64_t> tokens = {10000};
  std::vector<char> which = {1};
  for (int k = 0; k < 20; ++k) {
    tokens.push_back(50);
    which.push_back(0);
    tokens.push_back(100);
    which.push_back(1);
  }
  std::vector<Item> items = Units(tokens);
  const Runs runs = DropAll(items, which, 1000, 0);
  const std::vector<RunGroup> groups = SummaryGroups(items, runs);
  CheckGroups(items, runs, groups);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].runs.size() == 1);
  CHECK(groups[0].runs[0] == std::make_pair(size_t{0}, size_t{1}));
}

TEST_CASE("SummaryGroups: random layouts keep every promise") {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    const size_t n = 1 + rng() % 120;
    std::vector<int64_t> tokens(n);
    std::vector<size_t> messages(n);
    std::vector<char> which(n);
    for (size_t k = 0; k < n; ++k) {
      tokens[k] = rng() % 3000;
      messages[k] = 1 + rng() % 3;
      which[k] = rng() % 3 != 0 ? 1 : 0;
    }
    std::vector<Item> items = Units(tokens, messages);
    for (size_t k = 0; k < n; ++k) {
      if (rng() % 5 == 0) items[k].transient = true;
    }
    const Runs runs = DropAll(items, which, 800, 0);
    CheckGroups(items, runs, SummaryGroups(items, runs));
  }
}

TEST_CASE("SummaryGroups: nothing dropped, no groups") {
  std::vector<Item> items = Units({100, 200, 300});
  const Runs runs = DropAll(items, {0, 0, 0}, 1000, 0);
  CHECK(SummaryGroups(items, runs).empty());
}

TEST_CASE("Plan drops in the documented order") {
  // One unit of each kind, 100 tokens each, placed so that position does
  // not give the order away; no summaries, so each drop saves exactly 100.
  std::vector<Item> items;
  items.push_back(Unit(0, 100, Tier::kAnchor));  // an anchor let go
  items.push_back(Unit(1, 100, Tier::kImportant));
  Item min_important = Unit(2, 100, Tier::kImportant);
  min_important.min_important = true;
  items.push_back(min_important);
  items.push_back(Unit(3, 100, Tier::kContextual));
  Item needed = Unit(4, 100, Tier::kRoutine);
  needed.needed = true;
  items.push_back(needed);
  items.push_back(Unit(5, 100, Tier::kRoutine));
  items.push_back(Unit(6, 100, Tier::kTransient));
  Item recent = Unit(7, 100, Tier::kRoutine);
  recent.recent = true;
  items.push_back(recent);
  Item last = Unit(8, 100, Tier::kRoutine);
  last.recent = true;
  last.must_keep = true;
  items.push_back(last);
  // transient, routine, contextual, important, anchors let go, the newest
  // important, the recent window, what the next turn needs.
  const std::vector<size_t> order = {6, 5, 3, 1, 0, 2, 7, 4};

  PlanInput input;
  input.items = &items;
  input.priming = 3;
  const int64_t total = 3 + 100 * static_cast<int64_t>(items.size());
  for (size_t k = 1; k <= order.size(); ++k) {
    CAPTURE(k);
    const int64_t target = total - 100 * static_cast<int64_t>(k);
    Runs runs;
    const int64_t estimate = Plan(input, target, &runs);
    CHECK(estimate == target);
    CHECK(estimate == Estimate(input, runs));
    std::vector<char> expected(items.size(), 0);
    for (size_t i = 0; i < k; ++i) expected[order[i]] = 1;
    CHECK(DroppedOf(runs, items.size()) == expected);
  }
}

TEST_CASE("Plan drops the oldest of a tier first") {
  std::vector<Item> items = Units({100, 100, 100, 100});
  items[3].must_keep = true;
  PlanInput input;
  input.items = &items;
  Runs runs;
  CHECK(Plan(input, 300, &runs) == 300);
  CHECK(DroppedOf(runs, 4) == std::vector<char>{1, 0, 0, 0});
  CHECK(Plan(input, 200, &runs) == 200);
  CHECK(DroppedOf(runs, 4) == std::vector<char>{1, 1, 0, 0});
}

TEST_CASE("Plan gives back what an overshooting drop left room for") {
  // Dropping unit 0 is not enough; dropping unit 1 (1000 tokens) overshoots
  // by 950, room enough to give unit 0 back.
  std::vector<Item> items = Units({100, 1000, 100, 100});
  items[2].tier = Tier::kContextual;
  items[3].must_keep = true;
  PlanInput input;
  input.items = &items;
  input.priming = 3;
  const int64_t target = 1303 - 150;
  Runs runs;
  const int64_t estimate = Plan(input, target, &runs);
  CHECK(DroppedOf(runs, 4) == std::vector<char>{0, 1, 0, 0});
  CHECK(estimate == 303);
  CHECK(estimate == Estimate(input, runs));

  // remove_old stops after the drops: it promises a suffix.
  input.strategy = CompactionStrategy::kRemoveOld;
  CHECK(Plan(input, target, &runs) == 203);
  CHECK(DroppedOf(runs, 4) == std::vector<char>{1, 1, 0, 0});
}

TEST_CASE("Plan never drops must-keep units and always drops forced ones") {
  std::vector<Item> items = Units({1000, 100, 100, 1000});
  items[0].must_keep = true;
  items[3].must_keep = true;
  items[2].forced = true;
  PlanInput input;
  input.items = &items;
  input.strategy = CompactionStrategy::kSummarize;
  Runs runs;
  // A generous target: the forced unit goes anyway.
  Plan(input, 100000, &runs);
  CHECK(DroppedOf(runs, 4) == std::vector<char>{0, 0, 1, 0});
  // An infeasible one: everything else goes, the must-keep units stay, and
  // the estimate says by how much it is over.
  input.strategy = CompactionStrategy::kSmart;
  const int64_t estimate = Plan(input, 500, &runs);
  CHECK(DroppedOf(runs, 4) == std::vector<char>{0, 1, 1, 0});
  CHECK(estimate == 2000);
  CHECK(estimate == Estimate(input, runs));
}

TEST_CASE(
    "Estimate: kept costs, merged units at their merged size, share cap") {
  std::vector<Item> items = Units({1000, 1000, 1000, 1000, 1000, 1000, 1000});
  items[1].merged_json = R"({"role":"user","content":"merged"})";
  items[1].merged_tokens = 40;
  PlanInput input;
  input.items = &items;
  input.priming = 3;
  input.reserve = 500;
  const std::vector<char> which = {1, 0, 1, 0, 1, 0, 0};
  const Runs runs = DropAll(items, which, input.reserve, 0);
  // Three runs of 1000 tokens: 200 each.
  CHECK(runs.count() == 3);
  CHECK(Estimate(input, runs) == 3 + 40 + 3000 + 600);
  CHECK(Estimate(input, runs) == ExpectedEstimate(input, which));
  input.share = 300;
  CHECK(Estimate(input, runs) == 3 + 40 + 3000 + 300);
  CHECK(Estimate(input, runs) == ExpectedEstimate(input, which));
}

TEST_CASE("Plan on random units: the contract holds") {
  std::mt19937 rng(2024);
  const Tier tiers[] = {Tier::kTransient, Tier::kRoutine, Tier::kContextual,
                        Tier::kImportant, Tier::kAnchor};
  for (int round = 0; round < 400; ++round) {
    CAPTURE(round);
    const size_t n = 1 + rng() % 60;
    const bool exact = round % 4 == 0;  // no summaries, no transients
    const CompactionStrategy strategy = round % 5 == 1
                                            ? CompactionStrategy::kRemoveOld
                                            : CompactionStrategy::kSmart;
    std::vector<Item> items;
    size_t at = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t messages = 1 + rng() % 3;
      Item item = Unit(at, 1 + rng() % 800, tiers[rng() % 5]);
      if (exact && item.tier == Tier::kTransient) item.tier = Tier::kRoutine;
      item.transient = item.tier == Tier::kTransient;
      item.end = at + messages;
      at += messages;
      item.must_keep = rng() % 6 == 0;
      item.recent = k + 4 >= n;
      item.needed = !item.must_keep && rng() % 10 == 0;
      item.min_important = item.tier == Tier::kImportant && rng() % 3 == 0;
      items.push_back(item);
    }
    items.back().must_keep = true;
    PlanInput input;
    input.items = &items;
    input.strategy = strategy;
    input.priming = 3;
    input.reserve = exact ? 0 : 16 + rng() % 600;
    input.placeholder = (exact || rng() % 2 == 1) ? 0 : 1 + rng() % 30;
    if (!exact && rng() % 2) input.share = rng() % 2000;
    int64_t all = input.priming;
    for (const Item& item : items) all += item.cost();
    const int64_t target = static_cast<int64_t>(rng()) % (all + 1);

    Runs runs;
    const int64_t estimate = Plan(input, target, &runs);
    const std::vector<char> dropped = DroppedOf(runs, n);
    CHECK(estimate == Estimate(input, runs));
    CHECK(estimate == ExpectedEstimate(input, dropped));
    for (size_t k = 0; k < n; ++k) {
      if (items[k].must_keep) CHECK_FALSE(dropped[k]);
    }
    // Whenever dropping everything that may go meets the target, the plan
    // meets it.
    std::vector<char> droppable(n, 0);
    for (size_t k = 0; k < n; ++k) droppable[k] = !items[k].must_keep;
    if (ExpectedEstimate(input, droppable) <= target) {
      CHECK(estimate <= target);
    }
    if (strategy == CompactionStrategy::kRemoveOld) {
      // A suffix: nothing droppable is kept before something dropped.
      bool seen_kept = false;
      for (size_t k = 0; k < n; ++k) {
        if (items[k].must_keep) continue;
        if (!dropped[k]) seen_kept = true;
        if (seen_kept) CHECK_FALSE(dropped[k]);
      }
    } else if (exact && estimate <= target) {
      // Estimates are exact here: a unit that would still fit was given
      // back.
      for (size_t k = 0; k < n; ++k) {
        if (dropped[k]) CHECK(estimate + items[k].cost() > target);
      }
    }
  }
}

}  // namespace
}  // namespace ctxkit::internal
