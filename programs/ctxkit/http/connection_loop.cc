#include "programs/ctxkit/http/connection_loop.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/host/listen_address.h"

namespace ctxkit::http {

namespace {

using Clock = std::chrono::steady_clock;

// The kernel caps a listen backlog at net.core.somaxconn, so asking for the
// largest int gets the system's maximum, whatever it is set to.
constexpr int kListenBacklog = std::numeric_limits<int>::max();
// Bytes read from a connection at once while its headers arrive.
constexpr size_t kReadChunk = 16 << 10;
// How long accepting pauses when the process is out of file descriptors,
// instead of spinning on a listening socket that stays readable.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

int MillisUntil(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(
      std::min<int64_t>(left.count() + 1, std::numeric_limits<int>::max()));
}

// The answer to a request refused before httplib sees it; without its body
// for a HEAD request (its Content-Length still that of the body).
std::string ErrorResponse(int status, std::string_view reason,
                          std::string_view message, bool head) {
  program::JsonOut json;
  json.BeginObject().Key("error").String(message).EndObject();
  const std::string body = json.str();
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
         "\r\nContent-Type: application/json; charset=utf-8\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         (head ? std::string() : body);
}

void AddressOf(const sockaddr_storage& address, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    port = ntohs(a.sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(address);
    inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
    port = ntohs(a.sin6_port);
  } else {
    port = 0;
  }
  ip = text;
}

thread_local ClientConnection* current_connection = nullptr;

}  // namespace

// ---- HeaderScanner
// ------------------------------------------------------------

namespace {

// RFC 9110 section 5.6.2.
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
      (c >= '0' && c <= '9')) {
    return true;
  }
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

bool IsControl(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

// What is wrong with request line `line` (its CRLF removed); empty if
// nothing is.
std::string_view RequestLineProblem(std::string_view line) {
  constexpr std::string_view kShape =
      "malformed request line: expected 'METHOD TARGET HTTP/1.1' with one "
      "space between the parts";
  const size_t method_end = line.find(' ');
  if (method_end == std::string_view::npos) return kShape;
  const size_t target_end = line.find(' ', method_end + 1);
  if (target_end == std::string_view::npos) return kShape;
  const std::string_view target =
      line.substr(method_end + 1, target_end - method_end - 1);
  const std::string_view version = line.substr(target_end + 1);
  if (!IsToken(line.substr(0, method_end))) {
    return "malformed request line: the method is not a token";
  }
  if (target.empty()) return kShape;
  if (std::any_of(target.begin(), target.end(), IsControl)) {
    return "malformed request line: the target holds a control character";
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return "malformed request line: it does not end in HTTP/1.1 or HTTP/1.0 "
           "after one space";
  }
  return {};
}

// What is wrong with header line `line` (its CRLF removed); empty if
// nothing is.
std::string_view HeaderLineProblem(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t') {
    return "malformed header line: obsolete line folding (a line starting "
           "with a space or tab)";
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    return "malformed header line: no ':' after the field name";
  }
  if (!IsToken(line.substr(0, colon))) {
    return "malformed header line: the field name is not a token (no spaces "
           "or control characters before ':')";
  }
  const std::string_view value = line.substr(colon + 1);
  if (std::any_of(value.begin(), value.end(),
                  [](char c) { return IsControl(c) && c != '\t'; })) {
    return "malformed header line: the field value holds a control "
           "character";
  }
  return {};
}

}  // namespace

HeaderScanner::Result HeaderScanner::Scan(std::string_view buffer,
                                          const ConnectionLimits& limits) {
  for (; pos_ < buffer.size(); ++pos_) {
    if (buffer[pos_] != '\n') continue;
    const std::string_view line =
        buffer.substr(line_start_, pos_ + 1 - line_start_);
    line_start_ = pos_ + 1;
    if (line.size() < 2 || line[line.size() - 2] != '\r') {
      problem_ = "malformed request: a line ends in LF without CR";
      return Result::kMalformed;
    }
    const std::string_view text = line.substr(0, line.size() - 2);
    if (lines_ > 0 && text.empty()) {
      end_ = pos_ + 1;
      ++pos_;
      return end_ > limits.max_header_bytes ? Result::kTooLarge
                                            : Result::kComplete;
    }
    // The request line is not a header field.
    if (++lines_ > limits.max_headers + 1) return Result::kTooManyHeaders;
    problem_ = lines_ == 1 ? RequestLineProblem(text) : HeaderLineProblem(text);
    if (!problem_.empty()) return Result::kMalformed;
  }
  return buffer.size() > limits.max_header_bytes ? Result::kTooLarge
                                                 : Result::kIncomplete;
}

