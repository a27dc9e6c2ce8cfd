// compress_context (seed 000) and compact_chat (seed 001's POST
// /api/chat/compact as a tool), both the library's Compactor.
//
// compress_context compacts a stored conversation
// (Compactor::CompactConversationJson): the stored messages stay as they are
// and the result is saved beside them as a compacted view (its version is in
// the answer), so compressing never loses history. The document is the
// library's, in seed 000's shape with the conversation id and view version,
// as the C ABI's ctxkit_compactor_compact_conversation writes it.
//
// compact_chat passes its arguments, which are seed 001's request body,
// to Compactor::CompactJson and answers with its response document, exactly
// as the HTTP endpoint does.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ctxkit/compactor.h"
#include "programs/ctxkit/host/json_text.h"
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

// ---- compress_context ----

constexpr std::string_view kCompressInputSchema = R"({
  "type": "object",
  "properties": {
    "conversation_id": {
      "type": "string", "minLength": 1,
      "description": "The stored conversation to compress."
    },
    "strategy": {
      "type": "string", "enum": ["summarize", "remove_old", "compress_similar", "smart"],
      "default": "smart",
      "description": "summarize: summarize everything outside the recent messages; remove_old: drop the oldest messages; compress_similar: merge consecutive same-role messages and drop near-duplicates; smart: classify messages and summarize the least important first."
    },
    "target_ratio": {
      "type": "number", "minimum": 0.1, "maximum": 0.9, "default": 0.5,
      "description": "Aim at this share of the conversation's tokens."
    },
    "preserve_recent": {
      "type": "integer", "minimum": 0, "maximum": 2147483648, "default": 5,
      "description": "The number of most recent messages kept before anything older."
    },
    "max_tokens": {
      "type": "integer", "minimum": 1, "maximum": 1099511627776,
      "description": "A token budget the result must also fit (default 100000)."
    }
  },
  "required": ["conversation_id"],
  "additionalProperties": false
})";

constexpr std::string_view kCompressOutputSchema = R"({
  "type": "object",
  "properties": {
    "success": {"type": "boolean"},
    "original_tokens": {"type": "integer", "minimum": 0},
    "compressed_tokens": {"type": "integer", "minimum": 0},
    "tokens_saved": {"type": "integer"},
    "compression_ratio": {"type": "number", "minimum": 0},
    "original_message_count": {"type": "integer", "minimum": 0},
    "compressed_message_count": {"type": "integer", "minimum": 0},
    "strategy": {"type": "string", "enum": ["summarize", "remove_old", "compress_similar", "smart"]},
    "compressed_messages": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "role": {"type": "string"},
          "content": {"type": ["string", "array", "object", "null"]},
          "tokens": {"type": "integer", "minimum": 0},
          "is_compressed": {"type": "boolean"}
        },
        "required": ["role", "content", "tokens", "is_compressed"]
      }
    },
    "budget": {
      "type": "object",
      "properties": {
        "target_tokens": {"type": "integer", "minimum": 0},
        "met": {"type": "boolean"},
        "status": {"type": "string", "enum": ["met", "degraded", "infeasible"]},
        "over_by": {"type": "integer", "minimum": 0},
        "must_keep_cut_tokens": {"type": "integer", "minimum": 0}
      }
    },
    "conversation_id": {"type": "string"},
    "view_version": {"type": "integer", "minimum": 1},
    "error": {"type": "string"},
    "details": {"type": "array"}
  },
  "required": ["success"]
})";

