#include "programs/ctxkit/host/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ctxkit/analytics.h"
#include "ctxkit/context_graph.h"
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

// ---- The context graph's options (GraphConfig) ----

enum class GraphKind {
  kNumber,       // an unsigned integer in [min, max]
  kRatio,        // a number in [0, 1]
  kBool,         // true or false ("true" / "false" in the environment)
  kPatterns,     // an array of strings (a JSON array in the environment)
  kModel,        // "" or a model the registry knows
  kCleanupMode,  // archive or delete
  kIgnored,      // a boolean, ignored with a warning (useGit)
  kIgnoredFalse  // a boolean; false is ignored with a warning
};

struct GraphSetting {
  std::string_view key;  // --config key, camelCase
  std::string_view env;  // environment variable
  GraphKind kind;
  uint64_t min = 0;
  uint64_t max = 0;
  uint64_t GraphConfig::*number = nullptr;
  bool GraphConfig::*flag = nullptr;
  std::string_view ignored_because = {};
};

constexpr GraphSetting kGraphSettings[] = {
    {"messageLimitThreshold", "MESSAGE_LIMIT_THRESHOLD", GraphKind::kNumber, 1,
     1000000, &GraphConfig::message_limit_threshold},
    {"tokenLimitPercentage", "TOKEN_LIMIT_PERCENTAGE", GraphKind::kNumber, 1,
     100, &GraphConfig::token_limit_percentage},
    {"ignorePatterns", "IGNORE_PATTERNS", GraphKind::kPatterns},
    {"autoSummarize", "AUTO_SUMMARIZE", GraphKind::kBool, 0, 0, nullptr,
     &GraphConfig::auto_summarize},
    {"hierarchicalContext", "HIERARCHICAL_CONTEXT", GraphKind::kBool, 0, 0,
     nullptr, &GraphConfig::hierarchical_context},
    {"metaSummaryThreshold", "META_SUMMARY_THRESHOLD", GraphKind::kNumber, 1,
     1000000, &GraphConfig::meta_summary_threshold},
    {"maxHierarchyDepth", "MAX_HIERARCHY_DEPTH", GraphKind::kNumber, 1,
     static_cast<uint64_t>(ContextGraphLimits::kMaxHops),
     &GraphConfig::max_hierarchy_depth},
    {"useVectorDb", "USE_VECTOR_DB", GraphKind::kIgnoredFalse, 0, 0, nullptr,
     nullptr, "ctxkit always keeps the similarity index in the store"},
    {"useGraphDb", "USE_GRAPH_DB", GraphKind::kIgnoredFalse, 0, 0, nullptr,
     nullptr, "ctxkit always keeps the relationships in the store"},
    {"similarityThreshold", "SIMILARITY_THRESHOLD", GraphKind::kRatio},
    {"autoCleanupContexts", "AUTO_CLEANUP_CONTEXTS", GraphKind::kBool, 0, 0,
     nullptr, &GraphConfig::auto_cleanup_contexts},
    {"trackApiCalls", "TRACK_API_CALLS", GraphKind::kBool, 0, 0, nullptr,
     &GraphConfig::track_api_calls},
    {"apiAnalyticsRetention", "API_ANALYTICS_RETENTION", GraphKind::kNumber, 1,
     3650, &GraphConfig::api_analytics_retention},
    {"fallbackToKeywordMatch", "FALLBACK_TO_KEYWORD_MATCH", GraphKind::kBool, 0,
     0, nullptr, &GraphConfig::fallback_to_keyword_match},
    {"useGit", "USE_GIT", GraphKind::kIgnored, 0, 0, nullptr, nullptr,
     "ctxkit keeps contexts in its store and commits nothing to git"},
    {"model", "GRAPH_MODEL", GraphKind::kModel},
    {"contextWindowTokens", "CONTEXT_WINDOW_TOKENS", GraphKind::kNumber, 0,
     1000000000, &GraphConfig::context_window_tokens},
    {"maxSummaryTokens", "MAX_SUMMARY_TOKENS", GraphKind::kNumber, 16, 32768,
     &GraphConfig::max_summary_tokens},
    {"summaryWindow", "SUMMARY_WINDOW", GraphKind::kNumber, 1, 100000,
     &GraphConfig::summary_window},
    {"summaryHistory", "SUMMARY_HISTORY", GraphKind::kNumber, 1, 1000,
     &GraphConfig::summary_history},
    {"autoLinkLimit", "AUTO_LINK_LIMIT", GraphKind::kNumber, 0, 100,
     &GraphConfig::auto_link_limit},
    {"cleanupEvery", "CLEANUP_EVERY", GraphKind::kNumber, 1, 1000000,
     &GraphConfig::cleanup_every},
    {"cleanupMode", "CLEANUP_MODE", GraphKind::kCleanupMode},
    {"embeddingDims", "EMBEDDING_DIMS", GraphKind::kNumber, 0, 4096,
     &GraphConfig::embedding_dims},
};