bool IsHeadRequest(std::string_view buffer) {
  return buffer.substr(0, 5) == "HEAD ";
}

// ---- Connection
// ---------------------------------------------------------------

namespace {

// One client connection. The epoll thread owns it; a worker uses it while
// it serves one request (state kWorking), handed over through the loop's
// locked queues, which order the two threads' accesses.
class Connection final : public httplib::Stream, public ClientConnection {
 public:
  enum class State { kHeaders, kWorking, kLinger };

  Connection(int fd, const sockaddr_storage& peer, const ConnectionLimits& l)
      : fd_(fd), limits_(l) {
    AddressOf(peer, peer_ip_, peer_port_);
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) {
      AddressOf(local, local_ip_, local_port_);
    }
  }
  ~Connection() override { close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }
  const std::string& peer_ip() const { return peer_ip_; }

  // ---- epoll thread ----
  State state = State::kHeaders;
  Clock::time_point deadline;
  // Waiting on a kept-alive connection for the first byte of a request:
  // the header deadline starts with that byte.
  bool idle = false;
  size_t requests = 0;
  size_t lingered = 0;
  HeaderScanner scanner;

  // The bytes read and not yet given to httplib start at consumed_.
  std::string& buffer() { return buffer_; }
  // Drops what httplib consumed, for the next request's headers.
  void Compact() {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
    scanner = HeaderScanner();
  }

  // ---- the worker serving a request ----
  void BeginRequest(size_t header_end) {
    header_end_ = header_end;
    body_deadline_ = Clock::now() + limits_.body_timeout;
    close_after_ = false;
    body_timed_out_ = false;
  }
  // Whether the connection can carry another request: httplib read the
  // whole header block (it stops early on a malformed one) and the handler
  // did not leave a body unread.
  bool Reusable() const { return !close_after_ && consumed_ >= header_end_; }
  bool MustLinger() const { return close_after_ || consumed_ < header_end_; }

