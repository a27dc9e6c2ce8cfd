/* ctxkit C API: the one ABI-stable interface of ctxkit.
 *
 * Python (ctypes/cffi), Rust, Go and C programs use ctxkit through this
 * header alone. It is valid C99 and C++, and it is the ABI contract: within a
 * SONAME, functions are only added, never changed or removed.
 *
 * Conventions, the same for every function:
 *
 *  - Names are ctxkit_<object>_<verb>[_<qualifier>]: ctxkit_cache_put,
 *    ctxkit_tokenizer_create_for_model. Objects are opaque handles made by
 *    a *_create function and released by the matching *_free, or attached
 *    to a store by a *_open function and released by the matching *_close;
 *    both accept NULL.
 *  - Every fallible function returns an int status: CTXKIT_OK (0) or one of
 *    the CTXKIT_* codes below (numbered like absl::StatusCode; fixed forever).
 *  - Every fallible function takes a trailing `char** out_error`. If it is not
 *    NULL, then on failure *out_error receives a NUL-terminated UTF-8 message
 *    naming what was wrong, which the caller releases with ctxkit_free(); on
 *    success *out_error is set to NULL. There is no thread-local "last error".
 *  - On failure every out parameter other than out_error is set to NULL / 0,
 *    so a failed create leaves nothing to free.
 *  - Strings are passed in as pointer + length (UTF-8, not necessarily
 *    NUL-terminated; no input is ever read up to a NUL); a NULL pointer with
 *    length 0 is the empty string, or "absent" where an input is optional.
 *  - Every output buffer out_X comes with its length in out_X_len:
 *    out_json / out_json_len, out_text / out_text_len.
 *  - Documents (results, statistics) are returned as UTF-8 JSON objects with a
 *    "schema_version" field, as pointer + length, released with ctxkit_free();
 *    they are also NUL-terminated for convenience.
 *  - An optional number is passed by pointer: NULL means absent, which
 *    takes the default stated for it. A plain number is always used as
 *    given (where 0 means "no limit", that is said).
 *  - Enumerations are typedef'd for documentation (ctxkit_status_code,
 *    ctxkit_encode_flags, ctxkit_chat_count_flags, ctxkit_pattern), but
 *    functions take and return them as int / uint32_t, whose size does not
 *    depend on the compiler.
 *  - Calls whose inputs are many optional fields also have a *_request
 *    form taking one JSON object of named members (unknown members are
 *    INVALID_ARGUMENT naming the closest known one), which bindings and
 *    callers with optional fields find easier to get right than a long
 *    positional list.
 *  - Handles may be closed in any order: a part handle (conversations,
 *    references, cache, analytics) keeps its store's environment open, and
 *    a compactor keeps its cache and analytics, until that handle is closed
 *    or freed itself. Each handle's own calls must have returned before it
 *    is closed.
 *  - Stability: within a SONAME every function and every documented member
 *    of a returned document stays; documents only gain members. The
 *    section "Experimental" at the end is the exception: its functions and
 *    the members marked experimental there may change in any release
 *    before 1.0, and are declared only when CTXKIT_EXPERIMENTAL_API is
 *    defined before this header is included (as zstd's static-linking-only
 *    section).
 *  - No C++ exception ever crosses this interface; a failed allocation is
 *    reported as CTXKIT_RESOURCE_EXHAUSTED.
 *
 * Thread safety is stated per object.
 */
#ifndef CTXKIT_C_H_
#define CTXKIT_C_H_

#include <stddef.h>
#include <stdint.h>

#include "ctxkit/export.h"
#include "ctxkit/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */

typedef enum ctxkit_status_code {
  CTXKIT_OK = 0,
  CTXKIT_CANCELLED = 1,
  CTXKIT_UNKNOWN = 2,
  CTXKIT_INVALID_ARGUMENT = 3,
  CTXKIT_DEADLINE_EXCEEDED = 4,
  CTXKIT_NOT_FOUND = 5,
  CTXKIT_ALREADY_EXISTS = 6,
  CTXKIT_PERMISSION_DENIED = 7,
  CTXKIT_RESOURCE_EXHAUSTED = 8,
  CTXKIT_FAILED_PRECONDITION = 9,
  CTXKIT_ABORTED = 10,
  CTXKIT_OUT_OF_RANGE = 11,
  CTXKIT_UNIMPLEMENTED = 12,
  CTXKIT_INTERNAL = 13,
  CTXKIT_UNAVAILABLE = 14,
  CTXKIT_DATA_LOSS = 15,
  CTXKIT_UNAUTHENTICATED = 16
} ctxkit_status_code;

/* The canonical name of a status code ("OK", "NOT_FOUND", ...), or
 * "UNKNOWN_CODE" for any other value. Static storage; never NULL; never
 * freed. Thread-safe. */
CTXKIT_EXPORT const char* ctxkit_status_name(int code);

/* ------------------------------------------------------------------------ */
/* Version                                                                  */

/* The version of the library actually loaded, as CTXKIT_VERSION_NUMBER
 * (MAJOR * 10000 + MINOR * 100 + PATCH). Thread-safe. */
CTXKIT_EXPORT uint32_t ctxkit_version_number(void);

/* The version of the library actually loaded, "MAJOR.MINOR.PATCH". Static
 * storage; never NULL; never freed. Thread-safe. */
CTXKIT_EXPORT const char* ctxkit_version_string(void);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

/* Releases a message or document that ctxkit returned. NULL is a no-op.
 * Never pass it anything else (in particular, not an opaque handle).
 * Thread-safe. */
CTXKIT_EXPORT void ctxkit_free(void* ptr);

/* ------------------------------------------------------------------------ */
/* Store options                                                            */

/* How to open a store. Not thread-safe: configure from one thread, then it
 * may be shared read-only by concurrent ctxkit_store_open calls. */
typedef struct ctxkit_store_options ctxkit_store_options;

/* Creates options holding the defaults: map size 64 MiB, ceiling 64 GiB,
 * read-write, create the store if missing, 126 readers.
 * Errors: INVALID_ARGUMENT if out_options is NULL; RESOURCE_EXHAUSTED if
 * memory runs out. */
CTXKIT_EXPORT int ctxkit_store_options_create(
    ctxkit_store_options** out_options, char** out_error);

/* Releases options. NULL is a no-op. A store opened with them does not need
 * them afterwards. */
CTXKIT_EXPORT void ctxkit_store_options_free(ctxkit_store_options* options);

/* Initial size of the memory map in bytes (at least 1 MiB). An existing store
 * whose map is already larger keeps its size.
 * Errors: INVALID_ARGUMENT for NULL options or a size below 1 MiB. */
CTXKIT_EXPORT int ctxkit_store_options_set_map_size(
    ctxkit_store_options* options, uint64_t bytes, char** out_error);

/* Ceiling in bytes up to which the map grows by itself when a write does not
 * fit (at least 1 MiB; ctxkit_store_open checks it is >= the map size).
 * Beyond it a write fails with RESOURCE_EXHAUSTED and changes nothing.
 * Errors: INVALID_ARGUMENT for NULL options or a size below 1 MiB. */
CTXKIT_EXPORT int ctxkit_store_options_set_max_map_size(
    ctxkit_store_options* options, uint64_t bytes, char** out_error);

/* Non-zero: open read-only (nothing is created; the store must exist; every
 * write fails with FAILED_PRECONDITION). Zero: read-write (the default).
 * Errors: INVALID_ARGUMENT for NULL options. */
CTXKIT_EXPORT int ctxkit_store_options_set_read_only(
    ctxkit_store_options* options, int read_only, char** out_error);

/* Non-zero (the default): a read-write open creates the store when the path
 * holds none (see ctxkit_store_open). Zero: it never creates anything and a
 * path without a store is NOT_FOUND; what callers that only read or update
 * existing data should set, so that a mistyped path is reported instead of
 * answered from a new, empty store. Read-only opens never create.
 * Errors: INVALID_ARGUMENT for NULL options. */
CTXKIT_EXPORT int ctxkit_store_options_set_create_if_missing(
    ctxkit_store_options* options, int create_if_missing, char** out_error);

/* How a commit reaches the disk (ctxkit::StoreSync in store.h).
 * CTXKIT_STORE_SYNC_FULL (the default): LMDB flushes the data file and then
 * the meta page on every commit; an acknowledged commit survives a killed
 * process, an OS crash and a power loss.
 * CTXKIT_STORE_SYNC_DATA_ONLY: the meta page is written but not flushed
 * (MDB_NOMETASYNC), one flush per commit instead of two. A killed process
 * loses nothing; an OS crash or power loss may roll back the last commit,
 * never corrupting the store or losing an earlier commit. A store already
 * open in this process read-write must be opened again with the same value
 * (else FAILED_PRECONDITION).
 * Errors: INVALID_ARGUMENT for NULL options or another value. */
#define CTXKIT_STORE_SYNC_FULL 0
#define CTXKIT_STORE_SYNC_DATA_ONLY 1
CTXKIT_EXPORT int ctxkit_store_options_set_sync(ctxkit_store_options* options,
                                                int sync, char** out_error);

/* Non-zero: ctxkit_store_open walks every page of every tree and refuses a
 * store damaged anywhere with DATA_LOSS, as ctxkit_store_check_json reports
 * it. Zero (the default): it checks the meta pages, the directory of
 * sub-databases and each one's root only, and garbage deeper in a tree can
 * still kill the process with SIGSEGV or SIGBUS when a read reaches it
 * (LMDB maps the file and trusts its pages). The cost is one read of every
 * page in use at open: worth it for a process that stays up (StoreOptions::
 * check_every_page in store.h). Errors: INVALID_ARGUMENT for NULL options. */
CTXKIT_EXPORT int ctxkit_store_options_set_check_every_page(
    ctxkit_store_options* options, int check_every_page, char** out_error);

/* ------------------------------------------------------------------------ */
/* Store                                                                    */

/* An open store: one LMDB environment in a directory, holding everything
 * ctxkit persists. Thread-safe: one handle may be used by many threads at
 * once. Opening a directory that is already open in this process (a
 * notebook re-running its "open" cell) gives a new handle on the same
 * environment, since LMDB forbids two environments on one directory in one
 * process; the environment closes with the last handle (and the last part
 * handle) on it. */
typedef struct ctxkit_store ctxkit_store;

/* Opens the store in directory `path` (path_len bytes, any bytes but NUL).
 * Unless read-only, a missing store is created: the directory (not its
 * parents) when it is missing, or in it when it is empty. A directory that
 * holds other files is never made a store, so a mistyped path cannot turn a
 * project or home directory into one. `options` may be NULL for the
 * defaults; it is not retained.
 *
 * Errors: INVALID_ARGUMENT (NULL out_store, empty path, NUL in the path, bad
 * options); NOT_FOUND (the parent directory, or for read-only the store, does
 * not exist); PERMISSION_DENIED (cannot read or write the directory);
 * FAILED_PRECONDITION (the path is a file; it holds no store but other
 * files, the message naming one; it holds something that is not a
 * ctxkit store; the store's on-disk format is newer than this library's, the
 * message naming both);
 * DATA_LOSS (corrupted); RESOURCE_EXHAUSTED (out of memory or map space).
 *
 * When the directory is already open in this process, the new handle
 * shares that environment: its map sizes are the environment's (the
 * options' sizes are not applied), and it must agree on read_only, else
 * FAILED_PRECONDITION naming both. */
