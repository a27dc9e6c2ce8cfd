#include "lib/graph/lexical.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/key_codec.h"
#include "lib/base/record_codec.h"
#include "lib/references/analyzer.h"
#include "lib/references/search.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

// Seqs per postings block and per document-length block (header comment).
constexpr int kLexPostingsShift = 7;
constexpr uint64_t kLexPostingsLowMask = (uint64_t{1} << kLexPostingsShift) - 1;
constexpr int kLexDoclenShift = 8;
constexpr size_t kLexDoclenPerBlock = size_t{1} << kLexDoclenShift;
constexpr size_t kLexDoclenBlockBytes = kLexDoclenPerBlock * 4;
constexpr std::string_view kLexStatsKey = "all";

std::string Quoted(std::string_view term) {
  return absl::StrCat("\"", absl::CHexEscape(AV(term)), "\"");
}

std::string PostingsKey(std::string_view term, uint64_t seq) {
  std::string key;
  key.reserve(term.size() + 9);
  key.append(term);
  key.push_back('\0');
  AppendBigEndian64(&key, seq >> kLexPostingsShift);
  return key;
}

std::string ForwardKey(uint64_t seq, std::string_view term) {
  std::string key;
  key.reserve(8 + term.size());
  AppendBigEndian64(&key, seq);
  key.append(term);
  return key;
}

std::string DoclenKey(uint64_t seq) {
  std::string key;
  AppendBigEndian64(&key, seq >> kLexDoclenShift);
  return key;
}

uint32_t ReadLe32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) {
    v = __builtin_bswap32(v);
  }
  return v;
}

void WriteLe32(char* p, uint32_t v) {
  if constexpr (std::endian::native == std::endian::big) {
    v = __builtin_bswap32(v);
  }
  std::memcpy(p, &v, 4);
}

// A varint of at most 32 bits at [*p, end); false when malformed.
bool ReadVarint32(const char** p, const char* end, uint32_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 28 && *p < end; shift += 7) {
    const auto byte = static_cast<unsigned char>(*(*p)++);
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      if (result > std::numeric_limits<uint32_t>::max()) return false;
      *v = static_cast<uint32_t>(result);
      return true;
    }
  }
  return false;
}

// A whole value that is one varint > 0 (a tf or a df).
bool DecodeCount(std::string_view value, uint64_t* v) {
  RecordReader r(value);
  return r.GetVarint(v) && r.AtEnd() && *v > 0;
}

std::string EncodeCount(uint64_t v) {
  std::string out;
  PutVarint(&out, v);
  return out;
}

struct BlockEntry {
  uint8_t low;
  uint32_t tf;
};

// A postings block: lows strictly ascending, < 128, tf > 0, not empty.
bool DecodeBlock(std::string_view value, std::vector<BlockEntry>* entries) {
  entries->clear();
  const char* p = value.data();
  const char* end = p + value.size();
  while (p < end) {
    const auto low = static_cast<uint8_t>(*p++);
    uint32_t tf = 0;
    if (low > kLexPostingsLowMask || !ReadVarint32(&p, end, &tf) || tf == 0 ||
        (!entries->empty() && entries->back().low >= low)) {
      return false;
    }
    entries->push_back({low, tf});
  }
  return !entries->empty();
}

void EncodeBlock(const std::vector<BlockEntry>& entries, std::string* out) {
  out->clear();
  for (const BlockEntry& e : entries) {
    out->push_back(static_cast<char>(e.low));
    PutVarint(out, e.tf);
  }
}

struct LexStats {
  uint64_t n = 0;
  uint64_t sum = 0;
};

absl::StatusOr<LexStats> ReadLexStats(const Transaction& txn,
                                      const LexicalDbs& dbs) {
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.stats, kLexStatsKey);
  if (absl::IsNotFound(v.status())) return LexStats{};
  CTXKIT_RETURN_IF_ERROR(v.status());
  LexStats s;
  RecordReader r(*v);
  if (!r.GetVarint(&s.n) || !r.GetVarint(&s.sum) || !r.AtEnd()) {
    return absl::DataLossError("graph.lex.stats: malformed totals");
  }
  return s;
}

std::string EncodeLexStats(const LexStats& s) {
  std::string out;
  PutVarint(&out, s.n);
  PutVarint(&out, s.sum);
  return out;
}

// A stored value, or "" when the key is absent.
absl::StatusOr<std::string_view> GetOrEmpty(const Transaction& txn, Database db,
                                            std::string_view key) {
  absl::StatusOr<std::string_view> v = TxnGet(txn, db, key);
  if (absl::IsNotFound(v.status())) return std::string_view();
  return v;
}

