#include "lib/json/json_reader.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/json/utf8.h"
#include "simdjson.h"

namespace ctxkit::internal {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Where a value sits, kept as pieces so that the path text is only built
// when an error message needs it: reading a field must not allocate.
struct Location {
  std::string_view context;
  std::string_view field;
  bool is_field;

  std::string ToString() const {
    return is_field ? JsonPath(context, field) : std::string(context);
  }
};

}  // namespace

const char* JsonTypeName(element_type type) {
  switch (type) {
    case element_type::ARRAY:
      return "array";
    case element_type::OBJECT:
      return "object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
      return "number";
    case element_type::STRING:
      return "string";
    case element_type::BOOL:
      return "boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "unknown value";
}

namespace {

absl::Status WrongType(const Location& where, const char* expected,
                       element value) {
  return absl::InvalidArgumentError(
      absl::StrCat(where.ToString(), " must be ", expected, " (got ",
                   JsonTypeName(value.type()), ")"));
}

// An integer was expected but the number has a fraction or exponent, which
// simdjson (like JSON's data model in most languages) reads as a double.
absl::Status NotAnInteger(const Location& where) {
  return absl::InvalidArgumentError(
      absl::StrCat(where.ToString(),
                   " must be an integer (got a number with a fraction or "
                   "exponent)"));
}

absl::StatusOr<std::string_view> ConvertString(element value,
                                               const Location& where) {
  std::string_view result;
  if (value.get_string().get(result) != simdjson::SUCCESS) {
    return WrongType(where, "a string", value);
  }
  return result;
}

absl::StatusOr<int64_t> ConvertInt64(element value, const Location& where) {
  switch (value.type()) {
    case element_type::INT64:
      return value.get_int64().value_unsafe();
    case element_type::UINT64:
      // simdjson types non-negative integers as INT64 when they fit, so this
      // one is above INT64_MAX.
      return absl::InvalidArgumentError(absl::StrCat(
          where.ToString(), " must be an integer no greater than ", INT64_MAX,
          " (got ", value.get_uint64().value_unsafe(), ")"));
    case element_type::DOUBLE:
      return NotAnInteger(where);
    default:
      return WrongType(where, "an integer", value);
  }
}

absl::StatusOr<uint64_t> ConvertUint64(element value, const Location& where) {
  switch (value.type()) {
    case element_type::INT64: {
      const int64_t result = value.get_int64().value_unsafe();
      if (result < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(where.ToString(),
                         " must be a non-negative integer (got ", result, ")"));
      }
      return static_cast<uint64_t>(result);
    }
    case element_type::UINT64:
      return value.get_uint64().value_unsafe();
    case element_type::DOUBLE:
      return NotAnInteger(where);
    default:
      return WrongType(where, "a non-negative integer", value);
  }
}

absl::StatusOr<double> ConvertDouble(element value, const Location& where) {
  double result;
  // get_double() also converts INT64 and UINT64 values.
  if (value.get_double().get(result) != simdjson::SUCCESS) {
    return WrongType(where, "a number", value);
  }
  return result;
}

absl::StatusOr<bool> ConvertBool(element value, const Location& where) {
  bool result;
  if (value.get_bool().get(result) != simdjson::SUCCESS) {
    return WrongType(where, "a boolean", value);
  }
  return result;
}

absl::StatusOr<simdjson::dom::object> ConvertObject(element value,
                                                    const Location& where) {
  simdjson::dom::object result;
  if (value.get_object().get(result) != simdjson::SUCCESS) {
    return WrongType(where, "an object", value);
  }
  return result;
}

absl::StatusOr<simdjson::dom::array> ConvertArray(element value,
                                                  const Location& where) {
  simdjson::dom::array result;
  if (value.get_array().get(result) != simdjson::SUCCESS) {
    return WrongType(where, "an array", value);
  }
  return result;
}

template <typename T>
using Converter = absl::StatusOr<T> (*)(element, const Location&);

template <typename T>
absl::StatusOr<T> Required(simdjson::dom::object obj, std::string_view field,
                           std::string_view context, Converter<T> convert) {
  const Location where{context, field, /*is_field=*/true};
  element value;
  if (obj.at_key(field).get(value) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat(where.ToString(), " is required"));
  }
  return convert(value, where);
}

template <typename T>
absl::StatusOr<std::optional<T>> Optional(simdjson::dom::object obj,
                                          std::string_view field,
                                          std::string_view context,
                                          Converter<T> convert) {
  element value;
  if (obj.at_key(field).get(value) != simdjson::SUCCESS || value.is_null()) {
    return std::optional<T>();
  }
  absl::StatusOr<T> result =
      convert(value, Location{context, field, /*is_field=*/true});
  if (!result.ok()) return std::move(result).status();
  return std::optional<T>(*std::move(result));
}

}  // namespace