CTXKIT_EXPORT int ctxkit_store_open(const char* path, size_t path_len,
                                    const ctxkit_store_options* options,
                                    ctxkit_store** out_store, char** out_error);

/* Releases the handle. NULL is a no-op. No other call on the handle may be
 * in progress or follow. The environment closes when no store handle and no
 * part handle opened from one uses it any longer. */
CTXKIT_EXPORT void ctxkit_store_close(ctxkit_store* store);

/* The store's vital figures as a JSON document:
 *   {"schema_version":1, "path", "format_version", "read_only", "map_size",
 *    "max_map_size", "page_size", "used_pages", "used_bytes",
 *    "last_transaction_id", "max_readers", "readers_in_use",
 *    "databases":[{"name","entries","pages","depth"}, ...]}
 * *out_json (released with ctxkit_free) and *out_json_len receive it.
 * Errors: INVALID_ARGUMENT for a NULL argument; INTERNAL if LMDB fails. */
CTXKIT_EXPORT int ctxkit_store_info_json(const ctxkit_store* store,
                                         char** out_json, size_t* out_json_len,
                                         char** out_error);

/* Checks that the store is whole (ctxkit/store_check.h says what is
 * checked): every page of every LMDB tree walked without reading past the
 * end of the file, and every total of the conversations, references and
 * cache recounted from their records, all over one snapshot. On success the
 * report, as a JSON document:
 *   {"schema_version":1, "path", "transaction_id", "page_size", "pages",
 *    "used_pages", "free_pages", "unaccounted_pages",
 *    "trees":[{"name","entries","branch_pages","leaf_pages",
 *              "overflow_pages","depth"}, ...],
 *    "conversations", "messages", "references", "cache_entries"}
 * *out_json (released with ctxkit_free) and *out_json_len receive it.
 * Errors: INVALID_ARGUMENT for a NULL argument; DATA_LOSS naming the file,
 * sub-database, page or key and the stored and recounted values at the first
 * damage found; the status of a failed read otherwise. Reads every page in
 * use: a maintenance call, not for serving paths. Thread-safe. */
CTXKIT_EXPORT int ctxkit_store_check_json(const ctxkit_store* store,
                                          char** out_json, size_t* out_json_len,
                                          char** out_error);

/* ------------------------------------------------------------------------ */
/* Tokenizer                                                                */

/* An exact byte-pair-encoding tokenizer (token ids identical to OpenAI's
 * tiktoken for the same encoding and settings). Immutable and thread-safe:
 * one handle may be used by any number of threads at once. Handles are
 * cheap: every handle of one encoding shares the same tokenizer, built on
 * first use (milliseconds) and kept for the life of the process. */
typedef struct ctxkit_tokenizer ctxkit_tokenizer;

/* Flags of the encode, count and truncate calls, or'ed together; 0 is
 * tiktoken's default.
 *
 * Special tokens (e.g. "<|endoftext|>"): by default their text in the input
 * is an INVALID_ARGUMENT error naming the token and its byte offset, since
 * text that came from a user must not be able to inject control tokens.
 * CTXKIT_ENCODE_ALLOW_SPECIAL encodes such text as the special token
 * (tiktoken's allowed_special="all"); CTXKIT_ENCODE_SPECIAL_AS_TEXT encodes
 * it as ordinary text (tiktoken's disallowed_special=()); giving both is
 * INVALID_ARGUMENT.
 *
 * Invalid UTF-8: by default an INVALID_ARGUMENT error naming the byte
 * offset; with CTXKIT_ENCODE_REPLACE_INVALID_UTF8 every ill-formed sequence
 * is encoded as U+FFFD instead (not accepted by ctxkit_tokenizer_truncate,
 * whose result must be a prefix of the input).
 *
 * Any other bit is INVALID_ARGUMENT, so that a program written for a later
 * version fails clearly rather than being silently misunderstood. */
typedef enum ctxkit_encode_flags {
  CTXKIT_ENCODE_ALLOW_SPECIAL = 1 << 0,
  CTXKIT_ENCODE_SPECIAL_AS_TEXT = 1 << 1,
  CTXKIT_ENCODE_REPLACE_INVALID_UTF8 = 1 << 2
} ctxkit_encode_flags;

/* The tokenizer of built-in encoding `name` (name_len bytes), such as
 * "cl100k_base" or "o200k_base" (ctxkit_tokenizer_encodings_json lists them).
 * Release it with ctxkit_tokenizer_free.
 * Errors: INVALID_ARGUMENT (NULL out, NULL name with a non-zero length);
 * NOT_FOUND for an unknown name, the message listing the known ones;
 * DATA_LOSS if an embedded vocabulary is damaged; RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_tokenizer_create_for_encoding(const char* name,
                                                       size_t name_len,
                                                       ctxkit_tokenizer** out,
                                                       char** out_error);

/* The tokenizer that model `model` (model_len bytes) uses, resolved by the
 * built-in model registry the way tiktoken resolves names (an exact name,
 * else the longest registered prefix; ASCII case ignored):
 * "gpt-4o-2024-08-06" -> o200k_base, "gpt-4" -> cl100k_base.
 *
 * *out_exact (when out_exact is not NULL) receives 1 when the encoding is
 * the model's own, so counts are exact, and 0 when it only approximates the
 * model's tokenizer (Claude 3 and later, whose tokenizer is not public).
 *
 * A model that is known but whose encoding this library cannot provide
 * (the Llama 3 family, encoding "llama3", whose vocabulary is not built in)
 * is FAILED_PRECONDITION, the message naming the encoding; an unknown model
 * is NOT_FOUND. In both cases the caller decides: ctxkit_tokens_estimate
 * gives a tokenizer-free estimate, or ctxkit_tokenizer_create_for_encoding an
 * approximation it chooses.
 * Errors: INVALID_ARGUMENT (NULL out, NULL model with a non-zero length);
 * NOT_FOUND; FAILED_PRECONDITION; DATA_LOSS; RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_tokenizer_create_for_model(const char* model,
                                                    size_t model_len,
                                                    ctxkit_tokenizer** out,
                                                    int* out_exact,
                                                    char** out_error);

/* Releases a handle. NULL is a no-op. The shared tokenizer behind it stays
 * cached; views returned by ctxkit_tokenizer_name and
 * ctxkit_tokenizer_token_bytes are valid until the handle is freed. */
CTXKIT_EXPORT void ctxkit_tokenizer_free(ctxkit_tokenizer* tokenizer);

/* The encoding's name ("cl100k_base"), NUL-terminated, valid until the
 * handle is freed; NULL for a NULL handle. Thread-safe. */
CTXKIT_EXPORT const char* ctxkit_tokenizer_name(
    const ctxkit_tokenizer* tokenizer);

/* One past the highest token id, special tokens included; 0 for a NULL
 * handle. Thread-safe. */
CTXKIT_EXPORT uint32_t
ctxkit_tokenizer_vocabulary_size(const ctxkit_tokenizer* tokenizer);

/* The names of the built-in encodings as a JSON document:
 *   {"schema_version":1,"encodings":["cl100k_base", ...]}
 * in *out_json (released with ctxkit_free) and *out_json_len.
 * Errors: INVALID_ARGUMENT for a NULL argument; RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_tokenizer_encodings_json(char** out_json,
                                                  size_t* out_json_len,
                                                  char** out_error);

/* The number of tokens of `text` (len bytes of UTF-8), without building the
 * list of ids: the length ctxkit_tokenizer_encode would give.
 * Errors: INVALID_ARGUMENT (NULL tokenizer or out_count, NULL text with a
 * non-zero length, unknown flags, invalid UTF-8 or disallowed special-token
 * text: see the flags above). */
CTXKIT_EXPORT int ctxkit_tokenizer_count(const ctxkit_tokenizer* tokenizer,
                                         const char* text, size_t len,
                                         uint32_t flags, size_t* out_count,
                                         char** out_error);

/* The token ids of `text` (len bytes of UTF-8), written to ids[0 ..
 * *out_count). When `capacity` is smaller than the number of tokens,
 * nothing is written to `ids`, *out_count receives the number needed and
 * the call returns OUT_OF_RANGE: call first with ids NULL and capacity 0 to
 * size the buffer, or pass one of `len` ids, which always suffices since
 * every token stands for at least one byte of the input (3 * len with
 * CTXKIT_ENCODE_REPLACE_INVALID_UTF8, which may turn one byte into the three
 * of U+FFFD). `ids` may be NULL only when capacity is 0.
 * Errors: INVALID_ARGUMENT (as ctxkit_tokenizer_count; NULL ids with a
 * non-zero capacity); OUT_OF_RANGE (buffer too small, *out_count set). On
 * every other error *out_count is 0. */
CTXKIT_EXPORT int ctxkit_tokenizer_encode(const ctxkit_tokenizer* tokenizer,
                                          const char* text, size_t len,
                                          uint32_t flags, uint32_t* ids,
                                          size_t capacity, size_t* out_count,
                                          char** out_error);

/* The bytes that ids[0 .. n) stand for, concatenated, in *out_text
 * (released with ctxkit_free; also NUL-terminated) and *out_text_len. Token
 * boundaries may fall inside a UTF-8 character, so the bytes need not be
 * valid UTF-8 (and may hold NUL); see ctxkit_tokenizer_decode_utf8.
 * Errors: INVALID_ARGUMENT (a NULL argument other than ids with n == 0; an
 * id that is not a token, the message naming its index and value);
 * RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_tokenizer_decode(const ctxkit_tokenizer* tokenizer,
                                          const uint32_t* ids, size_t n,
                                          char** out_text, size_t* out_text_len,
                                          char** out_error);

/* As ctxkit_tokenizer_decode, with every ill-formed UTF-8 sequence replaced
 * by U+FFFD, so the result is always valid UTF-8. */
CTXKIT_EXPORT int ctxkit_tokenizer_decode_utf8(
    const ctxkit_tokenizer* tokenizer, const uint32_t* ids, size_t n,
    char** out_text, size_t* out_text_len, char** out_error);

/* The bytes of token `id`, as a view (*out_bytes, *out_bytes_len) into the
 * tokenizer, valid until the handle is freed; not NUL-terminated.
 * Errors: INVALID_ARGUMENT (a NULL argument; `id` is not a token). */
CTXKIT_EXPORT int ctxkit_tokenizer_token_bytes(
    const ctxkit_tokenizer* tokenizer, uint32_t id, const char** out_bytes,
    size_t* out_bytes_len, char** out_error);

/* Cuts `text` to at most max_tokens tokens: *out_prefix_len receives the
 * length of the longest prefix of `text` whose tokens are the first
 * *out_prefix_tokens (<= max_tokens) tokens of the whole text and which ends
 * on a UTF-8 character boundary (a token may end inside a character; then
 * the cut moves back). When the text fits, *out_prefix_len is len. Either
 * out pointer may be NULL if not wanted.
 * Errors: INVALID_ARGUMENT (NULL tokenizer; NULL text with a non-zero
 * length; unknown flags; disallowed special-token text; invalid UTF-8, even
 * with CTXKIT_ENCODE_REPLACE_INVALID_UTF8, since the result is a prefix of
 * the input). */
CTXKIT_EXPORT int ctxkit_tokenizer_truncate(const ctxkit_tokenizer* tokenizer,
                                            const char* text, size_t len,
                                            size_t max_tokens, uint32_t flags,
                                            size_t* out_prefix_len,
                                            size_t* out_prefix_tokens,
                                            char** out_error);

