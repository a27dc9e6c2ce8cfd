// The context graph's lexical index (lib/graph/lexical.h): counting, the
// incremental updates and their inverse, the search against a reference
// computation written here from the formulas, the lazy filter, ties, odd
// terms, a seeded random workload checked against a model, and
// CheckLexical against damage done behind the index's back, and the term
// ids (kept while a term is held, never reused while the index is not
// empty).

#include "lib/graph/lexical.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ctxkit/store.h"
#include "lib/base/key_codec.h"
#include "lib/references/analyzer.h"
#include "lib/store/store_internal.h"
#include "tests/unit/test_util.h"

namespace ctxkit::internal {
namespace {

using testing::Must;
using testing::TempDir;

void MustOk(const absl::Status& s) { REQUIRE_MESSAGE(s.ok(), s.ToString()); }

template <typename T>
T MustGet(absl::StatusOr<T> v) {
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return std::move(v).value();
}

bool Has(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}
bool Has(const std::string& haystack, std::string_view needle) {
  return Has(std::string_view(haystack), needle);
}
bool Has(absl::string_view haystack, std::string_view needle) {
  return Has(std::string_view(haystack.data(), haystack.size()), needle);
}

// Counts of space-separated lower-case words: the analyzer's terms for such
// text, derived without it, so the expected values do not come from the
// code under test.
TermCounts Words(const std::string& text, uint32_t weight = 1) {
  std::map<std::string, uint32_t> m;
  std::istringstream in(text);
  std::string w;
  while (in >> w) m[w] += weight;
  return TermCounts(m.begin(), m.end());
}

struct Index {
  TempDir dir;
  std::unique_ptr<Store> store;
  LexicalDbs dbs;
  // What the test believes every document holds.
  std::map<uint64_t, TermCounts> model;

  Index() {
    store = Must(Store::Open(dir.Sub("s")));
    dbs = MustGet(OpenLexicalDbs(*store));
  }

  absl::Status TryAdd(uint64_t seq, const TermCounts& counts) {
    return StoreUpdate(*store, [&](WriteTransaction& txn) {
      return AddContextTerms(txn, dbs, seq, counts);
    });
  }
  absl::Status TryRemove(uint64_t seq, const TermCounts& counts) {
    return StoreUpdate(*store, [&](WriteTransaction& txn) {
      return RemoveContextTerms(txn, dbs, seq, counts);
    });
  }
  void Add(uint64_t seq, const TermCounts& counts) {
    MustOk(TryAdd(seq, counts));
    AddCounts(&model[seq], counts);
  }
  void Add(uint64_t seq, const std::string& words) { Add(seq, Words(words)); }
  void Remove(uint64_t seq, const TermCounts& counts) {
    MustOk(TryRemove(seq, counts));
    // The model subtracts by hand.
    TermCounts& doc = model[seq];
    for (const auto& [term, c] : counts) {
      for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (it->first == term) {
          it->second -= c;
          if (it->second == 0) doc.erase(it);
          break;
        }
      }
    }
    if (doc.empty()) model.erase(seq);
  }
  void Drop(uint64_t seq) {
    MustOk(StoreUpdate(*store, [&](WriteTransaction& txn) {
      return DropContextTerms(txn, dbs, seq);
    }));
    model.erase(seq);
  }

  std::vector<LexicalHit> Search(
      const std::string& query, size_t limit,
      const std::function<bool(uint64_t)>& accept = nullptr) {
    ReadTransaction txn = MustGet(StoreBeginRead(*store));
    return MustGet(SearchContexts(txn, dbs, query, limit, accept));
  }

  std::vector<std::string> Problems() {
    ReadTransaction txn = MustGet(StoreBeginRead(*store));
    return MustGet(CheckLexical(txn, dbs, model));
  }
  void CheckClean() {
    const std::vector<std::string> problems = Problems();
    for (const std::string& p : problems) INFO(p);
    CHECK(problems.empty());
  }