absl::Status ValidateCounts(const TermCounts& counts) {
  for (size_t i = 0; i < counts.size(); ++i) {
    // Not a structured binding: clang (C++20) does not let a lambda
    // capture one.
    const std::string& term = counts[i].first;
    const uint32_t count = counts[i].second;
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("counts[", i, "] (term ", Quoted(term), "): ", AV(why)));
    };
    if (term.empty()) return bad("empty term");
    if (term.size() > kMaxTermBytes) {
      return bad(absl::StrCat("longer than ", kMaxTermBytes, " bytes"));
    }
    if (term.find('\0') != std::string::npos) return bad("contains NUL");
    if (count == 0) return bad("count is 0");
    if (i > 0 && !(counts[i - 1].first < term)) {
      return bad("not after the previous term (unsorted or repeated)");
    }
  }
  return absl::OkStatus();
}

// Adds (`add`) or subtracts `counts` for context `seq`.
absl::Status ApplyDelta(WriteTransaction& txn, const LexicalDbs& dbs,
                        uint64_t seq, const TermCounts& counts, bool add) {
  CTXKIT_RETURN_IF_ERROR(ValidateCounts(counts));
  if (counts.empty()) return absl::OkStatus();
  const auto low = static_cast<uint8_t>(seq & kLexPostingsLowMask);
  std::vector<BlockEntry> entries;
  std::string block;
  uint64_t delta = 0;
  for (const auto& [term, count] : counts) {
    const std::string key = PostingsKey(term, seq);
    CTXKIT_ASSIGN_OR_RETURN(std::string_view stored,
                            GetOrEmpty(txn, dbs.postings, key));
    if (!stored.empty() && !DecodeBlock(stored, &entries)) {
      return absl::DataLossError(
          absl::StrCat("graph.lex.postings: malformed block of term ",
                       Quoted(term), " for context ", seq));
    }
    if (stored.empty()) entries.clear();
    auto it = std::lower_bound(
        entries.begin(), entries.end(), low,
        [](const BlockEntry& e, uint8_t l) { return e.low < l; });
    const bool found = it != entries.end() && it->low == low;
    const uint64_t old_tf = found ? it->tf : 0;
    uint64_t new_tf;
    if (add) {
      new_tf = old_tf + count;
      if (new_tf > std::numeric_limits<uint32_t>::max()) {
        return absl::OutOfRangeError(
            absl::StrCat("counts: term ", Quoted(term), " of context ", seq,
                         " would be counted more than 2^32 - 1 times"));
      }
    } else {
      if (old_tf < count) {
        return absl::DataLossError(absl::StrCat(
            "graph.lex: context ", seq, " holds term ", Quoted(term), " ",
            old_tf, " times, fewer than the ", count,
            " to remove: the lexical index is out of step"));
      }
      new_tf = old_tf - count;
    }
    if (new_tf == 0) {
      entries.erase(it);
    } else if (found) {
      it->tf = static_cast<uint32_t>(new_tf);
    } else {
      entries.insert(it, {low, static_cast<uint32_t>(new_tf)});
    }
    if (entries.empty()) {
      CTXKIT_RETURN_IF_ERROR(TxnDelete(txn, dbs.postings, key).status());
    } else {
      EncodeBlock(entries, &block);
      CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.postings, key, block));
    }
    const std::string fkey = ForwardKey(seq, term);
    if (new_tf == 0) {
      CTXKIT_RETURN_IF_ERROR(TxnDelete(txn, dbs.terms, fkey).status());
    } else {
      CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.terms, fkey, EncodeCount(new_tf)));
    }
    if ((old_tf == 0) != (new_tf == 0)) {
      CTXKIT_ASSIGN_OR_RETURN(std::string_view dfv,
                              GetOrEmpty(txn, dbs.df, term));
      uint64_t df = 0;
      if (!dfv.empty() && !DecodeCount(dfv, &df)) {
        return absl::DataLossError(
            absl::StrCat("graph.lex.df: malformed df of term ", Quoted(term)));
      }
      if (new_tf > 0) {
        ++df;
      } else if (df == 0) {
        return absl::DataLossError(
            absl::StrCat("graph.lex.df: term ", Quoted(term), " of context ",
                         seq, " has no df: the lexical index is out of step"));
      } else {
        --df;
      }
      if (df == 0) {
        CTXKIT_RETURN_IF_ERROR(TxnDelete(txn, dbs.df, term).status());
      } else {
        CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.df, term, EncodeCount(df)));
      }
    }
    delta += count;
  }

  // The document length and the totals.
  const std::string dkey = DoclenKey(seq);
  CTXKIT_ASSIGN_OR_RETURN(std::string_view dstored,
                          GetOrEmpty(txn, dbs.doclen, dkey));
  if (!dstored.empty() && dstored.size() != kLexDoclenBlockBytes) {
    return absl::DataLossError(absl::StrCat(
        "graph.lex.doclen: malformed length block of context ", seq));
  }
  std::string lengths = dstored.empty()
                            ? std::string(kLexDoclenBlockBytes, '\0')
                            : std::string(dstored);
  char* slot = lengths.data() + 4 * (seq & (kLexDoclenPerBlock - 1));
  const uint64_t old_dl = ReadLe32(slot);
  uint64_t new_dl;
  if (add) {
    new_dl = old_dl + delta;
    if (new_dl > std::numeric_limits<uint32_t>::max()) {
      return absl::OutOfRangeError(absl::StrCat(
          "counts: context ", seq, " would hold more than 2^32 - 1 terms"));
    }
  } else {
    if (old_dl < delta) {
      return absl::DataLossError(
          absl::StrCat("graph.lex.doclen: context ", seq, " has length ",
                       old_dl, ", less than the ", delta,
                       " terms removed: the lexical index is out of step"));
    }
    new_dl = old_dl - delta;
  }
  WriteLe32(slot, static_cast<uint32_t>(new_dl));
  if (lengths.find_first_not_of('\0') == std::string::npos) {
    CTXKIT_RETURN_IF_ERROR(TxnDelete(txn, dbs.doclen, dkey).status());
  } else {
    CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.doclen, dkey, lengths));
  }
  CTXKIT_ASSIGN_OR_RETURN(LexStats stats, ReadLexStats(txn, dbs));
  if (add) {
    stats.n += old_dl == 0 ? 1 : 0;
    stats.sum += delta;
  } else {
    if (stats.sum < delta || (new_dl == 0 && stats.n == 0)) {
      return absl::DataLossError(
          "graph.lex.stats: totals below a document's: the lexical index is "
          "out of step");
    }
    stats.n -= new_dl == 0 ? 1 : 0;
    stats.sum -= delta;
  }
  // An index emptied by removals is stored exactly as a new one: no entries.
  if (stats.n == 0 && stats.sum == 0) {
    return TxnDelete(txn, dbs.stats, kLexStatsKey).status();
  }
  return TxnPut(txn, dbs.stats, kLexStatsKey, EncodeLexStats(stats));
}

