// On-disk layout (integers big-endian):
//
//   "analytics"         u64 ordered(timestamp_ms) + u64 sequence -> call:
//                         u8 version (1) | u8 ok | u64 duration_us | type
//                       Time-ordered, so range queries and retention are
//                       cursor walks. The sequence is a random 32-bit
//                       instance id followed by a 32-bit counter, so two
//                       calls in one millisecond (or from two processes)
//                       never share a key.
//   "analytics.totals"  type -> u8 version (1) | u64 calls | u64 errors |
//                       u64 total_duration_us   (retained calls per type:
//                       CallCount without a scan; Purge subtracts)
//   "analytics.counters" name -> u8 version (1) | i64 total (two's
//                       complement). Lifetime totals: Purge leaves them.

#include "ctxkit/analytics.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/clock.h"
#include "lib/base/field_check.h"
#include "lib/base/key_codec.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

constexpr uint8_t kVersion = 1;
constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;

// Call types, counter names and counter prefixes share one alphabet, so
// they can be shown, logged and used as JSON keys without escaping.
absl::Status CheckName(std::string_view field, std::string_view name,
                       size_t min_bytes) {
  if (name.size() < min_bytes || name.size() > kAnalyticsMaxTypeBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is %d bytes; it must be %d to %d bytes of [a-z0-9_.:-]", field,
        name.size(), min_bytes, kAnalyticsMaxTypeBytes));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == ':' || c == '-')) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has byte 0x%02X at offset %d; only [a-z0-9_.:-] is allowed",
          field, static_cast<unsigned char>(c), i));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckType(std::string_view type) {
  return CheckName("type", type, 1);
}

// `counts[i].name "<name>"`, the name C-escaped and cut at 80 bytes so that
// a huge or binary name still gives a short, printable message.
std::string CounterField(size_t index, std::string_view name) {
  constexpr size_t kShown = 80;
  const bool cut = name.size() > kShown;
  return absl::StrFormat("counts[%d].name \"%s%s\"", index,
                         absl::CHexEscape(AV(name.substr(0, kShown))),
                         cut ? "..." : "");
}

// Counter totals saturate rather than wrap: a wrapped total would turn a
// huge count into a negative one, which is worse than a pinned one.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) {
    return b > 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  }
  return sum;
}

std::string EncodeCounter(int64_t total) {
  std::string out(1, static_cast<char>(kVersion));
  AppendBigEndian64(&out, static_cast<uint64_t>(total));
  return out;
}

absl::StatusOr<int64_t> DecodeCounter(std::string_view name,
                                      std::string_view value) {
  if (value.size() != 9 || static_cast<uint8_t>(value[0]) != kVersion) {
    return absl::DataLossError(
        absl::StrFormat("analytics counter '%s' is malformed", name));
  }
  return static_cast<int64_t>(ReadBigEndian64(value.data() + 1));
}

absl::StatusOr<int64_t> ReadCounter(const Transaction& txn, Database db,
                                    std::string_view name) {
  absl::StatusOr<std::string_view> v = internal::TxnGet(txn, db, name);
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return 0;
    return v.status();
  }
  return DecodeCounter(name, *v);
}

struct Totals {
  uint64_t calls = 0, errors = 0, duration_us = 0;
};

std::string EncodeTotals(const Totals& t) {
  std::string out(1, static_cast<char>(kVersion));
  AppendBigEndian64(&out, t.calls);
  AppendBigEndian64(&out, t.errors);
  AppendBigEndian64(&out, t.duration_us);
  return out;
}

absl::StatusOr<Totals> ReadTotals(const Transaction& txn, Database db,
                                  std::string_view type) {
  absl::StatusOr<std::string_view> v = internal::TxnGet(txn, db, type);
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return Totals{};
    return v.status();
  }
  if (v->size() < 25 || static_cast<uint8_t>((*v)[0]) != kVersion) {
    return absl::DataLossError(
        absl::StrFormat("analytics totals of '%s' are malformed", type));
  }
  return Totals{ReadBigEndian64(v->data() + 1), ReadBigEndian64(v->data() + 9),
                ReadBigEndian64(v->data() + 17)};
}

