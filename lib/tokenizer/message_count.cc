// Token counts of chat requests (see include/ctxkit/message_count.h for the
// rules and their sources).

#include "ctxkit/message_count.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/cancel_poll.h"
#include "lib/base/field_check.h"
#include "lib/json/json_reader.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/tokenizer/message_counter.h"
#include "lib/tokenizer/tokenizer_internal.h"
#include "simdjson.h"

namespace ctxkit {
namespace {

using internal::AsArray;
using internal::AsObject;
using internal::AsString;
using internal::GetArray;
using internal::GetObject;
using internal::GetOptionalArray;
using internal::GetOptionalObject;
using internal::GetOptionalString;
using internal::GetString;
using internal::JsonIndexPath;
using internal::JsonPath;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// The chat template's own tokens.
struct Template {
  int64_t per_message;
  int64_t per_name;
  int64_t reply_priming;
  bool count_role;          // the role's text is in the prompt
  bool count_other_fields;  // every other string field is, as the cookbook
                            // counts them
};

Template TemplateFor(MessageFormat format) {
  switch (format) {
    case MessageFormat::kOpenAI:
      // num_tokens_from_messages: tokens_per_message = 3,
      // tokens_per_name = 1, "every reply is primed with
      // <|start|>assistant<|message|>" = 3.
      return {3, 1, 3, true, true};
    case MessageFormat::kLlama3:
      // <|start_header_id|> role <|end_header_id|> "\n\n" content <|eot_id|>;
      // reply: <|begin_of_text|> once and <|start_header_id|> assistant
      // <|end_header_id|> "\n\n".
      return {4, 0, 5, true, true};
    case MessageFormat::kAnthropic:
      // "\n\nHuman:" / "\n\nAssistant:" are 3 tokens each in the Claude
      // vocabulary ("\n\n", the word, ':'), and stand for the role.
      return {3, 0, 3, false, false};
  }
  return {3, 1, 3, true, true};
}

// num_tokens_for_tools' constants (OpenAI cookbook, "How to count tokens
// with tiktoken", section 7): func_init 7 for gpt-4o and gpt-4o-mini
// (o200k_base), 10 for gpt-3.5-turbo and gpt-4 (cl100k_base); the others are
// shared.
constexpr int64_t kFuncInitO200k = 7;
constexpr int64_t kFuncInitOther = 10;
constexpr int64_t kPropInit = 3;
constexpr int64_t kPropKey = 3;
constexpr int64_t kEnumInit = -3;
constexpr int64_t kEnumItem = 3;
constexpr int64_t kFuncEnd = 12;

// token_counter_type values (see CountMessagesForCounterType).
struct CounterTypeMapping {
  std::string_view type;
  std::string_view encoding;
  bool exact;
  MessageFormat format;
};
constexpr CounterTypeMapping kCounterTypes[] = {
    {"generic", "", false, MessageFormat::kOpenAI},
    {"openai", "cl100k_base", true, MessageFormat::kOpenAI},
    {"anthropic", "claude", false, MessageFormat::kAnthropic},
    {"ollama", "llama3", true, MessageFormat::kLlama3},
};

// The members of a chat message (message_count.h, "Message members").
constexpr std::string_view kMessageMembers[] = {
    "role",
    "content",
    // OpenAI chat completions, including a response's message sent back.
    "name",
    "tool_calls",
    "tool_call_id",
    "function_call",
    "refusal",
    "audio",
    "annotations",
    // Reasoning beside the content: DeepSeek and vLLM (reasoning_content),
    // OpenRouter (reasoning, reasoning_details).
    "reasoning_content",
    "reasoning",
    "reasoning_details",
    // Ollama.
    "thinking",
    "images",
    "tool_name",
    // Mistral and DeepSeek: an assistant message the reply continues.
    "prefix",
    // Anthropic prompt caching on a whole message (OpenAI-compatible
    // proxies accept it there).
    "cache_control",
    // SWE-agent's mark on a demonstration's turns.
    "is_demo",
    // ctxkit's own message documents (conv get, compress_context's
    // compressed_messages, the MCP Token Optimizer's), sent back as input.
    "id",
    "conversation_id",
    "seq",
    "tokens",
    "is_compressed",
    "created_at",
};

std::string_view StripFinalPeriod(std::string_view s) {
  if (!s.empty() && s.back() == '.') s.remove_suffix(1);
  return s;
}

class Counter {
 public:
  Counter(const Tokenizer* tokenizer, const MessageCountOptions& options,
          MessageFormat format)
      : tokenizer_(tokenizer),
        options_(options),
        format_(format),
        template_(TemplateFor(format)) {
    ordinary_.allowed_special = SpecialTokenSet::None();
    ordinary_.disallowed_special = SpecialTokenSet::None();
  }

