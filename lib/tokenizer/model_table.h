// The built-in model table behind ctxkit::ModelRegistry.

#ifndef CTXKIT_LIB_TOKENIZER_MODEL_TABLE_H_
#define CTXKIT_LIB_TOKENIZER_MODEL_TABLE_H_

#include <span>

#include "ctxkit/model_registry.h"

namespace ctxkit::internal {

// One built-in entry; the strings are static.
struct BuiltinModel {
  const char* name;
  bool is_prefix;
  const char* encoding;
  uint64_t context_window;
  uint64_t max_output_tokens;
  bool exact;
  MessageFormat message_format;
};

// The built-in entries, static for the life of the program. Names are
// lower case and unique per (name, is_prefix).
std::span<const BuiltinModel> BuiltinModels();

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_MODEL_TABLE_H_
