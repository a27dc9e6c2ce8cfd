// The host's configuration (`ctxkit mcp`, `ctxkit serve`): defaults, then a
// --config JSON object, then environment variables, then flags; each later
// source overrides the earlier ones for the settings it names.
//
//   setting            flag            environment            --config key
//   db_path            --db            CTXKIT_DB              "db"
//   listen             --listen        CTXKIT_LISTEN          "listen"
//   port (of listen)                   CTXKIT_PORT            "port"
//   token_file         --token-file    CTXKIT_TOKEN_FILE      "token_file"
//   max_body_bytes                     CTXKIT_MAX_BODY_BYTES  "max_body_bytes"
//   max_message_bytes                  CTXKIT_MAX_MESSAGE_BYTES
//   "max_message_bytes" timeout_seconds CTXKIT_TIMEOUT_SECONDS
//   "timeout_seconds" threads                            CTXKIT_THREADS
//   "threads" page_size                          CTXKIT_PAGE_SIZE "page_size"
//   header_timeout_seconds, body_timeout_seconds, max_header_bytes,
//   max_headers, max_connections_per_client, max_sessions: --config key of
//   that name, environment CTXKIT_ and the name in capitals
//   default_model                      CTXKIT_DEFAULT_MODEL   "default_model"
//   log_level                          CTXKIT_LOG_LEVEL       "log_level"
//
// CTXKIT_PORT (or "port") replaces only the port of the listen address in
// effect at that point, so --listen still wins over it.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_CONFIG_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"

namespace ctxkit::host {

struct HostConfig {
  // The LMDB environment; empty = the program's default location (see
  // store_location.h), resolved by the command.
  std::string db_path;
  // HTTP: host:port to bind. A non-loopback host needs token_file.
  std::string listen = "127.0.0.1:6789";
  // HTTP: a file whose first line is the bearer token; empty = no auth.
  std::string token_file;
  // HTTP: largest request body accepted (413 beyond).
  size_t max_body_bytes = size_t{8} << 20;  // 8 MiB
  // stdio: longest JSON-RPC line accepted (an error reply beyond, and the
  // line is skipped).
  size_t max_message_bytes = size_t{64} << 20;  // 64 MiB
  // HTTP: the longest wait for one read or write of a request being served.
  int timeout_seconds = 30;
  // HTTP: from a connection's first wait for a request to the end of its
  // request line and headers (408 and closed beyond).
  int header_timeout_seconds = 10;
  // HTTP: from the end of the headers to the end of the body (408 and
  // closed beyond).
  int body_timeout_seconds = 60;
  // HTTP: request line and header fields together (431 and closed beyond).
  size_t max_header_bytes = size_t{64} << 10;  // 64 KiB
  // HTTP: header fields of one request (431 and closed beyond).
  size_t max_headers = 100;
  // HTTP: open connections from one client address (503 and closed beyond).
  size_t max_connections_per_client = 256;
  // HTTP: live MCP Streamable HTTP sessions (session_table.h).
  size_t max_sessions = 1024;
  // HTTP: worker threads, each busy for one request at a time (0 = eight
  // per hardware thread, at least 16).
  int threads = 0;
  // Items per page of tools/list, resources/list, resources/templates/list
  // and prompts/list (1..1000).
  size_t page_size = 50;
  // The model of tools whose `model` argument is absent (seed 000's).
  std::string default_model = std::string(ctxkit::kDefaultModel);
  // Least severe MCP log level sent before a client's logging/setLevel:
  // debug, info, notice, warning, error, critical, alert, emergency.
  std::string log_level = "warning";
};

// What a command line says about the configuration, each member set when
// its source was given (the CLI's --config, --db, --listen and --token-file).
// Error messages name each source by its flag.
struct HostConfigFlags {
  std::optional<std::string> config;      // a JSON object, or @FILE
  std::optional<std::string> db;          // the store's directory
  std::optional<std::string> listen;      // HOST:PORT
  std::optional<std::string> token_file;  // FILE
};

// Looks an environment variable up (std::getenv, or a table in tests);
// returns nullptr when unset.
using GetenvFn = const char* (*)(const char* name);

// The effective configuration for a command line, in the order of
// precedence above. --config takes a JSON object, or @FILE naming a file
// holding one. Errors: INVALID_ARGUMENT naming the source and the setting
// ("--config: page_size must be 1..1000", "CTXKIT_PORT: not a port
// number"), unknown --config keys included, so a typo is never ignored;
// NOT_FOUND / PERMISSION_DENIED for an unreadable @FILE.
StatusOr<HostConfig> LoadHostConfig(const HostConfigFlags& flags,
                                    GetenvFn getenv_fn);

// The configuration as one JSON object with the --config keys above (what
// --print-config prints), so that its output is itself a valid --config
// giving the same configuration, except for a string that is not valid
// UTF-8 (a path, as Linux allows any bytes; a model name the registry
// matches by its prefix): JSON text cannot hold those bytes, so each
// invalid sequence prints as U+FFFD and names something else.
std::string HostConfigToJson(const HostConfig& config);

}  // namespace ctxkit::host

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_CONFIG_H_