  // Every entry of the six databases, for exact before/after comparison.
  std::map<std::string, std::string> Dump() {
    std::map<std::string, std::string> all;
    ReadTransaction txn = MustGet(StoreBeginRead(*store));
    const std::pair<Database, const char*> dbs_named[] = {
        {dbs.postings, "p"}, {dbs.terms, "t"},  {dbs.df, "d"},
        {dbs.dfs, "f"},      {dbs.doclen, "l"}, {dbs.stats, "s"},
    };
    for (const auto& [db, name] : dbs_named) {
      Cursor c = MustGet(TxnNewCursor(txn, db));
      for (c.SeekToFirst(); c.Valid(); c.Next()) {
        all[std::string(name) + ":" + std::string(c.key())] =
            std::string(c.value());
      }
    }
    return all;
  }
};

// The varints of a value (LEB128, decoded here from the format's
// description); empty when malformed.
std::vector<uint64_t> Varints(std::string_view v) {
  std::vector<uint64_t> out;
  uint64_t x = 0;
  int shift = 0;
  for (const char ch : v) {
    const auto byte = static_cast<unsigned char>(ch);
    x |= uint64_t{byte & 0x7Fu} << shift;
    shift += 7;
    if ((byte & 0x80) == 0) {
      out.push_back(x);
      x = 0;
      shift = 0;
    }
  }
  if (shift != 0) out.clear();
  return out;
}

std::string BigEndian64(uint64_t v) {
  std::string k;
  AppendBigEndian64(&k, v);
  return k;
}

// (df, id) of `term` in graph.lex.df; empty when absent.
std::vector<uint64_t> DfEntry(Index& index, const std::string& term) {
  const std::map<std::string, std::string> all = index.Dump();
  auto it = all.find("d:" + term);
  return it == all.end() ? std::vector<uint64_t>{} : Varints(it->second);
}

// (tf, id) of `term` in the forward index of `seq`; empty when absent.
std::vector<uint64_t> ForwardEntry(Index& index, uint64_t seq,
                                   const std::string& term) {
  const std::map<std::string, std::string> all = index.Dump();
  auto it = all.find("t:" + BigEndian64(seq) + term);
  return it == all.end() ? std::vector<uint64_t>{} : Varints(it->second);
}

// The df slot of `id` in graph.lex.dfs (0 when its block is absent).
uint32_t DfsSlot(Index& index, uint64_t id) {
  const std::map<std::string, std::string> all = index.Dump();
  auto it = all.find("f:" + BigEndian64(id >> 8));
  if (it == all.end()) return 0;
  REQUIRE(it->second.size() == 1024);
  const auto* p = reinterpret_cast<const unsigned char*>(it->second.data() +
                                                         4 * (id % 256));
  return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// (N, sum of dl, next id) in graph.lex.stats; empty when absent.
std::vector<uint64_t> Totals(Index& index) {
  const std::map<std::string, std::string> all = index.Dump();
  auto it = all.find("s:all");
  return it == all.end() ? std::vector<uint64_t>{} : Varints(it->second);
}

// BM25 and cosine of every document of `docs` for `query` (lower-case
// words separated by spaces), straight from the formulas of lexical.h.
struct Expected {
  double bm25 = 0;
  double cosine = 0;
};
std::map<uint64_t, Expected> Reference(
    const std::map<uint64_t, TermCounts>& docs, const std::string& query) {
  const double k1 = 1.2, b = 0.75;
  double n = 0, total = 0;
  std::map<std::string, double> df;
  std::map<uint64_t, std::map<std::string, double>> tf;
  std::map<uint64_t, double> dl;
  for (const auto& [seq, counts] : docs) {
    if (counts.empty()) continue;
    n += 1;
    for (const auto& [t, c] : counts) {
      df[t] += 1;
      tf[seq][t] = c;
      dl[seq] += c;
      total += c;
    }
  }
  const TermCounts q = Words(query);
  std::map<uint64_t, Expected> out;
  if (n == 0) return out;
  const double avgdl = total / n;
  auto cos_idf = [&](const std::string& t) {
    const double d = df.count(t) ? df[t] : 1;
    return std::log(1 + n / d);
  };
  double qnorm = 0;
  for (const auto& [t, c] : q) qnorm += std::pow(c * cos_idf(t), 2);
  qnorm = std::sqrt(qnorm);
  for (const auto& [seq, terms] : tf) {
    double bm25 = 0, dot = 0, dnorm = 0;
    bool matched = false;
    for (const auto& [t, c] : q) {
      auto it = terms.find(t);
      if (it == terms.end()) continue;
      matched = true;
      const double idf = std::log(1 + (n - df[t] + 0.5) / (df[t] + 0.5));
      const double f = it->second;
      bm25 += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * dl[seq] / avgdl));
      dot += c * cos_idf(t) * f * cos_idf(t);
    }
    if (!matched) continue;
    for (const auto& [t, f] : terms) dnorm += std::pow(f * cos_idf(t), 2);
    out[seq] = {bm25, dot / (qnorm * std::sqrt(dnorm))};
  }
  return out;
}

