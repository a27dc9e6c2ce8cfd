// CheckConversationTotals: OK with the summary the test expects after random
// mixes of writes, and DATA_LOSS naming the sub-database and key for each
// kind of damage done through the raw Store API. The expectations come from
// what the test wrote, never from the check's own recount.

#include "lib/conversations/conversation_check.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/base/ids.h"
#include "lib/base/key_codec.h"
#include "lib/cache/cache_check.h"
#include "lib/conversations/conversation_records.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/references/index_check.h"
#include "tests/conversations/test_helpers.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

using internal::CheckConversationTotals;
using internal::ConversationCheckSummary;
using testing::Contains;
using testing::Fixture;
using testing::Msg;
using testing::Must;

constexpr int64_t kHour = 3600 * 1000;

// What the test wrote and has not deleted.
struct Written {
  struct Message {
    int64_t created_at = 0;
    bool compressed = false;
  };
  struct Conv {
    std::string model;
    std::map<std::string, Message> messages;  // by id
    uint64_t views = 0;
  };
  std::map<std::string, Conv> conversations;

  ConversationCheckSummary Expected() const {
    ConversationCheckSummary s;
    std::set<std::string> models;
    std::set<int64_t> days;
    for (const auto& [id, c] : conversations) {
      ++s.conversations;
      models.insert(c.model);
      s.compacted_views += c.views;
      for (const auto& [mid, m] : c.messages) {
        ++s.messages;
        if (m.compressed) ++s.compressed_messages;
        days.insert(internal::DayOfMillis(m.created_at));
      }
    }
    s.message_id_rows = s.messages;
    s.by_created_rows = s.conversations;
    // "g" (written by the first write and never removed), one per model of
    // a stored conversation, one per day with messages.
    s.stats_records = 1 + models.size() + days.size();
    return s;
  }
};

void CheckSame(const ConversationCheckSummary& got,
               const ConversationCheckSummary& want) {
  CHECK(got.conversations == want.conversations);
  CHECK(got.messages == want.messages);
  CHECK(got.compressed_messages == want.compressed_messages);
  CHECK(got.message_id_rows == want.message_id_rows);
  CHECK(got.by_created_rows == want.by_created_rows);
  CHECK(got.stats_records == want.stats_records);
  CHECK(got.compacted_views == want.compacted_views);
}

void ExpectOk(Store& store, const Written& written) {
  ConversationCheckSummary summary;
  const absl::Status s = CheckConversationTotals(store, &summary);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CheckSame(summary, written.Expected());
}

std::string Pick(std::mt19937& rng, const std::vector<std::string>& from) {
  return from[rng() % from.size()];
}

TEST_CASE("after random writes, deletes and compressions the check is OK") {
  Fixture f;
  Written w;
  std::mt19937 rng(1234);
  const std::vector<std::string> models = {"gpt-4", "claude-3-5-sonnet",
                                           "my-llm"};
  const std::vector<std::string> words = {
      "alpha", "beta", "gamma", "délta", "ε", "zeta", "eta", "theta", "iota"};
  auto text = [&](int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += Pick(rng, words) + " ";
    return out;
  };
  auto some_conversation = [&]() -> std::string {
    auto it = w.conversations.begin();
    std::advance(it, rng() % w.conversations.size());
    return it->first;
  };
  auto some_messages = [&](const std::string& id) {
    std::vector<std::string> ids;
    for (const auto& [mid, m] : w.conversations[id].messages) {
      if (rng() % 3 == 0) ids.push_back(mid);
    }
    return ids;
  };

  for (int step = 0; step < 400; ++step) {
    const unsigned op = rng() % 100;
    // Hours pass, so messages fall on several UTC days.
    f.clock.Advance(static_cast<int64_t>(rng() % 7) * kHour);
    if (w.conversations.empty() || op < 10) {
      NewConversation nc;
      nc.title = text(2);
      nc.model = Pick(rng, models);
      Conversation c = Must(f.convs->Create(nc));
      w.conversations[c.id].model = c.model;
    } else if (op < 50) {
      const std::string id = some_conversation();
      std::vector<NewMessage> batch;
      const int n = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        NewMessage m = Msg(static_cast<MessageRole>(rng() % 4), text(6));
        m.is_compressed = rng() % 5 == 0;
        batch.push_back(m);
      }
      AddMessagesResult r = Must(f.convs->AddMessages(id, batch));
      for (const Message& m : r.messages) {
        w.conversations[id].messages[m.id] = {m.created_at, m.is_compressed};
      }
    } else if (op < 65) {
      const std::string id = some_conversation();
      const std::vector<std::string> ids = some_messages(id);
      if (ids.empty()) continue;
      const bool compressed = rng() % 2 == 0;
      Must(f.convs->SetCompressed(id, ids, compressed));
      for (const std::string& mid : ids) {
        w.conversations[id].messages[mid].compressed = compressed;
      }
    } else if (op < 80) {
      const std::string id = some_conversation();
      const std::vector<std::string> ids = some_messages(id);
      if (ids.empty()) continue;
      Must(f.convs->DeleteMessages(id, ids));
      for (const std::string& mid : ids)
        w.conversations[id].messages.erase(mid);
    } else if (op < 87) {
      const std::string id = some_conversation();
      Must(f.convs->Delete(id));
      w.conversations.erase(id);
    } else if (op < 93) {
      const std::string id = some_conversation();
      NewCompactedView v;
      v.messages_json = R"([{"role":"user","content":"summary"}])";
      Must(f.convs->SaveCompactedView(id, v));
      ++w.conversations[id].views;
    } else {
      const std::string id = some_conversation();
      ConversationUpdate u;
      u.title = text(3);
      Must(f.convs->Update(id, u));
    }
    if (step % 50 == 49) {
      CAPTURE(step);
      ExpectOk(*f.store, w);
    }
  }
  ExpectOk(*f.store, w);

  // Everything deleted: only the global record remains, all zeros.
  for (const auto& [id, c] : w.conversations) Must(f.convs->Delete(id));
  w.conversations.clear();
  ExpectOk(*f.store, w);
}

