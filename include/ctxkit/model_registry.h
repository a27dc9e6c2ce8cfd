// ctxkit::ModelRegistry: which tokenizer a model uses and how much it can
// hold, from its name.
//
//   auto info = ctxkit::ModelRegistry::Default().Find("gpt-4o-2024-08-06");
//   // info->encoding == "o200k_base", info->context_window == 128000
//   auto n = ctxkit::CountTokens("claude-3-5-sonnet-20241022", "hello world");
//   // n->tokens, n->encoding == "claude", n->exact == false
//
// Names resolve the way OpenAI's tiktoken resolves them (tiktoken/model.py,
// release 0.14.0): an exact name wins; otherwise the longest registered
// prefix that starts the name wins ("gpt-4o-mini" -> prefix "gpt-4o-",
// "gpt-4-0613" -> prefix "gpt-4-"). Matching ignores ASCII case, so the
// Hugging Face spelling "meta-llama/Meta-Llama-3-8B" and "meta-llama/meta-
// llama-3-8b" are the same model. A name that matches nothing is unknown:
// Find() says NOT_FOUND, naming the registered names closest to it (see
// Suggest()), and counting falls back to EstimateTokens(), flagged as an
// estimate.
//
// The built-in table (lib/tokenizer/model_table.cc, where the source and date
// of every figure are given) covers OpenAI's models and encodings as tiktoken
// maps them, Anthropic's Claude models (encoding "claude": the legacy Claude
// vocabulary, exact for Claude 1 and 2 only, an estimate for Claude 3 and
// later), and Meta's Llama 3 family under Ollama, Hugging Face and hosted
// names (encoding "llama3": exact, but only once a Llama 3 tokenizer has
// been made available, see AddTokenizer()).
//
// Thread safety: every method of ModelRegistry may be called concurrently
// from any number of threads; registrations take a lock, lookups a shared
// lock. The free functions use ModelRegistry::Default().

#ifndef CTXKIT_MODEL_REGISTRY_H_
#define CTXKIT_MODEL_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/status.h"
#include "ctxkit/tokenizer.h"

namespace ctxkit {

// The model whose tokenizer counts when a caller names none: new
// conversations, references, cache entries, optimized queries and cached
// compactions. The MCP Token Optimizer's default, so that a client moving
// from it gets the same counts.
inline constexpr std::string_view kDefaultModel = "claude-3-5-sonnet";

// How a model's chat messages are laid out as tokens (see message_count.h).
enum class MessageFormat {
  // OpenAI chat completions: <|start|>role<|message|>content<|end|>.
  kOpenAI,
  // Anthropic messages: "\n\nHuman: ..." / "\n\nAssistant: ..." turns.
  kAnthropic,
  // Llama 3 chat template: <|start_header_id|>role<|end_header_id|>\n\n
  // content<|eot_id|>, as Ollama renders it.
  kLlama3,
};

// One registry entry. Every member has a default, so designated initializers
// may name only what they set ({.name = "my-model", .encoding = "o200k_base"})
// without -Wmissing-field-initializers.
struct ModelInfo {
  // The model name, or the prefix when is_prefix. Compared ignoring ASCII
  // case; kept as registered.
  std::string name = {};
  // True: the entry matches every name starting with `name`.
  bool is_prefix = false;
  // Encoding name as Tokenizer::ForEncoding() or AddTokenizer() knows it
  // ("o200k_base", "claude", "llama3", ...). Empty: the model has no known
  // tokenizer and is always counted with EstimateTokens().
  std::string encoding = {};
  // Total tokens of prompt plus output the model accepts; 0 when unknown.
  uint64_t context_window = 0;
  // Most tokens one response may contain; 0 when unknown. Models without a
  // separate output limit (completion models, Llama) have context_window.
  uint64_t max_output_tokens = 0;
  // True when `encoding` is the model's own tokenizer, so counts are exact;
  // false when it only approximates it (Claude 3 and later).
  bool exact = true;
  // How its chat messages are laid out.
  MessageFormat message_format = MessageFormat::kOpenAI;
};

// How a name resolved.
enum class ModelMatch { kExact, kPrefix, kUnknown };

// The result of ModelRegistry::Resolve().
struct ResolvedModel {
  std::string model;  // the name asked for, as given
  ModelMatch match = ModelMatch::kUnknown;
  // The matching entry. For kUnknown: name == model, encoding empty,
  // context_window and max_output_tokens 0, exact false, kOpenAI format.
  ModelInfo info;
};

// How a count was obtained.
enum class CountMethod {
  kTokenizer,  // the model's encoding, by its Tokenizer
  kHeuristic,  // EstimateTokens(): no tokenizer for this model is available
};

// The result of CountTokens().
struct TokenCount {
  size_t tokens = 0;
  // The encoding the registry names for the model (even when it was not
  // available and the heuristic counted instead); empty for unknown models.
  std::string encoding;
  CountMethod method = CountMethod::kHeuristic;
  // True only when method is kTokenizer and the encoding is the model's own
  // (ModelInfo::exact).
  bool exact = false;
};

class CTXKIT_EXPORT ModelRegistry {
 public:
  enum class Contents { kBuiltins, kEmpty };

