#include "lib/references/search.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "lib/base/key_codec.h"
#include "lib/references/analyzer.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

// One query term's postings as views into the read snapshot.
struct TermPostings {
  std::vector<std::string_view> blocks;
  uint64_t df = 0;
  double idf = 0;
  size_t block = 0;
  const char* p = nullptr;    // current posting
  const char* end = nullptr;  // end of the current block
  uint32_t seq = 0;           // seq of the current posting

  bool Load() {
    while (block < blocks.size()) {
      if (p == nullptr) {
        p = blocks[block].data();
        end = p + blocks[block].size();
      }
      if (p < end) {
        seq = ReadPosting(p).seq;
        return true;
      }
      ++block;
      p = nullptr;
    }
    return false;
  }
  // Moves to the next posting; false when there is none.
  bool Advance() {
    p += kPostingBytes;
    return Load();
  }
};

// "Worse" order for the top-k heap: lower score, then newer (higher seq).
bool Better(const ScoredReference& a, const ScoredReference& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.seq < b.seq;
}

}  // namespace

double Bm25Idf(uint64_t n, uint64_t df) {
  return std::log(1.0 +
                  (static_cast<double>(n) - static_cast<double>(df) + 0.5) /
                      (static_cast<double>(df) + 0.5));
}

std::vector<std::string> QueryTerms(std::string_view query) {
  std::vector<std::string> all;
  AnalyzeText(query, &all);
  std::vector<std::string> distinct;
  std::unordered_set<std::string_view> seen;
  for (const std::string& t : all) {
    if (seen.insert(t).second) distinct.push_back(t);
  }
  return distinct;
}

absl::StatusOr<IndexSearchResult> SearchIndex(
    const Transaction& txn, const ReferenceDbs& dbs,
    const std::vector<std::string>& terms, size_t limit,
    std::string_view conversation_id) {
  IndexSearchResult result;
  CTXKIT_ASSIGN_OR_RETURN(IndexStats all, ReadStats(txn, dbs, "all"));
  if (all.count == 0 || terms.empty() || limit == 0) return result;
  const double avgdl = std::max(
      static_cast<double>(all.total_length) / static_cast<double>(all.count),
      1e-9);

  // Candidates when filtered: the conversation's seqs, sorted.
  std::vector<uint32_t> allowed;
  const bool filtered = !conversation_id.empty();
  if (filtered) {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c,
                            internal::TxnNewCursor(txn, dbs.by_conversation));
    for (c.Seek(conversation_id);
         c.Valid() && c.key().size() == conversation_id.size() + 4 &&
         c.key().substr(0, conversation_id.size()) == conversation_id;
         c.Next()) {
      allowed.push_back(
          ReadBigEndian32(c.key().data() + conversation_id.size()));
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(c));
    if (allowed.empty()) return result;
  }

  std::vector<TermPostings> lists(terms.size());
  double max_score = 0;
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                          internal::TxnNewCursor(txn, dbs.postings));
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string prefix = TermPrefix(terms[i]);
    TermPostings& list = lists[i];
    for (cursor.Seek(prefix);
         cursor.Valid() && cursor.key().size() == prefix.size() + 4 &&
         cursor.key().substr(0, prefix.size()) == prefix;
         cursor.Next()) {
      list.blocks.push_back(cursor.value());
      list.df += cursor.value().size() / kPostingBytes;
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    list.idf = Bm25Idf(all.count, list.df);
    max_score += list.idf * (kBm25K1 + 1);
  }

  std::vector<TermPostings*> active;
  for (TermPostings& list : lists) {
    if (list.Load()) active.push_back(&list);
  }
  std::vector<ScoredReference> heap;  // worst on top under Better
  heap.reserve(limit + 1);
  size_t next_allowed = 0;
  while (!active.empty()) {
    uint32_t seq = UINT32_MAX;
    for (const TermPostings* list : active) seq = std::min(seq, list->seq);
    bool candidate = true;
    if (filtered) {
      while (next_allowed < allowed.size() && allowed[next_allowed] < seq) {
        ++next_allowed;
      }
      if (next_allowed == allowed.size()) break;
      candidate = allowed[next_allowed] == seq;
      if (!candidate) {
        // Skip every list forward to the next allowed seq.
        const uint32_t target = allowed[next_allowed];
        for (size_t i = 0; i < active.size();) {
          TermPostings* list = active[i];
          bool alive = true;
          while (alive && list->seq < target) alive = list->Advance();
          if (alive) {
            ++i;
          } else {
            active[i] = active.back();
            active.pop_back();
          }
        }
        continue;
      }
    }
    double score = 0;
    for (size_t i = 0; i < active.size();) {
      TermPostings* list = active[i];
      if (list->seq == seq) {
        const Posting posting = ReadPosting(list->p);
        score += list->idf * Bm25TermWeight(posting.tf, posting.length, avgdl);
        if (!list->Advance()) {
          active[i] = active.back();
          active.pop_back();
          continue;
        }
      }
      ++i;
    }
    ++result.total_matches;
    const ScoredReference hit{seq, score, 0};
    if (heap.size() < limit) {
      heap.push_back(hit);
      std::push_heap(heap.begin(), heap.end(), Better);
    } else if (Better(hit, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), Better);
      heap.back() = hit;
      std::push_heap(heap.begin(), heap.end(), Better);
    }
  }
  std::sort(heap.begin(), heap.end(), Better);
  for (ScoredReference& hit : heap) {
    hit.relevance =
        max_score > 0 ? std::clamp(hit.score / max_score, 0.0, 1.0) : 0.0;
  }
  result.hits = std::move(heap);
  return result;
}

std::string MakePreview(std::string_view text, size_t max_chars) {
  size_t pos = 0;
  size_t chars = 0;
  while (pos < text.size() && chars < max_chars) {
    const auto lead = static_cast<unsigned char>(text[pos]);
    pos += lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    ++chars;
  }
  pos = std::min(pos, text.size());
  if (pos == text.size()) return std::string(text);
  std::string preview(text.substr(0, pos));
  preview += "...";
  return preview;
}

}  // namespace ctxkit::internal
