// ctxkit::Tokenizer: exact byte-pair encoding for the vocabularies LLMs use.
//
// Token ids are exactly those of OpenAI's tiktoken for the same encoding and
// special-token settings (verified against golden ids from tiktoken's own
// Rust core). Built-in encodings need no file at run time:
//
//   r50k_base, p50k_base, p50k_edit   GPT-3 era models
//   cl100k_base                       gpt-4, gpt-3.5-turbo, text-embedding-3
//   o200k_base, o200k_harmony         gpt-4o, gpt-4.1, gpt-5, o-series,
//                                     gpt-oss (harmony special tokens)
//   claude                            the legacy Claude vocabulary: exact for
//                                     Claude 1 and 2, only an approximation
//                                     for Claude 3 and later, whose
//                                     tokenizer Anthropic has not published
//
// "claude" is the vocabulary of Anthropic's @anthropic-ai/tokenizer (npm):
// GPT-2's pre-tokenization pattern, special tokens <EOT> (0), <META> (1),
// <META_START> (2), <META_END> (3) and <SOS> (4), and text normalized to
// Unicode NFKC (Unicode 16.0) before anything else, so "ﬁ" counts as "fi"
// and fullwidth "＜EOT＞" is the special token <EOT> when allowed. Its ids
// equal those of that package's tokenizer applied to text.normalize("NFKC")
// (whose countTokens allows every special token). Decode returns the
// normalized text.
//
//   auto tok = ctxkit::Tokenizer::ForEncoding("o200k_base");
//   if (!tok.ok()) return tok.status();
//   auto n = (*tok)->Count("hello world");           // 2
//   auto ids = (*tok)->Encode("hello world");        // {24912, 2375}
//   auto text = (*tok)->Decode(*ids);                // "hello world"
//
// Text must be UTF-8. By default invalid UTF-8 is an INVALID_ARGUMENT error
// naming the byte offset; EncodeOptions::replace_invalid_utf8 substitutes
// U+FFFD for each ill-formed sequence first.
//
// Thread safety: a Tokenizer is immutable; any number of threads may use one
// at the same time.

#ifndef CTXKIT_TOKENIZER_H_
#define CTXKIT_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/status.h"

namespace ctxkit {

namespace internal {
class Encoding;
struct TokenizerAccess;
}  // namespace internal

// A set of special tokens, by their text (e.g. "<|endoftext|>"), as in
// tiktoken's allowed_special / disallowed_special: none, all, or a list.
class SpecialTokenSet {
 public:
  static SpecialTokenSet None() { return SpecialTokenSet(Kind::kNone, {}); }
  static SpecialTokenSet All() { return SpecialTokenSet(Kind::kAll, {}); }
  static SpecialTokenSet Of(std::vector<std::string> tokens) {
    return SpecialTokenSet(Kind::kList, std::move(tokens));
  }

  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_all() const { return kind_ == Kind::kAll; }
  // The listed tokens; empty unless built with Of().
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  enum class Kind { kNone, kAll, kList };
  SpecialTokenSet(Kind kind, std::vector<std::string> tokens)
      : kind_(kind), tokens_(std::move(tokens)) {}

  Kind kind_;
  std::vector<std::string> tokens_;
};

// How Encode and Count treat special-token text and invalid UTF-8.
struct EncodeOptions {
  // Special-token text encoded as its special token. Text of a special token
  // that is not allowed is ordinary text, unless it is also disallowed.
  SpecialTokenSet allowed_special = SpecialTokenSet::None();
  // Special-token text that makes the call fail with INVALID_ARGUMENT naming
  // the token and its byte offset. All() means every special token that is
  // not allowed (tiktoken's default).
  SpecialTokenSet disallowed_special = SpecialTokenSet::All();
  // Replace each ill-formed UTF-8 sequence by U+FFFD instead of failing.
  bool replace_invalid_utf8 = false;
};

// The result of Tokenizer::Truncate.
struct Truncation {
  // The longest prefix of the input whose tokens fit, ending on a token
  // boundary that is also a UTF-8 character boundary. Points into the input.
  std::string_view text;
  // How many tokens `text` is (its tokens are the input's first `tokens`).
  size_t tokens = 0;
  // Whether anything was cut off.
  bool truncated = false;
};

// How a tokenizer loaded from a file splits text into the pieces that
// byte-pair encoding then merges (tiktoken's pat_str). ctxkit has no
// general regular-expression engine: it implements exactly these patterns,
// so a vocabulary whose pattern is not one of them cannot be loaded.
enum class PretokenizerPattern {
  // r50k_base, p50k_base and GPT-2:
  //   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
  //   ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kGpt2,
  // cl100k_base, and Llama 3 (Meta's llama3 tokenizer.py uses it unchanged):
  //   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
  //   | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kCl100k,
  // o200k_base and o200k_harmony: cl100k's with letters split by case and
  // contractions attached (the full pattern is in tiktoken's
  // openai_public.py).
  kO200k,
};

class CTXKIT_EXPORT Tokenizer {
 public:
  // The tokenizer of built-in encoding `name`. It is built on first use
  // (loading the vocabulary takes milliseconds) and shared afterwards: every
  // call with the same name returns the same object. NOT_FOUND for an
  // unknown name, listing the known ones.
  static StatusOr<std::shared_ptr<const Tokenizer>> ForEncoding(
      std::string_view name);

