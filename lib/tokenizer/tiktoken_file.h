// Encodings built at run time from a tiktoken vocabulary file ("<base64>
// <rank>" lines, as OpenAI's *.tiktoken files and Meta's Llama 3
// tokenizer.model), for vocabularies ctxkit does not build in.
//
// Thread safety: the functions are reentrant; what they return is immutable.

#ifndef CTXKIT_LIB_TOKENIZER_TIKTOKEN_FILE_H_
#define CTXKIT_LIB_TOKENIZER_TIKTOKEN_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tokenizer/encoding.h"
#include "lib/tokenizer/pretokenizer.h"
#include "lib/tokenizer/vocabulary.h"

namespace ctxkit::internal {

// Larger files are refused before being read: the largest real vocabulary
// (o200k_base) is under 4 MiB, so anything this big is the wrong file (a
// model's weights, say), and reading it whole would only waste memory.
inline constexpr size_t kMaxTiktokenFileBytes = size_t{256} << 20;

// The whole content of the file at `path`. Errors, each naming the path:
//   INVALID_ARGUMENT   empty path, NUL in it, a directory, or a file over
//                      kMaxTiktokenFileBytes;
//   NOT_FOUND          no such file (or a path component is not a directory);
//   PERMISSION_DENIED  the file or a directory on the way may not be read;
//   UNAVAILABLE        any other I/O error, with the system's message.
absl::StatusOr<std::string> ReadTiktokenFile(const std::string& path);

// An encoding named `name` over the vocabulary in the tiktoken file at
// `path`, split by `pattern`, with `specials` ({text, id}). The file's text
// is dropped once parsed: the encoding holds only the vocabulary.
// Errors: those of ReadTiktokenFile; INVALID_ARGUMENT for an empty name, for
// a malformed file (the message names the path and 1-based line), for a
// vocabulary that lacks a single byte, and for bad special tokens: empty or
// not UTF-8 text, text listed twice, an id above Vocabulary::kMaxRank or
// equal to a mergeable token's rank.
absl::StatusOr<std::unique_ptr<Encoding>> LoadTiktokenEncoding(
    const std::string& path, std::string name, PretokenPattern pattern,
    std::vector<SpecialToken> specials);

// Meta's Llama 3 special tokens as llama/tokenizer.py of github.com/
// meta-llama/llama3 defines them (last changed 2024-04-14, commit 71367a6):
// <|begin_of_text|> 128000, <|end_of_text|> 128001,
// <|reserved_special_token_0..3|> 128002..128005, <|start_header_id|>
// 128006, <|end_header_id|> 128007, <|reserved_special_token_4|> 128008,
// <|eot_id|> 128009, <|reserved_special_token_5..250|> 128010..128255.
std::vector<SpecialToken> Llama3SpecialTokens();

// The number of mergeable tokens of Llama 3's tokenizer.model.
inline constexpr uint32_t kLlama3MergeableTokens = 128000;

// The "llama3" encoding: the tiktoken file at `path`, which must hold
// exactly kLlama3MergeableTokens tokens of ranks 0..127999 (else
// INVALID_ARGUMENT: it is not Llama 3's vocabulary), the cl100k pattern and
// Llama3SpecialTokens(). Other errors as LoadTiktokenEncoding.
absl::StatusOr<std::unique_ptr<Encoding>> LoadLlama3Encoding(
    const std::string& path);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_TIKTOKEN_FILE_H_
