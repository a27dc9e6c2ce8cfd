// ContextGraph's call records (GraphCall, GraphSubCall) and Metrics: the
// seed's get_context_metrics over Analytics and the graph's counters.

#include "lib/graph/metrics.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/analytics.h"
#include "ctxkit/context_graph.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {
namespace internal {
namespace {

// The GraphCall that records this thread's current operation, if any.
thread_local GraphCall* tls_call = nullptr;

int64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  return std::clamp<int64_t>(us, 0, kAnalyticsMaxDurationUs);
}

constexpr int64_t kMillisPerDay = 86400000;

}  // namespace

GraphCall::GraphCall(const ContextGraph::Impl& impl, std::string_view type,
                     std::string_view also)
    : impl_(&impl), type_(type), also_(also) {
  if (tls_call != nullptr || impl.options.analytics == nullptr ||
      !impl.options.track_api_calls) {
    return;
  }
  analytics_ = impl.options.analytics;
  start_ = std::chrono::steady_clock::now();
  tls_call = this;
}

GraphCall::~GraphCall() {
  if (analytics_ == nullptr) return;
  tls_call = nullptr;
  const int64_t us = MicrosSince(start_);
  const int64_t now = impl_->Now();
  // Errors are dropped: see metrics.h.
  if (!type_.empty()) (void)analytics_->Record(type_, us, ok_, now);
  if (!also_.empty()) (void)analytics_->Record(also_, us, ok_, now);
  if (!ok_) return;
  for (const Note& note : notes_) {
    (void)analytics_->Record(note.type, note.duration_us, true, now);
    if (note.summarizer.empty()) continue;
    (void)analytics_->AddCount(note.summarizer == "host"
                                   ? "llm_summarize.host"
                                   : "llm_summarize.extractive",
                               1);
  }
}

void GraphCall::Restart() {
  if (tls_call != nullptr) tls_call->notes_.clear();
}

GraphSubCall::GraphSubCall(std::string_view type)
    : call_(tls_call), type_(type) {
  if (call_ != nullptr) start_ = std::chrono::steady_clock::now();
}

void GraphSubCall::Done(std::string_view summarizer) {
  if (call_ == nullptr) return;
  call_->notes_.push_back({type_, MicrosSince(start_), summarizer});
}

}  // namespace internal

StatusOr<GraphMetrics> ContextGraph::Metrics(std::string_view period) const {
  int days = 0;
  if (period == "day") days = 1;
  if (period == "week") days = 7;
  if (period == "month") days = 30;
  if (days == 0) {
    return internal::ToPublic(
        absl::InvalidArgumentError("period must be day, week or month"));
  }
  constexpr size_t kTypes = std::size(kGraphCallTypes);
  GraphMetrics m;
  m.period = std::string(period);
  const int64_t now = impl_->Now();
  const int64_t first_day = internal::DayOfMillis(now) - (days - 1);
  m.from_ms = first_day * internal::kMillisPerDay;
  m.to_ms = now;
  Analytics* analytics =
      impl_->options.track_api_calls ? impl_->options.analytics : nullptr;
  m.tracked = analytics != nullptr;

  std::array<uint64_t, kTypes> calls{}, errors{}, total_us{};
  uint64_t period_errors = 0;
  for (int d = 0; d < days; ++d) {
    const int64_t day = first_day + d;
    GraphMetricsDay& entry = m.history_trend.emplace_back();
    entry.date = internal::DateOfDay(day);
    if (analytics == nullptr) continue;
    const int64_t from = day * internal::kMillisPerDay;
    const int64_t to = std::min(from + internal::kMillisPerDay - 1, now);
    StatusOr<AnalyticsReport> report = analytics->Query(from, to);
    if (!report.ok()) return report.status();
    uint64_t day_errors = 0;
    for (const AnalyticsTypeStats& t : report->by_type) {
      const auto* it =
          std::find(std::begin(kGraphCallTypes), std::end(kGraphCallTypes),
                    std::string_view(t.type));
      if (it == std::end(kGraphCallTypes)) continue;
      const size_t i = static_cast<size_t>(it - std::begin(kGraphCallTypes));
      calls[i] += t.calls;
      errors[i] += t.errors;
      total_us[i] += t.total_duration_us;
      entry.calls += t.calls;
      day_errors += t.errors;
    }
    if (entry.calls > 0) {
      entry.score = static_cast<double>(entry.calls - day_errors) /
                    static_cast<double>(entry.calls);
    }
    m.total_calls += entry.calls;
    period_errors += day_errors;
  }
  for (size_t i = 0; i < kTypes; ++i) {
    GraphCallTypeMetrics& t = m.by_type.emplace_back();
    t.type = std::string(kGraphCallTypes[i]);
    t.calls = calls[i];
    t.errors = errors[i];
    if (calls[i] > 0) {
      t.average_duration_ms = static_cast<double>(total_us[i]) /
                              static_cast<double>(calls[i]) / 1000.0;
    }
  }
  if (m.total_calls > 0) {
    m.average_score = static_cast<double>(m.total_calls - period_errors) /
                      static_cast<double>(m.total_calls);
  }
  if (analytics != nullptr) {
    StatusOr<int64_t> extractive =
        analytics->Counter("llm_summarize.extractive");
    if (!extractive.ok()) return extractive.status();
    StatusOr<int64_t> host = analytics->Counter("llm_summarize.host");
    if (!host.ok()) return host.status();
    m.extractive_summaries = *extractive;
    m.host_summaries = *host;
  }

  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  auto read = [&]() -> absl::Status {
    const internal::GraphDbs& dbs = impl_->dbs;
    CTXKIT_ASSIGN_OR_RETURN(internal::GraphTotals totals,
                            internal::ReadTotals(*txn, dbs));
    m.contexts = totals.contexts;
    m.messages = totals.messages;
    for (size_t i = 0; i < internal::kEdgeTypeNames.size(); ++i) {
      m.edges_by_type.emplace_back(std::string(internal::kEdgeTypeNames[i]),
                                   totals.edges_by_type[i]);
    }
    CTXKIT_ASSIGN_OR_RETURN(m.summaries, internal::TxnCount(*txn, dbs.sums));
    CTXKIT_ASSIGN_OR_RETURN(m.hierarchies, internal::TxnCount(*txn, dbs.hsum));
    CTXKIT_ASSIGN_OR_RETURN(m.meta_summaries,
                            internal::TxnCount(*txn, dbs.meta));
    return absl::OkStatus();
  };
  const absl::Status s = read();
  if (!s.ok()) return internal::ToPublic(s);
  return m;
}

}  // namespace ctxkit