// The forward index entries of `seq` as views into the snapshot (valid
// until the transaction ends or writes).
absl::Status ReadForward(
    Cursor& cursor, uint64_t seq,
    std::vector<std::pair<std::string_view, uint32_t>>* out) {
  out->clear();
  std::string prefix;
  AppendBigEndian64(&prefix, seq);
  for (cursor.Seek(prefix); cursor.Valid() && cursor.key().size() > 8 &&
                            cursor.key().substr(0, 8) == prefix;
       cursor.Next()) {
    uint64_t tf = 0;
    if (!DecodeCount(cursor.value(), &tf) ||
        tf > std::numeric_limits<uint32_t>::max()) {
      return absl::DataLossError(
          absl::StrCat("graph.lex.terms: malformed count of term ",
                       Quoted(cursor.key().substr(8)), " of context ", seq));
    }
    out->emplace_back(cursor.key().substr(8), static_cast<uint32_t>(tf));
  }
  return CursorStatus(cursor);
}

struct Candidate {
  uint64_t seq = 0;
  double bm25 = 0;
};

bool BetterByBm25(const Candidate& a, const Candidate& b) {
  if (a.bm25 != b.bm25) return a.bm25 > b.bm25;
  return a.seq < b.seq;
}

// One query term: its weights and its postings blocks (views).
struct QueryTerm {
  std::string_view term;
  uint32_t qtf = 0;
  uint64_t df = 0;
  double bm25_idf = 0;
  double cos_idf = 0;
  std::vector<std::pair<uint64_t, std::string_view>> blocks;
  size_t next = 0;
};

