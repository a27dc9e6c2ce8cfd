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
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/compactor.h"
#include "ctxkit/conversations.h"
#include "ctxkit/export.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"

namespace ctxkit {

class Analytics;  // ctxkit/analytics.h

struct ContextGraphLimits {
  static constexpr size_t kMaxIdBytes = 1024;
  static constexpr size_t kMaxTags = 64;
  static constexpr size_t kMaxTagBytes = 128;
  static constexpr size_t kMaxMetadataBytes = 64 * 1024;
  static constexpr uint32_t kMaxListLimit = 1000;
  static constexpr int kMaxHops = 16;
  static constexpr size_t kMaxCodeBlockBytes = 4096;
  static constexpr size_t kMaxSummaryCodeBlocks = 10;
  static constexpr size_t kMaxKeyInsights = 5;
  static constexpr size_t kMaxHierarchyInsights = 7;
  static constexpr size_t kMaxMetaIdBytes = 256;
  static constexpr size_t kMaxMetaContexts = 1000;
  static constexpr uint32_t kMaxSimilarLimit = 100;
  static constexpr uint32_t kMaxVisualizeNodes = 1000;
  static constexpr size_t kMaxQueryBytes = 64 * 1024;
};

// The id of the project meta summary the graph writes by itself.
inline constexpr std::string_view kProjectMetaId = "meta-project";

// What Cleanup does to a context outside the keep-set: archive hides it
// (Restore undoes that), delete deletes it with its conversation.
enum class CleanupMode : uint8_t { kArchive, kDelete };

class Embedder;  // see "Vectors" below

struct ContextGraphOptions {
  // The model of the conversations created for new contexts: what their
  // messages' tokens are counted with. A model ModelRegistry does not know
  // is INVALID_ARGUMENT at Open.
  std::string model = std::string(kDefaultModel);
  // Milliseconds since the epoch; the system clock when empty. Tests inject
  // one so that the same calls give the same records.
  std::function<int64_t()> clock;

  // Summaries (Summarize). Open checks each range: INVALID_ARGUMENT naming
  // the option otherwise.
  //
  // With auto_summarize, AddMessage(s) summarizes the context in its own
  // write when, since the context's last summary, it has received
  // message_limit_threshold messages (1..1e6), or tokens reaching
  // token_limit_percentage % (1..100) of the context window (the model's
  // from ModelRegistry, or context_window_tokens when non-zero; 4096
  // reproduces the seed's 0.1.1), or two high or critical messages. Each
  // summary resets those counts (the seed never reset the last one, so
  // once two existed every later message summarized again).
  bool auto_summarize = true;
  uint32_t message_limit_threshold = 10;
  uint32_t token_limit_percentage = 80;
  uint64_t context_window_tokens = 0;
  // A summary's text is at most this many tokens (16..32768), counted
  // exactly with the context's model.
  uint32_t max_summary_tokens = 512;
  // A summary reads the context's newest summary_window messages
  // (1..100000) and the previous summary, so its cost does not grow with
  // the context.
  uint32_t summary_window = 200;
  // Versions of a context's summary kept (1..1000); older ones are
  // dropped as new ones are written.
  uint32_t summary_history = 10;
  // Writes the summaries when set: it receives the window's messages as a
  // JSON array and ctxkit's extractive summary (Compactor's contract,
  // compactor.h). Its error, or a text over max_summary_tokens, falls back
  // to the extractive text, and the summary's `summarizer` says which
  // wrote it. It runs inside the graph's write transaction (an automatic
  // summary is part of the AddMessage that triggered it), so it must not
  // call this graph or anything that writes to the same store, and it
  // should be quick; it may be called from several threads at once.
  std::shared_ptr<Summarizer> summarizer;

  // Hierarchy (parent and child relationships). A context has at most one
  // parent, and no context is more than max_hierarchy_depth (1..16) levels
  // below its root. With hierarchical_context, a new summary of a child
  // rewrites its parent's hierarchical summary, and so on up; once
  // meta_summary_threshold (1..1e6) contexts have one, the project meta
  // summary kProjectMetaId is written, and rewritten in place after.
  bool hierarchical_context = true;
  uint32_t max_hierarchy_depth = 3;
  uint32_t meta_summary_threshold = 5;

