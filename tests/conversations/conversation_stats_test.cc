// Statistics of the conversation store: aggregate figures and trends, per
// conversation figures and timeline, the context-window status and the
// optimization tips derived from them.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ctxkit/conversations.h"
#include "ctxkit/model_registry.h"
#include "lib/conversations/conversation_store_internal.h"
#include "tests/conversations/test_helpers.h"

namespace ctxkit {
namespace {

using testing::Fixture;
using testing::Msg;
using testing::Must;

constexpr int64_t kDay = 86400000;

TEST_CASE("UTC days and dates") {
  CHECK(internal::DayOfMillis(0) == 0);
  CHECK(internal::DayOfMillis(kDay - 1) == 0);
  CHECK(internal::DayOfMillis(-1) == -1);
  CHECK(internal::DateOfDay(0) == "1970-01-01");
  CHECK(internal::DateOfDay(-1) == "1969-12-31");
  CHECK(internal::DateOfDay(internal::DayOfMillis(1731664800000)) ==
        "2024-11-15");
  CHECK(internal::DateOfDay(internal::DayOfMillis(951782400000)) ==
        "2000-02-29");
}

TEST_CASE("aggregate statistics: overview, by model, per day and trends") {
  Fixture f;
  Conversation a = Must(f.convs->Create({.title = "a"}));
  Conversation b = Must(f.convs->Create({.title = "b", .model = "gpt-4"}));
  auto a1 = Must(
      f.convs->AddMessages(a.id, {Msg(MessageRole::kSystem, "You are terse."),
                                  Msg(MessageRole::kUser, "What is 2+2?"),
                                  Msg(MessageRole::kAssistant, "4.")}));
  f.clock.Advance(kDay);
  auto b1 = Must(f.convs->AddMessages(
      b.id,
      {Msg(MessageRole::kUser, "Summarize the following long text ..."),
       Msg(MessageRole::kAssistant,
           "It is about a very long text, and the summary is long too.")}));
  f.clock.Advance(3 * kDay);
  NewMessage t = Msg(MessageRole::kTool, "result: ok");
  t.tool_call_id = "c1";
  auto a2 = Must(f.convs->AddMessage(a.id, t));

  AggregateStats s = Must(f.convs->AggregateStats());
  CHECK(s.conversations == 2);
  CHECK(s.messages == 6);
  const uint64_t a_in =
      a1.messages[0].tokens + a1.messages[1].tokens + a2.message.tokens;
  const uint64_t a_out = a1.messages[2].tokens;
  const uint64_t b_in = b1.messages[0].tokens, b_out = b1.messages[1].tokens;
  CHECK(s.input_tokens == a_in + b_in);
  CHECK(s.output_tokens == a_out + b_out);
  CHECK(s.total_tokens == a_in + a_out + b_in + b_out);
  CHECK(s.tool_tokens == a2.message.tokens);
  CHECK(s.system_tokens == a1.messages[0].tokens);
  REQUIRE(s.by_model.size() == 2);
  CHECK(s.by_model[0].model == "claude-3-5-sonnet");
  CHECK(s.by_model[0].conversations == 1);
  CHECK(s.by_model[0].messages == 4);
  CHECK(s.by_model[0].input_tokens == a_in);
  CHECK(s.by_model[0].output_tokens == a_out);
  CHECK(s.by_model[1].model == "gpt-4");
  CHECK(s.by_model[1].input_tokens == b_in);
  REQUIRE(s.days.size() == 3);
  CHECK(s.days[0].date == "2024-11-15");
  CHECK(s.days[1].date == "2024-11-16");
  CHECK(s.days[2].date == "2024-11-19");
  CHECK(s.days[0].tokens() ==
        a1.messages[0].tokens + a1.messages[1].tokens + a1.messages[2].tokens);
  CHECK(s.days[1].tokens() == b_in + b_out);
  CHECK(s.days[2].tokens() == a2.message.tokens);
  CHECK(s.daily_average == doctest::Approx(s.total_tokens / 3.0));
  CHECK(s.weekly_average == doctest::Approx(7 * s.total_tokens / 3.0));
  CHECK(s.peak_day == "2024-11-16");
  CHECK(s.peak_tokens == b_in + b_out);

  // An empty conversation counts as a conversation but adds no day.
  Must(f.convs->Create({.title = "empty", .model = "gpt-4"}));
  s = Must(f.convs->AggregateStats());
  CHECK(s.conversations == 3);
  CHECK(s.by_model[1].conversations == 2);
  CHECK(s.days.size() == 3);

  Fixture none;
  AggregateStats z = Must(none.convs->AggregateStats());
  CHECK(z.conversations == 0);
  CHECK(z.daily_average == 0);
  CHECK(z.peak_day.empty());
}

TEST_CASE("conversation statistics, timeline and token limit") {
  Fixture f;
  Conversation c = Must(f.convs->Create({.title = "t", .model = "gpt-4"}));
  std::vector<AddMessageResult> added;
  for (int i = 0; i < 10; ++i) {
    f.clock.Advance(1000);
    added.push_back(Must(f.convs->AddMessage(
        c.id, Msg(i % 2 ? MessageRole::kAssistant : MessageRole::kUser,
                  std::string(static_cast<size_t>(i + 1) * 10, 'a') + " b"))));
  }
  Must(f.convs->SetCompressed(c.id, {added[0].message.id}, true));
  ConversationStats s = Must(f.convs->ConversationStats(c.id));
  uint64_t total = 0, user = 0, assistant = 0;
  for (const auto& a : added) {
    total += a.message.tokens;
    (a.message.role == MessageRole::kUser ? user : assistant) +=
        a.message.tokens;
  }
  CHECK(s.conversation.id == c.id);
  CHECK(s.total_tokens == total);
  CHECK(s.user_tokens == user);
  CHECK(s.assistant_tokens == assistant);
  CHECK(s.input_tokens == user);
  CHECK(s.output_tokens == assistant);
  CHECK(s.message_count == 10);
  CHECK(s.avg_tokens_per_message == doctest::Approx(total / 10.0));
  CHECK(s.compression_ratio == doctest::Approx(0.1));
  REQUIRE(s.timeline.size() == 10);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < 10; ++i) {
    cumulative += added[i].message.tokens;
    CHECK(s.timeline[i].timestamp == added[i].message.created_at);
    CHECK(s.timeline[i].message_tokens == added[i].message.tokens);
    CHECK(s.timeline[i].cumulative_tokens == cumulative);
  }
  CHECK(s.token_limit.model_limit ==
        ModelRegistry::Default().Resolve("gpt-4").info.context_window);
  CHECK(s.token_limit.current_usage == total);
  CHECK(s.token_limit.status == "safe");

