// ReferenceStore over a real Store: every API path and bad input, search
// ranking, BM25 scores against a plain recomputation from the documents,
// statistics against a recount after random operations, and the
// conversation-delete hook.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/references.h"
#include "ctxkit/store.h"
#include "lib/base/ids.h"
#include "lib/references/analyzer.h"
#include "lib/references/delete_hook.h"
#include "lib/references/index.h"
#include "lib/references/index_check.h"
#include "lib/status/status_internal.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

using internal::CheckReferenceIndex;

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<ReferenceStore> refs;
  Database conversations;
  // Atomic: the threads test calls the clock from several threads.
  std::atomic<int64_t> now{1700000000000};

  Fixture() {
    auto s = Store::Open(dir.path());
    REQUIRE(s.ok());
    store = std::move(*s);
    ReferenceStoreOptions options;
    options.clock = [this] { return now.fetch_add(1); };
    auto r = ReferenceStore::Open(*store, options);
    REQUIRE(r.ok());
    refs = std::move(*r);
    auto db = store->OpenDatabase("conversations");
    REQUIRE(db.ok());
    conversations = *db;
  }

  // A conversation as far as this part can tell: a key in "conversations".
  std::string NewConversation() {
    const std::string id = internal::NewUuid();
    REQUIRE(store
                ->Update([&](WriteTransaction& txn) {
                  return txn.Put(conversations, id, "x");
                })
                .ok());
    return id;
  }

  Reference Add(std::string title, std::string content,
                std::string type = "note", std::string conversation = {}) {
    NewReference in;
    in.title = std::move(title);
    in.content = std::move(content);
    in.type = std::move(type);
    in.conversation_id = std::move(conversation);
    auto r = refs->Add(in);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    return *r;
  }

  void CheckIndex() {
    const absl::Status s = CheckReferenceIndex(*store);
    CHECK_MESSAGE(s.ok(), s.ToString());
  }

  uint64_t DbEntries(std::string_view name) {
    auto info = store->Info();
    REQUIRE(info.ok());
    for (const DatabaseInfo& db : info->databases) {
      if (db.name == name) return db.entries;
    }
    return 0;
  }
};

SearchReferencesOptions Query(std::string query) {
  SearchReferencesOptions o;
  o.query = std::move(query);
  return o;
}

ListReferencesOptions Of(std::string conversation_id) {
  ListReferencesOptions o;
  o.conversation_id = std::move(conversation_id);
  return o;
}

void CheckInvalid(const Status& s, std::string_view field) {
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_MESSAGE(s.message().find(field) != std::string::npos, s.ToString());
}

