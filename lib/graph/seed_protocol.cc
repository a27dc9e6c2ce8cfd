// Seed 003's JSON surface (ctxkit/context_graph_seed.h) over ContextGraph's
// typed API. Every request is read whole (each field's type and the action's
// required fields) before the graph is called, and the graph checks every value
// before it writes, so a refused request changes nothing.

#include <array>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/context_graph_seed.h"
#include "lib/graph/graph_json.h"
#include "lib/graph/metrics_json.h"
#include "lib/json/json_copy.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "simdjson.h"

namespace ctxkit::graph {
namespace {

using internal::JsonWriter;

// Concatenation of text (std and absl string views, strings, literals) and
// numbers: absl::StrCat does not take std::string_view where Abseil has its
// own string_view (lib/base/absl_string_view.h).
template <typename T>
void AppendPiece(std::string& out, const T& v) {
  if constexpr (std::is_same_v<T, absl::string_view>) {
    out.append(v.data(), v.size());
  } else if constexpr (std::is_arithmetic_v<T>) {
    out += std::to_string(v);
  } else {
    out += std::string_view(v);
  }
}

template <typename... T>
std::string Cat(const T&... pieces) {
  std::string out;
  (AppendPiece(out, pieces), ...);
  return out;
}

std::string Msg(const absl::Status& s) { return Cat(s.message()); }

// The text of a finished document; a writer failure (a record that cannot
// be JSON, which the graph never returns) is reported as a 500.
struct Answer {
  int http_status = 200;
  bool is_error = false;
  std::string json = {};
  std::string message = {};  // for LegacyLine's error object
};

SeedAnswer ToSeed(Answer a) {
  const bool failed = a.is_error || a.http_status != 200;
  return {.http_status = a.http_status,
          .is_error = a.is_error,
          .json = std::move(a.json),
          .error = failed ? std::move(a.message) : std::string()};
}

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAlreadyExists:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    default:
      return 500;
  }
}

// {"success":false,"<key>":message}: context_memory and REST say
// "message", the d6c45ab tools "error". A message quoting text that is not
// valid UTF-8 (an unknown tool's name, a REST path) cannot be JSON: it is
// replaced by one that says so.
Answer Failure(int http_status, std::string_view key, std::string message) {
  auto write = [&](std::string_view text) {
    JsonWriter w;
    w.BeginObject()
        .Key("success")
        .Bool(false)
        .Key(key)
        .String(text)
        .EndObject();
    return std::move(w).Finish();
  };
  absl::StatusOr<std::string> json = write(message);
  if (!json.ok()) {
    message = "the request holds text that is not valid UTF-8";
    json = write(message);
  }
  return {.http_status = http_status,
          .is_error = true,
          .json = json.ok() ? *std::move(json) : std::string(),
          .message = std::move(message)};
}

Answer Finished(absl::StatusOr<std::string> json, std::string message = {}) {
  if (!json.ok()) {
    return Failure(500, "message",
                   Cat("Error processing request: ", json.status().message()));
  }
  return {.json = *std::move(json), .message = std::move(message)};
}

// Reads one request object's fields, keeping the first error, so that a
// call reads everything it needs and checks once.
class Fields {
 public:
  explicit Fields(simdjson::dom::object obj) : obj_(obj) {}

  std::optional<std::string_view> Str(std::string_view key) {
    return Keep(internal::GetOptionalString(obj_, key, ""));
  }
  std::optional<int64_t> Int(std::string_view key) {
    return Keep(internal::GetOptionalInt64(obj_, key, ""));
  }
  std::optional<double> Num(std::string_view key) {
    return Keep(internal::GetOptionalDouble(obj_, key, ""));
  }
  std::optional<bool> Bool(std::string_view key) {
    return Keep(internal::GetOptionalBool(obj_, key, ""));
  }
  // A JSON object member as minified text.
  std::optional<std::string> Object(std::string_view key) {
    std::optional<simdjson::dom::object> o =
        Keep(internal::GetOptionalObject(obj_, key, ""));
    if (!o.has_value()) return std::nullopt;
    return simdjson::minify(*o);
  }
  // An array of strings; errors name key[i].
  std::vector<std::string> Strings(std::string_view key) {
    std::vector<std::string> out;
    std::optional<simdjson::dom::array> a =
        Keep(internal::GetOptionalArray(obj_, key, ""));
    if (!a.has_value()) return out;
    size_t i = 0;
    for (simdjson::dom::element e : *a) {
      std::optional<std::string_view> s =
          Keep(absl::StatusOr<std::optional<std::string_view>>(
              internal::AsString(e, internal::JsonIndexPath(key, i))));
      if (s.has_value()) out.emplace_back(*s);
      ++i;
    }
    return out;
  }
  // A range check the graph does not make itself (ints it takes narrower).
  std::optional<uint32_t> Count(std::string_view key, int64_t min,
                                int64_t max) {
    std::optional<int64_t> v = Int(key);
    if (!v.has_value()) return std::nullopt;
    if (*v < min || *v > max) {
      Fail(absl::InvalidArgumentError(
          Cat(key, " is ", *v, "; it must be between ", min, " and ", max)));
      return std::nullopt;
    }
    return static_cast<uint32_t>(*v);
  }
  void Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
  }
  const absl::Status& status() const { return status_; }

 private:
  template <typename T>
  std::optional<T> Keep(absl::StatusOr<std::optional<T>> v) {
    if (!v.ok()) {
      Fail(v.status());
      return std::nullopt;
    }
    return *v;
  }
  template <typename T>
  std::optional<T> Keep(absl::StatusOr<T> v) {
    if (!v.ok()) {
      Fail(v.status());
      return std::nullopt;
    }
    return *std::move(v);
  }

  simdjson::dom::object obj_;
  absl::Status status_;
};

