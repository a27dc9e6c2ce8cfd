#include "programs/ctxkit/http/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ctxkit/context_graph_seed.h"
#include "ctxkit/version.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/host/listen_address.h"
#include "programs/ctxkit/http/auth.h"
#include "programs/ctxkit/http/connection_loop.h"
#include "programs/ctxkit/http/headers.h"
#include "programs/ctxkit/http/mcp_messages.h"
#include "programs/ctxkit/http/session_table.h"
#include "programs/ctxkit/mcp/session.h"

namespace ctxkit::http {

using host::FormatHostPort;
using host::IsLoopbackHost;
using host::ListenAddress;
using host::ParseListenAddress;

namespace {

// With a charset parameter the type is not one cpp-httplib compresses on
// its own (it matches "application/json" exactly): gzip or brotli at its
// default levels would cost more CPU than the compaction itself, and the
// clients are normally on the same machine.
constexpr char kJsonType[] = "application/json; charset=utf-8";
constexpr char kSseType[] = "text/event-stream";

// An idle keep-alive connection costs a file descriptor (connection_loop.h
// keeps it off the workers); one second keeps reuse for back-to-back
// requests and closes it soon after.
constexpr time_t kKeepAliveSeconds = 1;
constexpr size_t kKeepAliveMaxRequests = 100;

// The revisions mcp::Session negotiates (session.h); a request naming any
// other in MCP-Protocol-Version is refused with 400, as the transport
// specification requires.
constexpr std::string_view kProtocolVersions[] = {"2025-11-25", "2025-06-18",
                                                  "2025-03-26", "2024-11-05"};

// ---- small helpers ----------------------------------------------------------

std::string ErrorJson(std::string_view message) {
  program::JsonOut json;
  json.BeginObject().Key("error").String(message).EndObject();
  return json.str();
}

void SendJson(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, kJsonType);
}

void SendError(httplib::Response& res, int status, std::string_view message) {
  SendJson(res, status, ErrorJson(message));
}

// httplib's request parsing, routing and response writing, for the
// requests that ConnectionLoop has read the headers of.
class Dispatcher final : public httplib::Server {
 public:
  Dispatcher() {
    // httplib takes an invalid listening socket to mean "shutting down",
    // and then stops chunked (SSE) responses before their first chunk.
    // This server never listens itself (ConnectionLoop does), and the
    // value is never used as a descriptor.
    svr_sock_ = std::numeric_limits<int>::max();
  }
  bool ProcessRequest(httplib::Stream& stream, bool close_connection,
                      bool& connection_closed) {
    return process_request(stream, close_connection, connection_closed,
                           nullptr);
  }
};

// The reason phrase of the statuses httplib produces by itself.
std::string StatusText(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 416:
      return "Range Not Satisfiable";
    case 500:
      return "Internal Server Error";
    default:
      return "HTTP status " + std::to_string(status);
  }
}

// The Content-Length of `req`; 0 when absent or not a number (httplib
// answers that itself).
uint64_t ContentLength(const httplib::Request& req) {
  const std::string text = req.get_header_value("Content-Length");
  uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// 0.0.0.0 or ::, which serve whatever name the machine is reached by.
bool IsWildcardHost(std::string_view host) {
  return host == "0.0.0.0" || host == "::";
}

enum class Method { kGet, kPost, kDelete, kOther };

Method MethodOf(const httplib::Request& req) {
  if (req.method == "GET" || req.method == "HEAD") return Method::kGet;
  if (req.method == "POST") return Method::kPost;
  if (req.method == "DELETE") return Method::kDelete;
  return Method::kOther;
}

bool IsHttpMethodHttplibRoutes(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "POST" ||
         method == "PUT" || method == "DELETE" || method == "OPTIONS" ||
         method == "PATCH";
}

// Seed 003's REST routes (0.1.1's Express server), which the library's
// SeedRest answers. `path` is httplib's decoded path: a percent-encoded id
// in /related/<id> is decoded by SeedRest from the raw target instead.
bool IsSeedRestPath(std::string_view path) {
  return path == "/" || path == "/tools/context_memory" ||
         path == "/contexts" || path == "/hierarchies" ||
         path == "/meta-summaries" || path == "/similar" ||
         (path.size() > 9 && path.substr(0, 9) == "/related/");
}

// The methods each endpoint allows, for 405's Allow header; nullptr for a
// path that is not an endpoint.
const char* AllowedMethods(std::string_view path) {
  if (path == "/health" || path == "/api/user/info") return "GET, HEAD";
  if (path == "/api/chat/compact" || path == "/mcp/v1") return "POST";
  if (path == "/mcp") return "POST, DELETE";
  if (IsSeedRestPath(path)) {
    return path == "/tools/context_memory" ? "POST" : "GET, HEAD";
  }
  return nullptr;
}

}  // namespace

