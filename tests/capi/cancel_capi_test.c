/* Cancellation through the C API, tested from C: the token's own calls, a
 * token cancelled before the call (CANCELLED, nothing out, no view saved),
 * an uncancelled token (byte-identical result), and a token cancelled from
 * another thread while the compaction runs (paused in the summarizer
 * callback until that thread has cancelled, so the test never depends on
 * timing).
 *
 * Prints "N passed, M failed" and exits non-zero on any failure. */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"
#include "tests/capi/capi_temp_dir.h"

#define L(s) (s), strlen(s)

/* The integer after `"key":` in `json` (first occurrence), or -1. */
static long long json_number(const char* json, const char* key) {
  char pattern[128];
  const char* at;
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  at = json ? strstr(json, pattern) : NULL;
  if (at == NULL) return -1;
  return strtoll(at + strlen(pattern), NULL, 10);
}

/* A request: `members`, then a history of a system prompt, the task and
 * `turns` assistant messages of about 50 tokens, in a malloc'd buffer. */
static char* make_request(int turns, const char* members) {
  size_t cap = 4096 + (size_t)turns * 512;
  char* out = malloc(cap);
  size_t len = 0;
  int i;
  if (out == NULL) return NULL;
  len += (size_t)snprintf(out + len, cap - len,
                          "{%s\"messages\":[{\"role\":\"system\",\"content\":"
                          "\"You are a careful coding assistant.\"},"
                          "{\"role\":\"user\",\"content\":\"Fix the failing "
                          "test in src/parser.c please.\"}",
                          members);
  for (i = 0; i < turns; ++i) {
    len += (size_t)snprintf(
        out + len, cap - len,
        ",{\"role\":\"assistant\",\"content\":\"Step %d: I looked at "
        "src/module_%d.c and parse_item_%d, which checks the length field "
        "and copies the payload before returning.\"}",
        i, i, i);
  }
  snprintf(out + len, cap - len,
           ",{\"role\":\"user\",\"content\":\"Now tell me what you "
           "found.\"}]}");
  return out;
}