void CheckAgainstReference(Index& index, const std::string& query) {
  INFO("query: " << query);
  const std::map<uint64_t, Expected> want = Reference(index.model, query);
  // A limit whose pool (4 x limit) holds every candidate.
  const std::vector<LexicalHit> hits = index.Search(query, want.size() + 1);
  REQUIRE(hits.size() == want.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    INFO("seq " << hits[i].seq);
    REQUIRE(want.count(hits[i].seq) == 1);
    const Expected& e = want.at(hits[i].seq);
    CHECK(hits[i].bm25 == doctest::Approx(e.bm25).epsilon(1e-12));
    CHECK(hits[i].cosine == doctest::Approx(e.cosine).epsilon(1e-12));
    CHECK(hits[i].cosine >= 0);
    CHECK(hits[i].cosine <= 1);
    if (i > 0) {
      // Ordered by cosine, then bm25, then seq.
      const LexicalHit& p = hits[i - 1];
      CHECK((p.cosine > hits[i].cosine ||
             (p.cosine == hits[i].cosine &&
              (p.bm25 > hits[i].bm25 ||
               (p.bm25 == hits[i].bm25 && p.seq < hits[i].seq)))));
    }
  }
}

TEST_CASE("CountTerms counts the analyzer's terms times the weight") {
  const TermCounts counts = CountTerms("Count tokens, countTokens! tokens", 2);
  // countTokens yields count, tokens and the whole word (analyzer.h).
  const TermCounts want = {{"count", 4}, {"counttokens", 2}, {"tokens", 6}};
  CHECK(counts == want);
  CHECK(CountTerms("alpha beta", 0).empty());
  CHECK(CountTerms("  ,;  ", 1).empty());

  TermCounts into = {{"b", 1}, {"d", 2}};
  AddCounts(&into, {{"a", 5}, {"b", 3}, {"e", 1}});
  const TermCounts merged = {{"a", 5}, {"b", 4}, {"d", 2}, {"e", 1}};
  CHECK(into == merged);
  TermCounts big = {{"x", 0xFFFFFFFFu}};
  AddCounts(&big, {{"x", 7}});
  CHECK(big[0].second == 0xFFFFFFFFu);
}

TEST_CASE("the search ranks the context about the query first") {
  Index index;
  index.Add(1, "oauth login device code flow for the login page");
  index.Add(2, "the database migration adds an index to the users table");
  index.Add(3, "fix the flaky test in the login form validation");
  index.Add(4, "benchmark the tokenizer on long inputs");
  index.Add(5, "the the the the and a of to");
  std::vector<LexicalHit> hits = index.Search("OAuth login flow", 3);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].seq == 1);
  CHECK(hits[1].seq == 3);
  CHECK(hits[0].cosine > hits[1].cosine);
  CHECK(hits[0].bm25 > hits[1].bm25);

  hits = index.Search("tokenizer benchmark", 5);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 4);
  // A query of the same words as a document, and nothing else, is that
  // document's direction exactly.
  hits = index.Search("benchmark the tokenizer on long inputs", 1);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 4);
  CHECK(hits[0].cosine == doctest::Approx(1.0).epsilon(1e-12));
  index.CheckClean();
}

TEST_CASE("scores equal a straightforward computation of the formulas") {
  Index index;
  index.Add(1, "oauth login device code flow for the login page");
  index.Add(2, "the database migration adds an index to the users table");
  index.Add(3, "fix the flaky test in the login form validation");
  index.Add(4, "benchmark the tokenizer on long inputs long long");
  // A summary counted twice, as the graph adds it.
  index.Add(4, Words("tokenizer speed summary", 2));
  index.Add(300, "login login login the");  // another postings block
  for (const std::string q :
       {"login", "the login flow", "login login page", "long tokenizer",
        "summary speed the", "unknownword login", "the"}) {
    CheckAgainstReference(index, q);
  }
  index.CheckClean();
}