  absl::StatusOr<MessageCount> Run(std::string_view json) {
    simdjson::dom::parser parser;
    CTXKIT_ASSIGN_OR_RETURN(element root,
                            internal::ParseJson(parser, json, "chat messages"));
    std::optional<array> messages;
    std::optional<element> system;
    std::optional<array> tools;
    if (root.type() == element_type::ARRAY) {
      messages = array(root);
    } else if (root.type() == element_type::OBJECT) {
      const object obj(root);
      CTXKIT_ASSIGN_OR_RETURN(messages, GetArray(obj, "messages", ""));
      element value;
      if (!obj["system"].get(value) &&
          value.type() != element_type::NULL_VALUE) {
        system = value;
      }
      CTXKIT_ASSIGN_OR_RETURN(tools, GetOptionalArray(obj, "tools", ""));
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "chat messages must be an array of messages or an object with "
          "\"messages\" (got %s)",
          internal::JsonTypeName(root.type())));
    }

    MessageCount out;
    int64_t total = 0;
    size_t index = 0;
    internal::CancelPoll poll(options_.cancel, "token count");
    CTXKIT_RETURN_IF_ERROR(poll.Check());
    poll.NextPhase("counting messages", messages->size());
    for (element message : *messages) {
      const size_t bytes_before = text_bytes_;
      CTXKIT_ASSIGN_OR_RETURN(
          int64_t n, Message(message, JsonIndexPath("messages", index)));
      // The text tokenized is what a message costs.
      CTXKIT_RETURN_IF_ERROR(poll.Message(text_bytes_ - bytes_before));
      out.messages.push_back(static_cast<size_t>(n));
      total += n;
      ++index;
    }
    if (system.has_value()) {
      CTXKIT_ASSIGN_OR_RETURN(int64_t n, Content(*system, "system"));
      out.system = static_cast<size_t>(n);
      total += n;
    }
    if (tools.has_value() && tools->size() > 0) {
      CTXKIT_ASSIGN_OR_RETURN(int64_t n, Tools(*tools));
      out.tools = static_cast<size_t>(n);
      total += n;
      estimated_ = true;
    }
    out.reply_priming = static_cast<size_t>(template_.reply_priming);
    total += template_.reply_priming;
    out.total = static_cast<size_t>(total);
    if (tokenizer_ != nullptr) {
      out.encoding = tokenizer_->name();
      out.method = CountMethod::kTokenizer;
    } else {
      out.method = CountMethod::kHeuristic;
    }
    out.exact = exact();
    return out;
  }

  // The parts, used one message at a time by internal::MessageCounter.
  absl::StatusOr<int64_t> Text(std::string_view text) {
    text_bytes_ += text.size();
    if (tokenizer_ == nullptr) {
      return static_cast<int64_t>(EstimateTokens(text));
    }
    absl::StatusOr<size_t> n =
        internal::TokenizerCount(*tokenizer_, text, ordinary_);
    if (!n.ok()) return n.status();
    return static_cast<int64_t>(*n);
  }

  absl::StatusOr<int64_t> Json(element value) {
    estimated_ = true;
    return Text(simdjson::minify(value));
  }