// ---- the server -------------------------------------------------------------

class HttpServer::Impl {
 public:
  Impl(host::Services& services, ListenAddress address, std::string token)
      : services_(services),
        address_(std::move(address)),
        token_(std::move(token)),
        sessions_(services.config.max_sessions) {}

  Status Bind();
  Status Serve();
  void Stop();
  int port() const { return loop_ == nullptr ? 0 : loop_->port(); }
  const ListenAddress& address() const { return address_; }

 private:
  using Reader = const httplib::ContentReader*;

  void Route(const httplib::Request& req, httplib::Response& res,
             Reader reader);
  // The body of `req` into `body`; false after sending 413, 408 or 400.
  bool ReadBody(const httplib::Request& req, httplib::Response& res,
                Reader reader, std::string* body);
  // For a response decided without reading the body the request announced:
  // the connection closes after it, the body unread. Draining it instead
  // would let any client, authenticated or not, hold a worker for as long
  // as it takes to send max_body_bytes.
  void SkipBody(const httplib::Request& req, httplib::Response& res);
  bool HostAllowed(const httplib::Request& req, httplib::Response& res);
  bool Authorized(const httplib::Request& req, httplib::Response& res);

  void Health(httplib::Response& res);
  void UserInfo(httplib::Response& res);
  void Compact(const std::string& body, httplib::Response& res);
  void McpStateless(const std::string& body, httplib::Response& res);
  void McpStreamable(const httplib::Request& req, httplib::Response& res,
                     Reader reader);
  void McpDelete(const httplib::Request& req, httplib::Response& res);
  void SeedRoute(const httplib::Request& req, httplib::Response& res,
                 Reader reader);

  host::Services& services_;
  const ListenAddress address_;
  const std::string token_;  // empty = no authentication
  Dispatcher server_;
  std::unique_ptr<ConnectionLoop> loop_;
  SessionTable sessions_;
  std::atomic<bool> stop_requested_{false};
};