using GraphValue =
    std::variant<bool, uint64_t, double, std::string, std::vector<std::string>>;

std::string GraphRequirement(const GraphSetting& setting) {
  switch (setting.kind) {
    case GraphKind::kNumber:
      return "an integer in " + std::to_string(setting.min) + ".." +
             std::to_string(setting.max);
    case GraphKind::kRatio:
      return "a number in 0..1";
    case GraphKind::kBool:
    case GraphKind::kIgnored:
    case GraphKind::kIgnoredFalse:
      return "true or false";
    case GraphKind::kPatterns:
      return "an array of strings";
    case GraphKind::kModel:
      return "a known model name (or \"\" for default_model)";
    case GraphKind::kCleanupMode:
      return "archive or delete";
  }
  return "valid";
}

// `value` checked against `setting` and stored into `config`.
Status ApplyGraph(const GraphSetting& setting, const GraphValue& value,
                  std::string_view source, HostConfig& config) {
  const auto wrong = [&](std::string_view detail = {}) {
    std::string message =
        std::string(setting.key) + " must be " + GraphRequirement(setting);
    if (!detail.empty()) message += " (" + std::string(detail) + ")";
    return Invalid(source, message);
  };
  GraphConfig& g = config.graph;
  switch (setting.kind) {
    case GraphKind::kNumber: {
      const uint64_t* n = std::get_if<uint64_t>(&value);
      if (n == nullptr) return wrong();
      if (*n < setting.min || *n > setting.max) {
        return wrong("got " + std::to_string(*n));
      }
      g.*setting.number = *n;
      return Status();
    }
    case GraphKind::kRatio: {
      double x = 0;
      if (const uint64_t* n = std::get_if<uint64_t>(&value)) {
        x = static_cast<double>(*n);
      } else if (const double* d = std::get_if<double>(&value)) {
        x = *d;
      } else {
        return wrong();
      }
      if (!(x >= 0 && x <= 1)) {
        char got[32];
        std::snprintf(got, sizeof got, "%g", x);
        return wrong(std::string("got ") + got);
      }
      g.similarity_threshold = x;
      return Status();
    }
    case GraphKind::kBool:
    case GraphKind::kIgnored:
    case GraphKind::kIgnoredFalse: {
      const bool* b = std::get_if<bool>(&value);
      if (b == nullptr) return wrong();
      if (setting.kind == GraphKind::kBool) {
        g.*setting.flag = *b;
      } else if (setting.kind == GraphKind::kIgnored || !*b) {
        config.warnings.push_back(
            std::string(source) + ": " + std::string(setting.key) +
            " is ignored: " + std::string(setting.ignored_because));
      }
      return Status();
    }
    case GraphKind::kPatterns: {
      const auto* list = std::get_if<std::vector<std::string>>(&value);
      if (list == nullptr) return wrong();
      ContextGraphOptions check;
      check.ignore_patterns = *list;
      if (Status s = CheckContextGraphOptions(check); !s.ok()) {
        // Open names its field; the configuration names its key.
        std::string message(s.message());
        constexpr std::string_view kField = "ignore_patterns";
        if (message.compare(0, kField.size(), kField) == 0) {
          message.replace(0, kField.size(), setting.key);
        }
        return Invalid(source, message);
      }
      g.ignore_patterns = *list;
      return Status();
    }
    case GraphKind::kModel: {
      const std::string* text = std::get_if<std::string>(&value);
      if (text == nullptr) return wrong();
      if (!text->empty() && !ModelRegistry::Default().Find(*text).ok()) {
        return wrong("unknown model '" + program::Printable(*text) + "'");
      }
      g.model = *text;
      return Status();
    }
    case GraphKind::kCleanupMode: {
      const std::string* text = std::get_if<std::string>(&value);
      if (text == nullptr) return wrong();
      if (*text != "archive" && *text != "delete") {
        return wrong("got '" + program::Printable(*text) + "'");
      }
      g.cleanup_mode = *text;
      return Status();
    }
  }
  return wrong();
}

