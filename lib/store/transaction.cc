// Transaction, ReadTransaction, WriteTransaction and Cursor: thin, checked
// wrappers over LMDB calls. Every error names the key or database involved.
// The checked calls are StoreAccess's (store_internal.h), which lib/ uses;
// the public methods convert their status and nothing else.

#include <lmdb.h>

#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ctxkit/store.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/lmdb_status.h"
#include "lib/store/store_impl.h"
#include "lib/store/store_internal.h"

namespace ctxkit {
namespace {

using internal::LmdbStatus;
using internal::ToAbsl;
using internal::ToPublic;

MDB_val Val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}
std::string_view View(const MDB_val& v) {
  return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
}

// A key quoted for an error message: escaped, and cut short if long.
std::string Quote(std::string_view key) {
  constexpr size_t kShown = 64;
  const std::string_view shown = key.substr(0, kShown);
  std::string out = absl::StrCat(
      "'", absl::CHexEscape(absl::string_view(shown.data(), shown.size())),
      "'");
  if (key.size() > kShown)
    absl::StrAppend(&out, "... (", key.size(), " bytes)");
  return out;
}

absl::Status CheckKey(std::string_view key) {
  if (key.empty()) return absl::InvalidArgumentError("key must not be empty");
  if (key.size() > Transaction::kMaxKeySize) {
    return absl::InvalidArgumentError(
        absl::StrCat("key of ", key.size(), " bytes exceeds the ",
                     Transaction::kMaxKeySize, "-byte limit"));
  }
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------- Cursor

Cursor::Cursor(MDB_cursor* cursor, bool owned)
    : cursor_(cursor), owned_(owned) {}

Cursor::Cursor(Cursor&& other) noexcept
    : cursor_(std::exchange(other.cursor_, nullptr)),
      owned_(other.owned_),
      valid_(std::exchange(other.valid_, false)),
      key_(other.key_),
      value_(other.value_),
      status_(std::move(other.status_)) {}

Cursor& Cursor::operator=(Cursor&& other) noexcept {
  if (this != &other) {
    if (owned_ && cursor_ != nullptr) mdb_cursor_close(cursor_);
    cursor_ = std::exchange(other.cursor_, nullptr);
    owned_ = other.owned_;
    valid_ = std::exchange(other.valid_, false);
    key_ = other.key_;
    value_ = other.value_;
    status_ = std::move(other.status_);
  }
  return *this;
}

Cursor::~Cursor() {
  if (owned_ && cursor_ != nullptr) mdb_cursor_close(cursor_);
}

void Cursor::Move(int op, std::string_view target) {
  valid_ = false;
  if (cursor_ == nullptr) {
    status_ = Status(StatusCode::kFailedPrecondition, "cursor was moved from");
    return;
  }
  MDB_val key = Val(target);
  MDB_val value{0, nullptr};
  const int rc =
      mdb_cursor_get(cursor_, &key, &value, static_cast<MDB_cursor_op>(op));
  if (rc == 0) {
    valid_ = true;
    key_ = View(key);
    value_ = View(value);
  } else if (rc != MDB_NOTFOUND) {
    status_ = ToPublic(LmdbStatus(rc, "moving a cursor"));
  }
}

void Cursor::SeekToFirst() { Move(MDB_FIRST, {}); }
void Cursor::SeekToLast() { Move(MDB_LAST, {}); }
void Cursor::Seek(std::string_view target) {
  if (target.empty()) return SeekToFirst();
  Move(MDB_SET_RANGE, target);
}
void Cursor::Next() {
  if (valid_) Move(MDB_NEXT, {});
}
void Cursor::Prev() {
  if (valid_) Move(MDB_PREV, {});
}

// ----------------------------------------------------------- Transaction

Transaction::Transaction(Transaction&& other) noexcept
    : store_(other.store_),
      txn_(std::exchange(other.txn_, nullptr)),
      read_only_(other.read_only_) {}

Transaction& Transaction::operator=(Transaction&& other) noexcept {
  store_ = other.store_;
  txn_ = std::exchange(other.txn_, nullptr);
  read_only_ = other.read_only_;
  return *this;
}

namespace internal {
namespace {

absl::Status CheckUsable(const StoreImpl* store, MDB_txn* txn, Database db) {
  if (txn == nullptr) {
    return absl::FailedPreconditionError("the transaction has ended");
  }
  if (!db.valid() || !store->Owns(db)) {
    return absl::InvalidArgumentError(
        "invalid database handle, or one from another store");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string_view> StoreAccess::Get(const Transaction& txn,
                                                  Database db,
                                                  std::string_view key) {
  CTXKIT_RETURN_IF_ERROR(CheckUsable(txn.store_, txn.txn_, db));
  CTXKIT_RETURN_IF_ERROR(CheckKey(key));
  MDB_val k = Val(key);
  MDB_val v;
  const int rc = mdb_get(txn.txn_, StoreImpl::Dbi(db), &k, &v);
  if (rc == 0) return View(v);
  if (rc == MDB_NOTFOUND) {
    return absl::NotFoundError(absl::StrCat("no value for key ", Quote(key)));
  }
  return LmdbStatus(rc, absl::StrCat("reading key ", Quote(key)));
}

absl::StatusOr<uint64_t> StoreAccess::Count(const Transaction& txn,
                                            Database db) {
  CTXKIT_RETURN_IF_ERROR(CheckUsable(txn.store_, txn.txn_, db));
  MDB_stat st;
  const int rc = mdb_stat(txn.txn_, StoreImpl::Dbi(db), &st);
  if (rc != 0) return LmdbStatus(rc, "counting entries");
  return uint64_t{st.ms_entries};
}

absl::StatusOr<Cursor> StoreAccess::NewCursor(const Transaction& txn,
                                              Database db) {
  CTXKIT_RETURN_IF_ERROR(CheckUsable(txn.store_, txn.txn_, db));
  MDB_cursor* cursor = nullptr;
  const int rc = mdb_cursor_open(txn.txn_, StoreImpl::Dbi(db), &cursor);
  if (rc != 0) return LmdbStatus(rc, "opening a cursor");
  // Every cursor is closed when destroyed, write-transaction ones too (LMDB
  // allows it before the transaction ends, which the Cursor contract
  // requires anyway): LMDB adjusts every open cursor of a transaction on each
  // write, so leaving them open until commit made a transaction that opens
  // many cursors quadratic.
  return Cursor(cursor, /*owned=*/true);
}

absl::Status StoreAccess::CursorStatus(const Cursor& cursor) {
  // The cursor is a public object and keeps its status in public form; this
  // is where lib/ reads it back.
  return ToAbsl(cursor.status_);
}

absl::Status StoreAccess::Fail(WriteTransaction& txn, int mdb_rc,
                               std::string_view what) {
  switch (mdb_rc) {
    case MDB_MAP_FULL:
      txn.map_full_ = true;
      break;
    // Refused before LMDB touched anything: the transaction is still good.
    case MDB_NOTFOUND:
    case MDB_KEYEXIST:
    case MDB_BAD_VALSIZE:
    case MDB_BAD_DBI:
    case MDB_INCOMPATIBLE:
    case EINVAL:
      break;
    default:
      // LMDB has marked the transaction failed; it must not commit even if
      // the caller carries on.
      if (txn.fatal_rc_ == 0) txn.fatal_rc_ = mdb_rc;
  }
  return LmdbStatus(mdb_rc, what);
}

absl::Status StoreAccess::Put(WriteTransaction& txn, Database db,
                              std::string_view key, std::string_view value) {
  CTXKIT_RETURN_IF_ERROR(CheckUsable(txn.store_, txn.txn_, db));
  CTXKIT_RETURN_IF_ERROR(CheckKey(key));
  if (value.size() > 0xffffffffu) {
    return absl::InvalidArgumentError(absl::StrCat(
        "value of ", value.size(), " bytes exceeds the 4 GiB limit"));
  }
  MDB_val k = Val(key);
  MDB_val v = Val(value);
  const int rc = mdb_put(txn.txn_, StoreImpl::Dbi(db), &k, &v, 0);
  if (rc == 0) return absl::OkStatus();
  return Fail(txn, rc, absl::StrCat("writing key ", Quote(key)));
}

absl::StatusOr<bool> StoreAccess::Delete(WriteTransaction& txn, Database db,
                                         std::string_view key) {
  CTXKIT_RETURN_IF_ERROR(CheckUsable(txn.store_, txn.txn_, db));
  CTXKIT_RETURN_IF_ERROR(CheckKey(key));
  MDB_val k = Val(key);
  const int rc = mdb_del(txn.txn_, StoreImpl::Dbi(db), &k, nullptr);
  if (rc == 0) return true;
  if (rc == MDB_NOTFOUND) return false;
  return Fail(txn, rc, absl::StrCat("deleting key ", Quote(key)));
}

absl::Status StoreAccess::Clear(WriteTransaction& txn, Database db) {
  CTXKIT_RETURN_IF_ERROR(CheckUsable(txn.store_, txn.txn_, db));
  const int rc = mdb_drop(txn.txn_, StoreImpl::Dbi(db), 0);
  if (rc == 0) return absl::OkStatus();
  return Fail(txn, rc, "clearing a database");
}

}  // namespace internal

StatusOr<std::string_view> Transaction::Get(Database db,
                                            std::string_view key) const {
  return ToPublic(internal::TxnGet(*this, db, key));
}

StatusOr<uint64_t> Transaction::Count(Database db) const {
  return ToPublic(internal::TxnCount(*this, db));
}

StatusOr<Cursor> Transaction::NewCursor(Database db) const {
  return ToPublic(internal::TxnNewCursor(*this, db));
}

// ------------------------------------------------------- ReadTransaction

ReadTransaction::ReadTransaction(ReadTransaction&& other) noexcept
    : Transaction(std::move(other)) {}

ReadTransaction& ReadTransaction::operator=(ReadTransaction&& other) noexcept {
  if (this != &other) {
    End();
    Transaction::operator=(std::move(other));
  }
  return *this;
}

ReadTransaction::~ReadTransaction() { End(); }

uint64_t ReadTransaction::snapshot_id() const {
  return txn_ == nullptr ? 0 : mdb_txn_id(txn_);
}

void ReadTransaction::End() {
  if (txn_ != nullptr) store_->EndRead(std::exchange(txn_, nullptr));
}

// ------------------------------------------------------ WriteTransaction

Status WriteTransaction::Put(Database db, std::string_view key,
                             std::string_view value) {
  return ToPublic(internal::TxnPut(*this, db, key, value));
}

StatusOr<bool> WriteTransaction::Delete(Database db, std::string_view key) {
  return ToPublic(internal::TxnDelete(*this, db, key));
}

Status WriteTransaction::Clear(Database db) {
  return ToPublic(internal::TxnClear(*this, db));
}

}  // namespace ctxkit
