// ConversationStore from 8 threads at once, mixing every write with reads;
// run under TSan by the tsan preset. Totals must match a recount at the end.

#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ctxkit/conversations.h"
#include "tests/conversations/test_helpers.h"

namespace ctxkit {
namespace {

using testing::Fixture;
using testing::Msg;
using testing::Must;

TEST_CASE("8 threads mixing reads and writes keep totals consistent") {
  Fixture f;
  std::vector<std::string> shared;
  for (int i = 0; i < 4; ++i) {
    shared.push_back(Must(f.convs->Create({.title = "shared"})).id);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::string> own;
      for (int step = 0; step < 60; ++step) {
        const unsigned op = rng() % 10;
        const std::string& target = shared[rng() % shared.size()];
        bool ok = true;
        if (op < 3) {
          ok = f.convs
                   ->AddMessage(target,
                                Msg(MessageRole::kUser,
                                    "thread " + std::to_string(t) + " says hi"))
                   .ok();
        } else if (op < 4) {
          ok = f.convs
                   ->AddMessages(target, {Msg(MessageRole::kUser, "q"),
                                          Msg(MessageRole::kAssistant, "a")})
                   .ok();
        } else if (op < 5) {
          auto c = f.convs->Create({.title = "own", .model = "gpt-4o"});
          ok = c.ok();
          if (ok) own.push_back(c->id);
        } else if (op < 6 && !own.empty()) {
          ok = f.convs->Delete(own.back()).ok();
          own.pop_back();
        } else if (op < 7) {
          auto d = f.convs->Get(target);
          ok = d.ok() && d->conversation.message_count == d->messages.size();
          if (ok && !d->messages.empty()) {
            ok = f.convs
                     ->SetCompressed(target, {d->messages.front().id},
                                     rng() % 2 == 0)
                     .ok();
          }
        } else if (op < 8) {
          auto page = f.convs->List(5);
          ok = page.ok() && page->conversations.size() <= 5;
        } else if (op < 9) {
          auto s = f.convs->AggregateStats();
          ok = s.ok() && s->input_tokens + s->output_tokens == s->total_tokens;
        } else {
          ok = f.convs->ConversationStats(target).ok();
        }
        if (!ok) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);

  // Recount.
  AggregateStats s = Must(f.convs->AggregateStats());
  uint64_t conversations = 0, messages = 0, tokens = 0, compressed = 0;
  std::string cursor;
  do {
    ConversationPage page = Must(f.convs->List(1000, cursor));
    for (const Conversation& c : page.conversations) {
      ConversationDetail d = Must(f.convs->Get(c.id));
      ++conversations;
      messages += d.messages.size();
      for (const Message& m : d.messages) {
        tokens += m.tokens;
        compressed += m.is_compressed ? 1 : 0;
      }
    }
    cursor = page.next_cursor;
  } while (!cursor.empty());
  CHECK(s.conversations == conversations);
  CHECK(s.messages == messages);
  CHECK(s.total_tokens == tokens);
  CHECK(s.compressed_messages == compressed);
}

}  // namespace
}  // namespace ctxkit
