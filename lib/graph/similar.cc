// ContextGraph::FindSimilar over the lexical index (lexical.h), the vectors
// (vectors.h) or both fused, and the similarity Cleanup's keep-set asks for.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/field_check.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/edge_filter.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/lexical.h"
#include "lib/graph/metrics.h"
#include "lib/graph/vectors.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {
namespace {

// A context without a summary is compared by its newest messages, so
// its query costs what a summary's would.
constexpr size_t kSimilarMessages = 20;

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
  if (s.ok()) s = internal::CheckRange("rrfK", options.rrf_k, 1, 1000);
  if (s.ok() && !(options.min_similarity >= 0 && options.min_similarity <= 1)) {
    s = absl::InvalidArgumentError(
        absl::StrFormat("minSimilarity is %g; it must be between 0 and 1",
                        options.min_similarity));
  }
  if (s.ok()) s = internal::CheckTags("", options.tags).status();
  if (s.ok() && options.method != SimilarityMethod::kAuto &&
      options.method != SimilarityMethod::kKeyword &&
      options.method != SimilarityMethod::kVector &&
      options.method != SimilarityMethod::kHybrid) {
    s = absl::InvalidArgumentError(
        "method must be auto, keyword, vector or hybrid");
  }
  if (!s.ok()) return internal::ToPublic(s);
  const std::shared_ptr<Embedder> embedder = impl_->CurrentEmbedder();
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  auto search = [&]() -> absl::StatusOr<SimilarResult> {
    const internal::GraphDbs& dbs = impl_->dbs;
    const internal::VectorDbs& vec_dbs = impl_->vec_dbs;
    SimilarResult result;
    SimilarityMethod method = options.method;
    if (method == SimilarityMethod::kAuto) {
      method = SimilarityMethod::kKeyword;
      if (embedder) {
        CTXKIT_ASSIGN_OR_RETURN(size_t n, impl_->vectors.Size(*txn, vec_dbs));
        if (n > 0) method = SimilarityMethod::kHybrid;
      }
    }
    // The text's vector, or why there is none.
    std::vector<float> query;
    if (method != SimilarityMethod::kKeyword) {
      absl::Status embedded =
          absl::UnavailableError("no embedder is installed");
      if (embedder) {
        embedded = impl_->CheckEmbedderFits(*txn, *embedder);
        if (embedded.ok()) {
          embedded = internal::EmbedText(*embedder, text, query);
        }
      }
      if (!embedded.ok()) {
        if (options.method != SimilarityMethod::kAuto &&
            !impl_->options.fallback_to_keyword_match) {
          return absl::UnavailableError(absl::StrFormat(
              "method vector and hybrid need the text's embedding: %s; use "
              "method keyword, or turn fallbackToKeywordMatch on",
              embedded.message()));
        }
        result.fallback_reason = std::string(embedded.message());
        method = SimilarityMethod::kKeyword;
      }
    }
    result.method = method == SimilarityMethod::kKeyword  ? "keyword"
                    : method == SimilarityMethod::kVector ? "vector"
                                                          : "hybrid";

    absl::flat_hash_set<uint64_t> excluded;
    for (const std::string& id : options.exclude) {
      CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> seq,
                              impl_->Find(*txn, id));
      if (seq) excluded.insert(*seq);
    }
    CTXKIT_ASSIGN_OR_RETURN(
        internal::ArchivedLookup archived,
        internal::ArchivedLookup::Begin(*txn, dbs, !options.include_archived));
    // The filter runs on candidates in ranking order, only until the pool
    // is full; its read errors end the search.
    absl::Status filter_error;
    auto accept = [&](uint64_t seq) {
      if (!filter_error.ok() || excluded.contains(seq) ||
          archived.Contains(seq)) {
        return false;
      }
      if (options.tags.empty()) return true;
      absl::StatusOr<bool> has =
          internal::ContextHasTags(*txn, dbs, seq, options.tags);
      if (!has.ok()) {
        filter_error = has.status();
        return false;
      }
      return *has;
    };
    // Hybrid fuses deeper rankings than it returns, so that a context
    // second in one and absent from the other's top still places.
    const size_t pool = method == SimilarityMethod::kHybrid
                            ? size_t{4} * options.limit
                            : options.limit;
    std::vector<internal::LexicalHit> lexical;
    if (method != SimilarityMethod::kVector) {
      CTXKIT_ASSIGN_OR_RETURN(
          lexical, internal::SearchContexts(*txn, dbs.lex, text, pool, accept));
    }
    std::vector<internal::VectorHit> nearest;
    if (method != SimilarityMethod::kKeyword) {
      CTXKIT_ASSIGN_OR_RETURN(
          nearest, impl_->vectors.Search(*txn, vec_dbs, query, pool, accept));
    }
    CTXKIT_RETURN_IF_ERROR(filter_error);
    CTXKIT_RETURN_IF_ERROR(archived.status());

