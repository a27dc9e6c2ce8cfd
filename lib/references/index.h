// The storage of the references part: records, secondary indexes, the BM25
// inverted index and the statistics, all in sub-databases of one Store, and
// the in-transaction operations that keep them consistent. ReferenceStore and
// the conversation-delete hook are thin layers over these functions, so the
// rules below hold whichever path writes.
//
// Sub-databases (all keys compare as unsigned bytes):
//   "references"                 id (36 bytes) -> record (EncodeRecord)
//   "references.by_seq"          BE32 seq -> id. Every reference gets a
//                                sequence number from a counter at add time;
//                                this is insertion order, used by List and to
//                                map search hits (postings hold seq) to ids.
//   "references.by_conversation" conversation id (36) + BE32 seq -> id, only
//                                for references that have a conversation.
//   "references.postings"        term + 0x00 + BE32 first_seq -> block of
//                                postings. A term's postings are sorted by
//                                seq and split into blocks of at most
//                                kPostingsPerBlock; a block's key holds a seq
//                                <= every seq in it and > every seq of the
//                                term's previous block. New references have
//                                the highest seq, so adding appends to the
//                                term's last block (or starts a new one);
//                                deleting removes one posting from the block
//                                whose key is the greatest <= its seq and
//                                drops the block when it empties. Terms never
//                                contain 0x00 (see analyzer.h). A posting is
//                                12 bytes, three little-endian u32: seq,
//                                weighted term frequency, document length
//                                (see below). The length is repeated in every
//                                posting so a query reads only its terms'
//                                postings and nothing per document.
//   "references.stats"           "all" -> Stats of every reference;
//                                "c" + conversation id -> Stats of that
//                                conversation's references (absent when it
//                                has none); "next_seq" -> BE64 next sequence
//                                number; "analyzer" -> BE32 kAnalyzerVersion.
//
// Weighting: a document is indexed as its content plus its title counted
// kTitleWeight times (BM25F with one length normalization for both fields):
// tf(t) = tf_content(t) + kTitleWeight * tf_title(t), and its length
// dl = terms(content) + kTitleWeight * terms(title). Stats::total_length is
// the sum of dl, so avgdl = total_length / count.
//
// Every function taking a WriteTransaction may be run twice by Store::Update
// (map growth) and touches nothing outside the transaction. None is
// synchronized beyond what LMDB transactions give.

#ifndef CTXKIT_LIB_REFERENCES_INDEX_H_
#define CTXKIT_LIB_REFERENCES_INDEX_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

inline constexpr uint32_t kTitleWeight = 3;
inline constexpr size_t kPostingsPerBlock = 128;
inline constexpr size_t kPostingBytes = 12;
inline constexpr size_t kReferenceTypeCount = 5;

// The reference types in their fixed order (index = stored type byte).
inline constexpr std::array<std::string_view, kReferenceTypeCount>
    kReferenceTypeNames = {"file", "url", "code", "note", "document"};

// Index of `name` in kReferenceTypeNames, or -1.
int ReferenceTypeIndex(std::string_view name);

struct ReferenceDbs {
  Database records;
  Database by_seq;
  Database by_conversation;
  Database postings;
  Database stats;
  Database conversations;  // the conversations part's "conversations" db
};

// Opens (creating) the sub-databases and records or checks the analyzer
// version. FAILED_PRECONDITION when the store's index was built by another
// analyzer version; errors of Store::OpenDatabase / Update otherwise.
absl::StatusOr<ReferenceDbs> OpenReferenceDbs(Store& store);

// A reference as stored. Views (in DecodeRecord's result) point into the
// decoded bytes.
struct RecordView {
  uint32_t seq = 0;
  int64_t created_at = 0;
  uint64_t tokens = 0;
  uint32_t length = 0;               // dl, see above
  uint8_t type = 0;                  // index into kReferenceTypeNames
  std::string_view conversation_id;  // empty: none
  std::string_view title;
  std::string_view content;
  std::string_view metadata;  // JSON object text
};

// Record layout v1: byte 1 (version); BE32 seq; BE64 ordered created_at;
// BE64 tokens; BE32 length; u8 type; then conversation_id, title, content,
// metadata, each as BE32 byte count + bytes.
std::string EncodeRecord(const RecordView& record);
// DATA_LOSS naming `id` when the bytes are not a v1 record.
absl::StatusOr<RecordView> DecodeRecord(std::string_view bytes,
                                        std::string_view id);

// Counts over a set of references.
struct IndexStats {
  uint64_t count = 0;
  uint64_t total_length = 0;  // sum of dl
  uint64_t total_tokens = 0;
  std::array<uint64_t, kReferenceTypeCount> by_type{};

  bool operator==(const IndexStats&) const = default;
};
std::string EncodeStats(const IndexStats& stats);
absl::StatusOr<IndexStats> DecodeStats(std::string_view bytes);

// Stats under `key` in the stats db; zeros when absent.
absl::StatusOr<IndexStats> ReadStats(const Transaction& txn,
                                     const ReferenceDbs& dbs,
                                     std::string_view key);
inline std::string ConversationStatsKey(std::string_view conversation_id) {
  return "c" + std::string(conversation_id);
}

// The terms of a document with their weighted frequencies, sorted by term,
// and its length dl. Deterministic: a function of title and content only.
struct AnalyzedDocument {
  std::vector<std::pair<std::string, uint32_t>> terms;
  uint32_t length = 0;
};
AnalyzedDocument AnalyzeDocument(std::string_view title,
                                 std::string_view content);

// A postings block's key prefix for `term`: term + 0x00.
std::string TermPrefix(std::string_view term);

struct Posting {
  uint32_t seq;
  uint32_t tf;
  uint32_t length;
};
inline Posting ReadPosting(const char* p) {
  auto u32 = [](const char* q) {
    return static_cast<uint32_t>(static_cast<unsigned char>(q[0])) |
           static_cast<uint32_t>(static_cast<unsigned char>(q[1])) << 8 |
           static_cast<uint32_t>(static_cast<unsigned char>(q[2])) << 16 |
           static_cast<uint32_t>(static_cast<unsigned char>(q[3])) << 24;
  };
  return {u32(p), u32(p + 4), u32(p + 8)};
}

// Stores a new reference: `record` (whose seq is ignored and assigned here),
// under `id`, with `doc` = AnalyzeDocument(record.title, record.content).
// Updates every index and the statistics. Returns the seq assigned.
// RESOURCE_EXHAUSTED when sequence numbers (2^32 - 1) are used up.
absl::StatusOr<uint32_t> AddReferenceInTxn(WriteTransaction& txn,
                                           const ReferenceDbs& dbs,
                                           std::string_view id,
                                           const RecordView& record,
                                           const AnalyzedDocument& doc);

// Removes reference `id` with its postings and index entries and updates the
// statistics. Returns false (and changes nothing) when there is none.
absl::StatusOr<bool> DeleteReferenceInTxn(WriteTransaction& txn,
                                          const ReferenceDbs& dbs,
                                          std::string_view id);

// The ids of the references of `conversation_id`, in insertion order.
absl::StatusOr<std::vector<std::string>> ConversationReferenceIds(
    const Transaction& txn, const ReferenceDbs& dbs,
    std::string_view conversation_id);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_REFERENCES_INDEX_H_
