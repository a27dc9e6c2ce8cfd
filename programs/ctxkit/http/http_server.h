// `ctxkit serve`: seed 001's REST API and MCP over HTTP, on cpp-httplib.
//
// Endpoints (every one but /health needs `Authorization: Bearer TOKEN` when
// a token file is configured; 401 with WWW-Authenticate otherwise):
//
//   GET  /health            {"status":"ok","server":"ctxkit","version":V}
//   GET  /api/user/info     {"username","auth"}: "local"/"none" without a
//                           token file, "bearer"/"bearer" with one (the token
//                           is the only identity the server knows)
//   POST /api/chat/compact  seed 001's compaction (Compactor::CompactJson);
//                           400 {"error"} for a bad body or empty messages
//   POST /mcp/v1            one JSON-RPC message per request, answered as
//                           JSON by a fresh, stateless MCP session (seed 001)
//   POST/DELETE /mcp        MCP Streamable HTTP (revisions 2025-06-18 and
//                           2025-11-25): Mcp-Session-Id sessions, JSON or
//                           text/event-stream replies, 202 for input
//                           without requests; GET is 405 (no server-initiated
//                           stream)
//
// Any other method on these paths is 405 with an Allow header; other paths
// are 404 (/.well-known/oauth-* without a token too: there is no OAuth).
// Errors carry {"error": message}. A body beyond config.max_body_bytes is
// 413. DNS rebinding protection, /health excepted: a Host header naming
// neither a loopback name nor the listen host is 421 (any Host when
// listening on a wildcard address), an Origin header whose host is not
// localhost, 127.0.0.1 or [::1] is 403. A response decided without reading
// the body a request announced closes the connection. The connection
// limits (408, 431, 503) are connection_loop.h's, from config.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HTTP_HTTP_SERVER_H_
#define CTXKIT_PROGRAMS_CTXKIT_HTTP_HTTP_SERVER_H_

#include <memory>
#include <string>
#include <string_view>

#include "ctxkit/status.h"
#include "programs/ctxkit/host/services.h"

namespace ctxkit::http {

// Checks what `ctxkit serve` needs before anything is opened: the listen
// address parses, a non-loopback address comes with a token file
// (FAILED_PRECONDITION otherwise), and the token file holds a token
// (auth.h's ReadTokenFile errors). Returns the token; empty when there is no
// token file.
StatusOr<std::string> CheckServeConfig(const host::HostConfig& config);

// The HTTP server over one Services. Requests run in parallel on a pool of
// services.config.threads workers (0 = eight per hardware thread, at least
// 16), each busy for one request at a time (connection_loop.h); all of
// them share `services`, whose parts are thread-safe.
//
// Thread safety: Stop() may be called from any thread (not from a signal
// handler); the other members from the thread that created the server.
class HttpServer {
 public:
  // Checks services.config (CheckServeConfig's errors), binds the socket
  // and listens (connections wait in the backlog until Serve). UNAVAILABLE
  // when the address cannot be bound (in use, not local). `services` must
  // outlive the server.
  static StatusOr<std::unique_ptr<HttpServer>> Create(host::Services& services);

  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the actual one when the configured port was 0).
  int port() const;
  // "http://HOST:PORT" with the bound port.
  std::string url() const;

  // Accepts and serves connections until Stop(); returns once every
  // request in flight has been answered. UNAVAILABLE if accepting failed.
  Status Serve();

  // Makes Serve() stop accepting and return after the requests in flight
  // finish. Idempotent; effective even when called before Serve().
  void Stop();

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ctxkit::http

#endif  // CTXKIT_PROGRAMS_CTXKIT_HTTP_HTTP_SERVER_H_
