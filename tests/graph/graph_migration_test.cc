// The upgrade of a format-2 store's lexical index to term ids (store format
// 3, lib/graph/graph_migration.h). A format-2 store is made here from a
// graph this build wrote, rewritten the way the old release stored it (from
// the old layout's description, not with the library's encoder): df and
// forward values a lone varint count, totals without the id counter, no
// graph.lex.dfs, graph layout 3 and store format 2, set with LMDB directly
// as no ctxkit API writes them. The upgraded graph must answer the same
// searches with the same scores and verify clean.

#include <doctest/doctest.h>
#include <lmdb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/graph/lexical.h"
#include "lib/store/store_internal.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::Contains;
using testing::Must;
using testing::TempDir;

void Check(int rc) { REQUIRE_MESSAGE(rc == 0, mdb_strerror(rc)); }

// Runs `edit` in one write transaction on the closed store at `path`,
// through LMDB itself (behind the Store's back), and commits it.
void EditRaw(const std::string& path,
             const std::function<void(MDB_txn*)>& edit) {
  MDB_env* env = nullptr;
  Check(mdb_env_create(&env));
  Check(mdb_env_set_maxdbs(env, 128));
  Check(mdb_env_open(env, path.c_str(), 0, 0600));
  MDB_txn* txn = nullptr;
  Check(mdb_txn_begin(env, nullptr, 0, &txn));
  edit(txn);
  Check(mdb_txn_commit(txn));
  mdb_env_close(env);
}

// The first varint of `v` (LEB128), and where it ended.
uint64_t FirstVarint(std::string_view v, size_t* end) {
  uint64_t x = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    x |= uint64_t{static_cast<unsigned char>(v[i]) & 0x7Fu} << (7 * i);
    if ((static_cast<unsigned char>(v[i]) & 0x80) == 0) {
      *end = i + 1;
      return x;
    }
  }
  FAIL("malformed varint");
  return 0;
}

// Rewrites the closed store at `path` as format 2 stored its lexical
// index. With `damage`, one df value is left in the new layout, which
// format 2 never wrote.
void MakeFormatTwo(const std::string& path, bool damage = false) {
  EditRaw(path, [&](MDB_txn* txn) {
    auto open = [&](const char* name) {
      MDB_dbi dbi;
      Check(mdb_dbi_open(txn, name, 0, &dbi));
      return dbi;
    };
    auto put = [&](MDB_dbi db, std::string_view key, std::string_view value) {
      MDB_val kk{key.size(), const_cast<char*>(key.data())};
      MDB_val vv{value.size(), const_cast<char*>(value.data())};
      Check(mdb_put(txn, db, &kk, &vv, 0));
    };
    // The value's leading varints, kept: (df | tf) of df and terms, N and the
    // sum of the totals.
    auto keep_varints = [&](MDB_dbi db, int keep) {
      std::map<std::string, std::string> rewritten;
      MDB_cursor* cursor = nullptr;
      Check(mdb_cursor_open(txn, db, &cursor));
      MDB_val k, v;
      for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
           rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
        const std::string_view value(static_cast<char*>(v.mv_data), v.mv_size);
        size_t at = 0;
        for (int i = 0; i < keep; ++i) {
          size_t end = 0;
          FirstVarint(value.substr(at), &end);
          at += end;
        }
        REQUIRE(at < value.size());  // an id or counter follows
        rewritten[std::string(static_cast<char*>(k.mv_data), k.mv_size)] =
            std::string(value.substr(0, at));
      }
      mdb_cursor_close(cursor);
      REQUIRE(!rewritten.empty());
      for (const auto& [key, value] : rewritten) put(db, key, value);
      return rewritten;
    };
    const MDB_dbi df = open("graph.lex.df");
    std::map<std::string, std::string> dfs = keep_varints(df, 1);
    keep_varints(open("graph.lex.terms"), 1);
    keep_varints(open("graph.lex.stats"), 2);
    if (damage) put(df, dfs.begin()->first, dfs.begin()->second + '\x07');
    Check(mdb_drop(txn, open("graph.lex.dfs"), 1));
    put(open("graph.stats"), "format", std::string("\0\0\0\3", 4));
    put(open("__meta"), "format_version", std::string("\2\0\0\0", 4));
  });
}

struct Opened {
  std::unique_ptr<Store> store;
  std::unique_ptr<ConversationStore> convs;
  std::unique_ptr<ContextGraph> graph;

  explicit Opened(const std::string& path) {
    store = Must(Store::Open(path));
    convs = Must(ConversationStore::Open(*store));
    graph =
        Must(ContextGraph::Open(*store, *convs, testing::ManualGraphOptions()));
  }

  void CheckVerified() {
    GraphVerifyReport report = Must(graph->Verify());
    std::string listed;
    for (const std::string& p : report.problems) listed += p + "\n";
    INFO(listed);
    CHECK(report.ok);
    CHECK(report.problems.empty());
  }