  absl::StatusOr<int64_t> Message(element value, const std::string& path) {
    CTXKIT_ASSIGN_OR_RETURN(object obj, AsObject(value, path));
    CTXKIT_RETURN_IF_ERROR(internal::CheckMessageMembers(obj, path));
    CTXKIT_ASSIGN_OR_RETURN(std::string_view role,
                            GetString(obj, "role", path));
    (void)role;  // required and typed; counted below with the other fields
    int64_t n = template_.per_message;
    for (auto [key_view, field] : obj) {
      const std::string_view key = key_view;
      if (key == "role" || key == "name") {
        CTXKIT_ASSIGN_OR_RETURN(std::string_view text,
                                AsString(field, JsonPath(path, key)));
        CTXKIT_ASSIGN_OR_RETURN(int64_t t, StringField(key, text));
        n += t;
      } else if (key == "content") {
        CTXKIT_ASSIGN_OR_RETURN(int64_t t,
                                Content(field, JsonPath(path, "content")));
        n += t;
      } else if (key == "tool_calls") {
        if (field.type() == element_type::NULL_VALUE) continue;
        const std::string calls_path = JsonPath(path, "tool_calls");
        CTXKIT_ASSIGN_OR_RETURN(array calls, AsArray(field, calls_path));
        size_t i = 0;
        for (element call : calls) {
          const std::string call_path = JsonIndexPath(calls_path, i++);
          CTXKIT_ASSIGN_OR_RETURN(object call_obj, AsObject(call, call_path));
          CTXKIT_ASSIGN_OR_RETURN(object function,
                                  GetObject(call_obj, "function", call_path));
          CTXKIT_ASSIGN_OR_RETURN(
              int64_t t,
              FunctionCall(function, JsonPath(call_path, "function")));
          n += t;
        }
      } else if (key == "function_call") {
        if (field.type() == element_type::NULL_VALUE) continue;
        const std::string call_path = JsonPath(path, "function_call");
        CTXKIT_ASSIGN_OR_RETURN(object function, AsObject(field, call_path));
        CTXKIT_ASSIGN_OR_RETURN(int64_t t, FunctionCall(function, call_path));
        n += t;
      } else if (key == "images") {
        if (field.type() == element_type::NULL_VALUE) continue;
        CTXKIT_ASSIGN_OR_RETURN(array images,
                                AsArray(field, JsonPath(path, "images")));
        n += static_cast<int64_t>(images.size() * options_.image_tokens);
        if (images.size() > 0) estimated_ = true;
      } else if (key == "thinking" && field.type() == element_type::STRING) {
        // Ollama keeps a reasoning model's thinking beside the content.
        if (options_.count_thinking) {
          CTXKIT_ASSIGN_OR_RETURN(int64_t t,
                                  Text(field.get_string().value_unsafe()));
          n += t;
        }
      } else if (field.type() == element_type::STRING) {
        CTXKIT_ASSIGN_OR_RETURN(
            int64_t t, StringField(key, field.get_string().value_unsafe()));
        n += t;
      }
    }
    return n;
  }

  // Tokens of a message's string member `key` other than content, thinking
  // and the tool calls: the role when the format shows it, the name plus
  // per_name, any other member when the format counts every string field.
  absl::StatusOr<int64_t> StringField(std::string_view key,
                                      std::string_view text) {
    if (key == "role") {
      if (!template_.count_role) return 0;
      // A history has a handful of roles: each is counted once. The cache
      // is bounded so that a document of many made-up roles stays linear.
      for (const auto& [role, tokens] : role_tokens_) {
        if (role == text) return tokens;
      }
      CTXKIT_ASSIGN_OR_RETURN(int64_t t, Text(text));
      if (role_tokens_.size() < kMaxCachedRoles) {
        role_tokens_.emplace_back(std::string(text), t);
      }
      return t;
    }
    if (key == "name") {
      CTXKIT_ASSIGN_OR_RETURN(int64_t t, Text(text));
      return t + template_.per_name;
    }
    if (!template_.count_other_fields) return 0;
    return Text(text);
  }

  // Message() of {"role", "content", "name", "tool_calls", "tool_call_id"}
  // less the tokens of its content and tool calls (counted earlier by the
  // same rules): the per-message tokens plus the other fields.
  absl::StatusOr<int64_t> Framing(
      std::string_view role, const std::optional<std::string_view>& name,
      const std::optional<std::string_view>& call_id, bool has_tool_calls) {
    // Calls are counted by estimated rules, as FunctionCall() says.
    if (has_tool_calls) estimated_ = true;
    CTXKIT_ASSIGN_OR_RETURN(int64_t n, StringField("role", role));
    n += template_.per_message;
    if (name.has_value()) {
      CTXKIT_ASSIGN_OR_RETURN(int64_t t, StringField("name", *name));
      n += t;
    }
    if (call_id.has_value()) {
      CTXKIT_ASSIGN_OR_RETURN(int64_t t, StringField("tool_call_id", *call_id));
      n += t;
    }
    return n;
  }