/* The number of tokens of each of the n texts texts[i] (lens[i] bytes of
 * UTF-8), as ctxkit_tokenizer_count gives it with `flags`, into
 * out_counts[0 .. n), counted on up to `threads` threads (0: one per core;
 * fewer when there is too little text to repay starting them: under 64 KiB
 * a thread). The texts are only read during the call. When n is 0 the
 * arrays may be NULL.
 * Errors: INVALID_ARGUMENT (NULL tokenizer; NULL texts, lens or out_counts
 * with n > 0; texts[i] NULL with lens[i] > 0; unknown flags; invalid UTF-8
 * or disallowed special-token text, the message naming the index of the
 * first text that fails, "texts[3]: ..."); RESOURCE_EXHAUSTED. On error
 * every out_counts[i] is 0. Thread-safe. */
CTXKIT_EXPORT int ctxkit_tokenizer_count_many(const ctxkit_tokenizer* tokenizer,
                                              const char* const* texts,
                                              const size_t* lens, size_t n,
                                              unsigned threads, uint32_t flags,
                                              size_t* out_counts,
                                              char** out_error);

/* The encoding's special tokens as a JSON document:
 *   {"schema_version":1, "encoding":"cl100k_base",
 *    "special_tokens":[{"text":"<|endoftext|>","id":100257}, ...]}
 * in the order the encoding defines them (two texts may share an id, as in
 * o200k_harmony's reserved range); an empty array when it has none. The
 * texts are what the ALLOW_SPECIAL and SPECIAL_AS_TEXT flags act on.
 * *out_json (released with ctxkit_free) and *out_json_len receive it.
 * Errors: INVALID_ARGUMENT for a NULL argument; RESOURCE_EXHAUSTED.
 * Thread-safe. */
CTXKIT_EXPORT int ctxkit_tokenizer_special_tokens_json(
    const ctxkit_tokenizer* tokenizer, char** out_json, size_t* out_json_len,
    char** out_error);

/* A tokenizer-free estimate of the tokens `text` takes with a modern BPE
 * vocabulary (cl100k_base, o200k_base, Llama 3), erring on the high side:
 * for models with no available tokenizer. Bytes that are not UTF-8 cost one
 * each. 0 for NULL text. Never fails; thread-safe. */
CTXKIT_EXPORT size_t ctxkit_tokens_estimate(const char* text, size_t len);

/* ------------------------------------------------------------------------ */
/* Chat messages                                                            */

/* Flags of ctxkit_chat_count, or'ed together. Any other bit is
 * INVALID_ARGUMENT. */
typedef enum ctxkit_chat_count_flags {
  /* Count a model the registry does not know with ctxkit_tokens_estimate
   * instead of refusing it. */
  CTXKIT_CHAT_ESTIMATE_UNKNOWN_MODEL = 1 << 0
} ctxkit_chat_count_flags;

/* The tokens a chat request takes for model `model` (model_len bytes),
 * with the tokens its chat format adds around each message.
 *
 * `messages_json` (UTF-8 JSON) is an array of messages or an object
 * {"messages":[...], "system":..., "tools":[...]}, in OpenAI or Anthropic
 * shape (see ctxkit/message_count.h for the counting rules). The model
 * chooses the tokenizer and the layout (OpenAI, Anthropic, Llama 3). A
 * model the registry does not know (an empty name included) is
 * INVALID_ARGUMENT naming the closest known models, since a mistyped name
 * would otherwise get a count that looks exact; with
 * CTXKIT_CHAT_ESTIMATE_UNKNOWN_MODEL in `flags` it is counted with
 * ctxkit_tokens_estimate in the OpenAI layout. A known model whose tokenizer
 * is not available is estimated the same way. The document reports either
 * as "method":"heuristic".
 *
 * *out_total receives the total. When out_json is not NULL it receives a
 * document (released with ctxkit_free; out_json_len must then not be NULL):
 *   {"schema_version":1, "model", "total", "messages":[n, ...] (one per
 *    message, with its overhead, in input order), "system", "tools",
 *    "reply_priming", "encoding" ("" when estimated), "method"
 *    ("tokenizer" | "heuristic"), "exact" (true only when every part was
 *    counted by a rule known to reproduce the provider's count)}
 * Errors: INVALID_ARGUMENT (NULL out_total; NULL strings with non-zero
 * lengths; out_json without out_json_len; unknown flags; an unknown model
 * without CTXKIT_CHAT_ESTIMATE_UNKNOWN_MODEL; malformed JSON or a field of
 * the wrong type, the message naming it, e.g. "messages[3].content must be
 * ..."); RESOURCE_EXHAUSTED. Thread-safe. */
CTXKIT_EXPORT int ctxkit_chat_count(const char* model, size_t model_len,
                                    const char* messages_json,
                                    size_t messages_json_len, uint32_t flags,
                                    size_t* out_total, char** out_json,
                                    size_t* out_json_len, char** out_error);

/* Checks that `history_json` (an array of messages or {"messages":[...]})
 * is a history a model API accepts in `format` (format_len bytes: "openai",
 * "anthropic", "plain" or "auto"; absent = "auto"): known roles, content
 * types, tool calls and results paired, system messages first, and for
 * Anthropic a user message first and alternating roles. CTXKIT_OK, or
 * INVALID_ARGUMENT naming the first offending "messages[i].<field>" and
 * the rule (or "format" for an unknown format). Thread-safe. */
CTXKIT_EXPORT int ctxkit_chat_validate(const char* history_json,
                                       size_t history_json_len,
                                       const char* format, size_t format_len,
                                       char** out_error);

/* ------------------------------------------------------------------------ */
/* Tokenizers from files                                                    */

/* Pre-tokenization patterns for ctxkit_tokenizer_create_from_tiktoken_file
 * (values fixed forever). ctxkit implements exactly these patterns, not general
 * regular expressions. */
typedef enum ctxkit_pattern {
  CTXKIT_PATTERN_GPT2 = 0,   /* r50k_base, p50k_base, GPT-2 */
  CTXKIT_PATTERN_CL100K = 1, /* cl100k_base and Llama 3 */
  CTXKIT_PATTERN_O200K = 2   /* o200k_base */
} ctxkit_pattern;

/* A tokenizer named `name` (name_len bytes, non-empty) over the tiktoken
 * vocabulary file at `path` (path_len bytes): one "<base64 of the token's
 * bytes> <rank>" line per mergeable token, as OpenAI's *.tiktoken files and
 * Llama 3's tokenizer.model; every single byte must be a token. `pattern`
 * is one of CTXKIT_PATTERN_*. `specials_json` (specials_json_len bytes; NULL
 * with length 0 for none) is a JSON object mapping each special token's text
 * to its id, as tiktoken's special_tokens: {"<|endoftext|>": 100257}.
 *
 * Each call reads the file and builds a new tokenizer (tens of milliseconds
 * for 100,000 tokens), which holds the parsed vocabulary, not the file; it is
 * freed with the last handle. ctxkit_tokenizer_name gives `name`.
 * Errors (naming the path): INVALID_ARGUMENT (NULL out; NULL strings with
 * non-zero lengths; empty name or path; an unknown pattern; a directory or a
 * file over 256 MiB; a malformed file, the message naming the line; a single
 * byte that is not a token; specials_json that is not an object of
 * non-negative integers; a bad special token: empty, listed twice, an id
 * above 16777215 or equal to a mergeable token's rank); NOT_FOUND (no such
 * file); PERMISSION_DENIED; UNAVAILABLE (other I/O errors);
 * RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_tokenizer_create_from_tiktoken_file(
    const char* path, size_t path_len, const char* name, size_t name_len,
    int pattern, const char* specials_json, size_t specials_json_len,
    ctxkit_tokenizer** out, char** out_error);

/* Meta's Llama 3 tokenizer (also Llama 3.1 to 3.3's vocabulary), named
 * "llama3", from Llama 3's tokenizer.model at `path` (path_len bytes), which
 * ctxkit does not ship (Meta's licence): CTXKIT_PATTERN_CL100K and the 256
 * special tokens of Meta's llama3 tokenizer.py at ids 128000..128255
 * (<|begin_of_text|>, <|end_of_text|>, <|start_header_id|> 128006,
 * <|end_header_id|> 128007, <|eot_id|> 128009, the rest
 * <|reserved_special_token_N|>). Any valid file with exactly the ranks
 * 0..127999 is accepted; its checksum is not compared.
 * Errors: as ctxkit_tokenizer_create_from_tiktoken_file, and INVALID_ARGUMENT
 * for a file of another shape. */
CTXKIT_EXPORT int ctxkit_tokenizer_create_llama3(const char* path,
                                                 size_t path_len,
                                                 ctxkit_tokenizer** out,
                                                 char** out_error);

/* ======================================================================== */
/* Records: conversations, references, cache, query optimizer, analytics    */
/* ======================================================================== */
/*
 * The parts of ctxkit/conversations.h, references.h, cache.h,
 * query_optimizer.h and analytics.h, through the conventions above, plus:
 *
 *  - Part handles are opened from a ctxkit_store and keep its environment
 *    open: the store handle may be closed first. Every *_close accepts
 *    NULL; no call on the handle may be in progress or follow it.
 *  - Optional string inputs: a NULL pointer (with length 0) means "absent"
 *    (the default stated for that input); a non-NULL pointer with length 0
 *    is the empty string, which fields that must not be empty reject. A NULL
 *    pointer with a non-zero length is INVALID_ARGUMENT.
 *  - Structured inputs (metadata, messages, tool calls) are UTF-8 JSON text.
 *  - Results are JSON documents in *out_json / *out_json_len (both must not
 *    be NULL), released with ctxkit_free, each an object beginning with
 *    "schema_version":1 and using the field names of the corresponding MCP
 *    Token Optimizer tool response (ctxkit's own extra fields follow them).
 *  - Errors name the offending field: INVALID_ARGUMENT for a malformed id,
 *    a bad role/type/prefix/goal, an empty or oversized field (the byte
 *    limits are those of the C++ headers, repeated below), invalid UTF-8,
 *    malformed JSON, a limit or TTL out of range, a bad cursor; NOT_FOUND
 *    naming an id, key or conversation that does not exist. A failed call
 *    writes nothing to the store.
 *  - Thread safety: every handle may be used by any number of threads at
 *    once (writes are serialized by the store; reads see snapshots).
 */

/* ------------------------------------------------------------------------ */
/* Conversations                                                            */

/* Conversations and their messages, with token counts taken at insertion
 * (ctxkit/conversations.h). Limits: title 1..1024 bytes, model 1..256,
 * metadata (a JSON object) up to 65536, content up to 16 MiB, name 1..256,
 * tool calls up to 1 MiB, tool call id 1..256; up to 100000 messages and
 * 256 MiB of content per batch; list limit 1..1000.
 *
 * The documents are written by the public C++ writers of
 * ctxkit/conversations.h ("JSON documents"), which the ctxkit program's CLI
 * and MCP server use too: every surface writes the same bytes. A
 * conversation in them is
 *   {"id","title","model","created_at","updated_at","total_tokens",
 *    "message_count","metadata" (object),"last_message","last_message_at"
 *    (both null with no messages),"input_tokens","output_tokens",
 *    "user_tokens","assistant_tokens","system_tokens","tool_tokens",
 *    "compressed_count","compressed_tokens"}
 * and a message
 *   {"id","conversation_id","seq","role","content" (not in add results),
 *    "name","tool_calls","tool_call_id" (null when not set),"tokens",
 *    "is_compressed","created_at"}.
 * Times are milliseconds since the epoch. */
