// The catalog: every tool, resource and prompt the host offers, in the order
// clients list them.

#include "programs/ctxkit/mcp/catalog.h"

#include <span>
#include <vector>

#include "programs/ctxkit/tools/adapters.h"

namespace ctxkit::mcp {

std::span<const ToolSpec> Tools() {
  // Built once and never destroyed, so no destructor runs at exit while a
  // worker may still read it.
  static const std::vector<ToolSpec>* const kTools = [] {
    auto* tools = new std::vector<ToolSpec>{
        // Seed 000, the token optimizer.
        tools::ManageConversationTool(),
        tools::CompressContextTool(),
        tools::CountTokensTool(),
        tools::SmartCacheTool(),
        tools::TrackReferencesTool(),
        tools::OptimizeQueryTool(),
        // Seed 001, the chat compactor (POST /api/chat/compact).
        tools::CompactChatTool(),
    };
    // Seed 003, the context memory graph.
    for (const ToolSpec& tool : tools::GraphTools()) tools->push_back(tool);
    return tools;
  }();
  return *kTools;
}

std::span<const ResourceSpec> Resources() { return tools::SeedResources(); }

std::span<const ResourceTemplateSpec> ResourceTemplates() {
  return tools::SeedResourceTemplates();
}

std::span<const PromptSpec> Prompts() { return tools::SeedPrompts(); }

}  // namespace ctxkit::mcp
