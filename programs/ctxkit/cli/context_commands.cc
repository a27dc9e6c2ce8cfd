// `ctx add|get|summarize|relate|unrelate|related|similar|path|hierarchy|meta|
// cleanup|restore|viz|metrics|list|delete|verify`: seed 003's context memory
// graph (ctxkit::ContextGraph). Every command but `viz` prints the library's
// document for its result (ctxkit/context_graph_json.h: the bytes the C ABI
// returns and the MCP tools embed) on one line; `viz` prints the diagram.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "ctxkit/analytics.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/context_graph_json.h"
#include "ctxkit/conversations.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/host_command.h"
#include "programs/ctxkit/cli/record_flags.h"
#include "programs/ctxkit/cli/store_location.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/host/services.h"

namespace ctxkit::program {

namespace {

constexpr std::string_view kDirections[] = {"both", "outgoing", "incoming"};
constexpr std::string_view kMethods[] = {"auto", "keyword", "vector", "hybrid"};
constexpr std::string_view kFormats[] = {"json", "mermaid", "text", "dot"};
constexpr std::string_view kModes[] = {"archive", "delete"};
constexpr std::string_view kPeriods[] = {"day", "week", "month"};

}  // namespace

const Flag kImportanceFlag{"--importance", "LEVEL",
                           "low, medium (default), high or critical"};
const Flag kTagsFlag{"--tags", "A,B",
                     "comma-separated tags of the message, or of the "
                     "contexts to search"};
const Flag kEdgeTypeFlag{"--type", "TYPE",
                         "similar, continues, references, parent or child"};
const Flag kWeightFlag{"--weight", "W",
                       "the edge's weight, 0..1 (default 0.8)"};
const Flag kEdgeMetadataFlag{"--metadata", "JSON",
                             "a JSON object merged into the edge's metadata"};
const Flag kEdgeFilterFlag{"--metadata", "JSON",
                           "only edges whose metadata contains this object"};
const Flag kCreateMissingFlag{"--create-missing", "",
                              "create a missing source or target context"};
const Flag kReplaceParentFlag{"--replace-parent", "",
                              "let a parent edge replace the child's parent"};
const Flag kInvalidateFlag{"--invalidate", "",
                           "end the edge's fact now instead of deleting it"};
const Flag kDirectionFlag{.name = "--direction",
                          .value_name = "DIR",
                          .help = "both (default), outgoing or incoming",
                          .choices = kDirections};
const Flag kEdgesFlag{"--edges", "", "print each edge with its details"};
const Flag kExpiredFlag{"--include-expired", "",
                        "also invalidated edges and those not valid now"};
const Flag kArchivedFlag{"--include-archived", "",
                         "also contexts cleanup archived"};
const Flag kCtxLimitFlag{.name = "--limit",
                         .value_name = "N",
                         .help = "at most N results (the library's range)",
                         .is_number = true,
                         .library_range = true};
const Flag kMethodFlag{.name = "--method",
                       .value_name = "M",
                       .help = "auto (default), keyword, vector or hybrid",
                       .choices = kMethods};
const Flag kMinSimilarityFlag{"--min-similarity", "S",
                              "leave out contexts less similar, 0..1"};
const Flag kWeightedFlag{"--weighted", "",
                         "the path of the largest product of weights"};
const Flag kMaxHopsFlag{.name = "--max-hops",
                        .value_name = "N",
                        .help = "at most N edges, 1..16 (default 6)",
                        .is_number = true,
                        .library_range = true};
const Flag kForceFlag{"--force", "",
                      "write a new version even with no new message"};
const Flag kContextsFlag{"--contexts", "A,B",
                         "with META_ID: write it over these contexts"};
const Flag kDryRunFlag{"--dry-run", "", "report what would go, change nothing"};
const Flag kModeFlag{.name = "--mode",
                     .value_name = "MODE",
                     .help = "archive (default; restore undoes it) or delete",
                     .choices = kModes};
const Flag kMinContextsFlag{.name = "--min-contexts",
                            .value_name = "N",
                            .help =
                                "nothing goes while at most N contexts "
                                "are live (default 10)",
                            .is_number = true,
                            .library_range = true};
const Flag kKeepDaysFlag{.name = "--keep-recent-days",
                         .value_name = "N",
                         .help = "keep contexts active within N days (7)",
                         .is_number = true,
                         .library_range = true};
const Flag kFormatFlag{.name = "--format",
                       .value_name = "F",
                       .help = "json (default), mermaid, text or dot",
                       .choices = kFormats};
const Flag kDepthFlag{.name = "--depth",
                      .value_name = "N",
                      .help = "relationship hops drawn, 1..3 (default 1)",
                      .is_number = true,
                      .library_range = true};
const Flag kPeriodFlag{.name = "--period",
                       .value_name = "P",
                       .help = "day, week (default) or month",
                       .choices = kPeriods};

namespace {

// Destroyed in reverse order: the graph before the Analytics it records in.
struct OpenedGraph {
  std::unique_ptr<Store> store;
  std::unique_ptr<ConversationStore> conversations;
  std::unique_ptr<Analytics> analytics;
  std::unique_ptr<ContextGraph> graph;
};

// The graph as `ctxkit mcp` would open it: the same configuration (--config,
// the environment), store location and embedder.
StatusOr<OpenedGraph> OpenGraph(const Args& args, StoreCreation creation) {
  auto config = LoadCommandConfig(args);
  if (!config.ok()) return config.status();
  auto location = StoreLocationFor(*config, args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location, creation);
  if (!store.ok()) return store.status();
  OpenedGraph opened;
  opened.store = *std::move(store);
  auto conversations = ConversationStore::Open(*opened.store);
  if (!conversations.ok()) return conversations.status();
  opened.conversations = *std::move(conversations);
  // The calls are recorded as `ctxkit serve` and `ctxkit mcp` record them,
  // so that `ctx metrics` counts every surface's.
  auto analytics =
      Analytics::Open(*opened.store, host::GraphAnalyticsOptions(*config));
  if (!analytics.ok()) return analytics.status();
  opened.analytics = *std::move(analytics);
  auto graph = host::OpenHostGraph(
      *config, *opened.store, *opened.conversations, opened.analytics.get());
  if (!graph.ok()) return graph.status();
  opened.graph = *std::move(graph);
  return opened;
}

const std::string& Positional(const Args& args, size_t i) {
  return args.positional()[i];
}

// "a,b,c" as its items; empty items are kept, so that the library names
// them (tags[1]) rather than the CLI dropping them silently.
std::vector<std::string> SplitList(std::string_view list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    items.emplace_back(list.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

std::vector<std::string> ListFlag(const Args& args, const Flag& flag) {
  const std::string* value = args.Value(flag.name);
  return value == nullptr ? std::vector<std::string>{} : SplitList(*value);
}

// A decimal flag the library range-checks (weight, min-similarity): only
// its syntax is checked here, naming the library's field.
StatusOr<std::optional<double>> DoubleFlag(const Args& args, const Flag& flag,
                                           std::string_view field) {
  const std::string* value = args.Value(flag.name);
  if (value == nullptr) return std::optional<double>();
  double parsed = 0;
  const char* end = value->data() + value->size();
  const auto [ptr, ec] = std::from_chars(value->data(), end, parsed);
  if (value->empty() || ec != std::errc() || ptr != end) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(field) + " is '" + *value +
                      "'; it must be a decimal number");
  }
  return std::optional<double>(parsed);
}

EdgeDirection DirectionOf(const Args& args) {
  const std::string* value = args.Value(kDirectionFlag.name);
  if (value == nullptr || *value == "both") return EdgeDirection::kBoth;
  return *value == "outgoing" ? EdgeDirection::kOutgoing
                              : EdgeDirection::kIncoming;
}

std::string SuccessJson(std::string_view field, std::string_view id) {
  JsonOut json;
  json.BeginObject()
      .Key("success")
      .Bool(true)
      .Key(field)
      .String(id)
      .EndObject();
  return json.str();
}

// A number flag as the library's int: a value out of int's range is out of
// the library's too, so it is clamped into one the library rejects with its
// own message naming the field.
int ClampToInt(int64_t value) {
  return static_cast<int>(
      std::max<int64_t>(-1, std::min<int64_t>(value, 1 << 20)));
}

// --cursor, or "" for the first page.
std::string_view CursorOf(const Args& args) {
  const std::string* cursor = args.Value(kCursorFlag.name);
  return cursor == nullptr ? std::string_view() : std::string_view(*cursor);
}

// Prints the page of ids `list` returns (ListHierarchies, ListMetaSummaries)
// at --cursor.
Status PrintIdPage(const ContextGraph& graph,
                   StatusOr<IdPage> (ContextGraph::*list)(uint32_t,
                                                          std::string_view)
                       const,
                   const Args& args, std::ostream& out) {
  auto page = (graph.*list)(ContextGraphLimits::kMaxListLimit, CursorOf(args));
  if (!page.ok()) return page.status();
  return PrintDocument(IdPageToJson(*page), out);
}

// Runs `op` on the context the first positional argument names and prints
// {"success":true,"<field>":id}.
Status RunOnContext(const Args& args, std::ostream& out,
                    Status (ContextGraph::*op)(std::string_view),
                    std::string_view field) {
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  Status done = ((*opened->graph).*op)(Positional(args, 0));
  if (!done.ok()) return done;
  out << SuccessJson(field, Positional(args, 0)) << '\n';
  return Status();
}

}  // namespace

Status RunCtxAdd(const Args& args, std::ostream& out) {
  GraphMessage message;
  auto role = RoleOf(args);
  if (!role.ok()) return role.status();
  message.role = *role;
  if (const std::string* importance = args.Value(kImportanceFlag.name)) {
    message.importance = *importance;
  }
  message.tags = ListFlag(args, kTagsFlag);
  auto content =
      ReadContent(args, 1, "content", ConversationLimits::kMaxContentBytes);
  if (!content.ok()) return content.status();
  message.content = **std::move(content);
  auto opened = OpenGraph(args, StoreCreation::kIfMissing);
  if (!opened.ok()) return opened.status();
  auto added = opened->graph->AddMessage(Positional(args, 0), message);
  if (!added.ok()) return added.status();
  return PrintDocument(AddGraphMessagesResultToJson(*added), out);
}

Status RunCtxGet(const Args& args, std::ostream& out) {
  RetrieveOptions options;
  auto limit = Uint32NumberFlag(args, kCtxLimitFlag, "limit", 1,
                                ContextGraphLimits::kMaxListLimit);
  if (!limit.ok()) return limit.status();
  if (*limit) options.limit = **limit;
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto detail = opened->graph->Retrieve(Positional(args, 0), options);
  if (!detail.ok()) return detail.status();
  auto hierarchy = opened->graph->Hierarchy(Positional(args, 0));
  if (!hierarchy.ok()) return hierarchy.status();
  return PrintDocument(ContextDetailToJson(*detail, &*hierarchy), out);
}

Status RunCtxSummarize(const Args& args, std::ostream& out) {
  SummarizeOptions options;
  options.force = args.Has(kForceFlag.name);
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto summary = opened->graph->Summarize(Positional(args, 0), options);
  if (!summary.ok()) return summary.status();
  return PrintDocument(ContextSummaryToJson(*summary), out);
}

Status RunCtxRelate(const Args& args, std::ostream& out) {
  NewRelationship edge;
  edge.source = Positional(args, 0);
  edge.target = Positional(args, 1);
  if (const std::string* type = args.Value(kEdgeTypeFlag.name)) {
    edge.type = *type;
  }
  auto weight = DoubleFlag(args, kWeightFlag, "weight");
  if (!weight.ok()) return weight.status();
  if (*weight) edge.weight = **weight;
  if (const std::string* metadata = args.Value(kEdgeMetadataFlag.name)) {
    edge.metadata = *metadata;
  }
  edge.create_missing = args.Has(kCreateMissingFlag.name);
  edge.replace_parent = args.Has(kReplaceParentFlag.name);
  auto opened = OpenGraph(args, edge.create_missing ? StoreCreation::kIfMissing
                                                    : StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto upsert = opened->graph->AddRelationship(edge);
  if (!upsert.ok()) return upsert.status();
  return PrintDocument(RelationshipUpsertToJson(*upsert), out);
}

Status RunCtxUnrelate(const Args& args, std::ostream& out) {
  const std::string* type = args.Value(kEdgeTypeFlag.name);
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  if (args.Has(kInvalidateFlag.name)) {
    auto ended = opened->graph->InvalidateRelationship(
        Positional(args, 0), Positional(args, 1), *type);
    if (!ended.ok()) return ended.status();
    return PrintDocument(RelationshipToJson(*ended), out);
  }
  Status removed = opened->graph->RemoveRelationship(
      Positional(args, 0), Positional(args, 1), *type);
  if (!removed.ok()) return removed;
  out << SuccessJson("removed", *type) << '\n';
  return Status();
}

Status RunCtxRelated(const Args& args, std::ostream& out) {
  RelatedOptions options;
  if (const std::string* type = args.Value(kEdgeTypeFlag.name)) {
    options.type = *type;
  }
  options.direction = DirectionOf(args);
  options.include_expired = args.Has(kExpiredFlag.name);
  options.include_archived = args.Has(kArchivedFlag.name);
  auto limit = Uint32NumberFlag(args, kCtxLimitFlag, "limit", 1,
                                ContextGraphLimits::kMaxListLimit);
  if (!limit.ok()) return limit.status();
  if (*limit) options.limit = **limit;
  if (const std::string* m = args.Value(kEdgeFilterFlag.name)) {
    options.metadata = *m;
  }
  options.tags = ListFlag(args, kTagsFlag);
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto related = opened->graph->Related(Positional(args, 0), options);
  if (!related.ok()) return related.status();
  return PrintDocument(RelatedResultToJson(*related, args.Has(kEdgesFlag.name)),
                       out);
}

Status RunCtxSimilar(const Args& args, std::ostream& out) {
  SimilarOptions options;
  auto limit = Uint32NumberFlag(args, kCtxLimitFlag, "limit", 1,
                                ContextGraphLimits::kMaxSimilarLimit);
  if (!limit.ok()) return limit.status();
  if (*limit) options.limit = **limit;
  auto min_similarity = DoubleFlag(args, kMinSimilarityFlag, "minSimilarity");
  if (!min_similarity.ok()) return min_similarity.status();
  if (*min_similarity) options.min_similarity = **min_similarity;
  if (const std::string* method = args.Value(kMethodFlag.name)) {
    options.method = *method == "keyword"  ? SimilarityMethod::kKeyword
                     : *method == "vector" ? SimilarityMethod::kVector
                     : *method == "hybrid" ? SimilarityMethod::kHybrid
                                           : SimilarityMethod::kAuto;
  }
  options.tags = ListFlag(args, kTagsFlag);
  options.include_archived = args.Has(kArchivedFlag.name);
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto similar = opened->graph->FindSimilar(Positional(args, 0), options);
  if (!similar.ok()) return similar.status();
  return PrintDocument(SimilarResultToJson(*similar), out);
}

Status RunCtxPath(const Args& args, std::ostream& out) {
  PathOptions options;
  options.direction = DirectionOf(args);
  options.weighted = args.Has(kWeightedFlag.name);
  options.include_expired = args.Has(kExpiredFlag.name);
  options.include_archived = args.Has(kArchivedFlag.name);
  if (const std::string* type = args.Value(kEdgeTypeFlag.name)) {
    options.types = SplitList(*type);
  }
  auto hops = NumberFlag(args, kMaxHopsFlag, "maxHops");
  if (!hops.ok()) return hops.status();
  if (*hops) {
    options.max_hops = ClampToInt(**hops);
  }
  if (const std::string* m = args.Value(kEdgeFilterFlag.name)) {
    options.metadata = *m;
  }
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto path = opened->graph->FindPath(Positional(args, 0), Positional(args, 1),
                                      options);
  if (!path.ok()) return path.status();
  return PrintDocument(PathResultToJson(*path), out);
}

Status RunCtxHierarchy(const Args& args, std::ostream& out) {
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  if (args.positional().empty()) {
    return PrintIdPage(*opened->graph, &ContextGraph::ListHierarchies, args,
                       out);
  }
  auto hierarchy = opened->graph->Hierarchy(Positional(args, 0));
  if (!hierarchy.ok()) return hierarchy.status();
  return PrintDocument(ContextHierarchyToJson(*hierarchy), out);
}

Status RunCtxMeta(const Args& args, std::ostream& out) {
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  if (args.positional().empty()) {
    return PrintIdPage(*opened->graph, &ContextGraph::ListMetaSummaries, args,
                       out);
  }
  if (args.Has(kContextsFlag.name)) {
    auto written = opened->graph->CreateMetaSummary(
        Positional(args, 0), ListFlag(args, kContextsFlag));
    if (!written.ok()) return written.status();
    return PrintDocument(MetaSummaryToJson(*written), out);
  }
  auto meta = opened->graph->GetMetaSummary(Positional(args, 0));
  if (!meta.ok()) return meta.status();
  return PrintDocument(MetaSummaryToJson(*meta), out);
}

Status RunCtxCleanup(const Args& args, std::ostream& out) {
  CleanupOptions options;
  options.dry_run = args.Has(kDryRunFlag.name);
  if (const std::string* mode = args.Value(kModeFlag.name)) {
    options.mode =
        *mode == "delete" ? CleanupMode::kDelete : CleanupMode::kArchive;
  }
  auto min_contexts =
      Uint32NumberFlag(args, kMinContextsFlag, "minContexts", 0, UINT32_MAX);
  if (!min_contexts.ok()) return min_contexts.status();
  if (*min_contexts) options.min_contexts = **min_contexts;
  auto keep_days =
      Uint32NumberFlag(args, kKeepDaysFlag, "keepRecentDays", 0, UINT32_MAX);
  if (!keep_days.ok()) return keep_days.status();
  if (*keep_days) options.keep_recent_days = **keep_days;
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto cleaned = opened->graph->Cleanup(Positional(args, 0), options);
  if (!cleaned.ok()) return cleaned.status();
  return PrintDocument(CleanupResultToJson(*cleaned), out);
}

Status RunCtxRestore(const Args& args, std::ostream& out) {
  return RunOnContext(args, out, &ContextGraph::Restore, "restored");
}

Status RunCtxViz(const Args& args, std::ostream& out) {
  VisualizeOptions options;
  if (const std::string* format = args.Value(kFormatFlag.name)) {
    options.format = *format;
  }
  auto depth = NumberFlag(args, kDepthFlag, "depth");
  if (!depth.ok()) return depth.status();
  if (*depth) {
    options.depth = ClampToInt(**depth);
  }
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto drawn = opened->graph->Visualize(Positional(args, 0), options);
  if (!drawn.ok()) return drawn.status();
  out << *drawn;
  if (drawn->empty() || drawn->back() != '\n') out << '\n';
  return Status();
}

Status RunCtxList(const Args& args, std::ostream& out) {
  auto limit = Uint32NumberFlag(args, kCtxLimitFlag, "limit", 1,
                                ContextGraphLimits::kMaxListLimit);
  if (!limit.ok()) return limit.status();
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto page = opened->graph->ListContexts(limit->value_or(100), CursorOf(args),
                                          args.Has(kArchivedFlag.name));
  if (!page.ok()) return page.status();
  return PrintDocument(ContextPageToJson(*page), out);
}

Status RunCtxDelete(const Args& args, std::ostream& out) {
  return RunOnContext(args, out, &ContextGraph::DeleteContext, "deleted");
}

Status RunCtxMetrics(const Args& args, std::ostream& out) {
  const std::string* period = args.Value(kPeriodFlag.name);
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto metrics = opened->graph->Metrics(period == nullptr ? "week" : *period);
  if (!metrics.ok()) return metrics.status();
  return PrintDocument(GraphMetricsToJson(*metrics), out);
}

Status RunCtxVerify(const Args& args, std::ostream& out) {
  auto opened = OpenGraph(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto report = opened->graph->Verify();
  if (!report.ok()) return report.status();
  Status printed = PrintDocument(GraphVerifyReportToJson(*report), out);
  if (!printed.ok()) return printed;
  if (!report->ok) {
    return Status(StatusCode::kDataLoss,
                  "the graph has " + std::to_string(report->problems.size()) +
                      " problem(s); the first: " + report->problems.front());
  }
  return Status();
}

}  // namespace ctxkit::program