typedef struct ctxkit_conversations ctxkit_conversations;
/* Declared here for ctxkit_conversations_stats; see the Cache section. */
typedef struct ctxkit_cache ctxkit_cache;

/* Opens the conversations part of `store` (creating its databases unless
 * read-only). Errors: INVALID_ARGUMENT (NULL store or out); the store's
 * (NOT_FOUND for a read-only store that never held conversations). */
CTXKIT_EXPORT int ctxkit_conversations_open(ctxkit_store* store,
                                            ctxkit_conversations** out,
                                            char** out_error);

/* Closes the handle. NULL is a no-op. */
CTXKIT_EXPORT void ctxkit_conversations_close(ctxkit_conversations* convs);

/* Creates a conversation titled `title` (required) for `model` (absent =
 * "claude-3-5-sonnet") with `metadata_json` (a JSON object; absent = {}).
 * Document: {"schema_version":1,"conversation":{...}}.
 * Errors: INVALID_ARGUMENT naming title, model or metadata. */
CTXKIT_EXPORT int ctxkit_conversations_create(
    ctxkit_conversations* convs, const char* title, size_t title_len,
    const char* model, size_t model_len, const char* metadata_json,
    size_t metadata_json_len, char** out_json, size_t* out_json_len,
    char** out_error);

/* ctxkit_conversations_create with its inputs as one JSON object
 * {"title", "model"?, "metadata"? (object)}. */
CTXKIT_EXPORT int ctxkit_conversations_create_request(
    ctxkit_conversations* convs, const char* request_json,
    size_t request_json_len, char** out_json, size_t* out_json_len,
    char** out_error);

/* Appends a message to conversation `conversation_id`: `role` is "user",
 * "assistant", "system" or "tool"; `content` may be empty; `name` optional;
 * `tool_calls_json` optional, assistant messages only (an array of OpenAI
 * tool calls); `tool_call_id` optional, tool messages only; is_compressed
 * non-zero marks it compressed. Its tokens are counted with the
 * conversation's model. Document: {"schema_version":1,"message":{...},
 * "conversation":{... after the addition}}.
 * Errors: INVALID_ARGUMENT naming conversation_id, role, content, name,
 * tool_calls or tool_call_id; NOT_FOUND naming the conversation. */
CTXKIT_EXPORT int ctxkit_conversations_add_message(
    ctxkit_conversations* convs, const char* conversation_id,
    size_t conversation_id_len, const char* role, size_t role_len,
    const char* content, size_t content_len, const char* name, size_t name_len,
    const char* tool_calls_json, size_t tool_calls_json_len,
    const char* tool_call_id, size_t tool_call_id_len, int is_compressed,
    char** out_json, size_t* out_json_len, char** out_error);

/* ctxkit_conversations_add_message with its inputs as one JSON object
 * {"conversation_id", "role", "content", "name"?, "tool_calls"? (array),
 * "tool_call_id"?, "is_compressed"? (bool)}; the document is the same. */
CTXKIT_EXPORT int ctxkit_conversations_add_message_request(
    ctxkit_conversations* convs, const char* request_json,
    size_t request_json_len, char** out_json, size_t* out_json_len,
    char** out_error);

/* Appends 1..100000 messages in one transaction (all or none).
 * `messages_json` is an array of {"role","content","name"?,"tool_calls"?
 * (array),"tool_call_id"?,"is_compressed"? (bool)} (another member is
 * INVALID_ARGUMENT naming it and the closest known one). Document:
 * {"schema_version":1,"messages":[...],"conversation":{...}}.
 * Errors: INVALID_ARGUMENT naming "messages[i].<field>" (or "messages" for
 * malformed JSON or a non-array) or conversation_id; NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_conversations_add_messages(
    ctxkit_conversations* convs, const char* conversation_id,
    size_t conversation_id_len, const char* messages_json,
    size_t messages_json_len, char** out_json, size_t* out_json_len,
    char** out_error);

/* The conversation, with its messages when include_messages is non-zero,
 * and "actual_tokens" (the history as a chat request for its model, with
 * framing). Document: {"schema_version":1,"conversation":{...},
 * "messages":[...] (only with include_messages),"actual_tokens",
 * "actual_tokens_exact"}. Errors: INVALID_ARGUMENT (malformed id);
 * NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_conversations_get(ctxkit_conversations* convs,
                                           const char* id, size_t id_len,
                                           int include_messages,
                                           char** out_json,
                                           size_t* out_json_len,
                                           char** out_error);

/* One page of conversations, newest first: `limit` in 1..1000 (20 is the
 * Token Optimizer's default); `cursor` absent for the first page, else the
 * "next_cursor" of an earlier page. Document: {"schema_version":1,
 * "conversations":[...],"total","showing","next_cursor" (string, or null
 * on the last page)}. Errors: INVALID_ARGUMENT naming limit or cursor. */
CTXKIT_EXPORT int ctxkit_conversations_list(ctxkit_conversations* convs,
                                            int64_t limit, const char* cursor,
                                            size_t cursor_len, char** out_json,
                                            size_t* out_json_len,
                                            char** out_error);

/* Changes the title and/or the metadata (absent = unchanged; at least one
 * must be given). Document: {"schema_version":1,"conversation":{...}}.
 * Errors: INVALID_ARGUMENT naming id, title, metadata, or "title or
 * metadata" when both are absent; NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_conversations_update(
    ctxkit_conversations* convs, const char* id, size_t id_len,
    const char* title, size_t title_len, const char* metadata_json,
    size_t metadata_json_len, char** out_json, size_t* out_json_len,
    char** out_error);

/* ctxkit_conversations_update with its inputs as one JSON object
 * {"id", "title"?, "metadata"? (object)}. */
CTXKIT_EXPORT int ctxkit_conversations_update_request(
    ctxkit_conversations* convs, const char* request_json,
    size_t request_json_len, char** out_json, size_t* out_json_len,
    char** out_error);

/* Deletes the conversation with its messages, references and cached
 * results, in one transaction. Document: {"schema_version":1,
 * "deleted":true,"conversation":{... as it was},"messages_deleted",
 * "dependent_records_deleted"}. Errors: INVALID_ARGUMENT; NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_conversations_delete(ctxkit_conversations* convs,
                                              const char* id, size_t id_len,
                                              char** out_json,
                                              size_t* out_json_len,
                                              char** out_error);

/* Store-wide statistics from maintained totals (token-stats://aggregate):
 * {"schema_version":1,"overview":
 * {"total_conversations","total_messages","total_input_tokens",
 * "total_output_tokens","total_cached_tokens","total_tokens",
 * "total_user_tokens","total_assistant_tokens","total_system_tokens",
 * "total_tool_tokens","compressed_messages","compressed_tokens"},
 * "by_model":{"<model>":{"conversations","messages","input_tokens",
 * "output_tokens","cached_tokens"}},"cache_efficiency":{"cache_hit_rate",
 * "tokens_saved"},"trends":{"daily_average","weekly_average","peak_day",
 * "peak_tokens"},"days":[{"date","day","messages","input_tokens",
 * "output_tokens","tokens"}],"tips":[{"category","priority","tip",
 * "action"}]}. The cache's figures come from `cache` (may be NULL; a cache
 * of the same store): the tokens its hits saved, per model too (models only
 * the cache has seen are listed with zero conversation figures), and its
 * hit rate for the tips once it has been asked; with NULL,
 * "total_cached_tokens", each "cached_tokens" and "cache_efficiency" are
 * null.
 * Errors: INVALID_ARGUMENT for a NULL argument; the store's. */
CTXKIT_EXPORT int ctxkit_conversations_stats(ctxkit_conversations* convs,
                                             ctxkit_cache* cache,
                                             char** out_json,
                                             size_t* out_json_len,
                                             char** out_error);

/* Statistics of one conversation (token-stats://{id}): {"schema_version":1,
 * "conversation_id","title","model","statistics":{"total_tokens",
 * "input_tokens","output_tokens","message_count","avg_tokens_per_message",
 * "total_user_tokens","total_assistant_tokens","compression_ratio"},
 * "timeline":[{"timestamp","cumulative_tokens","message_tokens"}],
 * "token_limit":{"model_limit","current_usage","percentage","status"
 * ("safe" below 75%, "warning" below 90%, else "critical"; "unknown"),
 * "action","should_compress"},"tips":[...] (as ctxkit_conversations_tips
 * gives them)}. The timeline keeps at most
 * max_timeline_points points (0 = one per message). Errors:
 * INVALID_ARGUMENT (malformed id); NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_conversations_get_stats(ctxkit_conversations* convs,
                                                 const char* id, size_t id_len,
                                                 size_t max_timeline_points,
                                                 char** out_json,
                                                 size_t* out_json_len,
                                                 char** out_error);

/* Optimization tips. With `id` absent, the general tips
 * (optimization-tips://general without "resources"): {"schema_version":1,
 * "overview":{"total_conversations","total_messages","total_tokens",
 * "cache_hit_rate" (null when cache_hit_rate is NULL)},"tips":[{"category",
 * "priority","tip","action"}]}; *cache_hit_rate (percent, e.g. the cache
 * stats' "hit_rate") is optional.
 * With an id, that conversation's tips: {"schema_version":1,"conversation":
 * {"id","title","model","current_tokens","message_count"},"tips":[...],
 * "token_limit":{...}} (cache_hit_rate is ignored). Errors:
 * INVALID_ARGUMENT (malformed id; a hit rate that is not a finite number in
 * 0..100); NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_conversations_tips(ctxkit_conversations* convs,
                                            const char* id, size_t id_len,
                                            const double* cache_hit_rate,
                                            char** out_json,
                                            size_t* out_json_len,
                                            char** out_error);

/* ------------------------------------------------------------------------ */
/* References                                                               */

/* Reference material with token counts and BM25 search
 * (ctxkit/references.h). Limits: title 1..1024 bytes, content 1..16 MiB,
 * metadata (a JSON object) up to 65536, query 1..4096 bytes, search limit
 * 1..100. Types: "file", "url", "code", "note", "document". The documents
 * are written by the public C++ writers of ctxkit/references.h, which the
 * ctxkit program uses too. A reference in them is {"id","conversation_id"
 * (null when it belongs to none),"type","title","content" and "metadata"
 * (get, and list with content) or "preview" (otherwise),"tokens",
 * "created_at"}. */
typedef struct ctxkit_references ctxkit_references;

/* Opens the references part of `store`; tokens are counted with `model`
 * (absent = "claude-3-5-sonnet"; 1..256 bytes). Errors: INVALID_ARGUMENT
 * (NULL store or out; bad model); FAILED_PRECONDITION (index of an
 * incompatible version); the store's. */
CTXKIT_EXPORT int ctxkit_references_open(ctxkit_store* store, const char* model,
                                         size_t model_len,
                                         ctxkit_references** out,
                                         char** out_error);

/* Closes the handle. NULL is a no-op. */
CTXKIT_EXPORT void ctxkit_references_close(ctxkit_references* refs);

/* Adds a reference (conversation_id optional, naming an existing
 * conversation; metadata_json optional, a JSON object). Document:
 * {"schema_version":1,"reference":{... with preview}}. Errors:
 * INVALID_ARGUMENT naming conversation_id, type, title, content or
 * metadata; NOT_FOUND naming the conversation. */
