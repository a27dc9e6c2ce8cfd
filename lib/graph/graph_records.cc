#include "lib/graph/graph_records.h"

#include <xxhash.h>

#include <bit>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "lib/base/key_codec.h"
#include "lib/base/record_codec.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

constexpr uint8_t kContextVersion = 2;
constexpr uint8_t kSummaryVersion = 1;
constexpr uint8_t kDigestVersion = 1;
constexpr uint8_t kMessageVersion = 1;
constexpr uint8_t kEdgeVersion = 1;
constexpr uint8_t kInEdgeVersion = 2;
constexpr uint8_t kTotalsVersion = 1;

absl::Status Damaged(std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("context graph record is corrupt: %s", what));
}

// Reads the version byte; DATA_LOSS unless 1..`newest`.
absl::Status CheckVersion(RecordReader& in, uint8_t newest,
                          std::string_view what) {
  uint8_t version = 0;
  if (!in.GetByte(&version) || version == 0 || version > newest) {
    return Damaged(absl::StrFormat("%s has version %d; this build reads 1..%d",
                                   what, version, newest));
  }
  return absl::OkStatus();
}

void PutDouble(std::string* out, double v) {
  AppendBigEndian64(out, std::bit_cast<uint64_t>(v));
}

bool GetDouble(RecordReader& in, double* v) {
  uint64_t bits = 0;
  const bool got = in.GetBigEndian64(&bits);
  *v = std::bit_cast<double>(bits);
  return got;
}

}  // namespace

absl::StatusOr<GraphDbs> OpenGraphDbs(Store& store) {
  GraphDbs dbs;
  const std::pair<Database*, const char*> all[] = {
      {&dbs.ids, "graph.ids"},         {&dbs.ctx, "graph.ctx"},
      {&dbs.by_conv, "graph.by_conv"}, {&dbs.by_activity, "graph.by_activity"},
      {&dbs.msg, "graph.msg"},         {&dbs.out, "graph.out"},
      {&dbs.in, "graph.in"},           {&dbs.stats, "graph.stats"},
      {&dbs.sums, "graph.sum"},        {&dbs.hier, "graph.hier"},
      {&dbs.kids, "graph.kids"},       {&dbs.hsum, "graph.hsum"},
      {&dbs.meta, "graph.meta"},       {&dbs.archived, "graph.archived"},
  };
  for (const auto& [db, name] : all) {
    CTXKIT_ASSIGN_OR_RETURN(*db, StoreOpenDatabase(store, name));
  }
  CTXKIT_ASSIGN_OR_RETURN(dbs.lex, OpenLexicalDbs(store));
  return dbs;
}

std::optional<uint8_t> EdgeTypeCode(std::string_view name) {
  for (size_t i = 0; i < kEdgeTypeNames.size(); ++i) {
    if (kEdgeTypeNames[i] == name) return static_cast<uint8_t>(i + 1);
  }
  return std::nullopt;
}

std::string_view EdgeTypeName(uint8_t code) {
  if (code == 0 || code > kEdgeTypeNames.size()) return {};
  return kEdgeTypeNames[code - 1];
}

std::string SeqKey(uint64_t seq) {
  std::string key;
  AppendBigEndian64(&key, seq);
  return key;
}

std::string IdHashKey(std::string_view id) {
  const XXH128_hash_t h = XXH3_128bits(id.data(), id.size());
  std::string key;
  AppendBigEndian64(&key, h.high64);
  AppendBigEndian64(&key, h.low64);
  return key;
}

std::string ActivityKey(int64_t last_activity, uint64_t seq) {
  std::string key;
  AppendBigEndian64(&key, OrderedFromSigned(last_activity));
  AppendBigEndian64(&key, seq);
  return key;
}

std::string MessageRecordKey(uint64_t seq, uint64_t message_seq) {
  std::string key;
  AppendBigEndian64(&key, seq);
  AppendBigEndian64(&key, message_seq);
  return key;
}

std::string SummaryKey(uint64_t seq, uint32_t version) {
  std::string key;
  AppendBigEndian64(&key, seq);
  AppendBigEndian32(&key, version);
  return key;
}

std::string EdgeKey(uint64_t first, uint8_t type, uint64_t second) {
  std::string key;
  AppendBigEndian64(&key, first);
  key.push_back(static_cast<char>(type));
  AppendBigEndian64(&key, second);
  return key;
}

