// The store-wide statistics of the conversations part: its counter records
// and their upkeep (see conversation_totals.h).

#include "lib/conversations/conversation_totals.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/base/key_codec.h"
#include "lib/base/record_codec.h"
#include "lib/conversations/conversation_records.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

struct GlobalTotals {
  uint64_t conversations = 0;
  uint64_t messages = 0;
  std::array<uint64_t, 4> tokens = {};
  uint64_t compressed_messages = 0;
  uint64_t compressed_tokens = 0;
};

struct ModelTotals {
  uint64_t conversations = 0;
  uint64_t messages = 0;
  std::array<uint64_t, 4> tokens = {};
  bool Empty() const {
    return conversations == 0 && messages == 0 &&
           std::all_of(tokens.begin(), tokens.end(),
                       [](uint64_t t) { return t == 0; });
  }
};

struct DayTotals {
  uint64_t messages = 0;
  uint64_t input = 0;
  uint64_t output = 0;
  bool Empty() const { return messages == 0 && input == 0 && output == 0; }
};

template <size_t N>
absl::Status DecodeCounters(std::string_view what, std::string_view value,
                            std::array<uint64_t*, N> fields) {
  RecordReader r(value);
  uint8_t version = 0;
  r.GetByte(&version);
  for (uint64_t* f : fields) r.GetVarint(f);
  if (!r.ok() || !r.AtEnd() || version != kRecordVersion) {
    return DataLoss(absl::StrFormat("statistics record %s is malformed", what));
  }
  return absl::OkStatus();
}

template <size_t N>
std::string EncodeCounters(std::array<uint64_t, N> fields) {
  std::string out;
  out.push_back(static_cast<char>(kRecordVersion));
  for (uint64_t f : fields) PutVarint(&out, f);
  return out;
}

absl::Status DecodeGlobal(std::string_view value, GlobalTotals* g) {
  return DecodeCounters<8>("g", value,
                           {&g->conversations, &g->messages, &g->tokens[0],
                            &g->tokens[1], &g->tokens[2], &g->tokens[3],
                            &g->compressed_messages, &g->compressed_tokens});
}
std::string EncodeGlobal(const GlobalTotals& g) {
  return EncodeCounters<8>({g.conversations, g.messages, g.tokens[0],
                            g.tokens[1], g.tokens[2], g.tokens[3],
                            g.compressed_messages, g.compressed_tokens});
}
absl::Status DecodeModel(std::string_view value, ModelTotals* m) {
  return DecodeCounters<6>("m", value,
                           {&m->conversations, &m->messages, &m->tokens[0],
                            &m->tokens[1], &m->tokens[2], &m->tokens[3]});
}
std::string EncodeModel(const ModelTotals& m) {
  return EncodeCounters<6>({m.conversations, m.messages, m.tokens[0],
                            m.tokens[1], m.tokens[2], m.tokens[3]});
}
absl::Status DecodeDay(std::string_view value, DayTotals* d) {
  return DecodeCounters<3>("d", value, {&d->messages, &d->input, &d->output});
}
std::string EncodeDay(const DayTotals& d) {
  return EncodeCounters<3>({d.messages, d.input, d.output});
}

// Adds a signed delta to a counter; a result below zero means the totals
// no longer match the records.
absl::Status AddDelta(uint64_t* counter, int64_t delta, std::string_view what) {
  if (delta < 0 && static_cast<uint64_t>(-delta) > *counter) {
    return DataLoss(absl::StrFormat("%s would go below zero", what));
  }
  *counter += static_cast<uint64_t>(delta);
  return absl::OkStatus();
}

}  // namespace

