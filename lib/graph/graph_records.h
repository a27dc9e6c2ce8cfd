// The context graph's sub-databases, their keys and their records. Keys
// compare as bytes, so numbers in keys are big-endian; records are the
// varint layouts of lib/base/record_codec.h behind a version byte, and a
// later version appends fields (a decoder of version v reads every version
// up to v, defaulting what older ones lack).
//
//   graph.ids          XXH3-128(id), 16 B     -> (varint seq, lp id)...: the
//                      collision bucket, so an id of any length (up to
//                      1024 bytes) fits LMDB's 511-byte key limit
//   graph.ctx          BE64 seq               -> ContextRecord
//   graph.by_conv      conversation id        -> BE64 seq
//   graph.by_activity  BE64 ordered(last activity) + BE64 seq -> empty
//   graph.msg          BE64 seq + BE64 message seq -> MessageRecord
//   graph.out          BE64 source + u8 type + BE64 target -> EdgeRecord
//   graph.in           BE64 target + u8 type + BE64 source -> a copy of
//                      the graph.out record (InEdgeValue; older builds
//                      wrote only its filter fields, or nothing)
//   graph.hier         BE64 child seq         -> BE64 parent seq
//   graph.kids         BE64 parent + BE64 child -> empty
//   graph.hsum         BE64 parent seq        -> DigestRecord (the newest
//                      version only)
//   graph.meta         meta id                -> DigestRecord
//   graph.archived     BE64 seq               -> empty: the contexts Cleanup
//                      archived (usually none, so a query that must skip
//                      them checks an empty table)
//   graph.sum          BE64 seq + BE32 version -> SummaryRecord: a
//                      context's summaries, the kept versions contiguous
//                      and ending at ContextRecord::summary_version
//   graph.stats        "totals"               -> GraphTotals
//                      "format"               -> BE32 kGraphFormatVersion
//
// Seqs are handed out from GraphTotals::next_seq and never reused, so a
// stale reference to a deleted context cannot reach a new one.

#ifndef CTXKIT_LIB_GRAPH_GRAPH_RECORDS_H_
#define CTXKIT_LIB_GRAPH_GRAPH_RECORDS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/store.h"
#include "lib/base/key_codec.h"
#include "lib/graph/lexical.h"