TEST_CASE("add, get, list, stats and delete") {
  Fixture f;
  const std::string conv = f.NewConversation();
  NewReference in;
  in.conversation_id = conv;
  in.type = "code";
  in.title = "Token Counter Implementation";
  in.content = "function countTokens(text: string): number { /* ... */ }";
  in.metadata = R"({"language":"typescript","file":"src/utils/tokenizer.ts"})";
  auto added = f.refs->Add(in);
  REQUIRE(added.ok());
  CHECK(internal::IsUuid(added->id));
  CHECK(added->conversation_id == conv);
  CHECK(added->type == "code");
  CHECK(added->title == in.title);
  CHECK(added->content == in.content);
  CHECK(added->metadata == in.metadata);
  CHECK(added->created_at == 1700000000000);
  auto count = CountTokens("claude-3-5-sonnet", in.content);
  REQUIRE(count.ok());
  CHECK(added->tokens == count->tokens);
  CHECK(added->tokens > 0);

  auto got = f.refs->Get(added->id);
  REQUIRE(got.ok());
  CHECK(got->content == in.content);
  CHECK(got->metadata == in.metadata);
  CHECK(got->preview == in.content);  // shorter than the preview
  CHECK(got->tokens == added->tokens);
  // Upper-case ids are accepted.
  std::string upper = added->id;
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  CHECK(f.refs->Get(upper).ok());

  const Reference other = f.Add("Notes", std::string(300, 'n'), "note");
  CHECK(other.conversation_id.empty());
  CHECK(other.metadata == "{}");

  auto all = f.refs->List();
  REQUIRE(all.ok());
  REQUIRE(all->references.size() == 2);
  CHECK(all->references[0].id == added->id);  // order of addition
  CHECK(all->references[0].content.empty());
  CHECK(all->references[1].preview == std::string(100, 'n') + "...");
  CHECK(all->stats.total_references == 2);
  CHECK(all->stats.total_tokens == added->tokens + other.tokens);
  CHECK(all->stats.by_type ==
        std::map<std::string, uint64_t>{{"code", 1}, {"note", 1}});
  ListReferencesOptions lo;
  lo.conversation_id = conv;
  lo.include_content = true;
  auto mine = f.refs->List(lo);
  REQUIRE(mine.ok());
  REQUIRE(mine->references.size() == 1);
  CHECK(mine->references[0].content == in.content);
  CHECK(mine->stats.total_references == 1);
  CHECK(mine->stats.by_type == std::map<std::string, uint64_t>{{"code", 1}});

  auto stats = f.refs->Stats(conv);
  REQUIRE(stats.ok());
  CHECK(stats->total_tokens == added->tokens);
  auto none = f.refs->Stats(internal::NewUuid());
  REQUIRE(none.ok());
  CHECK(none->total_references == 0);

  auto json = ReferenceToJson(*got, true);
  REQUIRE(json.ok());
  CHECK(json->find(R"("metadata":{"language":"typescript")") !=
        std::string::npos);
  auto stats_json = ReferenceStatsToJson(all->stats);
  REQUIRE(stats_json.ok());
  CHECK(*stats_json ==
        absl::StrFormat(R"({"schema_version":1,"total_references":2,)"
                        R"("total_tokens":%d,)"
                        R"("by_type":{"code":1,"note":1}})",
                        all->stats.total_tokens));

  f.CheckIndex();
  CHECK(f.refs->Delete(added->id).ok());
  CHECK(f.refs->Get(added->id).status().code() == StatusCode::kNotFound);
  CHECK(f.refs->Delete(added->id).code() == StatusCode::kNotFound);
  stats = f.refs->Stats(conv);
  REQUIRE(stats.ok());
  CHECK(stats->total_references == 0);
  CHECK(stats->by_type.empty());
  f.CheckIndex();
}

