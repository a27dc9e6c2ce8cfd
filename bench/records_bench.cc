// The speed of the conversations, references and cache
// parts, and the same inserts and lookups on a plain SQLite table in the
// same run (the seed system keeps its records in SQLite through
// better-sqlite3).
//
//   build/release/bench/records_bench --benchmark_counters_tabular=true
//
// Benchmarks (all single-threaded):
//   CacheGetHit/keys:<n>          Cache::Get of 1 KiB entries (10k entries,
//                                 random keys among the first n: 10000, all
//                                 of them uniformly, or 100, a hot set such
//                                 as a few system prompts; every Get is a hit)
//   AddMessagesBatched/<model>/batch:<n>   AddMessages of n typical ~200-byte
//                                 messages (exact token counting with the
//                                 conversation's model) in one durable commit
//   AddMessageDurable/<model>/sync:<s>   one AddMessage, so one durable
//                                 commit, per message; s = StoreSync
//                                 (0 kFull, 1 kDataOnly)
//   ReferenceSearch/<queries>     top-10 BM25 search over 100k references
//   AggregateStats                on a store of 10k conversations and 1M
//                                 messages
//   ConversationGet/<model>/messages:<0|1>   Get of a conversation of 5,000
//                                 messages of about 1 KiB, with its messages
//                                 or only actual_tokens
//   ConversationStats/<model>     ConversationStats of the same conversation
//   ConversationRecount/<model>   CountMessagesForModel of its history: the
//                                 re-tokenization Get did before it summed
//                                 the stored counts (actual_tokens agree)
//   Sqlite*                       the SQLite counterparts (see below)
// After the run it prints each figure against its target and the ctxkit /
// SQLite ratios.
//
// Data. Message, reference and query text is real English: the words of
// every licence text in /usr/share/common-licenses (symlinks excluded), cut
// into windows at random offsets (fixed seeds). The 100k-reference and
// 1M-message stores take minutes to build, so they are built once into
// $CTXKIT_BENCH_CACHE (default /dev/shm/ctxkit-bench-cache-<uid> when
// /dev/shm exists, else <bench dir>/ctxkit-bench-cache) and reused by later
// runs; only reads are timed on them. Building on tmpfs skips the fsync of
// each of their ~110k commits, which the build does not measure. Delete the
// directory to rebuild (or when done: it holds about 1.2 GB).
//
// Write benchmarks (AddMessage*, SqliteInsert*) run on a fresh store in
// $CTXKIT_BENCH_DIR, else $TMPDIR, else /tmp: put it on the disk you care
// about. Every ctxkit commit is durable (fsync of the LMDB file).
//
// SQLite (when the build found it; otherwise these are skipped with a
// message): journal_mode=WAL, synchronous=FULL (every commit fsyncs the
// WAL: durable, like ctxkit), prepared statements, and the records ctxkit
// keeps for a message, written in one transaction as AddMessages writes
// them (class Sqlite): the message under (conversation, seq) with a unique
// index on its id, the conversation's totals, and the global, per-model and
// per-day totals; one table blobs(key TEXT PRIMARY KEY, content BLOB) for
// lookups.
//   SqliteInsertBatched/batch:<n>        n messages in one transaction;
//                                        tokens are not counted (0)
//   SqliteInsertBatchedCounted/batch:<n> the same, counting each message's
//                                        tokens with ctxkit first (what an
//                                        SQLite-backed ctxkit would do)
//   SqliteInsertDurable                  one message per transaction
//   SqliteGetBlob                        SELECT content of a 1 KiB blob by
//                                        primary key, copied out; unlike
//                                        Cache::Get it counts no hit
// The machine's load average is printed before and after: on a busy machine
// every figure and ratio is unreliable.

#include <benchmark/benchmark.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_inputs.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/references.h"
#include "ctxkit/store.h"

#if CTXKIT_BENCH_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace {

namespace fs = std::filesystem;
using ctxkit::Status;
using ctxkit::bench::LoadAverage;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "records_bench: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Must(ctxkit::StatusOr<T> v, const char* what) {
  if (!v.ok()) Fail(std::string(what) + ": " + v.status().ToString());
  return std::move(v).value();
}

std::string BenchBase() {
  for (const char* var : {"CTXKIT_BENCH_DIR", "TMPDIR"}) {
    const char* v = getenv(var);
    if (v != nullptr && *v != '\0') return v;
  }
  return "/tmp";
}

std::string CacheBase() {
  const char* v = getenv("CTXKIT_BENCH_CACHE");
  if (v != nullptr && *v != '\0') return v;
  if (fs::is_directory("/dev/shm")) {
    return "/dev/shm/ctxkit-bench-cache-" + std::to_string(getuid());
  }
  return BenchBase() + "/ctxkit-bench-cache";
}

// Fresh directories, removed at exit.
class ScratchDirs {
 public:
  ~ScratchDirs() {
    for (const std::string& d : dirs_) {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  }
  std::string Make(const std::string& name) {
    std::string tmpl =
        BenchBase() + "/ctxkit-records-bench-" + name + "-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) Fail("mkdtemp in " + BenchBase());
    dirs_.push_back(tmpl);
    return tmpl;
  }

 private:
  std::vector<std::string> dirs_;
};
ScratchDirs* scratch = nullptr;

// ---- Text ------------------------------------------------------------------

// The words of the licence texts, in order.
const std::vector<std::string>& CorpusWords() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> files;
    const std::string dir = "/usr/share/common-licenses";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_regular_file() && !entry.is_symlink()) {
        files.push_back(entry.path().string());
      }
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> out;
    for (const std::string& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::string w;
      while (in >> w) {
        // Keep ASCII words only: every one is then valid UTF-8 on its own.
        if (std::all_of(w.begin(), w.end(), [](char c) {
              return static_cast<unsigned char>(c) < 0x80;
            })) {
          out.push_back(w);
        }
      }
    }
    if (out.size() < 10000) Fail("too few words in " + dir);
    return out;
  }();
  return words;
}

