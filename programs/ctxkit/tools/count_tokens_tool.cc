// count_tokens (seed 000): exact token counts of a text, a message array or
// any JSON object for a model, with the seed's context-window
// recommendation (safe / warning / critical, the library's
// ComputeTokenLimit thresholds).
//
// Counting is the library's: ModelRegistry::CountTokens for text,
// CountMessagesForModel for messages (its total is the request's size
// with the model's chat framing). The seed's "breakdown" splits that total
// into the messages' text (content_tokens, counted with the same tokenizer)
// and everything else (overhead_tokens: role markup, per-message framing,
// tool calls, images, the reply priming), conversation_tokens being the
// once-per-request part of the overhead (reply priming, top-level system
// prompt and tool definitions).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/tokenizer.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/tools/adapters.h"
#include "programs/ctxkit/tools/arguments.h"
#include "programs/ctxkit/tools/record_json.h"
#include "simdjson.h"

namespace ctxkit::tools {

namespace {

using mcp::ToolOutput;
using mcp::ToolStatusError;
using mcp::ToolValidationError;
using program::JsonOut;

constexpr std::string_view kInputSchema = R"({
  "type": "object",
  "properties": {
    "input": {
      "description": "What to count: a text; an array of chat messages ({role, content} objects, OpenAI or Anthropic shape); a chat request object with a messages array (plus optional system and tools); or any other JSON object, counted as its compact JSON text.",
      "anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "object"}},
        {"type": "object"}
      ]
    },
    "model": {
      "type": "string", "minLength": 1,
      "description": "The model whose tokenizer counts (default: the conversation's model when conversation_id is given, else claude-3-5-sonnet). Unknown models get a flagged estimate."
    },
    "include_recommendations": {
      "type": "boolean", "default": true,
      "description": "Include the context-window recommendation."
    },
    "conversation_id": {
      "type": "string", "minLength": 1,
      "description": "A stored conversation the input would be added to: its history's tokens are added for percentage and recommendation."
    }
  },
  "required": ["input"],
  "additionalProperties": false
})";

constexpr std::string_view kOutputSchema = R"({
  "type": "object",
  "properties": {
    "success": {"type": "boolean"},
    "tokens": {"type": "integer", "minimum": 0},
    "model": {"type": "string"},
    "family": {"type": "string", "enum": ["claude", "gpt", "llama", "generic"]},
    "percentage": {"type": ["number", "null"]},
    "limit": {"type": ["integer", "null"]},
    "breakdown": {
      "type": "object",
      "properties": {
        "content_tokens": {"type": "integer", "minimum": 0},
        "overhead_tokens": {"type": "integer", "minimum": 0},
        "conversation_tokens": {"type": "integer", "minimum": 0},
        "message_count": {"type": "integer", "minimum": 0},
        "system_tokens": {"type": "integer", "minimum": 0},
        "tools_tokens": {"type": "integer", "minimum": 0}
      },
      "required": ["content_tokens", "overhead_tokens", "conversation_tokens"]
    },
    "recommendation": {
      "type": "object",
      "properties": {
        "status": {"type": "string", "enum": ["safe", "warning", "critical", "unknown"]},
        "percentage": {"type": ["number", "null"]},
        "action": {"type": "string"},
        "shouldCompress": {"type": "boolean"}
      },
      "required": ["status", "percentage", "action", "shouldCompress"]
    },
    "input_type": {"type": "string", "enum": ["text", "messages", "chat_request", "object"]},
    "encoding": {"type": "string"},
    "method": {"type": "string", "enum": ["tokenizer", "heuristic"]},
    "exact": {"type": "boolean"},
    "conversation": {
      "type": "object",
      "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "model": {"type": "string"},
        "message_count": {"type": "integer", "minimum": 0},
        "tokens": {"type": "integer", "minimum": 0},
        "combined_tokens": {"type": "integer", "minimum": 0}
      },
      "required": ["id", "tokens", "combined_tokens"]
    },
    "error": {"type": "string"},
    "details": {"type": "array"}
  },
  "required": ["success"]
})";

// Progress is reported every this many messages.
constexpr size_t kProgressEvery = 1000;

// The seed's model families.
std::string_view Family(const ResolvedModel& resolved) {
  if (resolved.match == ModelMatch::kUnknown) return "generic";
  if (resolved.info.message_format == MessageFormat::kAnthropic ||
      resolved.info.encoding == "claude") {
    return "claude";
  }
  if (resolved.info.message_format == MessageFormat::kLlama3) return "llama";
  return "gpt";
}

// Percentages as the seed shows them: three decimals.
double RoundPercent(double percent) {
  return std::round(percent * 1000.0) / 1000.0;
}

// Counts the text of messages' content (strings, and the "text" of content
// blocks) with the model's tokenizer, or EstimateTokens() when it has none
// available, exactly as the library would count that text alone.
class TextCounter {
 public:
  explicit TextCounter(std::string_view model) {
    auto tokenizer = ModelRegistry::Default().TokenizerFor(model);
    if (tokenizer.ok()) tokenizer_ = *std::move(tokenizer);
    // Counted text is content: special-token text in it is ordinary text.
    options_.disallowed_special = SpecialTokenSet::None();
  }

