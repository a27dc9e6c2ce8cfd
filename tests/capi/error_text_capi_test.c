/* Every C error message is valid UTF-8 and ends at its own end: input bytes
 * that are not UTF-8, or hold a NUL, are quoted back readably (U+FFFD, "\0")
 * rather than raw. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/capi/capi_check.h"

/* Whether s (NUL-terminated) is well-formed UTF-8, checked here without
 * ctxkit's own validator: lead byte ranges and continuation bytes, no
 * overlong forms or surrogates, at most U+10FFFF. */
static int valid_utf8(const char* text) {
  const unsigned char* s = (const unsigned char*)text;
  while (*s != 0) {
    unsigned char b = s[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
      n = 0;
    } else if (b >= 0xC2 && b <= 0xDF) {
      n = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return 0;
    }
    if (n > 0 && (s[1] < lo || s[1] > hi)) return 0;
    for (int k = 2; k <= n; ++k) {
      if (s[k] < 0x80 || s[k] > 0xBF) return 0;
    }
    s += n + 1;
  }
  return 1;
}

int main(void) {
  ctxkit_tokenizer* tokenizer = NULL;
  char* error = NULL;

  /* Not UTF-8: the bad byte is shown as U+FFFD, the rest as given. */
  static const char bad_utf8[] = "cl100k\xff_base";
  int rc = ctxkit_tokenizer_create_for_encoding(bad_utf8, sizeof bad_utf8 - 1,
                                                &tokenizer, &error);
  CHECK(tokenizer == NULL);
  CHECK(error != NULL && valid_utf8(error));
  expect_error(rc, CTXKIT_NOT_FOUND, error, "cl100k\xEF\xBF\xBD_base",
               __LINE__);
  error = NULL;

  /* A NUL inside the name: the message goes on past it. */
  static const char with_nul[] = "o200k\0tail";
  rc = ctxkit_tokenizer_create_for_encoding(with_nul, sizeof with_nul - 1,
                                            &tokenizer, &error);
  CHECK(error != NULL && valid_utf8(error));
  expect_error(rc, CTXKIT_NOT_FOUND, error, "o200k\\0tail", __LINE__);
  error = NULL;

  /* A truncated sequence at the end of an unknown model name. */
  static const char truncated[] = "gpt-4o\xe2\x82";
  int exact = 0;
  rc = ctxkit_tokenizer_create_for_model(truncated, sizeof truncated - 1,
                                         &tokenizer, &exact, &error);
  CHECK(error != NULL && valid_utf8(error));
  expect_error(rc, CTXKIT_NOT_FOUND, error, "unknown model", __LINE__);

  return capi_report();
}
