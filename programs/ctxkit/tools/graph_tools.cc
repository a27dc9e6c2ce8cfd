// Seed 003's tools (the nine of d6c45ab, then 0.1.1's context_memory):
// rows over the library's seed protocol (ctxkit/context_graph_seed.h), which
// owns their schemas, argument checks and response documents, so the C ABI's
// JSON entry point, the REST routes and these tools answer alike.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/context_graph_seed.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/tools/adapters.h"
#include "simdjson.h"

namespace ctxkit::tools {

namespace {

// Every answer that is an object, including the error form of those that
// are not (ToolOutput::structured).
constexpr std::string_view kObjectSchema = R"({"type":"object"})";

// Seed tools whose successful answer is not an object: `pong`, or a JSON
// array of ids.
bool AnswersObject(std::string_view name) {
  return name != "ping" && name != "get_related_contexts" &&
         name != "get_similar_contexts";
}

mcp::ToolOutput Run(std::string_view name, simdjson::dom::object args,
                    mcp::RequestContext& context) {
  graph::SeedAnswer answer = graph::CallSeedTool(*context.services().graph,
                                                 name, simdjson::minify(args));
  mcp::ToolOutput output;
  output.is_error = answer.is_error;
  output.structured = !answer.json.empty() && answer.json.front() == '{';
  output.json = std::move(answer.json);
  return output;
}

// One handler per row (ToolHandler is a plain function pointer): row I runs
// seed tool I.
template <size_t I>
mcp::ToolOutput Handle(simdjson::dom::object args,
                       mcp::RequestContext& context) {
  return Run(graph::SeedTools()[I].name, args, context);
}

// Row I for seed tool I, when there is one.
template <size_t I>
void AddRow(std::vector<mcp::ToolSpec>& rows) {
  const auto tools = graph::SeedTools();
  if (I >= tools.size()) return;
  const graph::SeedToolInfo& tool = tools[I];
  rows.push_back(mcp::ToolSpec{
      .name = tool.name,
      .title = tool.name,
      .description = tool.description,
      .input_schema = tool.input_schema,
      .output_schema = AnswersObject(tool.name) ? kObjectSchema : "",
      .handler = &Handle<I>,
      .read_only = tool.read_only,
      .destructive = false,
      .idempotent = tool.read_only,
  });
}

template <size_t... I>
std::vector<mcp::ToolSpec> Rows(std::index_sequence<I...>) {
  std::vector<mcp::ToolSpec> rows;
  (AddRow<I>(rows), ...);
  return rows;
}

// More than the seed has (ten), so that every tool gets its row; the host
// test checks the rows against SeedTools().
constexpr size_t kMaxSeedTools = 16;

}  // namespace

std::span<const mcp::ToolSpec> GraphTools() {
  // Built once and never destroyed, as the catalog's table.
  static const std::vector<mcp::ToolSpec>* const kRows =
      new std::vector<mcp::ToolSpec>(
          Rows(std::make_index_sequence<kMaxSeedTools>()));
  return *kRows;
}

}  // namespace ctxkit::tools
