#include "lib/conversations/conversation_check.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ctxkit/conversations.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/key_codec.h"
#include "lib/conversations/conversation_records.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/conversations/conversation_totals.h"
#include "lib/status/status_macros.h"
#include "lib/store/check_rows.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

constexpr char kConversationsDb[] = "conversations";
constexpr char kMessagesDb[] = "conversations.messages";
constexpr char kMessageIdsDb[] = "conversations.message_ids";
constexpr char kByCreatedDb[] = "conversations.by_created";
constexpr char kStatsDb[] = "conversations.stats";
constexpr char kViewsDb[] = "conversations.compacted_views";

// A messages (or compacted views) key as its conversation and number.
std::string IdAndNumber(std::string_view key, std::string_view number_name) {
  if (key.size() != kMessageKeySize) return QuotedKey(key);
  return absl::StrFormat("%s %s %d", QuotedKey(key.substr(0, kIdSize)),
                         number_name, ReadBigEndian64(key.data() + kIdSize));
}

// A day's statistics key as its prefix and date.
std::string DayText(int64_t day) {
  return absl::StrFormat("\"%c\"+%s", kDayStatsPrefix, DateOfDay(day));
}

absl::Status Mismatch(std::string_view db, std::string_view key,
                      std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("conversations check: %s key %s: %s", db, key, what));
}

// A decoder's DATA_LOSS with the sub-database named (the decoders name the
// record but not where it lives); other errors as they are.
absl::Status InDb(std::string_view db, absl::Status s) {
  if (s.code() != absl::StatusCode::kDataLoss) return s;
  return absl::DataLossError(
      absl::StrFormat("conversations check: %s: %s", db, s.message()));
}

struct Field {
  std::string_view name;
  uint64_t stored;
  uint64_t recount;
};

absl::Status Compare(std::string_view db, std::string_view key,
                     std::initializer_list<Field> fields) {
  for (const Field& f : fields) {
    if (f.stored != f.recount) {
      return Mismatch(db, key,
                      absl::StrFormat("%s is %d; the records give %d", f.name,
                                      f.stored, f.recount));
    }
  }
  return absl::OkStatus();
}

// One conversation: its record, and what its messages add up to.
struct Recount {
  Conversation stored;
  uint64_t last_seq = 0;  // handed out, from the record
  uint64_t messages = 0;
  std::array<uint64_t, 4> tokens = {};  // by RoleIndex
  uint64_t compressed = 0;
  uint64_t compressed_tokens = 0;
  uint64_t max_seq = 0;
  std::string_view newest_content;  // into the snapshot
  int64_t newest_at = 0;
};

using Recounts = std::map<std::string, Recount, std::less<>>;

absl::Status CheckConversationRecord(const std::string& id, const Recount& r) {
  const Conversation& c = r.stored;
  const std::string key = QuotedKey(id);
  CTXKIT_RETURN_IF_ERROR(Compare(
      kConversationsDb, key,
      {{"message_count", c.message_count, r.messages},
       {"user_tokens", c.user_tokens, r.tokens[RoleIndex(MessageRole::kUser)]},
       {"assistant_tokens", c.assistant_tokens,
        r.tokens[RoleIndex(MessageRole::kAssistant)]},
       {"system_tokens", c.system_tokens,
        r.tokens[RoleIndex(MessageRole::kSystem)]},
       {"tool_tokens", c.tool_tokens, r.tokens[RoleIndex(MessageRole::kTool)]},
       {"compressed_count", c.compressed_count, r.compressed},
       {"compressed_tokens", c.compressed_tokens, r.compressed_tokens}}));
  if (r.last_seq < r.max_seq) {
    return Mismatch(kConversationsDb, key,
                    absl::StrFormat("the last seq handed out is %d; message "
                                    "seq %d is stored",
                                    r.last_seq, r.max_seq));
  }
  // With no messages the preview is empty and its time 0.
  const std::string preview =
      r.messages == 0 ? std::string() : Preview(r.newest_content);
  if (c.last_message != preview) {
    return Mismatch(
        kConversationsDb, key,
        absl::StrFormat("last_message is %s; the newest message "
                        "gives %s",
                        QuotedKey(c.last_message), QuotedKey(preview)));
  }
  if (c.last_message_at != r.newest_at) {
    return Mismatch(kConversationsDb, key,
                    absl::StrFormat("last_message_at is %d; the newest "
                                    "message gives %d",
                                    c.last_message_at, r.newest_at));
  }
  return absl::OkStatus();
}