// Consecutive corpus words from a random offset until about `bytes` long.
std::string TextWindow(std::mt19937_64& rng, size_t bytes) {
  const auto& words = CorpusWords();
  size_t i = rng() % words.size();
  std::string out;
  while (out.size() < bytes) {
    const std::string& w = words[i++ % words.size()];
    if (!out.empty() && out.size() + 1 + w.size() > bytes + 8) break;
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// 10,000 "typical" chat messages of about 200 bytes.
const std::vector<std::string>& Messages200() {
  static const std::vector<std::string> messages = [] {
    std::mt19937_64 rng(200);
    std::vector<std::string> out;
    for (int i = 0; i < 10000; ++i) out.push_back(TextWindow(rng, 200));
    return out;
  }();
  return messages;
}

double MeanBytes(const std::vector<std::string>& v) {
  double total = 0;
  for (const auto& s : v) total += static_cast<double>(s.size());
  return total / static_cast<double>(v.size());
}

std::string FakeUuid(std::mt19937_64& rng) {
  static const char* hex = "0123456789abcdef";
  std::string out(36, '-');
  for (size_t i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) continue;
    out[i] = hex[rng() % 16];
  }
  return out;
}

// A message id as ctxkit makes one (a UUID v7: the time in ms, then random
// digits), so that the SQLite peer's id index grows at its end as ctxkit's
// does.
std::string TimeOrderedUuid(std::mt19937_64& rng) {
  std::string out = FakeUuid(rng);
  const auto ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  static const char* hex = "0123456789abcdef";
  for (int i = 0, pos = 0; i < 12; ++i, ++pos) {
    if (pos == 8) ++pos;  // the hyphen
    out[pos] = hex[(ms >> (4 * (11 - i))) & 15];
  }
  out[14] = '7';
  return out;
}

// ---- Stores built once -----------------------------------------------------

// The store `name` under CacheBase(), built by `build` when it is not there
// yet (a "complete" file marks a finished build).
std::string Prebuilt(const std::string& name,
                     const std::function<void(const std::string& dir)>& build) {
  const std::string dir = CacheBase() + "/" + name;
  if (fs::exists(dir + "/complete")) return dir;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) Fail("cannot create " + dir + ": " + ec.message());
  std::fprintf(stderr,
               "records_bench: building %s (once; cached for later runs)...\n",
               dir.c_str());
  const auto start = std::chrono::steady_clock::now();
  build(dir);
  std::ofstream(dir + "/complete") << "ok\n";
  std::fprintf(
      stderr, "records_bench: built %s in %.1f s\n", dir.c_str(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return dir;
}

ctxkit::StoreOptions BigStore() {
  ctxkit::StoreOptions options;
  options.map_size = uint64_t{4} << 30;  // growth is not what is measured
  return options;
}

// Opened once per process (one Store per directory per process).
struct Opened {
  std::unique_ptr<ctxkit::Store> store;
  std::unique_ptr<ctxkit::ConversationStore> convs;
  std::unique_ptr<ctxkit::ReferenceStore> refs;
  std::unique_ptr<ctxkit::Cache> cache;
};

// 10,000 cache entries of 1 KiB; their keys are kept in keys.txt.
constexpr int kCacheEntries = 10000;

struct CacheFixture {
  Opened o;
  std::vector<std::string> keys;
};

CacheFixture& CacheStore() {
  static CacheFixture* f = [] {
    const std::string dir = Prebuilt("cache-1k-v1", [](const std::string& d) {
      auto store = Must(ctxkit::Store::Open(d + "/store", BigStore()), "open");
      auto cache = Must(ctxkit::Cache::Open(*store), "Cache::Open");
      std::mt19937_64 rng(1024);
      std::ofstream keys(d + "/keys.txt");
      for (int i = 0; i < kCacheEntries; ++i) {
        std::string content = std::to_string(i) + " " + TextWindow(rng, 1024);
        content.resize(1024, '.');
        auto put = Must(cache->Put(content), "Cache::Put");
        keys << put.key << "\n";
      }
    });
    auto* fx = new CacheFixture;
    fx->o.store = Must(ctxkit::Store::Open(dir + "/store", BigStore()), "open");
    fx->o.cache = Must(ctxkit::Cache::Open(*fx->o.store), "Cache::Open");
    std::ifstream keys(dir + "/keys.txt");
    for (std::string k; std::getline(keys, k);) fx->keys.push_back(k);
    if (fx->keys.size() != kCacheEntries) Fail("bad keys.txt in " + dir);
    return fx;
  }();
  return *f;
}

// 100,000 references: titles of 3-8 words, contents of 40-400 words.
constexpr int kReferences = 100000;

Opened& ReferenceCorpus() {
  static Opened* o = [] {
    const std::string dir = Prebuilt("refs-100k-v1", [](const std::string& d) {
      auto store = Must(ctxkit::Store::Open(d + "/store", BigStore()), "open");
      auto refs =
          Must(ctxkit::ReferenceStore::Open(*store), "ReferenceStore::Open");
      std::mt19937_64 rng(100000);
      for (int i = 0; i < kReferences; ++i) {
        ctxkit::NewReference r;
        r.type = std::string(ctxkit::kReferenceTypes[rng() % 5]);
        r.title = TextWindow(rng, 20 + rng() % 40);
        r.content = TextWindow(rng, 250 + rng() % 2250);
        Must(refs->Add(r), "ReferenceStore::Add");
        if ((i + 1) % 10000 == 0) {
          std::fprintf(stderr, "  %d references\n", i + 1);
        }
      }
    });
    auto* opened = new Opened;
    opened->store =
        Must(ctxkit::Store::Open(dir + "/store", BigStore()), "open");
    opened->refs = Must(ctxkit::ReferenceStore::Open(*opened->store),
                        "ReferenceStore::Open");
    return opened;
  }();
  return *o;
}

// 10,000 conversations of 100 messages (alternating user and assistant,
// from Messages200), spread over 2024 (one day per ~27 conversations), 70%
// claude-3-5-sonnet, 20% gpt-4o, 10% gpt-3.5-turbo. Two threads: token
// counting runs outside the write lock, so it overlaps the other's commit.
constexpr int kConversations = 10000;
constexpr int kMessagesPerConversation = 100;

Opened& StatsCorpus() {
  static Opened* o = [] {
    const std::string dir =
        Prebuilt("stats-10k-1m-v1", [](const std::string& d) {
          auto store =
              Must(ctxkit::Store::Open(d + "/store", BigStore()), "open");
          std::atomic<int64_t> now{1704067200000};  // 2024-01-01
          ctxkit::ConversationOptions options;
          options.clock = [&now] { return now.load(); };
          auto convs =
              Must(ctxkit::ConversationStore::Open(*store, options), "open");
          const auto& pool = Messages200();
          std::atomic<int> next{0};
          auto work = [&](int thread) {
            std::mt19937_64 rng(static_cast<uint64_t>(thread) + 77);
            for (int i; (i = next.fetch_add(1)) < kConversations;) {
              // Monotonic enough: each conversation moves the clock ~52 min.
              int64_t at = 1704067200000 + int64_t{i} * 3153600;
              int64_t cur = now.load();
              while (cur < at && !now.compare_exchange_weak(cur, at)) {
              }
              ctxkit::NewConversation c;
              c.title = "conversation " + std::to_string(i);
              const int m = i % 10;
              c.model = m < 7   ? "claude-3-5-sonnet"
                        : m < 9 ? "gpt-4o"
                                : "gpt-3.5-turbo";
              auto created = Must(convs->Create(c), "Create");
              std::vector<ctxkit::NewMessage> batch(kMessagesPerConversation);
              for (int k = 0; k < kMessagesPerConversation; ++k) {
                batch[k].role = k % 2 == 0 ? ctxkit::MessageRole::kUser
                                           : ctxkit::MessageRole::kAssistant;
                batch[k].content = pool[rng() % pool.size()];
              }
              Must(convs->AddMessages(created.id, batch), "AddMessages");
              if ((i + 1) % 1000 == 0)
                std::fprintf(stderr, "  %d conversations\n", i + 1);
            }
          };
          std::thread other(work, 1);
          work(0);
          other.join();
        });
    auto* opened = new Opened;
    opened->store =
        Must(ctxkit::Store::Open(dir + "/store", BigStore()), "open");
    opened->convs =
        Must(ctxkit::ConversationStore::Open(*opened->store), "open");
    return opened;
  }();
  return *o;
}

// A fresh store on the bench disk for the write benchmarks.
Opened& FreshStore(ctxkit::StoreSync sync = ctxkit::StoreSync::kFull) {
  // One store per sync mode: the mode is fixed when a store is opened.
  static Opened* stores[2] = {};
  Opened*& o = stores[sync == ctxkit::StoreSync::kFull ? 0 : 1];
  if (o == nullptr) {
    o = new Opened;
    ctxkit::StoreOptions options = BigStore();
    options.sync = sync;
    o->store =
        Must(ctxkit::Store::Open(scratch->Make(sync == ctxkit::StoreSync::kFull
                                                   ? "writes"
                                                   : "writes-data-only") +
                                     "/store",
                                 options),
             "open");
    o->convs = Must(ctxkit::ConversationStore::Open(*o->store), "open");
  }
  return *o;
}

// ---- ctxkit benchmarks -----------------------------------------------------

void BM_CacheGetHit(benchmark::State& state) {
  CacheFixture& f = CacheStore();
  const auto keys =
      std::min(static_cast<size_t>(state.range(0)), f.keys.size());
  uint64_t rng = 88172645463325252ull;
  uint64_t bytes = 0;
  for (auto _ : state) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    auto got = f.o.cache->Get(f.keys[rng % keys]);
    if (!got.ok()) {
      state.SkipWithError(got.status().ToString().c_str());
      break;
    }
    bytes += got->content.size();
    benchmark::DoNotOptimize(got->content.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

const char* kModels[] = {"claude-3-5-sonnet", "gpt-4o"};

std::string NewConversation(const char* model,
                            ctxkit::StoreSync sync = ctxkit::StoreSync::kFull) {
  ctxkit::NewConversation c;
  c.title = "bench";
  c.model = model;
  return Must(FreshStore(sync).convs->Create(c), "Create").id;
}

void BM_AddMessagesBatched(benchmark::State& state) {
  const char* model = kModels[state.range(0)];
  const auto batch_size = static_cast<size_t>(state.range(1));
  const auto& pool = Messages200();
  const std::string id = NewConversation(model);
  std::vector<ctxkit::NewMessage> batch(batch_size);
  size_t next = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < batch_size; ++i) {
      batch[i].role = i % 2 == 0 ? ctxkit::MessageRole::kUser
                                 : ctxkit::MessageRole::kAssistant;
      batch[i].content = pool[next++ % pool.size()];
      bytes += static_cast<int64_t>(batch[i].content.size());
    }
    state.ResumeTiming();
    auto added = FreshStore().convs->AddMessages(id, batch);
    if (!added.ok()) {
      state.SkipWithError(added.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(1));
  state.SetBytesProcessed(bytes);
  state.SetLabel(model);
}

void BM_AddMessageDurable(benchmark::State& state) {
  const char* model = kModels[state.range(0)];
  const auto sync = static_cast<ctxkit::StoreSync>(state.range(1));
  const auto& pool = Messages200();
  const std::string id = NewConversation(model, sync);
  ctxkit::ConversationStore& convs = *FreshStore(sync).convs;
  ctxkit::NewMessage m;
  size_t next = 0;
  for (auto _ : state) {
    m.content = pool[next++ % pool.size()];
    auto added = convs.AddMessage(id, m);
    if (!added.ok()) {
      state.SkipWithError(added.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(model);
}

// Query sets: 0 = "typical", two or three content words of the corpus
// (windows of it, stop words dropped); 1 = with stop words ("the", "of",
// ... match nearly every reference: the worst case).
std::vector<std::string> Queries(int kind) {
  static const char* kStop[] = {"the", "of",   "and", "or",   "to",  "a",
                                "in",  "that", "is",  "for",  "any", "this",
                                "be",  "by",   "you", "with", "as",  "are",
                                "on",  "not",  "an",  "it",   "may"};
  auto is_stop = [](const std::string& w) {
    for (const char* s : kStop) {
      std::string lw = w;
      std::transform(lw.begin(), lw.end(), lw.begin(), ::tolower);
      if (lw == s) return true;
    }
    return false;
  };
  std::mt19937_64 rng(kind == 0 ? 4242 : 4343);
  const auto& words = CorpusWords();
  std::vector<std::string> out;
  while (out.size() < 200) {
    size_t i = rng() % words.size();
    std::string q;
    int n = 0;
    const int want = 2 + static_cast<int>(rng() % 2);
    for (; n < want && i < words.size(); ++i) {
      std::string w;
      for (char c : words[i]) {
        if (std::isalnum(static_cast<unsigned char>(c))) w += c;
      }
      if (w.empty() || (kind == 0 && is_stop(w))) continue;
      if (!q.empty()) q += ' ';
      q += w;
      ++n;
    }
    if (kind == 1) q = "the " + q + " of";
    if (n == want) out.push_back(q);
  }
  return out;
}

void BM_ReferenceSearch(benchmark::State& state) {
  Opened& o = ReferenceCorpus();
  const std::vector<std::string> queries =
      Queries(static_cast<int>(state.range(0)));
  ctxkit::SearchReferencesOptions options;
  options.limit = 10;
  size_t next = 0;
  uint64_t matches = 0;
  for (auto _ : state) {
    options.query = queries[next++ % queries.size()];
    auto found = o.refs->Search(options);
    if (!found.ok()) {
      state.SkipWithError(found.status().ToString().c_str());
      break;
    }
    matches += found->total_matches;
    benchmark::DoNotOptimize(found->results.data());
  }
  state.counters["matches_per_query"] =
      static_cast<double>(matches) /
      static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) == 0 ? "content words" : "with stop words");
}

void BM_AggregateStats(benchmark::State& state) {
  Opened& o = StatsCorpus();
  uint64_t messages = 0, days = 0;
  for (auto _ : state) {
    auto stats = o.convs->AggregateStats();
    if (!stats.ok()) {
      state.SkipWithError(stats.status().ToString().c_str());
      break;
    }
    messages = stats->messages;
    days = stats->days.size();
    benchmark::DoNotOptimize(stats->total_tokens);
  }
  state.counters["messages"] = static_cast<double>(messages);
  state.counters["days"] = static_cast<double>(days);
  state.SetItemsProcessed(state.iterations());
}

// A conversation of 5,000 messages of about 1 KiB, alternating user and
// assistant, in the FreshStore, one per model; its id.
const std::string& LongConversation(int model) {
  static std::string ids[std::size(kModels)];
  std::string& id = ids[model];
  if (id.empty()) {
    id = NewConversation(kModels[model]);
    std::mt19937_64 rng(5000);
    std::vector<ctxkit::NewMessage> batch(5000);
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i].role = i % 2 == 0 ? ctxkit::MessageRole::kUser
                                 : ctxkit::MessageRole::kAssistant;
      batch[i].content = TextWindow(rng, 1024);
    }
    Must(FreshStore().convs->AddMessages(id, batch), "AddMessages");
  }
  return id;
}

// ConversationStore::Get of LongConversation, with its messages (range 1 =
// 1) or only actual_tokens (0): what reading a conversation costs beside its
// statistics (ConversationStats below).
void BM_ConversationGet(benchmark::State& state) {
  const int model = static_cast<int>(state.range(0));
  const bool with_messages = state.range(1) != 0;
  const std::string& id = LongConversation(model);
  uint64_t tokens = 0;
  for (auto _ : state) {
    auto got = FreshStore().convs->Get(id, with_messages);
    if (!got.ok()) {
      state.SkipWithError(got.status().ToString().c_str());
      break;
    }
    tokens = got->actual_tokens;
    benchmark::DoNotOptimize(got->messages.data());
  }
  state.counters["actual_tokens"] = static_cast<double>(tokens);
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kModels[model]);
}

void BM_ConversationStats(benchmark::State& state) {
  const int model = static_cast<int>(state.range(0));
  const std::string& id = LongConversation(model);
  for (auto _ : state) {
    auto stats = FreshStore().convs->ConversationStats(id);
    if (!stats.ok()) {
      state.SkipWithError(stats.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(stats->timeline.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kModels[model]);
}

// CountMessagesForModel of LongConversation's history as the OpenAI message
// array Get's actual_tokens stands for (built once, outside the timing):
// the re-tokenization Get did on every call before it summed stored counts.
void BM_ConversationRecount(benchmark::State& state) {
  const int model = static_cast<int>(state.range(0));
  const std::string& id = LongConversation(model);
  const ctxkit::ConversationDetail detail =
      Must(FreshStore().convs->Get(id, true), "Get");
  std::string json = "[";
  for (const ctxkit::Message& m : detail.messages) {
    if (json.size() > 1) json += ',';
    // The corpus text needs no escaping beyond these.
    std::string content;
    for (char c : m.content) {
      if (c == '"' || c == '\\') content += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      content += c;
    }
    json += std::string(R"({"role":")") + ctxkit::MessageRoleName(m.role) +
            R"(","content":")" + content + "\"}";
  }
  json += ']';
  uint64_t tokens = 0;
  for (auto _ : state) {
    auto count = ctxkit::CountMessagesForModel(kModels[model], json);
    if (!count.ok()) {
      state.SkipWithError(count.status().ToString().c_str());
      break;
    }
    tokens = count->total;
  }
  state.counters["actual_tokens"] = static_cast<double>(tokens);
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kModels[model]);
}

BENCHMARK(BM_CacheGetHit)
    ->ArgName("keys")
    ->Arg(10000)
    ->Arg(100)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);
BENCHMARK(BM_ConversationRecount)
    ->ArgName("model")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConversationGet)
    ->ArgNames({"model", "messages"})
    ->Args({0, 1})
    ->Args({0, 0})
    ->Args({1, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConversationStats)
    ->ArgName("model")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AddMessagesBatched)
    ->ArgNames({"model", "batch"})
    ->Args({0, 100})
    ->Args({0, 1000})
    ->Args({1, 1000})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AddMessageDurable)
    ->ArgNames({"model", "sync"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReferenceSearch)
    ->ArgName("stopwords")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AggregateStats)->UseRealTime()->Unit(benchmark::kMicrosecond);

// ---- SQLite ----------------------------------------------------------------

#if CTXKIT_BENCH_HAVE_SQLITE

// One message as the SQLite peer stores it.
struct SqliteMessage {
  std::string id;
  bool user = true;  // else assistant
  const std::string* content = nullptr;
  int64_t tokens = 0;
};

class Sqlite {
 public:
  explicit Sqlite(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK)
      Fail("sqlite3_open " + path);
    Exec("PRAGMA journal_mode=WAL");
    Exec("PRAGMA synchronous=FULL");
    // What ctxkit keeps for a message, as tables: the message clustered by
    // (conversation, seq) with a unique index on its id (ctxkit's messages
    // and message_ids databases), the conversation's totals, and the
    // store-wide, per-model and per-day totals (ctxkit's stats database).
    Exec(
        "CREATE TABLE IF NOT EXISTS conversations(id TEXT PRIMARY KEY, "
        "model TEXT NOT NULL, next_seq INTEGER NOT NULL, message_count "
        "INTEGER NOT NULL, user_tokens INTEGER NOT NULL, assistant_tokens "
        "INTEGER NOT NULL, total_tokens INTEGER NOT NULL, last_message TEXT "
        "NOT NULL, last_message_at INTEGER NOT NULL, updated_at INTEGER NOT "
        "NULL)");
    Exec(
        "CREATE TABLE IF NOT EXISTS messages(conversation_id TEXT NOT NULL, "
        "seq INTEGER NOT NULL, id TEXT NOT NULL UNIQUE, role TEXT NOT NULL, "
        "content TEXT NOT NULL, tokens INTEGER NOT NULL, created_at INTEGER "
        "NOT NULL, PRIMARY KEY(conversation_id, seq)) WITHOUT ROWID");
    Exec(
        "CREATE TABLE IF NOT EXISTS stats(key TEXT PRIMARY KEY, messages "
        "INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens "
        "INTEGER NOT NULL)");
    Exec(
        "CREATE TABLE IF NOT EXISTS blobs(key TEXT PRIMARY KEY, content BLOB "
        "NOT NULL)");
  }
  ~Sqlite() {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    sqlite3_close(db_);
  }
  void Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string e = err ? err : "?";
      sqlite3_free(err);
      Fail(std::string("sqlite: ") + sql + ": " + e);
    }
  }
  sqlite3_stmt* Prepare(const char* sql) {
    auto& stmt = statements_[sql];
    if (stmt == nullptr &&
        sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) != SQLITE_OK) {
      Fail(std::string("sqlite prepare: ") + sqlite3_errmsg(db_));
    }
    return stmt;
  }
  void Step(sqlite3_stmt* s, int want) {
    if (sqlite3_step(s) != want)
      Fail(std::string("sqlite: ") + sqlite3_errmsg(db_));
  }

  void CreateConversation(const std::string& id, const char* model) {
    sqlite3_stmt* s = Prepare(
        "INSERT INTO conversations VALUES(?, ?, 0, 0, 0, 0, 0, '', 0, 0)");
    sqlite3_bind_text(s, 1, id.data(), static_cast<int>(id.size()),
                      SQLITE_STATIC);
    sqlite3_bind_text(s, 2, model, -1, SQLITE_STATIC);
    Step(s, SQLITE_DONE);
    sqlite3_reset(s);
  }

  // What ConversationStore::AddMessages does, in one transaction: reads the
  // conversation's next seq, inserts each message, then updates the
  // conversation's totals and the global, model and day totals once.
  void AddMessages(const std::string& conversation, const char* model,
                   const std::vector<SqliteMessage>& batch) {
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    Exec("BEGIN");
    sqlite3_stmt* seq =
        Prepare("SELECT next_seq FROM conversations WHERE id = ?");
    sqlite3_bind_text(seq, 1, conversation.data(),
                      static_cast<int>(conversation.size()), SQLITE_STATIC);
    Step(seq, SQLITE_ROW);
    int64_t next = sqlite3_column_int64(seq, 0);
    sqlite3_reset(seq);
    sqlite3_stmt* ins = Prepare(
        "INSERT INTO messages(conversation_id, seq, id, role, content, "
        "tokens, created_at) VALUES(?, ?, ?, ?, ?, ?, ?)");
    int64_t user = 0;
    int64_t assistant = 0;
    for (const SqliteMessage& m : batch) {
      sqlite3_bind_text(ins, 1, conversation.data(),
                        static_cast<int>(conversation.size()), SQLITE_STATIC);
      sqlite3_bind_int64(ins, 2, ++next);
      sqlite3_bind_text(ins, 3, m.id.data(), static_cast<int>(m.id.size()),
                        SQLITE_STATIC);
      sqlite3_bind_text(ins, 4, m.user ? "user" : "assistant", -1,
                        SQLITE_STATIC);
      sqlite3_bind_text(ins, 5, m.content->data(),
                        static_cast<int>(m.content->size()), SQLITE_STATIC);
      sqlite3_bind_int64(ins, 6, m.tokens);
      sqlite3_bind_int64(ins, 7, now);
      Step(ins, SQLITE_DONE);
      sqlite3_reset(ins);
      (m.user ? user : assistant) += m.tokens;
    }
    const auto count = static_cast<int64_t>(batch.size());
    const std::string& last = *batch.back().content;
    sqlite3_stmt* conv = Prepare(
        "UPDATE conversations SET next_seq = ?, message_count = "
        "message_count + ?, user_tokens = user_tokens + ?, assistant_tokens "
        "= assistant_tokens + ?, total_tokens = total_tokens + ?, "
        "last_message = substr(?, 1, 100), last_message_at = ?, updated_at = "
        "? WHERE id = ?");
    sqlite3_bind_int64(conv, 1, next);
    sqlite3_bind_int64(conv, 2, count);
    sqlite3_bind_int64(conv, 3, user);
    sqlite3_bind_int64(conv, 4, assistant);
    sqlite3_bind_int64(conv, 5, user + assistant);
    sqlite3_bind_text(conv, 6, last.data(), static_cast<int>(last.size()),
                      SQLITE_STATIC);
    sqlite3_bind_int64(conv, 7, now);
    sqlite3_bind_int64(conv, 8, now);
    sqlite3_bind_text(conv, 9, conversation.data(),
                      static_cast<int>(conversation.size()), SQLITE_STATIC);
    Step(conv, SQLITE_DONE);
    sqlite3_reset(conv);
    sqlite3_stmt* stats = Prepare(
        "INSERT INTO stats VALUES(?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
        "messages = messages + excluded.messages, input_tokens = "
        "input_tokens + excluded.input_tokens, output_tokens = "
        "output_tokens + excluded.output_tokens");
    const std::string keys[] = {"global", std::string("model:") + model,
                                "day:" + std::to_string(now / 86400000)};
    for (const std::string& key : keys) {
      sqlite3_bind_text(stats, 1, key.data(), static_cast<int>(key.size()),
                        SQLITE_STATIC);
      sqlite3_bind_int64(stats, 2, count);
      sqlite3_bind_int64(stats, 3, user);
      sqlite3_bind_int64(stats, 4, assistant);
      Step(stats, SQLITE_DONE);
      sqlite3_reset(stats);
    }
    Exec("COMMIT");
  }
  sqlite3* db() { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::map<std::string, sqlite3_stmt*> statements_;
};

