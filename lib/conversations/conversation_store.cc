// ConversationStore over the Store.
//
// On-disk layout (all integers in values are LEB128 varints, "svarint" a
// zig-zag varint, "lp" a varint length followed by that many bytes; every
// value starts with a version byte, 1 here, so later releases can migrate):
//
// "conversations"            key: conversation id (36 bytes, lower case)
//   1 | svarint created_at | svarint updated_at | lp title | lp model |
//   lp metadata | varint last seq handed out | varint message_count |
//   varint user, assistant, system, tool tokens | varint compressed_count |
//   varint compressed_tokens | lp last_message | svarint last_message_at
// "conversations.messages"   key: conversation id + big-endian u64 seq, so a
//                            conversation's messages are one ordered range
//   1 | lp message id | u8 role | u8 flags (1 compressed, 2 has name,
//   4 has tool_calls, 8 has tool_call_id) | varint tokens |
//   svarint created_at | lp content | [lp name] [lp tool_calls]
//   [lp tool_call_id] (present as the flags say)
// "conversations.message_ids" key: message id (36 bytes)
//   value: conversation id + big-endian u64 seq (the messages key)
// "conversations.by_created" key: big-endian OrderedFromSigned(created_at)
//                            + conversation id; value empty. Listing walks
//                            it backwards; a list cursor is one such key.
// "conversations.stats"      store-wide totals, changed in the transaction
//                            of every write:
//   "g"                   1 | varint conversations | varint messages |
//                         varint user, assistant, system, tool tokens |
//                         varint compressed_messages | varint compressed_tokens
//   "m" + model name      1 | varint conversations | varint messages |
//                         varint user, assistant, system, tool tokens
//                         (removed when everything is 0)
//   "d" + big-endian OrderedFromSigned(UTC day)
//                         1 | varint messages | varint input | varint output
//                         (removed when everything is 0)
// "conversations.compacted_views" key: conversation id + big-endian u64
//                            version; layout in compacted_views.cc

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/clock.h"
#include "lib/base/field_check.h"
#include "lib/base/ids.h"
#include "lib/base/key_codec.h"
#include "lib/cache/delete_hook.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/conversations/record_codec.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "lib/references/delete_hook.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/conversation_hook.h"
#include "simdjson.h"

namespace ctxkit {

namespace internal {
namespace {

constexpr uint8_t kRecordVersion = 1;
constexpr size_t kIdSize = 36;
constexpr size_t kMessageKeySize = kIdSize + 8;
constexpr size_t kCreatedKeySize = 8 + kIdSize;
constexpr int64_t kMillisPerDay = 86400000;

constexpr uint8_t kFlagCompressed = 1;
constexpr uint8_t kFlagName = 2;
constexpr uint8_t kFlagToolCalls = 4;
constexpr uint8_t kFlagToolCallId = 8;

constexpr char kGlobalStatsKey[] = "g";
constexpr char kModelStatsPrefix = 'm';
constexpr char kDayStatsPrefix = 'd';

absl::Status DataLoss(std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("conversation store record is corrupt: %s", what));
}

absl::Status ConversationNotFound(std::string_view id) {
  return absl::NotFoundError(absl::StrFormat("conversation %s not found", id));
}

// Printable ASCII only, so an echoed value can never break a message.
bool IsUuidPrintable(std::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

// A caller's id, checked and lower-cased (IsUuid accepts either case; keys
// are lower case).
absl::StatusOr<std::string> NormalizeId(std::string_view field,
                                        std::string_view id) {
  if (!IsUuid(id)) {
    if (id.size() <= 64 && IsUuidPrintable(id)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s must be a UUID such as 550e8400-e29b-41d4-a716-446655440000 "
          "(got \"%s\")",
          field, id));
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be a UUID such as 550e8400-e29b-41d4-a716-446655440000",
        field));
  }
  return absl::AsciiStrToLower(AV(id));
}

}  // namespace

int64_t DayOfMillis(int64_t millis) {
  int64_t day = millis / kMillisPerDay;
  if (millis % kMillisPerDay < 0) --day;
  return day;
}

// Howard Hinnant's civil_from_days.
std::string DateOfDay(int64_t day) {
  const int64_t z = day + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return absl::StrFormat("%04d-%02d-%02d", y, m, d);
}

std::string MessageKey(std::string_view conversation_id, uint64_t seq) {
  std::string key(conversation_id);
  AppendBigEndian64(&key, seq);
  return key;
}