  // Names of the built-in encodings.
  static std::vector<std::string> EncodingNames();

  // A tokenizer named `name` over the vocabulary in the tiktoken file at
  // `path`: one "<base64 of the token's bytes> <rank>" line per mergeable
  // token, as OpenAI's *.tiktoken files and Llama 3's tokenizer.model. Ranks
  // are token ids and need not be contiguous; every single byte must be a
  // token. `pattern` is the encoding's pre-tokenization pattern (only those
  // of PretokenizerPattern are possible). `special_tokens` are {text, id}
  // pairs, as tiktoken's special_tokens dict.
  //
  // Each call reads the file anew and returns a new tokenizer, which holds
  // only the parsed vocabulary (a few megabytes), not the file's text; it
  // is not cached: keep the pointer, or make it available to model counting
  // with ModelRegistry::AddTokenizer().
  //
  // Errors (each naming the path):
  //   NOT_FOUND          no file at `path`;
  //   PERMISSION_DENIED  the file may not be read;
  //   INVALID_ARGUMENT   empty name; empty path, a directory, or a file over
  //                      256 MiB; a malformed file, naming the 1-based line
  //                      (bad base64, missing or non-numeric rank, duplicate
  //                      token or rank, no token); a single byte that is not
  //                      a token; a bad special token: empty text, text that
  //                      is not UTF-8 or is listed twice, an id above
  //                      16777215 or equal to a mergeable token's rank;
  //   UNAVAILABLE        another I/O error.
  static StatusOr<std::shared_ptr<const Tokenizer>> FromTiktokenFile(
      const std::string& path, std::string name, PretokenizerPattern pattern,
      std::vector<std::pair<std::string, uint32_t>> special_tokens = {});

  // Meta's Llama 3 tokenizer (also that of Llama 3.1, 3.2 and 3.3, whose
  // mergeable vocabulary is the same), named "llama3" as the model registry
  // expects, from Llama 3's tokenizer.model at `path` (tiktoken format,
  // 128,000 mergeable tokens; Meta's file has SHA-256 82e9d31979e92ab929cd54
  // 4440f129d9ecd797b69e327f80f17e1c50d5551b55). ctxkit does not ship it:
  // the vocabulary is under Meta's Llama licence.
  //
  // The pattern is kCl100k and the 256 special tokens, ids 128000..128255,
  // are those of Meta's llama3 repository (llama/tokenizer.py):
  // <|begin_of_text|>, <|end_of_text|>, <|reserved_special_token_0|> to
  // <|reserved_special_token_3|>, <|start_header_id|>, <|end_header_id|>,
  // <|reserved_special_token_4|>, <|eot_id|>, then
  // <|reserved_special_token_5|> to <|reserved_special_token_250|>.
  // Llama 3.1 renamed some reserved ids (<|eom_id|> 128008, <|python_tag|>
  // 128010, ...); for those names use FromTiktokenFile with its list.
  //
  // Any valid file of that shape is accepted; its checksum is not compared,
  // so a file of the same shape but other content gives other ids.
  // Errors: as FromTiktokenFile, and INVALID_ARGUMENT when the file does
  // not hold exactly the ranks 0..127999.
  static StatusOr<std::shared_ptr<const Tokenizer>> Llama3FromFile(
      const std::string& path);

  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // The encoding's name, e.g. "cl100k_base".
  const std::string& name() const;
  // One past the highest token id, special tokens included.
  uint32_t vocabulary_size() const;

  // The token ids of `text`. Errors: INVALID_ARGUMENT for invalid UTF-8
  // (unless replaced) or disallowed special-token text, or for a token named
  // in `options` that is not a special token of this encoding.
  StatusOr<std::vector<uint32_t>> Encode(
      std::string_view text, const EncodeOptions& options = {}) const;

