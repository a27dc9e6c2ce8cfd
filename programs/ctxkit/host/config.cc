#include "programs/ctxkit/host/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ctxkit/model_registry.h"
#include "programs/ctxkit/host/files.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/host/listen_address.h"
#include "programs/ctxkit/host/text.h"
#include "simdjson.h"

namespace ctxkit::host {

namespace {

// A --config file is a handful of settings; anything this large is a
// mistake (a store file, a log) better reported than parsed.
constexpr size_t kMaxConfigFileBytes = size_t{1} << 20;

constexpr std::string_view kLogLevels[] = {"debug",   "info",     "notice",
                                           "warning", "error",    "critical",
                                           "alert",   "emergency"};

enum class Kind {
  kPath,      // a string; empty = unset (db, token_file)
  kListen,    // "HOST:PORT"
  kPort,      // 0..65535, replaces the port of the listen address
  kNumber,    // an unsigned integer in [min, max]
  kModel,     // a model the registry knows
  kLogLevel,  // one of kLogLevels
};

struct Setting {
  std::string_view key;  // --config key
  std::string_view env;  // environment variable
  Kind kind;
  uint64_t min = 0;
  uint64_t max = 0;
};

// In the order they are applied within one source: "listen" before "port",
// so that a port always refines the address of the same or an earlier
// source, whatever the key order in the JSON text.
constexpr Setting kSettings[] = {
    {"db", "CTXKIT_DB", Kind::kPath},
    {"listen", "CTXKIT_LISTEN", Kind::kListen},
    {"port", "CTXKIT_PORT", Kind::kPort, 0, 65535},
    {"token_file", "CTXKIT_TOKEN_FILE", Kind::kPath},
    {"max_body_bytes", "CTXKIT_MAX_BODY_BYTES", Kind::kNumber, 1,
     uint64_t{1} << 30},
    {"max_message_bytes", "CTXKIT_MAX_MESSAGE_BYTES", Kind::kNumber, 1,
     uint64_t{1} << 32},
    {"timeout_seconds", "CTXKIT_TIMEOUT_SECONDS", Kind::kNumber, 1, 86400},
    {"threads", "CTXKIT_THREADS", Kind::kNumber, 0, 1024},
    {"header_timeout_seconds", "CTXKIT_HEADER_TIMEOUT_SECONDS", Kind::kNumber,
     1, 3600},
    {"body_timeout_seconds", "CTXKIT_BODY_TIMEOUT_SECONDS", Kind::kNumber, 1,
     86400},
    {"max_header_bytes", "CTXKIT_MAX_HEADER_BYTES", Kind::kNumber, 1024,
     uint64_t{16} << 20},
    {"max_headers", "CTXKIT_MAX_HEADERS", Kind::kNumber, 1, 10000},
    {"max_connections_per_client", "CTXKIT_MAX_CONNECTIONS_PER_CLIENT",
     Kind::kNumber, 1, 1000000},
    {"max_sessions", "CTXKIT_MAX_SESSIONS", Kind::kNumber, 1, 1000000},
    {"page_size", "CTXKIT_PAGE_SIZE", Kind::kNumber, 1, 1000},
    {"default_model", "CTXKIT_DEFAULT_MODEL", Kind::kModel},
    {"log_level", "CTXKIT_LOG_LEVEL", Kind::kLogLevel},
};

using Value = std::variant<std::string, uint64_t>;

Status Invalid(std::string_view source, std::string_view message) {
  return Status(StatusCode::kInvalidArgument,
                std::string(source) + ": " + std::string(message));
}

std::string Requirement(const Setting& setting) {
  switch (setting.kind) {
    case Kind::kPath:
      return "a string";
    case Kind::kListen:
      return "a string HOST:PORT";
    case Kind::kPort:
      return "a port number (0..65535)";
    case Kind::kNumber:
      return "an integer in " + std::to_string(setting.min) + ".." +
             std::to_string(setting.max);
    case Kind::kModel:
      return "a known model name";
    case Kind::kLogLevel: {
      std::string names;
      for (std::string_view name : kLogLevels) {
        if (!names.empty()) names += ", ";
        names += name;
      }
      return "one of " + names;
    }
  }
  return "valid";
}

// `value` checked against `setting` and stored into `config`.
Status Apply(const Setting& setting, const Value& value,
             std::string_view source, HostConfig& config) {
  const auto wrong = [&](std::string_view detail = {}) {
    std::string message =
        std::string(setting.key) + " must be " + Requirement(setting);
    if (!detail.empty()) message += " (" + std::string(detail) + ")";
    return Invalid(source, message);
  };
  const bool numeric =
      setting.kind == Kind::kPort || setting.kind == Kind::kNumber;
  if (numeric != std::holds_alternative<uint64_t>(value)) return wrong();

  if (numeric) {
    const uint64_t n = std::get<uint64_t>(value);
    if (n < setting.min || n > setting.max) {
      return wrong("got " + std::to_string(n));
    }
    if (setting.kind == Kind::kPort) {
      // The address in effect is valid: every source that set it was
      // checked, and the default is.
      auto address = ParseListenAddress(config.listen);
      if (!address.ok()) return Invalid(source, address.status().message());
      config.listen = FormatHostPort(address->host, static_cast<int>(n));
    } else if (setting.key == "max_body_bytes") {
      config.max_body_bytes = static_cast<size_t>(n);
    } else if (setting.key == "max_message_bytes") {
      config.max_message_bytes = static_cast<size_t>(n);
    } else if (setting.key == "timeout_seconds") {
      config.timeout_seconds = static_cast<int>(n);
    } else if (setting.key == "threads") {
      config.threads = static_cast<int>(n);
    } else if (setting.key == "header_timeout_seconds") {
      config.header_timeout_seconds = static_cast<int>(n);
    } else if (setting.key == "body_timeout_seconds") {
      config.body_timeout_seconds = static_cast<int>(n);
    } else if (setting.key == "max_header_bytes") {
      config.max_header_bytes = static_cast<size_t>(n);
    } else if (setting.key == "max_headers") {
      config.max_headers = static_cast<size_t>(n);
    } else if (setting.key == "max_connections_per_client") {
      config.max_connections_per_client = static_cast<size_t>(n);
    } else if (setting.key == "max_sessions") {
      config.max_sessions = static_cast<size_t>(n);
    } else if (setting.key == "page_size") {
      config.page_size = static_cast<size_t>(n);
    }
    return Status();
  }

  const std::string& text = std::get<std::string>(value);
  switch (setting.kind) {
    case Kind::kPath:
      if (setting.key == "db") {
        config.db_path = text;
      } else {
        config.token_file = text;
      }
      return Status();
    case Kind::kListen: {
      auto address = ParseListenAddress(text);
      if (!address.ok()) {
        return Invalid(source, std::string(setting.key) + ": " +
                                   address.status().message());
      }
      config.listen = FormatHostPort(address->host, address->port);
      return Status();
    }
    case Kind::kModel:
      if (text.empty() || !ModelRegistry::Default().Find(text).ok()) {
        return wrong("unknown model '" + text + "'");
      }
      config.default_model = text;
      return Status();
    case Kind::kLogLevel:
      for (std::string_view name : kLogLevels) {
        if (text == name) {
          config.log_level = text;
          return Status();
        }
      }
      return wrong("got '" + text + "'");
    case Kind::kPort:
    case Kind::kNumber:
      break;
  }
  return wrong();
}

Status ReadConfigFile(const std::string& path, std::string& text) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return program::ErrnoStatus(errno, "--config: cannot open '" + path + "'");
  }
  char buffer[1 << 14];
  Status status;
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      status =
          program::ErrnoStatus(errno, "--config: cannot read '" + path + "'");
      break;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > kMaxConfigFileBytes) {
      status = Invalid("--config", "'" + path + "' is larger than " +
                                       std::to_string(kMaxConfigFileBytes) +
                                       " bytes");
      break;
    }
  }
  close(fd);
  return status;
}

