// A full consistency check of the conversations part's storage: recomputes,
// from the stored conversation and message records alone, everything the
// incremental writes maintain, and compares it with what is stored:
//
//   - each conversation record's totals: message_count, the four role token
//     counters (and so total_tokens, derived from them on reading),
//     compressed_count and compressed_tokens, the last message preview and
//     its time, and that the last seq handed out is at least every seq in
//     use;
//   - the statistics in "conversations.stats": the global record, one per
//     model and one per UTC day (AggregateStats as ReadAggregateStats reads
//     it), and that no other key is there;
//   - the indexes: "conversations.message_ids" (one row per message, giving
//     its messages key), "conversations.by_created" (one row per
//     conversation, under its created_at), and that every message and every
//     compacted view belongs to a stored conversation.
//
// What it cannot recompute it does not judge: message token counts (they
// depend on the tokenizer of the day they were counted) and the contents of
// compacted views (opaque to the conversations part's records).
//
// The store check (`ctxkit store check`) runs it beside the other parts'
// checks; tests run it after random mixes of writes.

#ifndef CTXKIT_LIB_CONVERSATIONS_CONVERSATION_CHECK_H_
#define CTXKIT_LIB_CONVERSATIONS_CONVERSATION_CHECK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

// Handles of the conversations part's sub-databases. An invalid handle
// stands for a sub-database the store lacks, which the check reads as empty.
struct ConversationDbs {
  Database conversations;    // "conversations"
  Database messages;         // "conversations.messages"
  Database message_ids;      // "conversations.message_ids"
  Database by_created;       // "conversations.by_created"
  Database stats;            // "conversations.stats"
  Database compacted_views;  // "conversations.compacted_views"

  // Opens each sub-database of the part; on a read-only store one that does
  // not exist is left invalid (a part never created is an empty one). On a
  // writable store opening creates the missing ones, as
  // ConversationStore::Open would. Errors of Store::OpenDatabase other than
  // NOT_FOUND. Must not run inside Store::Update.
  static absl::StatusOr<ConversationDbs> Open(Store& store);
};

// What the check saw, for callers that report it and tests that compare it
// with what they wrote.
struct ConversationCheckSummary {
  uint64_t conversations = 0;
  uint64_t messages = 0;
  uint64_t compressed_messages = 0;
  uint64_t message_id_rows = 0;  // "conversations.message_ids"
  uint64_t by_created_rows = 0;  // "conversations.by_created"
  uint64_t stats_records = 0;    // "conversations.stats": global, models, days
  uint64_t compacted_views = 0;
};

// OK when everything stored equals the recomputation. Otherwise DATA_LOSS
// describing the first difference found: the sub-database, the key (escaped
// as a C string where it is not text), and the stored and recomputed values;
// an undecodable record is DATA_LOSS naming its sub-database and key. Errors
// of reading are returned as they are. `summary`, when given, is set only on
// OK.
//
// Reads within `txn`'s snapshot only (a WriteTransaction sees its own
// writes), so concurrent writers neither disturb it nor wait for it.
// Cost: one pass over every record of the part plus one lookup per index
// row; memory for one small entry per conversation, model and day. A check
// for tools and tests, not for serving paths. Thread safety: that of `txn`.
absl::Status CheckConversationTotals(
    const Transaction& txn, const ConversationDbs& dbs,
    ConversationCheckSummary* summary = nullptr);

// The same in a fresh read transaction of `store`, after
// ConversationDbs::Open (so it must not run inside Store::Update, and on a
// writable store it creates missing sub-databases). Holding that snapshot
// for the whole walk keeps the store from reusing the pages it pins.
// Thread-safe, as Store is.
absl::Status CheckConversationTotals(
    Store& store, ConversationCheckSummary* summary = nullptr);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CONVERSATIONS_CONVERSATION_CHECK_H_
