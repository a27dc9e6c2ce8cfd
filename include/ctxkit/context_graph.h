// ctxkit::ContextGraph: named contexts of messages and the typed, weighted,
// bi-temporal relationships between them (seed 003's context memory graph),
// kept in the Store beside conversations.
//
//   auto store = ctxkit::Store::Open("/var/lib/agent");
//   auto convs = ctxkit::ConversationStore::Open(**store);
//   auto graph = ctxkit::ContextGraph::Open(**store, **convs);
//   (*graph)->AddMessage("auth-refactor", {.role = ctxkit::MessageRole::kUser,
//                                         .content = "Move login to OAuth",
//                                         .importance = "high"});
//   (*graph)->AddRelationship({.source = "auth-refactor",
//                              .target = "session-store",
//                              .type = "references"});
//   auto related = (*graph)->Related("auth-refactor");  // {"session-store"}
//
// Contexts. A context id is any UTF-8 text of 1..1024 bytes without NUL,
// compared byte for byte: "a/b", "a:b" and "a_b", or the NFC and NFD forms of
// one word, are different contexts (the seed mapped them to one file). Each
// context is backed by one ConversationStore conversation, created with it
// (title = the id, cut to the title limit; metadata {"context_id": id};
// model = ContextGraphOptions::model), so token counts, statistics and
// compaction work on contexts. Deleting the context deletes the
// conversation, and deleting the conversation deletes the context, its
// messages' graph records and all its relationships, in one transaction.
//
// Relationships. An edge (source, type, target) has a weight in [0, 1] and
// four times, in ms since the epoch:
//   valid_at / invalid_at   when the fact holds in the world (invalid_at 0:
//                           still holds)
//   created_at / expired_at when the graph learnt it and when it stopped
//                           believing it (expired_at 0: current belief)
// InvalidateRelationship ends a fact without forgetting it; queries see
// what is true now, or at an `as_of` time, unless asked for expired edges.
// Types: similar, continues, references, parent, child.
//
// Every method is thread-safe, and each is one LMDB transaction: a call
// that fails changes nothing. Several processes may share the store.
// Errors name the field: INVALID_ARGUMENT for bad input, NOT_FOUND for an
// unknown context, RESOURCE_EXHAUSTED when the store is full.

#ifndef CTXKIT_CONTEXT_GRAPH_H_
#define CTXKIT_CONTEXT_GRAPH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/conversations.h"
#include "ctxkit/export.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"

