// libFuzzer target over the host's configuration (host/config.h):
// LoadHostConfig with a fuzzed --config, environment and flags, as
// `ctxkit mcp` and `ctxkit serve` read them from outside.
//
// An input is lines of NAME=VALUE (other lines are ignored; a later line
// replaces an earlier one of the same NAME):
//   config=TEXT       --config TEXT (a JSON object)
//   config=@TEXT      --config @FILE, FILE holding TEXT with every "\n"
//                     written as a line break (a config file of several
//                     lines)
//   db=, listen=, token-file=   the flags --db, --listen, --token-file
//   CTXKIT_...=VALUE  an environment variable, seen through GetenvFn
//
// Guarantees checked on every input (a broken one aborts, which libFuzzer
// reports as a crash with its input):
//   - the result is a configuration or INVALID_ARGUMENT whose message opens
//     with the source it blames ("--config: ", "--db: ", "--listen: ",
//     "--token-file: " or "CTXKIT_NAME: ", one of the sources given);
//   - a configuration holds every setting within its documented range:
//     the numbers, a listen address that parses, a known model, a log
//     level of the documented set;
//   - the flags win: --db, --listen and --token-file, when given and
//     accepted, are what the configuration says;
//   - HostConfigToJson's output is valid JSON that LoadHostConfig accepts
//     as --config and that gives the same configuration back (what
//     --print-config promises), when its strings are valid UTF-8
//     (config.h).
//
// Build and run: see tests/fuzz/CMakeLists.txt.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ctxkit/model_registry.h"
#include "programs/ctxkit/host/config.h"
#include "programs/ctxkit/host/listen_address.h"
#include "simdjson.h"

