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

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

bool IsContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Whether `raw` is the analyzer's `term` once ASCII is lower-cased.
bool IsTerm(std::string_view raw, std::string_view term) {
  if (raw.size() != term.size()) return false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != term[i]) return false;
  }
  return true;
}

// Where a search preview may start: at a line (after its indentation) or
// after a sentence's end.
bool StartsSentence(std::string_view text, size_t pos) {
  size_t q = pos;
  while (q > 0 && (text[q - 1] == ' ' || text[q - 1] == '\t')) --q;
  if (q == 0 || text[q - 1] == '\n' || text[q - 1] == '\r') return true;
  const char end = text[q - 1];
  return q < pos && (end == '.' || end == '!' || end == '?' || end == ':');
}

// A query term's occurrence in a content: bytes [begin, end).
struct Match {
  size_t begin;
  size_t end;
  size_t term;
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

double Relevance(double score, double matched_idf, double query_idf) {
  if (matched_idf <= 0 || query_idf <= 0) return 0;
  const double share = std::clamp(matched_idf / query_idf, 0.0, 1.0);
  const double strength =
      std::clamp(score / (matched_idf * (kBm25K1 + 1)), 0.0, 1.0);
  return share * share * strength;
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
  double query_idf = 0;
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
    query_idf += list.idf;
    result.idf.push_back(list.idf);
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
    double matched_idf = 0;
    for (size_t i = 0; i < active.size();) {
      TermPostings* list = active[i];
      if (list->seq == seq) {
        const Posting posting = ReadPosting(list->p);
        score += list->idf * Bm25TermWeight(posting.tf, posting.length, avgdl);
        matched_idf += list->idf;
        if (!list->Advance()) {
          active[i] = active.back();
          active.pop_back();
          continue;
        }
      }
      ++i;
    }
    ++result.total_matches;
    const ScoredReference hit{seq, score, matched_idf, 0};
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
    hit.relevance = Relevance(hit.score, hit.matched_idf, query_idf);
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

SearchPreview MakeSearchPreview(std::string_view content,
                                const std::vector<std::string>& terms,
                                const std::vector<double>& weights,
                                size_t max_chars) {
  SearchPreview out;
  size_t scan = std::min(content.size(), kMaxPassageScanBytes);
  while (scan < content.size() && scan > 0 && IsContinuation(content[scan])) {
    --scan;
  }
  std::vector<Match> matches;
  ForEachTermSpan(content.substr(0, scan), [&](const TermSpan& span) {
    for (size_t i = 0; i < terms.size(); ++i) {
      if (IsTerm(span.raw, terms[i])) {
        matches.push_back({span.begin, span.end, i});
        return;
      }
    }
  });
  if (matches.empty() || max_chars == 0) {
    out.text = MakePreview(content, max_chars);
    return out;
  }
  // A whole identifier follows its parts and starts where the first does.
  std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });

  // The densest passage: the run of matches within `window` bytes whose
  // distinct terms weigh the most, then the one with more matches, then the
  // earliest. A quarter of the preview is left for context.
  const size_t window = std::max<size_t>(1, max_chars * 3 / 4);
  std::vector<uint32_t> count(terms.size(), 0);
  size_t best_first = 0, best_last = 0, best_n = 0;
  double best_weight = -1;
  for (size_t i = 0, j = 0; i < matches.size(); ++i) {
    if (j == i) ++count[matches[j++].term];
    while (j < matches.size() && matches[j].end - matches[i].begin <= window) {
      ++count[matches[j++].term];
    }
    double weight = 0;
    for (size_t t = 0; t < terms.size(); ++t) {
      if (count[t] > 0) weight += weights[t];
    }
    if (weight > best_weight || (weight == best_weight && j - i > best_n)) {
      best_weight = weight;
      best_first = i;
      best_last = j - 1;
      best_n = j - i;
    }
    --count[matches[i].term];
  }
  const size_t span_begin = matches[best_first].begin;
  size_t span_end = 0;
  for (size_t k = best_first; k <= best_last; ++k) {
    span_end = std::max(span_end, matches[k].end);
  }

  // Lead context: a third of what the span leaves, started at a sentence or
  // line when one begins there, else at a word.
  size_t span_chars = 0;
  for (size_t p = span_begin; p < span_end; ++p) {
    span_chars += IsContinuation(content[p]) ? 0 : 1;
  }
  size_t lead = max_chars > span_chars ? (max_chars - span_chars) / 3 : 0;
  size_t start = span_begin;
  while (start > 0 && lead > 0) {
    --start;
    if (!IsContinuation(content[start])) --lead;
  }
  if (start > 0) {
    size_t word = span_begin;
    size_t sentence = span_begin;
    for (size_t p = start; p < span_begin; ++p) {
      if (IsSpace(content[p])) continue;
      if (StartsSentence(content, p)) {
        sentence = p;
        break;
      }
      if (word == span_begin && IsSpace(content[p - 1])) word = p;
    }
    start = sentence != span_begin ? sentence : word;
  }
  while (start < span_begin && IsSpace(content[start])) ++start;

  // Copy up to max_chars code points, white space runs as one space;
  // out_at[p - start] is where source byte p lands in the text.
  std::string text;
  std::vector<size_t> out_at;
  size_t chars = 0;
  size_t pos = start;
  while (pos < content.size() && chars < max_chars) {
    if (IsSpace(content[pos])) {
      const size_t at = text.size();
      while (pos < content.size() && IsSpace(content[pos])) {
        out_at.push_back(at);
        ++pos;
      }
      text += ' ';
    } else {
      out_at.push_back(text.size());
      text += content[pos++];
      while (pos < content.size() && IsContinuation(content[pos])) {
        out_at.push_back(text.size());
        text += content[pos++];
      }
    }
    ++chars;
  }
  out_at.push_back(text.size());
  // Cut at the last space when the copy stopped inside a word, unless that
  // would lose the passage's own matches.
  size_t keep = text.size();
  if (pos < content.size() && !IsSpace(content[pos]) && !text.empty() &&
      text.back() != ' ') {
    const size_t space = text.rfind(' ');
    const size_t needed = span_end <= pos ? out_at[span_end - start] : 0;
    if (space != std::string::npos && space >= needed) keep = space;
  }
  while (keep > 0 && text[keep - 1] == ' ') --keep;
  text.resize(keep);

  bool before = false;
  for (size_t p = start; p-- > 0;) {
    if (!IsSpace(content[p])) {
      before = true;
      break;
    }
  }
  bool after = false;
  for (size_t p = pos; p < content.size(); ++p) {
    if (!IsSpace(content[p])) {
      after = true;
      break;
    }
  }
  after = after || keep < out_at.back();
  const size_t shift = before ? 3 : 0;
  out.text.reserve(text.size() + shift + 3);
  if (before) out.text = "...";
  out.text += text;
  if (after) out.text += "...";

  for (const Match& m : matches) {
    if (m.begin < start || m.end > pos) continue;
    const size_t b = out_at[m.begin - start];
    const size_t e = out_at[m.end - start];
    if (e > keep || b >= e) continue;
    if (!out.highlights.empty() && b <= out.highlights.back().second - shift) {
      out.highlights.back().second =
          std::max(out.highlights.back().second, e + shift);
    } else {
      out.highlights.emplace_back(b + shift, e + shift);
    }
  }
  return out;
}

}  // namespace ctxkit::internal
