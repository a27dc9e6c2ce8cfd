// `cache put|get|check|stats|clear|sweep`: the content-addressed cache
// (ctxkit::Cache). Every command prints the library's document for its
// result (cache.h, "JSON documents": the bytes the C ABI returns and
// smart_cache wraps) on one line; `cache clear` and `cache sweep`, which
// return a count, print record_json.h's and a two-member document.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ctxkit/cache.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/record_flags.h"
#include "programs/ctxkit/cli/store_location.h"
#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/tools/record_json.h"

namespace ctxkit::program {

const Flag kCachePrefixFlag{"--prefix", "PREFIX",
                            "1..64 bytes of [A-Za-z0-9._-] (default "
                            "\"default\")"};
const Flag kCacheCheckPrefixFlag{"--prefix", "PREFIX",
                                 "look under this prefix only (default: any)"};
const Flag kCacheClearPrefixFlag{"--prefix", "PREFIX",
                                 "remove only this prefix's entries"};
const Flag kCacheTtlFlag{
    .name = "--ttl",
    .value_name = "MS",
    .help = "expire after MS milliseconds (default 0: never)",
    .is_number = true,
    .library_range = true};
const Flag kCacheModelFlag{.name = "--model",
                           .value_name = "MODEL",
                           .help =
                               "the model whose tokenizer counts the "
                               "content (default claude-3-5-sonnet)",
                           .check = CheckModelFlag};
const Flag kCacheConversationFlag{
    "--conversation", "ID", "tie the entry to a conversation: deleted with it"};
const Flag kCacheTopFlag{
    .name = "--top",
    .value_name = "N",
    .help = "list at most N top entries, 0..1000 (default 10)",
    .is_number = true,
    .library_range = true};

namespace {

struct OpenedCache {
  std::unique_ptr<Store> store;
  std::unique_ptr<Cache> cache;  // destroyed first: it flushes into store
};

StatusOr<OpenedCache> OpenCache(const Args& args, StoreCreation creation) {
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location, creation);
  if (!store.ok()) return store.status();
  OpenedCache opened;
  opened.store = *std::move(store);
  auto cache = Cache::Open(*opened.store);
  if (!cache.ok()) return cache.status();
  opened.cache = *std::move(cache);
  return opened;
}

// Writes the cache's pending hit statistics before the process ends, so the
// command's error (not the destructor's silence) reports a failure.
Status Finish(OpenedCache& opened) { return opened.cache->Flush(); }

}  // namespace

Status RunCachePut(const Args& args, std::ostream& out) {
  CachePutOptions options;
  if (const std::string* prefix = args.Value(kCachePrefixFlag.name)) {
    options.prefix = *prefix;
  }
  auto ttl = NumberFlag(args, kCacheTtlFlag, "ttl_ms");
  if (!ttl.ok()) return ttl.status();
  if (ttl->has_value()) options.ttl_ms = **ttl;
  if (const std::string* model = args.Value(kCacheModelFlag.name)) {
    options.model = *model;
  }
  if (const std::string* id = args.Value(kCacheConversationFlag.name)) {
    options.conversation_id = *id;
  }
  auto content = ReadContent(args, 0, "content", kCacheMaxContentBytes);
  if (!content.ok()) return content.status();
  auto opened = OpenCache(args, StoreCreation::kIfMissing);
  if (!opened.ok()) return opened.status();
  auto put = opened->cache->Put(**content, options);
  if (!put.ok()) return put.status();
  if (Status flushed = Finish(*opened); !flushed.ok()) return flushed;
  return PrintDocument(CachePutResultToJson(*put), out);
}

Status RunCacheGet(const Args& args, std::ostream& out) {
  auto opened = OpenCache(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto entry = opened->cache->Get(args.positional()[0]);
  // A miss is counted too; keep it even when the lookup failed.
  Status flushed = Finish(*opened);
  if (!entry.ok()) return entry.status();
  if (!flushed.ok()) return flushed;
  return PrintDocument(CacheEntryToJson(*entry), out);
}

Status RunCacheCheck(const Args& args, std::ostream& out) {
  auto content = ReadContent(args, 0, "content", kCacheMaxContentBytes);
  if (!content.ok()) return content.status();
  std::optional<std::string_view> prefix;
  if (const std::string* given = args.Value(kCacheCheckPrefixFlag.name)) {
    prefix = *given;
  }
  auto opened = OpenCache(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto check = opened->cache->Check(**content, prefix);
  if (!check.ok()) return check.status();
  if (Status flushed = Finish(*opened); !flushed.ok()) return flushed;
  return PrintDocument(CacheCheckResultToJson(*check), out);
}

Status RunCacheStats(const Args& args, std::ostream& out) {
  auto top = NumberFlag(args, kCacheTopFlag, "top_n");
  if (!top.ok()) return top.status();
  auto opened = OpenCache(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto stats = opened->cache->Stats(top->value_or(10));
  if (!stats.ok()) return stats.status();
  return PrintDocument(CacheStatsToJson(*stats), out);
}

Status RunCacheClear(const Args& args, std::ostream& out) {
  std::optional<std::string_view> prefix;
  if (const std::string* given = args.Value(kCacheClearPrefixFlag.name)) {
    prefix = *given;
  }
  auto opened = OpenCache(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto cleared = opened->cache->Clear(prefix);
  if (!cleared.ok()) return cleared.status();
  out << CacheClearedJson(*cleared, prefix) << "\n";
  return Status::Ok();
}

Status RunCacheSweep(const Args& args, std::ostream& out) {
  auto opened = OpenCache(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto swept = opened->cache->Sweep();
  if (!swept.ok()) return swept.status();
  JsonOut json;
  json.BeginObject()
      .Key("schema_version")
      .Int(1)
      .Key("expired_removed")
      .Uint(*swept)
      .EndObject();
  out << json.str() << "\n";
  return Status::Ok();
}

}  // namespace ctxkit::program
