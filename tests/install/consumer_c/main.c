/* A C99 program using an installed ctxkit through <ctxkit/c.h> alone.
 *
 * Usage: consumer_c <scratch directory>
 * Prints "OK" and returns 0 only if every check holds; otherwise names each
 * failed check on stderr and returns 1. */
#include <ctxkit/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* Checks `status` is `expected`, printing the message if it is not. */
static void check_status(const char* what, int status, int expected,
                         char* error) {
  if (status != expected) {
    fprintf(stderr, "%s: got %s (%d), expected %s: %s\n", what,
            ctxkit_status_name(status), status, ctxkit_status_name(expected),
            error != NULL ? error : "(no message)");
    ++failures;
  }
}

static char* join(const char* dir, const char* name) {
  size_t n = strlen(dir) + 1 + strlen(name) + 1;
  char* path = (char*)malloc(n);
  if (path == NULL) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  snprintf(path, n, "%s/%s", dir, name);
  return path;
}

int main(int argc, char** argv) {
  ctxkit_store_options* options = NULL;
  ctxkit_store* store = NULL;
  ctxkit_store* missing = NULL;
  char* error = NULL;
  char* json = NULL;
  size_t json_len = 0;
  char* store_path;
  char* missing_path;
  int status;

  if (argc != 2) {
    fprintf(stderr, "usage: %s <scratch directory>\n", argv[0]);
    return 2;
  }

  /* The library loaded is the one these headers describe. */
  CHECK(ctxkit_version_number() == CTXKIT_VERSION_NUMBER);
  CHECK(strcmp(ctxkit_version_string(), CTXKIT_VERSION_STRING) == 0);
  CHECK(strcmp(ctxkit_status_name(CTXKIT_OK), "OK") == 0);
  CHECK(strcmp(ctxkit_status_name(CTXKIT_NOT_FOUND), "NOT_FOUND") == 0);

  /* NULL is accepted by every release function. */
  ctxkit_free(NULL);
  ctxkit_store_options_free(NULL);
  ctxkit_store_close(NULL);

  status = ctxkit_store_options_create(&options, &error);
  check_status("ctxkit_store_options_create", status, CTXKIT_OK, error);
  CHECK(options != NULL);
  CHECK(error == NULL);
  if (options == NULL) return 1;

  /* A rejected option: a message, freed with ctxkit_free. */
  status = ctxkit_store_options_set_map_size(options, 1, &error);
  check_status("set_map_size(1)", status, CTXKIT_INVALID_ARGUMENT, error);
  CHECK(error != NULL && error[0] != '\0');
  ctxkit_free(error);
  error = NULL;

  status =
      ctxkit_store_options_set_map_size(options, (uint64_t)2 << 20, &error);
  check_status("set_map_size(2 MiB)", status, CTXKIT_OK, error);
  status = ctxkit_store_options_set_max_map_size(options, (uint64_t)64 << 20,
                                                 &error);
  check_status("set_max_map_size(64 MiB)", status, CTXKIT_OK, error);
  status = ctxkit_store_options_set_read_only(options, 0, NULL);
  check_status("set_read_only(0)", status, CTXKIT_OK, NULL);

  store_path = join(argv[1], "store_c");
  status = ctxkit_store_open(store_path, strlen(store_path), options, &store,
                             &error);
  check_status("ctxkit_store_open", status, CTXKIT_OK, error);
  CHECK(error == NULL);
  CHECK(store != NULL);
  ctxkit_free(error);
  error = NULL;

  if (store != NULL) {
    status = ctxkit_store_info_json(store, &json, &json_len, &error);
    check_status("ctxkit_store_info_json", status, CTXKIT_OK, error);
    CHECK(json != NULL);
    if (json != NULL) {
      CHECK(json_len == strlen(json));
      CHECK(json[0] == '{');
      CHECK(strstr(json, "\"schema_version\"") != NULL);
    }
    ctxkit_free(json);
    ctxkit_store_close(store);
  }

  /* The error path: the parent directory does not exist. */
  missing_path = join(argv[1], "no-such-parent/store");
  status = ctxkit_store_open(missing_path, strlen(missing_path), options,
                             &missing, &error);
  check_status("ctxkit_store_open(missing parent)", status, CTXKIT_NOT_FOUND,
               error);
  CHECK(missing == NULL);
  CHECK(error != NULL && error[0] != '\0');
  ctxkit_free(error);
  ctxkit_store_close(missing);

  ctxkit_store_options_free(options);
  free(store_path);
  free(missing_path);

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("OK\n");
  return 0;
}