CTXKIT_EXPORT int ctxkit_references_add(
    ctxkit_references* refs, const char* conversation_id,
    size_t conversation_id_len, const char* type, size_t type_len,
    const char* title, size_t title_len, const char* content,
    size_t content_len, const char* metadata_json, size_t metadata_json_len,
    char** out_json, size_t* out_json_len, char** out_error);

/* ctxkit_references_add with its inputs as one JSON object
 * {"conversation_id"?, "type", "title", "content", "metadata"? (object)}. */
CTXKIT_EXPORT int ctxkit_references_add_request(
    ctxkit_references* refs, const char* request_json, size_t request_json_len,
    char** out_json, size_t* out_json_len, char** out_error);

/* The reference `id` with content and metadata: {"schema_version":1,
 * "reference":{...}}. Errors: INVALID_ARGUMENT (malformed id); NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_references_get(ctxkit_references* refs, const char* id,
                                        size_t id_len, char** out_json,
                                        size_t* out_json_len, char** out_error);

/* All references, or those of `conversation_id` (absent = all), in order of
 * addition, with content and metadata when include_content is non-zero:
 * {"schema_version":1,"references":[...],"total","statistics":
 * {"total_references","total_tokens","by_type":{"<type>":n}}}.
 * Errors: INVALID_ARGUMENT (malformed id); NOT_FOUND (no such
 * conversation). */
CTXKIT_EXPORT int ctxkit_references_list(ctxkit_references* refs,
                                         const char* conversation_id,
                                         size_t conversation_id_len,
                                         int include_content, char** out_json,
                                         size_t* out_json_len,
                                         char** out_error);

/* Deletes reference `id` and its index entries. Errors: INVALID_ARGUMENT
 * (malformed id); NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_references_delete(ctxkit_references* refs,
                                           const char* id, size_t id_len,
                                           char** out_error);

/* BM25 search over title and content, best first, at most `limit`
 * (1..100), optionally within one conversation: {"schema_version":1,
 * "results":[{"id","type","title","preview" (the best-matching passage),
 * "highlights" ([[start,end],...] in code points of preview),"tokens",
 * "relevance" (0..1; references.h has the scale)}],
 * "total" (results returned),"total_matches" (references matching any
 * term)}. Errors: INVALID_ARGUMENT naming query (empty, oversized, invalid
 * UTF-8, no term), limit or conversation_id; NOT_FOUND (no such
 * conversation). */
CTXKIT_EXPORT int ctxkit_references_search(
    ctxkit_references* refs, const char* query, size_t query_len, int64_t limit,
    const char* conversation_id, size_t conversation_id_len, char** out_json,
    size_t* out_json_len, char** out_error);

/* Counts of all references, or of one conversation's (absent = all; an
 * unknown conversation has none): {"schema_version":1,"total_references",
 * "total_tokens","by_type":{"<type>":n}}. Errors: INVALID_ARGUMENT
 * (malformed id). */
CTXKIT_EXPORT int ctxkit_references_stats(ctxkit_references* refs,
                                          const char* conversation_id,
                                          size_t conversation_id_len,
                                          char** out_json, size_t* out_json_len,
                                          char** out_error);

/* ------------------------------------------------------------------------ */
/* Cache                                                                    */

/* A content-addressed cache with TTLs and LRU limits (ctxkit/cache.h). Keys
 * are "<prefix>:<32 hex digits>". Limits: content 1..16 MiB, prefix 1..64
 * bytes of [A-Za-z0-9._-], model 1..128, TTL 0 (never expires) or
 * 1..315360000000 ms (10 years). Hit statistics are batched in memory and
 * written by a background thread (see cache.h, "Durability"). */

/* Opens the cache part of `store`: max_entries and max_bytes (content
 * bytes) are capacity limits (0 = unlimited); *flush_interval_ms is how
 * often batched hit statistics are written (1..60000; NULL = 1000).
 * Errors: INVALID_ARGUMENT naming the option (NULL store or out); the
 * store's. */
CTXKIT_EXPORT int ctxkit_cache_open(ctxkit_store* store, uint64_t max_entries,
                                    uint64_t max_bytes,
                                    const int64_t* flush_interval_ms,
                                    ctxkit_cache** out, char** out_error);

/* Flushes pending hit statistics (errors dropped) and closes the handle.
 * NULL is a no-op. A compactor created with the cache keeps using it until
 * the compactor is freed. */
CTXKIT_EXPORT void ctxkit_cache_close(ctxkit_cache* cache);

/* Stores `content` under `prefix` (absent = "default") with `ttl_ms`,
 * counting its tokens with `model` (absent = "claude-3-5-sonnet"), tied to
 * `conversation_id` (optional: deleting that conversation removes it); the
 * same content again refreshes its TTL. Document (CachePutResultToJson in
 * ctxkit/cache.h, as every cache document here): {"schema_version":1,
 * "key","prefix","tokens","created_at","expires_at" (null = never),
 * "already_cached"}. Errors: INVALID_ARGUMENT naming content, prefix,
 * ttl_ms, model or conversation_id; NOT_FOUND (no such conversation);
 * RESOURCE_EXHAUSTED (content over max_bytes, store full). */
CTXKIT_EXPORT int ctxkit_cache_put(ctxkit_cache* cache, const char* content,
                                   size_t content_len, const char* prefix,
                                   size_t prefix_len, int64_t ttl_ms,
                                   const char* model, size_t model_len,
                                   const char* conversation_id,
                                   size_t conversation_id_len, char** out_json,
                                   size_t* out_json_len, char** out_error);

/* ctxkit_cache_put with its inputs as one JSON object {"content",
 * "prefix"?, "ttl_ms"? (integer; absent = 0, never expires), "model"?,
 * "conversation_id"?}. */
CTXKIT_EXPORT int ctxkit_cache_put_request(
    ctxkit_cache* cache, const char* request_json, size_t request_json_len,
    char** out_json, size_t* out_json_len, char** out_error);

/* The entry under `key`, counting a hit: {"schema_version":1,"key",
 * "content","tokens","hit_count","created_at","last_accessed",
 * "expires_at" (null = never),"model","conversation_id" (null = none)}.
 * Errors: INVALID_ARGUMENT naming key (malformed); NOT_FOUND (absent or
 * expired; counted as a miss). */
CTXKIT_EXPORT int ctxkit_cache_get(ctxkit_cache* cache, const char* key,
                                   size_t key_len, char** out_json,
                                   size_t* out_json_len, char** out_error);

/* Whether `content` is cached, under `prefix` (absent = any prefix),
 * comparing bytes: {"schema_version":1,"exists","key" (null when not),
 * "tokens_saved"}. Not being cached is not an error. Errors:
 * INVALID_ARGUMENT naming content or prefix. */
CTXKIT_EXPORT int ctxkit_cache_check(ctxkit_cache* cache, const char* content,
                                     size_t content_len, const char* prefix,
                                     size_t prefix_len, char** out_json,
                                     size_t* out_json_len, char** out_error);

/* Removes every entry, or those of `prefix` (absent = all); *out_cleared
 * (may be NULL) receives how many. Errors: INVALID_ARGUMENT naming prefix. */
CTXKIT_EXPORT int ctxkit_cache_clear(ctxkit_cache* cache, const char* prefix,
                                     size_t prefix_len, uint64_t* out_cleared,
                                     char** out_error);

/* Removes every expired entry; *out_removed (may be NULL) receives how
 * many. Errors: the store's. */
CTXKIT_EXPORT int ctxkit_cache_sweep(ctxkit_cache* cache, uint64_t* out_removed,
                                     char** out_error);

/* Writes the batched hit statistics now. Errors: the store's. */
CTXKIT_EXPORT int ctxkit_cache_flush(ctxkit_cache* cache, char** out_error);

/* Flushes, then returns the MCP Token Optimizer's cache-stats document with
 * `top_n` (0..1000) top entries:
 * {"schema_version":1,"overview":{"total_entries",
 * "total_hits","total_misses","hit_rate","tokens_saved",
 * "avg_tokens_per_entry"},"performance":{...},"top_entries":[...],
 * "by_prefix":{...},"recommendations":[...],"by_model":{...},
 * "lifetime":{...}} (ctxkit/cache.h, CacheStatsToJson). Errors:
 * INVALID_ARGUMENT naming top_n. */
CTXKIT_EXPORT int ctxkit_cache_stats(ctxkit_cache* cache, int64_t top_n,
                                     char** out_json, size_t* out_json_len,
                                     char** out_error);

/* ------------------------------------------------------------------------ */
/* Query optimizer                                                          */

/* Analyzes and rewrites `query` (1..65536 bytes) with the built-in rules
 * (ctxkit/query_optimizer.h): `model` counts tokens (absent =
 * "claude-3-5-sonnet"); `goal` is "reduce_tokens", "improve_clarity" or
 * "both" (absent = "both"); `context` (optional, 1..1 MiB) is counted and
 * searched for repeated sentences; max_tokens 0 = no limit, else the
 * optimized query is cut to 1..10000000 tokens. Document: the MCP Token
 * Optimizer's optimize_query response without "success": {"schema_version":1,
 * "original":{"query","tokens","issues"},"optimized":{"query","tokens",
 * "improvements","truncated"},"analysis":{"tokens_saved",
 * "reduction_percent","clarity_score","original_clarity_score",
 * "recommendations"},"model","optimization_goal","tokens_exact",
 * "context" (only with a context)}. Touches no store.
 * Errors: INVALID_ARGUMENT naming query, context, model,
 * optimization_goal or max_tokens. Thread-safe. */
CTXKIT_EXPORT int ctxkit_query_optimize(const char* query, size_t query_len,
                                        const char* model, size_t model_len,
                                        const char* goal, size_t goal_len,
                                        const char* context, size_t context_len,
                                        int64_t max_tokens, char** out_json,
                                        size_t* out_json_len, char** out_error);

/* ctxkit_query_optimize with its inputs as one JSON object, the MCP Token
 * Optimizer's optimize_query arguments: {"query", "model"?,
 * "optimization_goal"?, "context"?, "max_tokens"? (integer; absent = no
 * limit)}. */
CTXKIT_EXPORT int ctxkit_query_optimize_request(const char* request_json,
                                                size_t request_json_len,
                                                char** out_json,
                                                size_t* out_json_len,
                                                char** out_error);

/* ------------------------------------------------------------------------ */
/* Analytics                                                                */

/* Counts and durations of operations by type (ctxkit/analytics.h). Types
 * are 1..64 bytes of [a-z0-9_.:-] (e.g. the Memory Context Protocol server's
 * "vector_db_search"). Calls are batched in memory and written by a background
 * thread, before every query, on flush and on close. */
typedef struct ctxkit_analytics ctxkit_analytics;

/* Opens the analytics part of `store` and purges calls past retention:
 * *retention_days 1..3650 (NULL = 30); *flush_interval_ms 1..60000 (NULL
 * = 1000). Errors: INVALID_ARGUMENT naming retention_days or
 * flush_interval_ms (NULL store or out); the store's. */
CTXKIT_EXPORT int ctxkit_analytics_open(ctxkit_store* store,
                                        const int64_t* retention_days,
                                        const int64_t* flush_interval_ms,
                                        ctxkit_analytics** out,
                                        char** out_error);

/* Flushes (errors dropped) and closes the handle. NULL is a no-op. A
 * compactor created with it keeps using it until the compactor is freed. */
CTXKIT_EXPORT void ctxkit_analytics_close(ctxkit_analytics* analytics);

