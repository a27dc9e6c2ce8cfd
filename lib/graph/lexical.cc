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

// Seqs per postings block; seqs or ids per slot block (graph.lex.doclen,
// graph.lex.dfs; header comment).
constexpr int kLexPostingsShift = 7;
constexpr uint64_t kLexPostingsLowMask = (uint64_t{1} << kLexPostingsShift) - 1;
constexpr int kLexSlotShift = 8;
constexpr size_t kLexSlotsPerBlock = size_t{1} << kLexSlotShift;
constexpr size_t kLexSlotBlockBytes = kLexSlotsPerBlock * 4;
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

// The key of the slot block (graph.lex.doclen by seq, graph.lex.dfs by id)
// holding slot `index`, and the slot's offset in the block's value.
std::string SlotBlockKey(uint64_t index) {
  std::string key;
  AppendBigEndian64(&key, index >> kLexSlotShift);
  return key;
}
size_t SlotOffset(uint64_t index) {
  return 4 * static_cast<size_t>(index & (kLexSlotsPerBlock - 1));
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

// A whole value that is one varint > 0: a tf or a df before term ids
// (format 2, read only by the upgrade).
bool DecodeCount(std::string_view value, uint64_t* v) {
  RecordReader r(value);
  return r.GetVarint(v) && r.AtEnd() && *v > 0;
}

// A graph.lex.df or graph.lex.terms value: a count in [1, 2^32 - 1] (a df,
// which graph.lex.dfs holds in 32 bits, or a tf) and a term id.
bool DecodeCountAndId(std::string_view value, uint32_t* count, uint64_t* id) {
  RecordReader r(value);
  uint64_t c = 0;
  if (!r.GetVarint(&c) || !r.GetVarint(id) || !r.AtEnd() || c == 0 ||
      c > std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  *count = static_cast<uint32_t>(c);
  return true;
}

std::string EncodeCountAndId(uint64_t count, uint64_t id) {
  std::string out;
  PutVarint(&out, count);
  PutVarint(&out, id);
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
  uint64_t next_id = 0;
};

absl::StatusOr<LexStats> ReadLexStats(const Transaction& txn,
                                      const LexicalDbs& dbs) {
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.stats, kLexStatsKey);
  if (absl::IsNotFound(v.status())) return LexStats{};
  CTXKIT_RETURN_IF_ERROR(v.status());
  LexStats s;
  RecordReader r(*v);
  if (!r.GetVarint(&s.n) || !r.GetVarint(&s.sum) || !r.GetVarint(&s.next_id) ||
      !r.AtEnd()) {
    return absl::DataLossError("graph.lex.stats: malformed totals");
  }
  return s;
}

std::string EncodeLexStats(const LexStats& s) {
  std::string out;
  PutVarint(&out, s.n);
  PutVarint(&out, s.sum);
  PutVarint(&out, s.next_id);
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

// The slot block of `db` holding slot `index`, as a copy to modify: all
// zeros when absent. DATA_LOSS naming `what` when it is not 256 slots.
absl::StatusOr<std::string> ReadSlotBlock(const Transaction& txn, Database db,
                                          std::string_view key,
                                          std::string_view what) {
  CTXKIT_ASSIGN_OR_RETURN(std::string_view stored, GetOrEmpty(txn, db, key));
  if (stored.empty()) return std::string(kLexSlotBlockBytes, '\0');
  if (stored.size() != kLexSlotBlockBytes) {
    return absl::DataLossError(absl::StrCat(AV(what), ": malformed block ",
                                            ReadBigEndian64(key.data())));
  }
  return std::string(stored);
}

// Stores a slot block, deleting it when every slot is 0 (header comment).
absl::Status WriteSlotBlock(WriteTransaction& txn, Database db,
                            std::string_view key, const std::string& block) {
  if (block.find_first_not_of('\0') == std::string::npos) {
    return TxnDelete(txn, db, key).status();
  }
  return TxnPut(txn, db, key, block);
}

// Adds (`add`) or subtracts `counts` for context `seq`.
absl::Status ApplyDelta(WriteTransaction& txn, const LexicalDbs& dbs,
                        uint64_t seq, const TermCounts& counts, bool add) {
  CTXKIT_RETURN_IF_ERROR(ValidateCounts(counts));
  if (counts.empty()) return absl::OkStatus();
  // First: a term new to the index takes its id from the counter.
  CTXKIT_ASSIGN_OR_RETURN(LexStats stats, ReadLexStats(txn, dbs));
  const auto low = static_cast<uint8_t>(seq & kLexPostingsLowMask);
  std::vector<BlockEntry> entries;
  std::string block;
  uint64_t delta = 0;
  // The changed dfs as (id, new df), written block by block at the end: a
  // batch's new terms have neighbouring ids, so they share blocks.
  std::vector<std::pair<uint64_t, uint32_t>> changed_dfs;
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
    uint64_t id = 0;
    if ((old_tf == 0) != (new_tf == 0)) {
      // The df changes: its entry gives the id too.
      CTXKIT_ASSIGN_OR_RETURN(std::string_view dfv,
                              GetOrEmpty(txn, dbs.df, term));
      uint32_t df = 0;
      if (!dfv.empty() && !DecodeCountAndId(dfv, &df, &id)) {
        return absl::DataLossError(
            absl::StrCat("graph.lex.df: malformed df of term ", Quoted(term)));
      }
      if (new_tf > 0) {
        if (df == std::numeric_limits<uint32_t>::max()) {
          return absl::OutOfRangeError(
              absl::StrCat("counts: term ", Quoted(term),
                           " would be held by more than 2^32 - 1 contexts"));
        }
        if (df == 0) id = stats.next_id++;
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
        CTXKIT_RETURN_IF_ERROR(
            TxnPut(txn, dbs.df, term, EncodeCountAndId(df, id)));
      }
      changed_dfs.emplace_back(id, df);
    } else {
      // The term stays in the document: its forward entry, rewritten below
      // anyway, has the id.
      CTXKIT_ASSIGN_OR_RETURN(std::string_view fv,
                              GetOrEmpty(txn, dbs.terms, fkey));
      uint32_t stored_tf = 0;
      if (!DecodeCountAndId(fv, &stored_tf, &id) || stored_tf != old_tf) {
        return absl::DataLossError(absl::StrCat(
            "graph.lex.terms: term ", Quoted(term), " of context ", seq,
            " is missing, malformed or counted apart from its posting: the "
            "lexical index is out of step"));
      }
    }
    if (new_tf == 0) {
      CTXKIT_RETURN_IF_ERROR(TxnDelete(txn, dbs.terms, fkey).status());
    } else {
      CTXKIT_RETURN_IF_ERROR(
          TxnPut(txn, dbs.terms, fkey, EncodeCountAndId(new_tf, id)));
    }
    delta += count;
  }

  // The dfs by id, a block at a time.
  std::sort(changed_dfs.begin(), changed_dfs.end());
  for (size_t i = 0; i < changed_dfs.size();) {
    const std::string key = SlotBlockKey(changed_dfs[i].first);
    CTXKIT_ASSIGN_OR_RETURN(std::string dfs,
                            ReadSlotBlock(txn, dbs.dfs, key, "graph.lex.dfs"));
    const uint64_t block_of = changed_dfs[i].first >> kLexSlotShift;
    for (; i < changed_dfs.size() &&
           changed_dfs[i].first >> kLexSlotShift == block_of;
         ++i) {
      WriteLe32(dfs.data() + SlotOffset(changed_dfs[i].first),
                changed_dfs[i].second);
    }
    CTXKIT_RETURN_IF_ERROR(WriteSlotBlock(txn, dbs.dfs, key, dfs));
  }

  // The document length and the totals.
  const std::string dkey = SlotBlockKey(seq);
  CTXKIT_ASSIGN_OR_RETURN(
      std::string lengths,
      ReadSlotBlock(txn, dbs.doclen, dkey, "graph.lex.doclen"));
  char* slot = lengths.data() + SlotOffset(seq);
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
  CTXKIT_RETURN_IF_ERROR(WriteSlotBlock(txn, dbs.doclen, dkey, lengths));
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
  // An index emptied by removals is stored exactly as a new one: no entries,
  // so the id counter starts over too.
  if (stats.n == 0 && stats.sum == 0) {
    return TxnDelete(txn, dbs.stats, kLexStatsKey).status();
  }
  return TxnPut(txn, dbs.stats, kLexStatsKey, EncodeLexStats(stats));
}

// One forward index entry; the term is a view into the snapshot.
struct ForwardTerm {
  std::string_view term;
  uint32_t tf = 0;
  uint64_t id = 0;
};

// The forward index entries of `seq`, in term order (valid until the
// transaction ends or writes).
absl::Status ReadForward(Cursor& cursor, uint64_t seq,
                         std::vector<ForwardTerm>* out) {
  out->clear();
  std::string prefix;
  AppendBigEndian64(&prefix, seq);
  for (cursor.Seek(prefix); cursor.Valid() && cursor.key().size() > 8 &&
                            cursor.key().substr(0, 8) == prefix;
       cursor.Next()) {
    ForwardTerm& t = out->emplace_back();
    t.term = cursor.key().substr(8);
    if (!DecodeCountAndId(cursor.value(), &t.tf, &t.id)) {
      return absl::DataLossError(
          absl::StrCat("graph.lex.terms: malformed entry of term ",
                       Quoted(t.term), " of context ", seq));
    }
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
    const uint64_t want = range >> (kLexSlotShift - kLexPostingsShift);
    if (want != length_block) {
      length_block = want;
      std::string key;
      AppendBigEndian64(&key, want);
      lengths.Seek(key);
      CTXKIT_RETURN_IF_ERROR(CursorStatus(lengths));
      length_view = lengths.Valid() && lengths.key() == key
                        ? lengths.value()
                        : std::string_view();
      if (!length_view.empty() && length_view.size() != kLexSlotBlockBytes) {
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
        const uint32_t dl = length_view.empty()
                                ? 0
                                : ReadLe32(length_view.data() +
                                           4 * (seq & (kLexSlotsPerBlock - 1)));
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
  std::vector<ForwardTerm> terms = {};
  double cosine = 0;
};

// The distinct ids of the pool's terms, ascending, and each one's position
// among them. When ids are dense (at most 64 per pool term, the usual case)
// a bitmap with per-word ranks finds both without sorting 10k ids and
// binary-searching them, which cost a third of the cosine; a vocabulary
// churned far past its size (ids are never reused while the index is not
// empty) falls back to a sort.
class PoolIds {
 public:
  // DATA_LOSS naming the term when an id is not below the counter (ids
  // are, so the bitmap is never indexed past its end).
  absl::Status Build(const std::vector<PoolDoc>& pool, uint64_t next_id) {
    size_t terms = 0;
    for (const PoolDoc& doc : pool) {
      terms += doc.terms.size();
      for (const ForwardTerm& t : doc.terms) {
        if (t.id >= next_id) {
          return absl::DataLossError(absl::StrCat(
              "graph.lex.terms: term ", Quoted(t.term), " of context ",
              doc.c.seq, " has id ", t.id, ", not below the next id ", next_id,
              ": the lexical index is out of step"));
        }
      }
    }
    dense_ = next_id / 64 <= terms;
    if (!dense_) {
      for (const PoolDoc& doc : pool) {
        for (const ForwardTerm& t : doc.terms) sorted_.push_back(t.id);
      }
      std::sort(sorted_.begin(), sorted_.end());
      sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
      return absl::OkStatus();
    }
    bits_.assign(static_cast<size_t>(next_id / 64 + 1), 0);
    for (const PoolDoc& doc : pool) {
      for (const ForwardTerm& t : doc.terms) {
        bits_[t.id >> 6] |= uint64_t{1} << (t.id & 63);
      }
    }
    ranks_.resize(bits_.size());
    uint32_t rank = 0;
    for (size_t w = 0; w < bits_.size(); ++w) {
      ranks_[w] = rank;
      rank += static_cast<uint32_t>(std::popcount(bits_[w]));
      for (uint64_t b = bits_[w]; b != 0; b &= b - 1) {
        sorted_.push_back(uint64_t{w} << 6 |
                          static_cast<uint64_t>(std::countr_zero(b)));
      }
    }
    return absl::OkStatus();
  }

  const std::vector<uint64_t>& sorted() const { return sorted_; }

  // Precondition: `id` is one of the pool's.
  size_t IndexOf(uint64_t id) const {
    if (!dense_) {
      return static_cast<size_t>(
          std::lower_bound(sorted_.begin(), sorted_.end(), id) -
          sorted_.begin());
    }
    const uint64_t below = (uint64_t{1} << (id & 63)) - 1;
    return ranks_[id >> 6] +
           static_cast<size_t>(std::popcount(bits_[id >> 6] & below));
  }

 private:
  bool dense_ = false;
  std::vector<uint64_t> sorted_;
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> ranks_;
};

// Sets each pool document's cosine with the query. The document norms
// need the df of every term of every pool document: their distinct ids are
// listed in order and the dfs read from graph.lex.dfs in key order, a block
// of 256 at a time, so some 8k dfs of a pool of 20 take a few hundred
// cursor steps rather than a B-tree search each.
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
  PoolIds pool_ids;
  CTXKIT_RETURN_IF_ERROR(pool_ids.Build(pool, stats.next_id));
  const std::vector<uint64_t>& ids = pool_ids.sorted();
  // The cosine's idf of ids[i]; computed once per id, with the same
  // expression for every document, so every norm gets the same bits.
  std::vector<double> idf(ids.size());
  CTXKIT_ASSIGN_OR_RETURN(Cursor blocks, TxnNewCursor(txn, dbs.dfs));
  for (size_t i = 0; i < ids.size();) {
    const std::string key = SlotBlockKey(ids[i]);
    // Wanted blocks ascend and are mostly adjacent: a few steps forward are
    // cheaper than a seek's binary search of the page.
    for (int steps = 0; blocks.Valid() && blocks.key() < key && steps < 4;
         ++steps) {
      blocks.Next();
    }
    if (!blocks.Valid() || blocks.key() < key) blocks.Seek(key);
    CTXKIT_RETURN_IF_ERROR(CursorStatus(blocks));
    const std::string_view dfs = blocks.Valid() && blocks.key() == key
                                     ? blocks.value()
                                     : std::string_view();
    if (!dfs.empty() && dfs.size() != kLexSlotBlockBytes) {
      return absl::DataLossError(absl::StrCat("graph.lex.dfs: malformed block ",
                                              ids[i] >> kLexSlotShift));
    }
    const uint64_t block = ids[i] >> kLexSlotShift;
    for (; i < ids.size() && ids[i] >> kLexSlotShift == block; ++i) {
      const uint32_t df =
          dfs.empty() ? 0 : ReadLe32(dfs.data() + SlotOffset(ids[i]));
      if (df == 0) {
        // Name the term: the error path may search.
        for (const PoolDoc& doc : pool) {
          for (const ForwardTerm& t : doc.terms) {
            if (t.id != ids[i]) continue;
            return absl::DataLossError(
                absl::StrCat("graph.lex.dfs: term ", Quoted(t.term), " (id ",
                             t.id, ") of context ", doc.c.seq,
                             " has no df: the lexical index is out of step"));
          }
        }
      }
      idf[i] = std::log(1.0 + n / static_cast<double>(df));
    }
  }
  std::vector<double> norm2(pool.size(), 0.0);
  for (size_t d = 0; d < pool.size(); ++d) {
    // In term order, as the norm has always been summed.
    for (const ForwardTerm& t : pool[d].terms) {
      const double w = t.tf * idf[pool_ids.IndexOf(t.id)];
      norm2[d] += w * w;
    }
  }
  for (size_t d = 0; d < pool.size(); ++d) {
    const auto& terms = pool[d].terms;
    double dot = 0;
    for (const QueryTerm& t : query) {
      auto it = std::lower_bound(
          terms.begin(), terms.end(), t.term,
          [](const ForwardTerm& e, std::string_view s) { return e.term < s; });
      if (it != terms.end() && it->term == t.term) {
        dot += (t.qtf * t.cos_idf) * (it->tf * t.cos_idf);
      }
    }
    const double denom = std::sqrt(qnorm2) * std::sqrt(norm2[d]);
    pool[d].cosine = denom > 0 ? std::clamp(dot / denom, 0.0, 1.0) : 0.0;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LexicalDbs> OpenLexicalDbsWith(
    const std::function<absl::StatusOr<Database>(std::string_view name)>&
        open) {
  LexicalDbs dbs;
  const std::pair<Database*, std::string_view> all[] = {
      {&dbs.postings, "graph.lex.postings"}, {&dbs.terms, "graph.lex.terms"},
      {&dbs.df, kLexicalDfDatabase},         {&dbs.dfs, "graph.lex.dfs"},
      {&dbs.doclen, "graph.lex.doclen"},     {&dbs.stats, "graph.lex.stats"},
  };
  for (const auto& [db, name] : all) {
    CTXKIT_ASSIGN_OR_RETURN(*db, open(name));
  }
  return dbs;
}

absl::StatusOr<LexicalDbs> OpenLexicalDbs(Store& store) {
  return OpenLexicalDbsWith(
      [&](std::string_view name) { return StoreOpenDatabase(store, name); });
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
  std::vector<ForwardTerm> views;
  CTXKIT_RETURN_IF_ERROR(ReadForward(cursor, seq, &views));
  TermCounts out;
  out.reserve(views.size());
  for (const ForwardTerm& t : views)
    out.emplace_back(std::string(t.term), t.tf);
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
    uint32_t df = 0;
    uint64_t id = 0;
    if (!dfv.empty() && !DecodeCountAndId(dfv, &df, &id)) {
      return absl::DataLossError(
          absl::StrCat("graph.lex.df: malformed df of term ", Quoted(t.term)));
    }
    t.df = df;
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

namespace {

// Every non-zero slot of a slot-block database (graph.lex.dfs by id,
// graph.lex.doclen by seq), for CheckLexical; a malformed entry or a block
// of zeros goes to `report`, naming `name` and `what` a slot holds.
template <typename Report>
absl::StatusOr<std::map<uint64_t, uint32_t>> ReadSlotBlocks(
    const Transaction& txn, Database db, std::string_view name,
    std::string_view what, Report& report) {
  std::map<uint64_t, uint32_t> slots;
  CTXKIT_ASSIGN_OR_RETURN(Cursor c, TxnNewCursor(txn, db));
  for (c.SeekToFirst(); c.Valid(); c.Next()) {
    if (c.key().size() != 8 || c.value().size() != kLexSlotBlockBytes) {
      report(absl::StrCat(AV(name), ": malformed entry ", Quoted(c.key())));
      continue;
    }
    const uint64_t block = ReadBigEndian64(c.key().data());
    bool any = false;
    for (size_t i = 0; i < kLexSlotsPerBlock; ++i) {
      const uint32_t v = ReadLe32(c.value().data() + 4 * i);
      if (v == 0) continue;
      any = true;
      slots[block << kLexSlotShift | i] = v;
    }
    if (!any) {
      report(absl::StrCat(AV(name), ": block ", block, " holds no ", AV(what),
                          " but is stored"));
    }
  }
  CTXKIT_RETURN_IF_ERROR(CursorStatus(c));
  return slots;
}

}  // namespace

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

  // The forward index, and its ids for the check against graph.lex.df.
  std::map<uint64_t, TermCounts> forward;
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>>
      forward_ids;  // term -> (seq, id)
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
      uint32_t tf = 0;
      uint64_t id = 0;
      if (!DecodeCountAndId(c.value(), &tf, &id)) {
        report(absl::StrCat("graph.lex.terms: malformed entry of term ",
                            Quoted(term), " of context ", seq));
        continue;
      }
      forward[seq].emplace_back(std::string(term), tf);
      forward_ids[std::string(term)].emplace_back(seq, id);
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

  // df against the recount; the ids: unique, the forward index's, mirrored
  // with their dfs in graph.lex.dfs.
  std::map<uint64_t, std::pair<std::string, uint32_t>> by_id;  // -> term, df
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
      const std::string_view term = c.key();
      uint32_t df = 0;
      uint64_t id = 0;
      if (!DecodeCountAndId(c.value(), &df, &id)) {
        report(
            absl::StrCat("graph.lex.df: malformed df of term ", Quoted(term)));
      } else {
        if (it == df_recount.end() || term < it->first) {
          report(absl::StrCat("graph.lex.df: term ", Quoted(term), " has df ",
                              df, " but no postings"));
        } else if (df != it->second) {
          report(absl::StrCat("graph.lex.df: term ", Quoted(term), " has df ",
                              df, " but is held by ", it->second, " contexts"));
        }
        auto [owner, inserted] = by_id.try_emplace(id, std::string(term), df);
        if (!inserted) {
          report(absl::StrCat("graph.lex.df: terms ",
                              Quoted(owner->second.first), " and ",
                              Quoted(term), " share id ", id));
        }
        if (auto f = forward_ids.find(std::string(term));
            f != forward_ids.end()) {
          for (const auto& [seq, fid] : f->second) {
            if (fid != id) {
              report(absl::StrCat("graph.lex.terms: term ", Quoted(term),
                                  " of context ", seq, " has id ", fid,
                                  " but graph.lex.df gives it id ", id));
            }
          }
        }
      }
      if (it != df_recount.end() && term == it->first) ++it;
      c.Next();
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(c));
  }
  {
    CTXKIT_ASSIGN_OR_RETURN(
        const auto stored,  // id -> df in graph.lex.dfs
        ReadSlotBlocks(txn, dbs.dfs, "graph.lex.dfs", "df", report));
    auto s = stored.begin();
    auto d = by_id.begin();
    while (s != stored.end() || d != by_id.end()) {
      if (d == by_id.end() || (s != stored.end() && s->first < d->first)) {
        report(absl::StrCat("graph.lex.dfs: id ", s->first, " has df ",
                            s->second, " but no term in graph.lex.df"));
        ++s;
      } else if (s == stored.end() || d->first < s->first) {
        report(absl::StrCat("graph.lex.dfs: id ", d->first, " (term ",
                            Quoted(d->second.first), ") has no df but ",
                            d->second.second, " in graph.lex.df"));
        ++d;
      } else {
        if (s->second != d->second.second) {
          report(absl::StrCat("graph.lex.dfs: id ", d->first, " (term ",
                              Quoted(d->second.first), ") has df ", s->second,
                              " but ", d->second.second, " in graph.lex.df"));
        }
        ++s;
        ++d;
      }
    }
  }

  // Document lengths and totals against the forward index.
  CTXKIT_ASSIGN_OR_RETURN(
      const auto lengths,
      ReadSlotBlocks(txn, dbs.doclen, "graph.lex.doclen", "length", report));
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
    if (!by_id.empty() && stats->next_id <= by_id.rbegin()->first) {
      report(absl::StrCat("graph.lex.stats: the next id, ", stats->next_id,
                          ", is not above id ", by_id.rbegin()->first,
                          " of term ", Quoted(by_id.rbegin()->second.first)));
    }
  }
  return problems;
}

absl::Status AssignLexicalTermIds(WriteTransaction& txn,
                                  const LexicalDbs& dbs) {
  // The terms with their dfs, in key order, which is also the ids' order:
  // term i gets id i.
  std::vector<std::pair<std::string, uint32_t>> terms;
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c, TxnNewCursor(txn, dbs.df));
    for (c.SeekToFirst(); c.Valid(); c.Next()) {
      uint64_t df = 0;
      if (!DecodeCount(c.value(), &df) ||
          df > std::numeric_limits<uint32_t>::max()) {
        return absl::DataLossError(absl::StrCat(
            "graph.lex.df: malformed format-2 df of term ", Quoted(c.key())));
      }
      terms.emplace_back(std::string(c.key()), static_cast<uint32_t>(df));
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(c));
  }
  std::string dfs;
  for (size_t id = 0; id < terms.size(); ++id) {
    CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.df, terms[id].first,
                                  EncodeCountAndId(terms[id].second, id)));
    if (dfs.empty()) dfs.assign(kLexSlotBlockBytes, '\0');
    WriteLe32(dfs.data() + SlotOffset(id), terms[id].second);
    if (id + 1 == terms.size() || ((id + 1) & (kLexSlotsPerBlock - 1)) == 0) {
      CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.dfs, SlotBlockKey(id), dfs));
      dfs.clear();
    }
  }

  // The forward index, a chunk at a time: its keys are read with a cursor
  // that is closed before the chunk is rewritten (writes would move its
  // pages under it), and a store's whole forward index may not fit in
  // memory.
  constexpr size_t kChunk = 4096;
  std::vector<std::pair<std::string, std::string>> chunk;
  std::string after;
  for (bool first = true;; first = false) {
    chunk.clear();
    {
      CTXKIT_ASSIGN_OR_RETURN(Cursor c, TxnNewCursor(txn, dbs.terms));
      if (first) {
        c.SeekToFirst();
      } else {
        c.Seek(after);
        if (c.Valid() && c.key() == after) c.Next();
      }
      for (; c.Valid() && chunk.size() < kChunk; c.Next()) {
        const std::string_view key = c.key();
        const uint64_t seq = key.size() > 8 ? ReadBigEndian64(key.data()) : 0;
        const std::string_view term = key.size() > 8 ? key.substr(8) : "";
        uint64_t tf = 0;
        if (key.size() <= 8 || !DecodeCount(c.value(), &tf) ||
            tf > std::numeric_limits<uint32_t>::max()) {
          return absl::DataLossError(absl::StrCat(
              "graph.lex.terms: malformed format-2 entry ", Quoted(key)));
        }
        auto it = std::lower_bound(
            terms.begin(), terms.end(), term,
            [](const auto& e, std::string_view t) { return e.first < t; });
        if (it == terms.end() || it->first != term) {
          return absl::DataLossError(absl::StrCat("graph.lex.terms: term ",
                                                  Quoted(term), " of context ",
                                                  seq, " has no df"));
        }
        chunk.emplace_back(
            std::string(key),
            EncodeCountAndId(tf, static_cast<uint64_t>(it - terms.begin())));
      }
      CTXKIT_RETURN_IF_ERROR(CursorStatus(c));
    }
    for (const auto& [key, value] : chunk) {
      CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.terms, key, value));
    }
    if (chunk.size() < kChunk) break;
    after = chunk.back().first;
  }

  // The totals gain the counter.
  CTXKIT_ASSIGN_OR_RETURN(std::string_view totals,
                          GetOrEmpty(txn, dbs.stats, kLexStatsKey));
  if (totals.empty()) {
    if (terms.empty()) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("graph.lex.stats: no totals, yet ",
                                            terms.size(), " terms have a df"));
  }
  LexStats stats;
  RecordReader r(totals);
  if (!r.GetVarint(&stats.n) || !r.GetVarint(&stats.sum) || !r.AtEnd()) {
    return absl::DataLossError("graph.lex.stats: malformed format-2 totals");
  }
  stats.next_id = terms.size();
  return TxnPut(txn, dbs.stats, kLexStatsKey, EncodeLexStats(stats));
}

}  // namespace ctxkit::internal