  // Similarity: contexts at least this similar (0..1) are "similar" for
  // auto-linking and, times CleanupOptions::similarity_factor, for
  // cleanup's keep-set.
  double similarity_threshold = 0.6;
  // FindSimilar asked for the vector or hybrid method with no embedder
  // installed, or whose embedder fails on the query, runs the keyword
  // method and says so (SimilarResult::method); without this it is
  // UNAVAILABLE.
  bool fallback_to_keyword_match = true;
  // Embeds FindSimilar's text, and each context's summary (its text and
  // key insights, so the work per write is bounded) in the write that
  // stores it: a context's vector says what its newest summary says. A
  // message alone embeds nothing, so a context has no vector before its
  // first summary (hybrid still finds it by its words; SetEmbedding can
  // give it one). ContextGraph::SetEmbedder installs one later; Open
  // checks this one as SetEmbedder does.
  std::shared_ptr<Embedder> embedder;
  // After each summary, the context's auto_link_limit (0..100; 0: none)
  // most similar live contexts at least similarity_threshold similar get a
  // `similar` edge from it, weight = similarity, metadata {"auto":true,
  // "method":"keyword","summaryVersion":v}; its earlier auto edges that are
  // no longer among them are invalidated, not deleted. Edges a caller wrote
  // are never touched.
  uint32_t auto_link_limit = 5;

  // With auto_cleanup_contexts, every cleanup_every (1..1e6) messages of a
  // context, AddMessage(s) runs Cleanup from that context in
  // cleanup_mode, in its own write (the seed's autoCleanupContexts).
  bool auto_cleanup_contexts = true;
  uint32_t cleanup_every = 10;
  CleanupMode cleanup_mode = CleanupMode::kArchive;

  // Context ids refused (the seed's ignorePatterns): AddMessage(s) to an id
  // that matches one, and AddRelationship(s) with create_missing naming one
  // as source or target, are INVALID_ARGUMENT "<field> matches ignore
  // pattern P", whether or not the context exists; reads are not affected.
  // Gitignore-style globs over the id as a '/'-separated path: `*` and `?`
  // stay within a segment, `**` crosses them, `[a-z]` / `[!a-z]` are
  // classes, `\` escapes; a pattern without '/' matches any segment, one
  // with '/' (a leading '/' just anchors) matches from the start; a matched
  // segment covers everything below it ("build" refuses "build/x" and
  // "a/build"). Only these patterns apply: unlike the seed's 0.1.1, there
  // are no implicit defaults (node_modules, .git, ...) and no .gitignore.
  // Open checks them (at most 1000, each 1..1024 bytes of UTF-8, no '!'
  // negation, no unclosed '['): INVALID_ARGUMENT naming ignore_patterns[i].
  std::vector<std::string> ignore_patterns = {};

