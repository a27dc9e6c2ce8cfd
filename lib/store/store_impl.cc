#include "lib/store/store_impl.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ctxkit/version.h"
#include "lib/base/absl_string_view.h"
#include "lib/json/utf8.h"
#include "lib/status/status_internal.h"
#include "lib/store/data_file.h"
#include "lib/store/disk_space.h"
#include "lib/store/lmdb_status.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

// Named sub-databases an environment can hold. Each costs a few hundred bytes
// per transaction, so this is generous rather than unlimited.
constexpr unsigned kMaxDatabases = 128;
constexpr size_t kMaxDatabaseName = 255;

// LMDB forbids opening one environment twice in a process: closing either
// copy releases the other's POSIX locks. Every open store is recorded here by
// directory identity; the pid makes a child after fork() start clean.
struct OpenStoreEntry {
  dev_t dev;
  ino_t ino;
  pid_t pid;
};
std::mutex& RegistryMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
std::vector<OpenStoreEntry>& Registry() {
  static auto* entries = new std::vector<OpenStoreEntry>;
  return *entries;
}

// "a/b/c" -> "a/b", "c" -> ".", "/c" -> "/".
std::string ParentOf(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

// The name of an entry of directory `path` that a new store would not own
// (anything but lock.mdb, which an interrupted creation may leave), or ""
// when there is none.
absl::StatusOr<std::string> ForeignEntry(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) {
    return LmdbStatus(errno,
                      absl::StrCat("cannot list store directory '", path, "'"));
  }
  absl::Cleanup close_dir = [dir] { closedir(dir); };
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != ".." && name != "lock.mdb") {
      return std::string(name);
    }
  }
  return std::string();
}

// True when another process holds LMDB's lock on `lock_path` (byte 0 of
// lock.mdb, which every process that has the environment open holds, and
// which its creator holds exclusively while it writes the first meta pages).
bool LockHeldElsewhere(const std::string& lock_path) {
  const int fd = open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock probe = {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = 0;
  probe.l_len = 1;
  const bool held = fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  close(fd);
  return held;
}

// The data file's meta, read before LMDB maps it (data_file.h says why). A
// store another process is creating this instant has an empty or short file
// until its metas are written under LMDB's exclusive lock, so a short file
// whose lock is held is read again for up to two seconds before it counts
// as damaged.
absl::Status CheckDataFileBeforeMapping(const std::string& dir,
                                        const std::string& data_path) {
  constexpr int kAttempts = 200;
  constexpr useconds_t kPause = 10'000;
  absl::StatusOr<DataFileMeta> meta = ReadDataFileMeta(data_path);
  for (int i = 1;
       i < kAttempts && !meta.ok() && absl::IsDataLoss(meta.status()) &&
       LockHeldElsewhere(dir + "/lock.mdb");
       ++i) {
    usleep(kPause);
    meta = ReadDataFileMeta(data_path);
  }
  return meta.status();
}

uint64_t RoundUp(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::string Bytes(uint64_t n) {
  if (n >= (uint64_t{1} << 30) && n % (uint64_t{1} << 30) == 0) {
    return absl::StrCat(n >> 30, " GiB");
  }
  if (n >= (uint64_t{1} << 20) && n % (uint64_t{1} << 20) == 0) {
    return absl::StrCat(n >> 20, " MiB");
  }
  return absl::StrCat(n, " bytes");
}

absl::Status ValidateOptions(std::string_view path,
                             const StoreOptions& options) {
  if (path.empty()) {
    return absl::InvalidArgumentError("store path must not be empty");
  }
  if (path.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("store path must not contain NUL");
  }
  if (options.map_size < StoreOptions::kMinMapSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "StoreOptions.map_size (", options.map_size,
        ") must be at least kMinMapSize (", StoreOptions::kMinMapSize, ")"));
  }
  if (options.max_map_size < options.map_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("StoreOptions.max_map_size (", options.max_map_size,
                     ") must be at least map_size (", options.map_size, ")"));
  }
  if (options.max_map_size > (uint64_t{1} << 46)) {
    return absl::InvalidArgumentError(
        absl::StrCat("StoreOptions.max_map_size (", options.max_map_size,
                     ") exceeds 64 TiB"));
  }
  if (options.max_readers < 1 || options.max_readers > 32767) {
    return absl::InvalidArgumentError(absl::StrCat("StoreOptions.max_readers (",
                                                   options.max_readers,
                                                   ") must be in 1..32767"));
  }
  if (options.sync != StoreSync::kFull &&
      options.sync != StoreSync::kDataOnly) {
    return absl::InvalidArgumentError(absl::StrCat(
        "StoreOptions.sync (", static_cast<int>(options.sync),
        ") must be StoreSync::kFull (0) or StoreSync::kDataOnly (1)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateDatabaseName(std::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError("database name must not be empty");
  }
  if (name.size() > kMaxDatabaseName) {
    return absl::InvalidArgumentError(absl::StrCat(
        "database name of ", name.size(), " bytes exceeds ", kMaxDatabaseName));
  }
  if (name.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("database name must not contain NUL");
  }
  if (!IsValidUtf8(name)) {
    return absl::InvalidArgumentError("database name is not valid UTF-8");
  }
  if (name.substr(0, 2) == "__") {
    return absl::InvalidArgumentError(
        absl::StrCat("database name '", AV(name),
                     "' is reserved: names starting with \"__\" are ctxkit's"));
  }
  return absl::OkStatus();
}

std::string EncodeVersion(uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

MDB_val Val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}

// Reads the format version from __meta in `txn`.
absl::StatusOr<uint32_t> ReadVersion(MDB_txn* txn, MDB_dbi meta,
                                     std::string_view path) {
  MDB_val key = Val(kFormatVersionKey);
  MDB_val value;
  int rc = mdb_get(txn, meta, &key, &value);
  if (rc == MDB_NOTFOUND) {
    return absl::DataLossError(
        absl::StrCat("store '", AV(path),
                     "' has a __meta database without a format version"));
  }
  if (rc != 0) return LmdbStatus(rc, "reading the store's format version");
  if (value.mv_size != 4) {
    return absl::DataLossError(
        absl::StrCat("store '", AV(path), "' has a damaged format version (",
                     value.mv_size, " bytes instead of 4)"));
  }
  const auto* b = static_cast<const unsigned char*>(value.mv_data);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 |
         uint32_t{b[3]} << 24;
}

absl::Status NewerFormatError(std::string_view path, uint32_t stored,
                              uint32_t current) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "store '%s' has on-disk format version %u, newer than format version %u "
      "that this ctxkit (%s) reads; upgrade ctxkit to open it",
      path, stored, current, CTXKIT_VERSION_STRING));
}

