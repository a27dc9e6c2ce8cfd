#include "lib/cache/cache_migration.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_format.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

// A version-1 record: the version-2 layout without the placement byte, its
// content always in "cache.content". False when `v` is not one.
bool DecodeVersion1(std::string_view v, EntryMeta* meta) {
  constexpr size_t kFixed = 1 + 7 * 8;
  if (v.size() < kFixed + 2 || v[0] != 1) return false;
  const char* p = v.data() + 1;
  meta->serial = ReadBigEndian64(p);
  meta->tokens = ReadBigEndian64(p + 8);
  meta->created_at = static_cast<int64_t>(ReadBigEndian64(p + 16));
  meta->expires_at = static_cast<int64_t>(ReadBigEndian64(p + 24));
  meta->hit_count = ReadBigEndian64(p + 32);
  meta->last_accessed = static_cast<int64_t>(ReadBigEndian64(p + 40));
  meta->size_bytes = ReadBigEndian64(p + 48);
  std::string_view rest = v.substr(kFixed);
  const size_t model_len = static_cast<unsigned char>(rest[0]);
  if (rest.size() < 2 + model_len) return false;
  meta->model.assign(rest.substr(1, model_len));
  rest.remove_prefix(1 + model_len);
  const size_t conv_len = static_cast<unsigned char>(rest[0]);
  if (rest.size() != 1 + conv_len) return false;
  meta->conversation_id.assign(rest.substr(1));
  return true;
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
    EntryMeta meta;
    if (!DecodeVersion1(record, &meta)) {
      return absl::DataLossError(absl::StrFormat(
          "cache entry '%s' has a malformed version-1 record", key));
    }
    absl::StatusOr<std::string_view> bytes = TxnGet(txn, content, key);
    if (absl::IsNotFound(bytes.status())) {
      return absl::DataLossError(absl::StrFormat(
          "cache entry '%s' has lost its content: its cache.content row is "
          "missing",
          key));
    }
    CTXKIT_RETURN_IF_ERROR(bytes.status());
    const bool take_in = FitsInline(meta, bytes->size());
    if (take_in) meta.inline_content.emplace(*bytes);
    CTXKIT_RETURN_IF_ERROR(TxnPut(txn, *entries, key, EncodeMeta(meta)));
    if (take_in) {
      CTXKIT_ASSIGN_OR_RETURN(bool gone, TxnDelete(txn, content, key));
      (void)gone;
    }
  }
  return absl::OkStatus();
}

}  // namespace ctxkit::internal