  // ---- httplib::Stream ----
  bool is_readable() const override {
    return consumed_ < buffer_.size() || Wait(POLLIN, limits_.io_timeout);
  }
  bool is_writable() const override {
    return !gone_.load() && Wait(POLLOUT, limits_.io_timeout);
  }
  ssize_t read(char* ptr, size_t size) override {
    if (consumed_ < buffer_.size()) {
      const size_t n = std::min(size, buffer_.size() - consumed_);
      std::memcpy(ptr, buffer_.data() + consumed_, n);
      consumed_ += n;
      return static_cast<ssize_t>(n);
    }
    // Past the buffered header block only the body is read.
    const auto now = Clock::now();
    if (now >= body_deadline_) {
      body_timed_out_ = true;
      return -1;
    }
    const auto wait =
        std::min<Clock::duration>(limits_.io_timeout, body_deadline_ - now);
    if (!Wait(POLLIN, std::chrono::duration_cast<std::chrono::milliseconds>(
                          wait + std::chrono::milliseconds(1)))) {
      if (Clock::now() >= body_deadline_) body_timed_out_ = true;
      return -1;
    }
    ssize_t n;
    do {
      n = recv(fd_, ptr, size, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -1;
    return n;
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!Wait(POLLOUT, limits_.io_timeout)) return -1;
    ssize_t n;
    do {
      n = send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_ip_;
    port = peer_port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = local_ip_;
    port = local_port_;
  }
  socket_t socket() const override { return fd_; }

  // ---- ClientConnection ----
  void CloseAfterResponse() override { close_after_ = true; }
  bool body_timed_out() const override { return body_timed_out_; }
  void SetOnClientGone(std::function<void()> on_gone) override {
    std::unique_lock lock(gone_mutex_);
    if (gone_.load() && on_gone) {
      lock.unlock();
      on_gone();
      return;
    }
    on_gone_ = std::move(on_gone);
  }

  // The epoll thread saw the client close its side.
  void ClientGone() {
    std::lock_guard lock(gone_mutex_);
    gone_.store(true);
    // Under the lock: SetOnClientGone({}) must not return while it runs.
    if (on_gone_) {
      auto on_gone = std::move(on_gone_);
      on_gone_ = nullptr;
      on_gone();
    }
  }
  void ClearForReuse() {
    std::lock_guard lock(gone_mutex_);
    on_gone_ = nullptr;
  }

 private:
  // Whether `fd_` is ready for `events` within `timeout`.
  bool Wait(short events, std::chrono::milliseconds timeout) const {
    pollfd p{fd_, events, 0};
    const auto until = Clock::now() + timeout;
    while (true) {
      const int n = poll(&p, 1, MillisUntil(until));
      if (n > 0) return true;
      if (n == 0) return false;
      if (errno != EINTR) return false;
    }
  }

  const int fd_;
  const ConnectionLimits& limits_;
  std::string peer_ip_;
  int peer_port_ = 0;
  std::string local_ip_;
  int local_port_ = 0;
  std::string buffer_;
  size_t consumed_ = 0;
  size_t header_end_ = 0;
  Clock::time_point body_deadline_;
  bool close_after_ = false;
  bool body_timed_out_ = false;
  std::mutex gone_mutex_;
  std::atomic<bool> gone_{false};
  std::function<void()> on_gone_;  // guarded by gone_mutex_
};

}  // namespace

ClientConnection* ClientConnection::Current() { return current_connection; }

OnClientGone::OnClientGone(std::function<void()> on_gone)
    : connection_(ClientConnection::Current()) {
  if (connection_ != nullptr) connection_->SetOnClientGone(std::move(on_gone));
}

OnClientGone::~OnClientGone() {
  if (connection_ != nullptr) connection_->SetOnClientGone(nullptr);
}

// ---- ConnectionLoop::Impl
// -------------------------------------------------------

class ConnectionLoop::Impl {
 public:
  Impl(int listen_fd, int port, const ConnectionLimits& limits,
       RequestHandler handler)
      : listen_fd_(listen_fd),
        port_(port),
        limits_(limits),
        handler_(std::move(handler)) {}
  ~Impl() {
    if (listen_fd_ >= 0) close(listen_fd_);
    if (wake_fd_ >= 0) close(wake_fd_);
    if (epoll_fd_ >= 0) close(epoll_fd_);
  }

  int port() const { return port_; }
  Status Run();
  void Stop() {
    stop_requested_.store(true);
    Wake();
  }

 private:
  void Wake() {
    const int fd = wake_fd_.load();
    if (fd < 0) return;
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(fd, &one, sizeof one);
  }
  void Watch(Connection* c, uint32_t events, int op = EPOLL_CTL_MOD) {
    epoll_event event{};
    event.events = events;
    event.data.ptr = c;
    epoll_ctl(epoll_fd_, op, c->fd(), &event);
  }
  void AcceptAll();
  void OnReadable(Connection* c);
  void ReadHeaders(Connection* c);
  // Looks at the buffered bytes: dispatches a complete header block,
  // rejects one over the limits.
  void CheckHeaders(Connection* c);
  void Reject(Connection* c, int status, std::string_view reason,
              std::string_view message);
  void Linger(Connection* c);
  void Close(Connection* c);
  void Returned(Connection* c, bool reusable, bool linger);
  void ExpireDeadlines();
  int NextTimeoutMillis() const;
  void Worker();

  int listen_fd_;
  const int port_;
  const ConnectionLimits limits_;
  const RequestHandler handler_;
  int epoll_fd_ = -1;
  std::atomic<int> wake_fd_{-1};
  std::atomic<bool> stop_requested_{false};
  bool stopping_ = false;  // the epoll thread's view of stop_requested_
  Clock::time_point accept_paused_until_{};
  bool accept_paused_ = false;

