// Cancellation of compactions and message counts (ctxkit/cancel.h): a check
// that already says true costs no work, one set from another thread mid-run
// stops the call, every poll is a real way out (stopping at the k-th ask
// returns at once, having asked k times), nothing is written by a cancelled
// call, the cadence follows the work, and a check that never says true
// leaves every byte as it was.

#include "ctxkit/cancel.h"

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ctxkit/analytics.h"
#include "ctxkit/cache.h"
#include "ctxkit/compactor.h"
#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/store.h"
#include "tests/compactor/history_builders.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

using compactor_test::Array;
using compactor_test::Call;
using compactor_test::Msg;
using compactor_test::Result;

// An agent history of `turns` tool calls with results of a few hundred
// bytes, some of them errors: every phase of a compaction has work to do.
std::string History(int turns) {
  std::vector<std::string> m;
  m.push_back(Msg("system", "You are a coding agent."));
  m.push_back(Msg("user", "Fix the failing test in src/parser.py please."));
  for (int t = 0; t < turns; ++t) {
    const std::string id = "call_" + std::to_string(t);
    m.push_back(
        Call(id, "bash",
             R"({"command":"cat src/mod)" + std::to_string(t) + R"(.py"})",
             "Reading module " + std::to_string(t)));
    std::string out;
    for (int line = 0; line < 8; ++line) {
      out += "def f" + std::to_string(line) + "(x): return x * " +
             std::to_string(t) + "\n";
    }
    if (t % 5 == 0) out += "ValueError: bad value " + std::to_string(t);
    m.push_back(Result(id, out));
  }
  m.push_back(Msg("user", "Now finish it."));
  return Array(m);
}

// A check that counts how often it is asked and says true from the
// `stop_at`-th time on (never when 0).
struct Countdown {
  size_t stop_at = 0;
  size_t asked = 0;
  CancelCheck check() {
    return [this] {
      ++asked;
      return stop_at != 0 && asked >= stop_at;
    };
  }
};

CompactionOptions Options(int64_t max_tokens) {
  CompactionOptions o;
  o.model = "gpt-4o";
  o.max_tokens = max_tokens;
  o.recent_window = 4;
  o.explain = true;
  return o;
}

TEST_CASE("a check that already says true stops a compaction before work") {
  Compactor c;
  CompactionOptions o = Options(2000);
  Countdown countdown{.stop_at = 1};
  o.cancel = countdown.check();
  StatusOr<CompactionResult> r = c.Compact(History(200), o);
  REQUIRE(r.status().code() == StatusCode::kCancelled);
  CHECK(r.status().message() == "compaction cancelled");
  // Asked once, at the start: no message was counted before it.
  CHECK(countdown.asked == 1);

  Countdown json_countdown{.stop_at = 1};
  CompactionBudget budget;
  budget.target_tokens = 7;
  StatusOr<std::string> doc =
      c.CompactJson(R"({"messages":)" + History(20) + R"(,"max_tokens":500})",
                    json_countdown.check(), &budget);
  CHECK(doc.status().code() == StatusCode::kCancelled);
  CHECK(budget.target_tokens == 7);  // untouched
}

TEST_CASE("a check that never says true changes no byte of the result") {
  Compactor c;
  const std::string history = History(300);
  for (CompactionStrategy strategy :
       {CompactionStrategy::kSmart, CompactionStrategy::kSummarize,
        CompactionStrategy::kRemoveOld, CompactionStrategy::kCompressSimilar}) {
    CAPTURE(CompactionStrategyName(strategy));
    CompactionOptions plain = Options(3000);
    plain.strategy = strategy;
    CompactionOptions checked = plain;
    Countdown countdown;
    checked.cancel = countdown.check();
    StatusOr<CompactionResult> a = c.Compact(history, plain);
    StatusOr<CompactionResult> b = c.Compact(history, checked);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->messages_json == b->messages_json);
    CHECK(a->compacted_tokens == b->compacted_tokens);
    CHECK(a->decisions.size() == b->decisions.size());
    CHECK(a->summary.description == b->summary.description);
    // It was asked, and more often than once per kCancelPollWork of the
    // input's JSON while counting alone.
    CHECK(countdown.asked > history.size() / kCancelPollWork);
  }
  const std::string request =
      R"({"messages":)" + history + R"(,"max_tokens":2500,"explain":true})";
  Countdown countdown;
  StatusOr<std::string> plain_doc = c.CompactJson(request);
  StatusOr<std::string> checked_doc = c.CompactJson(request, countdown.check());
  REQUIRE(plain_doc.ok());
  REQUIRE(checked_doc.ok());
  CHECK(*plain_doc == *checked_doc);
}