namespace ctxkit {

struct ContextGraphLimits {
  static constexpr size_t kMaxIdBytes = 1024;
  static constexpr size_t kMaxTags = 64;
  static constexpr size_t kMaxTagBytes = 128;
  static constexpr size_t kMaxMetadataBytes = 64 * 1024;
  static constexpr uint32_t kMaxListLimit = 1000;
  static constexpr int kMaxHops = 16;
};

struct ContextGraphOptions {
  // The model of the conversations created for new contexts: what their
  // messages' tokens are counted with. A model ModelRegistry does not know
  // is INVALID_ARGUMENT at Open.
  std::string model = std::string(kDefaultModel);
  // Milliseconds since the epoch; the system clock when empty. Tests inject
  // one so that the same calls give the same records.
  std::function<int64_t()> clock;
};

// The seed's four levels; its numbers are 0.25, 0.5, 0.75 and 1.0.
enum class Importance : uint8_t { kLow = 1, kMedium, kHigh, kCritical };
// "low", "medium", "high", "critical".
CTXKIT_EXPORT std::string_view ImportanceName(Importance importance);
// 0.25 .. 1.0.
CTXKIT_EXPORT double ImportanceValue(Importance importance);

struct GraphMessage {
  MessageRole role = MessageRole::kUser;
  std::string content = {};  // up to ConversationLimits' message limit
  // low, medium, high or critical, in any case ("HIGH" is high); empty is
  // medium.
  std::string importance = {};
  // At most kMaxTags, each 1..kMaxTagBytes of UTF-8; repeats are dropped,
  // the first occurrence's order kept.
  std::vector<std::string> tags = {};
};

struct GraphMessageAdded {
  std::string message_id = {};  // the conversation message's id
  uint64_t seq = 0;             // its place in the context, from 1
  uint64_t tokens = 0;
  Importance importance = Importance::kMedium;
  std::vector<std::string> tags = {};  // as stored (de-duplicated)
};

struct AddGraphMessagesResult {
  std::string context_id = {};
  std::string conversation_id = {};
  bool created = false;  // the context did not exist before this call
  std::vector<GraphMessageAdded> messages = {};
};

struct GraphMessageView {
  MessageRole role = MessageRole::kUser;
  std::string content = {};
  int64_t timestamp = 0;  // ms since the epoch
  Importance importance = Importance::kMedium;
  std::vector<std::string> tags = {};
  uint64_t seq = 0;
  uint64_t tokens = 0;
};

struct RetrieveOptions {
  // The newest `limit` messages (1..kMaxListLimit) before `before_seq` (0:
  // from the newest), returned oldest first.
  uint32_t limit = 100;
  uint64_t before_seq = 0;
};

// What a context is, as Retrieve and ListContexts report it.
struct ContextInfo {
  std::string context_id = {};
  std::string conversation_id = {};
  int64_t created_at = 0;
  int64_t last_activity_at = 0;  // its last message (ms since the epoch)
  uint64_t message_count = 0;    // its conversation's
  uint64_t total_tokens = 0;     // its conversation's
};

struct ContextDetail {
  ContextInfo context = {};
  // Since the last summary (CG-5's triggers read them).
  uint64_t messages_since_summary = 0;
  uint64_t tokens_since_summary = 0;
  uint64_t high_since_summary = 0;  // high or critical messages
  std::vector<GraphMessageView> messages = {};
};

struct NewRelationship {
  std::string source = {};
  std::string target = {};  // != source
  std::string type = {};    // similar, continues, references, parent, child
  double weight = 0.8;      // [0, 1]
  // A JSON object. On an existing edge it is merged into the stored one as
  // an RFC 7386 merge patch (null removes a member); "{}" changes nothing.
  std::string metadata = "{}";
  std::optional<int64_t> valid_at = {};    // default: now
  std::optional<int64_t> invalid_at = {};  // default: none (still holds)
  // Create a missing source or target context instead of NOT_FOUND (the
  // seed's REST path allowed edges to unknown ids).
  bool create_missing = false;
};

struct Relationship {
  std::string source = {};
  std::string target = {};
  std::string type = {};
  double weight = 0;
  std::string metadata = {};  // a JSON object
  int64_t created_at = 0;
  int64_t updated_at = 0;
  int64_t valid_at = 0;
  int64_t invalid_at = 0;  // 0: still holds
  int64_t expired_at = 0;  // 0: current
};

struct RelationshipUpsert {
  Relationship relationship;
  bool created = false;  // false: an existing edge was updated
};

enum class EdgeDirection : uint8_t { kBoth, kOutgoing, kIncoming };

struct RelatedOptions {
  std::string type = {};  // empty: every type
  EdgeDirection direction = EdgeDirection::kBoth;
  double min_weight = 0;
  uint32_t limit = 100;  // 1..kMaxListLimit
  uint32_t offset = 0;
  // The time whose truth is asked (valid_at <= as_of < invalid_at); now when
  // empty.
  std::optional<int64_t> as_of = {};
  // Also edges that are expired (invalidated) or not valid at as_of.
  bool include_expired = false;
};

struct RelatedEdge {
  std::string context_id = {};                         // the other end
  EdgeDirection direction = EdgeDirection::kOutgoing;  // seen from the query
  Relationship relationship;
};

struct RelatedResult {
  // The other ends, outgoing edges first, then incoming, each in the order
  // the edges were first added; an id appears once (its first edge).
  std::vector<std::string> context_ids = {};
  std::vector<RelatedEdge> edges = {};  // every matching edge, in that order
  uint64_t total = 0;                   // matching edges before limit/offset
};

struct PathOptions {
  // kBoth crosses edges either way (the seed's undirected search);
  // kOutgoing only from source to target. kIncoming is INVALID_ARGUMENT.
  EdgeDirection direction = EdgeDirection::kBoth;
  std::vector<std::string> types = {};  // empty: every type
  int max_hops = 6;                     // 1..kMaxHops
  // false: fewest hops. true: the largest product of weights (weight-0
  // edges are impassable).
  bool weighted = false;
  bool include_expired = false;
};

struct PathResult {
  bool found = false;
  // source .. target; {source} when they are equal; empty when not found.
  std::vector<std::string> path = {};
  std::vector<Relationship> edges = {};  // path.size() - 1 of them, as stored
  double total_weight = 0;               // product of the edges' weights
  // Why nothing was found: "source not found", "target not found", or "no
  // path within max_hops".
  std::string reason = {};
};

struct ContextPage {
  std::vector<ContextInfo> contexts = {};
  std::string next_cursor = {};  // empty on the last page
};

struct GraphVerifyReport {
  bool ok = true;
  uint64_t contexts = 0;
  uint64_t messages = 0;
  uint64_t edges = 0;
  std::vector<std::string> problems = {};  // empty when ok
};

class CTXKIT_EXPORT ContextGraph {
 public:
  // Opens the graph on `store` and `conversations` (opened on the same
  // store), which must outlive it, creating its sub-databases when needed.
  // INVALID_ARGUMENT for an unknown options.model; FAILED_PRECONDITION when
  // a newer ctxkit wrote the graph in a layout this build does not know;
  // Store::OpenDatabase's errors otherwise.
  static StatusOr<std::unique_ptr<ContextGraph>> Open(
      Store& store, ConversationStore& conversations,
      ContextGraphOptions options = {});