class MigrationContextImpl final : public MigrationContext {
 public:
  // `open(name, create)`: the sub-database, created if `create`.
  MigrationContextImpl(
      WriteTransaction& txn,
      std::function<absl::StatusOr<Database>(std::string_view, bool)> open)
      : txn_(txn), open_(std::move(open)) {}
  WriteTransaction& txn() override { return txn_; }
  absl::StatusOr<Database> OpenDatabase(std::string_view name) override {
    return open_(name, true);
  }
  absl::StatusOr<Database> OpenExistingDatabase(
      std::string_view name) override {
    return open_(name, false);
  }

 private:
  WriteTransaction& txn_;
  std::function<absl::StatusOr<Database>(std::string_view, bool)> open_;
};

}  // namespace

StoreImpl::StoreImpl(std::string path, const StoreOptions& options)
    : path_(std::move(path)), options_(options) {}

StoreImpl::~StoreImpl() {
  {
    std::lock_guard lock(txn_mu_);
    DrainReadPoolLocked();
  }
  if (env_ != nullptr) mdb_env_close(env_);
  if (registered_) {
    std::lock_guard lock(RegistryMutex());
    auto& entries = Registry();
    const pid_t pid = getpid();
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [&](const OpenStoreEntry& e) {
                                   return e.dev == dev_ && e.ino == ino_ &&
                                          e.pid == pid;
                                 }),
                  entries.end());
  }
}

absl::StatusOr<std::unique_ptr<StoreImpl>> StoreImpl::Open(
    std::string_view path, const StoreOptions& options,
    const FormatSpec& format) {
  if (absl::Status s = ValidateOptions(path, options); !s.ok()) return s;
  std::unique_ptr<StoreImpl> store(new StoreImpl(std::string(path), options));
  if (absl::Status s = store->OpenEnvironment(); !s.ok()) return s;
  if (absl::Status s = store->CheckFormat(format); !s.ok()) return s;
  return store;
}