TEST_CASE("the check reads its transaction's snapshot") {
  Fixture f;
  Conversation c = Must(f.convs->Create({.title = "t", .model = "gpt-4"}));
  Must(f.convs->AddMessage(c.id, Msg(MessageRole::kUser, "hello there")));
  auto dbs = internal::ConversationDbs::Open(*f.store);
  REQUIRE(dbs.ok());
  ReadTransaction txn = Must(f.store->BeginRead());
  Must(f.convs->AddMessage(c.id, Msg(MessageRole::kAssistant, "hi")));
  ConversationCheckSummary summary;
  const absl::Status s = CheckConversationTotals(txn, *dbs, &summary);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(summary.messages == 1);
}

TEST_CASE("checks while another thread writes are each OK") {
  Fixture f;
  Conversation c = Must(f.convs->Create({.title = "t", .model = "gpt-4"}));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::vector<std::string> ids;
    for (int i = 0; i < 150; ++i) {
      auto added =
          f.convs->AddMessage(c.id, Msg(MessageRole::kUser, "message text"));
      CHECK(added.ok());
      if (!added.ok()) break;
      ids.push_back(added->message.id);
      if (i % 3 == 2) {
        CHECK(f.convs->SetCompressed(c.id, {ids[ids.size() - 2]}, true).ok());
        CHECK(f.convs->DeleteMessages(c.id, {ids.front()}).ok());
        ids.erase(ids.begin());
      }
    }
    done = true;
  });
  int checks = 0;
  while (!done || checks == 0) {
    const absl::Status s = CheckConversationTotals(*f.store);
    CHECK_MESSAGE(s.ok(), s.ToString());
    ++checks;
  }
  writer.join();
  const absl::Status s = CheckConversationTotals(*f.store);
  CHECK_MESSAGE(s.ok(), s.ToString());
}

// ---- Damage ----------------------------------------------------------------

// A store with two conversations of two models, messages on two days, a
// compacted view, and the raw handles to damage it with.
struct Damaged {
  Fixture f;
  Conversation a, b;
  std::vector<Message> a_messages;
  Database conversations, messages, message_ids, by_created, stats, views;

  Damaged() {
    a = Must(f.convs->Create({.title = "a", .model = "gpt-4"}));
    b = Must(f.convs->Create({.title = "b", .model = "claude-3-5-sonnet"}));
    a_messages = Must(f.convs->AddMessages(
                          a.id, {Msg(MessageRole::kSystem, "be brief"),
                                 Msg(MessageRole::kUser, "what is ctxkit?")}))
                     .messages;
    f.clock.Advance(30 * kHour);
    Must(f.convs->AddMessage(b.id, Msg(MessageRole::kUser, "hello")));
    Must(f.convs->AddMessage(b.id, Msg(MessageRole::kAssistant, "hi there")));
    NewCompactedView v;
    v.messages_json = R"([{"role":"user","content":"summary"}])";
    Must(f.convs->SaveCompactedView(a.id, v));
    conversations = Must(f.store->OpenDatabase("conversations"));
    messages = Must(f.store->OpenDatabase("conversations.messages"));
    message_ids = Must(f.store->OpenDatabase("conversations.message_ids"));
    by_created = Must(f.store->OpenDatabase("conversations.by_created"));
    stats = Must(f.store->OpenDatabase("conversations.stats"));
    views = Must(f.store->OpenDatabase("conversations.compacted_views"));
    const absl::Status s = CheckConversationTotals(*f.store);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
  }