    struct Candidate {
      uint64_t seq = 0;
      SimilarContext c = {};
      bool has_vector = false;
    };
    std::vector<Candidate> candidates;
    absl::flat_hash_map<uint64_t, size_t> index;
    auto at = [&](uint64_t seq) -> Candidate& {
      auto [it, added] = index.try_emplace(seq, candidates.size());
      if (added) candidates.push_back({.seq = seq});
      return candidates[it->second];
    };
    const double k = options.rrf_k;
    for (size_t r = 0; r < lexical.size(); ++r) {
      Candidate& c = at(lexical[r].seq);
      c.c.signals.bm25 = lexical[r].bm25;
      c.c.signals.tfidf = lexical[r].cosine;
      c.c.signals.rrf += 1.0 / (k + static_cast<double>(r + 1));
    }
    for (size_t r = 0; r < nearest.size(); ++r) {
      Candidate& c = at(nearest[r].seq);
      c.has_vector = true;
      c.c.signals.vector = std::max(0.0, nearest[r].cosine);
      c.c.signals.rrf += 1.0 / (k + static_cast<double>(r + 1));
    }
    for (Candidate& c : candidates) {
      if (method == SimilarityMethod::kHybrid && !c.has_vector) {
        // Found by its words only: its vector, if it has one, still says
        // how similar it is.
        CTXKIT_ASSIGN_OR_RETURN(std::optional<std::vector<float>> v,
                                internal::ReadVector(*txn, vec_dbs, c.seq));
        if (v && v->size() == query.size()) {
          c.has_vector = true;
          c.c.signals.vector = std::max(0.0, internal::Cosine(query, *v));
        }
      }
      switch (method) {
        case SimilarityMethod::kVector:
          c.c.similarity = c.c.score = c.c.signals.vector;
          c.c.signals.rrf = 0;
          break;
        case SimilarityMethod::kHybrid:
          c.c.similarity =
              c.has_vector ? c.c.signals.vector : c.c.signals.tfidf;
          c.c.score = c.c.signals.rrf;
          break;
        default:
          c.c.similarity = c.c.signals.tfidf;
          c.c.score = c.c.signals.bm25;
          c.c.signals.rrf = 0;
          break;
      }
    }
    // Keyword and vector keep their rankings' order; hybrid orders by the
    // fused score (ties: more similar, then older).
    if (method == SimilarityMethod::kHybrid) {
      std::sort(candidates.begin(), candidates.end(),
                [](const Candidate& a, const Candidate& b) {
                  if (a.c.score != b.c.score) return a.c.score > b.c.score;
                  if (a.c.similarity != b.c.similarity) {
                    return a.c.similarity > b.c.similarity;
                  }
                  return a.seq < b.seq;
                });
    }
    for (Candidate& c : candidates) {
      if (result.contexts.size() == options.limit) break;
      if (c.c.similarity < options.min_similarity) continue;
      CTXKIT_ASSIGN_OR_RETURN(internal::ContextRecord ctx,
                              impl_->Read(*txn, c.seq));
      c.c.context_id = std::move(ctx.id);
      c.c.method = result.method;
      result.contexts.push_back(std::move(c.c));
    }
    return result;
  };
  return call.Done(internal::ToPublic(search()));
}

}  // namespace ctxkit
