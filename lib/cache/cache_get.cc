// Reading entries: Get by key, GetKeyed by lookup, and Check by content.
// Reads never write: their hits and misses go to the pending batch
// (cache_hits.cc).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/base/field_check.h"
#include "lib/cache/cache_impl.h"
#include "lib/cache/cache_keys.h"
#include "lib/cache/cache_rows.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {

absl::StatusOr<CacheEntry> CacheImpl::GetKeyed(std::string_view lookup,
                                               std::string_view prefix) {
  CTXKIT_RETURN_IF_ERROR(CheckLookup(lookup));
  CTXKIT_RETURN_IF_ERROR(CheckPrefix(prefix));
  const std::string base = KeyFor(prefix, KeyedHashOf(lookup), 0);
  const int64_t now = Now();
  std::string expired_key;
  {
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    std::vector<bool> used(kMaxCollisions + 1, false);
    std::optional<std::string> key;
    MetaView meta{};
    CTXKIT_RETURN_IF_ERROR(WalkChain(
        *txn, dbs_.entries, base, &used, &key,
        [&](std::string_view k) -> absl::StatusOr<bool> {
          CTXKIT_ASSIGN_OR_RETURN(meta, ReadView(*txn, dbs_.entries, k));
          absl::StatusOr<std::optional<std::string_view>> keyed =
              KeyedLookupOf(*txn, dbs_, k, meta.serial);
          if (!keyed.ok()) return keyed.status();
          return keyed->has_value() && **keyed == lookup;
        }));
    if (key) {
      // One entry per lookup and prefix: PutKeyed replaces, never adds.
      if (Expired(meta.expires_at, now)) {
        expired_key = *key;
      } else {
        absl::StatusOr<std::string_view> content =
            ContentOf(*txn, dbs_.content, *key, meta);
        CTXKIT_RETURN_IF_ERROR(content.status());
        CacheEntry entry;
        entry.key = *key;
        entry.content.assign(content->data(), content->size());
        entry.model.assign(meta.model.data(), meta.model.size());
        entry.conversation_id.assign(meta.conversation_id.data(),
                                     meta.conversation_id.size());
        entry.tokens = meta.tokens;
        entry.hit_count = RecordHit(*key, meta.serial, meta.tokens, meta.model,
                                    now, txn->snapshot_id(), meta.hit_count);
        entry.created_at = meta.created_at;
        entry.last_accessed = std::max(now, meta.last_accessed);
        entry.expires_at = meta.expires_at;
        return entry;
      }
    }
  }
  RecordMiss(expired_key);
  return absl::NotFoundError(
      expired_key.empty()
          ? absl::StrFormat("lookup is not in the cache under prefix '%s'",
                            prefix)
          : absl::StrFormat("lookup under prefix '%s' has expired (key '%s')",
                            prefix, expired_key));
}

absl::StatusOr<CacheEntry> CacheImpl::Get(std::string_view key) {
  const auto malformed = [&] {
    // The key is not echoed: it may be any bytes, and messages must stay
    // valid UTF-8.
    return absl::InvalidArgumentError(absl::StrFormat(
        "key is malformed (%d bytes); expected <prefix>:<32 lowercase hex "
        "digits>, optionally followed by -<1..99>",
        key.size()));
  };
  // The full check of the key's form waits for a miss: only well-formed
  // keys are ever stored, so a key that is found is one, and parsing it
  // first cost a hit as much as its statistics.
  if (key.empty() || key.size() > 200) return malformed();
  const int64_t now = Now();
  bool expired = false;
  {
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    absl::StatusOr<MetaView> meta = ReadView(*txn, dbs_.entries, key);
    if (!meta.ok()) {
      if (meta.status().code() != absl::StatusCode::kNotFound) {
        return meta.status();
      }
      std::string_view prefix;
      Hash128 hash{};
      if (!ParseKey(key, &prefix, &hash)) return malformed();
    } else if (Expired(meta->expires_at, now)) {
      expired = true;
    } else {
      absl::StatusOr<std::string_view> content =
          ContentOf(*txn, dbs_.content, key, *meta);
      CTXKIT_RETURN_IF_ERROR(content.status());
      CacheEntry entry;
      entry.key.assign(key.data(), key.size());
      entry.content.assign(content->data(), content->size());
      entry.model.assign(meta->model.data(), meta->model.size());
      entry.conversation_id.assign(meta->conversation_id.data(),
                                   meta->conversation_id.size());
      entry.tokens = meta->tokens;
      entry.hit_count = RecordHit(key, meta->serial, meta->tokens, meta->model,
                                  now, txn->snapshot_id(), meta->hit_count);
      entry.created_at = meta->created_at;
      entry.last_accessed = std::max(now, meta->last_accessed);
      entry.expires_at = meta->expires_at;
      return entry;
    }
  }
  RecordMiss(expired ? key : std::string_view());
  return absl::NotFoundError(
      expired ? absl::StrFormat("key '%s' has expired", key)
              : absl::StrFormat("key '%s' is not in the cache", key));
}

absl::StatusOr<CacheCheckResult> CacheImpl::Check(
    std::string_view content, std::optional<std::string_view> prefix) {
  CTXKIT_RETURN_IF_ERROR(CheckText("content", content, kCacheMaxContentBytes));
  if (prefix) CTXKIT_RETURN_IF_ERROR(CheckPrefix(*prefix));
  const Hash128 hash = HashOf(content);
  const int64_t now = Now();
  std::string expired_key;
  {
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(store_);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(*txn, dbs_.hash);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    const std::string_view hash_bytes(
        reinterpret_cast<const char*>(hash.data()), hash.size());
    for (cursor->Seek(hash_bytes);
         cursor->Valid() && cursor->key().starts_with(hash_bytes);
         cursor->Next()) {
      const std::string_view key = cursor->key().substr(hash.size());
      if (prefix && !(key.size() > prefix->size() && key.starts_with(*prefix) &&
                      key[prefix->size()] == ':')) {
        continue;
      }
      CTXKIT_ASSIGN_OR_RETURN(MetaView meta, ReadView(*txn, dbs_.entries, key));
      absl::StatusOr<std::string_view> stored =
          ContentOf(*txn, dbs_.content, key, meta);
      CTXKIT_RETURN_IF_ERROR(stored.status());
      if (*stored != content) continue;  // a hash collision
      // A keyed entry whose value has these bytes is not "this content
      // stored": PutKeyed may replace its value.
      absl::StatusOr<std::optional<std::string_view>> keyed =
          KeyedLookupOf(*txn, dbs_, key, meta.serial);
      if (!keyed.ok()) return keyed.status();
      if (keyed->has_value()) continue;
      if (Expired(meta.expires_at, now)) {
        if (expired_key.empty()) expired_key = std::string(key);
        continue;
      }
      CacheCheckResult result;
      result.exists = true;
      result.key = std::string(key);
      result.tokens_saved = meta.tokens;
      RecordHit(key, meta.serial, meta.tokens, meta.model, now,
                txn->snapshot_id(), meta.hit_count);
      return result;
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
  }
  RecordMiss(expired_key);
  return CacheCheckResult{};
}

}  // namespace ctxkit::internal
