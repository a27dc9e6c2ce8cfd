// Work stops when its client disconnects: `ctxkit serve` (the in-process
// HttpServer) given large compactions whose clients hang up as soon as they
// have sent them spends far less CPU on ten of them than on one it answers.
// The figures are relative to that one answered compaction, measured in the
// same process, so the test holds on a fast machine and a slow one.

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "programs/ctxkit/http/http_server.h"
#include "tests/host/host_fixture.h"

namespace ctxkit::http {
namespace {

// CPU seconds, user and system, of every thread of this process: the
// server's workers included.
double CpuSeconds() {
  rusage usage{};
  REQUIRE(getrusage(RUSAGE_SELF, &usage) == 0);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<const sockaddr*>(&address),
                  sizeof address) == 0);
  return fd;
}

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    REQUIRE(n > 0);
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// The status line of the server's answer to `request`, read to the end.
std::string Exchange(int port, const std::string& request) {
  const int fd = Connect(port);
  SendAll(fd, request);
  std::string answer;
  char buffer[65536];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) {
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return answer.substr(0, answer.find("\r\n"));
}

// A coding-agent history of `turns` tool calls with their results, some of
// them errors, as a compact request with a tight budget: about 1 KiB a
// turn, all of it to count, classify and summarize.
std::string CompactBody(int turns) {
  std::string m =
      R"({"messages":[{"role":"system","content":"You are a coding agent."},)"
      R"({"role":"user","content":"Fix the failing test in src/app.py."})";
  for (int t = 0; t < turns; ++t) {
    const std::string id = "call_" + std::to_string(t);
    m +=
        R"(,{"role":"assistant","content":"Looking at module )" +
        std::to_string(t) + R"(.","tool_calls":[{"id":")" + id +
        R"(","type":"function","function":{"name":"bash","arguments":"{\"command\":\"cat src/mod)" +
        std::to_string(t % 50) + R"(.py\"}"}}]})";
    m += R"(,{"role":"tool","tool_call_id":")" + id + R"(","content":")";
    for (int line = 0; line < 12; ++line) {
      m += "def handler_" + std::to_string(line) + "(request, table_" +
           std::to_string(t) + "): return query(request) + index\\n";
    }
    if (t % 7 == 0) {
      m += "Traceback (most recent call last):\\nValueError: bad value " +
           std::to_string(t);
    }
    m += R"("})";
  }
  m += R"(,{"role":"user","content":"Now finish it."}],"max_tokens":4000})";
  return m;
}

std::string Post(std::string_view path, const std::string& body) {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Accept: application/json\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST_CASE(
    "ten compactions whose clients hang up cost far less CPU than one "
    "answered") {
  host::HostConfig config;
  config.listen = "127.0.0.1:0";
  testing::TempServices services(config);
  auto server = HttpServer::Create(services.get());
  REQUIRE_MESSAGE(server.ok(), server.status().ToString());
  std::unique_ptr<HttpServer> http = *std::move(server);
  std::thread serving([&http] { CHECK(http->Serve().ok()); });
  const int port = http->port();

  const std::string body = CompactBody(2500);  // about 3 MiB
  REQUIRE(body.size() < config.max_body_bytes);
  const auto mcp = [](const std::string& arguments) {
    return R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"compact_chat","arguments":)" +
           arguments + "}}";
  };
  // The request at index i of ten: REST and MCP in turn.
  const auto request = [&](int i, const std::string& arguments) {
    return i % 2 ? Post("/mcp/v1", mcp(arguments))
                 : Post("/api/chat/compact", arguments);
  };

  // The yardstick: one compaction answered in full, each way in.
  double started = CpuSeconds();
  CHECK(Exchange(port, request(0, body)) == "HTTP/1.1 200 OK");
  const double one_rest = CpuSeconds() - started;
  started = CpuSeconds();
  CHECK(Exchange(port, request(1, body)) == "HTTP/1.1 200 OK");
  const double one_mcp = CpuSeconds() - started;
  const double one = std::min(one_rest, one_mcp);

  // What ten requests cost that are read, parsed and refused without a
  // compaction (max_tokens 0): the part no cancellation can save, and a
  // larger share of the whole in an optimized build than in a debug one.
  std::string refused = body;
  refused.replace(refused.rfind("\"max_tokens\":4000"), 17, "\"max_tokens\":0");
  started = CpuSeconds();
  for (int i = 0; i < 10; ++i) {
    // REST answers 400; MCP a tool error, in a 200.
    CHECK(Exchange(port, request(i, refused)) ==
          (i % 2 ? "HTTP/1.1 200 OK" : "HTTP/1.1 400 Bad Request"));
  }
  const double ten_refused = CpuSeconds() - started;

  // Ten, every client gone as soon as its request is sent. Stop() makes
  // Serve() return once every request that arrived was dealt with, so the
  // CPU they cost is all counted.
  started = CpuSeconds();
  for (int i = 0; i < 10; ++i) {
    const int fd = Connect(port);
    SendAll(fd, request(i, body));
    close(fd);
  }
  http->Stop();
  serving.join();
  const double ten = CpuSeconds() - started;

  MESSAGE("one answered compaction: ", one_rest, " s CPU (REST), ", one_mcp,
          " s (MCP); ten refused: ", ten_refused, " s; ten abandoned: ", ten,
          " s");
  // Ten run to the end would cost about ten compactions beyond what the
  // refused ones cost; stopped, less than two.
  CHECK(ten - ten_refused < 2 * one);
}

}  // namespace
}  // namespace ctxkit::http
