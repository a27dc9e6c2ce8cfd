#include "programs/ctxkit/mcp/session.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/context_graph_seed.h"
#include "ctxkit/version.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/mcp/schema.h"

namespace ctxkit::mcp {

namespace {

using program::JsonOut;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr std::string_view kProtocolVersions[] = {"2025-11-25", "2025-06-18",
                                                  "2025-03-26", "2024-11-05"};

constexpr std::string_view kLogLevelNames[] = {
    "debug", "info",     "notice", "warning",
    "error", "critical", "alert",  "emergency"};

// Progress notifications are spaced by work, not time (the rule is
// RequestContext::Progress's, catalog.h): how many a call sends then
// depends on its input alone, never on the machine's speed, and stays
// bounded however often an adapter reports. This is the number of steps of
// a known total.
constexpr double kProgressSteps = 100;

// Most completion values one reply carries (the MCP limit).
constexpr size_t kMaxCompletionValues = 100;

constexpr std::string_view kInstructions =
    "ctxkit manages an agent's context window: exact token counts "
    "(count_tokens), conversations stored with per-message token counts "
    "(manage_conversation), compaction to a token budget (compress_context "
    "for a stored conversation, compact_chat for a chat history you pass), "
    "a prompt/result cache (smart_cache), reference material "
    "(track_references) and prompt tightening (optimize_query). Resources "
    "expose statistics and tips; prompts build summarization and "
    "compression requests from a stored conversation.";

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  for (size_t i = 0; i < std::size(kLogLevelNames); ++i) {
    if (kLogLevelNames[i] == name) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

// Thrown inside a request's handling to answer with a JSON-RPC error; caught
// in HandleOne, never beyond it.
struct RpcError {
  int code;
  std::string message;
  std::string data_json;  // empty = no data
};

[[noreturn]] void Fail(int code, std::string message,
                       std::string data_json = {}) {
  throw RpcError{code, std::move(message), std::move(data_json)};
}

std::string ResultReply(std::string_view id_json, std::string_view result) {
  std::string reply;
  reply.reserve(result.size() + id_json.size() + 32);
  reply.append(R"({"jsonrpc":"2.0","id":)");
  reply.append(id_json);
  reply.append(R"(,"result":)");
  reply.append(result);
  reply.push_back('}');
  return reply;
}

// A member of `params`, or nullopt when absent.
std::optional<element> Member(object params, std::string_view key) {
  element value;
  if (params.at_key(key).get(value) != simdjson::SUCCESS) return std::nullopt;
  return value;
}

std::string_view RequiredString(object params, std::string_view key) {
  std::string_view value;
  auto member = Member(params, key);
  if (!member || member->get_string().get(value) != simdjson::SUCCESS) {
    Fail(kInvalidParams, "params." + std::string(key) + " must be a string");
  }
  return value;
}

// ---- Pagination -----------------------------------------------------------

// Cursors are opaque to clients; inside they say which list and where, so a
// cursor of one list is refused by another rather than silently misread.
std::string EncodeCursor(std::string_view list, size_t offset) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const std::string plain = std::string(list) + ":" + std::to_string(offset);
  std::string out = "c";
  for (const unsigned char c : plain) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

size_t DecodeCursor(std::string_view list, std::string_view cursor,
                    size_t size) {
  auto bad = [&]() -> size_t {
    Fail(kInvalidParams,
         "invalid cursor: pass the nextCursor of an earlier "
         "page of this list, or none");
  };
  if (cursor.size() < 3 || cursor[0] != 'c' || cursor.size() % 2 != 1 ||
      cursor.size() > 200) {
    return bad();
  }
  std::string plain;
  for (size_t i = 1; i < cursor.size(); i += 2) {
    auto nibble = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    const int hi = nibble(cursor[i]), lo = nibble(cursor[i + 1]);
    if (hi < 0 || lo < 0) return bad();
    plain.push_back(static_cast<char>(hi * 16 + lo));
  }
  const std::string prefix = std::string(list) + ":";
  if (!plain.starts_with(prefix)) return bad();
  const std::string digits = plain.substr(prefix.size());
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return bad();
  }
  const size_t offset = std::stoul(digits);
  if (offset == 0 || offset >= size) return bad();
  return offset;
}

// The [begin, end) of the page a list request asks for, and the cursor of
// the next page (empty on the last).
struct Page {
  size_t begin = 0;
  size_t end = 0;
  std::string next_cursor;
};

Page PageOf(std::string_view list, std::optional<object> params, size_t size,
            size_t page_size) {
  Page page;
  if (params) {
    if (auto cursor = Member(*params, "cursor")) {
      std::string_view text;
      if (cursor->get_string().get(text) != simdjson::SUCCESS) {
        Fail(kInvalidParams, "params.cursor must be a string");
      }
      page.begin = DecodeCursor(list, text, size);
    }
  }
  page.end = std::min(size, page.begin + std::max<size_t>(page_size, 1));
  if (page.end < size) page.next_cursor = EncodeCursor(list, page.end);
  return page;
}

void EndPage(JsonOut& json, const Page& page) {
  json.EndArray();
  if (!page.next_cursor.empty())
    json.Key("nextCursor").String(page.next_cursor);
  json.EndObject();
}

// ---- The catalog's compiled input schemas ---------------------------------

const Schema& InputSchemaOf(const ToolSpec& tool) {
  // Compiled once; the table is static, so the map never changes after.
  static const auto* const kSchemas = [] {
    auto* schemas = new std::map<std::string_view, std::unique_ptr<Schema>>;
    for (const ToolSpec& spec : Tools()) {
      auto compiled = Schema::Compile(spec.input_schema);
      if (compiled.ok()) (*schemas)[spec.name] = *std::move(compiled);
    }
    return schemas;
  }();
  auto it = kSchemas->find(tool.name);
  if (it == kSchemas->end()) {
    // A schema the validator refuses is the program's bug; the catalog test
    // compiles every schema, so this is never reached in a tested build.
    Fail(kInternalError,
         "the input schema of tool " + std::string(tool.name) +
             " does not compile: " +
             Schema::Compile(tool.input_schema).status().message());
  }
  return *it->second;
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      const int hi = hex(text[i + 1]), lo = hex(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string_view TemplatePrefix(std::string_view uri_template) {
  return uri_template.substr(0, uri_template.find('{'));
}

std::string_view TemplateVariable(std::string_view uri_template) {
  const size_t open = uri_template.find('{');
  const size_t close = uri_template.find('}', open);
  if (open == std::string_view::npos || close == std::string_view::npos) {
    return {};
  }
  return uri_template.substr(open + 1, close - open - 1);
}

}  // namespace

std::string ErrorReply(std::string_view id_json, int code,
                       std::string_view message, std::string_view data_json) {
  JsonOut json;
  json.BeginObject()
      .Key("jsonrpc")
      .String("2.0")
      .Key("id")
      .Raw(id_json)
      .Key("error")
      .BeginObject()
      .Key("code")
      .Int(code)
      .Key("message")
      .String(message);
  if (!data_json.empty()) json.Key("data").Raw(data_json);
  json.EndObject().EndObject();
  return json.str();
}

// ---- One request ------------------------------------------------------------

// The RequestContext of one request: its cancellation flag, its progress
// token and where its notifications go.
class Session::Request final : public RequestContext {
 public:
  Request(Session& session, Outbound& out,
          std::shared_ptr<std::atomic<bool>> cancelled,
          std::string progress_token)
      : session_(session),
        out_(out),
        cancelled_(std::move(cancelled)),
        progress_token_(std::move(progress_token)) {}

  host::Services& services() override { return session_.services_; }

  bool Cancelled() const override {
    return cancelled_->load(std::memory_order_relaxed) ||
           session_.shutting_down_.load(std::memory_order_relaxed) ||
           out_.Abandoned();
  }

  void Progress(double progress, double total,
                std::string_view message) override {
    if (progress_token_.empty() || Cancelled()) return;
    if (last_progress_ && progress <= *last_progress_) return;
    // The final value always goes: a client learns the work is done.
    const bool final = total > 0 && progress >= total;
    if (last_progress_ && total > 0 && !final &&
        progress - *last_progress_ < total / kProgressSteps) {
      return;
    }
    last_progress_ = progress;
    JsonOut json;
    json.BeginObject()
        .Key("jsonrpc")
        .String("2.0")
        .Key("method")
        .String("notifications/progress")
        .Key("params")
        .BeginObject()
        .Key("progressToken")
        .Raw(progress_token_)
        .Key("progress")
        .Double(progress);
    if (total > 0) json.Key("total").Double(total);
    if (!message.empty()) json.Key("message").String(message);
    json.EndObject().EndObject();
    out_.Send(json.str());
  }

  void Log(LogLevel level, std::string_view data) override {
    session_.SendLog(out_, level, data);
  }

 private:
  Session& session_;
  Outbound& out_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  std::string progress_token_;           // JSON text; empty = none
  std::optional<double> last_progress_;  // the last value sent
};

// ---- Session ----------------------------------------------------------------

Session::Session(host::Services& services) : services_(services) {
  log_level_.store(static_cast<int>(
      ParseLogLevel(services.config.log_level).value_or(LogLevel::kWarning)));
}

Session::~Session() = default;

std::string Session::protocol_version() const {
  std::lock_guard lock(mutex_);
  return protocol_version_;
}

bool Session::initialized() const {
  std::lock_guard lock(mutex_);
  return initialized_;
}

void Session::CancelAll() {
  shutting_down_.store(true);
  std::lock_guard lock(mutex_);
  for (auto& [id, flag] : in_flight_) flag->store(true);
}

std::string Session::TooLargeReply(size_t limit, std::string_view id_json) {
  return ErrorReply(
      id_json, kInvalidRequest,
      "message too large: the limit is " + std::to_string(limit) + " bytes");
}

void Session::SendLog(Outbound& out, LogLevel level, std::string_view data) {
  if (static_cast<int>(level) < log_level_.load(std::memory_order_relaxed)) {
    return;
  }
  JsonOut json;
  json.BeginObject()
      .Key("jsonrpc")
      .String("2.0")
      .Key("method")
      .String("notifications/message")
      .Key("params")
      .BeginObject()
      .Key("level")
      .String(kLogLevelNames[static_cast<int>(level)])
      .Key("logger")
      .String("ctxkit")
      .Key("data")
      .String(data)
      .EndObject()
      .EndObject();
  out.Send(json.str());
}

void Session::Handle(std::string_view message, Outbound& out) {
  // A parser per thread: parsers are not thread-safe, and reusing one keeps
  // its buffers warm for the next message.
  thread_local simdjson::dom::parser parser;
  element root;
  if (parser.parse(message.data(), message.size()).get(root) !=
      simdjson::SUCCESS) {
    out.Send(ErrorReply("null", kParseError, "Parse error: not valid JSON"));
    return;
  }
  simdjson::dom::array batch;
  if (root.get_array().get(batch) == simdjson::SUCCESS) {
    if (batch.size() == 0) {
      out.Send(ErrorReply("null", kInvalidRequest,
                          "Invalid Request: an empty batch"));
      return;
    }
    std::string replies = "[";
    for (element item : batch) {
      std::string reply;
      HandleOne(item, out, reply);
      if (reply.empty()) continue;
      if (replies.size() > 1) replies.push_back(',');
      replies += reply;
    }
    if (replies.size() > 1) out.Send(replies + "]");
    return;
  }
  std::string reply;
  HandleOne(root, out, reply);
  if (!reply.empty()) out.Send(std::move(reply));
}

void Session::HandleOne(element message, Outbound& out, std::string& reply) {
  object request;
  if (message.get_object().get(request) != simdjson::SUCCESS) {
    reply = ErrorReply("null", kInvalidRequest,
                       "Invalid Request: a message must be a JSON object");
    return;
  }
  std::string_view version, method;
  auto jsonrpc = Member(request, "jsonrpc");
  auto method_member = Member(request, "method");
  auto id_member = Member(request, "id");
  // Seed 003 0.1.1's line protocol, {"id", "tool", "inputs"} without
  // jsonrpc: answered in its own shape ({"id", "outputs"} or {"id",
  // "error"}), which its clients read line by line.
  if (!jsonrpc && Member(request, "tool")) {
    reply = graph::LegacyLine(*services_.graph, simdjson::minify(message)).json;
    return;
  }
  // A response to a request of ours: the server sends none, so there is
  // nothing to match it with. Its id may be null (an error response to a
  // message the peer could not read), so this comes before the id check.
  if (!method_member &&
      (Member(request, "result") || Member(request, "error"))) {
    return;
  }
  // The id, validated first so that every later error can carry it.
  std::string id_json;
  if (id_member) {
    const auto type = id_member->type();
    const bool usable = type == simdjson::dom::element_type::STRING ||
                        type == simdjson::dom::element_type::INT64 ||
                        type == simdjson::dom::element_type::UINT64;
    if (!usable) {
      reply = ErrorReply("null", kInvalidRequest,
                         "Invalid Request: id must be a string or an integer");
      return;
    }
    id_json = simdjson::minify(*id_member);
  }
  if (!jsonrpc || jsonrpc->get_string().get(version) != simdjson::SUCCESS ||
      version != "2.0") {
    reply = ErrorReply(id_json.empty() ? "null" : id_json, kInvalidRequest,
                       "Invalid Request: jsonrpc must be \"2.0\"");
    return;
  }
  if (!method_member) {
    reply = ErrorReply(id_json.empty() ? "null" : id_json, kInvalidRequest,
                       "Invalid Request: no method");
    return;
  }
  if (method_member->get_string().get(method) != simdjson::SUCCESS) {
    reply = ErrorReply(id_json.empty() ? "null" : id_json, kInvalidRequest,
                       "Invalid Request: method must be a string");
    return;
  }
  std::optional<object> params;
  if (auto p = Member(request, "params")) {
    object o;
    if (p->get_object().get(o) != simdjson::SUCCESS) {
      if (!id_json.empty()) {
        reply = ErrorReply(id_json, kInvalidParams,
                           "Invalid params: params must be an object");
      }
      return;
    }
    params = o;
  }

  if (id_json.empty()) {
    HandleNotification(method, params);
    return;
  }

  // A request: registered so that notifications/cancelled can reach it.
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard lock(mutex_);
    if (!in_flight_.emplace(id_json, cancelled).second) {
      reply = ErrorReply(id_json, kInvalidRequest,
                         "Invalid Request: a request with this id is still "
                         "in progress");
      return;
    }
  }
  std::string progress_token;
  if (params) {
    if (auto meta = Member(*params, "_meta")) {
      object meta_object;
      element token;
      if (meta->get_object().get(meta_object) == simdjson::SUCCESS &&
          meta_object.at_key("progressToken").get(token) == simdjson::SUCCESS &&
          (token.is_string() || token.is_int64() || token.is_uint64())) {
        progress_token = simdjson::minify(token);
      }
    }
  }
  Request context(*this, out, cancelled, std::move(progress_token));
  std::string result;
  try {
    result = Dispatch(method, params, context);
    reply = ResultReply(id_json, result);
  } catch (const RpcError& error) {
    reply = ErrorReply(id_json, error.code, error.message, error.data_json);
  } catch (const std::bad_alloc&) {
    reply =
        ErrorReply(id_json, kInternalError, "Internal error: out of memory");
  } catch (const std::exception& e) {
    reply = ErrorReply(id_json, kInternalError,
                       std::string("Internal error: ") + e.what());
  }
  {
    std::lock_guard lock(mutex_);
    in_flight_.erase(id_json);
  }
  // The client has given up on a cancelled request: it gets no reply.
  if (context.Cancelled()) reply.clear();
}

void Session::HandleNotification(std::string_view method,
                                 std::optional<object> params) {
  if (method == "notifications/initialized") {
    std::lock_guard lock(mutex_);
    initialized_ = true;
  } else if (method == "notifications/cancelled" && params) {
    auto id = Member(*params, "requestId");
    if (!id) return;
    const std::string id_json = simdjson::minify(*id);
    std::lock_guard lock(mutex_);
    // An unknown or finished request is not an error: the cancellation
    // raced with its reply.
    if (auto it = in_flight_.find(id_json); it != in_flight_.end()) {
      it->second->store(true);
    }
  }
  // Other notifications (progress, roots/list_changed, ...) need no action.
}

std::string Session::Dispatch(std::string_view method,
                              std::optional<object> params, Request& context) {
  if (method == "initialize") return Initialize(params);
  if (method == "ping") return "{}";
  if (method == "tools/list") return ListTools(params);
  if (method == "tools/call") return CallTool(params, context);
  if (method == "resources/list") return ListResources(params);
  if (method == "resources/templates/list") return ListTemplates(params);
  if (method == "resources/read") return ReadResource(params, context);
  if (method == "prompts/list") return ListPrompts(params);
  if (method == "prompts/get") return GetPrompt(params, context);
  if (method == "logging/setLevel") return SetLevel(params);
  if (method == "completion/complete") return Complete(params, context);
  Fail(kMethodNotFound, "Method not found: " + std::string(method));
}

std::string Session::Initialize(std::optional<object> params) {
  if (!params) Fail(kInvalidParams, "initialize needs params");
  const std::string_view requested = RequiredString(*params, "protocolVersion");
  std::string_view chosen = kLatestProtocolVersion;
  for (std::string_view v : kProtocolVersions) {
    if (v == requested) chosen = v;
  }
  {
    std::lock_guard lock(mutex_);
    protocol_version_ = std::string(chosen);
  }
  JsonOut json;
  json.BeginObject()
      .Key("protocolVersion")
      .String(chosen)
      .Key("capabilities")
      .BeginObject()
      .Key("completions")
      .BeginObject()
      .EndObject()
      .Key("logging")
      .BeginObject()
      .EndObject()
      .Key("prompts")
      .BeginObject()
      .Key("listChanged")
      .Bool(false)
      .EndObject()
      .Key("resources")
      .BeginObject()
      .Key("subscribe")
      .Bool(false)
      .Key("listChanged")
      .Bool(false)
      .EndObject()
      .Key("tools")
      .BeginObject()
      .Key("listChanged")
      .Bool(false)
      .EndObject()
      .EndObject()
      .Key("serverInfo")
      .BeginObject()
      .Key("name")
      .String("ctxkit")
      .Key("title")
      .String("ctxkit context toolkit")
      .Key("version")
      .String(CTXKIT_VERSION_STRING)
      .EndObject()
      .Key("instructions")
      .String(kInstructions)
      .EndObject();
  return json.str();
}

std::string Session::ListTools(std::optional<object> params) {
  const auto tools = Tools();
  const Page page =
      PageOf("tools", params, tools.size(), services_.config.page_size);
  JsonOut json;
  json.BeginObject().Key("tools").BeginArray();
  for (size_t i = page.begin; i < page.end; ++i) {
    const ToolSpec& tool = tools[i];
    json.BeginObject()
        .Key("name")
        .String(tool.name)
        .Key("title")
        .String(tool.title)
        .Key("description")
        .String(tool.description)
        .Key("inputSchema")
        .Raw(tool.input_schema);
    if (!tool.output_schema.empty()) {
      json.Key("outputSchema").Raw(tool.output_schema);
    }
    json.Key("annotations")
        .BeginObject()
        .Key("title")
        .String(tool.title)
        .Key("readOnlyHint")
        .Bool(tool.read_only)
        .Key("destructiveHint")
        .Bool(tool.destructive)
        .Key("idempotentHint")
        .Bool(tool.idempotent)
        .Key("openWorldHint")
        .Bool(false)
        .EndObject()
        .EndObject();
  }
  EndPage(json, page);
  return json.str();
}

std::string Session::CallTool(std::optional<object> params, Request& context) {
  if (!params) Fail(kInvalidParams, "tools/call needs params");
  const std::string_view name = RequiredString(*params, "name");
  const ToolSpec* tool = nullptr;
  for (const ToolSpec& spec : Tools()) {
    if (spec.name == name) tool = &spec;
  }
  if (tool == nullptr) {
    Fail(kInvalidParams, "Unknown tool: " + std::string(name));
  }
  // Absent arguments are an empty object, so required members are reported
  // by the schema like any other missing member.
  thread_local simdjson::dom::parser empty_parser;
  element arguments;
  if (auto given = Member(*params, "arguments")) {
    if (given->type() != simdjson::dom::element_type::OBJECT) {
      Fail(kInvalidParams, "params.arguments must be an object");
    }
    arguments = *given;
  } else {
    if (empty_parser.parse("{}", 2).get(arguments) != simdjson::SUCCESS) {
      Fail(kInternalError, "Internal error: cannot parse {}");
    }
  }
  ToolOutput output;
  const std::vector<SchemaProblem> problems =
      InputSchemaOf(*tool).Validate(arguments);
  if (!problems.empty()) {
    output = ToolError("Validation error", SchemaProblemsToJson(problems));
    context.Log(LogLevel::kInfo, std::string(name) + ": invalid arguments: " +
                                     problems.front().path_json + " " +
                                     problems.front().message);
  } else {
    output = tool->handler(object(arguments), context);
    if (output.is_error) {
      context.Log(LogLevel::kWarning,
                  std::string(name) + " failed: " + output.json);
    } else {
      context.Log(LogLevel::kDebug, std::string(name) + " done");
    }
  }
  JsonOut json;
  json.BeginObject()
      .Key("content")
      .BeginArray()
      .BeginObject()
      .Key("type")
      .String("text")
      .Key("text")
      .String(output.json)
      .EndObject()
      .EndArray();
  if (output.structured) json.Key("structuredContent").Raw(output.json);
  json.Key("isError").Bool(output.is_error).EndObject();
  return json.str();
}

std::string Session::ListResources(std::optional<object> params) {
  const auto resources = Resources();
  const Page page =
      PageOf("resources", params, resources.size(), services_.config.page_size);
  JsonOut json;
  json.BeginObject().Key("resources").BeginArray();
  for (size_t i = page.begin; i < page.end; ++i) {
    const ResourceSpec& r = resources[i];
    json.BeginObject()
        .Key("uri")
        .String(r.uri)
        .Key("name")
        .String(r.name)
        .Key("title")
        .String(r.title)
        .Key("description")
        .String(r.description)
        .Key("mimeType")
        .String(r.mime_type)
        .EndObject();
  }
  EndPage(json, page);
  return json.str();
}

std::string Session::ListTemplates(std::optional<object> params) {
  const auto templates = ResourceTemplates();
  const Page page =
      PageOf("templates", params, templates.size(), services_.config.page_size);
  JsonOut json;
  json.BeginObject().Key("resourceTemplates").BeginArray();
  for (size_t i = page.begin; i < page.end; ++i) {
    const ResourceTemplateSpec& t = templates[i];
    json.BeginObject()
        .Key("uriTemplate")
        .String(t.uri_template)
        .Key("name")
        .String(t.name)
        .Key("title")
        .String(t.title)
        .Key("description")
        .String(t.description)
        .Key("mimeType")
        .String(t.mime_type)
        .EndObject();
  }
  EndPage(json, page);
  return json.str();
}

std::string Session::ReadResource(std::optional<object> params,
                                  Request& context) {
  if (!params) Fail(kInvalidParams, "resources/read needs params");
  const std::string_view uri = RequiredString(*params, "uri");
  auto not_found = [&](std::string_view why) {
    JsonOut data;
    data.BeginObject().Key("uri").String(uri).EndObject();
    Fail(kResourceNotFound, "Resource not found: " + std::string(why),
         data.str());
  };
  std::optional<StatusOr<ResourceContent>> content;
  std::string_view mime_type;
  for (const ResourceSpec& r : Resources()) {
    if (r.uri == uri) {
      content.emplace(r.handler(context));
      mime_type = r.mime_type;
    }
  }
  if (!content) {
    for (const ResourceTemplateSpec& t : ResourceTemplates()) {
      const std::string_view prefix = TemplatePrefix(t.uri_template);
      if (uri.size() > prefix.size() && uri.starts_with(prefix)) {
        const std::string value = PercentDecode(uri.substr(prefix.size()));
        content.emplace(t.handler(value, context));
        mime_type = t.mime_type;
        break;
      }
    }
  }
  if (!content) not_found(uri);
  if (!content->ok()) {
    const Status& status = content->status();
    if (status.code() == StatusCode::kNotFound) not_found(status.message());
    if (status.code() == StatusCode::kInvalidArgument) {
      Fail(kInvalidParams, status.message());
    }
    Fail(kInternalError, status.ToString());
  }
  if (context.Cancelled()) return "{}";
  JsonOut json;
  json.BeginObject()
      .Key("contents")
      .BeginArray()
      .BeginObject()
      .Key("uri")
      .String(uri)
      .Key("mimeType")
      .String(mime_type)
      .Key("text")
      .String((*content)->text)
      .EndObject()
      .EndArray()
      .EndObject();
  return json.str();
}

std::string Session::ListPrompts(std::optional<object> params) {
  const auto prompts = Prompts();
  const Page page =
      PageOf("prompts", params, prompts.size(), services_.config.page_size);
  JsonOut json;
  json.BeginObject().Key("prompts").BeginArray();
  for (size_t i = page.begin; i < page.end; ++i) {
    const PromptSpec& p = prompts[i];
    json.BeginObject()
        .Key("name")
        .String(p.name)
        .Key("title")
        .String(p.title)
        .Key("description")
        .String(p.description)
        .Key("arguments")
        .BeginArray();
    for (const PromptArgumentSpec& a : p.arguments) {
      json.BeginObject()
          .Key("name")
          .String(a.name)
          .Key("description")
          .String(a.description)
          .Key("required")
          .Bool(a.required)
          .EndObject();
    }
    json.EndArray().EndObject();
  }
  EndPage(json, page);
  return json.str();
}

std::string Session::GetPrompt(std::optional<object> params, Request& context) {
  if (!params) Fail(kInvalidParams, "prompts/get needs params");
  const std::string_view name = RequiredString(*params, "name");
  const PromptSpec* prompt = nullptr;
  for (const PromptSpec& p : Prompts()) {
    if (p.name == name) prompt = &p;
  }
  if (prompt == nullptr) {
    Fail(kInvalidParams, "Unknown prompt: " + std::string(name));
  }
  std::vector<PromptArgument> arguments;
  if (auto given = Member(*params, "arguments")) {
    object values;
    if (given->get_object().get(values) != simdjson::SUCCESS) {
      Fail(kInvalidParams, "params.arguments must be an object");
    }
    for (auto field : values) {
      std::string_view value;
      if (field.value.get_string().get(value) != simdjson::SUCCESS) {
        Fail(kInvalidParams,
             "prompt argument " + std::string(field.key) + " must be a string");
      }
      const bool known = std::any_of(
          prompt->arguments.begin(), prompt->arguments.end(),
          [&](const PromptArgumentSpec& a) { return a.name == field.key; });
      if (!known) {
        Fail(kInvalidParams, "prompt " + std::string(name) +
                                 " has no argument " + std::string(field.key));
      }
      arguments.push_back(PromptArgument{field.key, value});
    }
  }
  for (const PromptArgumentSpec& a : prompt->arguments) {
    const bool given =
        std::any_of(arguments.begin(), arguments.end(),
                    [&](const PromptArgument& g) { return g.name == a.name; });
    if (a.required && !given) {
      Fail(kInvalidParams, "prompt " + std::string(name) +
                               " needs the argument " + std::string(a.name));
    }
  }
  StatusOr<PromptOutput> output = prompt->handler(arguments, context);
  if (!output.ok()) {
    const StatusCode code = output.status().code();
    if (code == StatusCode::kInvalidArgument || code == StatusCode::kNotFound) {
      Fail(kInvalidParams, output.status().message());
    }
    Fail(kInternalError, output.status().ToString());
  }
  JsonOut json;
  json.BeginObject()
      .Key("description")
      .String(output->description)
      .Key("messages")
      .BeginArray();
  for (const PromptMessage& m : output->messages) {
    json.BeginObject()
        .Key("role")
        .String(m.role)
        .Key("content")
        .BeginObject()
        .Key("type")
        .String("text")
        .Key("text")
        .String(m.text)
        .EndObject()
        .EndObject();
  }
  json.EndArray().EndObject();
  return json.str();
}

std::string Session::SetLevel(std::optional<object> params) {
  if (!params) Fail(kInvalidParams, "logging/setLevel needs params");
  const std::string_view name = RequiredString(*params, "level");
  const std::optional<LogLevel> level = ParseLogLevel(name);
  if (!level) {
    Fail(kInvalidParams,
         "unknown log level \"" + std::string(name) +
             "\": debug, info, notice, warning, error, critical, alert or "
             "emergency");
  }
  log_level_.store(static_cast<int>(*level));
  return "{}";
}

std::string Session::Complete(std::optional<object> params, Request& context) {
  if (!params) Fail(kInvalidParams, "completion/complete needs params");
  object ref, argument;
  auto ref_member = Member(*params, "ref");
  auto argument_member = Member(*params, "argument");
  if (!ref_member || ref_member->get_object().get(ref) != simdjson::SUCCESS) {
    Fail(kInvalidParams, "params.ref must be an object");
  }
  if (!argument_member ||
      argument_member->get_object().get(argument) != simdjson::SUCCESS) {
    Fail(kInvalidParams, "params.argument must be an object");
  }
  const std::string_view type = RequiredString(ref, "type");
  const std::string_view argument_name = RequiredString(argument, "name");
  const std::string_view value = RequiredString(argument, "value");
  CompletionHandler complete = nullptr;
  if (type == "ref/prompt") {
    const std::string_view name = RequiredString(ref, "name");
    const PromptSpec* prompt = nullptr;
    for (const PromptSpec& p : Prompts()) {
      if (p.name == name) prompt = &p;
    }
    if (prompt == nullptr) {
      Fail(kInvalidParams, "Unknown prompt: " + std::string(name));
    }
    bool found = false;
    for (const PromptArgumentSpec& a : prompt->arguments) {
      if (a.name == argument_name) {
        complete = a.complete;
        found = true;
      }
    }
    if (!found) {
      Fail(kInvalidParams, "prompt " + std::string(name) + " has no argument " +
                               std::string(argument_name));
    }
  } else if (type == "ref/resource") {
    const std::string_view uri = RequiredString(ref, "uri");
    const ResourceTemplateSpec* found = nullptr;
    for (const ResourceTemplateSpec& t : ResourceTemplates()) {
      if (t.uri_template == uri) found = &t;
    }
    if (found == nullptr) {
      Fail(kInvalidParams, "no resource template " + std::string(uri));
    }
    if (TemplateVariable(found->uri_template) != argument_name) {
      Fail(kInvalidParams, "resource template " + std::string(uri) +
                               " has no variable " +
                               std::string(argument_name));
    }
    complete = found->complete;
  } else {
    Fail(kInvalidParams, "params.ref.type must be ref/prompt or ref/resource");
  }
  Completions completions;
  if (complete != nullptr) {
    completions = complete(value, kMaxCompletionValues + 1, context);
  }
  const bool has_more =
      completions.values.size() > kMaxCompletionValues ||
      (completions.total && *completions.total > completions.values.size());
  if (completions.values.size() > kMaxCompletionValues) {
    completions.values.resize(kMaxCompletionValues);
  }
  JsonOut json;
  json.BeginObject().Key("completion").BeginObject().Key("values").BeginArray();
  for (const std::string& v : completions.values) json.String(v);
  json.EndArray();
  if (completions.total) json.Key("total").Uint(*completions.total);
  json.Key("hasMore").Bool(has_more).EndObject().EndObject();
  return json.str();
}

}  // namespace ctxkit::mcp