// Every row of "conversations.message_ids" names a message with its id (the
// walk of the messages found each message's own row, so together the rows
// and the messages correspond one to one).
absl::Status CheckMessageIdRows(const Transaction& txn,
                                const ConversationDbs& dbs,
                                ConversationCheckSummary* seen) {
  return ForEachRow(
      txn, dbs.message_ids,
      [&](std::string_view id, std::string_view where) -> absl::Status {
        if (where.size() != kMessageKeySize) {
          return Mismatch(kMessageIdsDb, QuotedKey(id),
                          absl::StrFormat("gives %s, which is not a messages "
                                          "key",
                                          QuotedKey(where)));
        }
        CTXKIT_ASSIGN_OR_RETURN(std::optional<std::string_view> value,
                                FindRow(txn, dbs.messages, where));
        if (!value) {
          return Mismatch(kMessageIdsDb, QuotedKey(id),
                          absl::StrFormat("gives message %s, which is not "
                                          "stored",
                                          IdAndNumber(where, "seq")));
        }
        absl::StatusOr<MessageView> m = DecodeMessage(where, *value);
        CTXKIT_RETURN_IF_ERROR(InDb(kMessagesDb, m.status()));
        if (m->id != id) {
          return Mismatch(
              kMessageIdsDb, QuotedKey(id),
              absl::StrFormat("gives message %s, whose id is %s",
                              IdAndNumber(where, "seq"), QuotedKey(m->id)));
        }
        ++seen->message_id_rows;
        return absl::OkStatus();
      });
}

// Every row of "conversations.by_created" is a stored conversation's, under
// its created_at (each conversation's own row was looked up already).
absl::Status CheckByCreatedRows(const Transaction& txn,
                                const ConversationDbs& dbs,
                                const Recounts& conversations,
                                ConversationCheckSummary* seen) {
  return ForEachRow(
      txn, dbs.by_created,
      [&](std::string_view key, std::string_view) -> absl::Status {
        if (key.size() != kCreatedKeySize) {
          return Mismatch(kByCreatedDb, QuotedKey(key),
                          "is not a time and a conversation id");
        }
        const int64_t at = SignedFromOrdered(ReadBigEndian64(key.data()));
        const std::string_view id = key.substr(8);
        const std::string described =
            absl::StrFormat("%s at %d", QuotedKey(id), at);
        auto it = conversations.find(id);
        if (it == conversations.end()) {
          return Mismatch(kByCreatedDb, described,
                          "names no stored conversation");
        }
        if (it->second.stored.created_at != at) {
          return Mismatch(kByCreatedDb, described,
                          absl::StrFormat("the conversation was created at %d",
                                          it->second.stored.created_at));
        }
        ++seen->by_created_rows;
        return absl::OkStatus();
      });
}

// The statistics recomputed from the records.
struct StatsRecount {
  AggregateStats global;  // only the stored counters are filled
  std::map<std::string, ModelUsage, std::less<>> models;
  std::map<int64_t, DailyUsage> days;
};