Status HttpServer::Impl::Bind() {
  const host::HostConfig& config = services_.config;
  ConnectionLimits limits;
  limits.threads = static_cast<size_t>(std::max(config.threads, 0));
  if (limits.threads == 0) {
    // A worker is busy for a whole request, compaction or SSE stream
    // included, and some wait on the store's writer lock: more workers
    // than cores keeps short requests (/health) from queueing behind them.
    limits.threads =
        std::max<size_t>(16, 8 * std::thread::hardware_concurrency());
  }
  limits.io_timeout = std::chrono::seconds(config.timeout_seconds);
  limits.header_timeout = std::chrono::seconds(config.header_timeout_seconds);
  limits.body_timeout = std::chrono::seconds(config.body_timeout_seconds);
  limits.keep_alive_timeout = std::chrono::seconds(kKeepAliveSeconds);
  limits.keep_alive_max_requests = kKeepAliveMaxRequests;
  limits.max_header_bytes = config.max_header_bytes;
  limits.max_headers = config.max_headers;
  limits.max_connections_per_client = config.max_connections_per_client;

  server_.set_payload_max_length(config.max_body_bytes);
  // Only for the Keep-Alive header of responses: ConnectionLoop applies
  // the limits.
  server_.set_keep_alive_timeout(kKeepAliveSeconds);
  server_.set_keep_alive_max_count(kKeepAliveMaxRequests);

  const std::string any = ".*";
  server_.Get(any, [this](const httplib::Request& req, httplib::Response& res) {
    Route(req, res, nullptr);
  });
  server_.Options(any,
                  [this](const httplib::Request& req, httplib::Response& res) {
                    Route(req, res, nullptr);
                  });
  const auto with_body = [this](const httplib::Request& req,
                                httplib::Response& res,
                                const httplib::ContentReader& reader) {
    Route(req, res, &reader);
  };
  server_.Post(any, with_body);
  server_.Put(any, with_body);
  server_.Patch(any, with_body);
  server_.Delete(any, with_body);

  // Responses httplib makes itself (a malformed request line, an unknown
  // method) get a JSON body like every other error.
  server_.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req,
         httplib::Response& res) -> httplib::Server::HandlerResponse {
        if (!IsHttpMethodHttplibRoutes(req.method)) {
          if (const char* allow = AllowedMethods(req.path)) {
            res.status = 405;
            res.set_header("Allow", allow);
          }
        }
        if (!res.body.empty()) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        res.set_content(ErrorJson(StatusText(res.status)), kJsonType);
        return httplib::Server::HandlerResponse::Handled;
      }));
  server_.set_exception_handler([](const httplib::Request&,
                                   httplib::Response& res,
                                   std::exception_ptr error) {
    std::string what = "unknown exception";
    try {
      if (error) std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    SendError(res, 500, "internal error: " + what);
  });
  // httplib adds its own Connection and Keep-Alive headers after the
  // handler's (a multimap keeps both): a closing response says so once.
  server_.set_post_routing_handler(
      [](const httplib::Request&, httplib::Response& res) {
        if (res.get_header_value("Connection") == "close") {
          res.headers.erase("Connection");
          res.headers.erase("Keep-Alive");
          res.set_header("Connection", "close");
        }
      });

  auto loop = ConnectionLoop::Listen(
      address_.host, address_.port, limits,
      [this](httplib::Stream& stream, bool close_connection,
             bool& connection_closed) {
        return server_.ProcessRequest(stream, close_connection,
                                      connection_closed);
      });
  if (!loop.ok()) return loop.status();
  loop_ = *std::move(loop);
  return Status();
}

Status HttpServer::Impl::Serve() {
  if (stop_requested_.load()) return Status();
  return loop_->Run();
}

void HttpServer::Impl::Stop() {
  stop_requested_.store(true);
  loop_->Stop();
}

bool HttpServer::Impl::ReadBody(const httplib::Request& req,
                                httplib::Response& res, Reader reader,
                                std::string* body) {
  if (reader == nullptr) return true;
  // Without either header an HTTP/1.1 request has no body; asking httplib
  // to read one would wait for the client to close the connection.
  if (!req.has_header("Content-Length") &&
      !req.has_header("Transfer-Encoding")) {
    return true;
  }
  const size_t limit = services_.config.max_body_bytes;
  const auto too_large = [&] {
    SendError(res, 413,
              "request body larger than max_body_bytes (" +
                  std::to_string(limit) + " bytes)");
  };
  // Refused before reading: httplib would read and drop the whole body
  // first.
  if (ContentLength(req) > limit) {
    too_large();
    SkipBody(req, res);
    return false;
  }
  size_t size = 0;
  bool over = false;
  const bool ok = (*reader)([&](const char* data, size_t length) {
    if (size + length > limit) {
      over = true;
      return false;
    }
    size += length;
    if (body != nullptr) body->append(data, length);
    return true;
  });
  if (over || res.status == 413) {
    too_large();
    SkipBody(req, res);  // the rest of a chunked body is still on the way
    return false;
  }
  if (!ok) {
    ClientConnection* connection = ClientConnection::Current();
    if (connection != nullptr && connection->body_timed_out()) {
      SendError(res, 408,
                "request body not received within body_timeout_seconds (" +
                    std::to_string(services_.config.body_timeout_seconds) +
                    ")");
    } else {
      SendError(res, 400, "could not read the request body");
    }
    SkipBody(req, res);
    return false;
  }
  return true;
}

