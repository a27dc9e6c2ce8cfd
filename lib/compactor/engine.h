// The compaction engine: one compaction of one parsed history. It
// classifies every message once, marks what must be kept, cuts must-keep
// messages gracefully when they alone exceed the target, plans which units
// to drop (plan.h), and assembles the output with one summary per dropped
// run.
//
// Why it is linear. Every message is parsed, counted and classified once;
// a plan visits each unit a bounded number of times; there are at most two
// plans with summaries, one without, and, when must-keep messages were cut,
// one more round to use the room the first left unused. Only messages that
// are cut are counted again (line by line, text_cut.h).
//
// Thread safety: an Engine is used by one thread, for one compaction.

#ifndef CTXKIT_LIB_COMPACTOR_ENGINE_H_
#define CTXKIT_LIB_COMPACTOR_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/classifier.h"
#include "ctxkit/compactor.h"
#include "lib/base/cancel_poll.h"
#include "lib/compactor/chat_history.h"
#include "lib/compactor/plan.h"
#include "lib/compactor/summary.h"
#include "lib/compactor/task_finder.h"
#include "lib/compactor/text_cut.h"
#include "lib/tokenizer/message_counter.h"
#include "simdjson.h"

namespace ctxkit::internal {

// The summary count and share caps (plan.h holds the count's constants):
// summaries take at most this share of the target, so that what is kept
// verbatim dominates the output.
inline constexpr int64_t kMaxSummaryShareDivisor = 5;  // 20 %
// When must-keep messages had to be cut, a result below this share of the
// target is redone with smaller cuts (the budget is there to be used).
inline constexpr int64_t kMinUsePercent = 90;

class Engine {
 public:
  // `options`, `services` and `poll` must outlive the engine; `counter`
  // counts with the model's tokenizer. Every pass over the messages reports
  // its work to `poll` (options.cancel), and Prepare and Compact return its
  // CANCELLED as soon as it says so.
  Engine(const CompactionOptions& options, const CompactorServices& services,
         ChatHistory history, MessageCounter& counter, CancelPoll& poll);

  // Counts and classifies `messages` (the array `history` was parsed from).
  absl::Status Prepare(simdjson::dom::array messages,
                       const Classifier& classifier);
  absl::StatusOr<CompactionResult> Compact();

 private:
  struct Attempt {
    std::vector<CompactedMessage> out;
    std::vector<MessageDecision::Action> actions;  // per input message
    std::vector<std::string_view> reasons;         // per input message
    SpanDigester overall;                          // everything summarized
    int64_t total = 0;
    int64_t summary_tokens = 0;  // of summary and placeholder messages
    size_t summaries = 0;
    size_t summarizer_failures = 0;
  };

  absl::StatusOr<int64_t> CountJson(std::string_view json);
  void BuildItems();
  void ApplyCompressSimilar();
  // The plan and its output for the current cuts: with summaries (and the
  // passes that use the room they leave), else without.
  absl::StatusOr<Attempt> PlanAndAssemble(const PlanInput& input);
  // Writes the output of the plan in `runs`; `use_summarizer` lets the
  // host's Summarizer write the summaries.
  absl::StatusOr<Attempt> Assemble(const Runs& runs, bool allow_truncation,
                                   bool use_summarizer);
  // The facts of the dropped runs of `group` (each message digested once
  // per compaction, whatever the number of attempts).
  absl::StatusOr<SpanDigest> DigestGroup(const RunGroup& group);
  // The summary of the dropped runs of `group` (whose digest is `digest`),
  // within `allowance` tokens.
  absl::StatusOr<std::string> SummaryFor(const RunGroup& group,
                                         const SpanDigest& digest,
                                         int64_t allowance, bool use_summarizer,
                                         Attempt& attempt);
  // The summary and placeholder cost of dropping every unit that need not
  // be kept: the room must-keep messages leave for the rest.
  int64_t RoomForOptional(const PlanInput& input) const;
  // When the must-keep messages at their floors and `room` exceed the
  // target, what the next turn needs is no longer must-keep (it becomes the
  // last unit dropped), one kind at a time until the floors fit: the latest
  // plan, the last result, the latest request, the final decision.
  absl::Status LetGoOfNeeded(int64_t room);
  // Lets go of the next kind (in LetGoOfNeeded's order) that still has a
  // must-keep item; false when none is left.
  bool LetGoOfNextNeeded();
  // Makes every must-keep item kept for `reason` optional; returns their
  // indexes into items_.
  std::vector<size_t> LetGo(std::string_view reason);
  // Cuts must-keep messages, each proportionally to what it holds above its
  // floor, until they and `room` fit the target (or every one is at its
  // floor). Cuts are always made from the original text, so calling it
  // again with more room undoes part of them.
  absl::Status DegradeMustKeep(int64_t room);
  // Cuts kept messages, largest first (must-keep ones no lower than their
  // floors), to bring the attempt to the target.
  absl::Status Truncate(Attempt& attempt);
  // Cuts message m's largest text to at most `keep` tokens (from the
  // original text), or restores it when `keep` covers the whole text.
  // Returns the message's tokens after the cut.
  absl::StatusOr<int64_t> CutTo(size_t m, int64_t keep);
  absl::StatusOr<TextCutter*> Cutter(size_t m);
  TextKind KindOf(size_t m) const;
  bool IsMustKeep(size_t m) const { return must_keep_message_[m]; }
  void RefreshItemTokens();
  // The message as emitted when kept: cut, or as given.
  const std::string& KeptJson(size_t m) const {
    return replaced_[m].empty() ? history_.messages[m].json : replaced_[m];
  }

  const CompactionOptions& options_;
  const CompactorServices& services_;
  ChatHistory history_;
  MessageCounter& counter_;
  CancelPoll& poll_;
  std::vector<int64_t> original_tokens_;
  std::vector<int64_t> tokens_;
  std::vector<Classification> classes_;
  TaskFinding opening_;
  std::vector<Item> items_;
  std::vector<char> must_keep_message_;
  std::vector<std::string> replaced_;  // per message: the cut JSON, or empty
  std::vector<int64_t> removed_;       // per message: text tokens cut
  // Made when a message is first cut: its largest text (owned here, never
  // moved: the vector is sized once) and the cutter that reads it.
  std::vector<std::string> largest_text_;
  std::vector<std::optional<TextCutter>> cutters_;
  std::vector<std::unique_ptr<SpanDigest>> message_digests_;  // made on use
  int64_t original_total_ = 0;
  int64_t target_ = 0;
  simdjson::dom::parser scratch_parser_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_ENGINE_H_
