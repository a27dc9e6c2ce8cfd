#include "programs/ctxkit/tools/arguments.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "programs/ctxkit/host/json_out.h"

namespace ctxkit::tools {

std::optional<simdjson::dom::element> Arg(simdjson::dom::object args,
                                          std::string_view name) {
  simdjson::dom::element value;
  if (args.at_key(name).get(value) != simdjson::SUCCESS) return std::nullopt;
  return value;
}

std::optional<std::string_view> StringArg(simdjson::dom::object args,
                                          std::string_view name) {
  const std::optional<simdjson::dom::element> value = Arg(args, name);
  std::string_view text;
  if (!value.has_value() ||
      value->get_string().get(text) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return text;
}

std::optional<int64_t> IntArg(simdjson::dom::object args,
                              std::string_view name) {
  const std::optional<simdjson::dom::element> value = Arg(args, name);
  if (!value.has_value()) return std::nullopt;
  int64_t integer = 0;
  if (value->get_int64().get(integer) == simdjson::SUCCESS) return integer;
  double number = 0;
  // 2^63 is exactly representable; anything from it up does not fit.
  if (value->get_double().get(number) == simdjson::SUCCESS &&
      std::trunc(number) == number && number >= -9223372036854775808.0 &&
      number < 9223372036854775808.0) {
    return static_cast<int64_t>(number);
  }
  return std::nullopt;
}

std::optional<double> NumberArg(simdjson::dom::object args,
                                std::string_view name) {
  const std::optional<simdjson::dom::element> value = Arg(args, name);
  double number = 0;
  if (!value.has_value() ||
      value->get_double().get(number) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return number;
}

std::optional<bool> BoolArg(simdjson::dom::object args, std::string_view name) {
  const std::optional<simdjson::dom::element> value = Arg(args, name);
  bool flag = false;
  if (!value.has_value() || value->get_bool().get(flag) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return flag;
}

mcp::ToolOutput LibraryError(const Status& status, std::string_view what,
                             std::initializer_list<std::string_view> fields) {
  if (status.code() != StatusCode::kInvalidArgument &&
      status.code() != StatusCode::kOutOfRange) {
    return mcp::ToolStatusError(status, what);
  }
  const std::string_view message = status.message();
  const std::string_view name = message.substr(0, message.find_first_of(" :"));
  for (std::string_view field : fields) {
    if (name.size() >= field.size() && name.substr(0, field.size()) == field &&
        (name.size() == field.size() || name[field.size()] == '[' ||
         name[field.size()] == '.')) {
      std::string_view rest = message.substr(name.size());
      // "title: must not be empty" reads "must not be empty" under its path.
      if (rest.rfind(": ", 0) == 0) rest.remove_prefix(2);
      // The path in segments, as the schema validator gives it:
      // "messages[3].content" is ["messages",3,"content"].
      program::JsonOut details;
      details.BeginArray().BeginObject().Key("path").BeginArray();
      size_t start = 0;
      while (start < name.size()) {
        const size_t end = name.find_first_of(".[]", start);
        const std::string_view part = name.substr(
            start,
            end == std::string_view::npos ? name.size() - start : end - start);
        if (!part.empty()) {
          const bool index =
              start > 0 && name[start - 1] == '[' && part.size() <= 18 &&
              part.find_first_not_of("0123456789") == std::string_view::npos;
          if (index) {
            details.Uint(std::stoull(std::string(part)));
          } else {
            details.String(part);
          }
        }
        if (end == std::string_view::npos) break;
        start = end + 1;
      }
      details.EndArray()
          .Key("message")
          .String(rest.rfind(" ", 0) == 0 ? message : rest)
          .EndObject()
          .EndArray();
      return mcp::ToolError("Validation error", details.str());
    }
  }
  return mcp::ToolStatusError(status, what);
}

std::string ElementJson(simdjson::dom::element value) {
  return simdjson::minify(value);
}

}  // namespace ctxkit::tools
