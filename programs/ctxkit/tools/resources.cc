// Seed 000's five resources and their four templates: JSON documents in the
// seed's shapes, with the library's figures (the totals its parts keep up to
// date with every write) and, after the seed's fields, a few more the
// library has (per-role tokens, tool calls, the days). Conversations and
// messages are written by tools/record_json.h as manage_conversation writes
// them, statistics by tools/stats_json.h as `ctxkit stats` writes them.
//
// Errors. A conversation id that names no conversation -- unknown, or not
// even a UUID -- is an unknown resource: NOT_FOUND, which the session sends
// as -32002. Store errors are returned as they are (-32603). A cancelled
// request stops between pages and returns CANCELLED (no reply is sent).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/host/record_common.h"
#include "programs/ctxkit/tools/adapters.h"
#include "programs/ctxkit/tools/record_json.h"
#include "programs/ctxkit/tools/stats_json.h"

namespace ctxkit::tools {

namespace {

using mcp::RequestContext;
using mcp::ResourceContent;
using program::JsonOut;

// token-stats://{id} keeps at most this many timeline points (every k-th
// message plus the last, ConversationStore::ConversationStats), so the
// document of a conversation with 100,000 messages stays small.
constexpr size_t kMaxTimelinePoints = 1000;

// conversation-history://all reads the listing in pages this large.
constexpr uint32_t kListPage = ConversationLimits::kMaxListLimit;

ResourceContent Json(std::string text) {
  ResourceContent content;
  content.text = std::move(text);
  return content;
}

Status Cancelled() {
  return Status(StatusCode::kCancelled, "the request was cancelled");
}

// A library error about the id of a templated URI: a malformed id names no
// conversation either, so both are an unknown resource.
Status ForId(const Status& status, std::string_view id) {
  if (status.code() != StatusCode::kInvalidArgument) return status;
  constexpr size_t kMaxEcho = 64;
  std::string shown(id.substr(0, kMaxEcho));
  if (id.size() > kMaxEcho) shown += "...";
  return Status(StatusCode::kNotFound,
                "no conversation \"" + shown + "\" (" + status.message() + ")");
}

// ---- conversation-history ----

StatusOr<ResourceContent> AllConversations(RequestContext& context) {
  ConversationStore& conversations = *context.services().conversations;
  JsonOut json;
  json.BeginObject().Key("conversations").BeginArray();
  std::string cursor;
  uint64_t total = 0;
  bool first = true;
  while (first || !cursor.empty()) {
    if (context.Cancelled()) return Cancelled();
    auto page = conversations.List(kListPage, cursor);
    if (!page.ok()) return page.status();
    if (first) total = page->total;
    first = false;
    for (const Conversation& c : page->conversations) {
      program::WriteConversationJson(json, c);
    }
    cursor = std::move(page->next_cursor);
  }
  // `total` is the count when the listing began; conversations created
  // while it was read may make the array differ from it by those.
  json.EndArray().Key("total").Uint(total).EndObject();
  return Json(json.str());
}

StatusOr<ResourceContent> ConversationHistory(std::string_view id,
                                              RequestContext& context) {
  auto detail = context.services().conversations->Get(id, true);
  if (!detail.ok()) return ForId(detail.status(), id);
  const Conversation& c = detail->conversation;
  JsonOut json;
  json.BeginObject().Key("conversation");
  program::WriteConversationJson(json, c);
  json.Key("messages").BeginArray();
  for (const Message& m : detail->messages) program::WriteMessageJson(json, m);
  json.EndArray();
  const double count = static_cast<double>(c.message_count);
  json.Key("statistics").BeginObject()
      .Key("avg_tokens_per_message")
      .Double(c.message_count == 0 ? 0.0
                                   : static_cast<double>(c.total_tokens) / count)
      .Key("total_user_tokens").Uint(c.user_tokens)
      .Key("total_assistant_tokens").Uint(c.assistant_tokens)
      .Key("compression_ratio")
      .Double(c.message_count == 0
                  ? 0.0
                  : static_cast<double>(c.compressed_count) / count)
      .Key("total_system_tokens").Uint(c.system_tokens)
      .Key("total_tool_tokens").Uint(c.tool_tokens)
      .Key("compressed_count").Uint(c.compressed_count)
      .Key("actual_tokens").Uint(detail->actual_tokens)
      .Key("actual_tokens_exact").Bool(detail->actual_tokens_exact)
      .EndObject()
      .EndObject();
  return Json(json.str());
}

// ---- token-stats ----

StatusOr<ResourceContent> AggregateTokenStats(RequestContext& context) {
  host::Services& services = context.services();
  auto stats = services.conversations->AggregateStats();
  if (!stats.ok()) return stats.status();
  auto cache = services.cache->Stats();
  if (!cache.ok()) return cache.status();
  JsonOut json;
  json.BeginObject();
  WriteAggregateStats(json, *stats, &*cache);
  json.EndObject();
  return Json(json.str());
}

StatusOr<ResourceContent> ConversationTokenStats(std::string_view id,
                                                 RequestContext& context) {
  auto stats =
      context.services().conversations->ConversationStats(id, kMaxTimelinePoints);
  if (!stats.ok()) return ForId(stats.status(), id);
  JsonOut json;
  json.BeginObject();
  WriteConversationStats(json, *stats);
  json.EndObject();
  return Json(json.str());
}

// ---- cache-stats ----

StatusOr<ResourceContent> CurrentCacheStats(RequestContext& context) {
  auto stats = context.services().cache->Stats();
  if (!stats.ok()) return stats.status();
  auto json = CacheStatsToJson(*stats);
  if (!json.ok()) return json.status();
  return Json(*std::move(json));
}

// ---- optimization-tips ----

StatusOr<ResourceContent> GeneralOptimizationTips(RequestContext& context) {
  host::Services& services = context.services();
  auto stats = services.conversations->AggregateStats();
  if (!stats.ok()) return stats.status();
  auto cache = services.cache->Stats();
  if (!cache.ok()) return cache.status();
  JsonOut json;
  json.BeginObject()
      .Key("overview").BeginObject()
      .Key("total_conversations").Uint(stats->conversations)
      .Key("total_messages").Uint(stats->messages)
      .Key("total_tokens").Uint(stats->total_tokens)
      .Key("cache_hit_rate").Double(cache->hit_rate)
      .EndObject();
  WriteTips(json, GeneralTips(*stats, UsedCacheHitRate(*cache)));
  json.Key("resources").BeginObject()
      .Key("documentation")
      .String("See the ctxkit README for the MCP server's tools, resources "
              "and prompts; resources/list and prompts/list describe each.")
      .Key("tools_available").BeginArray();
  for (const mcp::ToolSpec& tool : mcp::Tools()) json.String(tool.name);
  json.EndArray().EndObject().EndObject();
  return Json(json.str());
}

StatusOr<ResourceContent> ConversationOptimizationTips(
    std::string_view id, RequestContext& context) {
  // Tips need the totals only; one timeline point keeps the read small.
  auto stats = context.services().conversations->ConversationStats(id, 1);
  if (!stats.ok()) return ForId(stats.status(), id);
  const Conversation& c = stats->conversation;
  JsonOut json;
  json.BeginObject()
      .Key("conversation").BeginObject()
      .Key("id").String(c.id)
      .Key("title").String(c.title)
      .Key("model").String(c.model)
      .Key("current_tokens").Uint(c.total_tokens)
      .Key("message_count").Uint(c.message_count)
      .EndObject();
  WriteTips(json, ConversationTips(*stats));
  WriteTokenLimit(json, stats->token_limit);
  json.EndObject();
  return Json(json.str());
}

// ---- reference-library ----

StatusOr<ResourceContent> AllReferences(RequestContext& context) {
  auto list = context.services().references->List();
  if (!list.ok()) return list.status();
  auto stats = ReferenceStatsToJson(list->stats);
  if (!stats.ok()) return stats.status();
  JsonOut json;
  json.BeginObject().Key("overview").Raw(*stats).Key("references").BeginArray();
  for (const Reference& reference : list->references) {
    if (context.Cancelled()) return Cancelled();
    auto one = ReferenceToJson(reference, /*include_content=*/false);
    if (!one.ok()) return one.status();
    json.Raw(*one);
  }
  json.EndArray().EndObject();
  return Json(json.str());
}

StatusOr<ResourceContent> ConversationReferences(std::string_view id,
                                                 RequestContext& context) {
  host::Services& services = context.services();
  auto detail = services.conversations->Get(id, /*include_messages=*/false);
  if (!detail.ok()) return ForId(detail.status(), id);
  ListReferencesOptions options;
  options.conversation_id = std::string(id);
  options.include_content = true;
  auto list = services.references->List(options);
  if (!list.ok()) return ForId(list.status(), id);
  auto stats = ReferenceStatsToJson(list->stats);
  if (!stats.ok()) return stats.status();
  JsonOut json;
  json.BeginObject()
      .Key("conversation").BeginObject()
      .Key("id").String(detail->conversation.id)
      .Key("title").String(detail->conversation.title)
      .EndObject()
      .Key("references").BeginArray();
  for (const Reference& reference : list->references) {
    if (context.Cancelled()) return Cancelled();
    auto one = ReferenceToJson(reference, /*include_content=*/true);
    if (!one.ok()) return one.status();
    json.Raw(*one);
  }
  json.EndArray().Key("statistics").Raw(*stats).EndObject();
  return Json(json.str());
}

}  // namespace

std::span<const mcp::ResourceSpec> SeedResources() {
  static const std::vector<mcp::ResourceSpec>* const kResources =
      new std::vector<mcp::ResourceSpec>{
          {.uri = "conversation-history://all",
           .name = "conversation-history",
           .title = "All conversations",
           .description =
               "Every stored conversation, newest first, with its model, "
               "token totals, message count and a preview of its last "
               "message; \"total\" counts them.",
           .mime_type = "application/json",
           .handler = AllConversations},
          {.uri = "token-stats://aggregate",
           .name = "token-stats",
           .title = "Token statistics",
           .description =
               "Token usage across all conversations: input, output and "
               "cached tokens, per model, cache efficiency and daily "
               "trends.",
           .mime_type = "application/json",
           .handler = AggregateTokenStats},
          {.uri = "cache-stats://current",
           .name = "cache-stats",
           .title = "Cache statistics",
           .description =
               "Cache entries, hits, misses, hit rate and tokens saved, the "
               "most used entries, figures per prefix and recommendations.",
           .mime_type = "application/json",
           .handler = CurrentCacheStats},
          {.uri = "optimization-tips://general",
           .name = "optimization-tips",
           .title = "Optimization tips",
           .description =
               "Token-saving tips for the whole store, from its usage and "
               "the cache's hit rate, and the tools that apply them.",
           .mime_type = "application/json",
           .handler = GeneralOptimizationTips},
          {.uri = "reference-library://all",
           .name = "reference-library",
           .title = "Reference library",
           .description =
               "Every tracked reference (code, files, URLs, notes, "
               "documents) with a preview and its tokens, and counts per "
               "type.",
           .mime_type = "application/json",
           .handler = AllReferences},
      };
  return *kResources;
}

std::span<const mcp::ResourceTemplateSpec> SeedResourceTemplates() {
  static const std::vector<mcp::ResourceTemplateSpec>* const kTemplates =
      new std::vector<mcp::ResourceTemplateSpec>{
          {.uri_template = "conversation-history://{conversation_id}",
           .name = "conversation-history-by-id",
           .title = "Conversation history",
           .description =
               "One conversation with all its messages (role, content, "
               "tokens, compression) and its token statistics.",
           .mime_type = "application/json",
           .handler = ConversationHistory,
           .complete = CompleteConversationId},
          {.uri_template = "token-stats://{conversation_id}",
           .name = "token-stats-by-id",
           .title = "Conversation token statistics",
           .description =
               "One conversation's input and output tokens, its token "
               "timeline (at most 1000 points) and its usage of the "
               "model's context window.",
           .mime_type = "application/json",
           .handler = ConversationTokenStats,
           .complete = CompleteConversationId},
          {.uri_template = "optimization-tips://{conversation_id}",
           .name = "optimization-tips-by-id",
           .title = "Conversation optimization tips",
           .description =
               "Tips for one conversation: context-window pressure, length, "
               "compression and message size.",
           .mime_type = "application/json",
           .handler = ConversationOptimizationTips,
           .complete = CompleteConversationId},
          {.uri_template = "reference-library://{conversation_id}",
           .name = "reference-library-by-id",
           .title = "Conversation references",
           .description =
               "The references tracked for one conversation, with their "
               "content and metadata, and counts per type.",
           .mime_type = "application/json",
           .handler = ConversationReferences,
           .complete = CompleteConversationId},
      };
  return *kTemplates;
}

}  // namespace ctxkit::tools
