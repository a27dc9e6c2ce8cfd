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

// The end of the header block at the start of `buffer`, and whether its
// lines are well formed, checked before httplib sees them: httplib reads
// the request line as a C string (a NUL byte in it ends the line early)
// and skips a line that ends in a bare LF, so a request that the two would
// frame differently is refused here with 400 (RFC 9112 sections 2.2, 3 and
// 5): the request line is `METHOD SP TARGET SP HTTP/1.x CRLF` with a token
// method and a target free of control characters and spaces; each header
// line is `NAME ":" VALUE CRLF` with a token name, no control character in
// its value but horizontal tab, and no obsolete line folding. The block
// ends at the first line that is exactly "\r\n" after the request line.
class HeaderScanner {
 public:
  enum class Result {
    kIncomplete,
    kComplete,
    kTooManyHeaders,
    kTooLarge,
    kMalformed,
  };

  // Scans the bytes of `buffer` not seen by an earlier call (the buffer
  // only grows between calls, and holds the same bytes at the same
  // places). kComplete sets end(); kMalformed sets problem(). Each line is
  // checked once it is complete, so a malformed one is refused without
  // waiting for the rest of the block.
  Result Scan(std::string_view buffer, const ConnectionLimits& limits);
  // Just past the blank line, after kComplete.
  size_t end() const { return end_; }
  // What is wrong, after kMalformed: a static text naming the part.
  std::string_view problem() const { return problem_; }

 private:
  size_t pos_ = 0;
  size_t line_start_ = 0;
  size_t lines_ = 0;
  size_t end_ = 0;
  std::string_view problem_;
};

// Whether the request starting `buffer` is a HEAD request, whose answer
// carries no body (RFC 9110 section 9.3.2), even an error's.
bool IsHeadRequest(std::string_view buffer);

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
