// Store::OpenShared: one Store per directory per process, handed out to
// every caller that opens the directory while it is open.
//
// LMDB forbids two environments on one file in one process (closing either
// would release the other's locks), so a second open must share the first.
// The table counts the handles of each shared Store under one mutex, and the
// last handle's release closes the Store under that mutex too: an open that
// races with the last close either finds the Store still counted or finds it
// gone and closed, never half-closed (as a weak_ptr that has expired while
// its destructor has not yet run would be).

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ctxkit/store.h"
#include "lib/store/store_impl.h"
#include "lib/store/store_internal.h"

namespace ctxkit {
namespace {

// A directory's identity, as the store's own registry keys it: the same
// directory reached by another path (a symlink, "./x" and "x") is found.
struct DirectoryId {
  dev_t dev;
  ino_t ino;
  pid_t pid;  // a child after fork() must not share its parent's Store
  bool operator<(const DirectoryId& o) const {
    if (dev != o.dev) return dev < o.dev;
    if (ino != o.ino) return ino < o.ino;
    return pid < o.pid;
  }
};

struct SharedEntry {
  Store* store;
  size_t handles;
};

std::mutex& TableMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::map<DirectoryId, SharedEntry>& Table() {
  static auto* table = new std::map<DirectoryId, SharedEntry>;
  return *table;
}

bool IdOf(const std::string& path, DirectoryId* id) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  *id = {st.st_dev, st.st_ino, getpid()};
  return true;
}

// A new handle on the Store of `id`; the caller holds TableMutex().
std::shared_ptr<Store> Handle(const DirectoryId& id, SharedEntry& entry) {
  ++entry.handles;
  return std::shared_ptr<Store>(entry.store, [id](Store* store) {
    std::lock_guard lock(TableMutex());
    auto it = Table().find(id);
    if (it == Table().end() || --it->second.handles != 0) return;
    Table().erase(it);
    // Closed under the lock, so that an open racing with this close finds
    // the directory either shared or closed, never still held by LMDB.
    delete store;
  });
}

const char* Mode(bool read_only) {
  return read_only ? "read-only" : "read-write";
}

const char* SyncName(StoreSync sync) {
  return sync == StoreSync::kFull ? "StoreSync::kFull" : "StoreSync::kDataOnly";
}

}  // namespace

StatusOr<std::shared_ptr<Store>> Store::OpenShared(
    std::string_view path, const StoreOptions& options) {
  std::lock_guard lock(TableMutex());
  const std::string path_string(path);
  DirectoryId id;
  if (path_string.find('\0') == std::string::npos && IdOf(path_string, &id)) {
    auto it = Table().find(id);
    if (it != Table().end()) {
      Store& existing = *it->second.store;
      if (existing.read_only() != options.read_only) {
        return Status(
            StatusCode::kFailedPrecondition,
            absl::StrCat("store '", existing.path(), "' is already open ",
                         Mode(existing.read_only()),
                         " in this process; it cannot also be opened ",
                         Mode(options.read_only)));
      }
      // A caller asking for full durability must not get less unawares.
      const StoreSync sync = internal::StoreAccess::Impl(existing).sync();
      if (!options.read_only && sync != options.sync) {
        return Status(
            StatusCode::kFailedPrecondition,
            absl::StrCat("store '", existing.path(),
                         "' is already open in this process with sync ",
                         SyncName(sync), "; it cannot also be opened with ",
                         SyncName(options.sync)));
      }
      return Handle(id, it->second);
    }
  }
  StatusOr<std::unique_ptr<Store>> opened = Open(path, options);
  if (!opened.ok()) return opened.status();
  // The directory exists now (Open may have created it).
  if (!IdOf(path_string, &id)) {
    return Status(StatusCode::kInternal,
                  absl::StrCat("store '", path_string,
                               "' was opened but its directory cannot be "
                               "found again"));
  }
  auto [it, inserted] = Table().emplace(id, SharedEntry{opened->get(), 0});
  if (!inserted) {
    // Open succeeds only when no Store of this process has the directory
    // open, and every shared one is in the table: unreachable.
    return Status(StatusCode::kInternal,
                  absl::StrCat("store '", path_string,
                               "' is open twice in this process"));
  }
  opened->release();
  return Handle(id, it->second);
}

}  // namespace ctxkit
