// A second process for the cross-process tests: started with a pipe from
// its stdout, read line by line, killed and reaped by the test.

#ifndef CTXKIT_TESTS_UNIT_PEER_PROCESS_H_
#define CTXKIT_TESTS_UNIT_PEER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace ctxkit::testing {

// A running peer with a pipe from its stdout.
struct PeerProcess {
  pid_t pid = -1;
  int out = -1;
  std::string buffered;  // bytes read but not yet a whole line
};

// Starts `program` with `args` (posix_spawn, so a parent with threads is
// safe). Fails the test when it cannot.
PeerProcess StartProcess(const std::string& program,
                         const std::vector<std::string>& args);
// Reads what the peer has written within `timeout_ms` (0 = what is there
// now) and returns the complete lines. `eof` is set when the pipe closed.
std::vector<std::string> ReadLines(PeerProcess& peer, int timeout_ms,
                                   bool* eof);
// Reads every remaining line until EOF (failing after 60 s).
std::vector<std::string> ReadToEnd(PeerProcess& peer);
// Waits for the peer; returns its exit code, or 128 + signal.
int WaitPeer(PeerProcess& peer);

}  // namespace ctxkit::testing

#endif  // CTXKIT_TESTS_UNIT_PEER_PROCESS_H_
