// The C API of the context graph (c.h, "Context graph"): translation between
// C conventions and ctxkit::ContextGraph. Inputs with many optional members
// are read strictly by capi/request_json.h; documents are lib/graph's
// writers (graph_json.h), and the seed protocol's entry points answer
// through ctxkit/context_graph_seed.h, so the C ABI and the host say the same
// bytes.
//
// The summarizer: ContextGraphOptions fixes it at Open, yet the C handle
// installs and replaces one at any time. The handle therefore opens the
// graph with a SwitchSummarizer that forwards to the callback in force (or
// fails without one, which makes the graph write the extractive text); a
// summary copies the callback's shared_ptr under the mutex and calls it
// without the lock, so the host's destroy runs once no summary uses it.
//
// The embedder needs no switch: ContextGraph::SetEmbedder replaces it at any
// time, and the graph holds it by shared_ptr for the calls that started with
// it, so a CallbackEmbedder's destructor (the host's destroy) runs once it
// is replaced, or the graph closed, and no call uses it.

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "capi/c_internal.h"
#include "capi/request_json.h"
#include "capi/summarizer_callback.h"
#include "ctxkit/c.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/context_graph_seed.h"
#include "lib/graph/graph_json.h"
#include "lib/graph/metrics_json.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"
#include "simdjson.h"

namespace {

using ctxkit::Status;
using ctxkit::StatusCode;
using ctxkit::StatusOr;
using ctxkit::internal::ToAbsl;
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

class SwitchSummarizer final : public ctxkit::Summarizer {
 public:
  StatusOr<std::string> Summarize(
      const ctxkit::SummaryRequest& request) override {
    std::shared_ptr<CallbackSummarizer> current;
    {
      std::lock_guard<std::mutex> lock(mu_);
      current = current_;
    }
    if (current == nullptr) {
      return Status(StatusCode::kUnavailable, "no summarizer installed");
    }
    return current->Summarize(request);
  }

  // Installs `next`; the old one is returned so that its destroy callback
  // runs outside the lock.
  std::shared_ptr<CallbackSummarizer> Swap(
      std::shared_ptr<CallbackSummarizer> next) {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(current_, std::move(next));
  }

 private:
  std::mutex mu_;
  std::shared_ptr<CallbackSummarizer> current_;
};

// The host's ctxkit_embed_fn as an Embedder. It owns the host's user data:
// once armed, its destructor calls the host's destroy callback.
class CallbackEmbedder final : public ctxkit::Embedder {
 public:
  CallbackEmbedder(ctxkit_embed_fn fn, uint32_t dims, std::string model,
                   void* user_data)
      : fn_(fn), dims_(dims), model_(std::move(model)), user_data_(user_data) {}
  ~CallbackEmbedder() override {
    if (destroy_ != nullptr) destroy_(user_data_);
  }
  CallbackEmbedder(const CallbackEmbedder&) = delete;
  CallbackEmbedder& operator=(const CallbackEmbedder&) = delete;

  // Set only once the embedder is installed, so that a failed installation
  // does not release data the caller still owns.
  void Arm(ctxkit_destroy_fn destroy) { destroy_ = destroy; }

  uint32_t dims() const override { return dims_; }
  std::string_view model() const override { return model_; }

  Status Embed(std::span<const std::string_view> texts,
               std::span<float> out) override {
    // Copies, so that each text the host reads is NUL-terminated as c.h
    // promises.
    std::vector<std::string> copies(texts.begin(), texts.end());
    std::vector<const char*> data;
    std::vector<size_t> lens;
    data.reserve(copies.size());
    lens.reserve(copies.size());
    for (const std::string& t : copies) {
      data.push_back(t.c_str());
      lens.push_back(t.size());
    }
    const int rc = fn_(user_data_, data.data(), lens.data(), copies.size(),
                       dims_, out.data());
    if (rc != 0) {
      return Status(StatusCode::kUnknown,
                    absl::StrFormat("embedder callback returned %d", rc));
    }
    return Status();
  }

 private:
  const ctxkit_embed_fn fn_;
  const uint32_t dims_;
  const std::string model_;
  void* const user_data_;
  ctxkit_destroy_fn destroy_ = nullptr;
};

}  // namespace

struct ctxkit_graph {
  // Kept open for the graph, which is destroyed first (members are
  // destroyed in reverse order).
  std::shared_ptr<ctxkit::Store> store;
  std::shared_ptr<ctxkit::ConversationStore> conversations;
  // ContextGraphOptions::analytics borrows it; null without one.
  std::shared_ptr<ctxkit::Analytics> analytics;
  std::shared_ptr<SwitchSummarizer> summarizer;
  std::unique_ptr<ctxkit::ContextGraph> graph;
};

