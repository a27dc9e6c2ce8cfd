// A chat history parsed for compaction: each message's role, its bytes as
// minified JSON (emitted verbatim when the message is kept), the text rules
// and summaries read, and the tool calls and results that tie messages
// together. Parsing checks what compaction relies on and names the message
// and field of the first problem; ValidateChatHistory() (compactor.h) checks
// the full structure of a history a model API would accept.
//
// Thread safety: the functions are reentrant; a ChatHistory is a value.

#ifndef CTXKIT_LIB_COMPACTOR_CHAT_HISTORY_H_
#define CTXKIT_LIB_COMPACTOR_CHAT_HISTORY_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ctxkit/compactor.h"
#include "simdjson.h"

namespace ctxkit::internal {

struct ToolCall {
  std::string id;         // OpenAI tool_calls[i].id, Anthropic tool_use.id
  std::string name;       // the function / tool name
  std::string arguments;  // OpenAI arguments string as given; Anthropic
                          // input as minified JSON
};

struct ChatMessage {
  size_t index = 0;  // position in the input array
  // "system", "developer", "user", "assistant" or "tool" (validated).
  std::string role;
  // The message object as minified JSON, member order as given.
  std::string json;
  // Readable text: string content, text blocks, refusals, tool_result
  // contents (string or text blocks), joined with "\n". Not thinking, images
  // or tool-call arguments.
  std::string text;
  std::vector<ToolCall> calls;          // tool calls this message makes
  std::vector<std::string> result_ids;  // call ids this message answers
  // For a message answering calls: the name of the (first) call it answers.
  std::string result_tool_name;
  // Bytes of the message's own words: string content and text blocks,
  // not tool_result contents (a user turn may carry results and a new
  // request together).
  size_t own_text_bytes = 0;
  // For a message that carries tool results and then text blocks: those
  // text blocks alone, joined with "\n" (its own words). Empty otherwise:
  // the own words are then `text`, or there are none.
  std::string mixed_own_text;
  bool is_error = false;  // a tool_result with "is_error": true
  // The message object has "is_demo": true: SWE-agent marks so the turns of
  // a demonstration it puts in the history (put_demos_in_history).
  bool is_demo = false;
  // Content is a string (or null) or only text blocks, and the message has
  // no tool calls or results: it may be merged with a neighbour.
  bool text_only = false;
  // Bytes of the largest string in the message that holds readable text
  // (string content, a text block's "text", a tool_result's string content
  // or one of its text blocks): what truncation cuts. 0 when there is none.
  size_t largest_text_bytes = 0;
};

struct ChatHistory {
  ChatFormat format = ChatFormat::kOpenAI;  // resolved, never kAuto
  std::vector<ChatMessage> messages;
  // Units: contiguous [begin, end) ranges of message indices that must be
  // kept or dropped together (an assistant message with tool calls and the
  // messages carrying all its results). Every message is in exactly one
  // unit; units are in order.
  std::vector<std::pair<size_t, size_t>> units;
};

// Parses `messages` (the request's "messages" array) in `format`; kAuto
// detects it (see ChatFormat). Errors, INVALID_ARGUMENT naming
// "messages[i].<field>": a message that is not an object; a member
// CheckMessageMembers() (message_counter.h) refuses; a missing or unknown
// role; content of the wrong type (kOpenAI: string, block array,
// null or absent; kAnthropic: string or block array; kPlain: string); a
// block without a string "type", a text block without a string "text"; a
// feature of another format when `format` names one (role tool or
// tool_calls / tool_call_id / name / function_call outside kOpenAI,
// Anthropic-only blocks in kOpenAI, image_url / input_audio / refusal
// blocks in kAnthropic; null-valued OpenAI fields count as absent;
// "cache_control" is tolerated in kOpenAI, as OpenAI-compatible proxies
// accept it); tool_calls / tool_use outside assistant messages, tool_result
// outside user messages, tool_call_id outside tool messages; a call without
// a string id or name; duplicate call ids in one message; a tool result
// ("messages[i].tool_call_id", "messages[i].content[j].tool_use_id") whose
// id answers no call of the assistant message right before it (with only
// other results between) or one already answered; a call with no result
// unless it is in the last message ("messages[i].tool_calls[k]" /
// "messages[i].content[j]: tool call \"x\" has no result ..."); an empty
// array ("messages must not be empty"). Legacy "function_call"s are checked
// but not recorded as calls (they have no id to pair with). Linear in the
// input. The strings in the result are copies: it does not point into the
// parser.
absl::StatusOr<ChatHistory> ParseChatHistory(simdjson::dom::array messages,
                                             ChatFormat format);

// Parses `history_json`, a JSON array of messages or an object whose
// "messages" member is one (other members ignored), with a local parser and
// then as ParseChatHistory(). Errors: INVALID_ARGUMENT for malformed JSON
// ("chat history is not valid JSON: ..."), a root of another type ("chat
// history must be an array of messages or an object with \"messages\" (got
// number)"), a missing or non-array "messages", and ParseChatHistory()'s.
absl::StatusOr<ChatHistory> ParseChatHistoryJson(std::string_view history_json,
                                                 ChatFormat format);

// ---- Rewrites of a kept message (message_rewrite.cc) ----

// {"role":role,"content":text} as minified JSON (valid in every format).
// Invalid UTF-8 in either argument is replaced by U+FFFD.
std::string TextMessageJson(std::string_view role, std::string_view text);

// `message` with `text` added as its first text (a string content becomes
// text + "\n\n" + content, an empty string, null or absent content becomes
// text; block content gets a text block {"type":"text","text":text} placed
// after any leading tool_result, thinking and redacted_thinking blocks,
// which Anthropic requires first and, for thinking, unmodified).
// Used to fold a summary into a kept message when a separate summary
// message would break role alternation. Every other member and block is
// kept as in message.json. INVALID_ARGUMENT when message.json is not a JSON
// object or `text` is not valid UTF-8.
absl::StatusOr<std::string> PrependText(const ChatMessage& message,
                                        std::string_view text);

// The largest readable string of `message` (see largest_text_bytes),
// unescaped; empty when there is none.
absl::StatusOr<std::string> LargestText(const ChatMessage& message);

// `message` with its largest text (see LargestText; the first of equally
// large ones) replaced by `replacement`; everything else unchanged, byte
// for byte. When the message has no readable text, message.json unchanged.
// INVALID_ARGUMENT when message.json is not a JSON object or `replacement`
// is not valid UTF-8.
absl::StatusOr<std::string> ReplaceLargestText(const ChatMessage& message,
                                               std::string_view replacement);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_CHAT_HISTORY_H_
