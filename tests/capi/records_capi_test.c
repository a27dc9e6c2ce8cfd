/* The record parts' C API (conversations, references, cache, query
 * optimizer, analytics), tested from C against the real library: every
 * operation's happy path, then a table of bad inputs,
 * each checked for its status code, a message naming the field, and that
 * nothing was written (the store's last transaction id and the records'
 * documents unchanged).
 *
 * Prints "N passed, M failed" and exits non-zero on any failure. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"
#include "tests/capi/capi_temp_dir.h"

static ctxkit_store* store = NULL;
static ctxkit_conversations* convs = NULL;
static ctxkit_references* refs = NULL;
static ctxkit_cache* cache = NULL;
static ctxkit_analytics* analytics = NULL;

static char conv_id[37];
static char conv2_id[37];
static char ref_id[37];
static char cache_key[128];

/* Optional numbers are passed by pointer (c.h). */
static const int64_t kMinusFive = -5;
static const int64_t kMinusOne = -1;
static const int64_t kMinute = 60000;
static const double kTenPercent = 10.0;

#define L(s) (s), strlen(s)

/* The unsigned integer after `"key":` in `json`, or -1 when absent. */
static long long json_number(const char* json, const char* key) {
  char pattern[128];
  const char* at;
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  at = json ? strstr(json, pattern) : NULL;
  if (at == NULL) return -1;
  return strtoll(at + strlen(pattern), NULL, 10);
}

/* Copies the string after `"key":"` (at most size - 1 bytes) into out. */
static int json_string(const char* json, const char* key, char* out,
                       size_t size) {
  char pattern[128];
  const char* at;
  size_t n = 0;
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  at = json ? strstr(json, pattern) : NULL;
  if (at == NULL) return 0;
  at += strlen(pattern);
  while (at[n] != '"' && at[n] != '\0' && n + 1 < size) ++n;
  memcpy(out, at, n);
  out[n] = '\0';
  return 1;
}

/* A JSON document must be a NUL-terminated object of the stated length that
 * begins with schema_version 1. */
static void check_doc(const char* json, size_t len, int line) {
  const char* prefix = "{\"schema_version\":1,";
  if (json == NULL || strlen(json) != len ||
      strncmp(json, prefix, strlen(prefix)) != 0 || json[len - 1] != '}') {
    fprintf(stderr, "line %d: not a schema_version 1 document: %s\n", line,
            json ? json : "(null)");
    CHECK(0);
  } else {
    CHECK(1);
  }
}

/* Runs a call that must succeed and return a document in `json`. */
#define EXPECT_DOC(call)                                                      \
  do {                                                                        \
    char* error_ = NULL;                                                      \
    int rc_;                                                                  \
    ctxkit_free(json);                                                        \
    json = NULL;                                                              \
    len = 0;                                                                  \
    rc_ = (call);                                                             \
    if (rc_ != CTXKIT_OK) {                                                   \
      fprintf(stderr, "line %d: %s: %s\n", __LINE__, ctxkit_status_name(rc_), \
              error_ ? error_ : "");                                          \
    }                                                                         \
    CHECK(rc_ == CTXKIT_OK);                                                  \
    CHECK(error_ == NULL);                                                    \
    ctxkit_free(error_);                                                      \
    check_doc(json, len, __LINE__);                                           \
  } while (0)
#define ERR (&error_)

#define HAS(needle)                                                         \
  do {                                                                      \
    if (!contains(json, needle)) {                                          \
      fprintf(stderr, "line %d: document lacks %s: %s\n", __LINE__, needle, \
              json ? json : "(null)");                                      \
    }                                                                       \
    CHECK(contains(json, needle));                                          \
  } while (0)

static long long last_transaction_id(void) {
  char* json = NULL;
  size_t len = 0;
  long long id;
  CHECK(ctxkit_store_info_json(store, &json, &len, NULL) == CTXKIT_OK);
  id = json_number(json, "last_transaction_id");
  ctxkit_free(json);
  return id;
}