Status ApplyConfigJson(std::string_view json, HostConfig& config) {
  constexpr std::string_view kSource = "--config";
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(json.data(), json.size()).get(root); error) {
    return Invalid(kSource, std::string("not valid JSON: ") +
                                simdjson::error_message(error));
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return Invalid(kSource, "must be a JSON object");
  }
  // Unknown and repeated keys first: a typo must never be silently ignored,
  // and a repeated key would make the order of the text matter.
  std::set<std::string_view> seen;
  for (const auto field : object) {
    const std::string_view key = field.key;
    bool known = false;
    for (const Setting& setting : kSettings) known |= setting.key == key;
    if (!known) {
      std::vector<std::string_view> names;
      std::string keys;
      for (const Setting& setting : kSettings) {
        names.push_back(setting.key);
        if (!keys.empty()) keys += ", ";
        keys += setting.key;
      }
      return Invalid(kSource, "unknown key '" + program::Printable(key) + "'" +
                                  program::DidYouMean(key, names) +
                                  " (known: " + keys + ")");
    }
    if (!seen.insert(key).second) {
      return Invalid(kSource, "key '" + std::string(key) + "' given twice");
    }
  }
  for (const Setting& setting : kSettings) {
    simdjson::dom::element element;
    if (object.at_key(setting.key).get(element) != simdjson::SUCCESS) continue;
    Value value;
    std::string_view text;
    uint64_t number = 0;
    if (element.get_string().get(text) == simdjson::SUCCESS) {
      value = std::string(text);
    } else if (element.get_uint64().get(number) == simdjson::SUCCESS) {
      value = number;
    } else {
      return Invalid(kSource, std::string(setting.key) + " must be " +
                                  Requirement(setting));
    }
    if (Status s = Apply(setting, value, kSource, config); !s.ok()) return s;
  }
  return Status();
}