ToolOutput CompressContext(simdjson::dom::object args,
                           mcp::RequestContext& ctx) {
  const std::optional<std::string_view> id = StringArg(args, "conversation_id");
  if (!id.has_value()) {
    return ToolValidationError("conversation_id", "Required");
  }
  // The schema admits only these members, with the library's names; seed
  // 000's defaults differ from the library's for two of them.
  std::string options = R"({"response":"compress_context")";
  for (const std::string_view key :
       {"strategy", "target_ratio", "preserve_recent", "max_tokens"}) {
    simdjson::dom::element value;
    if (args[key].get(value) == simdjson::SUCCESS) {
      options += ",\"" + std::string(key) + "\":" + simdjson::minify(value);
    }
  }
  if (args["target_ratio"].error()) options += R"(,"target_ratio":0.5)";
  if (args["preserve_recent"].error()) options += R"(,"preserve_recent":5)";
  options += '}';
  if (ctx.Cancelled()) return ToolOutput{};
  uint64_t version = 0;
  auto document = ctx.services().compactor->CompactConversationJson(
      *ctx.services().conversations, *id, options, ctx.AsCancelCheck(), nullptr,
      &version);
  if (!document.ok()) {
    const Status& status = document.status();
    // Cancelled: no view was saved, and no reply is sent.
    if (status.code() == StatusCode::kCancelled) return ToolOutput{};
    // "conversation <id> has no messages to compact"
    if (status.code() == StatusCode::kInvalidArgument &&
        status.message().rfind("conversation ", 0) == 0) {
      return ToolValidationError("conversation_id", status.message());
    }
    return LibraryError(status, "Conversation",
                        {"conversation_id", "strategy", "target_ratio",
                         "preserve_recent", "max_tokens"});
  }
  ctx.Log(mcp::LogLevel::kInfo, "compressed conversation " + std::string(*id) +
                                    " into view " + std::to_string(version));
  return Success(*std::move(document));
}

// ---- compact_chat ----

constexpr std::string_view kCompactInputSchema = R"({
  "type": "object",
  "properties": {
    "messages": {
      "type": "array", "minItems": 1,
      "items": {"type": "object"},
      "description": "The chat history: {role, content} messages (OpenAI and Anthropic shapes are understood too)."
    },
    "max_tokens": {
      "type": "integer", "minimum": 1, "maximum": 1099511627776, "default": 100000,
      "description": "The token budget."
    },
    "recent_window": {
      "type": "integer", "minimum": 0, "maximum": 2147483648, "default": 10,
      "description": "Number of recent messages to preserve."
    },
    "keep_anchors": {
      "type": "boolean", "default": true,
      "description": "Keep anchor messages (schema changes, corrections, tool schemas)."
    },
    "options": {
      "type": "object",
      "properties": {
        "preserve_tool_results": {"type": "boolean", "default": true},
        "preserve_schema_info": {"type": "boolean", "default": true},
        "enable_summarization": {"type": "boolean", "default": true},
        "min_important_messages": {"type": "integer", "minimum": 0, "maximum": 2147483648, "default": 3},
        "token_counter_type": {"type": "string", "enum": ["generic", "openai", "anthropic", "ollama"]},
        "enable_llm_summarization": {"type": "boolean", "default": false},
        "enable_caching": {"type": "boolean", "default": false},
        "cache_ttl_ms": {"type": "integer", "minimum": 0},
        "enable_analytics": {"type": "boolean", "default": false}
      },
      "additionalProperties": false,
      "description": "Fine-grained compaction options."
    },
    "model": {"type": "string", "minLength": 1, "description": "Count with this model's tokenizer (takes precedence over token_counter_type)."},
    "format": {"type": "string", "enum": ["auto", "openai", "anthropic", "plain"], "default": "auto"},
    "strategy": {"type": "string", "enum": ["smart", "summarize", "remove_old", "compress_similar"], "default": "smart"},
    "target_ratio": {"type": "number", "minimum": 0.1, "maximum": 0.9, "description": "Also aim at this share of the history's tokens."},
    "preserve_recent": {"type": "integer", "minimum": 0, "maximum": 2147483648, "description": "Seed 000's name for recent_window."},
    "explain": {"type": "boolean", "default": false, "description": "Add each message's tier, rule and fate (decisions)."},
    "max_summary_tokens": {"type": "integer", "minimum": 16, "maximum": 1048576, "default": 65536},
    "estimate_unknown_model": {"type": "boolean", "default": false, "description": "Estimate the tokens of a model the registry does not know instead of refusing it."},
    "rules": {"type": "array", "items": {"type": "object"}, "description": "Extra classification rules, tried before the built-in ones."}
  },
  "required": ["messages"],
  "additionalProperties": false
})";

