// Chat histories for compaction: format detection, the checks compaction
// relies on, and tool call / result units. The rewrites of a kept message
// are in message_rewrite.cc.
//
// Cost: ParseChatHistory() walks the DOM twice (a shallow format scan when
// the format is kAuto, then the parse proper) and writes each message once
// through JsonWriter; tool results are matched against the calls of the
// current assistant message only, through a hash index when it makes many
// calls, so the whole parse is linear in the input.

#include "lib/compactor/chat_history.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/compactor/message_json.h"
#include "lib/json/json_copy.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "lib/json/utf8.h"
#include "lib/status/status_macros.h"
#include "lib/tokenizer/message_counter.h"
#include "simdjson.h"

namespace ctxkit::internal {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// Above this many calls in one assistant message, results are matched
// through a hash map; below, a scan of a few ids is cheaper.
constexpr size_t kLinearCallLimit = 8;

// `s` as a JSON string literal, for quoting input in error messages; long
// input is cut (at a character boundary) and marked with "...".
std::string Quote(std::string_view s) {
  constexpr size_t kMaxQuoted = 80;
  std::string cut;
  if (s.size() > kMaxQuoted) {
    size_t end = kMaxQuoted;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) {
      --end;
    }
    cut = std::string(s.substr(0, end)) + "...";
    s = cut;
  }
  JsonWriter writer;
  writer.String(s);
  absl::StatusOr<std::string> out = std::move(writer).Finish();
  if (!out.ok()) return "\"" + ReplaceInvalidUtf8(s) + "\"";
  return *std::move(out);
}

std::string BlockPath(size_t i, size_t j) {
  return absl::StrFormat("messages[%d].content[%d]", i, j);
}

