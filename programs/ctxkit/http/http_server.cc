#include "programs/ctxkit/http/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ctxkit/version.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/host/listen_address.h"
#include "programs/ctxkit/http/auth.h"
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

// cpp-httplib holds a worker for each open connection, idle keep-alive ones
// included. A client that keeps many connections open (Node's fetch opens
// one per request in flight) would otherwise leave requests queued behind
// idle connections for the whole keep-alive time; one second keeps reuse
// for back-to-back requests and frees the worker soon after.
constexpr time_t kKeepAliveSeconds = 1;
constexpr size_t kKeepAliveMaxRequests = 100;
// How often the accept loop looks at a Stop() that came before it started.
constexpr time_t kIdleIntervalMicros = 200'000;

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

// The pool of request workers; its idle hook lets the accept loop notice a
// Stop() that arrived before the loop was running (httplib's stop() does
// nothing then).
class WorkerPool final : public httplib::ThreadPool {
 public:
  WorkerPool(size_t threads, std::function<void()> on_idle)
      : httplib::ThreadPool(threads), on_idle_(std::move(on_idle)) {}
  void on_idle() override { on_idle_(); }

 private:
  std::function<void()> on_idle_;
};

// The reason phrase of the statuses httplib produces by itself.
std::string StatusText(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
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

// The methods each endpoint allows, for 405's Allow header; nullptr for a
// path that is not an endpoint.
const char* AllowedMethods(std::string_view path) {
  if (path == "/health" || path == "/api/user/info") return "GET, HEAD";
  if (path == "/api/chat/compact" || path == "/mcp/v1") return "POST";
  if (path == "/mcp") return "POST, DELETE";
  return nullptr;
}

}  // namespace

// ---- the server -------------------------------------------------------------

class HttpServer::Impl {
 public:
  Impl(host::Services& services, ListenAddress address, std::string token)
      : services_(services),
        address_(std::move(address)),
        token_(std::move(token)) {}

  Status Bind();
  Status Serve();
  void Stop();
  int port() const { return port_; }
  const ListenAddress& address() const { return address_; }

 private:
  using Reader = const httplib::ContentReader*;

  void TryStop();
  void Route(const httplib::Request& req, httplib::Response& res,
             Reader reader);
  // The body of `req` into `body` (kept) or discarded; false after sending
  // 413 or 400.
  bool ReadBody(const httplib::Request& req, httplib::Response& res,
                Reader reader, std::string* body);
  // Reads and drops the body of a request answered without it, so that the
  // connection stays usable for the next request.
  void DrainBody(const httplib::Request& req, httplib::Response& res,
                 Reader reader);
  bool Authorized(const httplib::Request& req, httplib::Response& res);

  void Health(httplib::Response& res);
  void UserInfo(httplib::Response& res);
  void Compact(const std::string& body, httplib::Response& res);
  void McpStateless(const std::string& body, httplib::Response& res);
  void McpStreamable(const httplib::Request& req, httplib::Response& res,
                     Reader reader);
  void McpDelete(const httplib::Request& req, httplib::Response& res);

  host::Services& services_;
  const ListenAddress address_;
  const std::string token_;  // empty = no authentication
  httplib::Server server_;
  int port_ = 0;
  SessionTable sessions_;

  std::atomic<bool> stop_requested_{false};
  std::mutex stop_mutex_;
  bool stopped_ = false;  // guarded by stop_mutex_
};

Status HttpServer::Impl::Bind() {
  const host::HostConfig& config = services_.config;
  size_t threads = static_cast<size_t>(std::max(config.threads, 0));
  if (threads == 0) {
    // cpp-httplib holds a worker for as long as a keep-alive connection is
    // open, busy or not, so the pool is sized for connections, not cores.
    threads = std::max<size_t>(16, 8 * std::thread::hardware_concurrency());
  }
  server_.new_task_queue = [this, threads]() -> httplib::TaskQueue* {
    return new WorkerPool(threads, [this] {
      if (stop_requested_.load()) TryStop();
    });
  };
  server_.set_payload_max_length(config.max_body_bytes);
  server_.set_read_timeout(config.timeout_seconds, 0);
  server_.set_write_timeout(config.timeout_seconds, 0);
  // Without it every keep-alive response waits ~40 ms for the client's
  // delayed ACK (Nagle): 91 instead of 3,165 compactions/s under wrk.
  server_.set_tcp_nodelay(true);
  server_.set_keep_alive_timeout(kKeepAliveSeconds);
  server_.set_keep_alive_max_count(kKeepAliveMaxRequests);
  server_.set_idle_interval(0, kIdleIntervalMicros);

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

  errno = 0;
  if (address_.port == 0) {
    port_ = server_.bind_to_any_port(address_.host);
    if (port_ < 0) port_ = 0;
  } else if (server_.bind_to_port(address_.host, address_.port)) {
    port_ = address_.port;
  }
  if (port_ <= 0) {
    std::string why = errno != 0 ? std::strerror(errno)
                                 : "the address is not local or is in use";
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " +
                      FormatHostPort(address_.host, address_.port) + ": " +
                      why);
  }
  return Status();
}