// A --config value of a graph setting; nullopt when its JSON type fits no
// kind (ApplyGraph then names the requirement).
std::optional<GraphValue> GraphValueOf(simdjson::dom::element element) {
  bool b = false;
  uint64_t n = 0;
  double d = 0;
  std::string_view text;
  simdjson::dom::array array;
  if (element.get_bool().get(b) == simdjson::SUCCESS) return GraphValue(b);
  if (element.get_uint64().get(n) == simdjson::SUCCESS) return GraphValue(n);
  if (element.is_number() && element.get_double().get(d) == simdjson::SUCCESS) {
    return GraphValue(d);
  }
  if (element.get_string().get(text) == simdjson::SUCCESS) {
    return GraphValue(std::string(text));
  }
  if (element.get_array().get(array) == simdjson::SUCCESS) {
    std::vector<std::string> list;
    for (simdjson::dom::element item : array) {
      if (item.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
      list.emplace_back(text);
    }
    return GraphValue(std::move(list));
  }
  return std::nullopt;
}

// An environment variable's text as a value of `setting`'s kind; nullopt
// when it does not parse.
std::optional<GraphValue> GraphValueOfText(const GraphSetting& setting,
                                           std::string_view text) {
  switch (setting.kind) {
    case GraphKind::kNumber: {
      uint64_t n = 0;
      const auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), n);
      if (error != std::errc() || end != text.data() + text.size()) break;
      return GraphValue(n);
    }
    case GraphKind::kRatio: {
      double d = 0;
      const auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), d);
      if (error != std::errc() || end != text.data() + text.size()) break;
      return GraphValue(d);
    }
    case GraphKind::kBool:
    case GraphKind::kIgnored:
    case GraphKind::kIgnoredFalse:
      if (text == "true") return GraphValue(true);
      if (text == "false") return GraphValue(false);
      break;
    case GraphKind::kPatterns: {
      simdjson::dom::parser parser;
      simdjson::dom::element root;
      if (parser.parse(text.data(), text.size()).get(root) !=
              simdjson::SUCCESS ||
          !root.is_array()) {
        break;
      }
      return GraphValueOf(root);
    }
    case GraphKind::kModel:
    case GraphKind::kCleanupMode:
      return GraphValue(std::string(text));
  }
  return std::nullopt;
}

