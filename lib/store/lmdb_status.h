// Translation of LMDB return codes into absl::Status with messages that say
// what was being done and to which path, since LMDB's own strings do not.

#ifndef CTXKIT_LIB_STORE_LMDB_STATUS_H_
#define CTXKIT_LIB_STORE_LMDB_STATUS_H_

#include <string_view>

#include "absl/status/status.h"

namespace ctxkit::internal {

// The status for `rc`, an MDB_* code or an errno value (LMDB returns errno
// values for system errors, so this serves for both), from operation `what`,
// e.g. "cannot open store '/data/store'". OK when rc == 0.
absl::Status LmdbStatus(int rc, std::string_view what);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_LMDB_STATUS_H_
