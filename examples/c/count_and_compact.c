/* Count a text's tokens exactly, then fit a chat history into a budget.
 *
 *   cc count_and_compact.c $(pkg-config --cflags --libs ctxkit)
 *   ./a.out
 *
 * Every call returns a status; on failure *error holds a message to free
 * with ctxkit_free(). */
#include <ctxkit/c.h>
#include <stdio.h>
#include <string.h>

/* Prints the message of a failed call and frees it; returns 1. */
static int report(const char* what, int rc, char* error) {
  fprintf(stderr, "%s: %s: %s\n", what, ctxkit_status_name(rc),
          error != NULL ? error : "(no message)");
  ctxkit_free(error);
  return 1;
}

int main(void) {
  static const char kText[] = "ctxkit counts tokens exactly, like tiktoken.";
  static const char kModel[] = "gpt-4o";
  /* An agent session: the task, a long exploration, the latest request.
   * Compacted to 80 tokens, the task and the latest turns are kept and the
   * middle is summarized. */
  static const char kRequest[] =
      "{\"model\":\"gpt-4o\",\"max_tokens\":80,\"messages\":["
      "{\"role\":\"system\",\"content\":\"You are a careful coding agent.\"},"
      "{\"role\":\"user\",\"content\":\"The parser rejects tabs in "
      "indentation; make it accept them.\"},"
      "{\"role\":\"assistant\",\"content\":\"I read lexer.c, parser.c and "
      "the failing test output, then listed every place that compares "
      "indentation widths and the three helpers that compute them.\"},"
      "{\"role\":\"user\",\"content\":\"ok\"},"
      "{\"role\":\"assistant\",\"content\":\"The lexer counts a tab as one "
      "column; I will expand tabs to the next multiple of eight.\"},"
      "{\"role\":\"user\",\"content\":\"Do it and run the tests.\"}]}";
  ctxkit_tokenizer* tokenizer = NULL;
  ctxkit_compactor* compactor = NULL;
  char* error = NULL;
  char* json = NULL;
  size_t json_len = 0;
  size_t count = 0;
  int exact = 0;
  int rc;

  rc = ctxkit_tokenizer_create_for_model(kModel, strlen(kModel), &tokenizer,
                                         &exact, &error);
  if (rc != CTXKIT_OK) return report("tokenizer", rc, error);
  rc = ctxkit_tokenizer_count(tokenizer, kText, strlen(kText), 0, &count,
                              &error);
  if (rc != CTXKIT_OK) return report("count", rc, error);
  printf("%s: %zu tokens with %s (%s)\n", kModel, count,
         ctxkit_tokenizer_name(tokenizer), exact ? "exact" : "approximate");
  ctxkit_tokenizer_free(tokenizer);

  /* No cache or analytics: pass NULL for both. */
  rc = ctxkit_compactor_create(NULL, NULL, &compactor, &error);
  if (rc != CTXKIT_OK) return report("compactor", rc, error);
  rc = ctxkit_compactor_compact(compactor, kRequest, strlen(kRequest), &json,
                                &json_len, &error);
  /* OUT_OF_RANGE still returns the best-effort result in json. */
  if (rc != CTXKIT_OK && rc != CTXKIT_OUT_OF_RANGE) {
    ctxkit_compactor_free(compactor);
    return report("compact", rc, error);
  }
  ctxkit_free(error);
  printf("%.*s\n", (int)json_len, json);
  ctxkit_free(json);
  ctxkit_compactor_free(compactor);
  return rc == CTXKIT_OK ? 0 : 1;
}