absl::Status StoreImpl::OpenEnvironment() {
  const bool read_only = options_.read_only;
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) {
    const int err = errno;
    if (err != ENOENT) {
      return LmdbStatus(err, absl::StrCat("cannot access store '", path_, "'"));
    }
    if (read_only || !options_.create_if_missing) {
      return absl::NotFoundError(absl::StrCat(
          "no store at '", path_, "': the directory does not exist"));
    }
    const std::string parent = ParentOf(path_);
    struct stat parent_st;
    if (stat(parent.c_str(), &parent_st) != 0) {
      const int perr = errno;
      if (perr == ENOENT) {
        return absl::NotFoundError(absl::StrCat(
            "cannot create store '", path_, "': its parent directory '",
            AV(parent), "' does not exist"));
      }
      return LmdbStatus(perr, absl::StrCat("cannot create store '", path_,
                                           "': checking '", AV(parent), "'"));
    }
    if (!S_ISDIR(parent_st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create store '", path_, "': '", AV(parent),
                       "' is not a directory"));
    }
    // 0700: a store holds users' conversations.
    if (mkdir(path_.c_str(), 0700) != 0 && errno != EEXIST) {
      return LmdbStatus(
          errno, absl::StrCat("cannot create store directory '", path_, "'"));
    }
    if (stat(path_.c_str(), &st) != 0) {
      return LmdbStatus(errno,
                        absl::StrCat("cannot access store '", path_, "'"));
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", path_,
        "' is not a directory: a ctxkit store is a directory holding data.mdb "
        "and lock.mdb"));
  }
  if (access(path_.c_str(), R_OK | X_OK | (read_only ? 0 : W_OK)) != 0) {
    return LmdbStatus(errno,
                      absl::StrCat("cannot ", read_only ? "read" : "write",
                                   " store directory '", path_, "'"));
  }
  const std::string data_path = path_ + "/data.mdb";
  struct stat data_st;
  const bool data_existed = stat(data_path.c_str(), &data_st) == 0;
  if (data_existed) {
    if (!S_ISREG(data_st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("'", data_path, "' is not a regular file"));
    }
    absl::Status file_ok = CheckDataFileBeforeMapping(path_, data_path);
    if (!file_ok.ok()) return file_ok;
  } else if (read_only || !options_.create_if_missing) {
    return absl::NotFoundError(absl::StrCat(
        "no store at '", path_, "': the directory holds no data.mdb"));
  } else {
    // A mistyped path that names a project or home directory must not
    // become a store: LMDB would add its files beside the user's.
    absl::StatusOr<std::string> foreign = ForeignEntry(path_);
    if (!foreign.ok()) return foreign.status();
    if (!foreign->empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", path_, "' holds no ctxkit store but is not empty (it holds '",
          ReplaceInvalidUtf8(*foreign),
          "'); refusing to create a store among other files: name a missing "
          "or empty directory"));
    }
  }

  dev_ = st.st_dev;
  ino_ = st.st_ino;
  {
    std::lock_guard lock(RegistryMutex());
    const pid_t pid = getpid();
    for (const OpenStoreEntry& e : Registry()) {
      if (e.dev == dev_ && e.ino == ino_ && e.pid == pid) {
        return absl::FailedPreconditionError(absl::StrCat(
            "store '", path_,
            "' is already open in this process; share that Store instead of "
            "opening it twice"));
      }
    }
    Registry().push_back({dev_, ino_, pid});
    registered_ = true;
  }

  int rc = mdb_env_create(&env_);
  if (rc != 0) return LmdbStatus(rc, "creating an LMDB environment");
  const long page = sysconf(_SC_PAGESIZE);
  const uint64_t page_size = page > 0 ? static_cast<uint64_t>(page) : 4096;
  // Pooled read transactions keep their reader slots: at most 4, and only
  // when they leave the table nearly whole to everyone else.
  read_pool_limit_ = std::min<size_t>(4, options_.max_readers / 16);
  rc = mdb_env_set_maxreaders(env_, options_.max_readers);
  if (rc == 0) rc = mdb_env_set_maxdbs(env_, kMaxDatabases);
  if (rc == 0) {
    rc = mdb_env_set_mapsize(env_, RoundUp(options_.map_size, page_size));
  }
  if (rc != 0) return LmdbStatus(rc, "configuring the LMDB environment");

  // MDB_NOTLS: read transactions belong to the Transaction object, not the
  // thread, so they can be handed between threads and a thread can hold more
  // than one.
  const unsigned flags =
      MDB_NOTLS | (read_only ? MDB_RDONLY : 0) |
      (options_.sync == StoreSync::kDataOnly ? MDB_NOMETASYNC : 0);
  rc = mdb_env_open(env_, path_.c_str(), flags, 0600);
  if (rc != 0) {
    mdb_env_close(env_);
    env_ = nullptr;
    switch (rc) {
      case MDB_INVALID:
        return absl::FailedPreconditionError(absl::StrCat(
            "'", data_path,
            "' is not an LMDB data file (or is damaged beyond recognition); "
            "is this really a ctxkit store?"));
      case MDB_VERSION_MISMATCH:
        return absl::FailedPreconditionError(absl::StrCat(
            "store '", path_,
            "' was written by an incompatible LMDB version or its lock.mdb "
            "is not an LMDB lock file"));
      default:
        if (rc > 0) {
          return LmdbStatus(rc,
                            absl::StrCat("cannot open store '", path_, "'"));
        }
        return LmdbStatus(rc, absl::StrCat("cannot open store '", path_, "'"));
    }
  }
  // A process killed mid-read leaves its reader slot behind, pinning old
  // pages forever; clear such slots now.
  int dead = 0;
  rc = mdb_reader_check(env_, &dead);
  if (rc != 0) return LmdbStatus(rc, "checking for stale readers");
  stale_readers_cleared_ = dead;
  // The pages every read starts from, before LMDB follows any of them.
  if (data_existed) {
    return CheckPages(/*top_only=*/!options_.check_every_page).status();
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::CheckFormat(const FormatSpec& format) {
  if (!options_.read_only) return InitializeOrMigrate(format);

  MDB_txn* txn = nullptr;
  EnterTxn();
  int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
  if (rc != 0) {
    ExitTxn();
    return LmdbStatus(rc, "reading the store's format version");
  }
  absl::Cleanup end = [&] {
    mdb_txn_abort(txn);
    ExitTxn();
  };
  MDB_dbi meta;
  rc = mdb_dbi_open(txn, std::string(kMetaDatabaseName).c_str(), 0, &meta);
  if (rc == MDB_NOTFOUND) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", path_,
        "' holds an LMDB environment but not a ctxkit store (no __meta "
        "database)"));
  }
  if (rc != 0) return LmdbStatus(rc, "opening the store's __meta database");
  absl::StatusOr<uint32_t> stored = ReadVersion(txn, meta, path_);
  if (!stored.ok()) return stored.status();
  if (*stored > format.current) {
    return NewerFormatError(path_, *stored, format.current);
  }
  if (*stored < format.current) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "store '%s' has on-disk format version %u, older than format version "
        "%u of this ctxkit; open it read-write once to upgrade it",
        path_, *stored, format.current));
  }
  format_version_ = *stored;
  return absl::OkStatus();
}

