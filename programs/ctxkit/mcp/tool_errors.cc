// Seed 000's error documents for tool results.

#include <string>
#include <string_view>

#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/mcp/catalog.h"

namespace ctxkit::mcp {

ToolOutput ToolError(std::string_view error, std::string_view details_json) {
  program::JsonOut json;
  json.BeginObject()
      .Key("success")
      .Bool(false)
      .Key("error")
      .String(error)
      .Key("details")
      .Raw(details_json)
      .EndObject();
  return ToolOutput{json.str(), true};
}

ToolOutput ToolValidationError(std::string_view path,
                               std::string_view message) {
  program::JsonOut details;
  details.BeginArray()
      .BeginObject()
      .Key("path")
      .BeginArray()
      .String(path)
      .EndArray()
      .Key("message")
      .String(message)
      .EndObject()
      .EndArray();
  return ToolError("Validation error", details.str());
}

ToolOutput ToolStatusError(const Status& status, std::string_view what) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return ToolError(std::string(what) + " not found",
                       program::JsonOut()
                           .BeginArray()
                           .BeginObject()
                           .Key("message")
                           .String(status.message())
                           .EndObject()
                           .EndArray()
                           .str());
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      // Which argument is at fault is for the adapter to say, which knows
      // its argument names (tools::LibraryError); guessing it from the
      // message's shape here would be a second, looser parser of it.
      return ToolError("Validation error", program::JsonOut()
                                               .BeginArray()
                                               .BeginObject()
                                               .Key("path")
                                               .BeginArray()
                                               .EndArray()
                                               .Key("message")
                                               .String(status.message())
                                               .EndObject()
                                               .EndArray()
                                               .str());
    default: {
      program::JsonOut details;
      details.BeginArray()
          .BeginObject()
          .Key("code")
          .String(StatusCodeName(status.code()))
          .Key("message")
          .String(status.message())
          .EndObject()
          .EndArray();
      return ToolError("Operation failed", details.str());
    }
  }
}

}  // namespace ctxkit::mcp
