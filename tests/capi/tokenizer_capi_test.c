/* The tokenizer part of the C API, tested from C against the real library:
 * every function, every error path, and known token ids.
 *
 * Prints "N passed, M failed" and exits non-zero on any failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxkit/c.h"
#include "tests/capi/capi_check.h"

/* A successful call: OK and *error cleared. */
static void expect_ok(int rc, char* error, int line) {
  if (rc != CTXKIT_OK) {
    fprintf(stderr, "line %d: got %s (%s), want OK\n", line,
            ctxkit_status_name(rc), error ? error : "no message");
  }
  CHECK(rc == CTXKIT_OK);
  CHECK(error == NULL);
  ctxkit_free(error);
}
#define EXPECT_OK(call, error)         \
  do {                                 \
    const int rc_ = (call);            \
    expect_ok(rc_, (error), __LINE__); \
  } while (0)

#define GARBAGE ((char*)"garbage that must be overwritten")

static ctxkit_tokenizer* open_encoding(const char* name) {
  ctxkit_tokenizer* tok = NULL;
  char* error = NULL;
  EXPECT_OK(
      ctxkit_tokenizer_create_for_encoding(name, strlen(name), &tok, &error),
      error);
  CHECK(tok != NULL);
  return tok;
}

/* Encodes `text` with `flags` into ids (capacity 64) and compares with
 * `want` (n_want ids). */
static void expect_ids(const ctxkit_tokenizer* tok, const char* text,
                       size_t len, uint32_t flags, const uint32_t* want,
                       size_t n_want, int line) {
  uint32_t ids[64];
  size_t count = 99;
  char* error = GARBAGE;
  int rc =
      ctxkit_tokenizer_encode(tok, text, len, flags, ids, 64, &count, &error);
  expect_ok(rc, error, line);
  if (count != n_want ||
      (n_want > 0 && memcmp(ids, want, n_want * sizeof *ids) != 0)) {
    size_t i;
    fprintf(stderr, "line %d: got %u ids:", line, (unsigned)count);
    for (i = 0; i < count && i < 64; ++i) fprintf(stderr, " %u", ids[i]);
    fprintf(stderr, "\n");
    CHECK(0);
  } else {
    CHECK(1);
  }
}

