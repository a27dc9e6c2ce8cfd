#include "programs/ctxkit/mcp/stdio.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "programs/ctxkit/mcp/message_id.h"
#include "programs/ctxkit/mcp/session.h"
#include "simdjson.h"

namespace ctxkit::mcp {

namespace {

// The write end of the self-pipe the signal handler wakes the reader with.
volatile sig_atomic_t g_signal_fd = -1;

extern "C" void OnTerminate(int) {
  const int saved = errno;
  const char byte = 1;
  if (g_signal_fd >= 0) (void)!write(g_signal_fd, &byte, 1);
  errno = saved;
}

// Whole lines to `fd`, one writer at a time, so that concurrent senders
// (the worker, the reader answering a cancelled notification) never
// interleave and a message is never cut.
class LineWriter final : public Outbound {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}

  void Send(std::string message) override {
    message.push_back('\n');
    std::lock_guard lock(mutex_);
    if (failed_errno_ != 0) return;
    std::string_view rest = message;
    while (!rest.empty()) {
      const ssize_t n = write(fd_, rest.data(), rest.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
          pollfd p{fd_, POLLOUT, 0};
          (void)poll(&p, 1, -1);
          continue;
        }
        failed_errno_ = errno;
        return;
      }
      rest.remove_prefix(static_cast<size_t>(n));
    }
  }

  int failed_errno() {
    std::lock_guard lock(mutex_);
    return failed_errno_;
  }

 private:
  const int fd_;
  std::mutex mutex_;
  int failed_errno_ = 0;  // guarded by mutex_
};

// How long the reader looks for a next line before sleeping in poll().
constexpr std::chrono::microseconds kReaderSpin{200};

// Lines waiting for the worker.
class LineQueue {
 public:
  void Push(std::string line) {
    {
      std::lock_guard lock(mutex_);
      lines_.push_back(std::move(line));
      waiting_.fetch_add(1, std::memory_order_release);
    }
    ready_.notify_one();
  }
  // Ends the queue: Pop returns false once it is empty. With `drop`, lines
  // not yet taken are discarded.
  void Close(bool drop) {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      if (drop) {
        waiting_.fetch_sub(lines_.size(), std::memory_order_release);
        lines_.clear();
      }
      // Ends a spinning Pop at once.
      waiting_.fetch_add(1, std::memory_order_release);
    }
    ready_.notify_all();
  }
  bool Pop(std::string& line) {
    // A client waits for each reply before sending its next request, so the
    // next line usually arrives within microseconds of the last reply.
    // Looking for it briefly before sleeping spares that request the wake-up
    // of a sleeping thread, most of an idle machine's round trip.
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    while (waiting_.load(std::memory_order_acquire) == 0 &&
           std::chrono::steady_clock::now() < spin_until) {
      std::this_thread::yield();
    }
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return closed_ || !lines_.empty(); });
    if (lines_.empty()) return false;
    line = std::move(lines_.front());
    lines_.pop_front();
    waiting_.fetch_sub(1, std::memory_order_release);
    return true;
  }

 private:
  static constexpr std::chrono::microseconds kSpin{200};

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::string> lines_;  // guarded by mutex_
  bool closed_ = false;            // guarded by mutex_
  // Lines pushed and not yet taken (plus one once closed), readable without
  // the lock by a spinning Pop.
  std::atomic<size_t> waiting_{0};
};

// Signal handling for the life of one ServeStdio call.
class SignalPipe {
 public:
  SignalPipe() {
    if (pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
      fds_[0] = fds_[1] = -1;
      return;
    }
    g_signal_fd = fds_[1];
    struct sigaction action {};
    action.sa_handler = OnTerminate;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, &old_term_);
    sigaction(SIGINT, &action, &old_int_);
    signal(SIGPIPE, SIG_IGN);
  }
  ~SignalPipe() {
    if (fds_[0] < 0) return;
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGINT, &old_int_, nullptr);
    g_signal_fd = -1;
    close(fds_[0]);
    close(fds_[1]);
  }
  int read_fd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
  struct sigaction old_term_ {};
  struct sigaction old_int_ {};
};

}  // namespace

