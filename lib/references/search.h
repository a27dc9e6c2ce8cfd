// BM25 search over the inverted index of lib/references/index.h. The
// formulas and the relevance scale are documented in
// include/ctxkit/references.h; this is the engine ReferenceStore::Search
// and the benchmarks call.
//
// Each query term's postings blocks are located with one cursor seek. An
// unfiltered search adds them term at a time into one score per seq (a
// query with stop words reads most references' postings, and sequential
// adds cost a fraction of a merge); a search restricted to a conversation,
// or over seqs left sparse by deletions, merges them document at a time
// (over the conversation's seqs when filtered). Both sum a reference's term
// weights in term order, so they give the same scores; a heap keeps the best
// `limit`. Only the query terms' postings are read; document lengths travel in
// the postings.

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
// The length normalization of a search: K(|d|) = k1 * (1 - b + b * |d| /
// avgdl) as base + per_term * |d|, so that a posting costs one division.
struct Bm25Norm {
  double base;      // k1 * (1 - b)
  double per_term;  // k1 * b / avgdl
};
inline Bm25Norm MakeBm25Norm(double avgdl) {
  return {kBm25K1 * (1 - kBm25B), kBm25K1 * kBm25B / avgdl};
}
// One term's contribution before multiplying by idf.
inline double Bm25TermWeight(double tf, double length, const Bm25Norm& norm) {
  return tf * (kBm25K1 + 1) / (tf + norm.base + norm.per_term * length);
}

struct ScoredReference {
  uint32_t seq;
  double score;
  // Sum of idf over the query terms the reference holds.
  double matched_idf;
};

struct IndexSearchResult {
  std::vector<ScoredReference> hits;  // best first
  uint64_t total_matches = 0;
  // idf of each query term, in the order of `terms`.
  std::vector<double> idf;
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

// Bytes of a content searched for a search preview's passage: analyzing
// costs about as much as indexing, and a search shows up to
// kMaxSearchLimit previews.
inline constexpr size_t kMaxPassageScanBytes = 1 << 20;

struct SearchPreview {
  std::string text;
  // Byte ranges [first, second) of `text`, ascending, disjoint.
  std::vector<std::pair<size_t, size_t>> highlights;
};

// A query term's occurrence in a content: bytes [begin, end) of terms[term],
// in the word numbered `word` (words counted from 0; an identifier's parts
// lie in one word).
struct QueryMatch {
  size_t begin;
  size_t end;
  size_t term;
  uint32_t word;
};

// The occurrences of `terms` (distinct, as QueryTerms yields them) in the
// first kMaxPassageScanBytes of `content` (valid UTF-8), by position.
std::vector<QueryMatch> FindQueryMatches(std::string_view content,
                                         const std::vector<std::string>& terms);

// The search preview of references.h: the passage of about `max_chars`
// code points of `content` (valid UTF-8) whose `matches` (FindQueryMatches)
// carry the most `weights` (one per term), with white space runs shown as
// one space, "..." where cut and the matched terms' ranges. Without a
// match, MakePreview's text and no highlights.
SearchPreview MakeSearchPreview(std::string_view content,
                                const std::vector<QueryMatch>& matches,
                                const std::vector<double>& weights,
                                size_t max_chars);

// Words from the start of a content that count as its lead (a man page's
// header, NAME line and synopsis; a note's first sentences).
inline constexpr uint32_t kLeadWords = 40;
// Words a window spans when the query terms are looked for together.
inline constexpr uint32_t kNearWords = 12;

// What a reference shows of being about a query, each an idf-weighted share
// of the query in [0, 1] unless said otherwise (references.h, "Relevance").
struct RelevanceEvidence {
  double coverage = 0;  // terms the reference holds (title or content)
  double title = 0;     // terms in the title
  double lead = 0;      // terms in the content's first kLeadWords words
  // Terms in the best window of kNearWords words of the content, or in the
  // title if more.
  double near = 0;
  // score / the best result's score, in (0, 1].
  double rank = 0;
};

// The evidence for `hit`, whose title is `title` and whose content's
// matches are `matches`; `idf` holds the query terms' idf (as
// IndexSearchResult::idf), `best_score` the first result's score.
RelevanceEvidence GatherEvidence(std::string_view title,
                                 const std::vector<std::string>& terms,
                                 const std::vector<double>& idf,
                                 const std::vector<QueryMatch>& matches,
                                 const ScoredReference& hit, double best_score);

// The relevance of references.h from its evidence, in [0, 1].
double Relevance(const RelevanceEvidence& e);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_REFERENCES_SEARCH_H_