  // Call records (CG-12; see Metrics). When `analytics` is set and
  // track_api_calls is true, each operation records the seed's call types
  // in it after the operation ends; with track_api_calls false (the seed's
  // trackApiCalls), or no analytics, nothing is recorded. The Analytics is
  // borrowed: its owner (the host, which opens it on the same Store) keeps
  // it alive until this graph is destroyed. Recording never changes an
  // operation's result: a failed Record is dropped, as the Compactor does,
  // because the operation has already committed by then.
  Analytics* analytics = nullptr;
  bool track_api_calls = true;
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

// A fenced code block of a context's messages (```lang\n...```).
struct CodeBlock {
  std::string language = {};  // empty when the fence names none
  std::string code = {};      // cut to kMaxCodeBlockBytes
  double importance = 0.5;    // its message's ImportanceValue
};

// One version of a context's summary.
struct ContextSummary {
  std::string context_id = {};
  std::string summary = {};  // at most max_summary_tokens tokens
  // The newest fenced code blocks of the messages read (at most
  // kMaxSummaryCodeBlocks).
  std::vector<CodeBlock> code_blocks = {};
  // At most kMaxKeyInsights: the errors and decisions the compactor's
  // extractor finds, then the user's questions and exclamations of more
  // than 10 characters (the seed's rule), newest first.
  std::vector<std::string> key_insights = {};
  // min(0.5 + 0.5 * (high or critical messages) / messages, 1), over the
  // messages read; 0.5 when there are none (the seed's formula).
  double importance_score = 0.5;
  uint64_t message_count = 0;   // the context's messages when written
  uint32_t version = 0;         // 1 for the first summary, +1 for each next
  int64_t created_at = 0;       // when version 1 was written
  int64_t last_updated = 0;     // when this version was written
  uint64_t tokens_used = 0;     // of `summary`, exact
  uint64_t token_limit = 0;     // max_summary_tokens when written
  std::string summarizer = {};  // "extractive" or "host"
  // The contexts related to this one now (Related's default order).
  std::vector<std::string> related_contexts = {};
  // Only in Summarize's answer: why the installed embedder could not embed
  // the summary written (the context has no vector until the next one).
  std::string embedding_error = {};
};

struct SummarizeOptions {
  // Write a new version even when no message arrived since the last one
  // (without it, the current summary is returned unchanged).
  bool force = false;
};

// ---- Vectors (CG-8): embedders and what vector similarity needs ----

// Embedding dimensions an Embedder or SetEmbedding may use.
inline constexpr uint32_t kMaxEmbeddingDims = 4096;
inline constexpr size_t kMaxEmbeddingModelBytes = 256;

// Turns texts into vectors for FindSimilar's vector and hybrid methods.
// dims() (1..kMaxEmbeddingDims) and model() (1..kMaxEmbeddingModelBytes of
// UTF-8, naming the vector space: two embedders with the same model and
// dims must give comparable vectors) must not change over the object's
// life. Embed writes texts.size() * dims() floats to `out` (row i is
// texts[i]); the vectors need not be normalized (similarity is the cosine)
// but must be finite and not all zero. Its error (any non-OK status) is
// not the caller's: a write keeps its summary and the context is left
// without a vector (AddGraphMessagesResult::embedding_error says why), a
// query falls back to the keyword method (fallback_to_keyword_match).
// It runs inside the graph's write transaction when a summary is written
// (as the Summarizer does), so it must not call this graph or anything that
// writes to the same store, and it should be quick; Embed may be called
// from several threads at once.
class CTXKIT_EXPORT Embedder {
 public:
  virtual ~Embedder();
  virtual uint32_t dims() const = 0;
  virtual std::string_view model() const = 0;
  virtual Status Embed(std::span<const std::string_view> texts,
                       std::span<float> out) = 0;
};

// ctxkit's own embedder: feature hashing (XXH3) of a text's lower-cased
// words, word pairs and the character trigrams of each word into `dims`
// (1..kMaxEmbeddingDims) signed buckets, L2-normalized. Deterministic on
// every platform and needs no model, so tests and hosts without one get
// vector and hybrid search over shared vocabulary (it knows no synonyms).
// model() is "ctxkit-hashed-v1". Thread-safe. INVALID_ARGUMENT naming dims.
CTXKIT_EXPORT StatusOr<std::shared_ptr<Embedder>> MakeHashedEmbedder(
    uint32_t dims = 256);

enum class SimilarityMethod : uint8_t { kAuto, kKeyword, kVector, kHybrid };

struct SimilarOptions {
  uint32_t limit = 5;         // 1..kMaxSimilarLimit
  double min_similarity = 0;  // 0..1
  SimilarityMethod method = SimilarityMethod::kAuto;
  // Contexts left out (unknown ids are ignored: nothing to leave out).
  std::vector<std::string> exclude = {};
  // Only contexts with a message carrying every one of these tags.
  std::vector<std::string> tags = {};
  bool include_archived = false;
  // Hybrid's reciprocal rank fusion constant (1..1000): a context's score
  // is the sum over the keyword and vector rankings of 1 / (rrf_k + rank),
  // rank counted from 1; a larger k flattens the weight of the top ranks.
  uint32_t rrf_k = 60;
};

// The methods: keyword (BM25 candidates ranked by TF-IDF cosine), vector
// (the cosine of the text's embedding with each context's vector, see
// ContextGraph::SetEmbedder), hybrid (both rankings fused by RRF), and auto
// (hybrid when an embedder is installed and some context has a vector,
// keyword otherwise).
struct SimilarContext {
  std::string context_id = {};
  // 0..1. keyword: the TF-IDF cosine; vector: max(0, cosine); hybrid: the
  // vector one when the context has a vector, else the TF-IDF cosine.
  double similarity = 0;
  // The ranking score: BM25 relevance (keyword), the vector similarity
  // (vector), the RRF value (hybrid).
  double score = 0;
  std::string method = {};  // the method that ranked it (SimilarResult's)
  // What each method measured (0 where it did not see the context).
  struct Signals {
    double bm25 = 0;
    double tfidf = 0;
    double vector = 0;  // max(0, cosine)
    double rrf = 0;
  } signals = {};
};

struct SimilarResult {
  std::vector<SimilarContext> contexts = {};  // most similar first
  // The method that ran: "keyword", "vector" or "hybrid" (keyword when the
  // vector or hybrid method fell back, see fallback_to_keyword_match).
  std::string method = {};
  // Why the vector method did not run when it was asked for (no embedder,
  // its error); empty otherwise.
  std::string fallback_reason = {};
};

struct VisualizeOptions {
  // Also the contexts within `depth` (1..3) relationship hops, either way,
  // by current edges (archived contexts left out); false: the context
  // alone.
  bool include_related = true;
  int depth = 1;
  // "json", "mermaid", "text" or "dot".
  std::string format = "json";
  // At most this many contexts (1..kMaxVisualizeNodes), the nearest first;
  // the answer says when some were left out.
  uint32_t max_nodes = 200;
};

struct CleanupOptions {
  bool dry_run = false;  // report what would go, change nothing
  CleanupMode mode = CleanupMode::kArchive;
  // Nothing goes while at most this many contexts are not archived.
  uint32_t min_contexts = 10;
  // Contexts active or summarized within this many days are kept.
  uint32_t keep_recent_days = 7;
  // Contexts at least similarity_threshold * similarity_factor (0..1)
  // similar to the current context are kept (the 20 most similar).
  double similarity_factor = 0.5;
};

// A context Cleanup kept, and why: "current", "similar", "related",
// "parent", "sibling", "child", "important" (importance_score >= 0.8),
// "recent"; or "below minContexts" when too few contexts are live for any
// to go.
struct KeptContext {
  std::string context_id = {};
  std::vector<std::string> reasons = {};
};

struct CleanupResult {
  // Archived or deleted (or, with dry_run, that would be), oldest activity
  // first.
  std::vector<std::string> cleaned_contexts = {};
  std::vector<KeptContext> kept = {};  // newest activity first
};

// A parent's summary of its children's summaries.
struct HierarchicalSummary {
  std::string parent_context_id = {};
  std::vector<std::string> child_context_ids = {};  // those summarized
  std::string summary = {};
  int64_t last_updated = 0;
  uint32_t version = 0;  // +1 each time it is rewritten
  int hierarchy_level = 1;
  // The children's code blocks of importance >= 0.7, and up to 7 of their
  // key insights, the most important children first.
  std::vector<CodeBlock> code_blocks = {};
  std::vector<std::string> key_insights = {};
  double importance_score = 0.5;  // the mean of the children's
  uint64_t message_count = 0;     // the children's, when written
};

// Where a context sits in the hierarchy.
struct ContextHierarchy {
  std::string context_id = {};
  std::optional<std::string> parent = {};
  std::vector<std::string> children = {};   // in the order they were linked
  std::vector<std::string> ancestors = {};  // the parent first, root last
  int depth = 0;                            // ancestors.size()
  std::optional<HierarchicalSummary> hierarchical_summary = {};
};

// A summary across contexts: the project's (kProjectMetaId, written
// automatically) or one CreateMetaSummary wrote.
struct MetaSummary {
  std::string id = {};
  std::string summary = {};
  std::vector<std::string> context_ids = {};
  int64_t created_at = 0;
  int64_t updated_at = 0;
  uint32_t version = 0;  // +1 each time it is rewritten in place
  int hierarchy_level = 2;
  // Code blocks that more than one of the contexts' summaries hold.
  std::vector<CodeBlock> shared_code_blocks = {};
};

// A page of ids (hierarchies, meta summaries), in key order.
struct IdPage {
  std::vector<std::string> ids = {};
  std::string next_cursor = {};  // empty on the last page
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
  // The messages triggered an automatic summary (auto_summarize), written
  // in the same transaction: its version.
  bool summarized = false;
  uint32_t summary_version = 0;
  // The contexts the automatic summary linked by `similar` edges
  // (auto_link_limit), and those the automatic cleanup
  // (auto_cleanup_contexts) archived or deleted, in the same transaction.
  std::vector<std::string> linked = {};
  std::vector<std::string> cleaned = {};
  // The installed embedder failed on the automatic summary: why. The
  // summary is written and the context has no vector until its next one.
  std::string embedding_error = {};
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
  bool include_summary = true;   // ContextDetail::summary
  bool summary_history = false;  // ContextDetail::summary_history
};

// What a context is, as Retrieve and ListContexts report it.
struct ContextInfo {
  std::string context_id = {};
  std::string conversation_id = {};
  int64_t created_at = 0;
  int64_t last_activity_at = 0;  // its last message (ms since the epoch)
  uint64_t message_count = 0;    // its conversation's
  uint64_t total_tokens = 0;     // its conversation's
  bool archived = false;         // by Cleanup; Restore undoes it
};

struct ContextDetail {
  ContextInfo context = {};
  // Since the last summary (CG-5's triggers read them).
  uint64_t messages_since_summary = 0;
  uint64_t tokens_since_summary = 0;
  uint64_t high_since_summary = 0;  // high or critical messages
  std::vector<GraphMessageView> messages = {};
  // The newest summary (include_summary), and every kept version newest
  // first (summary_history); related_contexts is filled in both.
  std::optional<ContextSummary> summary = {};
  std::vector<ContextSummary> summary_history = {};
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
  // A parent or child edge that gives a context with a parent another
  // parent replaces the old link (whose edges are invalidated) instead of
  // ALREADY_EXISTS.
  bool replace_parent = false;
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
  // Also edges to contexts Cleanup archived.
  bool include_archived = false;
  // Only edges whose metadata matches this JSON object; empty: no filter.
  // Matching is containment, as PostgreSQL's jsonb @> does it: each member
  // of the filter must be in the edge's metadata with a matching value:
  // null matches an absent or null member (so {"auto":null} keeps the edges
  // a host added and {"auto":true} the auto-links); an object matches an
  // object by these same rules; an array matches an array holding a match
  // for each of its elements; a number an equal number (1 equals 1.0); a
  // string or boolean the same one. Anything but a JSON object (at most
  // kMaxMetadataBytes) is INVALID_ARGUMENT naming `metadata`.
  std::string metadata = {};
  // Only edges whose other end has a message carrying every one of these
  // tags (as SimilarOptions::tags; at most kMaxTags).
  std::vector<std::string> tags = {};
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
  // Also cross contexts Cleanup archived (otherwise a path through one is
  // not found, and an archived source or target gives reason "source is
  // archived" / "target is archived").
  bool include_archived = false;
  // Only cross edges whose metadata matches this JSON object, by the rules
  // of RelatedOptions::metadata; empty: every edge.
  std::string metadata = {};
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
  uint64_t vectors = 0;                    // contexts with an embedding
  std::vector<std::string> problems = {};  // empty when ok
};

// ---- Metrics (CG-12: the seed's get_context_metrics) ----

// The seed's nine call types, in its ApiCallType order, and which
// operations record them (one call per operation, timed from its start to
// its end, ok = whether it succeeded):
//   vector_db_add      AddMessage(s): the messages enter the similarity index
//   vector_db_search   FindSimilar
//   vector_db_delete   DeleteContext (its similarity document goes)
//   graph_db_add       AddRelationship(s)
//   graph_db_search    Related, FindPath
//   graph_db_delete    RemoveRelationship, InvalidateRelationship,
//                      DeleteContext (its edges go)
//   llm_summarize      each summary written (Summarize, or automatically by
//                      AddMessage(s)), timed alone
//   llm_hierarchical_summarize  each parent's hierarchical summary rewritten
//   llm_meta_summarize each meta summary written (CreateMetaSummary, or the
//                      project's, automatically)
// Calls made inside a write (the three llm_ types) are recorded only when
// that write commits. Which summarizer wrote each summary goes to the
// Analytics counters "llm_summarize.extractive" and "llm_summarize.host"
// (an Analytics call carries no metadata; counters are lifetime totals).
inline constexpr std::string_view kGraphCallTypes[] = {
    "vector_db_add",     "vector_db_search",
    "vector_db_delete",  "graph_db_add",
    "graph_db_search",   "graph_db_delete",
    "llm_summarize",     "llm_hierarchical_summarize",
    "llm_meta_summarize"};

// One UTC day of GraphMetrics::history_trend.
struct GraphMetricsDay {
  std::string date = {};  // "YYYY-MM-DD"
  uint64_t calls = 0;     // graph calls that day
  double score = 0;       // their success rate, 0..1 (0 with no calls)
};

struct GraphCallTypeMetrics {
  std::string type = {};  // one of kGraphCallTypes
  uint64_t calls = 0;
  uint64_t errors = 0;             // calls that failed
  double average_duration_ms = 0;  // 0 with no calls
};

// What Metrics reports. The call figures count only kGraphCallTypes (an
// Analytics shared with a Compactor also holds its "compact" calls).
struct GraphMetrics {
  std::string period = {};  // "day", "week" or "month"
  // The period: the last 1, 7 or 30 UTC days, today included, up to now.
  int64_t from_ms = 0;
  int64_t to_ms = 0;
  // Whether calls are being recorded (an Analytics is set and
  // track_api_calls); without, every call figure is 0.
  bool tracked = false;
  uint64_t total_calls = 0;
  std::vector<GraphCallTypeMetrics> by_type = {};  // the nine, seed order
  // The period's success rate: calls that succeeded / calls, 0..1, and 0
  // with no calls. The seed stubbed averageScore at 0 and never defined a
  // score; a call has no quality score to average, so this is what the
  // graph can state honestly.
  double average_score = 0;
  // One entry per UTC day of the period, oldest first, empty days included.
  std::vector<GraphMetricsDay> history_trend = {};
  // Lifetime totals of the summarizer counters (see kGraphCallTypes).
  int64_t extractive_summaries = 0;
  int64_t host_summaries = 0;
  // The graph now, from its own counters (not from Analytics, not limited
  // to the period): contexts (archived included), message records, stored
  // edges by type (current and invalidated; in the order similar,
  // continues, references, parent, child), kept summary versions (every
  // context's, up to summary_history each), parents with a hierarchical
  // summary, and meta summaries.
  uint64_t contexts = 0;
  uint64_t messages = 0;
  std::vector<std::pair<std::string, uint64_t>> edges_by_type = {};
  uint64_t summaries = 0;
  uint64_t hierarchies = 0;
  uint64_t meta_summaries = 0;
};

// ContextGraph::Open's checks of `options` alone (the model is one
// ModelRegistry knows, every range above, ignore_patterns), for a host that
// validates its configuration before it opens a store. INVALID_ARGUMENT
// naming the field, as Open. Pure; thread-safe.
CTXKIT_EXPORT Status
CheckContextGraphOptions(const ContextGraphOptions& options);

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
  // counts, their importance and tags, the context's counters and lexical
  // document, and what they trigger (see ContextGraphOptions): a summary
  // with its hierarchical summaries and auto-links, and a cleanup. The
  // batch form takes 1..ConversationLimits::kMaxBatchMessages messages;
  // errors name messages[i].<field>. A summarizer's failure is not an
  // error (the extractive text is used); any other failure changes nothing.
  StatusOr<AddGraphMessagesResult> AddMessage(std::string_view id,
                                              const GraphMessage& message);
  StatusOr<AddGraphMessagesResult> AddMessages(
      std::string_view id, const std::vector<GraphMessage>& messages);

