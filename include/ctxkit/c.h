/* ctxkit C API: the one ABI-stable interface of ctxkit.
 *
 * Python (ctypes/cffi), Rust, Go and C programs use ctxkit through this
 * header alone. It is valid C99 and C++, and it is the ABI contract: within a
 * SONAME, functions are only added, never changed or removed.
 *
 * Conventions, the same for every function:
 *
 *  - Names are ctxkit_<object>_<verb>. Objects are opaque handles made by a
 *    *_create / *_open function and released by the matching *_free /
 *    *_close, which accept NULL.
 *  - Every fallible function returns an int status: CTXKIT_OK (0) or one of
 *    the CTXKIT_* codes below (numbered like absl::StatusCode; fixed forever).
 *  - Every fallible function takes a trailing `char** out_error`. If it is not
 *    NULL, then on failure *out_error receives a NUL-terminated UTF-8 message
 *    naming what was wrong, which the caller releases with ctxkit_free(); on
 *    success *out_error is set to NULL. There is no thread-local "last error".
 *  - On failure every out parameter other than out_error is set to NULL / 0,
 *    so a failed create leaves nothing to free.
 *  - Strings are passed in as pointer + length (UTF-8, not necessarily
 *    NUL-terminated); a NULL pointer with length 0 is the empty string.
 *  - Documents (results, statistics) are returned as UTF-8 JSON objects with a
 *    "schema_version" field, as pointer + length, released with ctxkit_free();
 *    they are also NUL-terminated for convenience.
 *  - No C++ exception ever crosses this interface; a failed allocation is
 *    reported as CTXKIT_RESOURCE_EXHAUSTED.
 *
 * Thread safety is stated per object.
 */
#ifndef CTXKIT_C_H_
#define CTXKIT_C_H_

#include <stddef.h>
#include <stdint.h>

#include "ctxkit/export.h"
#include "ctxkit/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */

enum {
  CTXKIT_OK = 0,
  CTXKIT_CANCELLED = 1,
  CTXKIT_UNKNOWN = 2,
  CTXKIT_INVALID_ARGUMENT = 3,
  CTXKIT_DEADLINE_EXCEEDED = 4,
  CTXKIT_NOT_FOUND = 5,
  CTXKIT_ALREADY_EXISTS = 6,
  CTXKIT_PERMISSION_DENIED = 7,
  CTXKIT_RESOURCE_EXHAUSTED = 8,
  CTXKIT_FAILED_PRECONDITION = 9,
  CTXKIT_ABORTED = 10,
  CTXKIT_OUT_OF_RANGE = 11,
  CTXKIT_UNIMPLEMENTED = 12,
  CTXKIT_INTERNAL = 13,
  CTXKIT_UNAVAILABLE = 14,
  CTXKIT_DATA_LOSS = 15,
  CTXKIT_UNAUTHENTICATED = 16
};

/* The canonical name of a status code ("OK", "NOT_FOUND", ...), or
 * "UNKNOWN_CODE" for any other value. Static storage; never NULL; never
 * freed. Thread-safe. */
CTXKIT_EXPORT const char* ctxkit_status_name(int code);

/* ------------------------------------------------------------------------ */
/* Version                                                                  */

/* The version of the library actually loaded, as CTXKIT_VERSION_NUMBER
 * (MAJOR * 10000 + MINOR * 100 + PATCH). Thread-safe. */
CTXKIT_EXPORT uint32_t ctxkit_version_number(void);

/* The version of the library actually loaded, "MAJOR.MINOR.PATCH". Static
 * storage; never NULL; never freed. Thread-safe. */
CTXKIT_EXPORT const char* ctxkit_version_string(void);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

/* Releases a message or document that ctxkit returned. NULL is a no-op.
 * Never pass it anything else (in particular, not an opaque handle).
 * Thread-safe. */
CTXKIT_EXPORT void ctxkit_free(void* ptr);

/* ------------------------------------------------------------------------ */
/* Store options                                                            */

/* How to open a store. Not thread-safe: configure from one thread, then it
 * may be shared read-only by concurrent ctxkit_store_open calls. */