namespace {

std::string CreatedKey(int64_t created_at, std::string_view id) {
  std::string key;
  key.reserve(kCreatedKeySize);
  AppendBigEndian64(&key, OrderedFromSigned(created_at));
  key.append(id);
  return key;
}

std::string DayKey(int64_t day) {
  std::string key(1, kDayStatsPrefix);
  AppendBigEndian64(&key, OrderedFromSigned(day));
  return key;
}

std::string ModelKey(std::string_view model) {
  std::string key(1, kModelStatsPrefix);
  key.append(model);
  return key;
}

size_t RoleIndex(MessageRole role) { return static_cast<size_t>(role); }

bool IsInputRole(MessageRole role) { return role != MessageRole::kAssistant; }

// ---- Conversation records ----

std::string EncodeConversation(const Conversation& c, uint64_t next_seq) {
  std::string out;
  out.reserve(64 + c.title.size() + c.model.size() + c.metadata.size() +
              c.last_message.size());
  out.push_back(static_cast<char>(kRecordVersion));
  PutSignedVarint(&out, c.created_at);
  PutSignedVarint(&out, c.updated_at);
  PutLengthPrefixed(&out, c.title);
  PutLengthPrefixed(&out, c.model);
  PutLengthPrefixed(&out, c.metadata);
  PutVarint(&out, next_seq);
  PutVarint(&out, c.message_count);
  PutVarint(&out, c.user_tokens);
  PutVarint(&out, c.assistant_tokens);
  PutVarint(&out, c.system_tokens);
  PutVarint(&out, c.tool_tokens);
  PutVarint(&out, c.compressed_count);
  PutVarint(&out, c.compressed_tokens);
  PutLengthPrefixed(&out, c.last_message);
  PutSignedVarint(&out, c.last_message_at);
  return out;
}

absl::Status DecodeConversation(std::string_view id, std::string_view value,
                                Conversation* c, uint64_t* next_seq) {
  RecordReader r(value);
  uint8_t version = 0;
  r.GetByte(&version);
  if (r.ok() && version != kRecordVersion) {
    return DataLoss(absl::StrFormat("conversation %s has version %d", id,
                                    static_cast<int>(version)));
  }
  std::string_view title, model, metadata, last_message;
  r.GetSignedVarint(&c->created_at);
  r.GetSignedVarint(&c->updated_at);
  r.GetLengthPrefixed(&title);
  r.GetLengthPrefixed(&model);
  r.GetLengthPrefixed(&metadata);
  r.GetVarint(next_seq);
  r.GetVarint(&c->message_count);
  r.GetVarint(&c->user_tokens);
  r.GetVarint(&c->assistant_tokens);
  r.GetVarint(&c->system_tokens);
  r.GetVarint(&c->tool_tokens);
  r.GetVarint(&c->compressed_count);
  r.GetVarint(&c->compressed_tokens);
  r.GetLengthPrefixed(&last_message);
  r.GetSignedVarint(&c->last_message_at);
  if (!r.ok() || !r.AtEnd()) {
    return DataLoss(absl::StrFormat("conversation %s is malformed", id));
  }
  c->id = std::string(id);
  c->title = std::string(title);
  c->model = std::string(model);
  c->metadata = std::string(metadata);
  c->last_message = std::string(last_message);
  c->total_tokens =
      c->user_tokens + c->assistant_tokens + c->system_tokens + c->tool_tokens;
  return absl::OkStatus();
}

uint64_t& RoleTokens(Conversation& c, MessageRole role) {
  switch (role) {
    case MessageRole::kUser:
      return c.user_tokens;
    case MessageRole::kAssistant:
      return c.assistant_tokens;
    case MessageRole::kSystem:
      return c.system_tokens;
    case MessageRole::kTool:
      break;
  }
  return c.tool_tokens;
}

// ---- Message records ----

// A decoded message whose strings point into the record.
struct MessageView {
  std::string_view id;
  MessageRole role = MessageRole::kUser;
  uint8_t flags = 0;
  uint64_t tokens = 0;
  int64_t created_at = 0;
  std::string_view content;
  std::string_view name;
  std::string_view tool_calls;
  std::string_view tool_call_id;
  bool compressed() const { return (flags & kFlagCompressed) != 0; }
};

std::string EncodeMessage(std::string_view id, const NewMessage& m,
                          uint64_t tokens, int64_t created_at) {
  std::string out;
  out.reserve(48 + m.content.size());
  out.push_back(static_cast<char>(kRecordVersion));
  PutLengthPrefixed(&out, id);
  out.push_back(static_cast<char>(m.role));
  uint8_t flags = 0;
  if (m.is_compressed) flags |= kFlagCompressed;
  if (m.name) flags |= kFlagName;
  if (m.tool_calls) flags |= kFlagToolCalls;
  if (m.tool_call_id) flags |= kFlagToolCallId;
  out.push_back(static_cast<char>(flags));
  PutVarint(&out, tokens);
  PutSignedVarint(&out, created_at);
  PutLengthPrefixed(&out, m.content);
  if (m.name) PutLengthPrefixed(&out, *m.name);
  if (m.tool_calls) PutLengthPrefixed(&out, *m.tool_calls);
  if (m.tool_call_id) PutLengthPrefixed(&out, *m.tool_call_id);
  return out;
}

std::string EncodeMessageView(const MessageView& m) {
  std::string out;
  out.reserve(48 + m.content.size());
  out.push_back(static_cast<char>(kRecordVersion));
  PutLengthPrefixed(&out, m.id);
  out.push_back(static_cast<char>(m.role));
  out.push_back(static_cast<char>(m.flags));
  PutVarint(&out, m.tokens);
  PutSignedVarint(&out, m.created_at);
  PutLengthPrefixed(&out, m.content);
  if (m.flags & kFlagName) PutLengthPrefixed(&out, m.name);
  if (m.flags & kFlagToolCalls) PutLengthPrefixed(&out, m.tool_calls);
  if (m.flags & kFlagToolCallId) PutLengthPrefixed(&out, m.tool_call_id);
  return out;
}

absl::StatusOr<MessageView> DecodeMessage(std::string_view key,
                                          std::string_view value) {
  RecordReader r(value);
  MessageView m;
  uint8_t version = 0, role = 0;
  r.GetByte(&version);
  r.GetLengthPrefixed(&m.id);
  r.GetByte(&role);
  r.GetByte(&m.flags);
  r.GetVarint(&m.tokens);
  r.GetSignedVarint(&m.created_at);
  r.GetLengthPrefixed(&m.content);
  if (m.flags & kFlagName) r.GetLengthPrefixed(&m.name);
  if (m.flags & kFlagToolCalls) r.GetLengthPrefixed(&m.tool_calls);
  if (m.flags & kFlagToolCallId) r.GetLengthPrefixed(&m.tool_call_id);
  if (!r.ok() || !r.AtEnd() || version != kRecordVersion ||
      role > static_cast<uint8_t>(MessageRole::kTool) ||
      m.id.size() != kIdSize) {
    std::string where = "a message";
    if (key.size() == kMessageKeySize) {
      where = absl::StrFormat("message %d of conversation %s",
                              ReadBigEndian64(key.data() + kIdSize),
                              key.substr(0, kIdSize));
    }
    return DataLoss(absl::StrFormat("%s is malformed", where));
  }
  m.role = static_cast<MessageRole>(role);
  return m;
}

Message ToMessage(std::string_view key, const MessageView& v) {
  Message m;
  m.id = std::string(v.id);
  m.conversation_id = std::string(key.substr(0, kIdSize));
  m.seq = ReadBigEndian64(key.data() + kIdSize);
  m.role = v.role;
  m.content = std::string(v.content);
  if (v.flags & kFlagName) m.name = std::string(v.name);
  if (v.flags & kFlagToolCalls) m.tool_calls = std::string(v.tool_calls);
  if (v.flags & kFlagToolCallId) m.tool_call_id = std::string(v.tool_call_id);
  m.tokens = v.tokens;
  m.is_compressed = v.compressed();
  m.created_at = v.created_at;
  return m;
}

// The first kLastMessagePreviewChars code points of (valid UTF-8) `content`,
// with "..." when cut.
std::string Preview(std::string_view content) {
  size_t chars = 0;
  for (size_t i = 0; i < content.size(); ++i) {
    if ((static_cast<unsigned char>(content[i]) & 0xC0) != 0x80) {
      if (chars == ConversationLimits::kLastMessagePreviewChars) {
        return absl::StrFormat("%s...", content.substr(0, i));
      }
      ++chars;
    }
  }
  return std::string(content);
}

// ---- Store-wide statistics ----

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

// The changes one write makes to the store-wide statistics, collected while
// the write runs and applied once at its end (one read-modify-write per
// touched key however many messages the write holds).
class StatsDelta {
 public:
  void AddConversation(std::string_view model, int sign) {
    global_.conversations += sign;
    Model(model).conversations += sign;
  }

  void AddMessage(std::string_view model, MessageRole role, uint64_t tokens,
                  bool compressed, int64_t created_at, int sign) {
    const int64_t t = sign * static_cast<int64_t>(tokens);
    global_.messages += sign;
    global_.tokens[RoleIndex(role)] += t;
    if (compressed) {
      global_.compressed_messages += sign;
      global_.compressed_tokens += t;
    }
    Delta& m = Model(model);
    m.messages += sign;
    m.tokens[RoleIndex(role)] += t;
    Day& d = days_[DayOfMillis(created_at)];
    d.messages += sign;
    (IsInputRole(role) ? d.input : d.output) += t;
  }

  void Compression(uint64_t tokens, int sign) {
    global_.compressed_messages += sign;
    global_.compressed_tokens += sign * static_cast<int64_t>(tokens);
  }

