// The context graph's lexical similarity index (spec CG-8): one document per
// context (its messages' text, its latest summary counted twice, its tags),
// searched with BM25 and rescored with TF-IDF cosine.
//
// Unlike a reference, a context's document grows with every message and its
// summary part is replaced, so nothing per document is repeated in the
// postings (references.postings repeats the length in every posting): a
// message touches only its own terms' entries, one document length and the
// totals.
//
// Every term present in the index has a numeric id, so that the cosine's
// document norms, which need the df of every term of every pooled document
// (some 8k distinct terms for a pool of 20), read the dfs from a few
// fixed-size blocks by id instead of one B-tree search of a string key per
// term. An id is assigned from a counter when the term's df goes 0 -> 1 and
// is never reused while the index holds any document (a stale id in a
// reader's mind can only miss, never hit another term); the counter starts
// over only when the index becomes empty, so an index emptied by removals
// is stored exactly as a new one.
//
// Sub-databases (keys compare as unsigned bytes):
//   graph.lex.postings  term + 0x00 + BE64 (seq >> 7) -> postings block: the
//                       term's postings of the 128 seqs [block * 128,
//                       block * 128 + 127], ascending, each as u8 (seq &
//                       127) + varint tf. Fixed seq ranges make an update
//                       one Get and one Put of a block of at most 128
//                       postings, and a query term held by 100k contexts
//                       one cursor step per 128 of them. An empty block is
//                       deleted. Terms never contain 0x00 (analyzer.h).
//                       Keyed by term, not id: a query reads them by its
//                       terms, and ids would add a lookup per query term.
//   graph.lex.terms     BE64 seq + term -> varint tf + varint id: the
//                       forward index, the same counts by context (for
//                       dropping a context and for the cosine's document
//                       norm, which takes the ids from here).
//   graph.lex.df        term -> varint number of contexts holding it (> 0;
//                       absent when none) + varint id: one Get gives an
//                       update both.
//   graph.lex.dfs       BE64 (id >> 8) -> 256 little-endian u32: the df of
//                       the 256 ids [block * 256, block * 256 + 255] (0:
//                       no such term), the same dfs as graph.lex.df by id.
//                       A block of zeros is deleted.
//   graph.lex.doclen    BE64 (seq >> 8) -> 256 little-endian u32: dl of the
//                       256 seqs [block * 256, block * 256 + 255], so a query
//                       reads the lengths of 100k candidates in about 400
//                       lookups. dl = the sum of the context's counts. A
//                       block of zeros is deleted.
//   graph.lex.stats     "all" -> varint N (contexts with dl > 0) + varint
//                       sum of dl + varint next id (above every id held);
//                       absent when the index is empty.
//
// The counts are the caller's (the graph derives them from the messages,
// the summary and the tags); this file only keeps the six databases in
// step. Every function taking a WriteTransaction touches nothing outside the
// transaction, so Store::Update may run it twice. Thread safety: none
// beyond what LMDB transactions give; the pure functions are thread-safe.

#ifndef CTXKIT_LIB_GRAPH_LEXICAL_H_
#define CTXKIT_LIB_GRAPH_LEXICAL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

struct LexicalDbs {
  Database postings, terms, df, dfs, doclen, stats;
};

// The name of graph.lex.df, whose existence tells whether a store ever
// held the lexical index (graph_migration.cc).
inline constexpr std::string_view kLexicalDfDatabase = "graph.lex.df";

// Opens the graph.lex.* sub-databases through `open` (a name -> Database
// function: a Store's, or a migration's). Errors: `open`'s.
absl::StatusOr<LexicalDbs> OpenLexicalDbsWith(
    const std::function<absl::StatusOr<Database>(std::string_view name)>& open);

// Opens (creating on a writable store) the graph.lex.* sub-databases.
// Errors: Store::OpenDatabase's.
absl::StatusOr<LexicalDbs> OpenLexicalDbs(Store& store);

// Terms with their (weighted) counts: sorted by term, each term once, every
// count > 0.
using TermCounts = std::vector<std::pair<std::string, uint32_t>>;

// The terms AnalyzeText (lib/references/analyzer.h) finds in `text`, each
// counted once per occurrence and multiplied by `weight`. Precondition:
// `text` is valid UTF-8 (not checked). A weight of 0 gives no terms; a count
// that would pass UINT32_MAX stays at UINT32_MAX (a 4 GiB text). Pure.
TermCounts CountTerms(std::string_view text, uint32_t weight);

// Adds `more` into `*into` (both TermCounts, and so is the result), a count
// staying at UINT32_MAX rather than wrapping. Pure.
void AddCounts(TermCounts* into, const TermCounts& more);

