// The C API's store sections (c.h, "Store options" and "Store"):
// translation to ctxkit::Store. A store handle holds the Store that
// Store::OpenShared gives, so opening a directory twice in one process
// shares one environment.

#include "ctxkit/store.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capi/c_internal.h"
#include "ctxkit/c.h"
#include "ctxkit/status.h"
#include "ctxkit/store_check.h"

struct ctxkit_store_options {
  ctxkit::StoreOptions options;
};

// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

extern "C" {

int ctxkit_store_options_create(ctxkit_store_options** out_options,
                                char** out_error) {
  if (out_options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out_options is NULL");
  }
  *out_options = nullptr;
  return Guard(out_error, [&] {
    *out_options = new ctxkit_store_options();
    return Ok(out_error);
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
  return Ok(out_error);
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
  return Ok(out_error);
}

int ctxkit_store_options_set_read_only(ctxkit_store_options* options,
                                       int read_only, char** out_error) {
  if (options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "options is NULL");
  }
  options->options.read_only = read_only != 0;
  return Ok(out_error);
}

int ctxkit_store_options_set_create_if_missing(ctxkit_store_options* options,
                                               int create_if_missing,
                                               char** out_error) {
  if (options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "options is NULL");
  }
  options->options.create_if_missing = create_if_missing != 0;
  return Ok(out_error);
}

int ctxkit_store_options_set_sync(ctxkit_store_options* options, int sync,
                                  char** out_error) {
  if (options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "options is NULL");
  }
  if (sync != CTXKIT_STORE_SYNC_FULL && sync != CTXKIT_STORE_SYNC_DATA_ONLY) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                absl::StrCat("sync is ", sync,
                             "; it must be CTXKIT_STORE_SYNC_FULL (0) or "
                             "CTXKIT_STORE_SYNC_DATA_ONLY (1)"));
  }
  options->options.sync = static_cast<ctxkit::StoreSync>(sync);
  return Ok(out_error);
}

int ctxkit_store_options_set_check_every_page(ctxkit_store_options* options,
                                              int check_every_page,
                                              char** out_error) {
  if (options == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "options is NULL");
  }
  options->options.check_every_page = check_every_page != 0;
  return Ok(out_error);
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
    auto store = ctxkit::Store::OpenShared(
        View(path, path_len), options ? options->options : defaults);
    if (!store.ok()) return Report(store.status(), out_error);
    *out_store = new ctxkit_store{std::move(*store)};
    return Ok(out_error);
  });
}

void ctxkit_store_close(ctxkit_store* store) { delete store; }

int ctxkit_store_info_json(const ctxkit_store* store, char** out_json,
                           size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(store, "store", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto info = store->store->Info();
    if (!info.ok()) return Report(info.status(), out_error);
    return ReturnResult(ctxkit::StoreInfoToJson(*info), out_json, out_json_len,
                        out_error);
  });
}

int ctxkit_store_check_json(const ctxkit_store* store, char** out_json,
                            size_t* out_json_len, char** out_error) {
  if (int rc = StartDoc(store, "store", out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto report = ctxkit::CheckStore(*store->store);
    if (!report.ok()) return Report(report.status(), out_error);
    return ReturnDoc(ctxkit::StoreCheckReportToJson(*report), out_json,
                     out_json_len, out_error);
  });
}

}  // extern "C"