  absl::Status Apply(WriteTransaction& txn, Database db) const {
    {
      GlobalTotals g;
      auto v = txn.Get(db, kGlobalStatsKey);
      if (v.ok()) {
        CTXKIT_RETURN_IF_ERROR(DecodeGlobal(*v, &g));
      } else if (v.status().code() != StatusCode::kNotFound) {
        return ToAbsl(v.status());
      }
      CTXKIT_RETURN_IF_ERROR(
          AddDelta(&g.conversations, global_.conversations, "conversations"));
      CTXKIT_RETURN_IF_ERROR(
          AddDelta(&g.messages, global_.messages, "messages"));
      for (size_t i = 0; i < 4; ++i) {
        CTXKIT_RETURN_IF_ERROR(
            AddDelta(&g.tokens[i], global_.tokens[i], "role tokens"));
      }
      CTXKIT_RETURN_IF_ERROR(AddDelta(
          &g.compressed_messages, global_.compressed_messages, "compressed"));
      CTXKIT_RETURN_IF_ERROR(AddDelta(&g.compressed_tokens,
                                      global_.compressed_tokens,
                                      "compressed tokens"));
      CTXKIT_RETURN_IF_ERROR(txn.Put(db, kGlobalStatsKey, EncodeGlobal(g)));
    }
    for (const auto& [model, delta] : models_) {
      const std::string key = ModelKey(model);
      ModelTotals m;
      auto v = txn.Get(db, key);
      if (v.ok()) {
        CTXKIT_RETURN_IF_ERROR(DecodeModel(*v, &m));
      } else if (v.status().code() != StatusCode::kNotFound) {
        return ToAbsl(v.status());
      }
      CTXKIT_RETURN_IF_ERROR(AddDelta(&m.conversations, delta.conversations,
                                      "model conversations"));
      CTXKIT_RETURN_IF_ERROR(
          AddDelta(&m.messages, delta.messages, "model messages"));
      for (size_t i = 0; i < 4; ++i) {
        CTXKIT_RETURN_IF_ERROR(
            AddDelta(&m.tokens[i], delta.tokens[i], "model tokens"));
      }
      if (m.Empty()) {
        auto deleted = txn.Delete(db, key);
        CTXKIT_RETURN_IF_ERROR(deleted.status());
      } else {
        CTXKIT_RETURN_IF_ERROR(txn.Put(db, key, EncodeModel(m)));
      }
    }
    for (const auto& [day, delta] : days_) {
      const std::string key = DayKey(day);
      DayTotals d;
      auto v = txn.Get(db, key);
      if (v.ok()) {
        CTXKIT_RETURN_IF_ERROR(DecodeDay(*v, &d));
      } else if (v.status().code() != StatusCode::kNotFound) {
        return ToAbsl(v.status());
      }
      CTXKIT_RETURN_IF_ERROR(
          AddDelta(&d.messages, delta.messages, "day messages"));
      CTXKIT_RETURN_IF_ERROR(AddDelta(&d.input, delta.input, "day input"));
      CTXKIT_RETURN_IF_ERROR(AddDelta(&d.output, delta.output, "day output"));
      if (d.Empty()) {
        auto deleted = txn.Delete(db, key);
        CTXKIT_RETURN_IF_ERROR(deleted.status());
      } else {
        CTXKIT_RETURN_IF_ERROR(txn.Put(db, key, EncodeDay(d)));
      }
    }
    return absl::OkStatus();
  }

 private:
  struct Delta {
    int64_t conversations = 0;
    int64_t messages = 0;
    std::array<int64_t, 4> tokens = {};
    int64_t compressed_messages = 0;
    int64_t compressed_tokens = 0;
  };
  struct Day {
    int64_t messages = 0;
    int64_t input = 0;
    int64_t output = 0;
  };

  Delta& Model(std::string_view model) {
    if (last_model_ == nullptr || last_model_name_ != model) {
      last_model_ = &models_[std::string(model)];
      last_model_name_ = std::string(model);
    }
    return *last_model_;
  }

  Delta global_;
  std::map<std::string, Delta> models_;
  std::map<int64_t, Day> days_;
  Delta* last_model_ = nullptr;
  std::string last_model_name_;
};

// ---- Validation and token counting ----

// Counts text for one model: the registry resolves the model once, instead
// of once per message as ModelRegistry::CountTokens would. Same results as
// CountTokens (the model's tokenizer, else EstimateTokens()).
class ModelCounter {
 public:
  static absl::StatusOr<ModelCounter> For(std::string_view model) {
    ModelCounter counter;
    const ResolvedModel resolved = ModelRegistry::Default().Resolve(model);
    if (!resolved.info.encoding.empty()) {
      auto tokenizer =
          ModelRegistry::Default().TokenizerForEncoding(resolved.info.encoding);
      if (tokenizer.ok()) {
        counter.tokenizer_ = *tokenizer;
      } else if (tokenizer.status().code() != StatusCode::kFailedPrecondition) {
        return ToAbsl(tokenizer.status());
      }
    }
    counter.options_.allowed_special = SpecialTokenSet::None();
    counter.options_.disallowed_special = SpecialTokenSet::None();
    return counter;
  }

  absl::StatusOr<uint64_t> Count(std::string_view text) const {
    if (text.empty()) return 0;
    if (!tokenizer_) return EstimateTokens(text);
    StatusOr<size_t> n = tokenizer_->Count(text, options_);
    CTXKIT_RETURN_IF_ERROR(n.status());
    return *n;
  }

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
  EncodeOptions options_;
};

std::string FieldName(std::string_view prefix, std::string_view field) {
  if (prefix.empty()) return std::string(field);
  return absl::StrFormat("%s.%s", prefix, field);
}

absl::Status CheckMetadata(std::string_view metadata) {
  CTXKIT_RETURN_IF_ERROR(
      CheckText("metadata", metadata, ConversationLimits::kMaxMetadataBytes));
  simdjson::dom::parser parser;
  CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::element root,
                          ParseJson(parser, metadata, "metadata"));
  return AsObject(root, "metadata").status();
}

absl::Status CheckTitle(std::string_view title) {
  return CheckText("title", title, ConversationLimits::kMaxTitleBytes);
}

