/* The context graph's C API, tested from C against the real library:
 * open with options (and unknown or out-of-range options refused, naming
 * them), each typed call and its document, errors naming the field with
 * nothing changed, the seed's context_memory protocol and tool calls, and a
 * summarizer callback whose text the summary carries, replaced and then
 * released by its destroy callback exactly once; call records in an
 * analytics handle and the metrics document over them; the hashed embedder
 * and a C embedder callback (failing, then working, then removed) with
 * vector similarity, and its destroy callback run exactly once.
 *
 * Prints "N passed, M failed" and exits non-zero on any failure. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"
#include "tests/capi/capi_temp_dir.h"

#define L(s) (s), strlen(s)
#define ERR &error

static ctxkit_store* store = NULL;
static ctxkit_conversations* convs = NULL;
static ctxkit_graph* graph = NULL;
static char* error = NULL;
static char* json = NULL;
static size_t len = 0;

/* A call that must succeed with a document containing `needle`. */
static void expect_doc(int rc, const char* needle, int line) {
  if (rc != CTXKIT_OK) {
    fprintf(stderr, "line %d: %s (%s)\n", line, ctxkit_status_name(rc),
            error ? error : "no message");
  }
  CHECK(rc == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(json != NULL && strlen(json) == len);
  if (needle != NULL && !contains(json, needle)) {
    fprintf(stderr, "line %d: document %s lacks %s\n", line,
            json ? json : "(null)", needle);
    CHECK(0);
  }
  ctxkit_free(json);
  json = NULL;
  ctxkit_free(error);
  error = NULL;
}
#define EXPECT_DOC(call, needle)         \
  do {                                   \
    const int rc_ = (call);              \
    expect_doc(rc_, (needle), __LINE__); \
  } while (0)

static void test_open(void) {
  ctxkit_graph* g = NULL;
  EXPECT_ERROR(ctxkit_graph_open(store, convs, NULL,
                                 L("{\"autoSumarize\":false}"), &g, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "autoSummarize");
  CHECK(g == NULL);
  EXPECT_ERROR(ctxkit_graph_open(store, convs, NULL, L("{\"cleanupEvery\":-1}"),
                                 &g, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "cleanupEvery");
  EXPECT_ERROR(ctxkit_graph_open(store, convs, NULL,
                                 L("{\"cleanupMode\":\"burn\"}"), &g, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "cleanupMode");
  EXPECT_ERROR(ctxkit_graph_open(store, convs, NULL,
                                 L("{\"messageLimitThreshold\":0}"), &g, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "messageLimitThreshold is 0");
  EXPECT_ERROR(
      ctxkit_graph_open(store, convs, NULL,
                        L("{\"ignorePatterns\":[\"tmp\",\"!keep\"]}"), &g, ERR),
      CTXKIT_INVALID_ARGUMENT, error, "ignorePatterns[1]");
  EXPECT_ERROR(ctxkit_graph_open(store, convs, NULL,
                                 L("{\"trackApiCalls\":\"yes\"}"), &g, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "trackApiCalls");
  CHECK(g == NULL);
  EXPECT_ERROR(ctxkit_graph_open(NULL, convs, NULL, NULL, 0, &g, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  /* Defaults open too; closing NULL is a no-op. */
  CHECK(ctxkit_graph_open(store, convs, NULL, NULL, 0, &g, ERR) == CTXKIT_OK);
  CHECK(g != NULL && error == NULL);
  ctxkit_graph_close(g);
  ctxkit_graph_close(NULL);
  CHECK(ctxkit_graph_open(store, convs, NULL,
                          L("{\"autoSummarize\":false,"
                            "\"autoCleanupContexts\":false}"),
                          &graph, ERR) == CTXKIT_OK);
  CHECK(graph != NULL);
}

static void test_typed(void) {
  int64_t at = 4102444800000; /* 2100: after the edge's validAt */
  EXPECT_DOC(ctxkit_graph_add_message(
                 graph, L("auth"),
                 L("{\"role\":\"user\",\"content\":\"Move login to OAuth "
                   "tokens\",\"importance\":\"HIGH\",\"tags\":[\"auth\"]}"),
                 &json, &len, ERR),
             "{\"schema_version\":1,\"success\":true,\"message\":\"Message "
             "added to context: auth\"");
  EXPECT_DOC(ctxkit_graph_add_messages(
                 graph, L("session"),
                 L("[{\"role\":\"user\",\"content\":\"session store in "
                   "redis\"},{\"role\":\"assistant\",\"content\":\"ok, "
                   "redis with oauth tokens\",\"importance\":\"low\"}]"),
                 &json, &len, ERR),
             "\"seq\":2,");
  EXPECT_ERROR(ctxkit_graph_add_messages(
                   graph, L("other"),
                   L("[{\"role\":\"user\",\"content\":\"a\"},{\"role\":"
                     "\"user\",\"content\":\"b\",\"tags\":[1]}]"),
                   &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "messages[1]: tags[0]");
  CHECK(json == NULL && len == 0);
  EXPECT_ERROR(ctxkit_graph_add_message(graph, L("other"),
                                        L("{\"role\":\"user\",\"content\":"
                                          "\"x\",\"importance\":\"huge\"}"),
                                        &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "importance");
  EXPECT_ERROR(
      ctxkit_graph_retrieve(graph, L("other"), NULL, 0, &json, &len, ERR),
      CTXKIT_NOT_FOUND, error, NULL);

  EXPECT_DOC(ctxkit_graph_retrieve(graph, L("auth"), L("{\"limit\":10}"), &json,
                                   &len, ERR),
             "\"importance\":0.75,\"importanceLevel\":\"high\"");
  EXPECT_ERROR(ctxkit_graph_retrieve(graph, L("auth"), L("{\"limt\":10}"),
                                     &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "limit");

  EXPECT_DOC(ctxkit_graph_add_relationship(
                 graph,
                 L("{\"sourceContextId\":\"auth\",\"targetContextId\":"
                   "\"session\",\"relationshipType\":\"references\","
                   "\"weight\":0.5,\"metadata\":{\"why\":\"tokens\"}}"),
                 &json, &len, ERR),
             "\"weight\":0.5,\"metadata\":{\"why\":\"tokens\"}");
  EXPECT_ERROR(ctxkit_graph_add_relationship(
                   graph,
                   L("{\"sourceContextId\":\"auth\",\"targetContextId\":"
                     "\"session\",\"relationshipType\":\"references\","
                     "\"weight\":2}"),
                   &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "weight");
  EXPECT_DOC(ctxkit_graph_related(graph, L("auth"), NULL, 0, &json, &len, ERR),
             "\"contextIds\":[\"session\"],\"total\":1");
  EXPECT_DOC(ctxkit_graph_related(graph, L("session"),
                                  L("{\"withEdges\":true}"), &json, &len, ERR),
             "\"contextId\":\"auth\",\"direction\":\"incoming\"");
  EXPECT_ERROR(
      ctxkit_graph_related(graph, L("auth"), L("{\"direction\":\"up\"}"), &json,
                           &len, ERR),
      CTXKIT_INVALID_ARGUMENT, error, "direction");
  /* The filters: the edge's metadata holds why:tokens, and session's
   * messages carry no tag. */
  EXPECT_DOC(ctxkit_graph_related(graph, L("auth"),
                                  L("{\"metadata\":{\"why\":\"tokens\"}}"),
                                  &json, &len, ERR),
             "\"contextIds\":[\"session\"],\"total\":1");
  EXPECT_DOC(
      ctxkit_graph_related(graph, L("auth"), L("{\"metadata\":{\"why\":null}}"),
                           &json, &len, ERR),
      "\"contextIds\":[],\"total\":0");
  EXPECT_DOC(ctxkit_graph_related(graph, L("auth"), L("{\"tags\":[\"auth\"]}"),
                                  &json, &len, ERR),
             "\"contextIds\":[],\"total\":0");
  EXPECT_DOC(ctxkit_graph_related(graph, L("session"),
                                  L("{\"tags\":[\"auth\"]}"), &json, &len, ERR),
             "\"contextIds\":[\"auth\"],\"total\":1");
  EXPECT_ERROR(ctxkit_graph_related(graph, L("auth"), L("{\"metadata\":[1]}"),
                                    &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "metadata");
  EXPECT_DOC(ctxkit_graph_path(graph, L("auth"), L("session"),
                               L("{\"metadata\":{\"why\":\"other\"}}"), &json,
                               &len, ERR),
             "\"found\":false");
  EXPECT_DOC(ctxkit_graph_path(graph, L("auth"), L("session"), NULL, 0, &json,
                               &len, ERR),
             "\"found\":true,\"path\":[\"auth\",\"session\"]");
  EXPECT_DOC(ctxkit_graph_similar(graph, L("oauth tokens"), L("{\"limit\":2}"),
                                  &json, &len, ERR),
             "\"method\":\"keyword\",\"contexts\":[{\"contextId\":");
  EXPECT_DOC(ctxkit_graph_hierarchy(graph, L("auth"), &json, &len, ERR),
             "\"parent\":null");
  EXPECT_DOC(
      ctxkit_graph_visualize(graph, L("auth"), L("{\"format\":\"mermaid\"}"),
                             &json, &len, ERR),
      "graph LR");
  EXPECT_DOC(ctxkit_graph_invalidate_relationship(graph, L("auth"),
                                                  L("session"), L("references"),
                                                  &at, &json, &len, ERR),
             "\"invalidAt\":4102444800000");
  EXPECT_DOC(ctxkit_graph_cleanup(graph, L("auth"), L("{\"dryRun\":true}"),
                                  &json, &len, ERR),
             "\"cleanedContexts\":[]");
  CHECK(ctxkit_graph_remove_relationship(graph, L("auth"), L("session"),
                                         L("references"), ERR) == CTXKIT_OK);
  EXPECT_ERROR(ctxkit_graph_remove_relationship(graph, L("auth"), L("session"),
                                                L("references"), ERR),
               CTXKIT_NOT_FOUND, error, NULL);
  CHECK(ctxkit_graph_restore(graph, L("auth"), ERR) == CTXKIT_OK);
  EXPECT_ERROR(ctxkit_graph_summarize(NULL, L("auth"), 0, &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "graph");
  EXPECT_DOC(ctxkit_graph_verify(graph, &json, &len, ERR),
             "\"ok\":true,\"contexts\":2,");
}

static void test_seed_protocol(void) {
  EXPECT_DOC(ctxkit_graph_context_memory(
                 graph,
                 L("{\"action\":\"add\",\"contextId\":\"memo\",\"role\":"
                   "\"user\",\"content\":\"remember the deploy key\"}"),
                 &json, &len, ERR),
             "{\"success\":true,\"message\":\"Message added to context "
             "'memo'\"");
  EXPECT_ERROR(
      ctxkit_graph_context_memory(graph, L("{\"action\":\"retrieve\"}"), &json,
                                  &len, ERR),
      CTXKIT_INVALID_ARGUMENT, error,
      "Missing required parameters: action and contextId are required");
  EXPECT_ERROR(ctxkit_graph_context_memory(
                   graph, L("{\"action\":\"retrieve\",\"contextId\":\"x\"}"),
                   &json, &len, ERR),
               CTXKIT_NOT_FOUND, error, NULL);
  EXPECT_DOC(ctxkit_graph_context_memory(
                 graph,
                 L("{\"action\":\"get_meta\",\"contextId\":\"memo\","
                   "\"metaId\":\"nope\"}"),
                 &json, &len, ERR),
             "\"success\":false,\"message\":\"Meta-summary with ID 'nope' "
             "not found\"");
  EXPECT_DOC(ctxkit_graph_call(graph, L("ping"), NULL, 0, &json, &len, ERR),
             "pong");
  EXPECT_DOC(ctxkit_graph_call(graph, L("get_related_contexts"),
                               L("{\"contextId\":\"memo\"}"), &json, &len, ERR),
             "[]");
  EXPECT_ERROR(ctxkit_graph_call(graph, L("retrieve_context"),
                                 L("{\"contextId\":\"x\"}"), &json, &len, ERR),
               CTXKIT_NOT_FOUND, error, "Context not found");
  EXPECT_ERROR(ctxkit_graph_call(graph, L("fly"), NULL, 0, &json, &len, ERR),
               CTXKIT_NOT_FOUND, error, "Unknown tool: fly");
}

static int calls = 0;
static int destroyed_a = 0;
static int destroyed_b = 0;

static int summarize(void* user_data, const char* span_json, size_t span_len,
                     const char* extractive, size_t extractive_len,
                     size_t max_tokens, ctxkit_text* out) {
  (void)span_json;
  (void)span_len;
  (void)extractive;
  (void)extractive_len;
  (void)max_tokens;
  ++calls;
  return ctxkit_text_set(out, L((const char*)user_data));
}

static void destroy_a(void* user_data) {
  (void)user_data;
  ++destroyed_a;
}

static void destroy_b(void* user_data) {
  (void)user_data;
  ++destroyed_b;
}

static void test_summarizer(void) {
  static const char kA[] = "Host summary A.";
  static const char kB[] = "Host summary B.";
  EXPECT_DOC(ctxkit_graph_summarize(graph, L("auth"), 0, &json, &len, ERR),
             "\"summarizer\":\"extractive\"");
  CHECK(ctxkit_graph_set_summarizer(graph, summarize, (void*)kA, destroy_a,
                                    ERR) == CTXKIT_OK);
  EXPECT_DOC(ctxkit_graph_summarize(graph, L("auth"), 1, &json, &len, ERR),
             "\"summary\":\"Host summary A.\"");
  CHECK(calls == 1);
  CHECK(destroyed_a == 0);
  CHECK(ctxkit_graph_set_summarizer(graph, summarize, (void*)kB, destroy_b,
                                    ERR) == CTXKIT_OK);
  CHECK(destroyed_a == 1);
  EXPECT_DOC(ctxkit_graph_summarize(graph, L("session"), 1, &json, &len, ERR),
             "\"summarizer\":\"host\"");
  EXPECT_DOC(
      ctxkit_graph_retrieve(graph, L("session"), NULL, 0, &json, &len, ERR),
      "\"summary\":\"Host summary B.\"");
  ctxkit_graph_close(graph);
  graph = NULL;
  CHECK(destroyed_a == 1);
  CHECK(destroyed_b == 1);
}

/* The number after `key` in the document, or -1 when it is absent. */
static long long number_after(const char* doc, const char* key) {
  const char* at = doc != NULL ? strstr(doc, key) : NULL;
  return at == NULL ? -1 : strtoll(at + strlen(key), NULL, 10);
}

static void test_metrics(void) {
  ctxkit_analytics* analytics = NULL;
  ctxkit_graph* g = NULL;
  long long total = -1;
  CHECK(ctxkit_analytics_open(store, NULL, NULL, &analytics, ERR) == CTXKIT_OK);
  CHECK(ctxkit_graph_open(store, convs, analytics,
                          L("{\"autoSummarize\":false,"
                            "\"autoCleanupContexts\":false,"
                            "\"trackApiCalls\":true,"
                            "\"ignorePatterns\":[\"scratch\"]}"),
                          &g, ERR) == CTXKIT_OK);
  /* The graph keeps the analytics open: its handle may go first. */
  ctxkit_analytics_close(analytics);
  EXPECT_DOC(
      ctxkit_graph_add_message(
          g, L("metered"), L("{\"role\":\"user\",\"content\":\"count me\"}"),
          &json, &len, ERR),
      "\"contextId\":\"metered\"");
  EXPECT_ERROR(
      ctxkit_graph_add_message(g, L("scratch/x"),
                               L("{\"role\":\"user\",\"content\":\"no\"}"),
                               &json, &len, ERR),
      CTXKIT_INVALID_ARGUMENT, error, "ignore pattern scratch");
  EXPECT_DOC(ctxkit_graph_related(g, L("metered"), NULL, 0, &json, &len, ERR),
             "\"total\":0");
  CHECK(ctxkit_graph_metrics(g, L("day"), &json, &len, ERR) == CTXKIT_OK);
  CHECK(contains(json,
                 "{\"schema_version\":1,\"success\":true,"
                 "\"period\":\"day\""));
  CHECK(contains(json, "\"tracked\":true"));
  total = number_after(json, "\"totalCalls\":");
  if (total < 2) fprintf(stderr, "metrics: %s\n", json ? json : "(null)");
  CHECK(total >= 2); /* the add and the related call */
  ctxkit_free(json);
  json = NULL;
  EXPECT_DOC(ctxkit_graph_metrics(g, NULL, 0, &json, &len, ERR),
             "\"period\":\"week\"");
  EXPECT_ERROR(ctxkit_graph_metrics(g, L("year"), &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "period");
  CHECK(json == NULL && len == 0);
  EXPECT_ERROR(ctxkit_graph_metrics(NULL, L("day"), &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "graph");
  ctxkit_graph_close(g);

  /* Without an analytics handle nothing is recorded. */
  CHECK(ctxkit_graph_open(store, convs, NULL, NULL, 0, &g, ERR) == CTXKIT_OK);
  EXPECT_DOC(ctxkit_graph_metrics(g, L("month"), &json, &len, ERR),
             "\"totalCalls\":0,");
  EXPECT_DOC(ctxkit_graph_metrics(g, L("month"), &json, &len, ERR),
             "\"tracked\":false");
  ctxkit_graph_close(g);
}

/* A host embedder: fails with 7 when `fail` is set, else gives every text
 * the same vector (so any context is a perfect match). */
struct embedder {
  int fail;
  int calls;
  int destroyed;
};

static int embed(void* user_data, const char* const* texts, const size_t* lens,
                 size_t n, size_t dims, float* out) {
  struct embedder* e = (struct embedder*)user_data;
  size_t i;
  size_t j;
  ++e->calls;
  for (i = 0; i < n; ++i) {
    if (texts[i] == NULL || strlen(texts[i]) != lens[i]) return 9;
  }
  if (e->fail) return 7;
  for (i = 0; i < n * dims; ++i) out[i] = 0.0f;
  for (i = 0; i < n; ++i) {
    for (j = 0; j < dims; ++j) out[i * dims + j] = 1.0f;
  }
  return 0;
}

static void destroy_embedder(void* user_data) {
  ++((struct embedder*)user_data)->destroyed;
}

static void test_vectors(void) {
  struct embedder failing = {1, 0, 0};
  struct embedder working = {0, 0, 0};
  float wrong[3] = {1.0f, 2.0f, 3.0f};
  float vec[64];
  ctxkit_graph* g = NULL;
  size_t i;
  for (i = 0; i < 64; ++i) vec[i] = 1.0f;
  CHECK(ctxkit_graph_open(store, convs, NULL,
                          L("{\"autoSummarize\":false,"
                            "\"autoCleanupContexts\":false}"),
                          &g, ERR) == CTXKIT_OK);
  EXPECT_ERROR(ctxkit_graph_set_hashed_embedder(g, 0, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "dims");
  EXPECT_ERROR(ctxkit_graph_set_hashed_embedder(g, 5000, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "dims");
  CHECK(ctxkit_graph_set_hashed_embedder(g, 64, ERR) == CTXKIT_OK);
  EXPECT_DOC(ctxkit_graph_add_message(
                 g, L("vec-a"),
                 L("{\"role\":\"user\",\"content\":\"Kubernetes cluster "
                   "autoscaling policy for the ingest workers\"}"),
                 &json, &len, ERR),
             "\"contextId\":\"vec-a\"");
  CHECK(ctxkit_graph_summarize(g, L("vec-a"), 1, &json, &len, ERR) ==
        CTXKIT_OK);
  CHECK(contains(json, "\"contextId\":\"vec-a\""));
  CHECK(!contains(json, "embeddingError"));
  ctxkit_free(json);
  json = NULL;
  EXPECT_DOC(
      ctxkit_graph_similar(g, L("kubernetes autoscaling"),
                           L("{\"method\":\"vector\"}"), &json, &len, ERR),
      "\"method\":\"vector\",\"contexts\":[{\"contextId\":"
      "\"vec-a\"");
  EXPECT_DOC(ctxkit_graph_similar(g, L("kubernetes autoscaling"),
                                  L("{\"method\":\"hybrid\",\"rrfK\":10}"),
                                  &json, &len, ERR),
             "\"method\":\"hybrid\"");
  EXPECT_ERROR(ctxkit_graph_similar(g, L("kubernetes"), L("{\"rrfK\":0}"),
                                    &json, &len, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "rrfK");

  /* Host vectors: the space's dims, finite, for a known context. */
  EXPECT_ERROR(ctxkit_graph_set_embedding(g, L("vec-a"), wrong, 3, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "vector");
  vec[10] = NAN;
  EXPECT_ERROR(ctxkit_graph_set_embedding(g, L("vec-a"), vec, 64, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "vector");
  vec[10] = 1.0f;
  EXPECT_ERROR(ctxkit_graph_set_embedding(g, L("vec-a"), NULL, 64, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "vector");
  EXPECT_ERROR(ctxkit_graph_set_embedding(g, L("nobody"), vec, 64, ERR),
               CTXKIT_NOT_FOUND, error, NULL);
  CHECK(ctxkit_graph_set_embedding(g, L("vec-a"), vec, 64, ERR) == CTXKIT_OK);

  /* Another space is refused until the vectors are reset; the refused
   * embedder's user data stays the caller's. */
  EXPECT_ERROR(ctxkit_graph_set_embedder(g, embed, 8, L("host-model"), &failing,
                                         destroy_embedder, ERR),
               CTXKIT_FAILED_PRECONDITION, error, "host-model");
  CHECK(failing.destroyed == 0);
  EXPECT_ERROR(ctxkit_graph_set_embedder(g, embed, 0, L("host-model"), &failing,
                                         destroy_embedder, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "dims");
  EXPECT_ERROR(ctxkit_graph_set_embedder(g, embed, 8, NULL, 0, &failing,
                                         destroy_embedder, ERR),
               CTXKIT_INVALID_ARGUMENT, error, "model");
  CHECK(failing.destroyed == 0);
  CHECK(ctxkit_graph_reset_embeddings(g, ERR) == CTXKIT_OK);
  CHECK(ctxkit_graph_set_embedder(g, embed, 8, L("host-model"), &failing,
                                  destroy_embedder, ERR) == CTXKIT_OK);

  /* A failing embedder: the summary is written all the same and says why;
   * a vector query falls back to keyword and says why. */
  CHECK(ctxkit_graph_summarize(g, L("vec-a"), 1, &json, &len, ERR) ==
        CTXKIT_OK);
  CHECK(contains(json, "\"version\":2,"));
  CHECK(contains(json, "\"embeddingError\":\""));
  CHECK(contains(json, "embedder callback returned 7"));
  ctxkit_free(json);
  json = NULL;
  EXPECT_DOC(
      ctxkit_graph_similar(g, L("kubernetes autoscaling"),
                           L("{\"method\":\"vector\"}"), &json, &len, ERR),
      "\"fallbackReason\":\"");
  EXPECT_DOC(
      ctxkit_graph_similar(g, L("kubernetes autoscaling"),
                           L("{\"method\":\"vector\"}"), &json, &len, ERR),
      "\"method\":\"keyword\"");
  CHECK(failing.calls >= 2);

  /* Replaced by a working one: the failing one's destroy runs once. */
  CHECK(ctxkit_graph_set_embedder(g, embed, 8, L("host-model"), &working,
                                  destroy_embedder, ERR) == CTXKIT_OK);
  CHECK(failing.destroyed == 1);
  CHECK(ctxkit_graph_summarize(g, L("vec-a"), 1, &json, &len, ERR) ==
        CTXKIT_OK);
  CHECK(!contains(json, "embeddingError"));
  ctxkit_free(json);
  json = NULL;
  EXPECT_DOC(
      ctxkit_graph_similar(g, L("anything at all"),
                           L("{\"method\":\"vector\"}"), &json, &len, ERR),
      "\"method\":\"vector\",\"contexts\":[{\"contextId\":"
      "\"vec-a\"");
  CHECK(working.calls >= 2);

  /* Removed: vector queries fall back; its destroy runs once. */
  CHECK(ctxkit_graph_set_embedder(g, NULL, 0, NULL, 0, NULL, NULL, ERR) ==
        CTXKIT_OK);
  CHECK(working.destroyed == 1);
  EXPECT_DOC(
      ctxkit_graph_similar(g, L("kubernetes autoscaling"),
                           L("{\"method\":\"vector\"}"), &json, &len, ERR),
      "\"fallbackReason\":\"");

  /* Installed at close: its destroy runs then, once. */
  failing.fail = 0;
  CHECK(ctxkit_graph_set_embedder(g, embed, 8, L("host-model"), &failing,
                                  destroy_embedder, ERR) == CTXKIT_OK);
  CHECK(failing.destroyed == 1);
  ctxkit_graph_close(g);
  CHECK(failing.destroyed == 2);
  CHECK(working.destroyed == 1);
}

int main(void) {
  char root[256];
  char path[300];
  const char* base = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/ctxkit-graph-XXXXXX",
           base && *base ? base : "/tmp");
  if (mkdtemp(root) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  snprintf(path, sizeof path, "%s/store", root);
  if (ctxkit_store_open(L(path), NULL, &store, NULL) != CTXKIT_OK ||
      ctxkit_conversations_open(store, &convs, NULL) != CTXKIT_OK) {
    fprintf(stderr, "cannot open the store\n");
    return 2;
  }
  test_open();
  if (graph != NULL) {
    test_typed();
    test_seed_protocol();
    test_summarizer();
    test_metrics();
    test_vectors();
  }
  ctxkit_graph_close(graph);
  ctxkit_conversations_close(convs);
  ctxkit_store_close(store);
  remove_tree(root);
  return capi_report();
}