// One generator for every inserted id: benchmark functions run several
// times, and a fresh seed would repeat ids.
std::mt19937_64& IdRng() {
  static std::mt19937_64 rng(1);
  return rng;
}

Sqlite& SqliteWrites() {
  static Sqlite* db = new Sqlite(scratch->Make("sqlite") + "/messages.db");
  return *db;
}

// A new conversation in the SQLite peer.
std::string SqliteConversation(Sqlite& db) {
  const std::string id = FakeUuid(IdRng());
  db.CreateConversation(id, "claude-3-5-sonnet");
  return id;
}

void SqliteBatched(benchmark::State& state, bool count_tokens) {
  Sqlite& db = SqliteWrites();
  const auto& pool = Messages200();
  std::mt19937_64& rng = IdRng();
  const std::string conversation = SqliteConversation(db);
  std::vector<SqliteMessage> batch(static_cast<size_t>(state.range(0)));
  size_t next = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < batch.size(); ++i) {
      SqliteMessage& m = batch[i];
      m.id = TimeOrderedUuid(rng);
      m.user = i % 2 == 0;
      m.content = &pool[next++ % pool.size()];
      m.tokens = 0;
      if (count_tokens) {
        auto n = ctxkit::CountTokens("claude-3-5-sonnet", *m.content);
        if (!n.ok()) Fail(n.status().ToString());
        m.tokens = static_cast<int64_t>(n->tokens);
      }
    }
    db.AddMessages(conversation, "claude-3-5-sonnet", batch);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_SqliteInsertBatched(benchmark::State& state) {
  SqliteBatched(state, false);
}
void BM_SqliteInsertBatchedCounted(benchmark::State& state) {
  SqliteBatched(state, true);
}

