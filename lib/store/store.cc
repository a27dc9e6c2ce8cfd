// ctxkit::Store: the public face of StoreImpl, which converts statuses at
// the boundary and nothing else; and the same calls for lib/
// (store_internal.h), which need no conversion.

#include "ctxkit/store.h"

#include <utility>

#include "lib/status/status_internal.h"
#include "lib/store/format.h"
#include "lib/store/store_impl.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

using internal::ToAbsl;
using internal::ToPublic;

StatusOr<std::unique_ptr<Store>> Store::Open(std::string_view path,
                                             const StoreOptions& options) {
  auto impl =
      internal::StoreImpl::Open(path, options, internal::DefaultFormat());
  if (!impl.ok()) return ToPublic(impl.status());
  return std::unique_ptr<Store>(new Store(std::move(*impl)));
}

Store::Store(std::unique_ptr<internal::StoreImpl> impl)
    : impl_(std::move(impl)) {}

Store::~Store() = default;

StatusOr<Database> Store::OpenDatabase(std::string_view name) {
  return ToPublic(impl_->OpenDatabase(name));
}

StatusOr<ReadTransaction> Store::BeginRead() const {
  return ToPublic(impl_->BeginRead());
}

Status Store::Update(const std::function<Status(WriteTransaction&)>& fn) {
  if (!fn)
    return Status(StatusCode::kInvalidArgument, "Update needs a function");
  // The user's function returns a public Status: converted on its way in.
  return ToPublic(
      impl_->Update([&](WriteTransaction& txn) { return ToAbsl(fn(txn)); }));
}

namespace internal {

absl::StatusOr<Database> StoreOpenDatabase(Store& store,
                                           std::string_view name) {
  return StoreAccess::Impl(store).OpenDatabase(name);
}

absl::StatusOr<ReadTransaction> StoreBeginRead(const Store& store) {
  return StoreAccess::Impl(store).BeginRead();
}

absl::Status StoreUpdate(
    Store& store, absl::FunctionRef<absl::Status(WriteTransaction&)> fn) {
  return StoreAccess::Impl(store).Update(fn);
}

}  // namespace internal

StatusOr<StoreInfo> Store::Info() const { return ToPublic(impl_->Info()); }

const std::string& Store::path() const { return impl_->path(); }
bool Store::read_only() const { return impl_->read_only(); }
int Store::stale_readers_cleared() const {
  return impl_->stale_readers_cleared();
}
uint64_t Store::LastCommittedTransactionId() const {
  return impl_->LastCommittedTransactionId();
}

}  // namespace ctxkit
