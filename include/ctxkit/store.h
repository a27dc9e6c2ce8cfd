// ctxkit::Store: the one LMDB environment in which ctxkit persists everything.
//
// A Store is a directory holding an LMDB environment (data.mdb, lock.mdb).
// Each part of ctxkit (conversations, cache, graph, ...) registers its own
// named sub-database with OpenDatabase() and reads and writes it through
// transactions:
//
//   auto store = ctxkit::Store::Open("/path/to/dir");
//   if (!store.ok()) return store.status();
//   auto db = (*store)->OpenDatabase("notes");
//   ctxkit::Status s = (*store)->Update([&](ctxkit::WriteTransaction& txn) {
//     return txn.Put(*db, "key", "value");
//   });
//   auto read = (*store)->BeginRead();
//   auto value = read->Get(*db, "key");  // std::string_view into the map
//
// Durability: with the default StoreOptions::sync (StoreSync::kFull), a write
// acknowledged by Update() returning OK has been synced to disk and survives
// a killed process or a power loss. StoreSync::kDataOnly trades the last
// commit's survival of a power loss for one disk flush per commit instead of
// two (see StoreSync).
//
// Growth: the memory map starts at StoreOptions::map_size. When a write does
// not fit, Update() aborts the attempt, doubles the map (never beyond
// StoreOptions::max_map_size) and runs the write again from the start, so a
// write is applied whole or not at all. At the ceiling it fails with
// RESOURCE_EXHAUSTED and the store is unchanged.
//
// Concurrency: one Store object per directory per process (LMDB requires it).
// Several processes may open the same directory; each sees the others'
// committed writes in transactions begun after the commit. Within a process
// there is one writer at a time; readers never block writers or each other.

#ifndef CTXKIT_STORE_H_
#define CTXKIT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/status.h"

// LMDB's handle types, named only so the transaction classes can hold them;
// including this header does not require lmdb.h.
struct MDB_txn;
struct MDB_cursor;

namespace ctxkit {

namespace internal {
class StoreImpl;
struct StoreAccess;
}  // namespace internal

// How a commit reaches the disk. LMDB writes a commit's pages, flushes the
// data file, then writes the meta page that makes the commit current, and
// flushes that too: two waits for the disk per commit.
enum class StoreSync : uint8_t {
  // Both flushes (LMDB's default). An acknowledged commit survives a killed
  // process, an OS crash and a power loss.
  kFull = 0,
  // The meta page is written but not flushed (LMDB's MDB_NOMETASYNC): one
  // flush per commit, about half the commit latency on a disk whose flush is
  // slow. A killed process loses nothing (the OS holds the write). An OS
  // crash or a power loss may roll back the last commit (the next commit's
  // flush carries the previous meta page to the disk); the store is never
  // corrupted and every earlier commit survives.
  kDataOnly = 1,
};

// How to open a Store. Validated by Store::Open, which names the offending
// field in an INVALID_ARGUMENT error.
struct StoreOptions {
  // Initial size of the memory map, in bytes; at least kMinMapSize. An
  // existing store whose map is already larger keeps its size.
  uint64_t map_size = uint64_t{64} << 20;  // 64 MiB
  // Ceiling for automatic growth, in bytes; at least map_size. Address space
  // is reserved lazily, so a large ceiling costs nothing until used.
  uint64_t max_map_size = uint64_t{64} << 30;  // 64 GiB
  // Open for reading only: no write transaction can be begun, nothing is
  // created, and the store must already exist.
  bool read_only = false;
  // When `path` holds no store, create one: the directory if it is missing
  // (never its parents), or in the directory if it is empty. A directory
  // that holds other files is never made a store (FAILED_PRECONDITION), so
  // a mistyped path cannot turn a project or home directory into one. When
  // false, a path without a store is NOT_FOUND and nothing is created: what
  // callers that only read or update existing data should pass, so that a
  // typo is reported instead of answered from a new, empty store. Ignored
  // when read_only (which never creates).
  bool create_if_missing = true;
  // Most read transactions open at once across all processes sharing the
  // store; 1..32767.
  uint32_t max_readers = 126;
  // How commits are flushed (see StoreSync). A process that opens a store
  // already open in it (Store::OpenShared) must ask for the same.
  StoreSync sync = StoreSync::kFull;
  // Check every page of every tree at open, refusing a store damaged
  // anywhere with DATA_LOSS (as CheckStore in store_check.h reports it).
  // Without it, an open checks the meta pages, the directory of
  // sub-databases and each sub-database's root: LMDB maps the file and
  // trusts its pages, so garbage deeper in a tree (a bad copy, a disk
  // fault) can still kill the process with SIGSEGV or SIGBUS when a read
  // reaches it. The cost is one read of every page in use at open (for a
  // 125 MiB store, tenths of a second): worth it for a process that stays
  // up (a server), not for each short command.
  bool check_every_page = false;

