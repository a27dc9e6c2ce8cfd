// The parts of `ctxkit serve` that hold against hostile clients, called
// directly: the header-block scanner of the connection loop, the Host
// header's host, and which session a full session table gives up.

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "programs/ctxkit/http/connection_loop.h"
#include "programs/ctxkit/http/headers.h"
#include "programs/ctxkit/http/session_table.h"
#include "tests/host/host_fixture.h"

namespace ctxkit::http {
namespace {

using Result = HeaderScanner::Result;

ConnectionLimits Limits(size_t max_headers, size_t max_header_bytes) {
  ConnectionLimits limits;
  limits.max_headers = max_headers;
  limits.max_header_bytes = max_header_bytes;
  return limits;
}

TEST_CASE("HeaderScanner finds the end of the header block as it grows") {
  const ConnectionLimits limits = Limits(3, 1024);
  HeaderScanner scanner;
  std::string buffer = "GET / HTTP/1.1\r\nHost: a\r";
  CHECK(scanner.Scan(buffer, limits) == Result::kIncomplete);
  buffer += "\nX: 1\r\n\r";
  CHECK(scanner.Scan(buffer, limits) == Result::kIncomplete);
  buffer += "\nbody";
  REQUIRE(scanner.Scan(buffer, limits) == Result::kComplete);
  CHECK(buffer.substr(scanner.end()) == "body");
}

TEST_CASE("HeaderScanner: the request line is no header field") {
  // A blank first line is a (malformed) request line, not the block's end.
  HeaderScanner blank_first;
  CHECK(blank_first.Scan("\r\n\r\n", Limits(3, 1024)) == Result::kMalformed);

  std::string exactly = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 3; ++i) exactly += "X: 1\r\n";
  HeaderScanner at_limit;
  CHECK(at_limit.Scan(exactly + "\r\n", Limits(3, 1024)) == Result::kComplete);
  HeaderScanner over;
  CHECK(over.Scan(exactly + "X: 1\r\n", Limits(3, 1024)) ==
        Result::kTooManyHeaders);
}

TEST_CASE("HeaderScanner: too large, complete or not") {
  const std::string request =
      "GET / HTTP/1.1\r\nX: " + std::string(40, 'x') + "\r\n\r\n";  // 62 bytes
  HeaderScanner fits;
  CHECK(fits.Scan(request, Limits(10, request.size())) == Result::kComplete);
  HeaderScanner complete_over;
  CHECK(complete_over.Scan(request, Limits(10, request.size() - 1)) ==
        Result::kTooLarge);
  HeaderScanner incomplete_over;
  CHECK(incomplete_over.Scan(request.substr(0, 40), Limits(10, 39)) ==
        Result::kTooLarge);
}

// Lines httplib would frame differently from the scanner (it reads the
// request line up to a NUL, skips a line ending in a bare LF) are refused,
// each as soon as its line is complete.
TEST_CASE("HeaderScanner: malformed lines, named") {
  const ConnectionLimits limits = Limits(10, 1024);
  const auto problem = [&](std::string_view block) -> std::string {
    HeaderScanner scanner;
    const Result result = scanner.Scan(block, limits);
    if (result != Result::kMalformed) return "not malformed";
    return std::string(scanner.problem());
  };
  using std::string_literals::operator""s;
  CHECK(problem("GET /a\0b HTTP/1.1\r\n"s).find("target holds a control") !=
        std::string::npos);
  CHECK(problem("GET /a\tb HTTP/1.1\r\n").find("target holds a control") !=
        std::string::npos);
  CHECK(problem("GET /health HTTP/1.1\n").find("LF without CR") !=
        std::string::npos);
  CHECK(problem("GET / HTTP/1.1\r\nHost: a\n").find("LF without CR") !=
        std::string::npos);
  CHECK(problem("GET / HTTP/1.1\r\nX: a\0b\r\n"s).find("field value") !=
        std::string::npos);
  CHECK(problem("GET / HTTP/1.1\r\nX: a\rb\r\n").find("field value") !=
        std::string::npos);
  CHECK(problem("GET / HTTP/1.1\r\nHost : a\r\n").find("field name") !=
        std::string::npos);
  CHECK(problem("GET / HTTP/1.1\r\nNo colon\r\n").find("no ':'") !=
        std::string::npos);
  CHECK(problem("GET / HTTP/1.1\r\nX: a\r\n b\r\n").find("folding") !=
        std::string::npos);
  CHECK(problem("GET /\r\n").find("expected 'METHOD TARGET") !=
        std::string::npos);
  CHECK(problem("GET  / HTTP/1.1\r\n").find("expected 'METHOD TARGET") !=
        std::string::npos);
  CHECK(problem("GET / HTTP/2.0\r\n").find("HTTP/1.1 or HTTP/1.0") !=
        std::string::npos);
  CHECK(problem("G(T / HTTP/1.1\r\n").find("method is not a token") !=
        std::string::npos);

  // Well formed: a tab in a value, bytes above 0x7f, HTTP/1.0.
  CHECK(problem("GET /caf\xc3\xa9 HTTP/1.0\r\nX-A: a\tb \xff\r\n\r\n") ==
        "not malformed");

  // A bad request line is refused before the rest of the block arrives.
  HeaderScanner early;
  CHECK(early.Scan("HEAD /api\0\0/chat HTTP/1.1\r\nHost: a"s, limits) ==
        Result::kMalformed);
  CHECK(IsHeadRequest("HEAD /api HTTP/1.1\r\n"));
  CHECK_FALSE(IsHeadRequest("HEADER /api HTTP/1.1\r\n"));
  CHECK_FALSE(IsHeadRequest("GET /api HTTP/1.1\r\n"));
}

TEST_CASE("HostOfHostHeader") {
  CHECK(HostOfHostHeader("localhost:6789") == "localhost");
  CHECK(HostOfHostHeader(" 127.0.0.1 ") == "127.0.0.1");
  CHECK(HostOfHostHeader("[::1]:80") == "::1");
  CHECK(HostOfHostHeader("example.com") == "example.com");
  CHECK(HostOfHostHeader("[::1").empty());
  CHECK(HostOfHostHeader("").empty());
}

TEST_CASE("a full SessionTable gives up unused sessions only") {
  testing::TempServices services;
  SessionTable table(2);
  const auto session = [&] {
    return std::make_shared<mcp::Session>(services.get());
  };
  REQUIRE(table.Add("used", session()));
  REQUIRE(table.Find("used") != nullptr);  // now in use
  // A flood of new sessions replaces unused ones, never "used".
  for (int i = 0; i < 10; ++i) {
    CHECK(table.Add("flood" + std::to_string(i), session()));
    CHECK(table.Find("used") != nullptr);
  }
  CHECK(table.Find("flood8") == nullptr);
  // Every session in use: a new one is refused.
  REQUIRE(table.Find("flood9") != nullptr);
  CHECK_FALSE(table.Add("late", session()));
  CHECK(table.Find("late") == nullptr);
  CHECK(table.Find("used") != nullptr);
  CHECK(table.Find("flood9") != nullptr);
}

}  // namespace
}  // namespace ctxkit::http
