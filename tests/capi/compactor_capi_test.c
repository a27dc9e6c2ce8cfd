/* The compactor's C API, tested from C against the real library: a small
 * history compacted within its budget, an infeasible budget (OUT_OF_RANGE
 * with the best-effort result), bad inputs (each
 * INVALID_ARGUMENT naming the message index and field), the summarizer
 * callback and its fallback, added rules, validation, compaction of a
 * stored conversation, NULL arguments, compactions on several threads
 * while the summarizer is swapped, and cancellation tokens: cancelled
 * before (CANCELLED, nothing out, no view saved), never (byte-identical
 * result), and from another thread while the compaction runs (paused in
 * the summarizer callback until that thread has cancelled, so the test
 * never depends on timing).
 *
 * Prints "N passed, M failed" and exits non-zero on any failure. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ctxkit_compactor_add_rules is in c.h's experimental section. */
#define CTXKIT_EXPERIMENTAL_API
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

/* How many times `needle` occurs in `haystack`. */
static int count_of(const char* haystack, const char* needle) {
  int n = 0;
  const char* at = haystack;
  while (at != NULL && (at = strstr(at, needle)) != NULL) {
    ++n;
    at += strlen(needle);
  }
  return n;
}

/* A history of a system prompt, the task, `turns` assistant messages
 * (about 50 tokens each, a span the compactor can summarize as one) and a
 * last user message, with the request members `members` in front, written
 * into a malloc'd buffer. */
static char* make_history(int turns, const char* members) {
  size_t cap = 4096 + (size_t)turns * 1024;
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
        ",{\"role\":\"assistant\",\"content\":\"Step %d: I looked at the "
        "file src/module_%d.c and the function parse_item_%d, which reads "
        "the input buffer, checks the length field and copies the payload "
        "into the output structure before returning.\"}",
        i, i, i);
  }
  len += (size_t)snprintf(out + len, cap - len,
                          ",{\"role\":\"user\",\"content\":\"Now tell me "
                          "what you found.\"}]}");
  return out;
}