  // MessageCount::exact of what was counted so far, before the model's own
  // exactness is applied.
  bool exact() const {
    return tokenizer_ != nullptr && format_ != MessageFormat::kAnthropic &&
           !estimated_;
  }

  // {name, arguments}: arguments is a JSON string (OpenAI) or an object
  // (Ollama).
  absl::StatusOr<int64_t> FunctionCall(object function,
                                       const std::string& path) {
    estimated_ = true;
    CTXKIT_ASSIGN_OR_RETURN(std::string_view name,
                            GetString(function, "name", path));
    CTXKIT_ASSIGN_OR_RETURN(int64_t n, Text(name));
    n += static_cast<int64_t>(options_.tokens_per_tool_call);
    element arguments;
    if (!function["arguments"].get(arguments)) {
      if (arguments.type() == element_type::STRING) {
        CTXKIT_ASSIGN_OR_RETURN(int64_t t,
                                Text(arguments.get_string().value_unsafe()));
        n += t;
      } else if (arguments.type() == element_type::OBJECT) {
        CTXKIT_ASSIGN_OR_RETURN(int64_t t, Json(arguments));
        n += t;
      } else if (arguments.type() != element_type::NULL_VALUE) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s must be a string or an object (got %s)",
                            JsonPath(path, "arguments"),
                            internal::JsonTypeName(arguments.type())));
      }
    }
    return n;
  }

  absl::StatusOr<int64_t> Content(element value, const std::string& path) {
    switch (value.type()) {
      case element_type::STRING:
        return Text(value.get_string().value_unsafe());
      case element_type::NULL_VALUE:
        return 0;
      case element_type::ARRAY: {
        int64_t n = 0;
        size_t i = 0;
        for (element block : array(value)) {
          CTXKIT_ASSIGN_OR_RETURN(int64_t t,
                                  Block(block, JsonIndexPath(path, i++)));
          n += t;
        }
        return n;
      }
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s must be a string, an array of content blocks or null (got %s)",
            path, internal::JsonTypeName(value.type())));
    }
  }

  absl::StatusOr<int64_t> Block(element value, const std::string& path) {
    CTXKIT_ASSIGN_OR_RETURN(object block, AsObject(value, path));
    CTXKIT_ASSIGN_OR_RETURN(std::string_view type,
                            GetString(block, "type", path));
    if (type == "text") {
      CTXKIT_ASSIGN_OR_RETURN(std::string_view text,
                              GetString(block, "text", path));
      return Text(text);
    }
    if (type == "refusal") {
      CTXKIT_ASSIGN_OR_RETURN(std::string_view text,
                              GetString(block, "refusal", path));
      return Text(text);
    }
    if (type == "image_url") {
      estimated_ = true;
      element image_url;
      if (!block["image_url"].get(image_url) &&
          image_url.type() == element_type::OBJECT) {
        CTXKIT_ASSIGN_OR_RETURN(std::optional<std::string_view> detail,
                                GetOptionalString(object(image_url), "detail",
                                                  JsonPath(path, "image_url")));
        if (detail.has_value() && *detail == "low") {
          return static_cast<int64_t>(options_.low_detail_image_tokens);
        }
      }
      return static_cast<int64_t>(options_.image_tokens);
    }
    if (type == "image") {
      estimated_ = true;
      return static_cast<int64_t>(options_.anthropic_image_tokens);
    }
    if (type == "tool_use" || type == "server_tool_use") {
      estimated_ = true;
      CTXKIT_ASSIGN_OR_RETURN(std::string_view name,
                              GetString(block, "name", path));
      CTXKIT_ASSIGN_OR_RETURN(int64_t n, Text(name));
      n += static_cast<int64_t>(options_.tokens_per_tool_call);
      element input;
      if (!block["input"].get(input)) {
        CTXKIT_ASSIGN_OR_RETURN(int64_t t, Json(input));
        n += t;
      }
      return n;
    }
    if (type == "tool_result") {
      element content;
      if (block["content"].get(content)) return 0;
      return Content(content, JsonPath(path, "content"));
    }
    if (type == "thinking") {
      CTXKIT_ASSIGN_OR_RETURN(std::string_view thinking,
                              GetString(block, "thinking", path));
      if (!options_.count_thinking) return 0;
      return Text(thinking);
    }
    if (type == "document") {
      const std::string source_path = JsonPath(path, "source");
      CTXKIT_ASSIGN_OR_RETURN(std::optional<object> source,
                              GetOptionalObject(block, "source", path));
      if (source.has_value()) {
        CTXKIT_ASSIGN_OR_RETURN(
            std::optional<std::string_view> source_type,
            GetOptionalString(*source, "type", source_path));
        if (source_type == "text") {
          CTXKIT_ASSIGN_OR_RETURN(std::string_view data,
                                  GetString(*source, "data", source_path));
          return Text(data);
        }
        if (source_type == "content") {
          element content;
          if (!(*source)["content"].get(content)) {
            return Content(content, JsonPath(source_path, "content"));
          }
          return 0;
        }
      }
    }
    return Json(value);
  }

  absl::StatusOr<int64_t> Tools(array tools) {
    int64_t n = 0;
    bool any_function = false;
    size_t i = 0;
    const bool o200k =
        tokenizer_ != nullptr &&
        absl::StartsWith(internal::AV(tokenizer_->name()), "o200k");
    for (element tool : tools) {
      const std::string path = JsonIndexPath("tools", i++);
      CTXKIT_ASSIGN_OR_RETURN(object obj, AsObject(tool, path));
      CTXKIT_ASSIGN_OR_RETURN(std::optional<object> function,
                              GetOptionalObject(obj, "function", path));
      if (function.has_value()) {
        // OpenAI shape: num_tokens_for_tools.
        any_function = true;
        const std::string fpath = JsonPath(path, "function");
        CTXKIT_ASSIGN_OR_RETURN(std::string_view name,
                                GetString(*function, "name", fpath));
        CTXKIT_ASSIGN_OR_RETURN(
            std::optional<std::string_view> description,
            GetOptionalString(*function, "description", fpath));
        n += o200k ? kFuncInitO200k : kFuncInitOther;
        CTXKIT_ASSIGN_OR_RETURN(
            int64_t t,
            Text(absl::StrFormat("%s:%s", name,
                                 StripFinalPeriod(description.value_or("")))));
        n += t;
        CTXKIT_ASSIGN_OR_RETURN(
            std::optional<object> parameters,
            GetOptionalObject(*function, "parameters", fpath));
        if (parameters.has_value()) {
          CTXKIT_ASSIGN_OR_RETURN(
              int64_t p,
              Properties(*parameters, JsonPath(fpath, "parameters")));
          n += p;
        }
      } else {
        // Anthropic shape.
        CTXKIT_ASSIGN_OR_RETURN(std::string_view name,
                                GetString(obj, "name", path));
        CTXKIT_ASSIGN_OR_RETURN(std::optional<std::string_view> description,
                                GetOptionalString(obj, "description", path));
        CTXKIT_ASSIGN_OR_RETURN(int64_t t, Text(name));
        n += t;
        if (description.has_value()) {
          CTXKIT_ASSIGN_OR_RETURN(int64_t d, Text(*description));
          n += d;
        }
        element schema;
        if (!obj["input_schema"].get(schema) &&
            schema.type() != element_type::NULL_VALUE) {
          CTXKIT_ASSIGN_OR_RETURN(int64_t s, Json(schema));
          n += s;
        }
      }
    }
    if (any_function) n += kFuncEnd;
    if (format_ == MessageFormat::kAnthropic) {
      n += static_cast<int64_t>(options_.anthropic_tool_prompt_tokens);
    }
    return n;
  }

  // The "properties" of a JSON schema object `schema` (at `path`), by the
  // cookbook's per-property rule, recursing into nested objects and arrays
  // of objects (ctxkit's extension).
  absl::StatusOr<int64_t> Properties(object schema, const std::string& path) {
    const std::string props_path = JsonPath(path, "properties");
    CTXKIT_ASSIGN_OR_RETURN(std::optional<object> properties,
                            GetOptionalObject(schema, "properties", path));
    if (!properties.has_value() || properties->size() == 0) return 0;
    int64_t n = kPropInit;
    for (auto [key_view, value] : *properties) {
      const std::string_view key = key_view;
      const std::string ppath = JsonPath(props_path, key);
      CTXKIT_ASSIGN_OR_RETURN(object property, AsObject(value, ppath));
      n += kPropKey;
      std::string type;
      element type_value;
      if (!property["type"].get(type_value)) {
        if (type_value.type() == element_type::STRING) {
          type = std::string(type_value.get_string().value_unsafe());
        } else if (type_value.type() == element_type::ARRAY) {
          // ["string", "null"]: rendered as a union.
          for (element t : array(type_value)) {
            if (t.type() != element_type::STRING) continue;
            if (!type.empty()) type += " | ";
            type += std::string(t.get_string().value_unsafe());
          }
        }
      }
      CTXKIT_ASSIGN_OR_RETURN(
          std::optional<std::string_view> description,
          GetOptionalString(property, "description", ppath));
      CTXKIT_ASSIGN_OR_RETURN(std::optional<array> items_enum,
                              GetOptionalArray(property, "enum", ppath));
      if (items_enum.has_value()) {
        n += kEnumInit;
        for (element item : *items_enum) {
          n += kEnumItem;
          if (item.type() == element_type::STRING) {
            CTXKIT_ASSIGN_OR_RETURN(int64_t t,
                                    Text(item.get_string().value_unsafe()));
            n += t;
          } else {
            CTXKIT_ASSIGN_OR_RETURN(int64_t t, Text(simdjson::minify(item)));
            n += t;
          }
        }
      }
      CTXKIT_ASSIGN_OR_RETURN(
          int64_t line,
          Text(absl::StrFormat("%s:%s:%s", key, type,
                               StripFinalPeriod(description.value_or("")))));
      n += line;
      // Nested schemas: an object's properties, an array's item object's.
      CTXKIT_ASSIGN_OR_RETURN(int64_t nested, Properties(property, ppath));
      n += nested;
      CTXKIT_ASSIGN_OR_RETURN(std::optional<object> items,
                              GetOptionalObject(property, "items", ppath));
      if (items.has_value()) {
        CTXKIT_ASSIGN_OR_RETURN(int64_t t,
                                Properties(*items, JsonPath(ppath, "items")));
        n += t;
      }
    }
    return n;
  }

 private:
  const Tokenizer* tokenizer_;
  const MessageCountOptions& options_;
  MessageFormat format_;
  Template template_;
  EncodeOptions ordinary_;
  bool estimated_ = false;
  size_t text_bytes_ = 0;  // of every Text() so far, for the CancelPoll
  static constexpr size_t kMaxCachedRoles = 8;
  std::vector<std::pair<std::string, int64_t>> role_tokens_;
};

