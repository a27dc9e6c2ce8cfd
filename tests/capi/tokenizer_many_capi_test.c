/* ctxkit_tokenizer_count_many and ctxkit_tokenizer_special_tokens_json,
 * tested from C against the real library: results, every error path, and
 * what the outputs hold after an error.
 *
 * Prints "N passed, M failed" and exits non-zero on any failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"

#define GARBAGE ((char*)"garbage that must be overwritten")

static ctxkit_tokenizer* open_encoding(const char* name) {
  ctxkit_tokenizer* tok = NULL;
  char* error = NULL;
  int rc =
      ctxkit_tokenizer_create_for_encoding(name, strlen(name), &tok, &error);
  CHECK(rc == CTXKIT_OK);
  CHECK(tok != NULL);
  ctxkit_free(error);
  return tok;
}

static void test_count_many(void) {
  ctxkit_tokenizer* tok = open_encoding("cl100k_base");
  /* Long enough texts that several threads are used (64 KiB a thread). */
  enum { kTexts = 40 };
  char* owned[kTexts];
  const char* texts[kTexts];
  size_t lens[kTexts];
  size_t counts[kTexts];
  size_t i;
  for (i = 0; i < kTexts; ++i) {
    const size_t len = 100 + i * 5000;
    size_t j;
    owned[i] = (char*)malloc(len);
    for (j = 0; j < len; ++j) owned[i][j] = "hello world, 12 \n"[(i + j) % 17];
    texts[i] = owned[i];
    lens[i] = len;
  }
  {
    char* error = GARBAGE;
    int rc = ctxkit_tokenizer_count_many(tok, texts, lens, kTexts, 0, 0, counts,
                                         &error);
    CHECK(rc == CTXKIT_OK);
    CHECK(error == NULL);
    /* Each equals ctxkit_tokenizer_count of the same text. */
    for (i = 0; i < kTexts; ++i) {
      size_t one = 0;
      CHECK(ctxkit_tokenizer_count(tok, texts[i], lens[i], 0, &one, NULL) ==
            CTXKIT_OK);
      CHECK(counts[i] == one);
      CHECK(one > 0);
    }
  }
  /* One thread gives the same counts. */
  {
    size_t single[kTexts];
    CHECK(ctxkit_tokenizer_count_many(tok, texts, lens, kTexts, 1, 0, single,
                                      NULL) == CTXKIT_OK);
    CHECK(memcmp(single, counts, sizeof counts) == 0);
  }
  /* n == 0: the arrays may be NULL. */
  CHECK(ctxkit_tokenizer_count_many(tok, NULL, NULL, 0, 0, 0, NULL, NULL) ==
        CTXKIT_OK);
  /* A NULL text of length 0 is the empty text. */
  {
    const char* empty_texts[2] = {NULL, "hi"};
    size_t empty_lens[2] = {0, 2};
    size_t out[2] = {7, 7};
    CHECK(ctxkit_tokenizer_count_many(tok, empty_texts, empty_lens, 2, 0, 0,
                                      out, NULL) == CTXKIT_OK);
    CHECK(out[0] == 0);
    CHECK(out[1] == 1);
  }
  /* Special-token text follows the flags, as in ctxkit_tokenizer_count;
   * an error names the first text that fails and zeroes every count. */
  {
    const char* special[3] = {"fine", "<|endoftext|>", "x<|endoftext|>"};
    size_t special_lens[3] = {4, 13, 14};
    size_t out[3] = {7, 7, 7};
    char* error = GARBAGE;
    int rc = ctxkit_tokenizer_count_many(tok, special, special_lens, 3, 0, 0,
                                         out, &error);
    CHECK(rc == CTXKIT_INVALID_ARGUMENT);
    CHECK(contains(error, "texts[1]"));
    CHECK(contains(error, "<|endoftext|>"));
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0);
    ctxkit_free(error);
    CHECK(ctxkit_tokenizer_count_many(tok, special, special_lens, 3, 0,
                                      CTXKIT_ENCODE_ALLOW_SPECIAL, out,
                                      NULL) == CTXKIT_OK);
    CHECK(out[0] == 1 && out[1] == 1 && out[2] == 2);
    CHECK(ctxkit_tokenizer_count_many(tok, special, special_lens, 3, 0,
                                      CTXKIT_ENCODE_SPECIAL_AS_TEXT, out,
                                      NULL) == CTXKIT_OK);
    CHECK(out[1] > 1);
  }
  /* Bad arguments. */
  {
    const char* bad[2] = {"ok", NULL};
    size_t bad_lens[2] = {2, 3};
    const char* invalid[1] = {"ab\xff"};
    size_t invalid_lens[1] = {3};
    size_t out[2];
    char* error = GARBAGE;
    EXPECT_ERROR(
        ctxkit_tokenizer_count_many(tok, bad, bad_lens, 2, 0, 0, out, &error),
        CTXKIT_INVALID_ARGUMENT, error, "texts[1] is NULL");
    error = GARBAGE;
    EXPECT_ERROR(
        ctxkit_tokenizer_count_many(tok, texts, lens, 2, 0, 0, NULL, &error),
        CTXKIT_INVALID_ARGUMENT, error, "out_counts");
    error = GARBAGE;
    EXPECT_ERROR(
        ctxkit_tokenizer_count_many(NULL, texts, lens, 2, 0, 0, out, &error),
        CTXKIT_INVALID_ARGUMENT, error, "tokenizer is NULL");
    error = GARBAGE;
    EXPECT_ERROR(ctxkit_tokenizer_count_many(tok, texts, lens, 2, 0, 1u << 7,
                                             out, &error),
                 CTXKIT_INVALID_ARGUMENT, error, "unknown encode flags");
    error = GARBAGE;
    EXPECT_ERROR(ctxkit_tokenizer_count_many(tok, invalid, invalid_lens, 1, 0,
                                             0, out, &error),
                 CTXKIT_INVALID_ARGUMENT, error, "texts[0]");
  }
  for (i = 0; i < kTexts; ++i) free(owned[i]);
  ctxkit_tokenizer_free(tok);
}

