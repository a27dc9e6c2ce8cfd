// The conversations part's records: see conversation_records.h for the
// layout.

#include "lib/conversations/conversation_records.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/ids.h"
#include "lib/base/key_codec.h"
#include "lib/base/record_codec.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

constexpr int64_t kMillisPerDay = 86400000;

}  // namespace

absl::Status DataLoss(std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("conversation store record is corrupt: %s", what));
}

absl::Status ConversationNotFound(std::string_view id) {
  return absl::NotFoundError(absl::StrFormat("conversation %s not found", id));
}

bool IsUuidPrintable(std::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

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
  // Every text was valid UTF-8 when written, so invalid bytes are damage to
  // report here, not an output error for whoever prints the record later.
  if (!IsValidUtf8(title) || !IsValidUtf8(model) || !IsValidUtf8(metadata) ||
      !IsValidUtf8(last_message)) {
    return DataLoss(
        absl::StrFormat("conversation %s holds text that is not UTF-8", id));
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

namespace {

// How messages name a message record in errors.
std::string MessageWhere(std::string_view key) {
  if (key.size() != kMessageKeySize) return "a message";
  return absl::StrFormat("message %d of conversation %s",
                         ReadBigEndian64(key.data() + kIdSize),
                         key.substr(0, kIdSize));
}

}  // namespace

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
    return DataLoss(absl::StrFormat("%s is malformed", MessageWhere(key)));
  }
  m.role = static_cast<MessageRole>(role);
  return m;
}

absl::Status CheckMessageText(std::string_view key, const MessageView& m) {
  // Text was valid UTF-8 when written, so invalid bytes are damage to report
  // here, not an output error for whoever prints the message later.
  if (!IsValidUtf8(m.content) || !IsValidUtf8(m.name) ||
      !IsValidUtf8(m.tool_calls) || !IsValidUtf8(m.tool_call_id)) {
    return DataLoss(
        absl::StrFormat("%s holds text that is not UTF-8", MessageWhere(key)));
  }
  return absl::OkStatus();
}

bool MessageView::makes_calls() const {
  if ((flags & kFlagToolCalls) == 0) return false;
  // Stored as given: JSON whitespace may surround the '[' of the array,
  // and an empty array has only its ']' after it.
  constexpr std::string_view kJsonSpace = " \t\n\r";
  const size_t open = tool_calls.find_first_not_of(kJsonSpace);
  if (open == std::string_view::npos) return false;
  const size_t next = tool_calls.find_first_not_of(kJsonSpace, open + 1);
  return next != std::string_view::npos && tool_calls[next] != ']';
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

}  // namespace ctxkit::internal
