// ContextGraph's vectors: the hashed embedder, host vectors and their
// checks, the int8 scan against exact float search, hybrid's reciprocal
// rank fusion, the fallback to keyword, deletes and cleanup, Verify against
// damaged vectors, and a second graph on the store seeing the first's.

#include "lib/graph/vectors.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/context_graph.h"
#include "tests/graph/graph_fixture.h"

namespace ctxkit {
namespace {

using testing::CheckError;
using testing::Contains;
using testing::Must;

struct Graph : testing::GraphFixture {
  explicit Graph(ContextGraphOptions options = testing::ManualGraphOptions())
      : GraphFixture(std::move(options)) {}

  void Add(const std::string& id, const std::string& content,
           std::vector<std::string> tags = {}) {
    Must(graph->AddMessage(id, {.role = MessageRole::kUser,
                                .content = content,
                                .tags = std::move(tags)}));
  }

  std::vector<std::string> Ids(const SimilarResult& r) {
    std::vector<std::string> ids;
    for (const SimilarContext& c : r.contexts) ids.push_back(c.context_id);
    return ids;
  }
};

std::vector<float> Embed(Embedder& e, std::string_view text) {
  std::vector<float> v(e.dims());
  const std::string_view texts[] = {text};
  REQUIRE(e.Embed(texts, v).ok());
  return v;
}

// An embedder the test steers: a fixed vector per text, or an error.
class FakeEmbedder final : public Embedder {
 public:
  explicit FakeEmbedder(uint32_t dims, std::string model = "fake")
      : dims_(dims), model_(std::move(model)) {}
  uint32_t dims() const override { return dims_; }
  std::string_view model() const override { return model_; }
  Status Embed(std::span<const std::string_view> texts,
               std::span<float> out) override {
    ++calls;
    if (fail) return Status(StatusCode::kUnavailable, "model server is down");
    for (size_t i = 0; i < texts.size(); ++i) {
      for (uint32_t d = 0; d < dims_; ++d) out[i * dims_ + d] = 0;
      // The text's first byte picks the axis.
      const size_t axis =
          texts[i].empty() ? 0 : static_cast<unsigned char>(texts[i][0]);
      out[i * dims_ + axis % dims_] = 1;
    }
    return Status();
  }
  bool fail = false;
  int calls = 0;

