// The strict reader of capi/request_json.h.

#include "capi/request_json.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/field_check.h"
#include "lib/json/json_reader.h"

namespace ctxkit::capi {

absl::Status Request::Parse(std::string_view json,
                            std::span<const std::string_view> known) {
  absl::StatusOr<simdjson::dom::element> root =
      internal::ParseJson(parser_, json, "request_json");
  if (!root.ok()) return root.status();
  absl::StatusOr<simdjson::dom::object> object =
      internal::AsObject(*root, "request_json");
  if (!object.ok()) return object.status();
  for (const auto field : *object) {
    bool found = false;
    for (std::string_view name : known) found = found || name == field.key;
    if (!found) return internal::UnknownKeyError("", field.key, known);
  }
  root_ = *object;
  return absl::OkStatus();
}

template <typename T>
std::optional<T> Request::Keep(absl::StatusOr<std::optional<T>> value) {
  if (value.ok()) return *std::move(value);
  if (status_.ok()) status_ = value.status();
  return std::nullopt;
}

StringArg Request::String(std::string_view key, bool required) {
  std::optional<std::string_view> value =
      Keep(internal::GetOptionalString(root_, key, ""));
  if (!value) {
    if (required && status_.ok()) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat(std::string(key), " is required"));
    }
    return StringArg{};
  }
  return StringArg{value->data(), value->size()};
}

StringArg Request::Json(std::string_view key, bool array) {
  std::string text;
  if (array) {
    std::optional<simdjson::dom::array> value =
        Keep(internal::GetOptionalArray(root_, key, ""));
    if (!value) return StringArg{};
    text = simdjson::minify(*value);
  } else {
    std::optional<simdjson::dom::object> value =
        Keep(internal::GetOptionalObject(root_, key, ""));
    if (!value) return StringArg{};
    text = simdjson::minify(*value);
  }
  const std::string& kept = texts_.emplace_back(std::move(text));
  return StringArg{kept.data(), kept.size()};
}

std::optional<int64_t> Request::Int(std::string_view key) {
  return Keep(internal::GetOptionalInt64(root_, key, ""));
}

std::optional<bool> Request::Bool(std::string_view key) {
  return Keep(internal::GetOptionalBool(root_, key, ""));
}

std::optional<double> Request::Double(std::string_view key) {
  return Keep(internal::GetOptionalDouble(root_, key, ""));
}

std::optional<std::vector<std::string>> Request::Strings(std::string_view key) {
  std::optional<simdjson::dom::array> value =
      Keep(internal::GetOptionalArray(root_, key, ""));
  if (!value) return std::nullopt;
  std::vector<std::string> out;
  size_t i = 0;
  for (simdjson::dom::element e : *value) {
    absl::StatusOr<std::string_view> s =
        internal::AsString(e, internal::JsonIndexPath(key, i++));
    if (!s.ok()) {
      if (status_.ok()) status_ = s.status();
      return std::nullopt;
    }
    out.emplace_back(*s);
  }
  return out;
}

}  // namespace ctxkit::capi
