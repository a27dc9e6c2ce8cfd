/* The C API, tested from C: every function, every error path.
 *
 * Prints "N passed, M failed" and exits non-zero on any failure. */
#define _DEFAULT_SOURCE /* setgroups */
#define _XOPEN_SOURCE 700

#include <grp.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"
#include "tests/capi/capi_temp_dir.h"

static char temp_root[256];

static void path_in_temp(char* out, size_t size, const char* name) {
  snprintf(out, size, "%s/%s", temp_root, name);
}

static void test_version_and_names(void) {
  static const char* const names[] = {"OK",
                                      "CANCELLED",
                                      "UNKNOWN",
                                      "INVALID_ARGUMENT",
                                      "DEADLINE_EXCEEDED",
                                      "NOT_FOUND",
                                      "ALREADY_EXISTS",
                                      "PERMISSION_DENIED",
                                      "RESOURCE_EXHAUSTED",
                                      "FAILED_PRECONDITION",
                                      "ABORTED",
                                      "OUT_OF_RANGE",
                                      "UNIMPLEMENTED",
                                      "INTERNAL",
                                      "UNAVAILABLE",
                                      "DATA_LOSS",
                                      "UNAUTHENTICATED"};
  char expected[32];
  int code;
  CHECK(ctxkit_version_number() == CTXKIT_VERSION_NUMBER);
  CHECK(strcmp(ctxkit_version_string(), CTXKIT_VERSION_STRING) == 0);
  snprintf(expected, sizeof expected, "%d.%d.%d", CTXKIT_VERSION_MAJOR,
           CTXKIT_VERSION_MINOR, CTXKIT_VERSION_PATCH);
  CHECK(strcmp(ctxkit_version_string(), expected) == 0);
  for (code = 0; code <= CTXKIT_UNAUTHENTICATED; ++code) {
    CHECK(strcmp(ctxkit_status_name(code), names[code]) == 0);
  }
  CHECK(strcmp(ctxkit_status_name(-1), "UNKNOWN_CODE") == 0);
  CHECK(strcmp(ctxkit_status_name(17), "UNKNOWN_CODE") == 0);
  ctxkit_free(NULL); /* a no-op */
}