// BM25 of every context holding a query term. Blocks of all terms are
// merged by seq range so that each context's score is summed in term order
// (the same bits whatever else is indexed) and document lengths are read
// once per range, in ascending key order.
absl::Status ScoreBm25(const Transaction& txn, const LexicalDbs& dbs,
                       const LexStats& stats, std::vector<QueryTerm>& terms,
                       std::vector<Candidate>* out) {
  const Bm25Norm norm = MakeBm25Norm(static_cast<double>(stats.sum) /
                                     static_cast<double>(stats.n));
  CTXKIT_ASSIGN_OR_RETURN(Cursor lengths, TxnNewCursor(txn, dbs.doclen));
  uint64_t length_block = std::numeric_limits<uint64_t>::max();
  std::string_view length_view;
  double acc[kLexPostingsLowMask + 1] = {};
  for (;;) {
    uint64_t range = std::numeric_limits<uint64_t>::max();
    bool any = false;
    for (const QueryTerm& t : terms) {
      if (t.next < t.blocks.size()) {
        range = std::min(range, t.blocks[t.next].first);
        any = true;
      }
    }
    if (!any) break;
    const uint64_t want = range >> (kLexDoclenShift - kLexPostingsShift);
    if (want != length_block) {
      length_block = want;
      std::string key;
      AppendBigEndian64(&key, want);
      lengths.Seek(key);
      CTXKIT_RETURN_IF_ERROR(CursorStatus(lengths));
      length_view = lengths.Valid() && lengths.key() == key
                        ? lengths.value()
                        : std::string_view();
      if (!length_view.empty() && length_view.size() != kLexDoclenBlockBytes) {
        return absl::DataLossError(
            absl::StrCat("graph.lex.doclen: malformed length block ", want));
      }
    }
    uint64_t present[2] = {0, 0};
    for (QueryTerm& t : terms) {
      if (t.next >= t.blocks.size() || t.blocks[t.next].first != range) {
        continue;
      }
      const std::string_view block = t.blocks[t.next++].second;
      const char* p = block.data();
      const char* end = p + block.size();
      while (p < end) {
        const auto low = static_cast<uint8_t>(*p++);
        uint32_t tf = 0;
        if (low > kLexPostingsLowMask || !ReadVarint32(&p, end, &tf) ||
            tf == 0) {
          return absl::DataLossError(absl::StrCat(
              "graph.lex.postings: malformed block of term ", Quoted(t.term),
              " for seqs from ", range << kLexPostingsShift));
        }
        const uint64_t seq = range << kLexPostingsShift | low;
        const uint32_t dl =
            length_view.empty()
                ? 0
                : ReadLe32(length_view.data() +
                           4 * (seq & (kLexDoclenPerBlock - 1)));
        if (dl == 0) {
          return absl::DataLossError(absl::StrCat(
              "graph.lex: context ", seq, " holds term ", Quoted(t.term),
              " but has no document length: the lexical index is out of "
              "step"));
        }
        const double w = t.bm25_idf * Bm25TermWeight(tf, dl, norm);
        uint64_t& word = present[low >> 6];
        const uint64_t bit = uint64_t{1} << (low & 63);
        if (word & bit) {
          acc[low] += w;
        } else {
          word |= bit;
          acc[low] = w;
        }
      }
    }
    for (int half = 0; half < 2; ++half) {
      for (uint64_t bits = present[half]; bits != 0; bits &= bits - 1) {
        const int low = half * 64 + std::countr_zero(bits);
        out->push_back({range << kLexPostingsShift | static_cast<uint64_t>(low),
                        acc[low]});
      }
    }
  }
  return absl::OkStatus();
}

struct PoolDoc {
  Candidate c = {};
  std::vector<std::pair<std::string_view, uint32_t>> terms = {};
  double cosine = 0;
};

