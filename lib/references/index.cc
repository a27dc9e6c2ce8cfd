// Storage layout and in-transaction operations of the references part; the
// layout is documented in index.h.

#include "lib/references/index.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "lib/base/key_codec.h"
#include "lib/json/utf8.h"
#include "lib/references/analyzer.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

constexpr char kRecordVersion = 1;
constexpr std::string_view kAllStatsKey = "all";
constexpr std::string_view kNextSeqKey = "next_seq";
constexpr std::string_view kAnalyzerKey = "analyzer";

void AppendString(std::string* out, std::string_view s) {
  AppendBigEndian32(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}

void AppendPosting(std::string* out, const Posting& p) {
  for (uint32_t v : {p.seq, p.tf, p.length}) {
    for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
  }
}

std::string SeqKey(uint32_t seq) {
  std::string key;
  AppendBigEndian32(&key, seq);
  return key;
}

std::string ConversationSeqKey(std::string_view conversation_id, uint32_t seq) {
  std::string key(conversation_id);
  AppendBigEndian32(&key, seq);
  return key;
}

// Adds (sign = +1) or removes (sign = -1) one reference from `stats`.
void Account(IndexStats* stats, const RecordView& r, int sign) {
  if (sign > 0) {
    stats->count += 1;
    stats->total_length += r.length;
    stats->total_tokens += r.tokens;
    stats->by_type[r.type] += 1;
  } else {
    stats->count -= 1;
    stats->total_length -= r.length;
    stats->total_tokens -= r.tokens;
    stats->by_type[r.type] -= 1;
  }
}

absl::Status UpdateStats(WriteTransaction& txn, const ReferenceDbs& dbs,
                         std::string_view key, const RecordView& r, int sign) {
  CTXKIT_ASSIGN_OR_RETURN(IndexStats stats, ReadStats(txn, dbs, key));
  if (sign < 0 &&
      (stats.count == 0 || stats.total_length < r.length ||
       stats.total_tokens < r.tokens || stats.by_type[r.type] == 0)) {
    return absl::DataLossError(absl::StrFormat(
        "reference statistics \"%s\" are smaller than a stored reference",
        key));
  }
  Account(&stats, r, sign);
  if (stats.count == 0 && key != kAllStatsKey) {
    CTXKIT_ASSIGN_OR_RETURN(bool deleted,
                            internal::TxnDelete(txn, dbs.stats, key));
    (void)deleted;
    return absl::OkStatus();
  }
  return (internal::TxnPut(txn, dbs.stats, key, EncodeStats(stats)));
}

// `cursor` is over dbs.postings in `txn`; it is shared by all the terms of
// one document because LMDB keeps every write-transaction cursor until the
// transaction ends and updates each of them on every write, so a cursor per
// term would make adding a document quadratic in its terms.
absl::Status AppendPostingInTxn(WriteTransaction& txn, const ReferenceDbs& dbs,
                                Cursor& cursor, std::string_view term,
                                const Posting& p) {
  const std::string prefix = TermPrefix(term);
  // The term's last block is the entry just before the first key past every
  // key of the term (prefix + 0xFF.. would do; the term's successor is
  // term + 0x01).
  std::string past(term);
  past.push_back('\x01');
  cursor.Seek(past);
  if (cursor.Valid()) {
    cursor.Prev();
  } else {
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    cursor.SeekToLast();
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  if (cursor.Valid() && cursor.key().size() == prefix.size() + 4 &&
      cursor.key().substr(0, prefix.size()) == prefix &&
      cursor.value().size() < kPostingsPerBlock * kPostingBytes) {
    std::string key(cursor.key());
    std::string block(cursor.value());
    if (block.size() >= kPostingBytes &&
        ReadPosting(block.data() + block.size() - kPostingBytes).seq >= p.seq) {
      return absl::DataLossError(
          absl::StrFormat("postings of term \"%s\" are out of order", term));
    }
    AppendPosting(&block, p);
    return (internal::TxnPut(txn, dbs.postings, key, block));
  }
  std::string key = prefix;
  AppendBigEndian32(&key, p.seq);
  std::string block;
  AppendPosting(&block, p);
  return (internal::TxnPut(txn, dbs.postings, key, block));
}

// `cursor` as for AppendPostingInTxn.
absl::Status RemovePostingInTxn(WriteTransaction& txn, const ReferenceDbs& dbs,
                                Cursor& cursor, std::string_view term,
                                uint32_t seq) {
  const std::string prefix = TermPrefix(term);
  std::string target = prefix;
  AppendBigEndian32(&target, seq);
  cursor.Seek(target);
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  if (!cursor.Valid() || cursor.key() != target) {
    if (cursor.Valid()) {
      cursor.Prev();
    } else {
      cursor.SeekToLast();
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  }
  if (!cursor.Valid() || cursor.key().size() != prefix.size() + 4 ||
      cursor.key().substr(0, prefix.size()) != prefix) {
    return absl::DataLossError(absl::StrFormat(
        "the search index has no postings for term \"%s\" of reference #%d",
        term, seq));
  }
  std::string key(cursor.key());
  std::string block(cursor.value());
  const size_t n = block.size() / kPostingBytes;
  size_t lo = 0;
  size_t hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (ReadPosting(block.data() + mid * kPostingBytes).seq < seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == n || ReadPosting(block.data() + lo * kPostingBytes).seq != seq) {
    return absl::DataLossError(absl::StrFormat(
        "the search index lacks the posting of term \"%s\" for reference #%d",
        term, seq));
  }
  block.erase(lo * kPostingBytes, kPostingBytes);
  if (block.empty()) {
    CTXKIT_ASSIGN_OR_RETURN(bool deleted,
                            internal::TxnDelete(txn, dbs.postings, key));
    (void)deleted;
    return absl::OkStatus();
  }
  return (internal::TxnPut(txn, dbs.postings, key, block));
}

}  // namespace

int ReferenceTypeIndex(std::string_view name) {
  for (size_t i = 0; i < kReferenceTypeNames.size(); ++i) {
    if (kReferenceTypeNames[i] == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<ReferenceDbs> OpenReferenceDbs(Store& store) {
  ReferenceDbs dbs;
  struct Named {
    Database* db;
    const char* name;
  };
  for (const Named& n :
       {Named{&dbs.records, "references"},
        Named{&dbs.by_seq, "references.by_seq"},
        Named{&dbs.by_conversation, "references.by_conversation"},
        Named{&dbs.postings, "references.postings"},
        Named{&dbs.stats, "references.stats"},
        Named{&dbs.conversations, "conversations"}}) {
    CTXKIT_ASSIGN_OR_RETURN(*n.db, internal::StoreOpenDatabase(store, n.name));
  }
  // The analyzer version: recorded by the first open, checked by every other.
  std::string version;
  AppendBigEndian32(&version, kAnalyzerVersion);
  {
    CTXKIT_ASSIGN_OR_RETURN(ReadTransaction txn,
                            internal::StoreBeginRead(store));
    absl::StatusOr<std::string_view> stored =
        internal::TxnGet(txn, dbs.stats, kAnalyzerKey);
    if (stored.ok()) {
      if (*stored != version) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "the reference search index was built by analyzer version %d; "
            "this build has version %d",
            stored->size() == 4 ? ReadBigEndian32(stored->data()) : 0,
            kAnalyzerVersion));
      }
      return dbs;
    }
    if (stored.status().code() != absl::StatusCode::kNotFound) {
      return stored.status();
    }
  }
  if (store.read_only()) return dbs;
  CTXKIT_RETURN_IF_ERROR(
      internal::StoreUpdate(store, [&](WriteTransaction& txn) {
        return internal::TxnPut(txn, dbs.stats, kAnalyzerKey, version);
      }));
  return dbs;
}

std::string EncodeRecord(const RecordView& r) {
  std::string out;
  out.reserve(46 + r.conversation_id.size() + r.title.size() +
              r.content.size() + r.metadata.size());
  out.push_back(kRecordVersion);
  AppendBigEndian32(&out, r.seq);
  AppendBigEndian64(&out, OrderedFromSigned(r.created_at));
  AppendBigEndian64(&out, r.tokens);
  AppendBigEndian32(&out, r.length);
  out.push_back(static_cast<char>(r.type));
  AppendString(&out, r.conversation_id);
  AppendString(&out, r.title);
  AppendString(&out, r.content);
  AppendString(&out, r.metadata);
  return out;
}

absl::StatusOr<RecordView> DecodeRecord(std::string_view bytes,
                                        std::string_view id) {
  auto corrupt = [&] {
    return absl::DataLossError(
        absl::StrFormat("reference %s: stored record is corrupt", id));
  };
  constexpr size_t kFixed = 1 + 4 + 8 + 8 + 4 + 1;
  if (bytes.size() < kFixed || bytes[0] != kRecordVersion) return corrupt();
  RecordView r;
  const char* p = bytes.data() + 1;
  r.seq = ReadBigEndian32(p);
  r.created_at = SignedFromOrdered(ReadBigEndian64(p + 4));
  r.tokens = ReadBigEndian64(p + 12);
  r.length = ReadBigEndian32(p + 20);
  r.type = static_cast<uint8_t>(p[24]);
  if (r.type >= kReferenceTypeCount) return corrupt();
  size_t pos = kFixed;
  for (std::string_view* field :
       {&r.conversation_id, &r.title, &r.content, &r.metadata}) {
    if (bytes.size() - pos < 4) return corrupt();
    const uint32_t n = ReadBigEndian32(bytes.data() + pos);
    pos += 4;
    if (bytes.size() - pos < n) return corrupt();
    *field = bytes.substr(pos, n);
    pos += n;
  }
  if (pos != bytes.size()) return corrupt();
  // Text was valid UTF-8 when written: invalid bytes are damage.
  if (!IsValidUtf8(r.title) || !IsValidUtf8(r.content) ||
      !IsValidUtf8(r.metadata)) {
    return absl::DataLossError(absl::StrFormat(
        "reference %s: stored record holds text that is not UTF-8", id));
  }
  return r;
}

std::string EncodeStats(const IndexStats& s) {
  std::string out;
  AppendBigEndian64(&out, s.count);
  AppendBigEndian64(&out, s.total_length);
  AppendBigEndian64(&out, s.total_tokens);
  for (uint64_t n : s.by_type) AppendBigEndian64(&out, n);
  return out;
}

absl::StatusOr<IndexStats> DecodeStats(std::string_view bytes) {
  if (bytes.size() != 8 * (3 + kReferenceTypeCount)) {
    return absl::DataLossError("reference statistics record is corrupt");
  }
  IndexStats s;
  const char* p = bytes.data();
  s.count = ReadBigEndian64(p);
  s.total_length = ReadBigEndian64(p + 8);
  s.total_tokens = ReadBigEndian64(p + 16);
  for (size_t i = 0; i < kReferenceTypeCount; ++i) {
    s.by_type[i] = ReadBigEndian64(p + 24 + 8 * i);
  }
  return s;
}

absl::StatusOr<IndexStats> ReadStats(const Transaction& txn,
                                     const ReferenceDbs& dbs,
                                     std::string_view key) {
  absl::StatusOr<std::string_view> bytes =
      internal::TxnGet(txn, dbs.stats, key);
  if (!bytes.ok()) {
    if (bytes.status().code() == absl::StatusCode::kNotFound)
      return IndexStats{};
    return bytes.status();
  }
  return DecodeStats(*bytes);
}

AnalyzedDocument AnalyzeDocument(std::string_view title,
                                 std::string_view content) {
  std::vector<std::string> title_terms;
  std::vector<std::string> content_terms;
  AnalyzeText(title, &title_terms);
  AnalyzeText(content, &content_terms);
  std::map<std::string, uint64_t, std::less<>> tf;
  for (std::string& t : content_terms) tf[std::move(t)] += 1;
  for (std::string& t : title_terms) tf[std::move(t)] += kTitleWeight;
  AnalyzedDocument doc;
  doc.terms.reserve(tf.size());
  // Content is at most 16 MiB of text, so counts fit u32 with room to spare;
  // clamp anyway so a caller with larger limits cannot wrap.
  auto clamp = [](uint64_t v) {
    return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX));
  };
  for (auto& [term, n] : tf) doc.terms.emplace_back(term, clamp(n));
  doc.length =
      clamp(content_terms.size() + uint64_t{kTitleWeight} * title_terms.size());
  return doc;
}