  // Context `id` with a page of its messages. NOT_FOUND naming it.
  StatusOr<ContextDetail> Retrieve(std::string_view id,
                                   const RetrieveOptions& options = {}) const;

  // Summarizes context `id` (see ContextSummary and the options) and
  // stores the result as its next version, dropping versions beyond
  // summary_history; without `force`, a context with no message since its
  // last summary keeps it and gets it back. NOT_FOUND naming it;
  // FAILED_PRECONDITION for a context without messages.
  StatusOr<ContextSummary> Summarize(std::string_view id,
                                     const SummarizeOptions& options = {});

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
  // an unknown type, a bad limit, metadata that is not a JSON object or a
  // bad tag (naming the field).
  StatusOr<RelatedResult> Related(std::string_view id,
                                  const RelatedOptions& options = {}) const;

  // The path from `source` to `target` (see PathOptions). An unknown id is
  // not an error: found is false and reason says which. INVALID_ARGUMENT
  // naming the field for a bad option (max_hops, direction, types,
  // metadata).
  StatusOr<PathResult> FindPath(std::string_view source,
                                std::string_view target,
                                const PathOptions& options = {}) const;

  // The contexts most similar to `text` (1..kMaxQueryBytes of UTF-8): BM25
  // over each context's document (its messages' text and tags, its newest
  // summary counted twice) picks candidates, ranked by TF-IDF cosine
  // (`similarity`; ties by BM25, then age). Unlike the seed, a context
  // needs no summary to be found. Text without words finds nothing. The
  // vector and hybrid methods (SimilarOptions' comment) rank by the
  // vectors of SetEmbedder and SetEmbedding; every filter applies to every
  // method. INVALID_ARGUMENT naming text, limit, minSimilarity, rrfK or
  // tags[i]; UNAVAILABLE for method vector or hybrid with no embedder, or a
  // failing one, without fallback_to_keyword_match.
  StatusOr<SimilarResult> FindSimilar(std::string_view text,
                                      const SimilarOptions& options = {}) const;

