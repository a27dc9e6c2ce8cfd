// Storing entries: Put (content-addressed) and PutKeyed (under a lookup)
// share one path, which finds the entry a put stores again on the collision
// chain of its hash, refreshes or replaces it, or inserts a new entry,
// evicting for capacity first.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/model_registry.h"
#include "lib/base/field_check.h"
#include "lib/base/ids.h"
#include "lib/cache/cache_impl.h"
#include "lib/cache/cache_keys.h"
#include "lib/cache/cache_rows.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"
#include "lib/tokenizer/tokenizer_internal.h"

namespace ctxkit::internal {
namespace {

// Put's and PutKeyed's checks of their options.
absl::Status CheckPutOptions(const CachePutOptions& options) {
  CTXKIT_RETURN_IF_ERROR(CheckPrefix(options.prefix));
  CTXKIT_RETURN_IF_ERROR(
      CheckRange("ttl_ms", options.ttl_ms, 0, kCacheMaxTtlMs));
  CTXKIT_RETURN_IF_ERROR(
      CheckText("model", options.model, kCacheMaxModelBytes));
  if (!options.conversation_id.empty() && !IsUuid(options.conversation_id)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("conversation_id is not a lowercase UUID (%d bytes)",
                        options.conversation_id.size()));
  }
  return absl::OkStatus();
}

// The first collision index of a chain not in `used`; RESOURCE_EXHAUSTED
// naming `field` when all kMaxCollisions + 1 are taken.
absl::StatusOr<int> FreeIndex(const std::vector<bool>& used,
                              std::string_view field, std::string_view base) {
  int n = 0;
  while (n <= kMaxCollisions && used[static_cast<size_t>(n)]) ++n;
  if (n > kMaxCollisions) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: %d different entries already share the hash of key '%s'", field,
        kMaxCollisions + 1, base));
  }
  return n;
}

}  // namespace

absl::Status CacheImpl::PreparePut(WriteTransaction& txn, int64_t now,
                                   std::string_view conversation_id) {
  // Expired entries go first: they must neither be found nor count against
  // capacity.
  absl::StatusOr<uint64_t> swept = RemoveExpired(txn, now);
  if (!swept.ok()) return swept.status();
  if (conversation_id.empty()) return absl::OkStatus();
  absl::StatusOr<std::string_view> conv =
      internal::TxnGet(txn, dbs_.conversations, conversation_id);
  if (!conv.ok()) {
    if (conv.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrFormat(
          "conversation_id '%s' names no conversation", conversation_id));
    }
    return conv.status();
  }
  return absl::OkStatus();
}

absl::Status CacheImpl::RefreshEntry(WriteTransaction& txn,
                                     const std::string& key, int64_t now,
                                     int64_t expires, CachePutResult* result) {
  absl::StatusOr<std::string_view> value =
      internal::TxnGet(txn, dbs_.entries, key);
  CTXKIT_RETURN_IF_ERROR(value.status());
  absl::StatusOr<EntryMeta> meta = DecodeMeta(key, *value);
  if (!meta.ok()) return meta.status();
  if (meta->expires_at != 0) {
    CTXKIT_RETURN_IF_ERROR(
        Del(txn, dbs_.expiry, TimeIndexKey(meta->expires_at, key)));
  }
  if (expires != 0) {
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs_.expiry, TimeIndexKey(expires, key), std::string_view()));
  }
  if (now > meta->last_accessed) {
    CTXKIT_RETURN_IF_ERROR(
        Del(txn, dbs_.lru, TimeIndexKey(meta->last_accessed, key)));
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs_.lru, TimeIndexKey(now, key), std::string_view()));
    meta->last_accessed = now;
  }
  meta->expires_at = expires;
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs_.entries, key, EncodeMeta(*meta)));
  result->key = key;
  result->tokens = meta->tokens;
  result->created_at = meta->created_at;
  result->expires_at = expires;
  result->already_cached = true;
  return absl::OkStatus();
}

