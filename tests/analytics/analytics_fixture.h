// What the Analytics tests share: a store in a fresh directory and an
// Analytics opened on it with a settable clock.

#ifndef CTXKIT_TESTS_ANALYTICS_ANALYTICS_FIXTURE_H_
#define CTXKIT_TESTS_ANALYTICS_ANALYTICS_FIXTURE_H_

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "ctxkit/analytics.h"
#include "ctxkit/store.h"
#include "lib/base/ids.h"

namespace ctxkit::analytics_test {

constexpr int64_t kDay = int64_t{24} * 3600 * 1000;
constexpr int64_t kT0 = 1700000000000;

struct StoreFixture {
  std::filesystem::path dir;
  std::unique_ptr<Store> store;
  std::shared_ptr<std::atomic<int64_t>> now =
      std::make_shared<std::atomic<int64_t>>(kT0);
  StoreFixture() {
    dir = std::filesystem::temp_directory_path() /
          ("ctxkit_analytics_" + internal::NewUuid());
    std::filesystem::create_directories(dir);
    OpenStore();
  }
  ~StoreFixture() {
    store.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void OpenStore() {
    auto s = Store::Open(dir.string());
    REQUIRE(s.ok());
    store = std::move(*s);
  }
  std::unique_ptr<Analytics> Open(AnalyticsOptions o = {}) {
    auto n = now;
    o.clock = [n] { return n->load(); };
    auto a = Analytics::Open(*store, std::move(o));
    REQUIRE_MESSAGE(a.ok(), a.status().ToString());
    return std::move(*a);
  }
};

}  // namespace ctxkit::analytics_test

#endif  // CTXKIT_TESTS_ANALYTICS_ANALYTICS_FIXTURE_H_