  StatusOr<size_t> Count(std::string_view text) const {
    if (tokenizer_ == nullptr) return EstimateTokens(text);
    return tokenizer_->Count(text, options_);
  }

  // The tokens of the text of one message's "content".
  StatusOr<size_t> Content(simdjson::dom::object message) const {
    simdjson::dom::element content;
    if (message.at_key("content").get(content) != simdjson::SUCCESS) return 0;
    std::string_view text;
    if (content.get_string().get(text) == simdjson::SUCCESS) return Count(text);
    simdjson::dom::array blocks;
    if (content.get_array().get(blocks) != simdjson::SUCCESS) return 0;
    size_t tokens = 0;
    for (simdjson::dom::element block : blocks) {
      simdjson::dom::object object;
      if (block.get_object().get(object) != simdjson::SUCCESS) continue;
      if (object.at_key("text").get_string().get(text) != simdjson::SUCCESS) {
        continue;
      }
      auto n = Count(text);
      if (!n.ok()) return n.status();
      tokens += *n;
    }
    return tokens;
  }

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
  EncodeOptions options_;
};

// What was counted.
struct Counted {
  std::string_view input_type;
  size_t tokens = 0;
  std::string encoding;
  CountMethod method = CountMethod::kHeuristic;
  bool exact = false;
  bool has_breakdown = false;
  size_t content_tokens = 0;
  size_t conversation_tokens = 0;
  size_t message_count = 0;
  size_t system_tokens = 0;
  size_t tools_tokens = 0;
};

// The library names the message array "messages"; the caller gave "input".
std::string InputMessage(const std::string& message) {
  std::string out = message;
  if (out.rfind("messages", 0) == 0) out.replace(0, 8, "input");
  return out;
}

// Counts a message array (`input` is `messages`), or a chat request object
// holding one in "messages", into `out`. Returns nullopt when done, the
// error result, or an empty result when the request was cancelled.
std::optional<ToolOutput> CountChat(simdjson::dom::element input,
                                    simdjson::dom::array messages,
                                    std::string_view model,
                                    mcp::RequestContext& ctx, Counted& out) {
  const std::string json = ElementJson(input);
  MessageCountOptions options;
  options.cancel = ctx.AsCancelCheck();
  auto count = CountMessagesForModel(model, json, options);
  if (!count.ok()) {
    if (count.status().code() == StatusCode::kCancelled) return ToolOutput{};
    if (count.status().code() == StatusCode::kInvalidArgument) {
      return ToolValidationError("input",
                                 InputMessage(count.status().message()));
    }
    return ToolStatusError(count.status(), "Model");
  }
  out.tokens = count->total;
  out.encoding = count->encoding;
  out.method = count->method;
  out.exact = count->exact;
  out.has_breakdown = true;
  out.message_count = count->messages.size();
  out.system_tokens = count->system;
  out.tools_tokens = count->tools;
  out.conversation_tokens = count->reply_priming + count->system + count->tools;

  // The text part, message by message: the long part of a large history.
  const TextCounter counter(model);
  const size_t total = messages.size();
  size_t done = 0;
  size_t content = 0;
  for (simdjson::dom::element message : messages) {
    if (ctx.Cancelled()) return ToolOutput{};
    simdjson::dom::object object;
    if (message.get_object().get(object) == simdjson::SUCCESS) {
      auto n = counter.Content(object);
      if (!n.ok()) return ToolStatusError(n.status(), "Model");
      content += *n;
    }
    ++done;
    if (done % kProgressEvery == 0 && done < total) {
      ctx.Progress(static_cast<double>(done), static_cast<double>(total),
                   "messages counted");
    }
  }
  // Text counted alone can differ by a token from the same text inside a
  // format that joins it to its markup (Anthropic's); the content share
  // never exceeds what the request costs.
  out.content_tokens = std::min(content, out.tokens);
  return std::nullopt;
}

std::optional<ToolOutput> CountText(std::string_view text,
                                    std::string_view model, Counted& out) {
  auto count = ModelRegistry::Default().CountTokens(model, text);
  if (!count.ok()) {
    if (count.status().code() == StatusCode::kInvalidArgument) {
      return ToolValidationError("input", count.status().message());
    }
    return ToolStatusError(count.status(), "Model");
  }
  out.tokens = count->tokens;
  out.encoding = count->encoding;
  out.method = count->method;
  out.exact = count->exact;
  return std::nullopt;
}

