#include "lib/graph/graph_check.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "lib/status/status_internal.h"

namespace ctxkit::internal {

absl::Status CheckGraph(Store& store, GraphCheckSummary* summary) {
  *summary = GraphCheckSummary();
  // On a read-only store, a missing sub-database means the part (and so
  // the graph, which needs conversations) was never made here.
  auto never_made = [&](const Status& s) {
    return s.code() == StatusCode::kNotFound && store.read_only();
  };
  StatusOr<std::unique_ptr<ConversationStore>> conversations =
      ConversationStore::Open(store);
  if (!conversations.ok()) {
    if (never_made(conversations.status())) return absl::OkStatus();
    return ToAbsl(conversations.status());
  }
  StatusOr<std::unique_ptr<ContextGraph>> graph =
      ContextGraph::Open(store, **conversations);
  if (!graph.ok()) {
    if (never_made(graph.status())) return absl::OkStatus();
    return ToAbsl(graph.status());
  }
  StatusOr<GraphVerifyReport> report = (*graph)->Verify();
  if (!report.ok()) return ToAbsl(report.status());
  if (!report->ok) {
    std::string problems;
    for (const std::string& p : report->problems) {
      if (problems.size() > 2000) break;
      absl::StrAppend(&problems, problems.empty() ? "" : "; ", p);
    }
    return absl::DataLossError(absl::StrFormat(
        "the context graph of store '%s' does not agree with itself: %s",
        store.path(), problems));
  }
  summary->contexts = report->contexts;
  summary->relationships = report->edges;
  return absl::OkStatus();
}

}  // namespace ctxkit::internal
