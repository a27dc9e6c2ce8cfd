// ctxkit::ReferenceStore: reference material (files, URLs, code snippets,
// notes, documents) kept beside conversations, with token counts taken at
// insertion, statistics kept up to date in the same transaction as every
// write, and BM25 full-text search over an inverted index in the Store.
//
//   auto store = ctxkit::Store::Open("/var/lib/agent");
//   auto refs = ctxkit::ReferenceStore::Open(**store);
//   ctxkit::NewReference in;
//   in.type = "code";
//   in.title = "Token Counter Implementation";
//   in.content = "function countTokens(text: string): number { ... }";
//   auto ref = (*refs)->Add(in);
//   ctxkit::SearchReferencesOptions query;
//   query.query = "token counter";
//   auto hits = (*refs)->Search(query);
//   // hits->results[0].relevance in [0, 1]; .preview the best passage
//
// Token counts. Reference::tokens is what the content costs with
// ReferenceStoreOptions::model (ModelRegistry::Default().CountTokens: exact
// with the model's tokenizer, a flagged heuristic for unknown models); the
// title is not counted. Counts are taken once, at Add, with the model the
// store was opened with.
//
// Search. Text is split into terms as lib/references/analyzer.h describes:
// words are maximal runs of Unicode letters, numbers, marks and underscores;
// camelCase and snake_case identifiers are indexed as their parts and as the
// whole identifier ("countTokens" -> "count", "tokens", "counttokens");
// ASCII letters are lower-cased, other characters are kept as they are.
// Ranking (the order of results) is Okapi BM25 with k1 = 1.2 and b = 0.75 over
// a document made of the content plus the title counted three times
// (kTitleWeight):
//   tf(t, d)  = tf_content + 3 * tf_title
//   |d|       = terms(content) + 3 * terms(title); avgdl over all references
//   idf(t)    = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))   (never negative)
//   score(d)  = sum over distinct query terms t of
//               idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))
// N, df and avgdl are over ALL references, also when a search is restricted
// to one conversation, so scores do not depend on the filter.
// Results are ordered by score, then by age (older first). A document
// matches when it holds at least one query term.
//
// Relevance says whether a result is about the query, on a scale that a
// person can read without seeing the other scores. With Q the distinct
// query terms weighted by idf (a term found in no reference counts with
// df = 0, so a distinctive word nothing holds weighs the most; stop words
// such as "the" weigh almost nothing), each piece of evidence is the share
// of Q's weight that shows it:
//   coverage  the terms the reference holds (title or content)
//   about     the terms in its title or in the first 40 words of its
//             content (a man page's NAME line, a note's first sentence)
//   near      the terms within one window of 12 words of the content, or
//             in the title
//   rank      score / the first result's score
//   relevance = coverage^2 * (0.4 * about + 0.6 * near * rank^2)
// How to read it:
//   >= 0.7  about the query: its words together, said in the title or at
//           the start, and scored near the best result
//   0.3-0.7 the words are there and mostly together but the reference does
//           not say it is about them, or ranks well below the best: worth a
//           look, often about something else
//   < 0.3   part of the query missing (its distinctive word, say) or the
//           words scattered: an incidental mention, however it ranks
// Measured on 92 Debian man pages judged by hand for 46 queries
// (tests/references/data/man_relevance.tsv; the weights were fitted on half
// the queries): of the held-out half, 22 of 32 pages on topic scored
// >= 0.7 and 151 of 164 pages off topic (holding the query's words) < 0.5;
// on the fitted half, 25 of 31 and 165 of 170. Pages on topic that score
// lower mostly lack a query word in the form asked ("disk" for df, "checker"
// for valgrind: there is no stemming). It depends on the first result, so
// on a conversation filter, but not on the limit. The order stays BM25's;
// relevance mostly falls with it (in 307 of 414 neighbouring pairs of the
// judged queries' first ten), but a result saying it is about the query
// may score above one ranked higher that only holds its words.
//
// Search previews. A result's preview is the passage of the content, about
// kPreviewChars code points, where the query terms occur most densely
// (weighted by idf, so a rare term draws it more than a common one): it
// starts at a sentence, line or word, runs of white space are shown as one
// space, and "..." marks where the content was cut before or after. The
// terms are found with the index's analyzer, so a query term matches
// exactly the words it matched in the index (case-insensitively for ASCII,
// identifier parts like "count" in "countTokens"; there is no stemming, so
// "running" does not match "runs"). ReferenceSearchResult::highlights
// gives where they are. Only the first MiB of a content is looked through;
// without a match there (a match in the title only, say) the preview is the
// start of the content, as Reference::preview, with no highlights.
//
// Validation. Every method checks all its arguments before writing anything
// and names the offending field in an INVALID_ARGUMENT error: a type other
// than the five names, an empty or oversized title or content, invalid UTF-8,
// metadata that is not a JSON object, a malformed id, an empty query (or one
// without any term), a limit out of range. NOT_FOUND names the id of a
// reference or conversation that does not exist. A failed call changes
// nothing. Byte limits are in ReferenceLimits.
//
// Storage: sub-databases "references" and "references.*" of the Store (layout
// in lib/references/index.h). Deleting a conversation through
// ConversationStore deletes its references in the same write transaction.
//
// Thread safety: every method may be called from any number of threads at
// once. Writes are serialized by the Store; reads run on snapshots and never
// see half of a write. Results are plain values owned by the caller.