std::string CallKey(int64_t timestamp_ms, uint64_t sequence) {
  std::string k;
  AppendBigEndian64(&k, OrderedFromSigned(timestamp_ms));
  AppendBigEndian64(&k, sequence);
  return k;
}

std::string TimeBound(int64_t timestamp_ms) {
  std::string k;
  AppendBigEndian64(&k, OrderedFromSigned(timestamp_ms));
  return k;
}

bool DecodeCall(std::string_view key, std::string_view value,
                AnalyticsCall* call) {
  if (key.size() != 16 || value.size() < 11 ||
      static_cast<uint8_t>(value[0]) != kVersion) {
    return false;
  }
  call->timestamp_ms = SignedFromOrdered(ReadBigEndian64(key.data()));
  call->ok = value[1] != 0;
  call->duration_us = static_cast<int64_t>(ReadBigEndian64(value.data() + 2));
  call->type.assign(value.data() + 10, value.size() - 10);
  return true;
}

}  // namespace

class AnalyticsImpl {
 public:
  static absl::StatusOr<std::unique_ptr<AnalyticsImpl>> Open(
      Store& store, AnalyticsOptions options) {
    CTXKIT_RETURN_IF_ERROR(
        CheckRange("retention_days", options.retention_days, 1, 3650));
    CTXKIT_RETURN_IF_ERROR(
        CheckRange("flush_interval_ms", options.flush_interval_ms, 1, 60000));
    CTXKIT_RETURN_IF_ERROR(
        CheckRange("flush_max_pending", options.flush_max_pending, 1, 1000000));
    absl::StatusOr<Database> calls =
        internal::StoreOpenDatabase(store, "analytics");
    CTXKIT_RETURN_IF_ERROR(calls.status());
    absl::StatusOr<Database> totals =
        internal::StoreOpenDatabase(store, "analytics.totals");
    CTXKIT_RETURN_IF_ERROR(totals.status());
    absl::StatusOr<Database> counters =
        internal::StoreOpenDatabase(store, "analytics.counters");
    CTXKIT_RETURN_IF_ERROR(counters.status());
    std::unique_ptr<AnalyticsImpl> impl(new AnalyticsImpl(
        store, std::move(options), *calls, *totals, *counters));
    if (!store.read_only()) {
      absl::StatusOr<uint64_t> purged = impl->Purge();
      if (!purged.ok()) return purged.status();
      impl->flusher_ = std::thread([p = impl.get()] { p->FlusherLoop(); });
    }
    return impl;
  }

  ~AnalyticsImpl() {
    {
      std::lock_guard lock(flusher_mu_);
      stop_ = true;
    }
    flusher_cv_.notify_all();
    if (flusher_.joinable()) flusher_.join();
    if (!store_.read_only()) (void)Flush();
  }

  absl::Status Record(std::string_view type, int64_t duration_us, bool ok,
                      std::optional<int64_t> timestamp_ms) {
    CTXKIT_RETURN_IF_ERROR(CheckType(type));
    CTXKIT_RETURN_IF_ERROR(
        CheckRange("duration_us", duration_us, 0, kAnalyticsMaxDurationUs));
    if (timestamp_ms) {
      CTXKIT_RETURN_IF_ERROR(CheckRange("timestamp_ms", *timestamp_ms, 0,
                                        kAnalyticsMaxTimestampMs));
    }
    const int64_t at = timestamp_ms ? *timestamp_ms : NowMillis(options_.clock);
    bool wake = false;
    {
      std::lock_guard lock(pending_mu_);
      pending_.push_back(
          Pending{CallKey(at, instance_ | counter_++),
                  AnalyticsCall{std::string(type), at, duration_us, ok}});
      wake = pending_.size() == static_cast<size_t>(options_.flush_max_pending);
    }
    if (wake) WakeFlusher();
    return absl::OkStatus();
  }

