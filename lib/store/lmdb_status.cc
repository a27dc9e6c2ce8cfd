#include "lib/store/lmdb_status.h"

#include <lmdb.h>

#include <cerrno>

#include "absl/strings/str_format.h"

namespace ctxkit::internal {

absl::Status LmdbStatus(int rc, std::string_view what) {
  if (rc == 0) return absl::OkStatus();
  const std::string message = absl::StrFormat("%s: %s", what, mdb_strerror(rc));
  switch (rc) {
    case MDB_NOTFOUND:
      return absl::NotFoundError(message);
    case MDB_KEYEXIST:
      return absl::AlreadyExistsError(message);
    case MDB_MAP_FULL:
    case MDB_TXN_FULL:
    case MDB_READERS_FULL:
    case MDB_DBS_FULL:
    case MDB_TLS_FULL:
    case MDB_CURSOR_FULL:
    case MDB_PAGE_FULL:
    case ENOMEM:
    case ENOSPC:
      return absl::ResourceExhaustedError(message);
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
      return absl::DataLossError(message);
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
    case MDB_INCOMPATIBLE:
    case ENOTDIR:
      return absl::FailedPreconditionError(message);
    case MDB_BAD_VALSIZE:
    case MDB_BAD_DBI:
    case EINVAL:
      return absl::InvalidArgumentError(message);
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case EAGAIN:
    case EBUSY:
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace ctxkit::internal