namespace {

// The graph documents carry the C ABI's schema_version first: a writer's
// object always starts with '{' and holds "success".
absl::StatusOr<std::string> Versioned(absl::StatusOr<std::string> doc) {
  if (!doc.ok()) return doc;
  if (doc->empty() || (*doc)[0] != '{') {
    return absl::InternalError("graph document is not an object");
  }
  doc->insert(1, "\"schema_version\":1,");
  return doc;
}

// An embedding size from C: INVALID_ARGUMENT naming `name` outside
// 1..kMaxEmbeddingDims (checked here, before it narrows to uint32_t).
absl::Status CheckDims(std::string_view name, size_t dims) {
  if (dims < 1 || dims > ctxkit::kMaxEmbeddingDims) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is %d; it must be between 1 and %d", name, dims,
                        ctxkit::kMaxEmbeddingDims));
  }
  return absl::OkStatus();
}

// A uint32 option or argument: INVALID_ARGUMENT naming `key` outside
// [0, 2^32); the graph checks the tighter ranges itself.
std::optional<uint32_t> U32(Request& r, std::string_view key,
                            absl::Status& status) {
  std::optional<int64_t> v = r.Int(key);
  if (!v.has_value()) return std::nullopt;
  if (*v < 0 || *v > std::numeric_limits<uint32_t>::max()) {
    if (status.ok()) {
      status = absl::InvalidArgumentError(
          std::string(key) + " is " + std::to_string(*v) +
          "; it must be between 0 and 4294967295");
    }
    return std::nullopt;
  }
  return static_cast<uint32_t>(*v);
}

absl::StatusOr<ctxkit::CleanupMode> ParseMode(std::string_view key,
                                              std::string_view mode) {
  if (mode == "archive") return ctxkit::CleanupMode::kArchive;
  if (mode == "delete") return ctxkit::CleanupMode::kDelete;
  return absl::InvalidArgumentError(std::string(key) + " is \"" +
                                    std::string(mode) +
                                    "\"; it must be archive or delete");
}

absl::StatusOr<ctxkit::EdgeDirection> ParseDirection(std::string_view d) {
  if (d == "both") return ctxkit::EdgeDirection::kBoth;
  if (d == "outgoing") return ctxkit::EdgeDirection::kOutgoing;
  if (d == "incoming") return ctxkit::EdgeDirection::kIncoming;
  return absl::InvalidArgumentError("direction is \"" + std::string(d) +
                                    "\"; it must be incoming, outgoing or "
                                    "both");
}

std::string_view Str(StringArg a) { return View(a.data, a.len); }

// The frame of a document call: checks the handle, outputs and string
// arguments, parses `json` (NULL: {}) against `known` and returns
// call(request)'s document.
template <typename Call>
int RunGraph(ctxkit_graph* graph, std::initializer_list<Arg> args,
             const char* json, size_t json_len,
             std::span<const std::string_view> known, char** out_json,
             size_t* out_json_len, char** out_error, Call call) {
  if (int rc = StartDoc(graph, "graph", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs(args, out_error); rc >= 0) return rc;
  if (int rc = CheckArgs({{"options_json", json, json_len}}, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    Request request;
    absl::Status parsed = request.Parse(
        json == nullptr ? std::string_view("{}") : View(json, json_len), known);
    if (!parsed.ok()) return Report(parsed, out_error);
    absl::StatusOr<std::string> doc = call(request);
    return ReturnResult(doc, out_json, out_json_len, out_error);
  });
}

// A call without a document.
template <typename Call>
int RunPlain(ctxkit_graph* graph, std::initializer_list<Arg> args,
             char** out_error, Call call) {
  if (graph == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "graph must not be NULL");
  }
  if (int rc = CheckArgs(args, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] { return Report(call(), out_error); });
}

constexpr std::array<std::string_view, 19> kOpenKeys = {
    "model",
    "autoSummarize",
    "messageLimitThreshold",
    "tokenLimitPercentage",
    "contextWindowTokens",
    "maxSummaryTokens",
    "summaryWindow",
    "summaryHistory",
    "hierarchicalContext",
    "maxHierarchyDepth",
    "metaSummaryThreshold",
    "similarityThreshold",
    "fallbackToKeywordMatch",
    "autoLinkLimit",
    "autoCleanupContexts",
    "cleanupEvery",
    "cleanupMode",
    "trackApiCalls",
    "ignorePatterns"};

// Open names an option it refuses by its C++ name ("cleanup_every is 0;
// ..."); the caller wrote the camelCase one.
std::string CamelCaseOption(std::string message) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 11>
      kNames = {{{"message_limit_threshold", "messageLimitThreshold"},
                 {"token_limit_percentage", "tokenLimitPercentage"},
                 {"max_summary_tokens", "maxSummaryTokens"},
                 {"summary_window", "summaryWindow"},
                 {"summary_history", "summaryHistory"},
                 {"max_hierarchy_depth", "maxHierarchyDepth"},
                 {"meta_summary_threshold", "metaSummaryThreshold"},
                 {"cleanup_every", "cleanupEvery"},
                 {"auto_link_limit", "autoLinkLimit"},
                 {"similarity_threshold", "similarityThreshold"},
                 {"ignore_patterns", "ignorePatterns"}}};
  for (const auto& [snake, camel] : kNames) {
    if (std::string_view(message).substr(0, snake.size()) == snake) {
      message.replace(0, snake.size(), camel);
      break;
    }
  }
  return message;
}

