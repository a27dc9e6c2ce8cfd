// optimize_query (seed 000): the library's QueryOptimizer, whose ToJson()
// document is already the seed's response without "success" (the CLI's
// `optimize` prints the same document).

#include <optional>
#include <string>
#include <string_view>

#include "ctxkit/query_optimizer.h"
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

constexpr std::string_view kInputSchema = R"({
  "type": "object",
  "properties": {
    "query": {
      "type": "string", "minLength": 1,
      "description": "The query (prompt) to optimize."
    },
    "context": {
      "type": "string", "minLength": 1,
      "description": "Text the query will be sent with: counted too, and searched for sentences the query repeats."
    },
    "model": {
      "type": "string", "minLength": 1, "maxLength": 256,
      "description": "The model whose tokenizer counts (default claude-3-5-sonnet)."
    },
    "optimization_goal": {
      "type": "string", "enum": ["reduce_tokens", "improve_clarity", "both"],
      "default": "both",
      "description": "reduce_tokens removes filler, politeness and hedges; improve_clarity makes requests direct and flags vague words; both does both."
    },
    "max_tokens": {
      "type": "integer", "minimum": 1, "maximum": 10000000,
      "description": "Cut the optimized query to this many tokens, at a clause or word end; a sentence holding a negation, condition or restriction is never cut or dropped, so the result may stay over (optimized.over_max_tokens)."
    }
  },
  "required": ["query"],
  "additionalProperties": false
})";

constexpr std::string_view kOutputSchema = R"({
  "type": "object",
  "properties": {
    "success": {"type": "boolean"},
    "original": {
      "type": "object",
      "properties": {
        "query": {"type": "string"},
        "tokens": {"type": "integer", "minimum": 0},
        "issues": {
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "type": {"type": "string"},
              "words": {"type": "array", "items": {"type": "string"}},
              "phrases": {"type": "array", "items": {"type": "string"}},
              "occurrences": {"type": "integer", "minimum": 0},
              "score": {"type": "number"},
              "impact": {"type": "string", "enum": ["low", "moderate", "high"]},
              "suggestions": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["type", "impact"]
          }
        }
      },
      "required": ["query", "tokens", "issues"]
    },
    "optimized": {
      "type": "object",
      "properties": {
        "query": {"type": "string"},
        "tokens": {"type": "integer", "minimum": 0},
        "improvements": {"type": "array", "items": {"type": "string"}},
        "truncated": {"type": "boolean"},
        "over_max_tokens": {"type": "boolean"}
      },
      "required": ["query", "tokens", "improvements"]
    },
    "analysis": {
      "type": "object",
      "properties": {
        "tokens_saved": {"type": "integer"},
        "reduction_percent": {"type": "number"},
        "clarity_score": {"type": "number", "minimum": 0, "maximum": 1},
        "original_clarity_score": {"type": "number", "minimum": 0, "maximum": 1},
        "recommendations": {
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "priority": {"type": "string", "enum": ["high", "medium", "low"]},
              "suggestion": {"type": "string"},
              "tokens_saved": {"type": "integer", "minimum": 0}
            },
            "required": ["priority", "suggestion", "tokens_saved"]
          }
        }
      },
      "required": ["tokens_saved", "reduction_percent", "clarity_score", "recommendations"]
    },
    "model": {"type": "string"},
    "optimization_goal": {"type": "string", "enum": ["reduce_tokens", "improve_clarity", "both"]},
    "tokens_exact": {"type": "boolean"},
    "context": {
      "type": "object",
      "properties": {
        "tokens": {"type": "integer", "minimum": 0},
        "combined_original_tokens": {"type": "integer", "minimum": 0},
        "combined_optimized_tokens": {"type": "integer", "minimum": 0}
      }
    },
    "error": {"type": "string"},
    "details": {"type": "array"}
  },
  "required": ["success"]
})";

ToolOutput Handle(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::optional<std::string_view> query = StringArg(args, "query");
  if (!query.has_value()) return ToolValidationError("query", "Required");
  OptimizeOptions options;
  if (auto context = StringArg(args, "context")) options.context = *context;
  options.model = std::string(
      StringArg(args, "model").value_or(ctx.services().config.default_model));
  if (auto goal = StringArg(args, "optimization_goal")) {
    auto parsed = ParseOptimizationGoal(*goal);
    if (!parsed.ok()) {
      return ToolValidationError("optimization_goal",
                                 parsed.status().message());
    }
    options.goal = *parsed;
  }
  options.max_tokens = IntArg(args, "max_tokens");
  auto result = ctx.services().optimizer->Optimize(*query, options);
  if (!result.ok()) {
    return LibraryError(
        result.status(), "Model",
        {"query", "context", "model", "optimization_goal", "max_tokens"});
  }
  auto document = ToJson(*result);
  if (!document.ok()) return ToolStatusError(document.status(), "Query");
  return Success(program::WithSuccess(*document));
}

}  // namespace

const mcp::ToolSpec& OptimizeQueryTool() {
  static const mcp::ToolSpec kSpec{
      .name = "optimize_query",
      .title = "Optimize query",
      .description =
          "Analyze and optimize queries for better token efficiency and "
          "clarity: finds filler words, hedges, wordy phrases, politeness "
          "padding and vague words, and rewrites the query shorter and more "
          "direct. Code, quoted text, URLs, numbers and identifiers are kept "
          "byte for byte.",
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