void BM_SqliteInsertDurable(benchmark::State& state) {
  Sqlite& db = SqliteWrites();
  const auto& pool = Messages200();
  std::mt19937_64& rng = IdRng();
  const std::string conversation = SqliteConversation(db);
  std::vector<SqliteMessage> one(1);
  size_t next = 0;
  for (auto _ : state) {
    one[0].id = TimeOrderedUuid(rng);
    one[0].content = &pool[next++ % pool.size()];
    db.AddMessages(conversation, "claude-3-5-sonnet", one);
  }
  state.SetItemsProcessed(state.iterations());
}

// The same 10,000 1 KiB contents as the cache, under the same keys.
struct SqliteBlobs {
  std::unique_ptr<Sqlite> db;
  std::vector<std::string> keys;
};

SqliteBlobs& SqliteBlobStore() {
  static SqliteBlobs* b = [] {
    auto* out = new SqliteBlobs;
    out->db =
        std::make_unique<Sqlite>(scratch->Make("sqlite-blobs") + "/blobs.db");
    std::mt19937_64 rng(1024);
    out->db->Exec("BEGIN");
    sqlite3_stmt* s =
        out->db->Prepare("INSERT INTO blobs(key, content) VALUES(?, ?)");
    for (int i = 0; i < kCacheEntries; ++i) {
      std::string content = std::to_string(i) + " " + TextWindow(rng, 1024);
      content.resize(1024, '.');
      std::string key = "default:" + FakeUuid(rng);
      sqlite3_bind_text(s, 1, key.data(), static_cast<int>(key.size()),
                        SQLITE_TRANSIENT);
      sqlite3_bind_blob(s, 2, content.data(), static_cast<int>(content.size()),
                        SQLITE_TRANSIENT);
      if (sqlite3_step(s) != SQLITE_DONE) Fail("insert blob");
      sqlite3_reset(s);
      out->keys.push_back(key);
    }
    out->db->Exec("COMMIT");
    return out;
  }();
  return *b;
}