absl::Status CacheImpl::InsertEntry(WriteTransaction& txn, int64_t now,
                                    const std::string& key, const Hash128& hash,
                                    std::string_view content,
                                    std::optional<std::string_view> lookup,
                                    uint64_t tokens, int64_t expires,
                                    const CachePutOptions& options,
                                    CachePutResult* result) {
  const uint64_t size = content.size() + (lookup ? lookup->size() : 0);
  // Capacity: evict least recently accessed entries.
  absl::StatusOr<std::vector<uint64_t>> totals =
      ReadCounters(txn, dbs_.stats, kTotalsKey, kTotFieldCount);
  if (!totals.ok()) return totals.status();
  uint64_t entries = (*totals)[kTotEntries];
  uint64_t bytes = (*totals)[kTotSizeBytes];
  while ((options_.max_entries != 0 && entries + 1 > options_.max_entries) ||
         (options_.max_bytes != 0 && bytes + size > options_.max_bytes)) {
    std::string victim;
    {
      absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, dbs_.lru);
      CTXKIT_RETURN_IF_ERROR(cursor.status());
      cursor->SeekToFirst();
      if (!cursor->Valid()) {
        CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
        break;
      }
      victim = std::string(cursor->key().substr(8));
    }
    absl::StatusOr<std::string_view> value =
        internal::TxnGet(txn, dbs_.entries, victim);
    CTXKIT_RETURN_IF_ERROR(value.status());
    absl::StatusOr<EntryMeta> meta = DecodeMeta(victim, *value);
    if (!meta.ok()) return meta.status();
    CTXKIT_RETURN_IF_ERROR(
        RemoveEntry(dbs_, txn, victim, *meta, RemoveReason::kEvicted));
    entries -= 1;
    bytes -= meta->size_bytes;
  }
  totals = ReadCounters(txn, dbs_.stats, kTotalsKey, kTotFieldCount);
  if (!totals.ok()) return totals.status();

  EntryMeta meta;
  meta.serial = (*totals)[kTotNextSerial] + 1;
  meta.tokens = tokens;
  meta.created_at = now;
  meta.expires_at = expires;
  meta.last_accessed = now;
  meta.size_bytes = size;
  meta.model = options.model;
  meta.conversation_id = options.conversation_id;
  const bool content_inline = FitsInline(meta, content.size());
  if (content_inline) meta.inline_content.emplace(content);
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs_.entries, key, EncodeMeta(meta)));
  if (!content_inline) {
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs_.content, key, content));
  }
  if (lookup) {
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs_.lookup, key, EncodeLookupRow(meta.serial, *lookup)));
  } else if (dbs_.lookup.valid()) {
    // A row an older release left behind when it removed a keyed entry.
    CTXKIT_RETURN_IF_ERROR(Del(txn, dbs_.lookup, key));
  }
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs_.lru, TimeIndexKey(now, key),
                                          std::string_view()));
  if (expires != 0) {
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs_.expiry, TimeIndexKey(expires, key), std::string_view()));
  }
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
      txn, dbs_.hash, HashIndexKey(hash, key), std::string_view()));
  CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, dbs_.hits, HitsIndexKey(0, key),
                                          std::string_view()));
  if (!meta.conversation_id.empty()) {
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs_.conv, ConvIndexKey(meta.conversation_id, key),
        std::string_view()));
  }
  std::vector<uint64_t>& t = *totals;
  t[kTotEntries] += 1;
  t[kTotSizeBytes] += size;
  t[kTotTokens] += tokens;
  t[kTotZeroHitEntries] += 1;
  t[kTotNextSerial] = meta.serial;
  CTXKIT_RETURN_IF_ERROR(WriteCounters(txn, dbs_.stats, kTotalsKey, t));
  for (const std::string& gk :
       {PrefixStatsKey(options.prefix), ModelStatsKey(options.model)}) {
    std::vector<int64_t> d(kGrpFieldCount, 0);
    d[kGrpEntries] = 1;
    d[kGrpSizeBytes] = static_cast<int64_t>(size);
    d[kGrpTokens] = static_cast<int64_t>(tokens);
    CTXKIT_RETURN_IF_ERROR(ApplyDeltas(txn, dbs_.stats, gk, d));
  }
  result->key = key;
  result->tokens = tokens;
  result->created_at = now;
  result->expires_at = expires;
  return absl::OkStatus();
}

absl::StatusOr<CachePutResult> CacheImpl::Put(std::string_view content,
                                              const CachePutOptions& options) {
  CTXKIT_RETURN_IF_ERROR(CheckText("content", content, kCacheMaxContentBytes));
  CTXKIT_RETURN_IF_ERROR(CheckPutOptions(options));
  if (options_.max_bytes != 0 && content.size() > options_.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("content is %d bytes; the cache's max_bytes is %d",
                        content.size(), options_.max_bytes));
  }
  return PutEntry(content, std::nullopt, options);
}

