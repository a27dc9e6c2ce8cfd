// Seed 000's five resources and their four templates. Each is the library's
// document for the same figures (the one writer beside the result type in
// include/ctxkit/, the bytes the C ABI returns and the CLI prints), with the
// library's figures (the totals its parts keep up to date with every write)
// and, where the seed names more than the library's document holds, those
// members appended after it: conversation-history://{id} adds the seed's
// "statistics", reference-library://all its "overview",
// reference-library://{id} its "conversation", optimization-tips://general
// its static "resources".
//
// Errors. A conversation id that names no conversation -- unknown, or not
// even a UUID -- is an unknown resource: NOT_FOUND, which the session sends
// as -32002. Store errors are returned as they are (-32603). A cancelled
// request stops between pages and returns CANCELLED (no reply is sent).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/tools/adapters.h"
#include "programs/ctxkit/tools/record_json.h"

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

// The members of a JSON object's text, without its braces, to append to a
// library document.
std::string Members(const std::string& object_json) {
  return object_json.size() < 2 ? std::string()
                                : object_json.substr(1, object_json.size() - 2);
}

// ---- conversation-history ----

StatusOr<ResourceContent> AllConversations(RequestContext& context) {
  ConversationStore& conversations = *context.services().conversations;
  // Every page in one listing, written as one page: `total` is the count
  // when the listing began; conversations created while it was read may
  // make the array differ from it by those.
  ConversationPage all;
  std::string cursor;
  bool first = true;
  while (first || !cursor.empty()) {
    if (context.Cancelled()) return Cancelled();
    auto page = conversations.List(kListPage, cursor);
    if (!page.ok()) return page.status();
    if (first) all.total = page->total;
    first = false;
    for (Conversation& c : page->conversations) {
      all.conversations.push_back(std::move(c));
    }
    cursor = std::move(page->next_cursor);
  }
  auto json = ConversationPageToJson(all);
  if (!json.ok()) return json.status();
  return Json(*std::move(json));
}

StatusOr<ResourceContent> ConversationHistory(std::string_view id,
                                              RequestContext& context) {
  auto detail = context.services().conversations->Get(id, true);
  if (!detail.ok()) return ForId(detail.status(), id);
  auto document = ConversationDetailToJson(*detail, true);
  if (!document.ok()) return document.status();
  // Seed 000's "statistics" of the conversation, after the library's
  // document.
  const Conversation& c = detail->conversation;
  const double count = static_cast<double>(c.message_count);
  JsonOut json;
  json.BeginObject()
      .Key("statistics")
      .BeginObject()
      .Key("avg_tokens_per_message")
      .Double(c.message_count == 0
                  ? 0.0
                  : static_cast<double>(c.total_tokens) / count)
      .Key("total_user_tokens")
      .Uint(c.user_tokens)
      .Key("total_assistant_tokens")
      .Uint(c.assistant_tokens)
      .Key("compression_ratio")
      .Double(c.message_count == 0
                  ? 0.0
                  : static_cast<double>(c.compressed_count) / count)
      .Key("total_system_tokens")
      .Uint(c.system_tokens)
      .Key("total_tool_tokens")
      .Uint(c.tool_tokens)
      .Key("compressed_count")
      .Uint(c.compressed_count)
      .EndObject()
      .EndObject();
  return Json(program::AppendMembers(*document, Members(json.str())));
}

// ---- token-stats ----

StatusOr<ResourceContent> AggregateTokenStats(RequestContext& context) {
  host::Services& services = context.services();
  auto stats = services.conversations->AggregateStats();
  if (!stats.ok()) return stats.status();
  auto cache = services.cache->Stats();
  if (!cache.ok()) return cache.status();
  auto json = AggregateStatsToJson(*stats, &*cache);
  if (!json.ok()) return json.status();
  return Json(*std::move(json));
}

StatusOr<ResourceContent> ConversationTokenStats(std::string_view id,
                                                 RequestContext& context) {
  auto stats = context.services().conversations->ConversationStats(
      id, kMaxTimelinePoints);
  if (!stats.ok()) return ForId(stats.status(), id);
  auto json = ConversationStatsToJson(*stats);
  if (!json.ok()) return json.status();
  return Json(*std::move(json));
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
  // The hit rate only once the cache has been asked: before that it means
  // nothing (and the tips say nothing about caching).
  std::optional<double> hit_rate;
  if (cache->lifetime_hits + cache->total_misses != 0) {
    hit_rate = cache->hit_rate;
  }
  auto document = GeneralTipsToJson(*stats, hit_rate);
  if (!document.ok()) return document.status();
  JsonOut json;
  json.BeginObject();
  json.Key("resources")
      .BeginObject()
      .Key("documentation")
      .String(
          "See the ctxkit README for the MCP server's tools, resources "
          "and prompts; resources/list and prompts/list describe each.")
      .Key("tools_available")
      .BeginArray();
  for (const mcp::ToolSpec& tool : mcp::Tools()) json.String(tool.name);
  json.EndArray().EndObject().EndObject();
  return Json(program::AppendMembers(*document, Members(json.str())));
}

StatusOr<ResourceContent> ConversationOptimizationTips(
    std::string_view id, RequestContext& context) {
  // Tips need the totals only; one timeline point keeps the read small.
  auto stats = context.services().conversations->ConversationStats(id, 1);
  if (!stats.ok()) return ForId(stats.status(), id);
  auto json = ConversationTipsToJson(*stats);
  if (!json.ok()) return json.status();
  return Json(*std::move(json));
}

// ---- reference-library ----

StatusOr<ResourceContent> AllReferences(RequestContext& context) {
  auto list = context.services().references->List();
  if (!list.ok()) return list.status();
  auto document = ReferenceListToJson(*list, /*include_content=*/false);
  if (!document.ok()) return document.status();
  // Seed 000 names the figures "overview" here.
  auto stats = ReferenceStatsToJson(list->stats);
  if (!stats.ok()) return stats.status();
  return Json(program::AppendMembers(*document, "\"overview\":" + *stats));
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
  auto document = ReferenceListToJson(*list, options.include_content);
  if (!document.ok()) return document.status();
  JsonOut json;
  json.BeginObject()
      .Key("conversation")
      .BeginObject()
      .Key("id")
      .String(detail->conversation.id)
      .Key("title")
      .String(detail->conversation.title)
      .EndObject()
      .EndObject();
  return Json(program::AppendMembers(*document, Members(json.str())));
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
