// The address `ctxkit serve` listens on: parsed from --listen, the
// configuration's "listen" and $CTXKIT_LISTEN alike, so that every source
// accepts and refuses the same text.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_LISTEN_ADDRESS_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_LISTEN_ADDRESS_H_

#include <string>
#include <string_view>

#include "ctxkit/status.h"

namespace ctxkit::host {

struct ListenAddress {
  std::string host;  // without brackets: "127.0.0.1", "::1", "localhost"
  int port = 0;      // 0..65535; 0 = any free port
  // 127.0.0.0/8, ::1 or "localhost": reachable from this machine only.
  bool loopback = false;
};

// Parses "HOST:PORT" ("127.0.0.1:6789", "localhost:0", "[::1]:8080",
// "0.0.0.0:80"). INVALID_ARGUMENT, quoting the text, for a missing or empty
// host, a port that is not a decimal number in 0..65535, or an IPv6 address
// without brackets. Thread-safe.
StatusOr<ListenAddress> ParseListenAddress(std::string_view text);

// "HOST:PORT" again, with brackets around an IPv6 host.
std::string FormatHostPort(std::string_view host, int port);

// Whether `host` (a name or an address without brackets) is "localhost"
// (any case), in 127.0.0.0/8, or ::1.
bool IsLoopbackHost(std::string_view host);

}  // namespace ctxkit::host

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_LISTEN_ADDRESS_H_
