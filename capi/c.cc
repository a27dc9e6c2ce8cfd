// The C API: translation between C conventions (int status, out_error,
// pointer + length, malloc'd results) and the C++ API. No logic lives here.

#include "ctxkit/c.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "ctxkit/status.h"
#include "ctxkit/store.h"
#include "ctxkit/version.h"

struct ctxkit_store_options {
  ctxkit::StoreOptions options;
};

struct ctxkit_store {
  std::unique_ptr<ctxkit::Store> store;
};

namespace {

using ctxkit::StatusCode;

#define CTXKIT_SAME_CODE(c_name, cc_name) \
  static_assert(c_name == static_cast<int>(StatusCode::cc_name))
CTXKIT_SAME_CODE(CTXKIT_OK, kOk);
CTXKIT_SAME_CODE(CTXKIT_CANCELLED, kCancelled);
CTXKIT_SAME_CODE(CTXKIT_UNKNOWN, kUnknown);
CTXKIT_SAME_CODE(CTXKIT_INVALID_ARGUMENT, kInvalidArgument);
CTXKIT_SAME_CODE(CTXKIT_DEADLINE_EXCEEDED, kDeadlineExceeded);
CTXKIT_SAME_CODE(CTXKIT_NOT_FOUND, kNotFound);
CTXKIT_SAME_CODE(CTXKIT_ALREADY_EXISTS, kAlreadyExists);
CTXKIT_SAME_CODE(CTXKIT_PERMISSION_DENIED, kPermissionDenied);
CTXKIT_SAME_CODE(CTXKIT_RESOURCE_EXHAUSTED, kResourceExhausted);
CTXKIT_SAME_CODE(CTXKIT_FAILED_PRECONDITION, kFailedPrecondition);
CTXKIT_SAME_CODE(CTXKIT_ABORTED, kAborted);
CTXKIT_SAME_CODE(CTXKIT_OUT_OF_RANGE, kOutOfRange);
CTXKIT_SAME_CODE(CTXKIT_UNIMPLEMENTED, kUnimplemented);
CTXKIT_SAME_CODE(CTXKIT_INTERNAL, kInternal);
CTXKIT_SAME_CODE(CTXKIT_UNAVAILABLE, kUnavailable);
CTXKIT_SAME_CODE(CTXKIT_DATA_LOSS, kDataLoss);
CTXKIT_SAME_CODE(CTXKIT_UNAUTHENTICATED, kUnauthenticated);
#undef CTXKIT_SAME_CODE

// A malloc'd, NUL-terminated copy that ctxkit_free releases; NULL if memory
// runs out.
char* CopyOut(std::string_view s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) return nullptr;
  if (!s.empty()) std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

int Fail(char** out_error, int code, std::string_view message) {
  if (out_error != nullptr) *out_error = CopyOut(message);
  return code;
}

int Report(const ctxkit::Status& status, char** out_error) {
  if (status.ok()) {
    if (out_error != nullptr) *out_error = nullptr;
    return CTXKIT_OK;
  }
  return Fail(out_error, static_cast<int>(status.code()), status.message());
}

// Runs `body`, turning any escaping C++ exception into a status: nothing
// may unwind into C.
template <typename Body>
int Guard(char** out_error, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(out_error, CTXKIT_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return Fail(out_error, CTXKIT_INTERNAL, e.what());
  } catch (...) {
    return Fail(out_error, CTXKIT_INTERNAL, "unknown C++ exception");
  }
}

std::string_view View(const char* data, size_t len) {
  return data == nullptr ? std::string_view() : std::string_view(data, len);
}

}  // namespace

extern "C" {

const char* ctxkit_status_name(int code) {
  if (code < 0 || code > CTXKIT_UNAUTHENTICATED) return "UNKNOWN_CODE";
  return ctxkit::StatusCodeName(static_cast<StatusCode>(code));
}

uint32_t ctxkit_version_number(void) { return CTXKIT_VERSION_NUMBER; }

const char* ctxkit_version_string(void) { return CTXKIT_VERSION_STRING; }

void ctxkit_free(void* ptr) { std::free(ptr); }

int ctxkit_store_options_create(ctxkit_store_options** out_options,
                                char** out_error) {
  if (out_options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out_options is NULL");
  }
  *out_options = nullptr;
  return Guard(out_error, [&] {
    *out_options = new ctxkit_store_options();
    return Report(ctxkit::Status(), out_error);
  });
}

void ctxkit_store_options_free(ctxkit_store_options* options) {
  delete options;
}

int ctxkit_store_options_set_map_size(ctxkit_store_options* options,
                                      uint64_t bytes, char** out_error) {
  if (options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "options is NULL");
  }
  if (bytes < ctxkit::StoreOptions::kMinMapSize) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "map size must be at least 1 MiB (1048576 bytes)");
  }
  options->options.map_size = bytes;
  return Report(ctxkit::Status(), out_error);
}

int ctxkit_store_options_set_max_map_size(ctxkit_store_options* options,
                                          uint64_t bytes, char** out_error) {
  if (options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "options is NULL");
  }
  if (bytes < ctxkit::StoreOptions::kMinMapSize) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "max map size must be at least 1 MiB (1048576 bytes)");
  }
  options->options.max_map_size = bytes;
  return Report(ctxkit::Status(), out_error);
}

int ctxkit_store_options_set_read_only(ctxkit_store_options* options,
                                       int read_only, char** out_error) {
  if (options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "options is NULL");
  }
  options->options.read_only = read_only != 0;
  return Report(ctxkit::Status(), out_error);
}

int ctxkit_store_open(const char* path, size_t path_len,
                      const ctxkit_store_options* options,
                      ctxkit_store** out_store, char** out_error) {
  if (out_store == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out_store is NULL");
  }
  *out_store = nullptr;
  if (path == nullptr && path_len != 0) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "path is NULL with a non-zero length");
  }
  return Guard(out_error, [&] {
    const ctxkit::StoreOptions defaults;
    auto store = ctxkit::Store::Open(View(path, path_len),
                                     options ? options->options : defaults);
    if (!store.ok()) return Report(store.status(), out_error);
    *out_store = new ctxkit_store{std::move(*store)};
    return Report(ctxkit::Status(), out_error);
  });
}

void ctxkit_store_close(ctxkit_store* store) { delete store; }

int ctxkit_store_info_json(const ctxkit_store* store, char** out_json,
                           size_t* out_json_len, char** out_error) {
  if (out_json != nullptr) *out_json = nullptr;
  if (out_json_len != nullptr) *out_json_len = 0;
  if (store == nullptr || out_json == nullptr || out_json_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "store, out_json and out_json_len must not be NULL");
  }
  return Guard(out_error, [&] {
    auto info = store->store->Info();
    if (!info.ok()) return Report(info.status(), out_error);
    auto json = ctxkit::StoreInfoToJson(*info);
    if (!json.ok()) return Report(json.status(), out_error);
    char* out = CopyOut(*json);
    if (out == nullptr) {
      return Fail(out_error, CTXKIT_RESOURCE_EXHAUSTED, "out of memory");
    }
    *out_json = out;
    *out_json_len = json->size();
    return Report(ctxkit::Status(), out_error);
  });
}

}  // extern "C"