TEST_CASE("bad input is refused before anything is written") {
  Fixture f;
  const std::string conv = f.NewConversation();
  auto add = [&](auto mutate) {
    NewReference in;
    in.type = "note";
    in.title = "t";
    in.content = "c";
    mutate(in);
    return f.refs->Add(in).status();
  };
  CheckInvalid(add([](NewReference& r) { r.type = "image"; }), "type");
  CheckInvalid(add([](NewReference& r) { r.type = ""; }), "type");
  CheckInvalid(add([](NewReference& r) { r.title = ""; }), "title");
  CheckInvalid(add([](NewReference& r) { r.title = std::string(1025, 'x'); }),
               "title");
  CheckInvalid(add([](NewReference& r) { r.title = "bad \xFF"; }), "title");
  CheckInvalid(add([](NewReference& r) { r.content = ""; }), "content");
  CheckInvalid(add([](NewReference& r) { r.content = "\xC3"; }), "content");
  CheckInvalid(add([](NewReference& r) {
                 r.content =
                     std::string(ReferenceLimits::kMaxContentBytes + 1, 'x');
               }),
               "content");
  CheckInvalid(add([](NewReference& r) { r.metadata = "[1,2]"; }), "metadata");
  CheckInvalid(add([](NewReference& r) { r.metadata = "{"; }), "metadata");
  CheckInvalid(add([](NewReference& r) { r.metadata = "\"s\""; }), "metadata");
  CheckInvalid(add([](NewReference& r) {
                 r.metadata = "{\"a\":\"" + std::string(70000, 'x') + "\"}";
               }),
               "metadata");
  CheckInvalid(add([](NewReference& r) { r.conversation_id = "nope"; }),
               "conversation_id");
  const std::string missing = internal::NewUuid();
  Status s = add([&](NewReference& r) { r.conversation_id = missing; });
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message().find(missing) != std::string::npos);
  CHECK(add([&](NewReference& r) { r.conversation_id = conv; }).ok());

  CheckInvalid(f.refs->Get("").status(), "reference_id");
  CheckInvalid(f.refs->Get("123").status(), "reference_id");
  CheckInvalid(f.refs->Delete("x"), "reference_id");
  s = f.refs->Get(missing).status();
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message().find(missing) != std::string::npos);
  CHECK(f.refs->Delete(missing).code() == StatusCode::kNotFound);

  ListReferencesOptions lo;
  lo.conversation_id = "zz";
  CheckInvalid(f.refs->List(lo).status(), "conversation_id");
  lo.conversation_id = missing;
  CHECK(f.refs->List(lo).status().code() == StatusCode::kNotFound);
  CheckInvalid(f.refs->Stats("zz").status(), "conversation_id");

  auto search = [&](auto mutate) {
    SearchReferencesOptions o;
    o.query = "c";
    mutate(o);
    return f.refs->Search(o).status();
  };
  CheckInvalid(search([](SearchReferencesOptions& o) { o.query = ""; }),
               "query");
  CheckInvalid(search([](SearchReferencesOptions& o) { o.query = "?!"; }),
               "query");
  CheckInvalid(search([](SearchReferencesOptions& o) { o.query = "\xFF"; }),
               "query");
  CheckInvalid(search([](SearchReferencesOptions& o) {
                 o.query = std::string(5000, 'a');
               }),
               "query");
  CheckInvalid(search([](SearchReferencesOptions& o) { o.limit = 0; }),
               "limit");
  CheckInvalid(search([](SearchReferencesOptions& o) { o.limit = 101; }),
               "limit");
  CheckInvalid(
      search([](SearchReferencesOptions& o) { o.conversation_id = "q"; }),
      "conversation_id");
  CHECK(search([&](SearchReferencesOptions& o) {
          o.conversation_id = missing;
        }).code() == StatusCode::kNotFound);
  std::string many;
  for (int i = 0; i < 65; ++i) many += "w" + std::to_string(i) + " ";
  CheckInvalid(search([&](SearchReferencesOptions& o) { o.query = many; }),
               "query");
  CHECK(search([](SearchReferencesOptions& o) { o.limit = 100; }).ok());

  // Only the one valid add went in.
  auto stats = f.refs->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->total_references == 1);
  f.CheckIndex();

  ReferenceStoreOptions bad;
  bad.model = "";
  CheckInvalid(ReferenceStore::Open(*f.store, bad).status(), "model");
}

TEST_CASE("a search scores the same whether it merges postings or adds them") {
  // Unfiltered searches add each term's postings into one score per
  // reference; a conversation filter merges the lists reference by
  // reference. With every reference in the conversation both must give the
  // same results bit for bit, stop words and ties included.
  Fixture f;
  const std::string conv = f.NewConversation();
  const char* kWords[] = {"the", "of",     "server", "project", "set",
                          "up",  "config", "port",   "the",     "the",
                          "of",  "a",      "cache",  "token",   "index"};
  uint64_t state = 7;
  auto next = [&] {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return static_cast<size_t>(state >> 33);
  };
  for (int i = 0; i < 400; ++i) {
    std::string text;
    const size_t n = 3 + next() % 60;
    for (size_t w = 0; w < n; ++w) {
      text += kWords[next() % std::size(kWords)];
      text += ' ';
    }
    f.Add("doc " + std::to_string(i % 7), text, "note", conv);
  }
  for (const char* q : {"how to set up the server for the project", "the of",
                        "cache token", "port", "doc 3 index"}) {
    CAPTURE(q);
    for (uint32_t limit : {1u, 10u, 100u}) {
      SearchReferencesOptions o = Query(q);
      o.limit = limit;
      auto all = f.refs->Search(o);
      o.conversation_id = conv;
      auto in_conv = f.refs->Search(o);
      REQUIRE(all.ok());
      REQUIRE(in_conv.ok());
      CHECK(all->total_matches == in_conv->total_matches);
      REQUIRE(all->results.size() == in_conv->results.size());
      for (size_t i = 0; i < all->results.size(); ++i) {
        CHECK(all->results[i].id == in_conv->results[i].id);
        CHECK(all->results[i].score == in_conv->results[i].score);
        CHECK(all->results[i].relevance == in_conv->results[i].relevance);
      }
    }
  }
}