absl::Status StoreImpl::InitializeOrMigrate(const FormatSpec& format) {
  // Handles opened by the upgrade are published only once it has committed;
  // an aborted attempt closes them.
  std::vector<std::pair<std::string, MDB_dbi>> opened;
  uint32_t final_version = 0;
  absl::Status status = Update([&](WriteTransaction& txn) -> absl::Status {
    opened.clear();
    MDB_txn* raw = txn.txn_;
    MDB_dbi meta;
    int rc =
        mdb_dbi_open(raw, std::string(kMetaDatabaseName).c_str(), 0, &meta);
    if (rc == MDB_NOTFOUND) {
      MDB_stat main_stat;
      MDB_dbi main_dbi;
      rc = mdb_dbi_open(raw, nullptr, 0, &main_dbi);
      if (rc == 0) rc = mdb_stat(raw, main_dbi, &main_stat);
      if (rc != 0) return StoreAccess::Fail(txn, rc, "inspecting a new store");
      if (main_stat.ms_entries != 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "'", path_,
            "' holds an LMDB environment but not a ctxkit store (no __meta "
            "database); refusing to write into it"));
      }
      rc = mdb_dbi_open(raw, std::string(kMetaDatabaseName).c_str(), MDB_CREATE,
                        &meta);
      if (rc != 0)
        return StoreAccess::Fail(txn, rc,
                                 "creating the store's __meta database");
      const std::string version = EncodeVersion(format.current);
      const std::string created_by = "ctxkit " CTXKIT_VERSION_STRING;
      MDB_val k1 = Val(kFormatVersionKey), v1 = Val(version);
      MDB_val k2 = Val(kCreatedByKey), v2 = Val(created_by);
      rc = mdb_put(raw, meta, &k1, &v1, 0);
      if (rc == 0) rc = mdb_put(raw, meta, &k2, &v2, 0);
      if (rc != 0)
        return StoreAccess::Fail(txn, rc, "writing the store's format version");
      opened.emplace_back(std::string(kMetaDatabaseName), meta);
      final_version = format.current;
      return absl::OkStatus();
    }
    if (rc != 0)
      return StoreAccess::Fail(txn, rc, "opening the store's __meta database");
    opened.emplace_back(std::string(kMetaDatabaseName), meta);
    absl::StatusOr<uint32_t> stored = ReadVersion(raw, meta, path_);
    if (!stored.ok()) return stored.status();
    if (*stored > format.current) {
      return NewerFormatError(path_, *stored, format.current);
    }
    for (uint32_t v = *stored; v < format.current; ++v) {
      auto step =
          std::find_if(format.migrations.begin(), format.migrations.end(),
                       [v](const Migration& m) { return m.from == v; });
      if (step == format.migrations.end() || !step->apply) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "store '%s' has on-disk format version %u, which this ctxkit "
            "cannot upgrade to %u (no migration from %u)",
            path_, *stored, format.current, v));
      }
      MigrationContextImpl context(
          txn,
          [&](std::string_view name, bool create) -> absl::StatusOr<Database> {
            MDB_dbi dbi;
            const int orc = mdb_dbi_open(raw, std::string(name).c_str(),
                                         create ? MDB_CREATE : 0, &dbi);
            if (orc == MDB_NOTFOUND && !create) {
              return absl::NotFoundError(
                  absl::StrCat("no database '", AV(name), "'"));
            }
            if (orc != 0) {
              return StoreAccess::Fail(
                  txn, orc,
                  absl::StrCat("opening database '", AV(name),
                               "' during migration"));
            }
            opened.emplace_back(std::string(name), dbi);
            return Database(this, dbi);
          });
      absl::Status s = step->apply(context);
      if (!s.ok()) {
        return absl::Status(
            s.code(), absl::StrFormat("upgrading store '%s' from format %u to "
                                      "%u: %s",
                                      path_, v, v + 1, s.message()));
      }
    }
    if (*stored != format.current) {
      const std::string version = EncodeVersion(format.current);
      MDB_val k = Val(kFormatVersionKey), val = Val(version);
      rc = mdb_put(raw, meta, &k, &val, 0);
      if (rc != 0)
        return StoreAccess::Fail(txn, rc, "writing the store's format version");
    }
    final_version = format.current;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  format_version_ = final_version;
  std::lock_guard lock(dbi_mu_);
  for (auto& [name, dbi] : opened) dbis_.emplace(std::move(name), dbi);
  return absl::OkStatus();
}