  // Installs `embedder` (null: none; vectors stay, but vector and hybrid
  // queries fall back) for the writes and queries that start after it. The
  // graph records the model and dims of the first vector it stores: an
  // embedder of another model or dims is FAILED_PRECONDITION naming both
  // (vectors of two spaces cannot be compared), and changing models needs
  // ResetEmbeddings first. INVALID_ARGUMENT for dims() outside
  // 1..kMaxEmbeddingDims or a bad model().
  Status SetEmbedder(std::shared_ptr<Embedder> embedder);

  // Stores the host's vector for context `id`, replacing the one it had,
  // in the recorded space (the installed embedder's, when one is; the
  // first vector records "host" with its dims when none is installed). The
  // next summary of the context replaces it when an embedder is
  // installed. NOT_FOUND naming contextId; INVALID_ARGUMENT naming vector
  // for dims other than the space's (or outside 1..kMaxEmbeddingDims),
  // NaN, infinity or an all-zero vector.
  Status SetEmbedding(std::string_view id, std::span<const float> vector);

  // Deletes every context's vector and the recorded space, in one write,
  // so that an embedder of another model can be installed. Contexts get
  // vectors again as they are summarized (Summarize with force re-embeds
  // one now) or through SetEmbedding.
  Status ResetEmbeddings();

