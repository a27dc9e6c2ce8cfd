// Checks shared by the records tests: what acknowledged writes promise
// (AckModel), running records_peer, and full recounts of the conversations,
// references and cache parts compared with their incremental totals.
// The Check* functions report through doctest (CHECK/REQUIRE), so call them
// from inside a test case.

#ifndef CTXKIT_TESTS_RECORDS_RECORDS_CHECK_H_
#define CTXKIT_TESTS_RECORDS_RECORDS_CHECK_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "ctxkit/store.h"
#include "tests/unit/peer_process.h"

namespace ctxkit::testing {

// Everything acknowledged so far, as it must be found in the store.
struct AckModel {
  struct AckedMessage {
    uint64_t seq = 0;
    uint64_t tokens = 0;
  };
  // Conversations that must exist -> their acknowledged messages by id.
  std::map<std::string, std::map<std::string, AckedMessage>> conversations;
  std::set<std::string> deleted_conversations;
  // References that must exist -> (conversation id or "", unique term).
  std::map<std::string, std::pair<std::string, std::string>> references;
  std::set<std::string> deleted_references;
  // Cache entries that must exist -> conversation id or "".
  std::map<std::string, std::string> cache;
  std::set<std::string> deleted_cache;
  // A delete begun ("B" line) but not acknowledged, e.g. "DC <id>"; empty
  // when none.
  std::string pending_delete;
  uint64_t acks = 0;

  // Applies one records_peer line (records_protocol.h). False for a line
  // that is not part of the protocol (the caller fails the test).
  bool Apply(std::string_view line);
  // Applies a conversation's deletion with its cascade.
  void DeleteConversation(const std::string& id);
  void DeleteReference(const std::string& id);
  // Decides a pending delete from what the store holds, then clears it.
  void ResolvePending(ConversationStore& convs, ReferenceStore& refs);
};

// Starts records_peer (CTXKIT_RECORDS_PEER) with `args`.
PeerProcess StartPeer(const std::vector<std::string>& args);

// Every acknowledged record is present with its acknowledged fields, every
// acknowledged delete is absent (with its cascade), and each acknowledged
// reference is found by a search for its unique term (at most
// `search_samples` of them, the newest).
void CheckAcknowledged(const AckModel& model, ConversationStore& convs,
                       ReferenceStore& refs, Cache& cache,
                       size_t search_samples);

// Per-conversation totals against their messages, store-wide statistics
// against the sum, and the sub-databases' entry counts against both.
void CheckConversationTotals(Store& store, ConversationStore& convs);
// internal::CheckReferenceIndex, the statistics against a listing, and
// every reference's conversation exists.
void CheckReferenceIndexAndLinks(Store& store, ReferenceStore& refs);
// Cache statistics against a recount of the entries, one index row per
// entry, and every entry's conversation exists.
void CheckCacheTotals(Store& store, Cache& cache);

}  // namespace ctxkit::testing

#endif  // CTXKIT_TESTS_RECORDS_RECORDS_CHECK_H_