// Validates a message and returns its tokens (see the header: content plus
// tool calls as CountMessages counts them).
absl::StatusOr<uint64_t> CheckAndCount(const NewMessage& m,
                                       std::string_view prefix,
                                       const ModelCounter& counter,
                                       simdjson::dom::parser& parser) {
  if (static_cast<uint8_t>(m.role) > static_cast<uint8_t>(MessageRole::kTool)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is %d; it must be user, assistant, system or tool",
                        FieldName(prefix, "role"), static_cast<int>(m.role)));
  }
  CTXKIT_RETURN_IF_ERROR(CheckText(FieldName(prefix, "content"), m.content,
                                   ConversationLimits::kMaxContentBytes,
                                   /*allow_empty=*/true));
  if (m.name) {
    CTXKIT_RETURN_IF_ERROR(CheckText(FieldName(prefix, "name"), *m.name,
                                     ConversationLimits::kMaxNameBytes));
  }
  if (m.tool_call_id) {
    const std::string field = FieldName(prefix, "tool_call_id");
    CTXKIT_RETURN_IF_ERROR(CheckText(field, *m.tool_call_id,
                                     ConversationLimits::kMaxToolCallIdBytes));
    if (m.role != MessageRole::kTool) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is only allowed on tool messages (role is %s)",
                          field, MessageRoleName(m.role)));
    }
  }
  CTXKIT_ASSIGN_OR_RETURN(uint64_t tokens, counter.Count(m.content));
  if (m.tool_calls) {
    const std::string field = FieldName(prefix, "tool_calls");
    CTXKIT_RETURN_IF_ERROR(CheckText(field, *m.tool_calls,
                                     ConversationLimits::kMaxToolCallsBytes));
    if (m.role != MessageRole::kAssistant) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is only allowed on assistant messages (role is %s)", field,
          MessageRoleName(m.role)));
    }
    CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::element root,
                            ParseJson(parser, *m.tool_calls, field));
    CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::array calls, AsArray(root, field));
    size_t i = 0;
    for (simdjson::dom::element call : calls) {
      const std::string call_path = JsonIndexPath(field, i++);
      CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::object call_obj,
                              AsObject(call, call_path));
      CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::object function,
                              GetObject(call_obj, "function", call_path));
      const std::string function_path = JsonPath(call_path, "function");
      CTXKIT_ASSIGN_OR_RETURN(std::string_view name,
                              GetString(function, "name", function_path));
      CTXKIT_ASSIGN_OR_RETURN(uint64_t name_tokens, counter.Count(name));
      tokens += name_tokens + MessageCountOptions{}.tokens_per_tool_call;
      simdjson::dom::element arguments;
      if (!function["arguments"].get(arguments)) {
        if (arguments.type() == simdjson::dom::element_type::STRING) {
          CTXKIT_ASSIGN_OR_RETURN(
              uint64_t t, counter.Count(arguments.get_string().value_unsafe()));
          tokens += t;
        } else if (arguments.type() == simdjson::dom::element_type::OBJECT) {
          const std::string minified = simdjson::minify(arguments);
          CTXKIT_ASSIGN_OR_RETURN(uint64_t t, counter.Count(minified));
          tokens += t;
        } else if (arguments.type() !=
                   simdjson::dom::element_type::NULL_VALUE) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s must be a string, an object or null (got %s)",
                              JsonPath(function_path, "arguments"),
                              JsonTypeName(arguments.type())));
        }
      }
    }
  }
  return tokens;
}

absl::Status CheckIdList(const std::vector<std::string>& ids,
                         std::vector<std::string>* normalized) {
  if (ids.empty() || ids.size() > ConversationLimits::kMaxBatchMessages) {
    return absl::InvalidArgumentError(
        absl::StrFormat("message_ids holds %d ids; it must hold 1 to %d",
                        ids.size(), ConversationLimits::kMaxBatchMessages));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < ids.size(); ++i) {
    CTXKIT_ASSIGN_OR_RETURN(
        std::string id,
        NormalizeId(absl::StrFormat("message_ids[%d]", i), ids[i]));
    if (seen.insert(id).second) normalized->push_back(std::move(id));
  }
  return absl::OkStatus();
}

// A JSON string literal of valid UTF-8 `s`.
absl::Status AppendJsonString(std::string* out, std::string_view s) {
  JsonWriter writer;
  writer.String(s);
  CTXKIT_ASSIGN_OR_RETURN(std::string text, std::move(writer).Finish());
  out->append(text);
  return absl::OkStatus();
}

}  // namespace
}  // namespace internal

// ---- ConversationStore::Impl ----

struct ConversationStore::Impl {
  Store* store = nullptr;
  ConversationOptions options;
  Database conversations;
  Database messages;
  Database message_ids;
  Database by_created;
  Database stats;
  Database compacted_views;  // may be invalid: see CompactedViewContext
  std::vector<std::unique_ptr<internal::ConversationDeleteHook>> hooks;

  static absl::StatusOr<std::unique_ptr<ConversationStore>> Open(
      Store& store, ConversationOptions options,
      std::vector<std::unique_ptr<internal::ConversationDeleteHook>> hooks) {
    auto impl = std::make_unique<Impl>();
    impl->store = &store;
    impl->options = std::move(options);
    impl->hooks = std::move(hooks);
    const std::pair<Database*, const char*> dbs[] = {
        {&impl->conversations, "conversations"},
        {&impl->messages, "conversations.messages"},
        {&impl->message_ids, "conversations.message_ids"},
        {&impl->by_created, "conversations.by_created"},
        {&impl->stats, "conversations.stats"},
    };
    for (const auto& [db, name] : dbs) {
      StatusOr<Database> opened = store.OpenDatabase(name);
      CTXKIT_RETURN_IF_ERROR(opened.status());
      *db = *opened;
    }
    // Added after the others: a read-only store written before compacted
    // views existed lacks it and has no views (a writable open creates it).
    StatusOr<Database> views =
        store.OpenDatabase("conversations.compacted_views");
    if (views.ok()) {
      impl->compacted_views = *views;
    } else if (views.status().code() != StatusCode::kNotFound) {
      return internal::ToAbsl(views.status());
    }
    return std::unique_ptr<ConversationStore>(
        new ConversationStore(std::move(impl)));
  }

  int64_t Now() const { return internal::NowMillis(options.clock); }

  // Reads and decodes conversation `id` in `txn`; NOT_FOUND naming it.
  absl::Status ReadConversation(const Transaction& txn, std::string_view id,
                                Conversation* c, uint64_t* next_seq) const {
    StatusOr<std::string_view> v = txn.Get(conversations, id);
    if (!v.ok()) {
      if (v.status().code() == StatusCode::kNotFound) {
        return internal::ConversationNotFound(id);
      }
      return internal::ToAbsl(v.status());
    }
    return internal::DecodeConversation(id, *v, c, next_seq);
  }

  absl::StatusOr<std::string> ModelOf(std::string_view id) const {
    StatusOr<ReadTransaction> txn = store->BeginRead();
    CTXKIT_RETURN_IF_ERROR(txn.status());
    Conversation c;
    uint64_t next_seq = 0;
    CTXKIT_RETURN_IF_ERROR(ReadConversation(*txn, id, &c, &next_seq));
    return c.model;
  }

  absl::Status Update(
      const std::function<absl::Status(WriteTransaction&)>& fn) {
    return internal::ToAbsl(store->Update(
        [&](WriteTransaction& txn) { return internal::ToPublic(fn(txn)); }));
  }