std::string EncodeIdBucket(const std::vector<IdBucketEntry>& entries) {
  std::string out;
  for (const IdBucketEntry& e : entries) {
    PutVarint(&out, e.seq);
    PutLengthPrefixed(&out, e.id);
  }
  return out;
}

absl::StatusOr<std::vector<IdBucketEntry>> DecodeIdBucket(
    std::string_view value) {
  std::vector<IdBucketEntry> entries;
  RecordReader in(value);
  while (!in.AtEnd()) {
    IdBucketEntry e;
    if (!in.GetVarint(&e.seq) || !in.GetLengthPrefixed(&e.id) || e.seq == 0) {
      return Damaged("an id bucket is truncated");
    }
    entries.push_back(e);
  }
  if (entries.empty()) return Damaged("an id bucket is empty");
  return entries;
}

std::string EncodeContext(const ContextRecord& r) {
  std::string out(1, static_cast<char>(kContextVersion));
  PutLengthPrefixed(&out, r.id);
  PutLengthPrefixed(&out, r.conversation_id);
  PutSignedVarint(&out, r.created_at);
  PutSignedVarint(&out, r.last_activity_at);
  PutVarint(&out, r.messages_since_summary);
  PutVarint(&out, r.tokens_since_summary);
  PutVarint(&out, r.high_since_summary);
  PutVarint(&out, r.flags);
  PutVarint(&out, r.summary_version);
  PutSignedVarint(&out, r.first_summary_at);
  PutSignedVarint(&out, r.last_summary_at);
  PutDouble(&out, r.importance_score);
  return out;
}

absl::StatusOr<ContextRecord> DecodeContext(std::string_view value) {
  const uint8_t version =
      value.empty() ? 0 : static_cast<uint8_t>(value.front());
  RecordReader in(value);
  CTXKIT_RETURN_IF_ERROR(CheckVersion(in, kContextVersion, "a context"));
  ContextRecord r;
  std::string_view id, conversation_id;
  in.GetLengthPrefixed(&id);
  in.GetLengthPrefixed(&conversation_id);
  in.GetSignedVarint(&r.created_at);
  in.GetSignedVarint(&r.last_activity_at);
  in.GetVarint(&r.messages_since_summary);
  in.GetVarint(&r.tokens_since_summary);
  in.GetVarint(&r.high_since_summary);
  in.GetVarint(&r.flags);
  if (version >= 2) {
    uint64_t summary_version = 0;
    in.GetVarint(&summary_version);
    in.GetSignedVarint(&r.first_summary_at);
    in.GetSignedVarint(&r.last_summary_at);
    GetDouble(in, &r.importance_score);
    r.summary_version = static_cast<uint32_t>(summary_version);
    if (summary_version > UINT32_MAX ||
        !(r.importance_score >= 0 && r.importance_score <= 1)) {
      return Damaged("a context record has a bad summary version or score");
    }
  }
  if (!in.ok() || !in.AtEnd() || id.empty()) {
    return Damaged("a context record is truncated or too long");
  }
  r.id = std::string(id);
  r.conversation_id = std::string(conversation_id);
  return r;
}

namespace {

void PutCodeBlocks(std::string* out, const std::vector<CodeBlock>& blocks) {
  PutVarint(out, blocks.size());
  for (const CodeBlock& b : blocks) {
    PutLengthPrefixed(out, b.language);
    PutLengthPrefixed(out, b.code);
    PutDouble(out, b.importance);
  }
}

bool GetCodeBlocks(RecordReader& in, size_t max,
                   std::vector<CodeBlock>* blocks) {
  uint64_t n = 0;
  if (!in.GetVarint(&n) || n > max) return false;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view language, code;
    CodeBlock& b = blocks->emplace_back();
    if (!in.GetLengthPrefixed(&language) || !in.GetLengthPrefixed(&code) ||
        !GetDouble(in, &b.importance)) {
      return false;
    }
    b.language = std::string(language);
    b.code = std::string(code);
  }
  return true;
}

void PutStrings(std::string* out, const std::vector<std::string>& strings) {
  PutVarint(out, strings.size());
  for (const std::string& s : strings) PutLengthPrefixed(out, s);
}

