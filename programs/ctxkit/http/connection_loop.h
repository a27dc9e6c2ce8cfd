// The connections of `ctxkit serve`: accepting them, reading each request's
// header block under a deadline and size limits, and handing complete
// requests to worker threads.
//
// It stands in front of cpp-httplib 0.11.4 (Debian 12's, a compiled
// library), whose own accept loop cannot be made safe against hostile
// clients: it gives each connection a worker for as long as the connection
// is open, so 20 clients sending a byte every 5 s starve every other
// request; it has no deadline for a request's headers or body (only one per
// read); it keeps any number of header fields of any total size; and it
// listens with a backlog of 5 compiled into the library, where the
// CPPHTTPLIB_LISTEN_BACKLOG macro cannot reach. httplib still parses the
// requests, routes them and writes the responses (Server::process_request,
// given a Stream of ours).
//
// Here one thread (Run) waits on every connection with epoll: it accepts,
// collects the request line and headers, and only a complete header block
// takes a worker, for that one request; between requests a keep-alive
// connection is back with the epoll thread. So a slow or idle client costs
// a file descriptor and at most max_header_bytes of memory, never a worker.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HTTP_CONNECTION_LOOP_H_
#define CTXKIT_PROGRAMS_CTXKIT_HTTP_CONNECTION_LOOP_H_

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ctxkit/status.h"

namespace ctxkit::http {

// How long a connection that was answered with an error and is closing is
// read (and the bytes dropped) before it is closed: closing a socket with
// unread input makes the kernel send a reset, which can destroy the error
// response before the client reads it. Bounded in time and bytes, so a
// client cannot keep it going.
inline constexpr auto kLingerTimeout = std::chrono::seconds(2);
inline constexpr size_t kLingerMaxBytes = size_t{1} << 20;

struct ConnectionLimits {
  // From the moment a connection waits for a request (accepted, or the
  // first byte of the next one on a kept-alive connection) to the end of
  // its header block; 408 and closed beyond.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};
  // From the end of the header block to the end of the body; 408 and
  // closed beyond.
  std::chrono::milliseconds body_timeout{std::chrono::seconds(60)};
  // The longest wait for one read or write of a request being served.
  std::chrono::milliseconds io_timeout{std::chrono::seconds(30)};
  // How long a kept-alive connection may stay silent between requests.
  std::chrono::milliseconds keep_alive_timeout{std::chrono::seconds(1)};
  size_t keep_alive_max_requests = 100;
  // The request line and header fields together, line ends included; 431
  // and closed beyond.
  size_t max_header_bytes = size_t{64} << 10;
  // Header fields of one request; 431 and closed beyond.
  size_t max_headers = 100;
  // Open connections from one client address; a connection beyond is
  // answered 503 and closed.
  size_t max_connections_per_client = 256;
  // Workers serving requests (at least 1).
  size_t threads = 16;
};

// Serves one request on `stream` (httplib's Server::process_request):
// `close_connection` asks for a last response, `connection_closed` is set
// when the client asked for one. Returns false when the connection is no
// longer usable.
using RequestHandler = std::function<bool(
    httplib::Stream& stream, bool close_connection, bool& connection_closed)>;

// What a request handler may ask of the connection its request came on.
// Valid on the worker thread serving that request, until the handler
// returns.
class ClientConnection {
 public:
  // The connection of the request the calling thread serves; null on any
  // other thread.
  static ClientConnection* Current();

  // Closes the connection after the response, instead of keeping it for
  // another request: for a response sent without reading the body that the
  // request announced, which is never read (nor drained).
  virtual void CloseAfterResponse() = 0;

  // Whether reading the body failed because body_timeout passed.
  virtual bool body_timed_out() const = 0;

  // Runs `on_gone` once, on another thread, if the client closes the
  // connection before the handler returns (at once on this thread if it
  // already has). An empty function takes a previous one back; after that
  // returns, the previous one is not running and never will. `on_gone`
  // must be quick and must not call back into this connection.
  virtual void SetOnClientGone(std::function<void()> on_gone) = 0;

 protected:
  ~ClientConnection() = default;
};

// Takes a function back from ClientConnection::SetOnClientGone when the
// scope ends; nothing happens outside of a request (no Current()).
class OnClientGone {
 public:
  explicit OnClientGone(std::function<void()> on_gone);
  ~OnClientGone();
  OnClientGone(const OnClientGone&) = delete;
  OnClientGone& operator=(const OnClientGone&) = delete;

 private:
  ClientConnection* connection_;
};

// The end of the header block at the start of `buffer`, scanned as httplib
// reads it: a request line, then lines up to the first that is exactly
// "\r\n".
class HeaderScanner {
 public:
  enum class Result { kIncomplete, kComplete, kTooManyHeaders, kTooLarge };

  // Scans the bytes of `buffer` not seen by an earlier call (the buffer
  // only grows between calls). kComplete sets end().
  Result Scan(std::string_view buffer, const ConnectionLimits& limits);
  // Just past the blank line, after kComplete.
  size_t end() const { return end_; }

 private:
  size_t pos_ = 0;
  size_t line_start_ = 0;
  size_t lines_ = 0;
  size_t end_ = 0;
};

// Thread safety: Stop() may be called from any thread; the other members
// from the thread that created the loop.
class ConnectionLoop {
 public:
  // Binds host:port (port 0 = any free one) and listens with the largest
  // backlog the system allows. UNAVAILABLE, naming the address and the
  // reason, when that fails.
  static StatusOr<std::unique_ptr<ConnectionLoop>> Listen(
      const std::string& host, int port, const ConnectionLimits& limits,
      RequestHandler handler);

  ~ConnectionLoop();
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  // The bound port.
  int port() const;

  // Serves until Stop(), on the calling thread and the workers; returns
  // once every request whose headers had arrived has been answered and
  // every connection is closed. Returns at once after an earlier Stop().
  Status Run();

  // Makes Run() stop accepting and return. Idempotent.
  void Stop();

 private:
  class Impl;
  explicit ConnectionLoop(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ctxkit::http

#endif  // CTXKIT_PROGRAMS_CTXKIT_HTTP_CONNECTION_LOOP_H_
