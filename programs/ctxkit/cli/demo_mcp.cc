// The MCP part of `ctxkit demo` (see demo_mcp.h).

#include "programs/ctxkit/cli/demo_mcp.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "programs/ctxkit/host/json_text.h"
#include "programs/ctxkit/host/text.h"
#include "simdjson.h"

namespace ctxkit::program {

namespace {

using Clock = std::chrono::steady_clock;

// A debugging session as an agent would record it, one turn per entry.
constexpr std::array<std::pair<std::string_view, std::string_view>, 12>
    kMessages = {{
        {"system",
         "You are a coding assistant. Keep answers short and cite files."},
        {"user",
         "CI fails on test_checkout_total in tests/test_cart.py since "
         "yesterday's merge. Can you find out why?"},
        {"assistant",
         "I'll read the test first. tests/test_cart.py:42 asserts "
         "cart.total() == Decimal('19.98') after adding two items at 9.99."},
        {"user", "Right, and locally it passes for me."},
        {"assistant",
         "Then it depends on the environment. cart/pricing.py rounds with "
         "float arithmetic: round(9.99 * 2, 2) is 19.98 here, but the CI "
         "image sets a different locale and the formatter parses '19,98'."},
        {"user", "Ugh. What do you suggest?"},
        {"assistant",
         "Use Decimal end to end: quantize(Decimal('0.01'), ROUND_HALF_UP) in "
         "cart/pricing.py and format with a fixed locale-independent "
         "formatter. Decision: no floats for money anywhere in cart/."},
        {"user", "ok"},
        {"assistant",
         "Patched cart/pricing.py (3 lines) and cart/format.py (1 line). "
         "Running the tests: 48 passed, 0 failed in 3.2 s."},
        {"user", "Great. Also check the invoice module for the same bug."},
        {"assistant",
         "invoice/totals.py:17 has the same float rounding; fixed it the "
         "same way and added a regression test test_invoice_rounding."},
        {"user", "Thanks! Summarize what changed for the PR description."},
    }};

// One request/reply exchange with the child, line by line.
class Child {
 public:
  ~Child() { Close(); }

  Status Start(const std::string& store_dir) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return Errno("pipe");
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return Errno("pipe");
    }
    pid_ = fork();
    if (pid_ < 0) return Errno("fork");
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      const int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, 2);  // the child's startup line
      execl("/proc/self/exe", "ctxkit", "mcp", "--db", store_dir.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    return Status();
  }

