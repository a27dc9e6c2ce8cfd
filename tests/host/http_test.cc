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
  // A blank first line is a (bad) request line, as httplib reads it.
  HeaderScanner blank_first;
  CHECK(blank_first.Scan("\r\n\r\n", Limits(3, 1024)) == Result::kComplete);
  CHECK(blank_first.end() == 4);

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
