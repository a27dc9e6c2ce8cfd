// smart_cache (seed 000): store, retrieve, check, stats and clear over the
// library's content-addressed Cache. Each answer is the library's document
// for the result (cache.h, the bytes the C ABI returns and `ctxkit cache`
// prints) in seed 000's envelope (record_json.h). One exception, because
// seed 000 fixes its names: stats answers {"stats": SeedStatsDocument()'s,
// "report": CacheStatsToJson()}, the library's document under "report".
//
// Keys. The cache names an entry by its content ("<prefix>:<hash>"), which
// is the key store returns. A caller-chosen "key" at store makes a keyed
// entry (Cache::PutKeyed) found again by that same key (and prefix) at
// retrieve; retrieve also takes the key store returned.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ctxkit/cache.h"
#include "programs/ctxkit/host/json_out.h"
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
using program::JsonOut;

constexpr std::string_view kInputSchema = R"({
  "type": "object",
  "properties": {
    "action": {
      "type": "string",
      "enum": ["store", "retrieve", "check", "stats", "clear"],
      "description": "What to do."
    },
    "key": {
      "type": "string", "minLength": 1,
      "description": "retrieve: the key store returned, or the key given to store (required). store: an optional key of your own to retrieve the content by."
    },
    "content": {
      "type": "string", "minLength": 1,
      "description": "store, check: the content (required)."
    },
    "model": {
      "type": "string", "minLength": 1, "maxLength": 128,
      "description": "store: the model whose tokenizer counts the content (default claude-3-5-sonnet)."
    },
    "ttl": {
      "type": "integer", "minimum": 0, "maximum": 315360000000,
      "description": "store: time to live in milliseconds (0 or absent: never expires)."
    },
    "prefix": {
      "type": "string", "minLength": 1, "maxLength": 64,
      "description": "Cache key prefix for organization ([A-Za-z0-9._-]). store: default \"default\"; check, clear: only this prefix (default: all); retrieve with your own key: its prefix (default \"default\")."
    },
    "conversation_id": {
      "type": "string", "minLength": 1,
      "description": "store: tie the entry to a conversation, so it is removed with it."
    },
    "top_n": {
      "type": "integer", "minimum": 0, "maximum": 1000, "default": 10,
      "description": "stats: how many top entries to list."
    }
  },
  "required": ["action"],
  "additionalProperties": false
})";

constexpr std::string_view kOutputSchema = R"({
  "type": "object",
  "properties": {
    "success": {"type": "boolean"},
    "schema_version": {"type": "integer"},
    "key": {"type": ["string", "null"]},
    "lookup_key": {"type": "string"},
    "prefix": {"type": ["string", "null"]},
    "content": {"type": "string"},
    "tokens": {"type": "integer", "minimum": 0},
    "hit_count": {"type": "integer", "minimum": 0},
    "created_at": {"type": "integer"},
    "last_accessed": {"type": "integer"},
    "expires_at": {"type": ["integer", "null"]},
    "already_cached": {"type": "boolean"},
    "model": {"type": "string"},
    "conversation_id": {"type": ["string", "null"]},
    "exists": {"type": "boolean"},
    "tokens_saved": {"type": "integer", "minimum": 0},
    "stats": {
      "type": "object",
      "properties": {
        "total_entries": {"type": "integer", "minimum": 0},
        "total_hits": {"type": "integer", "minimum": 0},
        "tokens_saved": {"type": "integer", "minimum": 0},
        "hit_rate": {"type": "number", "minimum": 0},
        "avg_tokens_per_entry": {"type": "integer", "minimum": 0},
        "effectiveness": {"type": "string", "enum": ["high", "medium", "low"]},
        "total_misses": {"type": "integer", "minimum": 0},
        "total_tokens": {"type": "integer", "minimum": 0},
        "size_bytes": {"type": "integer", "minimum": 0},
        "most_cached_prefix": {"type": "string"}
      },
      "required": ["total_entries", "total_hits", "tokens_saved", "hit_rate", "avg_tokens_per_entry", "effectiveness"]
    },
    "report": {"type": "object"},
    "cleared": {"type": "integer", "minimum": 0},
    "message": {"type": "string"},
    "error": {"type": "string"},
    "details": {"type": "array"}
  },
  "required": ["success"]
})";

ToolOutput Store(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::optional<std::string_view> content = StringArg(args, "content");
  if (!content.has_value()) return ToolValidationError("content", "Required");
  CachePutOptions options;
  if (auto prefix = StringArg(args, "prefix")) options.prefix = *prefix;
  options.ttl_ms = IntArg(args, "ttl").value_or(0);
  options.model = std::string(
      StringArg(args, "model").value_or(ctx.services().config.default_model));
  if (auto id = StringArg(args, "conversation_id")) {
    options.conversation_id = *id;
  }
  const std::optional<std::string_view> lookup = StringArg(args, "key");
  Cache& cache = *ctx.services().cache;
  auto put = lookup.has_value() ? cache.PutKeyed(*lookup, *content, options)
                                : cache.Put(*content, options);
  if (!put.ok()) {
    if (put.status().code() == StatusCode::kNotFound) {
      return ToolStatusError(put.status(), "Conversation");
    }
    return LibraryError(put.status(), "Cache entry",
                        {"content", "prefix", "model", "conversation_id"});
  }
  auto document = CachePutResultToJson(*put);
  if (!document.ok()) return ToolStatusError(document.status(), "Cache entry");
  return Success(program::WithSuccess(
      *document,
      put->already_cached ? "Content already cached; expiry refreshed"
                          : "Content cached successfully",
      lookup.has_value() ? "\"lookup_key\":" + program::JsonQuote(*lookup)
                         : std::string()));
}

