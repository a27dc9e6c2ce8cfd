// Concurrency: 8 threads mix reads and writes over the conversations,
// references and cache parts of one Store while a second process
// (records_peer write) writes the same store. Readers check that every
// snapshot they see is whole; at the end nothing acknowledged is lost and
// every total equals a recount. Run under TSan by the thread-sanitizer build
// (-DCTXKIT_SANITIZE=thread).
//
// CTXKIT_CONCURRENCY_OPS sets the operations per thread (default 150; the
// peer runs twice as many).

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "ctxkit/store.h"
#include "tests/records/records_check.h"
#include "tests/records/records_protocol.h"
#include "tests/unit/test_util.h"

namespace ctxkit::testing {
namespace {

constexpr int kThreads = 8;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// What the workers share. Failures are collected here and reported by the
// test's thread, so no assertion runs on a worker.
struct Shared {
  Store* store = nullptr;
  ConversationStore* convs = nullptr;
  ReferenceStore* refs = nullptr;
  Cache* cache = nullptr;
  std::mutex mu;
  std::vector<std::string> failures;
  std::atomic<uint64_t> reads{0};

  void Fail(std::string what) {
    std::lock_guard<std::mutex> lock(mu);
    if (failures.size() < 20) failures.push_back(std::move(what));
  }
};

// One worker: writes only records it created itself (so its
// acknowledgements stay true whatever the others do), reads everything.
class Worker {
 public:
  Worker(Shared& shared, int index, uint64_t seed)
      : s_(shared), index_(index), rng_(seed) {}

  void Run(uint64_t ops) {
    for (uint64_t i = 0; i < ops; ++i) Step();
  }

  // Acknowledgements in records_protocol.h's format.
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  uint32_t Uniform(uint32_t n) {
    return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_);
  }
  std::string Words(int n) {
    std::string out;
    for (int i = 0; i < n; ++i) {
      if (i > 0) out += ' ';
      out += kRecordWords[Uniform(std::size(kRecordWords))];
    }
    return out;
  }
  std::string Unique() {
    return absl::StrFormat("thr%dn%d", index_, ++counter_);
  }
  template <typename T>
  bool Ok(const StatusOr<T>& v, const char* what) {
    if (v.ok()) return true;
    s_.Fail(absl::StrFormat("thread %d: %s: %s", index_, what,
                            v.status().ToString()));
    return false;
  }

  void Step() {
    const uint32_t r = Uniform(100);
    if (r < 10 || own_conversations_.empty()) return Create();
    if (r < 25) return AddMessages();
    if (r < 35) return AddReference();
    if (r < 45) return PutCache();
    if (r < 52) return GetCache();
    if (r < 58) return ReadConversation();
    if (r < 64) return ListConversations();
    if (r < 72) return SearchReferences();
    if (r < 78) return ReadStatistics();
    if (r < 81) return CacheStatistics();
    if (r < 85) return SetCompressed();
    if (r < 90) return DeleteReference();
    if (r < 93) return DeleteConversation();
    return CheckCache();
  }

  const std::string& OwnConversation() {
    return own_conversations_[Uniform(
        static_cast<uint32_t>(own_conversations_.size()))];
  }

  void Create() {
    NewConversation c;
    c.title = "thread conversation " + Words(2);
    c.model = std::string(kRecordsModel);
    auto created = s_.convs->Create(c);
    if (!Ok(created, "Create")) return;
    own_conversations_.push_back(created->id);
    lines_.push_back("C " + created->id);
  }

  void AddMessages() {
    std::vector<NewMessage> batch(1 + Uniform(4));
    for (NewMessage& m : batch) {
      m.role = static_cast<MessageRole>(Uniform(3));
      m.content = Words(5 + static_cast<int>(Uniform(30)));
    }
    auto added = s_.convs->AddMessages(OwnConversation(), batch);
    if (!Ok(added, "AddMessages")) return;
    for (const Message& m : added->messages) {
      lines_.push_back(absl::StrFormat("M %s %s %d %d", m.conversation_id, m.id,
                                       m.seq, m.tokens));
    }
  }

  void AddReference() {
    NewReference r;
    if (Uniform(3) != 0) r.conversation_id = OwnConversation();
    r.type = std::string(kReferenceTypes[Uniform(5)]);
    const std::string unique = Unique();
    r.title = Words(2) + " " + unique;
    r.content = Words(10 + static_cast<int>(Uniform(50)));
    auto added = s_.refs->Add(r);
    if (!Ok(added, "ReferenceStore::Add")) return;
    own_references_.push_back(added->id);
    lines_.push_back(absl::StrFormat(
        "R %s %s %s", added->id,
        r.conversation_id.empty() ? "-" : r.conversation_id, unique));
  }