  ~ContextGraph();
  ContextGraph(const ContextGraph&) = delete;
  ContextGraph& operator=(const ContextGraph&) = delete;

  // Appends messages to context `id`, creating it (and its conversation)
  // when missing, in one write: the conversation messages with exact token
  // counts, their importance and tags, and the context's counters. The
  // batch form takes 1..ConversationLimits::kMaxBatchMessages messages;
  // errors name messages[i].<field>.
  StatusOr<AddGraphMessagesResult> AddMessage(std::string_view id,
                                              const GraphMessage& message);
  StatusOr<AddGraphMessagesResult> AddMessages(
      std::string_view id, const std::vector<GraphMessage>& messages);

  // Context `id` with a page of its messages. NOT_FOUND naming it.
  StatusOr<ContextDetail> Retrieve(std::string_view id,
                                   const RetrieveOptions& options = {}) const;

  // Adds the edge, or updates an existing (source, type, target): its
  // weight, metadata (merged), valid/invalid times when given, updated_at;
  // an expired edge so updated is current again. NOT_FOUND naming source or
  // target unless create_missing; INVALID_ARGUMENT for a self-loop, an
  // unknown type, a weight outside [0, 1], metadata that is not a JSON
  // object, or invalid_at before valid_at.
  StatusOr<RelationshipUpsert> AddRelationship(const NewRelationship& edge);
  // AddRelationship for 1..100000 edges in one write: all of them or, on
  // any error, none. They are applied in order, so a later edge of the
  // same (source, type, target) updates an earlier one, and a context one
  // edge creates (create_missing) exists for the next. Errors are
  // AddRelationship's, naming edges[i].<field>; INVALID_ARGUMENT naming
  // `edges` for an empty or too large batch. The results are in the order
  // of `edges`.
  StatusOr<std::vector<RelationshipUpsert>> AddRelationships(
      const std::vector<NewRelationship>& edges);

  // Deletes the edge (both indexes). NOT_FOUND when there is none.
  Status RemoveRelationship(std::string_view source, std::string_view target,
                            std::string_view type);

  // Ends the edge's fact at `at` (now when empty): invalid_at = at and
  // expired_at = now, on that edge only. NOT_FOUND when there is none;
  // FAILED_PRECONDITION when it is already expired or `at` is before its
  // valid_at (at == valid_at ends it before it held: an empty interval).
  StatusOr<Relationship> InvalidateRelationship(
      std::string_view source, std::string_view target, std::string_view type,
      std::optional<int64_t> at = std::nullopt);

  // The contexts related to `id`. NOT_FOUND naming it; INVALID_ARGUMENT for
  // an unknown type or a bad limit.
  StatusOr<RelatedResult> Related(std::string_view id,
                                  const RelatedOptions& options = {}) const;

  // The path from `source` to `target` (see PathOptions). An unknown id is
  // not an error: found is false and reason says which.
  StatusOr<PathResult> FindPath(std::string_view source,
                                std::string_view target,
                                const PathOptions& options = {}) const;

  // Deletes context `id`, its conversation and every edge that touches it.
  // NOT_FOUND naming it.
  Status DeleteContext(std::string_view id);

  // Contexts, the most recently active first (messages are activity),
  // `limit` (1..kMaxListLimit) per page. Pass the previous page's
  // next_cursor for the next; INVALID_ARGUMENT for a cursor this method did
  // not return.
  StatusOr<ContextPage> ListContexts(uint32_t limit = 100,
                                     std::string_view cursor = {}) const;

  // Reads the whole graph in one snapshot and checks it: every id is
  // interned once and its context record names it, every context's
  // conversation exists and indexes it back, its activity entry exists,
  // message records belong to contexts, every out-edge has its in-edge and
  // the reverse, edges join existing contexts, and the totals (contexts,
  // message records, edges by type) equal a recount. The conversations'
  // own counters are CheckStore's to recount. Problems are listed (the
  // first 100), not returned as errors; errors are for reads that fail.
  StatusOr<GraphVerifyReport> Verify() const;

  struct CTXKIT_NO_EXPORT Impl;

 private:
  CTXKIT_NO_EXPORT explicit ContextGraph(std::unique_ptr<Impl> impl);
  // AddMessage (single: errors name the field alone) and AddMessages.
  CTXKIT_NO_EXPORT StatusOr<AddGraphMessagesResult> Add(
      std::string_view id, const std::vector<GraphMessage>& messages,
      bool single);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ctxkit

#endif  // CTXKIT_CONTEXT_GRAPH_H_