TEST_CASE("search ranks title matches first and normalizes relevance") {
  Fixture f;
  std::string filler;
  for (int i = 0; i < 60; ++i) filler += "lorem ipsum dolor sit amet ";
  const Reference deep =
      f.Add("Meeting notes", filler + "we talked about the token counter");
  const Reference titled =
      f.Add("Token Counter Implementation",
            "function countTokens(text: string): number { /* ... */ }", "code");
  f.Add("Unrelated", "nothing to see here");
  f.Add("Counter", "a counter of things");

  SearchReferencesOptions o;
  o.query = "token counter";
  auto found = f.refs->Search(o);
  REQUIRE(found.ok());
  REQUIRE(found->results.size() == 3);
  CHECK(found->total_matches == 3);
  CHECK(found->results[0].id == titled.id);
  CHECK(found->results[0].type == "code");
  CHECK(found->results[0].preview == titled.content);
  CHECK(found->results[0].tokens == titled.tokens);
  bool saw_deep = false;
  for (size_t i = 0; i < found->results.size(); ++i) {
    const ReferenceSearchResult& r = found->results[i];
    CHECK(r.relevance >= 0.0);
    CHECK(r.relevance <= 1.0);
    if (i > 0) {
      // Relevance weighs more than the BM25 score and may rise against it.
      CHECK(found->results[i - 1].score >= r.score);
    }
    saw_deep |= r.id == deep.id;
  }
  CHECK(saw_deep);
  CHECK(found->results[0].relevance > 0.5);

  o.limit = 1;
  found = f.refs->Search(o);
  REQUIRE(found.ok());
  REQUIRE(found->results.size() == 1);
  CHECK(found->results[0].id == titled.id);
  CHECK(found->total_matches == 3);

  // Identifier parts match prose and the whole identifier matches code.
  o.limit = 10;
  o.query = "countTokens";
  found = f.refs->Search(o);
  REQUIRE(found.ok());
  REQUIRE(!found->results.empty());
  CHECK(found->results[0].id == titled.id);

  o.query = "zebra";
  found = f.refs->Search(o);
  REQUIRE(found.ok());
  CHECK(found->results.empty());
  CHECK(found->total_matches == 0);

  auto json = ReferenceSearchResultsToJson(*f.refs->Search(Query("counter")));
  REQUIRE(json.ok());
  CHECK(json->find(R"("total":3)") != std::string::npos);
  CHECK(json->find(R"("relevance":)") != std::string::npos);
}

TEST_CASE("search can be restricted to a conversation") {
  Fixture f;
  const std::string a = f.NewConversation();
  const std::string b = f.NewConversation();
  const Reference ra = f.Add("alpha shared", "x", "note", a);
  f.Add("beta shared", "y", "note", b);
  f.Add("gamma shared", "z");
  SearchReferencesOptions o;
  o.query = "shared";
  auto all = f.refs->Search(o);
  REQUIRE(all.ok());
  CHECK(all->results.size() == 3);
  o.conversation_id = a;
  auto only = f.refs->Search(o);
  REQUIRE(only.ok());
  REQUIRE(only->results.size() == 1);
  CHECK(only->results[0].id == ra.id);
  CHECK(only->total_matches == 1);
  // Global statistics: the score equals the unfiltered one.
  for (const auto& r : all->results) {
    if (r.id == ra.id)
      CHECK(r.score == doctest::Approx(only->results[0].score));
  }
  o.conversation_id = b;
  o.query = "alpha";
  only = f.refs->Search(o);
  REQUIRE(only.ok());
  CHECK(only->results.empty());
}