namespace ctxkit::internal {

struct GraphDbs {
  Database ids, ctx, by_conv, by_activity, msg, out, in, stats, sums, hier,
      kids, hsum, meta, archived;
  LexicalDbs lex;
};

// Opens (creating on a writable store) every graph sub-database. Errors:
// Store::OpenDatabase's.
absl::StatusOr<GraphDbs> OpenGraphDbs(Store& store);

// ---- Edge types ----

inline constexpr std::array<std::string_view, 5> kEdgeTypeNames = {
    "similar", "continues", "references", "parent", "child"};
// 1..5 for the names above (0 is never stored).
std::optional<uint8_t> EdgeTypeCode(std::string_view name);
std::string_view EdgeTypeName(uint8_t code);  // "" for an unknown code

// ---- Keys ----

std::string SeqKey(uint64_t seq);
std::string IdHashKey(std::string_view id);
std::string ActivityKey(int64_t last_activity, uint64_t seq);
std::string MessageRecordKey(uint64_t seq, uint64_t message_seq);
std::string SummaryKey(uint64_t seq, uint32_t version);
// graph.out key of (a, type, b) or graph.in key of (b, type, a): the same
// layout, first the end the index is about.
std::string EdgeKey(uint64_t first, uint8_t type, uint64_t second);
struct EdgeKeyParts {
  uint64_t first = 0;
  uint8_t type = 0;
  uint64_t second = 0;
};
inline constexpr size_t kEdgeKeySize = 17;
// nullopt unless `key` is an edge key with a known type. Inline: the path
// and related scans parse one per edge.
inline std::optional<EdgeKeyParts> ParseEdgeKey(std::string_view key) {
  if (key.size() != kEdgeKeySize) return std::nullopt;
  EdgeKeyParts parts;
  parts.first = ReadBigEndian64(key.data());
  parts.type = static_cast<uint8_t>(key[8]);
  parts.second = ReadBigEndian64(key.data() + 9);
  if (parts.type == 0 || parts.type > kEdgeTypeNames.size()) {
    return std::nullopt;
  }
  return parts;
}
inline constexpr std::string_view kGraphTotalsKey = "totals";
inline constexpr std::string_view kGraphFormatKey = "format";

// The graph's own layout version, recorded in graph.stats, so that a build
// that does not know a graph's layout refuses it instead of misreading or
// corrupting it. A change that older records still satisfy (new records,
// fields appended to a record behind its version byte) only bumps it, and
// the first write that uses it records the new version; one that
// needs old records rewritten also bumps Store::kFormatVersion, whose
// migration rewrites them.
//   1  contexts, messages, edges
//   2  summaries, hierarchy, lexical index; graph.in values copy the
//      edge's filter fields, so a version-1 build, which writes them
//      empty, must not write this graph
//   3  vectors (graph.vec, graph.vecf, graph.vecmeta): a version-2 build
//      would leave a deleted context's vector behind
//   4  graph.in values copy the whole graph.out record (InEdgeValue
//      version 2), which a version-3 build reads as damaged; lexical term
//      ids (graph.lex.dfs; df and forward values carry the id), so that a
//      query reads the dfs by id, which store format 3 migrates older
//      indexes to
inline constexpr uint32_t kGraphFormatVersion = 4;

// The recorded layout version checked in `txn`: FAILED_PRECONDITION naming
// the store when it is newer than this build's, DATA_LOSS when it is not a
// version; OK when none is recorded (a graph without contexts). Reads only,
// so that opening or checking a graph never writes.
absl::Status CheckGraphFormat(const Transaction& txn, const GraphDbs& dbs,
                              std::string_view store_path);

// Records kGraphFormatVersion unless it (or a newer one, which Open has
// refused) is recorded. Every write that leaves records an older build
// would mishandle calls it in its transaction: a version-1 build writes
// empty graph.in values and leaves summaries, links and the lexical index
// behind when it deletes a context, so after this build's first such write
// it must refuse the graph.
absl::Status RecordGraphFormat(WriteTransaction& txn, const GraphDbs& dbs);

// ---- Records ----

// One id bucket of graph.ids.
struct IdBucketEntry {
  uint64_t seq = 0;
  std::string_view id;
};
std::string EncodeIdBucket(const std::vector<IdBucketEntry>& entries);
absl::StatusOr<std::vector<IdBucketEntry>> DecodeIdBucket(
    std::string_view value);

struct ContextRecord {
  std::string id;
  std::string conversation_id;
  int64_t created_at = 0;
  int64_t last_activity_at = 0;
  uint64_t messages_since_summary = 0;
  uint64_t tokens_since_summary = 0;
  uint64_t high_since_summary = 0;
  uint64_t flags = 0;  // none defined yet
  // Record version 2: the summaries (0, 0, 0.5 before the first).
  uint32_t summary_version = 0;
  int64_t first_summary_at = 0;
  int64_t last_summary_at = 0;
  double importance_score = 0.5;  // the newest summary's
};
std::string EncodeContext(const ContextRecord& r);
absl::StatusOr<ContextRecord> DecodeContext(std::string_view value);

struct SummaryRecord {
  int64_t created_at = 0;
  std::string text;
  bool by_host = false;  // the host's summarizer wrote `text`
  std::vector<CodeBlock> code_blocks;
  std::vector<std::string> key_insights;
  double importance_score = 0.5;
  uint64_t message_count = 0;
  uint64_t tokens_used = 0;
  uint64_t token_limit = 0;
};
std::string EncodeSummary(const SummaryRecord& r);
absl::StatusOr<SummaryRecord> DecodeSummary(std::string_view value);

// What hierarchical and meta summaries share.
struct DigestRecord {
  int64_t created_at = 0;
  int64_t updated_at = 0;
  uint32_t version = 0;
  std::string text;
  std::vector<uint64_t> seqs;  // the contexts summarized
  std::vector<CodeBlock> code_blocks;
  std::vector<std::string> key_insights;
  double importance_score = 0.5;
  uint64_t message_count = 0;
};
std::string EncodeDigest(const DigestRecord& r);
absl::StatusOr<DigestRecord> DecodeDigest(std::string_view value);

struct MessageRecord {
  Importance importance = Importance::kMedium;
  std::vector<std::string> tags;
};
std::string EncodeMessageRecord(const MessageRecord& r);
absl::StatusOr<MessageRecord> DecodeMessageRecord(std::string_view value);

// EdgeRecord::flags: a `similar` edge the graph wrote after a summary
// (auto-linking), which it may later invalidate; never set on an edge a
// caller wrote, and cleared when a caller upserts the edge.
inline constexpr uint64_t kEdgeAutoLink = 1;

struct EdgeRecord {
  double weight = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  int64_t valid_at = 0;
  int64_t invalid_at = 0;  // 0: still holds
  int64_t expired_at = 0;  // 0: current
  uint64_t serial = 0;     // insertion order (GraphTotals::next_edge_serial)
  uint64_t flags = 0;      // kEdgeAutoLink
  std::string metadata = "{}";
};
std::string EncodeEdge(const EdgeRecord& r);
absl::StatusOr<EdgeRecord> DecodeEdge(std::string_view value);

// The fields of an edge that the related and path queries filter and rank
// on.
struct EdgeSummary {
  double weight = 0;
  int64_t valid_at = 0;
  int64_t invalid_at = 0;
  int64_t expired_at = 0;
  uint64_t serial = 0;
  uint64_t flags = 0;
  bool operator==(const EdgeSummary&) const = default;
};
// graph.in's value is a covering copy of the edge's graph.out record,
// written with every graph.out write of the edge: scanning a context's
// in-edges then needs no graph.out lookup, neither for the filter fields of
// every edge nor for the metadata and times of the edges a query returns
// (an incoming Related did two random lookups per edge without it). The
// copy costs the metadata's size twice. Layouts, by version byte:
//   2  (graph format 4) version 2, then the graph.out record (EncodeEdge)
//   1  (graph format 2, 3) the EdgeSummary fields only
//   -  (graph format 1) empty
// Versions 1 and empty are still read, the rest through graph.out; the
// edge's next write replaces them with version 2.
std::string EncodeInEdgeValue(const EdgeRecord& r);
struct InEdgeValue {
  std::optional<EdgeSummary> summary;  // nullopt: an empty value
  // The graph.out copy (a view into the value), empty for versions below 2.
  std::string_view record;
};
// Decodes a graph.in value without copying the metadata. DATA_LOSS when
// damaged, including a version-2 copy that is not a valid edge record.
absl::StatusOr<InEdgeValue> DecodeInEdgeValue(std::string_view value);
// The summary of a graph.out record, without copying its metadata.
// DATA_LOSS as DecodeEdge.
absl::StatusOr<EdgeSummary> DecodeEdgeSummary(std::string_view value);

struct GraphTotals {
  uint64_t next_seq = 1;
  uint64_t next_edge_serial = 1;
  uint64_t contexts = 0;
  uint64_t messages = 0;
  std::array<uint64_t, kEdgeTypeNames.size()> edges_by_type{};
  uint64_t edges() const;
};
std::string EncodeTotals(const GraphTotals& t);
absl::StatusOr<GraphTotals> DecodeTotals(std::string_view value);

// The totals in `txn` (the initial ones when none are stored yet).
absl::StatusOr<GraphTotals> ReadTotals(const Transaction& txn,
                                       const GraphDbs& dbs);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_GRAPH_RECORDS_H_
