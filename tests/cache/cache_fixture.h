// What the Cache tests share: a store in a fresh directory, a settable
// clock, and a Cache opened on them.

#ifndef CTXKIT_TESTS_CACHE_CACHE_FIXTURE_H_
#define CTXKIT_TESTS_CACHE_CACHE_FIXTURE_H_

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "ctxkit/cache.h"
#include "ctxkit/store.h"
#include "lib/base/ids.h"

namespace ctxkit::cache_test {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("ctxkit_cache_test_" + internal::NewUuid());
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct Clock {
  std::shared_ptr<std::atomic<int64_t>> now =
      std::make_shared<std::atomic<int64_t>>(1700000000000);
  std::function<int64_t()> fn() const {
    auto n = now;
    return [n] { return n->load(); };
  }
  void Advance(int64_t ms) { *now += ms; }
};

struct Fixture {
  TempDir dir;
  std::unique_ptr<Store> store;
  Clock clock;
  Fixture() {
    auto s = Store::Open(dir.path.string());
    REQUIRE(s.ok());
    store = std::move(*s);
  }
  std::unique_ptr<Cache> Open(CacheOptions options = {}) {
    options.clock = clock.fn();
    auto c = Cache::Open(*store, std::move(options));
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    return std::move(*c);
  }
};

CachePutOptions Prefix(std::string p, int64_t ttl = 0) {
  CachePutOptions o;
  o.prefix = std::move(p);
  o.ttl_ms = ttl;
  return o;
}

}  // namespace ctxkit::cache_test

#endif  // CTXKIT_TESTS_CACHE_CACHE_FIXTURE_H_
