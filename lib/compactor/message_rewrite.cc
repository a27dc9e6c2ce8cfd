// The rewrites of a kept chat message (declared in chat_history.h): a
// summary folded into it, its largest text read or replaced. Each parses
// message.json again: a ChatMessage keeps its minified bytes, not a DOM.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/compactor/chat_history.h"
#include "lib/compactor/message_json.h"
#include "lib/json/json_copy.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "lib/json/utf8.h"
#include "lib/status/status_macros.h"
#include "simdjson.h"

namespace ctxkit::internal {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// A step of the path to one string in a message: a member name or an
// array index.
struct Step {
  std::string_view key;  // empty: an index step
  size_t index = 0;
};

// Where the largest readable string of a message sits.
struct TextSlot {
  std::vector<Step> path;
  std::string_view text;
};

void Consider(std::optional<TextSlot>& best, std::string_view text,
              std::vector<Step> path) {
  if (best.has_value() && text.size() <= best->text.size()) return;
  best = TextSlot{std::move(path), text};
}

// The walk mirrors HistoryParser's largest_text_bytes: string content, text
// blocks, tool_result string content and its text blocks, in order; the
// first of equally large strings wins.
std::optional<TextSlot> FindLargestText(object message) {
  std::optional<TextSlot> best;
  std::optional<element> content = Member(message, "content");
  if (!content.has_value()) return best;
  if (content->type() == element_type::STRING) {
    Consider(best, content->get_string().value_unsafe(), {{"content", 0}});
    return best;
  }
  if (content->type() != element_type::ARRAY) return best;
  const array blocks = content->get_array().value_unsafe();
  size_t j = 0;
  for (element value : blocks) {
    if (value.type() == element_type::OBJECT) {
      const object block = value.get_object().value_unsafe();
      std::optional<std::string_view> type = StringMember(block, "type");
      if (type == "text") {
        if (std::optional<std::string_view> text =
                StringMember(block, "text")) {
          Consider(best, *text, {{"content", 0}, {"", j}, {"text", 0}});
        }
      } else if (type == "tool_result") {
        std::optional<element> inner = Member(block, "content");
        if (inner.has_value() && inner->type() == element_type::STRING) {
          Consider(best, inner->get_string().value_unsafe(),
                   {{"content", 0}, {"", j}, {"content", 0}});
        } else if (inner.has_value() && inner->type() == element_type::ARRAY) {
          const array inner_blocks = inner->get_array().value_unsafe();
          size_t k = 0;
          for (element inner_value : inner_blocks) {
            if (inner_value.type() == element_type::OBJECT) {
              const object inner_block =
                  inner_value.get_object().value_unsafe();
              if (StringMember(inner_block, "type") == "text") {
                if (std::optional<std::string_view> text =
                        StringMember(inner_block, "text")) {
                  Consider(best, *text,
                           {{"content", 0},
                            {"", j},
                            {"content", 0},
                            {"", k},
                            {"text", 0}});
                }
              }
            }
            ++k;
          }
        }
      }
    }
    ++j;
  }
  return best;
}

// Replays `value`, writing `replacement` in place of the value at
// path[depth..] (the first member of each name, as simdjson reads it).
void ReplayReplacing(JsonWriter& writer, element value,
                     const std::vector<Step>& path, size_t depth,
                     std::string_view replacement) {
  if (depth == path.size()) {
    writer.String(replacement);
    return;
  }
  const Step& step = path[depth];
  if (!step.key.empty() && value.type() == element_type::OBJECT) {
    const object obj = value.get_object().value_unsafe();
    bool done = false;
    writer.BeginObject();
    for (auto field : obj) {
      writer.Key(field.key);
      if (!done && std::string_view(field.key) == step.key) {
        done = true;
        ReplayReplacing(writer, field.value, path, depth + 1, replacement);
      } else {
        Replay(writer, field.value);
      }
    }
    writer.EndObject();
    return;
  }
  if (step.key.empty() && value.type() == element_type::ARRAY) {
    const array arr = value.get_array().value_unsafe();
    size_t index = 0;
    writer.BeginArray();
    for (element item : arr) {
      if (index == step.index) {
        ReplayReplacing(writer, item, path, depth + 1, replacement);
      } else {
        Replay(writer, item);
      }
      ++index;
    }
    writer.EndArray();
    return;
  }
  Replay(writer, value);
}

// message.json parsed with `parser`; its root is an object.
absl::StatusOr<element> ParseMessage(simdjson::dom::parser& parser,
                                     const ChatMessage& message) {
  const std::string what = MessagePath(message.index);
  CTXKIT_ASSIGN_OR_RETURN(element root, ParseJson(parser, message.json, what));
  CTXKIT_RETURN_IF_ERROR(AsObject(root, what).status());
  return root;
}

absl::Status CheckUtf8(std::string_view text, std::string_view what) {
  if (IsValidUtf8(text)) return absl::OkStatus();
  return ValidateUtf8(text, what);
}

}  // namespace