  void Put(Database db, std::string_view key, std::string_view value) {
    REQUIRE(f.store
                ->Update([&](WriteTransaction& txn) {
                  return txn.Put(db, key, value);
                })
                .ok());
  }
  void Delete(Database db, std::string_view key) {
    bool gone = false;
    REQUIRE(f.store
                ->Update([&](WriteTransaction& txn) -> Status {
                  auto d = txn.Delete(db, key);
                  if (d.ok()) gone = *d;
                  return d.status();
                })
                .ok());
    REQUIRE(gone);
  }
  std::string Get(Database db, std::string_view key) {
    ReadTransaction txn = Must(f.store->BeginRead());
    return std::string(Must(txn.Get(db, key)));
  }

  // The check fails with DATA_LOSS whose message holds every one of `parts`.
  void ExpectDataLoss(std::initializer_list<std::string_view> parts) {
    const absl::Status s = CheckConversationTotals(*f.store);
    CAPTURE(s.ToString());
    REQUIRE(s.code() == absl::StatusCode::kDataLoss);
    for (std::string_view part : parts) {
      CAPTURE(part);
      CHECK(Contains(std::string(s.message()), part));
    }
  }
};

TEST_CASE("damage: a conversation's total overwritten") {
  Damaged d;
  Conversation c;
  uint64_t last_seq = 0;
  REQUIRE(internal::DecodeConversation(d.a.id, d.Get(d.conversations, d.a.id),
                                       &c, &last_seq)
              .ok());
  c.system_tokens += 1;
  d.Put(d.conversations, d.a.id, internal::EncodeConversation(c, last_seq));
  d.ExpectDataLoss({"conversations key", d.a.id, "system_tokens"});
}

TEST_CASE("damage: a conversation's last message preview overwritten") {
  Damaged d;
  Conversation c;
  uint64_t last_seq = 0;
  REQUIRE(internal::DecodeConversation(d.b.id, d.Get(d.conversations, d.b.id),
                                       &c, &last_seq)
              .ok());
  c.last_message = "hello";  // the older message's
  d.Put(d.conversations, d.b.id, internal::EncodeConversation(c, last_seq));
  d.ExpectDataLoss({"conversations key", d.b.id, "last_message"});
}

TEST_CASE("damage: a statistics total overwritten with an older value") {
  Damaged d;
  const std::string global = d.Get(d.stats, "g");
  Must(d.f.convs->AddMessage(d.b.id, Msg(MessageRole::kTool, "result")));
  d.Put(d.stats, "g", global);
  d.ExpectDataLoss({"conversations.stats key \"g\"", "messages is 4"});
}

TEST_CASE("damage: a model's statistics overwritten with another model's") {
  Damaged d;
  d.Put(d.stats, "mgpt-4", d.Get(d.stats, "mclaude-3-5-sonnet"));
  d.ExpectDataLoss({"conversations.stats key \"mgpt-4\""});
}

TEST_CASE("damage: a day's statistics deleted") {
  Damaged d;
  d.Delete(d.stats, internal::DayKey(internal::DayOfMillis(*d.f.clock.now)));
  d.ExpectDataLoss(
      {"conversations.stats key", "is missing",
       internal::DateOfDay(internal::DayOfMillis(*d.f.clock.now))});
}

TEST_CASE("damage: a message-id index row deleted") {
  Damaged d;
  d.Delete(d.message_ids, d.a_messages[1].id);
  d.ExpectDataLoss(
      {"conversations.message_ids key", d.a_messages[1].id, "is missing"});
}

TEST_CASE("damage: a created-at index row deleted") {
  Damaged d;
  d.Delete(d.by_created, internal::CreatedKey(d.b.created_at, d.b.id));
  d.ExpectDataLoss({"conversations.by_created key", d.b.id, "is missing"});
}

TEST_CASE("damage: a stray message-id index row") {
  Damaged d;
  const std::string stray = internal::NewUuid();
  d.Put(d.message_ids, stray, internal::MessageKey(d.a.id, 1));
  d.ExpectDataLoss({"conversations.message_ids key", stray, "whose id is"});
}

TEST_CASE("damage: a stray created-at index row") {
  Damaged d;
  const std::string stray = internal::NewUuid();
  d.Put(d.by_created, internal::CreatedKey(d.a.created_at, stray), "");
  d.ExpectDataLoss(
      {"conversations.by_created key", stray, "names no stored conversation"});
}

