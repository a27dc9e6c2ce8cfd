// Row access and key printing shared by the parts' consistency checks
// (lib/conversations/conversation_check.cc, lib/cache/cache_check.cc): a
// check reads sub-databases that may be absent (a part never used in a
// read-only store) and prints keys that may hold any bytes once damaged.

#ifndef CTXKIT_LIB_STORE_CHECK_ROWS_H_
#define CTXKIT_LIB_STORE_CHECK_ROWS_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ctxkit/store.h"
#include "lib/base/absl_string_view.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {

// `bytes` in double quotes with C escapes, so a message stays printable.
inline std::string QuotedKey(std::string_view bytes) {
  return absl::StrCat("\"", absl::CHexEscape(AV(bytes)), "\"");
}

// The value under `key`, or nullopt when there is none or `db` is an invalid
// handle (an absent sub-database). The view lives as long as `txn`.
inline absl::StatusOr<std::optional<std::string_view>> FindRow(
    const Transaction& txn, Database db, std::string_view key) {
  if (!db.valid()) return std::nullopt;
  absl::StatusOr<std::string_view> v = TxnGet(txn, db, key);
  if (v.ok()) return std::optional<std::string_view>(*v);
  if (v.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
  return v.status();
}

// Calls `fn(key, value)` (returning absl::Status) for every row of `db` in
// key order, stopping at the first error; no call when `db` is invalid.
template <typename Fn>
absl::Status ForEachRow(const Transaction& txn, Database db, Fn&& fn) {
  if (!db.valid()) return absl::OkStatus();
  CTXKIT_ASSIGN_OR_RETURN(Cursor c, TxnNewCursor(txn, db));
  for (c.SeekToFirst(); c.Valid(); c.Next()) {
    CTXKIT_RETURN_IF_ERROR(fn(c.key(), c.value()));
  }
  return CursorStatus(c);
}

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_CHECK_ROWS_H_
