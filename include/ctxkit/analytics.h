// ctxkit::Analytics: counts and timings of operations, kept in a Store (the
// Memory Context Protocol server's ApiAnalytics; the operation counters of
// the MCP Token Optimizer and the pgEdge agent's compactor).
//
//   auto analytics = ctxkit::Analytics::Open(*store);
//   {
//     ctxkit::ScopedTimer timer(**analytics, "compact");
//     ... work ...
//     if (failed) timer.set_ok(false);
//   }  // recorded here
//   auto report = (*analytics)->Query(from_ms, to_ms);
//
// Call types are free-form names of [a-z0-9_.:-], 1..64 bytes: the Memory
// Context Protocol server's vector_db_add, vector_db_search, vector_db_delete,
// graph_db_add, graph_db_search, graph_db_delete, llm_summarize,
// llm_hierarchical_summarize, llm_meta_summarize, and ctxkit's own operation
// names ("compact", "count_tokens", "cache_get", ...).
//
// Durability. Recording a call must cost far less than the operation it
// measures, so calls collect in memory and are written in one transaction by
// a background thread every AnalyticsOptions::flush_interval_ms (default
// 1000 ms), sooner when flush_max_pending calls wait, on Flush(), before every
// Query/CallsInRange/CallCount/Purge, and when the Analytics is destroyed. A
// crash loses at most the calls of the last flush interval plus one commit.
//
// Retention. Calls older than retention_days (relative to the clock) are
// deleted by Purge(), which also runs when the Analytics is opened.
//
// Counters. Besides calls, named 64-bit counters accumulate quantities that
// go with operations (the compactor adds "compact.messages_in",
// "compact.tokens_saved", ...). Counter names follow the rules of call types.
// A counter is a lifetime total: it has no timestamp, Purge and retention
// never touch it, and it exists from its first AddCounts on. Deltas are
// batched with the calls (summed in memory per name, written in the same
// transaction), so the durability above applies: a crash loses at most the
// deltas of the last flush interval.
//
// Thread safety: every method may be called concurrently; Record takes only a
// short in-memory lock. One Analytics per Store per process.

#ifndef CTXKIT_ANALYTICS_H_
#define CTXKIT_ANALYTICS_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"

namespace ctxkit {

namespace internal {
class AnalyticsImpl;
}  // namespace internal

// Validated by Analytics::Open (INVALID_ARGUMENT naming the field).
struct AnalyticsOptions {
  // 1..3650; the Memory Context Protocol server's apiAnalyticsRetention.
  int64_t retention_days = 30;
  // 1..60000 ms.
  int64_t flush_interval_ms = 1000;
  // Calls waiting that wake the flusher early; 1..1000000.
  int64_t flush_max_pending = 4096;
  // Milliseconds since the epoch; empty = the wall clock. For tests.
  std::function<int64_t()> clock;
};

inline constexpr size_t kAnalyticsMaxTypeBytes = 64;
// Longest duration accepted: 7 days.
inline constexpr int64_t kAnalyticsMaxDurationUs =
    int64_t{7} * 24 * 3600 * 1000000;
// Latest timestamp accepted: 9999-12-31T23:59:59.999Z.
inline constexpr int64_t kAnalyticsMaxTimestampMs = 253402300799999;

struct AnalyticsCall {
  std::string type;
  int64_t timestamp_ms = 0;
  int64_t duration_us = 0;
  bool ok = true;
};

struct AnalyticsTypeStats {
  std::string type;
  uint64_t calls = 0;
  uint64_t errors = 0;  // calls with ok == false
  uint64_t total_duration_us = 0;
  double avg_duration_us = 0;
  int64_t min_duration_us = 0;
  int64_t max_duration_us = 0;
};

struct AnalyticsReport {
  int64_t from_ms = 0;
  int64_t to_ms = 0;
  uint64_t total_calls = 0;
  uint64_t total_errors = 0;
  std::vector<AnalyticsTypeStats> by_type;  // sorted by type
  // Every counter's lifetime total when the report was made, sorted by name.
  // Counters have no timestamps, so from_ms/to_ms do not restrict them.
  std::vector<std::pair<std::string, int64_t>> counters;
};

// {"schema_version":1,"from":..,"to":..,"total_calls":..,"total_errors":..,
//  "calls_by_type":{"<type>":n},"average_duration_us":{"<type>":x},
//  "by_type":{"<type>":{calls,errors,avg_duration_us,min_duration_us,
//  max_duration_us,total_duration_us}},"counters":{"<name>":n}}
// ("counters" is always present, {} when there are none).
CTXKIT_EXPORT StatusOr<std::string> AnalyticsReportToJson(
    const AnalyticsReport& report);

// Analytics::CallsInRange's calls, in its order, as the one document the C
// ABI (ctxkit_analytics_calls) and any host write:
//   {"schema_version":1,"calls":[{"type","timestamp" (ms),"duration_us",
//    "ok"}]}
// INVALID_ARGUMENT only if a type is not valid UTF-8 (never for calls
// Analytics returned). Pure; thread-safe.
CTXKIT_EXPORT StatusOr<std::string> AnalyticsCallsToJson(
    const std::vector<AnalyticsCall>& calls);

inline constexpr size_t kAnalyticsMaxCounterNameBytes = kAnalyticsMaxTypeBytes;

// One delta for Analytics::AddCounts. `name` is only read during the call.
struct AnalyticsCount {
  std::string_view name;  // 1..64 bytes of [a-z0-9_.:-]
  int64_t delta = 0;      // any value, negative included
};

class CTXKIT_EXPORT Analytics {
 public:
  // Opens "analytics" and "analytics.*" in `store` (which must outlive the
  // Analytics), purges calls past retention and starts the flusher. Errors:
  // INVALID_ARGUMENT naming a bad option; those of the store.
  static StatusOr<std::unique_ptr<Analytics>> Open(
      Store& store, AnalyticsOptions options = {});
  // Flushes (errors dropped) and stops the flusher.
  ~Analytics();
  Analytics(const Analytics&) = delete;
  Analytics& operator=(const Analytics&) = delete;

