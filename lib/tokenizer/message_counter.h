// Message-at-a-time token counting by the rules of CountMessages()
// (include/ctxkit/message_count.h), for code that already holds parsed
// messages (the compactor) and must count each one, and new ones it writes,
// exactly as CountMessages() would count the whole array: the total of a
// request is the sum of its messages plus reply_priming().
//
// Thread safety: a MessageCounter is used by one thread at a time.

#ifndef CTXKIT_LIB_TOKENIZER_MESSAGE_COUNTER_H_
#define CTXKIT_LIB_TOKENIZER_MESSAGE_COUNTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/tokenizer.h"
#include "simdjson.h"

namespace ctxkit::internal {

// What counts for a model name or a token_counter_type.
struct CountingChoice {
  std::shared_ptr<const Tokenizer> tokenizer;  // null: EstimateTokens()
  std::string encoding;  // the named encoding (even when unavailable)
  MessageFormat format = MessageFormat::kOpenAI;
  bool exact = false;  // the model's own tokenizer, available
};

// For `model` when non-empty (as CountMessagesForModel), else for
// `counter_type` (as CountMessagesForCounterType; INVALID_ARGUMENT for an
// unknown type). Errors of the tokenizer's construction other than
// unavailability are returned.
absl::StatusOr<CountingChoice> ChooseCounting(std::string_view model,
                                              std::string_view counter_type,
                                              const ModelRegistry& registry);

// OK when every member of chat message `message` is one that
// message_count.h lists under "Message members"; else INVALID_ARGUMENT naming
// the message and the member, with the closest known one
// ("messages[3]: unknown key 'tool_call_idd'; did you mean
// 'tool_call_id'?"). `path` names the message ("messages[3]"). CountMessages
// and the compactor check every message with it, so that a misspelled member
// is never silently ignored (or silently counted as text).
absl::Status CheckMessageMembers(simdjson::dom::object message,
                                 std::string_view path);

class MessageCounter {
 public:
  // `tokenizer` may be null (EstimateTokens()); it is kept alive.
  MessageCounter(std::shared_ptr<const Tokenizer> tokenizer,
                 const MessageCountOptions& options, MessageFormat format);
  ~MessageCounter();
  MessageCounter(const MessageCounter&) = delete;
  MessageCounter& operator=(const MessageCounter&) = delete;

  // Tokens of one message with its per-message overhead, exactly as
  // CountMessages() counts messages[i]. `path` names it in errors
  // ("messages[3]"). INVALID_ARGUMENT as CountMessages().
  absl::StatusOr<int64_t> Message(simdjson::dom::element message,
                                  const std::string& path);
  // Tokens of plain text, special-token text counted as ordinary text.
  absl::StatusOr<int64_t> Text(std::string_view text);
  // What Message() adds to a message {"role", "content", "name",
  // "tool_calls", "tool_call_id"} beyond the Text() of its content and the
  // tokens of its tool calls: the per-message tokens of the format and its
  // role, name and tool_call_id (absent: nullopt) as the format counts them.
  // With `has_tool_calls` (at least one call) the count stops being exact(),
  // as when Message() counts the calls. So a caller that stored those token
  // counts gets CountMessages() of the whole array as the sum of the stored
  // counts, Framing() of every message and reply_priming(), without
  // tokenizing the content again. INVALID_ARGUMENT only for invalid UTF-8.
  absl::StatusOr<int64_t> Framing(
      std::string_view role, const std::optional<std::string_view>& name,
      const std::optional<std::string_view>& tool_call_id, bool has_tool_calls);
  // MessageCount::exact of everything counted so far, as if the tokenizer
  // were the model's own (CountingChoice::exact says whether it is).
  bool exact() const;
  // The tokenizer counting, or null for EstimateTokens().
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }
  // The once-per-request reply priming.
  int64_t reply_priming() const { return reply_priming_; }

 private:
  struct Impl;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::unique_ptr<Impl> impl_;
  int64_t reply_priming_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_MESSAGE_COUNTER_H_
