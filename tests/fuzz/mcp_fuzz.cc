// libFuzzer target over the MCP server loop: mcp::Session,
// the transport-independent JSON-RPC/MCP server that `ctxkit mcp` and
// `ctxkit serve` drive, over host::Services opened once per process on a
// temporary store.
//
// Each input is served twice, each time by a fresh Session:
//   1. as it is, as one message (arbitrary bytes: parse errors, batches,
//      malformed envelopes);
//   2. split into lines, each line one message. A line starting with '{',
//      '[' or a blank is sent as it is; any other line is an envelope:
//      its byte 0 picks the method (every method of the server, tools/call
//      once per tool, and the notifications), its byte 1 the id kind
//      (integer, string, none = a notification, integer with a progress
//      token) and whether the request is cancelled as soon as it emits its
//      first notification; the rest of the line is the params (the
//      arguments of tools/call) when it is a JSON object, else the value
//      (JSON as it is, other text as a string) of the method's main
//      argument in otherwise usual params.
//
// Guarantees checked on every message (a broken one aborts, which libFuzzer
// reports as a crash with its input):
//   - every message sent is one line of valid JSON (simdjson, so valid
//     UTF-8 too): a reply {"jsonrpc":"2.0","id",result xor error} whose
//     error has an integer code and a string message, a batch reply (an
//     array of replies), or a notifications/progress or
//     notifications/message notification;
//   - a request (a JSON object with "jsonrpc":"2.0", a string method and a
//     string or integer id) gets exactly one reply with its id, after every
//     notification it produced -- none when it was cancelled while it ran;
//   - a notification or a response (no method, a result or an error) gets
//     no reply; any other object (an invalid request) exactly one error;
//   - a batch gets one array holding exactly those replies, or nothing when
//     it holds no request; an empty batch one -32600 error;
//   - text that is not JSON gets exactly one -32700 error with id null;
//   - progress values of one request increase, with the request's token;
//   - a tools/call result carries structuredContent (an object), the same
//     JSON as the text of its one content block, and a boolean isError;
//     structuredContent matches the tool's outputSchema (the server's own
//     validator, mcp/schema.h), and an error result says success:false.
// Hangs are found by libFuzzer's -timeout.
//
// The store is shared by all inputs (opening one per input would dominate
// the time) and replaced by a fresh one every kInputsPerStore inputs, so
// that what earlier inputs stored cannot make later ones ever slower. A
// crash therefore normally reproduces on its input alone, but may need the
// state of earlier inputs; the store lives in /dev/shm (else $TMPDIR or
// /tmp) and is removed at exit.
//
// Build and run: see tests/fuzz/CMakeLists.txt.

#include <unistd.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench/bench_inputs.h"
#include "ctxkit/store.h"
#include "programs/ctxkit/host/config.h"
#include "programs/ctxkit/host/services.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/mcp/schema.h"
#include "programs/ctxkit/mcp/session.h"
#include "simdjson.h"