constexpr std::array<std::string_view, 5> kRelationshipTypes = {
    "similar", "continues", "references", "parent", "child"};

bool KnownType(std::string_view type) {
  for (std::string_view t : kRelationshipTypes) {
    if (t == type) return true;
  }
  return false;
}

absl::StatusOr<EdgeDirection> ParseDirection(std::string_view field,
                                             std::string_view d) {
  if (d == "both") return EdgeDirection::kBoth;
  if (d == "outgoing") return EdgeDirection::kOutgoing;
  if (d == "incoming") return EdgeDirection::kIncoming;
  return absl::InvalidArgumentError(
      Cat(field, " is \"", d, "\"; it must be incoming, outgoing or both"));
}

// Every page of a paged list, joined (the seed's lists were unpaged).
template <typename Page>
StatusOr<std::vector<std::string>> AllIds(Page page) {
  std::vector<std::string> ids;
  std::string cursor;
  do {
    auto p = page(cursor);
    if (!p.ok()) return p.status();
    for (std::string& id : p->ids) ids.push_back(std::move(id));
    cursor = std::move(p->next_cursor);
  } while (!cursor.empty());
  return ids;
}

StatusOr<std::vector<std::string>> AllContextIds(const ContextGraph& graph) {
  std::vector<std::string> ids;
  std::string cursor;
  do {
    StatusOr<ContextPage> p =
        graph.ListContexts(ContextGraphLimits::kMaxListLimit, cursor);
    if (!p.ok()) return p.status();
    for (ContextInfo& c : p->contexts) ids.push_back(std::move(c.context_id));
    cursor = std::move(p->next_cursor);
  } while (!cursor.empty());
  return ids;
}

void WriteIds(JsonWriter& w, const std::vector<std::string>& ids) {
  w.BeginArray();
  for (const std::string& id : ids) w.String(id);
  w.EndArray();
}

std::string Quoted(std::string_view id) { return Cat("'", id, "'"); }

// ---------------------------------------------------------------------------
// context_memory (0.1.1)

constexpr std::string_view kUnknownAction =
    ". Supported actions are 'add', 'retrieve', 'summarize', 'get_related', "
    "'get_hierarchy', 'get_meta', 'find_similar', 'add_relationship', "
    "'find_path', and 'cleanup'";

Answer MemoryError(int http_status, std::string message) {
  return Failure(http_status, "message", std::move(message));
}

// A graph error as 0.1.1 reports it: 400/404 with the graph's message
// (naming the field), 500 "Error processing request: ..." otherwise.
Answer MemoryStatus(const Status& s) {
  int http = HttpStatusOf(s.code());
  if (http == 500) {
    return MemoryError(500, Cat("Error processing request: ", s.message()));
  }
  return MemoryError(http, s.message());
}

template <typename Fields_>
Answer MemoryDoc(std::string message, Fields_ fields) {
  JsonWriter w;
  w.BeginObject().Key("success").Bool(true).Key("message").String(message);
  fields(w);
  w.EndObject();
  return Finished(std::move(w).Finish(), std::move(message));
}