  // Calls `fn(key, view)` for each message of conversation `id`, in order.
  template <typename Fn>
  absl::Status ForEachMessage(const Transaction& txn, std::string_view id,
                              Fn&& fn) const {
    StatusOr<Cursor> cursor = txn.NewCursor(messages);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    for (cursor->Seek(id);
         cursor->Valid() && cursor->key().substr(0, internal::kIdSize) == id;
         cursor->Next()) {
      CTXKIT_ASSIGN_OR_RETURN(
          internal::MessageView view,
          internal::DecodeMessage(cursor->key(), cursor->value()));
      CTXKIT_RETURN_IF_ERROR(fn(cursor->key(), view));
    }
    return internal::ToAbsl(cursor->status());
  }

  // Sets the preview fields of `c` from its newest remaining message.
  absl::Status RefreshLastMessage(const Transaction& txn, Conversation* c,
                                  uint64_t next_seq) const {
    c->last_message.clear();
    c->last_message_at = 0;
    StatusOr<Cursor> cursor = txn.NewCursor(messages);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    // `next_seq` is the last seq handed out: seek just past it.
    cursor->Seek(internal::MessageKey(c->id, next_seq + 1));
    if (cursor->Valid()) {
      cursor->Prev();
    } else {
      cursor->SeekToLast();
    }
    if (cursor->Valid() && cursor->key().size() == internal::kMessageKeySize &&
        cursor->key().substr(0, internal::kIdSize) == c->id) {
      CTXKIT_ASSIGN_OR_RETURN(
          internal::MessageView view,
          internal::DecodeMessage(cursor->key(), cursor->value()));
      c->last_message = internal::Preview(view.content);
      c->last_message_at = view.created_at;
    }
    return internal::ToAbsl(cursor->status());
  }

  absl::StatusOr<AddMessagesResult> Add(std::string_view conversation_id,
                                        const NewMessage* batch, size_t count,
                                        bool single) {
    CTXKIT_ASSIGN_OR_RETURN(
        const std::string id,
        internal::NormalizeId("conversation_id", conversation_id));
    if (count == 0 || count > ConversationLimits::kMaxBatchMessages) {
      return absl::InvalidArgumentError(
          absl::StrFormat("messages holds %d messages; it must hold 1 to %d",
                          count, ConversationLimits::kMaxBatchMessages));
    }
    size_t total_bytes = 0;
    for (size_t i = 0; i < count; ++i) total_bytes += batch[i].content.size();
    if (total_bytes > ConversationLimits::kMaxBatchBytes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("messages hold %d bytes of content; the limit is %d",
                          total_bytes, ConversationLimits::kMaxBatchBytes));
    }
    CTXKIT_ASSIGN_OR_RETURN(const std::string model, ModelOf(id));
    CTXKIT_ASSIGN_OR_RETURN(internal::ModelCounter counter,
                            internal::ModelCounter::For(model));
    simdjson::dom::parser parser;
    const int64_t now = Now();
    AddMessagesResult result;
    result.messages.resize(count);
    std::vector<std::string> values(count);
    for (size_t i = 0; i < count; ++i) {
      const NewMessage& m = batch[i];
      const std::string prefix =
          single ? std::string() : absl::StrFormat("messages[%d]", i);
      CTXKIT_ASSIGN_OR_RETURN(
          uint64_t tokens, internal::CheckAndCount(m, prefix, counter, parser));
      Message& out = result.messages[i];
      out.id = internal::NewUuid();
      out.conversation_id = id;
      out.role = m.role;
      out.content = m.content;
      out.name = m.name;
      out.tool_calls = m.tool_calls;
      out.tool_call_id = m.tool_call_id;
      out.tokens = tokens;
      out.is_compressed = m.is_compressed;
      out.created_at = now;
      values[i] = internal::EncodeMessage(out.id, m, tokens, now);
    }
    const std::string preview = internal::Preview(batch[count - 1].content);

