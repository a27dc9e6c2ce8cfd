// The JSON shapes of compaction: seed 001's request and response
// (POST /api/chat/compact), the info stored with a compacted view, the
// cache's encoding of a result and its lookup key, and stored conversation
// messages as an OpenAI history.
//
// Thread safety: reentrant; a parser and what was read from it belong to one
// thread.

#ifndef CTXKIT_LIB_COMPACTOR_COMPACTION_JSON_H_
#define CTXKIT_LIB_COMPACTOR_COMPACTION_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ctxkit/compactor.h"
#include "ctxkit/conversations.h"
#include "lib/compactor/chat_history.h"
#include "simdjson.h"

namespace ctxkit::internal {

// The messages of a history document: the root array, or the root object's
// "messages" array. INVALID_ARGUMENT otherwise.
absl::StatusOr<simdjson::dom::array> HistoryMessages(
    simdjson::dom::element root);

struct CompactionRequest {
  simdjson::dom::array messages;  // points into the parser
  CompactionOptions options;
  // "response": "compress_context" asks for seed 000's shape
  // (CompressContextResponseJson) instead of seed 001's.
  bool compress_context_response = false;
};

// Parses seed 001's request (see Compactor::CompactJson). Members of the
// wrong type or out of range are INVALID_ARGUMENT naming them ("max_tokens",
// "options.min_important_messages", "rules[2].tier"); unknown members are
// ignored, as the seed's server did. The result points into `parser`.
absl::StatusOr<CompactionRequest> ParseCompactionRequest(
    simdjson::dom::parser& parser, std::string_view json);

// Seed 001's response plus ctxkit's members (see Compactor::CompactJson).
absl::StatusOr<std::string> ChatCompactResponseJson(
    const CompactionResult& result);

// The response `request` asked for: seed 001's (ChatCompactResponseJson)
// or seed 000's (CompressContextResponseJson).
absl::StatusOr<std::string> ResponseJson(const CompactionResult& result,
                                         const CompactionRequest& request);

// The figures of a result without its messages, stored with a compacted
// view.
absl::StatusOr<std::string> CompactionInfoJson(const CompactionResult& result);

// Every field of `result`, and back: what the cache keeps.
absl::StatusOr<std::string> EncodeResult(const CompactionResult& result);
absl::StatusOr<CompactionResult> DecodeResult(std::string_view json);

// The bytes a cached result is found by: a version tag, every option that
// changes the result (the counting encoding, the classifier's table when the
// caller gave one) and the canonical (minified) messages.
std::string CacheLookupKey(const ChatHistory& history,
                           const CompactionOptions& options,
                           std::string_view encoding);

// Stored messages as an OpenAI history: role, content and, when present,
// name, tool_calls (as stored) and tool_call_id.
absl::StatusOr<std::string> StoredMessagesJson(
    const std::vector<Message>& messages);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_COMPACTION_JSON_H_
