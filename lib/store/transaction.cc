// Transaction, ReadTransaction, WriteTransaction and Cursor: thin, checked
// wrappers over LMDB calls. Every error names the key or database involved.

#include <lmdb.h>

#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ctxkit/store.h"
#include "lib/status/status_internal.h"
#include "lib/store/lmdb_status.h"
#include "lib/store/store_impl.h"

namespace ctxkit {
namespace {

using internal::LmdbStatus;
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

Status CheckKey(std::string_view key) {
  if (key.empty()) {
    return Status(StatusCode::kInvalidArgument, "key must not be empty");
  }
  if (key.size() > Transaction::kMaxKeySize) {
    return Status(StatusCode::kInvalidArgument,
                  absl::StrCat("key of ", key.size(), " bytes exceeds the ",
                               Transaction::kMaxKeySize, "-byte limit"));
  }
  return Status();
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

Status Transaction::CheckUsable(Database db) const {
  if (txn_ == nullptr) {
    return Status(StatusCode::kFailedPrecondition, "the transaction has ended");
  }
  if (!db.valid() || !store_->Owns(db)) {
    return Status(StatusCode::kInvalidArgument,
                  "invalid database handle, or one from another store");
  }
  return Status();
}

StatusOr<std::string_view> Transaction::Get(Database db,
                                            std::string_view key) const {
  if (Status s = CheckUsable(db); !s.ok()) return s;
  if (Status s = CheckKey(key); !s.ok()) return s;
  MDB_val k = Val(key);
  MDB_val v;
  const int rc = mdb_get(txn_, internal::StoreImpl::Dbi(db), &k, &v);
  if (rc == 0) return View(v);
  if (rc == MDB_NOTFOUND) {
    return Status(StatusCode::kNotFound,
                  absl::StrCat("no value for key ", Quote(key)));
  }
  return ToPublic(LmdbStatus(rc, absl::StrCat("reading key ", Quote(key))));
}

StatusOr<uint64_t> Transaction::Count(Database db) const {
  if (Status s = CheckUsable(db); !s.ok()) return s;
  MDB_stat st;
  const int rc = mdb_stat(txn_, internal::StoreImpl::Dbi(db), &st);
  if (rc != 0) return ToPublic(LmdbStatus(rc, "counting entries"));
  return uint64_t{st.ms_entries};
}

StatusOr<Cursor> Transaction::NewCursor(Database db) const {
  if (Status s = CheckUsable(db); !s.ok()) return s;
  MDB_cursor* cursor = nullptr;
  const int rc = mdb_cursor_open(txn_, internal::StoreImpl::Dbi(db), &cursor);
  if (rc != 0) return ToPublic(LmdbStatus(rc, "opening a cursor"));
  // Every cursor is closed when destroyed, write-transaction ones too (LMDB
  // allows it before the transaction ends, which the Cursor contract
  // requires anyway): LMDB adjusts every open cursor of a transaction on each
  // write, so leaving them open until commit made a transaction that opens
  // many cursors quadratic.
  return Cursor(cursor, /*owned=*/true);
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

Status WriteTransaction::Fail(int mdb_rc, std::string_view what) {
  switch (mdb_rc) {
    case MDB_MAP_FULL:
      map_full_ = true;
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
      if (fatal_rc_ == 0) fatal_rc_ = mdb_rc;
  }
  return ToPublic(LmdbStatus(mdb_rc, what));
}

Status WriteTransaction::Put(Database db, std::string_view key,
                             std::string_view value) {
  if (Status s = CheckUsable(db); !s.ok()) return s;
  if (Status s = CheckKey(key); !s.ok()) return s;
  if (value.size() > 0xffffffffu) {
    return Status(StatusCode::kInvalidArgument,
                  absl::StrCat("value of ", value.size(),
                               " bytes exceeds the 4 GiB limit"));
  }
  MDB_val k = Val(key);
  MDB_val v = Val(value);
  const int rc = mdb_put(txn_, internal::StoreImpl::Dbi(db), &k, &v, 0);
  if (rc == 0) return Status();
  return Fail(rc, absl::StrCat("writing key ", Quote(key)));
}

StatusOr<bool> WriteTransaction::Delete(Database db, std::string_view key) {
  if (Status s = CheckUsable(db); !s.ok()) return s;
  if (Status s = CheckKey(key); !s.ok()) return s;
  MDB_val k = Val(key);
  const int rc = mdb_del(txn_, internal::StoreImpl::Dbi(db), &k, nullptr);
  if (rc == 0) return true;
  if (rc == MDB_NOTFOUND) return false;
  return Fail(rc, absl::StrCat("deleting key ", Quote(key)));
}

Status WriteTransaction::Clear(Database db) {
  if (Status s = CheckUsable(db); !s.ok()) return s;
  const int rc = mdb_drop(txn_, internal::StoreImpl::Dbi(db), 0);
  if (rc == 0) return Status();
  return Fail(rc, "clearing a database");
}

}  // namespace ctxkit