Status HttpServer::Impl::Serve() {
  if (stop_requested_.load()) return Status();
  if (!server_.listen_after_bind() && !stop_requested_.load()) {
    return Status(StatusCode::kUnavailable,
                  "accepting connections failed on " +
                      FormatHostPort(address_.host, port_));
  }
  return Status();
}

void HttpServer::Impl::Stop() {
  stop_requested_.store(true);
  TryStop();
}

void HttpServer::Impl::TryStop() {
  std::lock_guard lock(stop_mutex_);
  // httplib's stop() asserts a listening socket: call it once, and only
  // while the accept loop runs (the idle hook retries otherwise).
  if (stopped_ || !server_.is_running()) return;
  stopped_ = true;
  server_.stop();
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
  size_t size = 0;
  bool too_large = false;
  const bool ok = (*reader)([&](const char* data, size_t length) {
    if (size + length > limit) {
      too_large = true;
      return false;
    }
    size += length;
    if (body != nullptr) body->append(data, length);
    return true;
  });
  // httplib answers a Content-Length beyond the limit with 413 itself
  // (after skipping the body); a chunked body stops at our receiver.
  if (too_large || res.status == 413) {
    if (too_large) {
      // The rest of the chunked body is still on the connection.
      res.set_header("Connection", "close");
    }
    SendError(res, 413,
              "request body larger than max_body_bytes (" +
                  std::to_string(limit) + " bytes)");
    return false;
  }
  if (!ok) {
    res.set_header("Connection", "close");
    SendError(res, 400, "could not read the request body");
    return false;
  }
  return true;
}

void HttpServer::Impl::DrainBody(const httplib::Request& req,
                                 httplib::Response& res, Reader reader) {
  const int status = res.status;
  const std::string body = res.body;
  const httplib::Headers headers = res.headers;
  if (ReadBody(req, res, reader, nullptr)) return;
  // Keep the answer already decided; only the connection must close if
  // the body could not be drained.
  const bool close = res.has_header("Connection");
  res.status = status;
  res.body = body;
  res.headers = headers;
  if (close) res.set_header("Connection", "close");
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
  if (!bearer) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"ctxkit\"");
    SendError(res, 401,
              "authentication required: send 'Authorization: Bearer TOKEN'");
    return false;
  }
  const std::string_view given = Trim(value.substr(kScheme.size()));
  if (!ConstantTimeEquals(given, token_)) {
    res.set_header("WWW-Authenticate",
                   "Bearer realm=\"ctxkit\", error=\"invalid_token\"");
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
      DrainBody(req, res, reader);
      return;
    }
    Health(res);
    return;
  }
  // DNS rebinding: a web page from another site that resolves its own name
  // to 127.0.0.1 makes the browser send that site's Origin.
  if (req.has_header("Origin")) {
    const std::string origin = req.get_header_value("Origin");
    const std::string_view host = OriginHost(origin);
    if (host.empty() || !IsLoopbackHost(host)) {
      SendError(res, 403, "origin '" + origin + "' is not allowed");
      DrainBody(req, res, reader);
      return;
    }
  }
  if (!Authorized(req, res)) {
    DrainBody(req, res, reader);
    return;
  }
  const char* allow = AllowedMethods(path);
  if (allow == nullptr) {
    SendError(res, 404, "no endpoint " + path);
    DrainBody(req, res, reader);
    return;
  }
  if (path == "/api/user/info" && method == Method::kGet) {
    UserInfo(res);
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
  DrainBody(req, res, reader);
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
  auto result = services_.compactor->CompactJson(body);
  if (!result.ok()) {
    const StatusCode code = result.status().code();
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
  Collector collector;
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
    DrainBody(req, res, reader);
    return;
  }
  const std::string session_id = req.get_header_value("Mcp-Session-Id");
  if (MethodOf(req) == Method::kDelete) {
    DrainBody(req, res, reader);
    if (res.status >= 400) return;
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
    DrainBody(req, res, reader);
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
          SseWriter writer(sink);
          session->Handle(*shared_body, writer);
          sink.done();
          return true;
        });
    return;
  }

  Collector collector;
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
    sessions_.Add(*id, session);
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
