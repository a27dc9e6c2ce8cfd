#include "programs/ctxkit/tools/record_json.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/host/json_text.h"

namespace ctxkit::program {

std::string WithSuccess(std::string_view document,
                        std::optional<std::string_view> message,
                        std::string_view extra_members) {
  std::string members;
  if (!extra_members.empty()) members = extra_members;
  if (message.has_value()) {
    if (!members.empty()) members += ',';
    members += "\"message\":" + JsonQuote(*message);
  }
  const std::string minified = AppendMembers(MinifyJson(document), members);
  // A JSON object's text starts with '{'; "{}" gets no comma.
  std::string out = "{\"success\":true";
  if (minified.size() > 2) out += ',';
  out.append(minified, 1);
  return out;
}

std::string DeletedReferenceJson(std::string_view id) {
  JsonOut json;
  json.BeginObject()
      .Key("schema_version")
      .Int(1)
      .Key("deleted")
      .Bool(true)
      .Key("id")
      .String(id)
      .EndObject();
  return json.str();
}

std::string CacheClearedJson(uint64_t cleared,
                             std::optional<std::string_view> prefix) {
  JsonOut json;
  json.BeginObject()
      .Key("schema_version")
      .Int(1)
      .Key("cleared")
      .Uint(cleared)
      .Key("prefix");
  if (prefix.has_value()) {
    json.String(*prefix);
  } else {
    json.Null();
  }
  json.EndObject();
  return json.str();
}

std::string AppendMembers(std::string_view object_json,
                          std::string_view members) {
  std::string out(object_json);
  if (members.empty() || out.empty()) return out;
  out.pop_back();  // '}'
  if (out.size() > 1) out += ',';
  out += members;
  out += '}';
  return out;
}

}  // namespace ctxkit::program
