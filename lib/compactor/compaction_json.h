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
  // Points into the parser; empty for a conversation's options.
  simdjson::dom::array messages;
  CompactionOptions options;
  // The request's "rules" as a minified JSON array, for
  // Classifier::AddRulesJson on the compactor's table; empty when none.
  std::string rules_json;
  // "response": "compress_context" asks for seed 000's shape
  // (CompressContextResponseJson) instead of seed 001's.
  bool compress_context_response = false;
};

// What a request document holds: a history with its options
// (Compactor::CompactJson), or the options alone, for a stored conversation
// whose messages are compacted (Compactor::CompactConversationJson).
enum class RequestKind { kHistory, kConversation };

// Parses a request (see Compactor::CompactJson); for kHistory a bare array
// of messages is a request with every default. Unknown members, at the root
// and in "options", are INVALID_ARGUMENT naming the closest known one, and
// so are members of the wrong type or out of range ("max_tokens",
// "options.min_important_messages"). For kConversation "messages" is
// refused. The rules are only read as JSON here: the compactor checks them
// against its table. The result points into `parser`.
absl::StatusOr<CompactionRequest> ParseCompactionRequest(
    simdjson::dom::parser& parser, std::string_view json,
    RequestKind kind = RequestKind::kHistory);

// Seed 001's response plus ctxkit's members (see Compactor::CompactJson).
absl::StatusOr<std::string> ChatCompactResponseJson(
    const CompactionResult& result);

// The response `request` asked for: seed 001's (ChatCompactResponseJson)
// or seed 000's (CompressContextResponseJson). With `conversation`, the
// stored conversation's id and the version of the view saved go first (after
// "schema_version" in seed 001's shape).
struct SavedView {
  std::string_view conversation_id;
  uint64_t version = 0;
};
absl::StatusOr<std::string> ResponseJson(
    const CompactionResult& result, const CompactionRequest& request,
    const SavedView* conversation = nullptr);

// The figures of a result without its messages, stored with a compacted
// view.
absl::StatusOr<std::string> CompactionInfoJson(const CompactionResult& result);

// Every field of `result`, and back: what the cache keeps.
absl::StatusOr<std::string> EncodeResult(const CompactionResult& result);
absl::StatusOr<CompactionResult> DecodeResult(std::string_view json);

// The bytes a cached result is found by: a version tag, every option that
// changes the result (the counting encoding, the classifier's table unless
// it is the built-in one) and the canonical (minified) messages. `table` is
// the classifier the compaction uses before the options remove rules from
// it; null for Classifier::Default().
std::string CacheLookupKey(const ChatHistory& history,
                           const CompactionOptions& options,
                           std::string_view encoding, const Classifier* table);

// Stored messages as an OpenAI history: role, content and, when present,
// name, tool_calls (as stored) and tool_call_id.
absl::StatusOr<std::string> StoredMessagesJson(
    const std::vector<Message>& messages);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_COMPACTION_JSON_H_