  // Context `id` and its neighbourhood drawn in options.format: the seed's
  // JSON document (with nodes, edges and truncated added), a Mermaid
  // flowchart, Graphviz dot, or the seed's text lines. Ids are escaped so
  // that no id can break or inject into a diagram. NOT_FOUND naming
  // contextId; INVALID_ARGUMENT naming depth, format or maxNodes.
  StatusOr<std::string> Visualize(std::string_view id,
                                  const VisualizeOptions& options = {}) const;

  // Deletes context `id`, its conversation and every edge that touches it.
  // NOT_FOUND naming it.
  Status DeleteContext(std::string_view id);

  // Contexts, the most recently active first (messages are activity),
  // `limit` (1..kMaxListLimit) per page. Pass the previous page's
  // next_cursor for the next; INVALID_ARGUMENT for a cursor this method did
  // not return.
  StatusOr<ContextPage> ListContexts(uint32_t limit = 100,
                                     std::string_view cursor = {},
                                     bool include_archived = false) const;

  // The seed's cleanup from context `current_id`: unless at most
  // min_contexts contexts are live, every live context outside the
  // keep-set (the current context; the contexts similar to it; those
  // related to it by a current edge either way; its parent, siblings and
  // children; those with importance_score >= 0.8; those active or
  // summarized within keep_recent_days) is archived or deleted, in one
  // write. Archived contexts are left out of ListContexts, Related,
  // FindPath and FindSimilar unless those are asked to include them;
  // their messages, summaries and edges stay. NOT_FOUND naming
  // currentId; INVALID_ARGUMENT naming a bad option.
  StatusOr<CleanupResult> Cleanup(std::string_view current_id,
                                  const CleanupOptions& options = {});