absl::Status Invalid(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

std::string_view FormatLabel(ChatFormat format) {
  switch (format) {
    case ChatFormat::kAnthropic:
      return "anthropic";
    case ChatFormat::kPlain:
      return "plain";
    case ChatFormat::kOpenAI:
    case ChatFormat::kAuto:
      break;
  }
  return "openai";
}

absl::StatusOr<std::string> Minify(element value) {
  JsonWriter writer;
  Replay(writer, value);
  return std::move(writer).Finish();
}

bool IsAnthropicBlock(std::string_view type, object block) {
  if (type == "tool_use" || type == "tool_result" || type == "thinking" ||
      type == "redacted_thinking" || type == "document") {
    return true;
  }
  return type == "image" && Member(block, "source").has_value();
}

bool IsOpenAIBlock(std::string_view type) {
  return type == "image_url" || type == "input_audio";
}

bool IsOpenAIField(std::string_view key) {
  return key == "tool_calls" || key == "tool_call_id" || key == "name" ||
         key == "function_call";
}

// The "Formats" rules of compactor.h. Malformed messages are skipped here;
// the parse proper reports them.
ChatFormat DetectFormat(array messages) {
  bool openai = false;
  bool non_string_content = false;
  for (element value : messages) {
    if (value.type() != element_type::OBJECT) continue;
    const object obj = value.get_object().value_unsafe();
    bool has_content = false;
    for (auto field : obj) {
      const std::string_view key = field.key;
      if (key == "cache_control") return ChatFormat::kAnthropic;
      if (IsOpenAIField(key)) {
        if (field.value.type() != element_type::NULL_VALUE) openai = true;
      } else if (key == "role") {
        if (field.value.type() == element_type::STRING &&
            field.value.get_string().value_unsafe() == "tool") {
          openai = true;
        }
      } else if (key == "content" && !has_content) {
        has_content = true;
        if (field.value.type() == element_type::STRING) continue;
        non_string_content = true;
        if (field.value.type() != element_type::ARRAY) continue;
        const array blocks = field.value.get_array().value_unsafe();
        for (element block_value : blocks) {
          if (block_value.type() != element_type::OBJECT) continue;
          const object block = block_value.get_object().value_unsafe();
          if (Member(block, "cache_control").has_value()) {
            return ChatFormat::kAnthropic;
          }
          std::optional<std::string_view> type = StringMember(block, "type");
          if (!type.has_value()) continue;
          if (IsAnthropicBlock(*type, block)) return ChatFormat::kAnthropic;
          if (IsOpenAIBlock(*type)) openai = true;
        }
      }
    }
    if (!has_content) non_string_content = true;
  }
  if (openai || non_string_content) return ChatFormat::kOpenAI;
  return ChatFormat::kPlain;
}

// The call ids of one assistant message, for matching its results. The
// views point into that message's ToolCall::id strings, which stay put once
// the message is in ChatHistory::messages (reserved up front).
class CallIndex {
 public:
  // Returns the index of the first call whose id repeats an earlier one.
  std::optional<size_t> Reset(const std::vector<ToolCall>& calls) {
    calls_ = &calls;
    map_.clear();
    if (calls.size() <= kLinearCallLimit) {
      for (size_t c = 1; c < calls.size(); ++c) {
        for (size_t d = 0; d < c; ++d) {
          if (calls[c].id == calls[d].id) return c;
        }
      }
      return std::nullopt;
    }
    map_.reserve(calls.size());
    for (size_t c = 0; c < calls.size(); ++c) {
      if (!map_.emplace(std::string_view(calls[c].id), c).second) return c;
    }
    return std::nullopt;
  }

  std::optional<size_t> Find(std::string_view id) const {
    if (calls_->size() <= kLinearCallLimit) {
      for (size_t c = 0; c < calls_->size(); ++c) {
        if ((*calls_)[c].id == id) return c;
      }
      return std::nullopt;
    }
    auto it = map_.find(id);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }

 private:
  const std::vector<ToolCall>* calls_ = nullptr;
  absl::flat_hash_map<std::string_view, size_t> map_;
};

void AppendText(std::string& text, std::string_view piece) {
  if (piece.empty()) return;
  if (!text.empty()) text.push_back('\n');
  text.append(piece.data(), piece.size());
}

class HistoryParser {
 public:
  explicit HistoryParser(ChatFormat format) : format_(format) {}

  absl::StatusOr<ChatHistory> Run(array messages) {
    const size_t n = messages.size();
    if (n == 0) return Invalid("messages must not be empty");
    ChatHistory history;
    history.format = format_;
    history.messages.reserve(n);
    history.units.reserve(n);
    size_t i = 0;
    for (element value : messages) {
      ChatMessage& m = history.messages.emplace_back();
      m.index = i;
      call_fields_.clear();
      result_fields_.clear();
      CTXKIT_RETURN_IF_ERROR(Message(value, m));
      CTXKIT_RETURN_IF_ERROR(Link(history, i, n));
      ++i;
    }
    if (open_) {
      CTXKIT_RETURN_IF_ERROR(CloseUnit(history, n, n));
    }
    return history;
  }

 private:
  absl::Status Message(element value, ChatMessage& m) {
    const size_t i = m.index;
    if (value.type() != element_type::OBJECT) {
      return Invalid(absl::StrFormat("messages[%d] must be an object (got %s)",
                                     i, JsonTypeName(value.type())));
    }
    const object obj = value.get_object().value_unsafe();
    CTXKIT_RETURN_IF_ERROR(
        CheckMessageMembers(obj, absl::StrFormat("messages[%d]", i)));
    std::optional<element> role_value, content, tool_calls, tool_call_id, name,
        function_call, refusal;
    for (auto field : obj) {
      const std::string_view key = field.key;
      std::optional<element>* slot = nullptr;
      if (key == "role") {
        slot = &role_value;
      } else if (key == "content") {
        slot = &content;
      } else if (key == "tool_calls") {
        slot = &tool_calls;
      } else if (key == "tool_call_id") {
        slot = &tool_call_id;
      } else if (key == "name") {
        slot = &name;
      } else if (key == "function_call") {
        slot = &function_call;
      } else if (key == "refusal") {
        slot = &refusal;
      } else if (key == "is_demo") {
        bool flag = false;
        if (field.value.get(flag) == simdjson::SUCCESS && flag) {
          m.is_demo = true;
        }
      }
      if (slot != nullptr && !slot->has_value()) *slot = field.value;
    }

    // Role.
    if (!role_value.has_value()) {
      return Invalid(absl::StrFormat("messages[%d].role is required", i));
    }
    if (role_value->type() != element_type::STRING) {
      return Invalid(
          absl::StrFormat("messages[%d].role must be a string (got %s)", i,
                          JsonTypeName(role_value->type())));
    }
    const std::string_view role = role_value->get_string().value_unsafe();
    if (role != "system" && role != "developer" && role != "user" &&
        role != "assistant" && role != "tool") {
      return Invalid(absl::StrFormat(
          "messages[%d].role must be one of system, developer, user, "
          "assistant, tool (got %s)",
          i, Quote(role)));
    }
    if (role == "tool" && format_ != ChatFormat::kOpenAI) {
      return Invalid(absl::StrFormat(
          "messages[%d].role \"tool\" is not valid in the %s format%s", i,
          FormatLabel(format_),
          format_ == ChatFormat::kAnthropic
              ? " (tool results are tool_result blocks in a user message)"
              : ""));
    }
    m.role = std::string(role);
    const bool is_assistant = role == "assistant";

    // OpenAI-only fields.
    const std::pair<const char*, std::optional<element>*> openai_fields[] = {
        {"tool_calls", &tool_calls},
        {"tool_call_id", &tool_call_id},
        {"name", &name},
        {"function_call", &function_call}};
    for (const auto& [field_name, field] : openai_fields) {
      if (field->has_value() && (*field)->type() == element_type::NULL_VALUE) {
        field->reset();
      }
      if (field->has_value() && format_ != ChatFormat::kOpenAI) {
        return Invalid(absl::StrFormat(
            "messages[%d].%s is an OpenAI field, not valid in the %s format", i,
            field_name, FormatLabel(format_)));
      }
    }
    if (name.has_value() && name->type() != element_type::STRING) {
      return Invalid(
          absl::StrFormat("messages[%d].name must be a string (got %s)", i,
                          JsonTypeName(name->type())));
    }

    // Content.
    bool text_only = true;
    if (!content.has_value()) {
      if (format_ != ChatFormat::kOpenAI) {
        return Invalid(absl::StrFormat("messages[%d].content is required", i));
      }
    } else {
      switch (content->type()) {
        case element_type::STRING: {
          const std::string_view text = content->get_string().value_unsafe();
          m.text.assign(text.data(), text.size());
          m.largest_text_bytes = text.size();
          m.own_text_bytes = text.size();
          break;
        }
        case element_type::NULL_VALUE:
          if (format_ == ChatFormat::kOpenAI) break;
          return ContentTypeError(i, *content);
        case element_type::ARRAY:
          if (format_ == ChatFormat::kPlain) {
            return ContentTypeError(i, *content);
          }
          CTXKIT_RETURN_IF_ERROR(
              Blocks(content->get_array().value_unsafe(), m, &text_only));
          break;
        default:
          return ContentTypeError(i, *content);
      }
    }

    // An OpenAI assistant's refusal beside its content.
    if (refusal.has_value() && refusal->type() == element_type::STRING) {
      AppendText(m.text, refusal->get_string().value_unsafe());
    }

    // OpenAI tool calls and results.
    if (tool_calls.has_value()) {
      if (!is_assistant) {
        return Invalid(absl::StrFormat(
            "messages[%d].tool_calls: only assistant messages make tool calls",
            i));
      }
      CTXKIT_RETURN_IF_ERROR(ToolCalls(*tool_calls, m));
      text_only = false;
    }
    if (function_call.has_value()) {
      if (!is_assistant) {
        return Invalid(absl::StrFormat(
            "messages[%d].function_call: only assistant messages make "
            "function calls",
            i));
      }
      if (function_call->type() != element_type::OBJECT) {
        return Invalid(absl::StrFormat(
            "messages[%d].function_call must be an object or null (got %s)", i,
            JsonTypeName(function_call->type())));
      }
      text_only = false;
    }
    if (role == "tool") {
      if (!tool_call_id.has_value()) {
        return Invalid(
            absl::StrFormat("messages[%d].tool_call_id is required", i));
      }
      if (tool_call_id->type() != element_type::STRING) {
        return Invalid(absl::StrFormat(
            "messages[%d].tool_call_id must be a string (got %s)", i,
            JsonTypeName(tool_call_id->type())));
      }
      m.result_ids.emplace_back(tool_call_id->get_string().value_unsafe());
      text_only = false;
    } else if (tool_call_id.has_value()) {
      return Invalid(absl::StrFormat(
          "messages[%d].tool_call_id: only tool messages answer tool calls",
          i));
    }
    m.text_only = text_only;

    absl::StatusOr<std::string> json = Minify(value);
    if (!json.ok()) {
      return Invalid(
          absl::StrFormat("messages[%d]: %s", i, json.status().message()));
    }
    m.json = *std::move(json);
    return absl::OkStatus();
  }

  absl::Status ContentTypeError(size_t i, element content) const {
    const char* expected = "a string, an array of content blocks or null";
    if (format_ == ChatFormat::kAnthropic) {
      expected = "a string or an array of content blocks";
    } else if (format_ == ChatFormat::kPlain) {
      expected = "a string in the plain format";
    }
    return Invalid(absl::StrFormat("messages[%d].content must be %s (got %s)",
                                   i, expected, JsonTypeName(content.type())));
  }

  absl::Status WrongFormatBlock(size_t i, size_t j, std::string_view type,
                                const char* owner) const {
    return Invalid(absl::StrFormat(
        "messages[%d].content[%d].type %s is an %s block, not valid in the %s "
        "format",
        i, j, Quote(type), owner, FormatLabel(format_)));
  }

  // A required string member of a block.
  // `path` builds the block's path; it is called only to report an error.
  template <typename PathFn>
  absl::StatusOr<std::string_view> BlockString(object block,
                                               std::string_view field,
                                               const PathFn& path) const {
    std::optional<element> value = Member(block, field);
    if (!value.has_value()) {
      return Invalid(absl::StrFormat("%s.%s is required", path(), field));
    }
    if (value->type() != element_type::STRING) {
      return Invalid(absl::StrFormat("%s.%s must be a string (got %s)", path(),
                                     field, JsonTypeName(value->type())));
    }
    return value->get_string().value_unsafe();
  }

  template <typename PathFn>
  absl::StatusOr<object> BlockObject(element value, const PathFn& path) const {
    if (value.type() != element_type::OBJECT) {
      return Invalid(absl::StrFormat("%s must be an object (got %s)", path(),
                                     JsonTypeName(value.type())));
    }
    return value.get_object().value_unsafe();
  }

  template <typename PathFn>
  absl::StatusOr<std::string_view> BlockType(object block,
                                             const PathFn& path) const {
    std::optional<element> value = Member(block, "type");
    if (!value.has_value()) {
      return Invalid(absl::StrFormat("%s.type is required", path()));
    }
    if (value->type() != element_type::STRING) {
      return Invalid(absl::StrFormat("%s.type must be a string (got %s)",
                                     path(), JsonTypeName(value->type())));
    }
    return value->get_string().value_unsafe();
  }

  absl::Status Blocks(array blocks, ChatMessage& m, bool* text_only) {
    const size_t i = m.index;
    const bool anthropic = format_ == ChatFormat::kAnthropic;
    size_t j = 0;
    for (element value : blocks) {
      // Paths are built only on the error paths below, through `path()`.
      auto path = [i, j] { return BlockPath(i, j); };
      if (value.type() != element_type::OBJECT) {
        return Invalid(absl::StrFormat("%s must be an object (got %s)", path(),
                                       JsonTypeName(value.type())));
      }
      const object block = value.get_object().value_unsafe();
      const std::optional<std::string_view> type_member =
          StringMember(block, "type");
      if (!type_member.has_value()) return BlockType(block, path).status();
      const std::string_view type = *type_member;
      if (type == "text") {
        std::optional<std::string_view> text = StringMember(block, "text");
        if (!text.has_value()) {
          return BlockString(block, "text", path).status();
        }
        AppendText(m.text, *text);
        // Tool results open a user turn, so a text block after them is the
        // user's own words beside them.
        if (!m.result_ids.empty()) AppendText(m.mixed_own_text, *text);
        m.own_text_bytes += text->size();
        if (text->size() > m.largest_text_bytes) {
          m.largest_text_bytes = text->size();
        }
      } else if (type == "refusal") {
        if (anthropic) return WrongFormatBlock(i, j, type, "OpenAI");
        std::optional<std::string_view> text = StringMember(block, "refusal");
        if (!text.has_value()) {
          return BlockString(block, "refusal", path).status();
        }
        AppendText(m.text, *text);
      } else if (IsOpenAIBlock(type)) {
        if (anthropic) return WrongFormatBlock(i, j, type, "OpenAI");
        *text_only = false;
      } else if (IsAnthropicBlock(type, block)) {
        if (!anthropic) return WrongFormatBlock(i, j, type, "Anthropic");
        *text_only = false;
        if (type == "tool_use") {
          CTXKIT_RETURN_IF_ERROR(ToolUse(block, m, j));
        } else if (type == "tool_result") {
          CTXKIT_RETURN_IF_ERROR(ToolResult(block, m, j));
        }
      } else {
        // Other block types (image without source, files, server tool
        // blocks, ...) are carried as they are.
        *text_only = false;
      }
      ++j;
    }
    return absl::OkStatus();
  }

  absl::Status ToolUse(object block, ChatMessage& m, size_t j) {
    const size_t i = m.index;
    if (m.role != "assistant") {
      return Invalid(absl::StrFormat(
          "messages[%d].content[%d]: tool_use blocks belong in assistant "
          "messages (role is %s)",
          i, j, Quote(m.role)));
    }
    auto path = [i, j] { return BlockPath(i, j); };
    CTXKIT_ASSIGN_OR_RETURN(std::string_view id,
                            BlockString(block, "id", path));
    CTXKIT_ASSIGN_OR_RETURN(std::string_view name,
                            BlockString(block, "name", path));
    ToolCall& call = m.calls.emplace_back();
    call.id.assign(id.data(), id.size());
    call.name.assign(name.data(), name.size());
    if (std::optional<element> input = Member(block, "input")) {
      CTXKIT_ASSIGN_OR_RETURN(call.arguments, Minify(*input));
    }
    call_fields_.push_back(j);
    return absl::OkStatus();
  }

  absl::Status ToolResult(object block, ChatMessage& m, size_t j) {
    const size_t i = m.index;
    if (m.role != "user") {
      return Invalid(absl::StrFormat(
          "messages[%d].content[%d]: tool_result blocks belong in user "
          "messages (role is %s)",
          i, j, Quote(m.role)));
    }
    auto path = [i, j] { return BlockPath(i, j); };
    CTXKIT_ASSIGN_OR_RETURN(std::string_view id,
                            BlockString(block, "tool_use_id", path));
    m.result_ids.emplace_back(id);
    result_fields_.push_back(j);
    if (std::optional<element> is_error = Member(block, "is_error")) {
      if (is_error->type() == element_type::BOOL) {
        if (is_error->get_bool().value_unsafe()) m.is_error = true;
      } else if (is_error->type() != element_type::NULL_VALUE) {
        return Invalid(absl::StrFormat("%s.is_error must be a boolean (got %s)",
                                       path(), JsonTypeName(is_error->type())));
      }
    }
    std::optional<element> content = Member(block, "content");
    if (!content.has_value()) return absl::OkStatus();
    switch (content->type()) {
      case element_type::NULL_VALUE:
        return absl::OkStatus();
      case element_type::STRING: {
        const std::string_view text = content->get_string().value_unsafe();
        AppendText(m.text, text);
        if (text.size() > m.largest_text_bytes) {
          m.largest_text_bytes = text.size();
        }
        return absl::OkStatus();
      }
      case element_type::ARRAY:
        break;
      default:
        return Invalid(absl::StrFormat(
            "%s.content must be a string or an array of content blocks (got "
            "%s)",
            path(), JsonTypeName(content->type())));
    }
    const array inner = content->get_array().value_unsafe();
    size_t k = 0;
    for (element value : inner) {
      auto inner_path = [&path, k] {
        return absl::StrFormat("%s.content[%d]", path(), k);
      };
      CTXKIT_ASSIGN_OR_RETURN(object inner_block,
                              BlockObject(value, inner_path));
      CTXKIT_ASSIGN_OR_RETURN(std::string_view type,
                              BlockType(inner_block, inner_path));
      if (type == "text") {
        CTXKIT_ASSIGN_OR_RETURN(std::string_view text,
                                BlockString(inner_block, "text", inner_path));
        AppendText(m.text, text);
        if (text.size() > m.largest_text_bytes) {
          m.largest_text_bytes = text.size();
        }
      }
      ++k;
    }
    return absl::OkStatus();
  }

  absl::Status ToolCalls(element value, ChatMessage& m) {
    const size_t i = m.index;
    if (value.type() != element_type::ARRAY) {
      return Invalid(absl::StrFormat(
          "messages[%d].tool_calls must be an array or null (got %s)", i,
          JsonTypeName(value.type())));
    }
    const array calls = value.get_array().value_unsafe();
    m.calls.reserve(m.calls.size() + calls.size());
    size_t k = 0;
    for (element call_value : calls) {
      auto path = [i, k] {
        return absl::StrFormat("messages[%d].tool_calls[%d]", i, k);
      };
      CTXKIT_ASSIGN_OR_RETURN(object call_obj, BlockObject(call_value, path));
      CTXKIT_ASSIGN_OR_RETURN(std::string_view id,
                              BlockString(call_obj, "id", path));
      std::optional<element> function = Member(call_obj, "function");
      if (!function.has_value()) {
        return Invalid(absl::StrFormat("%s.function is required", path()));
      }
      auto function_path = [&path] { return path() + ".function"; };
      CTXKIT_ASSIGN_OR_RETURN(object function_obj,
                              BlockObject(*function, function_path));
      CTXKIT_ASSIGN_OR_RETURN(std::string_view name,
                              BlockString(function_obj, "name", function_path));
      ToolCall& call = m.calls.emplace_back();
      call.id.assign(id.data(), id.size());
      call.name.assign(name.data(), name.size());
      if (std::optional<element> arguments =
              Member(function_obj, "arguments")) {
        if (arguments->type() == element_type::STRING) {
          call.arguments = std::string(arguments->get_string().value_unsafe());
        } else if (arguments->type() == element_type::OBJECT) {
          CTXKIT_ASSIGN_OR_RETURN(call.arguments, Minify(*arguments));
        } else if (arguments->type() != element_type::NULL_VALUE) {
          return Invalid(absl::StrFormat(
              "%s.arguments must be a string or an object (got %s)",
              function_path(), JsonTypeName(arguments->type())));
        }
      }
      call_fields_.push_back(k);
      ++k;
    }
    return absl::OkStatus();
  }

  // The field naming result `r` of message `i`.
  std::string ResultField(size_t i, size_t r) const {
    if (format_ == ChatFormat::kAnthropic) {
      return absl::StrFormat("messages[%d].content[%d].tool_use_id", i,
                             result_fields_[r]);
    }
    return absl::StrFormat("messages[%d].tool_call_id", i);
  }

  // The field naming call `c` of the open assistant message.
  std::string CallField(size_t c) const {
    if (format_ == ChatFormat::kAnthropic) {
      return absl::StrFormat("messages[%d].content[%d]", open_begin_,
                             open_call_fields_[c]);
    }
    return absl::StrFormat("messages[%d].tool_calls[%d]", open_begin_,
                           open_call_fields_[c]);
  }

  // Ends the open unit before message `end` (of `n`).
  absl::Status CloseUnit(ChatHistory& history, size_t end, size_t n) {
    open_ = false;
    if (pending_ > 0 && open_begin_ + 1 != n) {
      const std::vector<ToolCall>& calls = history.messages[open_begin_].calls;
      for (size_t c = 0; c < calls.size(); ++c) {
        if (answered_[c]) continue;
        return Invalid(absl::StrFormat(
            "%s: tool call %s has no result (only the last message may hold "
            "unanswered calls)",
            CallField(c), Quote(calls[c].id)));
      }
    }
    history.units.emplace_back(open_begin_, end);
    return absl::OkStatus();
  }

  // Places message `i` (of `n`), just parsed, into the units.
  absl::Status Link(ChatHistory& history, size_t i, size_t n) {
    ChatMessage& m = history.messages[i];
    if (!m.result_ids.empty()) {
      for (size_t r = 0; r < m.result_ids.size(); ++r) {
        const std::string& id = m.result_ids[r];
        std::optional<size_t> c;
        if (open_) c = calls_.Find(id);
        if (!c.has_value()) {
          return Invalid(
              absl::StrFormat("%s: no tool call with id %s precedes it",
                              ResultField(i, r), Quote(id)));
        }
        if (answered_[*c]) {
          return Invalid(absl::StrFormat("%s: tool call %s is already answered",
                                         ResultField(i, r), Quote(id)));
        }
        answered_[*c] = true;
        --pending_;
        if (r == 0) {
          m.result_tool_name = history.messages[open_begin_].calls[*c].name;
        }
      }
      return absl::OkStatus();
    }
    if (open_) {
      CTXKIT_RETURN_IF_ERROR(CloseUnit(history, i, n));
    }
    if (m.calls.empty()) {
      history.units.emplace_back(i, i + 1);
      return absl::OkStatus();
    }
    if (std::optional<size_t> dup = calls_.Reset(m.calls)) {
      const std::string field =
          format_ == ChatFormat::kAnthropic
              ? absl::StrFormat("messages[%d].content[%d].id", i,
                                call_fields_[*dup])
              : absl::StrFormat("messages[%d].tool_calls[%d].id", i,
                                call_fields_[*dup]);
      return Invalid(absl::StrFormat("%s: duplicate tool call id %s", field,
                                     Quote(m.calls[*dup].id)));
    }
    open_ = true;
    open_begin_ = i;
    pending_ = m.calls.size();
    answered_.assign(m.calls.size(), false);
    open_call_fields_.swap(call_fields_);
    return absl::OkStatus();
  }

  const ChatFormat format_;
  // Per message: where its calls / results sit (tool_calls index or content
  // block index), for naming them in errors.
  std::vector<size_t> call_fields_;
  std::vector<size_t> result_fields_;
  // The open unit: an assistant message with calls and the result carriers
  // after it so far.
  bool open_ = false;
  size_t open_begin_ = 0;
  size_t pending_ = 0;
  std::vector<bool> answered_;
  std::vector<size_t> open_call_fields_;
  CallIndex calls_;
};

}  // namespace