namespace {

using ctxkit::bench::JsonString;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// Inputs served by one store before it is replaced by an empty one.
constexpr uint64_t kInputsPerStore = 2000;
// Items per page of the list methods: small, so that pagination and its
// cursors are reached with the catalog's few entries.
constexpr size_t kPageSize = 2;

[[noreturn]] void Broken(const std::string& what, std::string_view detail) {
  std::fprintf(stderr, "guarantee broken: %s\n  message: %.*s\n", what.c_str(),
               static_cast<int>(std::min<size_t>(detail.size(), 4000)),
               detail.data());
  std::abort();
}

// ---- The services, once per process ---------------------------------------

std::string& StoreRoot() {
  static std::string* const root = new std::string;
  return *root;
}

void RemoveStoreRoot() {
  if (StoreRoot().empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(StoreRoot(), ignored);
}

std::unique_ptr<ctxkit::host::Services>& TheServicesSlot() {
  static auto* const slot = new std::unique_ptr<ctxkit::host::Services>;
  return *slot;
}

ctxkit::host::Services& OpenFreshServices() {
  static uint64_t generation = 0;
  TheServicesSlot().reset();  // closes the store before its files go
  const std::string dir = StoreRoot() + "/store" + std::to_string(generation++);
  std::error_code ignored;
  std::filesystem::remove_all(
      StoreRoot() + "/store" + std::to_string(generation - 2), ignored);
  auto store = ctxkit::Store::Open(dir);
  if (!store.ok()) Broken("cannot open the store", store.status().ToString());
  ctxkit::host::HostConfig config;
  config.db_path = dir;
  config.page_size = kPageSize;
  auto services = ctxkit::host::OpenServices(config, *std::move(store));
  if (!services.ok()) {
    Broken("cannot open the services", services.status().ToString());
  }
  TheServicesSlot() = *std::move(services);
  return *TheServicesSlot();
}

ctxkit::host::Services& ServicesForNextInput() {
  static uint64_t inputs = 0;
  if (inputs++ % kInputsPerStore == 0) return OpenFreshServices();
  return *TheServicesSlot();
}

// The compiled output schema of each tool the validator accepts.
const std::map<std::string, std::unique_ptr<ctxkit::mcp::Schema>>&
OutputSchemas() {
  static const auto* const schemas = [] {
    auto* map = new std::map<std::string, std::unique_ptr<ctxkit::mcp::Schema>>;
    for (const ctxkit::mcp::ToolSpec& tool : ctxkit::mcp::Tools()) {
      auto compiled = ctxkit::mcp::Schema::Compile(tool.output_schema);
      if (!compiled.ok()) {
        // Not a broken guarantee of the server (the subset is for input
        // schemas), but then the check below cannot run for this tool.
        std::fprintf(stderr, "mcp_fuzz: output schema of %s not checked: %s\n",
                     std::string(tool.name).c_str(),
                     compiled.status().ToString().c_str());
        continue;
      }
      (*map)[std::string(tool.name)] = *std::move(compiled);
    }
    return map;
  }();
  return *schemas;
}

// ---- JSON helpers -----------------------------------------------------------

std::optional<element> Member(object o, std::string_view key) {
  element value;
  if (o.at_key(key).get(value) != simdjson::SUCCESS) return std::nullopt;
  return value;
}

// A request id as a comparable key, by value (a string id's escapes may be
// written differently in the reply).
std::optional<std::string> IdKey(element id) {
  std::string_view s;
  int64_t i;
  uint64_t u;
  if (id.get_string().get(s) == simdjson::SUCCESS) return "s" + std::string(s);
  if (id.type() == element_type::INT64 &&
      id.get_int64().get(i) == simdjson::SUCCESS) {
    return "i" + std::to_string(i);
  }
  if (id.type() == element_type::UINT64 &&
      id.get_uint64().get(u) == simdjson::SUCCESS) {
    return "i" + std::to_string(u);
  }
  return std::nullopt;
}

// ---- What a message calls for ----------------------------------------------

enum class Kind {
  kRequest,       // exactly one reply with `id`
  kNotification,  // no reply
  kResponse,      // no reply
  kInvalid,       // exactly one error reply
};

struct Expectation {
  Kind kind;
  std::string id;  // IdKey of a request
};

Expectation Classify(element message) {
  object o;
  if (message.get_object().get(o) != simdjson::SUCCESS)
    return {Kind::kInvalid, {}};
  const auto id = Member(o, "id");
  const auto jsonrpc = Member(o, "jsonrpc");
  const auto method = Member(o, "method");
  std::string_view version;
  const bool v2 = jsonrpc &&
                  jsonrpc->get_string().get(version) == simdjson::SUCCESS &&
                  version == "2.0";
  if (!method) {
    // Anything shaped like a response (whatever its version or id, null
    // included: what a peer answers a message it could not read) is never
    // answered, so two peers cannot answer each other's errors forever.
    if (Member(o, "result") || Member(o, "error")) {
      return {Kind::kResponse, {}};
    }
    return {Kind::kInvalid, {}};
  }
  if (!v2 || !method->is_string()) return {Kind::kInvalid, {}};
  if (!id) return {Kind::kNotification, {}};
  auto key = IdKey(*id);
  if (!key) return {Kind::kInvalid, {}};
  return {Kind::kRequest, *std::move(key)};
}

// ---- Checking what the session sent ----------------------------------------

struct Reply {
  std::optional<std::string> id;  // IdKey; nullopt for id null
  bool is_error = false;
  int64_t code = 0;
};

void CheckToolResult(object result, std::string_view tool,
                     std::string_view text) {
  const auto structured = Member(result, "structuredContent");
  const auto content = Member(result, "content");
  const auto is_error = Member(result, "isError");
  object structured_object;
  array blocks;
  bool error_flag = false;
  if (!structured ||
      structured->get_object().get(structured_object) != simdjson::SUCCESS ||
      !content || content->get_array().get(blocks) != simdjson::SUCCESS ||
      blocks.size() != 1 || !is_error ||
      is_error->get_bool().get(error_flag) != simdjson::SUCCESS) {
    Broken(
        "a tools/call result without structuredContent, one content "
        "block and isError",
        text);
  }
  element block = blocks.at(0).value_unsafe();
  object block_object;
  std::string_view block_text, block_type;
  if (block.get_object().get(block_object) != simdjson::SUCCESS ||
      block_object["type"].get_string().get(block_type) != simdjson::SUCCESS ||
      block_type != "text" ||
      block_object["text"].get_string().get(block_text) != simdjson::SUCCESS) {
    Broken("a tools/call content block that is not text", text);
  }
  simdjson::dom::parser text_parser;
  element text_json;
  if (text_parser.parse(block_text.data(), block_text.size()).get(text_json) !=
          simdjson::SUCCESS ||
      simdjson::minify(text_json) != simdjson::minify(*structured)) {
    Broken("content[0].text differs from structuredContent", text);
  }
  if (error_flag) {
    bool success = true;
    if (structured_object["success"].get_bool().get(success) !=
            simdjson::SUCCESS ||
        success) {
      Broken("an isError result without success:false", text);
    }
  }
  const auto& schemas = OutputSchemas();
  if (auto it = schemas.find(std::string(tool)); it != schemas.end()) {
    const auto problems = it->second->Validate(*structured);
    if (!problems.empty()) {
      Broken("structuredContent does not match the outputSchema of " +
                 std::string(tool) + ": " + problems.front().path_json + " " +
                 problems.front().message,
             text);
    }
  }
}

// A reply object; `tool_of` names the tool a request id called, if any.
Reply CheckReply(object reply, std::string_view text,
                 const std::map<std::string, std::string>& tool_of) {
  std::string_view version;
  if (reply["jsonrpc"].get_string().get(version) != simdjson::SUCCESS ||
      version != "2.0") {
    Broken("a reply without \"jsonrpc\":\"2.0\"", text);
  }
  const auto id = Member(reply, "id");
  if (!id) Broken("a reply without an id", text);
  Reply out;
  if (!id->is_null()) {
    out.id = IdKey(*id);
    if (!out.id)
      Broken("a reply whose id is neither a string nor an integer", text);
  }
  const auto result = Member(reply, "result");
  const auto error = Member(reply, "error");
  if (result.has_value() == error.has_value()) {
    Broken("a reply needs a result xor an error", text);
  }
  if (error) {
    object e;
    std::string_view message;
    if (error->get_object().get(e) != simdjson::SUCCESS ||
        e["code"].get_int64().get(out.code) != simdjson::SUCCESS ||
        e["message"].get_string().get(message) != simdjson::SUCCESS) {
      Broken("an error without an integer code and a string message", text);
    }
    out.is_error = true;
  } else {
    object r;
    if (result->get_object().get(r) != simdjson::SUCCESS) {
      Broken("a result that is not an object", text);
    }
    if (out.id) {
      if (auto it = tool_of.find(*out.id); it != tool_of.end()) {
        CheckToolResult(r, it->second, text);
      }
    }
  }
  return out;
}

// The messages one Handle call sent, checked against what its message calls
// for. `cancelled` holds the ids whose cancellation reached the session
// while they ran.
class Recorder final : public ctxkit::mcp::Outbound {
 public:
  // Called for each notification before it is recorded (the cancellation
  // hook); may be empty.
  std::function<void()> on_notification;

  void Send(std::string message) override {
    if (message.find('\n') != std::string::npos ||
        message.find('\r') != std::string::npos) {
      Broken("a message with a line break (it would split a stdio line)",
             message);
    }
    sent_.push_back(std::move(message));
    object o;
    element root;
    // Parsed here only to spot notifications for the hook; Check parses
    // every message again.
    if (parser_.parse(sent_.back()).get(root) == simdjson::SUCCESS &&
        root.get_object().get(o) == simdjson::SUCCESS &&
        Member(o, "method").has_value() && on_notification) {
      on_notification();
    }
  }

  // `message` is what was handed to Session::Handle.
  void Check(std::string_view message, const std::set<std::string>& cancelled,
             const std::map<std::string, std::string>& tool_of,
             const std::map<std::string, std::string>& progress_token_of) {
    element root;
    const bool parsed =
        input_parser_.parse(message.data(), message.size()).get(root) ==
        simdjson::SUCCESS;
    // What is expected.
    std::multiset<std::string> expected_ids;
    size_t expected_invalid = 0;
    bool batch = false;
    if (!parsed) {
      expected_invalid = 1;
    } else {
      array items;
      if (root.get_array().get(items) == simdjson::SUCCESS) {
        batch = items.size() > 0;
        if (items.size() == 0) expected_invalid = 1;
        for (element item : items) {
          const Expectation e = Classify(item);
          if (e.kind == Kind::kRequest) expected_ids.insert(e.id);
          if (e.kind == Kind::kInvalid) ++expected_invalid;
        }
      } else {
        const Expectation e = Classify(root);
        if (e.kind == Kind::kRequest) expected_ids.insert(e.id);
        if (e.kind == Kind::kInvalid) ++expected_invalid;
      }
    }
    for (const std::string& id : cancelled) expected_ids.erase(id);

    // What was sent.
    std::vector<Reply> replies;
    size_t reply_messages = 0;
    std::map<std::string, double> last_progress;
    for (const std::string& text : sent_) {
      element sent;
      if (output_parser_.parse(text).get(sent) != simdjson::SUCCESS) {
        Broken("a message sent is not valid JSON", text);
      }
      if (reply_messages > 0) Broken("a message sent after the reply", text);
      array sent_batch;
      if (sent.get_array().get(sent_batch) == simdjson::SUCCESS) {
        if (!batch)
          Broken("an array reply to a message that is no batch", text);
        if (sent_batch.size() == 0) Broken("an empty batch reply", text);
        ++reply_messages;
        for (element item : sent_batch) {
          object item_object;
          if (item.get_object().get(item_object) != simdjson::SUCCESS) {
            Broken("a batch reply item that is not an object", text);
          }
          replies.push_back(CheckReply(item_object, text, tool_of));
        }
        continue;
      }
      object o;
      if (sent.get_object().get(o) != simdjson::SUCCESS) {
        Broken("a message sent that is neither an object nor an array", text);
      }
      std::string_view method;
      if (auto m = Member(o, "method")) {
        std::string_view version;
        if (m->get_string().get(method) != simdjson::SUCCESS ||
            o["jsonrpc"].get_string().get(version) != simdjson::SUCCESS ||
            version != "2.0" || Member(o, "id")) {
          Broken("a malformed notification", text);
        }
        object params;
        if (o["params"].get_object().get(params) != simdjson::SUCCESS) {
          Broken("a notification without params", text);
        }
        if (method == "notifications/progress") {
          const auto token = Member(params, "progressToken");
          double progress = 0;
          if (!token || params["progress"].get_double().get(progress) !=
                            simdjson::SUCCESS) {
            Broken("a progress notification without token or progress", text);
          }
          const std::string token_json = simdjson::minify(*token);
          bool known = false;
          for (const auto& [id, t] : progress_token_of)
            known |= t == token_json;
          if (!known) Broken("progress for a token no request carried", text);
          auto [it, first] = last_progress.emplace(token_json, progress);
          if (!first) {
            if (progress <= it->second)
              Broken("progress did not increase", text);
            it->second = progress;
          }
        } else if (method == "notifications/message") {
          std::string_view level;
          if (params["level"].get_string().get(level) != simdjson::SUCCESS ||
              !Member(params, "data")) {
            Broken("a log notification without level or data", text);
          }
        } else {
          Broken("an unexpected notification", text);
        }
        continue;
      }
      if (batch) Broken("a single reply to a batch", text);
      ++reply_messages;
      replies.push_back(CheckReply(o, text, tool_of));
    }
    if (reply_messages > 1) Broken("more than one reply message", message);

    // Matching.
    if (!parsed) {
      if (replies.size() != 1 || !replies[0].is_error ||
          replies[0].code != ctxkit::mcp::kParseError || replies[0].id) {
        Broken(
            "text that is not JSON needs exactly one -32700 error with "
            "id null",
            message);
      }
      return;
    }
    // Results first: an error with the same id as a request may be the
    // answer to an invalid message of the same batch.
    size_t errors_unmatched = 0;
    for (const Reply& reply : replies) {
      if (reply.is_error) continue;
      if (reply.id) {
        auto it = expected_ids.find(*reply.id);
        if (it != expected_ids.end()) {
          expected_ids.erase(it);
          continue;
        }
        if (cancelled.count(*reply.id) != 0) {
          Broken("a reply to a request cancelled while it ran", message);
        }
      }
      Broken("a result that answers no request", message);
    }
    for (const Reply& reply : replies) {
      if (!reply.is_error) continue;
      if (reply.id) {
        auto it = expected_ids.find(*reply.id);
        if (it != expected_ids.end()) {
          expected_ids.erase(it);
          continue;
        }
        if (cancelled.count(*reply.id) != 0) {
          Broken("a reply to a request cancelled while it ran", message);
        }
      }
      ++errors_unmatched;
    }
    if (!expected_ids.empty()) {
      Broken(
          "a request without its reply (id key " + *expected_ids.begin() + ")",
          message);
    }
    if (errors_unmatched != expected_invalid) {
      Broken("expected " + std::to_string(expected_invalid) +
                 " error replies to invalid messages, got " +
                 std::to_string(errors_unmatched),
             message);
    }
  }

  void Clear() { sent_.clear(); }

 private:
  std::vector<std::string> sent_;
  simdjson::dom::parser parser_;
  simdjson::dom::parser input_parser_;
  simdjson::dom::parser output_parser_;
};

// ---- Cancellation from another thread --------------------------------------

// Session::Handle may not be re-entered on the thread that runs it (its
// parser is per thread), so a cancellation is delivered by this thread
// while the one serving the request waits in Outbound::Send: the
// interleaving of a client's notifications/cancelled with a running
// request, deterministically.
class Canceller {
 public:
  Canceller() : thread_([this] { Run(); }) { thread_.detach(); }

  // Runs session.Handle(message) on the canceller's thread; returns when
  // it is done. Whatever that sends is checked to be nothing.
  void Deliver(ctxkit::mcp::Session& session, std::string message) {
    std::unique_lock lock(mutex_);
    session_ = &session;
    message_ = std::move(message);
    pending_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !pending_; });
  }

