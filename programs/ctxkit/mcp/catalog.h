// What the MCP server offers, as data: the tools, resources, resource
// templates and prompts, each a row pointing at a thin adapter over the
// library. The server (session.h) does everything protocol-related --
// pagination, argument validation against input_schema, cancellation,
// progress, errors -- so an adapter only reads its arguments, calls the
// library and writes the seed's response document.
//
// The table itself is in programs/ctxkit/tools/catalog.cc, in one place, so
// that a new tool is one more row there.

#ifndef CTXKIT_PROGRAMS_CTXKIT_MCP_CATALOG_H_
#define CTXKIT_PROGRAMS_CTXKIT_MCP_CATALOG_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/cancel.h"
#include "ctxkit/status.h"
#include "programs/ctxkit/host/services.h"
#include "simdjson.h"

namespace ctxkit::mcp {

// MCP log levels (RFC 5424 severities), least severe first.
enum class LogLevel {
  kDebug,
  kInfo,
  kNotice,
  kWarning,
  kError,
  kCritical,
  kAlert,
  kEmergency
};

// What an adapter may ask of the request it is serving. Thread safety: the
// server calls an adapter on one thread per request; the context is that
// request's and may be used only on that thread, during the call.
class RequestContext {
 public:
  virtual ~RequestContext() = default;

  virtual host::Services& services() = 0;

  // True once the client cancelled the request (notifications/cancelled) or
  // the server is shutting down. Long adapters check it between units of
  // work and return early (what they return is then discarded, and no
  // reply is sent).
  virtual bool Cancelled() const = 0;

  // Cancelled() as a library call's CancelCheck (ctxkit/cancel.h), so that
  // one long call (a compaction, a large count) stops inside the library,
  // not only between the adapter's own pieces. For calls made on this
  // request's thread, during the request, as the context itself.
  CancelCheck AsCancelCheck() const {
    return [this] { return Cancelled(); };
  }

  // Reports progress when the request carried a progress token, and does
  // nothing otherwise. `progress` must increase from call to call (the
  // server drops a value that does not); `total` may be unknown (0). With
  // a known total the server sends the first value, then one at least a
  // hundredth of `total` past the last one sent, and always the value at
  // `total`; with total unknown it sends every value, so the adapter's own
  // cadence bounds them. Which values go depends on the values alone,
  // never on time.
  virtual void Progress(double progress, double total,
                        std::string_view message) = 0;

  // Sends notifications/message when `level` is at least the session's
  // level (logging/setLevel). `data` is a plain text.
  virtual void Log(LogLevel level, std::string_view data) = 0;
};

// A tool's answer: `json` is its response document (a JSON object), sent
// both as structuredContent and as the text of one text content block.
// is_error marks a tool execution error (seed 000's {success:false,...}).
struct ToolOutput {
  std::string json;
  bool is_error = false;
  // false: `json` is not an object (seed 003's `pong` text, or its JSON
  // arrays of ids), so it is sent as the text block only: MCP's
  // structuredContent must be an object.
  bool structured = true;
};

// `args` is the call's "arguments" object, already checked against the
// tool's input_schema (types, required members, enums, ranges): an adapter
// checks only what the schema cannot say. Errors are returned as a
// ToolOutput with is_error (see ToolError below), never thrown.
using ToolHandler = ToolOutput (*)(simdjson::dom::object args,
                                   RequestContext& context);

struct ToolSpec {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  std::string_view input_schema;  // a JSON Schema object, as JSON text
  // Likewise, admitting the error form too; empty for a tool whose answer
  // is not an object (ToolOutput::structured), which lists no outputSchema.
  std::string_view output_schema;
  ToolHandler handler;
  // MCP tool annotations (hints for clients).
  bool read_only = false;
  bool destructive = false;
  bool idempotent = false;
};

// A resource's content: `text` with its MIME type.
struct ResourceContent {
  std::string text;
  std::string_view mime_type = "application/json";
};

// Reads a static resource. Errors: NOT_FOUND becomes -32002 ("Resource not
// found"); others -32603 with the status message.
using ResourceHandler = StatusOr<ResourceContent> (*)(RequestContext& context);

struct ResourceSpec {
  std::string_view uri;  // "conversation-history://all"
  std::string_view name;
  std::string_view title;
  std::string_view description;
  std::string_view mime_type = "application/json";
  ResourceHandler handler;
};

// Reads a templated resource for the value of its one variable (the text
// after the template's fixed prefix, never empty). Errors as above.
using TemplateHandler = StatusOr<ResourceContent> (*)(std::string_view value,
                                                      RequestContext& context);

// Completion candidates for a prefix (completion/complete): at most
// `limit` values starting with `prefix`, plus the total number of matches
// when cheaply known (nullopt otherwise).
struct Completions {
  std::vector<std::string> values;
  std::optional<size_t> total;
};
using CompletionHandler = Completions (*)(std::string_view prefix, size_t limit,
                                          RequestContext& context);

struct ResourceTemplateSpec {
  // An RFC 6570 level-1 template with one variable at its end:
  // "conversation-history://{conversation_id}".
  std::string_view uri_template;
  std::string_view name;
  std::string_view title;
  std::string_view description;
  std::string_view mime_type = "application/json";
  TemplateHandler handler;
  CompletionHandler complete = nullptr;  // for the variable
};

struct PromptArgumentSpec {
  std::string_view name;
  std::string_view description;
  bool required = false;
  CompletionHandler complete = nullptr;
};

// One prompt message: role "user" or "assistant", text content.
struct PromptMessage {
  std::string role;
  std::string text;
};

struct PromptOutput {
  std::string description;
  std::vector<PromptMessage> messages;
};

// A prompt argument's value as the client sent it (MCP prompt arguments are
// strings).
struct PromptArgument {
  std::string_view name;
  std::string_view value;
};

// Fills a prompt. The server has checked that required arguments are
// present and that no unknown argument was given. Errors: INVALID_ARGUMENT
// (a value that does not parse, naming the argument) and NOT_FOUND (an
// unknown conversation) become -32602 with the message; others -32603.
using PromptHandler = StatusOr<PromptOutput> (*)(
    std::span<const PromptArgument> arguments, RequestContext& context);

struct PromptSpec {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  std::span<const PromptArgumentSpec> arguments;
  PromptHandler handler;
};

// The tables (programs/ctxkit/tools/catalog.cc). Static storage; names and
// URIs are unique within each table.
std::span<const ToolSpec> Tools();
std::span<const ResourceSpec> Resources();
std::span<const ResourceTemplateSpec> ResourceTemplates();
std::span<const PromptSpec> Prompts();

// Seed 000's error form as a tool error:
//   {"success":false,"error":<error>,"details":[<details>...]}
// `details_json` is a JSON array text ("[]" for none).
ToolOutput ToolError(std::string_view error,
                     std::string_view details_json = "[]");

// A validation error in seed 000's form, for a check the schema cannot
// express: details [{"path":[<path>],"message":<message>}], error
// "Validation error".
ToolOutput ToolValidationError(std::string_view path, std::string_view message);

// A library error as a tool error: NOT_FOUND gives the seed's "<what> not
// found" (`what` e.g. "Conversation"), INVALID_ARGUMENT and OUT_OF_RANGE a
// validation error with an empty path and the status message (an adapter
// that knows which argument is at fault says so: tools::LibraryError),
// others "Operation failed" with the status as details.
ToolOutput ToolStatusError(const Status& status, std::string_view what);

}  // namespace ctxkit::mcp

#endif  // CTXKIT_PROGRAMS_CTXKIT_MCP_CATALOG_H_