TEST_CASE("an empty query, a query without terms, an empty index") {
  Index index;
  CHECK(index.Search("login", 5).empty());
  index.Add(1, "login page");
  CHECK(index.Search("", 5).empty());
  CHECK(index.Search(" ?! -- ", 5).empty());
  CHECK(index.Search("absent", 5).empty());
  ReadTransaction txn = MustGet(StoreBeginRead(*index.store));
  absl::StatusOr<std::vector<LexicalHit>> zero =
      SearchContexts(txn, index.dbs, "login", 0, nullptr);
  CHECK(absl::IsInvalidArgument(zero.status()));
  CHECK(Has(zero.status().message(), "limit"));
}

TEST_CASE("adding then removing the same counts restores all but the ids") {
  Index index;
  index.Add(1, "alpha beta gamma");
  index.Add(200, "beta delta");
  std::map<std::string, std::string> before = index.Dump();
  const std::map<uint64_t, TermCounts> model_before = index.model;
  const std::vector<uint64_t> totals_before = Totals(index);
  REQUIRE(totals_before.size() == 3);
  CHECK(totals_before[2] == 4);  // alpha, beta, gamma, delta

  const TermCounts delta = Words("alpha epsilon beta beta zeta", 3);
  index.Add(1, delta);
  index.Add(129, delta);  // a new context, in a new postings block
  CHECK(index.Dump() != before);
  index.CheckClean();
  index.Remove(129, delta);
  index.Remove(1, delta);
  // Every byte but the id counter, which epsilon and zeta moved on: their
  // ids are not reused while the index holds anything.
  std::map<std::string, std::string> after = index.Dump();
  const std::vector<uint64_t> totals_after = Totals(index);
  REQUIRE(totals_after.size() == 3);
  CHECK(totals_after[0] == totals_before[0]);
  CHECK(totals_after[1] == totals_before[1]);
  CHECK(totals_after[2] == 6);
  before.erase("s:all");
  after.erase("s:all");
  CHECK(after == before);
  CHECK(index.model == model_before);
  index.CheckClean();
  ReadTransaction txn = MustGet(StoreBeginRead(*index.store));
  CHECK(MustGet(ContextTerms(txn, index.dbs, 1)) == Words("alpha beta gamma"));
  CHECK(MustGet(ContextTerms(txn, index.dbs, 129)).empty());
}

TEST_CASE("term ids: kept while held, never reused, reset when emptied") {
  Index index;
  index.Add(1, "alpha beta");  // ids in term order within a call
  CHECK(DfEntry(index, "alpha") == std::vector<uint64_t>{1, 0});
  CHECK(DfEntry(index, "beta") == std::vector<uint64_t>{1, 1});
  CHECK(ForwardEntry(index, 1, "beta") == std::vector<uint64_t>{1, 1});
  index.Add(2, "beta gamma gamma");
  CHECK(DfEntry(index, "beta") == std::vector<uint64_t>{2, 1});
  CHECK(DfEntry(index, "gamma") == std::vector<uint64_t>{1, 2});
  CHECK(ForwardEntry(index, 2, "gamma") == std::vector<uint64_t>{2, 2});
  CHECK(DfsSlot(index, 1) == 2);
  index.Add(2, "beta");  // a term already held keeps its id
  CHECK(ForwardEntry(index, 2, "beta") == std::vector<uint64_t>{2, 1});
  index.CheckClean();

  // alpha leaves the index, then comes back with a new id.
  index.Remove(1, Words("alpha"));
  CHECK(DfEntry(index, "alpha").empty());
  CHECK(DfsSlot(index, 0) == 0);
  index.Add(3, "alpha");
  CHECK(DfEntry(index, "alpha") == std::vector<uint64_t>{1, 3});
  CHECK(ForwardEntry(index, 3, "alpha") == std::vector<uint64_t>{1, 3});
  CHECK(DfsSlot(index, 3) == 1);
  CHECK(Totals(index) == std::vector<uint64_t>{3, 6, 4});
  index.CheckClean();

  // A drop keeps the ids of the terms still held.
  index.Drop(2);
  CHECK(DfEntry(index, "gamma").empty());
  CHECK(DfEntry(index, "beta") == std::vector<uint64_t>{1, 1});
  CHECK(DfsSlot(index, 2) == 0);
  CHECK(DfsSlot(index, 1) == 1);
  index.CheckClean();
  CheckAgainstReference(index, "alpha beta gamma");

  // Ids past the first dfs block: 300 new terms.
  std::string many;
  for (int i = 0; i < 300; ++i) many += "t" + std::to_string(1000 + i) + " ";
  index.Add(4, many);
  CHECK(DfEntry(index, "t1299") == std::vector<uint64_t>{1, 303});
  CHECK(DfsSlot(index, 303) == 1);
  index.CheckClean();
  CheckAgainstReference(index, "t1299 t1000 beta");

  // Few pool terms under a counter far above them: the search lists the
  // ids by sorting instead of a bitmap, with the same scores.
  index.Drop(4);
  CHECK(Totals(index) == std::vector<uint64_t>{2, 2, 304});
  CheckAgainstReference(index, "alpha beta");
  index.CheckClean();

  // Emptied, the index is stored exactly as a new one, and ids start over.
  index.Drop(1);
  index.Drop(3);
  CHECK(index.Dump().empty());
  index.Add(9, "zeta");
  CHECK(DfEntry(index, "zeta") == std::vector<uint64_t>{1, 0});
  CHECK(Totals(index) == std::vector<uint64_t>{1, 1, 1});
  index.CheckClean();
}

