// ContextGraph::FindSimilar, and the similarity Cleanup's keep-set asks
// for, over the lexical index (lexical.h).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/field_check.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/lexical.h"
#include "lib/graph/metrics.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {
namespace {

// A context without a summary is compared by its newest messages, so
// its query costs what a summary's would.
constexpr size_t kSimilarMessages = 20;

// Whether a message of context `seq` carries each of `tags`.
absl::StatusOr<bool> HasTags(const Transaction& txn,
                             const internal::GraphDbs& dbs, uint64_t seq,
                             const std::vector<std::string>& tags) {
  absl::flat_hash_set<std::string> missing(tags.begin(), tags.end());
  const std::string prefix = internal::SeqKey(seq);
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, internal::TxnNewCursor(txn, dbs.msg));
  for (cursor.Seek(prefix);
       !missing.empty() && cursor.Valid() && cursor.key().starts_with(prefix);
       cursor.Next()) {
    CTXKIT_ASSIGN_OR_RETURN(internal::MessageRecord r,
                            internal::DecodeMessageRecord(cursor.value()));
    for (const std::string& tag : r.tags) missing.erase(tag);
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  return missing.empty();
}

}  // namespace

absl::StatusOr<std::vector<internal::LexicalHit>> ContextGraph::Impl::SimilarTo(
    const Transaction& txn, uint64_t seq, size_t limit,
    double min_similarity) const {
  CTXKIT_ASSIGN_OR_RETURN(internal::ContextRecord ctx, Read(txn, seq));
  std::string query;
  if (ctx.summary_version > 0) {
    CTXKIT_ASSIGN_OR_RETURN(internal::SummaryRecord s,
                            ReadSummary(txn, seq, ctx.summary_version));
    query = std::move(s.text);
  } else {
    CTXKIT_ASSIGN_OR_RETURN(
        std::vector<Message> newest,
        internal::NewestMessagesIn(*conversations, txn, ctx.conversation_id, 0,
                                   kSimilarMessages));
    for (const Message& m : newest) {
      query += m.content;
      query += '\n';
    }
  }
  CTXKIT_ASSIGN_OR_RETURN(internal::ArchivedLookup archived,
                          internal::ArchivedLookup::Begin(txn, dbs, true));
  CTXKIT_ASSIGN_OR_RETURN(
      std::vector<internal::LexicalHit> hits,
      internal::SearchContexts(txn, dbs.lex, query, limit, [&](uint64_t s) {
        return s != seq && !archived.Contains(s);
      }));
  CTXKIT_RETURN_IF_ERROR(archived.status());
  std::erase_if(hits, [&](const internal::LexicalHit& h) {
    return h.cosine < min_similarity;
  });
  return hits;
}

StatusOr<SimilarResult> ContextGraph::FindSimilar(
    std::string_view text, const SimilarOptions& options) const {
  internal::GraphCall call(*impl_, "vector_db_search");
  absl::Status s =
      internal::CheckText("text", text, ContextGraphLimits::kMaxQueryBytes);
  if (s.ok()) {
    s = internal::CheckRange("limit", options.limit, 1,
                             ContextGraphLimits::kMaxSimilarLimit);
  }
  if (s.ok() && !(options.min_similarity >= 0 && options.min_similarity <= 1)) {
    s = absl::InvalidArgumentError(
        absl::StrFormat("minSimilarity is %g; it must be between 0 and 1",
                        options.min_similarity));
  }
  for (size_t i = 0; s.ok() && i < options.tags.size(); ++i) {
    s = internal::CheckText(absl::StrFormat("tags[%d]", i), options.tags[i],
                            ContextGraphLimits::kMaxTagBytes);
  }
  if (s.ok() && options.tags.size() > ContextGraphLimits::kMaxTags) {
    s = absl::InvalidArgumentError(
        absl::StrFormat("tags holds %d tags; the limit is %d",
                        options.tags.size(), ContextGraphLimits::kMaxTags));
  }
  if (s.ok() && options.method != SimilarityMethod::kAuto &&
      options.method != SimilarityMethod::kKeyword &&
      options.method != SimilarityMethod::kVector &&
      options.method != SimilarityMethod::kHybrid) {
    s = absl::InvalidArgumentError(
        "method must be auto, keyword, vector or hybrid");
  }
  const bool wants_vectors = options.method == SimilarityMethod::kVector ||
                             options.method == SimilarityMethod::kHybrid;
  if (s.ok() && wants_vectors && !impl_->options.fallback_to_keyword_match) {
    s = absl::UnavailableError(
        "method vector and hybrid need an embedder, and none is installed; "
        "use method keyword, or turn fallbackToKeywordMatch on");
  }
  if (!s.ok()) return internal::ToPublic(s);
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  auto search = [&]() -> absl::StatusOr<SimilarResult> {
    const internal::GraphDbs& dbs = impl_->dbs;
    absl::flat_hash_set<uint64_t> excluded;
    for (const std::string& id : options.exclude) {
      CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> seq,
                              impl_->Find(*txn, id));
      if (seq) excluded.insert(*seq);
    }
    CTXKIT_ASSIGN_OR_RETURN(
        internal::ArchivedLookup archived,
        internal::ArchivedLookup::Begin(*txn, dbs, !options.include_archived));
    // The filter runs on candidates in BM25 order, only until the pool is
    // full; its read errors end the search.
    absl::Status filter_error;
    auto accept = [&](uint64_t seq) {
      if (!filter_error.ok() || excluded.contains(seq) ||
          archived.Contains(seq)) {
        return false;
      }
      if (options.tags.empty()) return true;
      absl::StatusOr<bool> has = HasTags(*txn, dbs, seq, options.tags);
      if (!has.ok()) {
        filter_error = has.status();
        return false;
      }
      return *has;
    };
    CTXKIT_ASSIGN_OR_RETURN(
        std::vector<internal::LexicalHit> hits,
        internal::SearchContexts(*txn, dbs.lex, text, options.limit, accept));
    CTXKIT_RETURN_IF_ERROR(filter_error);
    CTXKIT_RETURN_IF_ERROR(archived.status());
    SimilarResult result;
    result.method = "keyword";
    for (const internal::LexicalHit& h : hits) {
      if (h.cosine < options.min_similarity) continue;
      CTXKIT_ASSIGN_OR_RETURN(internal::ContextRecord ctx,
                              impl_->Read(*txn, h.seq));
      SimilarContext& c = result.contexts.emplace_back();
      c.context_id = std::move(ctx.id);
      c.similarity = h.cosine;
      c.score = h.bm25;
      c.method = result.method;
      c.signals.bm25 = h.bm25;
      c.signals.tfidf = h.cosine;
    }
    return result;
  };
  return call.Done(internal::ToPublic(search()));
}

}  // namespace ctxkit
