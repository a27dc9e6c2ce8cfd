#include "lib/cache/cache_check.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_format.h"
#include "lib/status/status_macros.h"
#include "lib/store/check_rows.h"
#include "lib/store/store_internal.h"

namespace ctxkit::internal {
namespace {

constexpr char kEntriesDb[] = "cache";
constexpr char kContentDb[] = "cache.content";
constexpr char kLookupDb[] = "cache.lookup";
constexpr char kStatsDb[] = "cache.stats";

// Conversation ids are UUIDs (Put checks them), so a "cache.conv" row is
// 36 bytes of id followed by the entry's key.
constexpr size_t kConversationIdBytes = 36;

absl::Status Mismatch(std::string_view db, std::string_view key,
                      std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("cache check: %s key %s: %s", db, key, what));
}

// A decoder's DATA_LOSS with the sub-database named (the decoders name the
// key but not where it lives); other errors as they are.
absl::Status InDb(std::string_view db, absl::Status s) {
  if (s.code() != absl::StatusCode::kDataLoss) return s;
  return absl::DataLossError(
      absl::StrFormat("cache check: %s: %s", db, s.message()));
}

// The live counters, recomputable from the entries: the totals' first six
// fields and a group's first five (cache_format.h), the first five of both
// alike, so one recount fills either.
static_assert(kTotEntries == 0 && kTotSizeBytes == 1 && kTotTokens == 2 &&
              kTotHits == 3 && kTotTokensSaved == 4 && kTotZeroHitEntries == 5);
static_assert(kGrpEntries == 0 && kGrpSizeBytes == 1 && kGrpTokens == 2 &&
              kGrpHits == 3 && kGrpTokensSaved == 4);
constexpr std::array<std::string_view, kTotZeroHitEntries + 1> kTotalsNames = {
    "entries", "size_bytes",   "tokens",
    "hits",    "tokens_saved", "zero_hit_entries"};
constexpr std::array<std::string_view, kGrpTokensSaved + 1> kGroupNames = {
    "entries", "size_bytes", "tokens", "hits", "tokens_saved"};

template <size_t N>
absl::Status CompareCounters(std::string_view key,
                             const std::vector<uint64_t>& stored,
                             const std::array<uint64_t, N>& recount,
                             const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i) {
    if (stored[i] != recount[i]) {
      return Mismatch(kStatsDb, QuotedKey(key),
                      absl::StrFormat("%s is %d; the entries give %d", names[i],
                                      stored[i], recount[i]));
    }
  }
  return absl::OkStatus();
}

// What an entry's index rows must carry.
struct Entry {
  EntryMeta meta;  // without its inline content, which only the size uses
  Hash128 hash{};
  bool keyed = false;
  bool content_inline = false;
};
using Entries = std::map<std::string, Entry, std::less<>>;

// One index: where the entry's key starts in a row, which entries have a
// row, the row an entry must have, and a row shown as its parts.
struct Index {
  const char* name;
  Database db;
  size_t head;
  bool (*has_row)(const Entry&);
  std::string (*row_of)(std::string_view key, const Entry&);
  std::string (*describe)(std::string_view row, size_t head);
};

bool Always(const Entry&) { return true; }

std::string DescribeTime(std::string_view row, size_t head) {
  return absl::StrFormat("%d + %s",
                         SignedFromOrdered(ReadBigEndian64(row.data())),
                         QuotedKey(row.substr(head)));
}
std::string DescribeCount(std::string_view row, size_t head) {
  return absl::StrFormat("%d + %s", ReadBigEndian64(row.data()),
                         QuotedKey(row.substr(head)));
}
std::string DescribeHead(std::string_view row, size_t head) {
  return absl::StrFormat("%s + %s", QuotedKey(row.substr(0, head)),
                         QuotedKey(row.substr(head)));
}
std::string DescribeHash(std::string_view row, size_t head) {
  return absl::StrFormat("%s + %s",
                         absl::BytesToHexString(AV(row.substr(0, head))),
                         QuotedKey(row.substr(head)));
}