  // Sends one message line.
  Status Send(const std::string& message) {
    std::string line = message + "\n";
    std::string_view rest = line;
    while (!rest.empty()) {
      const ssize_t n = write(in_, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Errno("writing to ctxkit mcp");
      rest.remove_prefix(static_cast<size_t>(n));
    }
    return Status();
  }

  // Sends `request` and returns the reply line (notifications skipped).
  StatusOr<std::string> Exchange(const std::string& request) {
    const auto start = Clock::now();
    if (Status sent = Send(request); !sent.ok()) return sent;
    while (true) {
      const size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string reply = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        if (reply.find("\"id\"") == std::string::npos) continue;
        times_.push_back(Clock::now() - start);
        return reply;
      }
      char chunk[1 << 16];
      const ssize_t n = read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Errno("reading from ctxkit mcp");
      if (n == 0) {
        return Status(StatusCode::kInternal,
                      "ctxkit mcp ended before replying to " + request);
      }
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // Ends the session as a client does (end of input) and reaps the child.
  int Close() {
    if (in_ >= 0) close(in_);
    in_ = -1;
    int status = -1;
    if (pid_ > 0) {
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
    }
    if (out_ >= 0) close(out_);
    out_ = -1;
    return status;
  }

  const std::vector<Clock::duration>& times() const { return times_; }

 private:
  static Status Errno(std::string_view what) {
    return Status(StatusCode::kInternal,
                  std::string(what) + ": " + std::strerror(errno));
  }

  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
  std::vector<Clock::duration> times_;
};

// The parsed reply of one step, checked to be a result (and, for a tool
// call, not a tool error).
class Step {
 public:
  Step(Child& child, std::string name)
      : child_(child), name_(std::move(name)) {}

  Status Run(std::string_view method, const std::string& params) {
    request_ = R"({"jsonrpc":"2.0","id":)" + std::to_string(++next_id_) +
               R"(,"method":)" + JsonQuote(method) + R"(,"params":)" + params +
               "}";
    auto reply = child_.Exchange(request_);
    if (!reply.ok()) return reply.status();
    reply_ = *std::move(reply);
    if (parser_.parse(reply_).get(root_) != simdjson::SUCCESS ||
        root_["result"].error() != simdjson::SUCCESS) {
      return Failed();
    }
    bool is_error = false;
    if (root_["result"]["isError"].get(is_error) == simdjson::SUCCESS &&
        is_error) {
      return Failed();
    }
    return Status();
  }

  // A tool call's structuredContent, or the result itself.
  simdjson::dom::element Data() {
    simdjson::dom::element structured;
    if (root_["result"]["structuredContent"].get(structured) ==
        simdjson::SUCCESS) {
      return structured;
    }
    return root_["result"].value_unsafe();
  }

  Status Failed() const {
    return Status(StatusCode::kInternal, "MCP step '" + name_ +
                                             "' failed: sent " + request_ +
                                             ", received " + reply_);
  }

 private:
  static inline int next_id_ = 0;
  Child& child_;
  std::string name_;
  std::string request_;
  std::string reply_;
  simdjson::dom::parser parser_;
  simdjson::dom::element root_;
};

std::string ToolCall(std::string_view tool, std::string_view arguments) {
  return R"({"name":)" + JsonQuote(tool) + R"(,"arguments":)" +
         std::string(arguments) + "}";
}

// Reads a field the step's document must have; a missing one fails the step.
template <typename T>
Status Field(Step& step, simdjson::simdjson_result<simdjson::dom::element> at,
             T& value) {
  if (at.get(value) != simdjson::SUCCESS) return step.Failed();
  return Status();
}

#define CTXKIT_DEMO_TRY(expr)           \
  do {                                  \
    if (Status s_ = (expr); !s_.ok()) { \
      return s_;                        \
    }                                   \
  } while (false)

std::string Micros(Clock::duration d) {
  return FormatDuration(
      std::chrono::duration_cast<std::chrono::nanoseconds>(d));
}

Status Script(Child& child, std::ostream& out) {
  const auto say = [&](std::string_view request, const std::string& reply) {
    std::string left = "  -> " + std::string(request);
    left.resize(std::max<size_t>(left.size(), 44), ' ');
    out << left << "<- " << reply << "\n";
  };

  Step init(child, "initialize");
  CTXKIT_DEMO_TRY(init.Run(
      "initialize", R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                    R"("clientInfo":{"name":"ctxkit-demo","version":"1"}})"));
  std::string_view version, server;
  CTXKIT_DEMO_TRY(Field(init, init.Data()["protocolVersion"], version));
  CTXKIT_DEMO_TRY(Field(init, init.Data()["serverInfo"]["version"], server));
  say("initialize",
      "ctxkit " + std::string(server) + ", MCP " + std::string(version));
  CTXKIT_DEMO_TRY(
      child.Send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));

  Step tools(child, "tools/list");
  CTXKIT_DEMO_TRY(tools.Run("tools/list", "{}"));
  simdjson::dom::array tool_list;
  CTXKIT_DEMO_TRY(Field(tools, tools.Data()["tools"], tool_list));
  std::string names;
  for (simdjson::dom::element tool : tool_list) {
    std::string_view name;
    CTXKIT_DEMO_TRY(Field(tools, tool["name"], name));
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  say("tools/list", std::to_string(tool_list.size()) + " tools: " + names);

  Step create(child, "manage_conversation create");
  CTXKIT_DEMO_TRY(create.Run(
      "tools/call",
      ToolCall("manage_conversation",
               R"({"action":"create","title":"Fix the checkout rounding bug",)"
               R"("model":"gpt-4o"})")));
  std::string_view id_view;
  CTXKIT_DEMO_TRY(Field(create, create.Data()["conversation"]["id"], id_view));
  const std::string id(id_view);
  say("manage_conversation create", "conversation " + id);

  uint64_t total_tokens = 0, message_count = 0;
  for (const auto& [role, content] : kMessages) {
    Step add(child, "manage_conversation add_message");
    CTXKIT_DEMO_TRY(
        add.Run("tools/call",
                ToolCall("manage_conversation",
                         R"({"action":"add_message","conversation_id":)" +
                             JsonQuote(id) + R"(,"role":)" + JsonQuote(role) +
                             R"(,"content":)" + JsonQuote(content) + "}")));
    CTXKIT_DEMO_TRY(
        Field(add, add.Data()["conversation"]["total_tokens"], total_tokens));
    CTXKIT_DEMO_TRY(
        Field(add, add.Data()["conversation"]["message_count"], message_count));
  }
  say("manage_conversation add_message x" + std::to_string(kMessages.size()),
      std::to_string(message_count) + " messages, " +
          std::to_string(total_tokens) + " tokens (gpt-4o, exact)");

  std::string messages = "[";
  for (const auto& [role, content] : kMessages) {
    if (messages.size() > 1) messages += ",";
    messages += R"({"role":)" + JsonQuote(role) + R"(,"content":)" +
                JsonQuote(content) + "}";
  }
  messages += "]";
  Step count(child, "count_tokens");
  CTXKIT_DEMO_TRY(count.Run(
      "tools/call", ToolCall("count_tokens", R"({"model":"gpt-4o","input":)" +
                                                 messages + "}")));
  uint64_t tokens = 0, limit = 0;
  std::string_view status;
  CTXKIT_DEMO_TRY(Field(count, count.Data()["tokens"], tokens));
  CTXKIT_DEMO_TRY(Field(count, count.Data()["limit"], limit));
  CTXKIT_DEMO_TRY(
      Field(count, count.Data()["recommendation"]["status"], status));
  say("count_tokens (12 messages, gpt-4o)",
      std::to_string(tokens) + " tokens with chat overhead, " +
          std::string(status) + " (limit " + std::to_string(limit) + ")");

  Step compress(child, "compress_context");
  CTXKIT_DEMO_TRY(compress.Run(
      "tools/call", ToolCall("compress_context",
                             R"({"conversation_id":)" + JsonQuote(id) +
                                 R"(,"strategy":"smart","target_ratio":0.5,)"
                                 R"("preserve_recent":4})")));
  uint64_t original = 0, compressed = 0, original_count = 0,
           compressed_count = 0;
  CTXKIT_DEMO_TRY(
      Field(compress, compress.Data()["original_tokens"], original));
  CTXKIT_DEMO_TRY(
      Field(compress, compress.Data()["compressed_tokens"], compressed));
  CTXKIT_DEMO_TRY(Field(compress, compress.Data()["original_message_count"],
                        original_count));
  CTXKIT_DEMO_TRY(Field(compress, compress.Data()["compressed_message_count"],
                        compressed_count));
  say("compress_context (smart, 0.5)",
      std::to_string(original_count) + " -> " +
          std::to_string(compressed_count) + " messages, " +
          std::to_string(original) + " -> " + std::to_string(compressed) +
          " tokens");

  Step stats(child, "resources/read token-stats");
  CTXKIT_DEMO_TRY(
      stats.Run("resources/read", R"({"uri":"token-stats://)" + id + R"("})"));
  std::string_view stats_text;
  CTXKIT_DEMO_TRY(
      Field(stats, stats.Data()["contents"].at(0)["text"], stats_text));
  say("resources/read token-stats://<id>",
      std::to_string(stats_text.size()) + " bytes of statistics");

  Step prompt(child, "prompts/get summarize_context");
  CTXKIT_DEMO_TRY(prompt.Run(
      "prompts/get", R"({"name":"summarize_context","arguments":{)"
                     R"("conversation_id":)" +
                         JsonQuote(id) + R"(,"focus":"the decisions"}})"));
  std::string_view prompt_text;
  CTXKIT_DEMO_TRY(Field(
      prompt, prompt.Data()["messages"].at(0)["content"]["text"], prompt_text));
  say("prompts/get summarize_context", "a " +
                                           std::to_string(prompt_text.size()) +
                                           "-byte prompt holding the history");
  return Status();
}

}  // namespace

Status RunMcpDemo(const std::string& store_dir, std::ostream& out) {
  out << "\nan MCP session with 'ctxkit mcp' over stdio, as an MCP client "
         "drives it:\n";
  Child child;
  CTXKIT_DEMO_TRY(child.Start(store_dir));
  Status scripted = Script(child, out);
  const int status = child.Close();
  if (!scripted.ok()) return scripted;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status(StatusCode::kInternal,
                  "ctxkit mcp did not exit cleanly at end of input (status " +
                      std::to_string(status) + ")");
  }
  std::vector<Clock::duration> times = child.times();
  std::sort(times.begin(), times.end());
  out << "  " << times.size() << " round trips, median "
      << Micros(times[times.size() / 2]) << ", slowest " << Micros(times.back())
      << "; the server exited cleanly at end of input\n";
  return Status();
}

}  // namespace ctxkit::program
