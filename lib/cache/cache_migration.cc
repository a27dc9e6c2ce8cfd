#include "lib/cache/cache_migration.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/cache/cache_format.h"
#include "lib/cache/cache_rows.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

// A version-1 record is a version-2 record (cache_format.cc) with version
// byte 1 and without the placement byte: its content was always apart.
absl::StatusOr<EntryMeta> DecodeVersion1(std::string_view key,
                                         std::string_view v) {
  if (v.empty() || v[0] != 1) {
    return absl::DataLossError(absl::StrFormat(
        "cache entry '%s' has a malformed version-1 record", key));
  }
  std::string as_version2(v);
  as_version2[0] = 2;
  as_version2.push_back('\0');  // placement: content apart
  return DecodeMeta(key, as_version2);
}

}  // namespace

absl::Status MigrateCacheRecordsToV2(MigrationContext& ctx) {
  absl::StatusOr<Database> entries = ctx.OpenExistingDatabase("cache");
  if (absl::IsNotFound(entries.status())) return absl::OkStatus();
  CTXKIT_RETURN_IF_ERROR(entries.status());
  CTXKIT_ASSIGN_OR_RETURN(Database content,
                          ctx.OpenExistingDatabase("cache.content"));
  WriteTransaction& txn = ctx.txn();
  // Keys first: the rewrites below would move a cursor's pages under it.
  std::vector<std::string> keys;
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, *entries));
    for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
      keys.emplace_back(cursor.key());
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  }
  for (const std::string& key : keys) {
    CTXKIT_ASSIGN_OR_RETURN(std::string_view record,
                            TxnGet(txn, *entries, key));
    CTXKIT_ASSIGN_OR_RETURN(EntryMeta meta, DecodeVersion1(key, record));
    // A version-1 record's content is always apart (content_inline false).
    CTXKIT_ASSIGN_OR_RETURN(std::string_view bytes,
                            ContentOf(txn, content, key, MetaView{}));
    const bool take_in = FitsInline(meta, bytes.size());
    if (take_in) meta.inline_content.emplace(bytes);
    CTXKIT_RETURN_IF_ERROR(TxnPut(txn, *entries, key, EncodeMeta(meta)));
    if (take_in) {
      CTXKIT_ASSIGN_OR_RETURN(bool gone, TxnDelete(txn, content, key));
      (void)gone;
    }
  }
  return absl::OkStatus();
}

}  // namespace ctxkit::internal