absl::StatusOr<element> ParseJson(simdjson::dom::parser& parser,
                                  std::string_view json,
                                  std::string_view what) {
  element root;
  // realloc_if_needed = true: simdjson copies the input into its own padded
  // buffer, since its SIMD loads run up to SIMDJSON_PADDING bytes past the
  // end and the caller's string_view promises nothing there. The empty
  // string_view may have a null data(), which memcpy must not see.
  const simdjson::error_code error =
      parser
          .parse(json.empty() ? "" : json.data(), json.size(),
                 /*realloc_if_needed=*/true)
          .get(root);
  switch (error) {
    case simdjson::SUCCESS:
      return root;
    case simdjson::UTF8_ERROR: {
      // simdjson says only that the input is bad somewhere; point at it.
      absl::Status status = ValidateUtf8(json, what);
      if (!status.ok()) return status;
      break;
    }
    case simdjson::MEMALLOC:
      return absl::ResourceExhaustedError(
          absl::StrFormat("%s could not be parsed: out of memory", what));
    case simdjson::CAPACITY:
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s is too large to parse (%d bytes; the parser's limit is %d)", what,
          json.size(), parser.max_capacity()));
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is not valid JSON: %s", what, simdjson::error_message(error)));
}

// Paths are built for every member a reader visits, on the success path
// too: plain appends, not a format parser.
std::string JsonPath(std::string_view context, std::string_view field) {
  if (context.empty()) return std::string(field);
  std::string path;
  path.reserve(context.size() + 1 + field.size());
  path.append(context).append(".").append(field);
  return path;
}

std::string JsonIndexPath(std::string_view context, size_t index) {
  std::string path;
  path.reserve(context.size() + 22);
  path.append(context).append("[").append(std::to_string(index)).append("]");
  return path;
}

absl::StatusOr<std::string_view> GetString(simdjson::dom::object obj,
                                           std::string_view field,
                                           std::string_view context) {
  return Required<std::string_view>(obj, field, context, ConvertString);
}

absl::StatusOr<int64_t> GetInt64(simdjson::dom::object obj,
                                 std::string_view field,
                                 std::string_view context) {
  return Required<int64_t>(obj, field, context, ConvertInt64);
}

absl::StatusOr<uint64_t> GetUint64(simdjson::dom::object obj,
                                   std::string_view field,
                                   std::string_view context) {
  return Required<uint64_t>(obj, field, context, ConvertUint64);
}

absl::StatusOr<double> GetDouble(simdjson::dom::object obj,
                                 std::string_view field,
                                 std::string_view context) {
  return Required<double>(obj, field, context, ConvertDouble);
}

absl::StatusOr<bool> GetBool(simdjson::dom::object obj, std::string_view field,
                             std::string_view context) {
  return Required<bool>(obj, field, context, ConvertBool);
}

absl::StatusOr<simdjson::dom::object> GetObject(simdjson::dom::object obj,
                                                std::string_view field,
                                                std::string_view context) {
  return Required<simdjson::dom::object>(obj, field, context, ConvertObject);
}

absl::StatusOr<simdjson::dom::array> GetArray(simdjson::dom::object obj,
                                              std::string_view field,
                                              std::string_view context) {
  return Required<simdjson::dom::array>(obj, field, context, ConvertArray);
}

absl::StatusOr<std::optional<std::string_view>> GetOptionalString(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context) {
  return Optional<std::string_view>(obj, field, context, ConvertString);
}

absl::StatusOr<std::optional<int64_t>> GetOptionalInt64(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context) {
  return Optional<int64_t>(obj, field, context, ConvertInt64);
}

absl::StatusOr<std::optional<uint64_t>> GetOptionalUint64(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context) {
  return Optional<uint64_t>(obj, field, context, ConvertUint64);
}

absl::StatusOr<std::optional<double>> GetOptionalDouble(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context) {
  return Optional<double>(obj, field, context, ConvertDouble);
}

absl::StatusOr<std::optional<bool>> GetOptionalBool(simdjson::dom::object obj,
                                                    std::string_view field,
                                                    std::string_view context) {
  return Optional<bool>(obj, field, context, ConvertBool);
}

absl::StatusOr<std::optional<simdjson::dom::object>> GetOptionalObject(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context) {
  return Optional<simdjson::dom::object>(obj, field, context, ConvertObject);
}

absl::StatusOr<std::optional<simdjson::dom::array>> GetOptionalArray(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context) {
  return Optional<simdjson::dom::array>(obj, field, context, ConvertArray);
}

absl::StatusOr<std::string_view> AsString(element value,
                                          std::string_view where) {
  return ConvertString(value, Location{where, {}, /*is_field=*/false});
}

absl::StatusOr<int64_t> AsInt64(element value, std::string_view where) {
  return ConvertInt64(value, Location{where, {}, /*is_field=*/false});
}

absl::StatusOr<uint64_t> AsUint64(element value, std::string_view where) {
  return ConvertUint64(value, Location{where, {}, /*is_field=*/false});
}

absl::StatusOr<double> AsDouble(element value, std::string_view where) {
  return ConvertDouble(value, Location{where, {}, /*is_field=*/false});
}

absl::StatusOr<bool> AsBool(element value, std::string_view where) {
  return ConvertBool(value, Location{where, {}, /*is_field=*/false});
}

absl::StatusOr<simdjson::dom::object> AsObject(element value,
                                               std::string_view where) {
  return ConvertObject(value, Location{where, {}, /*is_field=*/false});
}

absl::StatusOr<simdjson::dom::array> AsArray(element value,
                                             std::string_view where) {
  return ConvertArray(value, Location{where, {}, /*is_field=*/false});
}

}  // namespace ctxkit::internal