absl::StatusOr<CachePutResult> CacheImpl::PutKeyed(
    std::string_view lookup, std::string_view value,
    const CachePutOptions& options) {
  CTXKIT_RETURN_IF_ERROR(CheckLookup(lookup));
  CTXKIT_RETURN_IF_ERROR(CheckText("value", value, kCacheMaxContentBytes));
  CTXKIT_RETURN_IF_ERROR(CheckPutOptions(options));
  if (options_.max_bytes != 0 &&
      value.size() + lookup.size() > options_.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "value and lookup are %d bytes; the cache's max_bytes is %d",
        value.size() + lookup.size(), options_.max_bytes));
  }
  return PutEntry(value, lookup, options);
}

absl::StatusOr<CachePutResult> CacheImpl::PutEntry(
    std::string_view content, std::optional<std::string_view> lookup,
    const CachePutOptions& options) {
  absl::StatusOr<TokenCount> count =
      RegistryCountTokens(ModelRegistry::Default(), options.model, content);
  CTXKIT_RETURN_IF_ERROR(count.status());
  const uint64_t tokens = count->tokens;
  const Hash128 hash = lookup ? KeyedHashOf(*lookup) : HashOf(content);
  const std::string base = KeyFor(options.prefix, hash, 0);

  CachePutResult result;
  absl::Status status =
      UpdateWithBatch([&](WriteTransaction& txn, int64_t now) -> absl::Status {
        result = CachePutResult{};
        const int64_t expires = options.ttl_ms == 0 ? 0 : now + options.ttl_ms;
        CTXKIT_RETURN_IF_ERROR(PreparePut(txn, now, options.conversation_id));

        // The entry this put stores again: a keyed put's is the one with its
        // lookup; a content put's is one with the same bytes that is not
        // keyed, since a keyed entry's value is PutKeyed's to replace and
        // must never be deduplicated into.
        std::vector<bool> used(kMaxCollisions + 1, false);
        std::optional<std::string> same_key;
        CTXKIT_RETURN_IF_ERROR(
            WalkChain(txn, dbs_.entries, base, &used, &same_key,
                      [&](std::string_view key) -> absl::StatusOr<bool> {
                        CTXKIT_ASSIGN_OR_RETURN(
                            MetaView meta, ReadView(txn, dbs_.entries, key));
                        if (!lookup) {
                          absl::StatusOr<std::string_view> stored =
                              ContentOf(txn, dbs_.content, key, meta);
                          CTXKIT_RETURN_IF_ERROR(stored.status());
                          if (*stored != content) return false;
                        }
                        absl::StatusOr<std::optional<std::string_view>> keyed =
                            KeyedLookupOf(txn, dbs_, key, meta.serial);
                        if (!keyed.ok()) return keyed.status();
                        if (!lookup) return !keyed->has_value();
                        return keyed->has_value() && **keyed == *lookup;
                      }));
        if (same_key && !lookup) {
          return RefreshEntry(txn, *same_key, now, expires, &result);
        }
        if (same_key) {
          CTXKIT_ASSIGN_OR_RETURN(MetaView current,
                                  ReadView(txn, dbs_.entries, *same_key));
          absl::StatusOr<std::string_view> stored =
              ContentOf(txn, dbs_.content, *same_key, current);
          CTXKIT_RETURN_IF_ERROR(stored.status());
          if (*stored == content) {
            return RefreshEntry(txn, *same_key, now, expires, &result);
          }
          // A new value for the lookup: a new entry under the same key (new
          // serial, hits from zero); hits of the old one stay in the lifetime
          // figures.
          absl::StatusOr<std::string_view> old =
              internal::TxnGet(txn, dbs_.entries, *same_key);
          CTXKIT_RETURN_IF_ERROR(old.status());
          absl::StatusOr<EntryMeta> meta = DecodeMeta(*same_key, *old);
          if (!meta.ok()) return meta.status();
          CTXKIT_RETURN_IF_ERROR(RemoveEntry(dbs_, txn, *same_key, *meta,
                                             RemoveReason::kExplicit));
          return InsertEntry(txn, now, *same_key, hash, content, lookup, tokens,
                             expires, options, &result);
        }
        absl::StatusOr<int> n =
            FreeIndex(used, lookup ? "lookup" : "content", base);
        if (!n.ok()) return n.status();
        return InsertEntry(txn, now, KeyFor(options.prefix, hash, *n), hash,
                           content, lookup, tokens, expires, options, &result);
      });
  if (!status.ok()) return status;
  return result;
}

}  // namespace ctxkit::internal