  absl::Status AddCounts(std::span<const AnalyticsCount> counts) {
    // Every name is checked before any delta is applied: all or nothing.
    for (size_t i = 0; i < counts.size(); ++i) {
      CTXKIT_RETURN_IF_ERROR(
          CheckName(CounterField(i, counts[i].name), counts[i].name, 1));
    }
    bool wake = false;
    {
      std::lock_guard lock(pending_mu_);
      for (const AnalyticsCount& c : counts) {
        auto it = pending_counts_.find(c.name);
        if (it == pending_counts_.end()) {
          pending_counts_.emplace(std::string(c.name), c.delta);
          wake = wake || pending_counts_.size() ==
                             static_cast<size_t>(options_.flush_max_pending);
        } else {
          it->second = SaturatingAdd(it->second, c.delta);
        }
      }
    }
    if (wake) WakeFlusher();
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> Counter(std::string_view name) {
    CTXKIT_RETURN_IF_ERROR(CheckName("name", name, 1));
    if (!store_.read_only()) CTXKIT_RETURN_IF_ERROR(Flush());
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    return ReadCounter(*txn, counters_, name);
  }

  absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> Counters(
      std::string_view prefix) {
    CTXKIT_RETURN_IF_ERROR(CheckName("prefix", prefix, 0));
    if (!store_.read_only()) CTXKIT_RETURN_IF_ERROR(Flush());
    return ReadCounters(prefix);
  }

  absl::Status Flush() {
    // Held until the batch is committed (or put back), so that a Query
    // flushing after another thread took a batch still sees those calls.
    std::lock_guard flush_lock(flush_mu_);
    std::vector<Pending> batch;
    CountMap counts;
    {
      std::lock_guard lock(pending_mu_);
      batch.swap(pending_);
      counts.swap(pending_counts_);
    }
    if (batch.empty() && counts.empty()) return absl::OkStatus();
    std::map<std::string, Totals> deltas;
    for (const Pending& p : batch) {
      Totals& t = deltas[p.call.type];
      t.calls += 1;
      t.errors += p.call.ok ? 0 : 1;
      t.duration_us += static_cast<uint64_t>(p.call.duration_us);
    }
    absl::Status status =
        internal::StoreUpdate(store_, [&](WriteTransaction& txn) {
          for (const Pending& p : batch) {
            std::string value(1, static_cast<char>(kVersion));
            value.push_back(p.call.ok ? 1 : 0);
            AppendBigEndian64(&value,
                              static_cast<uint64_t>(p.call.duration_us));
            value += p.call.type;
            if (absl::Status s = internal::TxnPut(txn, calls_, p.key, value);
                !s.ok())
              return s;
          }
          for (const auto& [type, d] : deltas) {
            absl::StatusOr<Totals> t = ReadTotals(txn, totals_, type);
            if (!t.ok()) return t.status();
            t->calls += d.calls;
            t->errors += d.errors;
            t->duration_us += d.duration_us;
            if (absl::Status s =
                    internal::TxnPut(txn, totals_, type, EncodeTotals(*t));
                !s.ok()) {
              return s;
            }
          }
          for (const auto& [name, delta] : counts) {
            absl::StatusOr<int64_t> total = ReadCounter(txn, counters_, name);
            if (!total.ok()) return total.status();
            if (absl::Status s = internal::TxnPut(
                    txn, counters_, name,
                    EncodeCounter(SaturatingAdd(*total, delta)));
                !s.ok()) {
              return s;
            }
          }
          return absl::OkStatus();
        });
    if (!status.ok()) {
      // Keep the calls for the next attempt, ahead of newer ones, and fold
      // the deltas back into those added meanwhile.
      std::lock_guard lock(pending_mu_);
      batch.insert(batch.end(), std::make_move_iterator(pending_.begin()),
                   std::make_move_iterator(pending_.end()));
      pending_.swap(batch);
      for (auto& [name, delta] : counts) {
        auto [it, inserted] = pending_counts_.try_emplace(name, delta);
        if (!inserted) it->second = SaturatingAdd(it->second, delta);
      }
    }
    return status;
  }

  // The stored counters starting with `prefix`, without flushing.
  absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> ReadCounters(
      std::string_view prefix) {
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(*txn, counters_);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    std::vector<std::pair<std::string, int64_t>> out;
    if (prefix.empty()) {
      cursor->SeekToFirst();
    } else {
      cursor->Seek(prefix);
    }
    for (; cursor->Valid() && cursor->key().starts_with(prefix);
         cursor->Next()) {
      absl::StatusOr<int64_t> total =
          DecodeCounter(cursor->key(), cursor->value());
      if (!total.ok()) return total.status();
      out.emplace_back(std::string(cursor->key()), *total);
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
    return out;
  }

  // Walks the calls in [from_ms, to_ms], stopping when `visit` says false.
  absl::Status Walk(int64_t from_ms, int64_t to_ms,
                    const std::function<bool(const AnalyticsCall&)>& visit) {
    if (to_ms < from_ms) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "to_ms is %d; it must not be before from_ms (%d)", to_ms, from_ms));
    }
    if (!store_.read_only()) CTXKIT_RETURN_IF_ERROR(Flush());
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(*txn, calls_);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    AnalyticsCall call;
    for (cursor->Seek(TimeBound(from_ms)); cursor->Valid(); cursor->Next()) {
      if (!DecodeCall(cursor->key(), cursor->value(), &call)) {
        return absl::DataLossError("an analytics call record is malformed");
      }
      if (call.timestamp_ms > to_ms) break;
      if (!visit(call)) break;
    }
    return internal::CursorStatus(*cursor);
  }

  absl::StatusOr<AnalyticsReport> Query(int64_t from_ms, int64_t to_ms) {
    AnalyticsReport report;
    report.from_ms = from_ms;
    report.to_ms = to_ms;
    std::map<std::string, AnalyticsTypeStats> by_type;
    CTXKIT_RETURN_IF_ERROR(Walk(from_ms, to_ms, [&](const AnalyticsCall& c) {
      auto [it, inserted] = by_type.try_emplace(c.type);
      AnalyticsTypeStats& s = it->second;
      if (inserted) {
        s.type = c.type;
        s.min_duration_us = c.duration_us;
        s.max_duration_us = c.duration_us;
      }
      s.calls += 1;
      s.errors += c.ok ? 0 : 1;
      s.total_duration_us += static_cast<uint64_t>(c.duration_us);
      s.min_duration_us = std::min(s.min_duration_us, c.duration_us);
      s.max_duration_us = std::max(s.max_duration_us, c.duration_us);
      report.total_calls += 1;
      report.total_errors += c.ok ? 0 : 1;
      return true;
    }));
    for (auto& [type, s] : by_type) {
      s.avg_duration_us = static_cast<double>(s.total_duration_us) /
                          static_cast<double>(s.calls);
      report.by_type.push_back(std::move(s));
    }
    // Walk has flushed, so the counters include the deltas added before.
    absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> counters =
        ReadCounters("");
    if (!counters.ok()) return counters.status();
    report.counters = std::move(*counters);
    return report;
  }

  absl::StatusOr<std::vector<AnalyticsCall>> CallsInRange(int64_t from_ms,
                                                          int64_t to_ms,
                                                          int64_t limit) {
    CTXKIT_RETURN_IF_ERROR(CheckRange("limit", limit, 1, 100000));
    std::vector<AnalyticsCall> out;
    CTXKIT_RETURN_IF_ERROR(Walk(from_ms, to_ms, [&](const AnalyticsCall& c) {
      out.push_back(c);
      return out.size() < static_cast<size_t>(limit);
    }));
    return out;
  }

  absl::StatusOr<uint64_t> CallCount(std::string_view type) {
    CTXKIT_RETURN_IF_ERROR(CheckType(type));
    if (!store_.read_only()) CTXKIT_RETURN_IF_ERROR(Flush());
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    absl::StatusOr<Totals> t = ReadTotals(*txn, totals_, type);
    if (!t.ok()) return t.status();
    return t->calls;
  }

  absl::StatusOr<uint64_t> Purge() {
    CTXKIT_RETURN_IF_ERROR(Flush());
    const int64_t now = NowMillis(options_.clock);
    const int64_t cutoff = now - options_.retention_days * kDayMs;
    uint64_t removed = 0;
    absl::Status status =
        internal::StoreUpdate(store_, [&](WriteTransaction& txn) {
          removed = 0;
          std::vector<std::string> keys;
          std::map<std::string, Totals> deltas;
          {
            absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, calls_);
            if (!cursor.ok()) return cursor.status();
            AnalyticsCall call;
            for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
              if (!DecodeCall(cursor->key(), cursor->value(), &call)) {
                return absl::DataLossError(
                    "an analytics call record is malformed");
              }
              if (call.timestamp_ms >= cutoff) break;
              keys.emplace_back(cursor->key());
              Totals& d = deltas[call.type];
              d.calls += 1;
              d.errors += call.ok ? 0 : 1;
              d.duration_us += static_cast<uint64_t>(call.duration_us);
            }
            if (!internal::CursorStatus(*cursor).ok())
              return internal::CursorStatus(*cursor);
          }
          for (const std::string& k : keys) {
            absl::StatusOr<bool> gone = internal::TxnDelete(txn, calls_, k);
            if (!gone.ok()) return gone.status();
          }
          for (const auto& [type, d] : deltas) {
            absl::StatusOr<Totals> t = ReadTotals(txn, totals_, type);
            if (!t.ok()) return t.status();
            t->calls -= std::min(t->calls, d.calls);
            t->errors -= std::min(t->errors, d.errors);
            t->duration_us -= std::min(t->duration_us, d.duration_us);
            absl::Status s =
                t->calls == 0
                    ? internal::TxnDelete(txn, totals_, type).status()
                    : internal::TxnPut(txn, totals_, type, EncodeTotals(*t));
            if (!s.ok()) return s;
          }
          removed = keys.size();
          return absl::OkStatus();
        });
    if (!status.ok()) return status;
    return removed;
  }

 private:
  struct Pending {
    std::string key;
    AnalyticsCall call;
  };
  // Pending counter deltas, summed per name (std::less<> for lookups by
  // string_view without a copy).
  using CountMap = std::map<std::string, int64_t, std::less<>>;

  AnalyticsImpl(Store& store, AnalyticsOptions options, Database calls,
                Database totals, Database counters)
      : store_(store),
        options_(std::move(options)),
        calls_(calls),
        totals_(totals),
        counters_(counters),
        instance_(uint64_t{std::random_device{}()} << 32) {}

  void WakeFlusher() {
    {
      std::lock_guard lock(flusher_mu_);
      flush_wanted_ = true;
    }
    flusher_cv_.notify_one();
  }

  void FlusherLoop() {
    std::unique_lock lock(flusher_mu_);
    while (!stop_) {
      flusher_cv_.wait_for(
          lock, std::chrono::milliseconds(options_.flush_interval_ms),
          [this] { return stop_ || flush_wanted_; });
      if (stop_) break;
      flush_wanted_ = false;
      lock.unlock();
      (void)Flush();  // a failed batch is kept and retried
      lock.lock();
    }
  }

  Store& store_;
  const AnalyticsOptions options_;
  const Database calls_;
  const Database totals_;
  const Database counters_;
  const uint64_t instance_;

  std::mutex flush_mu_;  // serializes Flush (see there)
  std::mutex pending_mu_;
  std::vector<Pending> pending_;  // guarded by pending_mu_
  CountMap pending_counts_;       // guarded by pending_mu_
  uint32_t counter_ = 0;          // guarded by pending_mu_

  std::mutex flusher_mu_;
  std::condition_variable flusher_cv_;
  bool stop_ = false;
  bool flush_wanted_ = false;
  std::thread flusher_;
};

}  // namespace ctxkit::internal