const GraphSetting* FindGraphSetting(std::string_view key) {
  for (const GraphSetting& setting : kGraphSettings) {
    if (setting.key == key) return &setting;
  }
  return nullptr;
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
  // and a repeated key would make the order of the text matter. The graph's
  // keys may stand at the top level (the seed's way) or in "graph" (what
  // --print-config prints), but not in both.
  std::vector<std::string_view> names;
  for (const Setting& setting : kSettings) names.push_back(setting.key);
  names.push_back("contextDir");
  names.push_back("graph");
  std::vector<std::string_view> graph_names;
  for (const GraphSetting& setting : kGraphSettings) {
    graph_names.push_back(setting.key);
  }
  const auto unknown = [&](std::string_view key, std::string_view where,
                           const std::vector<std::string_view>& known) {
    std::string keys;
    for (std::string_view name : known) {
      if (!keys.empty()) keys += ", ";
      keys += name;
    }
    return Invalid(kSource, "unknown key '" + std::string(where) +
                                program::Printable(key) + "'" +
                                program::DidYouMean(key, known) +
                                " (known: " + keys + ")");
  };
  std::set<std::string_view> seen;
  std::vector<std::pair<const GraphSetting*, simdjson::dom::element>> graph;
  for (const auto field : object) {
    const std::string_view key = field.key;
    if (!seen.insert(key).second) {
      return Invalid(kSource, "key '" + std::string(key) + "' given twice");
    }
    if (key == "graph") {
      simdjson::dom::object section;
      if (field.value.get_object().get(section) != simdjson::SUCCESS) {
        return Invalid(kSource, "graph must be an object");
      }
      for (const auto inner : section) {
        const GraphSetting* setting = FindGraphSetting(inner.key);
        if (setting == nullptr) {
          return unknown(inner.key, "graph.", graph_names);
        }
        graph.emplace_back(setting, inner.value);
      }
      continue;
    }
    if (const GraphSetting* setting = FindGraphSetting(key)) {
      graph.emplace_back(setting, field.value);
      continue;
    }
    bool known = key == "contextDir";
    for (const Setting& setting : kSettings) known |= setting.key == key;
    if (!known) {
      std::vector<std::string_view> all = names;
      all.insert(all.end(), graph_names.begin(), graph_names.end());
      return unknown(key, "", all);
    }
  }
  if (seen.count("contextDir") > 0 && seen.count("db") > 0) {
    return Invalid(kSource, "contextDir is another name for db: give one");
  }
  for (size_t i = 0; i < graph.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (graph[i].first == graph[j].first) {
        return Invalid(kSource, "key '" + std::string(graph[i].first->key) +
                                    "' given twice (at the top level and "
                                    "in graph)");
      }
    }
  }
  if (simdjson::dom::element alias;
      object.at_key("contextDir").get(alias) == simdjson::SUCCESS) {
    std::string_view text;
    if (alias.get_string().get(text) != simdjson::SUCCESS) {
      return Invalid(kSource, "contextDir must be a string");
    }
    if (Status s = Apply(kSettings[0], std::string(text), kSource, config);
        !s.ok()) {
      return s;
    }
  }
  for (const auto& [setting, element] : graph) {
    std::optional<GraphValue> value = GraphValueOf(element);
    if (!value) {
      return Invalid(kSource, std::string(setting->key) + " must be " +
                                  GraphRequirement(*setting));
    }
    if (Status s = ApplyGraph(*setting, *value, kSource, config); !s.ok()) {
      return s;
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
  // The seed's names for db and port, before ctxkit's own (which win).
  for (const auto& [alias, index] :
       {std::pair<const char*, size_t>{"CONTEXT_DIR", 0},
        std::pair<const char*, size_t>{"PORT", 2}}) {
    const char* raw = getenv_fn(alias);
    if (raw == nullptr || *raw == '\0') continue;
    const Setting& setting = kSettings[index];
    const std::string_view text(raw);
    Value value = std::string(text);
    if (setting.kind == Kind::kPort) {
      uint64_t number = 0;
      const auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), number);
      if (error != std::errc() || end != text.data() + text.size()) {
        return Invalid(alias, "not " + Requirement(setting) + ": '" +
                                  program::Printable(text) + "'");
      }
      value = number;
    }
    if (Status s = Apply(setting, value, alias, config); !s.ok()) return s;
  }
  for (const GraphSetting& setting : kGraphSettings) {
    const std::string env(setting.env);
    const char* raw = getenv_fn(env.c_str());
    if (raw == nullptr || *raw == '\0') continue;
    const std::optional<GraphValue> value = GraphValueOfText(setting, raw);
    if (!value) {
      return Invalid(env, "not " + GraphRequirement(setting) + ": '" +
                              program::Printable(raw) + "'");
    }
    if (Status s = ApplyGraph(setting, *value, env, config); !s.ok()) {
      return s;
    }
  }
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
      .String(config.log_level);
  const GraphConfig& g = config.graph;
  json.Key("graph")
      .BeginObject()
      .Key("messageLimitThreshold")
      .Uint(g.message_limit_threshold)
      .Key("tokenLimitPercentage")
      .Uint(g.token_limit_percentage)
      .Key("ignorePatterns")
      .BeginArray();
  for (const std::string& pattern : g.ignore_patterns) json.String(pattern);
  json.EndArray()
      .Key("autoSummarize")
      .Bool(g.auto_summarize)
      .Key("hierarchicalContext")
      .Bool(g.hierarchical_context)
      .Key("metaSummaryThreshold")
      .Uint(g.meta_summary_threshold)
      .Key("maxHierarchyDepth")
      .Uint(g.max_hierarchy_depth)
      .Key("similarityThreshold")
      .Double(g.similarity_threshold)
      .Key("autoCleanupContexts")
      .Bool(g.auto_cleanup_contexts)
      .Key("trackApiCalls")
      .Bool(g.track_api_calls)
      .Key("apiAnalyticsRetention")
      .Uint(g.api_analytics_retention)
      .Key("fallbackToKeywordMatch")
      .Bool(g.fallback_to_keyword_match)
      .Key("model")
      .String(g.model)
      .Key("contextWindowTokens")
      .Uint(g.context_window_tokens)
      .Key("maxSummaryTokens")
      .Uint(g.max_summary_tokens)
      .Key("summaryWindow")
      .Uint(g.summary_window)
      .Key("summaryHistory")
      .Uint(g.summary_history)
      .Key("autoLinkLimit")
      .Uint(g.auto_link_limit)
      .Key("cleanupEvery")
      .Uint(g.cleanup_every)
      .Key("cleanupMode")
      .String(g.cleanup_mode)
      .Key("embeddingDims")
      .Uint(g.embedding_dims)
      .EndObject()
      .EndObject();
  return json.str();
}

