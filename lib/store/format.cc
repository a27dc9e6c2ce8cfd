#include "lib/store/format.h"

#include "lib/cache/cache_migration.h"
#include "lib/graph/graph_migration.h"

namespace ctxkit::internal {

const FormatSpec& DefaultFormat() {
  // A format change adds {from, apply} here and bumps Store::kFormatVersion.
  static const FormatSpec* spec = new FormatSpec{
      Store::kFormatVersion,
      {{1, MigrateCacheRecordsToV2}, {2, MigrateLexicalToTermIds}}};
  return *spec;
}

}  // namespace ctxkit::internal