void BM_SqliteGetBlob(benchmark::State& state) {
  SqliteBlobs& b = SqliteBlobStore();
  sqlite3_stmt* s = b.db->Prepare("SELECT content FROM blobs WHERE key = ?");
  const auto keys =
      std::min(static_cast<size_t>(state.range(0)), b.keys.size());
  uint64_t rng = 88172645463325252ull;
  int64_t bytes = 0;
  for (auto _ : state) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    const std::string& key = b.keys[rng % keys];
    sqlite3_bind_text(s, 1, key.data(), static_cast<int>(key.size()),
                      SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_ROW) {
      state.SkipWithError("blob not found");
      break;
    }
    std::string content(static_cast<const char*>(sqlite3_column_blob(s, 0)),
                        static_cast<size_t>(sqlite3_column_bytes(s, 0)));
    bytes += static_cast<int64_t>(content.size());
    benchmark::DoNotOptimize(content.data());
    sqlite3_reset(s);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

BENCHMARK(BM_SqliteGetBlob)
    ->ArgName("keys")
    ->Arg(10000)
    ->Arg(100)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);
BENCHMARK(BM_SqliteInsertBatched)
    ->ArgName("batch")
    ->Arg(100)
    ->Arg(1000)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SqliteInsertBatchedCounted)
    ->ArgName("batch")
    ->Arg(1000)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SqliteInsertDurable)->UseRealTime()->Unit(benchmark::kMicrosecond);