  static constexpr uint64_t kMinMapSize = uint64_t{1} << 20;  // 1 MiB
};

// A handle to a named sub-database of one Store. A cheap value; valid for the
// life of the Store that returned it and only with that Store.
class Database {
 public:
  // An invalid handle; operations on it fail with INVALID_ARGUMENT.
  Database() = default;
  bool valid() const { return owner_ != nullptr; }

 private:
  friend class internal::StoreImpl;
  friend class Transaction;
  Database(const internal::StoreImpl* owner, uint32_t dbi)
      : owner_(owner), dbi_(dbi) {}

  const internal::StoreImpl* owner_ = nullptr;
  uint32_t dbi_ = 0;
};

// Ordered iteration over one sub-database (keys compare as unsigned bytes,
// shorter first), in the manner of leveldb::Iterator.
//
// A Cursor must be destroyed before its transaction ends. Not thread-safe:
// use one Cursor from one thread at a time.
class CTXKIT_EXPORT Cursor {
 public:
  Cursor(Cursor&& other) noexcept;
  Cursor& operator=(Cursor&& other) noexcept;
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  ~Cursor();

  // True when positioned at an entry. False past either end or after an
  // error (see status()).
  bool Valid() const { return valid_; }
  void SeekToFirst();
  void SeekToLast();
  // Positions at the first entry whose key is >= `target`.
  void Seek(std::string_view target);
  // Precondition: Valid().
  void Next();
  void Prev();

  // The current entry. Precondition: Valid(). The views point into the map
  // and stay valid until the transaction ends or, in a write transaction,
  // until the next write.
  std::string_view key() const { return key_; }
  std::string_view value() const { return value_; }

  // OK unless a move failed for a reason other than running off the end.
  const Status& status() const { return status_; }

 private:
  friend struct internal::StoreAccess;
  Cursor(MDB_cursor* cursor, bool owned);
  void Move(int op, std::string_view target);

  MDB_cursor* cursor_ = nullptr;
  bool owned_ = false;  // closed by us when destroyed
  bool valid_ = false;
  std::string_view key_;
  std::string_view value_;
  Status status_;
};

// Reads shared by read and write transactions.
//
// Keys are 1..kMaxKeySize bytes; values may be empty and up to 4 GiB. A
// transaction sees one consistent snapshot of the whole store.
class CTXKIT_EXPORT Transaction {
 public:
  // LMDB's compiled-in key size limit.
  static constexpr size_t kMaxKeySize = 511;

  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // The value stored under `key`. NOT_FOUND if there is none; INVALID_ARGUMENT
  // for a bad handle or key. The view points into the map and stays valid
  // until the transaction ends or, in a write transaction, until the next
  // write.
  StatusOr<std::string_view> Get(Database db, std::string_view key) const;

  // Number of entries in `db`, without scanning.
  StatusOr<uint64_t> Count(Database db) const;

  // A cursor over `db`, not yet positioned. It must be destroyed before this
  // transaction ends.
  StatusOr<Cursor> NewCursor(Database db) const;

 protected:
  Transaction(internal::StoreImpl* store, MDB_txn* txn, bool read_only)
      : store_(store), txn_(txn), read_only_(read_only) {}
  ~Transaction() = default;
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&& other) noexcept;
  friend struct internal::StoreAccess;

  internal::StoreImpl* store_ = nullptr;
  MDB_txn* txn_ = nullptr;
  bool read_only_ = true;
};