    CTXKIT_RETURN_IF_ERROR(Update([&](WriteTransaction& txn) -> absl::Status {
      Conversation c;
      uint64_t next_seq = 0;
      CTXKIT_RETURN_IF_ERROR(ReadConversation(txn, id, &c, &next_seq));
      internal::StatsDelta delta;
      std::string key = internal::MessageKey(id, 0);
      std::string index_value;
      for (size_t i = 0; i < count; ++i) {
        Message& out = result.messages[i];
        out.seq = ++next_seq;
        key.resize(internal::kIdSize);
        internal::AppendBigEndian64(&key, out.seq);
        CTXKIT_RETURN_IF_ERROR(txn.Put(messages, key, values[i]));
        CTXKIT_RETURN_IF_ERROR(txn.Put(message_ids, out.id, key));
        ++c.message_count;
        internal::RoleTokens(c, out.role) += out.tokens;
        if (out.is_compressed) {
          ++c.compressed_count;
          c.compressed_tokens += out.tokens;
        }
        delta.AddMessage(c.model, out.role, out.tokens, out.is_compressed, now,
                         1);
      }
      c.total_tokens =
          c.user_tokens + c.assistant_tokens + c.system_tokens + c.tool_tokens;
      c.last_message = preview;
      c.last_message_at = now;
      c.updated_at = now;
      CTXKIT_RETURN_IF_ERROR(txn.Put(
          conversations, id, internal::EncodeConversation(c, next_seq)));
      CTXKIT_RETURN_IF_ERROR(delta.Apply(txn, stats));
      result.conversation = std::move(c);
      return absl::OkStatus();
    }));
    return result;
  }

  absl::StatusOr<ConversationDetail> Get(std::string_view raw_id,
                                         bool include_messages) const {
    CTXKIT_ASSIGN_OR_RETURN(const std::string id,
                            internal::NormalizeId("id", raw_id));
    ConversationDetail detail;
    std::string chat = "[";
    {
      StatusOr<ReadTransaction> txn = store->BeginRead();
      CTXKIT_RETURN_IF_ERROR(txn.status());
      uint64_t next_seq = 0;
      CTXKIT_RETURN_IF_ERROR(
          ReadConversation(*txn, id, &detail.conversation, &next_seq));
      bool first = true;
      CTXKIT_RETURN_IF_ERROR(ForEachMessage(
          *txn, id,
          [&](std::string_view key,
              const internal::MessageView& view) -> absl::Status {
            if (!first) chat.push_back(',');
            first = false;
            chat.append("{\"role\":\"");
            chat.append(MessageRoleName(view.role));
            chat.append("\",\"content\":");
            CTXKIT_RETURN_IF_ERROR(
                internal::AppendJsonString(&chat, view.content));
            if (view.flags & internal::kFlagName) {
              chat.append(",\"name\":");
              CTXKIT_RETURN_IF_ERROR(
                  internal::AppendJsonString(&chat, view.name));
            }
            if (view.flags & internal::kFlagToolCalls) {
              // Validated as a JSON array when it was added.
              chat.append(",\"tool_calls\":");
              chat.append(view.tool_calls);
            }
            if (view.flags & internal::kFlagToolCallId) {
              chat.append(",\"tool_call_id\":");
              CTXKIT_RETURN_IF_ERROR(
                  internal::AppendJsonString(&chat, view.tool_call_id));
            }
            chat.push_back('}');
            if (include_messages) {
              detail.messages.push_back(internal::ToMessage(key, view));
            }
            return absl::OkStatus();
          }));
    }
    chat.push_back(']');
    StatusOr<MessageCount> count =
        CountMessagesForModel(detail.conversation.model, chat);
    CTXKIT_RETURN_IF_ERROR(count.status());
    detail.actual_tokens = count->total;
    detail.actual_tokens_exact = count->exact;
    return detail;
  }

  absl::StatusOr<ConversationPage> List(uint32_t limit,
                                        std::string_view cursor_text) const {
    CTXKIT_RETURN_IF_ERROR(internal::CheckRange(
        "limit", limit, 1, ConversationLimits::kMaxListLimit));
    std::string start;
    if (!cursor_text.empty()) {
      if (cursor_text.size() > 128 ||
          !absl::WebSafeBase64Unescape(internal::AV(cursor_text), &start) ||
          start.size() != internal::kCreatedKeySize ||
          !internal::IsUuid(std::string_view(start).substr(8))) {
        return absl::InvalidArgumentError(
            "cursor is malformed: pass the next_cursor of an earlier page, or "
            "an empty cursor for the first page");
      }
    }
    ConversationPage page;
    StatusOr<ReadTransaction> txn = store->BeginRead();
    CTXKIT_RETURN_IF_ERROR(txn.status());
    StatusOr<uint64_t> total = txn->Count(conversations);
    CTXKIT_RETURN_IF_ERROR(total.status());
    page.total = *total;
    StatusOr<Cursor> cursor = txn->NewCursor(by_created);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    if (start.empty()) {
      cursor->SeekToLast();
    } else {
      // Every key at or after `start` was on earlier pages.
      cursor->Seek(start);
      if (cursor->Valid()) {
        cursor->Prev();
      } else {
        cursor->SeekToLast();
      }
    }
    std::string last_key;
    for (; cursor->Valid() && page.conversations.size() < limit;
         cursor->Prev()) {
      const std::string_view key = cursor->key();
      if (key.size() != internal::kCreatedKeySize) {
        return internal::DataLoss("conversations.by_created has a bad key");
      }
      const std::string_view id = key.substr(8);
      Conversation c;
      uint64_t next_seq = 0;
      absl::Status s = ReadConversation(*txn, id, &c, &next_seq);
      if (absl::IsNotFound(s)) {
        return internal::DataLoss(absl::StrFormat(
            "conversations.by_created names missing conversation %s", id));
      }
      CTXKIT_RETURN_IF_ERROR(s);
      page.conversations.push_back(std::move(c));
      last_key = std::string(key);
    }
    CTXKIT_RETURN_IF_ERROR(cursor->status());
    if (cursor->Valid() && !last_key.empty()) {
      page.next_cursor = absl::WebSafeBase64Escape(internal::AV(last_key));
    }
    return page;
  }

  absl::StatusOr<DeletedConversation> Delete(std::string_view raw_id) {
    CTXKIT_ASSIGN_OR_RETURN(const std::string id,
                            internal::NormalizeId("id", raw_id));
    DeletedConversation result;
    CTXKIT_RETURN_IF_ERROR(Update([&](WriteTransaction& txn) -> absl::Status {
      result = DeletedConversation();
      uint64_t next_seq = 0;
      CTXKIT_RETURN_IF_ERROR(
          ReadConversation(txn, id, &result.conversation, &next_seq));
      const Conversation& c = result.conversation;
      internal::StatsDelta delta;
      delta.AddConversation(c.model, -1);
      // Collected first: deleting under an open cursor would invalidate the
      // views it hands out.
      std::vector<std::pair<std::string, std::string>> doomed;  // key, msg id
      CTXKIT_RETURN_IF_ERROR(ForEachMessage(
          txn, id,
          [&](std::string_view key,
              const internal::MessageView& view) -> absl::Status {
            delta.AddMessage(c.model, view.role, view.tokens, view.compressed(),
                             view.created_at, -1);
            doomed.emplace_back(std::string(key), std::string(view.id));
            return absl::OkStatus();
          }));
      for (const auto& [key, message_id] : doomed) {
        auto gone = txn.Delete(messages, key);
        CTXKIT_RETURN_IF_ERROR(gone.status());
        gone = txn.Delete(message_ids, message_id);
        CTXKIT_RETURN_IF_ERROR(gone.status());
      }
      result.messages_deleted = doomed.size();
      auto gone =
          txn.Delete(by_created, internal::CreatedKey(c.created_at, id));
      CTXKIT_RETURN_IF_ERROR(gone.status());
      gone = txn.Delete(conversations, id);
      CTXKIT_RETURN_IF_ERROR(gone.status());
      CTXKIT_RETURN_IF_ERROR(delta.Apply(txn, stats));
      if (compacted_views.valid()) {
        CTXKIT_ASSIGN_OR_RETURN(uint64_t views, internal::DeleteCompactedViews(
                                                    txn, compacted_views, id));
        result.dependent_records_deleted += views;
      }
      for (const auto& hook : hooks) {
        CTXKIT_ASSIGN_OR_RETURN(uint64_t n,
                                hook->OnConversationDeleted(txn, id));
        result.dependent_records_deleted += n;
      }
      return absl::OkStatus();
    }));
    return result;
  }

  // Shared by SetCompressed and DeleteMessages: checks the ids, then runs
  // `fn(txn, conversation, next_seq, delta, key, view)` for each message in
  // one transaction and stores the conversation and statistics.
  template <typename Fn>
  absl::StatusOr<Conversation> ChangeMessages(
      std::string_view raw_id, const std::vector<std::string>& message_ids_in,
      bool refresh_last, Fn&& fn) {
    CTXKIT_ASSIGN_OR_RETURN(const std::string id,
                            internal::NormalizeId("conversation_id", raw_id));
    std::vector<std::string> ids;
    CTXKIT_RETURN_IF_ERROR(internal::CheckIdList(message_ids_in, &ids));
    const int64_t now = Now();
    Conversation result;
    CTXKIT_RETURN_IF_ERROR(Update([&](WriteTransaction& txn) -> absl::Status {
      Conversation c;
      uint64_t next_seq = 0;
      CTXKIT_RETURN_IF_ERROR(ReadConversation(txn, id, &c, &next_seq));
      internal::StatsDelta delta;
      for (const std::string& message_id : ids) {
        StatusOr<std::string_view> where = txn.Get(message_ids, message_id);
        if (!where.ok() && where.status().code() != StatusCode::kNotFound) {
          return internal::ToAbsl(where.status());
        }
        if (!where.ok() || where->substr(0, internal::kIdSize) != id) {
          return absl::NotFoundError(absl::StrFormat(
              "message %s not found in conversation %s", message_id, id));
        }
        const std::string key(*where);
        StatusOr<std::string_view> value = txn.Get(messages, key);
        if (!value.ok()) {
          if (value.status().code() == StatusCode::kNotFound) {
            return internal::DataLoss(absl::StrFormat(
                "message %s is indexed but missing", message_id));
          }
          return internal::ToAbsl(value.status());
        }
        CTXKIT_ASSIGN_OR_RETURN(internal::MessageView view,
                                internal::DecodeMessage(key, *value));
        CTXKIT_RETURN_IF_ERROR(fn(txn, c, delta, key, view));
      }
      c.total_tokens =
          c.user_tokens + c.assistant_tokens + c.system_tokens + c.tool_tokens;
      if (refresh_last) {
        CTXKIT_RETURN_IF_ERROR(RefreshLastMessage(txn, &c, next_seq));
      }
      c.updated_at = now;
      CTXKIT_RETURN_IF_ERROR(txn.Put(
          conversations, id, internal::EncodeConversation(c, next_seq)));
      CTXKIT_RETURN_IF_ERROR(delta.Apply(txn, stats));
      result = std::move(c);
      return absl::OkStatus();
    }));
    return result;
  }

  absl::StatusOr<ctxkit::AggregateStats> Aggregate() const {
    ctxkit::AggregateStats out;
    StatusOr<ReadTransaction> txn = store->BeginRead();
    CTXKIT_RETURN_IF_ERROR(txn.status());
    StatusOr<Cursor> cursor = txn->NewCursor(stats);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
      const std::string_view key = cursor->key();
      if (key == internal::kGlobalStatsKey) {
        internal::GlobalTotals g;
        CTXKIT_RETURN_IF_ERROR(internal::DecodeGlobal(cursor->value(), &g));
        out.conversations = g.conversations;
        out.messages = g.messages;
        out.user_tokens = g.tokens[0];
        out.assistant_tokens = g.tokens[1];
        out.system_tokens = g.tokens[2];
        out.tool_tokens = g.tokens[3];
        out.compressed_messages = g.compressed_messages;
        out.compressed_tokens = g.compressed_tokens;
      } else if (key[0] == internal::kModelStatsPrefix) {
        internal::ModelTotals m;
        CTXKIT_RETURN_IF_ERROR(internal::DecodeModel(cursor->value(), &m));
        ModelUsage& u = out.by_model.emplace_back();
        u.model = std::string(key.substr(1));
        u.conversations = m.conversations;
        u.messages = m.messages;
        u.input_tokens = m.tokens[0] + m.tokens[2] + m.tokens[3];
        u.output_tokens = m.tokens[1];
      } else if (key[0] == internal::kDayStatsPrefix && key.size() == 9) {
        internal::DayTotals d;
        CTXKIT_RETURN_IF_ERROR(internal::DecodeDay(cursor->value(), &d));
        DailyUsage& u = out.days.emplace_back();
        u.day = internal::SignedFromOrdered(
            internal::ReadBigEndian64(key.data() + 1));
        u.date = internal::DateOfDay(u.day);
        u.messages = d.messages;
        u.input_tokens = d.input;
        u.output_tokens = d.output;
      }
    }
    CTXKIT_RETURN_IF_ERROR(cursor->status());
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

  absl::StatusOr<ctxkit::ConversationStats> Stats(std::string_view raw_id,
                                                  size_t max_points) const {
    CTXKIT_ASSIGN_OR_RETURN(const std::string id,
                            internal::NormalizeId("id", raw_id));
    ctxkit::ConversationStats out;
    std::vector<TimelinePoint> all;
    {
      StatusOr<ReadTransaction> txn = store->BeginRead();
      CTXKIT_RETURN_IF_ERROR(txn.status());
      uint64_t next_seq = 0;
      CTXKIT_RETURN_IF_ERROR(
          ReadConversation(*txn, id, &out.conversation, &next_seq));
      all.reserve(out.conversation.message_count);
      uint64_t cumulative = 0;
      CTXKIT_RETURN_IF_ERROR(ForEachMessage(
          *txn, id, [&](std::string_view, const internal::MessageView& view) {
            cumulative += view.tokens;
            all.push_back({view.created_at, cumulative, view.tokens});
            return absl::OkStatus();
          }));
    }
    const Conversation& c = out.conversation;
    out.total_tokens = c.total_tokens;
    out.input_tokens = c.input_tokens();
    out.output_tokens = c.output_tokens();
    out.user_tokens = c.user_tokens;
    out.assistant_tokens = c.assistant_tokens;
    out.message_count = c.message_count;
    if (c.message_count > 0) {
      out.avg_tokens_per_message = static_cast<double>(c.total_tokens) /
                                   static_cast<double>(c.message_count);
      out.compression_ratio = static_cast<double>(c.compressed_count) /
                              static_cast<double>(c.message_count);
    }
    if (max_points == 0 || all.size() <= max_points) {
      out.timeline = std::move(all);
    } else if (max_points == 1) {
      out.timeline.push_back(all.back());
    } else {
      const size_t n = all.size();
      const size_t step = (n + max_points - 2) / (max_points - 1);
      for (size_t i = step - 1; i < n - 1; i += step) {
        out.timeline.push_back(all[i]);
      }
      out.timeline.push_back(all.back());
    }
    out.token_limit = TokenLimitForModel(c.model, c.total_tokens);
    return out;
  }
};

