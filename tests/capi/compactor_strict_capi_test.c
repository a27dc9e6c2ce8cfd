/* The compactor's C functions refuse what would otherwise give a silently
 * wrong result: unknown request keys (named with the closest valid one),
 * unknown models unless an estimate is asked for, and a store directory that
 * holds other files. They translate only: the C++ Compactor::CompactJson
 * gives the same documents (tests/compactor/compactor_json_test.cc). */

#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"
#include "tests/capi/capi_temp_dir.h"

#define L(s) (s), strlen(s)

static const char kMessages[] =
    "[{\"role\":\"system\",\"content\":\"You are a travel agent.\"},"
    "{\"role\":\"user\",\"content\":\"Plan a week in Lisbon for me.\"},"
    "{\"role\":\"assistant\",\"content\":\"Day one: the old town, the "
    "castle and the river front, then dinner in Alfama.\"},"
    "{\"role\":\"user\",\"content\":\"And day two?\"}]";

static const char kViewHead[] = "{\"schema_version\":1,\"conversation_id\":\"";

/* ctxkit_compactor_compact of `request`; returns its status, and checks that a
 * failed call leaves out_json NULL and names `needle` (when not NULL). */
static int compact_status(ctxkit_compactor* c, const char* request,
                          const char* needle, int line) {
  char* json = NULL;
  size_t len = 0;
  char* error = NULL;
  const int rc = ctxkit_compactor_compact(c, request, strlen(request), &json,
                                          &len, &error);
  if (rc != CTXKIT_OK) {
    CHECK(json == NULL && len == 0);
    if (needle != NULL && !contains(error, needle)) {
      fprintf(stderr, "line %d: \"%s\" lacks \"%s\"\n", line,
              error ? error : "(null)", needle);
      CHECK(0);
    }
  }
  ctxkit_free(json);
  ctxkit_free(error);
  return rc;
}

static void test_unknown_keys(ctxkit_compactor* c) {
  char request[2048];
  snprintf(request, sizeof request, "{\"max_token\":2000,\"messages\":%s}",
           kMessages);
  CHECK(compact_status(c, request,
                       "unknown key 'max_token'; did you mean 'max_tokens'?",
                       __LINE__) == CTXKIT_INVALID_ARGUMENT);
  snprintf(request, sizeof request,
           "{\"options\":{\"enable_cachng\":true},\"messages\":%s}", kMessages);
  CHECK(compact_status(c, request,
                       "options: unknown key 'enable_cachng'; did you mean "
                       "'enable_caching'?",
                       __LINE__) == CTXKIT_INVALID_ARGUMENT);
  snprintf(request, sizeof request,
           "{\"rules\":[{\"name\":\"r\",\"tier\":\"anchor\",\"role\":"
           "[\"user\"]}],\"messages\":%s}",
           kMessages);
  CHECK(compact_status(c, request,
                       "rules[0]: unknown key 'role'; did you mean 'roles'?",
                       __LINE__) == CTXKIT_INVALID_ARGUMENT);
  /* Spelled right, and as a bare array: both compact. */
  snprintf(request, sizeof request, "{\"max_tokens\":2000,\"messages\":%s}",
           kMessages);
  CHECK(compact_status(c, request, NULL, __LINE__) == CTXKIT_OK);
  CHECK(compact_status(c, kMessages, NULL, __LINE__) == CTXKIT_OK);
}

static void test_unknown_model(ctxkit_compactor* c) {
  char request[2048];
  char* json = NULL;
  size_t len = 0;
  char* error = NULL;
  snprintf(request, sizeof request, "{\"model\":\"gpt4o\",\"messages\":%s}",
           kMessages);
  CHECK(compact_status(c, request,
                       "model: unknown model \"gpt4o\"; did you mean gpt-4o",
                       __LINE__) == CTXKIT_INVALID_ARGUMENT);
  snprintf(request, sizeof request,
           "{\"model\":\"gpt4o\",\"estimate_unknown_model\":true,"
           "\"messages\":%s}",
           kMessages);
  CHECK(ctxkit_compactor_compact(c, L(request), &json, &len, &error) ==
        CTXKIT_OK);
  CHECK(contains(json, "\"counting\":\"estimate\""));
  ctxkit_free(json);
  ctxkit_free(error);
}