Status ServeStdio(host::Services& services, int in_fd, int out_fd) {
  SignalPipe signals;
  LineWriter writer(out_fd);
  Session session(services);
  LineQueue queue;
  std::thread worker([&] {
    std::string line;
    while (queue.Pop(line)) session.Handle(line, writer);
  });

  const size_t limit = services.config.max_message_bytes;
  std::string pending;          // the current line, so far
  bool skipping = false;        // inside a line beyond the limit
  MessageIdScanner skipped_id;  // of the line being skipped
  bool signalled = false;
  char buffer[1 << 16];
  simdjson::dom::parser probe;
  // Whether `line` is a cancellation: its method, not its text, says so,
  // since a request may quote the method's name anywhere in its params.
  auto is_cancellation = [&](const std::string& line) {
    if (line.find("notifications/cancelled") == std::string::npos) {
      return false;
    }
    simdjson::dom::element root;
    std::string_view method;
    return probe.parse(line).get(root) == simdjson::SUCCESS &&
           root["method"].get(method) == simdjson::SUCCESS &&
           method == "notifications/cancelled";
  };
  auto dispatch = [&](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    // Cancellation must overtake the queue: handled here, at once.
    if (is_cancellation(line)) {
      session.Handle(line, writer);
      return;
    }
    queue.Push(std::move(line));
  };
  // The error for a line beyond the limit, sent once all of it has been
  // read, so that it carries the id written anywhere in it.
  auto refuse_skipped = [&] {
    writer.Send(Session::TooLargeReply(limit, skipped_id.IdJson()));
    skipped_id = MessageIdScanner();
  };
  // After a line, the next one usually follows within microseconds (see
  // LineQueue::Pop): look for it without sleeping for a moment first.
  auto spin_until = std::chrono::steady_clock::time_point();
  while (true) {
    pollfd fds[2] = {{in_fd, POLLIN, 0}, {signals.read_fd(), POLLIN, 0}};
    const nfds_t count = signals.read_fd() >= 0 ? 2 : 1;
    int ready = poll(fds, count, 0);
    while (ready == 0 && std::chrono::steady_clock::now() < spin_until) {
      std::this_thread::yield();
      ready = poll(fds, count, 0);
    }
    if (ready == 0) ready = poll(fds, count, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (signals.read_fd() >= 0 && (fds[1].revents & POLLIN)) {
      signalled = true;
      break;
    }
    if (writer.failed_errno() != 0) break;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    const ssize_t n = read(in_fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      break;
    }
    if (n == 0) break;  // end of input
    spin_until = std::chrono::steady_clock::now() + kReaderSpin;
    std::string_view chunk(buffer, static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t newline = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, newline);
      if (skipping) {
        skipped_id.Feed(piece);
      } else if (pending.size() + piece.size() > limit) {
        skipped_id.Feed(pending);
        skipped_id.Feed(piece);
        pending.clear();
        skipping = true;
      } else {
        pending.append(piece);
      }
      if (newline == std::string_view::npos) break;
      if (skipping) {
        refuse_skipped();
      } else {
        dispatch(std::move(pending));
      }
      pending.clear();
      skipping = false;
      chunk.remove_prefix(newline + 1);
    }
  }
  if (signalled) {
    session.CancelAll();
    queue.Close(/*drop=*/true);
  } else {
    // A last line without a newline is still a message.
    if (skipping) {
      refuse_skipped();
    } else if (!pending.empty()) {
      dispatch(std::move(pending));
    }
    queue.Close(/*drop=*/false);
  }
  worker.join();
  // A client that closes its end of the pipe has gone away, which ends the
  // session as end of input does: the replies it no longer wanted are lost
  // to it alone.
  if (const int error = writer.failed_errno(); error != 0 && error != EPIPE) {
    return Status(
        StatusCode::kUnavailable,
        std::string("cannot write to the MCP client: ") + std::strerror(error));
  }
  return Status();
}

}  // namespace ctxkit::mcp