void HttpServer::Impl::SkipBody(const httplib::Request& req,
                                httplib::Response& res) {
  const bool has_body =
      req.has_header("Transfer-Encoding") ||
      (req.has_header("Content-Length") && ContentLength(req) > 0);
  if (!has_body) return;
  res.set_header("Connection", "close");
  if (ClientConnection* connection = ClientConnection::Current()) {
    connection->CloseAfterResponse();
  }
}

bool HttpServer::Impl::HostAllowed(const httplib::Request& req,
                                   httplib::Response& res) {
  // DNS rebinding: a page from another site that resolves its own name to
  // 127.0.0.1 makes the browser send that name as Host (and, when it is
  // not a simple request, as Origin). A wildcard address serves any name
  // it is reached by, and needs a token anyway (CheckServeConfig).
  if (IsWildcardHost(address_.host) || !req.has_header("Host")) return true;
  const std::string value = req.get_header_value("Host");
  const std::string_view host = HostOfHostHeader(value);
  if (!host.empty() &&
      (IsLoopbackHost(host) || EqualsIgnoreCase(host, address_.host))) {
    return true;
  }
  SendError(res, 421,
            "Host header '" + value +
                "' is not allowed: expected localhost, 127.0.0.1, [::1] or " +
                address_.host + " (DNS rebinding protection)");
  return false;
}

