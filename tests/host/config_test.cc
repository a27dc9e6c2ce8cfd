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

#include "programs/ctxkit/host/listen_address.h"
#include "programs/ctxkit/http/auth.h"
#include "programs/ctxkit/http/http_server.h"

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
      R"("page_size":9,"default_model":"claude-3-5-sonnet","log_level":"error"})");
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

}  // namespace
}  // namespace ctxkit::host