Answer MemoryAction(ContextGraph& graph, simdjson::dom::object req) {
  Fields f(req);
  std::optional<std::string_view> action = f.Str("action");
  std::optional<std::string_view> id_field = f.Str("contextId");
  if (!f.status().ok()) return MemoryError(400, Msg(f.status()));
  if (!action.has_value() || action->empty() || !id_field.has_value() ||
      id_field->empty()) {
    return MemoryError(400,
                       "Missing required parameters: action and contextId are "
                       "required");
  }
  const std::string id(*id_field);
  const std::string_view act = *action;

  if (act == "add") {
    std::optional<std::string_view> role = f.Str("role");
    std::optional<std::string_view> content = f.Str("content");
    std::optional<std::string_view> importance = f.Str("importance");
    std::vector<std::string> tags = f.Strings("tags");
    if (!f.status().ok()) return MemoryError(400, Msg(f.status()));
    if (!role.has_value() || !content.has_value()) {
      return MemoryError(400,
                         "Missing required parameters for add: role and "
                         "content are required");
    }
    StatusOr<MessageRole> r = ParseMessageRole(*role);
    if (!r.ok()) return MemoryStatus(r.status());
    StatusOr<AddGraphMessagesResult> added = graph.AddMessage(
        id, {.role = *r,
             .content = std::string(*content),
             .importance = std::string(importance.value_or("")),
             .tags = std::move(tags)});
    if (!added.ok()) return MemoryStatus(added.status());
    return MemoryDoc(Cat("Message added to context ", Quoted(id)),
                     [&](JsonWriter& w) { WriteAddResultFields(w, *added); });
  }
  if (act == "retrieve") {
    StatusOr<ContextDetail> d = graph.Retrieve(id);
    if (!d.ok()) return MemoryStatus(d.status());
    StatusOr<ContextHierarchy> h = graph.Hierarchy(id);
    if (!h.ok()) return MemoryStatus(h.status());
    return MemoryDoc(Cat("Retrieved context for ", Quoted(id)),
                     [&](JsonWriter& w) { WriteDetailFields(w, *d, &*h); });
  }
  if (act == "summarize") {
    StatusOr<ContextSummary> s = graph.Summarize(id);
    if (!s.ok()) {
      if (s.status().code() != StatusCode::kNotFound &&
          s.status().code() != StatusCode::kFailedPrecondition) {
        return MemoryStatus(s.status());
      }
      // 0.1.1 answers 200 with success false when there is nothing to
      // summarize; the reason is added.
      JsonWriter w;
      std::string message =
          Cat("Could not generate summary for context ", Quoted(id));
      w.BeginObject()
          .Key("success")
          .Bool(false)
          .Key("message")
          .String(message)
          .Key("summary")
          .Null()
          .Key("error")
          .String(s.status().message())
          .EndObject();
      return Finished(std::move(w).Finish(), std::move(message));
    }
    return MemoryDoc(Cat("Summary generated for context ", Quoted(id)),
                     [&](JsonWriter& w) {
                       w.Key("summary");
                       WriteSummary(w, *s);
                     });
  }
  if (act == "get_related") {
    StatusOr<RelatedResult> r = graph.Related(id);
    if (!r.ok()) return MemoryStatus(r.status());
    return MemoryDoc(Cat("Retrieved related contexts for ", Quoted(id)),
                     [&](JsonWriter& w) {
                       w.Key("relatedContexts");
                       WriteIds(w, r->context_ids);
                     });
  }
  if (act == "get_hierarchy") {
    StatusOr<ContextHierarchy> h = graph.Hierarchy(id);
    if (!h.ok()) return MemoryStatus(h.status());
    return MemoryDoc(Cat("Retrieved hierarchical information for ", Quoted(id)),
                     [&](JsonWriter& w) {
                       w.Key("hierarchicalStructure").BeginObject();
                       if (h->parent.has_value())
                         w.Key("parent").String(*h->parent);
                       w.Key("children");
                       WriteIds(w, h->children);
                       w.Key("ancestors");
                       WriteIds(w, h->ancestors);
                       w.Key("depth").Int(h->depth).EndObject();
                       w.Key("hierarchicalSummary");
                       if (h->hierarchical_summary.has_value()) {
                         WriteHierarchicalSummary(w, *h->hierarchical_summary);
                       } else {
                         w.Null();
                       }
                     });
  }
  if (act == "get_meta") {
    std::optional<std::string_view> meta_id = f.Str("metaId");
    if (!f.status().ok()) return MemoryError(400, Msg(f.status()));
    if (!meta_id.has_value()) {
      StatusOr<std::vector<std::string>> ids =
          AllIds([&](const std::string& cursor) {
            return graph.ListMetaSummaries(ContextGraphLimits::kMaxListLimit,
                                           cursor);
          });
      if (!ids.ok()) return MemoryStatus(ids.status());
      return MemoryDoc(Cat("Retrieved ", ids->size(), " meta-summary IDs"),
                       [&](JsonWriter& w) {
                         w.Key("metaSummaryIds");
                         WriteIds(w, *ids);
                       });
    }
    StatusOr<MetaSummary> m = graph.GetMetaSummary(*meta_id);
    if (!m.ok()) {
      if (m.status().code() == StatusCode::kNotFound) {
        // 0.1.1: still HTTP 200.
        Answer a = MemoryError(
            200, Cat("Meta-summary with ID ", Quoted(*meta_id), " not found"));
        a.is_error = false;
        return a;
      }
      return MemoryStatus(m.status());
    }
    return MemoryDoc(Cat("Retrieved meta-summary ", Quoted(*meta_id)),
                     [&](JsonWriter& w) {
                       w.Key("metaSummary");
                       WriteMetaSummary(w, *m);
                     });
  }
  if (act == "find_similar") {
    std::optional<std::string_view> text = f.Str("searchText");
    std::optional<uint32_t> limit =
        f.Count("limit", 1, ContextGraphLimits::kMaxSimilarLimit);
    if (!f.status().ok()) return MemoryError(400, Msg(f.status()));
    if (!text.has_value() || text->empty()) {
      return MemoryError(400,
                         "Missing required parameter for find_similar: "
                         "searchText is required");
    }
    StatusOr<SimilarResult> r =
        graph.FindSimilar(*text, {.limit = limit.value_or(5)});
    if (!r.ok()) return MemoryStatus(r.status());
    return MemoryDoc(Cat("Found ", r->contexts.size(),
                         " similar contexts to the search text"),
                     [&](JsonWriter& w) {
                       w.Key("similarContexts");
                       WriteSimilarContexts(w, r->contexts);
                     });
  }
  if (act == "add_relationship") {
    std::optional<std::string_view> target = f.Str("targetId");
    std::optional<std::string_view> type = f.Str("relationshipType");
    std::optional<double> strength = f.Num("strength");
    if (!f.status().ok()) return MemoryError(400, Msg(f.status()));
    if (!target.has_value() || target->empty() || !type.has_value() ||
        type->empty()) {
      return MemoryError(400,
                         "Missing required parameters for add_relationship: "
                         "targetId and relationshipType are required");
    }
    if (!KnownType(*type)) {
      return MemoryError(400, Cat("Invalid relationship type: ", *type));
    }
    // 0.1.1 clamps the strength to [0, 1]; the answer says when it did.
    double weight = strength.value_or(0.8);
    bool clamped = weight < 0 || weight > 1;
    weight = weight < 0 ? 0 : (weight > 1 ? 1 : weight);
    StatusOr<RelationshipUpsert> u =
        graph.AddRelationship({.source = id,
                               .target = std::string(*target),
                               .type = std::string(*type),
                               .weight = weight,
                               .create_missing = true});
    if (!u.ok()) return MemoryStatus(u.status());
    return MemoryDoc(Cat("Added ", *type, " relationship from ", Quoted(id),
                         " to ", Quoted(*target)),
                     [&](JsonWriter& w) {
                       if (clamped) w.Key("clamped").Bool(true);
                       WriteUpsertFields(w, *u);
                     });
  }
  if (act == "find_path") {
    std::optional<std::string_view> target = f.Str("targetId");
    if (!f.status().ok()) return MemoryError(400, Msg(f.status()));
    if (!target.has_value() || target->empty()) {
      return MemoryError(400,
                         "Missing required parameter for find_path: "
                         "targetId is required");
    }
    StatusOr<PathResult> p = graph.FindPath(id, *target);
    if (!p.ok()) return MemoryStatus(p.status());
    std::string message =
        p->found ? Cat("Found path with ", p->path.size(), " nodes between ",
                       Quoted(id), " and ", Quoted(*target))
                 : Cat("No path found between ", Quoted(id), " and ",
                       Quoted(*target));
    return MemoryDoc(std::move(message),
                     [&](JsonWriter& w) { WritePathFields(w, *p); });
  }
  if (act == "cleanup") {
    StatusOr<CleanupResult> c = graph.Cleanup(id);
    if (!c.ok()) return MemoryStatus(c.status());
    return MemoryDoc(
        Cat("Cleaned up ", c->cleaned_contexts.size(), " irrelevant contexts"),
        [&](JsonWriter& w) { WriteCleanupFields(w, *c); });
  }
  return MemoryError(400, Cat("Unknown action: ", act, kUnknownAction));
}

