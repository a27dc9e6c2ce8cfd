#include "lib/references/index_check.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/base/key_codec.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

absl::Status Mismatch(std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("reference index check: %s", what));
}

std::string DescribeStats(const IndexStats& s) {
  std::string types;
  for (uint64_t n : s.by_type) types += absl::StrFormat(" %d", n);
  return absl::StrFormat("{count %d, length %d, tokens %d, by_type%s}", s.count,
                         s.total_length, s.total_tokens, types);
}

bool SamePosting(const Posting& a, const Posting& b) {
  return a.seq == b.seq && a.tf == b.tf && a.length == b.length;
}

}  // namespace

absl::Status CheckReferenceIndex(const Transaction& txn,
                                 const ReferenceDbs& dbs,
                                 IndexCheckSummary* summary) {
  IndexCheckSummary seen;
  IndexStats all;
  std::map<std::string, IndexStats, std::less<>> per_conversation;
  std::map<std::string, std::vector<Posting>, std::less<>> postings;
  uint64_t max_seq = 0;
  uint64_t with_conversation = 0;

  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c, internal::TxnNewCursor(txn, dbs.records));
    for (c.SeekToFirst(); c.Valid(); c.Next()) {
      const std::string id(c.key());
      CTXKIT_ASSIGN_OR_RETURN(RecordView r, DecodeRecord(c.value(), id));
      ++seen.references;
      max_seq = std::max<uint64_t>(max_seq, r.seq);
      std::string seq_key;
      AppendBigEndian32(&seq_key, r.seq);
      absl::StatusOr<std::string_view> by_seq =
          internal::TxnGet(txn, dbs.by_seq, seq_key);
      if (!by_seq.ok() || *by_seq != id) {
        return Mismatch(
            absl::StrFormat("references.by_seq lacks seq %d -> %s", r.seq, id));
      }
      const AnalyzedDocument doc = AnalyzeDocument(r.title, r.content);
      if (doc.length != r.length) {
        return Mismatch(
            absl::StrFormat("reference %s records length %d; its text has %d",
                            id, r.length, doc.length));
      }
      auto account = [&](IndexStats& s) {
        s.count += 1;
        s.total_length += r.length;
        s.total_tokens += r.tokens;
        s.by_type[r.type] += 1;
      };
      account(all);
      if (!r.conversation_id.empty()) {
        ++with_conversation;
        account(per_conversation[std::string(r.conversation_id)]);
        std::string conv_key(r.conversation_id);
        AppendBigEndian32(&conv_key, r.seq);
        absl::StatusOr<std::string_view> by_conv =
            internal::TxnGet(txn, dbs.by_conversation, conv_key);
        if (!by_conv.ok() || *by_conv != id) {
          return Mismatch(
              absl::StrFormat("references.by_conversation lacks %s/%d -> %s",
                              r.conversation_id, r.seq, id));
        }
      }
      for (const auto& [term, tf] : doc.terms) {
        postings[term].push_back(Posting{r.seq, tf, doc.length});
      }
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(c));
  }
  CTXKIT_ASSIGN_OR_RETURN(uint64_t by_seq_count,
                          internal::TxnCount(txn, dbs.by_seq));
  if (by_seq_count != seen.references) {
    return Mismatch(
        absl::StrFormat("references.by_seq has %d entries for %d references",
                        by_seq_count, seen.references));
  }
  CTXKIT_ASSIGN_OR_RETURN(uint64_t by_conv_count,
                          internal::TxnCount(txn, dbs.by_conversation));
  if (by_conv_count != with_conversation) {
    return Mismatch(absl::StrFormat(
        "references.by_conversation has %d entries for %d references with a "
        "conversation",
        by_conv_count, with_conversation));
  }

  // Statistics.
  CTXKIT_ASSIGN_OR_RETURN(IndexStats stored_all, ReadStats(txn, dbs, "all"));
  if (!(stored_all == all)) {
    return Mismatch(absl::StrFormat("stats \"all\" are %s; recount gives %s",
                                    DescribeStats(stored_all),
                                    DescribeStats(all)));
  }
  {
    uint64_t stored_conversations = 0;
    CTXKIT_ASSIGN_OR_RETURN(Cursor c, internal::TxnNewCursor(txn, dbs.stats));
    for (c.Seek("c"); c.Valid() && !c.key().empty() && c.key()[0] == 'c';
         c.Next()) {
      const std::string_view conv = c.key().substr(1);
      CTXKIT_ASSIGN_OR_RETURN(IndexStats stored, DecodeStats(c.value()));
      auto it = per_conversation.find(conv);
      const IndexStats expected =
          it == per_conversation.end() ? IndexStats{} : it->second;
      if (!(stored == expected)) {
        return Mismatch(absl::StrFormat(
            "stats of conversation %s are %s; recount gives %s", conv,
            DescribeStats(stored), DescribeStats(expected)));
      }
      ++stored_conversations;
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(c));
    if (stored_conversations != per_conversation.size()) {
      return Mismatch(absl::StrFormat(
          "stats exist for %d conversations; %d have references",
          stored_conversations, per_conversation.size()));
    }
    seen.conversations = per_conversation.size();
  }
  {
    absl::StatusOr<std::string_view> next =
        internal::TxnGet(txn, dbs.stats, "next_seq");
    const uint64_t next_seq =
        next.ok() && next->size() == 8 ? ReadBigEndian64(next->data()) : 1;
    if (next_seq <= max_seq) {
      return Mismatch(
          absl::StrFormat("next_seq %d is not above the highest seq in use %d",
                          next_seq, max_seq));
    }
  }

  // Postings: walk the stored blocks term by term and compare.
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c,
                            internal::TxnNewCursor(txn, dbs.postings));
    std::string term;
    std::vector<Posting> stored;
    auto finish_term = [&]() -> absl::Status {
      if (term.empty()) return absl::OkStatus();
      auto it = postings.find(term);
      if (it == postings.end()) {
        return Mismatch(absl::StrFormat(
            "term \"%s\" has %d stored postings but occurs in no reference",
            term, stored.size()));
      }
      std::vector<Posting>& expected = it->second;
      std::sort(
          expected.begin(), expected.end(),
          [](const Posting& a, const Posting& b) { return a.seq < b.seq; });
      if (expected.size() != stored.size() ||
          !std::equal(expected.begin(), expected.end(), stored.begin(),
                      SamePosting)) {
        return Mismatch(absl::StrFormat(
            "postings of term \"%s\" differ from the documents (%d stored, "
            "%d expected)",
            term, stored.size(), expected.size()));
      }
      postings.erase(it);
      ++seen.terms;
      seen.postings += stored.size();
      return absl::OkStatus();
    };
    for (c.SeekToFirst(); c.Valid(); c.Next()) {
      const std::string_view key = c.key();
      const std::string_view value = c.value();
      if (key.size() < 6 || key[key.size() - 5] != '\0') {
        return Mismatch("a postings key is malformed");
      }
      const std::string_view key_term = key.substr(0, key.size() - 5);
      const uint32_t first = ReadBigEndian32(key.data() + key.size() - 4);
      if (key_term != term) {
        CTXKIT_RETURN_IF_ERROR(finish_term());
        term = std::string(key_term);
        stored.clear();
      }
      if (value.empty() || value.size() % kPostingBytes != 0 ||
          value.size() > kPostingsPerBlock * kPostingBytes) {
        return Mismatch(
            absl::StrFormat("a postings block of term \"%s\" has %d bytes",
                            term, value.size()));
      }
      if (!stored.empty() && stored.back().seq >= first) {
        return Mismatch(absl::StrFormat(
            "postings blocks of term \"%s\" overlap at seq %d", term, first));
      }
      for (size_t off = 0; off < value.size(); off += kPostingBytes) {
        const Posting p = ReadPosting(value.data() + off);
        if (p.seq < first || (!stored.empty() && p.seq <= stored.back().seq)) {
          return Mismatch(absl::StrFormat(
              "postings of term \"%s\" are out of order at seq %d", term,
              p.seq));
        }
        stored.push_back(p);
      }
      ++seen.blocks;
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(c));
    CTXKIT_RETURN_IF_ERROR(finish_term());
    if (!postings.empty()) {
      return Mismatch(
          absl::StrFormat("term \"%s\" of the documents has no stored postings",
                          postings.begin()->first));
    }
  }
  if (summary != nullptr) *summary = seen;
  return absl::OkStatus();
}

absl::Status CheckReferenceIndex(Store& store, IndexCheckSummary* summary) {
  absl::StatusOr<ReferenceDbs> opened = OpenReferenceDbs(store);
  // Only a read-only store lacks the sub-databases, and then the part was
  // never opened for writing, so it holds nothing.
  if (absl::IsNotFound(opened.status()) && store.read_only()) {
    if (summary != nullptr) *summary = IndexCheckSummary{};
    return absl::OkStatus();
  }
  CTXKIT_ASSIGN_OR_RETURN(ReferenceDbs dbs, std::move(opened));
  CTXKIT_ASSIGN_OR_RETURN(ReadTransaction txn, internal::StoreBeginRead(store));
  return CheckReferenceIndex(txn, dbs, summary);
}

}  // namespace ctxkit::internal
