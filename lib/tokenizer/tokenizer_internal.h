// The tokenizer part as the rest of lib/ calls it: the Tokenizer,
// ModelRegistry and message-count calls that other parts make, returning
// absl::Status like everything else inside the library (DESIGN.md).
//
// These functions are the implementation; the public functions in
// include/ctxkit/tokenizer.h, model_registry.h and message_count.h are each
// one of them plus one ToPublic. So a status crosses between Abseil and
// ctxkit only where a user's call enters or leaves the library, never
// between two parts of lib/. The prefixes (Tokenizer..., Registry...) keep a
// call site inside a class that has its own Count or CountTokens from
// resolving to the member instead; the twins of free functions keep the
// public name, in ctxkit::internal.
//
// Contracts, errors, lifetimes and thread safety are those of the public
// function of the same name.

#ifndef CTXKIT_LIB_TOKENIZER_TOKENIZER_INTERNAL_H_
#define CTXKIT_LIB_TOKENIZER_TOKENIZER_INTERNAL_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/tokenizer.h"

namespace ctxkit::internal {

// The friend of Tokenizer and ModelRegistry through which the functions
// below reach their private parts.
struct TokenizerAccess {
  // The tokenizer's encoding, valid as long as `tokenizer`.
  static const Encoding& EncodingOf(const Tokenizer& tokenizer) {
    return *tokenizer.encoding_;
  }
  // A new tokenizer over `encoding`.
  static std::shared_ptr<const Tokenizer> Make(
      std::unique_ptr<const Encoding> encoding);

  // As the public ModelRegistry::Find and TokenizerForEncoding, which need
  // the registry's tables.
  static absl::StatusOr<ModelInfo> Find(const ModelRegistry& registry,
                                        std::string_view model);
  static absl::StatusOr<std::shared_ptr<const Tokenizer>> TokenizerForEncoding(
      const ModelRegistry& registry, std::string_view encoding);
};

// ---- Tokenizer ----

// As the public Tokenizer::ForEncoding: the shared built-in tokenizer of
// encoding `name`, NOT_FOUND listing the known names. Unlike
// RegistryTokenizerForEncoding, it knows no tokenizer added to a registry.
absl::StatusOr<std::shared_ptr<const Tokenizer>> TokenizerForEncoding(
    std::string_view name);

// As the public Tokenizer::Count.
absl::StatusOr<size_t> TokenizerCount(const Tokenizer& tokenizer,
                                      std::string_view text,
                                      const EncodeOptions& options = {});

// As the public Tokenizer::CountOrdinary.
absl::StatusOr<size_t> TokenizerCountOrdinary(const Tokenizer& tokenizer,
                                              std::string_view text);

// As the public Tokenizer::Truncate; the result points into `text`.
absl::StatusOr<Truncation> TokenizerTruncate(const Tokenizer& tokenizer,
                                             std::string_view text,
                                             size_t max_tokens,
                                             const EncodeOptions& options = {});

// ---- ModelRegistry ----

// As the public ModelRegistry::Find.
inline absl::StatusOr<ModelInfo> RegistryFind(const ModelRegistry& registry,
                                              std::string_view model) {
  return TokenizerAccess::Find(registry, model);
}

// As the public ModelRegistry::TokenizerForEncoding.
inline absl::StatusOr<std::shared_ptr<const Tokenizer>>
RegistryTokenizerForEncoding(const ModelRegistry& registry,
                             std::string_view encoding) {
  return TokenizerAccess::TokenizerForEncoding(registry, encoding);
}

// As the public ModelRegistry::TokenizerFor.
absl::StatusOr<std::shared_ptr<const Tokenizer>> RegistryTokenizerFor(
    const ModelRegistry& registry, std::string_view model);

// As the public ModelRegistry::CountTokens.
absl::StatusOr<TokenCount> RegistryCountTokens(const ModelRegistry& registry,
                                               std::string_view model,
                                               std::string_view text);

// ---- Message counts ----

// As the public ctxkit::CountMessagesForModel.
absl::StatusOr<MessageCount> CountMessagesForModel(
    std::string_view model, std::string_view messages_json,
    const MessageCountOptions& options = {},
    const ModelRegistry& registry = ModelRegistry::Default());

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_TOKENIZER_INTERNAL_H_