TEST_CASE("removing more than a context holds is DATA_LOSS naming both") {
  Index index;
  index.Add(7, "alpha beta");
  absl::Status s = index.TryRemove(7, Words("alpha alpha"));
  CHECK(absl::IsDataLoss(s));
  CHECK(Has(s.message(), "\"alpha\""));
  CHECK(Has(s.message(), "context 7"));
  s = index.TryRemove(8, Words("alpha"));
  CHECK(absl::IsDataLoss(s));
  CHECK(Has(s.message(), "context 8"));
  index.CheckClean();  // the failed updates were rolled back
}

TEST_CASE("counts that are not TermCounts are refused, naming the entry") {
  Index index;
  absl::Status s = index.TryAdd(1, {{"b", 1}, {"a", 1}});
  CHECK(absl::IsInvalidArgument(s));
  CHECK(Has(s.message(), "counts[1]"));
  s = index.TryAdd(1, {{"a", 1}, {"a", 1}});
  CHECK(Has(s.message(), "counts[1]"));
  s = index.TryAdd(1, {{"a", 0}});
  CHECK(absl::IsInvalidArgument(s));
  CHECK(Has(s.message(), "counts[0]"));
  s = index.TryAdd(1, {{"", 1}});
  CHECK(Has(s.message(), "empty term"));
  s = index.TryAdd(1, {{std::string("a\0b", 3), 1}});
  CHECK(Has(s.message(), "NUL"));
  s = index.TryAdd(1, {{std::string(kMaxTermBytes + 1, 'x'), 1}});
  CHECK(absl::IsInvalidArgument(s));
  s = index.TryAdd(1, {{"a", 0xFFFFFFFFu}});
  MustOk(s);
  s = index.TryAdd(1, {{"a", 1}});
  CHECK(absl::IsOutOfRange(s));
  CHECK(Has(s.message(), "\"a\""));
  index.model[1] = {{"a", 0xFFFFFFFFu}};
  index.CheckClean();
}

TEST_CASE("dropping a context removes its whole document") {
  Index index;
  index.Add(1, "alpha beta");
  index.Add(2, "alpha gamma");
  index.Add(2, Words("summary alpha", 2));
  index.Drop(2);
  index.CheckClean();
  CHECK(index.Search("gamma summary", 5).empty());
  const std::vector<LexicalHit> hits = index.Search("alpha", 5);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 1);
  index.Drop(2);  // nothing left: a no-op
  index.Drop(99);
  index.CheckClean();
  CheckAgainstReference(index, "alpha beta");
}

TEST_CASE("accept is asked lazily in BM25 order and the pool still fills") {
  Index index;
  // Equal documents: equal BM25, so the order is by seq.
  for (uint64_t seq = 1; seq <= 40; ++seq) index.Add(seq, "shared words here");
  index.Add(41, "unrelated");
  std::vector<uint64_t> asked;
  const std::vector<LexicalHit> hits =
      index.Search("shared words", 2, [&](uint64_t seq) {
        asked.push_back(seq);
        return seq % 2 == 1;
      });
  // A pool of 4 x 2 accepted: seqs 1, 3, ..., 15, asked 1..15 in order.
  std::vector<uint64_t> want_asked;
  for (uint64_t s = 1; s <= 15; ++s) want_asked.push_back(s);
  CHECK(asked == want_asked);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].seq == 1);  // ties: lower seq first
  CHECK(hits[1].seq == 3);

  // A rejecting filter returns nothing; one that accepts only late
  // candidates reaches them.
  CHECK(index.Search("shared", 5, [](uint64_t) { return false; }).empty());
  const std::vector<LexicalHit> late =
      index.Search("shared", 5, [](uint64_t seq) { return seq > 37; });
  REQUIRE(late.size() == 3);
  CHECK(late[0].seq == 38);
  CHECK(late[2].seq == 40);
}