Answer Memory(ContextGraph& graph, std::string_view request_json) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      internal::ParseJson(parser, request_json, "request");
  if (!root.ok()) return MemoryError(400, Msg(root.status()));
  absl::StatusOr<simdjson::dom::object> req =
      internal::AsObject(*root, "request");
  if (!req.ok()) return MemoryError(400, Msg(req.status()));
  return MemoryAction(graph, *req);
}

// ---------------------------------------------------------------------------
// The d6c45ab tools

Answer ToolError(int http_status, std::string message) {
  return Failure(http_status, "error", std::move(message));
}

Answer ToolStatus(const Status& s) {
  return ToolError(HttpStatusOf(s.code()), s.message());
}

// Required string fields of a tool: "<key> is required" when absent.
std::string_view Required(Fields& f, std::string_view key) {
  std::optional<std::string_view> v = f.Str(key);
  if (f.status().ok() && !v.has_value()) {
    f.Fail(absl::InvalidArgumentError(Cat(key, " is required")));
  }
  return v.value_or("");
}

Answer AddMessageTool(ContextGraph& graph, Fields& f) {
  std::string_view id = Required(f, "contextId");
  std::string_view message = Required(f, "message");
  std::string_view role = Required(f, "role");
  std::optional<std::string_view> importance = f.Str("importance");
  std::vector<std::string> tags = f.Strings("tags");
  if (!f.status().ok()) return ToolError(400, Msg(f.status()));
  StatusOr<MessageRole> r = ParseMessageRole(role);
  if (!r.ok()) return ToolStatus(r.status());
  StatusOr<AddGraphMessagesResult> added =
      graph.AddMessage(id, {.role = *r,
                            .content = std::string(message),
                            .importance = std::string(importance.value_or("")),
                            .tags = std::move(tags)});
  if (!added.ok()) return ToolStatus(added.status());
  return Finished(AddResultJson(*added));
}

Answer RetrieveTool(ContextGraph& graph, Fields& f) {
  std::string_view id = Required(f, "contextId");
  std::optional<uint32_t> limit =
      f.Count("limit", 1, ContextGraphLimits::kMaxListLimit);
  std::optional<int64_t> before = f.Int("beforeSeq");
  std::optional<bool> history = f.Bool("summaryHistory");
  if (before.has_value() && *before < 0) {
    f.Fail(absl::InvalidArgumentError(
        Cat("beforeSeq is ", *before, "; it must be 0 or more")));
  }
  if (!f.status().ok()) return ToolError(400, Msg(f.status()));
  RetrieveOptions options;
  if (limit.has_value()) options.limit = *limit;
  options.before_seq = static_cast<uint64_t>(before.value_or(0));
  options.summary_history = history.value_or(false);
  StatusOr<ContextDetail> d = graph.Retrieve(id, options);
  if (!d.ok()) {
    // The seed's text, whatever id was asked.
    if (d.status().code() == StatusCode::kNotFound) {
      return ToolError(404, "Context not found");
    }
    return ToolStatus(d.status());
  }
  StatusOr<ContextHierarchy> h = graph.Hierarchy(id);
  if (!h.ok()) return ToolStatus(h.status());
  return Finished(DetailJson(*d, &*h));
}

Answer SimilarTool(ContextGraph& graph, Fields& f) {
  std::string_view query = Required(f, "query");
  std::optional<uint32_t> limit =
      f.Count("limit", 1, ContextGraphLimits::kMaxSimilarLimit);
  std::optional<double> min = f.Num("minSimilarity");
  std::vector<std::string> tags = f.Strings("tags");
  std::vector<std::string> exclude = f.Strings("exclude");
  if (!f.status().ok()) return ToolError(400, Msg(f.status()));
  SimilarOptions options;
  options.limit = limit.value_or(5);
  options.min_similarity = min.value_or(0);
  options.tags = std::move(tags);
  options.exclude = std::move(exclude);
  StatusOr<SimilarResult> r = graph.FindSimilar(query, options);
  if (!r.ok()) return ToolStatus(r.status());
  JsonWriter w;
  WriteSimilarContexts(w, r->contexts);
  return Finished(std::move(w).Finish());
}

Answer AddRelationshipTool(ContextGraph& graph, Fields& f) {
  std::string_view source = Required(f, "sourceContextId");
  std::string_view target = Required(f, "targetContextId");
  std::string_view type = Required(f, "relationshipType");
  std::optional<double> weight = f.Num("weight");
  std::optional<std::string> metadata = f.Object("metadata");
  if (!f.status().ok()) return ToolError(400, Msg(f.status()));
  StatusOr<RelationshipUpsert> u =
      graph.AddRelationship({.source = std::string(source),
                             .target = std::string(target),
                             .type = std::string(type),
                             .weight = weight.value_or(0.8),
                             .metadata = metadata.value_or("{}")});
  if (!u.ok()) return ToolStatus(u.status());
  std::string message =
      Cat("Relationship added: ", source, " -> ", target, " (", type, ")");
  return Finished(SuccessDocument([&](JsonWriter& w) {
    w.Key("message").String(message);
    WriteUpsertFields(w, *u);
  }));
}

