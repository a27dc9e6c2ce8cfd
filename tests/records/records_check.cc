#include "tests/records/records_check.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>

#include "lib/cache/cache_format.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/references/index_check.h"
#include "tests/unit/test_util.h"

namespace ctxkit::testing {

namespace {

std::vector<std::string> Split(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  std::string word;
  while (in >> word) out.push_back(word);
  return out;
}

std::string OrEmpty(const std::string& s) {
  return s == "-" ? std::string() : s;
}

}  // namespace

// ---- AckModel --------------------------------------------------------------

void AckModel::DeleteConversation(const std::string& id) {
  conversations.erase(id);
  deleted_conversations.insert(id);
  for (auto it = references.begin(); it != references.end();) {
    if (it->second.first == id) {
      deleted_references.insert(it->first);
      it = references.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = cache.begin(); it != cache.end();) {
    if (it->second == id) {
      deleted_cache.insert(it->first);
      it = cache.erase(it);
    } else {
      ++it;
    }
  }
}

void AckModel::DeleteReference(const std::string& id) {
  references.erase(id);
  deleted_references.insert(id);
}

bool AckModel::Apply(std::string_view line) {
  const std::vector<std::string> w = Split(line);
  if (w.empty()) return false;
  const std::string& op = w[0];
  if (op == "ready" || op == "done") return w.size() == 1;
  if (op == "B" && w.size() == 3 && (w[1] == "DC" || w[1] == "DR")) {
    pending_delete = w[1] + " " + w[2];
    return true;
  }
  ++acks;
  // A conversation acknowledged by a later write exists, even if its
  // creation was never acknowledged (the peer found it in the store).
  auto note_conversation = [&](const std::string& id) {
    if (!id.empty()) conversations[id];
  };
  if (op == "C" && w.size() == 2) {
    note_conversation(w[1]);
    return true;
  }
  if (op == "M" && w.size() == 5) {
    conversations[w[1]][w[2]] =
        AckedMessage{std::strtoull(w[3].c_str(), nullptr, 10),
                     std::strtoull(w[4].c_str(), nullptr, 10)};
    return true;
  }
  if (op == "R" && w.size() == 4) {
    note_conversation(OrEmpty(w[2]));
    references[w[1]] = {OrEmpty(w[2]), w[3]};
    return true;
  }
  if (op == "P" && w.size() == 3) {
    note_conversation(OrEmpty(w[2]));
    cache[w[1]] = OrEmpty(w[2]);
    return true;
  }
  if (op == "DC" && w.size() == 2) {
    pending_delete.clear();
    DeleteConversation(w[1]);
    return true;
  }
  if (op == "DR" && w.size() == 2) {
    pending_delete.clear();
    DeleteReference(w[1]);
    return true;
  }
  return false;
}

void AckModel::ResolvePending(ConversationStore& convs, ReferenceStore& refs) {
  if (pending_delete.empty()) return;
  const std::string id = pending_delete.substr(3);
  if (pending_delete.rfind("DC ", 0) == 0) {
    auto got = convs.Get(id, false);
    if (!got.ok()) {
      REQUIRE_MESSAGE(got.status().code() == StatusCode::kNotFound,
                      got.status().ToString());
      DeleteConversation(id);
    }
  } else {
    auto got = refs.Get(id);
    if (!got.ok()) {
      REQUIRE_MESSAGE(got.status().code() == StatusCode::kNotFound,
                      got.status().ToString());
      DeleteReference(id);
    }
  }
  pending_delete.clear();
}

// ---- The peer process ------------------------------------------------------

PeerProcess StartPeer(const std::vector<std::string>& args) {
  return StartProcess(CTXKIT_RECORDS_PEER, args);
}

// ---- Checks ----------------------------------------------------------------

void CheckAcknowledged(const AckModel& model, ConversationStore& convs,
                       ReferenceStore& refs, Cache& cache,
                       size_t search_samples) {
  // No structured bindings below: Clang 14 cannot capture them in the
  // lambdas doctest's macros expand to.
  for (const auto& conversation_entry : model.conversations) {
    const std::string& id = conversation_entry.first;
    const auto& messages = conversation_entry.second;
    auto detail = convs.Get(id, true);
    REQUIRE_MESSAGE(detail.ok(), "acknowledged conversation ", id, ": ",
                    detail.status().ToString());
    std::map<std::string, const Message*> stored;
    for (const Message& m : detail->messages) stored[m.id] = &m;
    for (const auto& message_entry : messages) {
      const std::string& message_id = message_entry.first;
      const AckModel::AckedMessage& acked = message_entry.second;
      auto it = stored.find(message_id);
      REQUIRE_MESSAGE(it != stored.end(), "acknowledged message ", message_id,
                      " of ", id, " is missing");
      CHECK(it->second->seq == acked.seq);
      CHECK(it->second->tokens == acked.tokens);
    }
  }
  for (const std::string& id : model.deleted_conversations) {
    auto got = convs.Get(id, false);
    CHECK_MESSAGE(got.status().code() == StatusCode::kNotFound,
                  "deleted conversation ", id, ": ", got.status().ToString());
  }
  for (const auto& reference_entry : model.references) {
    const std::string& id = reference_entry.first;
    const auto& ref = reference_entry.second;
    auto got = refs.Get(id);
    REQUIRE_MESSAGE(got.ok(), "acknowledged reference ", id, ": ",
                    got.status().ToString());
    CHECK(got->conversation_id == ref.first);
    CHECK(got->title.find(ref.second) != std::string::npos);
  }
  for (const std::string& id : model.deleted_references) {
    auto got = refs.Get(id);
    CHECK_MESSAGE(got.status().code() == StatusCode::kNotFound,
                  "deleted reference ", id, ": ", got.status().ToString());
  }
  // Search for the unique terms of some references: exactly that one.
  size_t sampled = 0;
  for (auto it = model.references.rbegin();
       it != model.references.rend() && sampled < search_samples;
       ++it, ++sampled) {
    SearchReferencesOptions query;
    query.query = it->second.second;
    auto found = refs.Search(query);
    REQUIRE_MESSAGE(found.ok(), found.status().ToString());
    CHECK(found->total_matches == 1);
    REQUIRE(found->results.size() == 1);
    CHECK(found->results[0].id == it->first);
  }
  for (const auto& cache_entry : model.cache) {
    const std::string& key = cache_entry.first;
    const std::string& conversation = cache_entry.second;
    auto got = cache.Get(key);
    REQUIRE_MESSAGE(got.ok(), "acknowledged cache entry ", key, ": ",
                    got.status().ToString());
    CHECK(got->conversation_id == conversation);
  }
  for (const std::string& key : model.deleted_cache) {
    auto got = cache.Get(key);
    CHECK_MESSAGE(got.status().code() == StatusCode::kNotFound, "cache entry ",
                  key, " of a deleted conversation: ", got.status().ToString());
  }
}

namespace {

uint64_t Entries(Store& store, std::string_view db) {
  auto info = Must(store.Info());
  for (const DatabaseInfo& d : info.databases) {
    if (d.name == db) return d.entries;
  }
  return 0;
}

}  // namespace

void CheckConversationTotals(Store& store, ConversationStore& convs) {
  // The statistics first: the listing below may take a while and, in the
  // concurrency test, others may be writing -- so this check is for a quiet
  // store and the caller makes sure it is.
  const AggregateStats stats = Must(convs.AggregateStats());
  uint64_t conversations = 0, messages = 0, compressed = 0,
           compressed_tokens = 0;
  uint64_t role[4] = {};
  std::map<std::string, ModelUsage> models;
  std::map<int64_t, DailyUsage> days;
  std::string cursor;
  do {
    ConversationPage page =
        Must(convs.List(ConversationLimits::kMaxListLimit, cursor));
    for (const Conversation& listed : page.conversations) {
      ConversationDetail d = Must(convs.Get(listed.id, true));
      const Conversation& c = d.conversation;
      ++conversations;
      ModelUsage& mu = models[c.model];
      ++mu.conversations;
      uint64_t r[4] = {}, comp = 0, comp_tokens = 0;
      for (const Message& m : d.messages) {
        r[static_cast<int>(m.role)] += m.tokens;
        if (m.is_compressed) {
          ++comp;
          comp_tokens += m.tokens;
        }
        const bool output = m.role == MessageRole::kAssistant;
        ++mu.messages;
        (output ? mu.output_tokens : mu.input_tokens) += m.tokens;
        DailyUsage& du = days[internal::DayOfMillis(m.created_at)];
        ++du.messages;
        (output ? du.output_tokens : du.input_tokens) += m.tokens;
      }
      INFO("conversation ", c.id);
      CHECK(c.message_count == d.messages.size());
      CHECK(c.user_tokens == r[0]);
      CHECK(c.assistant_tokens == r[1]);
      CHECK(c.system_tokens == r[2]);
      CHECK(c.tool_tokens == r[3]);
      CHECK(c.total_tokens == r[0] + r[1] + r[2] + r[3]);
      CHECK(c.compressed_count == comp);
      CHECK(c.compressed_tokens == comp_tokens);
      messages += d.messages.size();
      compressed += comp;
      compressed_tokens += comp_tokens;
      for (int i = 0; i < 4; ++i) role[i] += r[i];
    }
    cursor = page.next_cursor;
  } while (!cursor.empty());

  CHECK(stats.conversations == conversations);
  CHECK(stats.messages == messages);
  CHECK(stats.user_tokens == role[0]);
  CHECK(stats.assistant_tokens == role[1]);
  CHECK(stats.system_tokens == role[2]);
  CHECK(stats.tool_tokens == role[3]);
  CHECK(stats.total_tokens == role[0] + role[1] + role[2] + role[3]);
  CHECK(stats.compressed_messages == compressed);
  CHECK(stats.compressed_tokens == compressed_tokens);
  CHECK(stats.by_model.size() == models.size());
  for (const ModelUsage& m : stats.by_model) {
    const ModelUsage& e = models[m.model];
    CHECK(m.conversations == e.conversations);
    CHECK(m.messages == e.messages);
    CHECK(m.input_tokens == e.input_tokens);
    CHECK(m.output_tokens == e.output_tokens);
  }
  CHECK(stats.days.size() == days.size());
  for (const DailyUsage& d : stats.days) {
    const DailyUsage& e = days[d.day];
    CHECK(d.messages == e.messages);
    CHECK(d.input_tokens == e.input_tokens);
    CHECK(d.output_tokens == e.output_tokens);
  }
  CHECK(Entries(store, "conversations") == conversations);
  CHECK(Entries(store, "conversations.by_created") == conversations);
  CHECK(Entries(store, "conversations.messages") == messages);
  CHECK(Entries(store, "conversations.message_ids") == messages);
}

void CheckReferenceIndexAndLinks(Store& store, ReferenceStore& refs) {
  internal::IndexCheckSummary summary;
  const absl::Status index = internal::CheckReferenceIndex(store, &summary);
  REQUIRE_MESSAGE(index.ok(), index.ToString());
  const ReferenceList list = Must(refs.List());
  CHECK(list.references.size() == summary.references);
  CHECK(list.stats.total_references == list.references.size());
  uint64_t tokens = 0;
  std::map<std::string, uint64_t> by_type;
  auto conversations = Must(store.OpenDatabase("conversations"));
  auto txn = Must(store.BeginRead());
  for (const Reference& r : list.references) {
    tokens += r.tokens;
    ++by_type[r.type];
    if (!r.conversation_id.empty()) {
      CHECK_MESSAGE(txn.Get(conversations, r.conversation_id).ok(),
                    "reference ", r.id, " names conversation ",
                    r.conversation_id, ", which does not exist");
    }
  }
  CHECK(list.stats.total_tokens == tokens);
  CHECK(list.stats.by_type == by_type);
}

void CheckCacheTotals(Store& store, Cache& cache) {
  const CacheStats stats = Must(cache.Stats(1000));
  auto dbs = internal::CacheDbs::Open(store);
  REQUIRE_MESSAGE(dbs.ok(), dbs.status().ToString());
  auto txn = Must(store.BeginRead());
  uint64_t entries = 0, bytes = 0, tokens = 0, hits = 0, saved = 0, zero = 0,
           expiring = 0, with_conversation = 0, content_rows = 0;
  std::map<std::string, CachePrefixStats> prefixes;
  auto cursor = Must(txn.NewCursor(dbs->entries));
  for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
    auto meta = internal::DecodeMeta(cursor.key(), cursor.value());
    REQUIRE_MESSAGE(meta.ok(), meta.status().ToString());
    ++entries;
    bytes += meta->size_bytes;
    tokens += meta->tokens;
    hits += meta->hit_count;
    saved += meta->hit_count * meta->tokens;
    if (meta->hit_count == 0) ++zero;
    if (meta->expires_at != 0) ++expiring;
    if (!meta->conversation_id.empty()) {
      ++with_conversation;
      CHECK_MESSAGE(txn.Get(dbs->conversations, meta->conversation_id).ok(),
                    "cache entry ", std::string(cursor.key()),
                    " names a conversation that does not exist");
    }
    // Small content is in the record; larger content in cache.content.
    if (meta->inline_content) {
      CHECK(meta->inline_content->size() == meta->size_bytes);
    } else {
      ++content_rows;
      auto content = txn.Get(dbs->content, cursor.key());
      REQUIRE_MESSAGE(content.ok(), content.status().ToString());
      CHECK(content->size() == meta->size_bytes);
    }
    const std::string key(cursor.key());
    CachePrefixStats& p = prefixes[key.substr(0, key.find(':'))];
    ++p.entries;
    p.hits += meta->hit_count;
    p.tokens_saved += meta->hit_count * meta->tokens;
    p.size_bytes += meta->size_bytes;
  }
  REQUIRE(cursor.status().ok());
  CHECK(stats.total_entries == entries);
  CHECK(stats.size_bytes == bytes);
  CHECK(stats.total_tokens == tokens);
  CHECK(stats.total_hits == hits);
  CHECK(stats.tokens_saved == saved);
  CHECK(stats.zero_hit_entries == zero);
  CHECK(Must(txn.Count(dbs->content)) == content_rows);
  CHECK(Must(txn.Count(dbs->lru)) == entries);
  CHECK(Must(txn.Count(dbs->hash)) == entries);
  CHECK(Must(txn.Count(dbs->hits)) == entries);
  CHECK(Must(txn.Count(dbs->expiry)) == expiring);
  CHECK(Must(txn.Count(dbs->conv)) == with_conversation);
  CHECK(stats.by_prefix.size() == prefixes.size());
  for (const CachePrefixStats& p : stats.by_prefix) {
    const CachePrefixStats& r = prefixes[p.prefix];
    CHECK(p.entries == r.entries);
    CHECK(p.hits == r.hits);
    CHECK(p.tokens_saved == r.tokens_saved);
    CHECK(p.size_bytes == r.size_bytes);
  }
}

}  // namespace ctxkit::testing