absl::StatusOr<Database> StoreImpl::OpenDatabase(std::string_view name) {
  if (absl::Status s = ValidateDatabaseName(name); !s.ok()) return s;
  if (writer_thread_.load() == std::this_thread::get_id()) {
    return absl::FailedPreconditionError(
        "OpenDatabase cannot be called inside Update: open databases before "
        "writing");
  }
  std::lock_guard lock(dbi_mu_);
  if (auto it = dbis_.find(name); it != dbis_.end()) {
    return Database(this, it->second);
  }
  const std::string cname(name);
  MDB_dbi dbi = 0;
  if (options_.read_only) {
    MDB_txn* txn = nullptr;
    if (absl::Status s = BeginRawRead(&txn); !s.ok()) return s;
    int rc = mdb_dbi_open(txn, cname.c_str(), 0, &dbi);
    // Committing a read transaction is what keeps the handle it opened.
    if (rc == 0) {
      rc = mdb_txn_commit(txn);
    } else {
      mdb_txn_abort(txn);
    }
    ExitTxn();
    if (rc == MDB_NOTFOUND) {
      return absl::NotFoundError(absl::StrCat(
          "store '", path_, "' has no database '", AV(name),
          "' (and it is open read-only, so it cannot be created)"));
    }
    if (rc == MDB_INCOMPATIBLE) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", AV(name), "' in store '", path_, "' is not a database"));
    }
    if (rc != 0)
      return LmdbStatus(rc, absl::StrCat("opening database '", AV(name), "'"));
  } else {
    absl::Status s = Update([&](WriteTransaction& txn) -> absl::Status {
      const int rc = mdb_dbi_open(txn.txn_, cname.c_str(), MDB_CREATE, &dbi);
      if (rc == MDB_INCOMPATIBLE) {
        return absl::FailedPreconditionError(absl::StrCat(
            "'", AV(name), "' in store '", path_, "' is not a database"));
      }
      if (rc == MDB_DBS_FULL) {
        return absl::ResourceExhaustedError(
            absl::StrCat("store '", path_, "' cannot hold more than ",
                         kMaxDatabases - 1, " databases"));
      }
      if (rc != 0) {
        return StoreAccess::Fail(
            txn, rc, absl::StrCat("creating database '", AV(name), "'"));
      }
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
  }
  dbis_.emplace(cname, dbi);
  return Database(this, dbi);
}

absl::Status StoreImpl::BeginRawRead(MDB_txn** out) {
  bool cleared_stale = false;
  for (;;) {
    EnterTxn();
    const int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, out);
    if (rc == 0) return absl::OkStatus();
    ExitTxn();
    if (rc == MDB_MAP_RESIZED) {
      // Another process grew the map past ours: adopt its size and retry.
      if (absl::Status s = ResizeMap(/*grow=*/false); !s.ok()) return s;
      continue;
    }
    if (rc == MDB_READERS_FULL && !cleared_stale) {
      // Slots of killed processes may be what fills the table.
      cleared_stale = true;
      int dead = 0;
      if (mdb_reader_check(env_, &dead) == 0 && dead > 0) continue;
    }
    if (rc == MDB_READERS_FULL) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "too many read transactions open on store '", path_,
          "' (max_readers=", options_.max_readers, " across all processes)"));
    }
    return LmdbStatus(
        rc, absl::StrCat("beginning a read transaction on '", path_, "'"));
  }
}