TEST_CASE("the cadence follows the work: many small messages, few large") {
  // 64 small messages cost a poll's worth of work; so do 64 KiB of JSON.
  Compactor c;
  std::vector<std::string> small;
  for (int i = 0; i < 2000; ++i) small.push_back(Msg("user", "hi"));
  CompactionOptions o = Options(100000);
  Countdown small_count;
  o.cancel = small_count.check();
  REQUIRE(c.Compact(Array(small), o).ok());
  // Counting and classifying alone pass over 2000 messages twice.
  CHECK(small_count.asked >= 2 * 2000 / (kCancelPollWork / kCancelMessageWork));

  std::vector<std::string> large;
  const std::string text(256 * 1024, 'a');
  for (int i = 0; i < 4; ++i) large.push_back(Msg("user", text));
  Countdown large_count;
  o.cancel = large_count.check();
  REQUIRE(c.Compact(Array(large), o).ok());
  // At least one poll per 256 KiB message in each of the two passes.
  CHECK(large_count.asked >= 2 * 4);
}

TEST_CASE("stopping at any ask returns at once, having asked no more") {
  Compactor c;
  const std::string history = History(120);
  for (CompactionStrategy strategy :
       {CompactionStrategy::kSmart, CompactionStrategy::kCompressSimilar}) {
    CAPTURE(CompactionStrategyName(strategy));
    CompactionOptions o = Options(1500);
    o.strategy = strategy;
    Countdown full;
    o.cancel = full.check();
    REQUIRE(c.Compact(history, o).ok());
    REQUIRE(full.asked > 4);
    // Every poll is a real way out: whichever ask says true first, the
    // call returns CANCELLED without asking again. Only the last ask is the
    // one before the writes: a poll whose answer were lost would let the
    // call run on to it.
    size_t at_the_end = 0;
    for (size_t k = 1; k <= full.asked; ++k) {
      CAPTURE(k);
      Countdown countdown{.stop_at = k};
      o.cancel = countdown.check();
      StatusOr<CompactionResult> r = c.Compact(history, o);
      REQUIRE(r.status().code() == StatusCode::kCancelled);
      CHECK(countdown.asked == k);
      const std::string message(r.status().message());
      CHECK(message.starts_with("compaction cancelled"));
      if (message == "compaction cancelled while writing the result") {
        ++at_the_end;
        CHECK(k == full.asked);
      }
    }
    CHECK(at_the_end == 1);
  }
}

TEST_CASE("a check set from another thread mid-run stops the compaction") {
  Compactor c;
  const std::string history = History(400);
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  bool reached = false;
  size_t asked = 0;
  size_t asked_when_set = 0;
  // The compaction is paused on its third ask until the other thread has
  // set the flag: the test does not depend on how fast either thread runs.
  std::thread canceller([&] {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return reached; });
    stop.store(true);
    asked_when_set = asked;
    cv.notify_all();
  });
  CompactionOptions o = Options(2000);
  const CancelCheck when_set = CancelWhen(stop);
  o.cancel = [&] {
    ++asked;
    if (asked == 3) {
      std::unique_lock lock(mu);
      reached = true;
      cv.notify_all();
      cv.wait(lock, [&] { return stop.load(); });
    }
    return when_set();
  };
  StatusOr<CompactionResult> r = c.Compact(history, o);
  canceller.join();
  REQUIRE(r.status().code() == StatusCode::kCancelled);
  CHECK(asked_when_set == 3);
  CHECK(asked == 3);  // the flag was seen at once, and not asked again
  CHECK(r.status().message().find("counting tokens, after ") !=
        std::string::npos);
}

