/* Lifetimes a garbage-collected binding can live with (c.h, "Handles may
 * be closed in any order"): part handles keep their store open, a compactor
 * keeps its cache and analytics, a directory opened twice in one process
 * shares one environment, and a summarizer's user data is released through
 * its destroy callback exactly once. Run under ASan in CI, so a use after
 * free here fails loudly. */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"
#include "tests/capi/capi_temp_dir.h"

#define L(s) (s), strlen(s)

static char dir[64];

static ctxkit_store* open_store(int read_only) {
  ctxkit_store_options* options = NULL;
  ctxkit_store* store = NULL;
  CHECK(ctxkit_store_options_create(&options, NULL) == CTXKIT_OK);
  CHECK(ctxkit_store_options_set_read_only(options, read_only, NULL) ==
        CTXKIT_OK);
  CHECK(ctxkit_store_open(L(dir), options, &store, NULL) == CTXKIT_OK);
  ctxkit_store_options_free(options);
  return store;
}

/* Creates a conversation through `convs` and returns its message count
 * after adding one message (1), or -1 on failure. */
static int add_conversation(ctxkit_conversations* convs, char* id_out) {
  char* json = NULL;
  size_t len = 0;
  const char* at;
  if (ctxkit_conversations_create(convs, L("lifetimes"), NULL, 0, NULL, 0,
                                  &json, &len, NULL) != CTXKIT_OK) {
    return -1;
  }
  at = strstr(json, "\"id\":\"");
  CHECK(at != NULL);
  if (at == NULL) {
    ctxkit_free(json);
    return -1;
  }
  memcpy(id_out, at + 6, 36);
  id_out[36] = '\0';
  ctxkit_free(json);
  if (ctxkit_conversations_add_message(convs, id_out, 36, L("user"), L("hello"),
                                       NULL, 0, NULL, 0, NULL, 0, 0, &json,
                                       &len, NULL) != CTXKIT_OK) {
    return -1;
  }
  ctxkit_free(json);
  return 1;
}

static void test_parts_outlive_store(void) {
  ctxkit_store* store = open_store(0);
  ctxkit_conversations* convs = NULL;
  ctxkit_references* refs = NULL;
  ctxkit_cache* cache = NULL;
  ctxkit_analytics* analytics = NULL;
  char id[37];
  char* json = NULL;
  size_t len = 0;
  CHECK(ctxkit_conversations_open(store, &convs, NULL) == CTXKIT_OK);
  CHECK(ctxkit_references_open(store, NULL, 0, &refs, NULL) == CTXKIT_OK);
  CHECK(ctxkit_cache_open(store, 0, 0, NULL, &cache, NULL) == CTXKIT_OK);
  CHECK(ctxkit_analytics_open(store, NULL, NULL, &analytics, NULL) ==
        CTXKIT_OK);
  /* The store first: what crashed (SIGSEGV) before handles shared it. */
  ctxkit_store_close(store);

  CHECK(add_conversation(convs, id) == 1);
  CHECK(ctxkit_conversations_get(convs, id, 36, 1, &json, &len, NULL) ==
        CTXKIT_OK);
  CHECK(contains(json, "\"content\":\"hello\""));
  ctxkit_free(json);
  CHECK(ctxkit_references_add(refs, NULL, 0, L("note"), L("t"), L("body"), NULL,
                              0, &json, &len, NULL) == CTXKIT_OK);
  ctxkit_free(json);
  CHECK(ctxkit_cache_put(cache, L("cached text"), NULL, 0, 0, NULL, 0, NULL, 0,
                         &json, &len, NULL) == CTXKIT_OK);
  ctxkit_free(json);
  CHECK(ctxkit_analytics_record(analytics, L("op"), 5, 1, NULL, NULL) ==
        CTXKIT_OK);

  /* Any order; the environment closes with the last one. */
  ctxkit_cache_close(cache);
  ctxkit_conversations_close(convs);
  ctxkit_analytics_close(analytics);
  ctxkit_references_close(refs);

  /* Closed for real: a read-only open (which a read-write environment
   * still open in this process would refuse) now succeeds and sees what
   * was written. */
  store = open_store(1);
  CHECK(store != NULL);
  CHECK(ctxkit_conversations_open(store, &convs, NULL) == CTXKIT_OK);
  CHECK(ctxkit_conversations_get(convs, id, 36, 0, &json, &len, NULL) ==
        CTXKIT_OK);
  ctxkit_free(json);
  ctxkit_conversations_close(convs);
  ctxkit_store_close(store);
}