// Sets each pool document's cosine with the query. The document norms
// need the df of every term of every pool document: their sorted lists are
// merged and each distinct term's df is read once, in key order, so the
// cursor mostly moves within a page.
absl::Status ScoreCosine(const Transaction& txn, const LexicalDbs& dbs,
                         const LexStats& stats,
                         const std::vector<QueryTerm>& query,
                         std::vector<PoolDoc>& pool) {
  const double n = static_cast<double>(stats.n);
  double qnorm2 = 0;
  for (const QueryTerm& t : query) {
    const double w = t.qtf * t.cos_idf;
    qnorm2 += w * w;
  }
  CTXKIT_ASSIGN_OR_RETURN(Cursor df_cursor, TxnNewCursor(txn, dbs.df));
  std::vector<double> norm2(pool.size(), 0.0);
  // A binary min-heap of each document's next term. Comparing the first 8
  // bytes as one integer settles almost every comparison without memcmp.
  struct Head {
    uint64_t prefix;
    std::string_view term;
    size_t doc;
  };
  auto less = [](const Head& a, const Head& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return a.term < b.term;
  };
  auto make_head = [&](size_t d, size_t i) {
    const std::string_view term = pool[d].terms[i].first;
    uint64_t prefix = 0;
    for (size_t k = 0; k < 8; ++k) {
      prefix = prefix << 8 |
               (k < term.size() ? static_cast<unsigned char>(term[k]) : 0u);
    }
    return Head{prefix, term, d};
  };
  std::vector<Head> heap;
  heap.reserve(pool.size());
  auto sift_down = [&](size_t i) {
    for (;;) {
      size_t best = i;
      const size_t l = 2 * i + 1, r = l + 1;
      if (l < heap.size() && less(heap[l], heap[best])) best = l;
      if (r < heap.size() && less(heap[r], heap[best])) best = r;
      if (best == i) return;
      std::swap(heap[i], heap[best]);
      i = best;
    }
  };
  std::vector<size_t> pos(pool.size(), 0);
  for (size_t d = 0; d < pool.size(); ++d) {
    if (!pool[d].terms.empty()) heap.push_back(make_head(d, 0));
  }
  for (size_t i = heap.size(); i-- > 0;) sift_down(i);
  while (!heap.empty()) {
    const uint64_t prefix = heap[0].prefix;
    const std::string_view term = heap[0].term;
    // Targets ascend and are dense in the vocabulary: a few steps forward
    // are cheaper than a seek's binary search of the page.
    int steps = 0;
    while (df_cursor.Valid() && df_cursor.key() < term && steps < 8) {
      df_cursor.Next();
      ++steps;
    }
    if (!df_cursor.Valid() || df_cursor.key() < term) df_cursor.Seek(term);
    CTXKIT_RETURN_IF_ERROR(CursorStatus(df_cursor));
    uint64_t df = 0;
    if (!df_cursor.Valid() || df_cursor.key() != term ||
        !DecodeCount(df_cursor.value(), &df)) {
      return absl::DataLossError(
          absl::StrCat("graph.lex.df: term ", Quoted(term), " of context ",
                       pool[heap[0].doc].c.seq,
                       " has no valid df: the lexical index is out of step"));
    }
    const double idf = std::log(1.0 + n / static_cast<double>(df));
    while (!heap.empty() && heap[0].prefix == prefix && heap[0].term == term) {
      const size_t d = heap[0].doc;
      const double w = pool[d].terms[pos[d]].second * idf;
      norm2[d] += w * w;
      if (++pos[d] < pool[d].terms.size()) {
        heap[0] = make_head(d, pos[d]);
      } else {
        heap[0] = heap.back();
        heap.pop_back();
      }
      if (!heap.empty()) sift_down(0);
    }
  }
  for (size_t d = 0; d < pool.size(); ++d) {
    const auto& terms = pool[d].terms;
    double dot = 0;
    for (const QueryTerm& t : query) {
      auto it = std::lower_bound(
          terms.begin(), terms.end(), t.term,
          [](const auto& e, std::string_view s) { return e.first < s; });
      if (it != terms.end() && it->first == t.term) {
        dot += (t.qtf * t.cos_idf) * (it->second * t.cos_idf);
      }
    }
    const double denom = std::sqrt(qnorm2) * std::sqrt(norm2[d]);
    pool[d].cosine = denom > 0 ? std::clamp(dot / denom, 0.0, 1.0) : 0.0;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LexicalDbs> OpenLexicalDbs(Store& store) {
  LexicalDbs dbs;
  const std::pair<Database*, const char*> all[] = {
      {&dbs.postings, "graph.lex.postings"},
      {&dbs.terms, "graph.lex.terms"},
      {&dbs.df, "graph.lex.df"},
      {&dbs.doclen, "graph.lex.doclen"},
      {&dbs.stats, "graph.lex.stats"},
  };
  for (const auto& [db, name] : all) {
    CTXKIT_ASSIGN_OR_RETURN(*db, StoreOpenDatabase(store, name));
  }
  return dbs;
}

TermCounts CountTerms(std::string_view text, uint32_t weight) {
  TermCounts out;
  if (weight == 0) return out;
  std::vector<std::string> terms;
  AnalyzeText(text, &terms);
  std::sort(terms.begin(), terms.end());
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
  for (size_t i = 0; i < terms.size();) {
    size_t j = i + 1;
    while (j < terms.size() && terms[j] == terms[i]) ++j;
    const uint64_t count = std::min<uint64_t>(kMax, uint64_t{j - i} * weight);
    out.emplace_back(std::move(terms[i]), static_cast<uint32_t>(count));
    i = j;
  }
  return out;
}

void AddCounts(TermCounts* into, const TermCounts& more) {
  if (more.empty()) return;
  TermCounts merged;
  merged.reserve(into->size() + more.size());
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
  size_t i = 0, j = 0;
  while (i < into->size() || j < more.size()) {
    if (j == more.size() ||
        (i < into->size() && (*into)[i].first < more[j].first)) {
      merged.push_back(std::move((*into)[i++]));
    } else if (i == into->size() || more[j].first < (*into)[i].first) {
      merged.push_back(more[j++]);
    } else {
      const uint64_t sum = uint64_t{(*into)[i].second} + more[j].second;
      merged.emplace_back(std::move((*into)[i].first),
                          static_cast<uint32_t>(std::min(sum, kMax)));
      ++i;
      ++j;
    }
  }
  *into = std::move(merged);
}

absl::Status AddContextTerms(WriteTransaction& txn, const LexicalDbs& dbs,
                             uint64_t seq, const TermCounts& counts) {
  return ApplyDelta(txn, dbs, seq, counts, /*add=*/true);
}

absl::Status RemoveContextTerms(WriteTransaction& txn, const LexicalDbs& dbs,
                                uint64_t seq, const TermCounts& counts) {
  return ApplyDelta(txn, dbs, seq, counts, /*add=*/false);
}

absl::Status DropContextTerms(WriteTransaction& txn, const LexicalDbs& dbs,
                              uint64_t seq) {
  CTXKIT_ASSIGN_OR_RETURN(TermCounts counts, ContextTerms(txn, dbs, seq));
  return ApplyDelta(txn, dbs, seq, counts, /*add=*/false);
}

absl::StatusOr<TermCounts> ContextTerms(const Transaction& txn,
                                        const LexicalDbs& dbs, uint64_t seq) {
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.terms));
  std::vector<std::pair<std::string_view, uint32_t>> views;
  CTXKIT_RETURN_IF_ERROR(ReadForward(cursor, seq, &views));
  TermCounts out;
  out.reserve(views.size());
  for (const auto& [term, tf] : views) out.emplace_back(std::string(term), tf);
  return out;
}

