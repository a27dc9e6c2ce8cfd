// The C API's analytics section (c.h, "Analytics"): translation to
// ctxkit::Analytics.

#include "ctxkit/analytics.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "capi/c_internal.h"
#include "capi/request_json.h"
#include "ctxkit/c.h"
#include "ctxkit/status.h"

// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

extern "C" {

int ctxkit_analytics_open(ctxkit_store* store, const int64_t* retention_days,
                          const int64_t* flush_interval_ms,
                          ctxkit_analytics** out, char** out_error) {
  if (int rc = StartOpen(store, out, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    ctxkit::AnalyticsOptions options;
    if (retention_days != nullptr) options.retention_days = *retention_days;
    if (flush_interval_ms != nullptr) {
      options.flush_interval_ms = *flush_interval_ms;
    }
    auto opened = ctxkit::Analytics::Open(*store->store, options);
    if (!opened.ok()) return Report(opened.status(), out_error);
    *out = new ctxkit_analytics{KeepingStore(std::move(*opened), store->store)};
    return Ok(out_error);
  });
}

void ctxkit_analytics_close(ctxkit_analytics* analytics) {
  if (analytics == nullptr) return;
  // Written now, as promised, even when a compactor keeps the Analytics
  // alive; the last owner's ~Analytics flushes again and joins its thread.
  (void)analytics->analytics->Flush();
  delete analytics;
}

int ctxkit_analytics_record(ctxkit_analytics* analytics, const char* type,
                            size_t type_len, int64_t duration_us, int ok,
                            const int64_t* timestamp_ms, char** out_error) {
  if (analytics == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "analytics is NULL");
  }
  if (int rc = CheckArgs({{"type", type, type_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    std::optional<int64_t> when;
    if (timestamp_ms != nullptr) when = *timestamp_ms;
    return Report(analytics->analytics->Record(View(type, type_len),
                                               duration_us, ok != 0, when),
                  out_error);
  });
}

int ctxkit_analytics_query(ctxkit_analytics* analytics, int64_t from_ms,
                           int64_t to_ms, char** out_json, size_t* out_json_len,
                           char** out_error) {
  if (int rc =
          StartDoc(analytics, "analytics", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto report = analytics->analytics->Query(from_ms, to_ms);
    if (!report.ok()) return Report(report.status(), out_error);
    return ReturnResult(ctxkit::AnalyticsReportToJson(*report), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_analytics_calls(ctxkit_analytics* analytics, int64_t from_ms,
                           int64_t to_ms, int64_t limit, char** out_json,
                           size_t* out_json_len, char** out_error) {
  if (int rc =
          StartDoc(analytics, "analytics", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto calls = analytics->analytics->CallsInRange(from_ms, to_ms, limit);
    if (!calls.ok()) return Report(calls.status(), out_error);
    return ReturnResult(ctxkit::AnalyticsCallsToJson(*calls), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_analytics_call_count(ctxkit_analytics* analytics, const char* type,
                                size_t type_len, uint64_t* out_count,
                                char** out_error) {
  if (out_count != nullptr) *out_count = 0;
  if (analytics == nullptr || out_count == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "analytics and out_count must not be NULL");
  }
  if (int rc = CheckArgs({{"type", type, type_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    return ReturnValue(analytics->analytics->CallCount(View(type, type_len)),
                       out_count, out_error);
  });
}

int ctxkit_analytics_purge(ctxkit_analytics* analytics, uint64_t* out_purged,
                           char** out_error) {
  if (out_purged != nullptr) *out_purged = 0;
  if (analytics == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "analytics is NULL");
  }
  return Guard(out_error, [&] {
    return ReturnValue(analytics->analytics->Purge(), out_purged, out_error);
  });
}

int ctxkit_analytics_flush(ctxkit_analytics* analytics, char** out_error) {
  if (analytics == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "analytics is NULL");
  }
  return Guard(out_error, [&] {
    return Report(analytics->analytics->Flush(), out_error);
  });
}

}  // extern "C"
