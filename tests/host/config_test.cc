// LoadHostConfig: defaults, --config JSON (inline and @FILE), environment
// and flags in that order of precedence, and the errors of each source;
// HostConfigToJson round trips; the listen-address and token-file helpers
// (host/listen_address.h, http/auth.h).

#include "programs/ctxkit/host/config.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "programs/ctxkit/host/listen_address.h"
#include "programs/ctxkit/http/auth.h"
#include "programs/ctxkit/http/http_server.h"
#include "tests/host/host_fixture.h"

namespace ctxkit::host {
namespace {

// GetenvFn is a plain function pointer, so the fake environment is global.
std::map<std::string, std::string> g_env;

const char* FakeGetenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

struct EnvScope {
  explicit EnvScope(std::map<std::string, std::string> env) {
    g_env = std::move(env);
  }
  ~EnvScope() { g_env.clear(); }
};

HostConfigFlags MakeFlags(
    std::initializer_list<std::pair<std::string, std::string>> flags) {
  HostConfigFlags result;
  for (const auto& [name, value] : flags) {
    if (name == "--config") {
      result.config = value;
    } else if (name == "--db") {
      result.db = value;
    } else if (name == "--listen") {
      result.listen = value;
    } else {
      REQUIRE(name == "--token-file");
      result.token_file = value;
    }
  }
  return result;
}

StatusOr<HostConfig> Load(
    std::initializer_list<std::pair<std::string, std::string>> flags,
    std::map<std::string, std::string> env = {}) {
  EnvScope scope(std::move(env));
  return LoadHostConfig(MakeFlags(flags), FakeGetenv);
}

void CheckError(const StatusOr<HostConfig>& result, StatusCode code,
                const std::string& text) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == code);
  INFO(result.status().message());
  CHECK(result.status().message().find(text) != std::string::npos);
}

class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char name[] = "/tmp/ctxkit-config-test-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << content;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_CASE("defaults without any source") {
  auto config = Load({});
  REQUIRE(config.ok());
  CHECK(config->db_path.empty());
  CHECK(config->listen == "127.0.0.1:6789");
  CHECK(config->token_file.empty());
  CHECK(config->max_body_bytes == size_t{8} << 20);
  CHECK(config->max_message_bytes == size_t{64} << 20);
  CHECK(config->timeout_seconds == 30);
  CHECK(config->threads == 0);
  CHECK(config->page_size == 50);
  CHECK(config->default_model == "claude-3-5-sonnet");
  CHECK(config->log_level == "warning");
}