static void test_options(void) {
  ctxkit_store_options* options = NULL;
  char* error = (char*)"garbage that must be overwritten";

  EXPECT_ERROR(ctxkit_store_options_create(NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_options");
  CHECK(ctxkit_store_options_create(NULL, NULL) == CTXKIT_INVALID_ARGUMENT);

  error = (char*)"garbage";
  CHECK(ctxkit_store_options_create(&options, &error) == CTXKIT_OK);
  CHECK(options != NULL);
  CHECK(error == NULL); /* success clears out_error */

  EXPECT_ERROR(ctxkit_store_options_set_map_size(NULL, 1 << 20, &error),
               CTXKIT_INVALID_ARGUMENT, error, "options");
  EXPECT_ERROR(ctxkit_store_options_set_map_size(options, 1000, &error),
               CTXKIT_INVALID_ARGUMENT, error, "1 MiB");
  CHECK(ctxkit_store_options_set_map_size(options, 1 << 20, &error) ==
        CTXKIT_OK);
  CHECK(error == NULL);

  EXPECT_ERROR(ctxkit_store_options_set_max_map_size(NULL, 1 << 20, &error),
               CTXKIT_INVALID_ARGUMENT, error, "options");
  EXPECT_ERROR(ctxkit_store_options_set_max_map_size(options, 10, &error),
               CTXKIT_INVALID_ARGUMENT, error, "1 MiB");
  CHECK(ctxkit_store_options_set_max_map_size(options, 1 << 24, NULL) ==
        CTXKIT_OK);

  EXPECT_ERROR(ctxkit_store_options_set_read_only(NULL, 1, &error),
               CTXKIT_INVALID_ARGUMENT, error, "options");
  CHECK(ctxkit_store_options_set_read_only(options, 0, &error) == CTXKIT_OK);

  EXPECT_ERROR(ctxkit_store_options_set_sync(NULL, 0, &error),
               CTXKIT_INVALID_ARGUMENT, error, "options");
  EXPECT_ERROR(ctxkit_store_options_set_sync(options, 2, &error),
               CTXKIT_INVALID_ARGUMENT, error, "CTXKIT_STORE_SYNC_DATA_ONLY");
  CHECK(ctxkit_store_options_set_sync(options, CTXKIT_STORE_SYNC_DATA_ONLY,
                                      &error) == CTXKIT_OK);
  CHECK(ctxkit_store_options_set_sync(options, CTXKIT_STORE_SYNC_FULL,
                                      &error) == CTXKIT_OK);

  ctxkit_store_options_free(options);
  ctxkit_store_options_free(NULL); /* a no-op */
}

static void test_store(void) {
  char path[512];
  char file_path[512];
  char missing_parent[512];
  char not_lmdb[512];
  char data_path[600];
  char* error = NULL;
  char* json = NULL;
  size_t json_len = 0;
  ctxkit_store* store = NULL;
  ctxkit_store* second = NULL;
  ctxkit_store_options* options = NULL;
  FILE* f;
  int i;

  path_in_temp(path, sizeof path, "store");
  path_in_temp(file_path, sizeof file_path, "a-file");
  path_in_temp(missing_parent, sizeof missing_parent, "no/such/dir/store");
  path_in_temp(not_lmdb, sizeof not_lmdb, "not-lmdb");

  /* Argument errors. */
  EXPECT_ERROR(ctxkit_store_open(path, strlen(path), NULL, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_store");
  store = (ctxkit_store*)&error; /* must be reset to NULL on failure */
  EXPECT_ERROR(ctxkit_store_open(NULL, 5, NULL, &store, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  CHECK(store == NULL);
  EXPECT_ERROR(ctxkit_store_open("", 0, NULL, &store, &error),
               CTXKIT_INVALID_ARGUMENT, error, "empty");
  EXPECT_ERROR(ctxkit_store_open(NULL, 0, NULL, &store, &error),
               CTXKIT_INVALID_ARGUMENT, error, "empty");
  EXPECT_ERROR(ctxkit_store_open("ab\0cd", 5, NULL, &store, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NUL");
  CHECK(ctxkit_store_options_create(&options, NULL) == CTXKIT_OK);
  CHECK(ctxkit_store_options_set_map_size(options, 1 << 22, NULL) == CTXKIT_OK);
  CHECK(ctxkit_store_options_set_max_map_size(options, 1 << 21, NULL) ==
        CTXKIT_OK);
  EXPECT_ERROR(ctxkit_store_open(path, strlen(path), options, &store, &error),
               CTXKIT_INVALID_ARGUMENT, error, "max_map_size");
  CHECK(store == NULL);

  /* Filesystem errors. */
  EXPECT_ERROR(ctxkit_store_open(missing_parent, strlen(missing_parent), NULL,
                                 &store, &error),
               CTXKIT_NOT_FOUND, error, "does not exist");
  CHECK(store == NULL);
  f = fopen(file_path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("not a directory", f);
    fclose(f);
  }
  EXPECT_ERROR(
      ctxkit_store_open(file_path, strlen(file_path), NULL, &store, &error),
      CTXKIT_FAILED_PRECONDITION, error, "not a directory");
  CHECK(mkdir(not_lmdb, 0700) == 0);
  snprintf(data_path, sizeof data_path, "%s/data.mdb", not_lmdb);
  f = fopen(data_path, "w");
  CHECK(f != NULL);
  if (f) {
    for (i = 0; i < 2000; ++i) fputs("definitely not lmdb\n", f);
    fclose(f);
  }
  EXPECT_ERROR(
      ctxkit_store_open(not_lmdb, strlen(not_lmdb), NULL, &store, &error),
      CTXKIT_FAILED_PRECONDITION, error, "not an LMDB data file");

  /* Read-only needs an existing store. */
  CHECK(ctxkit_store_options_set_map_size(options, 1 << 20, NULL) == CTXKIT_OK);
  CHECK(ctxkit_store_options_set_read_only(options, 1, NULL) == CTXKIT_OK);
  EXPECT_ERROR(ctxkit_store_open(path, strlen(path), options, &store, &error),
               CTXKIT_NOT_FOUND, error, "no store");

  /* A real store; the path need not be NUL-terminated. */
  {
    char unterminated[600];
    size_t n = strlen(path);
    memcpy(unterminated, path, n);
    unterminated[n] = 'X';
    CHECK(ctxkit_store_open(unterminated, n, NULL, &store, &error) ==
          CTXKIT_OK);
  }
  CHECK(store != NULL);
  CHECK(error == NULL);
  /* Opened again in this process: a second handle on the same environment
   * (LMDB forbids two), closed independently. */
  CHECK(ctxkit_store_open(path, strlen(path), NULL, &second, &error) ==
        CTXKIT_OK);
  CHECK(second != NULL && second != store);
  ctxkit_store_close(second);

  EXPECT_ERROR(ctxkit_store_info_json(NULL, &json, &json_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  CHECK(json == NULL);
  CHECK(json_len == 0);
  EXPECT_ERROR(ctxkit_store_info_json(store, NULL, &json_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  EXPECT_ERROR(ctxkit_store_info_json(store, &json, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  CHECK(ctxkit_store_info_json(store, &json, &json_len, &error) == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(json != NULL);
  if (json) {
    CHECK(strlen(json) == json_len);
    CHECK(contains(json, "\"schema_version\":1"));
    CHECK(contains(json, "\"format_version\":3"));
    CHECK(contains(json, "\"read_only\":false"));
    CHECK(contains(json, "\"name\":\"__meta\""));
    CHECK(contains(json, path));
  }
  ctxkit_free(json);
  json = NULL;
  ctxkit_store_close(store);
  ctxkit_store_close(NULL); /* a no-op */

  /* Reopened read-only: now it exists. */
  store = NULL;
  CHECK(ctxkit_store_open(path, strlen(path), options, &store, &error) ==
        CTXKIT_OK);
  CHECK(ctxkit_store_info_json(store, &json, &json_len, NULL) == CTXKIT_OK);
  CHECK(contains(json, "\"read_only\":true"));
  ctxkit_free(json);
  /* A whole store checks whole, read-only. */
  EXPECT_ERROR(ctxkit_store_check_json(NULL, &json, &json_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  CHECK(json == NULL);
  CHECK(ctxkit_store_check_json(store, &json, &json_len, &error) == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(json != NULL);
  if (json) {
    CHECK(strlen(json) == json_len);
    CHECK(contains(json, "\"schema_version\":1"));
    CHECK(contains(json, "\"name\":\"__meta\""));
    CHECK(contains(json, "\"unaccounted_pages\":"));
  }
  ctxkit_free(json);
  ctxkit_store_close(store);
  /* Every page checked at open: a whole store opens (store.damaged shows
   * the damaged ones refused). */
  EXPECT_ERROR(ctxkit_store_options_set_check_every_page(NULL, 1, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  CHECK(ctxkit_store_options_set_check_every_page(options, 1, &error) ==
        CTXKIT_OK);
  store = NULL;
  CHECK(ctxkit_store_open(path, strlen(path), options, &store, &error) ==
        CTXKIT_OK);
  CHECK(store != NULL);
  ctxkit_store_close(store);
  ctxkit_store_options_free(options);
}

/* Opens `path` as an unprivileged user when running as root (root ignores
 * permission bits), else as ourselves. Returns the status code, or -1. */
static int open_unprivileged(const char* path) {
  pid_t pid;
  int status = 0;
  if (geteuid() != 0) {
    ctxkit_store* store = NULL;
    char* error = NULL;
    int rc = ctxkit_store_open(path, strlen(path), NULL, &store, &error);
    if (rc == CTXKIT_OK) ctxkit_store_close(store);
    if (rc != CTXKIT_OK) CHECK(contains(error, path));
    ctxkit_free(error);
    return rc;
  }
  pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ctxkit_store* store = NULL;
    char* error = NULL;
    int rc;
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
      _exit(100);
    }
    rc = ctxkit_store_open(path, strlen(path), NULL, &store, &error);
    if (rc != CTXKIT_OK && !contains(error, path)) _exit(101);
    _exit(rc);
  }
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

static void test_permission_denied(void) {
  char locked[512];
  char inside[600];
  path_in_temp(locked, sizeof locked, "locked");
  snprintf(inside, sizeof inside, "%s/store", locked);
  CHECK(chmod(temp_root, 0755) == 0);
  CHECK(mkdir(locked, 0555) == 0);
  CHECK(open_unprivileged(inside) == CTXKIT_PERMISSION_DENIED);
  chmod(temp_root, 0700);
}

/* Rewrites the store's recorded on-disk format version with raw LMDB, as a
 * future ctxkit would have written it. */
static int set_format_version(const char* path, unsigned version) {
  MDB_env* env = NULL;
  MDB_txn* txn = NULL;
  MDB_dbi dbi;
  MDB_val key, value;
  unsigned char bytes[4];
  int rc;
  bytes[0] = (unsigned char)(version & 0xff);
  bytes[1] = (unsigned char)((version >> 8) & 0xff);
  bytes[2] = (unsigned char)((version >> 16) & 0xff);
  bytes[3] = (unsigned char)((version >> 24) & 0xff);
  key.mv_size = strlen("format_version");
  key.mv_data = (void*)"format_version";
  value.mv_size = 4;
  value.mv_data = bytes;
  rc = mdb_env_create(&env);
  if (rc == 0) rc = mdb_env_set_maxdbs(env, 4);
  if (rc == 0) rc = mdb_env_open(env, path, 0, 0600);
  if (rc == 0) rc = mdb_txn_begin(env, NULL, 0, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, "__meta", 0, &dbi);
  if (rc == 0) rc = mdb_put(txn, dbi, &key, &value, 0);
  if (rc == 0) {
    rc = mdb_txn_commit(txn);
  } else if (txn != NULL) {
    mdb_txn_abort(txn);
  }
  mdb_env_close(env);
  return rc;
}

static void test_newer_format(void) {
  char path[512];
  char* error = NULL;
  ctxkit_store* store = NULL;
  path_in_temp(path, sizeof path, "future");
  CHECK(ctxkit_store_open(path, strlen(path), NULL, &store, NULL) == CTXKIT_OK);
  ctxkit_store_close(store);
  store = NULL;
  CHECK(set_format_version(path, 99) == 0);
  {
    const int rc = ctxkit_store_open(path, strlen(path), NULL, &store, &error);
    CHECK(rc == CTXKIT_FAILED_PRECONDITION);
    CHECK(store == NULL);
    CHECK(contains(error, "format version 99"));
    CHECK(contains(error, "format version 3 "));
    ctxkit_free(error);
  }
}

int main(void) {
  const char* base = getenv("TMPDIR");
  snprintf(temp_root, sizeof temp_root, "%s/ctxkit-capi-XXXXXX",
           base && *base ? base : "/tmp");
  if (mkdtemp(temp_root) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  test_version_and_names();
  test_options();
  test_store();
  test_permission_denied();
  test_newer_format();
  remove_tree(temp_root);
  return capi_report();
}
