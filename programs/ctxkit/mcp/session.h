// The MCP server, independent of its transport: JSON-RPC 2.0 messages in,
// JSON-RPC messages out. The stdio transport (stdio.h) and the HTTP
// transports (programs/ctxkit/http/) feed it text and deliver what it sends.
//
// Protocol revisions served: 2025-11-25 and 2025-06-18 (current), 2025-03-26
// and 2024-11-05 (older clients). initialize answers the client's revision
// when it is one of these and 2025-11-25 otherwise.
//
// Errors (JSON-RPC error objects): -32700 malformed JSON (id null; the
// session keeps serving), -32600 not a JSON-RPC 2.0 request, -32601 unknown
// method, -32602 bad params (unknown tool or prompt, missing prompt
// argument, bad cursor, bad log level), -32002 unknown resource, -32603 an
// internal failure. A tool's argument validation failure is a tool result
// with isError (seed 000's {success:false,error:"Validation error",
// details}), so that the model can correct its call.

#ifndef CTXKIT_PROGRAMS_CTXKIT_MCP_SESSION_H_
#define CTXKIT_PROGRAMS_CTXKIT_MCP_SESSION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "programs/ctxkit/host/services.h"
#include "programs/ctxkit/mcp/catalog.h"

namespace ctxkit::mcp {

inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";

// JSON-RPC and MCP error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;

// A JSON-RPC error message: `id_json` is the id's JSON text ("null" when
// the id is unknown), `data_json` the error's data as JSON text (empty for
// none). For transports that refuse a message before a session sees it.
std::string ErrorReply(std::string_view id_json, int code,
                       std::string_view message,
                       std::string_view data_json = {});

// Where a session's outgoing messages go. Send receives one complete
// JSON-RPC message (no trailing newline). Called on the thread that called
// Session::Handle; an implementation shared by several Handle calls at once
// must be thread-safe.
class Outbound {
 public:
  virtual ~Outbound() = default;
  virtual void Send(std::string message) = 0;
  // Whether nobody waits for these messages any more (an HTTP client that
  // closed its connection): the requests of the Handle call see
  // Cancelled(), as if the client had cancelled them. Thread-safe.
  virtual bool Abandoned() const { return false; }
};

// One MCP session: a stdio connection, or one Mcp-Session-Id over HTTP.
// Holds what the client negotiated (protocol revision, log level) and the
// requests in flight, so that notifications/cancelled can reach them.
//
// Thread safety: Handle may run concurrently on several threads for the
// same session (HTTP requests of one session); the session's state is
// guarded. `services` must outlive the session.
class Session {
 public:
  explicit Session(host::Services& services);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Handles one incoming message: a request, a notification, a response
  // (ignored: the server sends no requests) or a batch of them (answered by
  // an array, as JSON-RPC 2.0 and revision 2025-03-26 allow). The reply to
  // each request, and the notifications produced while serving it
  // (progress, log messages), go to `out` before Handle returns; a
  // notification gets no reply, nor does a request cancelled while it ran.
  // Never throws for any input (std::bad_alloc aside).
  void Handle(std::string_view message, Outbound& out);

  // The reply to a message too large to read (the transport's limit): a
  // -32600 error naming the limit, with `id_json` (the message's id as JSON
  // text, "null" when unknown) as its id.
  static std::string TooLargeReply(size_t limit,
                                   std::string_view id_json = "null");

  // Marks every request in flight as cancelled (shutdown): their adapters
  // see Cancelled() and no replies are sent for them.
  void CancelAll();

  // The revision negotiated by initialize; empty before it.
  std::string protocol_version() const;
  bool initialized() const;

 private:
  class Request;
  using Params = std::optional<simdjson::dom::object>;

  // `reply` receives the reply to a request (empty for none).
  void HandleOne(simdjson::dom::element message, Outbound& out,
                 std::string& reply);
  void HandleNotification(std::string_view method, Params params);
  void SendLog(Outbound& out, LogLevel level, std::string_view data);

  // The methods: each returns the JSON text of its result, or throws the
  // internal RpcError that HandleOne turns into an error reply.
  std::string Dispatch(std::string_view method, Params params,
                       Request& context);
  std::string Initialize(Params params);
  std::string ListTools(Params params);
  std::string CallTool(Params params, Request& context);
  std::string ListResources(Params params);
  std::string ListTemplates(Params params);
  std::string ReadResource(Params params, Request& context);
  std::string ListPrompts(Params params);
  std::string GetPrompt(Params params, Request& context);
  std::string SetLevel(Params params);
  std::string Complete(Params params, Request& context);

  host::Services& services_;
  mutable std::mutex mutex_;
  std::string protocol_version_;  // guarded by mutex_
  bool initialized_ = false;      // guarded by mutex_
  std::atomic<int> log_level_;    // a LogLevel
  std::atomic<bool> shutting_down_{false};
  // Requests in flight by their id's JSON text; guarded by mutex_.
  std::unordered_map<std::string, std::shared_ptr<std::atomic<bool>>>
      in_flight_;
};

}  // namespace ctxkit::mcp

#endif  // CTXKIT_PROGRAMS_CTXKIT_MCP_SESSION_H_