  // A registry holding the built-in table (kBuiltins) or nothing (kEmpty).
  explicit ModelRegistry(Contents contents = Contents::kBuiltins);
  ~ModelRegistry();
  ModelRegistry(const ModelRegistry&) = delete;
  ModelRegistry& operator=(const ModelRegistry&) = delete;

  // The process-wide registry the free functions use, holding the built-in
  // table plus whatever the program registers. Created on first use, never
  // destroyed; the reference is valid for the life of the program.
  static ModelRegistry& Default();

  // The entry `model` resolves to: the exact entry, else the longest prefix
  // entry. NOT_FOUND when nothing matches, the message naming the model and
  // up to three Suggest() names: unknown model "gpt-4oo"; did you mean
  // gpt-4o, gpt-4o-* or gpt-4-*? The result is a copy, unaffected by later
  // registrations.
  StatusOr<ModelInfo> Find(std::string_view model) const;

  // Like Find(), but never fails: an unknown name gives kUnknown with the
  // fallback described in ResolvedModel.
  ResolvedModel Resolve(std::string_view model) const;

  // At most `max` registered names that resemble `name`, best first, for a
  // "did you mean" message. Comparisons ignore ASCII case. An entry
  // resembles `name` when
  //  - few edits turn one into the other: insertions, deletions,
  //    substitutions and swaps of neighbouring bytes, at most 1 for a name
  //    of up to 4 bytes, 2 up to 9 bytes, 3 beyond; counted both as written
  //    and with the separators - _ . : / removed, so "gpt4o" is gpt-4o at
  //    distance 0; or
  //  - the words of one (the pieces between separators) occur in order
  //    among the words of the other: "sonnet-4" finds claude-sonnet-4*,
  //    "openai/gpt-4o" finds gpt-4o; or
  //  - without separators, `name` starts with a prefix entry: "o3mini"
  //    finds o3-*, "gpt4o-mini" finds gpt-4o-* (ranked as one edit).
  // A prefix entry is compared without its trailing separators and spelled
  // with a trailing "*" ("gpt-4o-*"), since it stands for every name that
  // starts with it; an exact entry is spelled as registered. The order is
  // by that distance, then by the edit distance to the whole name, then by
  // lower-cased spelling, so the same registry always gives the same list.
  // `name` need not be unknown: a registered name is its own first
  // suggestion. An empty name, a name of more than 256 bytes (no model's is
  // so long, and the comparison is quadratic) and max == 0 give none. Never
  // fails; the strings are copies, unaffected by later registrations; takes
  // the shared lock like the other lookups.
  std::vector<std::string> Suggest(std::string_view name, size_t max) const;

