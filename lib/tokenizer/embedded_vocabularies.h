// The vocabularies built into the library: r50k_base, p50k_base, cl100k_base,
// o200k_base (OpenAI, via the npm packages gpt-tokenizer and tiktoken) and
// "claude", the legacy Claude vocabulary of @anthropic-ai/tokenizer. Encodings
// that differ only in special tokens (p50k_edit, o200k_harmony) share the
// data of their base and are not listed. See NOTICE for sources and licences.
//
// The compact files under lib/tokenizer/data/ are assembled into the library's
// read-only data at build time (embedded_vocabularies.cc), so no file is read
// at run time. Llama 3's vocabulary is not built in: its licence does not
// allow it; it is loaded from the user's tokenizer.model instead.
//
// Thread safety: every function here may be called concurrently.

#ifndef CTXKIT_LIB_TOKENIZER_EMBEDDED_VOCABULARIES_H_
#define CTXKIT_LIB_TOKENIZER_EMBEDDED_VOCABULARIES_H_

#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/tokenizer/vocabulary.h"

namespace ctxkit::internal {

// The names of the built-in vocabularies: "r50k_base", "p50k_base",
// "cl100k_base", "o200k_base", "claude", in that order. The views refer to
// static storage.
std::span<const std::string_view> EmbeddedVocabularyNames();

// The compact form (Vocabulary::FromCompact) of the built-in vocabulary
// `name`, or an empty view when there is none by that name. The view refers
// to the library's read-only data and is valid for the life of the program.
std::string_view EmbeddedVocabularyData(std::string_view name);

// The built-in vocabulary `name`, parsed on the first call for that name and
// then shared for the life of the program (never destroyed, so it may be
// used during static destruction). Concurrent first calls parse it once.
// Errors: NOT_FOUND for an unknown name; DATA_LOSS only if the embedded
// data is damaged, which the build's tests rule out. The pointer is never
// null on success.
absl::StatusOr<const Vocabulary*> EmbeddedVocabulary(std::string_view name);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_EMBEDDED_VOCABULARIES_H_
