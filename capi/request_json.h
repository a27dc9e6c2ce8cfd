// The JSON object of a *_request call (c.h, "Calls whose inputs are many
// optional fields also have a *_request form"), read strictly and turned
// into the pointer + length arguments of the positional call, which does
// all the checking of values: the two forms cannot disagree.

#ifndef CTXKIT_CAPI_REQUEST_JSON_H_
#define CTXKIT_CAPI_REQUEST_JSON_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "capi/c_internal.h"
#include "simdjson.h"

namespace ctxkit::capi {

// A string input of a positional call: NULL data means absent.
struct StringArg {
  const char* data = nullptr;
  size_t len = 0;
};

// One parsed request. The readers return the member, or an absent value
// after recording the first error, which status() gives: a call reads all
// it needs, then checks once. Not thread-safe; the StringArgs it gives
// point into it and live as long as it does.
class Request {
 public:
  // Parses `json` as an object whose members are all among `known`.
  // INVALID_ARGUMENT for malformed JSON or invalid UTF-8, a value that is
  // not an object, or an unknown member (naming it and the closest known
  // one).
  absl::Status Parse(std::string_view json,
                     std::span<const std::string_view> known);

  // A string member; absent or null is a NULL StringArg (an error "<key> is
  // required" when `required`).
  StringArg String(std::string_view key, bool required = false);
  // An object member (an array member with `array`) as its minified JSON
  // text; absent or null is a NULL StringArg.
  StringArg Json(std::string_view key, bool array);
  std::optional<int64_t> Int(std::string_view key);
  std::optional<bool> Bool(std::string_view key);
  std::optional<double> Double(std::string_view key);
  // An array of strings; a non-string element is an error naming key[i].
  std::optional<std::vector<std::string>> Strings(std::string_view key);

  // The first error of a reader, or OK.
  const absl::Status& status() const { return status_; }

 private:
  template <typename T>
  std::optional<T> Keep(absl::StatusOr<std::optional<T>> value);

  simdjson::dom::parser parser_;
  simdjson::dom::object root_;
  std::deque<std::string> texts_;  // stable addresses for Json()
  absl::Status status_;
};

// The shared frame of a *_request call on `handle` (named `handle_name`;
// NULL for a call without one): checks the outputs and the request text,
// parses it against `members`, and returns call(request) — which reads the
// members, checks request.status() and calls the positional form — with
// any C++ exception turned into a status.
template <typename Call>
int RunRequest(const void* handle, const char* handle_name,
               const char* request_json, size_t request_json_len,
               std::span<const std::string_view> members, char** out_json,
               size_t* out_json_len, char** out_error, Call call) {
  if (int rc = StartDoc(handle, handle_name, out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"request_json", request_json, request_json_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    Request request;
    if (absl::Status s =
            request.Parse(View(request_json, request_json_len), members);
        !s.ok()) {
      return Report(s, out_error);
    }
    return call(request);
  });
}

}  // namespace ctxkit::capi

#endif  // CTXKIT_CAPI_REQUEST_JSON_H_