TEST_CASE("a filter lets the pool reach beyond the first 4 x limit") {
  Index index;
  for (uint64_t seq = 1; seq <= 8; ++seq) {
    index.Add(seq, "apple apple apple apple banana");
  }
  index.Add(9, "apple filler filler filler filler filler filler filler");
  std::vector<uint64_t> asked;
  std::vector<LexicalHit> hits = index.Search("apple", 1, [&](uint64_t seq) {
    asked.push_back(seq);
    return seq >= 6;
  });
  // Asked in BM25 order until 4 were accepted: 6, 7, 8, 9.
  CHECK(asked == std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 6);
  hits = index.Search("apple", 1, [&](uint64_t seq) { return seq == 9; });
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 9);
}

TEST_CASE("ties are broken the same way every time") {
  Index index;
  for (uint64_t seq : {500, 3, 77, 128, 129, 1}) index.Add(seq, "same text");
  const std::vector<LexicalHit> a = index.Search("same", 4);
  const std::vector<LexicalHit> b = index.Search("text same", 4);
  REQUIRE(a.size() == 4);
  std::vector<uint64_t> seqs;
  for (const LexicalHit& h : a) seqs.push_back(h.seq);
  CHECK(seqs == std::vector<uint64_t>{1, 3, 77, 128});
  REQUIRE(b.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(b[i].seq == a[i].seq);
}

TEST_CASE("a 128-byte term and non-ASCII text") {
  Index index;
  const std::string longword(200, 'q');
  const TermCounts long_counts = CountTerms(longword + " end", 1);
  REQUIRE(long_counts.size() == 2);
  CHECK(long_counts[1].first.size() == kMaxTermBytes);
  index.Add(1, long_counts);
  const TermCounts accents = CountTerms("Ärger über naïve café, ÄRGER", 1);
  index.Add(2, accents);
  index.CheckClean();
  std::vector<LexicalHit> hits = index.Search(std::string(150, 'q'), 5);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 1);
  hits = index.Search("café", 5);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 2);
  CHECK(index.Search("cafe", 5).empty());
  // Only ASCII is lower-cased: "ÄRGER" and "Ärger" are one term, "ärger"
  // another.
  const TermCounts want_accents = {
      {"café", 1}, {"naïve", 1}, {"Ärger", 2}, {"über", 1}};
  CHECK(accents == want_accents);
  CHECK(index.Search("ärger", 5).empty());
  hits = index.Search("ÄRGER", 5);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 2);
  ReadTransaction txn = MustGet(StoreBeginRead(*index.store));
  CHECK(MustGet(ContextTerms(txn, index.dbs, 2)) == accents);
}

TEST_CASE("a seeded random mix of adds, removes and drops stays consistent") {
  Index index;
  std::mt19937_64 rng(20241127);
  const std::vector<std::string> vocab = {
      "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta",
      "theta", "iota", "kappa", "lam",   "mu",  "nu",   "xi",
      "omi",   "pi",   "rho",   "sigma", "tau", "ups",  "phi",
      "chi",   "psi",  "omega", "the",   "and", "of",   "login"};
  // Seqs at block edges of both layouts, and one far away.
  const std::vector<uint64_t> seqs = {
      0,   1,    2,    127, 128, 255,  256,
      257, 1023, 1024, 5,   9,   4096, uint64_t{1} << 40};
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto random_text = [&] {
    std::string text;
    const size_t words = 1 + pick(12);
    for (size_t i = 0; i < words; ++i) {
      // Skewed towards the first words, like real text.
      const size_t w = std::min(pick(vocab.size()), pick(vocab.size()));
      text += vocab[w] + " ";
    }
    return text;
  };
  for (int op = 0; op < 600; ++op) {
    const uint64_t seq = seqs[pick(seqs.size())];
    const size_t kind = pick(10);
    if (kind < 6 || index.model.count(seq) == 0) {
      index.Add(seq, Words(random_text(), 1 + static_cast<uint32_t>(pick(2))));
    } else if (kind < 9) {
      // Remove part of what the context holds.
      TermCounts part;
      for (const auto& [term, c] : index.model[seq]) {
        if (pick(2) == 0) part.emplace_back(term, 1 + pick(c));
      }
      index.Remove(seq, part);
    } else {
      index.Drop(seq);
    }
    if (op % 50 == 49) {
      INFO("after op " << op);
      index.CheckClean();
      CheckAgainstReference(index, "alpha the login");
      CheckAgainstReference(index, random_text());
    }
  }
  for (uint64_t seq : seqs) index.Drop(seq);
  index.CheckClean();
  CHECK(index.Dump().empty());
}