// A plain BM25 from the raw documents, independent of the index code (it
// shares only the analyzer, which defines what a term is).
struct PlainDoc {
  std::string id;
  std::string title;
  std::string content;
  std::string conversation;
};

std::map<std::string, double> PlainBm25(const std::vector<PlainDoc>& docs,
                                        std::string_view query) {
  std::vector<std::string> q_all;
  internal::AnalyzeText(query, &q_all);
  std::set<std::string> q(q_all.begin(), q_all.end());
  std::vector<std::map<std::string, double>> tfs;
  std::vector<double> lengths;
  double total = 0;
  for (const PlainDoc& d : docs) {
    std::vector<std::string> t, c;
    internal::AnalyzeText(d.title, &t);
    internal::AnalyzeText(d.content, &c);
    std::map<std::string, double> tf;
    for (const auto& w : c) tf[w] += 1;
    for (const auto& w : t) tf[w] += 3;
    tfs.push_back(tf);
    lengths.push_back(static_cast<double>(c.size() + 3 * t.size()));
    total += lengths.back();
  }
  const double n = static_cast<double>(docs.size());
  const double avgdl = total / n;
  std::map<std::string, double> scores;
  for (const std::string& term : q) {
    double df = 0;
    for (const auto& tf : tfs) df += tf.count(term) ? 1 : 0;
    const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
    for (size_t i = 0; i < docs.size(); ++i) {
      auto it = tfs[i].find(term);
      if (it == tfs[i].end()) continue;
      const double tf = it->second;
      scores[docs[i].id] +=
          idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths[i] / avgdl));
    }
  }
  return scores;
}

std::string RandomText(std::mt19937& rng, int words) {
  static const char* kWords[] = {
      "token",      "counter",    "cache",   "Cache",  "countTokens",
      "parse_json", "HTMLParser", "context", "window", "über",
      "größe",      "model",      "Model",   "x",      "42",
      "reference",  "search",     "index",   "bm25",   "the",
      "a",          "of"};
  static const char* kSeps[] = {" ", " ", ", ", ". ", "\n", "(", ") ", "::"};
  std::string out;
  for (int i = 0; i < words; ++i) {
    out += kWords[rng() % std::size(kWords)];
    out += kSeps[rng() % std::size(kSeps)];
  }
  return out;
}

TEST_CASE("BM25 scores equal a plain recomputation from the documents") {
  Fixture f;
  std::mt19937 rng(20240601);
  std::vector<PlainDoc> docs;
  const std::string conv = f.NewConversation();
  // Enough documents that common terms span several postings blocks.
  for (int i = 0; i < 300; ++i) {
    PlainDoc d;
    d.title = RandomText(rng, 1 + static_cast<int>(rng() % 4));
    d.content = RandomText(rng, 1 + static_cast<int>(rng() % 40));
    d.conversation = rng() % 3 == 0 ? conv : "";
    d.id = f.Add(d.title, d.content, "document", d.conversation).id;
    docs.push_back(d);
  }
  // Delete some so blocks have holes, and the stats shrink.
  for (int i = 0; i < 40; ++i) {
    const size_t k = rng() % docs.size();
    REQUIRE(f.refs->Delete(docs[k].id).ok());
    docs.erase(docs.begin() + static_cast<std::ptrdiff_t>(k));
  }
  internal::IndexCheckSummary summary;
  const absl::Status check = CheckReferenceIndex(*f.store, &summary);
  REQUIRE_MESSAGE(check.ok(), check.ToString());
  CHECK(summary.references == docs.size());
  CHECK(summary.blocks > summary.terms);  // some terms span several blocks

  for (const char* query :
       {"token", "token counter", "countTokens", "parse json", "größe",
        "the of a", "htmlparser", "Model index search bm25", "42 x"}) {
    CAPTURE(query);
    const auto expected = PlainBm25(docs, query);
    SearchReferencesOptions o;
    o.query = query;
    o.limit = 100;
    auto found = f.refs->Search(o);
    REQUIRE(found.ok());
    CHECK(found->total_matches == expected.size());
    CHECK(found->results.size() == std::min<size_t>(100, expected.size()));
    std::vector<double> sorted;
    for (const auto& [id, s] : expected) sorted.push_back(s);
    std::sort(sorted.rbegin(), sorted.rend());
    for (size_t i = 0; i < found->results.size(); ++i) {
      const auto& r = found->results[i];
      auto it = expected.find(r.id);
      REQUIRE(it != expected.end());
      CHECK(r.score == doctest::Approx(it->second).epsilon(1e-9));
      CHECK(r.score == doctest::Approx(sorted[i]).epsilon(1e-9));
      CHECK(r.relevance >= 0);
      CHECK(r.relevance <= 1);
    }
    // Restricted to the conversation: the same scores, only its documents.
    o.conversation_id = conv;
    found = f.refs->Search(o);
    REQUIRE(found.ok());
    size_t in_conv = 0;
    for (const PlainDoc& d : docs) {
      in_conv += d.conversation == conv && expected.count(d.id) ? 1 : 0;
    }
    CHECK(found->total_matches == in_conv);
    for (const auto& r : found->results) {
      CHECK(r.conversation_id == conv);
      CHECK(r.score == doctest::Approx(expected.at(r.id)).epsilon(1e-9));
    }
  }
}

