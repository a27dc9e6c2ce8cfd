// The MCP stdio transport (programs/ctxkit/mcp/stdio.h) over pipes: the
// order requests are answered in, messages beyond the size limit, and a
// client that closes its end; and the scanner that finds the id of a message
// too large to read (programs/ctxkit/mcp/message_id.h).

#include "programs/ctxkit/mcp/stdio.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "doctest/doctest.h"
#include "programs/ctxkit/mcp/message_id.h"
#include "simdjson.h"
#include "tests/host/host_fixture.h"

namespace ctxkit::mcp {
namespace {

using testing::TempServices;

// IdJson of `message` fed whole and fed one byte at a time, which must
// agree.
std::string IdOf(std::string_view message) {
  MessageIdScanner whole;
  whole.Feed(message);
  MessageIdScanner bytes;
  for (const char c : message) bytes.Feed(std::string_view(&c, 1));
  CHECK_MESSAGE(whole.IdJson() == bytes.IdJson(), message);
  return whole.IdJson();
}

TEST_CASE("the id of a message is found wherever the top level has it") {
  CHECK(IdOf(R"({"jsonrpc":"2.0","id":7,"method":"ping"})") == "7");
  CHECK(IdOf(R"({"jsonrpc":"2.0","id":"a-1","method":"ping"})") == R"("a-1")");
  // Last, after params holding braces, quotes, escapes and ids of their own.
  CHECK(IdOf(R"({"method":"tools/call","params":{"id":1,"x":"} \" {","y":)"
             R"([{"id":"no"},[]]},"jsonrpc":"2.0","id":42})") == "42");
  CHECK(IdOf(R"( { "id" : -3.5e2 , "method" : "ping" } )") == "-3.5e2");
  CHECK(IdOf(R"({"id":"say \"hi\" \\","method":"ping"})") ==
        R"("say \"hi\" \\")");
  CHECK(IdOf(R"({"id":9})") == "9");
}