Answer RelatedTool(ContextGraph& graph, Fields& f) {
  std::string_view id = Required(f, "contextId");
  std::optional<std::string_view> type = f.Str("relationshipType");
  std::optional<std::string_view> direction = f.Str("direction");
  std::optional<std::string> metadata = f.Object("metadata");
  std::vector<std::string> tags = f.Strings("tags");
  if (!f.status().ok()) return ToolError(400, Msg(f.status()));
  RelatedOptions options;
  if (type.has_value()) options.type = std::string(*type);
  if (metadata.has_value()) options.metadata = std::move(*metadata);
  options.tags = std::move(tags);
  if (direction.has_value()) {
    absl::StatusOr<EdgeDirection> d = ParseDirection("direction", *direction);
    if (!d.ok()) return ToolError(400, Msg(d.status()));
    options.direction = *d;
  }
  StatusOr<RelatedResult> r = graph.Related(id, options);
  if (!r.ok()) return ToolStatus(r.status());
  JsonWriter w;
  WriteIds(w, r->context_ids);
  return Finished(std::move(w).Finish());
}

Answer SummarizeTool(ContextGraph& graph, Fields& f) {
  std::string_view id = Required(f, "contextId");
  std::optional<bool> force = f.Bool("force");
  if (!f.status().ok()) return ToolError(400, Msg(f.status()));
  StatusOr<ContextSummary> s =
      graph.Summarize(id, {.force = force.value_or(false)});
  if (!s.ok()) return ToolStatus(s.status());
  return Finished(SummaryJson(*s));
}

Answer VisualizeTool(ContextGraph& graph, Fields& f) {
  std::optional<std::string_view> id = f.Str("contextId");
  std::optional<bool> include_related = f.Bool("includeRelated");
  std::optional<int64_t> depth = f.Int("depth");
  std::optional<std::string_view> format = f.Str("format");
  std::optional<uint32_t> max_nodes =
      f.Count("maxNodes", 1, ContextGraphLimits::kMaxVisualizeNodes);
  if (depth.has_value() && (*depth < 1 || *depth > 3)) {
    f.Fail(absl::InvalidArgumentError(
        Cat("depth is ", *depth, "; it must be between 1 and 3")));
  }
  if (!f.status().ok()) return ToolError(400, Msg(f.status()));
  VisualizeOptions options;
  options.include_related = include_related.value_or(true);
  options.depth = static_cast<int>(depth.value_or(1));
  if (format.has_value()) options.format = std::string(*format);
  if (max_nodes.has_value()) options.max_nodes = *max_nodes;
  if (!id.has_value()) {
    // The seed answered an empty stub; here the newest contexts.
    if (options.format != "json" && options.format != "mermaid" &&
        options.format != "text" && options.format != "dot") {
      return ToolError(400, Cat("format is \"", options.format,
                                "\"; it must be json, mermaid, "
                                "text or dot"));
    }
    StatusOr<ContextPage> page = graph.ListContexts(options.max_nodes);
    if (!page.ok()) return ToolStatus(page.status());
    JsonWriter w;
    w.BeginObject().Key("success").Bool(true).Key("sessions").BeginArray();
    for (const ContextInfo& c : page->contexts) {
      StatusOr<ContextDetail> d = graph.Retrieve(c.context_id, {.limit = 1});
      if (!d.ok()) return ToolStatus(d.status());
      w.BeginObject()
          .Key("contextId")
          .String(c.context_id)
          .Key("messageCount")
          .Uint(c.message_count)
          .Key("hasSummary")
          .Bool(d->summary.has_value())
          .Key("lastActivityAt")
          .Int(c.last_activity_at)
          .EndObject();
    }
    w.EndArray().Key("format").String(options.format).EndObject();
    return Finished(std::move(w).Finish());
  }
  StatusOr<std::string> drawn = graph.Visualize(*id, options);
  if (!drawn.ok()) return ToolStatus(drawn.status());
  // json is already the seed's document; the other formats are text the
  // seed's text answer carries.
  if (options.format == "json")
    return {.json = *std::move(drawn), .message = {}};
  JsonWriter w;
  w.BeginObject()
      .Key("success")
      .Bool(true)
      .Key("contextId")
      .String(*id)
      .Key("format")
      .String(options.format)
      .Key("text")
      .String(*drawn)
      .EndObject();
  return Finished(std::move(w).Finish());
}

Answer MetricsTool(ContextGraph& graph, Fields& f) {
  std::optional<std::string_view> period = f.Str("period");
  if (!f.status().ok()) return ToolError(400, Msg(f.status()));
  StatusOr<GraphMetrics> metrics = graph.Metrics(period.value_or("week"));
  if (!metrics.ok()) return ToolStatus(metrics.status());
  return Finished(GraphMetricsToJson(*metrics));
}

// The input schemas. importance lists both cases (the seed's doc said lower
// case, its code upper case); matching is case-insensitive anyway.
#define CTXKIT_ID_SCHEMA(name) \
  "\"" name "\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":1024}"

// Every schema refuses keys it does not list, as ctxkit's other tools do:
// the seed's zod schemas dropped them, so a misspelled "limt" quietly ran
// with the default limit.
constexpr char kNoArgs[] =
    R"({"type":"object","additionalProperties":false,"properties":{}})";
constexpr char kAddMessageSchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{)" CTXKIT_ID_SCHEMA(
        "contextId") R"(,"message":{"type":"string","minLength":1},"role":{"type":"string","enum":["user","assistant","system","tool"]},"importance":{"type":"string","enum":["low","medium","high","critical","LOW","MEDIUM","HIGH","CRITICAL"],"default":"medium"},"tags":{"type":"array","items":{"type":"string","minLength":1,"maxLength":128},"maxItems":64,"default":[]}},"required":["contextId","message","role"]})";
