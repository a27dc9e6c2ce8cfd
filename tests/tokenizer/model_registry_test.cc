// ModelRegistry: name resolution for every family, run-time registration and
// its precedence, concurrency, and CountTokens with its heuristic fallback.

#include "ctxkit/model_registry.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "doctest/doctest.h"

namespace ctxkit {
namespace {

struct Expect {
  const char* model;
  const char* encoding;
  ModelMatch match;
  uint64_t context_window;
  uint64_t max_output_tokens;
  bool exact;
  MessageFormat format;
};

TEST_CASE("built-in names resolve like tiktoken, exact before prefix") {
  constexpr auto kE = ModelMatch::kExact;
  constexpr auto kP = ModelMatch::kPrefix;
  constexpr auto kO = MessageFormat::kOpenAI;
  constexpr auto kA = MessageFormat::kAnthropic;
  constexpr auto kL = MessageFormat::kLlama3;
  const Expect cases[] = {
      {"gpt-4o-2024-08-06", "o200k_base", kP, 128000, 16384, true, kO},
      {"gpt-4o", "o200k_base", kE, 128000, 16384, true, kO},
      {"gpt-4o-mini", "o200k_base", kP, 128000, 16384, true, kO},
      {"gpt-4o-2024-05-13", "o200k_base", kE, 128000, 4096, true, kO},
      {"gpt-4-0613", "cl100k_base", kP, 8192, 8192, true, kO},
      {"gpt-4", "cl100k_base", kE, 8192, 8192, true, kO},
      {"gpt-4-32k-0613", "cl100k_base", kP, 32768, 32768, true, kO},
      {"gpt-4-turbo-2024-04-09", "cl100k_base", kP, 128000, 4096, true, kO},
      {"gpt-3.5-turbo", "cl100k_base", kE, 16385, 4096, true, kO},
      {"gpt-3.5-turbo-16k", "cl100k_base", kP, 16385, 4096, true, kO},
      {"gpt-3.5-turbo-0613", "cl100k_base", kP, 4096, 4096, true, kO},
      {"gpt-35-turbo", "cl100k_base", kE, 4096, 4096, true, kO},
      {"gpt-35-turbo-16k", "cl100k_base", kP, 16384, 4096, true, kO},
      {"text-embedding-3-small", "cl100k_base", kE, 8191, 0, true, kO},
      {"text-embedding-3-large-v2", "cl100k_base", kP, 8191, 0, true, kO},
      {"text-embedding-ada-002", "cl100k_base", kE, 8191, 0, true, kO},
      {"o1", "o200k_base", kE, 200000, 100000, true, kO},
      {"o1-mini", "o200k_base", kP, 128000, 65536, true, kO},
      {"o1-preview", "o200k_base", kP, 128000, 32768, true, kO},
      {"o3", "o200k_base", kE, 200000, 100000, true, kO},
      {"o3-mini", "o200k_base", kP, 200000, 100000, true, kO},
      {"o4-mini", "o200k_base", kE, 200000, 100000, true, kO},
      {"o4-mini-2025-04-16", "o200k_base", kP, 200000, 100000, true, kO},
      {"gpt-5", "o200k_base", kE, 400000, 128000, true, kO},
      {"gpt-5-mini", "o200k_base", kP, 400000, 128000, true, kO},
      {"gpt-5-chat-latest", "o200k_base", kP, 128000, 16384, true, kO},
      {"gpt-4.1-nano", "o200k_base", kP, 1047576, 32768, true, kO},
      {"gpt-4.1", "o200k_base", kE, 1047576, 32768, true, kO},
      {"gpt-4.5-preview", "o200k_base", kP, 128000, 16384, true, kO},
      {"chatgpt-4o-latest", "o200k_base", kP, 128000, 16384, true, kO},
      {"gpt-oss-120b", "o200k_harmony", kP, 131072, 131072, true, kO},
      {"gpt-oss:20b", "o200k_harmony", kP, 131072, 131072, true, kO},
      {"ft:gpt-4o-mini-2024-07-18:org::abc", "o200k_base", kP, 128000, 16384,
       true, kO},
      {"ft:gpt-4.1-mini:org::abc", "o200k_base", kP, 1047576, 32768, true, kO},
      {"ft:gpt-3.5-turbo-0613:org::abc", "cl100k_base", kP, 4096, 4096, true,
       kO},
      {"text-davinci-003", "p50k_base", kE, 4097, 4097, true, kO},
      {"text-davinci-001", "r50k_base", kE, 2049, 2049, true, kO},
      {"code-davinci-002", "p50k_base", kE, 8001, 8001, true, kO},
      {"text-davinci-edit-001", "p50k_edit", kE, 2048, 2048, true, kO},
      {"davinci", "r50k_base", kE, 2049, 2049, true, kO},
      {"davinci-002", "cl100k_base", kE, 16384, 16384, true, kO},
      {"gpt2", "r50k_base", kE, 1024, 1024, true, kO},
      {"claude-3-5-sonnet-20241022", "claude", kP, 200000, 8192, false, kA},
      {"claude-3-opus-20240229", "claude", kP, 200000, 4096, false, kA},
      {"claude-3-7-sonnet-latest", "claude", kP, 200000, 64000, false, kA},
      {"claude-opus-4-1", "claude", kP, 200000, 32000, false, kA},
      {"claude-opus-4-1-20250805", "claude", kP, 200000, 32000, false, kA},
      {"claude-sonnet-4-5", "claude", kP, 200000, 64000, false, kA},
      {"claude-2.1", "claude", kP, 200000, 4096, true, kA},
      {"claude-instant-1.2", "claude", kP, 100000, 4096, true, kA},
      {"claude-future-9", "claude", kP, 200000, 4096, false, kA},
      {"llama3", "llama3", kE, 8192, 8192, true, kL},
      {"llama3:70b", "llama3", kP, 8192, 8192, true, kL},
      {"llama3.1:8b", "llama3", kP, 131072, 131072, true, kL},
      {"llama3.2:3b-instruct-q4_K_M", "llama3", kP, 131072, 131072, true, kL},
      {"llama3.3", "llama3", kE, 131072, 131072, true, kL},
      {"meta-llama/Meta-Llama-3-8B", "llama3", kP, 8192, 8192, true, kL},
      {"meta-llama/Llama-3.1-8B-Instruct", "llama3", kP, 131072, 131072, true,
       kL},
      {"llama-3.3-70b-versatile", "llama3", kP, 131072, 131072, true, kL},
      {"GPT-4O", "o200k_base", kE, 128000, 16384, true, kO},  // case folded
  };
  const ModelRegistry& registry = ModelRegistry::Default();
  for (const Expect& e : cases) {
    CAPTURE(e.model);
    ResolvedModel r = registry.Resolve(e.model);
    CHECK(r.model == e.model);
    CHECK(r.match == e.match);
    CHECK(r.info.encoding == e.encoding);
    CHECK(r.info.context_window == e.context_window);
    CHECK(r.info.max_output_tokens == e.max_output_tokens);
    CHECK(r.info.exact == e.exact);
    CHECK(r.info.message_format == e.format);
    StatusOr<ModelInfo> found = registry.Find(e.model);
    REQUIRE(found.ok());
    CHECK(found->encoding == e.encoding);
    CHECK(found->is_prefix == (e.match == ModelMatch::kPrefix));
  }
}

TEST_CASE("every built-in entry is consistent") {
  std::vector<ModelInfo> all = ModelRegistry::Default().List();
  CHECK(all.size() > 100);
  const std::vector<std::string> known = {
      "r50k_base",  "p50k_base",     "p50k_edit", "cl100k_base",
      "o200k_base", "o200k_harmony", "claude",    "llama3"};
  for (const ModelInfo& info : all) {
    CAPTURE(info.name);
    CHECK(std::find(known.begin(), known.end(), info.encoding) != known.end());
    CHECK(info.context_window > 0);
    CHECK(info.max_output_tokens <= info.context_window);
  }
  for (size_t i = 1; i < all.size(); ++i) {
    CHECK(all[i - 1].name <= all[i].name);
  }
}

TEST_CASE("unknown names") {
  const ModelRegistry& registry = ModelRegistry::Default();
  StatusOr<ModelInfo> found = registry.Find("unknown-model-x");
  REQUIRE_FALSE(found.ok());
  CHECK(found.status().code() == StatusCode::kNotFound);
  CHECK(found.status().message().find("unknown-model-x") != std::string::npos);

  ResolvedModel r = registry.Resolve("unknown-model-x");
  CHECK(r.match == ModelMatch::kUnknown);
  CHECK(r.info.name == "unknown-model-x");
  CHECK(r.info.encoding.empty());
  CHECK(r.info.context_window == 0);
  CHECK_FALSE(r.info.exact);

  // Near misses of prefixes are unknown, as in tiktoken.
  CHECK(registry.Resolve("gpt-4x").match == ModelMatch::kUnknown);
  CHECK(registry.Resolve("o1mini").match == ModelMatch::kUnknown);
  CHECK(registry.Resolve("").match == ModelMatch::kUnknown);

  StatusOr<TokenCount> n = CountTokens("unknown-model-x", "hello world");
  REQUIRE(n.ok());
  CHECK(n->method == CountMethod::kHeuristic);
  CHECK_FALSE(n->exact);
  CHECK(n->encoding.empty());
  CHECK(n->tokens == EstimateTokens("hello world"));

  StatusOr<std::shared_ptr<const Tokenizer>> tok =
      registry.TokenizerFor("unknown-model-x");
  CHECK(tok.status().code() == StatusCode::kNotFound);
}

using Names = std::vector<std::string>;

TEST_CASE("Suggest names the closest registered models, best first") {
  const ModelRegistry& registry = ModelRegistry::Default();
  // One typo: the exact entry and the prefix entry with that stem, then
  // the family "gpt-4-oo" would belong to, farther from the whole name.
  CHECK(registry.Suggest("gpt-4oo", 3) ==
        Names{"gpt-4o", "gpt-4o-*", "gpt-4-*"});
  // Case and separators are not differences; a swap is one edit.
  CHECK(registry.Suggest("GPT4O", 2) == Names{"gpt-4o", "gpt-4o-*"});
  CHECK(registry.Suggest("gtp-4o", 1) == Names{"gpt-4o"});
  CHECK(registry.Suggest("text-embedding-ada-003", 1) ==
        Names{"text-embedding-ada-002"});
  // Words in order, either way round, however many edits apart.
  CHECK(registry.Suggest("sonnet-4", 1) == Names{"claude-sonnet-4*"});
  CHECK(registry.Suggest("openai/gpt-4o", 1) == Names{"gpt-4o"});
  CHECK(registry.Suggest("claudesonnet", 3) ==
        Names{"claude-3-sonnet*", "claude-sonnet-4*", "claude-*"});
  // A family member but for its separators, however long the rest.
  CHECK(registry.Suggest("gpt4o-mini", 1) == Names{"gpt-4o-*"});
  const Names o3 = registry.Suggest("o3mini", 4);
  CHECK(std::find(o3.begin(), o3.end(), "o3-*") != o3.end());
  // A registered name is its own first suggestion.
  CHECK(registry.Suggest("gpt-4o", 1) == Names{"gpt-4o"});
}

TEST_CASE("Suggest is bounded and deterministic") {
  const ModelRegistry& registry = ModelRegistry::Default();
  CHECK(registry.Suggest("zqxjvwkpfy", 3).empty());
  CHECK(registry.Suggest("", 3).empty());
  CHECK(registry.Suggest("gpt-4o", 0).empty());
  CHECK(registry.Suggest(std::string(257, 'g'), 3).empty());
  CHECK(registry.Suggest("---", 3).empty());
  // `max` cuts the same ranking short.
  const Names many = registry.Suggest("llama-3-8b", 50);
  REQUIRE(many.size() > 3);
  CHECK(many.size() <= 50);
  CHECK(registry.Suggest("llama-3-8b", 3) ==
        Names(many.begin(), many.begin() + 3));
  CHECK(registry.Suggest("llama-3-8b", 50) == many);
  for (const std::string& name : many) {
    CAPTURE(name);
    CHECK(std::count(many.begin(), many.end(), name) == 1);
  }
}

TEST_CASE("Suggest sees run-time registrations as registered") {
  ModelRegistry registry(ModelRegistry::Contents::kEmpty);
  CHECK(registry.Suggest("acme-larg", 3).empty());
  REQUIRE(
      registry.Register({.name = "Acme-Large", .encoding = "o200k_base"}).ok());
  REQUIRE(
      registry
          .Register(
              {.name = "acme-", .is_prefix = true, .encoding = "cl100k_base"})
          .ok());
  // Spelled as registered; the prefix by its words ("acme" in acme-larg).
  CHECK(registry.Suggest("acme-larg", 3) == Names{"Acme-Large", "acme-*"});
  REQUIRE(registry.Unregister("acme-large", /*is_prefix=*/false).ok());
  CHECK(registry.Suggest("acme-larg", 3) == Names{"acme-*"});
}

TEST_CASE("Find's NOT_FOUND names the close matches") {
  const ModelRegistry& registry = ModelRegistry::Default();
  StatusOr<ModelInfo> found = registry.Find("gpt-4oo");
  REQUIRE(found.status().code() == StatusCode::kNotFound);
  CHECK(found.status().message() ==
        "unknown model \"gpt-4oo\"; did you mean gpt-4o, gpt-4o-* or "
        "gpt-4-*?");
  found = registry.Find("zqxjvwkpfy");
  REQUIRE(found.status().code() == StatusCode::kNotFound);
  CHECK(found.status().message() == "unknown model \"zqxjvwkpfy\"");
  ModelRegistry one(ModelRegistry::Contents::kEmpty);
  REQUIRE(one.Register({.name = "acme-large"}).ok());
  CHECK(one.Find("acme-larger").status().message() ==
        "unknown model \"acme-larger\"; did you mean acme-large?");
}

TEST_CASE("run-time registration and its precedence") {
  ModelRegistry registry;  // not the default: tests stay independent

  // A new prefix.
  REQUIRE(registry
              .Register({.name = "acme-",
                         .is_prefix = true,
                         .encoding = "cl100k_base",
                         .context_window = 32000,
                         .max_output_tokens = 1000})
              .ok());
  CHECK(registry.Resolve("acme-large").info.context_window == 32000);
  CHECK(registry.Resolve("acme-large").match == ModelMatch::kPrefix);

  // A longer prefix beats a shorter one, an exact name beats both.
  REQUIRE(registry
              .Register({.name = "acme-large",
                         .is_prefix = true,
                         .encoding = "o200k_base",
                         .context_window = 64000})
              .ok());
  REQUIRE(registry
              .Register({.name = "ACME-large-2",
                         .encoding = "r50k_base",
                         .context_window = 2048})
              .ok());
  CHECK(registry.Resolve("acme-small").info.encoding == "cl100k_base");
  CHECK(registry.Resolve("acme-large-1").info.encoding == "o200k_base");
  CHECK(registry.Resolve("acme-large-2").info.encoding == "r50k_base");
  CHECK(registry.Resolve("acme-large-2").match == ModelMatch::kExact);
  CHECK(registry.Resolve("acme-large-2x").info.encoding == "o200k_base");

  // Overriding a built-in entry, exact and prefix.
  REQUIRE(registry
              .Register({.name = "gpt-4o",
                         .encoding = "o200k_base",
                         .context_window = 1000,
                         .max_output_tokens = 10})
              .ok());
  CHECK(registry.Resolve("gpt-4o").info.context_window == 1000);
  CHECK(registry.Resolve("gpt-4o-mini").info.context_window == 128000);
  // A longer prefix than the built-in "gpt-4o-".
  REQUIRE(registry
              .Register({.name = "gpt-4o-mini",
                         .is_prefix = true,
                         .encoding = "o200k_base",
                         .context_window = 5000})
              .ok());
  CHECK(registry.Resolve("gpt-4o-mini-2024-07-18").info.context_window == 5000);
  CHECK(registry.Resolve("gpt-4o-2024-08-06").info.context_window == 128000);
  // The default registry is untouched.
  CHECK(ModelRegistry::Default().Resolve("gpt-4o").info.context_window ==
        128000);

  // Unregister falls back to the next match.
  REQUIRE(registry.Unregister("gpt-4o-mini", /*is_prefix=*/true).ok());
  CHECK(registry.Resolve("gpt-4o-mini-2024-07-18").info.context_window ==
        128000);
  CHECK(registry.Unregister("gpt-4o-mini", true).code() ==
        StatusCode::kNotFound);

  // Invalid registrations.
  CHECK(registry.Register({.name = ""}).code() == StatusCode::kInvalidArgument);
  CHECK(registry.Register({.name = "bad name"}).code() ==
        StatusCode::kInvalidArgument);
  CHECK(registry.Register({.name = "bad\nname"}).code() ==
        StatusCode::kInvalidArgument);
  CHECK(registry
            .Register(
                {.name = "x", .context_window = 10, .max_output_tokens = 11})
            .code() == StatusCode::kInvalidArgument);

  // An empty registry knows nothing.
  ModelRegistry empty(ModelRegistry::Contents::kEmpty);
  CHECK(empty.List().empty());
  CHECK(empty.Find("gpt-4o").status().code() == StatusCode::kNotFound);
}

TEST_CASE("registration and lookup from 4 threads") {
  ModelRegistry registry;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string name =
            "thread" + std::to_string(t) + "-model" + std::to_string(i);
        if (!registry
                 .Register({.name = name,
                            .is_prefix = (i % 2) == 0,
                            .encoding = "cl100k_base",
                            .context_window = static_cast<uint64_t>(i + 1)})
                 .ok()) {
          ++failures;
        }
        // Our own registration is visible at once.
        ResolvedModel mine = registry.Resolve(name);
        if (mine.info.context_window != static_cast<uint64_t>(i + 1)) {
          ++failures;
        }
        // Built-ins stay stable while others write.
        if (registry.Resolve("gpt-4o-mini").info.encoding != "o200k_base") {
          ++failures;
        }
        if (!registry.Find("claude-3-5-sonnet-latest").ok()) ++failures;
        if (registry.Suggest("gpt-4oo", 1) != Names{"gpt-4o"}) ++failures;
        if (i % 100 == 0) (void)registry.List();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(registry.List().size() ==
        ModelRegistry().List().size() + kThreads * kPerThread);
}

TEST_CASE("CountTokens uses the tokenizer when the encoding is available") {
  StatusOr<TokenCount> n = CountTokens("gpt-4o-2024-08-06", "hello world");
  REQUIRE(n.ok());
  CHECK(n->tokens == 2);
  CHECK(n->encoding == "o200k_base");
  CHECK(n->method == CountMethod::kTokenizer);
  CHECK(n->exact);

  auto tok = Tokenizer::ForEncoding("cl100k_base");
  REQUIRE(tok.ok());
  const std::string text = "The quick brown fox jumps over the lazy dog.";
  n = CountTokens("gpt-4-0613", text);
  REQUIRE(n.ok());
  CHECK(n->tokens == *(*tok)->Count(text));
  CHECK(n->exact);

  // Special-token text is ordinary text, not an error.
  n = CountTokens("gpt-4", "<|endoftext|>");
  REQUIRE(n.ok());
  CHECK(n->tokens > 1);

  // Invalid UTF-8 is an error on both paths.
  CHECK(CountTokens("gpt-4", "a\xff").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(CountTokens("unknown-model-x", "a\xff").status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("encodings that are not available fall back to the heuristic") {
  // llama3 is never built in: the registry maps the name, counting falls
  // back until a Llama 3 tokenizer is added.
  StatusOr<TokenCount> n = CountTokens("llama3.1:8b", "hello world");
  REQUIRE(n.ok());
  CHECK(n->encoding == "llama3");
  CHECK(n->method == CountMethod::kHeuristic);
  CHECK_FALSE(n->exact);
  StatusOr<std::shared_ptr<const Tokenizer>> tok =
      ModelRegistry::Default().TokenizerFor("llama3.1:8b");
  CHECK(tok.status().code() == StatusCode::kFailedPrecondition);
  CHECK(tok.status().message().find("llama3") != std::string::npos);
}

TEST_CASE("Claude models count with the legacy Claude vocabulary") {
  // Built in: counted by the tokenizer, but only an estimate for Claude 3
  // and later, whose tokenizer differs.
  StatusOr<TokenCount> n =
      CountTokens("claude-3-5-sonnet-20241022", "hello world");
  REQUIRE(n.ok());
  CHECK(n->encoding == "claude");
  CHECK(n->method == CountMethod::kTokenizer);
  CHECK(n->tokens == 2);  // @anthropic-ai/tokenizer: [9381, 2253]
  CHECK_FALSE(n->exact);
  for (const char* model : {"claude-sonnet-4-5", "claude-opus-4-1",
                            "claude-3-haiku-20240307", "claude-future-9"}) {
    n = CountTokens(model, "hello world");
    REQUIRE(n.ok());
    CHECK(n->method == CountMethod::kTokenizer);
    CHECK_FALSE(n->exact);
  }
  // Claude 1 and 2 used this vocabulary: exact.
  for (const char* model :
       {"claude-2", "claude-2.0", "claude-2.1", "claude-instant-1.2"}) {
    n = CountTokens(model, "\uFB01nancial");  // NFKC: "financial"
    REQUIRE(n.ok());
    CHECK(n->method == CountMethod::kTokenizer);
    CHECK(n->exact);
    CHECK(n->tokens == 1);
  }
  StatusOr<std::shared_ptr<const Tokenizer>> tok =
      ModelRegistry::Default().TokenizerFor("claude-3-opus-20240229");
  REQUIRE(tok.ok());
  CHECK((*tok)->name() == "claude");
}

TEST_CASE("AddTokenizer makes an encoding available to one registry") {
  ModelRegistry registry;
  auto cl100k = Tokenizer::ForEncoding("cl100k_base");
  REQUIRE(cl100k.ok());
  CHECK(registry.AddTokenizer(nullptr).code() == StatusCode::kInvalidArgument);
  REQUIRE(registry.AddTokenizer(*cl100k).ok());
  // A model whose encoding is named like the added tokenizer uses it.
  REQUIRE(registry
              .Register({.name = "my-model",
                         .encoding = "cl100k_base",
                         .context_window = 100})
              .ok());
  auto tok = registry.TokenizerFor("my-model");
  REQUIRE(tok.ok());
  CHECK(tok->get() == cl100k->get());
  // A model with no encoding has no tokenizer and counts heuristically.
  REQUIRE(registry.Register({.name = "no-encoding", .context_window = 9}).ok());
  CHECK(registry.TokenizerFor("no-encoding").status().code() ==
        StatusCode::kFailedPrecondition);
  auto n = registry.CountTokens("no-encoding", "abc def");
  REQUIRE(n.ok());
  CHECK(n->method == CountMethod::kHeuristic);
}

TEST_CASE("EstimateTokens follows its documented formula") {
  CHECK(EstimateTokens("") == 0);
  CHECK(EstimateTokens("the") == 1);
  CHECK(EstimateTokens("hello world") == 2);       // " world" merges the space
  CHECK(EstimateTokens("information") == 2);       // 11 letters / 6
  CHECK(EstimateTokens("1234567") == 3);           // 3 + 3 + 1 digits
  CHECK(EstimateTokens("a, b, c") == 5);           // a , b , c
  CHECK(EstimateTokens("f();") == 3);              // f ( ) ;  -> 1 + 2
  CHECK(EstimateTokens("a\n\nb") == 3);            // whitespace run is 1
  CHECK(EstimateTokens("日本語") == 3);            // one per ideograph
  CHECK(EstimateTokens("café") == 1);              // 3 + 2 units
  CHECK(EstimateTokens("\xF0\x9F\x98\x80") == 2);  // an emoji
  CHECK(EstimateTokens("a\xff") == 2);             // invalid byte: 1
  CHECK(EstimateTokens("\xE2\x80\x94") == 1);      // em dash
}

}  // namespace
}  // namespace ctxkit
