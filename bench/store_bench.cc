// Put and get throughput of ctxkit::Store, in one transaction and in one
// transaction per operation, for 64 B, 1 KiB and 64 KiB values.
//
// Every commit is durable (fsync), as in production, so "one transaction per
// put" measures the disk's sync latency more than ctxkit. The store lives in
// $CTXKIT_BENCH_DIR, else $TMPDIR, else /tmp: put it on the disk you care
// about (a tmpfs makes syncs free). The directory's filesystem type is
// printed in the benchmark context.
//
//   build/release/bench/store_bench --benchmark_counters_tabular=true

#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/vfs.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "ctxkit/store.h"

namespace {

using ctxkit::Database;
using ctxkit::Status;
using ctxkit::Store;
using ctxkit::WriteTransaction;

std::string BenchBase() {
  for (const char* var : {"CTXKIT_BENCH_DIR", "TMPDIR"}) {
    const char* v = getenv(var);
    if (v != nullptr && *v != '\0') return v;
  }
  return "/tmp";
}

// A store in a fresh directory, removed afterwards.
class BenchStore {
 public:
  BenchStore() {
    std::string tmpl = BenchBase() + "/ctxkit-bench-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    dir_ = tmpl;
    ctxkit::StoreOptions options;
    options.map_size = uint64_t{1} << 30;  // growth is measured elsewhere
    auto store = Store::Open(dir_ + "/store", options);
    if (!store.ok()) Fail(store.status());
    store_ = std::move(store).value();
    auto db = store_->OpenDatabase("bench");
    if (!db.ok()) Fail(db.status());
    db_ = *db;
  }
  ~BenchStore() {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Store& store() { return *store_; }
  Database db() const { return db_; }

  static void Fail(const Status& s) {
    std::fprintf(stderr, "store_bench: %s\n", s.ToString().c_str());
    std::abort();
  }

 private:
  std::string dir_;
  std::unique_ptr<Store> store_;
  Database db_;
};

std::string Key(uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "key%016llx",
                static_cast<unsigned long long>(i));
  return buf;
}

// Operations per one-transaction batch: enough to amortize the commit, small
// enough that 64 KiB values stay at 64 MiB per batch.
int64_t BatchFor(int64_t value_size) {
  return value_size >= 65536 ? 1000 : 10000;
}

uint64_t NextRandom(uint64_t& state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

void Fill(BenchStore& bs, int64_t n, const std::string& value) {
  Status s = bs.store().Update([&](WriteTransaction& t) {
    for (int64_t i = 0; i < n; ++i) {
      if (Status e = t.Put(bs.db(), Key(static_cast<uint64_t>(i)), value);
          !e.ok())
        return e;
    }
    return Status();
  });
  if (!s.ok()) BenchStore::Fail(s);
}

void SetCounters(benchmark::State& state, int64_t ops_per_iteration) {
  state.SetItemsProcessed(state.iterations() * ops_per_iteration);
  state.SetBytesProcessed(state.iterations() * ops_per_iteration *
                          state.range(0));
}

// Inserts a batch of new keys in one durable transaction; the database is
// emptied (untimed) between batches.
void BM_PutOneTransaction(benchmark::State& state) {
  BenchStore bs;
  const std::string value(static_cast<size_t>(state.range(0)), 'v');
  const int64_t batch = BatchFor(state.range(0));
  for (auto _ : state) {
    Status s = bs.store().Update([&](WriteTransaction& t) {
      for (int64_t i = 0; i < batch; ++i) {
        if (Status e = t.Put(bs.db(), Key(static_cast<uint64_t>(i)), value);
            !e.ok())
          return e;
      }
      return Status();
    });
    if (!s.ok()) BenchStore::Fail(s);
    state.PauseTiming();
    s = bs.store().Update(
        [&](WriteTransaction& t) { return t.Clear(bs.db()); });
    if (!s.ok()) BenchStore::Fail(s);
    state.ResumeTiming();
  }
  SetCounters(state, batch);
}

// One durable transaction per inserted key.
void BM_PutTransactionPerOp(benchmark::State& state) {
  BenchStore bs;
  const std::string value(static_cast<size_t>(state.range(0)), 'v');
  uint64_t next = 0;
  for (auto _ : state) {
    const std::string key = Key(next++);
    Status s = bs.store().Update(
        [&](WriteTransaction& t) { return t.Put(bs.db(), key, value); });
    if (!s.ok()) BenchStore::Fail(s);
  }
  SetCounters(state, 1);
}

// Random point reads of existing keys, a batch per read transaction.
void BM_GetOneTransaction(benchmark::State& state) {
  BenchStore bs;
  const int64_t n = BatchFor(state.range(0));
  Fill(bs, n, std::string(static_cast<size_t>(state.range(0)), 'v'));
  uint64_t rng = 88172645463325252ull;
  for (auto _ : state) {
    auto txn = bs.store().BeginRead();
    if (!txn.ok()) BenchStore::Fail(txn.status());
    for (int64_t i = 0; i < n; ++i) {
      auto v =
          txn->Get(bs.db(), Key(NextRandom(rng) % static_cast<uint64_t>(n)));
      if (!v.ok()) BenchStore::Fail(v.status());
      benchmark::DoNotOptimize(v->data());
    }
  }
  SetCounters(state, n);
}

// Random point reads, each in its own read transaction.
void BM_GetTransactionPerOp(benchmark::State& state) {
  BenchStore bs;
  const int64_t n = BatchFor(state.range(0));
  Fill(bs, n, std::string(static_cast<size_t>(state.range(0)), 'v'));
  uint64_t rng = 88172645463325252ull;
  for (auto _ : state) {
    auto txn = bs.store().BeginRead();
    if (!txn.ok()) BenchStore::Fail(txn.status());
    auto v = txn->Get(bs.db(), Key(NextRandom(rng) % static_cast<uint64_t>(n)));
    if (!v.ok()) BenchStore::Fail(v.status());
    benchmark::DoNotOptimize(v->data());
  }
  SetCounters(state, 1);
}

void ValueSizes(benchmark::internal::Benchmark* b) {
  b->ArgName("value_bytes")->Arg(64)->Arg(1024)->Arg(65536);
}

BENCHMARK(BM_PutOneTransaction)
    ->Apply(ValueSizes)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PutTransactionPerOp)
    ->Apply(ValueSizes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GetOneTransaction)
    ->Apply(ValueSizes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GetTransactionPerOp)
    ->Apply(ValueSizes)
    ->Unit(benchmark::kNanosecond);

const char* FilesystemOf(const std::string& path) {
  struct statfs fs;
  if (statfs(path.c_str(), &fs) != 0) return "unknown";
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x01021994:
      return "tmpfs (fsync is free: commits are not durable-cost)";
    case 0xEF53:
      return "ext2/3/4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x794C7630:
      return "overlayfs";
    default:
      return "other";
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("store_dir", BenchBase());
  benchmark::AddCustomContext("store_filesystem", FilesystemOf(BenchBase()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
