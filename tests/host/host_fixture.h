// What the host tests share: the library's parts over a store in a fresh
// temporary directory, and a RequestContext that records what an adapter
// reports.

#ifndef CTXKIT_TESTS_HOST_HOST_FIXTURE_H_
#define CTXKIT_TESTS_HOST_HOST_FIXTURE_H_

#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "doctest/doctest.h"
#include "programs/ctxkit/host/services.h"
#include "programs/ctxkit/mcp/catalog.h"

namespace ctxkit::testing {

// host::Services over a new store, removed with the object.
class TempServices {
 public:
  explicit TempServices(host::HostConfig config = {}) {
    std::string dir =
        (std::filesystem::temp_directory_path() / "ctxkit-host-test-XXXXXX")
            .string();
    REQUIRE(mkdtemp(dir.data()) != nullptr);
    dir_ = dir;
    auto store = Store::Open(dir_ + "/db");
    REQUIRE_MESSAGE(store.ok(), store.status().ToString());
    auto services = host::OpenServices(config, *std::move(store));
    REQUIRE_MESSAGE(services.ok(), services.status().ToString());
    services_ = *std::move(services);
  }
  ~TempServices() {
    services_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TempServices(const TempServices&) = delete;
  TempServices& operator=(const TempServices&) = delete;

  host::Services& get() { return *services_; }

 private:
  std::string dir_;
  std::unique_ptr<host::Services> services_;
};

// A RequestContext over `services` that records progress and log lines and
// reports cancellation when `cancelled` is set, or from the
// `cancel_at`-th question on (0 = never); `asked` counts the questions.
class TestContext : public mcp::RequestContext {
 public:
  explicit TestContext(host::Services& services) : services_(services) {}

  host::Services& services() override { return services_; }
  bool Cancelled() const override {
    ++asked;
    return cancelled || (cancel_at != 0 && asked >= cancel_at);
  }
  void Progress(double done, double total, std::string_view) override {
    progress.emplace_back(done, total);
  }
  void Log(mcp::LogLevel, std::string_view data) override {
    logs.emplace_back(data);
  }

  bool cancelled = false;
  size_t cancel_at = 0;
  mutable size_t asked = 0;
  std::vector<std::pair<double, double>> progress;
  std::vector<std::string> logs;

 private:
  host::Services& services_;
};

// A TestContext over its own temporary store (TempServices is a base so
// that it is built before the context that refers to it).
class StoreContext : private TempServices, public TestContext {
 public:
  StoreContext() : TempServices(), TestContext(TempServices::get()) {}
};

}  // namespace ctxkit::testing

#endif  // CTXKIT_TESTS_HOST_HOST_FIXTURE_H_