#ifndef CTXKIT_REFERENCES_H_
#define CTXKIT_REFERENCES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"

namespace ctxkit {

// Limits of the fields callers give, checked before anything is written.
struct ReferenceLimits {
  static constexpr size_t kMaxTitleBytes = 1024;          // 1 KiB
  static constexpr size_t kMaxContentBytes = 16 << 20;    // 16 MiB
  static constexpr size_t kMaxMetadataBytes = 64 * 1024;  // 64 KiB
  static constexpr size_t kMaxQueryBytes = 4096;          // 4 KiB
  // Most distinct terms a query may have after analysis.
  static constexpr size_t kMaxQueryTerms = 64;
  // Search limit: 1..kMaxSearchLimit, default kDefaultSearchLimit.
  static constexpr uint32_t kMaxSearchLimit = 100;
  static constexpr uint32_t kDefaultSearchLimit = 10;
  // Reference::preview holds this many characters (code points) of the
  // content, followed by "..." when the content is longer; a search
  // result's preview is a passage of about this many (see the top).
  static constexpr size_t kPreviewChars = 100;
};

// The five reference types, as the MCP Token Optimizer names them.
inline constexpr std::string_view kReferenceTypes[] = {"file", "url", "code",
                                                       "note", "document"};

struct ReferenceStoreOptions {
  // Model whose tokenizer counts Reference::tokens; 1..256 bytes of UTF-8.
  // An unknown model is accepted and counted by the heuristic.
  std::string model = std::string(kDefaultModel);
  // Source of created_at (ms since the epoch); empty = the wall clock.
  std::function<int64_t()> clock;
};

// A reference to add.
struct NewReference {
  // Optional owning conversation: a UUID naming an existing conversation
  // (db "conversations"). Empty = none.
  std::string conversation_id;
  // One of kReferenceTypes.
  std::string type;
  // 1..kMaxTitleBytes bytes of UTF-8.
  std::string title;
  // 1..kMaxContentBytes bytes of UTF-8.
  std::string content;
  // A JSON object, at most kMaxMetadataBytes; empty = "{}". Stored as given.
  std::string metadata;
};

// A stored reference.
struct Reference {
  std::string id;               // lower-case UUID v4
  std::string conversation_id;  // empty when it has none
  std::string type;             // one of kReferenceTypes
  std::string title;
  // The content; empty in List() results unless ListOptions::include_content.
  std::string content;
  // The first kPreviewChars characters of the content, plus "..." when cut.
  std::string preview;
  uint64_t tokens = 0;     // content tokens with the store's model
  int64_t created_at = 0;  // ms since the epoch
  std::string metadata;    // a JSON object, as given ("{}" by default)
};

// Counts over a set of references.
struct ReferenceStats {
  uint64_t total_references = 0;
  uint64_t total_tokens = 0;
  // Count per type name; only types with at least one reference appear.
  std::map<std::string, uint64_t> by_type;
};

struct ListReferencesOptions {
  // Only this conversation's references (which must exist: NOT_FOUND
  // otherwise); empty = all references.
  std::string conversation_id;
  // Fill Reference::content and keep metadata (reference-library's
  // per-conversation view wants both); without it content is empty.
  bool include_content = false;
};

struct ReferenceList {
  // In order of addition.
  std::vector<Reference> references;
  // Of the listed set (kept incrementally, never recounted).
  ReferenceStats stats;
};

struct SearchReferencesOptions {
  // 1..kMaxQueryBytes bytes of UTF-8 with at least one term.
  std::string query;
  // 1..kMaxSearchLimit.
  uint32_t limit = ReferenceLimits::kDefaultSearchLimit;
  // Only this conversation's references (which must exist); empty = all.
  std::string conversation_id;
};

// Where a query term occurs in a search preview: bytes [begin, end) of
// ReferenceSearchResult::preview.
struct PreviewHighlight {
  size_t begin = 0;
  size_t end = 0;
};

struct ReferenceSearchResult {
  std::string id;
  std::string conversation_id;
  std::string type;
  std::string title;
  // The best-matching passage (see "Search previews" at the top).
  std::string preview;
  // The query terms' occurrences in `preview`, ascending, disjoint (ranges
  // that overlap or touch are merged: "countTokens" for "count tokens" is
  // one range). Empty when the preview shows no match.
  std::vector<PreviewHighlight> highlights;
  uint64_t tokens = 0;
  int64_t created_at = 0;
  double relevance = 0;  // in [0, 1], see the top of this header
  double score = 0;      // the raw BM25 score
};

struct ReferenceSearchResults {
  // Best first, at most `limit`.
  std::vector<ReferenceSearchResult> results;
  // How many references matched at least one query term (may exceed limit).
  uint64_t total_matches = 0;
};

class CTXKIT_EXPORT ReferenceStore {
 public:
  // Opens the references part on `store`, which must outlive it, creating
  // its sub-databases when needed. INVALID_ARGUMENT for a bad model name;
  // FAILED_PRECONDITION when the search index was built by an incompatible
  // analyzer version; Store::OpenDatabase's errors otherwise.
  static StatusOr<std::unique_ptr<ReferenceStore>> Open(
      Store& store, ReferenceStoreOptions options = {});