TEST_CASE("a cancelled compaction writes no cache entry, analytics or view") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto cache = Cache::Open(**store);
  REQUIRE(cache.ok());
  auto analytics = Analytics::Open(**store);
  REQUIRE(analytics.ok());
  auto convs = ConversationStore::Open(**store);
  REQUIRE(convs.ok());
  CompactorServices services;
  services.cache = cache->get();
  services.analytics = analytics->get();
  Compactor c(services);
  const std::string history = History(60);
  CompactionOptions o = Options(1200);
  o.enable_caching = true;
  o.enable_analytics = true;

  // The last ask of a whole run is the one just before the writes. A
  // Compactor without services asks as often (the cache is looked up
  // before any ask after the first).
  Countdown full;
  CompactionOptions counted = o;
  counted.cancel = full.check();
  REQUIRE(Compactor().Compact(history, counted).ok());
  Countdown last{.stop_at = full.asked};
  o.cancel = last.check();
  CHECK(c.Compact(history, o).status().code() == StatusCode::kCancelled);
  CHECK(last.asked == full.asked);
  CHECK(*(*analytics)->CallCount("compact") == 0);
  o.cancel = nullptr;
  StatusOr<CompactionResult> after = c.Compact(history, o);
  REQUIRE(after.ok());
  CHECK_FALSE(after->from_cache);  // the cancelled run left no entry

  // A stored conversation: cancelled at its last ask, no view is saved.
  auto conv = (*convs)->Create({.title = "t", .model = "gpt-4o"});
  REQUIRE(conv.ok());
  std::vector<NewMessage> batch;
  batch.push_back({.role = MessageRole::kUser, .content = "Plan a trip."});
  for (int i = 0; i < 200; ++i) {
    batch.push_back(
        {.role = i % 2 ? MessageRole::kUser : MessageRole::kAssistant,
         .content = "stop number " + std::to_string(i) + " of the trip"});
  }
  REQUIRE((*convs)->AddMessages(conv->id, batch).ok());
  Countdown whole;
  REQUIRE(c.CompactConversationJson(**convs, conv->id, R"({"max_tokens":300})",
                                    whole.check())
              .ok());
  REQUIRE((*convs)->GetCompactedView(conv->id).ok());  // version 1
  Countdown at_save{.stop_at = whole.asked};
  uint64_t version = 99;
  StatusOr<std::string> doc =
      c.CompactConversationJson(**convs, conv->id, R"({"max_tokens":300})",
                                at_save.check(), nullptr, &version);
  REQUIRE(doc.status().code() == StatusCode::kCancelled);
  CHECK(doc.status().message() ==
        "compaction cancelled while saving the compacted view");
  CHECK(version == 99);
  auto latest = (*convs)->GetCompactedView(conv->id);
  REQUIRE(latest.ok());
  CHECK(latest->version == 1);
}

TEST_CASE("counting messages stops when its check says so") {
  const std::string history = History(300);
  MessageCountOptions plain;
  StatusOr<MessageCount> a = CountMessagesForModel("gpt-4o", history, plain);
  REQUIRE(a.ok());
  Countdown never;
  MessageCountOptions checked;
  checked.cancel = never.check();
  StatusOr<MessageCount> b = CountMessagesForModel("gpt-4o", history, checked);
  REQUIRE(b.ok());
  CHECK(a->messages == b->messages);
  CHECK(a->total == b->total);
  CHECK(never.asked > 1);

  Countdown first{.stop_at = 1};
  checked.cancel = first.check();
  StatusOr<MessageCount> c = CountMessagesForModel("gpt-4o", history, checked);
  CHECK(c.status().code() == StatusCode::kCancelled);
  CHECK(first.asked == 1);

  Countdown second{.stop_at = 2};
  checked.cancel = second.check();
  c = CountMessagesForModel("gpt-4o", history, checked);
  REQUIRE(c.status().code() == StatusCode::kCancelled);
  CHECK(second.asked == 2);
  CHECK(c.status().message().starts_with(
      "token count cancelled while counting messages, after "));
}

}  // namespace
}  // namespace ctxkit
