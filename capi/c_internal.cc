// The translation helpers of capi/c_internal.h.

#include "capi/c_internal.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "lib/json/utf8.h"
#include "lib/status/status_internal.h"

namespace ctxkit::capi {

char* CopyOut(std::string_view s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) return nullptr;
  if (!s.empty()) std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

std::string ErrorText(std::string_view message) {
  std::string text = internal::ReplaceInvalidUtf8(message);
  for (size_t at = text.find('\0'); at != std::string::npos;
       at = text.find('\0', at + 2)) {
    text.replace(at, 1, "\\0");
  }
  return text;
}

int Fail(char** out_error, int code, std::string_view message) {
  if (out_error != nullptr) *out_error = CopyOut(ErrorText(message));
  return code;
}

int Report(const Status& status, char** out_error) {
  if (status.ok()) {
    if (out_error != nullptr) *out_error = nullptr;
    return CTXKIT_OK;
  }
  return Fail(out_error, static_cast<int>(status.code()), status.message());
}

int Report(const absl::Status& status, char** out_error) {
  return Report(internal::ToPublic(status), out_error);
}

int CheckArgs(std::initializer_list<Arg> args, char** out_error) {
  for (const Arg& arg : args) {
    if (arg.data == nullptr && arg.len != 0) {
      return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                  std::string(arg.name) + " is NULL with a non-zero length");
    }
  }
  return -1;
}

int StartDoc(const void* handle, const char* handle_name, char** out_json,
             size_t* out_json_len, char** out_error) {
  if (out_json != nullptr) *out_json = nullptr;
  if (out_json_len != nullptr) *out_json_len = 0;
  if (handle_name == nullptr) {
    if (out_json == nullptr || out_json_len == nullptr) {
      return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                  "out_json and out_json_len must not be NULL");
    }
    return -1;
  }
  if (handle == nullptr || out_json == nullptr || out_json_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                std::string(handle_name) +
                    ", out_json and out_json_len must not be NULL");
  }
  return -1;
}

int ReturnDoc(std::string_view doc, char** out_json, size_t* out_json_len,
              char** out_error) {
  char* out = CopyOut(doc);
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_RESOURCE_EXHAUSTED, "out of memory");
  }
  *out_json = out;
  *out_json_len = doc.size();
  return Ok(out_error);
}

}  // namespace ctxkit::capi