// A read-only snapshot, from Store::BeginRead. Ends (and releases its reader
// slot) when destroyed or moved from.
//
// Thread safety: may be used from any thread and moved between threads, but
// by one thread at a time. Do not keep one open for long: it pins the pages
// of its snapshot, so the file cannot reuse them, and map growth waits for it.
class CTXKIT_EXPORT ReadTransaction : public Transaction {
 public:
  ReadTransaction(ReadTransaction&& other) noexcept;
  ReadTransaction& operator=(ReadTransaction&& other) noexcept;
  ~ReadTransaction();

  // The id of the last write transaction committed before this snapshot was
  // taken: what Store::LastCommittedTransactionId() returned then. 0 for a
  // moved-from transaction.
  uint64_t snapshot_id() const;

 private:
  friend class internal::StoreImpl;
  ReadTransaction(internal::StoreImpl* store, MDB_txn* txn)
      : Transaction(store, txn, /*read_only=*/true) {}
  void End();
};

// The write transaction handed to the function given to Store::Update.
// It exists only during that call.
class CTXKIT_EXPORT WriteTransaction : public Transaction {
 public:
  // Stores `value` under `key`, replacing any previous value. INVALID_ARGUMENT
  // for a bad key; RESOURCE_EXHAUSTED when the map is full (Update then grows
  // the map and runs the function again, so just return the error).
  Status Put(Database db, std::string_view key, std::string_view value);

  // Removes `key`. Returns true if it was present, false if not.
  StatusOr<bool> Delete(Database db, std::string_view key);

  // Removes every entry of `db`; the database itself stays registered.
  Status Clear(Database db);

 private:
  friend class internal::StoreImpl;
  friend struct internal::StoreAccess;
  WriteTransaction(internal::StoreImpl* store, MDB_txn* txn)
      : Transaction(store, txn, /*read_only=*/false) {}

  // Why this attempt must be retried or failed, whatever the user's
  // function returns, so a swallowed error can never be committed.
  bool map_full_ = false;
  int fatal_rc_ = 0;
};

// One sub-database in StoreInfo.
struct DatabaseInfo {
  std::string name;
  uint64_t entries = 0;
  // Pages it occupies: branch + leaf + overflow.
  uint64_t pages = 0;
  uint32_t depth = 0;
};

// A snapshot of a store's vital figures, from Store::Info.
struct StoreInfo {
  std::string path;
  uint32_t format_version = 0;
  bool read_only = false;
  uint64_t map_size = 0;
  uint64_t max_map_size = 0;
  uint32_t page_size = 0;
  // Pages in use up to the high-water mark (including free-listed pages).
  uint64_t used_pages = 0;
  uint64_t last_transaction_id = 0;
  uint32_t max_readers = 0;
  uint32_t readers_in_use = 0;
  // Every named sub-database, sorted by name, including ctxkit's own
  // "__meta".
  std::vector<DatabaseInfo> databases;
};

// `info` as a JSON document:
//   {"schema_version":1,"path":...,"format_version":...,"read_only":...,
//    "map_size":...,"max_map_size":...,"page_size":...,"used_pages":...,
//    "used_bytes":...,"last_transaction_id":...,"max_readers":...,
//    "readers_in_use":...,"databases":[{"name":...,"entries":...,
//    "pages":...,"depth":...},...]}
// INVALID_ARGUMENT if a string in it is not valid UTF-8 (a sub-database
// created by another program may have any bytes as its name).
CTXKIT_EXPORT StatusOr<std::string> StoreInfoToJson(const StoreInfo& info);

// An open store. Create with Store::Open; destroy to close. Every method is
// thread-safe. All transactions and cursors must be gone before the Store is
// destroyed.
class CTXKIT_EXPORT Store {
 public:
  // The on-disk format this build writes. A store with a newer format is
  // refused; an older one is migrated on a read-write open.
  static constexpr uint32_t kFormatVersion = 3;

