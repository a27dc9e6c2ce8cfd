// libFuzzer target over `ctxkit serve`'s request handling: a real
// http::HttpServer (http_server.h), bound to a free loopback port once per
// process over host::Services on a temporary store, with a token file,
// fed requests whose method, path, headers and body come from the input,
// each over its own connection as a client would send it.
//
// An input is requests separated by lines "%%". A request is
//   METHOD PATH          (one line; a line without a space is a PATH for GET)
//   Name: value          (header lines, up to an empty line)
//   auth                 (a line of its own: the right Authorization header)
//   body...              (the rest, as it is)
// Every "$sid" in a header value becomes the Mcp-Session-Id of the last
// response that gave one, so that requests reach an open MCP session. The
// target writes the framing itself (Host, Content-Length, Connection:
// close) and drops such headers from the input (Content-Length,
// Transfer-Encoding, Connection, Expect, Range, Host), and CRs: a request
// is one request, so that its answer can be held to the guarantees below.
//
// Guarantees checked on every request (a broken one aborts, which libFuzzer
// reports as a crash with its input):
//   - exactly one HTTP/1.1 response comes back before the server closes the
//     connection, within kReplySeconds;
//   - its status is one that http_server.h documents: 200, 202 (input
//     without requests), 204 (DELETE /mcp), 400, 401, 403, 404, 405, 406 (an
//     Accept header without JSON or an event stream), 408 (a deadline), 413,
//     414 (a target longer than the server reads), 421 (a Host that is not
//     the server's), 431 (too many header fields or bytes) or 503 (a full
//     session table or connection cap); never 500 (an exception escaped a
//     handler);
//   - 401 carries WWW-Authenticate, 405 carries Allow;
//   - a JSON body (application/json) is valid JSON, and an error's is an
//     object with a string "error" or a JSON-RPC error; each data line of
//     an event stream is valid JSON.
//
// MCP sessions opened by inputs stay open (as a client that never sends
// DELETE leaves them); the session table's own limits bound them.
//
// Build and run: see tests/fuzz/CMakeLists.txt.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ctxkit/store.h"
#include "programs/ctxkit/host/config.h"
#include "programs/ctxkit/host/services.h"
#include "programs/ctxkit/http/http_server.h"
#include "simdjson.h"