bool GetStrings(RecordReader& in, size_t max, std::vector<std::string>* out) {
  uint64_t n = 0;
  if (!in.GetVarint(&n) || n > max) return false;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view s;
    if (!in.GetLengthPrefixed(&s)) return false;
    out->emplace_back(s);
  }
  return true;
}

}  // namespace

std::string EncodeSummary(const SummaryRecord& r) {
  std::string out(1, static_cast<char>(kSummaryVersion));
  PutSignedVarint(&out, r.created_at);
  PutLengthPrefixed(&out, r.text);
  out.push_back(r.by_host ? 1 : 0);
  PutCodeBlocks(&out, r.code_blocks);
  PutStrings(&out, r.key_insights);
  PutDouble(&out, r.importance_score);
  PutVarint(&out, r.message_count);
  PutVarint(&out, r.tokens_used);
  PutVarint(&out, r.token_limit);
  return out;
}

absl::StatusOr<SummaryRecord> DecodeSummary(std::string_view value) {
  RecordReader in(value);
  CTXKIT_RETURN_IF_ERROR(CheckVersion(in, kSummaryVersion, "a summary"));
  SummaryRecord r;
  std::string_view text;
  uint8_t by_host = 0;
  in.GetSignedVarint(&r.created_at);
  in.GetLengthPrefixed(&text);
  in.GetByte(&by_host);
  if (!in.ok() || by_host > 1 ||
      !GetCodeBlocks(in, ContextGraphLimits::kMaxSummaryCodeBlocks,
                     &r.code_blocks) ||
      !GetStrings(in, ContextGraphLimits::kMaxKeyInsights, &r.key_insights)) {
    return Damaged("a summary record is truncated or has too many items");
  }
  r.text = std::string(text);
  r.by_host = by_host == 1;
  GetDouble(in, &r.importance_score);
  in.GetVarint(&r.message_count);
  in.GetVarint(&r.tokens_used);
  in.GetVarint(&r.token_limit);
  if (!in.ok() || !in.AtEnd() ||
      !(r.importance_score >= 0 && r.importance_score <= 1)) {
    return Damaged(
        "a summary record is truncated, too long or has a bad "
        "score");
  }
  return r;
}

std::string EncodeDigest(const DigestRecord& r) {
  std::string out(1, static_cast<char>(kDigestVersion));
  PutSignedVarint(&out, r.created_at);
  PutSignedVarint(&out, r.updated_at);
  PutVarint(&out, r.version);
  PutLengthPrefixed(&out, r.text);
  PutVarint(&out, r.seqs.size());
  for (uint64_t seq : r.seqs) PutVarint(&out, seq);
  PutCodeBlocks(&out, r.code_blocks);
  PutStrings(&out, r.key_insights);
  PutDouble(&out, r.importance_score);
  PutVarint(&out, r.message_count);
  return out;
}

absl::StatusOr<DigestRecord> DecodeDigest(std::string_view value) {
  RecordReader in(value);
  CTXKIT_RETURN_IF_ERROR(
      CheckVersion(in, kDigestVersion, "a hierarchical or meta summary"));
  DigestRecord r;
  std::string_view text;
  uint64_t version = 0, seqs = 0;
  in.GetSignedVarint(&r.created_at);
  in.GetSignedVarint(&r.updated_at);
  in.GetVarint(&version);
  in.GetLengthPrefixed(&text);
  in.GetVarint(&seqs);
  // Each seq takes at least one byte: a count beyond the bytes left is
  // damage, caught before reserving for it.
  bool ok = in.ok() && version <= UINT32_MAX && seqs <= value.size();
  for (uint64_t i = 0; ok && i < seqs; ++i) {
    uint64_t seq = 0;
    ok = in.GetVarint(&seq);
    r.seqs.push_back(seq);
  }
  ok = ok && GetCodeBlocks(in, value.size(), &r.code_blocks) &&
       GetStrings(in, value.size(), &r.key_insights) &&
       GetDouble(in, &r.importance_score) && in.GetVarint(&r.message_count);
  if (!ok || !in.ok() || !in.AtEnd() ||
      !(r.importance_score >= 0 && r.importance_score <= 1)) {
    return Damaged(
        "a hierarchical or meta summary record is truncated, too "
        "long or has a bad score");
  }
  r.version = static_cast<uint32_t>(version);
  r.text = std::string(text);
  return r;
}