constexpr char kRetrieveSchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{)" CTXKIT_ID_SCHEMA(
        "contextId") R"(,"limit":{"type":"integer","minimum":1,"maximum":1000,"default":100},"beforeSeq":{"type":"integer","minimum":0},"summaryHistory":{"type":"boolean","default":false}},"required":["contextId"]})";
constexpr char kSimilarSchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":100,"default":5},"minSimilarity":{"type":"number","minimum":0,"maximum":1,"default":0},"tags":{"type":"array","items":{"type":"string"}},"exclude":{"type":"array","items":{"type":"string"}}},"required":["query"]})";
constexpr char kAddRelationshipSchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{)" CTXKIT_ID_SCHEMA(
        "sourceContextId") "," CTXKIT_ID_SCHEMA("targetContextId") R"(,"relationshipType":{"type":"string","enum":["similar","continues","references","parent","child"]},"weight":{"type":"number","minimum":0,"maximum":1,"default":0.8},"metadata":{"type":"object"}},"required":["sourceContextId","targetContextId","relationshipType"]})";
constexpr char kRelatedSchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{)" CTXKIT_ID_SCHEMA(
        "contextId") R"(,"relationshipType":{"type":"string","enum":["similar","continues","references","parent","child"]},"direction":{"type":"string","enum":["incoming","outgoing","both"],"default":"both"},"metadata":{"type":"object"},"tags":{"type":"array","items":{"type":"string"}}},"required":["contextId"]})";
constexpr char kSummarizeSchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{)" CTXKIT_ID_SCHEMA(
        "contextId") R"(,"force":{"type":"boolean","default":false}},"required":["contextId"]})";
constexpr char kVisualizeSchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{)" CTXKIT_ID_SCHEMA(
        "contextId") R"(,"includeRelated":{"type":"boolean","default":true},"depth":{"type":"integer","minimum":1,"maximum":3,"default":1},"format":{"type":"string","enum":["json","mermaid","text","dot"],"default":"json"},"maxNodes":{"type":"integer","minimum":1,"maximum":1000,"default":200}}})";
constexpr char kMetricsSchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{"period":{"type":"string","enum":["day","week","month"],"default":"week"}}})";
constexpr char kContextMemorySchema[] =
    R"({"type":"object","additionalProperties":false,"properties":{"action":{"type":"string","enum":["add","retrieve","summarize","get_related","get_hierarchy","get_meta","find_similar","add_relationship","find_path","cleanup"]},)" CTXKIT_ID_SCHEMA(
        "contextId") R"(,"role":{"type":"string","enum":["user","assistant","system","tool"]},"content":{"type":"string"},"importance":{"type":"string","enum":["low","medium","high","critical","LOW","MEDIUM","HIGH","CRITICAL"]},"tags":{"type":"array","items":{"type":"string"}},"metaId":{"type":"string"},"searchText":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":100,"default":5},"targetId":{"type":"string"},"relationshipType":{"type":"string","enum":["similar","continues","references","parent","child"]},"strength":{"type":"number","default":0.8}},"required":["action","contextId"]})";

#undef CTXKIT_ID_SCHEMA

constexpr std::array<SeedToolInfo, 10> kTools = {{
    {"ping", "Checks that the server answers: returns the text pong.", kNoArgs,
     true},
    {"add_message",
     "Adds a message to a context (created when missing), with its "
     "importance and tags; may summarize, link and clean up in the same "
     "write.",
     kAddMessageSchema, false},
    {"retrieve_context",
     "Returns a context's messages (newest page), its summary and its place "
     "in the hierarchy.",
     kRetrieveSchema, true},
    {"get_similar_contexts",
     "Finds the contexts most similar to a text (BM25 candidates ranked by "
     "TF-IDF cosine), with summaries or without.",
     kSimilarSchema, true},
    {"add_relationship",
     "Adds or updates a typed, weighted relationship between two existing "
     "contexts.",
     kAddRelationshipSchema, false},
    {"get_related_contexts",
     "Lists the ids of the contexts related to one: outgoing edges first, "
     "then incoming, in insertion order. metadata keeps the edges whose "
     "metadata contains its members; tags the contexts with a message "
     "carrying every tag.",
     kRelatedSchema, true},
    {"summarize_context",
     "Summarizes a context (a new version when messages arrived since the "
     "last one) and returns the summary.",
     kSummarizeSchema, false},
    {"visualize_context",
     "Draws a context and its neighbourhood as json, mermaid, text or dot; "
     "without contextId, lists the newest contexts.",
     kVisualizeSchema, true},
    {"get_context_metrics",
     "Usage metrics of the graph tools over a day, week or month.",
     kMetricsSchema, true},
    {"context_memory",
     "The 0.1.1 action protocol: add, retrieve, summarize, get_related, "
     "get_hierarchy, get_meta, find_similar, add_relationship, find_path, "
     "cleanup.",
     kContextMemorySchema, false},
}};

}  // namespace

std::span<const SeedToolInfo> SeedTools() { return kTools; }

SeedAnswer CallSeedTool(ContextGraph& graph, std::string_view tool,
                        std::string_view arguments_json) {
  bool known = false;
  for (const SeedToolInfo& t : kTools) known = known || t.name == tool;
  if (!known) {
    return ToSeed(ToolError(404, Cat("Unknown tool: ", tool)));
  }
  if (tool == "ping") return {.json = "pong", .error = {}};
  if (tool == "context_memory") return ContextMemory(graph, arguments_json);
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root = internal::ParseJson(
      parser, arguments_json.empty() ? "{}" : arguments_json, "arguments");
  if (!root.ok()) {
    return ToSeed(ToolError(400, Msg(root.status())));
  }
  absl::StatusOr<simdjson::dom::object> args =
      internal::AsObject(*root, "arguments");
  if (!args.ok()) {
    return ToSeed(ToolError(400, Msg(args.status())));
  }
  Fields f(*args);
  Answer a;
  if (tool == "add_message") {
    a = AddMessageTool(graph, f);
  } else if (tool == "retrieve_context") {
    a = RetrieveTool(graph, f);
  } else if (tool == "get_similar_contexts") {
    a = SimilarTool(graph, f);
  } else if (tool == "add_relationship") {
    a = AddRelationshipTool(graph, f);
  } else if (tool == "get_related_contexts") {
    a = RelatedTool(graph, f);
  } else if (tool == "summarize_context") {
    a = SummarizeTool(graph, f);
  } else if (tool == "visualize_context") {
    a = VisualizeTool(graph, f);
  } else {
    a = MetricsTool(graph, f);
  }
  return ToSeed(std::move(a));
}