static ctxkit_compactor* new_compactor(void) {
  ctxkit_compactor* c = NULL;
  char* error = NULL;
  CHECK(ctxkit_compactor_create(NULL, NULL, &c, &error) == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(c != NULL);
  return c;
}

/* Compacts `request`; checks the status is `want` and, for OK and
 * OUT_OF_RANGE, that a NUL-terminated document of the stated length came
 * back. Returns the document (to free) or NULL. */
static char* compact(ctxkit_compactor* c, const char* request, int want,
                     int line) {
  char* json = NULL;
  size_t len = 0;
  char* error = NULL;
  const int rc = ctxkit_compactor_compact(c, request, strlen(request), &json,
                                          &len, &error);
  if (rc != want) {
    fprintf(stderr, "line %d: got %s (%s), want %s\n", line,
            ctxkit_status_name(rc), error ? error : "no message",
            ctxkit_status_name(want));
  }
  CHECK(rc == want);
  if (rc == CTXKIT_OK) CHECK(error == NULL);
  if (rc == CTXKIT_OUT_OF_RANGE) CHECK(contains(error, "budget"));
  ctxkit_free(error);
  if (rc == CTXKIT_OK || rc == CTXKIT_OUT_OF_RANGE) {
    CHECK(json != NULL && strlen(json) == len && json[0] == '{');
  } else {
    CHECK(json == NULL && len == 0);
  }
  return json;
}

static void test_compact(void) {
  ctxkit_compactor* c = new_compactor();
  /* summarize: everything outside the recent window and the anchors
   * becomes one summary. */
  char* history =
      make_history(40, "\"max_tokens\":600,\"strategy\":\"summarize\",");
  char* json = compact(c, history, CTXKIT_OK, __LINE__);
  long long estimate = json_number(json, "token_estimate");
  long long original = json_number(json, "original_count");
  CHECK(estimate > 0 && estimate <= 600);
  CHECK(original == 43);
  CHECK(json_number(json, "compacted_count") < original);
  CHECK(contains(json, "\"met\":true"));
  CHECK(contains(json, "You are a careful coding assistant."));
  CHECK(contains(json, "Fix the failing test in src/parser.c"));
  CHECK(contains(json, "[Compressed context:"));
  /* Deterministic: the same request gives the same bytes. */
  {
    char* again = compact(c, history, CTXKIT_OK, __LINE__);
    CHECK(again != NULL && json != NULL && strcmp(again, json) == 0);
    ctxkit_free(again);
  }
  ctxkit_free(json);
  free(history);

  /* A bare array is a request with every default: it fits unchanged. */
  json = compact(c,
                 "[{\"role\":\"user\",\"content\":\"hello\"},"
                 "{\"role\":\"assistant\",\"content\":\"hi there\"}]",
                 CTXKIT_OK, __LINE__);
  CHECK(json_number(json, "compacted_count") == 2);
  CHECK(json_number(json, "dropped_count") == 0);
  ctxkit_free(json);

  /* explain: one decision per input message, with tier and rule. */
  json = compact(c,
                 "{\"explain\":true,\"messages\":["
                 "{\"role\":\"system\",\"content\":\"Be brief.\"},"
                 "{\"role\":\"user\",\"content\":\"List the files.\"},"
                 "{\"role\":\"assistant\",\"content\":\"ok\"}]}",
                 CTXKIT_OK, __LINE__);
  CHECK(contains(json, "\"decisions\":["));
  CHECK(count_of(json, "\"tier\":") == 3);
  CHECK(contains(json, "\"rule\":\"system_prompt\""));
  CHECK(contains(json, "\"rule\":\"task\""));
  ctxkit_free(json);

  ctxkit_compactor_free(c);
}

static void test_infeasible(void) {
  ctxkit_compactor* c = new_compactor();
  /* A system prompt and a last message that cannot fit 20 tokens even
   * truncated (truncation keeps a marker and the message framing). */
  char* json = compact(
      c,
      "{\"max_tokens\":20,\"messages\":["
      "{\"role\":\"system\",\"content\":\"You are a database assistant. "
      "Always answer with SQL and explain every clause in detail.\"},"
      "{\"role\":\"user\",\"content\":\"Show me every table in the "
      "warehouse schema with its row count and size on disk.\"}]}",
      CTXKIT_OUT_OF_RANGE, __LINE__);
  CHECK(contains(json, "\"met\":false"));
  CHECK(json_number(json, "token_estimate") > 20);
  ctxkit_free(json);
  ctxkit_compactor_free(c);
}

static void expect_bad(ctxkit_compactor* c, const char* request,
                       const char* needle, int line) {
  char* json = (char*)1;
  size_t len = 1;
  char* error = NULL;
  const int rc = ctxkit_compactor_compact(c, request, strlen(request), &json,
                                          &len, &error);
  CHECK(json == NULL && len == 0);
  expect_error(rc, CTXKIT_INVALID_ARGUMENT, error, needle, line);
}

static void test_bad_input(void) {
  ctxkit_compactor* c = new_compactor();
  expect_bad(c, "{\"messages\":[{\"role\":\"user\",", "JSON", __LINE__);
  expect_bad(c, "", "JSON", __LINE__);
  expect_bad(c, "42", "", __LINE__);
  expect_bad(c,
             "[{\"role\":\"user\",\"content\":\"a\"},"
             "{\"role\":\"wizard\",\"content\":\"b\"}]",
             "messages[1].role", __LINE__);
  expect_bad(c, "[{\"role\":\"user\",\"content\":42}]", "messages[0].content",
             __LINE__);
  expect_bad(c, "[{\"role\":\"user\"},{\"content\":\"x\"}]", "messages[",
             __LINE__);
  expect_bad(c,
             "[{\"role\":\"user\",\"content\":\"run it\"},"
             "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{"
             "\"id\":\"call_1\",\"type\":\"function\",\"function\":{"
             "\"name\":\"run\",\"arguments\":\"{}\"}}]},"
             "{\"role\":\"tool\",\"tool_call_id\":\"call_9\","
             "\"content\":\"done\"}]",
             "messages[2].tool_call_id", __LINE__);
  expect_bad(c,
             "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
             "\"tool_use_id\":\"toolu_x\",\"content\":\"done\"}]}]",
             "messages[0].content[0].tool_use_id", __LINE__);
  expect_bad(c, "[]", "messages", __LINE__);
  expect_bad(c, "{\"messages\":[]}", "messages", __LINE__);
  expect_bad(c,
             "{\"max_tokens\":-5,\"messages\":[{\"role\":\"user\","
             "\"content\":\"a\"}]}",
             "max_tokens", __LINE__);
  expect_bad(c,
             "{\"strategy\":\"shrink\",\"messages\":[{\"role\":\"user\","
             "\"content\":\"a\"}]}",
             "strategy", __LINE__);
  expect_bad(c,
             "{\"target_ratio\":2,\"messages\":[{\"role\":\"user\","
             "\"content\":\"a\"}]}",
             "target_ratio", __LINE__);
  expect_bad(c,
             "{\"rules\":[{\"name\":\"Bad Name\",\"tier\":\"anchor\","
             "\"contains_any\":[\"x\"]}],\"messages\":[{\"role\":\"user\","
             "\"content\":\"a\"}]}",
             "rules[0].name", __LINE__);
  ctxkit_compactor_free(c);
}

/* The summarizer callback: counts its calls, and writes its text unless
 * told to fail. */
struct summarizer_state {
  int calls;
  int fail;
  size_t last_max_tokens;
  int saw_extractive;
};

static int summarize(void* user_data, const char* span_json, size_t span_len,
                     const char* extractive, size_t extractive_len,
                     size_t max_tokens, ctxkit_text* out) {
  struct summarizer_state* state = user_data;
  static const char kText[] = "HOST SUMMARY of the earlier steps";
  ++state->calls;
  state->last_max_tokens = max_tokens;
  if (span_json == NULL || span_len == 0 || span_json[0] != '[' ||
      strlen(span_json) != span_len) {
    return 7;
  }
  if (extractive != NULL && strlen(extractive) == extractive_len &&
      strstr(extractive, "[Compressed context:") != NULL) {
    state->saw_extractive = 1;
  }
  if (state->fail) return 1;
  return ctxkit_text_set(out, kText, sizeof kText - 1);
}

/* Returns 0 without setting a text: a failure too. */
static int summarize_nothing(void* user_data, const char* span_json,
                             size_t span_len, const char* extractive,
                             size_t extractive_len, size_t max_tokens,
                             ctxkit_text* out) {
  (void)span_json;
  (void)span_len;
  (void)extractive;
  (void)extractive_len;
  (void)max_tokens;
  (void)out;
  ++((struct summarizer_state*)user_data)->calls;
  return 0;
}

static void test_summarizer(void) {
  ctxkit_compactor* c = new_compactor();
  struct summarizer_state state = {0, 0, 0, 0};
  char* error = NULL;
  char* history =
      make_history(40,
                   "\"max_tokens\":600,\"strategy\":\"summarize\",\"options\":{"
                   "\"enable_llm_summarization\":true},");
  char* json;

  CHECK(ctxkit_compactor_set_summarizer(c, summarize, &state, NULL, &error) ==
        CTXKIT_OK);
  CHECK(error == NULL);
  json = compact(c, history, CTXKIT_OK, __LINE__);
  CHECK(state.calls >= 1);
  CHECK(state.saw_extractive);
  CHECK(state.last_max_tokens > 0);
  CHECK(contains(json, "HOST SUMMARY of the earlier steps"));
  CHECK(json_number(json, "summarizer_failures") <= 0);
  CHECK(json_number(json, "token_estimate") <= 600);
  ctxkit_free(json);

  /* A failing callback: the extractive summary stands in. */
  state.calls = 0;
  state.fail = 1;
  json = compact(c, history, CTXKIT_OK, __LINE__);
  CHECK(state.calls >= 1);
  CHECK(!contains(json, "HOST SUMMARY"));
  CHECK(contains(json, "[Compressed context:"));
  CHECK(json_number(json, "summarizer_failures") >= 1);
  CHECK(json_number(json, "token_estimate") <= 600);
  ctxkit_free(json);

  /* Success without a text is a failure. */
  state.calls = 0;
  CHECK(ctxkit_compactor_set_summarizer(c, summarize_nothing, &state, NULL,
                                        &error) == CTXKIT_OK);
  json = compact(c, history, CTXKIT_OK, __LINE__);
  CHECK(state.calls >= 1);
  CHECK(contains(json, "[Compressed context:"));
  CHECK(json_number(json, "summarizer_failures") >= 1);
  ctxkit_free(json);

  /* Removed: no calls. Without enable_llm_summarization: no calls. */
  state.calls = 0;
  CHECK(ctxkit_compactor_set_summarizer(c, NULL, NULL, NULL, &error) ==
        CTXKIT_OK);
  json = compact(c, history, CTXKIT_OK, __LINE__);
  CHECK(state.calls == 0);
  ctxkit_free(json);
  free(history);
  CHECK(ctxkit_compactor_set_summarizer(c, summarize, &state, NULL, &error) ==
        CTXKIT_OK);
  state.fail = 0;
  history = make_history(40, "\"max_tokens\":600,\"strategy\":\"summarize\",");
  json = compact(c, history, CTXKIT_OK, __LINE__);
  CHECK(state.calls == 0);
  CHECK(!contains(json, "HOST SUMMARY"));
  ctxkit_free(json);
  free(history);

  /* ctxkit_text_set's own checks. */
  CHECK(ctxkit_text_set(NULL, "x", 1) == CTXKIT_INVALID_ARGUMENT);
  EXPECT_ERROR(
      ctxkit_compactor_set_summarizer(NULL, summarize, &state, NULL, &error),
      CTXKIT_INVALID_ARGUMENT, error, "compactor");
  ctxkit_compactor_free(c);
}

static void test_rules(void) {
  ctxkit_compactor* c = new_compactor();
  char* error = NULL;
  char* json;
  static const char kRequest[] =
      "{\"explain\":true,\"messages\":["
      "{\"role\":\"user\",\"content\":\"Deploy the service.\"},"
      "{\"role\":\"assistant\",\"content\":\"Deployed to production at "
      "10:42.\"}]}";

  json = compact(c, kRequest, CTXKIT_OK, __LINE__);
  CHECK(!contains(json, "\"rule\":\"deploy_log\""));
  ctxkit_free(json);

  EXPECT_ERROR(ctxkit_compactor_add_rules(c, L("[{\"name\":\"x\"}]"), &error),
               CTXKIT_INVALID_ARGUMENT, error, "rules[0]");
  EXPECT_ERROR(ctxkit_compactor_add_rules(c, L("{\"name\":\"x\"}"), &error),
               CTXKIT_INVALID_ARGUMENT, error, "rules");
  EXPECT_ERROR(ctxkit_compactor_add_rules(c, L("[{"), &error),
               CTXKIT_INVALID_ARGUMENT, error, "rules");
  EXPECT_ERROR(ctxkit_compactor_add_rules(NULL, L("[]"), &error),
               CTXKIT_INVALID_ARGUMENT, error, "compactor");
  EXPECT_ERROR(ctxkit_compactor_add_rules(c, NULL, 3, &error),
               CTXKIT_INVALID_ARGUMENT, error, "rules_json");

  CHECK(ctxkit_compactor_add_rules(
            c,
            L("[{\"name\":\"deploy_log\",\"tier\":\"anchor\","
              "\"contains_any\":[\"deployed to production\"]}]"),
            &error) == CTXKIT_OK);
  CHECK(error == NULL);
  json = compact(c, kRequest, CTXKIT_OK, __LINE__);
  CHECK(contains(json, "\"rule\":\"deploy_log\""));
  ctxkit_free(json);
  /* Also for a bare array, and next to a request's own rules. */
  json = compact(c,
                 "[{\"role\":\"user\",\"content\":\"Deployed to production"
                 "?\"}]",
                 CTXKIT_OK, __LINE__);
  ctxkit_free(json);
  json = compact(c,
                 "{\"explain\":true,\"rules\":[{\"name\":\"svc\",\"tier\":"
                 "\"important\",\"contains_any\":[\"service\"]}],"
                 "\"messages\":[{\"role\":\"assistant\",\"content\":\"The "
                 "service is up.\"},{\"role\":\"user\",\"content\":\"Deployed "
                 "to production?\"}]}",
                 CTXKIT_OK, __LINE__);
  CHECK(contains(json, "\"rule\":\"svc\""));
  CHECK(contains(json, "\"rule\":\"deploy_log\""));
  ctxkit_free(json);

  /* A request's rule may not reuse the name of an added one. */
  expect_bad(c,
             "{\"rules\":[{\"name\":\"deploy_log\",\"tier\":\"routine\","
             "\"contains_any\":[\"x\"]}],\"messages\":[{\"role\":\"user\","
             "\"content\":\"a\"}]}",
             "rules[0]", __LINE__);
  /* A name added before is a duplicate; nothing of a failed call stays. */
  EXPECT_ERROR(ctxkit_compactor_add_rules(
                   c,
                   L("[{\"name\":\"fresh\",\"tier\":\"transient\","
                     "\"contains_any\":[\"zzz\"]},{\"name\":\"deploy_log\","
                     "\"tier\":\"anchor\",\"contains_any\":[\"x\"]}]"),
                   &error),
               CTXKIT_INVALID_ARGUMENT, error, "rules[1].name");
  CHECK(ctxkit_compactor_add_rules(
            c,
            L("[{\"name\":\"fresh\",\"tier\":\"transient\","
              "\"contains_any\":[\"zzz\"]}]"),
            &error) == CTXKIT_OK);
  ctxkit_compactor_free(c);
}

static void test_validate(void) {
  char* error = NULL;
  static const char kGood[] =
      "[{\"role\":\"system\",\"content\":\"s\"},"
      "{\"role\":\"user\",\"content\":\"run\"},"
      "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
      "\"c1\",\"type\":\"function\",\"function\":{\"name\":\"run\","
      "\"arguments\":\"{}\"}}]},"
      "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"}]";
  CHECK(ctxkit_chat_validate(L(kGood), NULL, 0, &error) == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(ctxkit_chat_validate(L(kGood), L("openai"), &error) == CTXKIT_OK);
  EXPECT_ERROR(ctxkit_chat_validate(L(kGood), L("klingon"), &error),
               CTXKIT_INVALID_ARGUMENT, error, "format");
  /* The result without its call. */
  EXPECT_ERROR(
      ctxkit_chat_validate(L("[{\"role\":\"user\",\"content\":\"run\"},"
                             "{\"role\":\"tool\",\"tool_call_id\":\"c1\","
                             "\"content\":\"ok\"}]"),
                           NULL, 0, &error),
      CTXKIT_INVALID_ARGUMENT, error, "messages[1]");
  /* Anthropic: roles must alternate. */
  EXPECT_ERROR(ctxkit_chat_validate(L("[{\"role\":\"user\",\"content\":\"a\"},"
                                      "{\"role\":\"user\",\"content\":\"b\"}]"),
                                    L("anthropic"), &error),
               CTXKIT_INVALID_ARGUMENT, error, "messages[1]");
  EXPECT_ERROR(ctxkit_chat_validate(L("[{"), NULL, 0, &error),
               CTXKIT_INVALID_ARGUMENT, error, NULL);
  EXPECT_ERROR(ctxkit_chat_validate(NULL, 4, NULL, 0, &error),
               CTXKIT_INVALID_ARGUMENT, error, "history_json");
  /* out_error may be NULL. */
  CHECK(ctxkit_chat_validate(L("[{"), NULL, 0, NULL) ==
        CTXKIT_INVALID_ARGUMENT);
}

