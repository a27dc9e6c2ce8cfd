#include "lib/cache/cache_rows.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_format.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {

absl::StatusOr<MetaView> ReadView(const Transaction& txn, Database entries,
                                  std::string_view key) {
  CTXKIT_ASSIGN_OR_RETURN(std::string_view value,
                          internal::TxnGet(txn, entries, key));
  MetaView meta{};
  if (!DecodeView(value, &meta)) {
    return absl::DataLossError(
        absl::StrFormat("cache entry '%s' has a malformed record", key));
  }
  return meta;
}

absl::StatusOr<std::string_view> ContentOf(const Transaction& txn,
                                           Database content,
                                           std::string_view key,
                                           const MetaView& meta) {
  if (meta.content_inline) return meta.content;
  absl::StatusOr<std::string_view> row = internal::TxnGet(txn, content, key);
  if (row.status().code() == absl::StatusCode::kNotFound) {
    return absl::DataLossError(absl::StrFormat(
        "cache entry '%s' has lost its content: its cache.content row is "
        "missing",
        key));
  }
  return row;
}

bool Expired(int64_t expires_at, int64_t now) {
  return expires_at != 0 && expires_at <= now;
}

absl::Status Del(WriteTransaction& txn, Database db, std::string_view key) {
  absl::StatusOr<bool> gone = internal::TxnDelete(txn, db, key);
  return gone.ok() ? absl::OkStatus() : gone.status();
}

absl::Status ApplyDeltas(WriteTransaction& txn, Database db,
                         std::string_view key, const std::vector<int64_t>& d) {
  bool any = false;
  for (int64_t x : d) any = any || x != 0;
  if (!any) return absl::OkStatus();
  absl::StatusOr<std::vector<uint64_t>> f =
      ReadCounters(txn, db, key, static_cast<int>(d.size()));
  if (!f.ok()) return f.status();
  for (size_t i = 0; i < d.size(); ++i) {
    (*f)[i] += static_cast<uint64_t>(d[i]);
  }
  return WriteCounters(txn, db, key, *f);
}

}  // namespace ctxkit::internal