std::vector<Index> IndexesOf(const CacheDbs& dbs) {
  // The length of each index's part before the entry's key, from its codec.
  const size_t time_head = TimeIndexKey(0, {}).size();
  const size_t hits_head = HitsIndexKey(0, {}).size();
  const size_t hash_head = HashIndexKey(Hash128{}, {}).size();
  return {
      {"cache.lru", dbs.lru, time_head, Always,
       [](std::string_view key, const Entry& e) {
         return TimeIndexKey(e.meta.last_accessed, key);
       },
       DescribeTime},
      {"cache.expiry", dbs.expiry, time_head,
       [](const Entry& e) { return e.meta.expires_at != 0; },
       [](std::string_view key, const Entry& e) {
         return TimeIndexKey(e.meta.expires_at, key);
       },
       DescribeTime},
      {"cache.hash", dbs.hash, hash_head, Always,
       [](std::string_view key, const Entry& e) {
         return HashIndexKey(e.hash, key);
       },
       DescribeHash},
      {"cache.conv", dbs.conv, kConversationIdBytes,
       [](const Entry& e) { return !e.meta.conversation_id.empty(); },
       [](std::string_view key, const Entry& e) {
         return ConvIndexKey(e.meta.conversation_id, key);
       },
       DescribeHead},
      {"cache.hits", dbs.hits, hits_head, Always,
       [](std::string_view key, const Entry& e) {
         return HitsIndexKey(e.meta.hit_count, key);
       },
       DescribeCount},
  };
}

// Every index row an entry must have is there; every row there is one an
// entry must have. Rows of different entries differ in their key part, so
// together the rows and the entries correspond one to one.
absl::Status CheckIndexes(const Transaction& txn, const CacheDbs& dbs,
                          const Entries& entries, CacheCheckSummary* seen) {
  for (const Index& index : IndexesOf(dbs)) {
    for (const auto& [key, entry] : entries) {
      if (!index.has_row(entry)) continue;
      const std::string row = index.row_of(key, entry);
      CTXKIT_ASSIGN_OR_RETURN(std::optional<std::string_view> found,
                              FindRow(txn, index.db, row));
      if (!found) {
        return Mismatch(index.name, index.describe(row, index.head),
                        absl::StrFormat("is missing; entry %s has that row",
                                        QuotedKey(key)));
      }
    }
    CTXKIT_RETURN_IF_ERROR(ForEachRow(
        txn, index.db,
        [&](std::string_view row, std::string_view) -> absl::Status {
          if (row.size() <= index.head) {
            return Mismatch(index.name, QuotedKey(row),
                            "is too short for a row");
          }
          const std::string_view key = row.substr(index.head);
          auto it = entries.find(key);
          if (it == entries.end()) {
            return Mismatch(index.name, index.describe(row, index.head),
                            "belongs to no entry");
          }
          if (!index.has_row(it->second) ||
              index.row_of(key, it->second) != row) {
            return Mismatch(
                index.name, index.describe(row, index.head),
                index.has_row(it->second)
                    ? absl::StrFormat(
                          "does not match its entry, whose row is %s",
                          index.describe(index.row_of(key, it->second),
                                         index.head))
                    : std::string("belongs to an entry that has no row here"));
          }
          ++seen->index_rows;
          return absl::OkStatus();
        }));
  }
  return absl::OkStatus();
}