  // The answers to `queries`: ids with their exact scores.
  std::vector<std::vector<std::pair<std::string, double>>> Answers(
      const std::vector<std::string>& queries) {
    std::vector<std::vector<std::pair<std::string, double>>> out;
    for (const std::string& q : queries) {
      auto& answer = out.emplace_back();
      for (const SimilarContext& c :
           Must(graph->FindSimilar(q, {.limit = 8})).contexts) {
        answer.emplace_back(c.context_id, c.similarity);
        answer.emplace_back(c.context_id, c.score);
      }
    }
    return out;
  }
};

// Made-up words: enough distinct terms for two dfs blocks and more forward
// entries than the upgrade rewrites in one chunk.
std::string Text(std::mt19937_64& rng, int words) {
  std::string text;
  for (int i = 0; i < words; ++i) {
    text += "w" + std::to_string(rng() % 600) + " ";
  }
  return text;
}

const std::vector<std::string> kQueries = {"w1 w2 w3", "w599 w17",
                                           "w100 w200 w300 w400", "w42"};

TEST_CASE("a format-2 lexical index gets term ids: same answers, clean") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  std::vector<std::vector<std::pair<std::string, double>>> before;
  {
    Opened o(path);
    std::mt19937_64 rng(5);
    for (int c = 0; c < 40; ++c) {
      const std::string id = "ctx-" + std::to_string(c);
      for (int m = 0; m < 3; ++m) {
        Must(o.graph->AddMessage(
            id, {.role = MessageRole::kUser, .content = Text(rng, 60)}));
      }
    }
    // Ids freed before the upgrade.
    REQUIRE(o.graph->DeleteContext("ctx-7").ok());
    o.CheckVerified();
    before = o.Answers(kQueries);
    REQUIRE(!before[0].empty());
  }
  MakeFormatTwo(path);
  {
    StoreOptions ro;
    ro.read_only = true;
    CHECK(Store::Open(path, ro).status().code() ==
          StatusCode::kFailedPrecondition);
  }
  Opened o(path);
  CHECK(Must(o.store->Info()).format_version == Store::kFormatVersion);
  o.CheckVerified();
  CHECK(o.Answers(kQueries) == before);
  {
    // Ids in term order from 0, the counter just above them.
    absl::StatusOr<internal::LexicalDbs> dbs =
        internal::OpenLexicalDbs(*o.store);
    REQUIRE(dbs.ok());
    ReadTransaction txn = Must(o.store->BeginRead());
    Cursor c = Must(txn.NewCursor(dbs->df));
    uint64_t expected_id = 0;
    for (c.SeekToFirst(); c.Valid(); c.Next(), ++expected_id) {
      size_t end = 0;
      FirstVarint(c.value(), &end);
      size_t id_end = 0;
      CHECK(FirstVarint(c.value().substr(end), &id_end) == expected_id);
    }
    CHECK(expected_id > 256);
    const std::string_view totals = Must(txn.Get(dbs->stats, "all"));
    size_t at = 0, end = 0;
    for (int i = 0; i < 2; ++i) {
      FirstVarint(totals.substr(at), &end);
      at += end;
    }
    CHECK(FirstVarint(totals.substr(at), &end) == expected_id);
  }
  // Writes after the upgrade take new ids from the counter.
  Must(o.graph->AddMessage(
      "ctx-new", {.role = MessageRole::kUser, .content = "w1 brandnew w2"}));
  o.CheckVerified();
  CHECK(Must(o.graph->FindSimilar("brandnew")).contexts.at(0).context_id ==
        "ctx-new");
}

TEST_CASE("a store that never used the graph is left untouched") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  {
    auto store = Must(Store::Open(path));
    Must(store->OpenDatabase("mine"));
  }
  EditRaw(path, [](MDB_txn* txn) {
    MDB_dbi meta;
    Check(mdb_dbi_open(txn, "__meta", 0, &meta));
    std::string key = "format_version", value("\2\0\0\0", 4);
    MDB_val kk{key.size(), key.data()}, vv{value.size(), value.data()};
    Check(mdb_put(txn, meta, &kk, &vv, 0));
  });
  auto store = Must(Store::Open(path));
  StoreInfo info = Must(store->Info());
  CHECK(info.format_version == Store::kFormatVersion);
  std::vector<std::string> names;
  for (const auto& d : info.databases) names.push_back(d.name);
  CHECK(names == std::vector<std::string>{"__meta", "mine"});
}

TEST_CASE("an entry not in format 2 aborts the upgrade, naming it") {
  TempDir dir;
  const std::string path = dir.Sub("s");
  {
    Opened o(path);
    Must(o.graph->AddMessage(
        "a", {.role = MessageRole::kUser, .content = "alpha beta"}));
  }
  MakeFormatTwo(path, /*damage=*/true);
  auto failed = Store::Open(path);
  INFO(failed.status().ToString());
  CHECK(failed.status().code() == StatusCode::kDataLoss);
  CHECK(Contains(failed.status().message(), "graph.lex.df"));
  CHECK(Contains(failed.status().message(), "\"alpha\""));
  // Still format 2: a read-only open says it needs upgrading.
  StoreOptions ro;
  ro.read_only = true;
  auto r = Store::Open(path, ro);
  CHECK(r.status().code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(r.status().message(), "format version 2"));
}

}  // namespace
}  // namespace ctxkit