  // Every open connection; epoll thread only.
  std::map<Connection*, std::unique_ptr<Connection>> connections_;
  // Closed during one batch of epoll events and freed after it, so that
  // a later event of the batch cannot find a new connection at the same
  // address.
  std::vector<std::unique_ptr<Connection>> closed_;
  std::unordered_map<std::string, size_t> per_client_;
  size_t working_ = 0;

  // epoll thread -> workers.
  std::mutex ready_mutex_;
  std::condition_variable ready_cv_;
  std::deque<Connection*> ready_;  // guarded by ready_mutex_
  bool workers_done_ = false;      // guarded by ready_mutex_

  // workers -> epoll thread: a connection and whether it is reusable and
  // whether it must linger.
  struct Handback {
    Connection* connection;
    bool reusable;
    bool linger;
  };
  std::mutex returned_mutex_;
  std::vector<Handback> returned_;  // guarded by returned_mutex_
};

Status ConnectionLoop::Impl::Run() {
  if (stop_requested_.load()) return Status();
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake < 0) {
    if (wake >= 0) close(wake);
    return Status(
        StatusCode::kUnavailable,
        std::string("cannot wait for connections: ") + std::strerror(errno));
  }
  wake_fd_.store(wake);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = &listen_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &event);
  event.data.ptr = &wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake, &event);

  std::vector<std::thread> workers;
  for (size_t i = 0; i < std::max<size_t>(limits_.threads, 1); ++i) {
    workers.emplace_back([this] { Worker(); });
  }

  Status status;
  std::vector<epoll_event> events(256);
  while (true) {
    if (stop_requested_.load() && !stopping_) {
      stopping_ = true;
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
      close(listen_fd_);
      listen_fd_ = -1;
      // Connections without a request in progress close now; those being
      // served close after their response.
      std::vector<Connection*> idle;
      for (auto& [c, owned] : connections_) {
        if (c->state != Connection::State::kWorking) idle.push_back(c);
      }
      for (Connection* c : idle) Close(c);
    }
    if (stopping_ && working_ == 0) break;
    if (accept_paused_ && Clock::now() >= accept_paused_until_ && !stopping_) {
      accept_paused_ = false;
      event.events = EPOLLIN;
      event.data.ptr = &listen_fd_;
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &event);
    }
    const int n =
        epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                   NextTimeoutMillis());
    if (n < 0 && errno != EINTR) {
      status = Status(StatusCode::kUnavailable,
                      std::string("waiting for connections failed: ") +
                          std::strerror(errno));
      Stop();
      continue;
    }
    for (int i = 0; i < n; ++i) {
      void* what = events[static_cast<size_t>(i)].data.ptr;
      if (what == &listen_fd_) {
        if (!stopping_) AcceptAll();
      } else if (what == &wake_fd_) {
        uint64_t count;
        [[maybe_unused]] const ssize_t r = read(wake, &count, sizeof count);
      } else {
        auto* c = static_cast<Connection*>(what);
        // Closed earlier in this batch (still allocated: see closed_).
        if (connections_.count(c) == 0) continue;
        if (c->state == Connection::State::kWorking) {
          c->ClientGone();
        } else {
          OnReadable(c);
        }
      }
    }
    std::vector<Handback> returned;
    {
      std::lock_guard lock(returned_mutex_);
      returned.swap(returned_);
    }
    for (const Handback& h : returned) {
      Returned(h.connection, h.reusable, h.linger);
    }
    ExpireDeadlines();
    closed_.clear();
  }

  {
    std::lock_guard lock(ready_mutex_);
    workers_done_ = true;
  }
  ready_cv_.notify_all();
  for (std::thread& t : workers) t.join();
  // Handbacks that raced with the end: the workers are gone now.
  for (const Handback& h : returned_) Close(h.connection);
  returned_.clear();
  return status;
}