static void test_special_tokens(void) {
  ctxkit_tokenizer* tok = open_encoding("cl100k_base");
  char* json = GARBAGE;
  size_t len = 99;
  char* error = GARBAGE;
  int rc = ctxkit_tokenizer_special_tokens_json(tok, &json, &len, &error);
  CHECK(rc == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(json != NULL && strlen(json) == len);
  CHECK(contains(json, "\"schema_version\":1"));
  CHECK(contains(json, "\"encoding\":\"cl100k_base\""));
  CHECK(contains(json, "{\"text\":\"<|endoftext|>\",\"id\":100257}"));
  CHECK(contains(json, "{\"text\":\"<|endofprompt|>\",\"id\":100276}"));
  ctxkit_free(json);
  ctxkit_tokenizer_free(tok);

  tok = open_encoding("claude");
  CHECK(ctxkit_tokenizer_special_tokens_json(tok, &json, &len, NULL) ==
        CTXKIT_OK);
  CHECK(contains(json, "{\"text\":\"<EOT>\",\"id\":0}"));
  ctxkit_free(json);

  /* NULL arguments: INVALID_ARGUMENT, the outputs cleared. */
  json = GARBAGE;
  len = 99;
  error = GARBAGE;
  rc = ctxkit_tokenizer_special_tokens_json(NULL, &json, &len, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT);
  CHECK(json == NULL && len == 0);
  ctxkit_free(error);
  rc = ctxkit_tokenizer_special_tokens_json(tok, NULL, &len, NULL);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT);
  rc = ctxkit_tokenizer_special_tokens_json(tok, &json, NULL, NULL);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT);
  CHECK(json == NULL);
  ctxkit_tokenizer_free(tok);
}

int main(void) {
  test_count_many();
  test_special_tokens();
  return capi_report();
}