 private:
  class MustNotSend final : public ctxkit::mcp::Outbound {
   public:
    void Send(std::string message) override {
      Broken("a reply to notifications/cancelled", message);
    }
  };

  void Run() {
    MustNotSend out;
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return pending_; });
      session_->Handle(message_, out);
      pending_ = false;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  ctxkit::mcp::Session* session_ = nullptr;
  std::string message_;
  bool pending_ = false;
  std::thread thread_;
};

Canceller& TheCanceller() {
  static Canceller* const canceller = new Canceller;
  return *canceller;
}

// ---- Envelopes --------------------------------------------------------------

struct Envelope {
  std::string_view method;
  std::string_view tool;  // tools/call
  // The params when the rest of the line is not JSON; %s is the rest as a
  // JSON string.
  std::string_view params_format;
};

// Every method the server knows, tools/call once per tool, and the
// notifications. The params of a JSON rest: tools/call wraps it as the
// arguments; the others take it as it is.
constexpr Envelope kEnvelopes[] = {
    {"initialize", "",
     R"({"protocolVersion":%s,"capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}})"},
    {"ping", "", R"({"_meta":{"note":%s}})"},
    {"tools/list", "", R"({"cursor":%s})"},
    {"tools/call", "manage_conversation",
     R"({"action":"add_message","conversation_id":%s,"role":"user","content":"hi"})"},
    {"tools/call", "compress_context", R"({"conversation_id":%s})"},
    {"tools/call", "count_tokens", R"({"input":%s})"},
    {"tools/call", "smart_cache",
     R"({"action":"store","key":%s,"content":"x"})"},
    {"tools/call", "track_references",
     R"({"action":"search","search_query":%s})"},
    {"tools/call", "optimize_query", R"({"query":%s})"},
    {"tools/call", "compact_chat",
     R"({"messages":[{"role":"user","content":%s}],"max_tokens":8})"},
    {"resources/list", "", R"({"cursor":%s})"},
    {"resources/templates/list", "", R"({"cursor":%s})"},
    {"resources/read", "", R"({"uri":%s})"},
    {"prompts/list", "", R"({"cursor":%s})"},
    {"prompts/get", "",
     R"({"name":"summarize_context","arguments":{"conversation_id":%s}})"},
    {"logging/setLevel", "", R"({"level":%s})"},
    {"completion/complete", "",
     R"({"ref":{"type":"ref/resource","uri":"conversation-history://{conversation_id}"},"argument":{"name":"conversation_id","value":%s}})"},
    {"notifications/initialized", "", R"({"note":%s})"},
    {"notifications/cancelled", "", R"({"requestId":%s})"},
    {"notifications/progress", "", R"({"progressToken":%s,"progress":1})"},
    {"notifications/roots/list_changed", "", R"({"note":%s})"},
    {"unknown/method", "", R"({"x":%s})"},
};

