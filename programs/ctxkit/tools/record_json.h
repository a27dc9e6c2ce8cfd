// The JSON documents of the stored records (conversations, references,
// cache entries), written once for both of their users: the CLI's record
// commands (`conv`, `ref`, `cache`), which print them without "success",
// and the MCP tools (manage_conversation, track_references, smart_cache),
// which put seed 000's "success" and "message" members around them. The
// library has public ...ToJson() functions for references, cache statistics
// and the optimizer, but none for conversations or for single cache
// entries, so those are written here.
//
// The Write...Members functions write object members into an object the
// caller has begun (and ends), so that each caller can put its own members
// before and after them. Thread safety: pure functions of their arguments.

#ifndef CTXKIT_PROGRAMS_CTXKIT_TOOLS_RECORD_JSON_H_
#define CTXKIT_PROGRAMS_CTXKIT_TOOLS_RECORD_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "ctxkit/status.h"
#include "programs/ctxkit/host/record_common.h"

namespace ctxkit::program {

// ---- conversations ----

// A conversation object: id, title, model, created_at, updated_at,
// total_tokens, message_count, input/output/user/assistant/system/tool
// tokens, compressed_count, compressed_tokens, last_message and
// last_message_at (only when it has messages) and metadata (an object).
void WriteConversationJson(JsonOut& json, const Conversation& conversation);

// A message object: id, conversation_id, seq, role, content (unless
// `with_content` is false: a caller that was just given the content need
// not echo it), name, tool_calls and tool_call_id (when set), tokens,
// is_compressed, created_at.
void WriteMessageJson(JsonOut& json, const Message& message,
                      bool with_content = true);

// Members "conversation", "messages" (only when `with_messages`),
// "actual_tokens" and "actual_tokens_exact".
void WriteConversationDetailMembers(JsonOut& json,
                                    const ConversationDetail& detail,
                                    bool with_messages);

// Members "conversations", "total", "showing" and "next_cursor" (null on
// the last page).
void WriteConversationPageMembers(JsonOut& json, const ConversationPage& page);

// Members "deleted" (true), "conversation_id", "title", "messages_deleted"
// and "dependent_records_deleted".
void WriteDeletedConversationMembers(JsonOut& json,
                                     const DeletedConversation& deleted);

// ---- references ----

// Members "references" (ReferenceToJson of each, with content and metadata
// when `with_content`) and "stats" (ReferenceStatsToJson). Errors: those of
// the library's writers (INVALID_ARGUMENT for stored text that is not
// UTF-8, never for data the library wrote); `json` is then incomplete.
Status WriteReferenceListMembers(JsonOut& json, const ReferenceList& list,
                                 bool with_content);

// ReferenceSearchResultsToJson's object ({"results":[...],"total":<n>}),
// minified, with "total_matches" (how many matched in all) appended.
// Errors as ReferenceSearchResultsToJson.
StatusOr<std::string> ReferenceSearchJson(
    const ReferenceSearchResults& results);

// ---- cache ----

// Member "expires_at": the time in ms, or null for never (0).
void WriteCacheExpiry(JsonOut& json, int64_t expires_at);

// Members of a stored entry: "key", "prefix" (as given), "tokens",
// "created_at", "expires_at", "already_cached".
void WriteCachePutMembers(JsonOut& json, const CachePutResult& put,
                          std::string_view prefix);

// Members of a retrieved entry: "key", "content", "tokens", "hit_count",
// "created_at", "last_accessed", "expires_at", "model" and
// "conversation_id" (when it has one).
void WriteCacheEntryMembers(JsonOut& json, const CacheEntry& entry);

// Members "exists", "key" (null when it does not) and "tokens_saved".
void WriteCacheCheckMembers(JsonOut& json, const CacheCheckResult& check);

// Members "cleared" and "prefix" (null when all prefixes were cleared).
void WriteCacheClearMembers(JsonOut& json, uint64_t cleared,
                            std::optional<std::string_view> prefix);

// ---- documents ----

// `object_json` (a JSON object's text, as the library's ...ToJson writes
// it) minified, with "success":true as its first member: seed 000's
// success document around a library document.
std::string WithSuccess(std::string_view object_json);

// `object_json` (minified, a JSON object) with `members` (text such as
// "\"a\":1,\"b\":2", empty for none) appended as its last members.
std::string AppendMembers(std::string_view object_json,
                          std::string_view members);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_TOOLS_RECORD_JSON_H_