  // Adds `info`, or replaces the entry with the same name (ignoring ASCII
  // case) and the same is_prefix: run-time registrations override the
  // built-in table. The usual precedence then applies: an exact entry beats
  // any prefix, a longer prefix beats a shorter one. INVALID_ARGUMENT when
  // the name is empty or holds whitespace or control characters, or when
  // max_output_tokens exceeds a non-zero context_window. The encoding need
  // not be available yet: it is looked up when counting.
  Status Register(ModelInfo info);

  // Removes the entry `name` of the given kind (so a built-in entry can be
  // withdrawn). NOT_FOUND when there is none.
  Status Unregister(std::string_view name, bool is_prefix);

  // Every entry, sorted by lower-cased name, exact entries before prefix
  // entries of the same name.
  std::vector<ModelInfo> List() const;

  // Makes `tokenizer` available to this registry's counting under
  // tokenizer->name(), e.g. a Llama 3 tokenizer loaded from a file, for every
  // model whose encoding has that name. It is consulted before the built-in
  // encodings and replaces an earlier one of the same name. The registry
  // keeps a reference. INVALID_ARGUMENT for a null pointer.
  Status AddTokenizer(std::shared_ptr<const Tokenizer> tokenizer);

  // The tokenizer counting `model` uses: one added with AddTokenizer(), else
  // the built-in Tokenizer::ForEncoding() of its encoding. NOT_FOUND for an
  // unknown model; FAILED_PRECONDITION naming the encoding when the model is
  // known but its encoding is not available (e.g. "llama3" before a Llama 3
  // tokenizer was added) or when its entry has no encoding.
  StatusOr<std::shared_ptr<const Tokenizer>> TokenizerFor(
      std::string_view model) const;

  // The tokenizer of encoding `encoding`: one added with AddTokenizer(),
  // else Tokenizer::ForEncoding(). FAILED_PRECONDITION naming the encoding
  // when neither has it; other errors of ForEncoding() as they are.
  StatusOr<std::shared_ptr<const Tokenizer>> TokenizerForEncoding(
      std::string_view encoding) const;

  // The number of tokens `text` takes for `model`: exactly, with the model's
  // tokenizer when it is available, else by EstimateTokens() (the result
  // says which). Special-token text such as "<|endoftext|>" counts as
  // ordinary text: counted text is content, not a prompt template.
  // INVALID_ARGUMENT when `text` is not valid UTF-8, naming the offset; any
  // other error of the encoding's construction (e.g. DATA_LOSS) is returned
  // as is rather than hidden by the heuristic.
  StatusOr<TokenCount> CountTokens(std::string_view model,
                                   std::string_view text) const;

 private:
  friend struct internal::TokenizerAccess;
  struct CTXKIT_NO_EXPORT Impl;
  std::unique_ptr<Impl> impl_;
};

// ModelRegistry::Default().CountTokens(model, text).
CTXKIT_EXPORT StatusOr<TokenCount> CountTokens(std::string_view model,
                                               std::string_view text);

// A tokenizer-free estimate of the tokens `text` takes with a modern BPE
// vocabulary (cl100k_base, o200k_base, Llama 3), meant to err on the high
// side. It mimics how those vocabularies split text (see model_registry.cc
// for the formula and how its constants were chosen): runs of ASCII letters
// cost one token per started 6 letters ("information" 2, "the" 1), digits one
// per started group of 3, a run of ASCII punctuation one per started 2
// characters, a whitespace run one (a single space before a word is free),
// CJK, kana and Hangul characters one each, emoji and other symbols above
// U+2000 two each, other non-ASCII letters count as two letters of a word.
// Bytes that are not UTF-8 cost one each. On agent transcripts, Markdown
// and C++ it gives about 1.15x cl100k_base's count (0.88x to 1.48x
// measured; base64 and other random mixed-case text can be undercounted).
// Never fails; thread-safe.
CTXKIT_EXPORT size_t EstimateTokens(std::string_view text) noexcept;

}  // namespace ctxkit

#endif  // CTXKIT_MODEL_REGISTRY_H_
