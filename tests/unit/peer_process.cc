#include "tests/unit/peer_process.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

extern char** environ;

namespace ctxkit::testing {

PeerProcess StartProcess(const std::string& program,
                         const std::vector<std::string>& args) {
  int fds[2];
  REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
  // posix_spawn rather than fork: the parent may have threads running (the
  // cache's flusher, the concurrency test's workers).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::string path = program;
  std::vector<char*> argv = {path.data()};
  std::vector<std::string> copies = args;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  REQUIRE_MESSAGE(rc == 0, "posix_spawn failed: ", rc);
  return PeerProcess{pid, fds[0], {}};
}

std::vector<std::string> ReadLines(PeerProcess& peer, int timeout_ms,
                                   bool* eof) {
  *eof = false;
  std::vector<std::string> lines;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd p{peer.out, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left)));
    if (ready <= 0) break;
    char buf[65536];
    const ssize_t n = read(peer.out, buf, sizeof buf);
    if (n <= 0) {
      *eof = true;
      break;
    }
    peer.buffered.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = peer.buffered.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      lines.push_back(peer.buffered.substr(start, nl - start));
    }
    peer.buffered.erase(0, start);
  }
  return lines;
}

std::vector<std::string> ReadToEnd(PeerProcess& peer) {
  std::vector<std::string> all;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    bool eof = false;
    std::vector<std::string> lines = ReadLines(peer, 100, &eof);
    all.insert(all.end(), lines.begin(), lines.end());
    if (eof) break;
    if (std::chrono::steady_clock::now() > deadline) {
      FAIL("the peer process did not finish within 60 s");
      break;
    }
  }
  // A killed peer's last line is whole (one write per line), so nothing is
  // left over.
  CHECK_MESSAGE(peer.buffered.empty(), peer.buffered);
  close(peer.out);
  peer.out = -1;
  return all;
}

int WaitPeer(PeerProcess& peer) {
  int status = 0;
  REQUIRE(waitpid(peer.pid, &status, 0) == peer.pid);
  peer.pid = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace ctxkit::testing
