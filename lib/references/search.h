// BM25 search over the inverted index of lib/references/index.h. The
// formulas and the relevance normalization are documented in
// include/ctxkit/references.h; this is the engine ReferenceStore::Search
// and the benchmarks call.
//
// Evaluation is document-at-a-time: each query term's postings blocks are
// located with one cursor seek and read in seq order, merged, and scored, and
// a heap keeps the best `limit`. Only the query terms' postings are read;
// document lengths travel in the postings.

#ifndef CTXKIT_LIB_REFERENCES_SEARCH_H_
#define CTXKIT_LIB_REFERENCES_SEARCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ctxkit/store.h"
#include "lib/references/index.h"

namespace ctxkit::internal {

inline constexpr double kBm25K1 = 1.2;
inline constexpr double kBm25B = 0.75;

// ln(1 + (n - df + 0.5) / (df + 0.5)).
double Bm25Idf(uint64_t n, uint64_t df);
// One term's contribution before multiplying by idf.
inline double Bm25TermWeight(double tf, double length, double avgdl) {
  return tf * (kBm25K1 + 1) /
         (tf + kBm25K1 * (1 - kBm25B + kBm25B * length / avgdl));
}

struct ScoredReference {
  uint32_t seq;
  double score;
  double relevance;
};

struct IndexSearchResult {
  std::vector<ScoredReference> hits;  // best first
  uint64_t total_matches = 0;
};

// The distinct terms of `query` in order of first occurrence.
std::vector<std::string> QueryTerms(std::string_view query);

// Scores every reference holding at least one of `terms` (distinct) and
// returns the best `limit` (> 0). With a non-empty `conversation_id`, only
// that conversation's references are candidates (statistics stay global).
absl::StatusOr<IndexSearchResult> SearchIndex(
    const Transaction& txn, const ReferenceDbs& dbs,
    const std::vector<std::string>& terms, size_t limit,
    std::string_view conversation_id);

// The first `max_chars` code points of `text` (valid UTF-8), plus "..." when
// `text` is longer.
std::string MakePreview(std::string_view text, size_t max_chars);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_REFERENCES_SEARCH_H_
