// ContextGraph's state and the reads its files share: looking a context up
// by id, reading its record, and the edge filter of the queries.

#ifndef CTXKIT_LIB_GRAPH_GRAPH_IMPL_H_
#define CTXKIT_LIB_GRAPH_GRAPH_IMPL_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/vectors.h"

namespace ctxkit {

struct ContextGraph::Impl {
  Store* store = nullptr;
  ConversationStore* conversations = nullptr;
  ContextGraphOptions options;
  internal::GraphDbs dbs;

  // Vectors (vectors.h): their tables, the scan copy queries share, and
  // the embedder installed now (options.embedder at Open, then
  // SetEmbedder's), read under embedder_mu by each call that uses it.
  internal::VectorDbs vec_dbs;
  mutable internal::VectorIndex vectors;
  mutable std::mutex embedder_mu;
  std::shared_ptr<Embedder> embedder;
  std::shared_ptr<Embedder> CurrentEmbedder() const;
  // CheckEmbedder, and FAILED_PRECONDITION when the graph's recorded
  // space in `txn` is another.
  absl::Status CheckEmbedderFits(const Transaction& txn,
                                 const Embedder& e) const;
  // With an embedder installed, (re)computes context `seq`'s vector from
  // summary `record` in `txn`. Its failure is not the write's: the
  // context's vector is dropped (a vector of an older summary would rank
  // it by what it was) and `error` (may be null) says why; only the store's
  // errors are returned.
  absl::Status EmbedSummary(WriteTransaction& txn, uint64_t seq,
                            const internal::SummaryRecord& record,
                            std::string* error) const;

  int64_t Now() const;

  // The seq of context `id` in `txn`, or nullopt when there is none.
  absl::StatusOr<std::optional<uint64_t>> Find(const Transaction& txn,
                                               std::string_view id) const;
  // Find, with NOT_FOUND "<field> '<id>' is not a context" when missing.
  absl::StatusOr<uint64_t> Require(const Transaction& txn, std::string_view id,
                                   std::string_view field) const;
  // The record of context `seq`, or nullopt when it was deleted (for
  // records that name contexts without owning them: meta summaries).
  absl::StatusOr<std::optional<internal::ContextRecord>> ReadIfExists(
      const Transaction& txn, uint64_t seq) const;
  // The record of context `seq`; DATA_LOSS when an index names a missing one.
  absl::StatusOr<internal::ContextRecord> Read(const Transaction& txn,
                                               uint64_t seq) const;

  // INVALID_ARGUMENT naming the numeric option out of its range.
  static absl::Status CheckOptionRanges(const ContextGraphOptions& o);
  // The tokens since the last summary that trigger an automatic one for a
  // context of `model` (UINT64_MAX: never).
  absl::StatusOr<uint64_t> SummaryTokenTrigger(std::string_view model) const;
  // Whether AddMessage(s) summarizes `ctx` (its since-summary counters
  // already count the new messages).
  bool ShouldSummarize(const internal::ContextRecord& ctx,
                       uint64_t token_trigger) const;
  // Writes the next summary of context `seq` in `txn`: the summary record
  // (dropping versions beyond summary_history), `ctx` with its new version,
  // score and reset since-summary counters, and the hierarchical summaries
  // above it (RefreshHierarchy). FAILED_PRECONDITION for a context without
  // messages.
  // `linked` (may be null) receives AutoLink's ids, `embedding_error`
  // (may be null) EmbedSummary's.
  absl::StatusOr<internal::SummaryRecord> WriteSummary(
      WriteTransaction& txn, uint64_t seq, internal::ContextRecord& ctx,
      int64_t now, std::vector<std::string>* linked = nullptr,
      std::string* embedding_error = nullptr) const;
  // Version `version` of context `seq`'s summary; DATA_LOSS when missing.
  absl::StatusOr<internal::SummaryRecord> ReadSummary(const Transaction& txn,
                                                      uint64_t seq,
                                                      uint32_t version) const;
  // The newest summary (history: every kept version, newest first); empty
  // before the first. related_contexts is left empty (FillRelated).
  absl::StatusOr<std::vector<ContextSummary>> Summaries(
      const Transaction& txn, uint64_t seq, const internal::ContextRecord& ctx,
      bool history) const;
  static ContextSummary PublicSummary(const internal::ContextRecord& ctx,
                                      uint32_t version,
                                      internal::SummaryRecord record);
  // Sets summary.related_contexts from `graph`'s current relationships.
  static Status FillRelated(const ContextGraph& graph, ContextSummary& summary);

  enum class DigestKind { kHierarchy, kMeta };
  // The summary across contexts `seqs` (deleted ones skipped): a parent's
  // of its children, or a meta summary. `old` (may be null) is the record
  // it replaces: its version and creation time carry on.
  absl::StatusOr<internal::DigestRecord> BuildDigest(
      const Transaction& txn, const std::vector<uint64_t>& seqs,
      DigestKind kind, const internal::DigestRecord* old, int64_t now) const;
  // After context `child`'s summary changed: with hierarchical_context,
  // rewrites the hierarchical summary of each of its ancestors, then the
  // project meta summary once meta_summary_threshold parents have one.
  absl::Status RefreshHierarchy(WriteTransaction& txn, uint64_t child,
                                int64_t now) const;
  // Creates or rewrites (next version) meta summary `meta_id` over `seqs`.
  absl::StatusOr<internal::DigestRecord> WriteMeta(
      WriteTransaction& txn, std::string_view meta_id,
      const std::vector<uint64_t>& seqs, int64_t now) const;
  // The ids of the contexts `seqs` that exist, in that order.
  absl::StatusOr<std::vector<std::string>> IdsOf(
      const Transaction& txn, const std::vector<uint64_t>& seqs) const;
  absl::StatusOr<MetaSummary> PublicMeta(const Transaction& txn,
                                         std::string_view meta_id,
                                         const internal::DigestRecord& r) const;