// ---- ConversationStore ----

const char* MessageRoleName(MessageRole role) noexcept {
  switch (role) {
    case MessageRole::kUser:
      return "user";
    case MessageRole::kAssistant:
      return "assistant";
    case MessageRole::kSystem:
      return "system";
    case MessageRole::kTool:
      return "tool";
  }
  return "invalid";
}

StatusOr<MessageRole> ParseMessageRole(std::string_view name) {
  for (MessageRole role : {MessageRole::kUser, MessageRole::kAssistant,
                           MessageRole::kSystem, MessageRole::kTool}) {
    if (name == MessageRoleName(role)) return role;
  }
  if (name.size() <= 64 && internal::IsUuidPrintable(name)) {
    return Status(StatusCode::kInvalidArgument,
                  absl::StrFormat("role is \"%s\"; it must be user, "
                                  "assistant, system or tool",
                                  name));
  }
  return Status(StatusCode::kInvalidArgument,
                "role must be user, assistant, system or tool");
}

ConversationStore::ConversationStore(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ConversationStore::~ConversationStore() = default;

StatusOr<std::unique_ptr<ConversationStore>> ConversationStore::Open(
    Store& store, ConversationOptions options) {
  std::vector<std::unique_ptr<internal::ConversationDeleteHook>> hooks;
  auto references = internal::MakeReferenceDeleteHook(store);
  if (!references.ok()) return internal::ToPublic(references.status());
  hooks.push_back(std::move(*references));
  auto cache = internal::MakeCacheDeleteHook(store);
  if (!cache.ok()) return internal::ToPublic(cache.status());
  hooks.push_back(std::move(*cache));
  return internal::ToPublic(
      Impl::Open(store, std::move(options), std::move(hooks)));
}

StatusOr<Conversation> ConversationStore::Create(
    const NewConversation& conversation) {
  absl::Status s = internal::CheckTitle(conversation.title);
  if (s.ok()) {
    s = internal::CheckText("model", conversation.model,
                            ConversationLimits::kMaxModelBytes);
  }
  if (s.ok()) s = internal::CheckMetadata(conversation.metadata);
  if (!s.ok()) return internal::ToPublic(s);
  Conversation c;
  c.id = internal::NewUuid();
  c.title = conversation.title;
  c.model = conversation.model;
  c.metadata = conversation.metadata;
  c.created_at = c.updated_at = impl_->Now();
  const std::string record = internal::EncodeConversation(c, 0);
  const std::string created_key = internal::CreatedKey(c.created_at, c.id);
  s = impl_->Update([&](WriteTransaction& txn) -> absl::Status {
    CTXKIT_RETURN_IF_ERROR(txn.Put(impl_->conversations, c.id, record));
    CTXKIT_RETURN_IF_ERROR(txn.Put(impl_->by_created, created_key, {}));
    internal::StatsDelta delta;
    delta.AddConversation(c.model, 1);
    return delta.Apply(txn, impl_->stats);
  });
  if (!s.ok()) return internal::ToPublic(s);
  return c;
}

StatusOr<AddMessageResult> ConversationStore::AddMessage(
    std::string_view conversation_id, const NewMessage& message) {
  auto added = impl_->Add(conversation_id, &message, 1, /*single=*/true);
  if (!added.ok()) return internal::ToPublic(added.status());
  AddMessageResult out;
  out.message = std::move(added->messages[0]);
  out.conversation = std::move(added->conversation);
  return out;
}

StatusOr<AddMessagesResult> ConversationStore::AddMessages(
    std::string_view conversation_id, const std::vector<NewMessage>& messages) {
  return internal::ToPublic(impl_->Add(conversation_id, messages.data(),
                                       messages.size(), /*single=*/false));
}

StatusOr<ConversationDetail> ConversationStore::Get(
    std::string_view id, bool include_messages) const {
  return internal::ToPublic(impl_->Get(id, include_messages));
}

StatusOr<ConversationPage> ConversationStore::List(
    uint32_t limit, std::string_view cursor) const {
  return internal::ToPublic(impl_->List(limit, cursor));
}

StatusOr<Conversation> ConversationStore::Update(
    std::string_view raw_id, const ConversationUpdate& update) {
  auto id = internal::NormalizeId("id", raw_id);
  if (!id.ok()) return internal::ToPublic(id.status());
  absl::Status s;
  if (!update.title && !update.metadata) {
    s = absl::InvalidArgumentError(
        "title or metadata must be given: an update changes at least one");
  }
  if (s.ok() && update.title) s = internal::CheckTitle(*update.title);
  if (s.ok() && update.metadata) s = internal::CheckMetadata(*update.metadata);
  if (!s.ok()) return internal::ToPublic(s);
  const int64_t now = impl_->Now();
  Conversation result;
  s = impl_->Update([&](WriteTransaction& txn) -> absl::Status {
    uint64_t next_seq = 0;
    CTXKIT_RETURN_IF_ERROR(
        impl_->ReadConversation(txn, *id, &result, &next_seq));
    if (update.title) result.title = *update.title;
    if (update.metadata) result.metadata = *update.metadata;
    result.updated_at = now;
    return internal::ToAbsl(
        txn.Put(impl_->conversations, *id,
                internal::EncodeConversation(result, next_seq)));
  });
  if (!s.ok()) return internal::ToPublic(s);
  return result;
}

StatusOr<DeletedConversation> ConversationStore::Delete(std::string_view id) {
  return internal::ToPublic(impl_->Delete(id));
}

StatusOr<Conversation> ConversationStore::SetCompressed(
    std::string_view conversation_id,
    const std::vector<std::string>& message_ids, bool is_compressed) {
  return internal::ToPublic(impl_->ChangeMessages(
      conversation_id, message_ids, /*refresh_last=*/false,
      [&](WriteTransaction& txn, Conversation& c, internal::StatsDelta& delta,
          const std::string& key, internal::MessageView view) -> absl::Status {
        if (view.compressed() == is_compressed) return absl::OkStatus();
        view.flags ^= internal::kFlagCompressed;
        const int sign = is_compressed ? 1 : -1;
        c.compressed_count += sign;
        c.compressed_tokens += sign * static_cast<int64_t>(view.tokens);
        delta.Compression(view.tokens, sign);
        return internal::ToAbsl(
            txn.Put(impl_->messages, key, internal::EncodeMessageView(view)));
      }));
}

StatusOr<Conversation> ConversationStore::DeleteMessages(
    std::string_view conversation_id,
    const std::vector<std::string>& message_ids) {
  return internal::ToPublic(impl_->ChangeMessages(
      conversation_id, message_ids, /*refresh_last=*/true,
      [&](WriteTransaction& txn, Conversation& c, internal::StatsDelta& delta,
          const std::string& key,
          const internal::MessageView& view) -> absl::Status {
        if (c.message_count == 0 ||
            internal::RoleTokens(c, view.role) < view.tokens) {
          return internal::DataLoss("conversation totals below its messages'");
        }
        --c.message_count;
        internal::RoleTokens(c, view.role) -= view.tokens;
        if (view.compressed()) {
          --c.compressed_count;
          c.compressed_tokens -= view.tokens;
        }
        delta.AddMessage(c.model, view.role, view.tokens, view.compressed(),
                         view.created_at, -1);
        const std::string message_id(view.id);  // the view dies with the key
        auto gone = txn.Delete(impl_->messages, key);
        CTXKIT_RETURN_IF_ERROR(gone.status());
        gone = txn.Delete(impl_->message_ids, message_id);
        CTXKIT_RETURN_IF_ERROR(gone.status());
        return absl::OkStatus();
      }));
}

StatusOr<AggregateStats> ConversationStore::AggregateStats() const {
  return internal::ToPublic(impl_->Aggregate());
}

StatusOr<ConversationStats> ConversationStore::ConversationStats(
    std::string_view id, size_t max_timeline_points) const {
  return internal::ToPublic(impl_->Stats(id, max_timeline_points));
}

namespace internal {

CompactedViewContext CompactedViewContextOf(
    const ConversationStore::Impl& impl) {
  CompactedViewContext context;
  context.store = impl.store;
  context.conversations = impl.conversations;
  context.views = impl.compacted_views;
  context.options = &impl.options;
  return context;
}

absl::StatusOr<std::string> NormalizeConversationId(std::string_view field,
                                                    std::string_view id) {
  return NormalizeId(field, id);
}

absl::Status ReadConversationRecord(const Transaction& txn,
                                    Database conversations, std::string_view id,
                                    Conversation* c, uint64_t* last_seq) {
  StatusOr<std::string_view> v = txn.Get(conversations, id);
  if (!v.ok()) {
    if (v.status().code() == StatusCode::kNotFound) {
      return ConversationNotFound(id);
    }
    return ToAbsl(v.status());
  }
  return DecodeConversation(id, *v, c, last_seq);
}

absl::StatusOr<std::unique_ptr<ConversationStore>>
OpenConversationStoreWithHooks(
    Store& store, ConversationOptions options,
    std::vector<std::unique_ptr<ConversationDeleteHook>> hooks) {
  return ConversationStore::Impl::Open(store, std::move(options),
                                       std::move(hooks));
}

}  // namespace internal
}  // namespace ctxkit