absl::StatusOr<PageCheckSummary> StoreImpl::CheckPages(bool top_only) {
  int fd = -1;
  if (const int rc = mdb_env_get_fd(env_, &fd); rc != 0) {
    return LmdbStatus(rc, absl::StrCat("checking store '", path_, "'"));
  }
  const std::string data_path = path_ + "/data.mdb";
  // A writer in another process may commit twice between our begin and our
  // read of the metas, overwriting the one of our snapshot; then try again.
  constexpr int kAttempts = 100;
  absl::Status last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    MDB_txn* txn = nullptr;
    if (absl::Status s = BeginRawRead(&txn); !s.ok()) return s;
    absl::Cleanup end = [&] {
      mdb_txn_abort(txn);
      ExitTxn();
    };
    absl::StatusOr<DataFileMeta> meta =
        ReadDataFileMeta(fd, data_path, mdb_txn_id(txn));
    if (meta.ok()) {
      if (!top_only) return internal::CheckPages(fd, data_path, *meta);
      if (absl::Status s = CheckTopPages(fd, data_path, *meta); !s.ok()) {
        return s;
      }
      return PageCheckSummary{};
    }
    if (!absl::IsUnavailable(meta.status())) return meta.status();
    last = meta.status();
  }
  return last;
}

StoreSync StoreImpl::sync() const {
  unsigned flags = 0;
  mdb_env_get_flags(env_, &flags);
  return (flags & MDB_NOMETASYNC) != 0 ? StoreSync::kDataOnly
                                       : StoreSync::kFull;
}

uint64_t StoreImpl::LastCommittedTransactionId() const {
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  return info.me_last_txnid;
}

void StoreImpl::DrainReadPoolLocked() {
  for (MDB_txn* txn : read_pool_) mdb_txn_abort(txn);
  read_pool_.clear();
}

void StoreImpl::WaitUnlessHoldingLocked(std::unique_lock<std::mutex>& lock,
                                        std::thread::id self) {
  // A pending resize waits for every open transaction to end; a thread that
  // already holds one must not wait for the resize in turn.
  if (!read_txns_by_thread_.contains(self) && writer_thread_.load() != self) {
    txn_cv_.wait(lock, [&] { return !resizing_; });
  }
}

void StoreImpl::ForgetReadLocked(MDB_txn* txn) {
  auto it = reader_threads_.find(txn);
  const std::thread::id owner = it->second;
  reader_threads_.erase(it);
  if (--read_txns_by_thread_[owner] == 0) read_txns_by_thread_.erase(owner);
  if (--open_txns_ == 0) txn_cv_.notify_all();
}