// Content and lookup rows are keyed by the entry's key itself.
absl::Status CheckKeyedByEntry(const Transaction& txn, const CacheDbs& dbs,
                               const Entries& entries,
                               CacheCheckSummary* seen) {
  CTXKIT_RETURN_IF_ERROR(ForEachRow(
      txn, dbs.content,
      [&](std::string_view key, std::string_view) -> absl::Status {
        auto it = entries.find(key);
        if (it == entries.end()) {
          return Mismatch(kContentDb, QuotedKey(key), "belongs to no entry");
        }
        if (it->second.content_inline) {
          return Mismatch(kContentDb, QuotedKey(key),
                          "belongs to an entry whose record holds its "
                          "content");
        }
        return absl::OkStatus();
      }));
  if (!dbs.lookup.valid()) return absl::OkStatus();
  return ForEachRow(
      txn, dbs.lookup,
      [&](std::string_view key, std::string_view) -> absl::Status {
        // Serials start at 1, so serial 0 only checks the row's form.
        CTXKIT_RETURN_IF_ERROR(
            InDb(kLookupDb, KeyedLookupOf(txn, dbs, key, 0).status()));
        auto it = entries.find(key);
        if (it != entries.end() && it->second.keyed) {
          ++seen->index_rows;
        } else {
          ++seen->stale_lookup_rows;
        }
        return absl::OkStatus();
      });
}

}  // namespace