std::string EncodeMessageRecord(const MessageRecord& r) {
  std::string out(1, static_cast<char>(kMessageVersion));
  out.push_back(static_cast<char>(r.importance));
  PutVarint(&out, r.tags.size());
  for (const std::string& tag : r.tags) PutLengthPrefixed(&out, tag);
  return out;
}

absl::StatusOr<MessageRecord> DecodeMessageRecord(std::string_view value) {
  RecordReader in(value);
  CTXKIT_RETURN_IF_ERROR(CheckVersion(in, kMessageVersion, "a message"));
  MessageRecord r;
  uint8_t importance = 0;
  uint64_t tags = 0;
  in.GetByte(&importance);
  in.GetVarint(&tags);
  if (!in.ok() || importance < static_cast<uint8_t>(Importance::kLow) ||
      importance > static_cast<uint8_t>(Importance::kCritical) ||
      tags > ContextGraphLimits::kMaxTags) {
    return Damaged("a message record has a bad importance or tag count");
  }
  r.importance = static_cast<Importance>(importance);
  for (uint64_t i = 0; i < tags; ++i) {
    std::string_view tag;
    if (!in.GetLengthPrefixed(&tag)) break;
    r.tags.emplace_back(tag);
  }
  if (!in.ok() || !in.AtEnd()) {
    return Damaged("a message record is truncated or too long");
  }
  return r;
}

std::string EncodeEdge(const EdgeRecord& r) {
  std::string out(1, static_cast<char>(kEdgeVersion));
  PutDouble(&out, r.weight);
  PutSignedVarint(&out, r.created_at);
  PutSignedVarint(&out, r.updated_at);
  PutSignedVarint(&out, r.valid_at);
  PutSignedVarint(&out, r.invalid_at);
  PutSignedVarint(&out, r.expired_at);
  PutVarint(&out, r.serial);
  PutVarint(&out, r.flags);
  PutLengthPrefixed(&out, r.metadata);
  return out;
}

absl::StatusOr<EdgeRecord> DecodeEdge(std::string_view value) {
  RecordReader in(value);
  CTXKIT_RETURN_IF_ERROR(CheckVersion(in, kEdgeVersion, "an edge"));
  EdgeRecord r;
  std::string_view metadata;
  GetDouble(in, &r.weight);
  in.GetSignedVarint(&r.created_at);
  in.GetSignedVarint(&r.updated_at);
  in.GetSignedVarint(&r.valid_at);
  in.GetSignedVarint(&r.invalid_at);
  in.GetSignedVarint(&r.expired_at);
  in.GetVarint(&r.serial);
  in.GetVarint(&r.flags);
  in.GetLengthPrefixed(&metadata);
  if (!in.ok() || !in.AtEnd() || !(r.weight >= 0 && r.weight <= 1)) {
    return Damaged("an edge record is truncated, too long or has a bad weight");
  }
  r.metadata = std::string(metadata);
  return r;
}

std::string EncodeInEdgeValue(const EdgeRecord& r) {
  std::string out(1, static_cast<char>(kInEdgeVersion));
  out += EncodeEdge(r);
  return out;
}

absl::StatusOr<InEdgeValue> DecodeInEdgeValue(std::string_view value) {
  InEdgeValue v;
  if (value.empty()) return v;
  if (static_cast<uint8_t>(value[0]) == kInEdgeVersion) {
    v.record = value.substr(1);
    absl::StatusOr<EdgeSummary> summary = DecodeEdgeSummary(v.record);
    if (!summary.ok()) {
      return Damaged(
          "an in-edge's copy of its edge record has a bad version, is "
          "truncated, too long or has a bad weight");
    }
    v.summary = *summary;
    return v;
  }
  // Only version 1 is left to read; CheckVersion names 2 as readable too.
  RecordReader in(value);
  CTXKIT_RETURN_IF_ERROR(CheckVersion(in, kInEdgeVersion, "an in-edge"));
  EdgeSummary& r = v.summary.emplace();
  GetDouble(in, &r.weight);
  in.GetSignedVarint(&r.valid_at);
  in.GetSignedVarint(&r.invalid_at);
  in.GetSignedVarint(&r.expired_at);
  in.GetVarint(&r.serial);
  in.GetVarint(&r.flags);
  if (!in.ok() || !in.AtEnd() || !(r.weight >= 0 && r.weight <= 1)) {
    return Damaged(
        "an in-edge value is truncated, too long or has a bad weight");
  }
  return v;
}

