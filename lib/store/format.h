// The on-disk format of a Store and the hook through which it is upgraded.
//
// The "__meta" sub-database records the format version a store was written
// with. Open refuses a newer format (an old ctxkit must never misread data it
// does not understand) and upgrades an older one by running, in order and in
// the same write transaction as the version bump, every migration from the
// stored version up to the current one. A crash mid-upgrade therefore leaves
// the store at its old version, untouched.

#ifndef CTXKIT_LIB_STORE_FORMAT_H_
#define CTXKIT_LIB_STORE_FORMAT_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

class StoreImpl;

// Name of ctxkit's own sub-database; user names may not start with "__".
inline constexpr std::string_view kMetaDatabaseName = "__meta";
// Key, in __meta, of the format version: 4 bytes, little-endian.
inline constexpr std::string_view kFormatVersionKey = "format_version";
// Key, in __meta, of the "ctxkit X.Y.Z" that created the store (for humans).
inline constexpr std::string_view kCreatedByKey = "created_by";

// What a migration may use: the write transaction of the upgrade, and a way
// to open or create sub-databases within it.
class MigrationContext {
 public:
  virtual ~MigrationContext() = default;
  virtual WriteTransaction& txn() = 0;
  virtual absl::StatusOr<Database> OpenDatabase(std::string_view name) = 0;
  // Opens sub-database `name` only if it exists: NOT_FOUND otherwise, so a
  // migration of a part the store never used creates nothing.
  virtual absl::StatusOr<Database> OpenExistingDatabase(
      std::string_view name) = 0;
};

// Upgrades a store from format `from` to `from + 1`.
struct Migration {
  uint32_t from = 0;
  std::function<absl::Status(MigrationContext&)> apply;
};

// The format a StoreImpl opens stores with.
struct FormatSpec {
  uint32_t current = Store::kFormatVersion;
  // Must contain a step for every version in [oldest supported, current).
  std::vector<Migration> migrations;
};

// ctxkit's real format: version Store::kFormatVersion and its migrations
// (1 -> 2: cache records hold small content, cache_migration.h; 2 -> 3:
// the graph's lexical index gets term ids, graph_migration.h).
const FormatSpec& DefaultFormat();

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_FORMAT_H_
