// ConversationStore compacted views: versions, originals untouched, reads
// back, delete cascade, validation that writes nothing, reopening.

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <thread>
#include <vector>

#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/base/ids.h"
#include "tests/conversations/test_helpers.h"

namespace ctxkit::testing {
namespace {

constexpr char kViewsDb[] = "conversations.compacted_views";

NewCompactedView View(std::string messages, std::string info,
                      uint64_t source_count, uint64_t source_last,
                      uint64_t tokens) {
  NewCompactedView v;
  v.messages_json = std::move(messages);
  v.info_json = std::move(info);
  v.source_message_count = source_count;
  v.source_last_seq = source_last;
  v.tokens = tokens;
  return v;
}

// A conversation with `n` messages.
Conversation WithMessages(Fixture& f, int n) {
  Conversation c = Must(f.convs->Create({.title = "views"}));
  std::vector<NewMessage> batch;
  for (int i = 0; i < n; ++i) {
    batch.push_back(
        Msg(i % 2 == 0 ? MessageRole::kUser : MessageRole::kAssistant,
            "message " + std::to_string(i)));
  }
  if (n > 0) Must(f.convs->AddMessages(c.id, batch));
  return Must(f.convs->Get(c.id, false)).conversation;
}

void CheckInvalid(const StatusOr<CompactedView>& r, const std::string& field) {
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(r.status().message(), field), r.status().ToString());
}

TEST_CASE("views are versioned and read back beside the untouched messages") {
  Fixture f;
  const Conversation c = WithMessages(f, 6);
  const ConversationDetail before = Must(f.convs->Get(c.id));
  REQUIRE(before.messages.size() == 6);

  const std::string m1 =
      R"([{"role":"user","content":"message 0"},{"role":"user","content":"[Compressed context: 5 messages]"}])";
  const std::string i1 = R"({"original_count":6,"compacted_count":2})";
  f.clock.Advance(1000);
  CompactedView v1 =
      Must(f.convs->SaveCompactedView(c.id, View(m1, i1, 6, 6, 17)));
  CHECK(v1.version == 1);
  CHECK(v1.conversation_id == c.id);
  CHECK(v1.created_at == *f.clock.now);
  CHECK(v1.messages_json == m1);
  CHECK(v1.info_json == i1);
  CHECK(v1.messages_bytes == m1.size());
  CHECK(v1.source_message_count == 6);
  CHECK(v1.source_last_seq == 6);
  CHECK(v1.tokens == 17);

  // Messages added after a view leave it as it was.
  Must(f.convs->AddMessage(c.id, Msg(MessageRole::kUser, "later")));
  const std::string m2 = R"([{"role":"user","content":"all seven"}])";
  f.clock.Advance(1000);
  CompactedView v2 =
      Must(f.convs->SaveCompactedView(c.id, View(m2, "{}", 7, 7, 3)));
  CHECK(v2.version == 2);
  CompactedView v3 =
      Must(f.convs->SaveCompactedView(c.id, View("[]", R"({"n":3})", 0, 0, 0)));
  CHECK(v3.version == 3);

  // Every version, and the latest by default.
  CompactedView got1 = Must(f.convs->GetCompactedView(c.id, 1));
  CHECK(got1.messages_json == m1);
  CHECK(got1.info_json == i1);
  CHECK(got1.created_at == v1.created_at);
  CHECK(got1.tokens == 17);
  CHECK(got1.source_message_count == 6);
  CHECK(Must(f.convs->GetCompactedView(c.id, 2)).messages_json == m2);
  CompactedView latest = Must(f.convs->GetCompactedView(c.id));
  CHECK(latest.version == 3);
  CHECK(latest.info_json == R"({"n":3})");

  std::vector<CompactedView> list = Must(f.convs->ListCompactedViews(c.id));
  REQUIRE(list.size() == 3);
  for (size_t i = 0; i < list.size(); ++i) {
    CHECK(list[i].version == i + 1);
    CHECK(list[i].messages_json.empty());  // listings omit the messages
    CHECK(list[i].conversation_id == c.id);
  }
  CHECK(list[0].messages_bytes == m1.size());
  CHECK(list[0].info_json == i1);
  CHECK(list[1].source_last_seq == 7);

  // The originals are all there, unchanged, with their totals.
  const ConversationDetail after = Must(f.convs->Get(c.id));
  REQUIRE(after.messages.size() == 7);
  for (size_t i = 0; i < before.messages.size(); ++i) {
    CHECK(after.messages[i].id == before.messages[i].id);
    CHECK(after.messages[i].content == before.messages[i].content);
    CHECK(after.messages[i].tokens == before.messages[i].tokens);
  }
  CHECK(after.conversation.message_count == 7);
  CHECK(f.Entries("conversations.messages") == 7);
  CHECK(f.Entries(kViewsDb) == 3);
  // Views are in no statistic.
  CHECK(Must(f.convs->AggregateStats()).messages == 7);
}

TEST_CASE("unknown conversations and versions are NOT_FOUND") {
  Fixture f;
  const Conversation c = WithMessages(f, 1);
  const std::string ghost = internal::NewUuid();
  auto saved = f.convs->SaveCompactedView(ghost, View("[]", "{}", 0, 0, 0));
  CHECK(saved.status().code() == StatusCode::kNotFound);
  CHECK(Contains(saved.status().message(), ghost));
  CHECK(f.convs->GetCompactedView(ghost).status().code() ==
        StatusCode::kNotFound);
  CHECK(f.convs->ListCompactedViews(ghost).status().code() ==
        StatusCode::kNotFound);

  auto none = f.convs->GetCompactedView(c.id);
  CHECK(none.status().code() == StatusCode::kNotFound);
  CHECK(Contains(none.status().message(), "no compacted view"));
  CHECK(Must(f.convs->ListCompactedViews(c.id)).empty());
  Must(f.convs->SaveCompactedView(c.id, View("[]", "{}", 1, 1, 0)));
  auto missing = f.convs->GetCompactedView(c.id, 2);
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(Contains(missing.status().message(), "compacted view 2"));
  CheckInvalid(f.convs->GetCompactedView("nope"), "conversation_id");
  CheckInvalid(f.convs->SaveCompactedView("nope", View("[]", "{}", 0, 0, 0)),
               "conversation_id");
  // Upper-case ids are accepted as the other methods accept them.
  std::string upper = c.id;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(ch));
  CHECK(Must(f.convs->GetCompactedView(upper)).version == 1);
}

