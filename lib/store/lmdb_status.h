// Translation of LMDB return codes into absl::Status with messages that say
// what was being done and to which path, since LMDB's own strings do not.

#ifndef CTXKIT_LIB_STORE_LMDB_STATUS_H_
#define CTXKIT_LIB_STORE_LMDB_STATUS_H_

#include <string_view>

#include "absl/status/status.h"

namespace ctxkit::internal {

// The status for LMDB return code `rc` (an MDB_* code or an errno value)
// from operation `what`, e.g. "opening /data/store". OK when rc == 0.
absl::Status LmdbStatus(int rc, std::string_view what);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_LMDB_STATUS_H_
