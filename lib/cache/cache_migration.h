// The cache's part of upgrading a store's on-disk format (lib/store/
// format.cc runs it inside the upgrade's one write transaction).

#ifndef CTXKIT_LIB_CACHE_CACHE_MIGRATION_H_
#define CTXKIT_LIB_CACHE_CACHE_MIGRATION_H_

#include "absl/status/status.h"
#include "lib/store/format.h"

namespace ctxkit::internal {

// Format 1 -> 2: every version-1 entry record in "cache" becomes a version-2
// record (cache_format.cc); one whose record then fits in
// kMaxInlineRecordBytes takes its content in, and its "cache.content" row is
// deleted. Nothing else changes: keys, indexes and statistics stay as they
// are. A store that never used the cache is left untouched. DATA_LOSS naming
// the key for a record that is not version 1 or a content row that is
// missing; the caller then aborts the whole upgrade.
absl::Status MigrateCacheRecordsToV2(MigrationContext& ctx);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CACHE_CACHE_MIGRATION_H_