/* Records one call of `type` that took duration_us (0..604800000000, 7
 * days) and succeeded when ok is non-zero, at *timestamp_ms
 * (0..253402300799999) or now when timestamp_ms is NULL. Errors:
 * INVALID_ARGUMENT naming type, duration_us or timestamp_ms (nothing is
 * recorded). */
CTXKIT_EXPORT int ctxkit_analytics_record(ctxkit_analytics* analytics,
                                          const char* type, size_t type_len,
                                          int64_t duration_us, int ok,
                                          const int64_t* timestamp_ms,
                                          char** out_error);

/* Statistics of the calls with from_ms <= timestamp <= to_ms:
 * {"schema_version":1,"from","to","total_calls","total_errors",
 * "calls_by_type":{"<type>":n},"average_duration_us":{"<type>":x},
 * "by_type":{"<type>":{"calls","errors","avg_duration_us",
 * "min_duration_us","max_duration_us","total_duration_us"}},
 * "counters":{"<name>":n}} (counters are lifetime totals, whatever the
 * range, e.g. the compactor's "compact.tokens_saved").
 * Errors: INVALID_ARGUMENT naming to_ms (before from_ms). */
CTXKIT_EXPORT int ctxkit_analytics_query(ctxkit_analytics* analytics,
                                         int64_t from_ms, int64_t to_ms,
                                         char** out_json, size_t* out_json_len,
                                         char** out_error);

/* The calls in [from_ms, to_ms], oldest first, at most `limit`
 * (1..100000): {"schema_version":1,"calls":[{"type","timestamp",
 * "duration_us","ok"}]}. Errors: INVALID_ARGUMENT naming to_ms or limit. */
CTXKIT_EXPORT int ctxkit_analytics_calls(ctxkit_analytics* analytics,
                                         int64_t from_ms, int64_t to_ms,
                                         int64_t limit, char** out_json,
                                         size_t* out_json_len,
                                         char** out_error);

/* The number of retained calls of `type` in *out_count (the Memory Context
 * Protocol server's getCallCount). Errors: INVALID_ARGUMENT naming type (NULL
 * out_count). */
CTXKIT_EXPORT int ctxkit_analytics_call_count(ctxkit_analytics* analytics,
                                              const char* type, size_t type_len,
                                              uint64_t* out_count,
                                              char** out_error);

/* Deletes calls older than retention; *out_purged (may be NULL) receives
 * how many. Errors: the store's. */
CTXKIT_EXPORT int ctxkit_analytics_purge(ctxkit_analytics* analytics,
                                         uint64_t* out_purged,
                                         char** out_error);

/* Writes the batched calls now. Errors: the store's. */
CTXKIT_EXPORT int ctxkit_analytics_flush(ctxkit_analytics* analytics,
                                         char** out_error);

/* ======================================================================== */
/* Compactor: fit a chat history into a token budget                        */
/* ======================================================================== */
/*
 * ctxkit/compactor.h through the conventions above: JSON in, JSON out, plus
 * a summarizer callback. Histories are OpenAI, Anthropic or plain
 * {role, content} message arrays (detected, or named by "format"); see
 * compactor.h for the guarantees (budget, structure, determinism).
 *
 * Errors of the JSON entry points: INVALID_ARGUMENT naming the request
 * member or "messages[i].<field>" (malformed JSON, an unknown role, content
 * of the wrong type, a tool result whose id answers no preceding call, an
 * empty history, a negative or zero max_tokens, an unknown strategy,
 * format or token_counter_type, a bad rule); the tokenizer's; with
 * "enable_caching", the cache's. Every entry point is also guarded against
 * C++ exceptions (RESOURCE_EXHAUSTED when memory runs out). */

/* A compactor: the services (cache, analytics), the caller's extra
 * classification rules and the summarizer callback that its compactions
 * use. Thread-safe: ctxkit_compactor_compact and
 * ctxkit_compactor_compact_conversation may run on any number of threads at
 * once, also while ctxkit_compactor_add_rules or
 * ctxkit_compactor_set_summarizer change the handle; a compaction uses the
 * rules and summarizer in force when it started (the handle swaps an immutable
 * ctxkit::Compactor under a lock, so changes never wait for compactions to
 * finish, and compactions never see half a change). */
typedef struct ctxkit_compactor ctxkit_compactor;

/* Creates a compactor. `cache` and `analytics` may be NULL: without a cache
 * the requests' "enable_caching" only skips the cache; without analytics
 * "enable_analytics" records nothing. The compactor shares them: their
 * handles (and the store's) may be closed before it, and it keeps using
 * them until it is freed. Errors: INVALID_ARGUMENT (NULL out);
 * RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_compactor_create(ctxkit_cache* cache,
                                          ctxkit_analytics* analytics,
                                          ctxkit_compactor** out,
                                          char** out_error);

/* Releases the compactor. NULL is a no-op. No call on the handle may be in
 * progress or follow. Does not close the cache or analytics handles. */
CTXKIT_EXPORT void ctxkit_compactor_free(ctxkit_compactor* compactor);

/* The buffer a summarizer callback writes its text to. Owned by ctxkit and
 * valid only during the callback. */
typedef struct ctxkit_text ctxkit_text;

/* Sets the summary text of `text` to a copy of data[0 .. len) (UTF-8; not
 * necessarily NUL-terminated); a later call replaces it. Errors:
 * INVALID_ARGUMENT (NULL text; NULL data with a non-zero length; invalid
 * UTF-8); RESOURCE_EXHAUSTED; the text is then unchanged. No out_error:
 * the callback reports failure by its return value (returning this
 * function's is the simplest way). */
CTXKIT_EXPORT int ctxkit_text_set(ctxkit_text* text, const char* data,
                                  size_t len);

/* A host summarizer, e.g. an LLM call, for compactions with
 * "enable_llm_summarization": it is called once per dropped span, with
 *   span_json   the span's messages, a JSON array in the history's format
 *   extractive  ctxkit's own summary of the span, "[Compressed context: ...]"
 *   max_tokens  the token allowance of the summary message
 * (both strings valid only during the call, NUL-terminated, with lengths),
 * and writes its summary with ctxkit_text_set(out, ...). It returns 0 for
 * success; any other value, returning 0 without setting a text, or a text
 * over max_tokens means failure, and the extractive summary is used
 * instead (the result's compaction_info counts "summarizer_failures"). It
 * is called on the thread that called ctxkit_compactor_compact, from any number
 * of threads at once when compactions run concurrently, so it must be
 * thread-safe; it must not call the compactor it belongs to. */
typedef int (*ctxkit_summarize_fn)(void* user_data, const char* span_json,
                                   size_t span_len, const char* extractive,
                                   size_t extractive_len, size_t max_tokens,
                                   ctxkit_text* out);

/* Releases the user data of a callback; called exactly once, when ctxkit
 * no longer needs it. */
typedef void (*ctxkit_destroy_fn)(void* user_data);

/* Installs `fn` with `user_data` (passed back untouched) as the summarizer,
 * replacing any earlier one; NULL fn removes it. Compactions already
 * running keep the one they started with. `destroy` (may be NULL) is
 * called with user_data once the summarizer is no longer in use: after it
 * is replaced or the compactor freed, and every compaction that started
 * with it has returned (on the thread where that happened). This lets a
 * garbage-collected binding release what user_data keeps alive. On failure
 * `destroy` is not called and nothing changes. Errors: INVALID_ARGUMENT
 * (NULL compactor); RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_compactor_set_summarizer(ctxkit_compactor* compactor,
                                                  ctxkit_summarize_fn fn,
                                                  void* user_data,
                                                  ctxkit_destroy_fn destroy,
                                                  char** out_error);

/* Compacts a chat history. `request_json` is the pgEdge agent's POST
 * /api/chat/compact body, {"messages":[...],"max_tokens","recent_window",
 * "keep_anchors","options":{...}}, plus ctxkit's "model",
 * "estimate_unknown_model", "format", "strategy", "target_ratio",
 * "preserve_recent", "explain", "max_summary_tokens", "rules" and
 * "response" (every member, its type and default: docs/compaction-request.md
 * and ctxkit/compactor.h, Compactor::CompactJson), or a bare array of
 * messages (all defaults). A
 * key the request does not define, at its root or in "options", is
 * INVALID_ARGUMENT naming it and the closest defined one ("unknown key
 * 'max_token'; did you mean 'max_tokens'?"), never ignored. So is a
 * "model" the registry does not know (naming the closest known models),
 * unless "estimate_unknown_model" is true: its tokens are then estimated
 * and the response says "counting":"estimate". The response document is
 * {"messages","summary":{"topics","tables","tools","description"},
 * "token_estimate","compaction_info":{...},"budget":{"target_tokens","met",
 * "status","over_by","must_keep_cut_tokens"},"format","strategy",
 * "encoding", and "decisions" with "explain" (experimental: the reasons it
 * gives may change before 1.0)}. budget.status is "met",
 * "degraded" (within budget, but must-keep messages were cut to fit, by
 * must_keep_cut_tokens tokens) or "infeasible".
 *
 * Budget: CTXKIT_OK means the result fits max_tokens (and target_ratio),
 * status "met" or "degraded". When it cannot (the must-keep messages do
 * not fit even at their floors), the call returns CTXKIT_OUT_OF_RANGE AND
 * sets *out_json / *out_json_len to the best-effort response (its "budget" says
 * "met":false, "status":"infeasible" and by how many tokens), with
 * *out_error saying the same.
 * This is the one failure that sets out_json, as ctxkit_tokenizer_encode's
 * OUT_OF_RANGE sets *out_count: free *out_json whenever it is not NULL.
 * Every other error leaves it NULL.
 *
 * Errors: INVALID_ARGUMENT (a NULL compactor, out_json or out_json_len; NULL
 * request_json with a non-zero length; the bad inputs above);
 * OUT_OF_RANGE (budget infeasible, see above); RESOURCE_EXHAUSTED;
 * the tokenizer's and the cache's. Thread-safe: any number of compactions
 * may run at once on one compactor. */
CTXKIT_EXPORT int ctxkit_compactor_compact(ctxkit_compactor* compactor,
                                           const char* request_json,
                                           size_t request_json_len,
                                           char** out_json,
                                           size_t* out_json_len,
                                           char** out_error);

/* Compacts stored conversation `conversation_id` with the options of
 * `options_json` (NULL or empty = defaults; else an object with the members
 * of a ctxkit_compactor_compact request except "messages", which is refused,
 * unknown keys refused as there), stores the result beside the untouched
 * messages as a new compacted view, and returns the response document of
 * ctxkit_compactor_compact with "conversation_id" and "view_version" (the
 * version of the view saved) first. Without "model" or
 * "options.token_counter_type" the conversation's own model counts, estimated
 * when the registry does not know it. Budget and errors as
 * ctxkit_compactor_compact, plus NOT_FOUND (no such conversation) and the
 * store's. `convs` must come from the same process's ctxkit_conversations_open
 * and stay open during the call. Thread-safe. */
CTXKIT_EXPORT int ctxkit_compactor_compact_conversation(
    ctxkit_compactor* compactor, ctxkit_conversations* convs,
    const char* conversation_id, size_t conversation_id_len,
    const char* options_json, size_t options_json_len, char** out_json,
    size_t* out_json_len, char** out_error);