absl::Status ReadOptions(Request& r, ctxkit::ContextGraphOptions& o) {
  absl::Status status;
  auto u32 = [&](std::string_view key, uint32_t& field) {
    if (std::optional<uint32_t> v = U32(r, key, status)) field = *v;
  };
  auto flag = [&](std::string_view key, bool& field) {
    if (std::optional<bool> v = r.Bool(key)) field = *v;
  };
  if (StringArg model = r.String("model"); model.data != nullptr) {
    o.model = std::string(Str(model));
  }
  flag("autoSummarize", o.auto_summarize);
  u32("messageLimitThreshold", o.message_limit_threshold);
  u32("tokenLimitPercentage", o.token_limit_percentage);
  if (std::optional<int64_t> v = r.Int("contextWindowTokens")) {
    if (*v < 0 && status.ok()) {
      status = absl::InvalidArgumentError("contextWindowTokens is " +
                                          std::to_string(*v) +
                                          "; it must be 0 or more");
    }
    o.context_window_tokens = static_cast<uint64_t>(*v);
  }
  u32("maxSummaryTokens", o.max_summary_tokens);
  u32("summaryWindow", o.summary_window);
  u32("summaryHistory", o.summary_history);
  flag("hierarchicalContext", o.hierarchical_context);
  u32("maxHierarchyDepth", o.max_hierarchy_depth);
  u32("metaSummaryThreshold", o.meta_summary_threshold);
  if (std::optional<double> v = r.Double("similarityThreshold")) {
    o.similarity_threshold = *v;
  }
  flag("fallbackToKeywordMatch", o.fallback_to_keyword_match);
  u32("autoLinkLimit", o.auto_link_limit);
  flag("autoCleanupContexts", o.auto_cleanup_contexts);
  u32("cleanupEvery", o.cleanup_every);
  if (StringArg mode = r.String("cleanupMode"); mode.data != nullptr) {
    absl::StatusOr<ctxkit::CleanupMode> m = ParseMode("cleanupMode", Str(mode));
    if (m.ok()) {
      o.cleanup_mode = *m;
    } else if (status.ok()) {
      status = m.status();
    }
  }
  flag("trackApiCalls", o.track_api_calls);
  if (auto v = r.Strings("ignorePatterns")) o.ignore_patterns = std::move(*v);
  if (!r.status().ok()) return r.status();
  return status;
}

// One message object {role, content, importance?, tags?}; errors are
// prefixed with `where` ("messages[2]: ") for the batch.
absl::StatusOr<ctxkit::GraphMessage> ReadMessage(std::string_view json,
                                                 const std::string& where) {
  static constexpr std::array<std::string_view, 4> kKeys = {
      "role", "content", "importance", "tags"};
  Request r;
  absl::Status s = r.Parse(json, kKeys);
  ctxkit::GraphMessage m;
  if (s.ok()) {
    StringArg role = r.String("role", true);
    StringArg content = r.String("content", true);
    StringArg importance = r.String("importance");
    std::optional<std::vector<std::string>> tags = r.Strings("tags");
    s = r.status();
    if (s.ok()) {
      StatusOr<ctxkit::MessageRole> parsed =
          ctxkit::ParseMessageRole(Str(role));
      if (!parsed.ok()) {
        s = ToAbsl(parsed.status());
      } else {
        m.role = *parsed;
        m.content = std::string(Str(content));
        m.importance = std::string(Str(importance));
        if (tags.has_value()) m.tags = std::move(*tags);
      }
    }
  }
  if (!s.ok()) {
    return absl::Status(s.code(), where + std::string(s.message()));
  }
  return m;
}

// The seed protocol's answer as a C result (c.h,
// ctxkit_graph_context_memory).
int ReturnSeed(const ctxkit::graph::SeedAnswer& a, char** out_json,
               size_t* out_json_len, char** out_error) {
  if (a.http_status == 200 && !a.is_error) {
    return ReturnDoc(a.json, out_json, out_json_len, out_error);
  }
  int code = a.http_status == 404   ? CTXKIT_NOT_FOUND
             : a.http_status == 500 ? CTXKIT_INTERNAL
                                    : CTXKIT_INVALID_ARGUMENT;
  return Fail(out_error, code, a.error);
}

}  // namespace

