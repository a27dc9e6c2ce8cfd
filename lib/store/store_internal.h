// The store as the rest of lib/ calls it: every operation of Store,
// Transaction, WriteTransaction and Cursor, returning absl::Status like
// everything else inside the library (DESIGN.md).
//
// These functions are the implementation; the public methods in
// include/ctxkit/store.h are each one of them plus one ToPublic. So a status
// crosses between Abseil and ctxkit only where a user's call enters or
// leaves the library, never between two parts of lib/. The prefixes
// (Txn..., Store...) keep a call site inside a class that has its own Get,
// Put or Update from resolving to the member instead.
//
// Contracts, errors, lifetimes and thread safety are those of the public
// method of the same name (include/ctxkit/store.h).

#ifndef CTXKIT_LIB_STORE_STORE_INTERNAL_H_
#define CTXKIT_LIB_STORE_STORE_INTERNAL_H_

#include <cstdint>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

// The friend of the public store classes through which this file and
// StoreImpl reach their private parts.
struct StoreAccess {
  static absl::StatusOr<std::string_view> Get(const Transaction& txn,
                                              Database db,
                                              std::string_view key);
  static absl::StatusOr<uint64_t> Count(const Transaction& txn, Database db);
  static absl::StatusOr<Cursor> NewCursor(const Transaction& txn, Database db);
  static absl::Status Put(WriteTransaction& txn, Database db,
                          std::string_view key, std::string_view value);
  static absl::StatusOr<bool> Delete(WriteTransaction& txn, Database db,
                                     std::string_view key);
  static absl::Status Clear(WriteTransaction& txn, Database db);
  static absl::Status CursorStatus(const Cursor& cursor);

  // Records on `txn` why this attempt must be retried (map full) or must not
  // commit (LMDB failed the transaction), whatever the user's function then
  // returns, and returns the error naming `what`.
  static absl::Status Fail(WriteTransaction& txn, int mdb_rc,
                           std::string_view what);

  static StoreImpl& Impl(const Store& store) { return *store.impl_; }
};

inline absl::StatusOr<std::string_view> TxnGet(const Transaction& txn,
                                               Database db,
                                               std::string_view key) {
  return StoreAccess::Get(txn, db, key);
}
inline absl::StatusOr<uint64_t> TxnCount(const Transaction& txn, Database db) {
  return StoreAccess::Count(txn, db);
}
inline absl::StatusOr<Cursor> TxnNewCursor(const Transaction& txn,
                                           Database db) {
  return StoreAccess::NewCursor(txn, db);
}
inline absl::Status TxnPut(WriteTransaction& txn, Database db,
                           std::string_view key, std::string_view value) {
  return StoreAccess::Put(txn, db, key, value);
}
inline absl::StatusOr<bool> TxnDelete(WriteTransaction& txn, Database db,
                                      std::string_view key) {
  return StoreAccess::Delete(txn, db, key);
}
inline absl::Status TxnClear(WriteTransaction& txn, Database db) {
  return StoreAccess::Clear(txn, db);
}
// The cursor's status(): OK unless a move failed other than at the end.
inline absl::Status CursorStatus(const Cursor& cursor) {
  return StoreAccess::CursorStatus(cursor);
}

absl::StatusOr<Database> StoreOpenDatabase(Store& store, std::string_view name);
absl::StatusOr<ReadTransaction> StoreBeginRead(const Store& store);
absl::Status StoreUpdate(Store& store,
                         absl::FunctionRef<absl::Status(WriteTransaction&)> fn);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_STORE_STORE_INTERNAL_H_