std::string TextMessageJson(std::string_view role, std::string_view text) {
  const std::string clean_role =
      IsValidUtf8(role) ? std::string(role) : ReplaceInvalidUtf8(role);
  const std::string clean_text =
      IsValidUtf8(text) ? std::string() : ReplaceInvalidUtf8(text);
  JsonWriter writer;
  writer.BeginObject()
      .Key("role")
      .String(clean_role)
      .Key("content")
      .String(clean_text.empty() ? text : std::string_view(clean_text))
      .EndObject();
  absl::StatusOr<std::string> out = std::move(writer).Finish();
  // Cannot fail: both strings are valid UTF-8 and the calls are balanced.
  return out.ok() ? *std::move(out) : std::string();
}

absl::StatusOr<std::string> PrependText(const ChatMessage& message,
                                        std::string_view text) {
  CTXKIT_RETURN_IF_ERROR(CheckUtf8(text, "prepended text"));
  simdjson::dom::parser parser;
  CTXKIT_ASSIGN_OR_RETURN(element root, ParseMessage(parser, message));
  const object obj = root.get_object().value_unsafe();
  JsonWriter writer;
  bool done = false;
  writer.BeginObject();
  for (auto field : obj) {
    const std::string_view key = field.key;
    writer.Key(key);
    if (done || key != "content") {
      Replay(writer, field.value);
      continue;
    }
    done = true;
    const element content = field.value;
    switch (content.type()) {
      case element_type::STRING: {
        const std::string_view old = content.get_string().value_unsafe();
        if (old.empty()) {
          writer.String(text);
        } else {
          std::string joined;
          joined.reserve(text.size() + 2 + old.size());
          joined.append(text.data(), text.size());
          joined.append("\n\n");
          joined.append(old.data(), old.size());
          writer.String(joined);
        }
        break;
      }
      case element_type::NULL_VALUE:
        writer.String(text);
        break;
      case element_type::ARRAY: {
        const array blocks = content.get_array().value_unsafe();
        bool inserted = false;
        writer.BeginArray();
        for (element block : blocks) {
          if (!inserted) {
            // Tool results must open a user turn, and thinking blocks must
            // open an assistant turn unmodified (Anthropic's rules).
            const std::optional<std::string_view> type =
                block.type() == element_type::OBJECT
                    ? StringMember(block.get_object().value_unsafe(), "type")
                    : std::nullopt;
            const bool leading = type == "tool_result" || type == "thinking" ||
                                 type == "redacted_thinking";
            if (!leading) {
              writer.BeginObject()
                  .Key("type")
                  .String("text")
                  .Key("text")
                  .String(text)
                  .EndObject();
              inserted = true;
            }
          }
          Replay(writer, block);
        }
        if (!inserted) {
          writer.BeginObject()
              .Key("type")
              .String("text")
              .Key("text")
              .String(text)
              .EndObject();
        }
        writer.EndArray();
        break;
      }
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "messages[%d].content must be a string, an array of content "
            "blocks or null (got %s)",
            message.index, JsonTypeName(content.type())));
    }
  }
  if (!done) writer.Key("content").String(text);
  writer.EndObject();
  return std::move(writer).Finish();
}

absl::StatusOr<std::string> LargestText(const ChatMessage& message) {
  simdjson::dom::parser parser;
  CTXKIT_ASSIGN_OR_RETURN(element root, ParseMessage(parser, message));
  std::optional<TextSlot> slot =
      FindLargestText(root.get_object().value_unsafe());
  if (!slot.has_value()) return std::string();
  return std::string(slot->text);
}

absl::StatusOr<std::string> ReplaceLargestText(const ChatMessage& message,
                                               std::string_view replacement) {
  CTXKIT_RETURN_IF_ERROR(CheckUtf8(replacement, "replacement text"));
  simdjson::dom::parser parser;
  CTXKIT_ASSIGN_OR_RETURN(element root, ParseMessage(parser, message));
  std::optional<TextSlot> slot =
      FindLargestText(root.get_object().value_unsafe());
  if (!slot.has_value()) return message.json;
  JsonWriter writer;
  ReplayReplacing(writer, root, slot->path, 0, replacement);
  return std::move(writer).Finish();
}

}  // namespace ctxkit::internal
