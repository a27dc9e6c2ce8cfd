// StoreImpl: everything behind ctxkit::Store. It owns the MDB_env and the
// three pieces of process-local state LMDB leaves to its user:
//
//  - which sub-database handles (MDB_dbi) are open, because mdb_dbi_open must
//    never run in two transactions of one process at once;
//  - one writer at a time in this process, so that map growth can happen
//    between write attempts while no other writer is mid-transaction;
//  - a count of open transactions, because mdb_env_set_mapsize may only be
//    called while this process has none. Growth waits for it to drop to zero
//    and holds back new transactions meanwhile.
//
// Lock order: dbi_mu_, then write_mu_, then txn_mu_.

#ifndef CTXKIT_LIB_STORE_STORE_IMPL_H_
#define CTXKIT_LIB_STORE_STORE_IMPL_H_

#include <lmdb.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"
#include "lib/store/format.h"
#include "lib/store/page_check.h"

namespace ctxkit::internal {

class StoreImpl {
 public:
  // Opens the store at `path` with the given format. `format` must outlive
  // the call only. See Store::Open for the errors.
  static absl::StatusOr<std::unique_ptr<StoreImpl>> Open(
      std::string_view path, const StoreOptions& options,
      const FormatSpec& format);

  ~StoreImpl();
  StoreImpl(const StoreImpl&) = delete;
  StoreImpl& operator=(const StoreImpl&) = delete;

  absl::StatusOr<Database> OpenDatabase(std::string_view name);
  absl::StatusOr<ReadTransaction> BeginRead();
  // Runs `fn` in a write transaction, growing the map and rerunning `fn`
  // when the map is full. See Store::Update.
  absl::Status Update(absl::FunctionRef<absl::Status(WriteTransaction&)> fn);
  absl::StatusOr<StoreInfo> Info();
  // Walks every page of the current snapshot (page_check.h), or with
  // `top_only` the pages CheckTopPages reads (and an empty summary), holding
  // a read transaction meanwhile so that no writer reuses its pages.
  absl::StatusOr<PageCheckSummary> CheckPages(bool top_only = false);

  const std::string& path() const { return path_; }
  bool read_only() const { return options_.read_only; }
  // The sync mode LMDB applies, read from its environment flags (so a test
  // sees what commits do, not what was asked).
  StoreSync sync() const;
  int stale_readers_cleared() const { return stale_readers_cleared_; }
  uint64_t LastCommittedTransactionId() const;
  uint32_t format_version() const { return format_version_; }

  // For the transaction classes.
  bool Owns(const Database& db) const { return db.owner_ == this; }
  static MDB_dbi Dbi(const Database& db) { return db.dbi_; }
  void EndRead(MDB_txn* txn);

 private:
  StoreImpl(std::string path, const StoreOptions& options);

  absl::Status OpenEnvironment();
  absl::Status CheckFormat(const FormatSpec& format);
  absl::Status InitializeOrMigrate(const FormatSpec& format);

  // Begins a raw read transaction, adopting another process's map growth
  // if needed. The caller ends it and then calls ExitTxn.
  absl::Status BeginRawRead(MDB_txn** out);

  // Counts a transaction as open, waiting while the map is being resized
  // (unless this thread already holds one: the resize waits for that one).
  void EnterTxn();
  void ExitTxn();
  // Once no transaction of this process is open, doubles the map (grow, up
  // to max_map_size) or adopts the size another process set (!grow). Fails
  // rather than deadlocks if this thread itself holds a transaction.
  absl::Status ResizeMap(bool grow);

  const std::string path_;
  const StoreOptions options_;
  MDB_env* env_ = nullptr;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool registered_ = false;
  int stale_readers_cleared_ = 0;
  uint32_t format_version_ = 0;

  std::mutex dbi_mu_;
  std::map<std::string, MDB_dbi, std::less<>> dbis_;  // guarded by dbi_mu_

  std::mutex write_mu_;
  // The thread inside Update (holding write_mu_), if any.
  std::atomic<std::thread::id> writer_thread_{};

  std::mutex txn_mu_;
  std::condition_variable txn_cv_;
  int open_txns_ = 0;      // guarded by txn_mu_
  bool resizing_ = false;  // guarded by txn_mu_
  // The thread whose write transaction is open right now. Guarded by txn_mu_.
  std::thread::id write_txn_thread_;
  // Read transactions from BeginRead: their creating thread, and the count
  // per thread. Guarded by txn_mu_.
  // Hash maps: every read (a cache hit) inserts into both and erases again,
  // and a node-based map paid an allocation and a free each time.
  absl::flat_hash_map<MDB_txn*, std::thread::id> reader_threads_;
  absl::flat_hash_map<std::thread::id, int> read_txns_by_thread_;

  // Ended read transactions kept reset (mdb_txn_reset) for BeginRead to
  // renew: a renewal reuses the reader slot, where beginning afresh takes
  // LMDB's reader-table lock, and short reads (a cache hit) are dominated by
  // that. At most read_pool_limit_ of them, each holding a reader slot but
  // no snapshot; emptied before the map is resized and at close. Guarded
  // by txn_mu_, so that a read takes one lock to begin and one to end.
  std::vector<MDB_txn*> read_pool_;
  size_t read_pool_limit_ = 0;
  // Requires txn_mu_.
  void DrainReadPoolLocked();
  // EnterTxn's wait: until no resize is pending, unless thread `self`
  // already holds a transaction (the resize waits for it). Requires `lock`
  // on txn_mu_.
  void WaitUnlessHoldingLocked(std::unique_lock<std::mutex>& lock,
                               std::thread::id self);
  // Drops read transaction `txn` from the bookkeeping (its thread's count,
  // open_txns_). Requires txn_mu_.
  void ForgetReadLocked(MDB_txn* txn);
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_STORE_IMPL_H_