absl::StatusOr<MessageCount> CountWith(const Tokenizer* tokenizer,
                                       std::string_view json,
                                       const MessageCountOptions& options,
                                       MessageFormat format) {
  Counter counter(tokenizer, options, format);
  return counter.Run(json);
}

// Counts with the tokenizer of `encoding` in `registry` when it is
// available, else the heuristic; exact also requires `encoding_exact`.
absl::StatusOr<MessageCount> CountWithEncoding(
    const ModelRegistry& registry, std::string_view encoding,
    bool encoding_exact, MessageFormat format, std::string_view json,
    const MessageCountOptions& options) {
  std::shared_ptr<const Tokenizer> tokenizer;
  if (!encoding.empty()) {
    auto found = internal::RegistryTokenizerForEncoding(registry, encoding);
    if (found.ok()) {
      tokenizer = std::move(*found);
    } else if (found.status().code() != absl::StatusCode::kFailedPrecondition) {
      return found.status();
    }
  }
  absl::StatusOr<MessageCount> count =
      CountWith(tokenizer.get(), json, options, format);
  if (count.ok() && !encoding_exact) count->exact = false;
  return count;
}

}  // namespace

namespace internal {

absl::Status CheckMessageMembers(simdjson::dom::object message,
                                 std::string_view path) {
  for (auto [key_view, field] : message) {
    (void)field;
    const std::string_view key = key_view;
    if (std::find(std::begin(kMessageMembers), std::end(kMessageMembers),
                  key) == std::end(kMessageMembers)) {
      return UnknownKeyError(path, key, kMessageMembers);
    }
  }
  return absl::OkStatus();
}

struct MessageCounter::Impl {
  Impl(const Tokenizer* tokenizer, const MessageCountOptions& options,
       MessageFormat format)
      : options_copy(options), counter(tokenizer, options_copy, format) {}
  MessageCountOptions options_copy;  // Counter keeps a reference
  Counter counter;
};

MessageCounter::MessageCounter(std::shared_ptr<const Tokenizer> tokenizer,
                               const MessageCountOptions& options,
                               MessageFormat format)
    : tokenizer_(std::move(tokenizer)),
      impl_(std::make_unique<Impl>(tokenizer_.get(), options, format)),
      reply_priming_(TemplateFor(format).reply_priming) {}

MessageCounter::~MessageCounter() = default;

absl::StatusOr<int64_t> MessageCounter::Message(simdjson::dom::element message,
                                                const std::string& path) {
  return impl_->counter.Message(message, path);
}

absl::StatusOr<int64_t> MessageCounter::Text(std::string_view text) {
  return impl_->counter.Text(text);
}

absl::StatusOr<int64_t> MessageCounter::Framing(
    std::string_view role, const std::optional<std::string_view>& name,
    const std::optional<std::string_view>& tool_call_id, bool has_tool_calls) {
  return impl_->counter.Framing(role, name, tool_call_id, has_tool_calls);
}

bool MessageCounter::exact() const { return impl_->counter.exact(); }

absl::StatusOr<CountingChoice> ChooseCounting(std::string_view model,
                                              std::string_view counter_type,
                                              const ModelRegistry& registry) {
  CountingChoice choice;
  if (!model.empty()) {
    const ResolvedModel resolved = registry.Resolve(model);
    choice.encoding = resolved.info.encoding;
    choice.exact = resolved.info.exact;
    choice.format = resolved.info.message_format;
  } else {
    bool found = false;
    for (const CounterTypeMapping& m : kCounterTypes) {
      if (m.type == counter_type) {
        choice.encoding = std::string(m.encoding);
        choice.exact = m.exact;
        choice.format = m.format;
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unknown token counter type \"%s\" (known: generic, openai, "
          "anthropic, ollama)",
          counter_type));
    }
  }
  if (!choice.encoding.empty()) {
    auto tokenizer = RegistryTokenizerForEncoding(registry, choice.encoding);
    if (tokenizer.ok()) {
      choice.tokenizer = std::move(*tokenizer);
    } else if (tokenizer.status().code() !=
               absl::StatusCode::kFailedPrecondition) {
      return tokenizer.status();
    }
  }
  if (choice.tokenizer == nullptr) choice.exact = false;
  return choice;
}

