// What the files of capi/ share: the handles more than one of them opens
// (the store, and the record stores the compactor borrows) and the small
// translation helpers every C entry point uses.

#ifndef CTXKIT_CAPI_C_INTERNAL_H_
#define CTXKIT_CAPI_C_INTERNAL_H_

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "ctxkit/analytics.h"
#include "ctxkit/c.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"
#include "lib/json/utf8.h"

struct ctxkit_store {
  std::unique_ptr<ctxkit::Store> store;
};

struct ctxkit_conversations {
  std::unique_ptr<ctxkit::ConversationStore> conversations;
};

struct ctxkit_cache {
  std::unique_ptr<ctxkit::Cache> cache;
};

struct ctxkit_analytics {
  std::unique_ptr<ctxkit::Analytics> analytics;
};

namespace ctxkit::capi {

// A malloc'd, NUL-terminated copy that ctxkit_free releases; NULL if memory
// runs out.
inline char* CopyOut(std::string_view s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) return nullptr;
  if (!s.empty()) std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

// `message` as every C error message must be: valid UTF-8 (a message may
// quote input bytes that are not, such as an unknown encoding name) with no
// NUL inside (a C string would end there, cutting the message short).
// Invalid sequences become U+FFFD, NUL bytes the two characters "\0".
inline std::string ErrorText(std::string_view message) {
  std::string text = internal::ReplaceInvalidUtf8(message);
  for (size_t at = text.find('\0'); at != std::string::npos;
       at = text.find('\0', at + 2)) {
    text.replace(at, 1, "\\0");
  }
  return text;
}

inline int Fail(char** out_error, int code, std::string_view message) {
  if (out_error != nullptr) *out_error = CopyOut(ErrorText(message));
  return code;
}

inline int Report(const Status& status, char** out_error) {
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

// A C string argument as a view; NULL is the empty view.
inline std::string_view View(const char* data, size_t len) {
  return data == nullptr ? std::string_view() : std::string_view(data, len);
}

}  // namespace ctxkit::capi

#endif  // CTXKIT_CAPI_C_INTERNAL_H_
