/* Checks shared by ctxkit's C API tests, which are written in C so that they
 * use the ABI exactly as FFI callers do. Each test program includes this
 * once and ends by printing "N passed, M failed" (capi_report()). */
#ifndef CTXKIT_TESTS_CAPI_CAPI_CHECK_H_
#define CTXKIT_TESTS_CAPI_CAPI_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "ctxkit/c.h"

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

static int contains(const char* haystack, const char* needle) {
  return haystack != NULL && strstr(haystack, needle) != NULL;
}

/* Checks a failed call: its code, that it produced a message mentioning
 * `needle` (unless NULL), and frees the message. */
static void expect_error(int rc, int want, char* error, const char* needle,
                         int line) {
  if (rc != want) {
    fprintf(stderr, "line %d: got %s (%s), want %s\n", line,
            ctxkit_status_name(rc), error ? error : "no message",
            ctxkit_status_name(want));
  }
  CHECK(rc == want);
  CHECK(error != NULL);
  if (needle != NULL && !contains(error, needle)) {
    fprintf(stderr, "line %d: message \"%s\" lacks \"%s\"\n", line,
            error ? error : "", needle);
    CHECK(0);
  }
  ctxkit_free(error);
}
/* The call is sequenced before `error` is read: function arguments are
 * evaluated in unspecified order. */
#define EXPECT_ERROR(call, want, error, needle)             \
  do {                                                      \
    const int rc_ = (call);                                 \
    expect_error(rc_, (want), (error), (needle), __LINE__); \
  } while (0)

/* Prints the tally; returns the process exit status. */
static int capi_report(void) {
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

#endif /* CTXKIT_TESTS_CAPI_CAPI_CHECK_H_ */