absl::StatusOr<MessageCount> CountMessagesForModel(
    std::string_view model, std::string_view messages_json,
    const MessageCountOptions& options, const ModelRegistry& registry) {
  const ResolvedModel resolved = registry.Resolve(model);
  return CountWithEncoding(registry, resolved.info.encoding,
                           resolved.info.exact, resolved.info.message_format,
                           messages_json, options);
}

}  // namespace internal

StatusOr<MessageCount> CountMessages(const Tokenizer& tokenizer,
                                     std::string_view messages_json,
                                     const MessageCountOptions& options) {
  return internal::ToPublic(
      CountWith(&tokenizer, messages_json, options, options.format));
}

StatusOr<MessageCount> EstimateMessages(std::string_view messages_json,
                                        const MessageCountOptions& options) {
  return internal::ToPublic(
      CountWith(nullptr, messages_json, options, options.format));
}

StatusOr<MessageCount> CountMessagesForModel(std::string_view model,
                                             std::string_view messages_json,
                                             const MessageCountOptions& options,
                                             const ModelRegistry& registry) {
  return internal::ToPublic(
      internal::CountMessagesForModel(model, messages_json, options, registry));
}

StatusOr<MessageCount> CountMessagesForCounterType(
    std::string_view counter_type, std::string_view messages_json,
    const MessageCountOptions& options, const ModelRegistry& registry) {
  for (const CounterTypeMapping& m : kCounterTypes) {
    if (m.type == counter_type) {
      return internal::ToPublic(CountWithEncoding(
          registry, m.encoding, m.exact, m.format, messages_json, options));
    }
  }
  return Status(StatusCode::kInvalidArgument,
                absl::StrFormat("unknown token counter type \"%s\" (known: "
                                "generic, openai, anthropic, ollama)",
                                counter_type));
}

}  // namespace ctxkit