  // Brings archived context `id` back. A context that is not archived is
  // left as it is. NOT_FOUND naming it.
  Status Restore(std::string_view id);

  // Where context `id` sits in the hierarchy, with its hierarchical summary
  // when it has one. NOT_FOUND naming it.
  StatusOr<ContextHierarchy> Hierarchy(std::string_view id) const;

  // The contexts that have children (the seed's "hierarchies"), `limit`
  // (1..kMaxListLimit) per page in seq order; cursor as ListContexts'.
  StatusOr<IdPage> ListHierarchies(uint32_t limit = 100,
                                   std::string_view cursor = {}) const;

  // Writes meta summary `meta_id` (1..kMaxMetaIdBytes of UTF-8) over
  // `context_ids` (1..kMaxMetaContexts existing contexts; repeats dropped):
  // created, or rewritten in place with the next version. Contexts without
  // a summary count with their messages only. INVALID_ARGUMENT naming
  // metaId or contextIds[i]; NOT_FOUND naming the missing context.
  StatusOr<MetaSummary> CreateMetaSummary(
      std::string_view meta_id, const std::vector<std::string>& context_ids);
  // Meta summary `meta_id`; NOT_FOUND naming it.
  StatusOr<MetaSummary> GetMetaSummary(std::string_view meta_id) const;
  // The meta summaries' ids, in byte order, paged as ListHierarchies.
  StatusOr<IdPage> ListMetaSummaries(uint32_t limit = 100,
                                     std::string_view cursor = {}) const;