std::string TermPrefix(std::string_view term) {
  std::string prefix(term);
  prefix.push_back('\0');
  return prefix;
}

absl::StatusOr<uint32_t> AddReferenceInTxn(WriteTransaction& txn,
                                           const ReferenceDbs& dbs,
                                           std::string_view id,
                                           const RecordView& record,
                                           const AnalyzedDocument& doc) {
  uint64_t next_seq = 1;
  {
    absl::StatusOr<std::string_view> stored =
        internal::TxnGet(txn, dbs.stats, kNextSeqKey);
    if (stored.ok()) {
      if (stored->size() != 8) {
        return absl::DataLossError("reference sequence counter is corrupt");
      }
      next_seq = ReadBigEndian64(stored->data());
    } else if (stored.status().code() != absl::StatusCode::kNotFound) {
      return stored.status();
    }
  }
  if (next_seq > UINT32_MAX) {
    return absl::ResourceExhaustedError(
        "reference sequence numbers are used up (2^32 - 1 references added)");
  }
  const auto seq = static_cast<uint32_t>(next_seq);
  std::string counter;
  AppendBigEndian64(&counter, next_seq + 1);
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs.stats, kNextSeqKey, counter));

  RecordView r = record;
  r.seq = seq;
  r.length = doc.length;
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs.records, id, EncodeRecord(r)));
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs.by_seq, SeqKey(seq), id));
  if (!r.conversation_id.empty()) {
    CTXKIT_RETURN_IF_ERROR(
        internal::TxnPut(txn, dbs.by_conversation,
                         ConversationSeqKey(r.conversation_id, seq), id));
    CTXKIT_RETURN_IF_ERROR(
        UpdateStats(txn, dbs, ConversationStatsKey(r.conversation_id), r, +1));
  }
  CTXKIT_RETURN_IF_ERROR(UpdateStats(txn, dbs, kAllStatsKey, r, +1));
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                          internal::TxnNewCursor(txn, dbs.postings));
  for (const auto& [term, tf] : doc.terms) {
    CTXKIT_RETURN_IF_ERROR(AppendPostingInTxn(txn, dbs, cursor, term,
                                              Posting{seq, tf, doc.length}));
  }
  return seq;
}