SeedAnswer ContextMemory(ContextGraph& graph, std::string_view request_json) {
  return ToSeed(Memory(graph, request_json));
}

namespace {

// ---------------------------------------------------------------------------
// REST (0.1.1)

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoding (and '+' as a space in a query); a '%' not followed by two
// hex digits is an error naming `what`.
absl::StatusOr<std::string> PercentDecode(std::string_view text,
                                          std::string_view what, bool query) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return absl::InvalidArgumentError(Cat(
            what, " has a '%' not followed by two hex digits at offset ", i));
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (query && c == '+') {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

struct Query {
  std::vector<std::pair<std::string, std::string>> params;
  // The first value of `key`, decoded.
  std::optional<std::string> Get(std::string_view key) const {
    for (const auto& p : params) {
      if (p.first == key) return p.second;
    }
    return std::nullopt;
  }
  // Every value of `key`, decoded, in order (a repeated key: ?tag=a&tag=b).
  std::vector<std::string> All(std::string_view key) const {
    std::vector<std::string> values;
    for (const auto& p : params) {
      if (p.first == key) values.push_back(p.second);
    }
    return values;
  }
};

absl::StatusOr<Query> ParseQuery(std::string_view text) {
  Query q;
  while (!text.empty()) {
    size_t amp = text.find('&');
    std::string_view part = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view()
                                         : text.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    std::string_view key = part.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1);
    absl::StatusOr<std::string> k = PercentDecode(key, "the query", true);
    if (!k.ok()) return k.status();
    absl::StatusOr<std::string> v =
        PercentDecode(value, Cat("query parameter ", *k), true);
    if (!v.ok()) return v.status();
    q.params.emplace_back(*std::move(k), *std::move(v));
  }
  return q;
}

Answer RestRoot() {
  JsonWriter w;
  w.BeginObject()
      .Key("name")
      .String("prompt-context")
      .Key("description")
      .String(
          "Memory Context Protocol for AI agents to maintain conversation "
          "context")
      .Key("version")
      .String("0.1.0")
      .Key("tools")
      .BeginArray()
      .BeginObject()
      .Key("name")
      .String("context_memory")
      .Key("description")
      .String(kTools.back().description)
      .Key("input_schema")
      .TrustedValue(kTools.back().input_schema)
      .Key("output_schema")
      .TrustedValue(
          R"({"type":"object","properties":{"success":{"type":"boolean"},"message":{"type":"string"}},"required":["success","message"]})")
      .EndObject()
      .EndArray()
      .EndObject();
  return Finished(std::move(w).Finish());
}

Answer RestIds(std::string message, std::string_view key,
               const StatusOr<std::vector<std::string>>& ids) {
  if (!ids.ok()) return MemoryStatus(ids.status());
  return MemoryDoc(std::move(message), [&](JsonWriter& w) {
    w.Key(key);
    WriteIds(w, *ids);
  });
}

Answer Rest(ContextGraph& graph, std::string_view method,
            std::string_view target, std::string_view body) {
  size_t qmark = target.find('?');
  std::string_view path = target.substr(0, qmark);
  absl::StatusOr<Query> query =
      ParseQuery(qmark == std::string_view::npos ? std::string_view()
                                                 : target.substr(qmark + 1));
  auto wrong_method = [&](std::string_view allowed) {
    return MemoryError(405, Cat("Method ", method, " is not allowed on ", path,
                                "; use ", allowed));
  };
  constexpr std::string_view kRelated = "/related/";
  const bool is_related =
      path.substr(0, kRelated.size()) == kRelated &&
      path.size() > kRelated.size() &&
      path.find('/', kRelated.size()) == std::string_view::npos;
  const bool is_get_route =
      path == "/" || path == "/contexts" || path == "/hierarchies" ||
      path == "/meta-summaries" || path == "/similar" || is_related;
  if (path == "/tools/context_memory") {
    if (method != "POST") return wrong_method("POST");
    return Memory(graph, body);
  }
  if (!is_get_route) {
    return MemoryError(404, Cat("Not found: ", method, " ", path));
  }
  if (method != "GET") return wrong_method("GET");
  if (!query.ok()) return MemoryError(400, Msg(query.status()));
  if (path == "/") return RestRoot();
  if (path == "/contexts") {
    StatusOr<std::vector<std::string>> ids = AllContextIds(graph);
    return RestIds(
        Cat("Retrieved ", ids.ok() ? ids->size() : 0, " context IDs"),
        "contextIds", ids);
  }
  if (path == "/hierarchies") {
    StatusOr<std::vector<std::string>> ids =
        AllIds([&](const std::string& cursor) {
          return graph.ListHierarchies(ContextGraphLimits::kMaxListLimit,
                                       cursor);
        });
    return RestIds(Cat("Retrieved ", ids.ok() ? ids->size() : 0,
                       " hierarchical context IDs"),
                   "hierarchicalIds", ids);
  }
  if (path == "/meta-summaries") {
    StatusOr<std::vector<std::string>> ids =
        AllIds([&](const std::string& cursor) {
          return graph.ListMetaSummaries(ContextGraphLimits::kMaxListLimit,
                                         cursor);
        });
    return RestIds(
        Cat("Retrieved ", ids.ok() ? ids->size() : 0, " meta-summary IDs"),
        "metaSummaryIds", ids);
  }
  if (path == "/similar") {
    std::optional<std::string> text = query->Get("text");
    if (!text.has_value() || text->empty()) {
      return MemoryError(400, "Missing required parameter: text");
    }
    uint32_t limit = 5;
    if (std::optional<std::string> l = query->Get("limit"); l.has_value()) {
      uint64_t n = 0;
      bool digits = !l->empty() && l->size() <= 9;
      for (char c : *l) {
        digits = digits && c >= '0' && c <= '9';
        if (digits) n = n * 10 + static_cast<uint64_t>(c - '0');
      }
      if (!digits || n < 1 || n > ContextGraphLimits::kMaxSimilarLimit) {
        return MemoryError(400, Cat("limit must be an integer between 1 and ",
                                    ContextGraphLimits::kMaxSimilarLimit));
      }
      limit = static_cast<uint32_t>(n);
    }
    StatusOr<SimilarResult> r =
        graph.FindSimilar(*text, {.limit = limit, .tags = query->All("tag")});
    if (!r.ok()) return MemoryStatus(r.status());
    return MemoryDoc(Cat("Found ", r->contexts.size(), " similar contexts"),
                     [&](JsonWriter& w) {
                       w.Key("similarContexts");
                       WriteSimilarContexts(w, r->contexts);
                     });
  }
  // /related/<contextId>: the id is one path segment, percent-decoded.
  absl::StatusOr<std::string> id =
      PercentDecode(path.substr(kRelated.size()), "contextId", false);
  if (!id.ok()) return MemoryError(400, Msg(id.status()));
  RelatedOptions options;
  if (std::optional<std::string> type = query->Get("type"); type.has_value()) {
    if (!KnownType(*type)) {
      return MemoryError(400, Cat("Invalid relationship type: ", *type));
    }
    options.type = *type;
  }
  if (std::optional<std::string> d = query->Get("direction"); d.has_value()) {
    absl::StatusOr<EdgeDirection> dir = ParseDirection("direction", *d);
    if (!dir.ok()) return MemoryError(400, Msg(dir.status()));
    options.direction = *dir;
  }
  // ctxkit's filters, as get_related_contexts takes them: metadata as JSON
  // text (percent-encoded), each tag as its own `tag` parameter.
  if (std::optional<std::string> m = query->Get("metadata"); m.has_value()) {
    options.metadata = *m;
  }
  options.tags = query->All("tag");
  StatusOr<RelatedResult> r = graph.Related(*id, options);
  if (!r.ok()) return MemoryStatus(r.status());
  return MemoryDoc(Cat("Found ", r->context_ids.size(),
                       " related contexts for ", Quoted(*id)),
                   [&](JsonWriter& w) {
                     w.Key("relatedContexts");
                     WriteIds(w, r->context_ids);
                   });
}

// ---------------------------------------------------------------------------
// stdin lines (0.1.1)

Answer Legacy(ContextGraph& graph, std::string_view line) {
  simdjson::dom::parser parser;
  std::optional<simdjson::dom::element> id;
  int code = 200;
  std::string message;
  Answer inner;
  absl::StatusOr<simdjson::dom::element> root =
      internal::ParseJson(parser, line, "line");
  absl::StatusOr<simdjson::dom::object> obj =
      root.ok() ? internal::AsObject(*root, "line")
                : absl::StatusOr<simdjson::dom::object>(root.status());
  if (!obj.ok()) {
    code = 400;
    message = Msg(obj.status());
  } else {
    simdjson::dom::element e;
    if ((*obj)["id"].get(e) == simdjson::SUCCESS) id = e;
    Fields f(*obj);
    std::optional<std::string_view> tool = f.Str("tool");
    absl::StatusOr<std::optional<simdjson::dom::object>> inputs =
        internal::GetOptionalObject(*obj, "inputs", "");
    if (!f.status().ok()) {
      code = 400;
      message = std::string(Msg(f.status()));
    } else if (!tool.has_value()) {
      code = 400;
      message = "tool is required";
    } else if (*tool != "context_memory") {
      code = 404;
      message = Cat("Unknown tool: ", *tool);
    } else if (!inputs.ok()) {
      code = 400;
      message = Msg(inputs.status());
    } else if (!inputs->has_value()) {
      code = 400;
      message = "inputs is required";
    } else {
      inner = MemoryAction(graph, **inputs);
      code = inner.http_status;
      message = inner.message;
    }
  }
  auto write = [&](std::string_view text) {
    JsonWriter w;
    w.BeginObject().Key("id");
    if (id.has_value()) {
      internal::Replay(w, *id);
    } else {
      w.Null();
    }
    if (code == 200) {
      w.Key("outputs").TrustedValue(inner.json);
    } else {
      w.Key("error")
          .BeginObject()
          .Key("code")
          .Int(code)
          .Key("message")
          .String(text)
          .EndObject();
    }
    w.EndObject();
    return std::move(w).Finish();
  };
  absl::StatusOr<std::string> json = write(message);
  if (!json.ok()) {
    message = "the line holds text that is not valid UTF-8";
    json = write(message);
  }
  return {.http_status = code,
          .is_error = code != 200 || inner.is_error,
          .json = json.ok() ? *std::move(json) : std::string(),
          .message = std::move(message)};
}

}  // namespace

SeedAnswer SeedRest(ContextGraph& graph, std::string_view method,
                    std::string_view target, std::string_view body) {
  return ToSeed(Rest(graph, method, target, body));
}

SeedAnswer LegacyLine(ContextGraph& graph, std::string_view line) {
  return ToSeed(Legacy(graph, line));
}

}  // namespace ctxkit::graph