  void PutCache() {
    CachePutOptions options;
    options.prefix = Uniform(2) == 0 ? "prompts" : "results";
    options.model = std::string(kRecordsModel);
    if (Uniform(2) == 0) options.conversation_id = OwnConversation();
    std::string content =
        Unique() + " " + Words(20 + static_cast<int>(Uniform(60)));
    auto put = s_.cache->Put(content, options);
    if (!Ok(put, "Cache::Put")) return;
    own_cache_.push_back({put->key, std::move(content)});
    lines_.push_back(absl::StrFormat(
        "P %s %s", put->key,
        options.conversation_id.empty() ? "-" : options.conversation_id));
  }

  void GetCache() {
    if (own_cache_.empty()) return PutCache();
    const auto& [key, content] =
        own_cache_[Uniform(static_cast<uint32_t>(own_cache_.size()))];
    auto got = s_.cache->Get(key);
    s_.reads++;
    // Gone with its conversation is the one allowed absence.
    if (!got.ok()) {
      if (got.status().code() != StatusCode::kNotFound) Ok(got, "Cache::Get");
      return;
    }
    if (got->content != content) {
      s_.Fail(absl::StrFormat(
          "thread %d: Cache::Get(%s) returned other content", index_, key));
    }
  }

  void CheckCache() {
    if (own_cache_.empty()) return PutCache();
    const auto& entry =
        own_cache_[Uniform(static_cast<uint32_t>(own_cache_.size()))];
    auto seen = s_.cache->Check(entry.second);
    s_.reads++;
    if (Ok(seen, "Cache::Check") && seen->exists && seen->key != entry.first) {
      s_.Fail(absl::StrFormat("thread %d: Check found %s, stored as %s", index_,
                              seen->key, entry.first));
    }
  }

  // Any conversation, the peer's included: the snapshot must be whole.
  void ReadConversation() {
    auto page = s_.convs->List(50);
    if (!Ok(page, "List") || page->conversations.empty()) return;
    const Conversation& pick = page->conversations[Uniform(
        static_cast<uint32_t>(page->conversations.size()))];
    auto detail = s_.convs->Get(pick.id, true);
    s_.reads++;
    if (!detail.ok()) {
      // Deleted since the listing by its owner.
      if (detail.status().code() != StatusCode::kNotFound) Ok(detail, "Get");
      return;
    }
    uint64_t tokens = 0;
    for (const Message& m : detail->messages) tokens += m.tokens;
    const Conversation& c = detail->conversation;
    if (c.message_count != detail->messages.size() ||
        c.total_tokens != tokens) {
      s_.Fail(
          absl::StrFormat("thread %d: conversation %s says %d messages / %d "
                          "tokens, holds %d / %d",
                          index_, c.id, c.message_count, c.total_tokens,
                          detail->messages.size(), tokens));
    }
  }

  void ListConversations() {
    std::string cursor;
    for (int pages = 0; pages < 3; ++pages) {
      auto page = s_.convs->List(20, cursor);
      s_.reads++;
      if (!Ok(page, "List")) return;
      cursor = page->next_cursor;
      if (cursor.empty()) return;
    }
  }

  void SearchReferences() {
    SearchReferencesOptions query;
    query.query = Words(1 + static_cast<int>(Uniform(3)));
    auto found = s_.refs->Search(query);
    s_.reads++;
    if (!Ok(found, "Search")) return;
    for (const ReferenceSearchResult& r : found->results) {
      if (r.relevance < 0 || r.relevance > 1) {
        s_.Fail(
            absl::StrFormat("thread %d: relevance %f", index_, r.relevance));
      }
    }
  }

  void ReadStatistics() {
    auto stats = s_.convs->AggregateStats();
    s_.reads++;
    if (Ok(stats, "AggregateStats") &&
        stats->total_tokens != stats->input_tokens + stats->output_tokens) {
      s_.Fail(absl::StrFormat("thread %d: aggregate totals disagree", index_));
    }
    auto refs = s_.refs->Stats();
    if (Ok(refs, "ReferenceStore::Stats")) {
      uint64_t by_type = 0;
      for (const auto& [type, n] : refs->by_type) by_type += n;
      if (by_type != refs->total_references) {
        s_.Fail(absl::StrFormat("thread %d: reference counts by type disagree",
                                index_));
      }
    }
  }

  void CacheStatistics() {
    auto stats = s_.cache->Stats(5);
    s_.reads++;
    Ok(stats, "Cache::Stats");
  }

  void SetCompressed() {
    auto detail = s_.convs->Get(OwnConversation(), true);
    if (!Ok(detail, "Get") || detail->messages.empty()) return;
    std::vector<std::string> ids = {
        detail
            ->messages[Uniform(static_cast<uint32_t>(detail->messages.size()))]
            .id};
    Ok(s_.convs->SetCompressed(detail->conversation.id, ids, Uniform(3) != 0),
       "SetCompressed");
  }

