// ValidateChatHistory(): ParseChatHistory()'s checks (roles, content types,
// every tool result answering a call of the assistant message right before
// it, every call answered but in the last message) plus the ordering rules a
// model API enforces on top of them. Also the ChatFormat names.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "ctxkit/compactor.h"
#include "lib/compactor/chat_history.h"
#include "lib/compactor/compactor_internal.h"
#include "lib/json/json_reader.h"
#include "lib/status/status_internal.h"
#include "simdjson.h"

namespace ctxkit {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

bool IsSystemRole(std::string_view role) {
  return role == "system" || role == "developer";
}

// In a user message of `value` (its content array), tool_result blocks
// come before every other block: the Anthropic API reads them as the
// answer to the previous turn only there.
absl::Status CheckResultsFirst(element value, size_t i) {
  element content;
  if (value.get_object().value_unsafe()["content"].get(content) ||
      content.type() != element_type::ARRAY) {
    return absl::OkStatus();
  }
  const array blocks = content.get_array().value_unsafe();
  size_t j = 0;
  size_t first_other = 0;
  bool seen_other = false;
  for (element block : blocks) {
    std::string_view type;
    const bool is_result =
        block.type() == element_type::OBJECT &&
        !block.get_object().value_unsafe()["type"].get(type) &&
        type == "tool_result";
    if (!is_result && !seen_other) {
      seen_other = true;
      first_other = j;
    } else if (is_result && seen_other) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "messages[%d].content[%d]: tool_result blocks must come before "
          "every other block of their message (content[%d] is not one)",
          i, j, first_other));
    }
    ++j;
  }
  return absl::OkStatus();
}

absl::Status ValidateAnthropic(const internal::ChatHistory& history,
                               array messages) {
  std::string_view previous_role;  // of the last non-system message
  size_t previous_index = 0;
  size_t i = 0;
  for (element value : messages) {
    const internal::ChatMessage& m = history.messages[i];
    if (IsSystemRole(m.role)) {
      if (!previous_role.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "messages[%d].role: %s messages must come before all others in "
            "the anthropic format (messages[%d] is %s)",
            i, m.role, previous_index, previous_role));
      }
    } else if (previous_role.empty()) {
      if (m.role != "user") {
        return absl::InvalidArgumentError(absl::StrFormat(
            "messages[%d].role must be user: the first non-system message of "
            "an anthropic history (got \"%s\")",
            i, m.role));
      }
    } else if (m.role == previous_role) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "messages[%d].role: roles must alternate in the anthropic format "
          "(messages[%d] is also %s)",
          i, previous_index, m.role));
    }
    if (!IsSystemRole(m.role)) {
      previous_role = m.role;
      previous_index = i;
    }
    if (!m.result_ids.empty()) {
      absl::Status status = CheckResultsFirst(value, i);
      if (!status.ok()) return status;
    }
    ++i;
  }
  return absl::OkStatus();
}

absl::Status Validate(std::string_view history_json, ChatFormat format) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root =
      internal::ParseJson(parser, history_json, "chat history");
  if (!root.ok()) return root.status();
  array messages;
  if (root->type() == element_type::ARRAY) {
    messages = root->get_array().value_unsafe();
  } else if (root->type() == element_type::OBJECT) {
    absl::StatusOr<array> member =
        internal::GetArray(root->get_object().value_unsafe(), "messages", "");
    if (!member.ok()) return member.status();
    messages = *member;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "chat history must be an array of messages or an object with "
        "\"messages\" (got %s)",
        internal::JsonTypeName(root->type())));
  }
  absl::StatusOr<internal::ChatHistory> history =
      internal::ParseChatHistory(messages, format);
  if (!history.ok()) return history.status();
  // The parse already tied every result to a call of the assistant message
  // right before it and every call (but the last message's) to a result;
  // the OpenAI and plain formats ask nothing more.
  if (history->format == ChatFormat::kAnthropic) {
    return ValidateAnthropic(*history, messages);
  }
  return absl::OkStatus();
}

}  // namespace

const char* ChatFormatName(ChatFormat format) noexcept {
  switch (format) {
    case ChatFormat::kAuto:
      return "auto";
    case ChatFormat::kOpenAI:
      return "openai";
    case ChatFormat::kAnthropic:
      return "anthropic";
    case ChatFormat::kPlain:
      return "plain";
  }
  return "auto";
}

absl::StatusOr<ChatFormat> internal::ParseChatFormat(std::string_view name) {
  for (ChatFormat format : {ChatFormat::kAuto, ChatFormat::kOpenAI,
                            ChatFormat::kAnthropic, ChatFormat::kPlain}) {
    if (name == ChatFormatName(format)) return format;
  }
  std::string quoted(name.substr(0, 64));
  return absl::InvalidArgumentError(
      absl::StrFormat("format must be one of auto, openai, anthropic, plain "
                      "(got \"%s\")",
                      absl::CHexEscape(quoted)));
}

StatusOr<ChatFormat> ParseChatFormat(std::string_view name) {
  return internal::ToPublic(internal::ParseChatFormat(name));
}

Status ValidateChatHistory(std::string_view history_json, ChatFormat format) {
  return internal::ToPublic(Validate(history_json, format));
}

}  // namespace ctxkit