std::string Format(std::string_view format, std::string_view value) {
  std::string out(format);
  if (const size_t at = out.find("%s"); at != std::string::npos) {
    out.replace(at, 2, value);
  }
  return out;
}

struct Built {
  std::string message;
  std::string id_json;         // empty for a notification
  std::string tool;            // tools/call
  std::string progress_token;  // JSON text; empty for none
  bool cancel_on_notification = false;
};

Built BuildEnvelope(std::string_view line, uint64_t serial,
                    simdjson::dom::parser& parser) {
  const Envelope& e =
      kEnvelopes[static_cast<unsigned char>(line[0]) % std::size(kEnvelopes)];
  const unsigned control =
      line.size() > 1 ? static_cast<unsigned char>(line[1]) : 0;
  const std::string_view rest = line.size() > 2 ? line.substr(2) : "";
  Built built;
  element parsed;
  const bool json =
      !rest.empty() &&
      parser.parse(rest.data(), rest.size()).get(parsed) == simdjson::SUCCESS;
  // A JSON object is the params (tools/call: the arguments) as it is; any
  // other JSON value, or the text quoted, fills the method's usual params.
  const bool json_object = json && parsed.is_object();
  const std::string filled =
      json_object ? std::string(rest)
                  : Format(e.params_format,
                           json ? std::string(rest) : JsonString(rest));
  std::string params;
  if (e.method == "tools/call") {
    built.tool = std::string(e.tool);
    params = R"({"name":")" + built.tool + R"(","arguments":)" + filled;
  } else {
    params = filled;
  }
  const bool notification = e.method.starts_with("notifications/");
  switch (control & 3) {
    case 0:
      built.id_json = std::to_string(serial);
      break;
    case 1:
      built.id_json = JsonString("r" + std::to_string(serial));
      break;
    case 2:
      break;  // no id: a notification
    case 3:
      built.id_json = std::to_string(serial);
      built.progress_token = JsonString("p" + std::to_string(serial));
      break;
  }
  if (notification && (control & 8) == 0) built.id_json.clear();
  built.cancel_on_notification = (control & 4) != 0 && !built.id_json.empty();
  if (e.method == "tools/call") {
    if (!built.progress_token.empty()) {
      params += R"(,"_meta":{"progressToken":)" + built.progress_token + "}";
    }
    params += "}";
  } else if (!built.progress_token.empty() && params.size() > 1 &&
             params.front() == '{' && params.back() == '}') {
    // Inserted at the start: a JSON object's last member may not be ours
    // to follow with a comma when the object is empty.
    params = R"({"_meta":{"progressToken":)" + built.progress_token + "}" +
             (params == "{}" ? "" : ",") + params.substr(1);
  }
  built.message = R"({"jsonrpc":"2.0",)";
  if (!built.id_json.empty()) built.message += R"("id":)" + built.id_json + ",";
  built.message +=
      R"("method":)" + JsonString(e.method) + R"(,"params":)" + params + "}";
  return built;
}