absl::Status StatsDelta::Apply(WriteTransaction& txn, Database db) const {
  {
    GlobalTotals g;
    auto v = internal::TxnGet(txn, db, kGlobalStatsKey);
    if (v.ok()) {
      CTXKIT_RETURN_IF_ERROR(DecodeGlobal(*v, &g));
    } else if (v.status().code() != absl::StatusCode::kNotFound) {
      return v.status();
    }
    CTXKIT_RETURN_IF_ERROR(
        AddDelta(&g.conversations, global_.conversations, "conversations"));
    CTXKIT_RETURN_IF_ERROR(AddDelta(&g.messages, global_.messages, "messages"));
    for (size_t i = 0; i < 4; ++i) {
      CTXKIT_RETURN_IF_ERROR(
          AddDelta(&g.tokens[i], global_.tokens[i], "role tokens"));
    }
    CTXKIT_RETURN_IF_ERROR(AddDelta(&g.compressed_messages,
                                    global_.compressed_messages, "compressed"));
    CTXKIT_RETURN_IF_ERROR(AddDelta(
        &g.compressed_tokens, global_.compressed_tokens, "compressed tokens"));
    CTXKIT_RETURN_IF_ERROR(
        internal::TxnPut(txn, db, kGlobalStatsKey, EncodeGlobal(g)));
  }
  for (const auto& [model, delta] : models_) {
    const std::string key = ModelKey(model);
    ModelTotals m;
    auto v = internal::TxnGet(txn, db, key);
    if (v.ok()) {
      CTXKIT_RETURN_IF_ERROR(DecodeModel(*v, &m));
    } else if (v.status().code() != absl::StatusCode::kNotFound) {
      return v.status();
    }
    CTXKIT_RETURN_IF_ERROR(
        AddDelta(&m.conversations, delta.conversations, "model conversations"));
    CTXKIT_RETURN_IF_ERROR(
        AddDelta(&m.messages, delta.messages, "model messages"));
    for (size_t i = 0; i < 4; ++i) {
      CTXKIT_RETURN_IF_ERROR(
          AddDelta(&m.tokens[i], delta.tokens[i], "model tokens"));
    }
    if (m.Empty()) {
      auto deleted = internal::TxnDelete(txn, db, key);
      CTXKIT_RETURN_IF_ERROR(deleted.status());
    } else {
      CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, db, key, EncodeModel(m)));
    }
  }
  for (const auto& [day, delta] : days_) {
    const std::string key = DayKey(day);
    DayTotals d;
    auto v = internal::TxnGet(txn, db, key);
    if (v.ok()) {
      CTXKIT_RETURN_IF_ERROR(DecodeDay(*v, &d));
    } else if (v.status().code() != absl::StatusCode::kNotFound) {
      return v.status();
    }
    CTXKIT_RETURN_IF_ERROR(
        AddDelta(&d.messages, delta.messages, "day messages"));
    CTXKIT_RETURN_IF_ERROR(AddDelta(&d.input, delta.input, "day input"));
    CTXKIT_RETURN_IF_ERROR(AddDelta(&d.output, delta.output, "day output"));
    if (d.Empty()) {
      auto deleted = internal::TxnDelete(txn, db, key);
      CTXKIT_RETURN_IF_ERROR(deleted.status());
    } else {
      CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, db, key, EncodeDay(d)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<AggregateStats> ReadAggregateStats(const Transaction& txn,
                                                  Database stats) {
  AggregateStats out;
  absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, stats);
  CTXKIT_RETURN_IF_ERROR(cursor.status());
  for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
    const std::string_view key = cursor->key();
    if (key == kGlobalStatsKey) {
      GlobalTotals g;
      CTXKIT_RETURN_IF_ERROR(DecodeGlobal(cursor->value(), &g));
      out.conversations = g.conversations;
      out.messages = g.messages;
      out.user_tokens = g.tokens[0];
      out.assistant_tokens = g.tokens[1];
      out.system_tokens = g.tokens[2];
      out.tool_tokens = g.tokens[3];
      out.compressed_messages = g.compressed_messages;
      out.compressed_tokens = g.compressed_tokens;
    } else if (key[0] == kModelStatsPrefix) {
      ModelTotals m;
      CTXKIT_RETURN_IF_ERROR(DecodeModel(cursor->value(), &m));
      ModelUsage& u = out.by_model.emplace_back();
      u.model = std::string(key.substr(1));
      u.conversations = m.conversations;
      u.messages = m.messages;
      u.input_tokens = m.tokens[0] + m.tokens[2] + m.tokens[3];
      u.output_tokens = m.tokens[1];
    } else if (key[0] == kDayStatsPrefix && key.size() == 9) {
      DayTotals d;
      CTXKIT_RETURN_IF_ERROR(DecodeDay(cursor->value(), &d));
      DailyUsage& u = out.days.emplace_back();
      u.day = SignedFromOrdered(ReadBigEndian64(key.data() + 1));
      u.date = DateOfDay(u.day);
      u.messages = d.messages;
      u.input_tokens = d.input;
      u.output_tokens = d.output;
    }
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
  out.input_tokens = out.user_tokens + out.system_tokens + out.tool_tokens;
  out.output_tokens = out.assistant_tokens;
  out.total_tokens = out.input_tokens + out.output_tokens;
  uint64_t day_total = 0;
  for (const DailyUsage& d : out.days) {
    day_total += d.tokens();
    if (d.tokens() > out.peak_tokens || out.peak_day.empty()) {
      out.peak_tokens = d.tokens();
      out.peak_day = d.date;
    }
  }
  if (!out.days.empty()) {
    out.daily_average =
        static_cast<double>(day_total) / static_cast<double>(out.days.size());
    out.weekly_average = 7 * out.daily_average;
  }
  return out;
}

}  // namespace ctxkit::internal