  // Encode into a caller's buffer, without allocating a result: the ids go
  // to `ids`. Working memory is still allocated for the parts of a text
  // that need it: invalid UTF-8 being replaced, "claude"'s NFKC rewriting
  // characters, a piece of 128 bytes or more being merged, or a shorter one
  // that repeats a symbol in most places. Returns the number of ids
  // written. OUT_OF_RANGE if `ids` is too small: the message
  // gives the size needed (Count gives it too) and the contents of `ids` are
  // then unspecified. Other errors as for Encode.
  StatusOr<size_t> EncodeInto(std::string_view text, std::span<uint32_t> ids,
                              const EncodeOptions& options = {}) const;

  // Encode with no special tokens at all: their text is ordinary text.
  StatusOr<std::vector<uint32_t>> EncodeOrdinary(std::string_view text) const;

  // The number of tokens Encode would return with the same options, without
  // building the list. So with the default options, as Encode and tiktoken,
  // special-token text such as "<|endoftext|>" is an INVALID_ARGUMENT error
  // (text from a user must not pass for a control token); to count text
  // as the content of a message, whatever it holds, use CountOrdinary.
  StatusOr<size_t> Count(std::string_view text,
                         const EncodeOptions& options = {}) const;

  // The number of tokens EncodeOrdinary would return: special-token text
  // counts as the ordinary text it is. This is the count ModelRegistry's
  // CountTokens, CountMessages and the ctxkit program's `count` give.
  // Errors: INVALID_ARGUMENT for invalid UTF-8, naming the byte offset.
  StatusOr<size_t> CountOrdinary(std::string_view text) const;

  // Counts each of `texts` as Count does, using up to `threads` threads (0: one
  // per core); fewer when there is too little text to repay starting them
  // (under 64 KiB a thread). The result has one count per text, in order. Fails
  // with the first error, naming the index of the text that caused it.
  StatusOr<std::vector<size_t>> CountMany(
      std::span<const std::string_view> texts, unsigned threads = 0,
      const EncodeOptions& options = {}) const;

  // Cuts `text` to at most `max_tokens` tokens, never inside a UTF-8
  // character: when the last token that fits ends inside a character (a
  // token boundary can fall within one), the cut moves back to the last
  // boundary that is also a character boundary. Invalid UTF-8 is an
  // INVALID_ARGUMENT error here even with replace_invalid_utf8, since the
  // result must point into `text`.
  //
  // Cost: tokenizing stops once max_tokens + 1 tokens are known, so cutting
  // a long text to a few tokens costs those tokens, not the whole text
  // (only the checks of UTF-8 and of disallowed special tokens, and the
  // NFKC normalization of "claude", read all of it). One pre-token piece is
  // always merged whole, so a text that is a single long piece, such as
  // megabytes of spaces, is merged whole.
  //
  // For an encoding that normalizes its input ("claude": NFKC), the tokens
  // are those of the normalized text, and the result is still a prefix of
  // `text` (not of the normalized text): the longest one whose
  // normalization is the normalized text up to the end of its first
  // `tokens` tokens. A cut never falls inside a stretch that normalization
  // rewrote, such as a ligature that became two letters or a letter and the
  // accents composed with it, so it may stop a few tokens short.
  StatusOr<Truncation> Truncate(std::string_view text, size_t max_tokens,
                                const EncodeOptions& options = {}) const;

  // The bytes that `ids` stand for, concatenated. Token boundaries may fall
  // inside a UTF-8 character, so the result need not be valid UTF-8.
  // INVALID_ARGUMENT names the first id that is not a token.
  StatusOr<std::string> Decode(std::span<const uint32_t> ids) const;

  // Decode, with every ill-formed UTF-8 sequence replaced by U+FFFD.
  StatusOr<std::string> DecodeUtf8(std::span<const uint32_t> ids) const;

  // The encoding's special tokens as {text, id} pairs, in the order the
  // encoding defines them (two texts may share an id: o200k_harmony's
  // reserved range covers <|endofprompt|>). Empty when it has none.
  std::vector<std::pair<std::string, uint32_t>> SpecialTokens() const;

  // The bytes of one token. The view is valid as long as this Tokenizer.
  // INVALID_ARGUMENT if `id` is not a token.
  StatusOr<std::string_view> TokenBytes(uint32_t id) const;

 private:
  friend struct internal::TokenizerAccess;
  CTXKIT_NO_EXPORT explicit Tokenizer(
      std::unique_ptr<const internal::Encoding> encoding);

  std::unique_ptr<const internal::Encoding> encoding_;
};

}  // namespace ctxkit

#endif  // CTXKIT_TOKENIZER_H_