namespace {

// At least kMinTokenBytes (auth.h): the server refuses shorter tokens.
constexpr std::string_view kToken = "fuzz-token-0123456789abcdef012345";
// Longer than any request of a small input takes; a hang beyond it is a
// request the server never answered.
constexpr int kReplySeconds = 10;

[[noreturn]] void Broken(const std::string& what, std::string_view detail) {
  std::fprintf(stderr, "guarantee broken: %s\n  detail: %.*s\n", what.c_str(),
               static_cast<int>(std::min<size_t>(detail.size(), 4000)),
               detail.data());
  std::abort();
}

struct Server {
  std::string root;
  std::unique_ptr<ctxkit::host::Services> services;
  std::unique_ptr<ctxkit::http::HttpServer> http;
  std::thread serving;
  int port = 0;
  std::string session_id;  // the last Mcp-Session-Id given
};

Server& TheServer() {
  static auto* const server = new Server;
  return *server;
}

void StopServer() {
  Server& server = TheServer();
  if (server.http) server.http->Stop();
  if (server.serving.joinable()) server.serving.join();
  server.http.reset();
  server.services.reset();
  std::error_code ignored;
  std::filesystem::remove_all(server.root, ignored);
}

void StartServer() {
  Server& server = TheServer();
  std::string base = "/dev/shm";
  if (access(base.c_str(), W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = base + "/ctxkit-http-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    Broken("cannot create a temporary directory", pattern);
  }
  server.root = pattern;
  const std::string token_file = server.root + "/token";
  std::FILE* file = std::fopen(token_file.c_str(), "w");
  if (file == nullptr) Broken("cannot write the token file", token_file);
  std::fprintf(file, "%.*s\n", static_cast<int>(kToken.size()), kToken.data());
  std::fclose(file);

  ctxkit::host::HostConfig config;
  config.db_path = server.root + "/store";
  config.listen = "127.0.0.1:0";
  config.token_file = token_file;
  // Small enough that inputs reach the 413 paths.
  config.max_body_bytes = 4096;
  config.timeout_seconds = 5;
  config.threads = 4;
  config.page_size = 2;
  auto store = ctxkit::Store::Open(config.db_path);
  if (!store.ok()) Broken("cannot open the store", store.status().ToString());
  auto services = ctxkit::host::OpenServices(config, *std::move(store));
  if (!services.ok()) {
    Broken("cannot open the services", services.status().ToString());
  }
  server.services = *std::move(services);
  auto http = ctxkit::http::HttpServer::Create(*server.services);
  if (!http.ok()) Broken("cannot create the server", http.status().ToString());
  server.http = *std::move(http);
  server.port = server.http->port();
  server.serving = std::thread([&server] {
    const ctxkit::Status served = server.http->Serve();
    if (!served.ok()) Broken("Serve failed", served.ToString());
  });
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return lower;
}

// Sends `request` on a new connection and returns everything the server
// sent until it closed the connection.
std::string Exchange(const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Broken("socket failed", request);
  timeval timeout{};
  timeout.tv_sec = kReplySeconds;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(TheServer().port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Every exchange takes a new connection that the server closes first, so
  // the client's ephemeral ports can run out on a long run (EADDRNOTAVAIL):
  // that is the harness's limit, waited out; any other failure is the
  // server's.
  int attempts = 0;
  while (connect(fd, reinterpret_cast<const sockaddr*>(&address),
                 sizeof address) != 0) {
    if (errno == EINTR) continue;
    if (errno == EADDRNOTAVAIL && ++attempts < 100) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    Broken(std::string("cannot connect to the server: ") + std::strerror(errno),
           request);
  }
  // A server that answers before reading the whole body (413, 401) may
  // close early: a failed send is then no fault, the answer still counts.
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n =
        send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  char buffer[1 << 14];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      // A reset after a complete answer (the server closed with unread
      // input) ends the exchange like a close; a timeout is a hang.
      if (errno == ECONNRESET) break;
      close(fd);
      Broken("no complete response within " + std::to_string(kReplySeconds) +
                 " s (" + std::strerror(errno) + "); got: " + reply,
             request);
    }
    reply.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

struct Response {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower
  std::string body;
  // An answer to HEAD: it has no body, whatever its headers describe.
  bool to_head = false;

  std::optional<std::string> Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
};

// The one response in `raw`; anything else is broken.
Response ParseResponse(std::string_view raw, bool head,
                       const std::string& request) {
  const auto fail = [&](const std::string& what) {
    Broken(what + "\n  response: " + std::string(raw.substr(0, 2000)), request);
  };
  Response response;
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string_view::npos) fail("no complete response head");
  std::string_view head_text = raw.substr(0, end + 2);
  const size_t line_end = head_text.find("\r\n");
  const std::string_view status_line = head_text.substr(0, line_end);
  if (status_line.size() < 12 || status_line.substr(0, 9) != "HTTP/1.1 " ||
      !std::isdigit(static_cast<unsigned char>(status_line[9])) ||
      !std::isdigit(static_cast<unsigned char>(status_line[10])) ||
      !std::isdigit(static_cast<unsigned char>(status_line[11]))) {
    fail("a malformed status line");
  }
  response.status = std::stoi(std::string(status_line.substr(9, 3)));
  head_text.remove_prefix(line_end + 2);
  while (!head_text.empty()) {
    const size_t next = head_text.find("\r\n");
    const std::string_view line = head_text.substr(0, next);
    head_text.remove_prefix(next + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) fail("a header line without ':'");
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    response.headers.emplace_back(Lower(line.substr(0, colon)),
                                  std::string(value));
  }
  std::string_view rest = raw.substr(end + 4);
  const auto length = response.Header("content-length");
  response.to_head = head;
  if (head || response.status == 204) {
    // No body, whatever Content-Length says.
  } else if (Lower(response.Header("transfer-encoding").value_or("")) ==
             "chunked") {
    while (true) {
      const size_t size_end = rest.find("\r\n");
      if (size_end == std::string_view::npos) fail("a truncated chunk size");
      const size_t size = std::strtoul(
          std::string(rest.substr(0, size_end)).c_str(), nullptr, 16);
      rest.remove_prefix(size_end + 2);
      if (rest.size() < size + 2) fail("a truncated chunk");
      response.body.append(rest.substr(0, size));
      rest.remove_prefix(size + 2);
      if (size == 0) break;
    }
  } else if (length) {
    const size_t size = std::strtoul(length->c_str(), nullptr, 10);
    if (rest.size() < size) fail("a body shorter than its Content-Length");
    response.body = std::string(rest.substr(0, size));
    rest.remove_prefix(size);
  } else {
    response.body = std::string(rest);
    rest = {};
  }
  if (!rest.empty()) fail("more than one response to one request");
  return response;
}

void CheckResponse(const Response& response, const std::string& request) {
  const auto fail = [&](const std::string& what) {
    Broken(what + " (status " + std::to_string(response.status) +
               ")\n  body: " + response.body.substr(0, 2000),
           request);
  };
  constexpr int kDocumented[] = {200, 202, 204, 400, 401, 403, 404, 405,
                                 406, 408, 413, 414, 421, 431, 503};
  if (std::find(std::begin(kDocumented), std::end(kDocumented),
                response.status) == std::end(kDocumented)) {
    fail("an undocumented status");
  }
  if (response.status == 401 && !response.Header("www-authenticate")) {
    fail("401 without WWW-Authenticate");
  }
  if (response.status == 405 && !response.Header("allow")) {
    fail("405 without Allow");
  }
  // HEAD gets the headers a GET would, with no body to check.
  if (response.to_head) return;
  const std::string type = Lower(response.Header("content-type").value_or(""));
  simdjson::dom::parser parser;
  if (type.rfind("application/json", 0) == 0) {
    simdjson::dom::element body;
    if (parser.parse(response.body).get(body) != simdjson::SUCCESS) {
      fail("a JSON body that is not JSON");
    }
    if (response.status >= 400) {
      std::string_view message;
      simdjson::dom::object rpc_error;
      const bool plain = body["error"].get(message) == simdjson::SUCCESS;
      const bool rpc = body["error"].get(rpc_error) == simdjson::SUCCESS &&
                       body["jsonrpc"].is_string();
      const bool batch = body.is_array();
      if (!plain && !rpc && !batch) fail("an error body without an error");
    }
  } else if (type.rfind("text/event-stream", 0) == 0) {
    std::string_view events = response.body;
    while (!events.empty()) {
      const size_t next = events.find('\n');
      const std::string_view line = events.substr(0, next);
      events.remove_prefix(next == std::string_view::npos ? events.size()
                                                          : next + 1);
      if (line.substr(0, 5) != "data:") continue;
      std::string_view data = line.substr(5);
      if (!data.empty() && data.front() == ' ') data.remove_prefix(1);
      simdjson::dom::element event;
      if (parser.parse(data.data(), data.size()).get(event) !=
          simdjson::SUCCESS) {
        fail("an event whose data is not JSON");
      }
    }
  } else if (response.status != 204 && !response.body.empty()) {
    fail("a body of type '" + type + "'");
  }
}

bool Dropped(std::string_view name) {
  const std::string lower = Lower(name);
  return lower == "content-length" || lower == "transfer-encoding" ||
         lower == "connection" || lower == "expect" || lower == "range" ||
         lower == "host";
}

// The request text of one part of the input.
std::string BuildRequest(std::string_view part, bool& head) {
  std::string request;
  std::string body;
  size_t at = part.find('\n');
  std::string first(part.substr(0, at));
  part.remove_prefix(at == std::string_view::npos ? part.size() : at + 1);
  first.erase(std::remove(first.begin(), first.end(), '\r'), first.end());
  const size_t space = first.find(' ');
  std::string method =
      space == std::string::npos ? "GET" : first.substr(0, space);
  const std::string target =
      space == std::string::npos ? first : first.substr(space + 1);
  head = method == "HEAD";
  request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  while (!part.empty()) {
    at = part.find('\n');
    std::string line(part.substr(0, at));
    part.remove_prefix(at == std::string_view::npos ? part.size() : at + 1);
    line.erase(std::remove(line.begin(), line.end(), '\r'), line.end());
    if (line.empty()) break;
    if (line == "auth") {
      request += "Authorization: Bearer " + std::string(kToken) + "\r\n";
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos || Dropped(line.substr(0, colon))) continue;
    for (size_t sid = line.find("$sid"); sid != std::string::npos;
         sid = line.find("$sid", sid + TheServer().session_id.size())) {
      line.replace(sid, 4, TheServer().session_id);
    }
    request += line + "\r\n";
  }
  body = std::string(part);
  request += "Content-Length: " + std::to_string(body.size()) +
             "\r\nConnection: close\r\n\r\n" + body;
  return request;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  StartServer();
  std::atexit(StopServer);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kSeparator = "\n%%\n";
  while (true) {
    const size_t end = input.find(kSeparator);
    const std::string_view part = input.substr(0, end);
    bool head = false;
    const std::string request = BuildRequest(part, head);
    const Response response = ParseResponse(Exchange(request), head, request);
    CheckResponse(response, request);
    if (auto id = response.Header("mcp-session-id")) {
      TheServer().session_id = *id;
    }
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + kSeparator.size());
  }
  return 0;
}
