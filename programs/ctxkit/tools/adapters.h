// The adapters the catalog (catalog.cc) lists: each returns its row, built
// once (a function-local static, so rows in other files are never read
// before they are constructed). One file per seed tool or group:
//
//   conversation_tool.cc   manage_conversation
//   compress_tool.cc       compress_context, compact_chat
//   count_tokens_tool.cc   count_tokens
//   cache_tool.cc          smart_cache
//   references_tool.cc     track_references
//   optimize_tool.cc       optimize_query
//   graph_tools.cc         seed 003's tools (ping .. get_context_metrics,
//                          context_memory)
//   resources.cc           the five seed 000 resources and their templates
//   prompts.cc             summarize_context, compress_conversation,
//                          extract_essentials
//   completions.cc         completion candidates (conversation ids, enums)

#ifndef CTXKIT_PROGRAMS_CTXKIT_TOOLS_ADAPTERS_H_
#define CTXKIT_PROGRAMS_CTXKIT_TOOLS_ADAPTERS_H_

#include <span>

#include "programs/ctxkit/mcp/catalog.h"

namespace ctxkit::tools {

const mcp::ToolSpec& ManageConversationTool();
const mcp::ToolSpec& CompressContextTool();
const mcp::ToolSpec& CompactChatTool();
const mcp::ToolSpec& CountTokensTool();
const mcp::ToolSpec& SmartCacheTool();
const mcp::ToolSpec& TrackReferencesTool();
const mcp::ToolSpec& OptimizeQueryTool();
// graph_tools.cc: seed 003's nine tools, then context_memory.
std::span<const mcp::ToolSpec> GraphTools();

// resources.cc: static resources first, then templates, in seed order.
std::span<const mcp::ResourceSpec> SeedResources();
std::span<const mcp::ResourceTemplateSpec> SeedResourceTemplates();

// prompts.cc
std::span<const mcp::PromptSpec> SeedPrompts();

// completions.cc: conversation ids (newest first) starting with a prefix.
mcp::Completions CompleteConversationId(std::string_view prefix, size_t limit,
                                        mcp::RequestContext& context);

}  // namespace ctxkit::tools

#endif  // CTXKIT_PROGRAMS_CTXKIT_TOOLS_ADAPTERS_H_
