// Seed 000's resources, resource templates, prompts and completion
// candidates (programs/ctxkit/tools/{resources,prompts,completions}.cc),
// called through their catalog rows over a temporary store holding real
// conversations, messages, references and cache entries.

#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/references.h"
#include "doctest/doctest.h"
#include "programs/ctxkit/host/services.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/tools/adapters.h"
#include "simdjson.h"
#include "tests/host/host_fixture.h"
#include "tests/unit/test_util.h"

namespace ctxkit::tools {
namespace {

using mcp::PromptArgument;

using testing::TempServices;
using testing::TestContext;

// A parsed resource document.
struct Doc {
  std::string text;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
};

// Reads `uri` as the session does: a static resource by its URI, else the
// template whose fixed prefix starts it. The status when the handler fails.
StatusOr<std::unique_ptr<Doc>> Read(std::string_view uri,
                                    mcp::RequestContext& context) {
  std::optional<StatusOr<mcp::ResourceContent>> content;
  for (const mcp::ResourceSpec& r : SeedResources()) {
    if (r.uri == uri) content.emplace(r.handler(context));
  }
  if (!content) {
    for (const mcp::ResourceTemplateSpec& t : SeedResourceTemplates()) {
      const std::string_view prefix =
          t.uri_template.substr(0, t.uri_template.find('{'));
      if (uri.size() > prefix.size() && uri.starts_with(prefix)) {
        content.emplace(t.handler(uri.substr(prefix.size()), context));
        break;
      }
    }
  }
  REQUIRE_MESSAGE(content.has_value(), "no resource for ", uri);
  if (!content->ok()) return content->status();
  auto doc = std::make_unique<Doc>();
  doc->text = (*content)->text;
  CHECK((*content)->mime_type == "application/json");
  REQUIRE_MESSAGE(
      doc->parser.parse(doc->text).get(doc->root) == simdjson::SUCCESS,
      doc->text);
  return doc;
}

std::unique_ptr<Doc> ReadOk(std::string_view uri,
                            mcp::RequestContext& context) {
  auto doc = Read(uri, context);
  REQUIRE_MESSAGE(doc.ok(), uri, ": ", doc.status().ToString());
  return *std::move(doc);
}

// Accessors that fail the test on a missing member or a wrong type; E is
// an element or a lookup result.
using Result = simdjson::simdjson_result<simdjson::dom::element>;

template <typename E>
uint64_t U(E e) {
  uint64_t v = 0;
  REQUIRE(e.get(v) == simdjson::SUCCESS);
  return v;
}
template <typename E>
double D(E e) {
  double v = 0;
  REQUIRE(e.get(v) == simdjson::SUCCESS);
  return v;
}
template <typename E>
std::string_view S(E e) {
  std::string_view v;
  REQUIRE(e.get(v) == simdjson::SUCCESS);
  return v;
}
template <typename E>
bool B(E e) {
  bool v = false;
  REQUIRE(e.get(v) == simdjson::SUCCESS);
  return v;
}
template <typename E>
simdjson::dom::array A(E e) {
  simdjson::dom::array a;
  REQUIRE(e.get(a) == simdjson::SUCCESS);
  return a;
}
template <typename E>
size_t Size(E e) {
  return A(e).size();
}
template <typename E>
bool Has(E object, std::string_view key) {
  simdjson::dom::element unused;
  return object[key].get(unused) == simdjson::SUCCESS;
}

const mcp::PromptSpec& PromptNamed(std::string_view name) {
  for (const mcp::PromptSpec& p : SeedPrompts()) {
    if (p.name == name) return p;
  }
  FAIL("no prompt ", name);
  return SeedPrompts()[0];
}

StatusOr<mcp::PromptOutput> GetPrompt(std::string_view name,
                                      std::vector<PromptArgument> arguments,
                                      mcp::RequestContext& context) {
  return PromptNamed(name).handler(arguments, context);
}

std::string PromptText(std::string_view name,
                       std::vector<PromptArgument> arguments,
                       mcp::RequestContext& context) {
  auto output = GetPrompt(name, std::move(arguments), context);
  REQUIRE_MESSAGE(output.ok(), output.status().ToString());
  REQUIRE(output->messages.size() == 1);
  CHECK(output->messages[0].role == "user");
  CHECK_FALSE(output->description.empty());
  return output->messages[0].text;
}

using testing::Contains;

// Lets the millisecond clock of the stores move on.
void Tick() { std::this_thread::sleep_for(std::chrono::milliseconds(3)); }

// What the store holds for the tests: two conversations with messages,
// references and a cache entry with one hit and one miss.
struct Fixture {
  TempServices temp;
  TestContext context{temp.get()};
  Conversation review;  // claude-3-5-sonnet, 4 messages, 2 references
  Conversation chat;    // gpt-4o, 1 system message
  std::string cache_key;
  uint64_t cache_tokens = 0;

