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
#include <utility>
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
  // Sum of idf over the query terms the reference holds.
  double matched_idf;
  double relevance;
};

struct IndexSearchResult {
  std::vector<ScoredReference> hits;  // best first
  uint64_t total_matches = 0;
  // idf of each query term, in the order of `terms`.
  std::vector<double> idf;
};

// The relevance of references.h from a reference's BM25 `score`, the idf
// sum of the query terms it holds and that of all query terms; in [0, 1].
double Relevance(double score, double matched_idf, double query_idf);

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

// Bytes of a content searched for a search preview's passage: analyzing
// costs about as much as indexing, and a search shows up to
// kMaxSearchLimit previews.
inline constexpr size_t kMaxPassageScanBytes = 1 << 20;

struct SearchPreview {
  std::string text;
  // Byte ranges [first, second) of `text`, ascending, disjoint.
  std::vector<std::pair<size_t, size_t>> highlights;
};

// The search preview of references.h: the passage of about `max_chars`
// code points of `content` (valid UTF-8) whose matches of `terms`
// (distinct, as QueryTerms yields them) carry the most `weights` (one per
// term), with white space runs shown as one space, "..." where cut and the
// matched terms' ranges. Without a match in the first kMaxPassageScanBytes,
// MakePreview's text and no highlights.
SearchPreview MakeSearchPreview(std::string_view content,
                                const std::vector<std::string>& terms,
                                const std::vector<double>& weights,
                                size_t max_chars);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_REFERENCES_SEARCH_H_