void ConnectionLoop::Impl::AcceptAll() {
  while (true) {
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer),
                           &length, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM) {
        epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        accept_paused_ = true;
        accept_paused_until_ = Clock::now() + kAcceptPause;
      }
      return;  // EAGAIN: all taken
    }
    // Without it every keep-alive response waits ~40 ms for the client's
    // delayed ACK (Nagle).
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto owned = std::make_unique<Connection>(fd, peer, limits_);
    Connection* c = owned.get();
    connections_.emplace(c, std::move(owned));
    const size_t count = ++per_client_[c->peer_ip()];
    Watch(c, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
    if (count > limits_.max_connections_per_client) {
      Reject(c, 503, "Service Unavailable",
             "too many connections from " + c->peer_ip() +
                 " (max_connections_per_client is " +
                 std::to_string(limits_.max_connections_per_client) + ")");
      continue;
    }
    c->deadline = Clock::now() + limits_.header_timeout;
  }
}

void ConnectionLoop::Impl::OnReadable(Connection* c) {
  if (c->state == Connection::State::kLinger) {
    char sink[16 << 10];
    const ssize_t n = recv(c->fd(), sink, sizeof sink, 0);
    if (n > 0) {
      c->lingered += static_cast<size_t>(n);
      if (c->lingered <= kLingerMaxBytes) return;
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      return;
    }
    Close(c);
    return;
  }
  ReadHeaders(c);
}

void ConnectionLoop::Impl::ReadHeaders(Connection* c) {
  std::string& buffer = c->buffer();
  // Never more than one byte past the limit: enough to tell it was passed.
  const size_t room = limits_.max_header_bytes + 1 - buffer.size();
  const size_t old_size = buffer.size();
  buffer.resize(old_size + std::min(room, kReadChunk));
  ssize_t n;
  do {
    n = recv(c->fd(), buffer.data() + old_size, buffer.size() - old_size, 0);
  } while (n < 0 && errno == EINTR);
  buffer.resize(old_size + static_cast<size_t>(std::max<ssize_t>(n, 0)));
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
  if (n <= 0) {
    Close(c);  // the client went away (or a reset)
    return;
  }
  if (c->idle) {
    c->idle = false;
    c->deadline = Clock::now() + limits_.header_timeout;
  }
  CheckHeaders(c);
}

void ConnectionLoop::Impl::CheckHeaders(Connection* c) {
  switch (c->scanner.Scan(c->buffer(), limits_)) {
    case HeaderScanner::Result::kIncomplete:
      return;
    case HeaderScanner::Result::kTooManyHeaders:
      Reject(c, 431, "Request Header Fields Too Large",
             "more than max_headers (" + std::to_string(limits_.max_headers) +
                 ") request header fields");
      return;
    case HeaderScanner::Result::kTooLarge:
      Reject(c, 431, "Request Header Fields Too Large",
             "request line and headers larger than max_header_bytes (" +
                 std::to_string(limits_.max_header_bytes) + " bytes)");
      return;
    case HeaderScanner::Result::kMalformed:
      Reject(c, 400, "Bad Request", c->scanner.problem());
      return;
    case HeaderScanner::Result::kComplete:
      break;
  }
  c->state = Connection::State::kWorking;
  c->BeginRequest(c->scanner.end());
  ++working_;
  // While a worker has it, only the client's hang-up is of interest
  // (once), so that the work can stop.
  Watch(c, EPOLLRDHUP | EPOLLONESHOT);
  {
    std::lock_guard lock(ready_mutex_);
    ready_.push_back(c);
  }
  ready_cv_.notify_one();
}

void ConnectionLoop::Impl::Reject(Connection* c, int status,
                                  std::string_view reason,
                                  std::string_view message) {
  const std::string response =
      ErrorResponse(status, reason, message, IsHeadRequest(c->buffer()));
  // Best effort: the response is small and the socket buffer empty.
  [[maybe_unused]] const ssize_t n = send(
      c->fd(), response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  Linger(c);
}

void ConnectionLoop::Impl::Linger(Connection* c) {
  shutdown(c->fd(), SHUT_WR);
  c->state = Connection::State::kLinger;
  c->deadline = Clock::now() + kLingerTimeout;
  std::string().swap(c->buffer());
  Watch(c, EPOLLIN | EPOLLRDHUP);
}

void ConnectionLoop::Impl::Close(Connection* c) {
  auto it = per_client_.find(c->peer_ip());
  if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd(), nullptr);
  auto owned = connections_.find(c);
  closed_.push_back(std::move(owned->second));
  connections_.erase(owned);
}