TEST_CASE("statistics equal a recount after random adds and deletes") {
  Fixture f;
  std::mt19937 rng(7);
  auto hook = internal::MakeReferenceDeleteHook(*f.store);
  REQUIRE(hook.ok());
  std::vector<std::string> convs;
  for (int i = 0; i < 5; ++i) convs.push_back(f.NewConversation());
  std::vector<std::string> live;
  for (int step = 0; step < 400; ++step) {
    const unsigned op = rng() % 10;
    if (op < 6 || live.empty()) {
      const std::string conv =
          rng() % 4 == 0 ? std::string() : convs[rng() % convs.size()];
      const char* type = std::data(kReferenceTypes)[rng() % 5].data();
      live.push_back(
          f.Add(RandomText(rng, 2), RandomText(rng, 10), type, conv).id);
    } else if (op < 9) {
      const size_t k = rng() % live.size();
      REQUIRE(f.refs->Delete(live[k]).ok());
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      // Cascade: the conversation goes, with its references; a new one
      // takes its place.
      const size_t k = rng() % convs.size();
      const std::string victim = convs[k];
      auto before = f.refs->List(Of(victim));
      REQUIRE(before.ok());
      uint64_t removed = 0;
      REQUIRE(f.store
                  ->Update([&](WriteTransaction& txn) {
                    auto n = (*hook)->OnConversationDeleted(txn, victim);
                    if (!n.ok()) return internal::ToPublic(n.status());
                    removed = *n;
                    return txn.Delete(f.conversations, victim).status();
                  })
                  .ok());
      CHECK(removed == before->references.size());
      for (const Reference& r : before->references) {
        live.erase(std::find(live.begin(), live.end(), r.id));
      }
      convs[k] = f.NewConversation();
    }
    if (step % 50 == 49) f.CheckIndex();
  }
  f.CheckIndex();
  auto all = f.refs->List();
  REQUIRE(all.ok());
  CHECK(all->references.size() == live.size());
  uint64_t tokens = 0;
  std::map<std::string, uint64_t> by_type;
  for (const Reference& r : all->references) {
    tokens += r.tokens;
    by_type[r.type] += 1;
  }
  CHECK(all->stats.total_references == live.size());
  CHECK(all->stats.total_tokens == tokens);
  CHECK(all->stats.by_type == by_type);
}

