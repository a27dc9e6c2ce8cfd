// A writer process for the records tests: opens a store with the
// conversations, references and cache parts and runs a random mix of writes,
// acknowledging each one on stdout (tests/records/records_protocol.h) after
// it returned OK.
//
//   records_peer crash DIR SEED       writes until killed; works on every
//                                     conversation and reference it finds in
//                                     the store, so deletes also hit what
//                                     earlier runs wrote
//   records_peer write DIR SEED OPS   OPS writes, then "done" and exit 0;
//                                     deletes only what it created itself,
//                                     so it never takes away records other
//                                     writers of the store count on
// Exit 1 after printing "ERR <status>" when anything fails; 2 on bad usage.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "ctxkit/store.h"
#include "tests/records/records_protocol.h"

namespace {

using ctxkit::Status;
using ctxkit::testing::kRecordsModel;
using ctxkit::testing::kRecordWords;

// One write(2) per line, so a killed peer never leaves half a line.
void WriteLine(const std::string& line) {
  const std::string out = line + "\n";
  if (write(STDOUT_FILENO, out.data(), out.size()) !=
      static_cast<ssize_t>(out.size())) {
    std::_Exit(3);
  }
}

[[noreturn]] void Die(const Status& s) {
  WriteLine("ERR " + s.ToString());
  std::_Exit(1);
}

template <typename T>
T Must(ctxkit::StatusOr<T> v) {
  if (!v.ok()) Die(v.status());
  return std::move(v).value();
}

class Peer {
 public:
  Peer(const std::string& dir, uint64_t seed, bool own_only)
      : rng_(seed), seed_(seed), own_only_(own_only) {
    store_ = Must(ctxkit::Store::Open(dir));
    convs_ = Must(ctxkit::ConversationStore::Open(*store_));
    ctxkit::ReferenceStoreOptions ref_options;
    ref_options.model = std::string(kRecordsModel);
    refs_ = Must(ctxkit::ReferenceStore::Open(*store_, ref_options));
    // A short flush interval, so hit batches are written (and killed)
    // during the short rounds too.
    ctxkit::CacheOptions cache_options;
    cache_options.flush_interval_ms = 5;
    cache_ = Must(ctxkit::Cache::Open(*store_, cache_options));
    if (!own_only_) Discover();
    WriteLine("ready");
  }

  void Step() {
    const uint32_t r = Uniform(100);
    if (r < 10 || conversations_.empty()) return CreateConversation();
    if (r < 35) return AddMessage();
    if (r < 50) return AddMessages();
    if (r < 68) return AddReference();
    if (r < 83) return PutCache();
    if (r < 88) return GetCache();
    if (r < 91) return SetCompressed();
    if (r < 95) return DeleteConversation();
    return DeleteReference();
  }

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
  // A term no other record has: the seed keeps runs apart.
  std::string UniqueTerm() {
    return "uq" + std::to_string(seed_) + "x" + std::to_string(++counter_);
  }
  const std::string& AnyConversation() {
    return conversations_[Uniform(
        static_cast<uint32_t>(conversations_.size()))];
  }

  // Every conversation and reference already in the store.
  void Discover() {
    std::string cursor;
    do {
      auto page =
          Must(convs_->List(ctxkit::ConversationLimits::kMaxListLimit, cursor));
      for (const auto& c : page.conversations) conversations_.push_back(c.id);
      cursor = page.next_cursor;
    } while (!cursor.empty());
    auto list = Must(refs_->List());
    for (const auto& r : list.references) references_.push_back(r.id);
  }

  void CreateConversation() {
    ctxkit::NewConversation c;
    c.title = "conversation " + Words(3);
    c.model = std::string(kRecordsModel);
    auto created = Must(convs_->Create(c));
    conversations_.push_back(created.id);
    WriteLine("C " + created.id);
  }

  ctxkit::NewMessage MakeMessage() {
    ctxkit::NewMessage m;
    m.role =
        static_cast<ctxkit::MessageRole>(Uniform(3));  // user/assistant/system
    m.content = Words(5 + static_cast<int>(Uniform(40)));
    return m;
  }

  static std::string MessageLine(const ctxkit::Message& m) {
    return "M " + m.conversation_id + " " + m.id + " " + std::to_string(m.seq) +
           " " + std::to_string(m.tokens);
  }

  void AddMessage() {
    auto added = Must(convs_->AddMessage(AnyConversation(), MakeMessage()));
    WriteLine(MessageLine(added.message));
  }