absl::StatusOr<ReadTransaction> StoreImpl::BeginRead() {
  const std::thread::id self = std::this_thread::get_id();
  MDB_txn* txn = nullptr;
  {
    // One critical section for the resize wait, the pool and the
    // bookkeeping: a cache hit costs under a microsecond, and each lock
    // taken showed in it.
    std::unique_lock lock(txn_mu_);
    if (!read_pool_.empty()) {
      WaitUnlessHoldingLocked(lock, self);
      if (!read_pool_.empty()) {  // a resize may have drained it meanwhile
        txn = read_pool_.back();
        read_pool_.pop_back();
        ++open_txns_;
        ++read_txns_by_thread_[self];
        reader_threads_[txn] = self;
      }
    }
  }
  if (txn != nullptr) {
    if (mdb_txn_renew(txn) == 0) return ReadTransaction(this, txn);
    // Whatever went wrong (another process grew the map, say), the
    // ordinary path below knows how to handle it.
    {
      std::lock_guard lock(txn_mu_);
      ForgetReadLocked(txn);
    }
    mdb_txn_abort(txn);
    txn = nullptr;
  }
  if (absl::Status s = BeginRawRead(&txn); !s.ok()) return s;
  {
    std::lock_guard lock(txn_mu_);
    ++read_txns_by_thread_[self];
    reader_threads_[txn] = self;
  }
  return ReadTransaction(this, txn);
}

void StoreImpl::EndRead(MDB_txn* txn) {
  mdb_txn_reset(txn);
  bool pooled = false;
  {
    std::lock_guard lock(txn_mu_);
    ForgetReadLocked(txn);
    if (read_pool_.size() < read_pool_limit_) {
      read_pool_.push_back(txn);
      pooled = true;
    }
  }
  if (!pooled) mdb_txn_abort(txn);
}

void StoreImpl::EnterTxn() {
  std::unique_lock lock(txn_mu_);
  WaitUnlessHoldingLocked(lock, std::this_thread::get_id());
  ++open_txns_;
}

void StoreImpl::ExitTxn() {
  std::lock_guard lock(txn_mu_);
  if (--open_txns_ == 0) txn_cv_.notify_all();
}

absl::Status StoreImpl::ResizeMap(bool grow) {
  std::unique_lock lock(txn_mu_);
  const std::thread::id self = std::this_thread::get_id();
  if (read_txns_by_thread_.contains(self) || write_txn_thread_ == self) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the map of store '", path_,
        "' must be resized, which waits for every transaction of this "
        "process to end, but this thread holds a transaction of the store "
        "(a read transaction, or it is inside Update): end it first"));
  }
  txn_cv_.wait(lock, [&] { return !resizing_; });
  resizing_ = true;
  txn_cv_.wait(lock, [&] { return open_txns_ == 0; });
  absl::Cleanup done = [&] {
    resizing_ = false;
    txn_cv_.notify_all();
  };
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  uint64_t new_size = 0;  // 0: adopt the size recorded by another process
  if (grow) {
    const uint64_t current = info.me_mapsize;
    const long page = sysconf(_SC_PAGESIZE);
    const uint64_t page_size = page > 0 ? static_cast<uint64_t>(page) : 4096;
    const uint64_t ceiling = options_.max_map_size / page_size * page_size;
    if (current >= ceiling) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "store '", path_, "' is full: its map has reached the ceiling of ",
          Bytes(options_.max_map_size),
          " (StoreOptions::max_map_size); nothing was written"));
    }
    new_size = std::min(ceiling, current * 2);
  }
  DrainReadPoolLocked();
  const int rc = mdb_env_set_mapsize(env_, new_size);
  if (rc != 0) {
    return LmdbStatus(rc, absl::StrCat("resizing the map of store '", path_,
                                       "' to ", Bytes(new_size)));
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::Update(
    absl::FunctionRef<absl::Status(WriteTransaction&)> fn) {
  if (options_.read_only) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store '", path_, "' is open read-only; it cannot be written"));
  }
  const std::thread::id self = std::this_thread::get_id();
  if (writer_thread_.load() == self) {
    return absl::FailedPreconditionError(
        "Update called inside Update of the same store: nested write "
        "transactions are not supported");
  }
  std::lock_guard write_lock(write_mu_);
  writer_thread_.store(self);
  absl::Cleanup not_writing = [&] { writer_thread_.store(std::thread::id()); };

  for (;;) {
    EnterTxn();
    MDB_txn* raw = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, 0, &raw);
    if (rc != 0) {
      ExitTxn();
      if (rc == MDB_MAP_RESIZED) {
        if (absl::Status s = ResizeMap(/*grow=*/false); !s.ok()) return s;
        continue;
      }
      return LmdbStatus(
          rc, absl::StrCat("beginning a write transaction on '", path_, "'"));
    }
    {
      std::lock_guard lock(txn_mu_);
      write_txn_thread_ = self;
    }
    WriteTransaction txn(this, raw);
    absl::Status status = fn(txn);
    txn.txn_ = nullptr;  // the transaction must not be used after fn returns
    {
      std::lock_guard lock(txn_mu_);
      write_txn_thread_ = std::thread::id();
    }
    if (txn.map_full_) {
      mdb_txn_abort(raw);
      ExitTxn();
      if (absl::Status s = ResizeMap(/*grow=*/true); !s.ok()) return s;
      continue;
    }
    if (txn.fatal_rc_ != 0 || !status.ok()) {
      mdb_txn_abort(raw);
      ExitTxn();
      if (!status.ok()) return status;
      return WriteFailureStatus(txn.fatal_rc_, path_,
                                "a write in this transaction failed, so it "
                                "was not committed");
    }
    rc = mdb_txn_commit(raw);
    ExitTxn();
    if (rc == MDB_MAP_FULL) {
      if (absl::Status s = ResizeMap(/*grow=*/true); !s.ok()) return s;
      continue;
    }
    if (rc != 0) {
      return WriteFailureStatus(
          rc, path_, absl::StrCat("committing to store '", path_, "'"));
    }
    return absl::OkStatus();
  }
}