  // Reads the whole graph in one snapshot and checks it: every id is
  // interned once and its context record names it, every context's
  // conversation exists and indexes it back, its activity entry exists,
  // message records belong to contexts, each context's kept summary
  // versions are contiguous up to its newest, every out-edge has its in-edge
  // (whose copy of the filter fields matches) and the reverse, edges join
  // existing contexts, the hierarchy's links are stated by current edges,
  // acyclic and within max_hierarchy_depth, the lexical index equals a
  // recomputation from the messages, tags and summaries, each vector
  // belongs to a context, has the recorded dims and its scan copy, and the
  // totals
  // (contexts, message records, edges by type) equal a recount. The
  // conversations' own counters are CheckStore's to recount. Problems are
  // listed (the first 100), not returned as errors; errors are for reads that
  // fail.
  StatusOr<GraphVerifyReport> Verify() const;

  // The seed's get_context_metrics for `period` "day", "week" or "month"
  // (GraphMetrics): the calls Analytics recorded in the period, and the
  // graph's counters in one snapshot. INVALID_ARGUMENT naming period
  // otherwise; Analytics' and the store's read errors. Flushes the
  // Analytics' waiting calls first (Analytics::Query does).
  StatusOr<GraphMetrics> Metrics(std::string_view period = "week") const;

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