Status ApplyEnvironment(GetenvFn getenv_fn, HostConfig& config) {
  for (const Setting& setting : kSettings) {
    const std::string env(setting.env);
    const char* raw = getenv_fn(env.c_str());
    // Empty means unset, as for CTXKIT_DB in store_location.h: `VAR= cmd`
    // is the usual way to switch a variable off for one command.
    if (raw == nullptr || *raw == '\0') continue;
    const std::string_view text(raw);
    Value value;
    if (setting.kind == Kind::kPort || setting.kind == Kind::kNumber) {
      uint64_t number = 0;
      const auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), number);
      if (error != std::errc() || end != text.data() + text.size()) {
        return Invalid(env, "not " + Requirement(setting) + ": '" +
                                std::string(text) + "'");
      }
      value = number;
    } else {
      value = std::string(text);
    }
    if (Status s = Apply(setting, value, env, config); !s.ok()) return s;
  }
  return Status();
}

Status ApplyFlags(const HostConfigFlags& flags, HostConfig& config) {
  if (flags.db) {
    if (flags.db->empty()) return Invalid("--db", "must not be empty");
    config.db_path = *flags.db;
  }
  if (flags.listen) {
    auto address = ParseListenAddress(*flags.listen);
    if (!address.ok()) return Invalid("--listen", address.status().message());
    config.listen = FormatHostPort(address->host, address->port);
  }
  if (flags.token_file) {
    if (flags.token_file->empty()) {
      return Invalid("--token-file", "must not be empty");
    }
    config.token_file = *flags.token_file;
  }
  return Status();
}

}  // namespace

StatusOr<HostConfig> LoadHostConfig(const HostConfigFlags& flags,
                                    GetenvFn getenv_fn) {
  HostConfig config;
  if (const std::optional<std::string>& json = flags.config) {
    std::string text;
    if (!json->empty() && json->front() == '@') {
      const std::string path = json->substr(1);
      if (path.empty()) return Invalid("--config", "@ needs a file name");
      if (Status s = ReadConfigFile(path, text); !s.ok()) return s;
    } else {
      text = *json;
    }
    if (Status s = ApplyConfigJson(text, config); !s.ok()) return s;
  }
  if (getenv_fn != nullptr) {
    if (Status s = ApplyEnvironment(getenv_fn, config); !s.ok()) return s;
  }
  if (Status s = ApplyFlags(flags, config); !s.ok()) return s;
  return config;
}

std::string HostConfigToJson(const HostConfig& config) {
  // "port" is left out: it is part of "listen", and printing both would
  // make the output say the same thing twice.
  program::JsonOut json;
  json.BeginObject()
      .Key("db")
      .String(config.db_path)
      .Key("listen")
      .String(config.listen)
      .Key("token_file")
      .String(config.token_file)
      .Key("max_body_bytes")
      .Uint(config.max_body_bytes)
      .Key("max_message_bytes")
      .Uint(config.max_message_bytes)
      .Key("timeout_seconds")
      .Int(config.timeout_seconds)
      .Key("threads")
      .Int(config.threads)
      .Key("header_timeout_seconds")
      .Int(config.header_timeout_seconds)
      .Key("body_timeout_seconds")
      .Int(config.body_timeout_seconds)
      .Key("max_header_bytes")
      .Uint(config.max_header_bytes)
      .Key("max_headers")
      .Uint(config.max_headers)
      .Key("max_connections_per_client")
      .Uint(config.max_connections_per_client)
      .Key("max_sessions")
      .Uint(config.max_sessions)
      .Key("page_size")
      .Uint(config.page_size)
      .Key("default_model")
      .String(config.default_model)
      .Key("log_level")
      .String(config.log_level)
      .EndObject();
  return json.str();
}

}  // namespace ctxkit::host