  void DeleteReference() {
    if (own_references_.empty()) return AddReference();
    const size_t i = Uniform(static_cast<uint32_t>(own_references_.size()));
    const std::string id = own_references_[i];
    own_references_.erase(own_references_.begin() + static_cast<ptrdiff_t>(i));
    const Status s = s_.refs->Delete(id);
    // NOT_FOUND: it went with its conversation.
    if (!s.ok() && s.code() != StatusCode::kNotFound) {
      s_.Fail(absl::StrFormat("thread %d: Delete reference: %s", index_,
                              s.ToString()));
      return;
    }
    lines_.push_back("DR " + id);
  }

  void DeleteConversation() {
    const size_t i = Uniform(static_cast<uint32_t>(own_conversations_.size()));
    const std::string id = own_conversations_[i];
    auto deleted = s_.convs->Delete(id);
    if (!Ok(deleted, "Delete")) return;
    own_conversations_.erase(own_conversations_.begin() +
                             static_cast<ptrdiff_t>(i));
    lines_.push_back("DC " + id);
  }

  Shared& s_;
  int index_;
  std::mt19937_64 rng_;
  int counter_ = 0;
  std::vector<std::string> own_conversations_;
  std::vector<std::string> own_references_;
  std::vector<std::pair<std::string, std::string>> own_cache_;  // key, content
  std::vector<std::string> lines_;
};

TEST_CASE("8 threads and a second process write one store consistently") {
  TempDir dir;
  const std::string path = dir.Sub("store");
  const uint64_t ops = EnvOr("CTXKIT_CONCURRENCY_OPS", 150);
  const uint64_t seed = EnvOr("CTXKIT_CONCURRENCY_SEED", 7);
  auto store = Must(Store::Open(path));
  auto convs = Must(ConversationStore::Open(*store));
  ReferenceStoreOptions ref_options;
  ref_options.model = std::string(kRecordsModel);
  auto refs = Must(ReferenceStore::Open(*store, ref_options));
  CacheOptions cache_options;
  cache_options.flush_interval_ms = 10;  // flushes race with the workers
  auto cache = Must(Cache::Open(*store, cache_options));

  Shared shared;
  shared.store = store.get();
  shared.convs = convs.get();
  shared.refs = refs.get();
  shared.cache = cache.get();

  // The peer first, and the workers once it is writing, so both run at once.
  PeerProcess peer = StartPeer(
      {"write", path, std::to_string(seed + 1000), std::to_string(2 * ops)});
  std::vector<std::string> peer_lines;
  for (bool eof = false;
       !eof && (peer_lines.empty() || peer_lines.front() != "ready");) {
    for (std::string& line : ReadLines(peer, 100, &eof))
      peer_lines.push_back(std::move(line));
  }
  REQUIRE_MESSAGE(!peer_lines.empty(), "records_peer wrote nothing");
  REQUIRE_MESSAGE(peer_lines.front() == "ready", peer_lines.front());
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    workers.push_back(std::make_unique<Worker>(
        shared, i, seed * 100 + static_cast<uint64_t>(i)));
  }
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { workers[static_cast<size_t>(i)]->Run(ops); });
  }
  // Drain the peer's acknowledgements while the workers run.
  for (std::string& line : ReadToEnd(peer))
    peer_lines.push_back(std::move(line));
  for (std::thread& t : threads) t.join();
  CHECK(WaitPeer(peer) == 0);

  for (const std::string& f : shared.failures) FAIL_CHECK(f);
  REQUIRE(!peer_lines.empty());
  CHECK(peer_lines.back() == "done");

  AckModel model;
  for (const std::string& line : peer_lines) {
    REQUIRE_MESSAGE(model.Apply(line),
                    "unexpected line from records_peer: ", line);
  }
  uint64_t peer_acks = model.acks;
  for (const auto& w : workers) {
    for (const std::string& line : w->lines()) REQUIRE(model.Apply(line));
  }
  MESSAGE("acknowledged writes: ", model.acks, " (peer ", peer_acks,
          "), reads: ", shared.reads.load(),
          "; conversations alive: ", model.conversations.size(),
          ", references: ", model.references.size(),
          ", cache entries: ", model.cache.size());
  CHECK(peer_acks > 0);

  CheckAcknowledged(model, *convs, *refs, *cache, /*search_samples=*/20);
  CheckConversationTotals(*store, *convs);
  CheckReferenceIndexAndLinks(*store, *refs);
  CheckCacheTotals(*store, *cache);

  // And the same from a fresh open, as the next process would see it.
  cache.reset();
  refs.reset();
  convs.reset();
  store.reset();
  store = Must(Store::Open(path));
  convs = Must(ConversationStore::Open(*store));
  refs = Must(ReferenceStore::Open(*store, ref_options));
  cache = Must(Cache::Open(*store));
  CheckAcknowledged(model, *convs, *refs, *cache, /*search_samples=*/20);
  CheckConversationTotals(*store, *convs);
  CheckReferenceIndexAndLinks(*store, *refs);
  CheckCacheTotals(*store, *cache);
}

}  // namespace
}  // namespace ctxkit::testing