ContextGraphOptions GraphOptions(const HostConfig& config) {
  const GraphConfig& g = config.graph;
  ContextGraphOptions o;
  o.model = g.model.empty() ? config.default_model : g.model;
  o.auto_summarize = g.auto_summarize;
  o.message_limit_threshold = static_cast<uint32_t>(g.message_limit_threshold);
  o.token_limit_percentage = static_cast<uint32_t>(g.token_limit_percentage);
  o.context_window_tokens = g.context_window_tokens;
  o.max_summary_tokens = static_cast<uint32_t>(g.max_summary_tokens);
  o.summary_window = static_cast<uint32_t>(g.summary_window);
  o.summary_history = static_cast<uint32_t>(g.summary_history);
  o.hierarchical_context = g.hierarchical_context;
  o.max_hierarchy_depth = static_cast<uint32_t>(g.max_hierarchy_depth);
  o.meta_summary_threshold = static_cast<uint32_t>(g.meta_summary_threshold);
  o.similarity_threshold = g.similarity_threshold;
  o.fallback_to_keyword_match = g.fallback_to_keyword_match;
  o.auto_link_limit = static_cast<uint32_t>(g.auto_link_limit);
  o.auto_cleanup_contexts = g.auto_cleanup_contexts;
  o.cleanup_every = static_cast<uint32_t>(g.cleanup_every);
  o.cleanup_mode =
      g.cleanup_mode == "delete" ? CleanupMode::kDelete : CleanupMode::kArchive;
  o.ignore_patterns = g.ignore_patterns;
  o.track_api_calls = g.track_api_calls;
  return o;
}

AnalyticsOptions GraphAnalyticsOptions(const HostConfig& config) {
  AnalyticsOptions o;
  o.retention_days = static_cast<int64_t>(config.graph.api_analytics_retention);
  return o;
}

}  // namespace ctxkit::host
