// Helpers shared by the conversation store tests.

#ifndef CTXKIT_TESTS_CONVERSATIONS_TEST_HELPERS_H_
#define CTXKIT_TESTS_CONVERSATIONS_TEST_HELPERS_H_

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "tests/unit/test_util.h"

namespace ctxkit::testing {

// A clock the test moves by hand; starts at 2024-11-15 10:00:00 UTC.
struct ManualClock {
  std::shared_ptr<std::atomic<int64_t>> now =
      std::make_shared<std::atomic<int64_t>>(int64_t{1731664800000});
  std::function<int64_t()> Fn() const {
    auto n = now;
    return [n] { return n->load(); };
  }
  void Advance(int64_t ms) { *now += ms; }
};

// Seeded random bits for ids (ConversationOptions::random): SplitMix64 over
// an atomic counter, so it is thread-safe and two sources with the same
// seed give the same ids, call for call.
struct SeededRandom {
  std::shared_ptr<std::atomic<uint64_t>> state =
      std::make_shared<std::atomic<uint64_t>>(uint64_t{0x5eed});
  std::function<uint64_t()> Fn() const {
    auto s = state;
    return [s] {
      uint64_t z = s->fetch_add(0x9E3779B97F4A7C15ULL) + 0x9E3779B97F4A7C15ULL;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      return z ^ (z >> 31);
    };
  }
};

// A store and a conversation store in a fresh directory, with an injected
// clock and seeded ids: the same calls on two fixtures give the same bytes.
struct Fixture {
  TempDir dir;
  ManualClock clock;
  SeededRandom random;
  std::unique_ptr<Store> store;
  std::unique_ptr<ConversationStore> convs;

  Fixture() {
    store = Must(Store::Open(dir.Sub("s")));
    ConversationOptions options;
    options.clock = clock.Fn();
    options.random = random.Fn();
    convs = Must(ConversationStore::Open(*store, options));
  }

  uint64_t Entries(const std::string& db) const {
    auto info = store->Info();
    REQUIRE(info.ok());
    for (const auto& d : info->databases) {
      if (d.name == db) return d.entries;
    }
    return 0;
  }
};

inline NewMessage Msg(MessageRole role, std::string content) {
  NewMessage m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

}  // namespace ctxkit::testing

#endif  // CTXKIT_TESTS_CONVERSATIONS_TEST_HELPERS_H_