// ---- The two passes ---------------------------------------------------------

void ServeWhole(ctxkit::host::Services& services, std::string_view input) {
  ctxkit::mcp::Session session(services);
  Recorder recorder;
  session.Handle(input, recorder);
  // A raw message may call a tool too: note the tool of each request so
  // that its result is checked against the tool's output schema.
  std::map<std::string, std::string> tool_of, progress_of;
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(input.data(), input.size()).get(root) == simdjson::SUCCESS) {
    auto note = [&](element message) {
      const Expectation e = Classify(message);
      if (e.kind != Kind::kRequest) return;
      object o = message.get_object().value_unsafe();
      std::string_view method, name;
      object params;
      if (o["method"].get_string().get(method) == simdjson::SUCCESS &&
          method == "tools/call" &&
          o["params"].get_object().get(params) == simdjson::SUCCESS &&
          params["name"].get_string().get(name) == simdjson::SUCCESS) {
        tool_of[e.id] = std::string(name);
      }
      object meta;
      element token;
      if (o["params"].get_object().get(params) == simdjson::SUCCESS &&
          params["_meta"].get_object().get(meta) == simdjson::SUCCESS &&
          meta["progressToken"].get(token) == simdjson::SUCCESS) {
        progress_of[e.id] = simdjson::minify(token);
      }
    };
    array batch;
    if (root.get_array().get(batch) == simdjson::SUCCESS) {
      for (element item : batch) note(item);
    } else {
      note(root);
    }
  }
  recorder.Check(input, {}, tool_of, progress_of);
}