TEST_CASE("bad views are INVALID_ARGUMENT naming the field; nothing written") {
  Fixture f;
  const Conversation c = WithMessages(f, 3);
  Must(f.convs->SaveCompactedView(c.id, View("[]", "{}", 0, 0, 0)));
  const auto check = [&](const NewCompactedView& v, const std::string& field) {
    CheckInvalid(f.convs->SaveCompactedView(c.id, v), field);
  };
  check(View("", "{}", 0, 0, 0), "messages_json");
  check(View("{}", "{}", 0, 0, 0), "messages_json");
  check(View("[1,", "{}", 0, 0, 0), "messages_json");
  check(View("\"x\"", "{}", 0, 0, 0), "messages_json");
  check(View(R"([{"role":"user"},"text"])", "{}", 0, 0, 0), "messages_json[1]");
  check(View("[\"\xff\"]", "{}", 0, 0, 0), "messages_json");
  check(View(std::string(CompactedViewLimits::kMaxMessagesJsonBytes + 1, ' '),
             "{}", 0, 0, 0),
        "messages_json");
  check(View("[]", "[]", 0, 0, 0), "info_json");
  check(View("[]", "", 0, 0, 0), "info_json");
  check(View("[]", "{", 0, 0, 0), "info_json");
  check(
      View("[]",
           "{\"a\":\"" +
               std::string(CompactedViewLimits::kMaxInfoJsonBytes, 'x') + "\"}",
           0, 0, 0),
      "info_json");
  check(View("[]", "{}", 3, 2, 0), "source_message_count");
  check(View("[]", "{}", 3, 4, 0), "source_last_seq");  // 3 handed out
  CHECK(f.Entries(kViewsDb) == 1);
  CHECK(Must(f.convs->GetCompactedView(c.id)).version == 1);
  // The next good one is version 2: failures consumed no version.
  CHECK(Must(f.convs->SaveCompactedView(c.id, View("[]", "{}", 3, 3, 0)))
            .version == 2);
}