absl::Status CheckStats(const Transaction& txn, const ConversationDbs& dbs,
                        const StatsRecount& want,
                        ConversationCheckSummary* seen) {
  // ReadAggregateStats skips keys it does not know; here they are damage.
  CTXKIT_RETURN_IF_ERROR(
      ForEachRow(txn, dbs.stats, [&](std::string_view key, std::string_view) {
        const bool known = key == kGlobalStatsKey ||
                           key[0] == kModelStatsPrefix ||
                           (key[0] == kDayStatsPrefix && key.size() == 9);
        if (!known) {
          return Mismatch(kStatsDb, QuotedKey(key), "is not a statistics key");
        }
        ++seen->stats_records;
        return absl::OkStatus();
      }));
  AggregateStats stored;
  if (dbs.stats.valid()) {
    absl::StatusOr<AggregateStats> read = ReadAggregateStats(txn, dbs.stats);
    CTXKIT_RETURN_IF_ERROR(InDb(kStatsDb, read.status()));
    stored = *std::move(read);
  }
  const AggregateStats& g = want.global;
  CTXKIT_RETURN_IF_ERROR(Compare(
      kStatsDb, QuotedKey(kGlobalStatsKey),
      {{"conversations", stored.conversations, g.conversations},
       {"messages", stored.messages, g.messages},
       {"user_tokens", stored.user_tokens, g.user_tokens},
       {"assistant_tokens", stored.assistant_tokens, g.assistant_tokens},
       {"system_tokens", stored.system_tokens, g.system_tokens},
       {"tool_tokens", stored.tool_tokens, g.tool_tokens},
       {"compressed_messages", stored.compressed_messages,
        g.compressed_messages},
       {"compressed_tokens", stored.compressed_tokens, g.compressed_tokens}}));

  // A record is removed when it falls to zero, so one the records do not
  // produce is compared with zeros, and one they produce must be there.
  for (const ModelUsage& m : stored.by_model) {
    auto it = want.models.find(m.model);
    const ModelUsage expected =
        it == want.models.end() ? ModelUsage{} : it->second;
    CTXKIT_RETURN_IF_ERROR(
        Compare(kStatsDb, QuotedKey(ModelKey(m.model)),
                {{"conversations", m.conversations, expected.conversations},
                 {"messages", m.messages, expected.messages},
                 {"input_tokens", m.input_tokens, expected.input_tokens},
                 {"output_tokens", m.output_tokens, expected.output_tokens}}));
  }
  std::set<std::string_view> stored_models;
  for (const ModelUsage& m : stored.by_model) stored_models.insert(m.model);
  for (const auto& [model, usage] : want.models) {
    if (!stored_models.contains(model)) {
      return Mismatch(kStatsDb, QuotedKey(ModelKey(model)),
                      absl::StrFormat("is missing; %d conversations have "
                                      "that model",
                                      usage.conversations));
    }
  }
  for (const DailyUsage& d : stored.days) {
    auto it = want.days.find(d.day);
    const DailyUsage expected =
        it == want.days.end() ? DailyUsage{} : it->second;
    CTXKIT_RETURN_IF_ERROR(
        Compare(kStatsDb, DayText(d.day),
                {{"messages", d.messages, expected.messages},
                 {"input_tokens", d.input_tokens, expected.input_tokens},
                 {"output_tokens", d.output_tokens, expected.output_tokens}}));
  }
  std::set<int64_t> stored_days;
  for (const DailyUsage& d : stored.days) stored_days.insert(d.day);
  for (const auto& [day, usage] : want.days) {
    if (!stored_days.contains(day)) {
      return Mismatch(kStatsDb, DayText(day),
                      absl::StrFormat("is missing; %d messages were created "
                                      "that day",
                                      usage.messages));
    }
  }
  return absl::OkStatus();
}

// Compacted views are deleted with their conversation, so each must belong
// to a stored one.
absl::Status CheckViews(const Transaction& txn, const ConversationDbs& dbs,
                        const Recounts& conversations,
                        ConversationCheckSummary* seen) {
  return ForEachRow(
      txn, dbs.compacted_views,
      [&](std::string_view key, std::string_view) -> absl::Status {
        if (key.size() != kMessageKeySize ||
            ReadBigEndian64(key.data() + kIdSize) == 0) {
          return Mismatch(kViewsDb, QuotedKey(key),
                          "is not a conversation id and a version");
        }
        if (conversations.find(key.substr(0, kIdSize)) == conversations.end()) {
          return Mismatch(kViewsDb, IdAndNumber(key, "version"),
                          "belongs to no stored conversation");
        }
        ++seen->compacted_views;
        return absl::OkStatus();
      });
}

}  // namespace

absl::StatusOr<ConversationDbs> ConversationDbs::Open(Store& store) {
  ConversationDbs dbs;
  const std::pair<Database*, const char*> named[] = {
      {&dbs.conversations, kConversationsDb},
      {&dbs.messages, kMessagesDb},
      {&dbs.message_ids, kMessageIdsDb},
      {&dbs.by_created, kByCreatedDb},
      {&dbs.stats, kStatsDb},
      {&dbs.compacted_views, kViewsDb},
  };
  for (const auto& [db, name] : named) {
    absl::StatusOr<Database> opened = internal::StoreOpenDatabase(store, name);
    if (opened.ok()) {
      *db = *opened;
    } else if (opened.status().code() != absl::StatusCode::kNotFound) {
      return opened.status();
    }
  }
  return dbs;
}