static void test_for_encoding(void) {
  ctxkit_tokenizer* tok = NULL;
  ctxkit_tokenizer* again = NULL;
  char* error = GARBAGE;
  char* json = NULL;
  size_t json_len = 0;

  EXPECT_ERROR(
      ctxkit_tokenizer_create_for_encoding("cl100k_base", 11, NULL, &error),
      CTXKIT_INVALID_ARGUMENT, error, "out");
  CHECK(ctxkit_tokenizer_create_for_encoding("cl100k_base", 11, NULL, NULL) ==
        CTXKIT_INVALID_ARGUMENT);

  tok = (ctxkit_tokenizer*)&error; /* must be reset to NULL */
  EXPECT_ERROR(ctxkit_tokenizer_create_for_encoding(NULL, 3, &tok, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  CHECK(tok == NULL);

  tok = (ctxkit_tokenizer*)&error;
  EXPECT_ERROR(
      ctxkit_tokenizer_create_for_encoding("nope_base", 9, &tok, &error),
      CTXKIT_NOT_FOUND, error, "cl100k_base"); /* lists known ones */
  CHECK(tok == NULL);
  EXPECT_ERROR(ctxkit_tokenizer_create_for_encoding(NULL, 0, &tok, &error),
               CTXKIT_NOT_FOUND, error, NULL);
  CHECK(tok == NULL);
  /* The length counts, not the NUL: "cl100k_basex" cut to 11 bytes. */
  error = GARBAGE;
  EXPECT_OK(
      ctxkit_tokenizer_create_for_encoding("cl100k_basex", 11, &tok, &error),
      error);
  CHECK(tok != NULL);
  CHECK(strcmp(ctxkit_tokenizer_name(tok), "cl100k_base") == 0);
  CHECK(ctxkit_tokenizer_vocabulary_size(tok) >= 100277);
  /* Two handles of one encoding, freed independently. */
  EXPECT_OK(
      ctxkit_tokenizer_create_for_encoding("cl100k_base", 11, &again, NULL),
      NULL);
  ctxkit_tokenizer_free(tok);
  CHECK(strcmp(ctxkit_tokenizer_name(again), "cl100k_base") == 0);
  ctxkit_tokenizer_free(again);
  ctxkit_tokenizer_free(NULL); /* a no-op */
  CHECK(ctxkit_tokenizer_name(NULL) == NULL);
  CHECK(ctxkit_tokenizer_vocabulary_size(NULL) == 0);

  EXPECT_ERROR(ctxkit_tokenizer_encodings_json(NULL, &json_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_json");
  json = GARBAGE;
  EXPECT_ERROR(ctxkit_tokenizer_encodings_json(&json, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_json");
  CHECK(json == NULL);
  error = GARBAGE;
  EXPECT_OK(ctxkit_tokenizer_encodings_json(&json, &json_len, &error), error);
  CHECK(json != NULL && strlen(json) == json_len);
  CHECK(contains(json, "{\"schema_version\":1,\"encodings\":["));
  CHECK(contains(json, "\"cl100k_base\""));
  CHECK(contains(json, "\"o200k_base\""));
  CHECK(contains(json, "\"r50k_base\""));
  CHECK(contains(json, "\"claude\""));
  ctxkit_free(json);
}

static void test_for_model(void) {
  ctxkit_tokenizer* tok = NULL;
  char* error = GARBAGE;
  int exact = 7;
  int rc;

  EXPECT_ERROR(
      ctxkit_tokenizer_create_for_model("gpt-4o", 6, NULL, &exact, &error),
      CTXKIT_INVALID_ARGUMENT, error, "out");
  CHECK(exact == 0);
  EXPECT_ERROR(ctxkit_tokenizer_create_for_model(NULL, 6, &tok, &exact, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  CHECK(tok == NULL);

  exact = 7;
  error = GARBAGE;
  EXPECT_OK(ctxkit_tokenizer_create_for_model("gpt-4o-2024-08-06", 17, &tok,
                                              &exact, &error),
            error);
  CHECK(tok != NULL && strcmp(ctxkit_tokenizer_name(tok), "o200k_base") == 0);
  CHECK(exact == 1);
  ctxkit_tokenizer_free(tok);

  /* out_exact is optional; prefixes and ASCII case resolve like tiktoken. */
  EXPECT_OK(
      ctxkit_tokenizer_create_for_model("GPT-4-0613", 10, &tok, NULL, NULL),
      NULL);
  CHECK(tok != NULL && strcmp(ctxkit_tokenizer_name(tok), "cl100k_base") == 0);
  ctxkit_tokenizer_free(tok);

  tok = (ctxkit_tokenizer*)&error;
  exact = 7;
  EXPECT_ERROR(ctxkit_tokenizer_create_for_model("no-such-model", 13, &tok,
                                                 &exact, &error),
               CTXKIT_NOT_FOUND, error, "no-such-model");
  CHECK(tok == NULL);
  CHECK(exact == 0);
  EXPECT_ERROR(ctxkit_tokenizer_create_for_model("", 0, &tok, &exact, &error),
               CTXKIT_NOT_FOUND, error, NULL);

  /* Known, but its encoding is not built in: FAILED_PRECONDITION naming it. */
  tok = (ctxkit_tokenizer*)&error;
  EXPECT_ERROR(ctxkit_tokenizer_create_for_model("llama3.1:8b", 11, &tok,
                                                 &exact, &error),
               CTXKIT_FAILED_PRECONDITION, error, "llama3");
  CHECK(tok == NULL);

  /* Claude 3 and later: an approximation when its encoding is available. */
  exact = 7;
  rc = ctxkit_tokenizer_create_for_model("claude-3-5-sonnet-20241022", 26, &tok,
                                         &exact, &error);
  if (rc == CTXKIT_OK) {
    CHECK(exact == 0);
    CHECK(strcmp(ctxkit_tokenizer_name(tok), "claude") == 0);
    ctxkit_tokenizer_free(tok);
  } else {
    expect_error(rc, CTXKIT_FAILED_PRECONDITION, error, "claude", __LINE__);
    CHECK(tok == NULL && exact == 0);
  }
}

static void test_count_and_encode(void) {
  static const uint32_t cl100k_hello[] = {15339, 1917};
  static const uint32_t o200k_hello[] = {24912, 2375};
  static const uint32_t endoftext[] = {100257};
  ctxkit_tokenizer* cl100k = open_encoding("cl100k_base");
  ctxkit_tokenizer* o200k = open_encoding("o200k_base");
  const char* special = "a<|endoftext|>b";
  const size_t special_len = strlen(special);
  char* error = GARBAGE;
  size_t count = 99;
  size_t count_replaced = 0;
  uint32_t ids[64];
  uint32_t* sized = NULL;
  size_t i;
  char big[4096];

  /* Known values. */
  expect_ids(cl100k, "hello world", 11, 0, cl100k_hello, 2, __LINE__);
  expect_ids(o200k, "hello world", 11, 0, o200k_hello, 2, __LINE__);
  expect_ids(cl100k, NULL, 0, 0, NULL, 0, __LINE__); /* the empty string */
  EXPECT_OK(
      ctxkit_tokenizer_count(cl100k, "hello world", 11, 0, &count, &error),
      error);
  CHECK(count == 2);
  EXPECT_OK(ctxkit_tokenizer_count(o200k, "", 0, 0, &count, NULL), NULL);
  CHECK(count == 0);

  /* NULL arguments. */
  count = 99;
  EXPECT_ERROR(ctxkit_tokenizer_count(NULL, "x", 1, 0, &count, &error),
               CTXKIT_INVALID_ARGUMENT, error, "tokenizer");
  CHECK(count == 0);
  EXPECT_ERROR(ctxkit_tokenizer_count(cl100k, "x", 1, 0, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_count");
  EXPECT_ERROR(ctxkit_tokenizer_count(cl100k, NULL, 1, 0, &count, &error),
               CTXKIT_INVALID_ARGUMENT, error, "text");
  EXPECT_ERROR(
      ctxkit_tokenizer_encode(NULL, "x", 1, 0, ids, 64, &count, &error),
      CTXKIT_INVALID_ARGUMENT, error, "tokenizer");
  EXPECT_ERROR(
      ctxkit_tokenizer_encode(cl100k, "x", 1, 0, ids, 64, NULL, &error),
      CTXKIT_INVALID_ARGUMENT, error, "out_count");
  EXPECT_ERROR(
      ctxkit_tokenizer_encode(cl100k, NULL, 1, 0, ids, 64, &count, &error),
      CTXKIT_INVALID_ARGUMENT, error, "text");
  EXPECT_ERROR(
      ctxkit_tokenizer_encode(cl100k, "x", 1, 0, NULL, 4, &count, &error),
      CTXKIT_INVALID_ARGUMENT, error, "capacity");

  /* Flags: unknown bits and the exclusive pair. */
  EXPECT_ERROR(ctxkit_tokenizer_count(cl100k, "x", 1, 1u << 9, &count, &error),
               CTXKIT_INVALID_ARGUMENT, error, "0x200");
  EXPECT_ERROR(ctxkit_tokenizer_encode(
                   cl100k, "x", 1,
                   CTXKIT_ENCODE_ALLOW_SPECIAL | CTXKIT_ENCODE_SPECIAL_AS_TEXT,
                   ids, 64, &count, &error),
               CTXKIT_INVALID_ARGUMENT, error, "exclude");

  /* Buffer too small: OUT_OF_RANGE with the size needed, nothing written;
   * then right-sized. */
  ids[0] = 12345;
  count = 0;
  EXPECT_ERROR(ctxkit_tokenizer_encode(cl100k, "hello world", 11, 0, ids, 1,
                                       &count, &error),
               CTXKIT_OUT_OF_RANGE, error, "2 tokens");
  CHECK(count == 2);
  CHECK(ids[0] == 12345);
  count = 0;
  EXPECT_ERROR(ctxkit_tokenizer_encode(cl100k, "hello world", 11, 0, NULL, 0,
                                       &count, &error),
               CTXKIT_OUT_OF_RANGE, error, NULL);
  CHECK(count == 2);
  /* Without out_error the size is still reported. */
  count = 0;
  CHECK(ctxkit_tokenizer_encode(o200k, "hello world", 11, 0, NULL, 0, &count,
                                NULL) == CTXKIT_OUT_OF_RANGE);
  CHECK(count == 2);
  /* A longer text, sized by a first call. */
  for (i = 0; i + 1 < sizeof big; ++i) big[i] = "lorem ipsum dolor "[i % 18];
  big[sizeof big - 1] = '\0';
  CHECK(ctxkit_tokenizer_encode(o200k, big, strlen(big), 0, NULL, 0, &count,
                                NULL) == CTXKIT_OUT_OF_RANGE);
  CHECK(count > 64 && count <= strlen(big));
  sized = (uint32_t*)malloc(count * sizeof *sized);
  CHECK(sized != NULL);
  if (sized != NULL) {
    size_t got = 0;
    size_t counted = 0;
    EXPECT_OK(ctxkit_tokenizer_encode(o200k, big, strlen(big), 0, sized, count,
                                      &got, &error),
              error);
    CHECK(got == count);
    EXPECT_OK(
        ctxkit_tokenizer_count(o200k, big, strlen(big), 0, &counted, NULL),
        NULL);
    CHECK(counted == count);
    free(sized);
  }

  /* Invalid UTF-8: an error naming the offset, unless replaced by U+FFFD. */
  count = 99;
  EXPECT_ERROR(ctxkit_tokenizer_count(cl100k, "ab\xff", 3, 0, &count, &error),
               CTXKIT_INVALID_ARGUMENT, error, "2");
  CHECK(count == 0);
  EXPECT_ERROR(
      ctxkit_tokenizer_encode(cl100k, "ab\xff", 3, 0, ids, 64, &count, &error),
      CTXKIT_INVALID_ARGUMENT, error, "UTF-8");
  CHECK(count == 0);
  EXPECT_OK(ctxkit_tokenizer_count(cl100k, "ab\xff", 3,
                                   CTXKIT_ENCODE_REPLACE_INVALID_UTF8,
                                   &count_replaced, &error),
            error);
  EXPECT_OK(
      ctxkit_tokenizer_count(cl100k, "ab\xef\xbf\xbd", 5, 0, &count, NULL),
      NULL);
  CHECK(count_replaced == count && count > 0);
  {
    uint32_t want[64];
    size_t n_want = 0;
    EXPECT_OK(ctxkit_tokenizer_encode(cl100k, "ab\xef\xbf\xbd", 5, 0, want, 64,
                                      &n_want, NULL),
              NULL);
    expect_ids(cl100k, "ab\xff", 3, CTXKIT_ENCODE_REPLACE_INVALID_UTF8, want,
               n_want, __LINE__);
  }

  /* Special tokens: disallowed by default, allowed, or ordinary text. */
  count = 99;
  EXPECT_ERROR(
      ctxkit_tokenizer_count(cl100k, special, special_len, 0, &count, &error),
      CTXKIT_INVALID_ARGUMENT, error, "<|endoftext|>");
  CHECK(count == 0);
  EXPECT_ERROR(ctxkit_tokenizer_encode(cl100k, special + 1, special_len - 2, 0,
                                       ids, 64, &count, &error),
               CTXKIT_INVALID_ARGUMENT, error, "<|endoftext|>");
  expect_ids(cl100k, special + 1, special_len - 2, CTXKIT_ENCODE_ALLOW_SPECIAL,
             endoftext, 1, __LINE__);
  EXPECT_OK(ctxkit_tokenizer_count(cl100k, special, special_len,
                                   CTXKIT_ENCODE_ALLOW_SPECIAL, &count, NULL),
            NULL);
  CHECK(count == 3);
  EXPECT_OK(ctxkit_tokenizer_count(cl100k, special, special_len,
                                   CTXKIT_ENCODE_SPECIAL_AS_TEXT, &count, NULL),
            NULL);
  CHECK(count > 3);

  ctxkit_tokenizer_free(cl100k);
  ctxkit_tokenizer_free(o200k);
}

static void test_decode(void) {
  static const uint32_t hello[] = {15339, 1917};
  ctxkit_tokenizer* cl100k = open_encoding("cl100k_base");
  char* error = GARBAGE;
  char* text = GARBAGE;
  size_t len = 99;
  const char* bytes = NULL;
  size_t bytes_len = 0;
  uint32_t ff_id = 0;
  int found_ff = 0;
  uint32_t id;
  uint32_t bad[3];

  EXPECT_OK(ctxkit_tokenizer_decode(cl100k, hello, 2, &text, &len, &error),
            error);
  CHECK(len == 11 && text != NULL && strcmp(text, "hello world") == 0);
  ctxkit_free(text);
  EXPECT_OK(ctxkit_tokenizer_decode_utf8(cl100k, hello, 2, &text, &len, NULL),
            NULL);
  CHECK(len == 11 && text != NULL && strcmp(text, "hello world") == 0);
  ctxkit_free(text);
  /* No ids: the empty string, still a buffer to free. */
  EXPECT_OK(ctxkit_tokenizer_decode(cl100k, NULL, 0, &text, &len, NULL), NULL);
  CHECK(len == 0 && text != NULL && text[0] == '\0');
  ctxkit_free(text);

  /* NULL arguments. */
  text = GARBAGE;
  len = 99;
  EXPECT_ERROR(ctxkit_tokenizer_decode(NULL, hello, 2, &text, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "tokenizer");
  CHECK(text == NULL && len == 0);
  EXPECT_ERROR(ctxkit_tokenizer_decode(cl100k, hello, 2, NULL, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_text");
  EXPECT_ERROR(ctxkit_tokenizer_decode(cl100k, hello, 2, &text, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_text_len");
  EXPECT_ERROR(ctxkit_tokenizer_decode(cl100k, NULL, 2, &text, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "ids");
  EXPECT_ERROR(
      ctxkit_tokenizer_decode_utf8(NULL, hello, 2, &text, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "tokenizer");

  /* Ids that are not tokens. */
  bad[0] = 15339;
  bad[1] = 4000000000u;
  bad[2] = 1917;
  text = GARBAGE;
  EXPECT_ERROR(ctxkit_tokenizer_decode(cl100k, bad, 3, &text, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "4000000000");
  CHECK(text == NULL && len == 0);
  EXPECT_ERROR(
      ctxkit_tokenizer_decode_utf8(cl100k, bad, 3, &text, &len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "4000000000");
  bad[1] = ctxkit_tokenizer_vocabulary_size(cl100k);
  EXPECT_ERROR(ctxkit_tokenizer_decode(cl100k, bad, 3, &text, &len, &error),
               CTXKIT_INVALID_ARGUMENT, error, NULL);

  /* Token bytes, and the single-byte token 0xFF: raw bytes from decode,
   * U+FFFD from decode_utf8. */
  EXPECT_OK(
      ctxkit_tokenizer_token_bytes(cl100k, 15339, &bytes, &bytes_len, &error),
      error);
  CHECK(bytes_len == 5 && memcmp(bytes, "hello", 5) == 0);
  bytes = "x";
  EXPECT_ERROR(ctxkit_tokenizer_token_bytes(cl100k, 4000000000u, &bytes,
                                            &bytes_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "4000000000");
  CHECK(bytes == NULL && bytes_len == 0);
  EXPECT_ERROR(
      ctxkit_tokenizer_token_bytes(NULL, 1, &bytes, &bytes_len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "tokenizer");
  EXPECT_ERROR(
      ctxkit_tokenizer_token_bytes(cl100k, 1, NULL, &bytes_len, &error),
      CTXKIT_INVALID_ARGUMENT, error, "out_bytes");
  for (id = 0; id < 256 && !found_ff; ++id) {
    if (ctxkit_tokenizer_token_bytes(cl100k, id, &bytes, &bytes_len, NULL) ==
            CTXKIT_OK &&
        bytes_len == 1 && (unsigned char)bytes[0] == 0xFF) {
      ff_id = id;
      found_ff = 1;
    }
  }
  CHECK(found_ff);
  {
    uint32_t seq[2];
    seq[0] = 15339;
    seq[1] = ff_id;
    EXPECT_OK(ctxkit_tokenizer_decode(cl100k, seq, 2, &text, &len, NULL), NULL);
    CHECK(len == 6 && memcmp(text, "hello\xff", 6) == 0);
    ctxkit_free(text);
    EXPECT_OK(ctxkit_tokenizer_decode_utf8(cl100k, seq, 2, &text, &len, NULL),
              NULL);
    CHECK(len == 8 && memcmp(text, "hello\xef\xbf\xbd", 8) == 0);
    ctxkit_free(text);
  }
  ctxkit_tokenizer_free(cl100k);
}

static void test_truncate(void) {
  ctxkit_tokenizer* cl100k = open_encoding("cl100k_base");
  char* error = GARBAGE;
  size_t bytes = 99;
  size_t tokens = 99;
  const char* emoji = "\xf0\x9f\x8e\x89\xf0\x9f\x8e\x89\xf0\x9f\x8e\x89";
  size_t emoji_tokens = 0;
  size_t max;

  EXPECT_OK(ctxkit_tokenizer_truncate(cl100k, "hello world", 11, 1, 0, &bytes,
                                      &tokens, &error),
            error);
  CHECK(bytes == 5 && tokens == 1);
  EXPECT_OK(ctxkit_tokenizer_truncate(cl100k, "hello world", 11, 10, 0, &bytes,
                                      &tokens, NULL),
            NULL);
  CHECK(bytes == 11 && tokens == 2);
  EXPECT_OK(ctxkit_tokenizer_truncate(cl100k, "hello world", 11, 0, 0, &bytes,
                                      &tokens, NULL),
            NULL);
  CHECK(bytes == 0 && tokens == 0);
  /* The out pointers are optional. */
  EXPECT_OK(ctxkit_tokenizer_truncate(cl100k, "hello world", 11, 1, 0, NULL,
                                      NULL, NULL),
            NULL);

  /* Never inside a character: each cut is a whole number of emoji. */
  EXPECT_OK(ctxkit_tokenizer_count(cl100k, emoji, 12, 0, &emoji_tokens, NULL),
            NULL);
  CHECK(emoji_tokens > 3); /* some token ends inside a character */
  for (max = 0; max <= emoji_tokens; ++max) {
    EXPECT_OK(ctxkit_tokenizer_truncate(cl100k, emoji, 12, max, 0, &bytes,
                                        &tokens, NULL),
              NULL);
    CHECK(bytes % 4 == 0 && tokens <= max);
  }

  bytes = tokens = 99;
  EXPECT_ERROR(
      ctxkit_tokenizer_truncate(NULL, "x", 1, 1, 0, &bytes, &tokens, &error),
      CTXKIT_INVALID_ARGUMENT, error, "tokenizer");
  CHECK(bytes == 0 && tokens == 0);
  EXPECT_ERROR(
      ctxkit_tokenizer_truncate(cl100k, NULL, 1, 1, 0, &bytes, &tokens, &error),
      CTXKIT_INVALID_ARGUMENT, error, "text");
  EXPECT_ERROR(ctxkit_tokenizer_truncate(cl100k, "x", 1, 1, 1u << 30, &bytes,
                                         &tokens, &error),
               CTXKIT_INVALID_ARGUMENT, error, "flags");
  /* Invalid UTF-8 even when replacement is asked for. */
  EXPECT_ERROR(ctxkit_tokenizer_truncate(cl100k, "ab\xff", 3, 1,
                                         CTXKIT_ENCODE_REPLACE_INVALID_UTF8,
                                         &bytes, &tokens, &error),
               CTXKIT_INVALID_ARGUMENT, error, "UTF-8");
  EXPECT_ERROR(ctxkit_tokenizer_truncate(cl100k, "<|endoftext|>", 13, 1, 0,
                                         &bytes, &tokens, &error),
               CTXKIT_INVALID_ARGUMENT, error, "<|endoftext|>");
  EXPECT_OK(ctxkit_tokenizer_truncate(cl100k, "<|endoftext|>x", 14, 1,
                                      CTXKIT_ENCODE_ALLOW_SPECIAL, &bytes,
                                      &tokens, NULL),
            NULL);
  CHECK(bytes == 13 && tokens == 1);
  ctxkit_tokenizer_free(cl100k);
}

static void test_estimate(void) {
  CHECK(ctxkit_tokens_estimate(NULL, 5) == 0);
  CHECK(ctxkit_tokens_estimate("", 0) == 0);
  CHECK(ctxkit_tokens_estimate("hello world", 11) >= 2);
  CHECK(ctxkit_tokens_estimate("\xff\xfe", 2) == 2); /* one per bad byte */
}

static void test_count_messages(void) {
  const char* messages = "[{\"role\":\"user\",\"content\":\"hi\"}]";
  const size_t messages_len = strlen(messages);
  const char* anthropic =
      "{\"system\":\"be brief\",\"messages\":[{\"role\":\"user\","
      "\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]},"
      "{\"role\":\"assistant\",\"content\":\"hi there\"}]}";
  char* error = GARBAGE;
  char* json = GARBAGE;
  size_t json_len = 99;
  size_t total = 99;

  /* The cookbook's rule for gpt-4o: 3 + "user" + "hi" + 3 = 8. */
  EXPECT_OK(ctxkit_chat_count("gpt-4o", 6, messages, messages_len, 0, &total,
                              &json, &json_len, &error),
            error);
  CHECK(total == 8);
  CHECK(json != NULL && strlen(json) == json_len);
  CHECK(contains(json, "\"schema_version\":1"));
  CHECK(contains(json, "\"model\":\"gpt-4o\""));
  CHECK(contains(json, "\"total\":8"));
  CHECK(contains(json, "\"messages\":[5]"));
  CHECK(contains(json, "\"reply_priming\":3"));
  CHECK(contains(json, "\"encoding\":\"o200k_base\""));
  CHECK(contains(json, "\"method\":\"tokenizer\""));
  CHECK(contains(json, "\"exact\":true"));
  ctxkit_free(json);

  /* The document is optional. */
  total = 0;
  EXPECT_OK(ctxkit_chat_count("gpt-4o", 6, messages, messages_len, 0, &total,
                              NULL, NULL, NULL),
            NULL);
  CHECK(total == 8);

  /* Anthropic shape; an unknown model is estimated. */
  EXPECT_OK(
      ctxkit_chat_count("claude-sonnet-4-20250514", 24, anthropic,
                        strlen(anthropic), 0, &total, &json, &json_len, NULL),
      NULL);
  CHECK(total > 6);
  CHECK(contains(json, "\"exact\":false"));
  CHECK(contains(json, "\"messages\":[")); /* two entries */
  ctxkit_free(json);
  /* An unknown model is refused, naming the closest known ones, unless an
   * estimate is asked for. */
  EXPECT_ERROR(ctxkit_chat_count("gpt4o", 5, messages, messages_len, 0, &total,
                                 &json, &json_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "did you mean gpt-4o");
  CHECK(json == NULL && total == 0);
  EXPECT_ERROR(ctxkit_chat_count("", 0, messages, messages_len, 0, &total, NULL,
                                 NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "CTXKIT_CHAT_ESTIMATE");
  EXPECT_ERROR(ctxkit_chat_count("gpt-4o", 6, messages, messages_len, 1u << 5,
                                 &total, NULL, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "flags");
  EXPECT_OK(ctxkit_chat_count("no-such-model", 13, messages, messages_len,
                              CTXKIT_CHAT_ESTIMATE_UNKNOWN_MODEL, &total, &json,
                              &json_len, NULL),
            NULL);
  CHECK(total > 0);
  CHECK(contains(json, "\"method\":\"heuristic\""));
  CHECK(contains(json, "\"encoding\":\"\""));
  ctxkit_free(json);

  /* Errors. */
  json = GARBAGE;
  json_len = total = 99;
  EXPECT_ERROR(ctxkit_chat_count("gpt-4o", 6, "[{\"role\":1}]", 12, 0, &total,
                                 &json, &json_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "messages[0]");
  CHECK(json == NULL && json_len == 0 && total == 0);
  EXPECT_ERROR(ctxkit_chat_count("gpt-4o", 6, "[{", 2, 0, &total, &json,
                                 &json_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, NULL);
  EXPECT_ERROR(ctxkit_chat_count("gpt-4o", 6, messages, messages_len, 0, NULL,
                                 &json, &json_len, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_total");
  EXPECT_ERROR(ctxkit_chat_count("gpt-4o", 6, messages, messages_len, 0, &total,
                                 &json, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "out_json_len");
  EXPECT_ERROR(ctxkit_chat_count(NULL, 6, messages, messages_len, 0, &total,
                                 NULL, NULL, &error),
               CTXKIT_INVALID_ARGUMENT, error, "NULL");
  EXPECT_ERROR(
      ctxkit_chat_count("gpt-4o", 6, NULL, 3, 0, &total, NULL, NULL, &error),
      CTXKIT_INVALID_ARGUMENT, error, "NULL");
}

int main(void) {
  test_for_encoding();
  test_for_model();
  test_count_and_encode();
  test_decode();
  test_truncate();
  test_estimate();
  test_count_messages();
  return capi_report();
}