absl::StatusOr<std::vector<LexicalHit>> SearchContexts(
    const Transaction& txn, const LexicalDbs& dbs, std::string_view query,
    size_t limit, const std::function<bool(uint64_t seq)>& accept) {
  if (limit == 0) return absl::InvalidArgumentError("limit must be at least 1");
  std::vector<LexicalHit> hits;
  const TermCounts counts = CountTerms(query, 1);
  if (counts.empty()) return hits;
  CTXKIT_ASSIGN_OR_RETURN(LexStats stats, ReadLexStats(txn, dbs));
  if (stats.n == 0 || stats.sum == 0) return hits;

  std::vector<QueryTerm> terms(counts.size());
  CTXKIT_ASSIGN_OR_RETURN(Cursor postings, TxnNewCursor(txn, dbs.postings));
  for (size_t i = 0; i < counts.size(); ++i) {
    QueryTerm& t = terms[i];
    t.term = counts[i].first;
    t.qtf = counts[i].second;
    CTXKIT_ASSIGN_OR_RETURN(std::string_view dfv,
                            GetOrEmpty(txn, dbs.df, t.term));
    if (!dfv.empty() && !DecodeCount(dfv, &t.df)) {
      return absl::DataLossError(
          absl::StrCat("graph.lex.df: malformed df of term ", Quoted(t.term)));
    }
    t.bm25_idf = Bm25Idf(stats.n, t.df);
    t.cos_idf =
        std::log(1.0 + static_cast<double>(stats.n) /
                           static_cast<double>(std::max<uint64_t>(t.df, 1)));
    if (t.df == 0) continue;
    std::string prefix(t.term);
    prefix.push_back('\0');
    for (postings.Seek(prefix);
         postings.Valid() && postings.key().size() == prefix.size() + 8 &&
         postings.key().substr(0, prefix.size()) == prefix;
         postings.Next()) {
      t.blocks.emplace_back(
          ReadBigEndian64(postings.key().data() + prefix.size()),
          postings.value());
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(postings));
  }
  // One allocation: growing by doubling to 100k candidates costs page
  // faults comparable to the scoring.
  uint64_t most = 0;
  for (const QueryTerm& t : terms) most = std::max(most, t.df);
  std::vector<Candidate> candidates;
  candidates.reserve(
      static_cast<size_t>(std::min(stats.n, most * terms.size())));
  CTXKIT_RETURN_IF_ERROR(ScoreBm25(txn, dbs, stats, terms, &candidates));

  // The pool: candidates in BM25 order, filtered lazily.
  const size_t pool_size =
      limit > std::numeric_limits<size_t>::max() / 4 ? limit : 4 * limit;
  std::vector<PoolDoc> pool;
  auto worse = [](const Candidate& a, const Candidate& b) {
    return BetterByBm25(b, a);
  };
  if (!accept) {
    const size_t k = std::min(pool_size, candidates.size());
    std::partial_sort(candidates.begin(), candidates.begin() + k,
                      candidates.end(), BetterByBm25);
    for (size_t i = 0; i < k; ++i) pool.push_back({.c = candidates[i]});
  } else {
    // Most filters accept most candidates: sort a prefix of twice the pool
    // first, and order the rest with a heap only if that runs out.
    const size_t k = std::min(
        candidates.size(),
        pool_size > candidates.size() / 2 ? candidates.size() : 2 * pool_size);
    std::partial_sort(candidates.begin(), candidates.begin() + k,
                      candidates.end(), BetterByBm25);
    for (size_t i = 0; i < k && pool.size() < pool_size; ++i) {
      if (accept(candidates[i].seq)) pool.push_back({.c = candidates[i]});
    }
    const auto rest = candidates.begin() + k;
    if (pool.size() < pool_size && rest != candidates.end()) {
      std::make_heap(rest, candidates.end(), worse);
      auto end = candidates.end();
      while (pool.size() < pool_size && end != rest) {
        std::pop_heap(rest, end, worse);
        --end;
        if (accept(end->seq)) pool.push_back({.c = *end});
      }
    }
  }
  if (pool.empty()) return hits;

  CTXKIT_ASSIGN_OR_RETURN(Cursor forward, TxnNewCursor(txn, dbs.terms));
  for (PoolDoc& doc : pool) {
    CTXKIT_RETURN_IF_ERROR(ReadForward(forward, doc.c.seq, &doc.terms));
    if (doc.terms.empty()) {
      return absl::DataLossError(absl::StrCat(
          "graph.lex: context ", doc.c.seq,
          " has postings but no forward index: the lexical index is out of "
          "step"));
    }
  }
  CTXKIT_RETURN_IF_ERROR(ScoreCosine(txn, dbs, stats, terms, pool));
  std::sort(pool.begin(), pool.end(), [](const PoolDoc& a, const PoolDoc& b) {
    if (a.cosine != b.cosine) return a.cosine > b.cosine;
    return BetterByBm25(a.c, b.c);
  });
  const size_t n = std::min(limit, pool.size());
  hits.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    hits.push_back({.seq = pool[i].c.seq,
                    .bm25 = pool[i].c.bm25,
                    .cosine = pool[i].cosine});
  }
  return hits;
}