static void test_null_args(void) {
  ctxkit_compactor* c = new_compactor();
  char* json = (char*)1;
  size_t len = 1;
  char* error = NULL;
  EXPECT_ERROR(ctxkit_compactor_create(NULL, NULL, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out");
  EXPECT_ERROR(ctxkit_compactor_compact(NULL, L("[]"), &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "compactor");
  CHECK(json == NULL && len == 0);
  EXPECT_ERROR(ctxkit_compactor_compact(c, L("[]"), NULL, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_json");
  EXPECT_ERROR(ctxkit_compactor_compact(c, L("[]"), &json, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_json_len");
  EXPECT_ERROR(ctxkit_compactor_compact(c, NULL, 5, &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "request_json");
  /* NULL with length 0 is the empty string: not JSON. */
  EXPECT_ERROR(ctxkit_compactor_compact(c, NULL, 0, &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, NULL);
  EXPECT_ERROR(ctxkit_compactor_compact_conversation(c, NULL, L("x"), NULL, 0,
                                                     &json, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "convs");
  /* out_error may be NULL too. */
  CHECK(ctxkit_compactor_compact(NULL, L("[]"), &json, &len, NULL) ==
        CTXKIT_INVALID_ARGUMENT);
  ctxkit_compactor_free(NULL);
  ctxkit_compactor_free(c);
}

/* ---- a stored conversation, with a cache and analytics ---------------- */

static void test_conversation(void) {
  char dir_template[] = "/tmp/ctxkit-compactor-capi.XXXXXX";
  char* dir = mkdtemp(dir_template);
  ctxkit_store* store = NULL;
  ctxkit_conversations* convs = NULL;
  ctxkit_cache* cache = NULL;
  ctxkit_analytics* analytics = NULL;
  ctxkit_compactor* c = NULL;
  char* error = NULL;
  char* json = NULL;
  size_t len = 0;
  char conv_id[64] = {0};
  char* messages;
  int i;
  size_t used = 0;
  const size_t cap = 64 * 1024;
  const char* at;
  long long version;
  ctxkit_cancel_token* token = NULL;

  CHECK(dir != NULL);
  if (dir == NULL) return;
  CHECK(ctxkit_store_open(L(dir), NULL, &store, &error) == CTXKIT_OK);
  CHECK(ctxkit_conversations_open(store, &convs, &error) == CTXKIT_OK);
  CHECK(ctxkit_cache_open(store, 0, 0, NULL, &cache, &error) == CTXKIT_OK);
  CHECK(ctxkit_analytics_open(store, NULL, NULL, &analytics, &error) ==
        CTXKIT_OK);
  CHECK(ctxkit_compactor_create(cache, analytics, &c, &error) == CTXKIT_OK);

  CHECK(ctxkit_conversations_create(convs, L("compact me"), NULL, 0, NULL, 0,
                                    &json, &len, &error) == CTXKIT_OK);
  at = json ? strstr(json, "\"id\":\"") : NULL;
  if (at != NULL) memcpy(conv_id, at + 6, 36);
  ctxkit_free(json);

  messages = malloc(cap);
  used += (size_t)snprintf(messages + used, cap - used,
                           "[{\"role\":\"user\",\"content\":\"Find the slow "
                           "query in orders.\"}");
  for (i = 0; i < 30; ++i) {
    used += (size_t)snprintf(
        messages + used, cap - used,
        ",{\"role\":\"assistant\",\"content\":\"Checked index %d of table "
        "orders: the planner uses a sequential scan on orders_%d because "
        "the statistics are stale.\"},{\"role\":\"user\",\"content\":\"Go "
        "on with the next index.\"}",
        i, i);
  }
  snprintf(messages + used, cap - used, "]");
  CHECK(ctxkit_conversations_add_messages(convs, L(conv_id), L(messages), &json,
                                          &len, &error) == CTXKIT_OK);
  ctxkit_free(json);
  free(messages);

  json = NULL;
  CHECK(ctxkit_compactor_compact_conversation(
            c, convs, L(conv_id),
            L("{\"max_tokens\":400,\"options\":{\"enable_caching\":true,"
              "\"enable_analytics\":true}}"),
            &json, &len, &error) == CTXKIT_OK);
  if (error != NULL) fprintf(stderr, "compact_conversation: %s\n", error);
  CHECK(json != NULL && strlen(json) == len);
  CHECK(json_number(json, "token_estimate") > 0 &&
        json_number(json, "token_estimate") <= 400);
  CHECK(contains(json, conv_id));
  CHECK(json_number(json, "view_version") >= 1);
  ctxkit_free(json);

  /* The original messages are untouched. */
  CHECK(ctxkit_conversations_get(convs, L(conv_id), 1, &json, &len, &error) ==
        CTXKIT_OK);
  CHECK(json_number(json, "message_count") == 61);
  ctxkit_free(json);

  /* Defaults (NULL options), then an unknown conversation. */
  CHECK(ctxkit_compactor_compact_conversation(
            c, convs, L(conv_id), NULL, 0, &json, &len, &error) == CTXKIT_OK);
  version = json_number(json, "view_version");
  CHECK(version >= 1);
  ctxkit_free(json);
  /* A cancelled compaction saves no view: the next one is the next
   * version. */
  CHECK(ctxkit_cancel_token_create(&token, &error) == CTXKIT_OK);
  ctxkit_cancel_token_cancel(token);
  EXPECT_ERROR(ctxkit_compactor_compact_conversation_with_cancel(
                   c, convs, L(conv_id), NULL, 0, token, &json, &len, &error),
               CTXKIT_CANCELLED, error, "compaction cancelled");
  CHECK(json == NULL && len == 0);
  ctxkit_cancel_token_free(token);
  CHECK(ctxkit_compactor_compact_conversation(
            c, convs, L(conv_id), NULL, 0, &json, &len, &error) == CTXKIT_OK);
  CHECK(json_number(json, "view_version") == version + 1);
  ctxkit_free(json);
  EXPECT_ERROR(ctxkit_compactor_compact_conversation(
                   c, convs, L("00000000-0000-4000-8000-000000000000"), NULL, 0,
                   &json, &len, &error),
               CTXKIT_NOT_FOUND, error, NULL);
  EXPECT_ERROR(
      ctxkit_compactor_compact_conversation(
          c, convs, L(conv_id), L("{\"max_tokens\":0}"), &json, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "max_tokens");
  EXPECT_ERROR(
      ctxkit_compactor_compact_conversation(
          c, convs, L(conv_id), L("{\"messages\":[]}"), &json, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "messages");

  ctxkit_compactor_free(c);
  ctxkit_analytics_close(analytics);
  ctxkit_cache_close(cache);
  ctxkit_conversations_close(convs);
  ctxkit_store_close(store);
  remove_tree(dir);
}

/* ---- threads: compactions while the summarizer is swapped ------------- */

struct thread_arg {
  ctxkit_compactor* compactor;
  const char* request;
  const char* expected; /* the first result, which every one must equal */
  int failures;
};

static int fixed_summary(void* user_data, const char* span_json,
                         size_t span_len, const char* extractive,
                         size_t extractive_len, size_t max_tokens,
                         ctxkit_text* out) {
  (void)user_data;
  (void)span_json;
  (void)span_len;
  (void)extractive;
  (void)extractive_len;
  (void)max_tokens;
  return ctxkit_text_set(out, L("fixed summary"));
}

static void* compact_many(void* p) {
  struct thread_arg* arg = p;
  int i;
  for (i = 0; i < 20; ++i) {
    char* json = NULL;
    size_t len = 0;
    char* error = NULL;
    const int rc =
        ctxkit_compactor_compact(arg->compactor, arg->request,
                                 strlen(arg->request), &json, &len, &error);
    /* Without enable_llm_summarization the summarizer is never called, so
     * every result is the same whichever summarizer is installed. */
    if (rc != CTXKIT_OK || json == NULL || strcmp(json, arg->expected) != 0) {
      ++arg->failures;
    }
    ctxkit_free(json);
    ctxkit_free(error);
  }
  return NULL;
}

static void test_threads(void) {
  ctxkit_compactor* c = new_compactor();
  char* request = make_history(30, "\"max_tokens\":500,");
  char* expected = compact(c, request, CTXKIT_OK, __LINE__);
  pthread_t threads[4];
  struct thread_arg args[4];
  int i;
  char* error = NULL;
  for (i = 0; i < 4; ++i) {
    args[i].compactor = c;
    args[i].request = request;
    args[i].expected = expected;
    args[i].failures = 0;
    CHECK(pthread_create(&threads[i], NULL, compact_many, &args[i]) == 0);
  }
  for (i = 0; i < 50; ++i) {
    CHECK(ctxkit_compactor_set_summarizer(c, i % 2 ? fixed_summary : NULL, NULL,
                                          NULL, &error) == CTXKIT_OK);
  }
  for (i = 0; i < 4; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(args[i].failures == 0);
  }
  ctxkit_free(expected);
  free(request);
  ctxkit_compactor_free(c);
}

/* ---- cancellation tokens ------------------------------------------------ */

static void test_cancel_token(void) {
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

static void test_cancel_before_and_never(void) {
  ctxkit_compactor* c = new_compactor();
  ctxkit_cancel_token* token = NULL;
  char* error = NULL;
  char* checked = NULL;
  size_t checked_len = 0;
  char* request = make_history(300, "\"max_tokens\":800,\"explain\":true,");
  char* plain = compact(c, request, CTXKIT_OK, __LINE__);
  CHECK(ctxkit_cancel_token_create(&token, &error) == CTXKIT_OK);

  /* Never cancelled: the same bytes as without a token. */
  CHECK(ctxkit_compactor_compact_with_cancel(
            c, L(request), token, &checked, &checked_len, &error) == CTXKIT_OK);
  CHECK(plain != NULL && checked != NULL && strlen(plain) == checked_len &&
        memcmp(plain, checked, checked_len) == 0);
  ctxkit_free(checked);

  /* Cancelled before: CANCELLED, nothing out. */
  ctxkit_cancel_token_cancel(token);
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

static void test_cancel_from_another_thread(void) {
  ctxkit_compactor* c = new_compactor();
  char* error = NULL;
  char* json = NULL;
  size_t len = 0;
  pthread_t canceller;
  struct pause p;
  char* request = make_history(
      300,
      "\"max_tokens\":800,\"options\":{\"enable_llm_summarization\":true},");
  memset(&p, 0, sizeof p);
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  CHECK(ctxkit_cancel_token_create(&p.token, &error) == CTXKIT_OK);
  CHECK(ctxkit_compactor_set_summarizer(c, pausing_summary, &p, NULL, &error) ==
        CTXKIT_OK);
  CHECK(pthread_create(&canceller, NULL, cancel_when_reached, &p) == 0);
  EXPECT_ERROR(ctxkit_compactor_compact_with_cancel(c, L(request), p.token,
                                                    &json, &len, &error),
               CTXKIT_CANCELLED, error, "compaction cancelled");
  pthread_join(canceller, NULL);
  CHECK(json == NULL && len == 0);
  CHECK(p.calls == 1); /* never called again once cancelled */
  /* Without the token the same request runs to the end. */
  CHECK(ctxkit_compactor_set_summarizer(c, NULL, NULL, NULL, &error) ==
        CTXKIT_OK);
  ctxkit_free(compact(c, request, CTXKIT_OK, __LINE__));

  ctxkit_compactor_free(c);
  ctxkit_cancel_token_free(p.token);
  pthread_cond_destroy(&p.cv);
  pthread_mutex_destroy(&p.mu);
  free(request);
}

int main(void) {
  test_compact();
  test_infeasible();
  test_bad_input();
  test_summarizer();
  test_rules();
  test_validate();
  test_null_args();
  test_conversation();
  test_threads();
  test_cancel_token();
  test_cancel_before_and_never();
  test_cancel_from_another_thread();
  return capi_report();
}