typedef struct ctxkit_store_options ctxkit_store_options;

/* Creates options holding the defaults: map size 64 MiB, ceiling 64 GiB,
 * read-write, create the directory if missing, 126 readers.
 * Errors: INVALID_ARGUMENT if out_options is NULL; RESOURCE_EXHAUSTED if
 * memory runs out. */
CTXKIT_EXPORT int ctxkit_store_options_create(ctxkit_store_options** out_options,
                                              char** out_error);

/* Releases options. NULL is a no-op. A store opened with them does not need
 * them afterwards. */
CTXKIT_EXPORT void ctxkit_store_options_free(ctxkit_store_options* options);

/* Initial size of the memory map in bytes (at least 1 MiB). An existing store
 * whose map is already larger keeps its size.
 * Errors: INVALID_ARGUMENT for NULL options or a size below 1 MiB. */
CTXKIT_EXPORT int ctxkit_store_options_set_map_size(ctxkit_store_options* options,
                                                    uint64_t bytes,
                                                    char** out_error);

/* Ceiling in bytes up to which the map grows by itself when a write does not
 * fit (at least 1 MiB; ctxkit_store_open checks it is >= the map size).
 * Beyond it a write fails with RESOURCE_EXHAUSTED and changes nothing.
 * Errors: INVALID_ARGUMENT for NULL options or a size below 1 MiB. */
CTXKIT_EXPORT int ctxkit_store_options_set_max_map_size(
    ctxkit_store_options* options, uint64_t bytes, char** out_error);

/* Non-zero: open read-only (nothing is created; the store must exist; every
 * write fails with FAILED_PRECONDITION). Zero: read-write (the default).
 * Errors: INVALID_ARGUMENT for NULL options. */
CTXKIT_EXPORT int ctxkit_store_options_set_read_only(ctxkit_store_options* options,
                                                     int read_only,
                                                     char** out_error);

/* ------------------------------------------------------------------------ */
/* Store                                                                    */

/* An open store: one LMDB environment in a directory, holding everything
 * ctxkit persists. Thread-safe: one handle may be used by many threads at
 * once. Open a given directory once per process and share the handle. */
typedef struct ctxkit_store ctxkit_store;

/* Opens the store in directory `path` (path_len bytes, any bytes but NUL),
 * creating the directory (not its parents) unless read-only. `options` may be
 * NULL for the defaults; it is not retained.
 *
 * Errors: INVALID_ARGUMENT (NULL out_store, empty path, NUL in the path, bad
 * options); NOT_FOUND (the parent directory, or for read-only the store, does
 * not exist); PERMISSION_DENIED (cannot read or write the directory);
 * FAILED_PRECONDITION (the path is a file; it holds something that is not a
 * ctxkit store; the store's on-disk format is newer than this library's, the
 * message naming both; the directory is already open in this process);
 * DATA_LOSS (corrupted); RESOURCE_EXHAUSTED (out of memory or map space). */
CTXKIT_EXPORT int ctxkit_store_open(const char* path, size_t path_len,
                                    const ctxkit_store_options* options,
                                    ctxkit_store** out_store, char** out_error);

/* Closes the store. NULL is a no-op. No other call on the handle may be in
 * progress or follow. */
CTXKIT_EXPORT void ctxkit_store_close(ctxkit_store* store);

/* The store's vital figures as a JSON document:
 *   {"schema_version":1, "path", "format_version", "read_only", "map_size",
 *    "max_map_size", "page_size", "used_pages", "used_bytes",
 *    "last_transaction_id", "max_readers", "readers_in_use",
 *    "databases":[{"name","entries","pages","depth"}, ...]}
 * *out_json (released with ctxkit_free) and *out_json_len receive it.
 * Errors: INVALID_ARGUMENT for a NULL argument; INTERNAL if LMDB fails. */
CTXKIT_EXPORT int ctxkit_store_info_json(const ctxkit_store* store,
                                         char** out_json, size_t* out_json_len,
                                         char** out_error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CTXKIT_C_H_ */