bool HttpServer::Impl::Authorized(const httplib::Request& req,
                                  httplib::Response& res) {
  if (token_.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  std::string_view value = Trim(header);
  constexpr std::string_view kScheme = "bearer";
  const bool bearer =
      value.size() > kScheme.size() &&
      EqualsIgnoreCase(value.substr(0, kScheme.size()), kScheme) &&
      (value[kScheme.size()] == ' ' || value[kScheme.size()] == '\t');
  // RFC 6750's challenge, without the resource_metadata of MCP's OAuth
  // profile: there is no authorization server to discover, and an MCP
  // client given none reports that the server wants a token instead of
  // starting an OAuth flow (the well-known metadata paths are 404).
  if (!bearer) {
    res.set_header("WWW-Authenticate",
                   "Bearer realm=\"ctxkit\", error_description=\"a bearer "
                   "token is required: the first line of the server's "
                   "--token-file\"");
    SendError(res, 401,
              "authentication required: send 'Authorization: Bearer TOKEN' "
              "with the token of the server's --token-file");
    return false;
  }
  const std::string_view given = Trim(value.substr(kScheme.size()));
  if (!ConstantTimeEquals(given, token_)) {
    res.set_header("WWW-Authenticate",
                   "Bearer realm=\"ctxkit\", error=\"invalid_token\", "
                   "error_description=\"the bearer token is not the one of "
                   "the server's --token-file\"");
    SendError(res, 401, "invalid bearer token");
    return false;
  }
  return true;
}

void HttpServer::Impl::Route(const httplib::Request& req,
                             httplib::Response& res, Reader reader) {
  const std::string& path = req.path;
  const Method method = MethodOf(req);
  if (path == "/health") {
    // Open to everyone, so that a load balancer or a supervisor can probe
    // the server without a token.
    if (method != Method::kGet) {
      res.set_header("Allow", AllowedMethods(path));
      SendError(res, 405, "method " + req.method + " not allowed on " + path);
      SkipBody(req, res);
      return;
    }
    Health(res);
    return;
  }
  if (!HostAllowed(req, res)) {
    SkipBody(req, res);
    return;
  }
  // DNS rebinding, for a browser that sends Origin.
  if (req.has_header("Origin")) {
    const std::string origin = req.get_header_value("Origin");
    const std::string_view host = OriginHost(origin);
    if (host.empty() || !IsLoopbackHost(host)) {
      SendError(res, 403, "origin '" + origin + "' is not allowed");
      SkipBody(req, res);
      return;
    }
  }
  // OAuth discovery (RFC 9728, RFC 8414) finds nothing, before
  // authentication: an MCP client then asks its user for the bearer token.
  if (path.rfind("/.well-known/oauth-", 0) == 0 ||
      path.rfind("/.well-known/openid-configuration", 0) == 0) {
    SendError(res, 404,
              "no OAuth authorization on this server: send "
              "'Authorization: Bearer TOKEN' with the token of its "
              "--token-file");
    SkipBody(req, res);
    return;
  }
  if (!Authorized(req, res)) {
    SkipBody(req, res);
    return;
  }
  const char* allow = AllowedMethods(path);
  if (allow == nullptr) {
    SendError(res, 404, "no endpoint " + path);
    SkipBody(req, res);
    return;
  }
  if (path == "/api/user/info" && method == Method::kGet) {
    UserInfo(res);
    return;
  }
  if (IsSeedRestPath(path) &&
      (path == "/tools/context_memory" ? method == Method::kPost
                                       : method == Method::kGet)) {
    SeedRoute(req, res, reader);
    return;
  }
  if (path == "/mcp" &&
      (method == Method::kPost || method == Method::kDelete)) {
    McpStreamable(req, res, reader);
    return;
  }
  if ((path == "/api/chat/compact" || path == "/mcp/v1") &&
      method == Method::kPost) {
    std::string body;
    if (!ReadBody(req, res, reader, &body)) return;
    if (path == "/mcp/v1") {
      McpStateless(body, res);
    } else {
      Compact(body, res);
    }
    return;
  }
  res.set_header("Allow", allow);
  SendError(res, 405, "method " + req.method + " not allowed on " + path);
  SkipBody(req, res);
}

void HttpServer::Impl::SeedRoute(const httplib::Request& req,
                                 httplib::Response& res, Reader reader) {
  std::string body;
  if (reader != nullptr && !ReadBody(req, res, reader, &body)) return;
  // The raw target (httplib's path is decoded), so that an id holding '/'
  // (sent as %2F) stays one id.
  graph::SeedAnswer answer = graph::SeedRest(
      *services_.graph, req.method == "HEAD" ? "GET" : req.method, req.target,
      body);
  SendJson(res, answer.http_status, answer.json);
}

void HttpServer::Impl::Health(httplib::Response& res) {
  program::JsonOut json;
  json.BeginObject()
      .Key("status")
      .String("ok")
      .Key("server")
      .String("ctxkit")
      .Key("version")
      .String(CTXKIT_VERSION_STRING)
      .EndObject();
  SendJson(res, 200, json.str());
}

void HttpServer::Impl::UserInfo(httplib::Response& res) {
  // The server has no user accounts: the only identity it knows is whether
  // the caller proved it holds the token.
  program::JsonOut json;
  json.BeginObject()
      .Key("username")
      .String(token_.empty() ? "local" : "bearer")
      .Key("auth")
      .String(token_.empty() ? "none" : "bearer")
      .EndObject();
  SendJson(res, 200, json.str());
}

void HttpServer::Impl::Compact(const std::string& body,
                               httplib::Response& res) {
  if (Trim(body).empty()) {
    SendError(res, 400,
              "the request body is empty: expected a JSON object with "
              "\"messages\"");
    return;
  }
  // A client that closes its connection stops the compaction inside the
  // library: an abandoned large compaction would otherwise hold a worker
  // and a core for its whole run. A stopping server still answers the
  // requests it has (ConnectionLoop::Run drains them).
  std::atomic<bool> gone{false};
  OnClientGone on_gone([&gone] { gone.store(true); });
  auto result = services_.compactor->CompactJson(body, CancelWhen(gone));
  if (!result.ok()) {
    const StatusCode code = result.status().code();
    if (code == StatusCode::kCancelled) {
      // Nobody is there to read it; the connection closes after it.
      SendError(res, 503, result.status().message());
      res.set_header("Connection", "close");
      if (ClientConnection* connection = ClientConnection::Current()) {
        connection->CloseAfterResponse();
      }
      return;
    }
    const bool client_error = code == StatusCode::kInvalidArgument ||
                              code == StatusCode::kOutOfRange ||
                              code == StatusCode::kNotFound;
    SendError(res, client_error ? 400 : 500, result.status().message());
    return;
  }
  SendJson(res, 200, *result);
}

void HttpServer::Impl::McpStateless(const std::string& body,
                                    httplib::Response& res) {
  const InputKind kind = Classify(body);
  mcp::Session session(services_);
  // A client that closes its connection gets no answer: its work stops.
  std::atomic<bool> gone{false};
  OnClientGone on_gone([&gone] { gone.store(true); });
  Collector collector(&gone);
  session.Handle(body, collector);
  if (kind == InputKind::kInvalid ||
      (kind == InputKind::kNoRequests && !collector.messages().empty())) {
    // Unparseable or invalid input: the session's error reply, as 400.
    SendJson(
        res, 400,
        collector.messages().empty()
            ? mcp::ErrorReply("null", mcp::kInvalidRequest, "Invalid Request")
            : collector.messages().back());
    return;
  }
  const std::vector<std::string> replies = collector.Replies();
  if (replies.empty()) {
    res.status = 202;  // notifications only, or a request cancelled
    return;
  }
  SendJson(res, 200, replies.back());
}

void HttpServer::Impl::McpStreamable(const httplib::Request& req,
                                     httplib::Response& res, Reader reader) {
  const std::string version = req.get_header_value("MCP-Protocol-Version");
  if (!version.empty() &&
      std::find(std::begin(kProtocolVersions), std::end(kProtocolVersions),
                version) == std::end(kProtocolVersions)) {
    SendJson(res, 400,
             mcp::ErrorReply("null", mcp::kInvalidRequest,
                             "Bad Request: unsupported MCP-Protocol-Version '" +
                                 version + "'"));
    SkipBody(req, res);
    return;
  }
  const std::string session_id = req.get_header_value("Mcp-Session-Id");
  if (MethodOf(req) == Method::kDelete) {
    // A DELETE needs no body: one it announces is never read.
    SkipBody(req, res);
    McpDelete(req, res);
    return;
  }

  const std::string accept = req.get_header_value("Accept");
  const bool wants_sse = ContainsIgnoreCase(accept, kSseType);
  const bool accepts_json = accept.empty() ||
                            ContainsIgnoreCase(accept, "application/json") ||
                            ContainsIgnoreCase(accept, "*/*") ||
                            ContainsIgnoreCase(accept, "application/*");
  if (!wants_sse && !accepts_json) {
    SendJson(res, 406,
             mcp::ErrorReply("null", mcp::kInvalidRequest,
                             "Not Acceptable: Accept must include "
                             "application/json or text/event-stream"));
    SkipBody(req, res);
    return;
  }

  std::string body;
  if (!ReadBody(req, res, reader, &body)) return;
  const InputKind kind = Classify(body);

  std::shared_ptr<mcp::Session> session;
  bool new_session = false;
  if (session_id.empty()) {
    if (kind != InputKind::kInitialize) {
      SendJson(res, 400,
               mcp::ErrorReply("null", mcp::kInvalidRequest,
                               "Bad Request: Mcp-Session-Id header is required "
                               "(send initialize first)"));
      return;
    }
    session = std::make_shared<mcp::Session>(services_);
    new_session = true;
  } else {
    session = sessions_.Find(session_id);
    if (session == nullptr) {
      SendJson(res, 404,
               mcp::ErrorReply("null", -32001,
                               "Session not found: initialize a new "
                               "session"));
      return;
    }
  }

  if (kind == InputKind::kRequests && wants_sse) {
    // Stream: the work runs inside the content provider, on this worker,
    // after the headers are out, so each notification leaves as it is made.
    auto shared_body = std::make_shared<std::string>(std::move(body));
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        kSseType, [session, shared_body](size_t, httplib::DataSink& sink) {
          std::atomic<bool> gone{false};
          OnClientGone on_gone([&gone] { gone.store(true); });
          SseWriter writer(sink, &gone);
          session->Handle(*shared_body, writer);
          sink.done();
          return true;
        });
    return;
  }

  std::atomic<bool> gone{false};
  OnClientGone on_gone([&gone] { gone.store(true); });
  Collector collector(&gone);
  session->Handle(body, collector);
  if (kind == InputKind::kInvalid ||
      (kind == InputKind::kNoRequests && !collector.messages().empty())) {
    SendJson(
        res, 400,
        collector.messages().empty()
            ? mcp::ErrorReply("null", mcp::kInvalidRequest, "Invalid Request")
            : collector.messages().back());
    return;
  }
  if (new_session) {
    // A session exists once initialize succeeded: a failed one (bad
    // params) leaves nothing behind to expire.
    if (session->protocol_version().empty()) {
      SendJson(res, 400,
               collector.messages().empty()
                   ? mcp::ErrorReply("null", mcp::kInvalidRequest,
                                     "initialize failed")
                   : collector.messages().back());
      return;
    }
    auto id = NewSessionId();
    if (!id.ok()) {
      SendError(res, 500, id.status().message());
      return;
    }
    if (!sessions_.Add(*id, session)) {
      SendJson(res, 503,
               mcp::ErrorReply(
                   "null", mcp::kInvalidRequest,
                   "Service Unavailable: max_sessions (" +
                       std::to_string(services_.config.max_sessions) +
                       ") sessions are in use; end unused ones with DELETE "
                       "or wait for them to expire"));
      return;
    }
    res.set_header("Mcp-Session-Id", *id);
  }
  if (kind == InputKind::kNoRequests) {
    res.status = 202;
    return;
  }
  if (wants_sse) {
    // Initialize: answered before the headers so that the session id could
    // go in them; sent as the event stream the client asked for.
    std::string events;
    for (const std::string& m : collector.messages()) events += SseEvent(m);
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_content(events, kSseType);
    return;
  }
  const std::vector<std::string> replies = collector.Replies();
  if (replies.empty()) {
    res.status = 202;  // the request was cancelled: no reply is due
    return;
  }
  SendJson(res, 200, replies.back());
}