TEST_CASE("deleting a conversation removes its views in the same transaction") {
  Fixture f;
  const Conversation a = WithMessages(f, 2);
  const Conversation b = WithMessages(f, 2);
  for (int i = 0; i < 3; ++i) {
    Must(f.convs->SaveCompactedView(a.id, View("[]", "{}", 2, 2, 1)));
  }
  Must(f.convs->SaveCompactedView(b.id, View("[]", "{}", 2, 2, 1)));
  CHECK(f.Entries(kViewsDb) == 4);
  // Deleting messages never touches views.
  const ConversationDetail detail = Must(f.convs->Get(a.id));
  Must(f.convs->DeleteMessages(a.id, {detail.messages[0].id}));
  CHECK(Must(f.convs->ListCompactedViews(a.id)).size() == 3);

  DeletedConversation d = Must(f.convs->Delete(a.id));
  CHECK(d.messages_deleted == 1);
  CHECK(d.dependent_records_deleted == 3);
  CHECK(f.Entries(kViewsDb) == 1);
  CHECK(f.convs->ListCompactedViews(a.id).status().code() ==
        StatusCode::kNotFound);
  CHECK(Must(f.convs->GetCompactedView(b.id)).version == 1);
}

TEST_CASE("concurrent saves get distinct consecutive versions") {
  Fixture f;
  const Conversation c = WithMessages(f, 1);
  std::vector<std::thread> threads;
  std::vector<std::vector<uint64_t>> got(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        auto v = f.convs->SaveCompactedView(c.id, View("[]", "{}", 1, 1, 0));
        if (v.ok()) got[static_cast<size_t>(t)].push_back(v->version);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<uint64_t> all;
  for (const auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  REQUIRE(all.size() == 40);
  for (size_t i = 0; i < all.size(); ++i) CHECK(all[i] == i + 1);
  CHECK(Must(f.convs->ListCompactedViews(c.id)).size() == 40);
}

TEST_CASE("views survive reopening, also read-only") {
  TempDir dir;
  std::string id;
  const std::string messages = R"([{"role":"system","content":"be brief"}])";
  {
    auto store = Must(Store::Open(dir.Sub("s")));
    auto convs = Must(ConversationStore::Open(*store));
    Conversation c = Must(convs->Create({.title = "durable"}));
    id = c.id;
    Must(convs->AddMessage(id, Msg(MessageRole::kSystem, "be brief")));
    Must(convs->SaveCompactedView(id, View(messages, R"({"v":1})", 1, 1, 4)));
    Must(convs->SaveCompactedView(id, View("[]", R"({"v":2})", 1, 1, 0)));
  }
  {
    auto store = Must(Store::Open(dir.Sub("s")));
    auto convs = Must(ConversationStore::Open(*store));
    CompactedView v1 = Must(convs->GetCompactedView(id, 1));
    CHECK(v1.messages_json == messages);
    CHECK(v1.tokens == 4);
    CHECK(Must(convs->GetCompactedView(id)).info_json == R"({"v":2})");
    CHECK(
        Must(convs->SaveCompactedView(id, View("[]", "{}", 1, 1, 0))).version ==
        3);
    CHECK(Must(convs->Get(id)).messages.size() == 1);
  }
  StoreOptions ro;
  ro.read_only = true;
  auto store = Must(Store::Open(dir.Sub("s"), ro));
  auto convs = Must(ConversationStore::Open(*store));
  CHECK(Must(convs->ListCompactedViews(id)).size() == 3);
  CHECK(Must(convs->GetCompactedView(id, 1)).messages_json == messages);
}

TEST_CASE("a read-only store made before views existed opens, with none") {
  // The databases a ConversationStore (with the other parts' hooks) uses...
  std::vector<std::string> names;
  {
    TempDir probe;
    auto store = Must(Store::Open(probe.Sub("s")));
    auto convs = Must(ConversationStore::Open(*store));
    for (const auto& d : Must(store->Info()).databases) {
      if (d.name != kViewsDb && d.name.rfind("__", 0) != 0) {
        names.push_back(d.name);
      }
    }
  }
  // ...all but the views database, as an older release left a store.
  TempDir dir;
  {
    auto store = Must(Store::Open(dir.Sub("s")));
    for (const std::string& name : names) {
      REQUIRE(store->OpenDatabase(name).ok());
    }
  }
  StoreOptions ro;
  ro.read_only = true;
  auto store = Must(Store::Open(dir.Sub("s"), ro));
  auto convs = ConversationStore::Open(*store);
  REQUIRE_MESSAGE(convs.ok(), convs.status().ToString());
  const std::string ghost = internal::NewUuid();
  CHECK((*convs)->ListCompactedViews(ghost).status().code() ==
        StatusCode::kNotFound);
  CHECK(Must((*convs)->List()).total == 0);
}

}  // namespace
}  // namespace ctxkit::testing