absl::StatusOr<std::vector<std::string>> CheckLexical(
    const Transaction& txn, const LexicalDbs& dbs,
    const std::map<uint64_t, TermCounts>& expected) {
  std::vector<std::string> problems;
  auto report = [&](std::string p) {
    if (problems.size() + 1 < kMaxLexicalProblems) {
      problems.push_back(std::move(p));
    } else if (problems.size() + 1 == kMaxLexicalProblems) {
      problems.push_back(absl::StrCat("more problems; only the first ",
                                      kMaxLexicalProblems - 1, " are listed"));
    }
  };

  // The forward index.
  std::map<uint64_t, TermCounts> forward;
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c, TxnNewCursor(txn, dbs.terms));
    for (c.SeekToFirst(); c.Valid(); c.Next()) {
      if (c.key().size() <= 8) {
        report(absl::StrCat("graph.lex.terms: key of ", c.key().size(),
                            " bytes, too short for a seq and a term"));
        continue;
      }
      const uint64_t seq = ReadBigEndian64(c.key().data());
      const std::string_view term = c.key().substr(8);
      uint64_t tf = 0;
      if (!DecodeCount(c.value(), &tf) ||
          tf > std::numeric_limits<uint32_t>::max()) {
        report(absl::StrCat("graph.lex.terms: malformed count of term ",
                            Quoted(term), " of context ", seq));
        continue;
      }
      forward[seq].emplace_back(std::string(term), static_cast<uint32_t>(tf));
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(c));
  }

  // The postings, by context; key order is term order, so each context's
  // list comes out sorted.
  std::map<uint64_t, TermCounts> posted;
  std::map<std::string, uint64_t> df_recount;
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c, TxnNewCursor(txn, dbs.postings));
    std::vector<BlockEntry> entries;
    for (c.SeekToFirst(); c.Valid(); c.Next()) {
      const std::string_view key = c.key();
      if (key.size() < 10 || key[key.size() - 9] != '\0') {
        report(absl::StrCat("graph.lex.postings: malformed key ", Quoted(key)));
        continue;
      }
      const std::string_view term = key.substr(0, key.size() - 9);
      const uint64_t block = ReadBigEndian64(key.data() + key.size() - 8);
      if (term.find('\0') != std::string_view::npos ||
          block > (std::numeric_limits<uint64_t>::max() >> kLexPostingsShift)) {
        report(absl::StrCat("graph.lex.postings: malformed key ", Quoted(key)));
        continue;
      }
      if (!DecodeBlock(c.value(), &entries)) {
        report(absl::StrCat("graph.lex.postings: malformed block ", block,
                            " of term ", Quoted(term)));
        continue;
      }
      for (const BlockEntry& e : entries) {
        posted[block << kLexPostingsShift | e.low].emplace_back(
            std::string(term), e.tf);
        ++df_recount[std::string(term)];
      }
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(c));
  }

  // Compares two documents; `what` names the pair.
  auto compare = [&](uint64_t seq, const TermCounts* a, const TermCounts* b,
                     std::string_view a_name, std::string_view b_name) {
    static const TermCounts kNone;
    if (a == nullptr) a = &kNone;
    if (b == nullptr) b = &kNone;
    size_t i = 0, j = 0;
    while (i < a->size() || j < b->size()) {
      if (j == b->size() || (i < a->size() && (*a)[i].first < (*b)[j].first)) {
        report(absl::StrCat("context ", seq, ": term ", Quoted((*a)[i].first),
                            " is in ", AV(a_name), " (", (*a)[i].second,
                            ") but not in ", AV(b_name)));
        ++i;
      } else if (i == a->size() || (*b)[j].first < (*a)[i].first) {
        report(absl::StrCat("context ", seq, ": term ", Quoted((*b)[j].first),
                            " is in ", AV(b_name), " (", (*b)[j].second,
                            ") but not in ", AV(a_name)));
        ++j;
      } else {
        if ((*a)[i].second != (*b)[j].second) {
          report(absl::StrCat("context ", seq, ": term ", Quoted((*a)[i].first),
                              " counts ", (*a)[i].second, " in ", AV(a_name),
                              " but ", (*b)[j].second, " in ", AV(b_name)));
        }
        ++i;
        ++j;
      }
    }
  };
  auto find = [](const std::map<uint64_t, TermCounts>& m,
                 uint64_t seq) -> const TermCounts* {
    auto it = m.find(seq);
    return it == m.end() ? nullptr : &it->second;
  };
  std::vector<uint64_t> seqs;
  for (const auto& [seq, unused] : forward) seqs.push_back(seq);
  for (const auto& [seq, unused] : posted) seqs.push_back(seq);
  for (const auto& [seq, unused] : expected) seqs.push_back(seq);
  std::sort(seqs.begin(), seqs.end());
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  for (uint64_t seq : seqs) {
    compare(seq, find(forward, seq), find(posted, seq), "graph.lex.terms",
            "graph.lex.postings");
    compare(seq, find(forward, seq), find(expected, seq), "graph.lex.terms",
            "the expected document");
  }

  // df against the recount.
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c, TxnNewCursor(txn, dbs.df));
    auto it = df_recount.begin();
    c.SeekToFirst();
    while (c.Valid() || it != df_recount.end()) {
      if (!c.Valid() || (it != df_recount.end() && it->first < c.key())) {
        report(absl::StrCat("graph.lex.df: term ", Quoted(it->first),
                            " is held by ", it->second,
                            " contexts but has no df"));
        ++it;
        continue;
      }
      uint64_t df = 0;
      if (!DecodeCount(c.value(), &df)) {
        report(absl::StrCat("graph.lex.df: malformed df of term ",
                            Quoted(c.key())));
      } else if (it == df_recount.end() || c.key() < it->first) {
        report(absl::StrCat("graph.lex.df: term ", Quoted(c.key()), " has df ",
                            df, " but no postings"));
      } else if (df != it->second) {
        report(absl::StrCat("graph.lex.df: term ", Quoted(c.key()), " has df ",
                            df, " but is held by ", it->second, " contexts"));
      }
      if (it != df_recount.end() && c.key() == it->first) ++it;
      c.Next();
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(c));
  }

  // Document lengths and totals against the forward index.
  std::map<uint64_t, uint64_t> lengths;
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c, TxnNewCursor(txn, dbs.doclen));
    for (c.SeekToFirst(); c.Valid(); c.Next()) {
      if (c.key().size() != 8 || c.value().size() != kLexDoclenBlockBytes) {
        report(absl::StrCat("graph.lex.doclen: malformed entry ",
                            Quoted(c.key())));
        continue;
      }
      const uint64_t block = ReadBigEndian64(c.key().data());
      bool any = false;
      for (size_t i = 0; i < kLexDoclenPerBlock; ++i) {
        const uint32_t dl = ReadLe32(c.value().data() + 4 * i);
        if (dl == 0) continue;
        any = true;
        lengths[block << kLexDoclenShift | i] = dl;
      }
      if (!any) {
        report(absl::StrCat("graph.lex.doclen: block ", block,
                            " holds no length but is stored"));
      }
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(c));
  }
  LexStats recount;
  {
    std::vector<uint64_t> all;
    for (const auto& [seq, unused] : forward) all.push_back(seq);
    for (const auto& [seq, unused] : lengths) all.push_back(seq);
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    for (uint64_t seq : all) {
      uint64_t sum = 0;
      if (const TermCounts* doc = find(forward, seq)) {
        for (const auto& [term, tf] : *doc) sum += tf;
      }
      auto it = lengths.find(seq);
      const uint64_t dl = it == lengths.end() ? 0 : it->second;
      if (dl != sum) {
        report(absl::StrCat("graph.lex.doclen: context ", seq, " has length ",
                            dl, " but its counts sum to ", sum));
      }
      if (sum > 0) {
        ++recount.n;
        recount.sum += sum;
      }
    }
  }
  absl::StatusOr<LexStats> stats = ReadLexStats(txn, dbs);
  if (absl::IsDataLoss(stats.status())) {
    report(std::string(stats.status().message()));
  } else {
    CTXKIT_RETURN_IF_ERROR(stats.status());
    if (stats->n != recount.n || stats->sum != recount.sum) {
      report(absl::StrCat(
          "graph.lex.stats: totals say ", stats->n, " contexts of ", stats->sum,
          " terms; a recount finds ", recount.n, " of ", recount.sum));
    }
  }
  return problems;
}

}  // namespace ctxkit::internal