absl::StatusOr<bool> DeleteReferenceInTxn(WriteTransaction& txn,
                                          const ReferenceDbs& dbs,
                                          std::string_view id) {
  absl::StatusOr<std::string_view> bytes =
      internal::TxnGet(txn, dbs.records, id);
  if (!bytes.ok()) {
    if (bytes.status().code() == absl::StatusCode::kNotFound) return false;
    return bytes.status();
  }
  // Copy: the views die with the first write below.
  const std::string stored(*bytes);
  CTXKIT_ASSIGN_OR_RETURN(RecordView r, DecodeRecord(stored, id));
  const AnalyzedDocument doc = AnalyzeDocument(r.title, r.content);
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                          internal::TxnNewCursor(txn, dbs.postings));
  for (const auto& entry : doc.terms) {
    CTXKIT_RETURN_IF_ERROR(
        RemovePostingInTxn(txn, dbs, cursor, entry.first, r.seq));
  }
  CTXKIT_ASSIGN_OR_RETURN(bool gone, internal::TxnDelete(txn, dbs.records, id));
  CTXKIT_ASSIGN_OR_RETURN(gone,
                          internal::TxnDelete(txn, dbs.by_seq, SeqKey(r.seq)));
  if (!r.conversation_id.empty()) {
    CTXKIT_ASSIGN_OR_RETURN(
        gone,
        internal::TxnDelete(txn, dbs.by_conversation,
                            ConversationSeqKey(r.conversation_id, r.seq)));
    CTXKIT_RETURN_IF_ERROR(
        UpdateStats(txn, dbs, ConversationStatsKey(r.conversation_id), r, -1));
  }
  (void)gone;
  CTXKIT_RETURN_IF_ERROR(UpdateStats(txn, dbs, kAllStatsKey, r, -1));
  return true;
}

absl::StatusOr<std::vector<std::string>> ConversationReferenceIds(
    const Transaction& txn, const ReferenceDbs& dbs,
    std::string_view conversation_id) {
  std::vector<std::string> ids;
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                          internal::TxnNewCursor(txn, dbs.by_conversation));
  for (cursor.Seek(conversation_id);
       cursor.Valid() && cursor.key().size() == conversation_id.size() + 4 &&
       cursor.key().substr(0, conversation_id.size()) == conversation_id;
       cursor.Next()) {
    ids.emplace_back(cursor.value());
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  return ids;
}

}  // namespace ctxkit::internal