void ServeLines(ctxkit::host::Services& services, std::string_view input) {
  ctxkit::mcp::Session session(services);
  simdjson::dom::parser parser;
  uint64_t serial = 0;
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view line = input.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    Recorder recorder;
    std::map<std::string, std::string> tool_of, progress_of;
    std::set<std::string> cancelled;
    std::string message;
    const char first = line[0];
    if (first == '{' || first == '[' || first == ' ' || first == '\t') {
      message = std::string(line);
    } else {
      Built built = BuildEnvelope(line, ++serial, parser);
      message = std::move(built.message);
      if (!built.id_json.empty()) {
        element id;
        if (parser.parse(built.id_json).get(id) != simdjson::SUCCESS) {
          Broken("the fuzzer built a bad id", built.id_json);
        }
        const std::string key = *IdKey(id);
        if (!built.tool.empty()) tool_of[key] = built.tool;
        if (!built.progress_token.empty()) {
          progress_of[key] = built.progress_token;
        }
        if (built.cancel_on_notification) {
          const std::string cancel =
              R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
              built.id_json + R"(,"reason":"fuzz"}})";
          // Once, at the first notification the request sends.
          recorder.on_notification = [&session, &cancelled, cancel, key] {
            if (cancelled.count(key) != 0) return;
            TheCanceller().Deliver(session, cancel);
            cancelled.insert(key);
          };
        }
      }
    }
    session.Handle(message, recorder);
    recorder.on_notification = nullptr;
    recorder.Check(message, cancelled, tool_of, progress_of);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  std::string base = "/dev/shm";
  if (access(base.c_str(), W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = base + "/ctxkit-mcp-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    Broken("cannot create a temporary directory", pattern);
  }
  StoreRoot() = pattern;
  std::atexit([] {
    TheServicesSlot().reset();
    RemoveStoreRoot();
  });
  (void)OutputSchemas();
  (void)TheCanceller();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  ctxkit::host::Services& services = ServicesForNextInput();
  ServeWhole(services, input);
  ServeLines(services, input);
  return 0;
}
