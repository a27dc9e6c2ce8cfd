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
//
// The context graph's options (seed 003's, GraphConfig below) are --config
// keys in camelCase, either at the top level as the seed wrote them
// ({"messageLimitThreshold": 20}) or inside a "graph" object (what
// --print-config prints), and environment variables in UPPER_SNAKE
// (MESSAGE_LIMIT_THRESHOLD=20). Seed aliases: "contextDir" / CONTEXT_DIR for
// db, PORT for port (CTXKIT_DB and CTXKIT_PORT, read after them, win over
// them). "useGit" / USE_GIT, and useVectorDb / useGraphDb set to false, are
// accepted and ignored with a warning (HostConfig::warnings).

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_CONFIG_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ctxkit/analytics.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"

namespace ctxkit::host {

// The context graph's options, with ContextGraphOptions' meanings and
// ranges (GraphOptions' test checks that both ends of every range here pass
// the graph's own checks): member, default, --config key, range. The
// environment variable is the key in UPPER_SNAKE (messageLimitThreshold:
// MESSAGE_LIMIT_THRESHOLD).
struct GraphConfig {
  uint64_t message_limit_threshold = 10;  // messageLimitThreshold, 1..1e6
  uint64_t token_limit_percentage = 80;   // tokenLimitPercentage, 1..100
  // ignorePatterns / IGNORE_PATTERNS (a JSON array of strings in both),
  // checked as ContextGraph::Open checks them.
  std::vector<std::string> ignore_patterns;
  bool auto_summarize = true;             // autoSummarize
  bool hierarchical_context = true;       // hierarchicalContext
  uint64_t meta_summary_threshold = 5;    // metaSummaryThreshold, 1..1e6
  uint64_t max_hierarchy_depth = 3;       // maxHierarchyDepth, 1..16
  double similarity_threshold = 0.6;      // similarityThreshold, 0..1
  bool auto_cleanup_contexts = true;      // autoCleanupContexts
  bool track_api_calls = true;            // trackApiCalls
  uint64_t api_analytics_retention = 30;  // apiAnalyticsRetention, days
  bool fallback_to_keyword_match = true;  // fallbackToKeywordMatch
  // ctxkit's own (CG-13). `model` (environment GRAPH_MODEL: MODEL is too
  // common a name to claim) is the model of new contexts; empty = the
  // host's default_model.
  std::string model;
  // contextWindowTokens, 0..1e9 (0: the model's context window).
  uint64_t context_window_tokens = 0;
  uint64_t max_summary_tokens = 512;     // maxSummaryTokens, 16..32768
  uint64_t summary_window = 200;         // summaryWindow, 1..100000
  uint64_t summary_history = 10;         // summaryHistory, 1..1000
  uint64_t auto_link_limit = 5;          // autoLinkLimit, 0..100
  uint64_t cleanup_every = 10;           // cleanupEvery, 1..1e6
  std::string cleanup_mode = "archive";  // cleanupMode: archive or delete
  // embeddingDims, 0..4096: with N > 0 the host embeds each summary with
  // ctxkit's hashed embedder (MakeHashedEmbedder(N)), so get_similar_contexts
  // ranks by hybrid keyword and vector search; 0 (the default): keyword
  // search only. (The seed's vectorDb used a model; the host has none.)
  uint64_t embedding_dims = 0;
};

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
  // The context graph's options: the "graph" section of --print-config.
  GraphConfig graph;
  // Settings accepted but ignored (useGit, ...), one line each naming its
  // source, for the command to print on stderr. Not printed by
  // HostConfigToJson.
  std::vector<std::string> warnings;
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

// The options the host opens its ContextGraph with: `config.graph`, with
// the model falling back to config.default_model. The caller sets
// `analytics` (to the Analytics it owns and keeps alive longer than the
// graph, opened with GraphAnalyticsOptions) and, in tests, `clock`. The
// result passes ContextGraph::Open's checks for every configuration
// LoadHostConfig accepts.
ContextGraphOptions GraphOptions(const HostConfig& config);
// apiAnalyticsRetention as AnalyticsOptions::retention_days.
AnalyticsOptions GraphAnalyticsOptions(const HostConfig& config);

}  // namespace ctxkit::host

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_CONFIG_H_