TEST_CASE("the delete hook removes exactly that conversation's references") {
  Fixture f;
  const std::string a = f.NewConversation();
  const std::string b = f.NewConversation();
  const Reference a1 = f.Add("alpha unique1", "shared words here", "code", a);
  const Reference a2 = f.Add("alpha unique2", "shared words", "url", a);
  const Reference b1 = f.Add("beta", "shared words", "note", b);
  const Reference free = f.Add("free", "shared", "file");
  const uint64_t postings_before = f.DbEntries("references.postings");

  auto hook = internal::MakeReferenceDeleteHook(*f.store);
  REQUIRE(hook.ok());
  uint64_t removed = 0;
  REQUIRE(f.store
              ->Update([&](WriteTransaction& txn) {
                auto n = (*hook)->OnConversationDeleted(txn, a);
                if (!n.ok()) return internal::ToPublic(n.status());
                removed = *n;
                return Status();
              })
              .ok());
  CHECK(removed == 2);
  CHECK(f.refs->Get(a1.id).status().code() == StatusCode::kNotFound);
  CHECK(f.refs->Get(a2.id).status().code() == StatusCode::kNotFound);
  CHECK(f.refs->Get(b1.id).ok());
  CHECK(f.refs->Get(free.id).ok());
  // "alpha", "unique1", "unique2", "here" occurred only in a's references.
  CHECK(f.DbEntries("references.postings") == postings_before - 4);
  auto found = f.refs->Search(Query("alpha unique1"));
  REQUIRE(found.ok());
  CHECK(found->results.empty());
  auto stats = f.refs->Stats(a);
  REQUIRE(stats.ok());
  CHECK(stats->total_references == 0);
  stats = f.refs->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->total_references == 2);
  CHECK(stats->by_type ==
        std::map<std::string, uint64_t>{{"file", 1}, {"note", 1}});
  f.CheckIndex();

  // Nothing to delete: 0, not an error. An aborted transaction keeps all.
  REQUIRE(f.store
              ->Update([&](WriteTransaction& txn) {
                auto n = (*hook)->OnConversationDeleted(txn, a);
                REQUIRE(n.ok());
                CHECK(*n == 0);
                n = (*hook)->OnConversationDeleted(txn, "");
                REQUIRE(n.ok());
                CHECK(*n == 0);
                return Status();
              })
              .ok());
  CHECK(f.store
            ->Update([&](WriteTransaction& txn) {
              auto n = (*hook)->OnConversationDeleted(txn, b);
              REQUIRE(n.ok());
              CHECK(*n == 1);
              return Status(StatusCode::kAborted, "changed my mind");
            })
            .code() == StatusCode::kAborted);
  CHECK(f.refs->Get(b1.id).ok());
  f.CheckIndex();
}

TEST_CASE("the index survives reopening and is shared between handles") {
  testing::TempDir dir;
  std::string id;
  {
    auto store = Store::Open(dir.path());
    REQUIRE(store.ok());
    auto refs = ReferenceStore::Open(**store);
    REQUIRE(refs.ok());
    NewReference in;
    in.type = "url";
    in.title = "ctxkit docs";
    in.content = "https://example.com/ctxkit";
    auto r = (*refs)->Add(in);
    REQUIRE(r.ok());
    id = r->id;
  }
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto refs = ReferenceStore::Open(**store);
  REQUIRE(refs.ok());
  auto found = (*refs)->Search(Query("example com"));
  REQUIRE(found.ok());
  REQUIRE(found->results.size() == 1);
  CHECK(found->results[0].id == id);
  const absl::Status s = CheckReferenceIndex(**store);
  CHECK_MESSAGE(s.ok(), s.ToString());
}

TEST_CASE("concurrent adds, deletes and searches stay consistent") {
  Fixture f;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < 40; ++i) {
        NewReference in;
        in.type = "note";
        in.title = RandomText(rng, 2);
        in.content = RandomText(rng, 8);
        auto r = f.refs->Add(in);
        CHECK(r.ok());
        if (r.ok() && i % 3 == 0) CHECK(f.refs->Delete(r->id).ok());
        auto s = f.refs->Search(Query("token cache"));
        CHECK(s.ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  f.CheckIndex();
  auto stats = f.refs->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->total_references == 4 * (40 - 14));
}

}  // namespace
}  // namespace ctxkit