namespace {

using ctxkit::host::HostConfig;
using ctxkit::host::HostConfigFlags;

[[noreturn]] void Broken(const std::string& what, std::string_view detail) {
  std::fprintf(stderr, "guarantee broken: %s\n  detail: %.*s\n", what.c_str(),
               static_cast<int>(std::min<size_t>(detail.size(), 4000)),
               detail.data());
  std::abort();
}

// The environment GetenvFn sees: a plain function pointer, hence a global.
std::map<std::string, std::string>& Environment() {
  static auto* const environment = new std::map<std::string, std::string>;
  return *environment;
}

const char* FakeGetenv(const char* name) {
  const auto it = Environment().find(name);
  return it == Environment().end() ? nullptr : it->second.c_str();
}

std::string& ConfigFile() {
  static std::string* const path = new std::string;
  return *path;
}

void WriteConfigFile(std::string_view text) {
  std::string content;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 2) == "\\n") {
      content.push_back('\n');
      ++i;
    } else {
      content.push_back(text[i]);
    }
  }
  std::FILE* file = std::fopen(ConfigFile().c_str(), "wb");
  if (file == nullptr) Broken("cannot write the config file", ConfigFile());
  if (!content.empty() &&
      std::fwrite(content.data(), 1, content.size(), file) != content.size()) {
    Broken("cannot write the config file", ConfigFile());
  }
  std::fclose(file);
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The settings' documented ranges (config.h and HostConfig's comments).
void CheckRanges(const HostConfig& config, std::string_view input) {
  const auto fail = [&](const std::string& what) {
    Broken("setting out of range: " + what, input);
  };
  if (!ctxkit::host::ParseListenAddress(config.listen).ok()) fail("listen");
  if (config.max_body_bytes < 1 || config.max_body_bytes > (size_t{1} << 30)) {
    fail("max_body_bytes");
  }
  if (config.max_message_bytes < 1 ||
      config.max_message_bytes > (uint64_t{1} << 32)) {
    fail("max_message_bytes");
  }
  if (config.timeout_seconds < 1 || config.timeout_seconds > 86400) {
    fail("timeout_seconds");
  }
  if (config.threads < 0 || config.threads > 1024) fail("threads");
  if (config.page_size < 1 || config.page_size > 1000) fail("page_size");
  if (!ctxkit::ModelRegistry::Default().Find(config.default_model).ok()) {
    fail("default_model");
  }
  constexpr std::string_view kLevels[] = {"debug",   "info",     "notice",
                                          "warning", "error",    "critical",
                                          "alert",   "emergency"};
  bool level = false;
  for (std::string_view name : kLevels) level |= config.log_level == name;
  if (!level) fail("log_level");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  std::string base = "/dev/shm";
  if (access(base.c_str(), W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = base + "/ctxkit-config-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    Broken("cannot create a temporary directory", pattern);
  }
  ConfigFile() = pattern + "/config.json";
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(
        std::filesystem::path(ConfigFile()).parent_path(), ignored);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  HostConfigFlags flags;
  Environment().clear();
  for (size_t start = 0; start < input.size();) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view line = input.substr(start, end - start);
    start = end + 1;
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, equals);
    const std::string value(line.substr(equals + 1));
    if (name == "config") {
      if (StartsWith(value, "@")) {
        // Never a path from the input: "@/dev/stdin" would wait forever.
        WriteConfigFile(std::string_view(value).substr(1));
        flags.config = "@" + ConfigFile();
      } else {
        flags.config = value;
      }
    } else if (name == "db") {
      flags.db = value;
    } else if (name == "listen") {
      flags.listen = value;
    } else if (name == "token-file") {
      flags.token_file = value;
    } else if (StartsWith(name, "CTXKIT_")) {
      Environment()[std::string(name)] = value;
    }
  }

  auto config = ctxkit::host::LoadHostConfig(flags, FakeGetenv);
  if (!config.ok()) {
    if (config.status().code() != ctxkit::StatusCode::kInvalidArgument) {
      Broken(
          "an error other than INVALID_ARGUMENT: " + config.status().ToString(),
          input);
    }
    const std::string& message = config.status().message();
    bool blamed = (flags.config && StartsWith(message, "--config: ")) ||
                  (flags.db && StartsWith(message, "--db: ")) ||
                  (flags.listen && StartsWith(message, "--listen: ")) ||
                  (flags.token_file && StartsWith(message, "--token-file: "));
    for (const auto& [name, value] : Environment()) {
      blamed |= StartsWith(message, name + ": ");
    }
    if (!blamed)
      Broken("an error that names no given source: " + message, input);
    return 0;
  }

  CheckRanges(*config, input);
  if (flags.db && config->db_path != *flags.db) Broken("--db lost", input);
  if (flags.token_file && config->token_file != *flags.token_file) {
    Broken("--token-file lost", input);
  }
  if (flags.listen) {
    auto given = ctxkit::host::ParseListenAddress(*flags.listen);
    auto used = ctxkit::host::ParseListenAddress(config->listen);
    if (!given.ok() || !used.ok() || given->host != used->host ||
        given->port != used->port) {
      Broken("--listen lost: " + config->listen, input);
    }
  }

  // --print-config's output is itself a --config giving the same settings.
  const std::string printed = ctxkit::host::HostConfigToJson(*config);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(printed).get(root) != simdjson::SUCCESS ||
      !root.is_object()) {
    Broken("HostConfigToJson is not a JSON object: " + printed, input);
  }
  HostConfigFlags again;
  again.config = printed;
  auto reread = ctxkit::host::LoadHostConfig(again, nullptr);
  if (!reread.ok()) {
    Broken("HostConfigToJson's output is refused: " +
               reread.status().ToString() + "\n  printed: " + printed,
           input);
  }
  const std::string reprinted = ctxkit::host::HostConfigToJson(*reread);
  bool utf8 = true;
  for (const std::string* text :
       {&config->db_path, &config->token_file, &config->default_model}) {
    utf8 = utf8 && simdjson::validate_utf8(text->data(), text->size());
  }
  if (utf8 && reprinted != printed) {
    Broken("HostConfigToJson's output reads back differently:\n  " + printed +
               "\n  " + reprinted,
           input);
  }
  return 0;
}