  // Records one call. `duration_us` 0..kAnalyticsMaxDurationUs;
  // `timestamp_ms` 0..kAnalyticsMaxTimestampMs, default now. INVALID_ARGUMENT
  // naming type, duration_us or timestamp_ms; nothing is recorded then.
  Status Record(std::string_view type, int64_t duration_us, bool ok = true,
                std::optional<int64_t> timestamp_ms = std::nullopt);

  // Writes the waiting calls now.
  Status Flush();

  // Statistics of the calls with from_ms <= timestamp <= to_ms (a scan of
  // those calls), plus every counter's lifetime total. INVALID_ARGUMENT
  // naming to_ms when to_ms < from_ms.
  StatusOr<AnalyticsReport> Query(int64_t from_ms, int64_t to_ms);

  // The calls in [from_ms, to_ms], oldest first, at most `limit`
  // (1..100000). INVALID_ARGUMENT naming to_ms or limit.
  StatusOr<std::vector<AnalyticsCall>> CallsInRange(int64_t from_ms,
                                                    int64_t to_ms,
                                                    int64_t limit = 1000);

  // Calls of `type` still retained (the Memory Context Protocol server's
  // getCallCount), from counters kept per type: no scan. INVALID_ARGUMENT
  // naming type.
  StatusOr<uint64_t> CallCount(std::string_view type);

  // Deletes calls older than now - retention_days; returns how many.
  // Counters are not affected.
  StatusOr<uint64_t> Purge();

  // Adds each delta to its counter, all or nothing: if any name is bad,
  // INVALID_ARGUMENT naming it ("counts[2].name ...") and no delta of the
  // batch is applied. A name may appear several times (the deltas add up);
  // an empty batch is OK. Negative deltas are allowed (a compaction may grow
  // its input, making "tokens saved" negative); a zero delta still creates
  // the counter. Totals saturate at INT64_MIN and INT64_MAX instead of
  // wrapping (per addition, so only then does the order of deltas matter).
  // Like Record, this only takes a short in-memory lock; the deltas are
  // written by the next flush.
  Status AddCounts(std::span<const AnalyticsCount> counts);
  Status AddCounts(std::initializer_list<AnalyticsCount> counts) {
    return AddCounts(
        std::span<const AnalyticsCount>(counts.begin(), counts.size()));
  }
  Status AddCount(std::string_view name, int64_t delta) {
    const AnalyticsCount count{name, delta};
    return AddCounts(std::span<const AnalyticsCount>(&count, 1));
  }

  // The total of counter `name` (0 if it never received a delta), after
  // flushing the waiting deltas. INVALID_ARGUMENT naming name.
  StatusOr<int64_t> Counter(std::string_view name);

  // Every counter whose name starts with `prefix` ("" = all), sorted by
  // name, after flushing. `prefix` is 0..64 bytes of [a-z0-9_.:-];
  // INVALID_ARGUMENT naming prefix otherwise.
  StatusOr<std::vector<std::pair<std::string, int64_t>>> Counters(
      std::string_view prefix = "");

 private:
  CTXKIT_NO_EXPORT explicit Analytics(
      std::unique_ptr<internal::AnalyticsImpl> impl);
  std::unique_ptr<internal::AnalyticsImpl> impl_;
};

// Times a scope and records it on destruction (steady clock, microseconds).
// The Analytics must outlive the timer. A failed Record (bad type) is
// dropped: a destructor cannot report it, so validate types you build.
class CTXKIT_EXPORT ScopedTimer {
 public:
  ScopedTimer(Analytics& analytics, std::string type);
  ~ScopedTimer();
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

  // Marks the call failed (or not); it counts as an error in the report.
  void set_ok(bool ok) { ok_ = ok; }
  // Do not record at all.
  void Cancel() { cancelled_ = true; }

 private:
  Analytics& analytics_;
  std::string type_;
  int64_t start_ns_;
  bool ok_ = true;
  bool cancelled_ = false;
};

}  // namespace ctxkit

#endif  // CTXKIT_ANALYTICS_H_