static void test_same_directory_twice(void) {
  ctxkit_store* first = open_store(0);
  ctxkit_store* second = open_store(0);
  ctxkit_store* other_mode = NULL;
  ctxkit_store_options* read_only = NULL;
  ctxkit_conversations* a = NULL;
  ctxkit_conversations* b = NULL;
  char id[37];
  char* json = NULL;
  size_t len = 0;
  char* error = NULL;
  CHECK(first != NULL && second != NULL && first != second);
  CHECK(ctxkit_conversations_open(first, &a, NULL) == CTXKIT_OK);
  CHECK(ctxkit_conversations_open(second, &b, NULL) == CTXKIT_OK);
  /* One environment: what one handle writes the other reads. */
  CHECK(add_conversation(a, id) == 1);
  CHECK(ctxkit_conversations_get(b, id, 36, 1, &json, &len, NULL) == CTXKIT_OK);
  CHECK(contains(json, "\"message_count\":1"));
  ctxkit_free(json);

  /* A different mode cannot share it, and says why. */
  CHECK(ctxkit_store_options_create(&read_only, NULL) == CTXKIT_OK);
  CHECK(ctxkit_store_options_set_read_only(read_only, 1, NULL) == CTXKIT_OK);
  EXPECT_ERROR(ctxkit_store_open(L(dir), read_only, &other_mode, &error),
               CTXKIT_FAILED_PRECONDITION, error, "read-write");
  CHECK(other_mode == NULL);
  ctxkit_store_options_free(read_only);

  /* Closing one store handle leaves the other working. */
  ctxkit_conversations_close(a);
  ctxkit_store_close(first);
  CHECK(ctxkit_conversations_get(b, id, 36, 0, &json, &len, NULL) == CTXKIT_OK);
  ctxkit_free(json);
  ctxkit_conversations_close(b);
  ctxkit_store_close(second);
}

static int summaries = 0;

static int summarize(void* user_data, const char* span_json, size_t span_len,
                     const char* extractive, size_t extractive_len,
                     size_t max_tokens, ctxkit_text* out) {
  (void)user_data;
  (void)span_json;
  (void)span_len;
  (void)max_tokens;
  ++summaries;
  return ctxkit_text_set(out, extractive, extractive_len);
}

/* Counts its releases in the int it points to. */
static void destroy_counter(void* user_data) { ++*(int*)user_data; }

static const char kRequest[] =
    "{\"max_tokens\":75,\"recent_window\":1,"
    "\"options\":{\"enable_caching\":true,\"enable_analytics\":true,"
    "\"enable_llm_summarization\":true},\"messages\":["
    "{\"role\":\"user\",\"content\":\"Fix the failing build in the parser "
    "module please.\"},"
    "{\"role\":\"assistant\",\"content\":\"I looked at the parser and the "
    "lexer and read through the failing test output carefully, then I "
    "listed the files that changed since the last green build.\"},"
    "{\"role\":\"user\",\"content\":\"ok\"},"
    "{\"role\":\"assistant\",\"content\":\"The lexer rejects tabs; I will "
    "patch it and rerun the tests in the parser module now.\"},"
    "{\"role\":\"user\",\"content\":\"go on\"}]}";

static void test_compactor_keeps_its_parts(void) {
  ctxkit_store* store = open_store(0);
  ctxkit_cache* cache = NULL;
  ctxkit_analytics* analytics = NULL;
  ctxkit_compactor* compactor = NULL;
  char* json = NULL;
  size_t len = 0;
  int rc;
  int first_released = 0;
  int second_released = 0;
  CHECK(ctxkit_cache_open(store, 0, 0, NULL, &cache, NULL) == CTXKIT_OK);
  CHECK(ctxkit_analytics_open(store, NULL, NULL, &analytics, NULL) ==
        CTXKIT_OK);
  CHECK(ctxkit_compactor_create(cache, analytics, &compactor, NULL) ==
        CTXKIT_OK);
  CHECK(ctxkit_compactor_set_summarizer(compactor, summarize, &first_released,
                                        destroy_counter, NULL) == CTXKIT_OK);
  CHECK(first_released == 0);
  /* Replacing it releases the first user data, once. */
  CHECK(ctxkit_compactor_set_summarizer(compactor, summarize, &second_released,
                                        destroy_counter, NULL) == CTXKIT_OK);
  CHECK(first_released == 1);
  CHECK(second_released == 0);
  /* A failed installation releases nothing. */
  CHECK(ctxkit_compactor_set_summarizer(NULL, summarize, &first_released,
                                        destroy_counter,
                                        NULL) == CTXKIT_INVALID_ARGUMENT);
  CHECK(first_released == 1);

  /* Everything but the compactor closed: it still caches, records and
   * summarizes. */
  ctxkit_cache_close(cache);
  ctxkit_analytics_close(analytics);
  ctxkit_store_close(store);
  rc = ctxkit_compactor_compact(compactor, L(kRequest), &json, &len, NULL);
  CHECK(rc == CTXKIT_OK || rc == CTXKIT_OUT_OF_RANGE);
  CHECK(contains(json, "\"messages\""));
  ctxkit_free(json);
  CHECK(summaries > 0);
  /* Twice: the second answer comes from the cache the compactor kept. */
  rc = ctxkit_compactor_compact(compactor, L(kRequest), &json, &len, NULL);
  CHECK(rc == CTXKIT_OK || rc == CTXKIT_OUT_OF_RANGE);
  CHECK(contains(json, "\"from_cache\":true"));
  ctxkit_free(json);

  ctxkit_compactor_free(compactor);
  CHECK(first_released == 1);
  CHECK(second_released == 1);
}

int main(void) {
  strcpy(dir, "/tmp/ctxkit-lifetime-XXXXXX");
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_parts_outlive_store();
  test_same_directory_twice();
  test_compactor_keeps_its_parts();
  remove_tree(dir);
  return capi_report();
}
