// The C API's references section (c.h, "References"): translation to
// ctxkit::ReferenceStore and its public JSON writers.

#include "ctxkit/references.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "capi/c_internal.h"
#include "capi/request_json.h"
#include "ctxkit/c.h"
#include "ctxkit/status.h"
#include "lib/base/field_check.h"

// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

extern "C" {

int ctxkit_references_open(ctxkit_store* store, const char* model,
                           size_t model_len, ctxkit_references** out,
                           char** out_error) {
  if (int rc = StartOpen(store, out, out_error); rc >= 0) return rc;
  if (int rc = CheckArgs({{"model", model, model_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::ReferenceStoreOptions options;
    if (model != nullptr) options.model = std::string(model, model_len);
    auto opened = ctxkit::ReferenceStore::Open(*store->store, options);
    if (!opened.ok()) return Report(opened.status(), out_error);
    *out =
        new ctxkit_references{KeepingStore(std::move(*opened), store->store)};
    return Ok(out_error);
  });
}

void ctxkit_references_close(ctxkit_references* refs) { delete refs; }

int ctxkit_references_add(ctxkit_references* refs, const char* conversation_id,
                          size_t conversation_id_len, const char* type,
                          size_t type_len, const char* title, size_t title_len,
                          const char* content, size_t content_len,
                          const char* metadata_json, size_t metadata_json_len,
                          char** out_json, size_t* out_json_len,
                          char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"conversation_id", conversation_id, conversation_id_len},
                     {"type", type, type_len},
                     {"title", title, title_len},
                     {"content", content, content_len},
                     {"metadata_json", metadata_json, metadata_json_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::NewReference in;
    in.conversation_id =
        std::string(View(conversation_id, conversation_id_len));
    in.type = std::string(View(type, type_len));
    in.title = std::string(View(title, title_len));
    in.content = std::string(View(content, content_len));
    // NewReference reads an empty metadata as "{}" (absent); in C absent is
    // NULL, and an empty string is not a JSON object.
    if (metadata_json != nullptr && metadata_json_len == 0) {
      return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                  "metadata must be a JSON object (got an empty string)");
    }
    in.metadata = std::string(View(metadata_json, metadata_json_len));
    auto added = refs->references->Add(in);
    if (!added.ok()) return Report(added.status(), out_error);
    return ReturnResult(
        ctxkit::ReferenceToJson(*added, /*include_content=*/false), out_json,
        out_json_len, out_error);
  });
}

int ctxkit_references_get(ctxkit_references* refs, const char* id,
                          size_t id_len, char** out_json, size_t* out_json_len,
                          char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"id", id, id_len}}, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    auto reference = refs->references->Get(View(id, id_len));
    if (!reference.ok()) return Report(reference.status(), out_error);
    return ReturnResult(
        ctxkit::ReferenceToJson(*reference, /*include_content=*/true), out_json,
        out_json_len, out_error);
  });
}

int ctxkit_references_list(ctxkit_references* refs, const char* conversation_id,
                           size_t conversation_id_len, int include_content,
                           char** out_json, size_t* out_json_len,
                           char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"conversation_id", conversation_id, conversation_id_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::ListReferencesOptions options;
    options.conversation_id =
        std::string(View(conversation_id, conversation_id_len));
    options.include_content = include_content != 0;
    auto list = refs->references->List(options);
    if (!list.ok()) return Report(list.status(), out_error);
    return ReturnResult(
        ctxkit::ReferenceListToJson(*list, options.include_content), out_json,
        out_json_len, out_error);
  });
}

int ctxkit_references_delete(ctxkit_references* refs, const char* id,
                             size_t id_len, char** out_error) {
  if (refs == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "refs is NULL");
  }
  if (int rc = CheckArgs({{"id", id, id_len}}, out_error); rc >= 0) return rc;
  return Guard(out_error, [&] {
    return Report(refs->references->Delete(View(id, id_len)), out_error);
  });
}

int ctxkit_references_search(ctxkit_references* refs, const char* query,
                             size_t query_len, int64_t limit,
                             const char* conversation_id,
                             size_t conversation_id_len, char** out_json,
                             size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"query", query, query_len},
                     {"conversation_id", conversation_id, conversation_id_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    // The C type is wider than the C++ one: reject what would not convert.
    if (auto s = ctxkit::internal::CheckRange(
            "limit", limit, 1, ctxkit::ReferenceLimits::kMaxSearchLimit);
        !s.ok()) {
      return Report(s, out_error);
    }
    ctxkit::SearchReferencesOptions options;
    options.query = std::string(View(query, query_len));
    options.limit = static_cast<uint32_t>(limit);
    options.conversation_id =
        std::string(View(conversation_id, conversation_id_len));
    auto results = refs->references->Search(options);
    if (!results.ok()) return Report(results.status(), out_error);
    return ReturnResult(ctxkit::ReferenceSearchResultsToJson(*results),
                        out_json, out_json_len, out_error);
  });
}

int ctxkit_references_stats(ctxkit_references* refs,
                            const char* conversation_id,
                            size_t conversation_id_len, char** out_json,
                            size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(refs, "refs", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc =
          CheckArgs({{"conversation_id", conversation_id, conversation_id_len}},
                    out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto stats =
        refs->references->Stats(View(conversation_id, conversation_id_len));
    if (!stats.ok()) return Report(stats.status(), out_error);
    return ReturnResult(ctxkit::ReferenceStatsToJson(*stats), out_json,
                        out_json_len, out_error);
  });
}

int ctxkit_references_add_request(ctxkit_references* refs,
                                  const char* request_json,
                                  size_t request_json_len, char** out_json,
                                  size_t* out_json_len, char** out_error) {
  static constexpr std::string_view kMembers[] = {
      "conversation_id", "type", "title", "content", "metadata"};
  return RunRequest(
      refs, "refs", request_json, request_json_len, kMembers, out_json,
      out_json_len, out_error, [&](Request& request) {
        const StringArg id = request.String("conversation_id");
        const StringArg type = request.String("type", /*required=*/true);
        const StringArg title = request.String("title", /*required=*/true);
        const StringArg content = request.String("content", /*required=*/true);
        const StringArg metadata = request.Json("metadata", /*array=*/false);
        if (!request.status().ok()) return Report(request.status(), out_error);
        return ctxkit_references_add(refs, id.data, id.len, type.data, type.len,
                                     title.data, title.len, content.data,
                                     content.len, metadata.data, metadata.len,
                                     out_json, out_json_len, out_error);
      });
}

}  // extern "C"