  Fixture() {
    ConversationStore& conversations = *temp.get().conversations;
    NewConversation a;
    a.title = "Code Review Session";
    auto created = conversations.Create(a);
    REQUIRE(created.ok());
    // Distinct times make "newest" and "most recently updated" one answer.
    Tick();
    NewConversation b;
    b.title = "GPT chat";
    b.model = "gpt-4o";
    auto created_b = conversations.Create(b);
    REQUIRE(created_b.ok());
    const std::vector<NewMessage> messages = {
        {.role = MessageRole::kUser,
         .content = "Please review this function: function add(a, b) { "
                    "return a + b; }"},
        {.role = MessageRole::kAssistant,
         .content = "The function is simple and correct."},
        {.role = MessageRole::kUser,
         .content = "How can I optimize this for token usage?"},
        {.role = MessageRole::kAssistant,
         .content = "",
         .tool_calls =
             R"([{"id":"c1","type":"function","function":{"name":"compress_context","arguments":"{}"}}])"},
    };
    for (const NewMessage& m : messages) {
      REQUIRE(conversations.AddMessage(created->id, m).ok());
    }
    Tick();
    auto added = conversations.AddMessage(
        created_b->id,
        {.role = MessageRole::kSystem, .content = "You are helpful."});
    REQUIRE(added.ok());
    review = conversations.Get(created->id, false)->conversation;
    chat = added->conversation;

    ReferenceStore& references = *temp.get().references;
    NewReference code;
    code.conversation_id = review.id;
    code.type = "code";
    code.title = "Token Counter Implementation";
    code.content = "function countTokens(text: string): number { return 1; }";
    code.metadata = R"({"language":"typescript"})";
    REQUIRE(references.Add(code).ok());
    NewReference note;
    note.type = "note";
    note.title = "A note";
    note.content = "Keep prompts short.";
    REQUIRE(references.Add(note).ok());

    Cache& cache = *temp.get().cache;
    CachePutOptions put;
    put.prefix = "system-prompts";
    auto stored = cache.Put("You are a careful code reviewer.", put);
    REQUIRE(stored.ok());
    cache_key = stored->key;
    cache_tokens = stored->tokens;
    REQUIRE(cache.Get(cache_key).ok());
    REQUIRE(cache.Check("never stored").ok());
  }
};

// ---- resources ----

TEST_CASE("the catalog rows: five resources and four templates in seed order") {
  std::vector<std::string_view> uris;
  for (const mcp::ResourceSpec& r : SeedResources()) {
    uris.push_back(r.uri);
    CHECK((r.handler != nullptr));
    CHECK(r.mime_type == "application/json");
    CHECK_FALSE(r.description.empty());
  }
  CHECK(uris == std::vector<std::string_view>{
                    "conversation-history://all", "token-stats://aggregate",
                    "cache-stats://current", "optimization-tips://general",
                    "reference-library://all"});
  std::vector<std::string_view> templates;
  for (const mcp::ResourceTemplateSpec& t : SeedResourceTemplates()) {
    templates.push_back(t.uri_template);
    CHECK((t.handler != nullptr));
    CHECK((t.complete == &CompleteConversationId));
  }
  CHECK(templates == std::vector<std::string_view>{
                         "conversation-history://{conversation_id}",
                         "token-stats://{conversation_id}",
                         "optimization-tips://{conversation_id}",
                         "reference-library://{conversation_id}"});
}

TEST_CASE("conversation-history://all lists every conversation, newest first") {
  Fixture f;
  auto doc = ReadOk("conversation-history://all", f.context);
  CHECK(U(doc->root["total"]) == 2);
  REQUIRE(Size(doc->root["conversations"]) == 2);
  Result first = doc->root["conversations"].at(0);
  Result second = doc->root["conversations"].at(1);
  CHECK(S(first["id"]) == f.chat.id);
  CHECK(S(second["id"]) == f.review.id);
  CHECK(S(second["title"]) == "Code Review Session");
  CHECK(S(second["model"]) == "claude-3-5-sonnet");
  CHECK(U(second["message_count"]) == 4);
  CHECK(U(second["total_tokens"]) == f.review.total_tokens);
  CHECK(f.review.total_tokens > 0);
  CHECK(U(second["created_at"]) == static_cast<uint64_t>(f.review.created_at));
  CHECK(U(second["updated_at"]) == static_cast<uint64_t>(f.review.updated_at));
  CHECK(S(first["last_message"]) == "You are helpful.");
}

TEST_CASE(
    "conversation-history://all pages through more than one listing page") {
  TempServices temp;
  TestContext context(temp.get());
  const size_t n = ConversationLimits::kMaxListLimit + 5;
  for (size_t i = 0; i < n; ++i) {
    NewConversation c;
    c.title = "c" + std::to_string(i);
    REQUIRE(temp.get().conversations->Create(c).ok());
  }
  auto doc = ReadOk("conversation-history://all", context);
  CHECK(U(doc->root["total"]) == n);
  REQUIRE(Size(doc->root["conversations"]) == n);
  std::vector<std::string> ids;
  simdjson::dom::array all = A(doc->root["conversations"]);
  for (simdjson::dom::element c : all) ids.emplace_back(S(c["id"]));
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());

