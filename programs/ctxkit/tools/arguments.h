// What the MCP tool adapters (programs/ctxkit/tools/*_tool.cc) share to read
// their arguments. The session has checked the arguments against the tool's
// input_schema, so a member's type is the schema's; these accessors still
// treat a member of another type as absent rather than trusting that.

#ifndef CTXKIT_PROGRAMS_CTXKIT_TOOLS_ARGUMENTS_H_
#define CTXKIT_PROGRAMS_CTXKIT_TOOLS_ARGUMENTS_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ctxkit/status.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "simdjson.h"

namespace ctxkit::tools {

// Member `name` of `args`, or nullopt when absent.
std::optional<simdjson::dom::element> Arg(simdjson::dom::object args,
                                          std::string_view name);

// A string member; the view points into `args`' document.
std::optional<std::string_view> StringArg(simdjson::dom::object args,
                                          std::string_view name);

// An integer member (a JSON number with no fraction that fits an int64;
// 5.0 counts as 5).
std::optional<int64_t> IntArg(simdjson::dom::object args,
                              std::string_view name);

// A number member (integer or not).
std::optional<double> NumberArg(simdjson::dom::object args,
                                std::string_view name);

std::optional<bool> BoolArg(simdjson::dom::object args, std::string_view name);

// `value` as minified JSON text.
std::string ElementJson(simdjson::dom::element value);

// A library error as a tool error. INVALID_ARGUMENT and OUT_OF_RANGE
// whose message starts with one of `fields` (the library names the
// offending field first: "prefix has byte 0x20 ...", "title: ...",
// "messages[3].content must be ...") become a validation error whose path
// is that leading name, so a model sees which argument to fix; anything else
// is mcp::ToolStatusError(status, what).
mcp::ToolOutput LibraryError(const Status& status, std::string_view what,
                             std::initializer_list<std::string_view> fields);

// A success result whose document is `json`.
inline mcp::ToolOutput Success(std::string json) {
  return mcp::ToolOutput{std::move(json), false};
}

}  // namespace ctxkit::tools

#endif  // CTXKIT_PROGRAMS_CTXKIT_TOOLS_ARGUMENTS_H_
