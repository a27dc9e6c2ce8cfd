// Entry keys and their collision chains. An entry's key is
// "<prefix>:<32 hex digits of its hash>"; entries whose hashes collide take
// "-1" to "-99" after it, so that one chain sits together in key order.
//
// Thread safety: pure functions, or reads through the transaction given.

#ifndef CTXKIT_LIB_CACHE_CACHE_KEYS_H_
#define CTXKIT_LIB_CACHE_CACHE_KEYS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/store.h"
#include "lib/cache/cache_format.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {

// A chain holds its base and at most this many entries after it.
inline constexpr int kMaxCollisions = 99;

// INVALID_ARGUMENT unless `prefix` is 1 to kCacheMaxPrefixBytes bytes of
// [A-Za-z0-9._-].
absl::Status CheckPrefix(std::string_view prefix);

// INVALID_ARGUMENT unless `lookup` is 1 to kCacheMaxLookupBytes bytes. The
// message never echoes the lookup: it may be any bytes, and messages must
// stay valid UTF-8.
absl::Status CheckLookup(std::string_view lookup);

// The key of index `n` (0: the chain's base) of the chain of `hash`.
std::string KeyFor(std::string_view prefix, const Hash128& hash, int n);

// Walks the collision chain of `base` (base, base-1, ... base-99; contiguous
// in key order), marking every index in use in `used` (size
// kMaxCollisions + 1) and stopping at the first key for which `is_match(key)`
// says true, which goes to `*match`.
template <typename Fn>
absl::Status WalkChain(const Transaction& txn, Database entries,
                       const std::string& base, std::vector<bool>* used,
                       std::optional<std::string>* match, Fn&& is_match) {
  absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, entries);
  CTXKIT_RETURN_IF_ERROR(cursor.status());
  for (cursor->Seek(base); cursor->Valid() && cursor->key().starts_with(base);
       cursor->Next()) {
    std::string_view rest = cursor->key().substr(base.size());
    int n = 0;
    if (!rest.empty()) {
      if (rest.size() < 2 || rest[0] != '-') continue;
      for (char c : rest.substr(1)) n = n * 10 + (c - '0');
      if (n < 1 || n > kMaxCollisions) continue;
    }
    (*used)[static_cast<size_t>(n)] = true;
    absl::StatusOr<bool> matched = is_match(cursor->key());
    if (!matched.ok()) return matched.status();
    if (*matched) {
      *match = std::string(cursor->key());
      break;
    }
  }
  return internal::CursorStatus(*cursor);
}

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CACHE_CACHE_KEYS_H_