constexpr std::string_view kCompactOutputSchema = R"({
  "type": "object",
  "properties": {
    "schema_version": {"type": "integer"},
    "messages": {"type": "array", "items": {"type": "object"}},
    "summary": {
      "type": "object",
      "properties": {
        "topics": {"type": "array", "items": {"type": "string"}},
        "tables": {"type": "array", "items": {"type": "string"}},
        "tools": {"type": "array", "items": {"type": "string"}},
        "description": {"type": "string"}
      },
      "required": ["topics", "tables", "tools", "description"]
    },
    "token_estimate": {"type": "integer", "minimum": 0},
    "compaction_info": {
      "type": "object",
      "properties": {
        "original_count": {"type": "integer", "minimum": 0},
        "compacted_count": {"type": "integer", "minimum": 0},
        "dropped_count": {"type": "integer", "minimum": 0},
        "anchor_count": {"type": "integer", "minimum": 0},
        "tokens_saved": {"type": "integer"},
        "compression_ratio": {"type": "number", "minimum": 0}
      },
      "required": ["original_count", "compacted_count", "dropped_count", "anchor_count", "tokens_saved", "compression_ratio"]
    },
    "budget": {"type": "object"},
    "format": {"type": "string"},
    "strategy": {"type": "string"},
    "encoding": {"type": "string"},
    "counting": {"type": "string"},
    "from_cache": {"type": "boolean"},
    "decisions": {"type": "array", "items": {"type": "object"}},
    "success": {"type": "boolean", "const": false},
    "error": {"type": "string"},
    "details": {"type": "array"}
  },
  "anyOf": [
    {
      "properties": {
        "messages": {"type": "array"}, "summary": {"type": "object"},
        "token_estimate": {"type": "integer"}, "compaction_info": {"type": "object"}
      },
      "required": ["messages", "summary", "token_estimate", "compaction_info"]
    },
    {
      "properties": {"success": {"const": false}, "error": {"type": "string"}},
      "required": ["success", "error"]
    }
  ]
})";

ToolOutput CompactChat(simdjson::dom::object args, mcp::RequestContext& ctx) {
  if (ctx.Cancelled()) return ToolOutput{};
  // The arguments are the request body (the schema admits nothing else).
  auto response = ctx.services().compactor->CompactJson(simdjson::minify(args),
                                                        ctx.AsCancelCheck());
  if (!response.ok()) {
    if (response.status().code() == StatusCode::kCancelled) {
      return ToolOutput{};  // no reply is sent
    }
    return LibraryError(
        response.status(), "Conversation",
        {"messages", "max_tokens", "recent_window", "keep_anchors", "options",
         "model", "format", "strategy", "target_ratio", "preserve_recent",
         "explain", "max_summary_tokens", "rules", "estimate_unknown_model"});
  }
  return Success(*std::move(response));
}

}  // namespace

const mcp::ToolSpec& CompressContextTool() {
  static const mcp::ToolSpec kSpec{
      .name = "compress_context",
      .title = "Compress context",
      .description =
          "Intelligently compress conversation context to reduce token usage "
          "while preserving essential information. Strategies: summarize, "
          "remove_old, compress_similar, smart (recommended). Tool calls and "
          "their results stay together and the result is a valid chat "
          "history. The stored messages are kept; the compressed history is "
          "returned and saved as a new version of the conversation's "
          "compacted view.",
      .input_schema = kCompressInputSchema,
      .output_schema = kCompressOutputSchema,
      .handler = &CompressContext,
      .read_only = false,
      .destructive = false,
      .idempotent = false,
  };
  return kSpec;
}

const mcp::ToolSpec& CompactChatTool() {
  static const mcp::ToolSpec kSpec{
      .name = "compact_chat",
      .title = "Compact chat history",
      .description =
          "Smart chat history compaction (the POST /api/chat/compact "
          "request and response): compresses a message history into a "
          "token budget while keeping anchors (schema changes, corrections), "
          "important tool results, schema information and errors, and "
          "summarizing the rest.",
      .input_schema = kCompactInputSchema,
      .output_schema = kCompactOutputSchema,
      .handler = &CompactChat,
      // With options.enable_caching / enable_analytics it writes the cache
      // and the metrics.
      .read_only = false,
      .destructive = false,
      .idempotent = true,
  };
  return kSpec;
}

}  // namespace ctxkit::tools