ToolOutput Handle(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::optional<simdjson::dom::element> input = Arg(args, "input");
  if (!input.has_value()) return ToolValidationError("input", "Required");

  // The conversation first: its model is the default.
  std::optional<ConversationDetail> conversation;
  if (auto id = StringArg(args, "conversation_id")) {
    auto detail = ctx.services().conversations->Get(*id, false);
    if (!detail.ok()) return ToolStatusError(detail.status(), "Conversation");
    conversation = *std::move(detail);
  }
  std::string model;
  if (auto given = StringArg(args, "model")) {
    model = std::string(*given);
  } else if (conversation.has_value()) {
    model = conversation->conversation.model;
  } else {
    model = ctx.services().config.default_model;
  }

  Counted counted;
  std::optional<ToolOutput> error;
  std::string_view text;
  simdjson::dom::array array;
  simdjson::dom::object object;
  if (input->get_string().get(text) == simdjson::SUCCESS) {
    counted.input_type = "text";
    error = CountText(text, model, counted);
  } else if (input->get_array().get(array) == simdjson::SUCCESS) {
    counted.input_type = "messages";
    error = CountChat(*input, array, model, ctx, counted);
  } else if (input->get_object().get(object) == simdjson::SUCCESS) {
    simdjson::dom::element messages;
    if (object.at_key("messages").get(messages) == simdjson::SUCCESS &&
        messages.get_array().get(array) == simdjson::SUCCESS) {
      counted.input_type = "chat_request";
      error = CountChat(*input, array, model, ctx, counted);
    } else {
      counted.input_type = "object";
      const std::string json = ElementJson(*input);
      error = CountText(json, model, counted);
    }
  } else {
    return ToolValidationError("input",
                               "Expected string, array of messages or object");
  }
  if (error.has_value()) return *std::move(error);
  if (ctx.Cancelled()) return ToolOutput{};

  const ResolvedModel resolved = ModelRegistry::Default().Resolve(model);
  const uint64_t usage =
      counted.tokens +
      (conversation.has_value() ? conversation->actual_tokens : 0);
  const TokenLimit limit =
      ComputeTokenLimit(usage, resolved.info.context_window);
  const bool known_limit = limit.model_limit != 0;

  JsonOut json;
  json.BeginObject()
      .Key("success")
      .Bool(true)
      .Key("tokens")
      .Uint(counted.tokens)
      .Key("model")
      .String(model)
      .Key("family")
      .String(Family(resolved))
      .Key("percentage");
  if (known_limit) {
    json.Double(RoundPercent(limit.percentage));
  } else {
    json.Null();
  }
  json.Key("limit");
  if (known_limit) {
    json.Uint(limit.model_limit);
  } else {
    json.Null();
  }
  if (counted.has_breakdown) {
    json.Key("breakdown")
        .BeginObject()
        .Key("content_tokens")
        .Uint(counted.content_tokens)
        .Key("overhead_tokens")
        .Uint(counted.tokens - counted.content_tokens)
        .Key("conversation_tokens")
        .Uint(counted.conversation_tokens)
        .Key("message_count")
        .Uint(counted.message_count)
        .Key("system_tokens")
        .Uint(counted.system_tokens)
        .Key("tools_tokens")
        .Uint(counted.tools_tokens)
        .EndObject();
  }
  if (BoolArg(args, "include_recommendations").value_or(true)) {
    json.Key("recommendation")
        .BeginObject()
        .Key("status")
        .String(limit.status)
        .Key("percentage");
    if (known_limit) {
      json.Double(RoundPercent(limit.percentage));
    } else {
      json.Null();
    }
    json.Key("action")
        .String(limit.action)
        .Key("shouldCompress")
        .Bool(limit.should_compress)
        .EndObject();
  }
  json.Key("input_type")
      .String(counted.input_type)
      .Key("encoding")
      .String(counted.encoding)
      .Key("method")
      .String(counted.method == CountMethod::kTokenizer ? "tokenizer"
                                                        : "heuristic")
      .Key("exact")
      .Bool(counted.exact);
  if (conversation.has_value()) {
    const Conversation& c = conversation->conversation;
    json.Key("conversation")
        .BeginObject()
        .Key("id")
        .String(c.id)
        .Key("title")
        .String(c.title)
        .Key("model")
        .String(c.model)
        .Key("message_count")
        .Uint(c.message_count)
        .Key("tokens")
        .Uint(conversation->actual_tokens)
        .Key("combined_tokens")
        .Uint(usage)
        .EndObject();
  }
  json.EndObject();
  return Success(json.str());
}

}  // namespace

const mcp::ToolSpec& CountTokensTool() {
  static const mcp::ToolSpec kSpec{
      .name = "count_tokens",
      .title = "Count tokens",
      .description =
          "Count tokens for text, messages, or conversations with multi-LLM "
          "support and optimization recommendations. Counts are exact with "
          "the model's own tokenizer (OpenAI models; Llama 3 once its "
          "tokenizer is installed) and a close, flagged approximation for "
          "Claude 3+ and unknown models (see exact and method). Messages get "
          "a breakdown of content and chat-format overhead; the "
          "recommendation is safe below 75% of the model's context window, "
          "warning below 90%, critical from 90%.",
      .input_schema = kInputSchema,
      .output_schema = kOutputSchema,
      .handler = &Handle,
      .read_only = true,
      .destructive = false,
      .idempotent = true,
  };
  return kSpec;
}

}  // namespace ctxkit::tools
