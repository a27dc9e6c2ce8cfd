// ContextGraph::Verify: every index of the graph against the records it
// indexes, and the totals against a recount, in one snapshot.

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/key_codec.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/hierarchy.h"
#include "lib/graph/vectors.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

using internal::ContextRecord;

namespace {

// Problems beyond this many are counted, not listed: a badly damaged graph
// would otherwise produce a report as large as itself.
constexpr size_t kMaxListedProblems = 100;

class Report {
 public:
  explicit Report(GraphVerifyReport* out) : out_(out) {}
  template <typename... Args>
  void Problem(const absl::FormatSpec<Args...>& format, const Args&... args) {
    out_->ok = false;
    ++count_;
    if (out_->problems.size() < kMaxListedProblems) {
      out_->problems.push_back(absl::StrFormat(format, args...));
    }
  }
  void Finish() {
    if (count_ > out_->problems.size()) {
      out_->problems.push_back(absl::StrFormat("... and %d more problems",
                                               count_ - out_->problems.size()));
    }
  }

 private:
  GraphVerifyReport* out_;
  size_t count_ = 0;
};

}  // namespace

StatusOr<GraphVerifyReport> ContextGraph::Verify() const {
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  auto verify = [&]() -> absl::StatusOr<GraphVerifyReport> {
    const internal::GraphDbs& dbs = impl_->dbs;
    GraphVerifyReport out;
    Report report(&out);

    // Contexts, and each one's entries in the other indexes.
    absl::flat_hash_map<uint64_t, ContextRecord> contexts;
    uint64_t max_seq = 0;
    {
      CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                              internal::TxnNewCursor(*txn, dbs.ctx));
      for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
        if (cursor.key().size() != 8) {
          report.Problem("a context key is %d bytes, not 8",
                         cursor.key().size());
          continue;
        }
        const uint64_t seq = internal::ReadBigEndian64(cursor.key().data());
        absl::StatusOr<ContextRecord> ctx =
            internal::DecodeContext(cursor.value());
        if (!ctx.ok()) {
          report.Problem("context %d: %s", seq, ctx.status().message());
          continue;
        }
        max_seq = std::max(max_seq, seq);
        contexts.emplace(seq, *std::move(ctx));
      }
      CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    }
    for (const auto& [seq, ctx] : contexts) {
      CTXKIT_ASSIGN_OR_RETURN(std::optional<uint64_t> found,
                              impl_->Find(*txn, ctx.id));
      if (found != seq) {
        report.Problem("context %d: its id is not interned to it", seq);
      }
      absl::StatusOr<std::string_view> by_conv =
          internal::TxnGet(*txn, dbs.by_conv, ctx.conversation_id);
      if (!by_conv.ok() || *by_conv != internal::SeqKey(seq)) {
        report.Problem("context %d: its conversation %s does not index it", seq,
                       ctx.conversation_id);
      }
      if (!internal::TxnGet(*txn, dbs.by_activity,
                            internal::ActivityKey(ctx.last_activity_at, seq))
               .ok()) {
        report.Problem("context %d: no activity entry", seq);
      }
      Conversation c;
      uint64_t last_seq = 0;
      const absl::Status conv = internal::ReadConversationIn(
          *impl_->conversations, *txn, ctx.conversation_id, &c, &last_seq);
      if (!conv.ok()) {
        report.Problem("context %d: conversation %s: %s", seq,
                       ctx.conversation_id, conv.message());
      }
    }

    // The indexes the other way: each entry names a context that names it.
    uint64_t interned = 0;
    {
      CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                              internal::TxnNewCursor(*txn, dbs.ids));
      for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
        absl::StatusOr<std::vector<internal::IdBucketEntry>> bucket =
            internal::DecodeIdBucket(cursor.value());
        if (!bucket.ok()) {
          report.Problem("an id bucket: %s", bucket.status().message());
          continue;
        }
        for (const internal::IdBucketEntry& e : *bucket) {
          ++interned;
          const auto it = contexts.find(e.seq);
          if (it == contexts.end() || it->second.id != e.id ||
              internal::IdHashKey(e.id) != cursor.key()) {
            report.Problem("id bucket entry for context %d is stale", e.seq);
          }
        }
      }
      CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    }
    if (interned != contexts.size()) {
      report.Problem("%d ids are interned for %d contexts", interned,
                     contexts.size());
    }
    CTXKIT_ASSIGN_OR_RETURN(uint64_t by_conv_count,
                            internal::TxnCount(*txn, dbs.by_conv));
    CTXKIT_ASSIGN_OR_RETURN(uint64_t by_activity_count,
                            internal::TxnCount(*txn, dbs.by_activity));
    if (by_conv_count != contexts.size() ||
        by_activity_count != contexts.size()) {
      report.Problem(
          "%d contexts, but %d conversation and %d activity index entries",
          contexts.size(), by_conv_count, by_activity_count);
    }

    // Message records belong to contexts.
    uint64_t messages = 0;
    {
      CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                              internal::TxnNewCursor(*txn, dbs.msg));
      for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
        ++messages;
        const uint64_t seq =
            cursor.key().size() == 16
                ? internal::ReadBigEndian64(cursor.key().data())
                : 0;
        if (!contexts.contains(seq)) {
          report.Problem("a message record belongs to no context");
        } else if (absl::StatusOr<internal::MessageRecord> r =
                       internal::DecodeMessageRecord(cursor.value());
                   !r.ok()) {
          report.Problem("context %d: %s", seq, r.status().message());
        }
      }
      CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    }

    // Summaries: each context's kept versions are contiguous and end at
    // the version its record names, and every summary belongs to one.
    {
      absl::flat_hash_map<uint64_t, std::vector<uint32_t>> versions;
      CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                              internal::TxnNewCursor(*txn, dbs.sums));
      for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
        if (cursor.key().size() != 12) {
          report.Problem("a summary key is %d bytes, not 12",
                         cursor.key().size());
          continue;
        }
        const uint64_t seq = internal::ReadBigEndian64(cursor.key().data());
        const uint32_t version =
            internal::ReadBigEndian32(cursor.key().data() + 8);
        if (!contexts.contains(seq)) {
          report.Problem("summary %d belongs to no context", version);
          continue;
        }
        if (absl::StatusOr<internal::SummaryRecord> r =
                internal::DecodeSummary(cursor.value());
            !r.ok()) {
          report.Problem("context %d summary %d: %s", seq, version,
                         r.status().message());
        }
        versions[seq].push_back(version);  // ascending: keys are BE
      }
      CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
      for (const auto& [seq, ctx] : contexts) {
        const auto it = versions.find(seq);
        const std::vector<uint32_t> none;
        const std::vector<uint32_t>& v =
            it == versions.end() ? none : it->second;
        const bool contiguous = v.empty()
                                    ? ctx.summary_version == 0
                                    : v.back() == ctx.summary_version &&
                                          v.back() - v.front() + 1 == v.size();
        if (!contiguous) {
          report.Problem(
              "context %d: its summaries are not contiguous up to version %d",
              seq, ctx.summary_version);
        }
      }
    }

    // The hierarchy, and the meta summaries' records.
    {
      std::vector<std::string> problems;
      CTXKIT_RETURN_IF_ERROR(internal::CheckHierarchy(
          *txn, dbs, contexts, impl_->options.max_hierarchy_depth, &problems));
      for (const std::string& p : problems) report.Problem("%s", p);
      CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                              internal::TxnNewCursor(*txn, dbs.meta));
      for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
        if (absl::StatusOr<internal::DigestRecord> r =
                internal::DecodeDigest(cursor.value());
            !r.ok()) {
          report.Problem("meta summary: %s", r.status().message());
        }
      }
      CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    }

    // Edges: out and in mirror each other and join existing contexts.
    std::array<uint64_t, internal::kEdgeTypeNames.size()> by_type{};
    uint64_t max_serial = 0;
    {
      CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                              internal::TxnNewCursor(*txn, dbs.out));
      for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
        const std::optional<internal::EdgeKeyParts> k =
            internal::ParseEdgeKey(cursor.key());
        if (!k) {
          report.Problem("a malformed out-edge key");
          continue;
        }
        ++by_type[k->type - 1];
        if (!contexts.contains(k->first) || !contexts.contains(k->second)) {
          report.Problem("edge %d -> %d joins a missing context", k->first,
                         k->second);
        }
        if (!internal::TxnGet(*txn, dbs.in,
                              internal::EdgeKey(k->second, k->type, k->first))
                 .ok()) {
          report.Problem("edge %d -> %d has no in-edge", k->first, k->second);
        }
        absl::StatusOr<internal::EdgeRecord> r =
            internal::DecodeEdge(cursor.value());
        if (!r.ok()) {
          report.Problem("edge %d -> %d: %s", k->first, k->second,
                         r.status().message());
        } else {
          max_serial = std::max(max_serial, r->serial);
        }
      }
      CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    }
    {
      CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                              internal::TxnNewCursor(*txn, dbs.in));
      for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
        const std::optional<internal::EdgeKeyParts> k =
            internal::ParseEdgeKey(cursor.key());
        if (!k) {
          report.Problem("a malformed in-edge key");
          continue;
        }
        absl::StatusOr<std::string_view> forward = internal::TxnGet(
            *txn, dbs.out, internal::EdgeKey(k->second, k->type, k->first));
        if (!forward.ok()) {
          report.Problem("in-edge %d <- %d has no out-edge", k->first,
                         k->second);
          continue;
        }
        // Its copy of the record, or of an older build's filter fields
        // (empty: written before either, read from graph.out), must match.
        absl::StatusOr<internal::InEdgeValue> copy =
            internal::DecodeInEdgeValue(cursor.value());
        absl::StatusOr<internal::EdgeSummary> edge =
            internal::DecodeEdgeSummary(*forward);
        if (!copy.ok()) {
          report.Problem("in-edge %d <- %d: %s", k->first, k->second,
                         copy.status().message());
        } else if (edge.ok() &&
                   (copy->record.empty()
                        ? copy->summary && !(*copy->summary == *edge)
                        : copy->record != *forward)) {
          report.Problem("in-edge %d <- %d disagrees with its out-edge",
                         k->first, k->second);
        }
      }
      CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    }

    // The totals against the recount.
    CTXKIT_ASSIGN_OR_RETURN(internal::GraphTotals totals,
                            internal::ReadTotals(*txn, dbs));
    if (totals.contexts != contexts.size()) {
      report.Problem("totals count %d contexts; there are %d", totals.contexts,
                     contexts.size());
    }
    if (totals.messages != messages) {
      report.Problem("totals count %d message records; there are %d",
                     totals.messages, messages);
    }
    for (size_t i = 0; i < by_type.size(); ++i) {
      if (totals.edges_by_type[i] != by_type[i]) {
        report.Problem("totals count %d %s edges; there are %d",
                       totals.edges_by_type[i], internal::kEdgeTypeNames[i],
                       by_type[i]);
      }
    }
    if (!contexts.empty() &&
        !internal::TxnGet(*txn, dbs.stats, internal::kGraphFormatKey).ok()) {
      report.Problem("the graph has contexts but no recorded format version");
    }
    if (totals.next_seq <= max_seq || totals.next_edge_serial <= max_serial) {
      report.Problem("the next seq or edge serial is not past the largest");
    }
    // The lexical index against every context's document recomputed from
    // its messages, their tags and its newest summary.
    {
      std::map<uint64_t, internal::TermCounts> documents;
      for (const auto& [seq, ctx] : contexts) {
        internal::TermCounts& doc = documents[seq];
        absl::StatusOr<std::vector<Message>> all = internal::NewestMessagesIn(
            *impl_->conversations, *txn, ctx.conversation_id, 0, SIZE_MAX);
        if (!all.ok()) continue;  // reported with the conversation
        for (const Message& m : *all) {
          absl::StatusOr<std::string_view> record = internal::TxnGet(
              *txn, dbs.msg, internal::MessageRecordKey(seq, m.seq));
          if (!record.ok()) continue;  // added to the conversation directly
          absl::StatusOr<internal::MessageRecord> r =
              internal::DecodeMessageRecord(*record);
          if (!r.ok()) continue;  // reported with the message records
          internal::AddCounts(&doc, internal::MessageTerms(m.content, r->tags));
        }
        if (ctx.summary_version > 0) {
          absl::StatusOr<internal::SummaryRecord> summary =
              impl_->ReadSummary(*txn, seq, ctx.summary_version);
          if (summary.ok()) {
            internal::AddCounts(
                &doc, internal::CountTerms(summary->text,
                                           internal::kSummaryTermWeight));
          }
        }
      }
      CTXKIT_ASSIGN_OR_RETURN(std::vector<std::string> problems,
                              internal::CheckLexical(*txn, dbs.lex, documents));
      for (const std::string& p : problems)
        report.Problem("lexical index: %s", p);
    }

    // Vectors: both copies of each, of contexts that exist, in the
    // recorded space, the scan row the quantization of the float one.
    {
      const internal::VectorDbs& vdbs = impl_->vec_dbs;
      CTXKIT_ASSIGN_OR_RETURN(std::optional<internal::VectorSpace> space,
                              internal::ReadVectorSpace(*txn, vdbs));
      uint64_t vectors = 0;
      if (vdbs.vecf.valid()) {
        CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                                internal::TxnNewCursor(*txn, vdbs.vecf));
        for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
          if (cursor.key().size() != 8) {
            report.Problem("a vector key is %d bytes, not 8",
                           cursor.key().size());
            continue;
          }
          const uint64_t seq = internal::ReadBigEndian64(cursor.key().data());
          ++vectors;
          if (!contexts.contains(seq)) {
            report.Problem("vector of context %d belongs to no context", seq);
          }
          const std::string_view v = cursor.value();
          if (!space || v.size() != size_t{space->dims} * sizeof(float)) {
            report.Problem(
                "context %d: its vector is %d bytes; the recorded space has "
                "%d dims",
                seq, v.size(), space ? space->dims : 0);
            continue;
          }
          std::vector<float> floats(space->dims);
          std::memcpy(floats.data(), v.data(), v.size());
          absl::StatusOr<std::string_view> row =
              internal::TxnGet(*txn, vdbs.vec, cursor.key());
          if (!row.ok()) {
            if (row.status().code() != absl::StatusCode::kNotFound) {
              return row.status();
            }
            report.Problem("context %d: its vector has no scan row", seq);
          } else if (*row != internal::QuantizeRow(floats)) {
            report.Problem(
                "context %d: its vector's scan row does not match it", seq);
          }
        }
        CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
        CTXKIT_ASSIGN_OR_RETURN(uint64_t rows,
                                internal::TxnCount(*txn, vdbs.vec));
        if (rows != vectors) {
          report.Problem("%d vector scan rows for %d vectors", rows, vectors);
        }
      }
      out.vectors = vectors;
    }

    out.contexts = contexts.size();
    out.messages = messages;
    uint64_t edges = 0;
    for (uint64_t n : by_type) edges += n;
    out.edges = edges;
    report.Finish();
    return out;
  };
  return internal::ToPublic(verify());
}

}  // namespace ctxkit