static void test_conversation_options(ctxkit_compactor* c, const char* dir) {
  ctxkit_store* store = NULL;
  ctxkit_conversations* convs = NULL;
  char* error = NULL;
  char* json = NULL;
  size_t len = 0;
  char conv_id[64] = {0};
  const char* at;

  CHECK(ctxkit_store_open(L(dir), NULL, &store, &error) == CTXKIT_OK);
  CHECK(ctxkit_conversations_open(store, &convs, &error) == CTXKIT_OK);
  CHECK(ctxkit_conversations_create(convs, L("trip"), NULL, 0, NULL, 0, &json,
                                    &len, &error) == CTXKIT_OK);
  at = json ? strstr(json, "\"id\":\"") : NULL;
  if (at != NULL) memcpy(conv_id, at + 6, 36);
  ctxkit_free(json);
  CHECK(ctxkit_conversations_add_messages(convs, L(conv_id), L(kMessages),
                                          &json, &len, &error) == CTXKIT_OK);
  ctxkit_free(json);

  EXPECT_ERROR(
      ctxkit_compactor_compact_conversation(
          c, convs, L(conv_id), L("{\"max_token\":100}"), &json, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error,
      "unknown key 'max_token'; did you mean 'max_tokens'?");
  CHECK(json == NULL);
  EXPECT_ERROR(ctxkit_compactor_compact_conversation(
                   c, convs, L(conv_id),
                   L("{\"options\":{\"token_counter\":\"openai\"}}"), &json,
                   &len, &error),
               CTXKIT_INVALID_ARGUMENT, error,
               "did you mean 'token_counter_type'?");
  /* Empty options are the defaults; the view's version comes first. */
  CHECK(ctxkit_compactor_compact_conversation(
            c, convs, L(conv_id), "", 0, &json, &len, &error) == CTXKIT_OK);
  CHECK(json != NULL && strncmp(json, kViewHead, strlen(kViewHead)) == 0);
  CHECK(contains(json, "\"view_version\":1,"));
  ctxkit_free(json);

  ctxkit_conversations_close(convs);
  ctxkit_store_close(store);
}

static void test_store_in_a_non_empty_directory(const char* dir) {
  char path[512];
  char file[600];
  FILE* f;
  ctxkit_store* store = NULL;
  char* error = NULL;
  struct stat st;
  snprintf(path, sizeof path, "%s/project", dir);
  snprintf(file, sizeof file, "%s/README.md", path);
  CHECK(mkdir(path, 0700) == 0);
  f = fopen(file, "w");
  CHECK(f != NULL);
  if (f != NULL) {
    fputs("# notes\n", f);
    fclose(f);
  }
  EXPECT_ERROR(ctxkit_store_open(L(path), NULL, &store, &error),
               CTXKIT_FAILED_PRECONDITION, error, "'README.md'");
  CHECK(store == NULL);
  snprintf(file, sizeof file, "%s/data.mdb", path);
  CHECK(stat(file, &st) != 0); /* nothing was created */
}

static void test_store_not_created(const char* dir) {
  char path[512];
  ctxkit_store_options* options = NULL;
  ctxkit_store* store = NULL;
  char* error = NULL;
  struct stat st;
  snprintf(path, sizeof path, "%s/typo", dir);
  CHECK(ctxkit_store_options_create(&options, &error) == CTXKIT_OK);
  CHECK(ctxkit_store_options_set_create_if_missing(options, 0, &error) ==
        CTXKIT_OK);
  EXPECT_ERROR(ctxkit_store_open(L(path), options, &store, &error),
               CTXKIT_NOT_FOUND, error, "no store at");
  CHECK(store == NULL);
  CHECK(stat(path, &st) != 0);
  EXPECT_ERROR(ctxkit_store_options_set_create_if_missing(NULL, 0, &error),
               CTXKIT_INVALID_ARGUMENT, error, "options");
  /* Once created, the same options open it. */
  CHECK(ctxkit_store_open(L(path), NULL, &store, &error) == CTXKIT_OK);
  ctxkit_store_close(store);
  store = NULL;
  CHECK(ctxkit_store_open(L(path), options, &store, &error) == CTXKIT_OK);
  ctxkit_store_close(store);
  ctxkit_store_options_free(options);
}

int main(void) {
  char tmpl[] = "/tmp/ctxkit-strict-XXXXXX";
  char* dir = mkdtemp(tmpl);
  char store_dir[512];
  ctxkit_compactor* c = NULL;
  char* error = NULL;
  CHECK(dir != NULL);
  if (dir == NULL) return capi_report();
  CHECK(ctxkit_compactor_create(NULL, NULL, &c, &error) == CTXKIT_OK);
  test_unknown_keys(c);
  test_unknown_model(c);
  snprintf(store_dir, sizeof store_dir, "%s/store", dir);
  test_conversation_options(c, store_dir);
  test_store_in_a_non_empty_directory(dir);
  test_store_not_created(dir);
  ctxkit_compactor_free(c);
  remove_tree(dir);
  return capi_report();
}