// Adds `counts` to the document of context `seq` and updates the df, the
// document length and the totals. INVALID_ARGUMENT naming `counts[i]` when
// `counts` is not TermCounts (unsorted, repeated, empty term, a term with
// 0x00 or longer than kMaxTermBytes, a zero count); OUT_OF_RANGE when a
// term's count, its df or the document length would pass UINT32_MAX;
// DATA_LOSS when a stored entry is malformed or out of step. After an error the
// transaction may hold part of the update, so the caller must abort it (return
// the error from its Store::Update function).
absl::Status AddContextTerms(WriteTransaction& txn, const LexicalDbs& dbs,
                             uint64_t seq, const TermCounts& counts);

// Subtracts `counts` from the document of context `seq` (a replaced summary,
// deleted messages); a term whose count reaches 0 leaves the document.
// DATA_LOSS naming the term and the context when the document holds less of
// a term than `counts` says, which means the index is out of step with what
// the caller believes it added; otherwise AddContextTerms' errors.
absl::Status RemoveContextTerms(WriteTransaction& txn, const LexicalDbs& dbs,
                                uint64_t seq, const TermCounts& counts);

// Removes the whole document of context `seq` (deleting the context), read
// from the forward index. OK, changing nothing, when it has none. DATA_LOSS
// when the forward index and the postings disagree.
absl::Status DropContextTerms(WriteTransaction& txn, const LexicalDbs& dbs,
                              uint64_t seq);

// The stored document of context `seq` (empty when none), from the forward
// index. DATA_LOSS naming the context for a malformed entry.
absl::StatusOr<TermCounts> ContextTerms(const Transaction& txn,
                                        const LexicalDbs& dbs, uint64_t seq);

struct LexicalHit {
  uint64_t seq = 0;
  double bm25 = 0;    // BM25 relevance over all contexts, > 0
  double cosine = 0;  // TF-IDF cosine with the query, in [0, 1]
};

// The contexts most similar to `query` (valid UTF-8), best first.
//
// Every context holding one of the query's distinct terms gets its BM25
// score (k1 1.2, b 0.75, search.h's idf and formula; a repeated query term
// counts once). Candidates are then taken in descending BM25 order (ties:
// lower seq first) and offered to `accept` (null accepts all) one by one,
// only until 4 * `limit` are accepted, so a costly filter runs on few
// contexts. The accepted pool is rescored with the TF-IDF cosine: weights
// tf * ln(1 + N / df), the query's tf being its term counts and the
// document's norm taken over all its terms. A query term that no context
// holds counts as held by one (it lowers the cosine of every document,
// which does not hold it). The best `limit` by cosine are returned (ties:
// higher BM25, then lower seq). Deterministic for a given index state.
//
// A query without terms, or an empty index, gives no hits. Errors:
// INVALID_ARGUMENT naming `limit` when it is 0; DATA_LOSS when the index is
// malformed or out of step (a posting without a document length, a
// document term whose id has no df); the store's read errors. `accept`'s
// exceptions are not caught. Reads only; `txn` may be a write transaction.
absl::StatusOr<std::vector<LexicalHit>> SearchContexts(
    const Transaction& txn, const LexicalDbs& dbs, std::string_view query,
    size_t limit, const std::function<bool(uint64_t seq)>& accept);

// Checks the index against itself and against `expected` (every context's
// document as the caller recomputes it; a context absent from `expected` or
// with empty counts must have no document). Returns the problems found,
// each a sentence naming the entry, at most kMaxLexicalProblems (the last
// saying that more were cut); empty when consistent. Checked: every entry
// decodes; the postings and the forward index hold the same counts; each df
// equals the number of documents holding its term; no two terms share an
// id; every forward entry has its term's id; graph.lex.dfs holds exactly
// each id's df; the id counter is above every id; each document length
// equals the sum of its counts; the totals equal a recount; the counts
// equal `expected`. Errors: only the store's read errors. Reads the whole
// index into memory.
inline constexpr size_t kMaxLexicalProblems = 100;
absl::StatusOr<std::vector<std::string>> CheckLexical(
    const Transaction& txn, const LexicalDbs& dbs,
    const std::map<uint64_t, TermCounts>& expected);

// Upgrades an index written before term ids (store format 2: df and
// forward values a lone varint count, totals without the counter) in place:
// the terms get ids 0, 1, ... in term order, graph.lex.dfs is written, every
// forward value gains its term's id and the totals the counter. Postings
// and document lengths are unchanged. DATA_LOSS naming the entry when one
// is not in format 2 (or a forward term has no df); the caller then aborts
// the upgrade. Keeps at most a few thousand forward entries in memory
// besides the vocabulary.
absl::Status AssignLexicalTermIds(WriteTransaction& txn, const LexicalDbs& dbs);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_LEXICAL_H_
