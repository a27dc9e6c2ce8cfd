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

bool DecodeView(std::string_view v, MetaView* m) {
  constexpr size_t kFixed = 1 + 7 * 8;
  if (v.size() < kFixed + 2 || v[0] != 1) return false;
  const char* p = v.data() + 1;
  m->serial = ReadBigEndian64(p);
  m->tokens = ReadBigEndian64(p + 8);
  m->created_at = static_cast<int64_t>(ReadBigEndian64(p + 16));
  m->expires_at = static_cast<int64_t>(ReadBigEndian64(p + 24));
  m->hit_count = ReadBigEndian64(p + 32);
  m->last_accessed = static_cast<int64_t>(ReadBigEndian64(p + 40));
  m->size_bytes = ReadBigEndian64(p + 48);
  std::string_view rest = v.substr(kFixed);
  const size_t model_len = static_cast<unsigned char>(rest[0]);
  if (rest.size() < 2 + model_len) return false;
  m->model = rest.substr(1, model_len);
  rest.remove_prefix(1 + model_len);
  const size_t conv_len = static_cast<unsigned char>(rest[0]);
  if (rest.size() != 1 + conv_len) return false;
  m->conversation_id = rest.substr(1);
  return true;
}

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
