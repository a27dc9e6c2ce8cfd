/* The *_request forms of the record calls (c.h, "Calls whose inputs are
 * many optional fields also have a *_request form"): the same documents as
 * the positional calls, and strict about the request itself (unknown
 * members named with the closest known one, required members, types). */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"
#include "tests/capi/capi_temp_dir.h"

#define L(s) (s), strlen(s)

/* The string value of "key":"..." in json, copied into out (36 bytes of an
 * id), or "" when absent. */
static void id_of(const char* json, const char* key, char* out) {
  char pattern[64];
  const char* at;
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  at = json != NULL ? strstr(json, pattern) : NULL;
  out[0] = '\0';
  if (at == NULL) return;
  memcpy(out, at + strlen(pattern), 36);
  out[36] = '\0';
}

static void test_conversations(ctxkit_conversations* convs) {
  char* json = NULL;
  size_t len = 0;
  char* error = NULL;
  char id[37];
  char request[512];

  CHECK(ctxkit_conversations_create_request(
            convs,
            L("{\"title\":\"by request\",\"model\":\"gpt-4o\","
              "\"metadata\":{\"team\":\"core\"}}"),
            &json, &len, &error) == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(contains(json, "\"title\":\"by request\""));
  CHECK(contains(json, "\"model\":\"gpt-4o\""));
  CHECK(contains(json, "\"metadata\":{\"team\":\"core\"}"));
  id_of(json, "id", id);
  CHECK(strlen(id) == 36);
  ctxkit_free(json);

  snprintf(request, sizeof request,
           "{\"conversation_id\":\"%s\",\"role\":\"assistant\","
           "\"content\":\"calling\",\"tool_calls\":[{\"id\":\"c1\","
           "\"type\":\"function\",\"function\":{\"name\":\"ls\","
           "\"arguments\":\"{}\"}}],\"is_compressed\":true}",
           id);
  CHECK(ctxkit_conversations_add_message_request(convs, L(request), &json, &len,
                                                 NULL) == CTXKIT_OK);
  CHECK(contains(json, "\"role\":\"assistant\""));
  CHECK(contains(json, "\"is_compressed\":true"));
  CHECK(contains(json, "\"name\":\"ls\""));
  ctxkit_free(json);

  snprintf(request, sizeof request,
           "{\"id\":\"%s\",\"title\":\"renamed\",\"metadata\":null}", id);
  CHECK(ctxkit_conversations_update_request(convs, L(request), &json, &len,
                                            NULL) == CTXKIT_OK);
  CHECK(contains(json, "\"title\":\"renamed\""));
  /* null is "absent": the metadata stays. */
  CHECK(contains(json, "\"metadata\":{\"team\":\"core\"}"));
  ctxkit_free(json);

  /* The request's own errors. */
  EXPECT_ERROR(ctxkit_conversations_create_request(
                   convs, L("{\"titel\":\"x\"}"), &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "did you mean 'title'");
  CHECK(json == NULL && len == 0);
  EXPECT_ERROR(ctxkit_conversations_create_request(
                   convs, L("{\"model\":\"gpt-4o\"}"), &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "title is required");
  EXPECT_ERROR(ctxkit_conversations_create_request(convs, L("{\"title\":5}"),
                                                   &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "title");
  EXPECT_ERROR(ctxkit_conversations_create_request(convs, L("[\"title\"]"),
                                                   &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "request_json");
  EXPECT_ERROR(ctxkit_conversations_create_request(convs, L("{\"title\":"),
                                                   &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "request_json");
  EXPECT_ERROR(
      ctxkit_conversations_create_request(convs, NULL, 3, &json, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "request_json");
  EXPECT_ERROR(
      ctxkit_conversations_create_request(NULL, L("{}"), &json, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "convs");
  /* The values are checked by the positional call, with its messages. */
  snprintf(request, sizeof request,
           "{\"conversation_id\":\"%s\",\"role\":\"robot\","
           "\"content\":\"x\"}",
           id);
  EXPECT_ERROR(ctxkit_conversations_add_message_request(convs, L(request),
                                                        &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "role");
  EXPECT_ERROR(ctxkit_conversations_add_message_request(
                   convs, L("{\"role\":\"user\",\"content\":\"x\"}"), &json,
                   &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "conversation_id is required");
}

static void test_references(ctxkit_references* refs) {
  char* json = NULL;
  size_t len = 0;
  char* error = NULL;
  CHECK(ctxkit_references_add_request(
            refs,
            L("{\"type\":\"note\",\"title\":\"Build notes\","
              "\"content\":\"The lexer rejects tabs.\"}"),
            &json, &len, &error) == CTXKIT_OK);
  CHECK(contains(json, "\"title\":\"Build notes\""));
  CHECK(contains(json, "\"conversation_id\":null"));
  ctxkit_free(json);
  EXPECT_ERROR(ctxkit_references_add_request(
                   refs,
                   L("{\"type\":\"note\",\"title\":\"t\",\"content\":\"c\","
                     "\"conversation\":\"x\"}"),
                   &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "'conversation_id'");
}

static void test_cache(ctxkit_cache* cache) {
  char* by_position = NULL;
  char* by_request = NULL;
  size_t len = 0;
  char* error = NULL;
  char key_a[37];
  char key_b[37];
  CHECK(ctxkit_cache_put(cache, L("same content"), L("docs"), 0, NULL, 0, NULL,
                         0, &by_position, &len, NULL) == CTXKIT_OK);
  CHECK(ctxkit_cache_put_request(
            cache, L("{\"content\":\"same content\",\"prefix\":\"docs\"}"),
            &by_request, &len, &error) == CTXKIT_OK);
  /* Content-addressed: the same key, and the second put finds the first. */
  id_of(by_position, "key", key_a);
  id_of(by_request, "key", key_b);
  CHECK(key_a[0] != '\0' && strcmp(key_a, key_b) == 0);
  CHECK(contains(by_request, "\"already_cached\":true"));
  ctxkit_free(by_position);
  ctxkit_free(by_request);
  EXPECT_ERROR(ctxkit_cache_put_request(
                   cache, L("{\"content\":\"x\",\"ttl_ms\":\"soon\"}"),
                   &by_request, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "ttl_ms");
  EXPECT_ERROR(
      ctxkit_cache_put_request(cache, L("{\"content\":\"x\",\"ttl\":1000}"),
                               &by_request, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "did you mean 'ttl_ms'");
}

static void test_optimizer(void) {
  static const char kQuery[] =
      "Could you please maybe explain in detail how the cache works?";
  char* by_position = NULL;
  char* by_request = NULL;
  size_t position_len = 0;
  size_t request_len = 0;
  char* error = NULL;
  char request[512];
  CHECK(ctxkit_query_optimize(L(kQuery), L("gpt-4o"), L("reduce_tokens"), NULL,
                              0, 0, &by_position, &position_len,
                              NULL) == CTXKIT_OK);
  snprintf(request, sizeof request,
           "{\"query\":\"%s\",\"model\":\"gpt-4o\","
           "\"optimization_goal\":\"reduce_tokens\"}",
           kQuery);
  CHECK(ctxkit_query_optimize_request(L(request), &by_request, &request_len,
                                      &error) == CTXKIT_OK);
  /* The optimizer is deterministic: byte for byte the same document. */
  CHECK(position_len == request_len && position_len > 0 &&
        memcmp(by_position, by_request, position_len) == 0);
  ctxkit_free(by_position);
  ctxkit_free(by_request);
  EXPECT_ERROR(
      ctxkit_query_optimize_request(L("{\"query\":\"x\",\"goal\":\"both\"}"),
                                    &by_request, &request_len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "optimization_goal");
  EXPECT_ERROR(ctxkit_query_optimize_request(L("{\"query\":\"x\"}"), NULL,
                                             &request_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_json");
}

int main(void) {
  char dir[] = "/tmp/ctxkit-request-XXXXXX";
  ctxkit_store* store = NULL;
  ctxkit_conversations* convs = NULL;
  ctxkit_references* refs = NULL;
  ctxkit_cache* cache = NULL;
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  CHECK(ctxkit_store_open(L(dir), NULL, &store, NULL) == CTXKIT_OK);
  CHECK(ctxkit_conversations_open(store, &convs, NULL) == CTXKIT_OK);
  CHECK(ctxkit_references_open(store, NULL, 0, &refs, NULL) == CTXKIT_OK);
  CHECK(ctxkit_cache_open(store, 0, 0, NULL, &cache, NULL) == CTXKIT_OK);
  test_conversations(convs);
  test_references(refs);
  test_cache(cache);
  test_optimizer();
  ctxkit_cache_close(cache);
  ctxkit_references_close(refs);
  ctxkit_conversations_close(convs);
  ctxkit_store_close(store);
  remove_tree(dir);
  return capi_report();
}