void HttpServer::Impl::McpDelete(const httplib::Request& req,
                                 httplib::Response& res) {
  const std::string session_id = req.get_header_value("Mcp-Session-Id");
  if (session_id.empty()) {
    SendJson(res, 400,
             mcp::ErrorReply("null", mcp::kInvalidRequest,
                             "Bad Request: Mcp-Session-Id header is required"));
    return;
  }
  if (!sessions_.Remove(session_id)) {
    SendJson(res, 404, mcp::ErrorReply("null", -32001, "Session not found"));
    return;
  }
  res.status = 204;
}

// ---- HttpServer -------------------------------------------------------------

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

StatusOr<std::string> CheckServeConfig(const host::HostConfig& config) {
  auto address = ParseListenAddress(config.listen);
  if (!address.ok()) return address.status();
  if (!config.token_file.empty()) return ReadTokenFile(config.token_file);
  if (!address->loopback) {
    return Status(StatusCode::kFailedPrecondition,
                  "refusing to listen on " + config.listen +
                      " without --token-file: a non-loopback address would "
                      "let anyone on the network read and change the store "
                      "(give --token-file FILE, or listen on 127.0.0.1)");
  }
  return std::string();
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(
    host::Services& services) {
  auto token = CheckServeConfig(services.config);
  if (!token.ok()) return token.status();
  auto address = ParseListenAddress(services.config.listen);
  if (!address.ok()) return address.status();
  auto impl =
      std::make_unique<Impl>(services, *std::move(address), *std::move(token));
  if (Status s = impl->Bind(); !s.ok()) return s;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->port(); }

std::string HttpServer::url() const {
  return "http://" + FormatHostPort(impl_->address().host, impl_->port());
}

Status HttpServer::Serve() { return impl_->Serve(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace ctxkit::http
