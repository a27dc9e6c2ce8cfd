// Checks of what callers give the ConversationStore (ids, titles, metadata,
// messages) and the token counts of the messages it stores.

#ifndef CTXKIT_LIB_CONVERSATIONS_CONVERSATION_CHECKS_H_
#define CTXKIT_LIB_CONVERSATIONS_CONVERSATION_CHECKS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/conversations.h"
#include "ctxkit/tokenizer.h"
#include "simdjson.h"

namespace ctxkit::internal {

// Counts text for one model: the registry resolves the model once, instead
// of once per message as ModelRegistry::CountTokens would. Same results as
// CountTokens (the model's tokenizer, else EstimateTokens()).
class ModelCounter {
 public:
  static absl::StatusOr<ModelCounter> For(std::string_view model);
  absl::StatusOr<uint64_t> Count(std::string_view text) const;

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
  EncodeOptions options_;
};

// INVALID_ARGUMENT unless `metadata` is a JSON object within
// ConversationLimits::kMaxMetadataBytes.
absl::Status CheckMetadata(std::string_view metadata);
absl::Status CheckTitle(std::string_view title);

// Validates a message (field names prefixed by `prefix`, e.g. "messages[2]")
// and returns its tokens: content plus tool calls as CountMessages counts
// them (see include/ctxkit/conversations.h).
absl::StatusOr<uint64_t> CheckAndCount(const NewMessage& m,
                                       std::string_view prefix,
                                       const ModelCounter& counter,
                                       simdjson::dom::parser& parser);

// Checks 1 to kMaxBatchMessages message ids and appends them to `normalized`,
// lower-cased and without repeats.
absl::Status CheckIdList(const std::vector<std::string>& ids,
                         std::vector<std::string>* normalized);

// Appends the JSON string literal of valid UTF-8 `s` to `out`.
absl::Status AppendJsonString(std::string* out, std::string_view s);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CONVERSATIONS_CONVERSATION_CHECKS_H_