  // Downsampled timelines keep the last point and stay within the bound.
  for (size_t max : {1, 2, 3, 4, 9}) {
    ConversationStats d = Must(f.convs->ConversationStats(c.id, max));
    CHECK(d.timeline.size() <= max);
    CHECK(!d.timeline.empty());
    CHECK(d.timeline.back().cumulative_tokens == total);
    CHECK(std::is_sorted(d.timeline.begin(), d.timeline.end(),
                         [](const TimelinePoint& x, const TimelinePoint& y) {
                           return x.timestamp < y.timestamp;
                         }));
  }
  CHECK(Must(f.convs->ConversationStats(c.id, 10)).timeline.size() == 10);
  CHECK(Must(f.convs->ConversationStats(c.id, 100)).timeline.size() == 10);

  Conversation unknown =
      Must(f.convs->Create({.title = "u", .model = "my-llm"}));
  ConversationStats u = Must(f.convs->ConversationStats(unknown.id));
  CHECK(u.token_limit.status == "unknown");
  CHECK(u.token_limit.model_limit == 0);
  CHECK(u.timeline.empty());
  CHECK(u.avg_tokens_per_message == 0);
}

TEST_CASE("token limit thresholds") {
  CHECK(ComputeTokenLimit(0, 200000).status == "safe");
  CHECK(ComputeTokenLimit(149999, 200000).status == "safe");
  CHECK_FALSE(ComputeTokenLimit(149999, 200000).should_compress);
  CHECK(ComputeTokenLimit(150000, 200000).status == "warning");
  CHECK(ComputeTokenLimit(150000, 200000).should_compress);
  CHECK(ComputeTokenLimit(179999, 200000).status == "warning");
  CHECK(ComputeTokenLimit(180000, 200000).status == "critical");
  CHECK(ComputeTokenLimit(400000, 200000).status == "critical");
  CHECK(ComputeTokenLimit(400000, 200000).percentage == doctest::Approx(200));
  CHECK(ComputeTokenLimit(10, 0).status == "unknown");
  TokenLimit t = ComputeTokenLimit(14, 200000);
  CHECK(t.percentage == doctest::Approx(0.007));
  CHECK(t.action == "Token usage is healthy. No action needed.");
  CHECK(TokenLimitForModel("claude-3-5-sonnet", 14).model_limit == 200000);
  CHECK(TokenLimitForModel("nothing-like-it", 14).status == "unknown");
}

bool HasTip(const std::vector<OptimizationTip>& tips,
            const std::string& category, const std::string& priority) {
  return std::any_of(tips.begin(), tips.end(), [&](const OptimizationTip& t) {
    return t.category == category && t.priority == priority;
  });
}

TEST_CASE("general tips follow the documented rules") {
  AggregateStats s;
  auto tips = GeneralTips(s, std::nullopt);
  CHECK(HasTip(tips, "token_management", "low"));
  CHECK_FALSE(HasTip(tips, "caching", "low"));
  CHECK(HasTip(tips, "best_practices", "low"));
  // Seed 000's example: 25 conversations, 450 messages, 125000 tokens, 67.8%.
  s.conversations = 25;
  s.messages = 450;
  s.total_tokens = 125000;
  s.compressed_messages = 3;
  tips = GeneralTips(s, 67.8);
  REQUIRE(tips.size() == 4);
  CHECK(tips[0].category == "token_management");
  CHECK(tips[0].priority == "medium");
  CHECK(tips[0].tip == "Token usage is moderate across conversations");
  CHECK(tips[1].category == "caching");
  CHECK(tips[1].priority == "low");
  CHECK(tips[1].tip == "Cache is performing well");
  CHECK(tips[2].tip == "Use optimize_query before sending long prompts");
  CHECK(tips[3].tip == "Track reference materials separately");
  s.total_tokens = 25 * 20000;
  CHECK(HasTip(GeneralTips(s, 10.0), "token_management", "high"));
  CHECK(HasTip(GeneralTips(s, 10.0), "caching", "high"));
  CHECK(HasTip(GeneralTips(s, 30.0), "caching", "medium"));
  s.compressed_messages = 0;
  CHECK(HasTip(GeneralTips(s, 30.0), "compression", "medium"));
}

TEST_CASE("conversation tips follow the documented rules") {
  ConversationStats s;
  s.token_limit = ComputeTokenLimit(1000, 200000);
  auto tips = ConversationTips(s);
  REQUIRE(tips.size() == 1);
  CHECK(tips[0].priority == "low");
  CHECK(tips[0].tip == "Conversation is within healthy limits");

  s.token_limit = ComputeTokenLimit(190000, 200000);
  s.message_count = 42;
  tips = ConversationTips(s);
  REQUIRE(tips.size() == 3);
  CHECK(tips[0].category == "token_management");
  CHECK(tips[0].priority == "high");
  CHECK(tips[0].tip == "Token usage is approaching model limit");
  CHECK(tips[1].category == "conversation_length");
  CHECK(tips[1].priority == "medium");
  CHECK(tips[2].category == "compression");
  CHECK(tips[2].tip == "No messages have been compressed yet");

  s.token_limit = ComputeTokenLimit(160000, 200000);
  s.message_count = 250;
  s.conversation.compressed_count = 5;
  s.avg_tokens_per_message = 1500;
  tips = ConversationTips(s);
  CHECK(HasTip(tips, "token_management", "medium"));
  CHECK(HasTip(tips, "conversation_length", "high"));
  CHECK_FALSE(HasTip(tips, "compression", "medium"));
  CHECK(HasTip(tips, "message_size", "medium"));
  s.token_limit = ComputeTokenLimit(1, 0);
  CHECK(HasTip(ConversationTips(s), "token_management", "low"));
}

}  // namespace
}  // namespace ctxkit