void ConnectionLoop::Impl::Returned(Connection* c, bool reusable, bool linger) {
  --working_;
  c->ClearForReuse();
  if (!reusable || stopping_) {
    if (linger && !stopping_) {
      Linger(c);
    } else {
      Close(c);
    }
    return;
  }
  c->state = Connection::State::kHeaders;
  c->Compact();
  Watch(c, EPOLLIN | EPOLLRDHUP);
  if (c->buffer().empty()) {
    c->idle = true;
    c->deadline = Clock::now() + limits_.keep_alive_timeout;
    return;
  }
  // Pipelined: the next request's bytes are here already.
  c->idle = false;
  c->deadline = Clock::now() + limits_.header_timeout;
  CheckHeaders(c);
}

void ConnectionLoop::Impl::ExpireDeadlines() {
  const auto now = Clock::now();
  std::vector<Connection*> expired;
  for (auto& [c, owned] : connections_) {
    if (c->state != Connection::State::kWorking && now >= c->deadline) {
      expired.push_back(c);
    }
  }
  for (Connection* c : expired) {
    if (c->state == Connection::State::kHeaders && !c->idle) {
      Reject(
          c, 408, "Request Timeout",
          "request line and headers not received within "
          "header_timeout_seconds (" +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                 limits_.header_timeout)
                                 .count()) +
              ")");
    } else {
      Close(c);  // an idle keep-alive connection, or lingering done
    }
  }
}

int ConnectionLoop::Impl::NextTimeoutMillis() const {
  // A linear scan per wake-up: the connections waiting are few compared
  // with the work a request does, and it keeps no second index in step.
  Clock::time_point next = Clock::time_point::max();
  for (const auto& [c, owned] : connections_) {
    if (c->state != Connection::State::kWorking) {
      next = std::min(next, c->deadline);
    }
  }
  if (accept_paused_) next = std::min(next, accept_paused_until_);
  if (next == Clock::time_point::max()) return -1;
  return MillisUntil(next);
}

void ConnectionLoop::Impl::Worker() {
  while (true) {
    Connection* c;
    {
      std::unique_lock lock(ready_mutex_);
      ready_cv_.wait(lock, [this] { return !ready_.empty() || workers_done_; });
      if (ready_.empty()) return;
      c = ready_.front();
      ready_.pop_front();
    }
    const bool last = c->requests + 1 >= limits_.keep_alive_max_requests ||
                      stop_requested_.load();
    bool client_closed = false;
    current_connection = c;
    const bool ok = handler_(*c, last, client_closed);
    current_connection = nullptr;
    ++c->requests;
    const bool reusable = ok && !last && !client_closed && c->Reusable();
    {
      std::lock_guard lock(returned_mutex_);
      returned_.push_back(Handback{c, reusable, ok && c->MustLinger()});
    }
    Wake();
  }
}

// ---- ConnectionLoop
// -------------------------------------------------------------

ConnectionLoop::ConnectionLoop(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ConnectionLoop::~ConnectionLoop() = default;

StatusOr<std::unique_ptr<ConnectionLoop>> ConnectionLoop::Listen(
    const std::string& host, int port, const ConnectionLimits& limits,
    RequestHandler handler) {
  const std::string where = host::FormatHostPort(host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int e = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
      e != 0) {
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " + where + ": " + gai_strerror(e));
  }
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::listen(fd, kListenBacklog) == 0) {
      break;
    }
    why = std::strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " + where + ": " + why);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  std::string ip;
  int bound_port = 0;
  AddressOf(bound, ip, bound_port);
  return std::unique_ptr<ConnectionLoop>(new ConnectionLoop(
      std::make_unique<Impl>(fd, bound_port, limits, std::move(handler))));
}

int ConnectionLoop::port() const { return impl_->port(); }
Status ConnectionLoop::Run() { return impl_->Run(); }
void ConnectionLoop::Stop() { impl_->Stop(); }

}  // namespace ctxkit::http