/* A cancellation flag: stops a compaction nobody wants any more (its
 * client hung up, its user pressed Ctrl-C). Made by
 * ctxkit_cancel_token_create, set by ctxkit_cancel_token_cancel, read by
 * the *_with_cancel calls, released by ctxkit_cancel_token_free.
 *
 * A flag rather than a callback: setting it is one atomic store, safe from
 * any thread and from a signal handler, and a binding (Python, Go) needs no
 * callback into its runtime on the compacting thread.
 *
 * Thread safety: ctxkit_cancel_token_cancel and
 * ctxkit_cancel_token_is_cancelled may run on any thread at any time, also
 * while calls given the token run; one token may be given to any number of
 * calls at once (cancelling it stops them all). It must not be freed while
 * a call given it runs. A cancelled token stays cancelled: make a new one
 * for new work. */
typedef struct ctxkit_cancel_token ctxkit_cancel_token;

/* Creates a token, not cancelled. Errors: INVALID_ARGUMENT (NULL out);
 * RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_cancel_token_create(ctxkit_cancel_token** out,
                                             char** out_error);

/* Releases the token. NULL is a no-op. No call given it may be running. */
CTXKIT_EXPORT void ctxkit_cancel_token_free(ctxkit_cancel_token* token);

/* Cancels the token: the calls given it return CTXKIT_CANCELLED as soon as
 * they next look (see ctxkit_compactor_compact_with_cancel). Idempotent.
 * NULL is a no-op. Async-signal-safe (one lock-free atomic store). */
CTXKIT_EXPORT void ctxkit_cancel_token_cancel(ctxkit_cancel_token* token);

/* 1 once the token was cancelled, else 0 (also for NULL). */
CTXKIT_EXPORT int ctxkit_cancel_token_is_cancelled(
    const ctxkit_cancel_token* token);

/* ctxkit_compactor_compact, stopped by `cancel` (NULL = never, exactly
 * ctxkit_compactor_compact). The compaction looks at the token at its
 * start, then between messages, never more than 64 small messages or
 * 64 KiB of message JSON apart, before each summarizer callback, and
 * before it writes the cache or analytics (ctxkit/cancel.h, for the
 * figures). Once it sees the token cancelled it returns CTXKIT_CANCELLED
 * with a message saying where it stopped ("compaction cancelled while
 * classifying, after 1200 of 40000 messages"), *out_json NULL, and nothing
 * written. An uncancelled token changes nothing: the result is the same,
 * byte for byte. Errors as ctxkit_compactor_compact, plus CANCELLED.
 * Thread-safe. */
CTXKIT_EXPORT int ctxkit_compactor_compact_with_cancel(
    ctxkit_compactor* compactor, const char* request_json,
    size_t request_json_len, const ctxkit_cancel_token* cancel, char** out_json,
    size_t* out_json_len, char** out_error);

/* ctxkit_compactor_compact_conversation, stopped by `cancel` as
 * ctxkit_compactor_compact_with_cancel: a cancelled call saves no view.
 * Errors as ctxkit_compactor_compact_conversation, plus CANCELLED.
 * Thread-safe. */
CTXKIT_EXPORT int ctxkit_compactor_compact_conversation_with_cancel(
    ctxkit_compactor* compactor, ctxkit_conversations* convs,
    const char* conversation_id, size_t conversation_id_len,
    const char* options_json, size_t options_json_len,
    const ctxkit_cancel_token* cancel, char** out_json, size_t* out_json_len,
    char** out_error);

/* ======================================================================== */
/* Context graph: named contexts, typed relationships, summaries            */
/* ======================================================================== */
/*
 * ctxkit/context_graph.h through the conventions above. Inputs with many
 * optional members are one JSON object whose camelCase members are the C++
 * options' (unknown members are INVALID_ARGUMENT naming the closest known
 * one; NULL is "all defaults"). Documents are the graph's records with seed
 * 003's camelCase names, {"schema_version":1,"success":true,...}; their
 * members are listed in lib/graph/graph_json.h and docs of context_graph.h.
 * Errors are ContextGraph's, naming the field: INVALID_ARGUMENT for bad
 * input, NOT_FOUND for an unknown context, RESOURCE_EXHAUSTED when the
 * store is full. A failed call changes nothing.
 *
 * Thread safety: every call may run on any number of threads at once
 * (each is one LMDB transaction); ctxkit_graph_close must come after all
 * of them have returned. */
typedef struct ctxkit_graph ctxkit_graph;

/* Opens the graph over `store` and `convs` (opened on that store). The
 * graph keeps both open until it is closed: their handles may be closed
 * first. `analytics` (opened on the same store; NULL: no call records)
 * receives the seed's call records (ctxkit_graph_metrics) while
 * "trackApiCalls" is true; the graph keeps it open too and is destroyed
 * before it. `options_json` (NULL: defaults) holds ContextGraphOptions in
 * camelCase: "model", "autoSummarize", "messageLimitThreshold",
 * "tokenLimitPercentage", "contextWindowTokens", "maxSummaryTokens",
 * "summaryWindow", "summaryHistory", "hierarchicalContext",
 * "maxHierarchyDepth", "metaSummaryThreshold", "similarityThreshold",
 * "fallbackToKeywordMatch", "autoLinkLimit", "autoCleanupContexts",
 * "cleanupEvery", "cleanupMode" ("archive" | "delete"), "trackApiCalls"
 * (default true), "ignorePatterns" (an array of gitignore-style globs of
 * context ids that adding refuses, see ContextGraphOptions). Errors:
 * INVALID_ARGUMENT (NULL store, convs or out; an unknown member, naming
 * it; a value out of its range, naming it, as "ignorePatterns[i]" for a
 * bad pattern; an unknown model); FAILED_PRECONDITION (a graph written by
 * a newer ctxkit); the store's. */
CTXKIT_EXPORT int ctxkit_graph_open(ctxkit_store* store,
                                    ctxkit_conversations* convs,
                                    ctxkit_analytics* analytics,
                                    const char* options_json,
                                    size_t options_json_len, ctxkit_graph** out,
                                    char** out_error);

/* Closes the graph. NULL is a no-op. Calls the summarizer's and the
 * embedder's destroy callbacks, if they are installed. */
CTXKIT_EXPORT void ctxkit_graph_close(ctxkit_graph* graph);

/* Appends one message to context `id` (created when missing).
 * `message_json`: {"role": "user"|"assistant"|"system"|"tool", "content",
 * "importance"?: low|medium|high|critical in any case, "tags"?: [string]}.
 * Document: AddGraphMessagesResult (contextId, messageId, seq, tokens,
 * importance, importanceLevel, tags, messages, summarized,
 * summaryVersion?, linked, archived). */
CTXKIT_EXPORT int ctxkit_graph_add_message(
    ctxkit_graph* graph, const char* id, size_t id_len,
    const char* message_json, size_t message_json_len, char** out_json,
    size_t* out_json_len, char** out_error);

/* As ctxkit_graph_add_message for a JSON array of such messages, in one
 * write; errors name "messages[i].<field>". */
CTXKIT_EXPORT int ctxkit_graph_add_messages(
    ctxkit_graph* graph, const char* id, size_t id_len,
    const char* messages_json, size_t messages_json_len, char** out_json,
    size_t* out_json_len, char** out_error);

/* Context `id` with a page of its messages. `options_json`: {"limit",
 * "beforeSeq", "includeSummary", "summaryHistory"}. Document: contextId,
 * messages, hasSummary, summary|null, messageCount, totalTokens,
 * parentContextId|null, childContextIds, ... NOT_FOUND naming it. */
CTXKIT_EXPORT int ctxkit_graph_retrieve(ctxkit_graph* graph, const char* id,
                                        size_t id_len, const char* options_json,
                                        size_t options_json_len,
                                        char** out_json, size_t* out_json_len,
                                        char** out_error);

/* Summarizes context `id` (a new version, or with force == 0 the current
 * one when nothing arrived since). Document: the summary's members, and
 * "embeddingError" when the installed embedder failed on it (the summary
 * is written all the same; the context has no vector until the next one;
 * ctxkit_graph_add_message(s)' documents say so the same way).
 * NOT_FOUND; FAILED_PRECONDITION for a context without messages. */
CTXKIT_EXPORT int ctxkit_graph_summarize(ctxkit_graph* graph, const char* id,
                                         size_t id_len, int force,
                                         char** out_json, size_t* out_json_len,
                                         char** out_error);

/* Adds or updates an edge. `edge_json`: {"sourceContextId",
 * "targetContextId", "relationshipType", "weight"? (0.8), "metadata"?
 * (an object, merged into an existing edge's), "validAt"?, "invalidAt"?,
 * "createMissing"?, "replaceParent"?}. Document: the edge's members and
 * "created". */
CTXKIT_EXPORT int ctxkit_graph_add_relationship(
    ctxkit_graph* graph, const char* edge_json, size_t edge_json_len,
    char** out_json, size_t* out_json_len, char** out_error);

/* Deletes the edge (source, type, target). NOT_FOUND when there is none. */
CTXKIT_EXPORT int ctxkit_graph_remove_relationship(
    ctxkit_graph* graph, const char* source, size_t source_len,
    const char* target, size_t target_len, const char* type, size_t type_len,
    char** out_error);

/* Ends the edge's fact at *at (ms since the epoch; NULL: now), keeping it.
 * Document: the edge. NOT_FOUND; FAILED_PRECONDITION (already expired, or
 * `at` before its validAt). */
CTXKIT_EXPORT int ctxkit_graph_invalidate_relationship(
    ctxkit_graph* graph, const char* source, size_t source_len,
    const char* target, size_t target_len, const char* type, size_t type_len,
    const int64_t* at, char** out_json, size_t* out_json_len, char** out_error);

/* The contexts related to `id`. `options_json`: {"relationshipType",
 * "direction" (incoming|outgoing|both), "minWeight", "limit", "offset",
 * "asOf", "includeExpired", "includeArchived", "withEdges", "metadata" (an
 * object the edges' metadata must contain, by RelatedOptions::metadata's
 * rules in context_graph.h), "tags" (the other end has a message carrying
 * each)}. Document: contextIds (or, withEdges, edges) and total. */
CTXKIT_EXPORT int ctxkit_graph_related(ctxkit_graph* graph, const char* id,
                                       size_t id_len, const char* options_json,
                                       size_t options_json_len, char** out_json,
                                       size_t* out_json_len, char** out_error);

/* The contexts most similar to `text`. `options_json`: {"limit",
 * "minSimilarity", "method" (auto|keyword|vector|hybrid), "exclude",
 * "tags", "includeArchived", "rrfK" (hybrid's rank fusion constant,
 * 1..1000; 60)}. Document: method, contexts:[{contextId, similarity,
 * score, method, signals}], and "fallbackReason" when the vector or hybrid
 * method asked for fell back to keyword (no embedder, or its error).
 * UNAVAILABLE for vector or hybrid without an embedder, or with a failing
 * one, when "fallbackToKeywordMatch" is false. */
CTXKIT_EXPORT int ctxkit_graph_similar(ctxkit_graph* graph, const char* text,
                                       size_t text_len,
                                       const char* options_json,
                                       size_t options_json_len, char** out_json,
                                       size_t* out_json_len, char** out_error);

/* The path from `source` to `target`. `options_json`: {"direction" (both|
 * outgoing), "types", "maxHops", "weighted", "includeExpired",
 * "includeArchived", "metadata" (crossed edges' metadata must contain it,
 * as for ctxkit_graph_related)}. Document: found, path, edges, totalWeight,
 * reason|null (an unknown id is found:false, not an error). */
