// The encodings built into ctxkit: their names, patterns, special tokens and
// input normalization, over the vocabularies embedded in the library.

#ifndef CTXKIT_LIB_TOKENIZER_BUILTIN_ENCODINGS_H_
#define CTXKIT_LIB_TOKENIZER_BUILTIN_ENCODINGS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tokenizer/encoding.h"

namespace ctxkit::internal {

// Names of the built-in encodings, in a stable order.
const std::vector<std::string>& BuiltinEncodingNames();

// Builds built-in encoding `name` from its embedded vocabulary. NOT_FOUND
// for an unknown name (the message lists the known ones); DATA_LOSS if the
// embedded data is damaged.
absl::StatusOr<std::unique_ptr<Encoding>> BuildBuiltinEncoding(
    std::string_view name);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_BUILTIN_ENCODINGS_H_