absl::Status CheckCacheTotals(const Transaction& txn, const CacheDbs& dbs,
                              CacheCheckSummary* summary) {
  CacheCheckSummary seen;
  Entries entries;
  std::map<uint64_t, std::string> serials;
  std::array<uint64_t, kTotalsNames.size()> totals{};
  std::map<std::string, std::array<uint64_t, kGroupNames.size()>> groups;

  CTXKIT_RETURN_IF_ERROR(ForEachRow(
      txn, dbs.entries,
      [&](std::string_view key, std::string_view value) -> absl::Status {
        std::string_view prefix;
        Entry e;
        if (!ParseKey(key, &prefix, &e.hash)) {
          return Mismatch(kEntriesDb, QuotedKey(key), "is not an entry key");
        }
        absl::StatusOr<EntryMeta> meta = DecodeMeta(key, value);
        CTXKIT_RETURN_IF_ERROR(InDb(kEntriesDb, meta.status()));
        e.meta = *std::move(meta);
        const EntryMeta& m = e.meta;
        if (auto [it, fresh] = serials.emplace(m.serial, std::string(key));
            !fresh) {
          return Mismatch(kEntriesDb, QuotedKey(key),
                          absl::StrFormat("has serial %d, as entry %s has",
                                          m.serial, QuotedKey(it->second)));
        }
        std::optional<std::string_view> content;
        if (m.inline_content) {
          content = *m.inline_content;
        } else {
          CTXKIT_ASSIGN_OR_RETURN(content, FindRow(txn, dbs.content, key));
          if (!content) {
            return Mismatch(kContentDb, QuotedKey(key),
                            "is missing; the entry is stored");
          }
        }
        absl::StatusOr<std::optional<std::string_view>> lookup =
            KeyedLookupOf(txn, dbs, key, m.serial);
        CTXKIT_RETURN_IF_ERROR(InDb(kLookupDb, lookup.status()));
        e.keyed = lookup->has_value();
        const uint64_t size =
            content->size() + (e.keyed ? (*lookup)->size() : 0);
        if (m.size_bytes != size) {
          return Mismatch(
              kEntriesDb, QuotedKey(key),
              absl::StrFormat("size_bytes is %d; its content%s %d",
                              m.size_bytes,
                              e.keyed ? " and lookup give" : " gives", size));
        }
        if (!m.conversation_id.empty()) {
          CTXKIT_ASSIGN_OR_RETURN(
              std::optional<std::string_view> conversation,
              FindRow(txn, dbs.conversations, m.conversation_id));
          if (!conversation) {
            return Mismatch(kEntriesDb, QuotedKey(key),
                            absl::StrFormat("names conversation %s, which is "
                                            "not stored",
                                            QuotedKey(m.conversation_id)));
          }
          ++seen.conversation_entries;
        }
        const uint64_t saved = m.hit_count * m.tokens;
        const std::array<uint64_t, kGroupNames.size()> live = {
            1, m.size_bytes, m.tokens, m.hit_count, saved};
        for (const std::string& group :
             {PrefixStatsKey(prefix), ModelStatsKey(m.model)}) {
          auto& g = groups[group];
          for (size_t i = 0; i < live.size(); ++i) g[i] += live[i];
        }
        for (size_t i = 0; i < live.size(); ++i) totals[i] += live[i];
        if (m.hit_count == 0) ++totals[kTotZeroHitEntries];
        ++seen.entries;
        if (e.keyed) ++seen.keyed_entries;
        e.content_inline = e.meta.inline_content.has_value();
        e.meta.inline_content.reset();
        if (m.expires_at != 0) ++seen.expiring_entries;
        entries.emplace(std::string(key), std::move(e));
        return absl::OkStatus();
      }));
  CTXKIT_RETURN_IF_ERROR(CheckKeyedByEntry(txn, dbs, entries, &seen));
  CTXKIT_RETURN_IF_ERROR(CheckIndexes(txn, dbs, entries, &seen));

  // Statistics. A group record stays while its lifetime counters are not
  // zero, so one the entries do not produce is compared with zeros.
  CTXKIT_RETURN_IF_ERROR(ForEachRow(
      txn, dbs.stats,
      [&](std::string_view key, std::string_view) -> absl::Status {
        ++seen.stats_records;
        if (key == kTotalsKey) return absl::OkStatus();  // checked below
        if (key[0] != 'p' && key[0] != 'm') {
          return Mismatch(kStatsDb, QuotedKey(key), "is not a statistics key");
        }
        absl::StatusOr<std::vector<uint64_t>> stored =
            ReadCounters(txn, dbs.stats, key, kGrpFieldCount);
        CTXKIT_RETURN_IF_ERROR(InDb(kStatsDb, stored.status()));
        auto it = groups.find(std::string(key));
        return CompareCounters(key, *stored,
                               it == groups.end()
                                   ? std::array<uint64_t, kGroupNames.size()>{}
                                   : it->second,
                               kGroupNames);
      }));
  for (const auto& [key, recount] : groups) {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<std::string_view> stored,
                            FindRow(txn, dbs.stats, key));
    if (!stored) {
      return Mismatch(kStatsDb, QuotedKey(key),
                      absl::StrFormat("is missing; %d entries belong to it",
                                      recount[kGrpEntries]));
    }
  }
  absl::StatusOr<std::vector<uint64_t>> stored_totals =
      ReadCounters(txn, dbs.stats, kTotalsKey, kTotFieldCount);
  CTXKIT_RETURN_IF_ERROR(InDb(kStatsDb, stored_totals.status()));
  CTXKIT_RETURN_IF_ERROR(
      CompareCounters(kTotalsKey, *stored_totals, totals, kTotalsNames));
  if (!serials.empty() &&
      (*stored_totals)[kTotNextSerial] < serials.rbegin()->first) {
    return Mismatch(kStatsDb, QuotedKey(kTotalsKey),
                    absl::StrFormat("the last serial handed out is %d; entry "
                                    "%s has serial %d",
                                    (*stored_totals)[kTotNextSerial],
                                    QuotedKey(serials.rbegin()->second),
                                    serials.rbegin()->first));
  }
  if (summary != nullptr) *summary = seen;
  return absl::OkStatus();
}

absl::Status CheckCacheTotals(Store& store, CacheCheckSummary* summary) {
  absl::StatusOr<CacheDbs> dbs = CacheDbs::Open(store);
  if (absl::IsNotFound(dbs.status()) && store.read_only()) {
    if (summary != nullptr) *summary = CacheCheckSummary{};
    return absl::OkStatus();
  }
  CTXKIT_RETURN_IF_ERROR(dbs.status());
  CTXKIT_ASSIGN_OR_RETURN(ReadTransaction txn, internal::StoreBeginRead(store));
  return CheckCacheTotals(txn, *dbs, summary);
}

}  // namespace ctxkit::internal