ToolOutput Retrieve(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::optional<std::string_view> key = StringArg(args, "key");
  if (!key.has_value()) return ToolValidationError("key", "Required");
  Cache& cache = *ctx.services().cache;
  auto entry = cache.Get(*key);
  // Not a "<prefix>:<hash>" key: a key of the caller's own, given to store.
  if (!entry.ok() && entry.status().code() == StatusCode::kInvalidArgument) {
    entry = cache.GetKeyed(*key, StringArg(args, "prefix").value_or("default"));
  }
  if (!entry.ok()) {
    return LibraryError(entry.status(), "Cache entry", {"key", "prefix"});
  }
  auto document = CacheEntryToJson(*entry);
  if (!document.ok()) return ToolStatusError(document.status(), "Cache entry");
  return Success(program::WithSuccess(*document));
}

ToolOutput Check(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::optional<std::string_view> content = StringArg(args, "content");
  if (!content.has_value()) return ToolValidationError("content", "Required");
  auto check = ctx.services().cache->Check(*content, StringArg(args, "prefix"));
  if (!check.ok()) {
    return LibraryError(check.status(), "Cache entry", {"content", "prefix"});
  }
  auto document = CacheCheckResultToJson(*check);
  if (!document.ok()) return ToolStatusError(document.status(), "Cache entry");
  return Success(program::WithSuccess(
      *document,
      check->exists ? "Content already cached" : "Content not found in cache"));
}

// Seed 000's smart_cache stats answer, whose "stats" names are the seed's
// (a summary of the figures), with the library's whole cache-stats document
// (by prefix, by model, top entries, recommendations: what the
// cache-stats://current resource shows and the C ABI returns) as "report".
std::string SeedStatsDocument(const CacheStats& stats,
                              std::string_view report) {
  JsonOut json;
  json.BeginObject()
      .Key("stats")
      .BeginObject()
      .Key("total_entries")
      .Uint(stats.total_entries)
      .Key("total_hits")
      .Uint(stats.total_hits)
      .Key("tokens_saved")
      .Uint(stats.tokens_saved)
      .Key("hit_rate")
      .Double(stats.hit_rate)
      .Key("avg_tokens_per_entry")
      .Uint(stats.avg_tokens_per_entry)
      .Key("effectiveness")
      .String(stats.effectiveness)
      .Key("total_misses")
      .Uint(stats.total_misses)
      .Key("total_tokens")
      .Uint(stats.total_tokens)
      .Key("size_bytes")
      .Uint(stats.size_bytes)
      .Key("most_cached_prefix")
      .String(stats.most_cached_prefix)
      .EndObject()
      .Key("report")
      .Raw(report)
      .EndObject();
  return json.str();
}

ToolOutput Stats(simdjson::dom::object args, mcp::RequestContext& ctx) {
  auto stats = ctx.services().cache->Stats(IntArg(args, "top_n").value_or(10));
  if (!stats.ok()) return ToolStatusError(stats.status(), "Cache");
  auto report = CacheStatsToJson(*stats);
  if (!report.ok()) return ToolStatusError(report.status(), "Cache");
  return Success(program::WithSuccess(SeedStatsDocument(*stats, *report)));
}

ToolOutput Clear(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::optional<std::string_view> prefix = StringArg(args, "prefix");
  auto cleared = ctx.services().cache->Clear(prefix);
  if (!cleared.ok()) return LibraryError(cleared.status(), "Cache", {"prefix"});
  std::string message = "Cleared " + std::to_string(*cleared) +
                        (*cleared == 1 ? " cache entry" : " cache entries");
  if (prefix.has_value()) {
    message += " with prefix '" + std::string(*prefix) + "'";
  }
  ctx.Log(mcp::LogLevel::kInfo, message);
  return Success(program::WithSuccess(
      program::CacheClearedJson(*cleared, prefix), message));
}

ToolOutput Handle(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::string_view action = StringArg(args, "action").value_or("");
  if (action == "store") return Store(args, ctx);
  if (action == "retrieve") return Retrieve(args, ctx);
  if (action == "check") return Check(args, ctx);
  if (action == "stats") return Stats(args, ctx);
  if (action == "clear") return Clear(args, ctx);
  return ToolValidationError(
      "action",
      "Invalid enum value. Expected 'store' | 'retrieve' | 'check' | 'stats' "
      "| 'clear', received '" +
          std::string(action) + "'");
}

}  // namespace

const mcp::ToolSpec& SmartCacheTool() {
  static const mcp::ToolSpec kSpec{
      .name = "smart_cache",
      .title = "Smart cache",
      .description =
          "Intelligent caching for prompts and contexts with automatic reuse "
          "detection to save tokens. Actions: store (content, prefix, ttl in "
          "ms, model, key), retrieve (key), check (content: is it cached "
          "already?), stats, clear (prefix, or everything). Entries are "
          "addressed by their content, so storing the same text twice finds "
          "the same entry.",
      .input_schema = kInputSchema,
      .output_schema = kOutputSchema,
      .handler = &Handle,
      .read_only = false,
      .destructive = true,
      .idempotent = false,
  };
  return kSpec;
}

}  // namespace ctxkit::tools
