// Helpers shared by the conversation store tests.

#ifndef CTXKIT_TESTS_CONVERSATIONS_TEST_HELPERS_H_
#define CTXKIT_TESTS_CONVERSATIONS_TEST_HELPERS_H_

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
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

// A store and a conversation store in a fresh directory.
struct Fixture {
  TempDir dir;
  ManualClock clock;
  std::unique_ptr<Store> store;
  std::unique_ptr<ConversationStore> convs;

  Fixture() {
    store = Must(Store::Open(dir.Sub("s")));
    ConversationOptions options;
    options.clock = clock.Fn();
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