#endif  // CTXKIT_BENCH_HAVE_SQLITE

// ---- Summary ---------------------------------------------------------------

// Remembers every result so main() can print targets and ratios.
class Recorder : public benchmark::ConsoleReporter {
 public:
  // Wall-clock figures (what the targets are about), and the same by CPU
  // time: on a shared machine the latter is closer to what an idle one
  // gives (meaningless for durable commits, which wait for the disk).
  struct Figure {
    double items_per_second = 0;
    double seconds_per_iteration = 0;
    double cpu_items_per_second = 0;
    double cpu_seconds_per_iteration = 0;
  };

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred || r.iterations == 0) continue;
      // With --benchmark_repetitions the median stands for the benchmark
      // (under its plain name); the other aggregates are not figures.
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") {
        continue;
      }
      Figure f;
      auto it = r.counters.find("items_per_second");
      if (it != r.counters.end()) f.items_per_second = it->second.value;
      const auto n = static_cast<double>(r.iterations);
      f.seconds_per_iteration = r.real_accumulated_time / n;
      f.cpu_seconds_per_iteration = r.cpu_accumulated_time / n;
      if (f.items_per_second > 0 && r.cpu_accumulated_time > 0) {
        f.cpu_items_per_second = f.items_per_second * r.real_accumulated_time /
                                 r.cpu_accumulated_time;
      }
      figures_[r.run_type == Run::RT_Aggregate ? r.run_name.str()
                                               : r.benchmark_name()] = f;
    }
  }

  // The figure of the benchmark whose name starts with `prefix`, if run.
  const Figure* Find(const std::string& prefix) const {
    for (const auto& [name, f] : figures_) {
      if (name.rfind(prefix, 0) == 0) return &f;
    }
    return nullptr;
  }

 private:
  std::map<std::string, Figure> figures_;
};

