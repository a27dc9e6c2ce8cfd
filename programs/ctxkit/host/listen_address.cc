#include "programs/ctxkit/host/listen_address.h"

#include <arpa/inet.h>
#include <strings.h>

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"

namespace ctxkit::host {

bool IsLoopbackHost(std::string_view host) {
  constexpr std::string_view kLocalhost = "localhost";
  if (host.size() == kLocalhost.size() &&
      strncasecmp(host.data(), kLocalhost.data(), kLocalhost.size()) == 0) {
    return true;
  }
  const std::string h(host);
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  const auto invalid = [&](std::string_view why) {
    return Status(StatusCode::kInvalidArgument,
                  "bad listen address '" + std::string(text) +
                      "': " + std::string(why) +
                      " (expected HOST:PORT, e.g. 127.0.0.1:6789 or "
                      "[::1]:6789)");
  };
  ListenAddress address;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return invalid("no closing ']'");
    address.host = std::string(text.substr(1, close - 1));
    in6_addr v6{};
    if (inet_pton(AF_INET6, address.host.c_str(), &v6) != 1) {
      return invalid("not an IPv6 address inside [ ]");
    }
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      return invalid("no :PORT after ']'");
    }
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return invalid("no :PORT");
    const std::string_view host = text.substr(0, colon);
    if (host.find(':') != std::string_view::npos) {
      return invalid("an IPv6 address needs brackets");
    }
    if (host.empty()) return invalid("no host");
    for (char c : host) {
      const bool ok =
          absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '_';
      if (!ok) return invalid("bad character in the host");
    }
    address.host = std::string(host);
    port = text.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return invalid("the port must be a number 0..65535");
  }
  const int value = std::stoi(std::string(port));
  if (value > 65535) return invalid("the port must be a number 0..65535");
  address.port = value;
  address.loopback = IsLoopbackHost(address.host);
  return address;
}

std::string FormatHostPort(std::string_view host, int port) {
  std::string text;
  if (host.find(':') != std::string_view::npos) {
    text = "[" + std::string(host) + "]";
  } else {
    text = std::string(host);
  }
  return text + ":" + std::to_string(port);
}

}  // namespace ctxkit::host