static void test_token(void) {
  ctxkit_cancel_token* token = NULL;
  char* error = NULL;
  EXPECT_ERROR(ctxkit_cancel_token_create(NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out");
  CHECK(ctxkit_cancel_token_create(&token, &error) == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(ctxkit_cancel_token_is_cancelled(token) == 0);
  ctxkit_cancel_token_cancel(token);
  CHECK(ctxkit_cancel_token_is_cancelled(token) == 1);
  ctxkit_cancel_token_cancel(token); /* idempotent */
  CHECK(ctxkit_cancel_token_is_cancelled(token) == 1);
  /* NULL is a no-op everywhere. */
  ctxkit_cancel_token_cancel(NULL);
  CHECK(ctxkit_cancel_token_is_cancelled(NULL) == 0);
  ctxkit_cancel_token_free(NULL);
  ctxkit_cancel_token_free(token);
}

static void test_before_and_never(void) {
  ctxkit_compactor* c = NULL;
  ctxkit_cancel_token* token = NULL;
  char* error = NULL;
  char* plain = NULL;
  char* checked = NULL;
  size_t plain_len = 0;
  size_t checked_len = 0;
  char* request = make_request(300, "\"max_tokens\":800,\"explain\":true,");
  CHECK(ctxkit_compactor_create(NULL, NULL, &c, &error) == CTXKIT_OK);
  CHECK(ctxkit_cancel_token_create(&token, &error) == CTXKIT_OK);

  /* Never cancelled: the same bytes as without a token. */
  CHECK(ctxkit_compactor_compact(c, L(request), &plain, &plain_len, &error) ==
        CTXKIT_OK);
  CHECK(ctxkit_compactor_compact_with_cancel(
            c, L(request), token, &checked, &checked_len, &error) == CTXKIT_OK);
  CHECK(plain != NULL && checked != NULL && plain_len == checked_len &&
        memcmp(plain, checked, plain_len) == 0);
  ctxkit_free(checked);

  /* Cancelled before: CANCELLED, nothing out. */
  ctxkit_cancel_token_cancel(token);
  checked = (char*)1;
  checked_len = 1;
  EXPECT_ERROR(ctxkit_compactor_compact_with_cancel(
                   c, L(request), token, &checked, &checked_len, &error),
               CTXKIT_CANCELLED, error, "compaction cancelled");
  CHECK(checked == NULL && checked_len == 0);

  /* The usual argument checks come first. */
  EXPECT_ERROR(ctxkit_compactor_compact_with_cancel(
                   NULL, L(request), token, &checked, &checked_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "compactor");

  ctxkit_free(plain);
  free(request);
  ctxkit_cancel_token_free(token);
  ctxkit_compactor_free(c);
}

/* The summarizer pauses the compaction on its first call until another
 * thread has cancelled the token. */
struct pause {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int reached;
  int calls;
  ctxkit_cancel_token* token;
};

static int pausing_summary(void* user_data, const char* span_json,
                           size_t span_len, const char* extractive,
                           size_t extractive_len, size_t max_tokens,
                           ctxkit_text* out) {
  struct pause* p = user_data;
  (void)span_json;
  (void)span_len;
  (void)max_tokens;
  pthread_mutex_lock(&p->mu);
  if (++p->calls == 1) {
    p->reached = 1;
    pthread_cond_broadcast(&p->cv);
    while (!ctxkit_cancel_token_is_cancelled(p->token)) {
      pthread_cond_wait(&p->cv, &p->mu);
    }
  }
  pthread_mutex_unlock(&p->mu);
  return ctxkit_text_set(out, extractive, extractive_len);
}

static void* cancel_when_reached(void* arg) {
  struct pause* p = arg;
  pthread_mutex_lock(&p->mu);
  while (!p->reached) pthread_cond_wait(&p->cv, &p->mu);
  ctxkit_cancel_token_cancel(p->token);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

static void test_other_thread(void) {
  ctxkit_compactor* c = NULL;
  char* error = NULL;
  char* json = NULL;
  size_t len = 0;
  pthread_t canceller;
  struct pause p;
  char* request = make_request(
      300,
      "\"max_tokens\":800,\"options\":{\"enable_llm_summarization\":"
      "true},");
  memset(&p, 0, sizeof p);
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  CHECK(ctxkit_cancel_token_create(&p.token, &error) == CTXKIT_OK);
  CHECK(ctxkit_compactor_create(NULL, NULL, &c, &error) == CTXKIT_OK);
  CHECK(ctxkit_compactor_set_summarizer(c, pausing_summary, &p, NULL, &error) ==
        CTXKIT_OK);
  CHECK(pthread_create(&canceller, NULL, cancel_when_reached, &p) == 0);
  EXPECT_ERROR(ctxkit_compactor_compact_with_cancel(c, L(request), p.token,
                                                    &json, &len, &error),
               CTXKIT_CANCELLED, error, "compaction cancelled");
  pthread_join(canceller, NULL);
  CHECK(json == NULL && len == 0);
  CHECK(p.calls == 1); /* never called again once cancelled */

  /* The same request without the token runs to the end. */
  CHECK(ctxkit_compactor_set_summarizer(c, NULL, NULL, NULL, &error) ==
        CTXKIT_OK);
  CHECK(ctxkit_compactor_compact_with_cancel(c, L(request), NULL, &json, &len,
                                             &error) == CTXKIT_OK);
  CHECK(json_number(json, "token_estimate") > 0);
  ctxkit_free(json);

  ctxkit_compactor_free(c);
  ctxkit_cancel_token_free(p.token);
  pthread_cond_destroy(&p.cv);
  pthread_mutex_destroy(&p.mu);
  free(request);
}

static void test_conversation(void) {
  char dir_template[] = "/tmp/ctxkit-cancel-capi.XXXXXX";
  char* dir = mkdtemp(dir_template);
  ctxkit_store* store = NULL;
  ctxkit_conversations* convs = NULL;
  ctxkit_compactor* c = NULL;
  ctxkit_cancel_token* token = NULL;
  char* error = NULL;
  char* json = NULL;
  size_t len = 0;
  char conv_id[64] = {0};
  const char* at;
  const char* options = "{\"max_tokens\":200}";
  int i;
  char messages[16384];
  size_t used = 0;

  CHECK(dir != NULL);
  if (dir == NULL) return;
  CHECK(ctxkit_store_open(L(dir), NULL, &store, &error) == CTXKIT_OK);
  CHECK(ctxkit_conversations_open(store, &convs, &error) == CTXKIT_OK);
  CHECK(ctxkit_compactor_create(NULL, NULL, &c, &error) == CTXKIT_OK);
  CHECK(ctxkit_cancel_token_create(&token, &error) == CTXKIT_OK);
  CHECK(ctxkit_conversations_create(convs, L("cancel me"), NULL, 0, NULL, 0,
                                    &json, &len, &error) == CTXKIT_OK);
  at = json ? strstr(json, "\"id\":\"") : NULL;
  if (at != NULL) memcpy(conv_id, at + 6, 36);
  ctxkit_free(json);
  used += (size_t)snprintf(messages + used, sizeof messages - used,
                           "[{\"role\":\"user\",\"content\":\"Plan it.\"}");
  for (i = 0; i < 60; ++i) {
    used += (size_t)snprintf(messages + used, sizeof messages - used,
                             ",{\"role\":\"assistant\",\"content\":\"Step %d "
                             "of the plan, with a few words more.\"}",
                             i);
  }
  snprintf(messages + used, sizeof messages - used, "]");
  CHECK(ctxkit_conversations_add_messages(convs, L(conv_id), L(messages), &json,
                                          &len, &error) == CTXKIT_OK);
  ctxkit_free(json);

  CHECK(ctxkit_compactor_compact_conversation_with_cancel(
            c, convs, L(conv_id), L(options), token, &json, &len, &error) ==
        CTXKIT_OK);
  CHECK(json_number(json, "view_version") == 1);
  ctxkit_free(json);

  ctxkit_cancel_token_cancel(token);
  EXPECT_ERROR(
      ctxkit_compactor_compact_conversation_with_cancel(
          c, convs, L(conv_id), L(options), token, &json, &len, &error),
      CTXKIT_CANCELLED, error, "compaction cancelled");
  CHECK(json == NULL);

  /* The cancelled call saved no view: the next one is version 2. */
  CHECK(ctxkit_compactor_compact_conversation(c, convs, L(conv_id), L(options),
                                              &json, &len,
                                              &error) == CTXKIT_OK);
  CHECK(json_number(json, "view_version") == 2);
  ctxkit_free(json);

  ctxkit_cancel_token_free(token);
  ctxkit_compactor_free(c);
  ctxkit_conversations_close(convs);
  ctxkit_store_close(store);
  remove_tree(dir);
}

int main(void) {
  test_token();
  test_before_and_never();
  test_other_thread();
  test_conversation();
  return capi_report();
}