std::string MessagePath(size_t i) { return absl::StrFormat("messages[%d]", i); }

std::optional<element> Member(object obj, std::string_view key) {
  element value;
  if (obj[key].get(value)) return std::nullopt;
  return value;
}

std::optional<std::string_view> StringMember(object obj, std::string_view key) {
  std::optional<element> value = Member(obj, key);
  if (!value.has_value() || value->type() != element_type::STRING) {
    return std::nullopt;
  }
  return value->get_string().value_unsafe();
}

absl::StatusOr<ChatHistory> ParseChatHistory(simdjson::dom::array messages,
                                             ChatFormat format) {
  if (format == ChatFormat::kAuto) format = DetectFormat(messages);
  HistoryParser parser(format);
  return parser.Run(messages);
}

absl::StatusOr<ChatHistory> ParseChatHistoryJson(std::string_view history_json,
                                                 ChatFormat format) {
  simdjson::dom::parser parser;
  CTXKIT_ASSIGN_OR_RETURN(element root,
                          ParseJson(parser, history_json, "chat history"));
  if (root.type() == element_type::ARRAY) {
    return ParseChatHistory(root.get_array().value_unsafe(), format);
  }
  if (root.type() == element_type::OBJECT) {
    CTXKIT_ASSIGN_OR_RETURN(
        array messages,
        GetArray(root.get_object().value_unsafe(), "messages", ""));
    return ParseChatHistory(messages, format);
  }
  return Invalid(absl::StrFormat(
      "chat history must be an array of messages or an object with "
      "\"messages\" (got %s)",
      JsonTypeName(root.type())));
}

}  // namespace ctxkit::internal