absl::StatusOr<EdgeSummary> DecodeEdgeSummary(std::string_view value) {
  RecordReader in(value);
  CTXKIT_RETURN_IF_ERROR(CheckVersion(in, kEdgeVersion, "an edge"));
  EdgeSummary r;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::string_view metadata;
  GetDouble(in, &r.weight);
  in.GetSignedVarint(&created_at);
  in.GetSignedVarint(&updated_at);
  in.GetSignedVarint(&r.valid_at);
  in.GetSignedVarint(&r.invalid_at);
  in.GetSignedVarint(&r.expired_at);
  in.GetVarint(&r.serial);
  in.GetVarint(&r.flags);
  in.GetLengthPrefixed(&metadata);
  if (!in.ok() || !in.AtEnd() || !(r.weight >= 0 && r.weight <= 1)) {
    return Damaged("an edge record is truncated, too long or has a bad weight");
  }
  return r;
}

uint64_t GraphTotals::edges() const {
  return std::accumulate(edges_by_type.begin(), edges_by_type.end(),
                         uint64_t{0});
}

std::string EncodeTotals(const GraphTotals& t) {
  std::string out(1, static_cast<char>(kTotalsVersion));
  PutVarint(&out, t.next_seq);
  PutVarint(&out, t.next_edge_serial);
  PutVarint(&out, t.contexts);
  PutVarint(&out, t.messages);
  PutVarint(&out, t.edges_by_type.size());
  for (uint64_t n : t.edges_by_type) PutVarint(&out, n);
  return out;
}

absl::StatusOr<GraphTotals> DecodeTotals(std::string_view value) {
  RecordReader in(value);
  CTXKIT_RETURN_IF_ERROR(CheckVersion(in, kTotalsVersion, "the totals"));
  GraphTotals t;
  uint64_t types = 0;
  in.GetVarint(&t.next_seq);
  in.GetVarint(&t.next_edge_serial);
  in.GetVarint(&t.contexts);
  in.GetVarint(&t.messages);
  in.GetVarint(&types);
  if (!in.ok() || types != t.edges_by_type.size()) {
    return Damaged("the totals record is truncated or has a bad type count");
  }
  for (uint64_t& n : t.edges_by_type) in.GetVarint(&n);
  if (!in.ok() || !in.AtEnd() || t.next_seq == 0 || t.next_edge_serial == 0) {
    return Damaged("the totals record is truncated or too long");
  }
  return t;
}

absl::Status CheckGraphFormat(const Transaction& txn, const GraphDbs& dbs,
                              std::string_view store_path) {
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.stats, kGraphFormatKey);
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) {
      return absl::OkStatus();  // no context yet: any build may start one
    }
    return v.status();
  }
  const uint32_t version = v->size() == 4 ? ReadBigEndian32(v->data()) : 0;
  if (version == 0) {
    return Damaged("the graph's format version is not a version");
  }
  if (version > kGraphFormatVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the context graph of store '%s' has format %d; this build of "
        "ctxkit reads format %d: use a newer ctxkit",
        store_path, version, kGraphFormatVersion));
  }
  return absl::OkStatus();
}

absl::Status RecordGraphFormat(WriteTransaction& txn, const GraphDbs& dbs) {
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.stats, kGraphFormatKey);
  if (v.ok() && v->size() == 4 &&
      ReadBigEndian32(v->data()) >= kGraphFormatVersion) {
    return absl::OkStatus();
  }
  if (!v.ok() && v.status().code() != absl::StatusCode::kNotFound) {
    return v.status();
  }
  std::string version;
  AppendBigEndian32(&version, kGraphFormatVersion);
  return TxnPut(txn, dbs.stats, kGraphFormatKey, version);
}

absl::StatusOr<GraphTotals> ReadTotals(const Transaction& txn,
                                       const GraphDbs& dbs) {
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.stats, kGraphTotalsKey);
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return GraphTotals{};
    return v.status();
  }
  return DecodeTotals(*v);
}

}  // namespace ctxkit::internal