  void AddMessages() {
    std::vector<ctxkit::NewMessage> batch(2 + Uniform(4));
    for (auto& m : batch) m = MakeMessage();
    auto added = Must(convs_->AddMessages(AnyConversation(), batch));
    std::string lines;
    for (const auto& m : added.messages) {
      if (!lines.empty()) lines += '\n';
      lines += MessageLine(m);
    }
    WriteLine(lines);
  }

  void AddReference() {
    ctxkit::NewReference r;
    if (Uniform(10) < 7) r.conversation_id = AnyConversation();
    r.type = std::string(ctxkit::kReferenceTypes[Uniform(5)]);
    const std::string unique = UniqueTerm();
    r.title = Words(2) + " " + unique;
    r.content = Words(10 + static_cast<int>(Uniform(60)));
    auto added = Must(refs_->Add(r));
    references_.push_back(added.id);
    WriteLine("R " + added.id + " " +
              (r.conversation_id.empty() ? "-" : r.conversation_id) + " " +
              unique);
  }

  void PutCache() {
    ctxkit::CachePutOptions options;
    options.prefix = Uniform(2) == 0 ? "prompts" : "results";
    options.model = std::string(kRecordsModel);
    if (Uniform(2) == 0) options.conversation_id = AnyConversation();
    // Unique content: a Put never lands on an entry another run stored.
    const std::string content =
        UniqueTerm() + " " + Words(20 + static_cast<int>(Uniform(100)));
    auto put = Must(cache_->Put(content, options));
    cache_keys_.push_back(put.key);
    WriteLine(
        "P " + put.key + " " +
        (options.conversation_id.empty() ? "-" : options.conversation_id));
  }

  // A read, but its hit is written by the cache's batch flush.
  void GetCache() {
    if (cache_keys_.empty()) return PutCache();
    auto got = cache_->Get(
        cache_keys_[Uniform(static_cast<uint32_t>(cache_keys_.size()))]);
    // The entry may have gone with its conversation.
    if (!got.ok() && got.status().code() != ctxkit::StatusCode::kNotFound) {
      Die(got.status());
    }
  }

  void SetCompressed() {
    auto detail = Must(convs_->Get(AnyConversation(), true));
    if (detail.messages.empty()) return AddMessage();
    std::vector<std::string> ids;
    for (const auto& m : detail.messages) {
      if (Uniform(2) == 0) ids.push_back(m.id);
    }
    if (ids.empty()) ids.push_back(detail.messages.front().id);
    Must(convs_->SetCompressed(detail.conversation.id, ids, Uniform(4) != 0));
  }

  void DeleteConversation() {
    const size_t i = Uniform(static_cast<uint32_t>(conversations_.size()));
    const std::string id = conversations_[i];
    WriteLine("B DC " + id);
    Must(convs_->Delete(id));
    conversations_.erase(conversations_.begin() + static_cast<ptrdiff_t>(i));
    WriteLine("DC " + id);
  }

  void DeleteReference() {
    if (references_.empty()) return AddReference();
    const size_t i = Uniform(static_cast<uint32_t>(references_.size()));
    const std::string id = references_[i];
    references_.erase(references_.begin() + static_cast<ptrdiff_t>(i));
    WriteLine("B DR " + id);
    Status s = refs_->Delete(id);
    // Gone already when its conversation was deleted.
    if (!s.ok() && s.code() != ctxkit::StatusCode::kNotFound) Die(s);
    WriteLine("DR " + id);
  }

  std::mt19937_64 rng_;
  uint64_t seed_;
  bool own_only_;
  uint64_t counter_ = 0;
  std::unique_ptr<ctxkit::Store> store_;
  std::unique_ptr<ctxkit::ConversationStore> convs_;
  std::unique_ptr<ctxkit::ReferenceStore> refs_;
  std::unique_ptr<ctxkit::Cache> cache_;
  std::vector<std::string> conversations_;
  std::vector<std::string> references_;
  std::vector<std::string> cache_keys_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  const std::string mode = argv[1];
  const uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  if (mode == "crash" && argc == 4) {
    Peer peer(argv[2], seed, /*own_only=*/false);
    for (;;) peer.Step();
  }
  if (mode == "write" && argc == 5) {
    const long ops = std::atol(argv[4]);
    {
      Peer peer(argv[2], seed, /*own_only=*/true);
      for (long i = 0; i < ops; ++i) peer.Step();
    }
    WriteLine("done");
    return 0;
  }
  return 2;
}
