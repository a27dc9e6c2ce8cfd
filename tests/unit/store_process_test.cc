// Cross-process tests of ctxkit::Store, driving the store_peer program:
// shared access, map growth by another process, stale reader slots of killed
// processes, permission errors, and durability under SIGKILL.

#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ctxkit/store.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

using testing::TempDir;

struct Child {
  pid_t pid = -1;
  int out = -1;  // the child's stdout
};

Child Spawn(const std::vector<std::string>& args) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::vector<char*> argv;
  std::string peer = CTXKIT_STORE_PEER;
  argv.push_back(peer.data());
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fds[0]};
}

// Reads until EOF, giving up (and failing the test) after 60 s.
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int left =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - std::chrono::steady_clock::now())
                             .count());
    if (left <= 0 || poll(&p, 1, left) <= 0) {
      FAIL("timed out reading from store_peer");
      break;
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// Reads one line, failing the test after 60 s.
std::string ReadLine(int fd) {
  std::string line;
  char c;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 60000) <= 0) {
      FAIL("timed out waiting for a line from store_peer");
      return line;
    }
    if (read(fd, &c, 1) != 1 || c == '\n') return line;
    line += c;
  }
}

int Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

struct Result {
  int exit_code;
  std::string out;
};

Result Run(const std::vector<std::string>& args) {
  Child c = Spawn(args);
  std::string out = ReadAll(c.out);
  return Result{Wait(c.pid), out};
}

std::unique_ptr<Store> MustOpen(const std::string& path,
                                const StoreOptions& options = {}) {
  auto store = Store::Open(path, options);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  return std::move(store).value();
}

TEST_CASE("two processes see each other's committed writes") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  auto store = MustOpen(path);
  auto db = store->OpenDatabase("shared");
  REQUIRE(db.ok());
  REQUIRE(store
              ->Update([&](WriteTransaction& t) {
                return t.Put(*db, "from_parent", "p1");
              })
              .ok());

  Result got = Run({"get", path, "shared", "from_parent"});
  CHECK(got.exit_code == 0);
  CHECK(got.out == "p1\n");
  Result put = Run({"put", path, "shared", "from_peer", "c1"});
  CHECK(put.exit_code == 0);
  CHECK(put.out == "ok\n");

  auto txn = store->BeginRead();
  REQUIRE(txn.ok());
  auto v = txn->Get(*db, "from_peer");
  REQUIRE(v.ok());
  CHECK(*v == "c1");
}

TEST_CASE("map growth by another process is adopted") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  StoreOptions small;
  small.map_size =
      StoreOptions::kMinMapSize;  // the peer uses the 64 MiB default
  auto store = MustOpen(path, small);
  auto db = store->OpenDatabase("shared");
  REQUIRE(db.ok());
  REQUIRE(
      store
          ->Update([&](WriteTransaction& t) { return t.Put(*db, "mine", "1"); })
          .ok());

  Result fill = Run({"fill", path, "shared", "128", "65536"});  // 8 MiB
  REQUIRE_MESSAGE(fill.exit_code == 0, fill.out);

  auto txn = store->BeginRead();
  REQUIRE_MESSAGE(txn.ok(), txn.status().ToString());
  CHECK(*txn->Count(*db) == 129);
  auto v = txn->Get(*db, "fill000127");
  REQUIRE(v.ok());
  CHECK(v->size() == 65536);
  txn = store->BeginRead();  // end the old one by replacing it
  CHECK(store
            ->Update(
                [&](WriteTransaction& t) { return t.Put(*db, "after", "2"); })
            .ok());
  CHECK(store->Info()->map_size > small.map_size);
}

