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

// One query term's postings as views into the read snapshot, with a cursor.
struct TermPostings {
  std::vector<std::string_view> blocks;
  // Seq of each block's last posting: SkipTo steps over whole blocks.
  std::vector<uint32_t> last_seq;
  uint64_t df = 0;
  double idf = 0;
  size_t block = 0;
  size_t index = 0;  // posting within the block
  uint32_t seq = 0;  // seq of the current posting
  bool done = false;

  const char* At() const {
    return blocks[block].data() + index * kPostingBytes;
  }
  size_t BlockSize() const { return blocks[block].size() / kPostingBytes; }
  // Settles on the current posting; false (and done) when there is none.
  bool Load() {
    while (block < blocks.size() && index >= BlockSize()) {
      ++block;
      index = 0;
    }
    if (block == blocks.size()) {
      done = true;
      return false;
    }
    seq = ReadPosting(At()).seq;
    return true;
  }
  // Moves to the next posting; false when there is none.
  bool Advance() {
    ++index;
    return Load();
  }
  // Moves to the first posting with seq >= target; false when there is none.
  bool SkipTo(uint32_t target) {
    if (done || seq >= target) return !done;
    while (block < blocks.size() && last_seq[block] < target) {
      ++block;
      index = 0;
    }
    if (block == blocks.size()) {
      done = true;
      return false;
    }
    // Binary search in the block: its last posting is >= target.
    size_t lo = index, hi = BlockSize() - 1;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (ReadPosting(blocks[block].data() + mid * kPostingBytes).seq <
          target) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    index = lo;
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

RelevanceEvidence GatherEvidence(std::string_view title,
                                 const std::vector<std::string>& terms,
                                 const std::vector<double>& idf,
                                 const std::vector<QueryMatch>& matches,
                                 const ScoredReference& hit,
                                 double best_score) {
  RelevanceEvidence e;
  double total = 0;
  for (double w : idf) total += w;
  if (total <= 0 || hit.matched_idf <= 0) return e;
  auto share = [&](const std::vector<bool>& has) {
    double sum = 0;
    for (size_t t = 0; t < idf.size(); ++t) sum += has[t] ? idf[t] : 0;
    return std::clamp(sum / total, 0.0, 1.0);
  };
  e.coverage = std::clamp(hit.matched_idf / total, 0.0, 1.0);
  std::vector<bool> has(terms.size(), false);
  std::vector<std::string> title_terms;
  AnalyzeText(title, &title_terms);
  for (const std::string& w : title_terms) {
    for (size_t t = 0; t < terms.size(); ++t) has[t] = has[t] || w == terms[t];
  }
  e.title = share(has);
  has.assign(terms.size(), false);
  for (const QueryMatch& m : matches) {
    if (m.word < kLeadWords) has[m.term] = true;
  }
  e.lead = share(has);
  // The title is short: its terms are together. In the content, matches
  // are in order, so words ascend: a sliding window.
  e.near = e.title;
  std::vector<uint32_t> count(terms.size(), 0);
  double in_window = 0;
  for (size_t i = 0, j = 0; j < matches.size(); ++j) {
    if (count[matches[j].term]++ == 0) in_window += idf[matches[j].term];
    while (matches[j].word - matches[i].word >= kNearWords) {
      if (--count[matches[i].term] == 0) in_window -= idf[matches[i].term];
      ++i;
    }
    e.near = std::max(e.near, std::clamp(in_window / total, 0.0, 1.0));
  }
  e.rank = best_score > 0 ? std::clamp(hit.score / best_score, 0.0, 1.0) : 0;
  return e;
}

double Relevance(const RelevanceEvidence& e) {
  // Fitted on the tuning half of tests/references/data/man_relevance.tsv
  // among a few simple forms (references.h gives both halves' figures):
  // saying what it is about (title or lead) and holding the words together
  // near the top of the results each carry a document towards 1; missing
  // query weight costs quadratically, as a document without the query's
  // distinctive word is about something else however it ranks.
  const double about = std::max(e.title, e.lead);
  const double together = e.near * e.rank * e.rank;
  return std::clamp(e.coverage * e.coverage * (0.4 * about + 0.6 * together),
                    0.0, 1.0);
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
  const Bm25Norm norm = MakeBm25Norm(avgdl);

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
  uint32_t max_seq = 0;
  uint64_t postings = 0;
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor,
                          internal::TxnNewCursor(txn, dbs.postings));
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string prefix = TermPrefix(terms[i]);
    TermPostings& list = lists[i];
    for (cursor.Seek(prefix);
         cursor.Valid() && cursor.key().size() == prefix.size() + 4 &&
         cursor.key().substr(0, prefix.size()) == prefix;
         cursor.Next()) {
      const std::string_view block = cursor.value();
      if (block.size() < kPostingBytes) continue;
      list.blocks.push_back(block);
      list.last_seq.push_back(
          ReadPosting(block.data() + block.size() - kPostingBytes).seq);
      list.df += block.size() / kPostingBytes;
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
    list.idf = Bm25Idf(all.count, list.df);
    result.idf.push_back(list.idf);
    if (!list.last_seq.empty())
      max_seq = std::max(max_seq, list.last_seq.back());
    postings += list.df;
  }

  // Every reference's score is the sum of its terms' weights in term order,
  // whichever way it is computed, so both ways give the same bits.
  std::vector<ScoredReference> heap;  // worst on top under Better
  heap.reserve(limit + 1);
  auto offer = [&](uint32_t seq, double score) {
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
  };
  if (!filtered && max_seq / 4 <= postings) {
    // Term at a time into one score per seq: a query with very common terms
    // ("the", "of") reads nearly every reference's postings, and sequential
    // adds into an array cost a fraction of merging the lists posting by
    // posting. Only when seqs are dense (few deleted), as the array is
    // indexed by seq. Weights are positive, so a zero is "no term".
    std::vector<double> scores(size_t{max_seq} + 1, 0.0);
    for (const TermPostings& list : lists) {
      for (std::string_view block : list.blocks) {
        for (size_t at = 0; at < block.size(); at += kPostingBytes) {
          const Posting posting = ReadPosting(block.data() + at);
          scores[posting.seq] +=
              list.idf * Bm25TermWeight(posting.tf, posting.length, norm);
        }
      }
    }
    for (uint32_t seq = 0; seq <= max_seq; ++seq) {
      if (scores[seq] > 0) offer(seq, scores[seq]);
    }
  } else {
    // Document at a time over the lists, restricted to `allowed`.
    for (TermPostings& list : lists) list.Load();
    size_t next_allowed = 0;
    while (true) {
      uint32_t seq = UINT32_MAX;
      bool any = false;
      for (const TermPostings& list : lists) {
        if (!list.done) {
          seq = std::min(seq, list.seq);
          any = true;
        }
      }
      if (!any) break;
      if (filtered) {
        while (next_allowed < allowed.size() && allowed[next_allowed] < seq) {
          ++next_allowed;
        }
        if (next_allowed == allowed.size()) break;
        if (allowed[next_allowed] != seq) {
          for (TermPostings& list : lists) list.SkipTo(allowed[next_allowed]);
          continue;
        }
      }
      double score = 0;
      for (TermPostings& list : lists) {
        if (list.done || list.seq != seq) continue;
        const Posting posting = ReadPosting(list.At());
        score += list.idf * Bm25TermWeight(posting.tf, posting.length, norm);
        list.Advance();
      }
      offer(seq, score);
    }
  }
  std::sort(heap.begin(), heap.end(), Better);

  // The idf of the terms each hit holds (adding scores did not track it):
  // the hits in seq order, each list probed forward from its start.
  std::vector<size_t> by_seq(heap.size());
  for (size_t h = 0; h < heap.size(); ++h) by_seq[h] = h;
  std::sort(by_seq.begin(), by_seq.end(),
            [&](size_t a, size_t b) { return heap[a].seq < heap[b].seq; });
  for (TermPostings& list : lists) {
    list.block = 0;
    list.index = 0;
    list.done = false;
    if (!list.Load()) continue;
    for (size_t h : by_seq) {
      if (!list.SkipTo(heap[h].seq)) break;
      if (list.seq == heap[h].seq) heap[h].matched_idf += list.idf;
    }
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

std::vector<QueryMatch> FindQueryMatches(
    std::string_view content, const std::vector<std::string>& terms) {
  size_t scan = std::min(content.size(), kMaxPassageScanBytes);
  while (scan < content.size() && scan > 0 && IsContinuation(content[scan])) {
    --scan;
  }
  std::vector<QueryMatch> matches;
  uint32_t word = 0;
  size_t word_end = 0;  // the current word's bytes end here
  bool first = true;
  ForEachTermSpan(content.substr(0, scan), [&](const TermSpan& span) {
    // An identifier's parts and the whole lie within one word.
    if (first || span.begin >= word_end) {
      if (!first) ++word;
      first = false;
      word_end = span.end;
    } else {
      word_end = std::max(word_end, span.end);
    }
    for (size_t i = 0; i < terms.size(); ++i) {
      if (IsTerm(span.raw, terms[i])) {
        matches.push_back({span.begin, span.end, i, word});
        return;
      }
    }
  });
  // A whole identifier follows its parts and starts where the first does.
  std::sort(matches.begin(), matches.end(),
            [](const QueryMatch& a, const QueryMatch& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  return matches;
}

SearchPreview MakeSearchPreview(std::string_view content,
                                const std::vector<QueryMatch>& matches,
                                const std::vector<double>& weights,
                                size_t max_chars) {
  SearchPreview out;
  const size_t terms = weights.size();
  if (matches.empty() || max_chars == 0) {
    out.text = MakePreview(content, max_chars);
    return out;
  }
  // The densest passage: the run of matches within `window` bytes whose
  // distinct terms weigh the most, then the one with more matches, then the
  // earliest. A quarter of the preview is left for context.
  const size_t window = std::max<size_t>(1, max_chars * 3 / 4);
  std::vector<uint32_t> count(terms, 0);
  size_t best_first = 0, best_last = 0, best_n = 0;
  double best_weight = -1;
  for (size_t i = 0, j = 0; i < matches.size(); ++i) {
    if (j == i) ++count[matches[j++].term];
    while (j < matches.size() && matches[j].end - matches[i].begin <= window) {
      ++count[matches[j++].term];
    }
    double weight = 0;
    for (size_t t = 0; t < terms; ++t) {
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

  for (const QueryMatch& m : matches) {
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
