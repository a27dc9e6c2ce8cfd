// Cache: opening (the flusher thread), the content hashes, and the public
// calls, which hand over to CacheImpl. The operations are in
// cache_put.cc, cache_get.cc, cache_hits.cc, cache_removal.cc and
// cache_stats.cc.

#include "ctxkit/cache.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/clock.h"
#include "lib/base/field_check.h"
#include "lib/cache/cache_impl.h"
#include "lib/cache/cache_internal.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"

namespace ctxkit::internal {
namespace {

// XORed into the hash of a keyed entry's lookup, so that a lookup and a
// content with the same bytes land on different collision chains. Any
// constant works; this one is "ctxkit.keyed.v1\n" in ASCII.
constexpr Hash128 kKeyedHashMask = {0x63, 0x74, 0x78, 0x6b, 0x69, 0x74,
                                    0x2e, 0x6b, 0x65, 0x79, 0x65, 0x64,
                                    0x2e, 0x76, 0x31, 0x0a};

}  // namespace

CacheImpl::CacheImpl(Store& store, CacheOptions options, CacheDbs dbs)
    : store_(store), options_(std::move(options)), dbs_(dbs) {}

absl::StatusOr<std::unique_ptr<CacheImpl>> CacheImpl::Open(
    Store& store, CacheOptions options) {
  CTXKIT_RETURN_IF_ERROR(
      CheckRange("max_entries",
                 static_cast<int64_t>(std::min<uint64_t>(options.max_entries,
                                                         uint64_t{1} << 62)),
                 0, int64_t{1} << 40));
  CTXKIT_RETURN_IF_ERROR(CheckRange("max_bytes",
                                    static_cast<int64_t>(std::min<uint64_t>(
                                        options.max_bytes, uint64_t{1} << 62)),
                                    0, int64_t{1} << 50));
  CTXKIT_RETURN_IF_ERROR(
      CheckRange("flush_interval_ms", options.flush_interval_ms, 1, 60000));
  CTXKIT_RETURN_IF_ERROR(
      CheckRange("flush_max_pending", options.flush_max_pending, 1, 1000000));
  absl::StatusOr<CacheDbs> dbs = CacheDbs::Open(store);
  if (!dbs.ok()) return dbs.status();
  std::unique_ptr<CacheImpl> impl(
      new CacheImpl(store, std::move(options), *dbs));
  if (!store.read_only()) {
    impl->flusher_ = std::thread([p = impl.get()] { p->FlusherLoop(); });
  }
  return impl;
}

CacheImpl::~CacheImpl() {
  {
    std::lock_guard lock(flusher_mu_);
    stop_ = true;
  }
  flusher_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (!store_.read_only()) (void)Flush();
}

Hash128 CacheImpl::HashOf(std::string_view content) const {
  if (hash_fn_) return hash_fn_(content);
  const XXH128_hash_t h = XXH3_128bits(content.data(), content.size());
  Hash128 out;
  for (int i = 0; i < 8; ++i) {
    out[static_cast<size_t>(i)] =
        static_cast<uint8_t>(h.high64 >> (56 - 8 * i));
    out[static_cast<size_t>(8 + i)] =
        static_cast<uint8_t>(h.low64 >> (56 - 8 * i));
  }
  return out;
}

Hash128 CacheImpl::KeyedHashOf(std::string_view lookup) const {
  Hash128 hash = HashOf(lookup);
  for (size_t i = 0; i < hash.size(); ++i) hash[i] ^= kKeyedHashMask[i];
  return hash;
}

int64_t CacheImpl::Now() const { return NowMillis(options_.clock); }

absl::StatusOr<CachePutResult> CachePutKeyed(Cache& cache,
                                             std::string_view lookup,
                                             std::string_view value,
                                             const CachePutOptions& options) {
  return CacheAccess::Impl(cache).PutKeyed(lookup, value, options);
}

absl::StatusOr<CacheEntry> CacheGetKeyed(Cache& cache, std::string_view lookup,
                                         std::string_view prefix) {
  return CacheAccess::Impl(cache).GetKeyed(lookup, prefix);
}

}  // namespace ctxkit::internal

namespace ctxkit {

using internal::ToPublic;

StatusOr<std::unique_ptr<Cache>> Cache::Open(Store& store,
                                             CacheOptions options) {
  absl::StatusOr<std::unique_ptr<internal::CacheImpl>> impl =
      internal::CacheImpl::Open(store, std::move(options));
  if (!impl.ok()) return ToPublic(impl.status());
  return std::unique_ptr<Cache>(new Cache(std::move(*impl)));
}

Cache::Cache(std::unique_ptr<internal::CacheImpl> impl)
    : impl_(std::move(impl)) {}
Cache::~Cache() = default;

StatusOr<CachePutResult> Cache::Put(std::string_view content,
                                    const CachePutOptions& options) {
  return ToPublic(impl_->Put(content, options));
}
StatusOr<CacheEntry> Cache::Get(std::string_view key) {
  return ToPublic(impl_->Get(key));
}
StatusOr<CachePutResult> Cache::PutKeyed(std::string_view lookup,
                                         std::string_view value,
                                         const CachePutOptions& options) {
  return ToPublic(internal::CachePutKeyed(*this, lookup, value, options));
}
StatusOr<CacheEntry> Cache::GetKeyed(std::string_view lookup,
                                     std::string_view prefix) {
  return ToPublic(internal::CacheGetKeyed(*this, lookup, prefix));
}
StatusOr<CacheCheckResult> Cache::Check(
    std::string_view content, std::optional<std::string_view> prefix) {
  return ToPublic(impl_->Check(content, prefix));
}
StatusOr<uint64_t> Cache::Clear(std::optional<std::string_view> prefix) {
  return ToPublic(impl_->Clear(prefix));
}
StatusOr<uint64_t> Cache::Sweep() { return ToPublic(impl_->Sweep()); }
Status Cache::Flush() { return ToPublic(impl_->Flush()); }
StatusOr<CacheStats> Cache::Stats(int64_t top_n) {
  return ToPublic(impl_->Stats(top_n));
}

}  // namespace ctxkit