TEST_CASE("a message without a usable id gives null") {
  CHECK(IdOf(R"({"jsonrpc":"2.0","method":"notifications/initialized"})") ==
        "null");
  CHECK(IdOf(R"({"params":{"id":5},"method":"x"})") == "null");  // nested
  CHECK(IdOf(R"({"id":null,"method":"x"})") == "null");
  CHECK(IdOf(R"({"id":true,"method":"x"})") == "null");
  CHECK(IdOf(R"({"id":{"n":1},"method":"x"})") == "null");
  CHECK(IdOf(R"({"id":[1],"method":"x"})") == "null");
  CHECK(IdOf(R"({"id":12x,"method":"x"})") == "null");  // malformed
  CHECK(IdOf(R"({"idx":1,"i":2,"method":"x"})") == "null");
  CHECK(IdOf(R"([{"id":1}])") == "null");  // a batch, not an object
  CHECK(IdOf(R"({"id":"unterminated)") == "null");
  CHECK(IdOf("") == "null");
  // Ids up to kMaxIdBytes of text are echoed; a longer one is not.
  const std::string longest_id =
      '"' + std::string(MessageIdScanner::kMaxIdBytes - 2, 'a') + '"';
  CHECK(IdOf(R"({"id":)" + longest_id + "}") == longest_id);
  const std::string long_id =
      '"' + std::string(MessageIdScanner::kMaxIdBytes - 1, 'a') + '"';
  CHECK(IdOf(R"({"id":)" + long_id + "}") == "null");
  // The first "id" member counts.
  CHECK(IdOf(R"({"id":1,"id":2})") == "1");
}

// Runs ServeStdio over pipes with `input` written by another thread (a pipe
// holds 64 KiB), and returns the lines it wrote.
std::vector<std::string> Serve(host::Services& services,
                               const std::string& input) {
  int in[2];
  int out[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  std::thread client([&] {
    size_t sent = 0;
    while (sent < input.size()) {
      const ssize_t n = write(in[1], input.data() + sent, input.size() - sent);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    close(in[1]);
  });
  std::string output;
  std::thread reader([&] {
    char buffer[4096];
    ssize_t n;
    while ((n = read(out[0], buffer, sizeof buffer)) > 0) {
      output.append(buffer, static_cast<size_t>(n));
    }
  });
  const Status status = ServeStdio(services, in[0], out[1]);
  close(out[1]);
  client.join();
  reader.join();
  close(in[0]);
  close(out[0]);
  CHECK_MESSAGE(status.ok(), status.ToString());
  std::vector<std::string> lines;
  for (size_t begin = 0; begin < output.size();) {
    const size_t end = output.find('\n', begin);
    REQUIRE(end != std::string::npos);
    lines.push_back(output.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

// The "id" of each reply, as JSON text; notifications are left out.
std::vector<std::string> ReplyIds(const std::vector<std::string>& lines) {
  std::vector<std::string> ids;
  simdjson::dom::parser parser;
  for (const std::string& line : lines) {
    simdjson::dom::element root;
    REQUIRE(parser.parse(line).get(root) == simdjson::SUCCESS);
    simdjson::dom::element id;
    if (root["id"].get(id) != simdjson::SUCCESS) continue;
    ids.push_back(simdjson::minify(id));
  }
  return ids;
}

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":)"
    R"({"protocolVersion":"2025-06-18","capabilities":{},)"
    R"("clientInfo":{"name":"test","version":"1"}}})"
    "\n"
    R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
    "\n";

TEST_CASE("a request that mentions notifications/cancelled waits its turn") {
  TempServices services;
  // A slow request (megabytes to count), then one whose text names the
  // cancellation method, then a ping: answered in that order.
  std::string big;
  while (big.size() < (size_t{4} << 20)) {
    big += "Count every one of these words, again and again. ";
  }
  std::string input(kInitialize);
  input += R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":)"
           R"({"name":"count_tokens","arguments":{"input":")" +
           big + "\"}}}\n";
  input += R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":)"
           R"({"name":"count_tokens","arguments":{"input":)"
           R"("the client sends notifications/cancelled to stop a call"}}})"
           "\n";
  input += R"({"jsonrpc":"2.0","id":3,"method":"ping"})"
           "\n";
  const std::vector<std::string> ids = ReplyIds(Serve(services.get(), input));
  CHECK(ids == std::vector<std::string>{"0", "1", "2", "3"});
}

TEST_CASE(
    "a message beyond the limit is answered with its id, then the "
    "session goes on") {
  host::HostConfig config;
  config.max_message_bytes = 1024;
  TempServices services(config);
  const std::string padding(4000, 'x');
  std::string input(kInitialize);
  // The id after the params, as the TypeScript SDK writes it.
  input += R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":)"
           R"("count_tokens","arguments":{"input":")" +
           padding + R"("}},"id":"big-1"})" + "\n";
  input += R"({"jsonrpc":"2.0","id":5,"method":"ping"})"
           "\n";
  // No id at all, and last, without a newline.
  input +=
      R"({"jsonrpc":"2.0","method":"x","params":{"p":")" + padding + R"("}})";
  const std::vector<std::string> lines = Serve(services.get(), input);
  // The reader answers a skipped line itself, so its reply may come before
  // or after those of earlier requests: compare the set.
  std::vector<std::string> ids = ReplyIds(lines);
  std::sort(ids.begin(), ids.end());
  REQUIRE(ids == std::vector<std::string>{R"("big-1")", "0", "5", "null"});
  size_t refused = 0;
  for (const std::string& line : lines) {
    if (line.find("-32600") == std::string::npos) continue;
    ++refused;
    CHECK(line.find("the limit is 1024 bytes") != std::string::npos);
  }
  CHECK(refused == 2);
}

TEST_CASE(
    "a client that closes its end of the output ends the session "
    "cleanly") {
  TempServices services;
  int in[2];
  int out[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  close(out[0]);  // gone before the first reply
  const std::string input = std::string(kInitialize) +
                            R"({"jsonrpc":"2.0","id":1,"method":"ping"})" +
                            "\n";
  REQUIRE(write(in[1], input.data(), input.size()) ==
          static_cast<ssize_t>(input.size()));
  close(in[1]);
  const Status status = ServeStdio(services.get(), in[0], out[1]);
  CHECK_MESSAGE(status.ok(), status.ToString());
  close(in[0]);
  close(out[1]);
}

}  // namespace
}  // namespace ctxkit::mcp
