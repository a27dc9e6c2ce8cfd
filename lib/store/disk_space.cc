#include "lib/store/disk_space.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_format.h"
#include "lib/store/lmdb_status.h"

namespace ctxkit::internal {
namespace {

// The mount point of the file system holding `path`: its highest ancestor
// on the same device.
std::string MountPoint(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return path;
  std::string at = path;
  while (at != "/") {
    const size_t slash = at.find_last_of('/');
    const std::string parent =
        slash == std::string::npos || slash == 0 ? "/" : at.substr(0, slash);
    struct stat parent_st;
    if (stat(parent.c_str(), &parent_st) != 0 ||
        parent_st.st_dev != st.st_dev) {
      break;
    }
    at = parent;
  }
  return at;
}

}  // namespace

absl::Status WriteFailureStatus(int rc, const std::string& store_path,
                                std::string_view what) {
  const bool space_error = rc == ENOSPC || rc == EDQUOT || rc == EFBIG;
  if (!space_error && rc != EIO) return LmdbStatus(rc, what);
  struct statvfs fs;
  if (statvfs(store_path.c_str(), &fs) != 0) return LmdbStatus(rc, what);
  // Root may use the blocks reserved for it; others only the available ones.
  const uint64_t free_blocks = geteuid() == 0 ? fs.f_bfree : fs.f_bavail;
  const uint64_t free_bytes = free_blocks * fs.f_frsize;
  const uint64_t total_bytes = uint64_t{fs.f_blocks} * fs.f_frsize;
  if (!space_error && free_bytes >= kLowDiskSpaceBytes) {
    return LmdbStatus(rc, what);
  }
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s: the disk is full: the file system at '%s' holding store '%s' has "
      "%d bytes free of %d (%s). Nothing was written: the store is as before "
      "and can still be read. Free some space there (or move the store, see "
      "--db) and try again",
      what, MountPoint(store_path), store_path, free_bytes, total_bytes,
      rc == EDQUOT  ? "disk quota exceeded"
      : rc == EFBIG ? "file size limit reached"
                    : "no space left"));
}

}  // namespace ctxkit::internal