  // Whether Cleanup archived context `seq`.
  absl::StatusOr<bool> IsArchived(const Transaction& txn, uint64_t seq) const;
  // Every archived context, for a pass over all contexts (Cleanup); a
  // query asks ArchivedLookup instead, so its cost does not grow with the
  // number of archived contexts.
  absl::StatusOr<absl::flat_hash_set<uint64_t>> Archived(
      const Transaction& txn) const;

  // Cleanup's work in `txn` from context `current` (see Cleanup).
  absl::StatusOr<CleanupResult> CleanupIn(WriteTransaction& txn,
                                          uint64_t current,
                                          const CleanupOptions& o,
                                          int64_t now) const;
  // The live contexts most similar to context `seq`'s document (its newest
  // summary, else its newest messages), at least `min_similarity` similar,
  // at most `limit`, most similar first; never `seq` itself.
  // Each hit's seq and cosine (its `similarity`).
  absl::StatusOr<std::vector<internal::LexicalHit>> SimilarTo(
      const Transaction& txn, uint64_t seq, size_t limit,
      double min_similarity) const;
  // After summary `version` of context `seq` (record `ctx`): writes its
  // auto-links (ContextGraphOptions::auto_link_limit) and invalidates its
  // auto edges no longer among them; the ids linked.
  absl::StatusOr<std::vector<std::string>> AutoLink(
      WriteTransaction& txn, const internal::ContextRecord& ctx, uint64_t seq,
      uint32_t version, int64_t now) const;
  // The other ends of context `seq`'s edges current at `now`, both ways,
  // every type, each once.
  absl::StatusOr<std::vector<uint64_t>> CurrentNeighbours(
      const Transaction& txn, uint64_t seq, int64_t now) const;

  // The conversation a new context `id` gets (checked, not yet written).
  absl::StatusOr<Conversation> NewConversationFor(std::string_view id) const;
  // Writes context `id` with `conversation` (from NewConversationFor) in
  // `txn`, counting it in `totals` (which the caller writes); its seq.
  absl::StatusOr<uint64_t> Create(WriteTransaction& txn, std::string_view id,
                                  const Conversation& conversation,
                                  internal::GraphTotals& totals,
                                  int64_t now) const;
};

namespace internal {

// Whether contexts are archived, asked one at a time by a query: one
// lookup each, none at all while nothing is archived (or when the query
// includes archived contexts). Contains cannot fail where it is called (in
// edge-scan callbacks), so the first read error is kept for the query to
// return.
class ArchivedLookup {
 public:
  // `active` false: nothing counts as archived.
  static absl::StatusOr<ArchivedLookup> Begin(const Transaction& txn,
                                              const GraphDbs& dbs, bool active);
  bool Contains(uint64_t seq);
  const absl::Status& status() const { return status_; }

 private:
  ArchivedLookup(const Transaction& txn, const GraphDbs& dbs, bool any)
      : txn_(&txn), dbs_(&dbs), any_(any) {}
  const Transaction* txn_;
  const GraphDbs* dbs_;
  bool any_;
  absl::Status status_;
};

// A context id: UTF-8 of 1..kMaxIdBytes bytes without NUL. INVALID_ARGUMENT
// naming `field` (the id is not echoed: it may be 1 KiB of anything).
absl::Status CheckContextId(std::string_view field, std::string_view id);

// Tags as a message stores them or a query filters by them: at most
// kMaxTags, each UTF-8 of 1..kMaxTagBytes; the result is de-duplicated
// (first occurrences, in order). INVALID_ARGUMENT naming "<prefix>tags[i]"
// or "<prefix>tags".
absl::StatusOr<std::vector<std::string>> CheckTags(
    std::string_view prefix, const std::vector<std::string>& tags);

// A context's lexical document (what FindSimilar searches): each message's
// text and tags, and its newest summary counted kSummaryTermWeight times
// (a summary says what matters in fewer words).
inline constexpr uint32_t kSummaryTermWeight = 2;
TermCounts MessageTerms(std::string_view content,
                        const std::vector<std::string>& tags);

// Deletes context `seq` and everything of the graph's that belongs to it
// (its id, messages' records, activity entry, every edge touching it in
// both indexes, its share of the totals) in `txn`. Not its conversation:
// this is what ConversationStore::Delete's hook runs. Returns how many
// records went.
absl::StatusOr<uint64_t> DeleteContextRecords(WriteTransaction& txn,
                                              const GraphDbs& dbs,
                                              uint64_t seq);

}  // namespace internal
}  // namespace ctxkit

#endif  // CTXKIT_LIB_GRAPH_GRAPH_IMPL_H_