void PrintSummary(const Recorder& rec) {
  std::printf(
      "\n== Targets (each line states its own): wall clock, then by CPU "
      "time ==\n");
  // A rate target: items/s by wall clock and by CPU time, in `scale` units.
  auto rate_line = [&](const char* what, const char* name, double target,
                       double scale, const char* unit) {
    const Recorder::Figure* f = rec.Find(name);
    if (f == nullptr) {
      std::printf("  %-60s not run\n", what);
      return;
    }
    std::printf("  %-60s %9.1f %s (cpu %9.1f)  %s\n", what,
                f->items_per_second / scale, unit,
                f->cpu_items_per_second / scale,
                f->items_per_second >= target ? "MET" : "NOT MET");
  };
  // A latency target in ms.
  auto ms_line = [&](const char* what, const char* name, double target_ms) {
    const Recorder::Figure* f = rec.Find(name);
    if (f == nullptr) {
      std::printf("  %-60s not run\n", what);
      return;
    }
    const double wall = f->seconds_per_iteration * 1e3;
    std::printf("  %-60s %9.3f ms  (cpu %9.3f)  %s\n", what, wall,
                f->cpu_seconds_per_iteration * 1e3,
                wall < target_ms ? "MET" : "NOT MET");
  };
  rate_line("cache hit Get, 1 KiB entries, any of 10k (>= 1 M/s)",
            "BM_CacheGetHit/keys:10000", 1e6, 1e6, "M/s");
  rate_line("cache hit Get, 1 KiB entries, a hot 100 of 10k (>= 1 M/s)",
            "BM_CacheGetHit/keys:100", 1e6, 1e6, "M/s");
  rate_line("AddMessages claude-3-5-sonnet, batches of 1000 (>= 50 k/s)",
            "BM_AddMessagesBatched/model:0/batch:1000", 5e4, 1e3, "k/s");
  rate_line("AddMessages claude-3-5-sonnet, batches of 100 (>= 50 k/s)",
            "BM_AddMessagesBatched/model:0/batch:100", 5e4, 1e3, "k/s");
  rate_line("AddMessages gpt-4o, batches of 1000 (>= 50 k/s)",
            "BM_AddMessagesBatched/model:1/batch:1000", 5e4, 1e3, "k/s");
  if (const Recorder::Figure* f =
          rec.Find("BM_AddMessageDurable/model:0/sync:0")) {
    std::printf("  %-60s %9.1f /s   (target: ratio to SQLite below)\n",
                "AddMessage, one durable commit per message",
                f->items_per_second);
  }
  if (const Recorder::Figure* f =
          rec.Find("BM_AddMessageDurable/model:0/sync:1")) {
    std::printf("  %-60s %9.1f /s\n",
                "the same, StoreSync::kDataOnly (meta page not flushed)",
                f->items_per_second);
  }
  ms_line("reference search top-10 over 100k, content words (< 5 ms)",
          "BM_ReferenceSearch/stopwords:0", 5);
  ms_line("reference search top-10 over 100k, with stop words (< 5 ms)",
          "BM_ReferenceSearch/stopwords:1", 5);
  ms_line("AggregateStats, 10k conversations / 1M messages (< 10 ms)",
          "BM_AggregateStats", 10);

#if CTXKIT_BENCH_HAVE_SQLITE
  std::printf(
      "\n== ctxkit / SQLite (WAL, synchronous=FULL), same run, wall clock "
      "==\n");
  auto ratio = [&](const char* what, const char* ours, const char* theirs) {
    const Recorder::Figure* a = rec.Find(ours);
    const Recorder::Figure* b = rec.Find(theirs);
    if (a == nullptr || b == nullptr || b->items_per_second <= 0) {
      std::printf("  %-58s not run\n", what);
      return;
    }
    std::printf("  %-58s %10.0f /s vs %10.0f /s = %6.2fx\n", what,
                a->items_per_second, b->items_per_second,
                a->items_per_second / b->items_per_second);
  };
  ratio("1 KiB lookup, any of 10k: Cache::Get hit vs SELECT by key",
        "BM_CacheGetHit/keys:10000", "BM_SqliteGetBlob/keys:10000");
  ratio("1 KiB lookup, hot 100: Cache::Get hit vs SELECT by key",
        "BM_CacheGetHit/keys:100", "BM_SqliteGetBlob/keys:100");
  ratio("batches of 1000: AddMessages (counting) vs INSERT",
        "BM_AddMessagesBatched/model:0/batch:1000",
        "BM_SqliteInsertBatched/batch:1000");
  ratio("batches of 100: AddMessages (counting) vs INSERT",
        "BM_AddMessagesBatched/model:0/batch:100",
        "BM_SqliteInsertBatched/batch:100");
  ratio("batches of 1000: AddMessages vs count + INSERT",
        "BM_AddMessagesBatched/model:0/batch:1000",
        "BM_SqliteInsertBatchedCounted/batch:1000");
  ratio("one durable commit per message: AddMessage vs INSERT (>= 0.5x)",
        "BM_AddMessageDurable/model:0/sync:0", "BM_SqliteInsertDurable");
  ratio("the same, StoreSync::kDataOnly vs INSERT",
        "BM_AddMessageDurable/model:0/sync:1", "BM_SqliteInsertDurable");
#else
  std::printf(
      "\nSQLite comparison skipped: SQLite3 was not found when this was "
      "built.\n");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  ScratchDirs dirs;
  scratch = &dirs;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const std::string load_start = LoadAverage();
  benchmark::AddCustomContext("load_average_start", load_start);
  benchmark::AddCustomContext("write_dir", BenchBase());
  benchmark::AddCustomContext("prebuilt_dir", CacheBase());
  {
    const auto& m = Messages200();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%zu, mean %.0f bytes", m.size(),
                  MeanBytes(m));
    benchmark::AddCustomContext("messages", buf);
    auto count = ctxkit::CountTokens("claude-3-5-sonnet", m[0]);
    if (count.ok()) {
      benchmark::AddCustomContext(
          "claude-3-5-sonnet_counting",
          "encoding " + count->encoding +
              (count->method == ctxkit::CountMethod::kTokenizer
                   ? ", tokenizer"
                   : ", heuristic"));
    }
  }
#if CTXKIT_BENCH_HAVE_SQLITE
  benchmark::AddCustomContext("sqlite", sqlite3_libversion());
#else
  benchmark::AddCustomContext(
      "sqlite", "not found at build time: SQLite benchmarks skipped");
  std::fprintf(stderr,
               "records_bench: SQLite3 not found at build time: "
               "the SQLite comparison is skipped\n");
#endif
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder);
  PrintSummary(recorder);
  std::printf("\nload average (1, 5, 15 min): start %s, end %s\n",
              load_start.c_str(), LoadAverage().c_str());
  benchmark::Shutdown();
  return 0;
}