absl::Status CheckConversationTotals(const Transaction& txn,
                                     const ConversationDbs& dbs,
                                     ConversationCheckSummary* summary) {
  ConversationCheckSummary seen;
  Recounts conversations;
  StatsRecount want;

  CTXKIT_RETURN_IF_ERROR(ForEachRow(
      txn, dbs.conversations,
      [&](std::string_view id, std::string_view value) -> absl::Status {
        // Messages and views are keyed by the id's 36 bytes, so any other
        // key could never own them.
        absl::StatusOr<std::string> normal = NormalizeId("id", id);
        if (!normal.ok() || *normal != id) {
          return Mismatch(kConversationsDb, QuotedKey(id),
                          "is not a lower-case conversation id");
        }
        Recount r;
        CTXKIT_RETURN_IF_ERROR(
            InDb(kConversationsDb,
                 DecodeConversation(id, value, &r.stored, &r.last_seq)));
        // Kept for every conversation until the end, and never compared:
        // metadata alone may be 64 KiB.
        r.stored.title = std::string();
        r.stored.metadata = std::string();
        CTXKIT_ASSIGN_OR_RETURN(
            std::optional<std::string_view> row,
            FindRow(txn, dbs.by_created, CreatedKey(r.stored.created_at, id)));
        if (!row) {
          return Mismatch(
              kByCreatedDb,
              absl::StrFormat("%s at %d", QuotedKey(id), r.stored.created_at),
              "is missing; the conversation was created then");
        }
        ++want.global.conversations;
        ++want.models[r.stored.model].conversations;
        conversations.emplace(std::string(id), std::move(r));
        return absl::OkStatus();
      }));
  seen.conversations = conversations.size();

  // Keys order a conversation's messages by seq, so the last one walked is
  // its newest.
  CTXKIT_RETURN_IF_ERROR(ForEachRow(
      txn, dbs.messages,
      [&](std::string_view key, std::string_view value) -> absl::Status {
        if (key.size() != kMessageKeySize) {
          return Mismatch(kMessagesDb, QuotedKey(key),
                          "is not a conversation id and a seq");
        }
        auto it = conversations.find(key.substr(0, kIdSize));
        if (it == conversations.end()) {
          return Mismatch(kMessagesDb, IdAndNumber(key, "seq"),
                          "belongs to no stored conversation");
        }
        absl::StatusOr<MessageView> m = DecodeMessage(key, value);
        CTXKIT_RETURN_IF_ERROR(InDb(kMessagesDb, m.status()));
        CTXKIT_RETURN_IF_ERROR(InDb(kMessagesDb, CheckMessageText(key, *m)));
        CTXKIT_ASSIGN_OR_RETURN(std::optional<std::string_view> row,
                                FindRow(txn, dbs.message_ids, m->id));
        if (!row || *row != key) {
          return Mismatch(
              kMessageIdsDb, QuotedKey(m->id),
              row ? absl::StrFormat("gives message %s; the message with "
                                    "that id is %s",
                                    IdAndNumber(*row, "seq"),
                                    IdAndNumber(key, "seq"))
                  : absl::StrFormat("is missing; message %s has that id",
                                    IdAndNumber(key, "seq")));
        }
        Recount& r = it->second;
        const size_t role = RoleIndex(m->role);
        ++r.messages;
        r.tokens[role] += m->tokens;
        if (m->compressed()) {
          ++r.compressed;
          r.compressed_tokens += m->tokens;
        }
        r.max_seq = ReadBigEndian64(key.data() + kIdSize);
        r.newest_content = m->content;
        r.newest_at = m->created_at;

        AggregateStats& g = want.global;
        ++g.messages;
        const std::array<uint64_t*, 4> role_tokens = {
            &g.user_tokens, &g.assistant_tokens, &g.system_tokens,
            &g.tool_tokens};
        *role_tokens[role] += m->tokens;
        if (m->compressed()) {
          ++g.compressed_messages;
          g.compressed_tokens += m->tokens;
        }
        const bool input = IsInputRole(m->role);
        ModelUsage& model = want.models[r.stored.model];
        ++model.messages;
        (input ? model.input_tokens : model.output_tokens) += m->tokens;
        DailyUsage& day = want.days[DayOfMillis(m->created_at)];
        ++day.messages;
        (input ? day.input_tokens : day.output_tokens) += m->tokens;
        ++seen.messages;
        if (m->compressed()) ++seen.compressed_messages;
        return absl::OkStatus();
      }));
  for (const auto& [id, r] : conversations) {
    CTXKIT_RETURN_IF_ERROR(CheckConversationRecord(id, r));
  }
  CTXKIT_RETURN_IF_ERROR(CheckMessageIdRows(txn, dbs, &seen));
  CTXKIT_RETURN_IF_ERROR(CheckByCreatedRows(txn, dbs, conversations, &seen));
  CTXKIT_RETURN_IF_ERROR(CheckStats(txn, dbs, want, &seen));
  CTXKIT_RETURN_IF_ERROR(CheckViews(txn, dbs, conversations, &seen));
  if (summary != nullptr) *summary = seen;
  return absl::OkStatus();
}

absl::Status CheckConversationTotals(Store& store,
                                     ConversationCheckSummary* summary) {
  CTXKIT_ASSIGN_OR_RETURN(ConversationDbs dbs, ConversationDbs::Open(store));
  CTXKIT_ASSIGN_OR_RETURN(ReadTransaction txn, internal::StoreBeginRead(store));
  return CheckConversationTotals(txn, dbs, summary);
}

}  // namespace ctxkit::internal