absl::StatusOr<StoreInfo> StoreImpl::Info() {
  StoreInfo info;
  info.path = path_;
  info.format_version = format_version_;
  info.read_only = options_.read_only;
  info.max_map_size = options_.max_map_size;

  // Count live reader slots before opening our own.
  uint32_t readers = 0;
  mdb_reader_list(
      env_,
      [](const char* line, void* ctx) -> int {
        // One header line, then one per reader; or "(no active readers)".
        if (std::strncmp(line, "    pid", 7) != 0 && line[0] != '(') {
          ++*static_cast<uint32_t*>(ctx);
        }
        return 0;
      },
      &readers);
  info.readers_in_use = readers;

  std::lock_guard lock(dbi_mu_);
  MDB_txn* txn = nullptr;
  if (absl::Status s = BeginRawRead(&txn); !s.ok()) return s;
  bool committed = false;
  absl::Cleanup end = [&] {
    if (!committed) mdb_txn_abort(txn);
    ExitTxn();
  };

  MDB_envinfo env_info;
  MDB_stat env_stat;
  mdb_env_info(env_, &env_info);
  mdb_env_stat(env_, &env_stat);
  info.map_size = env_info.me_mapsize;
  info.page_size = env_stat.ms_psize;
  info.used_pages = env_info.me_last_pgno + 1;
  info.last_transaction_id = env_info.me_last_txnid;
  info.max_readers = env_info.me_maxreaders;

  // Named databases are the keys of the main database.
  MDB_dbi main_dbi;
  int rc = mdb_dbi_open(txn, nullptr, 0, &main_dbi);
  MDB_cursor* cursor = nullptr;
  if (rc == 0) rc = mdb_cursor_open(txn, main_dbi, &cursor);
  if (rc != 0) return LmdbStatus(rc, "listing databases");
  std::vector<std::string> names;
  MDB_val key, value;
  for (rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    names.emplace_back(static_cast<const char*>(key.mv_data), key.mv_size);
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "listing databases");

  std::vector<std::pair<std::string, MDB_dbi>> opened;
  for (const std::string& name : names) {
    if (name.find('\0') != std::string::npos) continue;
    MDB_dbi dbi;
    if (auto it = dbis_.find(name); it != dbis_.end()) {
      dbi = it->second;
    } else {
      rc = mdb_dbi_open(txn, name.c_str(), 0, &dbi);
      if (rc == MDB_INCOMPATIBLE) continue;  // a plain key, not a database
      if (rc != 0)
        return LmdbStatus(rc, absl::StrCat("opening '", AV(name), "'"));
      opened.emplace_back(name, dbi);
    }
    MDB_stat st;
    rc = mdb_stat(txn, dbi, &st);
    if (rc != 0)
      return LmdbStatus(rc, absl::StrCat("reading '", AV(name), "'"));
    info.databases.push_back(DatabaseInfo{
        name, st.ms_entries,
        st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages,
        st.ms_depth});
  }
  // Commit so the handles opened here stay valid for later transactions.
  rc = mdb_txn_commit(txn);
  committed = true;
  if (rc != 0) return LmdbStatus(rc, "finishing the info transaction");
  for (auto& [name, dbi] : opened) dbis_.emplace(std::move(name), dbi);
  return info;
}

}  // namespace ctxkit::internal