 private:
  uint32_t dims_;
  std::string model_;
};

TEST_CASE("the hashed embedder is deterministic, normalized and topical") {
  auto e = Must(MakeHashedEmbedder(256));
  CHECK(e->dims() == 256);
  CHECK(e->model() == "ctxkit-hashed-v1");
  const std::vector<float> a = Embed(*e, "Move the login flow to OAuth");
  const std::vector<float> b =
      Embed(*Must(MakeHashedEmbedder(256)), "Move the login flow to OAuth");
  CHECK(a == b);
  double norm = 0;
  for (float x : a) norm += double{x} * x;
  CHECK(std::sqrt(norm) == doctest::Approx(1.0).epsilon(1e-6));
  auto cosine = [](const std::vector<float>& x, const std::vector<float>& y) {
    double dot = 0;
    for (size_t i = 0; i < x.size(); ++i) dot += double{x[i]} * y[i];
    return dot;
  };
  const std::vector<float> near = Embed(*e, "the OAuth login flow moved");
  const std::vector<float> far = Embed(*e, "Postgres index migration");
  CHECK(cosine(a, near) > cosine(a, far) + 0.2);
  // Case does not matter; a text without words has no direction.
  CHECK(Embed(*e, "MOVE THE LOGIN FLOW TO OAUTH") == a);
  const std::vector<float> none = Embed(*e, "  ... !!");
  for (float x : none) CHECK(x == 0);
  CheckError(MakeHashedEmbedder(0).status(), StatusCode::kInvalidArgument,
             "dims");
  CheckError(MakeHashedEmbedder(kMaxEmbeddingDims + 1).status(),
             StatusCode::kInvalidArgument, "dims");
}

TEST_CASE("SetEmbedding checks the vector and the recorded space") {
  Graph g;
  g.Add("a", "alpha");
  g.Add("b", "beta");
  const std::vector<float> three = {1, 0, 0};
  CheckError(g.graph->SetEmbedding("missing", three), StatusCode::kNotFound,
             "contextId");
  CheckError(g.graph->SetEmbedding("a", std::vector<float>{}),
             StatusCode::kInvalidArgument, "vector");
  CheckError(
      g.graph->SetEmbedding("a", std::vector<float>{1, std::nanf(""), 0}),
      StatusCode::kInvalidArgument, "vector[1]");
  CheckError(
      g.graph->SetEmbedding(
          "a", std::vector<float>{std::numeric_limits<float>::infinity()}),
      StatusCode::kInvalidArgument, "vector[0]");
  CheckError(g.graph->SetEmbedding("a", std::vector<float>{0, 0, 0}),
             StatusCode::kInvalidArgument, "all zeros");
  CheckError(g.graph->SetEmbedding(
                 "a", std::vector<float>(kMaxEmbeddingDims + 1, 1.0f)),
             StatusCode::kInvalidArgument, "vector");
  // Nothing was stored by the refusals.
  CHECK(Must(g.graph->Verify()).vectors == 0);

  // The first vector records the space: 3 dims.
  REQUIRE(g.graph->SetEmbedding("a", three).ok());
  CheckError(g.graph->SetEmbedding("b", std::vector<float>{1, 0}),
             StatusCode::kInvalidArgument, "vector has 2 dims");
  // An embedder of another space is refused, here and at Open.
  CheckError(g.graph->SetEmbedder(Must(MakeHashedEmbedder(256))),
             StatusCode::kFailedPrecondition, "'host' with 3 dims");
  ContextGraphOptions o = testing::ManualGraphOptions();
  o.embedder = Must(MakeHashedEmbedder(256));
  CheckError(ContextGraph::Open(*g.store, *g.convs, o).status(),
             StatusCode::kFailedPrecondition, "ResetEmbeddings");
  // A model change needs ResetEmbeddings.
  REQUIRE(g.graph->ResetEmbeddings().ok());
  CHECK(Must(g.graph->Verify()).vectors == 0);
  REQUIRE(g.graph->SetEmbedder(Must(MakeHashedEmbedder(16))).ok());
  CheckError(g.graph->SetEmbedding("b", three), StatusCode::kInvalidArgument,
             "'ctxkit-hashed-v1') have 16");
  CheckError(g.graph->SetEmbedder(std::make_shared<FakeEmbedder>(0)),
             StatusCode::kInvalidArgument, "embedder dims");
  g.CheckVerified();
}

TEST_CASE("every int8 scan kernel gives the portable loop's floats") {
  // Search uses the last kernel this CPU runs; the portable one is what
  // any other CPU runs, so they must agree bit for bit. Rows take every
  // int8 (-128 only a damaged row holds), the query -127..127 (what
  // QuantizeRow gives); the dims cover each vector width's remainders.
  const std::vector<internal::NamedScanKernel> kernels =
      internal::ScanKernels();
  REQUIRE(!kernels.empty());
  CHECK(kernels.front().name == "portable");
  MESSAGE("scan kernels: " << kernels.size() << ", Search uses "
                           << kernels.back().name);
  std::mt19937 rng(8);
  for (size_t dims : {1, 15, 16, 31, 32, 33, 63, 64, 65, 100, 384, 4096}) {
    CAPTURE(dims);
    constexpr size_t kRows = 37;
    std::vector<int8_t> q(dims), rows(kRows * dims);
    std::vector<float> scales(kRows);
    for (int8_t& x : q) x = static_cast<int8_t>(int(rng() % 255) - 127);
    for (int8_t& x : rows) x = static_cast<int8_t>(int(rng() % 256) - 128);
    for (float& s : scales) s = std::ldexp(float(rng() % 1000 + 1), -17);
    // The extremes: rows of -128 and 127 against a query of -127 and 127,
    // where a 16-bit pair sum would saturate if it could.
    std::fill_n(q.begin(), dims / 2, int8_t{-127});
    std::fill(q.begin() + static_cast<std::ptrdiff_t>(dims / 2), q.end(),
              int8_t{127});
    std::fill_n(rows.begin(), dims, int8_t{-128});
    std::fill_n(rows.begin() + static_cast<std::ptrdiff_t>(dims), dims,
                int8_t{127});
    std::vector<float> want(kRows);
    internal::ScanRowsPortable(q.data(), rows.data(), scales.data(), kRows,
                               dims, want.data());
    // The portable loop's row 0 by hand: -128 * -127 over the first half,
    // -128 * 127 over the rest.
    const int64_t half = static_cast<int64_t>(dims / 2);
    const int64_t row0 =
        128 * 127 * half - 128 * 127 * (static_cast<int64_t>(dims) - half);
    CHECK(want[0] == static_cast<float>(row0) * scales[0]);
    for (const internal::NamedScanKernel& k : kernels) {
      CAPTURE(k.name);
      std::vector<float> got(kRows, -1.0f);
      k.scan(q.data(), rows.data(), scales.data(), kRows, dims, got.data());
      CHECK(std::memcmp(got.data(), want.data(), kRows * sizeof(float)) == 0);
      // And a scan of no rows writes nothing.
      float untouched = 3.0f;
      k.scan(q.data(), rows.data(), scales.data(), 0, dims, &untouched);
      CHECK(untouched == 3.0f);
    }
  }
}

TEST_CASE("the int8 scan with float rescoring finds what exact search does") {
  Graph g;
  constexpr uint32_t kDims = 64;
  constexpr int kContexts = 2000;
  std::mt19937 rng(15);
  std::normal_distribution<float> normal;
  // The contexts in one write (edges that create their ends), then their
  // vectors.
  std::vector<NewRelationship> edges;
  for (int i = 0; i < kContexts; i += 2) {
    edges.push_back({.source = "c" + std::to_string(i),
                     .target = "c" + std::to_string(i + 1),
                     .type = "references",
                     .create_missing = true});
  }
  REQUIRE(g.graph->AddRelationships(edges).ok());
  std::vector<std::vector<float>> vectors(kContexts);
  for (int i = 0; i < kContexts; ++i) {
    vectors[i].resize(kDims);
    for (float& x : vectors[i]) x = normal(rng);
    REQUIRE(g.graph->SetEmbedding("c" + std::to_string(i), vectors[i]).ok());
  }
  auto cosine = [](const std::vector<float>& x, const std::vector<float>& y) {
    double dot = 0, nx = 0, ny = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      dot += double{x[i]} * y[i];
      nx += double{x[i]} * x[i];
      ny += double{y[i]} * y[i];
    }
    return dot / std::sqrt(nx * ny);
  };
  int found = 0, asked = 0;
  for (int q = 0; q < 20; ++q) {
    // Exact float search for context q*7's vector over the others, against
    // the graph's answer.
    const int center = q * 7;
    std::vector<std::pair<double, int>> exact;
    for (int i = 0; i < kContexts; ++i) {
      if (i == center) continue;
      exact.push_back({cosine(vectors[center], vectors[i]), i});
    }
    std::partial_sort(exact.begin(), exact.begin() + 5, exact.end(),
                      [](auto& a, auto& b) { return a.first > b.first; });
    // The query is the center's vector, through an embedder of the
    // host's space that returns it.
    struct Probe final : Embedder {
      std::vector<float> v;
      uint32_t dims() const override { return kDims; }
      std::string_view model() const override { return "host"; }
      Status Embed(std::span<const std::string_view>,
                   std::span<float> out) override {
        std::copy(v.begin(), v.end(), out.begin());
        return Status();
      }
    };
    auto probe = std::make_shared<Probe>();
    probe->v = vectors[center];
    REQUIRE(g.graph->SetEmbedder(probe).ok());
    SimilarOptions o;
    o.method = SimilarityMethod::kVector;
    o.exclude = {"c" + std::to_string(center)};
    SimilarResult r = Must(g.graph->FindSimilar("q", o));
    CHECK(r.method == "vector");
    REQUIRE(r.contexts.size() == 5);
    for (int k = 0; k < 5; ++k) {
      ++asked;
      const std::string want = "c" + std::to_string(exact[k].second);
      found += r.contexts[k].context_id == want;
      CHECK(r.contexts[k].similarity ==
            doctest::Approx(std::max(0.0, exact[k].first)).epsilon(1e-5));
    }
  }
  CHECK(found == asked);  // recall@5 = 1.0
  g.CheckVerified();
}

TEST_CASE("hybrid fuses the keyword and vector rankings by RRF") {
  Graph g;
  // Keyword ranking for "oauth token": kw1 (both words, twice), kw2; vector
  // ranking: the fake embedder puts "o..." texts on axis 'o'.
  g.Add("kw1", "oauth token oauth token");
  g.Add("kw2", "oauth refresh");
  g.Add("vec", "unrelated words");
  auto fake = std::make_shared<FakeEmbedder>(8);
  REQUIRE(g.graph->SetEmbedder(fake).ok());
  const uint32_t axis_o = 'o' % 8;
  std::vector<float> on_o(8, 0.0f), off_o(8, 0.0f);
  on_o[axis_o] = 1;
  off_o[(axis_o + 1) % 8] = 1;
  std::vector<float> mostly_o = off_o;
  mostly_o[axis_o] = 2;
  REQUIRE(g.graph->SetEmbedding("vec", on_o).ok());      // vector rank 1
  REQUIRE(g.graph->SetEmbedding("kw2", mostly_o).ok());  // vector rank 2
  REQUIRE(g.graph->SetEmbedding("kw1", off_o).ok());     // cosine 0

  SimilarOptions o;
  o.method = SimilarityMethod::kKeyword;
  CHECK(g.Ids(Must(g.graph->FindSimilar("oauth token", o))) ==
        std::vector<std::string>{"kw1", "kw2"});
  o.method = SimilarityMethod::kVector;
  CHECK(g.Ids(Must(g.graph->FindSimilar("oauth token", o))) ==
        std::vector<std::string>{"vec", "kw2", "kw1"});
  o.method = SimilarityMethod::kHybrid;
  SimilarResult r = Must(g.graph->FindSimilar("oauth token", o));
  CHECK(r.method == "hybrid");
  // kw1: 1/(60+1) + 1/(60+3); kw2: 1/(60+2) + 1/(60+2); vec: 1/(60+1).
  REQUIRE(g.Ids(r) == std::vector<std::string>{"kw1", "kw2", "vec"});
  CHECK(r.contexts[0].score == doctest::Approx(1.0 / 61 + 1.0 / 63));
  CHECK(r.contexts[0].signals.rrf == r.contexts[0].score);
  CHECK(r.contexts[0].signals.vector == 0);
  CHECK(r.contexts[0].signals.bm25 > r.contexts[1].signals.bm25);
  CHECK(r.contexts[1].score == doctest::Approx(2.0 / 62));
  CHECK(r.contexts[1].signals.vector ==
        doctest::Approx(2 / std::sqrt(5.0)).epsilon(1e-6));
  CHECK(r.contexts[1].similarity == r.contexts[1].signals.vector);
  CHECK(r.contexts[2].score == doctest::Approx(1.0 / 61));
  CHECK(r.contexts[2].signals.bm25 == 0);
  CHECK(r.contexts[2].signals.vector == doctest::Approx(1.0));
  for (const SimilarContext& c : r.contexts) CHECK(c.method == "hybrid");
  o.rrf_k = 1;
  r = Must(g.graph->FindSimilar("oauth token", o));
  REQUIRE(g.Ids(r) == std::vector<std::string>{"kw1", "kw2", "vec"});
  CHECK(r.contexts[0].score == doctest::Approx(1.0 / 2 + 1.0 / 4));
  CHECK(r.contexts[2].score == doctest::Approx(1.0 / 2));
  o.rrf_k = 0;
  CheckError(g.graph->FindSimilar("x", o).status(),
             StatusCode::kInvalidArgument, "rrfK");

  // Filters apply to every method; auto is hybrid once vectors exist.
  SimilarOptions f;
  f.exclude = {"kw2"};
  f.min_similarity = 0.5;
  r = Must(g.graph->FindSimilar("oauth token", f));
  CHECK(r.method == "hybrid");
  CHECK(g.Ids(r) == std::vector<std::string>{"vec"});
  f.method = SimilarityMethod::kVector;
  r = Must(g.graph->FindSimilar("oauth token", f));
  CHECK(g.Ids(r) == std::vector<std::string>{"vec"});
  CHECK(r.contexts[0].score == doctest::Approx(1.0));
  CHECK(r.contexts[0].signals.rrf == 0);
}

TEST_CASE("no embedder or a failing one falls back, or is UNAVAILABLE") {
  SUBCASE("fallback on") {
    Graph g;
    g.Add("auth", "oauth token refresh");
    SimilarOptions o;
    o.method = SimilarityMethod::kHybrid;
    SimilarResult r = Must(g.graph->FindSimilar("oauth", o));
    CHECK(r.method == "keyword");
    CHECK(Contains(r.fallback_reason, "no embedder"));
    CHECK(g.Ids(r) == std::vector<std::string>{"auth"});
    CHECK(r.contexts[0].method == "keyword");
    auto fake = std::make_shared<FakeEmbedder>(4);
    REQUIRE(g.graph->SetEmbedding("auth", std::vector<float>{1, 0, 0, 0}).ok());
    REQUIRE(g.graph->SetEmbedder(nullptr).ok());
    REQUIRE(g.graph->ResetEmbeddings().ok());
    REQUIRE(g.graph->SetEmbedder(fake).ok());
    REQUIRE(g.graph->SetEmbedding("auth", std::vector<float>{1, 0, 0, 0}).ok());
    fake->fail = true;
    o.method = SimilarityMethod::kVector;
    r = Must(g.graph->FindSimilar("oauth", o));
    CHECK(r.method == "keyword");
    CHECK(Contains(r.fallback_reason, "model server is down"));
    // auto with a failing embedder is keyword too.
    r = Must(g.graph->FindSimilar("oauth"));
    CHECK(r.method == "keyword");
  }
  SUBCASE("fallback off") {
    ContextGraphOptions opts = testing::ManualGraphOptions();
    opts.fallback_to_keyword_match = false;
    Graph g(opts);
    g.Add("auth", "oauth token refresh");
    SimilarOptions o;
    o.method = SimilarityMethod::kVector;
    CheckError(g.graph->FindSimilar("oauth", o).status(),
               StatusCode::kUnavailable, "no embedder is installed");
    auto fake = std::make_shared<FakeEmbedder>(4);
    fake->fail = true;
    REQUIRE(g.graph->SetEmbedder(fake).ok());
    o.method = SimilarityMethod::kHybrid;
    CheckError(g.graph->FindSimilar("oauth", o).status(),
               StatusCode::kUnavailable, "model server is down");
    // auto is never refused: with no vectors it is keyword.
    CHECK(Must(g.graph->FindSimilar("oauth")).method == "keyword");
  }
}

TEST_CASE("summaries are embedded; a failing embedder keeps the write") {
  ContextGraphOptions opts = testing::ManualGraphOptions();
  auto fake = std::make_shared<FakeEmbedder>(8);
  opts.embedder = fake;
  Graph g(opts);
  g.Add("auth", "oauth token refresh");
  // AddMessage does not embed a context without a summary.
  CHECK(fake->calls == 0);
  CHECK(Must(g.graph->Verify()).vectors == 0);
  ContextSummary s = Must(g.graph->Summarize("auth"));
  CHECK(s.embedding_error.empty());
  CHECK(fake->calls == 1);
  CHECK(Must(g.graph->Verify()).vectors == 1);

  fake->fail = true;
  g.Add("auth", "another message");
  s = Must(g.graph->Summarize("auth"));
  CHECK(s.version == 2);
  CHECK(Contains(s.embedding_error, "model server is down"));
  // The summary is kept, the stale vector dropped.
  CHECK(Must(g.graph->Verify()).vectors == 0);
  CHECK(Must(g.graph->Retrieve("auth")).summary->version == 2);
  g.CheckVerified();

  SUBCASE("an automatic summary says so in AddMessage's result") {
    ContextGraphOptions auto_opts;
    auto_opts.auto_cleanup_contexts = false;
    auto_opts.message_limit_threshold = 2;
    auto failing = std::make_shared<FakeEmbedder>(8);
    failing->fail = true;
    auto_opts.embedder = failing;
    Graph h(auto_opts);
    h.Add("x", "one");
    AddGraphMessagesResult r = Must(h.graph->AddMessage(
        "x", {.role = MessageRole::kUser, .content = "two"}));
    CHECK(r.summarized);
    CHECK(Contains(r.embedding_error, "model server is down"));
    failing->fail = false;
    r = Must(
        h.graph->AddMessages("x", {{.content = "three"}, {.content = "four"}}));
    CHECK(r.summarized);
    CHECK(r.embedding_error.empty());
    CHECK(Must(h.graph->Verify()).vectors == 1);
  }
}

TEST_CASE("deleting a context or cleaning it up removes or hides its vector") {
  Graph g;
  g.Add("a", "alpha apple");
  g.Add("b", "bravo banana");
  g.Add("c", "charlie cherry");
  REQUIRE(g.graph->SetEmbedder(std::make_shared<FakeEmbedder>(4)).ok());
  REQUIRE(g.graph->SetEmbedding("a", std::vector<float>{1, 0, 0, 0}).ok());
  REQUIRE(g.graph->SetEmbedding("b", std::vector<float>{1, 1, 0, 0}).ok());
  REQUIRE(g.graph->SetEmbedding("c", std::vector<float>{1, 1, 1, 0}).ok());
  SimilarOptions o;
  o.method = SimilarityMethod::kVector;
  // "x" % 4 == 0: axis 0, nearest a, then b, then c.
  CHECK(g.Ids(Must(g.graph->FindSimilar("x", o))) ==
        std::vector<std::string>{"a", "b", "c"});
  REQUIRE(g.graph->DeleteContext("a").ok());
  CHECK(g.Ids(Must(g.graph->FindSimilar("x", o))) ==
        std::vector<std::string>{"b", "c"});
  CHECK(Must(g.graph->Verify()).vectors == 2);
  // Deleting the conversation behind a context removes its vector too.
  const std::string conv = Must(g.graph->Retrieve("b")).context.conversation_id;
  REQUIRE(g.convs->Delete(conv).ok());
  CHECK(g.Ids(Must(g.graph->FindSimilar("x", o))) ==
        std::vector<std::string>{"c"});
  CHECK(Must(g.graph->Verify()).vectors == 1);
  g.CheckVerified();

  SUBCASE("archived contexts are hidden unless asked for") {
    g.Add("d", "delta date");
    g.clock.Advance(30LL * 24 * 3600 * 1000);
    g.Add("e", "echo elder");
    CleanupOptions c;
    c.min_contexts = 0;
    CleanupResult cleaned = Must(g.graph->Cleanup("e", c));
    CHECK(cleaned.cleaned_contexts == std::vector<std::string>{"c", "d"});
    CHECK(g.Ids(Must(g.graph->FindSimilar("x", o))).empty());
    o.include_archived = true;
    CHECK(g.Ids(Must(g.graph->FindSimilar("x", o))) ==
          std::vector<std::string>{"c"});
  }
  SUBCASE("cleanup's delete mode deletes the vector") {
    g.Add("d", "delta date");
    g.clock.Advance(30LL * 24 * 3600 * 1000);
    g.Add("e", "echo elder");
    CleanupOptions c;
    c.min_contexts = 0;
    c.mode = CleanupMode::kDelete;
    CHECK(Must(g.graph->Cleanup("e", c)).cleaned_contexts ==
          std::vector<std::string>{"c", "d"});
    o.include_archived = true;
    CHECK(g.Ids(Must(g.graph->FindSimilar("x", o))).empty());
    CHECK(Must(g.graph->Verify()).vectors == 0);
    g.CheckVerified();
  }
}

TEST_CASE("Verify finds a missing, an extra and a damaged vector") {
  Graph g;
  g.Add("a", "alpha");
  g.Add("b", "beta");
  REQUIRE(g.graph->SetEmbedding("a", std::vector<float>{1, 2, 3}).ok());
  REQUIRE(g.graph->SetEmbedding("b", std::vector<float>{3, 2, 1}).ok());
  g.CheckVerified();
  Database vec = Must(g.store->OpenDatabase("graph.vec"));
  Database vecf = Must(g.store->OpenDatabase("graph.vecf"));
  auto first_key = [&](Database db) {
    std::string key;
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  Cursor c = Must(txn.NewCursor(db));
                  c.SeekToFirst();
                  REQUIRE(c.Valid());
                  key = std::string(c.key());
                  return Status();
                })
                .ok());
    return key;
  };
  auto problems = [&]() {
    GraphVerifyReport report = Must(g.graph->Verify());
    CHECK_FALSE(report.ok);
    std::string all;
    for (const std::string& p : report.problems) all += p + "\n";
    return all;
  };
  SUBCASE("a lost scan row") {
    const std::string key = first_key(vec);
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  return txn.Delete(vec, key).status();
                })
                .ok());
    CHECK(Contains(problems(), "its vector has no scan row"));
  }
  SUBCASE("a vector of no context") {
    std::string key(8, '\0');
    key[7] = 99;
    const std::vector<float> v = {1, 1, 1};
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  return txn.Put(
                      vecf, key,
                      std::string_view(reinterpret_cast<const char*>(v.data()),
                                       12));
                })
                .ok());
    const std::string all = problems();
    CHECK(Contains(all, "vector of context 99 belongs to no context"));
    CHECK(Contains(all, "no scan row"));
  }
  SUBCASE("a scan row that does not match its vector") {
    const std::string key = first_key(vec);
    REQUIRE(g.store
                ->Update([&](WriteTransaction& txn) {
                  return txn.Put(vec, key, std::string(4 + 3, '\x01'));
                })
                .ok());
    CHECK(Contains(problems(), "scan row does not match"));
  }
}

