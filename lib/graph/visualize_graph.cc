// ContextGraph::Visualize: gathers a context's neighbourhood in one read
// snapshot and hands it to the renderers of visualize.h.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/field_check.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/edge_scanner.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/visualize.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

namespace {

constexpr int kMaxVisualizeDepth = 3;

}  // namespace

StatusOr<std::string> ContextGraph::Visualize(
    std::string_view id, const VisualizeOptions& options) const {
  absl::Status s = internal::CheckContextId("contextId", id);
  if (s.ok())
    s = internal::CheckRange("depth", options.depth, 1, kMaxVisualizeDepth);
  if (s.ok()) {
    s = internal::CheckRange("maxNodes", options.max_nodes, 1,
                             ContextGraphLimits::kMaxVisualizeNodes);
  }
  absl::StatusOr<internal::VizFormat> format =
      s.ok() ? internal::ParseVizFormat("format", options.format)
             : absl::StatusOr<internal::VizFormat>(s);
  if (!format.ok()) return internal::ToPublic(format.status());
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  const int64_t now = impl_->Now();
  auto gather = [&]() -> absl::StatusOr<internal::VizGraph> {
    const internal::GraphDbs& dbs = impl_->dbs;
    CTXKIT_ASSIGN_OR_RETURN(uint64_t root,
                            impl_->Require(*txn, id, "contextId"));
    CTXKIT_ASSIGN_OR_RETURN(internal::ArchivedLookup archived,
                            internal::ArchivedLookup::Begin(*txn, dbs, true));
    internal::EdgeScanner scanner(*txn, dbs);
    // Breadth first, so the nearest contexts are the ones kept.
    std::vector<std::pair<uint64_t, int>> order = {{root, 0}};
    absl::flat_hash_map<uint64_t, size_t> index = {{root, 0}};
    internal::VizGraph graph;
    for (size_t at = 0; options.include_related && at < order.size(); ++at) {
      // Copies, not a structured binding: the callback below captures them
      // (clang's C++20 forbids capturing a binding), and it appends to
      // `order`.
      const uint64_t node = order[at].first;
      const int depth = order[at].second;
      if (depth == options.depth) continue;
      for (const bool out : {true, false}) {
        CTXKIT_RETURN_IF_ERROR(scanner.ForEach(
            node, out, 0,
            [&](const internal::EdgeKeyParts& k, const internal::EdgeSummary& e,
                std::string_view) {
              if (!internal::SummaryIsCurrent(e, now, false) ||
                  index.contains(k.second) || archived.Contains(k.second)) {
                return;
              }
              if (order.size() == options.max_nodes) {
                graph.truncated = true;
                return;
              }
              index.emplace(k.second, order.size());
              order.emplace_back(k.second, depth + 1);
            }));
      }
    }
    CTXKIT_RETURN_IF_ERROR(archived.status());
    for (size_t i = 0; i < order.size(); ++i) {
      const uint64_t seq = order[i].first;
      const int depth = order[i].second;
      CTXKIT_ASSIGN_OR_RETURN(internal::ContextRecord ctx,
                              impl_->Read(*txn, seq));
      Conversation c;
      uint64_t last_seq = 0;
      CTXKIT_RETURN_IF_ERROR(internal::ReadConversationIn(
          *impl_->conversations, *txn, ctx.conversation_id, &c, &last_seq));
      internal::VizNode& n = graph.nodes.emplace_back();
      n.context_id = std::move(ctx.id);
      n.message_count = c.message_count;
      n.has_summary = ctx.summary_version > 0;
      n.depth = depth;
      if (seq == root && n.has_summary) {
        CTXKIT_ASSIGN_OR_RETURN(
            internal::SummaryRecord r,
            impl_->ReadSummary(*txn, seq, ctx.summary_version));
        internal::VizSummary& summary = graph.root_summary.emplace();
        summary.message_count = r.message_count;
        summary.key_insights = std::move(r.key_insights);
        for (const CodeBlock& b : r.code_blocks) {
          summary.code_blocks.push_back({b.language, b.importance});
        }
      }
      // Its current out-edges to gathered contexts: each edge once.
      CTXKIT_RETURN_IF_ERROR(scanner.ForEach(
          seq, /*out=*/true, 0,
          [&](const internal::EdgeKeyParts& k, const internal::EdgeSummary& e,
              std::string_view) {
            const auto target = index.find(k.second);
            if (target == index.end() ||
                !internal::SummaryIsCurrent(e, now, false)) {
              return;
            }
            graph.edges.push_back({i, target->second,
                                   std::string(internal::EdgeTypeName(k.type)),
                                   e.weight});
          }));
    }
    return graph;
  };
  absl::StatusOr<internal::VizGraph> graph = gather();
  if (!graph.ok()) return internal::ToPublic(graph.status());
  return internal::ToPublic(internal::RenderViz(*graph, *format));
}

}  // namespace ctxkit