TEST_CASE("--config sets every key") {
  auto config = Load({{"--config",
                       R"({"db":"/d","listen":"[::1]:7000","token_file":"/t",
            "max_body_bytes":1000,"max_message_bytes":2000,
            "timeout_seconds":9,"threads":3,"page_size":10,
            "default_model":"gpt-4o","log_level":"debug"})"}});
  REQUIRE(config.ok());
  CHECK(config->db_path == "/d");
  CHECK(config->listen == "[::1]:7000");
  CHECK(config->token_file == "/t");
  CHECK(config->max_body_bytes == 1000);
  CHECK(config->max_message_bytes == 2000);
  CHECK(config->timeout_seconds == 9);
  CHECK(config->threads == 3);
  CHECK(config->page_size == 10);
  CHECK(config->default_model == "gpt-4o");
  CHECK(config->log_level == "debug");
}

TEST_CASE("precedence: flags > environment > --config > defaults") {
  const std::string json =
      R"({"port":1111,"listen":"127.0.0.2:1000","page_size":7,)"
      R"("log_level":"info","db":"/from-config"})";
  // "port" refines "listen" whatever the key order in the text.
  auto config = Load({{"--config", json}});
  REQUIRE(config.ok());
  CHECK(config->listen == "127.0.0.2:1111");
  CHECK(config->page_size == 7);
  CHECK(config->db_path == "/from-config");

  config = Load({{"--config", json}}, {{"CTXKIT_PORT", "2222"},
                                       {"CTXKIT_PAGE_SIZE", "8"},
                                       {"CTXKIT_DB", "/from-env"}});
  REQUIRE(config.ok());
  CHECK(config->listen == "127.0.0.2:2222");
  CHECK(config->page_size == 8);
  CHECK(config->log_level == "info");
  CHECK(config->db_path == "/from-env");

  config = Load({{"--config", json},
                 {"--listen", "localhost:3333"},
                 {"--db", "/from-flag"},
                 {"--token-file", "/tok"}},
                {{"CTXKIT_PORT", "2222"},
                 {"CTXKIT_LISTEN", "127.0.0.3:4444"},
                 {"CTXKIT_DB", "/from-env"},
                 {"CTXKIT_TOKEN_FILE", "/env-tok"}});
  REQUIRE(config.ok());
  CHECK(config->listen == "localhost:3333");
  CHECK(config->db_path == "/from-flag");
  CHECK(config->token_file == "/tok");

  // CTXKIT_PORT refines CTXKIT_LISTEN.
  config = Load({}, {{"CTXKIT_PORT", "2222"}, {"CTXKIT_LISTEN", "0.0.0.0:1"}});
  REQUIRE(config.ok());
  CHECK(config->listen == "0.0.0.0:2222");
}

TEST_CASE("empty environment variables count as unset") {
  auto config = Load({}, {{"CTXKIT_PORT", ""}, {"CTXKIT_DB", ""}});
  REQUIRE(config.ok());
  CHECK(config->listen == "127.0.0.1:6789");
  CHECK(config->db_path.empty());
}

TEST_CASE("--config @FILE") {
  TempFile file(R"({"threads": 5})");
  auto config = Load({{"--config", "@" + file.path()}});
  REQUIRE(config.ok());
  CHECK(config->threads == 5);

  CheckError(Load({{"--config", "@/nonexistent/ctxkit-config.json"}}),
             StatusCode::kNotFound, "cannot open");
  CheckError(Load({{"--config", "@"}}), StatusCode::kInvalidArgument,
             "file name");
}

TEST_CASE("--config errors name the key") {
  CheckError(Load({{"--config", R"({"page_sise":3})"}}),
             StatusCode::kInvalidArgument,
             "--config: unknown key 'page_sise'; did you mean 'page_size'? "
             "(known: db, listen,");
  CheckError(Load({{"--config", R"({"page_size":0})"}}),
             StatusCode::kInvalidArgument,
             "--config: page_size must be an integer in 1..1000");
  CheckError(Load({{"--config", R"({"page_size":1001})"}}),
             StatusCode::kInvalidArgument, "page_size");
  CheckError(Load({{"--config", R"({"threads":"4"})"}}),
             StatusCode::kInvalidArgument, "threads must be an integer");
  CheckError(Load({{"--config", R"({"threads":-1})"}}),
             StatusCode::kInvalidArgument, "threads");
  CheckError(Load({{"--config", R"({"timeout_seconds":1.5})"}}),
             StatusCode::kInvalidArgument, "timeout_seconds");
  CheckError(Load({{"--config", R"({"db":7})"}}), StatusCode::kInvalidArgument,
             "db must be a string");
  CheckError(Load({{"--config", R"({"port":70000})"}}),
             StatusCode::kInvalidArgument, "port must be a port number");
  CheckError(Load({{"--config", R"({"listen":"nohost"})"}}),
             StatusCode::kInvalidArgument, "listen");
  CheckError(Load({{"--config", R"({"log_level":"loud"})"}}),
             StatusCode::kInvalidArgument, "log_level must be one of");
  CheckError(Load({{"--config", R"({"default_model":"no-such-model-x"})"}}),
             StatusCode::kInvalidArgument, "unknown model");
  CheckError(Load({{"--config", R"({"threads":1,"threads":2})"}}),
             StatusCode::kInvalidArgument, "given twice");
  CheckError(Load({{"--config", "[1]"}}), StatusCode::kInvalidArgument,
             "must be a JSON object");
  CheckError(Load({{"--config", "{"}}), StatusCode::kInvalidArgument,
             "not valid JSON");
  CheckError(Load({{"--config", ""}}), StatusCode::kInvalidArgument,
             "--config");
}

TEST_CASE("environment and flag errors name their source") {
  CheckError(Load({}, {{"CTXKIT_PORT", "http"}}), StatusCode::kInvalidArgument,
             "CTXKIT_PORT: not a port number");
  CheckError(Load({}, {{"CTXKIT_PORT", "65536"}}), StatusCode::kInvalidArgument,
             "CTXKIT_PORT");
  CheckError(Load({}, {{"CTXKIT_THREADS", "-3"}}), StatusCode::kInvalidArgument,
             "CTXKIT_THREADS");
  CheckError(Load({}, {{"CTXKIT_MAX_BODY_BYTES", "0"}}),
             StatusCode::kInvalidArgument, "CTXKIT_MAX_BODY_BYTES");
  CheckError(Load({}, {{"CTXKIT_LISTEN", "1.2.3.4"}}),
             StatusCode::kInvalidArgument, "CTXKIT_LISTEN");
  CheckError(Load({}, {{"CTXKIT_LOG_LEVEL", "verbose"}}),
             StatusCode::kInvalidArgument, "CTXKIT_LOG_LEVEL");
  CheckError(Load({{"--listen", "::1:80"}}), StatusCode::kInvalidArgument,
             "needs brackets");
  CheckError(Load({{"--listen", "host:port"}}), StatusCode::kInvalidArgument,
             "--listen");
  CheckError(Load({{"--db", ""}}), StatusCode::kInvalidArgument,
             "--db: must not be empty");
  CheckError(Load({{"--token-file", ""}}), StatusCode::kInvalidArgument,
             "--token-file");
  // A flag wins, but a bad lower source is still an error: the
  // configuration is checked as a whole.
  CheckError(Load({{"--listen", "127.0.0.1:1"}}, {{"CTXKIT_PORT", "x"}}),
             StatusCode::kInvalidArgument, "CTXKIT_PORT");
}

TEST_CASE("HostConfigToJson is a valid --config giving the same values") {
  auto config = Load({{"--config", R"({"page_size":9,"log_level":"error"})"},
                      {"--listen", "[::1]:0"}});
  REQUIRE(config.ok());
  const std::string json = HostConfigToJson(*config);
  CHECK(
      json ==
      R"({"db":"","listen":"[::1]:0","token_file":"","max_body_bytes":8388608,)"
      R"("max_message_bytes":67108864,"timeout_seconds":30,"threads":0,)"
      R"("header_timeout_seconds":10,"body_timeout_seconds":60,)"
      R"("max_header_bytes":65536,"max_headers":100,)"
      R"("max_connections_per_client":256,"max_sessions":1024,)"
      R"("page_size":9,"default_model":"claude-3-5-sonnet","log_level":"error",)"
      R"("graph":{"messageLimitThreshold":10,"tokenLimitPercentage":80,)"
      R"("ignorePatterns":[],"autoSummarize":true,"hierarchicalContext":true,)"
      R"("metaSummaryThreshold":5,"maxHierarchyDepth":3,)"
      R"("similarityThreshold":0.6,"autoCleanupContexts":true,)"
      R"("trackApiCalls":true,"apiAnalyticsRetention":30,)"
      R"("fallbackToKeywordMatch":true,"model":"","contextWindowTokens":0,)"
      R"("maxSummaryTokens":512,"summaryWindow":200,"summaryHistory":10,)"
      R"("autoLinkLimit":5,"cleanupEvery":10,"cleanupMode":"archive",)"
      R"("embeddingDims":0}})");
  auto again = Load({{"--config", json}});
  REQUIRE(again.ok());
  CHECK(HostConfigToJson(*again) == json);
}

TEST_CASE("ParseListenAddress") {
  auto a = ParseListenAddress("127.0.0.1:6789");
  REQUIRE(a.ok());
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 6789);
  CHECK(a->loopback);
  a = ParseListenAddress("[::1]:0");
  REQUIRE(a.ok());
  CHECK(a->host == "::1");
  CHECK(a->loopback);
  a = ParseListenAddress("localhost:80");
  REQUIRE(a.ok());
  CHECK(a->loopback);
  a = ParseListenAddress("127.8.9.10:1");
  REQUIRE(a.ok());
  CHECK(a->loopback);
  for (const char* open : {"0.0.0.0:80", "[::]:80", "192.0.2.1:80",
                           "example.com:80", "128.0.0.1:1"}) {
    a = ParseListenAddress(open);
    REQUIRE(a.ok());
    CHECK_FALSE(a->loopback);
  }
  for (const char* bad : {"", ":80", "127.0.0.1", "127.0.0.1:", "1.2.3.4:x",
                          "1.2.3.4:65536", "1.2.3.4:-1", "::1:80", "[::1]",
                          "[::1]80", "[zz]:80", "a b:80", "h:123456"}) {
    INFO(bad);
    CHECK_FALSE(ParseListenAddress(bad).ok());
  }
  CHECK(FormatHostPort("::1", 8) == "[::1]:8");
  CHECK(FormatHostPort("localhost", 8) == "localhost:8");
}

