// Helpers for reading the JSON documents ctxkit receives (chat histories,
// options, imported transcripts) with simdjson's DOM API, so that every part
// parses the same way and reports bad input with the same, field-named
// messages:
//
//   simdjson::dom::parser parser;
//   absl::StatusOr<simdjson::dom::element> root =
//       ParseJson(parser, text, "chat history");
//   if (!root.ok()) return root.status();
//   absl::StatusOr<simdjson::dom::object> history = AsObject(*root, "history");
//   ...
//   absl::StatusOr<std::string_view> role =
//       GetString(*message, "role", "messages[3]");
//   // -> INVALID_ARGUMENT "messages[3].role is required" when absent
//
// Field names: `context` names the object holding the field, as a path such
// as "messages[3]" (JsonPath() and JsonIndexPath() build them); messages name
// the field as "<context>.<field>", or just "<field>" when context is empty.
// When a key occurs more than once in an object, the first occurrence is
// used.
//
// Numbers: GetInt64/GetUint64 accept only integers written without a fraction
// or exponent that fit the type; GetDouble accepts any JSON number
// (integers are converted, possibly rounding beyond 2^53).
//
// Lifetimes: elements, objects, arrays and string_views obtained from a
// parse point into the parser and stay valid until that parser parses again,
// is moved or is destroyed. Copy strings that must outlive that.
//
// Thread safety: the functions are reentrant; a simdjson::dom::parser and
// everything read from it must be used by one thread at a time.

#ifndef CTXKIT_LIB_JSON_JSON_READER_H_
#define CTXKIT_LIB_JSON_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace ctxkit::internal {

// The JSON name of a value's type ("string", "number", "array", ...), for
// error messages.
const char* JsonTypeName(simdjson::dom::element_type type);

// Parses `json`, a complete UTF-8 JSON document, with `parser` and returns
// its root. `json` needs no padding and is not retained: it is copied into
// the parser's padded buffer, so nothing past json.size() is ever read.
// Errors:
//   INVALID_ARGUMENT   malformed JSON:
//                        "<what> is not valid JSON: <simdjson's reason>"
//                      or invalid UTF-8 anywhere in the input:
//                        "<what> is not valid UTF-8: invalid byte 0xFF at
//                        offset 12 (...)"
//   RESOURCE_EXHAUSTED the document exceeds the parser's capacity or memory
//                      could not be allocated.
// The result is valid until the next parse with `parser` (see Lifetimes).
// `what` names the document in messages, e.g. "chat history".
absl::StatusOr<simdjson::dom::element> ParseJson(simdjson::dom::parser& parser,
                                                 std::string_view json,
                                                 std::string_view what);

// "<context>.<field>", or "<field>" when context is empty.
std::string JsonPath(std::string_view context, std::string_view field);
// "<context>[<index>]".
std::string JsonIndexPath(std::string_view context, size_t index);

// Required fields. Each returns obj[field] as the given type, or
// INVALID_ARGUMENT "<context>.<field> is required" when the field is absent
// or "<context>.<field> must be <a string|an integer|...> (got <type>)" when
// it has another JSON type (null included) or, for integers, does not fit.
absl::StatusOr<std::string_view> GetString(simdjson::dom::object obj,
                                           std::string_view field,
                                           std::string_view context);
absl::StatusOr<int64_t> GetInt64(simdjson::dom::object obj,
                                 std::string_view field,
                                 std::string_view context);
absl::StatusOr<uint64_t> GetUint64(simdjson::dom::object obj,
                                   std::string_view field,
                                   std::string_view context);
absl::StatusOr<double> GetDouble(simdjson::dom::object obj,
                                 std::string_view field,
                                 std::string_view context);
absl::StatusOr<bool> GetBool(simdjson::dom::object obj, std::string_view field,
                             std::string_view context);
absl::StatusOr<simdjson::dom::object> GetObject(simdjson::dom::object obj,
                                                std::string_view field,
                                                std::string_view context);
absl::StatusOr<simdjson::dom::array> GetArray(simdjson::dom::object obj,
                                              std::string_view field,
                                              std::string_view context);

// Optional fields: like the above, but an absent field or an explicit null
// gives std::nullopt (clients in Python, Go and Rust write null for unset
// optional values). Any other wrong type is still INVALID_ARGUMENT.
absl::StatusOr<std::optional<std::string_view>> GetOptionalString(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context);
absl::StatusOr<std::optional<int64_t>> GetOptionalInt64(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context);
absl::StatusOr<std::optional<uint64_t>> GetOptionalUint64(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context);
absl::StatusOr<std::optional<double>> GetOptionalDouble(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context);
absl::StatusOr<std::optional<bool>> GetOptionalBool(simdjson::dom::object obj,
                                                    std::string_view field,
                                                    std::string_view context);
absl::StatusOr<std::optional<simdjson::dom::object>> GetOptionalObject(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context);
absl::StatusOr<std::optional<simdjson::dom::array>> GetOptionalArray(
    simdjson::dom::object obj, std::string_view field,
    std::string_view context);

// Conversions of a value already in hand (a document root, an array
// element), with the same rules and messages as the Get functions; `where`
// is the value's full path, e.g. "messages[3]": "<where> must be an object
// (got array)".
absl::StatusOr<std::string_view> AsString(simdjson::dom::element value,
                                          std::string_view where);
absl::StatusOr<int64_t> AsInt64(simdjson::dom::element value,
                                std::string_view where);
absl::StatusOr<uint64_t> AsUint64(simdjson::dom::element value,
                                  std::string_view where);
absl::StatusOr<double> AsDouble(simdjson::dom::element value,
                                std::string_view where);
absl::StatusOr<bool> AsBool(simdjson::dom::element value,
                            std::string_view where);
absl::StatusOr<simdjson::dom::object> AsObject(simdjson::dom::element value,
                                               std::string_view where);
absl::StatusOr<simdjson::dom::array> AsArray(simdjson::dom::element value,
                                             std::string_view where);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_JSON_JSON_READER_H_