TEST_CASE("damage: a stray statistics key") {
  Damaged d;
  d.Put(d.stats, "x-unknown", "1");
  d.ExpectDataLoss(
      {"conversations.stats key \"x-unknown\"", "not a statistics key"});
}

TEST_CASE("damage: a message of no stored conversation") {
  Damaged d;
  const std::string orphan = internal::NewUuid();
  const std::string key = internal::MessageKey(orphan, 1);
  d.Put(d.messages, key, d.Get(d.messages, internal::MessageKey(d.a.id, 1)));
  d.ExpectDataLoss({"conversations.messages key", orphan,
                    "belongs to no stored conversation"});
}

TEST_CASE("damage: a compacted view of no stored conversation") {
  Damaged d;
  const std::string orphan = internal::NewUuid();
  std::string key = orphan;
  internal::AppendBigEndian64(&key, 1);
  d.Put(d.views, key, "view");
  d.ExpectDataLoss({"conversations.compacted_views key", orphan,
                    "belongs to no stored conversation"});
}

TEST_CASE("damage: an undecodable conversation record") {
  Damaged d;
  d.Put(d.conversations, d.b.id, "\x01garbage");
  d.ExpectDataLoss({"conversations:", d.b.id, "malformed"});
}

TEST_CASE("damage: an undecodable message record") {
  Damaged d;
  d.Put(d.messages, internal::MessageKey(d.a.id, 2), "\x01");
  d.ExpectDataLoss(
      {"conversations.messages:", "message 2 of conversation", d.a.id});
}

TEST_CASE("damage: an undecodable statistics record") {
  Damaged d;
  d.Put(d.stats, "g", "\x07");
  d.ExpectDataLoss({"conversations.stats:", "statistics record g"});
}

// ---- Parts never created ---------------------------------------------------

TEST_CASE("every part's check accepts a read-only store without the part") {
  testing::TempDir dir;
  // A store with nothing in it but ctxkit's own metadata.
  Must(Store::Open(dir.Sub("s"))).reset();
  StoreOptions options;
  options.read_only = true;
  std::unique_ptr<Store> store = Must(Store::Open(dir.Sub("s"), options));

  ConversationCheckSummary conversations;
  conversations.messages = 99;
  absl::Status s = CheckConversationTotals(*store, &conversations);
  CHECK_MESSAGE(s.ok(), s.ToString());
  CheckSame(conversations, ConversationCheckSummary{});

  internal::CacheCheckSummary cache;
  cache.entries = 99;
  s = internal::CheckCacheTotals(*store, &cache);
  CHECK_MESSAGE(s.ok(), s.ToString());
  CHECK(cache.entries == 0);

  internal::IndexCheckSummary references;
  references.references = 99;
  s = internal::CheckReferenceIndex(*store, &references);
  CHECK_MESSAGE(s.ok(), s.ToString());
  CHECK(references.references == 0);
}

TEST_CASE("a read-only store with some conversation sub-databases missing") {
  testing::TempDir dir;
  {
    std::unique_ptr<Store> store = Must(Store::Open(dir.Sub("s")));
    // As a release before compacted views left it.
    for (const char* name :
         {"conversations", "conversations.messages",
          "conversations.message_ids", "conversations.by_created",
          "conversations.stats"}) {
      Must(store->OpenDatabase(name));
    }
  }
  StoreOptions options;
  options.read_only = true;
  std::unique_ptr<Store> store = Must(Store::Open(dir.Sub("s"), options));
  ConversationCheckSummary summary;
  const absl::Status s = CheckConversationTotals(*store, &summary);
  CHECK_MESSAGE(s.ok(), s.ToString());
  CheckSame(summary, ConversationCheckSummary{});
}

TEST_CASE("a read-only store of a full conversation store checks OK") {
  testing::TempDir dir;
  Written w;
  {
    std::unique_ptr<Store> store = Must(Store::Open(dir.Sub("s")));
    auto convs = Must(ConversationStore::Open(*store));
    Conversation c = Must(convs->Create({.title = "t", .model = "gpt-4"}));
    Message m =
        Must(convs->AddMessage(c.id, Msg(MessageRole::kUser, "hi"))).message;
    w.conversations[c.id].model = c.model;
    w.conversations[c.id].messages[m.id] = {m.created_at, false};
  }
  StoreOptions options;
  options.read_only = true;
  std::unique_ptr<Store> store = Must(Store::Open(dir.Sub("s"), options));
  ExpectOk(*store, w);
}

}  // namespace
}  // namespace ctxkit