TEST_CASE("a second graph on the store sees the first one's vectors") {
  Graph g;
  g.Add("a", "alpha");
  g.Add("b", "beta");
  ContextGraphOptions o = testing::ManualGraphOptions();
  o.embedder = std::make_shared<FakeEmbedder>(4);
  std::unique_ptr<ContextGraph> second =
      Must(ContextGraph::Open(*g.store, *g.convs, o));
  SimilarOptions s;
  s.method = SimilarityMethod::kVector;
  CHECK(Must(second->FindSimilar("x", s)).contexts.empty());
  // Written by the first graph after the second built its scan copy.
  REQUIRE(g.graph->SetEmbedder(std::make_shared<FakeEmbedder>(4)).ok());
  REQUIRE(g.graph->SetEmbedding("a", std::vector<float>{1, 0, 0, 0}).ok());
  REQUIRE(g.graph->SetEmbedding("b", std::vector<float>{0, 1, 0, 0}).ok());
  SimilarResult r = Must(second->FindSimilar("x", s));
  REQUIRE(r.contexts.size() == 2);
  CHECK(r.contexts[0].context_id == "a");
  CHECK(r.contexts[0].similarity == doctest::Approx(1.0));
  CHECK(r.contexts[1].similarity == 0);  // max(0, cosine)
  // A change and a delete reach it too.
  REQUIRE(g.graph->SetEmbedding("b", std::vector<float>{1, 0, 0, 0}).ok());
  REQUIRE(g.graph->DeleteContext("a").ok());
  r = Must(second->FindSimilar("x", s));
  REQUIRE(r.contexts.size() == 1);
  CHECK(r.contexts[0].context_id == "b");
  CHECK(r.contexts[0].similarity == doctest::Approx(1.0));
  // And a reset.
  REQUIRE(g.graph->ResetEmbeddings().ok());
  CHECK(Must(second->FindSimilar("x", s)).contexts.empty());
}

}  // namespace
}  // namespace ctxkit