TEST_CASE("ReadTokenFile and CheckServeConfig") {
  const std::string secret = "s3cret-0123456789abcdef0123456789";
  TempFile file("  " + secret + " \r\nsecond line\n");
  auto token = http::ReadTokenFile(file.path());
  REQUIRE(token.ok());
  CHECK(*token == secret);

  TempFile empty("\n\n");
  CHECK(http::ReadTokenFile(empty.path()).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(http::ReadTokenFile("/nonexistent/token").status().code() ==
        StatusCode::kNotFound);

  HostConfig config;
  config.listen = "0.0.0.0:80";
  auto checked = http::CheckServeConfig(config);
  REQUIRE_FALSE(checked.ok());
  CHECK(checked.status().code() == StatusCode::kFailedPrecondition);
  CHECK(checked.status().message().find("refusing to listen on 0.0.0.0:80") !=
        std::string::npos);
  config.token_file = file.path();
  checked = http::CheckServeConfig(config);
  REQUIRE(checked.ok());
  CHECK(*checked == secret);
  config.listen = "127.0.0.1:0";
  config.token_file.clear();
  checked = http::CheckServeConfig(config);
  REQUIRE(checked.ok());
  CHECK(checked->empty());
}

TEST_CASE(
    "ReadTokenFile refuses what another user could change, and short "
    "tokens") {
  const std::string secret(http::kMinTokenBytes, 'k');
  TempFile file(secret + "\n");
  REQUIRE(http::ReadTokenFile(file.path()).ok());

  const auto refused = [](const std::string& path, StatusCode code,
                          const std::string& rule) {
    auto token = http::ReadTokenFile(path);
    REQUIRE_FALSE(token.ok());
    CHECK(token.status().code() == code);
    const std::string& message = token.status().message();
    CHECK_MESSAGE(message.find("'" + path + "'") != std::string::npos, message);
    CHECK_MESSAGE(message.find(rule) != std::string::npos, message);
  };
  for (const mode_t mode : {0620, 0602, 0666}) {
    REQUIRE(chmod(file.path().c_str(), mode) == 0);
    refused(file.path(), StatusCode::kFailedPrecondition,
            "is writable by its group or others");
  }
  REQUIRE(chmod(file.path().c_str(), 0644) == 0);
  REQUIRE(http::ReadTokenFile(file.path()).ok());

  const std::string link = file.path() + ".link";
  REQUIRE(symlink(file.path().c_str(), link.c_str()) == 0);
  refused(link, StatusCode::kFailedPrecondition, "is a symbolic link");
  std::filesystem::remove(link);

  TempFile short_token(secret.substr(1) + "\n");
  refused(short_token.path(), StatusCode::kInvalidArgument,
          "is 31 bytes long: a token must be at least 32 bytes");
}

// ---- The context graph's options (seed 003, CG-13) ----

TEST_CASE("graph options: the seed's camelCase keys in --config") {
  auto config = Load({{"--config",
                       R"({"messageLimitThreshold":20,"tokenLimitPercentage":70,
            "ignorePatterns":["node_modules","*.log"],"autoSummarize":false,
            "hierarchicalContext":false,"metaSummaryThreshold":9,
            "maxHierarchyDepth":5,"useVectorDb":true,"useGraphDb":true,
            "similarityThreshold":0.75,"autoCleanupContexts":false,
            "trackApiCalls":false,"apiAnalyticsRetention":60,
            "fallbackToKeywordMatch":false,"port":8080,
            "contextDir":"./my-context"})"}});
  REQUIRE(config.ok());
  const GraphConfig& g = config->graph;
  CHECK(g.message_limit_threshold == 20);
  CHECK(g.token_limit_percentage == 70);
  CHECK(g.ignore_patterns == std::vector<std::string>{"node_modules", "*.log"});
  CHECK_FALSE(g.auto_summarize);
  CHECK_FALSE(g.hierarchical_context);
  CHECK(g.meta_summary_threshold == 9);
  CHECK(g.max_hierarchy_depth == 5);
  CHECK(g.similarity_threshold == 0.75);
  CHECK_FALSE(g.auto_cleanup_contexts);
  CHECK_FALSE(g.track_api_calls);
  CHECK(g.api_analytics_retention == 60);
  CHECK_FALSE(g.fallback_to_keyword_match);
  CHECK(config->listen == "127.0.0.1:8080");
  CHECK(config->db_path == "./my-context");  // contextDir is db
  CHECK(config->warnings.empty());

  // ctxkit's own options, in the "graph" section --print-config writes.
  auto own = Load({{"--config",
                    R"({"graph":{"model":"gpt-4o","contextWindowTokens":4096,
            "maxSummaryTokens":256,"summaryWindow":50,"summaryHistory":3,
            "autoLinkLimit":0,"cleanupEvery":20,"cleanupMode":"delete",
            "embeddingDims":384}})"}});
  REQUIRE(own.ok());
  CHECK(own->graph.model == "gpt-4o");
  CHECK(own->graph.context_window_tokens == 4096);
  CHECK(own->graph.max_summary_tokens == 256);
  CHECK(own->graph.summary_window == 50);
  CHECK(own->graph.summary_history == 3);
  CHECK(own->graph.auto_link_limit == 0);
  CHECK(own->graph.cleanup_every == 20);
  CHECK(own->graph.cleanup_mode == "delete");
  CHECK(own->graph.embedding_dims == 384);
}

TEST_CASE("graph options: UPPER_SNAKE environment variables") {
  auto config = Load({}, {{"MESSAGE_LIMIT_THRESHOLD", "20"},
                          {"TOKEN_LIMIT_PERCENTAGE", "70"},
                          {"IGNORE_PATTERNS", R"(["node_modules", ".*.log"])"},
                          {"AUTO_SUMMARIZE", "false"},
                          {"HIERARCHICAL_CONTEXT", "false"},
                          {"META_SUMMARY_THRESHOLD", "10"},
                          {"MAX_HIERARCHY_DEPTH", "5"},
                          {"SIMILARITY_THRESHOLD", "0.7"},
                          {"AUTO_CLEANUP_CONTEXTS", "false"},
                          {"TRACK_API_CALLS", "false"},
                          {"API_ANALYTICS_RETENTION", "60"},
                          {"FALLBACK_TO_KEYWORD_MATCH", "false"},
                          {"GRAPH_MODEL", "gpt-4o"},
                          {"CONTEXT_WINDOW_TOKENS", "8192"},
                          {"MAX_SUMMARY_TOKENS", "128"},
                          {"SUMMARY_WINDOW", "20"},
                          {"SUMMARY_HISTORY", "2"},
                          {"AUTO_LINK_LIMIT", "3"},
                          {"CLEANUP_EVERY", "5"},
                          {"CLEANUP_MODE", "delete"},
                          {"EMBEDDING_DIMS", "16"},
                          {"CONTEXT_DIR", "/ctx"},
                          {"PORT", "8080"}});
  REQUIRE(config.ok());
  const GraphConfig& g = config->graph;
  CHECK(g.message_limit_threshold == 20);
  CHECK(g.token_limit_percentage == 70);
  CHECK(g.ignore_patterns ==
        std::vector<std::string>{"node_modules", ".*.log"});
  CHECK_FALSE(g.auto_summarize);
  CHECK_FALSE(g.hierarchical_context);
  CHECK(g.meta_summary_threshold == 10);
  CHECK(g.max_hierarchy_depth == 5);
  CHECK(g.similarity_threshold == 0.7);
  CHECK_FALSE(g.auto_cleanup_contexts);
  CHECK_FALSE(g.track_api_calls);
  CHECK(g.api_analytics_retention == 60);
  CHECK_FALSE(g.fallback_to_keyword_match);
  CHECK(g.model == "gpt-4o");
  CHECK(g.context_window_tokens == 8192);
  CHECK(g.max_summary_tokens == 128);
  CHECK(g.summary_window == 20);
  CHECK(g.summary_history == 2);
  CHECK(g.auto_link_limit == 3);
  CHECK(g.cleanup_every == 5);
  CHECK(g.cleanup_mode == "delete");
  CHECK(g.embedding_dims == 16);
  CHECK(config->db_path == "/ctx");
  CHECK(config->listen == "127.0.0.1:8080");

  // ctxkit's own names win over the seed's aliases.
  auto both = Load({}, {{"CONTEXT_DIR", "/ctx"},
                        {"CTXKIT_DB", "/db"},
                        {"PORT", "8080"},
                        {"CTXKIT_PORT", "9090"}});
  REQUIRE(both.ok());
  CHECK(both->db_path == "/db");
  CHECK(both->listen == "127.0.0.1:9090");
}

TEST_CASE("graph options: defaults < --config < environment < flags") {
  auto config =
      Load({{"--config", R"({"messageLimitThreshold":20,)"
                         R"("graph":{"summaryWindow":30},)"
                         R"("contextDir":"/from-config"})"},
            {"--db", "/from-flag"}},
           {{"MESSAGE_LIMIT_THRESHOLD", "40"}, {"CONTEXT_DIR", "/from-env"}});
  REQUIRE(config.ok());
  CHECK(config->graph.message_limit_threshold == 40);  // env over --config
  CHECK(config->graph.summary_window == 30);           // --config over default
  CHECK(config->graph.token_limit_percentage == 80);   // default
  CHECK(config->db_path == "/from-flag");              // flag over env
  auto env = Load({{"--config", R"({"contextDir":"/from-config"})"}},
                  {{"CONTEXT_DIR", "/from-env"}});
  REQUIRE(env.ok());
  CHECK(env->db_path == "/from-env");
}

TEST_CASE("graph options: bad values name the option and the source") {
  const auto file = [](const std::string& json, const std::string& text) {
    CheckError(Load({{"--config", json}}), StatusCode::kInvalidArgument,
               "--config: " + text);
  };
  file(R"({"messageLimitThreshold":0})",
       "messageLimitThreshold must be an integer in 1..1000000 (got 0)");
  file(R"({"tokenLimitPercentage":101})",
       "tokenLimitPercentage must be an integer in 1..100 (got 101)");
  file(R"({"tokenLimitPercentage":50.5})",
       "tokenLimitPercentage must be an integer in 1..100");
  file(R"({"maxHierarchyDepth":17})", "maxHierarchyDepth must be");
  file(R"({"similarityThreshold":1.5})",
       "similarityThreshold must be a number in 0..1 (got 1.5)");
  file(R"({"similarityThreshold":-0.1})", "similarityThreshold must be");
  file(R"({"autoSummarize":"no"})", "autoSummarize must be true or false");
  file(R"({"ignorePatterns":"node_modules"})",
       "ignorePatterns must be an array of strings");
  file(R"({"ignorePatterns":["ok",3]})",
       "ignorePatterns must be an array of strings");
  file(R"({"ignorePatterns":["ok","!neg"]})", "ignorePatterns[1]: negation");
  file(R"({"ignorePatterns":["[abc"]})", "ignorePatterns[0]: '['");
  file(R"({"cleanupMode":"shred"})",
       "cleanupMode must be archive or delete (got 'shred')");
  file(R"({"model":"no-such-model"})", "model must be a known model");
  file(R"({"graph":{"summaryWindw":3}})", "unknown key 'graph.summaryWindw'");
  file(R"({"graph":3})", "graph must be an object");
  file(R"({"messageLimitTreshold":3})", "unknown key 'messageLimitTreshold'");
  file(R"({"summaryWindow":3,"graph":{"summaryWindow":4}})",
       "key 'summaryWindow' given twice");
  file(R"({"contextDir":"/a","db":"/b"})", "contextDir is another name for db");
  file(R"({"contextDir":1})", "contextDir must be a string");

  const auto env = [](const std::string& name, const std::string& value,
                      const std::string& text) {
    CheckError(Load({}, {{name, value}}), StatusCode::kInvalidArgument,
               name + ": " + text);
  };
  env("MESSAGE_LIMIT_THRESHOLD", "ten", "not an integer in 1..1000000");
  env("MESSAGE_LIMIT_THRESHOLD", "0", "messageLimitThreshold must be");
  env("SIMILARITY_THRESHOLD", "2", "similarityThreshold must be");
  env("SIMILARITY_THRESHOLD", "0.5x", "not a number in 0..1");
  env("AUTO_SUMMARIZE", "0", "not true or false: '0'");
  env("IGNORE_PATTERNS", "node_modules", "not an array of strings");
  env("IGNORE_PATTERNS", R"([""])", "ignorePatterns[0]");
  env("CLEANUP_MODE", "Archive", "cleanupMode must be archive or delete");
  env("PORT", "http", "not a port number");
  env("PORT", "70000", "port must be");
}

TEST_CASE("graph options: useGit and false useVectorDb warn, and are ignored") {
  auto config = Load({{"--config", R"({"useGit":true,"useVectorDb":false})"}},
                     {{"USE_GRAPH_DB", "false"}});
  REQUIRE(config.ok());
  REQUIRE(config->warnings.size() == 3);
  CHECK(config->warnings[0] ==
        "--config: useGit is ignored: ctxkit keeps contexts in its store and "
        "commits nothing to git");
  CHECK(config->warnings[1].find("--config: useVectorDb is ignored") == 0);
  CHECK(config->warnings[2].find("USE_GRAPH_DB: useGraphDb is ignored") == 0);
  // Not printed: they change nothing.
  CHECK(HostConfigToJson(*config).find("useGit") == std::string::npos);
  CheckError(Load({{"--config", R"({"useGit":"yes"})"}}),
             StatusCode::kInvalidArgument, "useGit must be true or false");
}

TEST_CASE("GraphOptions carries the configuration into ContextGraphOptions") {
  auto config = Load({{"--config",
                       R"({"default_model":"gpt-4o","messageLimitThreshold":20,
            "ignorePatterns":["tmp"],"similarityThreshold":0.5,
            "trackApiCalls":false,"apiAnalyticsRetention":90,
            "graph":{"cleanupMode":"delete","summaryHistory":4,
                     "contextWindowTokens":4096}})"}});
  REQUIRE(config.ok());
  ContextGraphOptions o = GraphOptions(*config);
  CHECK(o.model == "gpt-4o");  // default_model when model is unset
  CHECK(o.message_limit_threshold == 20);
  CHECK(o.ignore_patterns == std::vector<std::string>{"tmp"});
  CHECK(o.similarity_threshold == 0.5);
  CHECK_FALSE(o.track_api_calls);
  CHECK(o.cleanup_mode == CleanupMode::kDelete);
  CHECK(o.summary_history == 4);
  CHECK(o.context_window_tokens == 4096);
  CHECK(o.analytics == nullptr);  // the host's to set
  CHECK(GraphAnalyticsOptions(*config).retention_days == 90);
  CHECK(CheckContextGraphOptions(o).ok());

  // Every range the configuration accepts passes the graph's own checks.
  auto low = Load({{"--config",
                    R"({"graph":{"messageLimitThreshold":1,
            "tokenLimitPercentage":1,"metaSummaryThreshold":1,
            "maxHierarchyDepth":1,"similarityThreshold":0,
            "maxSummaryTokens":16,"summaryWindow":1,"summaryHistory":1,
            "autoLinkLimit":0,"cleanupEvery":1,"model":"gpt-4o"}})"}});
  REQUIRE(low.ok());
  CHECK(CheckContextGraphOptions(GraphOptions(*low)).ok());
  CHECK(GraphOptions(*low).model == "gpt-4o");
  auto high = Load({{"--config",
                     R"({"graph":{"messageLimitThreshold":1000000,
            "tokenLimitPercentage":100,"metaSummaryThreshold":1000000,
            "maxHierarchyDepth":16,"similarityThreshold":1,
            "maxSummaryTokens":32768,"summaryWindow":100000,
            "summaryHistory":1000,"autoLinkLimit":100,
            "cleanupEvery":1000000,"contextWindowTokens":1000000000}})"}});
  REQUIRE(high.ok());
  const Status checked = CheckContextGraphOptions(GraphOptions(*high));
  CHECK_MESSAGE(checked.ok(), checked.message());
}

TEST_CASE("a busy port is an error naming it; port 0 picks a free one") {
  HostConfig first_config;
  first_config.listen = "127.0.0.1:0";
  testing::TempServices first(first_config);
  auto server = http::HttpServer::Create(first.get());
  REQUIRE(server.ok());
  const int port = (*server)->port();
  CHECK(port > 0);
  CHECK((*server)->url() == "http://127.0.0.1:" + std::to_string(port));

  HostConfig second_config;
  second_config.listen = "127.0.0.1:" + std::to_string(port);
  testing::TempServices second(second_config);
  auto busy = http::HttpServer::Create(second.get());
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.status().code() == StatusCode::kUnavailable);
  INFO(busy.status().message());
  CHECK(busy.status().message().find("127.0.0.1:" + std::to_string(port)) !=
        std::string::npos);
}

}  // namespace
}  // namespace ctxkit::host