CTXKIT_EXPORT int ctxkit_graph_path(ctxkit_graph* graph, const char* source,
                                    size_t source_len, const char* target,
                                    size_t target_len, const char* options_json,
                                    size_t options_json_len, char** out_json,
                                    size_t* out_json_len, char** out_error);

/* Where `id` sits in the hierarchy. Document: contextId, parent|null,
 * children, ancestors, depth, hierarchicalSummary|null. */
CTXKIT_EXPORT int ctxkit_graph_hierarchy(ctxkit_graph* graph, const char* id,
                                         size_t id_len, char** out_json,
                                         size_t* out_json_len,
                                         char** out_error);

/* The seed's cleanup from `current_id`. `options_json`: {"dryRun", "mode"
 * (archive|delete), "minContexts", "keepRecentDays", "similarityFactor"}.
 * Document: cleanedContexts, kept:[{contextId, reasons}]. */
CTXKIT_EXPORT int ctxkit_graph_cleanup(ctxkit_graph* graph,
                                       const char* current_id,
                                       size_t current_id_len,
                                       const char* options_json,
                                       size_t options_json_len, char** out_json,
                                       size_t* out_json_len, char** out_error);

/* Brings archived context `id` back. NOT_FOUND naming it. */
CTXKIT_EXPORT int ctxkit_graph_restore(ctxkit_graph* graph, const char* id,
                                       size_t id_len, char** out_error);

/* Context `id` and its neighbourhood drawn as text: the seed's JSON
 * document, Mermaid, Graphviz dot or the seed's text lines.
 * `options_json`: {"includeRelated", "depth" (1..3), "format"
 * (json|mermaid|text|dot), "maxNodes"}. out_text is that text (for json, a
 * JSON object without schema_version). */
CTXKIT_EXPORT int ctxkit_graph_visualize(ctxkit_graph* graph, const char* id,
                                         size_t id_len,
                                         const char* options_json,
                                         size_t options_json_len,
                                         char** out_text, size_t* out_text_len,
                                         char** out_error);

/* Deletes context `id`, its conversation and its edges. NOT_FOUND. */
CTXKIT_EXPORT int ctxkit_graph_delete(ctxkit_graph* graph, const char* id,
                                      size_t id_len, char** out_error);

/* Checks the whole graph in one snapshot. Document: ok, contexts,
 * messages, edges, problems (found problems are not errors). */
CTXKIT_EXPORT int ctxkit_graph_verify(ctxkit_graph* graph, char** out_json,
                                      size_t* out_json_len, char** out_error);

/* Installs `fn` as the graph's summarizer, replacing any earlier one; NULL
 * fn removes it (summaries are then extractive). It is called as the
 * compactor's is (ctxkit_summarize_fn) with the window's messages as a JSON
 * array, but inside the graph's write transaction: it must not call this
 * graph or write to its store, and should be quick. Summaries that already
 * started keep the summarizer they started with; `destroy` (may be NULL)
 * is called with user_data once it is no longer in use (replaced, or the
 * graph closed, and every summary using it done). On failure `destroy` is
 * not called and nothing changes. Errors: INVALID_ARGUMENT (NULL graph);
 * RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_graph_set_summarizer(ctxkit_graph* graph,
                                              ctxkit_summarize_fn fn,
                                              void* user_data,
                                              ctxkit_destroy_fn destroy,
                                              char** out_error);

/* The seed's get_context_metrics for `period` ("day", "week" or "month";
 * NULL: "week"): the calls the graph recorded in the analytics handle given
 * to ctxkit_graph_open over the last 1, 7 or 30 UTC days, and the graph's
 * own counters. Document: {"schema_version":1,"success":true,"period",
 * "metrics":{"totalCalls","byType","averageDuration","averageScore",
 * "historyTrend","errorsByType","summarizers","tracked","from","to",
 * "contexts","messages","edgesByType","summaries","hierarchies",
 * "metaSummaries"}} (lib/graph/metrics_json.h); without an analytics
 * handle, or with "trackApiCalls" false, "tracked" is false and every call
 * figure 0. Errors: INVALID_ARGUMENT (NULL graph or out_json; another
 * period, naming period); the analytics' and the store's. */
CTXKIT_EXPORT int ctxkit_graph_metrics(ctxkit_graph* graph, const char* period,
                                       size_t period_len, char** out_json,
                                       size_t* out_json_len, char** out_error);

/* A host's embedder: writes the vectors of `texts` (n of them; texts[i] is
 * lens[i] bytes of UTF-8, NUL-terminated, valid only during the call) to
 * `out`, n * dims floats, row i for texts[i]. Vectors need not be
 * normalized (similarity is the cosine) but must be finite and not all
 * zero. Returns 0 on success; any other value is an error, which is not
 * the caller's: a summary is written without a vector ("embeddingError"
 * says why) and a query falls back to the keyword method
 * ("fallbackReason"). It runs inside the graph's write transaction when a
 * summary is written, possibly on several threads at once: it must be
 * thread-safe, must not call this graph or write to its store, and should
 * be quick. */
typedef int (*ctxkit_embed_fn)(void* user_data, const char* const* texts,
                               const size_t* lens, size_t n, size_t dims,
                               float* out);

/* Installs `fn` as the graph's embedder (vectors of `dims` floats, 1..4096,
 * in the vector space named `model`, 1..256 bytes of UTF-8: two embedders
 * with the same model and dims must give comparable vectors), replacing any
 * earlier one, for the writes and queries that start after this call; NULL
 * fn removes it (vectors stay; vector and hybrid queries fall back, and
 * dims, model and destroy are ignored). Summaries then embed their text and
 * key insights, and ctxkit_graph_similar's vector and hybrid methods embed
 * its text. `destroy` (may be NULL) is called with user_data once the
 * embedder is no longer in use (replaced, or the graph closed, and every
 * call using it done). On failure `destroy` is not called and nothing
 * changes. Errors: INVALID_ARGUMENT (NULL graph; dims or model out of
 * range, naming them); FAILED_PRECONDITION (the graph's vectors are of
 * another model or dims, naming both: ctxkit_graph_reset_embeddings
 * first); RESOURCE_EXHAUSTED; the store's. */
CTXKIT_EXPORT int ctxkit_graph_set_embedder(ctxkit_graph* graph,
                                            ctxkit_embed_fn fn, size_t dims,
                                            const char* model, size_t model_len,
                                            void* user_data,
                                            ctxkit_destroy_fn destroy,
                                            char** out_error);

/* Installs ctxkit's own embedder (feature hashing of words, word pairs and
 * character trigrams into `dims` buckets, 1..4096; model
 * "ctxkit-hashed-v1"): deterministic, needs no model, finds shared
 * vocabulary but no synonyms. Replaces any earlier embedder as
 * ctxkit_graph_set_embedder does (a host embedder's destroy then runs).
 * Errors: those of ctxkit_graph_set_embedder, naming dims. */
CTXKIT_EXPORT int ctxkit_graph_set_hashed_embedder(ctxkit_graph* graph,
                                                   size_t dims,
                                                   char** out_error);

/* Stores the host's vector (`dims` floats) for context `id`, replacing the
 * one it had, in the graph's vector space (the installed embedder's; with
 * none and no vector yet, the space "host" of these dims). The context's
 * next summary replaces it when an embedder is installed. Errors:
 * INVALID_ARGUMENT (NULL graph; NULL vector with dims > 0; dims other than
 * the space's or outside 1..4096, NaN, infinity or an all-zero vector,
 * naming vector); NOT_FOUND naming the context; the store's. */
CTXKIT_EXPORT int ctxkit_graph_set_embedding(ctxkit_graph* graph,
                                             const char* id, size_t id_len,
                                             const float* vector, size_t dims,
                                             char** out_error);

/* Deletes every context's vector and the recorded vector space, in one
 * write, so that an embedder of another model or dims can be installed.
 * Contexts get vectors again as they are summarized, or through
 * ctxkit_graph_set_embedding. Errors: INVALID_ARGUMENT (NULL graph); the
 * store's. */
CTXKIT_EXPORT int ctxkit_graph_reset_embeddings(ctxkit_graph* graph,
                                                char** out_error);

/* Runs one request of seed 003's (0.1.1's) `context_memory` action
 * protocol: {"action": add|retrieve|summarize|get_related|get_hierarchy|
 * get_meta|find_similar|add_relationship|find_path|cleanup, "contextId",
 * ...}, answered with 0.1.1's document (no schema_version:
 * {"success","message",...}). A request the protocol refuses (its HTTP
 * 400, 404 or 500) is INVALID_ARGUMENT, NOT_FOUND or INTERNAL with the
 * document's message; a 200 answer with "success":false (an unknown
 * metaId, nothing to summarize) is CTXKIT_OK. */
CTXKIT_EXPORT int ctxkit_graph_context_memory(
    ctxkit_graph* graph, const char* request_json, size_t request_json_len,
    char** out_json, size_t* out_json_len, char** out_error);

/* Runs one of the seed's MCP tools (ping, add_message, retrieve_context,
 * get_similar_contexts, add_relationship, get_related_contexts,
 * summarize_context, visualize_context, get_context_metrics,
 * context_memory) with `args_json` (a JSON object; NULL: {}), answered
 * with the tool's document as MCP's text content shows it (a JSON object,
 * a JSON array for the two list tools, the text pong for ping). Its
 * failures are the codes of ctxkit_graph_context_memory; an unknown tool is
 * NOT_FOUND. get_context_metrics answers as ctxkit_graph_metrics does,
 * without schema_version. */
CTXKIT_EXPORT int ctxkit_graph_call(ctxkit_graph* graph, const char* tool,
                                    size_t tool_len, const char* args_json,
                                    size_t args_json_len, char** out_json,
                                    size_t* out_json_len, char** out_error);

/* ======================================================================== */
/* Experimental: may change in any release before 1.0                       */
/* ======================================================================== */
/*
 * Declared only when CTXKIT_EXPERIMENTAL_API is defined before this header
 * is included. The symbols are exported all the same; what is not promised
 * is that their signature or the shape of their input stays as it is. The
 * conventions above apply.
 */
#ifdef CTXKIT_EXPERIMENTAL_API

/* Adds classification rules for later compactions (experimental: the rule
 * schema may still gain or change members): `rules_json` is a JSON
 * array of rule objects {"name","tier","description"?,"roles"?,
 * "contains_any"?,"contains_none"?,"starts_with_any"?,"equals_any"?,
 * "tool_names_any"?,"arguments_contains_any"?,"match_arguments"?,
 * "min_chars"?,"max_chars"?,"is_tool_result"?,"is_error"?,
 * "is_task"?,"is_demonstration"?,"has_tool_calls"?} (ctxkit/classifier.h;
 * "match_arguments": true makes the contains/starts lists read the call
 * arguments too). They are tried after the rules added earlier, before a
 * request's own "rules" and before the built-in table. All or nothing.
 * Errors: INVALID_ARGUMENT naming "rules[i].<field>" (counting from the
 * first rule this call adds; a name added before is a duplicate);
 * RESOURCE_EXHAUSTED. */
CTXKIT_EXPORT int ctxkit_compactor_add_rules(ctxkit_compactor* compactor,
                                             const char* rules_json,
                                             size_t rules_json_len,
                                             char** out_error);

#endif /* CTXKIT_EXPERIMENTAL_API */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CTXKIT_C_H_ */