TEST_CASE("a killed reader's slot is cleared when the store is opened") {
  // The slot outlives its process only while another process keeps the
  // environment open (the last one to open it resets the reader table), as
  // a long-running server does. Play that server with a peer.
  TempDir dir;
  const std::string path = dir.Sub("s");
  Child server = Spawn({"hold-open", path});
  REQUIRE(ReadLine(server.out) == "ready");
  Child reader = Spawn({"hold-reader", path});
  REQUIRE(ReadLine(reader.out) == "ready");
  kill(reader.pid, SIGKILL);
  CHECK(Wait(reader.pid) == 128 + SIGKILL);
  close(reader.out);

  {
    auto store = MustOpen(path);
    CHECK(store->stale_readers_cleared() == 1);
    CHECK(store->Info()->readers_in_use == 0);
  }
  kill(server.pid, SIGKILL);
  Wait(server.pid);
  close(server.out);
}

TEST_CASE("directories that cannot be written give PERMISSION_DENIED") {
  TempDir dir;
  chmod(dir.path().c_str(), 0755);
  const std::string existing = dir.Sub("existing");
  MustOpen(existing).reset();  // created 0700 by its owner
  const std::string locked_parent = dir.Sub("locked");
  REQUIRE(mkdir(locked_parent.c_str(), 0555) == 0);
  const std::string new_store = locked_parent + "/s";

  if (geteuid() == 0) {
    // Root ignores permission bits, so ask an unprivileged user (nobody).
    Result a = Run({"open-as", "65534", existing});
    CHECK_MESSAGE(a.out.rfind("PERMISSION_DENIED", 0) == 0, a.out);
    Result b = Run({"open-as", "65534", new_store});
    CHECK_MESSAGE(b.out.rfind("PERMISSION_DENIED", 0) == 0, b.out);
    CHECK(b.out.find(new_store) != std::string::npos);
  } else {
    REQUIRE(chmod(existing.c_str(), 0500) == 0);
    CHECK(Store::Open(existing).status().code() ==
          StatusCode::kPermissionDenied);
    auto s = Store::Open(new_store);
    CHECK(s.status().code() == StatusCode::kPermissionDenied);
    CHECK(s.status().message().find(new_store) != std::string::npos);
  }
}

TEST_CASE("acknowledged writes survive SIGKILL at random moments") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  const unsigned seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_us(0, 40000);

  std::set<long> acknowledged;
  long next = 0;
  int rounds_with_writes = 0;
  constexpr int kRounds = 100;
  for (int round = 0; round < kRounds; ++round) {
    Child writer = Spawn({"count", path, std::to_string(next)});
    // Every fifth round is killed at once, possibly before or while the
    // store is opened; the others once the writer has acknowledged a first
    // commit (so each such round really exercises writes, however slow the
    // machine), after a further random stretch of commits.
    std::string out;
    if (round % 5 != 0) {
      out = ReadLine(writer.out) + "\n";
      ++rounds_with_writes;
      usleep(static_cast<useconds_t>(delay_us(rng)));
    }
    kill(writer.pid, SIGKILL);
    CHECK(Wait(writer.pid) == 128 + SIGKILL);
    out += ReadAll(writer.out);
    // Only complete lines were acknowledged.
    size_t start = 0;
    for (size_t nl; (nl = out.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      const long n = std::stol(out.substr(start, nl - start));
      acknowledged.insert(n);
      next = std::max(next, n + 1);
    }

    auto store = Store::Open(path);
    REQUIRE_MESSAGE(store.ok(),
                    "round " << round << ": " << store.status().ToString());
    if (acknowledged.empty()) continue;
    auto db = (*store)->OpenDatabase("numbers");
    REQUIRE(db.ok());
    auto txn = (*store)->BeginRead();
    REQUIRE(txn.ok());
    long missing = 0;
    for (long n : acknowledged) {
      char key[32];
      std::snprintf(key, sizeof key, "n%012ld", n);
      auto v = txn->Get(*db, key);
      if (!v.ok() || *v != std::to_string(n)) ++missing;
    }
    CHECK_MESSAGE(missing == 0, "round " << round << ": " << missing
                                         << " acknowledged writes lost");
  }
  MESSAGE(acknowledged.size() << " acknowledged writes checked over " << kRounds
                              << " killed writers");
  CHECK(rounds_with_writes == kRounds - kRounds / 5);
  CHECK(acknowledged.size() >= static_cast<size_t>(rounds_with_writes));
}

}  // namespace
}  // namespace ctxkit