TEST_CASE("CheckLexical reports planted damage") {
  auto damaged = [](const std::function<void(Index&, WriteTransaction&)>& harm,
                    const std::string& needle) {
    Index index;
    index.Add(1, "alpha beta beta");
    index.Add(300, "beta gamma");
    index.CheckClean();
    MustOk(StoreUpdate(*index.store, [&](WriteTransaction& txn) {
      harm(index, txn);
      return absl::OkStatus();
    }));
    const std::vector<std::string> problems = index.Problems();
    std::string listed;
    bool found = false;
    for (const std::string& p : problems) {
      listed += p + "\n";
      found = found || Has(p, needle);
    }
    INFO("want: " << needle << "\nfound:\n" << listed);
    REQUIRE(!problems.empty());
    CHECK(found);
  };
  auto seq_key = [](uint64_t v) {
    std::string k;
    AppendBigEndian64(&k, v);
    return k;
  };
  // One posting deleted: its whole block (seq 300's only entry).
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        const std::string key = std::string("gamma") + '\0' + seq_key(300 >> 7);
        CHECK(MustGet(TxnDelete(txn, ix.dbs.postings, key)));
      },
      "\"gamma\" is in graph.lex.terms (1) but not in graph.lex.postings");
  // A forward entry deleted.
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        CHECK(MustGet(TxnDelete(txn, ix.dbs.terms, seq_key(1) + "alpha")));
      },
      "\"alpha\" is in graph.lex.postings (1) but not in graph.lex.terms");
  // A forward count changed.
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        // tf 5, beta's id 1
        MustOk(TxnPut(txn, ix.dbs.terms, seq_key(1) + "beta", "\x05\x01"));
      },
      "\"beta\" counts 5 in graph.lex.terms but 2 in graph.lex.postings");
  // A df changed and one deleted.
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.df, "beta", "\x01\x01"));
      },
      "\"beta\" has df 1 but is held by 2 contexts");
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        CHECK(MustGet(TxnDelete(txn, ix.dbs.df, "gamma")));
      },
      "\"gamma\" is held by 1 contexts but has no df");
  // A length block deleted.
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        CHECK(MustGet(TxnDelete(txn, ix.dbs.doclen, seq_key(300 >> 8))));
      },
      "context 300 has length 0 but its counts sum to 2");
  // The totals.
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.stats, "all", "\x02\x06\x03"));
      },
      "totals say 2 contexts of 6 terms; a recount finds 2 of 5");
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.stats, "all", "\xff"));
      },
      "malformed totals");
  // The ids (alpha 0, beta 1, gamma 2): a wrong dfs slot, a dfs block
  // deleted, a malformed one, a forward entry with another term's id, two
  // terms sharing an id, a counter not above every id.
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        std::string dfs =
            std::string(MustGet(TxnGet(txn, ix.dbs.dfs, seq_key(0))));
        dfs[4] = 5;  // beta's slot
        MustOk(TxnPut(txn, ix.dbs.dfs, seq_key(0), dfs));
      },
      "graph.lex.dfs: id 1 (term \"beta\") has df 5 but 2 in graph.lex.df");
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        CHECK(MustGet(TxnDelete(txn, ix.dbs.dfs, seq_key(0))));
      },
      "graph.lex.dfs: id 2 (term \"gamma\") has no df but 1 in graph.lex.df");
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.dfs, seq_key(0), "abc"));
      },
      "graph.lex.dfs: malformed entry");
  // A stored block of zeros, which writes delete, in either slot database.
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.dfs, seq_key(7), std::string(1024, '\0')));
      },
      "graph.lex.dfs: block 7 holds no df but is stored");
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.doclen, seq_key(9), std::string(1024, '\0')));
      },
      "graph.lex.doclen: block 9 holds no length but is stored");
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.terms, seq_key(300) + "beta",
                      std::string("\x01\x00", 2)));
      },
      "term \"beta\" of context 300 has id 0 but graph.lex.df gives it id 1");
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.df, "gamma", std::string("\x01\x00", 2)));
      },
      "terms \"alpha\" and \"gamma\" share id 0");
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        MustOk(TxnPut(txn, ix.dbs.stats, "all", "\x02\x05\x02"));
      },
      "the next id, 2, is not above id 2 of term \"gamma\"");
  // A malformed block.
  damaged(
      [&](Index& ix, WriteTransaction& txn) {
        const std::string key = std::string("alpha") + '\0' + seq_key(0);
        MustOk(TxnPut(txn, ix.dbs.postings, key, "\x01\x00"));
      },
      "malformed block 0 of term \"alpha\"");
  // Index and expected documents disagree.
  {
    Index index;
    index.Add(1, "alpha beta");
    index.model[1] = Words("alpha beta beta");
    index.model[2] = Words("gamma");
    const std::vector<std::string> problems = index.Problems();
    REQUIRE(problems.size() == 2);
    CHECK(
        Has(problems[0], "counts 1 in graph.lex.terms but 2 in the expected"));
    CHECK(Has(problems[1], "context 2: term \"gamma\" is in the expected"));
  }
}

