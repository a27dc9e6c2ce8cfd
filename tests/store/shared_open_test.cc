// Store::OpenShared: a directory opened twice in one process gives one
// Store, whatever path reaches it; concurrent opens agree; the Store closes
// with its last handle; a different read_only or sync is refused, naming
// both.

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ctxkit/store.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

namespace fs = std::filesystem;

using testing::Contains;

TEST_CASE("a second OpenShared of one directory shares the Store") {
  testing::TempDir dir;
  const std::string path = dir.Sub("store");
  auto first = Store::OpenShared(path);
  REQUIRE(first.ok());
  // Another spelling of the same directory finds it too.
  auto second = Store::OpenShared(path + "/.");
  REQUIRE(second.ok());
  CHECK(first->get() == second->get());

  // While it is shared, Open (unshared) is refused as before.
  auto unshared = Store::Open(path);
  REQUIRE_FALSE(unshared.ok());
  CHECK(unshared.status().code() == StatusCode::kFailedPrecondition);

  // A different mode cannot share it.
  StoreOptions read_only;
  read_only.read_only = true;
  auto other_mode = Store::OpenShared(path, read_only);
  REQUIRE_FALSE(other_mode.ok());
  CHECK(other_mode.status().code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(other_mode.status().message(), "read-write"));
  CHECK(Contains(other_mode.status().message(), "read-only"));

  // Nor a different sync mode: full durability must not be given up, nor
  // gained, unawares.
  StoreOptions data_only;
  data_only.sync = StoreSync::kDataOnly;
  auto other_sync = Store::OpenShared(path, data_only);
  REQUIRE_FALSE(other_sync.ok());
  CHECK(other_sync.status().code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(other_sync.status().message(), "StoreSync::kFull"));
  CHECK(Contains(other_sync.status().message(), "StoreSync::kDataOnly"));

  // Released in either order; the Store closes with the last handle, after
  // which the directory can be opened afresh, read-only this time.
  first->reset();
  CHECK((*second)->path() == path);
  second->reset();
  auto reopened = Store::OpenShared(path, read_only);
  REQUIRE(reopened.ok());
  CHECK((*reopened)->read_only());
}

TEST_CASE("concurrent OpenShared calls open the directory once") {
  testing::TempDir dir;
  const std::string path = dir.Sub("store");
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<Store>> stores(kThreads);
  std::vector<int> failed(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int round = 0; round < 20; ++round) {
        auto store = Store::OpenShared(path);
        if (!store.ok()) {
          ++failed[i];
          continue;
        }
        stores[i] = *std::move(store);
        // Drop it every other round so that opens race with closes.
        if (round % 2 == 0) stores[i].reset();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) CHECK(failed[i] == 0);
  for (int i = 1; i < kThreads; ++i) CHECK(stores[i].get() == stores[0].get());
}

TEST_CASE("OpenShared reports Open's errors") {
  testing::TempDir dir;
  StoreOptions options;
  options.create_if_missing = false;
  auto missing = Store::OpenShared(dir.Sub("nothing-here"), options);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  auto empty = Store::OpenShared("");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ctxkit
