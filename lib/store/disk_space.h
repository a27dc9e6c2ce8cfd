// What a failed write means when the disk may be full.
//
// LMDB reports a disk that fills during a commit as the errno of the failed
// write: ENOSPC when nothing could be written, but EIO when a write came up
// short, which reads as a hardware fault. Asking the file system how much
// space is left tells the two apart, so the user hears "the disk is full"
// and what to do, not "Input/output error".

#ifndef CTXKIT_LIB_STORE_DISK_SPACE_H_
#define CTXKIT_LIB_STORE_DISK_SPACE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace ctxkit::internal {

// Below this many free bytes a failed write is taken for a full disk: a
// commit writes at most a few pages beyond what the transaction changed, so
// an I/O error with more room than this is a real one.
inline constexpr uint64_t kLowDiskSpaceBytes = uint64_t{16} << 20;

// The status of a write to the store in directory `store_path` that failed
// with `rc` (an MDB_* code or errno) while doing `what`. For ENOSPC, EDQUOT
// and EFBIG, and for EIO when the file system has less than
// kLowDiskSpaceBytes free: RESOURCE_EXHAUSTED naming the store, the file
// system's mount point and its free and total bytes, and saying that nothing
// was written. Otherwise LmdbStatus(rc, what). Reads the file system's
// figures with statvfs; thread-safe.
absl::Status WriteFailureStatus(int rc, const std::string& store_path,
                                std::string_view what);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_DISK_SPACE_H_