TEST_CASE("CheckLexical caps its list") {
  Index index;
  for (uint64_t seq = 1; seq <= 150; ++seq) index.Add(seq, "alpha");
  index.model.clear();  // every document is now unexpected
  const std::vector<std::string> problems = index.Problems();
  REQUIRE(problems.size() == kMaxLexicalProblems);
  CHECK(Has(problems.back(), "more problems"));
}

TEST_CASE("a damaged index makes the search fail with DATA_LOSS") {
  Index index;
  index.Add(1, "alpha beta");
  index.Add(2, "alpha");
  MustOk(StoreUpdate(*index.store, [&](WriteTransaction& txn) {
    std::string key;
    AppendBigEndian64(&key, 0);
    return TxnDelete(txn, index.dbs.doclen, key).status();
  }));
  ReadTransaction txn = MustGet(StoreBeginRead(*index.store));
  absl::StatusOr<std::vector<LexicalHit>> hits =
      SearchContexts(txn, index.dbs, "alpha", 5, nullptr);
  CHECK(absl::IsDataLoss(hits.status()));
  CHECK(Has(hits.status().message(), "no document length"));
}

TEST_CASE("a pooled term whose id has no df makes the search fail") {
  Index index;
  index.Add(1, "alpha beta");
  index.Add(2, "alpha");
  MustOk(StoreUpdate(*index.store, [&](WriteTransaction& txn) {
    return TxnDelete(txn, index.dbs.dfs, BigEndian64(0)).status();
  }));
  ReadTransaction txn = MustGet(StoreBeginRead(*index.store));
  absl::StatusOr<std::vector<LexicalHit>> hits =
      SearchContexts(txn, index.dbs, "alpha", 5, nullptr);
  CHECK(absl::IsDataLoss(hits.status()));
  CHECK(Has(hits.status().message(), "term \"alpha\" (id 0) of context"));
  CHECK(Has(hits.status().message(), "has no df"));
}

TEST_CASE("a pooled term whose id is not below the counter fails the search") {
  Index index;
  index.Add(1, "alpha beta");  // ids 0 and 1, next id 2
  MustOk(StoreUpdate(*index.store, [&](WriteTransaction& txn) {
    return TxnPut(txn, index.dbs.stats, "all", "\x01\x02\x01");
  }));
  ReadTransaction txn = MustGet(StoreBeginRead(*index.store));
  absl::StatusOr<std::vector<LexicalHit>> hits =
      SearchContexts(txn, index.dbs, "alpha", 5, nullptr);
  CHECK(absl::IsDataLoss(hits.status()));
  CHECK(Has(hits.status().message(),
            "term \"beta\" of context 1 has id 1, not below the next id 1"));
}

}  // namespace
}  // namespace ctxkit::internal
