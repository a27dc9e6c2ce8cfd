// The compaction plan: which units of a history are dropped so that the
// exact token count meets the target, and how many summaries stand for
// them.
//
// Why it is linear. Dropping a unit changes the total by its tokens and by
// the reservation of at most one summary, computed in O(1) from the dropped
// runs on either side (their endpoints are kept in arrays, as in interval
// merging), so the plan visits each unit a bounded number of times.
//
// The plan, in order:
//   1. units the strategy drops whatever the budget (summarize,
//      compress_similar's duplicates);
//   2. the rest in drop order (transient, routine, contextual, important,
//      anchors the options let go, then the newest important messages, then
//      the recent window, then what the next turn needs) until the estimate
//      meets the target;
//   3. dropped units given back, most valuable first, where they still fit
//      (an overshooting drop of one large unit leaves room).
// remove_old stops after step 2 (it promises a suffix). How many summaries
// the runs get is the assembly's business (SummaryGroups): the plan reserves
// a summary per run, an upper bound.
//
// Thread safety: the functions are reentrant; a Runs is used by one thread.

#ifndef CTXKIT_LIB_COMPACTOR_PLAN_H_
#define CTXKIT_LIB_COMPACTOR_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/classifier.h"
#include "ctxkit/compactor.h"

namespace ctxkit::internal {

// A summary reservation below this would hold nothing useful.
inline constexpr int64_t kMinSummaryTokens = kCompactionMinSummaryTokens;
// A run's summary may take this many tokens, or a kSummaryDivisor-th of what
// it replaces when that is more (a long span holds more errors and edits
// worth carrying), never more than the options' cap nor what it replaces.
inline constexpr int64_t kBaseSummaryTokens = 200;
inline constexpr int64_t kSummaryDivisor = 10;
// The summary count cap: one summary per kKeptPerSummary kept messages, and
// never fewer than kMinSummaryCap allowed.
inline constexpr size_t kKeptPerSummary = 10;
inline constexpr size_t kMinSummaryCap = 2;

// One unit of the plan: messages kept or dropped together.
struct Item {
  size_t begin = 0;
  size_t end = 0;
  Tier tier = Tier::kRoutine;
  int64_t tokens = 0;
  bool transient = false;  // every message transient: no summary needed
  bool must_keep = false;
  // What the next turn needs (next_turn.h): must be kept while the other
  // must-keep messages leave room for it at its floor, else the last unit
  // dropped.
  bool needed = false;
  bool recent = false;
  bool min_important = false;
  bool forced = false;     // dropped by the strategy, whatever the budget
  bool duplicate = false;  // compress_similar: a later copy exists
  // compress_similar: the merged message replacing [begin, end).
  std::string merged_json;
  std::string merged_text;
  int64_t merged_tokens = 0;
  std::string_view keep_reason;

  size_t messages() const { return end - begin; }
  int64_t cost() const { return merged_json.empty() ? tokens : merged_tokens; }
  // Tokens a summary of this unit may want: none for transient chatter.
  int64_t summary_weight() const { return transient ? 0 : cost(); }
};

// Dropped runs of items. A run of weight w (the tokens of its items that
// want a summary) may cost min(reserve, w, max(kBaseSummaryTokens, w /
// kSummaryDivisor)): a summary never costs more than what it replaces nor
// than the cap `reserve`, and one below kMinSummaryTokens is not written. In
// the Anthropic format a run of an odd number of messages leaves the same role
// on both sides (or an assistant first), so it always needs a message of
// the other role: at least `placeholder` tokens. Each run's weight and
// message count are kept at its endpoints, so that a drop updates runs and
// the total summary cost in O(1).
class Runs {
 public:
  Runs() : Runs(0, 0, 0) {}
  Runs(size_t n, int64_t reserve, int64_t placeholder);

  bool dropped(size_t i) const { return dropped_[i]; }
  int64_t reserve() const { return reserve_; }
  int64_t placeholder() const { return placeholder_; }
  size_t count() const { return count_; }
  // Of the runs' total cost, what only the placeholders of odd runs add
  // beyond their summaries' allowance: not part of the summaries' share.
  int64_t placeholder_extra() const { return placeholder_extra_; }
  // The summary allowance of the run starting at item i.
  int64_t CostOfRunAt(size_t i) const { return Cost(weight_[i], messages_[i]); }

  // Drops item i, of `messages` messages whose summary-wanting tokens are
  // `w`; returns the change in the total summary cost.
  int64_t Drop(size_t i, int64_t w, size_t messages);

 private:
  int64_t Cost(int64_t w, size_t messages) const;
  int64_t SummaryCost(int64_t w) const;

  int64_t reserve_;
  int64_t placeholder_;  // 0 unless the format alternates roles
  size_t count_ = 0;     // runs
  int64_t placeholder_extra_ = 0;
  std::vector<size_t> start_;     // at a run's last item: its first
  std::vector<size_t> end_;       // at a run's first item: its last
  std::vector<int64_t> weight_;   // at a run's first item
  std::vector<size_t> messages_;  // at a run's first item
  std::vector<bool> dropped_;
};

// The dropped runs of `runs` in groups of consecutive runs, at most
// max(kMinSummaryCap, ceil(kept messages / kKeptPerSummary)) groups of
// about equal dropped weight: each group gets one summary, so that a reader
// gets a few summaries worth their tokens rather than one per gap between
// kept messages.
struct RunGroup {
  std::vector<std::pair<size_t, size_t>> runs;  // [begin, end) of items
};
std::vector<RunGroup> SummaryGroups(const std::vector<Item>& items,
                                    const Runs& runs);

struct PlanInput {
  const std::vector<Item>* items = nullptr;
  CompactionStrategy strategy = CompactionStrategy::kSmart;
  int64_t priming = 0;      // the request's reply priming
  int64_t reserve = 0;      // a summary's cap (0: no summaries)
  int64_t placeholder = 0;  // see Runs
  // The most all summaries together take (the assembly shares it among
  // them): the plan counts the runs' reservations up to this.
  int64_t share = std::numeric_limits<int64_t>::max();
};

// The plan for `target` (steps 1-4 above), in a new Runs. Returns the
// estimated total: exact for kept units, an upper bound for summaries.
int64_t Plan(const PlanInput& input, int64_t target, Runs* runs);

// The estimate of `runs` as it stands: the kept units, the runs' summary
// allowances (together at most the share), what the placeholders of odd
// runs add beyond their summaries (Anthropic), and the priming.
int64_t Estimate(const PlanInput& input, const Runs& runs);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_PLAN_H_
