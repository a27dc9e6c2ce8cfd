// What the files of capi/ share: the handles more than one of them uses (the
// store, and the parts the compactor shares) and the small translation
// helpers every C entry point uses. One file per section of c.h implements
// that section.
//
// Lifetimes: a part handle holds its part by shared_ptr, and the part's
// deleter holds the store's shared_ptr, so a part keeps its store open and
// handles may be closed in any order (c.h, "Handles may be closed in any
// order"). The compactor holds the cache and analytics the same way.

#ifndef CTXKIT_CAPI_C_INTERNAL_H_
#define CTXKIT_CAPI_C_INTERNAL_H_

#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "ctxkit/analytics.h"
#include "ctxkit/c.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"

struct ctxkit_store {
  std::shared_ptr<ctxkit::Store> store;
};

struct ctxkit_conversations {
  std::shared_ptr<ctxkit::ConversationStore> conversations;
};

struct ctxkit_references {
  std::shared_ptr<ctxkit::ReferenceStore> references;
};

struct ctxkit_cache {
  std::shared_ptr<ctxkit::Cache> cache;
};

struct ctxkit_analytics {
  std::shared_ptr<ctxkit::Analytics> analytics;
};

namespace ctxkit::capi {

// `part` as a shared_ptr that keeps `store` open until the part is gone: the
// deleter destroys the part first, then drops its hold on the store.
template <typename Part>
std::shared_ptr<Part> KeepingStore(std::unique_ptr<Part> part,
                                   std::shared_ptr<Store> store) {
  return std::shared_ptr<Part>(
      part.release(), [store = std::move(store)](Part* p) { delete p; });
}

// A malloc'd, NUL-terminated copy that ctxkit_free releases; NULL if memory
// runs out.
char* CopyOut(std::string_view s);

// `message` as every C error message must be: valid UTF-8 (a message may
// quote input bytes that are not, such as an unknown encoding name) with no
// NUL inside (a C string would end there, cutting the message short).
// Invalid sequences become U+FFFD, NUL bytes the two characters "\0".
std::string ErrorText(std::string_view message);

// Sets *out_error (when not NULL) to `message` and returns `code`.
int Fail(char** out_error, int code, std::string_view message);

// CTXKIT_OK with *out_error cleared, or the status's code and message.
int Report(const Status& status, char** out_error);
int Report(const absl::Status& status, char** out_error);
inline int Ok(char** out_error) { return Report(Status(), out_error); }

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

// An optional string input: NULL means absent.
inline std::optional<std::string_view> Optional(const char* data, size_t len) {
  if (data == nullptr) return std::nullopt;
  return std::string_view(data, len);
}

// One string argument: its C name (for messages) and pointer + length.
struct Arg {
  const char* name;
  const char* data;
  size_t len;
};

// INVALID_ARGUMENT (returned) when any argument is NULL with a non-zero
// length; else -1, meaning "go on".
int CheckArgs(std::initializer_list<Arg> args, char** out_error);

// Clears the outputs of a document-returning call and checks the handle and
// out pointers (a NULL `handle_name` means the call has no handle); -1 means
// "go on".
int StartDoc(const void* handle, const char* handle_name, char** out_json,
             size_t* out_json_len, char** out_error);

// Hands a finished document to the caller: CTXKIT_OK, or RESOURCE_EXHAUSTED
// when the copy cannot be made.
int ReturnDoc(std::string_view doc, char** out_json, size_t* out_json_len,
              char** out_error);

// A writer's result (StatusOr<std::string> of either status kind) to the
// caller.
template <typename StatusOrString>
int ReturnResult(const StatusOrString& doc, char** out_json,
                 size_t* out_json_len, char** out_error) {
  if (!doc.ok()) return Report(doc.status(), out_error);
  return ReturnDoc(std::string_view(*doc), out_json, out_json_len, out_error);
}

// Stores a successful result's value in `*out` (when not NULL) and returns
// CTXKIT_OK; otherwise the error.
template <typename T, typename Out>
int ReturnValue(StatusOr<T> result, Out* out, char** out_error) {
  if (!result.ok()) return Report(result.status(), out_error);
  if (out != nullptr) *out = *result;
  return Ok(out_error);
}

// Checks a part's open call: INVALID_ARGUMENT (returned) unless `store` and
// `out` are set, after clearing *out; -1 means "go on".
template <typename Handle>
int StartOpen(const ctxkit_store* store, Handle** out, char** out_error) {
  if (out != nullptr) *out = nullptr;
  if (store == nullptr || out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "store and out must not be NULL");
  }
  return -1;
}

}  // namespace ctxkit::capi

#endif  // CTXKIT_CAPI_C_INTERNAL_H_
