/* ctxkit_tokenizer_create_from_tiktoken_file and
 * ctxkit_tokenizer_create_llama3, in C against the real library: a vocabulary
 * the test writes itself (the 256 single bytes and two merges), and the error
 * paths. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctxkit/c.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static const char kBase64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Writes standard padded base64 of bytes[0..n) (n <= 3 here) to out. */
static void Base64(const unsigned char* bytes, size_t n, char* out) {
  unsigned v = (unsigned)bytes[0] << 16;
  if (n > 1) v |= (unsigned)bytes[1] << 8;
  if (n > 2) v |= bytes[2];
  out[0] = kBase64[(v >> 18) & 63];
  out[1] = kBase64[(v >> 12) & 63];
  out[2] = n > 1 ? kBase64[(v >> 6) & 63] : '=';
  out[3] = n > 2 ? kBase64[v & 63] : '=';
  out[4] = '\0';
}

static int WriteFile(const char* path, const char* content) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return 0;
  fputs(content, f);
  return fclose(f) == 0;
}

static int WriteVocabulary(const char* path) {
  FILE* f = fopen(path, "wb");
  char b64[5];
  int b;
  if (f == NULL) return 0;
  for (b = 0; b < 256; ++b) {
    unsigned char byte = (unsigned char)b;
    Base64(&byte, 1, b64);
    fprintf(f, "%s %d\n", b64, b);
  }
  Base64((const unsigned char*)"ab", 2, b64);
  fprintf(f, "%s 256\n", b64);
  Base64((const unsigned char*)"abc", 3, b64);
  fprintf(f, "%s 257\n", b64);
  return fclose(f) == 0;
}

int main(void) {
  char vocab[256], malformed[256], missing[256];
  const char* dir = "/tmp";
  unsigned long stamp = (unsigned long)time(NULL);
  ctxkit_tokenizer* tok = NULL;
  char* error = NULL;
  int rc;
  const char* specials = "{\"<|end|>\": 300}";

  /* C99 has no mkdtemp: names unique enough for concurrent test runs. */
  sprintf(vocab, "%s/ctxkit_capi_vocab_%lu_%p.tiktoken", dir, stamp,
          (void*)&tok);
  sprintf(malformed, "%s/ctxkit_capi_bad_%lu_%p.tiktoken", dir, stamp,
          (void*)&tok);
  sprintf(missing, "%s/ctxkit_capi_missing_%lu_%p.tiktoken", dir, stamp,
          (void*)&tok);
  CHECK(WriteVocabulary(vocab));
  CHECK(WriteFile(malformed, "YQ== 0\nYg== 1\nnot base64 2\n"));

  /* Success: merges and a special token. */
  rc = ctxkit_tokenizer_create_from_tiktoken_file(
      vocab, strlen(vocab), "small", 5, CTXKIT_PATTERN_GPT2, specials,
      strlen(specials), &tok, &error);
  CHECK(rc == CTXKIT_OK);
  CHECK(error == NULL);
  CHECK(tok != NULL);
  if (tok != NULL) {
    uint32_t ids[16];
    size_t n = 0;
    const char* text = "abcab<|end|>";
    CHECK(strcmp(ctxkit_tokenizer_name(tok), "small") == 0);
    CHECK(ctxkit_tokenizer_vocabulary_size(tok) == 301);
    rc = ctxkit_tokenizer_encode(tok, text, strlen(text),
                                 CTXKIT_ENCODE_ALLOW_SPECIAL, ids, 16, &n,
                                 &error);
    CHECK(rc == CTXKIT_OK);
    CHECK(n == 3 && ids[0] == 257 && ids[1] == 256 && ids[2] == 300);
    ctxkit_tokenizer_free(tok);
    tok = NULL;
  }

  /* Missing file. */
  rc = ctxkit_tokenizer_create_from_tiktoken_file(missing, strlen(missing), "x",
                                                  1, CTXKIT_PATTERN_CL100K,
                                                  NULL, 0, &tok, &error);
  CHECK(rc == CTXKIT_NOT_FOUND);
  CHECK(tok == NULL);
  CHECK(error != NULL && strstr(error, missing) != NULL);
  ctxkit_free(error);
  error = NULL;

  /* Malformed file: the message names the line. */
  rc = ctxkit_tokenizer_create_from_tiktoken_file(malformed, strlen(malformed),
                                                  "x", 1, CTXKIT_PATTERN_CL100K,
                                                  NULL, 0, &tok, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT);
  CHECK(tok == NULL);
  CHECK(error != NULL && strstr(error, "line 3") != NULL);
  ctxkit_free(error);
  error = NULL;

  /* Bad arguments. */
  rc = ctxkit_tokenizer_create_from_tiktoken_file(vocab, strlen(vocab), "x", 1,
                                                  7, NULL, 0, &tok, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT && tok == NULL);
  ctxkit_free(error);
  rc = ctxkit_tokenizer_create_from_tiktoken_file(vocab, strlen(vocab), "x", 1,
                                                  CTXKIT_PATTERN_GPT2, "[1]", 3,
                                                  &tok, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT && tok == NULL);
  ctxkit_free(error);
  rc = ctxkit_tokenizer_create_from_tiktoken_file(
      vocab, strlen(vocab), "x", 1, CTXKIT_PATTERN_GPT2, "{\"<|a|>\": 256}", 14,
      &tok, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT && tok == NULL);
  CHECK(error != NULL && strstr(error, "regular token") != NULL);
  ctxkit_free(error);
  rc = ctxkit_tokenizer_create_from_tiktoken_file(
      vocab, strlen(vocab), "x", 1, CTXKIT_PATTERN_GPT2,
      "{\"<|a|>\": 300, \"<|a|>\": 301}", 28, &tok, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT && tok == NULL);
  ctxkit_free(error);
  rc = ctxkit_tokenizer_create_from_tiktoken_file(
      vocab, strlen(vocab), "", 0, CTXKIT_PATTERN_GPT2, NULL, 0, &tok, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT && tok == NULL);
  ctxkit_free(error);
  rc = ctxkit_tokenizer_create_from_tiktoken_file(
      vocab, strlen(vocab), "x", 1, CTXKIT_PATTERN_GPT2, NULL, 0, NULL, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT);
  ctxkit_free(error);

  /* Llama 3: missing, and a file of the wrong shape. */
  rc = ctxkit_tokenizer_create_llama3(missing, strlen(missing), &tok, &error);
  CHECK(rc == CTXKIT_NOT_FOUND && tok == NULL);
  ctxkit_free(error);
  rc = ctxkit_tokenizer_create_llama3(vocab, strlen(vocab), &tok, &error);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT && tok == NULL);
  CHECK(error != NULL && strstr(error, "not Llama 3") != NULL);
  ctxkit_free(error);
  rc = ctxkit_tokenizer_create_llama3(NULL, 3, &tok, NULL);
  CHECK(rc == CTXKIT_INVALID_ARGUMENT && tok == NULL);

  remove(vocab);
  remove(malformed);
  if (failures == 0) printf("tokenizer_file_capi_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