  // Opens (or, with create_if_missing and not read_only, creates) the store
  // in directory `path`. Stale reader slots left by killed processes are
  // cleared.
  //
  // Errors:
  //   INVALID_ARGUMENT    bad options, or an empty path
  //   NOT_FOUND           no store at `path` and none may be created
  //                       (read_only or !create_if_missing), or the parent
  //                       of a directory to create does not exist
  //   PERMISSION_DENIED   the directory or its files cannot be written or read
  //   FAILED_PRECONDITION the path is not a directory; a store would be
  //                       created in a directory that holds other files
  //                       (the message names one); it holds a file that is
  //                       not an LMDB environment, or an LMDB environment
  //                       that is not a ctxkit store; the store's format is
  //                       newer than kFormatVersion (the message names both
  //                       versions), or older and the open is read-only
  //                       or the directory is already open in this process
  //                       (LMDB forbids two environments on one directory in
  //                       one process: share the Store, or open it with
  //                       OpenShared)
  //   RESOURCE_EXHAUSTED  out of memory, or of address space for the map
  //   DATA_LOSS           the environment is corrupted
  static StatusOr<std::unique_ptr<Store>> Open(
      std::string_view path, const StoreOptions& options = {});

  // As Open, except that a directory already opened by OpenShared in this
  // process (and not closed since) is not an error: the result shares that
  // Store, whose map sizes stay as they are (options' sizes are not
  // applied). What a program that cannot know whether it opened the store
  // already needs: a notebook re-running its "open" cell, or bindings whose
  // objects are released in no particular order. The Store closes when the
  // last shared_ptr from OpenShared for it is gone (on that thread).
  //
  // Errors: those of Open, and FAILED_PRECONDITION when the store is open
  // with a different read_only (the message names both), or was opened by
  // Open rather than OpenShared. Thread-safe: concurrent calls for one
  // directory open it once.
  static StatusOr<std::shared_ptr<Store>> OpenShared(
      std::string_view path, const StoreOptions& options = {});

  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Registers sub-database `name`, creating it if needed (read-write stores),
  // and returns its handle. Calling it again with the same name returns the
  // same handle. `name` is 1..255 bytes of UTF-8 without NUL; names starting
  // with "__" are reserved for ctxkit. Errors: INVALID_ARGUMENT for a bad
  // name; NOT_FOUND on a read-only store that lacks it; FAILED_PRECONDITION
  // if the name exists but is a plain key rather than a sub-database.
  StatusOr<Database> OpenDatabase(std::string_view name);

  // Begins a read-only snapshot. RESOURCE_EXHAUSTED when max_readers
  // transactions are already open.
  StatusOr<ReadTransaction> BeginRead() const;

  // Runs `fn` in a write transaction and commits it if `fn` returns OK;
  // otherwise aborts it and returns `fn`'s status. Writers are serialized
  // across threads and processes.
  //
  // `fn` may run more than once: when the map fills up, the attempt is
  // aborted, the map grows and `fn` runs again on the original data. So `fn`
  // must not have effects outside the transaction that a second run would
  // repeat wrongly.
  //
  // Errors: FAILED_PRECONDITION on a read-only store, or when the map must
  // grow while this thread holds a ReadTransaction of this store (growth
  // needs every reader of this process to finish, so waiting would deadlock);
  // RESOURCE_EXHAUSTED when the data cannot fit under max_map_size (nothing
  // is written); any error `fn` returns.
  Status Update(const std::function<Status(WriteTransaction&)>& fn);

  // Current figures of the store and of every sub-database.
  StatusOr<StoreInfo> Info() const;

  // The path as given to Open.
  const std::string& path() const;
  bool read_only() const;
  // Reader slots of dead processes that Open cleared.
  int stale_readers_cleared() const;

  // The id of the last write transaction committed to this store by any
  // process. It changes exactly when some process commits a write, so data
  // read in a snapshot whose snapshot_id() equals it is still current: the
  // way to keep a copy of stored data without re-reading it. Takes no
  // transaction and no lock. Thread-safe.
  uint64_t LastCommittedTransactionId() const;

 private:
  CTXKIT_NO_EXPORT explicit Store(std::unique_ptr<internal::StoreImpl> impl);
  friend class internal::StoreImpl;
  friend struct internal::StoreAccess;

  std::unique_ptr<internal::StoreImpl> impl_;
};

}  // namespace ctxkit

#endif  // CTXKIT_STORE_H_