static void test_open_close(void) {
  char* error = NULL;
  ctxkit_conversations* c = (ctxkit_conversations*)&error;
  EXPECT_ERROR(ctxkit_conversations_open(NULL, &c, &error),
               CTXKIT_INVALID_ARGUMENT, error, "store");
  CHECK(c == NULL);
  EXPECT_ERROR(ctxkit_cache_open(store, 0, 0, &kMinusFive, &cache, &error),
               CTXKIT_INVALID_ARGUMENT, error, "flush_interval_ms");
  CHECK(cache == NULL);
  EXPECT_ERROR(
      ctxkit_analytics_open(store, &kMinusOne, NULL, &analytics, &error),
      CTXKIT_INVALID_ARGUMENT, error, "retention_days");
  CHECK(analytics == NULL);
  EXPECT_ERROR(ctxkit_references_open(store, "", 0, &refs, &error),
               CTXKIT_INVALID_ARGUMENT, error, "model");
  CHECK(refs == NULL);

  CHECK(ctxkit_conversations_open(store, &convs, &error) == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(ctxkit_references_open(store, NULL, 0, &refs, NULL) == CTXKIT_OK);
  /* A long flush interval so that no background write happens while the
   * failure table compares transaction ids. */
  CHECK(ctxkit_cache_open(store, 0, 0, &kMinute, &cache, NULL) == CTXKIT_OK);
  CHECK(ctxkit_analytics_open(store, NULL, &kMinute, &analytics, NULL) ==
        CTXKIT_OK);
  CHECK(convs && refs && cache && analytics);
  ctxkit_conversations_close(NULL);
  ctxkit_references_close(NULL);
  ctxkit_cache_close(NULL);
  ctxkit_analytics_close(NULL);
}

static void test_conversations(void) {
  char* json = NULL;
  size_t len = 0;
  char cursor[256];
  static const char tool_calls[] =
      "[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
      "\"lookup\",\"arguments\":\"{\\\"q\\\":\\\"x\\\"}\"}}]";
  static const char batch[] =
      "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
      "{\"role\":\"tool\",\"content\":\"42\",\"tool_call_id\":\"call_1\"},"
      "{\"role\":\"user\",\"content\":\"Thanks\",\"name\":\"alice\","
      "\"is_compressed\":true}]";

  EXPECT_DOC(ctxkit_conversations_create(
      convs, L("Code Review Session"), NULL, 0,
      L("{\"project\":\"mcp-optimizer\",\"n\":[1,2.5]}"), &json, &len, ERR));
  HAS("\"conversation\":{\"id\":\"");
  HAS("\"title\":\"Code Review Session\"");
  HAS("\"model\":\"claude-3-5-sonnet\"");
  HAS("\"metadata\":{\"project\":\"mcp-optimizer\",\"n\":[1,2.5]}");
  HAS("\"total_tokens\":0");
  HAS("\"message_count\":0");
  CHECK(json_string(json, "id", conv_id, sizeof conv_id));
  CHECK(strlen(conv_id) == 36);

  EXPECT_DOC(ctxkit_conversations_add_message(
      convs, L(conv_id), L("user"),
      L("Please review this function: function add(a, b) { return a + b; }"),
      NULL, 0, NULL, 0, NULL, 0, 0, &json, &len, ERR));
  HAS("\"message\":{\"id\":\"");
  HAS("\"role\":\"user\"");
  HAS("\"message_count\":1");
  CHECK(!contains(json, "\"content\""));
  CHECK(json_number(json, "tokens") > 0);

  EXPECT_DOC(ctxkit_conversations_add_message(convs, L(conv_id), L("assistant"),
                                              "", 0, NULL, 0, L(tool_calls),
                                              NULL, 0, 0, &json, &len, ERR));
  HAS("\"tool_calls\":[{\"id\":\"call_1\"");
  HAS("\"message_count\":2");

  EXPECT_DOC(ctxkit_conversations_add_messages(convs, L(conv_id), L(batch),
                                               &json, &len, ERR));
  HAS("\"messages\":[{");
  HAS("\"role\":\"tool\"");
  HAS("\"tool_call_id\":\"call_1\"");
  HAS("\"name\":\"alice\"");
  HAS("\"is_compressed\":true");
  HAS("\"message_count\":5");
  HAS("\"compressed_count\":1");

  EXPECT_DOC(ctxkit_conversations_get(convs, L(conv_id), 1, &json, &len, ERR));
  HAS("\"messages\":[{");
  HAS("\"content\":\"Please review this function");
  HAS("\"seq\":5");
  HAS("\"actual_tokens\":");
  HAS("\"actual_tokens_exact\":");
  CHECK(json_number(json, "actual_tokens") > json_number(json, "total_tokens"));

  EXPECT_DOC(ctxkit_conversations_get(convs, L(conv_id), 0, &json, &len, ERR));
  CHECK(!contains(json, "\"messages\""));
  HAS("\"actual_tokens\":");

  EXPECT_DOC(ctxkit_conversations_create(convs, L("Second"), L("gpt-4o"), NULL,
                                         0, &json, &len, ERR));
  HAS("\"metadata\":{}");
  CHECK(json_string(json, "id", conv2_id, sizeof conv2_id));

  /* Pages of one: the newest first, then the cursor. */
  EXPECT_DOC(ctxkit_conversations_list(convs, 1, NULL, 0, &json, &len, ERR));
  HAS("\"total\":2");
  HAS("\"showing\":1");
  HAS(conv2_id);
  CHECK(json_string(json, "next_cursor", cursor, sizeof cursor));
  EXPECT_DOC(ctxkit_conversations_list(convs, 1, L(cursor), &json, &len, ERR));
  HAS(conv_id);
  HAS("\"next_cursor\":null");
  EXPECT_DOC(ctxkit_conversations_list(convs, 20, NULL, 0, &json, &len, ERR));
  HAS("\"showing\":2");

  EXPECT_DOC(ctxkit_conversations_update(convs, L(conv2_id), L("Renamed"), NULL,
                                         0, &json, &len, ERR));
  HAS("\"title\":\"Renamed\"");
  EXPECT_DOC(ctxkit_conversations_update(convs, L(conv2_id), NULL, 0,
                                         L("{\"k\":true}"), &json, &len, ERR));
  HAS("\"title\":\"Renamed\"");
  HAS("\"metadata\":{\"k\":true}");

  EXPECT_DOC(ctxkit_conversations_stats(convs, NULL, &json, &len, ERR));
  HAS("\"overview\":{\"total_conversations\":2,\"total_messages\":5");
  HAS("\"by_model\":{\"claude-3-5-sonnet\":{\"conversations\":1");
  HAS("\"gpt-4o\":{\"conversations\":1");
  HAS("\"trends\":{\"daily_average\":");
  HAS("\"peak_day\":\"");

  EXPECT_DOC(
      ctxkit_conversations_get_stats(convs, L(conv_id), 0, &json, &len, ERR));
  HAS("\"conversation_id\":\"");
  HAS("\"statistics\":{\"total_tokens\":");
  HAS("\"avg_tokens_per_message\":");
  HAS("\"timeline\":[{\"timestamp\":");
  HAS("\"token_limit\":{\"model_limit\":200000");
  HAS("\"status\":\"safe\"");
  EXPECT_DOC(
      ctxkit_conversations_get_stats(convs, L(conv_id), 2, &json, &len, ERR));
  CHECK(strstr(json, "cumulative_tokens") != NULL);

  EXPECT_DOC(ctxkit_conversations_tips(convs, NULL, 0, NULL, &json, &len, ERR));
  HAS("\"overview\":{\"total_conversations\":2");
  HAS("\"cache_hit_rate\":null"); /* not given */
  HAS("\"category\":\"best_practices\"");
  EXPECT_DOC(ctxkit_conversations_tips(convs, NULL, 0, &kTenPercent, &json,
                                       &len, ERR));
  HAS("\"cache_hit_rate\":10.0");
  HAS("\"category\":\"caching\",\"priority\":\"high\"");
  EXPECT_DOC(
      ctxkit_conversations_tips(convs, L(conv_id), NULL, &json, &len, ERR));
  HAS("\"conversation\":{\"id\":\"");
  HAS("\"current_tokens\":");
  HAS("\"tips\":[{\"category\":");

  ctxkit_free(json);
}

static void test_references(void) {
  char* json = NULL;
  size_t len = 0;
  char* error = NULL;
  char other_id[37];

  EXPECT_DOC(ctxkit_references_add(
      refs, L(conv_id), L("code"), L("Token Counter Implementation"),
      L("function countTokens(text: string): number { return 0; }"),
      L("{\"language\":\"typescript\"}"), &json, &len, ERR));
  HAS("\"reference\":{\"id\":\"");
  HAS("\"type\":\"code\"");
  HAS("\"preview\":\"function countTokens");
  CHECK(json_string(json, "id", ref_id, sizeof ref_id));
  CHECK(json_number(json, "tokens") > 0);

  EXPECT_DOC(ctxkit_references_add(refs, NULL, 0, L("note"), L("Standalone"),
                                   L("Notes about caching prompts"), NULL, 0,
                                   &json, &len, ERR));
  HAS("\"conversation_id\":null"); /* belongs to none */
  CHECK(json_string(json, "id", other_id, sizeof other_id));

  EXPECT_DOC(ctxkit_references_get(refs, L(ref_id), &json, &len, ERR));
  HAS("\"content\":\"function countTokens(text: string)");
  HAS("\"metadata\":{\"language\":\"typescript\"}");
  HAS(conv_id);

  EXPECT_DOC(ctxkit_references_list(refs, NULL, 0, 0, &json, &len, ERR));
  HAS("\"total\":2");
  HAS("\"statistics\":{\"total_references\":2");
  HAS("\"by_type\":{");
  CHECK(!contains(json, "\"content\""));
  EXPECT_DOC(ctxkit_references_list(refs, L(conv_id), 1, &json, &len, ERR));
  HAS("\"total\":1");
  HAS("\"content\":\"function countTokens");

  EXPECT_DOC(ctxkit_references_search(refs, L("token counter"), 10, NULL, 0,
                                      &json, &len, ERR));
  HAS("\"results\":[{\"id\":\"");
  /* Its title is the query and it is the only hit: the top of the scale. */
  HAS("\"relevance\":1.0");
  HAS("\"total_matches\":1");
  HAS(ref_id);
  EXPECT_DOC(ctxkit_references_search(refs, L("caching"), 5, L(conv_id), &json,
                                      &len, ERR));
  HAS("\"results\":[]");

  EXPECT_DOC(ctxkit_references_stats(refs, NULL, 0, &json, &len, ERR));
  HAS("\"total_references\":2");
  EXPECT_DOC(ctxkit_references_stats(refs, L(conv_id), &json, &len, ERR));
  HAS("\"total_references\":1");
  HAS("\"by_type\":{\"code\":1}");

  ctxkit_free(json);
  json = NULL;
  CHECK(ctxkit_references_delete(refs, L(other_id), &error) == CTXKIT_OK);
  CHECK(error == NULL);
  EXPECT_ERROR(ctxkit_references_get(refs, L(other_id), &json, &len, &error),
               CTXKIT_NOT_FOUND, error, other_id);
  CHECK(json == NULL && len == 0);
}

static void test_cache(void) {
  char* json = NULL;
  size_t len = 0;
  uint64_t n = 99;
  static const char prompt[] =
      "You are a helpful coding assistant specialized in TypeScript.";

  EXPECT_DOC(ctxkit_cache_put(cache, L(prompt), L("system-prompts"), 3600000,
                              NULL, 0, NULL, 0, &json, &len, ERR));
  HAS("\"key\":\"system-prompts:");
  HAS("\"already_cached\":false");
  CHECK(json_number(json, "expires_at") > 0);
  CHECK(json_string(json, "key", cache_key, sizeof cache_key));

  EXPECT_DOC(ctxkit_cache_put(cache, L(prompt), L("system-prompts"), 0, NULL, 0,
                              NULL, 0, &json, &len, ERR));
  HAS("\"already_cached\":true");
  HAS("\"expires_at\":null");

  EXPECT_DOC(ctxkit_cache_put(cache, L("tied to a conversation"), NULL, 0, 0,
                              L("gpt-4o"), L(conv_id), &json, &len, ERR));
  HAS("\"key\":\"default:");

  EXPECT_DOC(ctxkit_cache_get(cache, L(cache_key), &json, &len, ERR));
  HAS("\"content\":\"You are a helpful coding assistant");
  HAS("\"hit_count\":1");
  HAS("\"last_accessed\":");
  HAS("\"model\":\"claude-3-5-sonnet\"");
  HAS("\"conversation_id\":null");

  EXPECT_DOC(ctxkit_cache_check(cache, L(prompt), NULL, 0, &json, &len, ERR));
  HAS("\"exists\":true");
  HAS(cache_key);
  CHECK(json_number(json, "tokens_saved") > 0);
  EXPECT_DOC(
      ctxkit_cache_check(cache, L(prompt), L("other"), &json, &len, ERR));
  HAS("\"exists\":false,\"key\":null,\"tokens_saved\":0");

  CHECK(ctxkit_cache_flush(cache, NULL) == CTXKIT_OK);
  CHECK(ctxkit_cache_sweep(cache, &n, NULL) == CTXKIT_OK);
  CHECK(n == 0);
  EXPECT_DOC(ctxkit_cache_stats(cache, 10, &json, &len, ERR));
  HAS("\"overview\":{\"total_entries\":2");
  HAS("\"top_entries\":[{\"key\":\"system-prompts:");
  HAS("\"by_prefix\":{");
  CHECK(strstr(json + 1, "schema_version") == strstr(json, "schema_version"));

  /* The aggregate token statistics with the cache's figures: the hit on the
   * claude-3-5-sonnet entry saved its tokens for that model. */
  EXPECT_DOC(ctxkit_conversations_stats(convs, cache, &json, &len, ERR));
  CHECK(json_number(json, "total_cached_tokens") > 0);
  HAS("\"cached_tokens\":");
  HAS("\"cache_efficiency\":{\"cache_hit_rate\":");

  CHECK(ctxkit_cache_clear(cache, L("nothing-here"), &n, NULL) == CTXKIT_OK);
  CHECK(n == 0);
  ctxkit_free(json);
}

static void test_optimizer(void) {
  char* json = NULL;
  size_t len = 0;
  static const char query[] =
      "I was just wondering if you could maybe help me understand how to "
      "really optimize my prompts for better token usage, basically.";

  EXPECT_DOC(ctxkit_query_optimize(L(query), NULL, 0, NULL, 0, NULL, 0, 0,
                                   &json, &len, ERR));
  HAS("\"original\":{\"query\":\"I was just wondering");
  HAS("\"optimized\":{\"query\":\"");
  HAS("\"analysis\":{\"tokens_saved\":");
  HAS("\"optimization_goal\":\"both\"");
  CHECK(json_number(json, "tokens_saved") > 0);

  EXPECT_DOC(ctxkit_query_optimize(L(query), L("gpt-4o"), L("reduce_tokens"),
                                   L("Some context to send along."), 5, &json,
                                   &len, ERR));
  HAS("\"model\":\"gpt-4o\"");
  HAS("\"truncated\":true");
  HAS("\"context\":{\"tokens\":");
  ctxkit_free(json);
}

static void test_analytics(void) {
  char* json = NULL;
  size_t len = 0;
  uint64_t n = 99;
  const int64_t ts = 1700000000000LL; /* may predate retention: see below */
  char* error = NULL;

  CHECK(ctxkit_analytics_record(analytics, L("vector_db_search"), 1500, 1, NULL,
                                &error) == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(ctxkit_analytics_record(analytics, L("vector_db_search"), 2500, 0, NULL,
                                NULL) == CTXKIT_OK);
  CHECK(ctxkit_analytics_record(analytics, L("llm_summarize"), 10, 1, NULL,
                                NULL) == CTXKIT_OK);
  CHECK(ctxkit_analytics_flush(analytics, NULL) == CTXKIT_OK);

  CHECK(ctxkit_analytics_call_count(analytics, L("vector_db_search"), &n,
                                    NULL) == CTXKIT_OK);
  CHECK(n == 2);
  EXPECT_DOC(ctxkit_analytics_query(analytics, 0, 253402300799999LL, &json,
                                    &len, ERR));
  HAS("\"total_calls\":3");
  HAS("\"total_errors\":1");
  HAS("\"calls_by_type\":{");
  HAS("\"vector_db_search\":2");
  EXPECT_DOC(ctxkit_analytics_calls(analytics, 0, 253402300799999LL, 2, &json,
                                    &len, ERR));
  HAS("\"calls\":[{\"type\":\"");
  HAS("\"duration_us\":1500");
  CHECK(json_number(json, "timestamp") > 0);

  /* A call far older than retention is accepted and purged. */
  CHECK(ctxkit_analytics_record(analytics, L("old_call"), 1, 1, &ts, NULL) ==
        CTXKIT_OK);
  CHECK(ctxkit_analytics_purge(analytics, &n, NULL) == CTXKIT_OK);
  CHECK(n == 1);
  CHECK(ctxkit_analytics_call_count(analytics, L("old_call"), &n, NULL) ==
        CTXKIT_OK);
  CHECK(n == 0);
  ctxkit_free(json);
}

/* ---- The failure table ------------------------------------------------- */

enum Op {
  CONV_CREATE,
  CONV_ADD,
  CONV_ADD_MANY,
  CONV_GET,
  CONV_LIST,
  CONV_UPDATE,
  CONV_DELETE,
  CONV_STATS_ONE,
  CONV_TIPS,
  REF_ADD,
  REF_GET,
  REF_DELETE,
  REF_SEARCH,
  REF_LIST,
  CACHE_PUT,
  CACHE_GET,
  CACHE_CHECK,
  CACHE_CLEAR,
  CACHE_STATS,
  OPTIMIZE,
  AN_RECORD,
  AN_CALLS,
  AN_COUNT
};

typedef struct {
  const char* p;
  size_t n;
} Str;

typedef struct {
  const char* what;
  enum Op op;
  Str a, b, c, d, e, f;
  int64_t n;
  int want;
  const char* needle;
} Case;

static int run_case(const Case* k, char** error) {
  char* json = NULL;
  size_t len = 0;
  uint64_t count = 0;
  int rc = CTXKIT_UNKNOWN;
  switch (k->op) {
    case CONV_CREATE:
      rc = ctxkit_conversations_create(convs, k->a.p, k->a.n, k->b.p, k->b.n,
                                       k->c.p, k->c.n, &json, &len, error);
      break;
    case CONV_ADD:
      rc = ctxkit_conversations_add_message(
          convs, k->a.p, k->a.n, k->b.p, k->b.n, k->c.p, k->c.n, k->d.p, k->d.n,
          k->e.p, k->e.n, k->f.p, k->f.n, 0, &json, &len, error);
      break;
    case CONV_ADD_MANY:
      rc = ctxkit_conversations_add_messages(convs, k->a.p, k->a.n, k->b.p,
                                             k->b.n, &json, &len, error);
      break;
    case CONV_GET:
      rc = ctxkit_conversations_get(convs, k->a.p, k->a.n, 1, &json, &len,
                                    error);
      break;
    case CONV_LIST:
      rc = ctxkit_conversations_list(convs, k->n, k->a.p, k->a.n, &json, &len,
                                     error);
      break;
    case CONV_UPDATE:
      rc = ctxkit_conversations_update(convs, k->a.p, k->a.n, k->b.p, k->b.n,
                                       k->c.p, k->c.n, &json, &len, error);
      break;
    case CONV_DELETE:
      rc = ctxkit_conversations_delete(convs, k->a.p, k->a.n, &json, &len,
                                       error);
      break;
    case CONV_STATS_ONE:
      rc = ctxkit_conversations_get_stats(convs, k->a.p, k->a.n, 0, &json, &len,
                                          error);
      break;
    case CONV_TIPS: {
      const double rate = (double)k->n;
      rc = ctxkit_conversations_tips(convs, k->a.p, k->a.n, &rate, &json, &len,
                                     error);
    } break;
    case REF_ADD:
      rc = ctxkit_references_add(refs, k->a.p, k->a.n, k->b.p, k->b.n, k->c.p,
                                 k->c.n, k->d.p, k->d.n, k->e.p, k->e.n, &json,
                                 &len, error);
      break;
    case REF_GET:
      rc = ctxkit_references_get(refs, k->a.p, k->a.n, &json, &len, error);
      break;
    case REF_DELETE:
      rc = ctxkit_references_delete(refs, k->a.p, k->a.n, error);
      break;
    case REF_SEARCH:
      rc = ctxkit_references_search(refs, k->a.p, k->a.n, k->n, k->b.p, k->b.n,
                                    &json, &len, error);
      break;
    case REF_LIST:
      rc = ctxkit_references_list(refs, k->a.p, k->a.n, 0, &json, &len, error);
      break;
    case CACHE_PUT:
      rc = ctxkit_cache_put(cache, k->a.p, k->a.n, k->b.p, k->b.n, k->n, k->c.p,
                            k->c.n, k->d.p, k->d.n, &json, &len, error);
      break;
    case CACHE_GET:
      rc = ctxkit_cache_get(cache, k->a.p, k->a.n, &json, &len, error);
      break;
    case CACHE_CHECK:
      rc = ctxkit_cache_check(cache, k->a.p, k->a.n, k->b.p, k->b.n, &json,
                              &len, error);
      break;
    case CACHE_CLEAR:
      rc = ctxkit_cache_clear(cache, k->a.p, k->a.n, &count, error);
      break;
    case CACHE_STATS:
      rc = ctxkit_cache_stats(cache, k->n, &json, &len, error);
      break;
    case OPTIMIZE:
      rc = ctxkit_query_optimize(k->a.p, k->a.n, k->b.p, k->b.n, k->c.p, k->c.n,
                                 NULL, 0, k->n, &json, &len, error);
      break;
    case AN_RECORD:
      rc = ctxkit_analytics_record(
          analytics, k->a.p, k->a.n, k->n, 1,
          k->b.p ? (const int64_t*)(const void*)k->b.p : NULL, error);
      break;
    case AN_CALLS:
      rc = ctxkit_analytics_calls(analytics, 0, 1, k->n, &json, &len, error);
      break;
    case AN_COUNT:
      rc =
          ctxkit_analytics_call_count(analytics, k->a.p, k->a.n, &count, error);
      break;
  }
  /* Failed calls leave every out parameter empty. */
  CHECK(json == NULL && len == 0 && count == 0);
  ctxkit_free(json);
  return rc;
}

/* What must not change when a call fails. */
typedef struct {
  long long txn;
  char* conversation;
  char* aggregate;
  char* references;
} Snapshot;

static void take(Snapshot* s) {
  size_t len;
  s->txn = last_transaction_id();
  s->conversation = s->aggregate = s->references = NULL;
  CHECK(ctxkit_conversations_get(convs, L(conv_id), 1, &s->conversation, &len,
                                 NULL) == CTXKIT_OK);
  CHECK(ctxkit_conversations_stats(convs, NULL, &s->aggregate, &len, NULL) ==
        CTXKIT_OK);
  CHECK(ctxkit_references_list(refs, NULL, 0, 1, &s->references, &len, NULL) ==
        CTXKIT_OK);
}

static int same(const char* a, const char* b) {
  return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static void release(Snapshot* s) {
  ctxkit_free(s->conversation);
  ctxkit_free(s->aggregate);
  ctxkit_free(s->references);
}

#define S(lit) \
  { lit, sizeof(lit) - 1 }
#define NONE \
  { NULL, 0 }

static char* filled(size_t n, char c) {
  char* p = (char*)malloc(n + 1);
  if (p == NULL) abort();
  memset(p, c, n);
  p[n] = '\0';
  return p;
}

static void test_failures(void) {
  const size_t k16m = (size_t)16 << 20;
  char* big = filled(k16m + 1, 'a');   /* over every 16 MiB content limit */
  char* kib = filled(1025, 't');       /* over the 1 KiB title limits */
  char* name = filled(257, 'n');       /* over name / tool_call_id limits */
  char* query = filled(65537, 'q');    /* over the optimizer's 64 KiB */
  char* prefix = filled(65, 'p');      /* over the cache prefix limit */
  char* meta = filled(65537 + 8, ' '); /* a 64 KiB + 9 byte JSON object */
  static const char unknown[] = "00000000-0000-4000-8000-000000000000";
  static const char bad_key[] = "default:00000000000000000000000000000000";
  const int64_t neg_ts = -5;
  Str c1, big_s, kib_s, name_s, query_s, prefix_s, meta_s;
  size_t i;
  meta[0] = '{';
  meta[65537 + 7] = '}';
  c1.p = conv_id;
  c1.n = strlen(conv_id);
  big_s.p = big;
  big_s.n = k16m + 1;
  kib_s.p = kib;
  kib_s.n = 1025;
  name_s.p = name;
  name_s.n = 257;
  query_s.p = query;
  query_s.n = 65537;
  prefix_s.p = prefix;
  prefix_s.n = 65;
  meta_s.p = meta;
  meta_s.n = 65537 + 8;
  {
    const Str none = NONE;
    const Str user = S("user");
    const Str text = S("some text");
    const Str unk = S(unknown);
    const Str ts = {(const char*)(const void*)&neg_ts, 0};
    const Case cases[] = {
        /* Unknown ids and keys. */
        {"conv get unknown", CONV_GET, unk, none, none, none, none, none, 0,
         CTXKIT_NOT_FOUND, unknown},
        {"conv add unknown", CONV_ADD, unk, user, text, none, none, none, 0,
         CTXKIT_NOT_FOUND, unknown},
        {"conv add_many unknown", CONV_ADD_MANY, unk,
         S("[{\"role\":\"user\",\"content\":\"x\"}]"), none, none, none, none,
         0, CTXKIT_NOT_FOUND, unknown},
        {"conv update unknown", CONV_UPDATE, unk, S("t"), none, none, none,
         none, 0, CTXKIT_NOT_FOUND, unknown},
        {"conv delete unknown", CONV_DELETE, unk, none, none, none, none, none,
         0, CTXKIT_NOT_FOUND, unknown},
        {"conv stats unknown", CONV_STATS_ONE, unk, none, none, none, none,
         none, 0, CTXKIT_NOT_FOUND, unknown},
        {"ref get unknown", REF_GET, unk, none, none, none, none, none, 0,
         CTXKIT_NOT_FOUND, unknown},
        {"ref delete unknown", REF_DELETE, unk, none, none, none, none, none, 0,
         CTXKIT_NOT_FOUND, unknown},
        {"ref add unknown conversation", REF_ADD, unk, S("note"), S("t"),
         S("c"), none, none, 0, CTXKIT_NOT_FOUND, unknown},
        {"ref list unknown conversation", REF_LIST, unk, none, none, none, none,
         none, 0, CTXKIT_NOT_FOUND, unknown},
        {"cache get unknown key", CACHE_GET, S(bad_key), none, none, none, none,
         none, 0, CTXKIT_NOT_FOUND, "default:0000"},
        {"cache put unknown conversation", CACHE_PUT, text, none, none, unk,
         none, none, 0, CTXKIT_NOT_FOUND, unknown},
        /* Malformed ids and keys. */
        {"conv get malformed id", CONV_GET, S("not-a-uuid"), none, none, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "id"},
        {"conv add malformed id", CONV_ADD, S("xyz"), user, text, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "conversation_id"},
        {"ref get malformed id", REF_GET, S("1234"), none, none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "id"},
        {"cache get malformed key", CACHE_GET, S("no-colon"), none, none, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "key"},
        /* Roles and types. */
        {"invalid role", CONV_ADD, c1, S("wizard"), text, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "role"},
        {"empty role", CONV_ADD, c1, S(""), text, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "role"},
        {"invalid role in batch", CONV_ADD_MANY, c1,
         S("[{\"role\":\"user\",\"content\":\"a\"},"
           "{\"role\":\"robot\",\"content\":\"b\"}]"),
         none, none, none, none, 0, CTXKIT_INVALID_ARGUMENT,
         "messages[1].role"},
        {"invalid reference type", REF_ADD, none, S("video"), S("t"), S("c"),
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "type"},
        {"tool_calls on a user message", CONV_ADD, c1, user, text, none,
         S("[]"), none, 0, CTXKIT_INVALID_ARGUMENT, "tool_calls"},
        {"tool_call_id on a user message", CONV_ADD, c1, user, text, none, none,
         S("call_9"), 0, CTXKIT_INVALID_ARGUMENT, "tool_call_id"},
        {"malformed tool_calls", CONV_ADD, c1, S("assistant"), text, none,
         S("[{\"function\":{}}]"), none, 0, CTXKIT_INVALID_ARGUMENT,
         "tool_calls[0].function.name"},
        /* Empty required fields. */
        {"empty title", CONV_CREATE, S(""), none, none, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "title"},
        {"absent title", CONV_CREATE, none, none, none, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "title"},
        {"empty model", CONV_CREATE, S("t"), S(""), none, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "model"},
        {"update to an empty title", CONV_UPDATE, c1, S(""), none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "title"},
        {"update with nothing", CONV_UPDATE, c1, none, none, none, none, none,
         0, CTXKIT_INVALID_ARGUMENT, "title or metadata"},
        {"empty reference title", REF_ADD, none, S("note"), S(""), S("c"), none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "title"},
        {"empty reference content", REF_ADD, none, S("note"), S("t"), S(""),
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "content"},
        {"empty cache content", CACHE_PUT, S(""), none, none, none, none, none,
         0, CTXKIT_INVALID_ARGUMENT, "content"},
        {"empty search query", REF_SEARCH, S(""), none, none, none, none, none,
         10, CTXKIT_INVALID_ARGUMENT, "query"},
        {"query without terms", REF_SEARCH, S("!!! ???"), none, none, none,
         none, none, 10, CTXKIT_INVALID_ARGUMENT, "query"},
        {"empty optimizer query", OPTIMIZE, S(""), none, none, none, none, none,
         0, CTXKIT_INVALID_ARGUMENT, "query"},
        /* Limits. */
        {"list limit -1", CONV_LIST, none, none, none, none, none, none, -1,
         CTXKIT_INVALID_ARGUMENT, "limit"},
        {"list limit 0", CONV_LIST, none, none, none, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "limit"},
        {"list limit 1001", CONV_LIST, none, none, none, none, none, none, 1001,
         CTXKIT_INVALID_ARGUMENT, "limit"},
        {"list limit 2^40", CONV_LIST, none, none, none, none, none, none,
         (int64_t)1 << 40, CTXKIT_INVALID_ARGUMENT, "limit"},
        {"search limit -3", REF_SEARCH, S("token"), none, none, none, none,
         none, -3, CTXKIT_INVALID_ARGUMENT, "limit"},
        {"search limit 0", REF_SEARCH, S("token"), none, none, none, none, none,
         0, CTXKIT_INVALID_ARGUMENT, "limit"},
        {"search limit 101", REF_SEARCH, S("token"), none, none, none, none,
         none, 101, CTXKIT_INVALID_ARGUMENT, "limit"},
        {"search limit INT64_MAX", REF_SEARCH, S("token"), none, none, none,
         none, none, INT64_MAX, CTXKIT_INVALID_ARGUMENT, "limit"},
        {"calls limit 0", AN_CALLS, none, none, none, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "limit"},
        {"calls limit -1", AN_CALLS, none, none, none, none, none, none, -1,
         CTXKIT_INVALID_ARGUMENT, "limit"},
        {"calls limit huge", AN_CALLS, none, none, none, none, none, none,
         INT64_MAX, CTXKIT_INVALID_ARGUMENT, "limit"},
        {"cache top_n -1", CACHE_STATS, none, none, none, none, none, none, -1,
         CTXKIT_INVALID_ARGUMENT, "top_n"},
        {"cache top_n huge", CACHE_STATS, none, none, none, none, none, none,
         1000000, CTXKIT_INVALID_ARGUMENT, "top_n"},
        {"max_tokens -1", OPTIMIZE, S("hello there"), none, none, none, none,
         none, -1, CTXKIT_INVALID_ARGUMENT, "max_tokens"},
        {"max_tokens huge", OPTIMIZE, S("hello there"), none, none, none, none,
         none, INT64_MAX, CTXKIT_INVALID_ARGUMENT, "max_tokens"},
        {"cache hit rate 150", CONV_TIPS, none, none, none, none, none, none,
         150, CTXKIT_INVALID_ARGUMENT, "cache_hit_rate"},
        /* TTLs. */
        {"negative TTL", CACHE_PUT, text, none, none, none, none, none, -1,
         CTXKIT_INVALID_ARGUMENT, "ttl_ms"},
        {"absurd TTL", CACHE_PUT, text, none, none, none, none, none, INT64_MAX,
         CTXKIT_INVALID_ARGUMENT, "ttl_ms"},
        /* Invalid UTF-8. */
        {"invalid UTF-8 title", CONV_CREATE, S("ab\xff"), none, none, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "title"},
        {"invalid UTF-8 updated title", CONV_UPDATE, c1, S("\xc3"), none, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "title"},
        {"invalid UTF-8 content", CONV_ADD, c1, user, S("caf\xc3"), none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "content"},
        {"invalid UTF-8 name", CONV_ADD, c1, user, text, S("\xed\xa0\x80"),
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "name"},
        {"invalid UTF-8 in batch", CONV_ADD_MANY, c1,
         S("[{\"role\":\"user\",\"content\":\"\xff\"}]"), none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "messages"},
        {"invalid UTF-8 metadata", CONV_CREATE, S("t"), none,
         S("{\"a\":\"\xfe\"}"), none, none, none, 0, CTXKIT_INVALID_ARGUMENT,
         "metadata"},
        {"invalid UTF-8 reference title", REF_ADD, none, S("note"), S("\x80"),
         S("c"), none, none, 0, CTXKIT_INVALID_ARGUMENT, "title"},
        {"invalid UTF-8 reference content", REF_ADD, none, S("note"), S("t"),
         S("x\xc0\xaf"), none, none, 0, CTXKIT_INVALID_ARGUMENT, "content"},
        {"invalid UTF-8 reference metadata", REF_ADD, none, S("note"), S("t"),
         S("c"), S("{\"\xff\":1}"), none, 0, CTXKIT_INVALID_ARGUMENT,
         "metadata"},
        {"invalid UTF-8 search query", REF_SEARCH, S("tok\xff"), none, none,
         none, none, none, 10, CTXKIT_INVALID_ARGUMENT, "query"},
        {"invalid UTF-8 cache content", CACHE_PUT, S("\xff\xfe"), none, none,
         none, none, none, 0, CTXKIT_INVALID_ARGUMENT, "content"},
        {"invalid UTF-8 cache check", CACHE_CHECK, S("\xff"), none, none, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "content"},
        {"invalid UTF-8 optimizer query", OPTIMIZE, S("fix \xff"), none, none,
         none, none, none, 0, CTXKIT_INVALID_ARGUMENT, "query"},
        {"invalid UTF-8 analytics type", AN_RECORD, S("\xff"), none, none, none,
         none, none, 1, CTXKIT_INVALID_ARGUMENT, "type"},
        /* Oversized fields, each just over its documented limit. */
        {"title over 1 KiB", CONV_CREATE, kib_s, none, none, none, none, none,
         0, CTXKIT_INVALID_ARGUMENT, "title"},
        {"content over 16 MiB", CONV_ADD, c1, user, big_s, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "content"},
        {"name over 256 bytes", CONV_ADD, c1, user, text, name_s, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "name"},
        {"tool_call_id over 256 bytes", CONV_ADD, c1, S("tool"), text, none,
         none, name_s, 0, CTXKIT_INVALID_ARGUMENT, "tool_call_id"},
        {"model over 256 bytes", CONV_CREATE, S("t"), name_s, none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "model"},
        {"metadata over 64 KiB", CONV_CREATE, S("t"), none, meta_s, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"updated metadata over 64 KiB", CONV_UPDATE, c1, none, meta_s, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"reference title over 1 KiB", REF_ADD, none, S("note"), kib_s, S("c"),
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "title"},
        {"reference content over 16 MiB", REF_ADD, none, S("note"), S("t"),
         big_s, none, none, 0, CTXKIT_INVALID_ARGUMENT, "content"},
        {"reference metadata over 64 KiB", REF_ADD, none, S("note"), S("t"),
         S("c"), meta_s, none, 0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"search query over 4 KiB", REF_SEARCH, query_s, none, none, none, none,
         none, 10, CTXKIT_INVALID_ARGUMENT, "query"},
        {"cache content over 16 MiB", CACHE_PUT, big_s, none, none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "content"},
        {"cache model over 128 bytes", CACHE_PUT, text, none, name_s, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "model"},
        {"optimizer query over 64 KiB", OPTIMIZE, query_s, none, none, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "query"},
        {"analytics type over 64 bytes", AN_RECORD, prefix_s, none, none, none,
         none, none, 1, CTXKIT_INVALID_ARGUMENT, "type"},
        /* Metadata that is not an object; malformed JSON. */
        {"array metadata", CONV_CREATE, S("t"), none, S("[1,2]"), none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"string metadata", CONV_UPDATE, c1, none, S("\"x\""), none, none, none,
         0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"malformed metadata", CONV_CREATE, S("t"), none, S("{\"a\":"), none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"empty metadata", CONV_CREATE, S("t"), none, S(""), none, none, none,
         0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"reference array metadata", REF_ADD, none, S("note"), S("t"), S("c"),
         S("[]"), none, 0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"reference empty metadata", REF_ADD, none, S("note"), S("t"), S("c"),
         S(""), none, 0, CTXKIT_INVALID_ARGUMENT, "metadata"},
        {"malformed messages JSON", CONV_ADD_MANY, c1, S("[{\"role\":"), none,
         none, none, none, 0, CTXKIT_INVALID_ARGUMENT, "messages"},
        {"messages not an array", CONV_ADD_MANY, c1, S("{}"), none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "messages"},
        {"empty messages array", CONV_ADD_MANY, c1, S("[]"), none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "messages"},
        {"message without content", CONV_ADD_MANY, c1,
         S("[{\"role\":\"user\"}]"), none, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "messages[0].content"},
        {"message content not a string", CONV_ADD_MANY, c1,
         S("[{\"role\":\"user\",\"content\":1}]"), none, none, none, none, 0,
         CTXKIT_INVALID_ARGUMENT, "messages[0].content"},
        {"misspelled message member", CONV_ADD_MANY, c1,
         S("[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"tool\","
           "\"content\":\"b\",\"tool_call\":\"c1\"}]"),
         none, none, none, none, 0, CTXKIT_INVALID_ARGUMENT,
         "messages[1]: unknown key 'tool_call'; did you mean 'tool_calls'?"},
        {"malformed tool_calls JSON", CONV_ADD, c1, S("assistant"), text, none,
         S("[{"), none, 0, CTXKIT_INVALID_ARGUMENT, "tool_calls"},
        /* Cursors, prefixes, goals, analytics types. */
        {"bad cursor", CONV_LIST, S("garbage"), none, none, none, none, none,
         10, CTXKIT_INVALID_ARGUMENT, "cursor"},
        {"bad prefix on put", CACHE_PUT, text, S("bad prefix!"), none, none,
         none, none, 0, CTXKIT_INVALID_ARGUMENT, "prefix"},
        {"empty prefix on put", CACHE_PUT, text, S(""), none, none, none, none,
         0, CTXKIT_INVALID_ARGUMENT, "prefix"},
        {"prefix over 64 bytes", CACHE_PUT, text, prefix_s, none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "prefix"},
        {"bad prefix on check", CACHE_CHECK, text, S("a/b"), none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "prefix"},
        {"bad prefix on clear", CACHE_CLEAR, S("x y"), none, none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "prefix"},
        {"bad optimization goal", OPTIMIZE, S("hello there"), none, S("faster"),
         none, none, none, 0, CTXKIT_INVALID_ARGUMENT, "optimization_goal"},
        {"bad analytics type", AN_RECORD, S("Bad Type"), none, none, none, none,
         none, 1, CTXKIT_INVALID_ARGUMENT, "type"},
        {"empty analytics type", AN_RECORD, S(""), none, none, none, none, none,
         1, CTXKIT_INVALID_ARGUMENT, "type"},
        {"negative duration", AN_RECORD, S("compact"), none, none, none, none,
         none, -1, CTXKIT_INVALID_ARGUMENT, "duration_us"},
        {"absurd duration", AN_RECORD, S("compact"), none, none, none, none,
         none, INT64_MAX, CTXKIT_INVALID_ARGUMENT, "duration_us"},
        {"negative timestamp", AN_RECORD, S("compact"), ts, none, none, none,
         none, 1, CTXKIT_INVALID_ARGUMENT, "timestamp_ms"},
        {"bad call_count type", AN_COUNT, S("UPPER"), none, none, none, none,
         none, 0, CTXKIT_INVALID_ARGUMENT, "type"},
        /* NULL with a length. */
        {"NULL title with a length",
         CONV_CREATE,
         {NULL, 3},
         none,
         none,
         none,
         none,
         none,
         0,
         CTXKIT_INVALID_ARGUMENT,
         "title"},
        {"NULL content with a length",
         CACHE_PUT,
         {NULL, 1},
         none,
         none,
         none,
         none,
         none,
         0,
         CTXKIT_INVALID_ARGUMENT,
         "content"},
    };
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
      Snapshot before, after;
      char* error = NULL;
      int rc;
      take(&before);
      rc = run_case(&cases[i], &error);
      take(&after);
      if (rc != cases[i].want || !contains(error, cases[i].needle)) {
        fprintf(stderr, "case \"%s\": got %s (%s), want %s naming \"%s\"\n",
                cases[i].what, ctxkit_status_name(rc),
                error ? error : "no message", ctxkit_status_name(cases[i].want),
                cases[i].needle);
      }
      CHECK(rc == cases[i].want);
      CHECK(contains(error, cases[i].needle));
      if (before.txn != after.txn ||
          !same(before.conversation, after.conversation) ||
          !same(before.aggregate, after.aggregate) ||
          !same(before.references, after.references)) {
        fprintf(stderr, "case \"%s\": the store changed (txn %lld -> %lld)\n",
                cases[i].what, before.txn, after.txn);
        CHECK(0);
      } else {
        CHECK(1);
      }
      ctxkit_free(error);
      release(&before);
      release(&after);
    }
    printf("%u failure cases\n", (unsigned)(sizeof cases / sizeof cases[0]));
  }
  free(big);
  free(kib);
  free(name);
  free(query);
  free(prefix);
  free(meta);
}

/* Argument errors of the C layer itself. */
static void test_null_arguments(void) {
  char* error = NULL;
  char* json = NULL;
  size_t len = 0;
  uint64_t n = 0;
  EXPECT_ERROR(ctxkit_conversations_create(NULL, L("t"), NULL, 0, NULL, 0,
                                           &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "convs");
  EXPECT_ERROR(
      ctxkit_conversations_get(convs, L(conv_id), 1, NULL, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "out_json");
  EXPECT_ERROR(ctxkit_references_delete(NULL, L(ref_id), &error),
               CTXKIT_INVALID_ARGUMENT, error, "refs");
  EXPECT_ERROR(ctxkit_cache_flush(NULL, &error), CTXKIT_INVALID_ARGUMENT, error,
               "cache");
  EXPECT_ERROR(ctxkit_analytics_call_count(analytics, L("x"), NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_count");
  EXPECT_ERROR(ctxkit_query_optimize(L("hi"), NULL, 0, NULL, 0, NULL, 0, 0,
                                     NULL, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_json");
  /* Without out_error the code still comes back. */
  CHECK(ctxkit_analytics_purge(NULL, &n, NULL) == CTXKIT_INVALID_ARGUMENT);
}

/* Deleting a conversation takes its references and cached results along. */
static void test_delete_cascade(void) {
  char* json = NULL;
  size_t len = 0;
  char* error = NULL;
  EXPECT_DOC(ctxkit_conversations_delete(convs, L(conv_id), &json, &len, ERR));
  HAS("\"deleted\":true");
  HAS("\"messages_deleted\":5");
  CHECK(json_number(json, "dependent_records_deleted") >= 2);
  ctxkit_free(json);
  json = NULL;
  EXPECT_ERROR(
      ctxkit_conversations_get(convs, L(conv_id), 0, &json, &len, &error),
      CTXKIT_NOT_FOUND, error, conv_id);
  EXPECT_ERROR(ctxkit_references_get(refs, L(ref_id), &json, &len, &error),
               CTXKIT_NOT_FOUND, error, ref_id);
  EXPECT_DOC(ctxkit_conversations_stats(convs, NULL, &json, &len, ERR));
  HAS("\"total_conversations\":1,\"total_messages\":0");
  ctxkit_free(json);
}

int main(void) {
  char root[256];
  char path[300];
  const char* base = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/ctxkit-records-XXXXXX",
           base && *base ? base : "/tmp");
  if (mkdtemp(root) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  snprintf(path, sizeof path, "%s/store", root);
  if (ctxkit_store_open(L(path), NULL, &store, NULL) != CTXKIT_OK) {
    fprintf(stderr, "cannot open the store\n");
    return 2;
  }
  test_open_close();
  if (convs && refs && cache && analytics) {
    test_conversations();
    test_references();
    test_cache();
    test_optimizer();
    test_analytics();
    test_failures();
    test_null_arguments();
    test_delete_cascade();
  }
  ctxkit_analytics_close(analytics);
  ctxkit_cache_close(cache);
  ctxkit_references_close(refs);
  ctxkit_conversations_close(convs);
  ctxkit_store_close(store);
  remove_tree(root);
  return capi_report();
}