  // Empty prefix: the newest first, and the count is known.
  mcp::Completions some = CompleteConversationId("", 3, context);
  CHECK(some.values.size() == 3);
  REQUIRE(some.total.has_value());
  CHECK(*some.total == n);
  CHECK(some.values[0] == S(doc->root["conversations"].at(0)["id"]));

  context.cancelled = true;
  auto cancelled = Read("conversation-history://all", context);
  REQUIRE_FALSE(cancelled.ok());
  CHECK(cancelled.status().code() == StatusCode::kCancelled);
}

TEST_CASE("conversation-history://{id}: messages and statistics") {
  Fixture f;
  REQUIRE(
      f.temp.get()
          .conversations
          ->SetCompressed(
              f.review.id,
              {f.temp.get().conversations->Get(f.review.id)->messages[0].id},
              true)
          .ok());
  auto detail = f.temp.get().conversations->Get(f.review.id);
  REQUIRE(detail.ok());
  const Conversation& c = detail->conversation;
  auto doc = ReadOk("conversation-history://" + f.review.id, f.context);
  CHECK(S(doc->root["conversation"]["id"]) == f.review.id);
  CHECK(S(doc->root["conversation"]["title"]) == "Code Review Session");
  CHECK(U(doc->root["conversation"]["total_tokens"]) == c.total_tokens);
  CHECK(U(doc->root["conversation"]["message_count"]) == 4);
  REQUIRE(Size(doc->root["messages"]) == 4);
  for (size_t i = 0; i < 4; ++i) {
    Result m = doc->root["messages"].at(i);
    CHECK(S(m["id"]) == detail->messages[i].id);
    CHECK(S(m["role"]) == MessageRoleName(detail->messages[i].role));
    CHECK(S(m["content"]) == detail->messages[i].content);
    CHECK(U(m["tokens"]) == detail->messages[i].tokens);
    CHECK(U(m["created_at"]) ==
          static_cast<uint64_t>(detail->messages[i].created_at));
  }
  CHECK(B(doc->root["messages"].at(0)["is_compressed"]));
  CHECK_FALSE(B(doc->root["messages"].at(1)["is_compressed"]));
  CHECK(Has(doc->root["messages"].at(3), "tool_calls"));
  Result stats = doc->root["statistics"];
  CHECK(D(stats["avg_tokens_per_message"]) ==
        doctest::Approx(static_cast<double>(c.total_tokens) / 4));
  CHECK(U(stats["total_user_tokens"]) == c.user_tokens);
  CHECK(U(stats["total_assistant_tokens"]) == c.assistant_tokens);
  CHECK(c.user_tokens + c.assistant_tokens == c.total_tokens);
  CHECK(D(stats["compression_ratio"]) == doctest::Approx(0.25));
}

TEST_CASE("templated resources: an id naming no conversation is NOT_FOUND") {
  Fixture f;
  for (std::string_view scheme :
       {"conversation-history://", "token-stats://", "optimization-tips://",
        "reference-library://"}) {
    for (std::string_view id :
         {"00000000-0000-4000-8000-000000000000", "xyz", "all"}) {
      // "all" is a static resource for two schemes only.
      if (id == "all" &&
          (scheme == std::string_view("conversation-history://") ||
           scheme == std::string_view("reference-library://"))) {
        continue;
      }
      auto doc = Read(std::string(scheme) + std::string(id), f.context);
      REQUIRE_FALSE_MESSAGE(doc.ok(), scheme, id);
      CHECK_MESSAGE(doc.status().code() == StatusCode::kNotFound, scheme, id,
                    " ", doc.status().ToString());
    }
  }
}

TEST_CASE("token-stats://aggregate: the store's totals and the cache's") {
  Fixture f;
  auto stats = f.temp.get().conversations->AggregateStats();
  REQUIRE(stats.ok());
  auto doc = ReadOk("token-stats://aggregate", f.context);
  Result overview = doc->root["overview"];
  CHECK(U(overview["total_conversations"]) == 2);
  CHECK(U(overview["total_messages"]) == 5);
  CHECK(U(overview["total_input_tokens"]) == stats->input_tokens);
  CHECK(U(overview["total_output_tokens"]) == stats->output_tokens);
  CHECK(U(overview["total_tokens"]) ==
        f.review.total_tokens + f.chat.total_tokens);
  CHECK(U(overview["total_cached_tokens"]) == f.cache_tokens);
  CHECK(U(doc->root["by_model"]["claude-3-5-sonnet"]["conversations"]) == 1);
  CHECK(U(doc->root["by_model"]["claude-3-5-sonnet"]["cached_tokens"]) ==
        f.cache_tokens);
  CHECK(U(doc->root["by_model"]["gpt-4o"]["input_tokens"]) ==
        f.chat.total_tokens);
  CHECK(D(doc->root["cache_efficiency"]["cache_hit_rate"]) ==
        doctest::Approx(50.0));
  CHECK(U(doc->root["cache_efficiency"]["tokens_saved"]) == f.cache_tokens);
  CHECK(U(doc->root["trends"]["peak_tokens"]) == stats->total_tokens);
  CHECK(S(doc->root["trends"]["peak_day"]) == stats->peak_day);
  CHECK(Size(doc->root["days"]) == 1);
}

TEST_CASE("token-stats://{id}: statistics, timeline and the context window") {
  Fixture f;
  auto doc = ReadOk("token-stats://" + f.review.id, f.context);
  CHECK(S(doc->root["conversation_id"]) == f.review.id);
  CHECK(S(doc->root["title"]) == "Code Review Session");
  CHECK(S(doc->root["model"]) == "claude-3-5-sonnet");
  Result s = doc->root["statistics"];
  CHECK(U(s["total_tokens"]) == f.review.total_tokens);
  CHECK(U(s["input_tokens"]) == f.review.input_tokens());
  CHECK(U(s["output_tokens"]) == f.review.output_tokens());
  CHECK(U(s["message_count"]) == 4);
  REQUIRE(Size(doc->root["timeline"]) == 4);
  CHECK(U(doc->root["timeline"].at(3)["cumulative_tokens"]) ==
        f.review.total_tokens);
  auto window = ModelRegistry::Default().Find("claude-3-5-sonnet");
  REQUIRE(window.ok());
  CHECK(U(doc->root["token_limit"]["model_limit"]) == window->context_window);
  CHECK(U(doc->root["token_limit"]["current_usage"]) == f.review.total_tokens);
  CHECK(S(doc->root["token_limit"]["status"]) == "safe");
}

TEST_CASE("cache-stats://current is the cache's statistics document") {
  Fixture f;
  auto doc = ReadOk("cache-stats://current", f.context);
  Result overview = doc->root["overview"];
  CHECK(U(overview["total_entries"]) == 1);
  CHECK(U(overview["total_hits"]) == 1);
  CHECK(U(overview["total_misses"]) == 1);
  CHECK(D(overview["hit_rate"]) == doctest::Approx(50.0));
  CHECK(U(overview["tokens_saved"]) == f.cache_tokens);
  CHECK(S(doc->root["performance"]["most_cached_prefix"]) == "system-prompts");
  REQUIRE(Size(doc->root["top_entries"]) == 1);
  CHECK(S(doc->root["top_entries"].at(0)["key"]) == f.cache_key);
  CHECK(U(doc->root["by_prefix"]["system-prompts"]["entries"]) == 1);
  CHECK(Size(doc->root["recommendations"]) >= 1);
}

TEST_CASE("optimization-tips://general: overview, tips and the tools") {
  Fixture f;
  auto doc = ReadOk("optimization-tips://general", f.context);
  CHECK(U(doc->root["overview"]["total_conversations"]) == 2);
  CHECK(U(doc->root["overview"]["total_messages"]) == 5);
  CHECK(U(doc->root["overview"]["total_tokens"]) ==
        f.review.total_tokens + f.chat.total_tokens);
  CHECK(D(doc->root["overview"]["cache_hit_rate"]) == doctest::Approx(50.0));
  std::vector<std::string> categories;
  simdjson::dom::array tips = A(doc->root["tips"]);
  for (simdjson::dom::element tip : tips) {
    categories.emplace_back(S(tip["category"]));
    CHECK_FALSE(S(tip["action"]).empty());
  }
  CHECK(categories == std::vector<std::string>{"token_management", "caching",
                                               "best_practices",
                                               "best_practices"});
  CHECK_FALSE(S(doc->root["resources"]["documentation"]).empty());
  std::vector<std::string_view> tools;
  simdjson::dom::array listed = A(doc->root["resources"]["tools_available"]);
  for (simdjson::dom::element t : listed) tools.push_back(S(t));
  std::vector<std::string_view> expected;
  for (const mcp::ToolSpec& tool : mcp::Tools()) expected.push_back(tool.name);
  CHECK(tools == expected);
  CHECK(std::find(tools.begin(), tools.end(), "optimize_query") != tools.end());
}

TEST_CASE("optimization-tips://{id}: the conversation's tips") {
  Fixture f;
  auto doc = ReadOk("optimization-tips://" + f.review.id, f.context);
  CHECK(S(doc->root["conversation"]["id"]) == f.review.id);
  CHECK(U(doc->root["conversation"]["current_tokens"]) ==
        f.review.total_tokens);
  CHECK(U(doc->root["conversation"]["message_count"]) == 4);
  REQUIRE(Size(doc->root["tips"]) == 1);
  CHECK(S(doc->root["tips"].at(0)["tip"]) ==
        "Conversation is within healthy limits");

  // Ten messages, none compressed: the compression tip.
  std::vector<NewMessage> more(10, NewMessage{.content = "more words here"});
  REQUIRE(f.temp.get().conversations->AddMessages(f.review.id, more).ok());
  doc = ReadOk("optimization-tips://" + f.review.id, f.context);
  CHECK(U(doc->root["conversation"]["message_count"]) == 14);
  bool compression = false;
  simdjson::dom::array tips = A(doc->root["tips"]);
  for (simdjson::dom::element tip : tips) {
    if (S(tip["category"]) == "compression") {
      compression = true;
      CHECK(S(tip["tip"]) == "No messages have been compressed yet");
    }
  }
  CHECK(compression);
}

TEST_CASE("reference-library://all and ://{id}") {
  Fixture f;
  auto all = ReadOk("reference-library://all", f.context);
  CHECK(U(all->root["overview"]["total_references"]) == 2);
  CHECK(U(all->root["overview"]["by_type"]["code"]) == 1);
  CHECK(U(all->root["overview"]["by_type"]["note"]) == 1);
  REQUIRE(Size(all->root["references"]) == 2);
  Result code = all->root["references"].at(0);
  CHECK(S(code["title"]) == "Token Counter Implementation");
  CHECK(S(code["conversation_id"]) == f.review.id);
  CHECK(S(code["type"]) == "code");
  CHECK(Has(code, "preview"));
  CHECK_FALSE(Has(code, "content"));
  CHECK(U(code["tokens"]) > 0);
  // Belonging to no conversation is said, not left out.
  CHECK(all->root["references"].at(1)["conversation_id"].is_null());
  const uint64_t total =
      U(code["tokens"]) + U(all->root["references"].at(1)["tokens"]);
  CHECK(U(all->root["overview"]["total_tokens"]) == total);

  auto one = ReadOk("reference-library://" + f.review.id, f.context);
  CHECK(S(one->root["conversation"]["id"]) == f.review.id);
  CHECK(S(one->root["conversation"]["title"]) == "Code Review Session");
  REQUIRE(Size(one->root["references"]) == 1);
  Result r = one->root["references"].at(0);
  CHECK(S(r["content"]) ==
        "function countTokens(text: string): number { return 1; }");
  CHECK(S(r["metadata"]["language"]) == "typescript");
  CHECK(U(one->root["statistics"]["total_references"]) == 1);
  CHECK(U(one->root["statistics"]["by_type"]["code"]) == 1);

  auto none = ReadOk("reference-library://" + f.chat.id, f.context);
  CHECK(Size(none->root["references"]) == 0);
  CHECK(U(none->root["statistics"]["total_references"]) == 0);
}

// ---- completions ----

TEST_CASE("CompleteConversationId: prefixes, case, limit and total") {
  Fixture f;
  mcp::Completions all = CompleteConversationId("", 10, f.context);
  CHECK(all.values == std::vector<std::string>{f.chat.id, f.review.id});
  CHECK(all.total == std::optional<size_t>(2));

  std::string upper = f.review.id.substr(0, 8);
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  mcp::Completions one = CompleteConversationId(upper, 10, f.context);
  // Both ids could share 8 hex digits only by a 1 in 4 billion chance.
  CHECK(one.values == std::vector<std::string>{f.review.id});
  CHECK(one.total == std::optional<size_t>(1));

  mcp::Completions limited = CompleteConversationId("", 1, f.context);
  CHECK(limited.values == std::vector<std::string>{f.chat.id});
  CHECK(limited.total == std::optional<size_t>(2));

  mcp::Completions nothing = CompleteConversationId("zz", 10, f.context);
  CHECK(nothing.values.empty());
  CHECK(nothing.total == std::optional<size_t>(0));

  CHECK(CompleteConversationId("", 0, f.context).values.empty());
}

TEST_CASE("prompt argument completions: extract_type lists its choices") {
  Fixture f;
  const mcp::PromptSpec& extract = PromptNamed("extract_essentials");
  mcp::CompletionHandler types = nullptr;
  mcp::CompletionHandler models = nullptr;
  for (const mcp::PromptArgumentSpec& a : extract.arguments) {
    if (a.name == "extract_type") types = a.complete;
    if (a.name == "model") models = a.complete;
    if (a.name == "conversation_id") {
      CHECK((a.complete == &CompleteConversationId));
    }
  }
  REQUIRE((types != nullptr));
  CHECK(types("", 10, f.context).values ==
        std::vector<std::string>{"facts", "code", "decisions", "questions",
                                 "all"});
  mcp::Completions d = types("d", 10, f.context);
  CHECK(d.values == std::vector<std::string>{"decisions"});
  CHECK(d.total == std::optional<size_t>(1));
  CHECK(types("x", 10, f.context).values.empty());
  CHECK(types("", 2, f.context).values.size() == 2);
  CHECK(types("", 2, f.context).total == std::optional<size_t>(5));
  REQUIRE((models != nullptr));
  mcp::Completions gpt = models("gpt-4o", 100, f.context);
  CHECK(std::find(gpt.values.begin(), gpt.values.end(), "gpt-4o") !=
        gpt.values.end());
  for (const std::string& v : gpt.values) CHECK(v.starts_with("gpt-4o"));

  for (const mcp::PromptSpec& p : SeedPrompts()) {
    for (const mcp::PromptArgumentSpec& a : p.arguments) {
      if (a.name == "conversation_id") {
        CHECK((a.complete == &CompleteConversationId));
        CHECK(a.required == (p.name == "compress_conversation"));
      }
    }
  }
}

// ---- prompts ----

std::string IsoOf(int64_t ms) {
  const time_t seconds = static_cast<time_t>(ms / 1000);
  struct tm tm;
  REQUIRE(gmtime_r(&seconds, &tm) != nullptr);
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buffer;
}

TEST_CASE("the three prompts in seed order, with their arguments") {
  std::vector<std::string_view> names;
  for (const mcp::PromptSpec& p : SeedPrompts()) names.push_back(p.name);
  CHECK(names == std::vector<std::string_view>{"summarize_context",
                                               "compress_conversation",
                                               "extract_essentials"});
  auto argument_names = [](std::string_view prompt) {
    std::vector<std::string_view> out;
    for (const mcp::PromptArgumentSpec& a : PromptNamed(prompt).arguments) {
      out.push_back(a.name);
    }
    return out;
  };
  CHECK(argument_names("summarize_context") ==
        std::vector<std::string_view>{"conversation_id", "focus",
                                      "max_summary_tokens"});
  CHECK(argument_names("compress_conversation") ==
        std::vector<std::string_view>{"conversation_id",
                                      "target_reduction_percent",
                                      "preserve_recent_count"});
  CHECK(argument_names("extract_essentials") ==
        std::vector<std::string_view>{"conversation_id", "content",
                                      "extract_type", "model"});
}

TEST_CASE("summarize_context is filled from the conversation") {
  Fixture f;
  const std::string text =
      PromptText("summarize_context",
                 {{"conversation_id", f.review.id},
                  {"focus", "technical decisions and code patterns"},
                  {"max_summary_tokens", "500"}},
                 f.context);
  CHECK(
      text.starts_with("# Conversation Summarization Request\n\n"
                       "**Conversation:** Code Review Session\n"
                       "**Model:** claude-3-5-sonnet\n**Messages:** 4\n"
                       "**Total Tokens:** " +
                       std::to_string(f.review.total_tokens) + "\n" +
                       "**Created:** " + IsoOf(f.review.created_at) +
                       "\n\n## Conversation History\n\n"
                       "[USER]: Please review this function: function "
                       "add(a, b) { return a + b; }\n\n"
                       "[ASSISTANT]: The function is simple and correct."
                       "\n\n[USER]: How can I optimize this for token "
                       "usage?\n\n[ASSISTANT]: [tool calls: "));
  CHECK(Contains(text,
                 "**Special Focus:** technical decisions and code "
                 "patterns\n"));
  CHECK(Contains(text, "- Keep summary under 500 tokens\n"));
  CHECK(Contains(text, "**Unresolved Items:**"));
  CHECK(text.ends_with("Now provide the summary:"));

  const std::string plain = PromptText(
      "summarize_context", {{"conversation_id", f.review.id}}, f.context);
  CHECK_FALSE(Contains(plain, "Special Focus"));
  CHECK_FALSE(Contains(plain, "Keep summary under"));
  // An empty value is as if not given.
  CHECK(PromptText("summarize_context",
                   {{"conversation_id", f.review.id}, {"focus", ""}},
                   f.context) == plain);
}

TEST_CASE("summarize_context without an id: the most recently updated one") {
  Fixture f;
  // The chat was updated last by the fixture.
  CHECK(Contains(PromptText("summarize_context", {}, f.context),
                 "**Conversation:** GPT chat\n"));
  Tick();
  REQUIRE(f.temp.get()
              .conversations
              ->AddMessage(f.review.id, {.content = "One more question."})
              .ok());
  const std::string text = PromptText("summarize_context", {}, f.context);
  CHECK(Contains(text, "**Conversation:** Code Review Session\n"));
  CHECK(Contains(text, "**Messages:** 5\n"));
  CHECK(Contains(text, "[USER]: One more question."));
  CHECK_FALSE(f.context.logs.empty());

  TempServices empty;
  TestContext context(empty.get());
  for (std::string_view prompt : {"summarize_context", "extract_essentials"}) {
    auto output = GetPrompt(prompt, {}, context);
    REQUIRE_FALSE(output.ok());
    CHECK(output.status().code() == StatusCode::kInvalidArgument);
    CHECK(Contains(output.status().message(), "conversation_id"));
  }
}

TEST_CASE("prompt arguments: numbers are parsed strictly") {
  Fixture f;
  struct Case {
    std::string_view prompt;
    std::string_view argument;
    std::string_view value;
  };
  const Case cases[] = {
      {"summarize_context", "max_summary_tokens", "abc"},
      {"summarize_context", "max_summary_tokens", "0"},
      {"summarize_context", "max_summary_tokens", "-5"},
      {"summarize_context", "max_summary_tokens", "1e3"},
      {"summarize_context", "max_summary_tokens", " 5"},
      {"summarize_context", "max_summary_tokens", "5.0"},
      {"summarize_context", "max_summary_tokens", "99999999999999999999999"},
      {"compress_conversation", "target_reduction_percent", "0"},
      {"compress_conversation", "target_reduction_percent", "100"},
      {"compress_conversation", "target_reduction_percent", "50%"},
      {"compress_conversation", "preserve_recent_count", "-1"},
      {"compress_conversation", "preserve_recent_count", "+3"},
      {"compress_conversation", "preserve_recent_count", "0x10"},
  };
  for (const Case& c : cases) {
    auto output = GetPrompt(
        c.prompt, {{"conversation_id", f.review.id}, {c.argument, c.value}},
        f.context);
    REQUIRE_FALSE_MESSAGE(output.ok(), c.argument, "=", c.value);
    CHECK(output.status().code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(Contains(output.status().message(), c.argument),
                  output.status().message());
  }
}

TEST_CASE("compress_conversation computes the target") {
  Fixture f;
  const uint64_t total = f.review.total_tokens;
  const std::string text = PromptText("compress_conversation",
                                      {{"conversation_id", f.review.id},
                                       {"target_reduction_percent", "60"},
                                       {"preserve_recent_count", "3"}},
                                      f.context);
  const uint64_t target = (total * 40 + 50) / 100;
  CHECK(text.starts_with(
      "# Conversation Compression Request\n\nYou are an expert at "
      "compressing conversation context while preserving essential "
      "information.\n\n## Original Conversation\n\n"
      "**Title:** Code Review Session\n**Model:** claude-3-5-sonnet\n"
      "**Messages:** 4\n**Current Tokens:** " +
      std::to_string(total) + "\n**Target:** Reduce by 60% to ~" +
      std::to_string(target) +
      " tokens\n\n## Full Conversation History\n\n"
      "[USER]: Please review"));
  CHECK(Contains(text, "compress this conversation by 60% while:"));
  CHECK(Contains(text, "- The most recent 3 messages (keep verbatim)\n"));
  CHECK(Contains(text, "// Most recent 3 messages (verbatim)"));
  CHECK(Contains(text, "**Target:** ~" + std::to_string(target) + " tokens\n"));
  CHECK(text.ends_with("Now compress the conversation:"));

  // Defaults: 50%, 5 recent messages (only 4 exist: all of them).
  const std::string defaults = PromptText(
      "compress_conversation", {{"conversation_id", f.review.id}}, f.context);
  CHECK(Contains(defaults, "Reduce by 50% to ~" +
                               std::to_string((total * 50 + 50) / 100) +
                               " tokens"));
  CHECK(Contains(defaults, "- The most recent 4 messages (keep verbatim)"));

  const std::string none = PromptText(
      "compress_conversation",
      {{"conversation_id", f.review.id}, {"preserve_recent_count", "0"}},
      f.context);
  CHECK_FALSE(Contains(none, "The most recent"));
  CHECK(Contains(none, "\"recent_messages\": []"));

  auto unknown = GetPrompt(
      "compress_conversation",
      {{"conversation_id", "00000000-0000-4000-8000-000000000000"}}, f.context);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  auto empty =
      GetPrompt("compress_conversation", {{"conversation_id", ""}}, f.context);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("extract_essentials: every section, or only the one asked for") {
  Fixture f;
  const std::string all = PromptText(
      "extract_essentials", {{"conversation_id", f.review.id}}, f.context);
  CHECK(all.starts_with(
      "# Essential Information Extraction\n\nExtract essential information "
      "from the following conversation.\n\n## Source Conversation\n\n"
      "**Title:** Code Review Session\n**Model:** claude-3-5-sonnet\n"
      "**Messages:** 4\n**Tokens:** " +
      std::to_string(f.review.total_tokens) +
      "\n\n## Full Content\n\n[USER]: Please review"));
  for (std::string_view section :
       {"### Facts\n", "### Code\n", "### Decisions\n", "### Questions\n",
        "\"facts\": [", "\"code\": [", "\"decisions\": [", "\"questions\": [",
        "\"total_facts\": 0", "\"answered_questions\": 0"}) {
    CHECK_MESSAGE(Contains(all, section), section);
  }
  CHECK(all.ends_with("Now extract the essential information:"));
  CHECK(PromptText("extract_essentials",
                   {{"conversation_id", f.review.id}, {"extract_type", "all"}},
                   f.context) == all);

  const std::string code = PromptText(
      "extract_essentials",
      {{"conversation_id", f.review.id}, {"extract_type", "code"}}, f.context);
  CHECK(Contains(code, "### Code\n"));
  CHECK(Contains(code, "\"code\": ["));
  CHECK(
      Contains(code, "\"statistics\": {\n    \"total_code_snippets\": 0\n  }"));
  for (std::string_view absent :
       {"### Facts", "### Decisions", "### Questions", "\"facts\"",
        "\"total_facts\"", "\"questions\""}) {
    CHECK_FALSE_MESSAGE(Contains(code, absent), absent);
  }

  auto bad = GetPrompt(
      "extract_essentials",
      {{"conversation_id", f.review.id}, {"extract_type", "everything"}},
      f.context);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(bad.status().message(), "extract_type"));
}

TEST_CASE("extract_essentials from given content, counted with the model") {
  Fixture f;
  const std::string content = "We decided to use LMDB. Is the map size fixed?";
  const std::string text = PromptText("extract_essentials",
                                      {{"content", content},
                                       {"model", "gpt-4o"},
                                       {"extract_type", "questions"}},
                                      f.context);
  auto count = CountTokens("gpt-4o", content);
  REQUIRE(count.ok());
  CHECK(Contains(text,
                 "from the following content.\n\n## Source Content\n\n"
                 "**Model:** gpt-4o\n**Tokens:** " +
                     std::to_string(count->tokens) + "\n\n## Full Content\n\n" +
                     content + "\n\n---"));
  CHECK(Contains(text, "### Questions\n"));
  CHECK_FALSE(Contains(text, "### Facts"));
  CHECK_FALSE(Contains(text, "**Title:**"));
  // The default model is the server's.
  const std::string defaulted =
      PromptText("extract_essentials", {{"content", content}}, f.context);
  CHECK(Contains(defaulted,
                 "**Model:** " + f.temp.get().config.default_model + "\n"));

  auto both = GetPrompt("extract_essentials",
                        {{"conversation_id", f.review.id}, {"content", "x"}},
                        f.context);
  REQUIRE_FALSE(both.ok());
  CHECK(both.status().code() == StatusCode::kInvalidArgument);
  auto long_model = GetPrompt(
      "extract_essentials",
      {{"content", "x"}, {"model", std::string(300, 'm')}}, f.context);
  REQUIRE_FALSE(long_model.ok());
  CHECK(Contains(long_model.status().message(), "model"));
  auto unknown = GetPrompt("extract_essentials",
                           {{"conversation_id", "not-a-uuid"}}, f.context);
  REQUIRE_FALSE(unknown.ok());
  CHECK((unknown.status().code() == StatusCode::kInvalidArgument ||
         unknown.status().code() == StatusCode::kNotFound));
}

}  // namespace
}  // namespace ctxkit::tools