int ctxkit_graph_open(ctxkit_store* store, ctxkit_conversations* convs,
                      ctxkit_analytics* analytics, const char* options_json,
                      size_t options_json_len, ctxkit_graph** out,
                      char** out_error) {
  if (out != nullptr) *out = nullptr;
  if (store == nullptr || convs == nullptr || out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "store, convs and out must not be NULL");
  }
  if (int rc = CheckArgs({{"options_json", options_json, options_json_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::ContextGraphOptions options;
    if (options_json != nullptr) {
      Request request;
      absl::Status s =
          request.Parse(View(options_json, options_json_len), kOpenKeys);
      if (s.ok()) s = ReadOptions(request, options);
      if (!s.ok()) return Report(s, out_error);
    }
    auto handle = std::make_unique<ctxkit_graph>();
    handle->store = store->store;
    handle->conversations = convs->conversations;
    if (analytics != nullptr) {
      handle->analytics = analytics->analytics;
      options.analytics = handle->analytics.get();
    }
    handle->summarizer = std::make_shared<SwitchSummarizer>();
    options.summarizer = handle->summarizer;
    StatusOr<std::unique_ptr<ctxkit::ContextGraph>> graph =
        ctxkit::ContextGraph::Open(*handle->store, *handle->conversations,
                                   std::move(options));
    if (!graph.ok()) {
      return Fail(out_error, static_cast<int>(graph.status().code()),
                  CamelCaseOption(graph.status().message()));
    }
    handle->graph = std::move(*graph);
    *out = handle.release();
    return Ok(out_error);
  });
}

void ctxkit_graph_close(ctxkit_graph* graph) { delete graph; }

int ctxkit_graph_add_message(ctxkit_graph* graph, const char* id, size_t id_len,
                             const char* message_json, size_t message_json_len,
                             char** out_json, size_t* out_json_len,
                             char** out_error) {
  if (int rc = StartDoc(graph, "graph", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len},
                          {"message_json", message_json, message_json_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    absl::StatusOr<ctxkit::GraphMessage> m =
        ReadMessage(View(message_json, message_json_len), "");
    if (!m.ok()) return Report(m.status(), out_error);
    StatusOr<ctxkit::AddGraphMessagesResult> r =
        graph->graph->AddMessage(View(id, id_len), *m);
    if (!r.ok()) return Report(r.status(), out_error);
    return ReturnResult(Versioned(ctxkit::graph::AddResultJson(*r)), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_graph_add_messages(ctxkit_graph* graph, const char* id,
                              size_t id_len, const char* messages_json,
                              size_t messages_json_len, char** out_json,
                              size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(graph, "graph", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len},
                          {"messages_json", messages_json, messages_json_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    simdjson::dom::parser parser;
    absl::StatusOr<simdjson::dom::element> root = ctxkit::internal::ParseJson(
        parser, View(messages_json, messages_json_len), "messages_json");
    if (!root.ok()) return Report(root.status(), out_error);
    absl::StatusOr<simdjson::dom::array> array =
        ctxkit::internal::AsArray(*root, "messages");
    if (!array.ok()) return Report(array.status(), out_error);
    std::vector<ctxkit::GraphMessage> messages;
    size_t i = 0;
    for (simdjson::dom::element e : *array) {
      absl::StatusOr<ctxkit::GraphMessage> m =
          ReadMessage(simdjson::minify(e),
                      ctxkit::internal::JsonIndexPath("messages", i++) + ": ");
      if (!m.ok()) return Report(m.status(), out_error);
      messages.push_back(*std::move(m));
    }
    StatusOr<ctxkit::AddGraphMessagesResult> r =
        graph->graph->AddMessages(View(id, id_len), messages);
    if (!r.ok()) return Report(r.status(), out_error);
    return ReturnResult(Versioned(ctxkit::graph::AddResultJson(*r)), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_graph_retrieve(ctxkit_graph* graph, const char* id, size_t id_len,
                          const char* options_json, size_t options_json_len,
                          char** out_json, size_t* out_json_len,
                          char** out_error) {
  static constexpr std::array<std::string_view, 4> kKeys = {
      "limit", "beforeSeq", "includeSummary", "summaryHistory"};
  return RunGraph(
      graph, {{"id", id, id_len}}, options_json, options_json_len, kKeys,
      out_json, out_json_len, out_error,
      [&](Request& r) -> absl::StatusOr<std::string> {
        absl::Status s;
        ctxkit::RetrieveOptions o;
        if (std::optional<uint32_t> v = U32(r, "limit", s)) o.limit = *v;
        if (std::optional<int64_t> v = r.Int("beforeSeq")) {
          if (*v < 0 && s.ok()) {
            s = absl::InvalidArgumentError("beforeSeq must be 0 or more");
          }
          o.before_seq = static_cast<uint64_t>(*v);
        }
        if (std::optional<bool> v = r.Bool("includeSummary")) {
          o.include_summary = *v;
        }
        if (std::optional<bool> v = r.Bool("summaryHistory")) {
          o.summary_history = *v;
        }
        if (!r.status().ok()) return r.status();
        if (!s.ok()) return s;
        StatusOr<ctxkit::ContextDetail> d =
            graph->graph->Retrieve(View(id, id_len), o);
        if (!d.ok()) return ToAbsl(d.status());
        StatusOr<ctxkit::ContextHierarchy> h =
            graph->graph->Hierarchy(View(id, id_len));
        if (!h.ok()) return ToAbsl(h.status());
        return Versioned(ctxkit::graph::DetailJson(*d, &*h));
      });
}

int ctxkit_graph_summarize(ctxkit_graph* graph, const char* id, size_t id_len,
                           int force, char** out_json, size_t* out_json_len,
                           char** out_error) {
  return RunGraph(
      graph, {{"id", id, id_len}}, nullptr, 0, {}, out_json, out_json_len,
      out_error, [&](Request&) -> absl::StatusOr<std::string> {
        StatusOr<ctxkit::ContextSummary> s =
            graph->graph->Summarize(View(id, id_len), {.force = force != 0});
        if (!s.ok()) return ToAbsl(s.status());
        return Versioned(ctxkit::graph::SummaryJson(*s));
      });
}

int ctxkit_graph_add_relationship(ctxkit_graph* graph, const char* edge_json,
                                  size_t edge_json_len, char** out_json,
                                  size_t* out_json_len, char** out_error) {
  static constexpr std::array<std::string_view, 9> kKeys = {
      "sourceContextId", "targetContextId", "relationshipType",
      "weight",          "metadata",        "validAt",
      "invalidAt",       "createMissing",   "replaceParent"};
  if (edge_json == nullptr && graph != nullptr) {
    if (out_json != nullptr) *out_json = nullptr;
    if (out_json_len != nullptr) *out_json_len = 0;
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "edge_json must not be NULL");
  }
  return RunGraph(
      graph, {}, edge_json, edge_json_len, kKeys, out_json, out_json_len,
      out_error, [&](Request& r) -> absl::StatusOr<std::string> {
        ctxkit::NewRelationship e;
        e.source = std::string(Str(r.String("sourceContextId", true)));
        e.target = std::string(Str(r.String("targetContextId", true)));
        e.type = std::string(Str(r.String("relationshipType", true)));
        if (std::optional<double> v = r.Double("weight")) e.weight = *v;
        if (StringArg m = r.Json("metadata", false); m.data != nullptr) {
          e.metadata = std::string(Str(m));
        }
        e.valid_at = r.Int("validAt");
        e.invalid_at = r.Int("invalidAt");
        e.create_missing = r.Bool("createMissing").value_or(false);
        e.replace_parent = r.Bool("replaceParent").value_or(false);
        if (!r.status().ok()) return r.status();
        StatusOr<ctxkit::RelationshipUpsert> u =
            graph->graph->AddRelationship(e);
        if (!u.ok()) return ToAbsl(u.status());
        return Versioned(ctxkit::graph::UpsertJson(*u));
      });
}

int ctxkit_graph_remove_relationship(ctxkit_graph* graph, const char* source,
                                     size_t source_len, const char* target,
                                     size_t target_len, const char* type,
                                     size_t type_len, char** out_error) {
  return RunPlain(graph,
                  {{"source", source, source_len},
                   {"target", target, target_len},
                   {"type", type, type_len}},
                  out_error, [&] {
                    return graph->graph->RemoveRelationship(
                        View(source, source_len), View(target, target_len),
                        View(type, type_len));
                  });
}

int ctxkit_graph_invalidate_relationship(ctxkit_graph* graph,
                                         const char* source, size_t source_len,
                                         const char* target, size_t target_len,
                                         const char* type, size_t type_len,
                                         const int64_t* at, char** out_json,
                                         size_t* out_json_len,
                                         char** out_error) {
  return RunGraph(graph,
                  {{"source", source, source_len},
                   {"target", target, target_len},
                   {"type", type, type_len}},
                  nullptr, 0, {}, out_json, out_json_len, out_error,
                  [&](Request&) -> absl::StatusOr<std::string> {
                    std::optional<int64_t> when;
                    if (at != nullptr) when = *at;
                    StatusOr<ctxkit::Relationship> r =
                        graph->graph->InvalidateRelationship(
                            View(source, source_len), View(target, target_len),
                            View(type, type_len), when);
                    if (!r.ok()) return ToAbsl(r.status());
                    return Versioned(ctxkit::graph::RelationshipJson(*r));
                  });
}

int ctxkit_graph_related(ctxkit_graph* graph, const char* id, size_t id_len,
                         const char* options_json, size_t options_json_len,
                         char** out_json, size_t* out_json_len,
                         char** out_error) {
  static constexpr std::array<std::string_view, 11> kKeys = {"relationshipType",
                                                             "direction",
                                                             "minWeight",
                                                             "limit",
                                                             "offset",
                                                             "asOf",
                                                             "includeExpired",
                                                             "includeArchived",
                                                             "withEdges",
                                                             "metadata",
                                                             "tags"};
  return RunGraph(
      graph, {{"id", id, id_len}}, options_json, options_json_len, kKeys,
      out_json, out_json_len, out_error,
      [&](Request& r) -> absl::StatusOr<std::string> {
        absl::Status s;
        ctxkit::RelatedOptions o;
        if (StringArg t = r.String("relationshipType"); t.data != nullptr) {
          o.type = std::string(Str(t));
        }
        if (StringArg d = r.String("direction"); d.data != nullptr) {
          absl::StatusOr<ctxkit::EdgeDirection> dir = ParseDirection(Str(d));
          if (!dir.ok()) return dir.status();
          o.direction = *dir;
        }
        if (std::optional<double> v = r.Double("minWeight")) o.min_weight = *v;
        if (std::optional<uint32_t> v = U32(r, "limit", s)) o.limit = *v;
        if (std::optional<uint32_t> v = U32(r, "offset", s)) o.offset = *v;
        o.as_of = r.Int("asOf");
        o.include_expired = r.Bool("includeExpired").value_or(false);
        o.include_archived = r.Bool("includeArchived").value_or(false);
        const bool with_edges = r.Bool("withEdges").value_or(false);
        if (StringArg m = r.Json("metadata", false); m.data != nullptr) {
          o.metadata = std::string(Str(m));
        }
        if (auto v = r.Strings("tags")) o.tags = std::move(*v);
        if (!r.status().ok()) return r.status();
        if (!s.ok()) return s;
        StatusOr<ctxkit::RelatedResult> rel =
            graph->graph->Related(View(id, id_len), o);
        if (!rel.ok()) return ToAbsl(rel.status());
        return Versioned(ctxkit::graph::RelatedJson(*rel, with_edges));
      });
}

int ctxkit_graph_similar(ctxkit_graph* graph, const char* text, size_t text_len,
                         const char* options_json, size_t options_json_len,
                         char** out_json, size_t* out_json_len,
                         char** out_error) {
  static constexpr std::array<std::string_view, 7> kKeys = {
      "limit", "minSimilarity",   "method", "exclude",
      "tags",  "includeArchived", "rrfK"};
  return RunGraph(graph, {{"text", text, text_len}}, options_json,
                  options_json_len, kKeys, out_json, out_json_len, out_error,
                  [&](Request& r) -> absl::StatusOr<std::string> {
                    absl::Status s;
                    ctxkit::SimilarOptions o;
                    if (std::optional<uint32_t> v = U32(r, "limit", s))
                      o.limit = *v;
                    if (std::optional<double> v = r.Double("minSimilarity")) {
                      o.min_similarity = *v;
                    }
                    if (StringArg m = r.String("method"); m.data != nullptr) {
                      std::string_view method = Str(m);
                      if (method == "auto") {
                        o.method = ctxkit::SimilarityMethod::kAuto;
                      } else if (method == "keyword") {
                        o.method = ctxkit::SimilarityMethod::kKeyword;
                      } else if (method == "vector") {
                        o.method = ctxkit::SimilarityMethod::kVector;
                      } else if (method == "hybrid") {
                        o.method = ctxkit::SimilarityMethod::kHybrid;
                      } else {
                        return absl::InvalidArgumentError(
                            "method is \"" + std::string(method) +
                            "\"; it must be auto, keyword, vector or hybrid");
                      }
                    }
                    if (auto v = r.Strings("exclude"))
                      o.exclude = std::move(*v);
                    if (auto v = r.Strings("tags")) o.tags = std::move(*v);
                    o.include_archived =
                        r.Bool("includeArchived").value_or(false);
                    if (std::optional<uint32_t> v = U32(r, "rrfK", s)) {
                      o.rrf_k = *v;
                    }
                    if (!r.status().ok()) return r.status();
                    if (!s.ok()) return s;
                    StatusOr<ctxkit::SimilarResult> sim =
                        graph->graph->FindSimilar(View(text, text_len), o);
                    if (!sim.ok()) return ToAbsl(sim.status());
                    return Versioned(ctxkit::graph::SimilarJson(*sim));
                  });
}

int ctxkit_graph_path(ctxkit_graph* graph, const char* source,
                      size_t source_len, const char* target, size_t target_len,
                      const char* options_json, size_t options_json_len,
                      char** out_json, size_t* out_json_len, char** out_error) {
  static constexpr std::array<std::string_view, 7> kKeys = {
      "direction",      "types",           "maxHops", "weighted",
      "includeExpired", "includeArchived", "metadata"};
  return RunGraph(
      graph, {{"source", source, source_len}, {"target", target, target_len}},
      options_json, options_json_len, kKeys, out_json, out_json_len, out_error,
      [&](Request& r) -> absl::StatusOr<std::string> {
        ctxkit::PathOptions o;
        if (StringArg d = r.String("direction"); d.data != nullptr) {
          absl::StatusOr<ctxkit::EdgeDirection> dir = ParseDirection(Str(d));
          if (!dir.ok()) return dir.status();
          o.direction = *dir;
        }
        if (auto v = r.Strings("types")) o.types = std::move(*v);
        if (std::optional<int64_t> v = r.Int("maxHops")) {
          if (*v < 1 || *v > ctxkit::ContextGraphLimits::kMaxHops) {
            return absl::InvalidArgumentError(
                "maxHops is " + std::to_string(*v) +
                "; it must be between 1 and " +
                std::to_string(ctxkit::ContextGraphLimits::kMaxHops));
          }
          o.max_hops = static_cast<int>(*v);
        }
        o.weighted = r.Bool("weighted").value_or(false);
        o.include_expired = r.Bool("includeExpired").value_or(false);
        o.include_archived = r.Bool("includeArchived").value_or(false);
        if (StringArg m = r.Json("metadata", false); m.data != nullptr) {
          o.metadata = std::string(Str(m));
        }
        if (!r.status().ok()) return r.status();
        StatusOr<ctxkit::PathResult> p = graph->graph->FindPath(
            View(source, source_len), View(target, target_len), o);
        if (!p.ok()) return ToAbsl(p.status());
        return Versioned(ctxkit::graph::PathJson(*p));
      });
}

int ctxkit_graph_hierarchy(ctxkit_graph* graph, const char* id, size_t id_len,
                           char** out_json, size_t* out_json_len,
                           char** out_error) {
  return RunGraph(graph, {{"id", id, id_len}}, nullptr, 0, {}, out_json,
                  out_json_len, out_error,
                  [&](Request&) -> absl::StatusOr<std::string> {
                    StatusOr<ctxkit::ContextHierarchy> h =
                        graph->graph->Hierarchy(View(id, id_len));
                    if (!h.ok()) return ToAbsl(h.status());
                    return Versioned(ctxkit::graph::HierarchyJson(*h));
                  });
}

int ctxkit_graph_cleanup(ctxkit_graph* graph, const char* current_id,
                         size_t current_id_len, const char* options_json,
                         size_t options_json_len, char** out_json,
                         size_t* out_json_len, char** out_error) {
  static constexpr std::array<std::string_view, 5> kKeys = {
      "dryRun", "mode", "minContexts", "keepRecentDays", "similarityFactor"};
  return RunGraph(
      graph, {{"current_id", current_id, current_id_len}}, options_json,
      options_json_len, kKeys, out_json, out_json_len, out_error,
      [&](Request& r) -> absl::StatusOr<std::string> {
        absl::Status s;
        ctxkit::CleanupOptions o;
        o.dry_run = r.Bool("dryRun").value_or(false);
        if (StringArg m = r.String("mode"); m.data != nullptr) {
          absl::StatusOr<ctxkit::CleanupMode> mode = ParseMode("mode", Str(m));
          if (!mode.ok()) return mode.status();
          o.mode = *mode;
        }
        if (auto v = U32(r, "minContexts", s)) o.min_contexts = *v;
        if (auto v = U32(r, "keepRecentDays", s)) o.keep_recent_days = *v;
        if (std::optional<double> v = r.Double("similarityFactor")) {
          o.similarity_factor = *v;
        }
        if (!r.status().ok()) return r.status();
        if (!s.ok()) return s;
        StatusOr<ctxkit::CleanupResult> c =
            graph->graph->Cleanup(View(current_id, current_id_len), o);
        if (!c.ok()) return ToAbsl(c.status());
        return Versioned(ctxkit::graph::CleanupJson(*c));
      });
}

int ctxkit_graph_restore(ctxkit_graph* graph, const char* id, size_t id_len,
                         char** out_error) {
  return RunPlain(graph, {{"id", id, id_len}}, out_error,
                  [&] { return graph->graph->Restore(View(id, id_len)); });
}

int ctxkit_graph_visualize(ctxkit_graph* graph, const char* id, size_t id_len,
                           const char* options_json, size_t options_json_len,
                           char** out_text, size_t* out_text_len,
                           char** out_error) {
  static constexpr std::array<std::string_view, 4> kKeys = {
      "includeRelated", "depth", "format", "maxNodes"};
  return RunGraph(
      graph, {{"id", id, id_len}}, options_json, options_json_len, kKeys,
      out_text, out_text_len, out_error,
      [&](Request& r) -> absl::StatusOr<std::string> {
        absl::Status s;
        ctxkit::VisualizeOptions o;
        o.include_related = r.Bool("includeRelated").value_or(true);
        if (std::optional<int64_t> v = r.Int("depth")) {
          if (*v < 1 || *v > 3) {
            return absl::InvalidArgumentError("depth is " + std::to_string(*v) +
                                              "; it must be between 1 and 3");
          }
          o.depth = static_cast<int>(*v);
        }
        if (StringArg f = r.String("format"); f.data != nullptr) {
          o.format = std::string(Str(f));
        }
        if (auto v = U32(r, "maxNodes", s)) o.max_nodes = *v;
        if (!r.status().ok()) return r.status();
        if (!s.ok()) return s;
        StatusOr<std::string> text =
            graph->graph->Visualize(View(id, id_len), o);
        if (!text.ok()) return ToAbsl(text.status());
        return *std::move(text);
      });
}

int ctxkit_graph_delete(ctxkit_graph* graph, const char* id, size_t id_len,
                        char** out_error) {
  return RunPlain(graph, {{"id", id, id_len}}, out_error, [&] {
    return graph->graph->DeleteContext(View(id, id_len));
  });
}

int ctxkit_graph_verify(ctxkit_graph* graph, char** out_json,
                        size_t* out_json_len, char** out_error) {
  return RunGraph(graph, {}, nullptr, 0, {}, out_json, out_json_len, out_error,
                  [&](Request&) -> absl::StatusOr<std::string> {
                    StatusOr<ctxkit::GraphVerifyReport> v =
                        graph->graph->Verify();
                    if (!v.ok()) return ToAbsl(v.status());
                    return Versioned(ctxkit::graph::VerifyJson(*v));
                  });
}

int ctxkit_graph_set_summarizer(ctxkit_graph* graph, ctxkit_summarize_fn fn,
                                void* user_data, ctxkit_destroy_fn destroy,
                                char** out_error) {
  if (graph == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "graph must not be NULL");
  }
  return Guard(out_error, [&] {
    std::shared_ptr<CallbackSummarizer> callback;
    if (fn != nullptr) {
      callback = std::make_shared<CallbackSummarizer>(fn, user_data);
      callback->Arm(destroy);  // nothing below throws
    }
    // The old summarizer is released here, outside the switch's lock.
    std::shared_ptr<CallbackSummarizer> old =
        graph->summarizer->Swap(std::move(callback));
    old.reset();
    return Ok(out_error);
  });
}

int ctxkit_graph_metrics(ctxkit_graph* graph, const char* period,
                         size_t period_len, char** out_json,
                         size_t* out_json_len, char** out_error) {
  return RunGraph(
      graph, {{"period", period, period_len}}, nullptr, 0, {}, out_json,
      out_json_len, out_error, [&](Request&) -> absl::StatusOr<std::string> {
        StatusOr<ctxkit::GraphMetrics> m =
            graph->graph->Metrics(period == nullptr ? std::string_view("week")
                                                    : View(period, period_len));
        if (!m.ok()) return ToAbsl(m.status());
        return Versioned(ctxkit::graph::GraphMetricsToJson(*m));
      });
}

int ctxkit_graph_set_embedder(ctxkit_graph* graph, ctxkit_embed_fn fn,
                              size_t dims, const char* model, size_t model_len,
                              void* user_data, ctxkit_destroy_fn destroy,
                              char** out_error) {
  if (graph == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "graph must not be NULL");
  }
  if (fn == nullptr) {
    return Guard(out_error, [&] {
      return Report(graph->graph->SetEmbedder(nullptr), out_error);
    });
  }
  if (int rc = CheckArgs({{"model", model, model_len}}, out_error); rc >= 0) {
    return rc;
  }
  if (absl::Status s = CheckDims("dims", dims); !s.ok()) {
    return Report(s, out_error);
  }
  return Guard(out_error, [&] {
    auto callback = std::make_shared<CallbackEmbedder>(
        fn, static_cast<uint32_t>(dims), std::string(View(model, model_len)),
        user_data);
    Status s = graph->graph->SetEmbedder(callback);
    if (!s.ok()) return Report(s, out_error);
    // Installed: from here the graph's release of it releases user_data.
    callback->Arm(destroy);
    return Ok(out_error);
  });
}

int ctxkit_graph_set_hashed_embedder(ctxkit_graph* graph, size_t dims,
                                     char** out_error) {
  if (graph == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "graph must not be NULL");
  }
  if (absl::Status s = CheckDims("dims", dims); !s.ok()) {
    return Report(s, out_error);
  }
  return Guard(out_error, [&] {
    StatusOr<std::shared_ptr<ctxkit::Embedder>> e =
        ctxkit::MakeHashedEmbedder(static_cast<uint32_t>(dims));
    if (!e.ok()) return Report(e.status(), out_error);
    return Report(graph->graph->SetEmbedder(*std::move(e)), out_error);
  });
}

int ctxkit_graph_set_embedding(ctxkit_graph* graph, const char* id,
                               size_t id_len, const float* vector, size_t dims,
                               char** out_error) {
  if (vector == nullptr && dims > 0 && graph != nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "vector must not be NULL");
  }
  return RunPlain(graph, {{"id", id, id_len}}, out_error, [&] {
    return graph->graph->SetEmbedding(
        View(id, id_len), vector == nullptr
                              ? std::span<const float>()
                              : std::span<const float>(vector, dims));
  });
}

int ctxkit_graph_reset_embeddings(ctxkit_graph* graph, char** out_error) {
  return RunPlain(graph, {}, out_error,
                  [&] { return graph->graph->ResetEmbeddings(); });
}

int ctxkit_graph_context_memory(ctxkit_graph* graph, const char* request_json,
                                size_t request_json_len, char** out_json,
                                size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(graph, "graph", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (request_json == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "request_json must not be NULL");
  }
  return Guard(out_error, [&] {
    return ReturnSeed(ctxkit::graph::ContextMemory(
                          *graph->graph, View(request_json, request_json_len)),
                      out_json, out_json_len, out_error);
  });
}

int ctxkit_graph_call(ctxkit_graph* graph, const char* tool, size_t tool_len,
                      const char* args_json, size_t args_json_len,
                      char** out_json, size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(graph, "graph", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs(
          {{"tool", tool, tool_len}, {"args_json", args_json, args_json_len}},
          out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    return ReturnSeed(
        ctxkit::graph::CallSeedTool(*graph->graph, View(tool, tool_len),
                                    args_json == nullptr
                                        ? std::string_view("{}")
                                        : View(args_json, args_json_len)),
        out_json, out_json_len, out_error);
  });
}