  ~ReferenceStore();
  ReferenceStore(const ReferenceStore&) = delete;
  ReferenceStore& operator=(const ReferenceStore&) = delete;

  // Adds a reference, indexes it for search and updates the statistics, in
  // one write. Returns it (with content and preview). Errors: see the top of
  // this header; NOT_FOUND when conversation_id names no conversation;
  // RESOURCE_EXHAUSTED when the store is full.
  StatusOr<Reference> Add(const NewReference& reference);

  // The reference `id`, with content. INVALID_ARGUMENT for a malformed id,
  // NOT_FOUND when there is none.
  StatusOr<Reference> Get(std::string_view id) const;

  // References (without content unless asked) and their statistics.
  StatusOr<ReferenceList> List(const ListReferencesOptions& options = {}) const;

  // Statistics of all references, or of one conversation's (which need not
  // exist: an unknown conversation has none). Reads one record; no scan.
  // INVALID_ARGUMENT for a malformed conversation id.
  StatusOr<ReferenceStats> Stats(std::string_view conversation_id = {}) const;

  // Deletes reference `id` with its postings; NOT_FOUND when there is none.
  Status Delete(std::string_view id);

  // BM25 search, see the top of this header. Reads only the postings of the
  // query's terms (plus the records of the returned results).
  StatusOr<ReferenceSearchResults> Search(
      const SearchReferencesOptions& options) const;

 private:
  struct CTXKIT_NO_EXPORT Impl;
  CTXKIT_NO_EXPORT explicit ReferenceStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- JSON documents ----
//
// The one writer of each result's document: the C ABI returns these bytes,
// the `ctxkit ref` commands print them and the track_references tool and
// reference-library resources return them inside the MCP Token Optimizer's
// envelope
// ("success" first, "message" last), so no surface can drift from another.
// Each is compact UTF-8 JSON whose first member is "schema_version":1, with
// the MCP Token Optimizer's field names; an absent optional value is null,
// never left out.
//
// A reference object is {"id","conversation_id" (null when it belongs to
// none),"type","title","content" (with include_content) or "preview"
// (without),"tokens","created_at","metadata" (with include_content, the
// stored object)}.
//
// Errors: INVALID_ARGUMENT only if stored text is not valid UTF-8 or stored
// metadata is not JSON (never for data this library wrote). Pure functions;
// thread-safe; the caller owns the result.

// Add and Get: {"schema_version":1,"reference":{...}}.
CTXKIT_EXPORT StatusOr<std::string> ReferenceToJson(const Reference& reference,
                                                    bool include_content);

// List: {"schema_version":1,"references":[{...}],"total" (listed),
// "statistics":{"total_references","total_tokens","by_type":{"<type>":n}}}.
CTXKIT_EXPORT StatusOr<std::string> ReferenceListToJson(
    const ReferenceList& list, bool include_content);

// Stats: {"schema_version":1,"total_references","total_tokens",
// "by_type":{"<type>":n}}.
CTXKIT_EXPORT StatusOr<std::string> ReferenceStatsToJson(
    const ReferenceStats& stats);

// Search: {"schema_version":1,"results":[{"id","type","title","preview",
// "highlights","tokens","relevance"}],"total" (returned),"total_matches"
// (matched in all: more than total when a larger limit would show more)}.
// "highlights" is ReferenceSearchResult::highlights as [[start,end],...]
// counted in Unicode code points of "preview" (not bytes, not UTF-16 units),
// end exclusive; [] when none. "preview" stays plain text, so clients that
// only show it need no change; a client that renders markup can wrap each
// range itself (e.g. **...** in Markdown).
CTXKIT_EXPORT StatusOr<std::string> ReferenceSearchResultsToJson(
    const ReferenceSearchResults& results);

}  // namespace ctxkit

#endif  // CTXKIT_REFERENCES_H_