namespace ctxkit {

using internal::ToPublic;

StatusOr<std::unique_ptr<Analytics>> Analytics::Open(Store& store,
                                                     AnalyticsOptions options) {
  absl::StatusOr<std::unique_ptr<internal::AnalyticsImpl>> impl =
      internal::AnalyticsImpl::Open(store, std::move(options));
  if (!impl.ok()) return ToPublic(impl.status());
  return std::unique_ptr<Analytics>(new Analytics(std::move(*impl)));
}

Analytics::Analytics(std::unique_ptr<internal::AnalyticsImpl> impl)
    : impl_(std::move(impl)) {}
Analytics::~Analytics() = default;

Status Analytics::Record(std::string_view type, int64_t duration_us, bool ok,
                         std::optional<int64_t> timestamp_ms) {
  return ToPublic(impl_->Record(type, duration_us, ok, timestamp_ms));
}
Status Analytics::Flush() { return ToPublic(impl_->Flush()); }
StatusOr<AnalyticsReport> Analytics::Query(int64_t from_ms, int64_t to_ms) {
  return ToPublic(impl_->Query(from_ms, to_ms));
}
StatusOr<std::vector<AnalyticsCall>> Analytics::CallsInRange(int64_t from_ms,
                                                             int64_t to_ms,
                                                             int64_t limit) {
  return ToPublic(impl_->CallsInRange(from_ms, to_ms, limit));
}
StatusOr<uint64_t> Analytics::CallCount(std::string_view type) {
  return ToPublic(impl_->CallCount(type));
}
StatusOr<uint64_t> Analytics::Purge() { return ToPublic(impl_->Purge()); }
Status Analytics::AddCounts(std::span<const AnalyticsCount> counts) {
  return ToPublic(impl_->AddCounts(counts));
}
StatusOr<int64_t> Analytics::Counter(std::string_view name) {
  return ToPublic(impl_->Counter(name));
}
StatusOr<std::vector<std::pair<std::string, int64_t>>> Analytics::Counters(
    std::string_view prefix) {
  return ToPublic(impl_->Counters(prefix));
}

namespace {
int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

ScopedTimer::ScopedTimer(Analytics& analytics, std::string type)
    : analytics_(analytics), type_(std::move(type)), start_ns_(SteadyNanos()) {}

ScopedTimer::~ScopedTimer() {
  if (cancelled_) return;
  const int64_t us = (SteadyNanos() - start_ns_) / 1000;
  (void)analytics_.Record(type_, std::min(us, kAnalyticsMaxDurationUs), ok_);
}

StatusOr<std::string> AnalyticsReportToJson(const AnalyticsReport& r) {
  internal::JsonWriter w;
  w.BeginObject().Key("schema_version").Int(1);
  w.Key("from").Int(r.from_ms).Key("to").Int(r.to_ms);
  w.Key("total_calls").Uint(r.total_calls);
  w.Key("total_errors").Uint(r.total_errors);
  w.Key("calls_by_type").BeginObject();
  for (const AnalyticsTypeStats& s : r.by_type) w.Key(s.type).Uint(s.calls);
  w.EndObject();
  w.Key("average_duration_us").BeginObject();
  for (const AnalyticsTypeStats& s : r.by_type) {
    w.Key(s.type).Double(s.avg_duration_us);
  }
  w.EndObject();
  w.Key("by_type").BeginObject();
  for (const AnalyticsTypeStats& s : r.by_type) {
    w.Key(s.type).BeginObject().Key("calls").Uint(s.calls);
    w.Key("errors").Uint(s.errors);
    w.Key("avg_duration_us").Double(s.avg_duration_us);
    w.Key("min_duration_us").Int(s.min_duration_us);
    w.Key("max_duration_us").Int(s.max_duration_us);
    w.Key("total_duration_us").Uint(s.total_duration_us);
    w.EndObject();
  }
  w.EndObject();
  w.Key("counters").BeginObject();
  for (const auto& [name, total] : r.counters) w.Key(name).Int(total);
  w.EndObject().EndObject();
  return ToPublic(std::move(w).Finish());
}

StatusOr<std::string> AnalyticsCallsToJson(
    const std::vector<AnalyticsCall>& calls) {
  internal::JsonWriter w;
  w.BeginObject().Key("schema_version").Int(1).Key("calls").BeginArray();
  for (const AnalyticsCall& call : calls) {
    w.BeginObject()
        .Key("type")
        .String(call.type)
        .Key("timestamp")
        .Int(call.timestamp_ms)
        .Key("duration_us")
        .Int(call.duration_us)
        .Key("ok")
        .Bool(call.ok)
        .EndObject();
  }
  w.EndArray().EndObject();
  return ToPublic(std::move(w).Finish());
}

}  // namespace ctxkit
