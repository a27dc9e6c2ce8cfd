// ctxkit::Tokenizer's contract: built-in encodings, special-token rules as in
// tiktoken, UTF-8 handling, decoding, and use from many threads.

#include "ctxkit/tokenizer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ctxkit/model_registry.h"

namespace ctxkit {
namespace {

std::shared_ptr<const Tokenizer> Get(const std::string& name) {
  auto t = Tokenizer::ForEncoding(name);
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return *t;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

using Ids = std::vector<uint32_t>;

TEST_CASE("every built-in encoding loads and round-trips text") {
  const std::vector<std::string> names = Tokenizer::EncodingNames();
  CHECK(names == std::vector<std::string>{"r50k_base", "p50k_base", "p50k_edit",
                                          "cl100k_base", "o200k_base",
                                          "o200k_harmony", "claude"});
  const std::string text =
      "Hello, world! Ünïcödé ✓ 你好 🤖 'll don't  \n\n\tx = f(42);";
  for (const std::string& name : names) {
    auto tok = Get(name);
    CHECK(tok->name() == name);
    auto ids = tok->Encode(text);
    REQUIRE(ids.ok());
    CHECK(*tok->Decode(*ids) == text);
    CHECK(*tok->Count(text) == ids->size());
  }
  CHECK(Get("cl100k_base")->vocabulary_size() == 100277);
  CHECK(Get("o200k_base")->vocabulary_size() == 200019);
  CHECK(Get("o200k_harmony")->vocabulary_size() == 201088);
  CHECK(Get("r50k_base")->vocabulary_size() == 50257);
  CHECK(Get("p50k_edit")->vocabulary_size() == 50284);
  CHECK(Get("claude")->vocabulary_size() == 65000);
}

TEST_CASE("known ids") {
  CHECK(*Get("cl100k_base")->Encode("hello world") == Ids{15339, 1917});
  CHECK(*Get("o200k_base")->Encode("hello world") == Ids{24912, 2375});
  CHECK(*Get("r50k_base")->Encode("hello world") == Ids{31373, 995});
}

TEST_CASE("a tokenizer is built once and shared") {
  CHECK(Get("cl100k_base").get() == Get("cl100k_base").get());
  auto unknown = Tokenizer::ForEncoding("cl200k_base");
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  CHECK(Contains(unknown.status().message(), "o200k_base"));
}

TEST_CASE("special tokens follow tiktoken's rules") {
  auto tok = Get("cl100k_base");
  const std::string text = "a<|endoftext|>b";

  // By default special-token text is an error naming token and offset.
  auto refused = tok->Encode(text);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(refused.status().message(), "<|endoftext|>"));
  CHECK(Contains(refused.status().message(), "offset 1"));
  CHECK(tok->Count(text).status().code() == StatusCode::kInvalidArgument);

  EncodeOptions all;
  all.allowed_special = SpecialTokenSet::All();
  auto special = tok->Encode(text, all);
  REQUIRE(special.ok());
  REQUIRE(special->size() == 3);
  CHECK((*special)[1] == 100257);
  CHECK(*tok->Count(text, all) == 3);

  // encode_ordinary: the text is plain text.
  auto ordinary = tok->EncodeOrdinary(text);
  REQUIRE(ordinary.ok());
  CHECK(ordinary->size() > 3);
  CHECK(*tok->Decode(*ordinary) == text);

  // A list: only the listed token is special; others are still refused.
  EncodeOptions list;
  list.allowed_special = SpecialTokenSet::Of({"<|fim_prefix|>"});
  auto mixed = tok->Encode("<|fim_prefix|>x", list);
  REQUIRE(mixed.ok());
  CHECK(mixed->front() == 100258);
  CHECK_FALSE(tok->Encode("<|fim_prefix|>x<|endoftext|>", list).ok());
  // Allowed nothing, disallowed nothing: all special text is plain.
  EncodeOptions plain;
  plain.disallowed_special = SpecialTokenSet::None();
  CHECK(*tok->Encode(text, plain) == *ordinary);

  EncodeOptions bogus;
  bogus.allowed_special = SpecialTokenSet::Of({"<|nope|>"});
  auto bad = tok->Encode("x", bogus);
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(bad.status().message(), "<|nope|>"));

  // Harmony's specials, including a reserved one.
  auto harmony = Get("o200k_harmony");
  auto h = harmony->Encode(
      "<|start|>user<|message|>hi<|end|><|reserved_201087|>", all);
  REQUIRE(h.ok());
  CHECK(h->front() == 200006);
  CHECK(h->back() == 201087);
  CHECK(*harmony->TokenBytes(200018) == "<|endofprompt|>");
}

TEST_CASE("invalid UTF-8: an error with the offset, or replacement") {
  auto tok = Get("o200k_base");
  const std::string bad = "ok \xff then \xe2\x82";
  auto refused = tok->Encode(bad);
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(refused.status().message(), "offset 3"));
  EncodeOptions replace;
  replace.replace_invalid_utf8 = true;
  auto replaced = tok->Encode(bad, replace);
  REQUIRE(replaced.ok());
  CHECK(*tok->Decode(*replaced) == "ok \xef\xbf\xbd then \xef\xbf\xbd");
}

TEST_CASE("decoding") {
  auto tok = Get("cl100k_base");
  // "😀" is several tokens, each a partial UTF-8 sequence on its own.
  auto ids = tok->Encode("😀");
  REQUIRE(ids.ok());
  CHECK(*tok->Decode(*ids) == "😀");
  if (ids->size() > 1) {
    const Ids first{ids->front()};
    CHECK(*tok->DecodeUtf8(first) == "\xef\xbf\xbd");
  }
  auto bad = tok->Decode(Ids{15339, 999999});
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(bad.status().message(), "ids[1]"));
  CHECK(Contains(bad.status().message(), "999999"));
  CHECK(*tok->TokenBytes(15339) == "hello");
  CHECK(*tok->TokenBytes(100257) == "<|endoftext|>");
  // 100261..100275 are unused ids between the specials.
  CHECK(tok->TokenBytes(100261).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(tok->Decode(Ids{}).value().empty());
  CHECK(tok->Encode("").value().empty());
}

TEST_CASE("EncodeInto fills a caller's buffer or says how big it must be") {
  auto tok = Get("cl100k_base");
  const std::string text = "hello world, 你好 <|endoftext|> again";
  EncodeOptions all;
  all.allowed_special = SpecialTokenSet::All();
  const Ids expected = *tok->Encode(text, all);
  std::vector<uint32_t> buffer(expected.size() + 3, 7);
  auto written = tok->EncodeInto(text, buffer, all);
  REQUIRE(written.ok());
  CHECK(*written == expected.size());
  CHECK(Ids(buffer.begin(), buffer.begin() + *written) == expected);
  CHECK(buffer.back() == 7);  // nothing written past the ids
  std::vector<uint32_t> small(expected.size() - 1);
  auto too_small = tok->EncodeInto(text, small, all);
  CHECK(too_small.status().code() == StatusCode::kOutOfRange);
  CHECK(Contains(too_small.status().message(),
                 std::to_string(expected.size()) + " tokens"));
  CHECK(tok->EncodeInto(text, buffer).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(*tok->EncodeInto("", std::span<uint32_t>()) == 0);
}

TEST_CASE("Truncate cuts on token and character boundaries") {
  auto tok = Get("cl100k_base");
  const std::string text = "The quick brown fox jumps over the lazy dog.";
  const size_t total = *tok->Count(text);
  auto whole = tok->Truncate(text, total);
  REQUIRE(whole.ok());
  CHECK_FALSE(whole->truncated);
  CHECK(whole->text == text);
  CHECK(whole->tokens == total);
  for (size_t max = 0; max < total; ++max) {
    auto cut = tok->Truncate(text, max);
    REQUIRE(cut.ok());
    CHECK(cut->truncated);
    CHECK(cut->tokens == max);  // ASCII: every token boundary is a character's
    CHECK(*tok->Count(cut->text) == max);
    CHECK(text.substr(0, cut->text.size()) == cut->text);
  }
  // Emoji are several tokens each; a cut never leaves half of one.
  const std::string emoji = "😀😀😀😀";
  const auto ids = *tok->Encode(emoji);
  REQUIRE(ids.size() > 4);
  for (size_t max = 0; max <= ids.size(); ++max) {
    auto cut = tok->Truncate(emoji, max);
    REQUIRE(cut.ok());
    CHECK(cut->text.size() % 4 == 0);  // whole 4-byte characters only
    CHECK(cut->tokens <= max);
  }
  CHECK(tok->Truncate("\xff", 1).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("Truncate's early stop gives what cutting the whole encoding gives") {
  // Truncate stops tokenizing after max_tokens + 1 tokens; its result must
  // still be the prefix of the whole text's tokens, for every encoding,
  // around special tokens and long pieces, at every limit.
  std::mt19937 rng(1313);
  const std::vector<std::string> parts = {"The quick brown fox",
                                          " jumps",
                                          "\n\n",
                                          "    ",
                                          "\t",
                                          "<|endoftext|>",
                                          "caf\xC3\xA9",
                                          "\xE4\xBD\xA0\xE5\xA5\xBD",
                                          "\xF0\x9F\x98\x80",
                                          "12345",
                                          "-=-=-=",
                                          std::string(300, ' '),
                                          "it's",
                                          "\r\n"};
  EncodeOptions all;
  all.allowed_special = SpecialTokenSet::All();
  for (const std::string& name : Tokenizer::EncodingNames()) {
    auto tok = Get(name);
    for (int round = 0; round < 20; ++round) {
      std::string text;
      const size_t n = 1 + rng() % 40;
      for (size_t i = 0; i < n; ++i) text += parts[rng() % parts.size()];
      for (const EncodeOptions& options :
           {all, EncodeOptions{SpecialTokenSet::None(), SpecialTokenSet::None(),
                               false}}) {
        const auto ids = tok->Encode(text, options);
        REQUIRE(ids.ok());
        for (size_t max = 0; max <= ids->size() + 1; ++max) {
          auto cut = tok->Truncate(text, max, options);
          REQUIRE(cut.ok());
          CHECK(cut->truncated == (ids->size() > max));
          CHECK(cut->tokens <= max);
          if (!cut->truncated) {
            CHECK(cut->text == text);
            continue;
          }
          if (name == "claude") continue;  // NFKC: see the claude tests
          // The contract, from the whole text's ids: the most of the first
          // max tokens that end on a character boundary.
          size_t end = 0, bytes = 0, tokens = 0;
          for (size_t k = 0; k < max; ++k) {
            end += tok->TokenBytes((*ids)[k])->size();
            if (end == text.size() ||
                (static_cast<unsigned char>(text[end]) & 0xC0) != 0x80) {
              bytes = end;
              tokens = k + 1;
            }
          }
          CHECK_MESSAGE(cut->text.size() == bytes, name << " max " << max);
          CHECK(cut->tokens == tokens);
        }
      }
    }
  }
  // A disallowed special token after the cut is still an error, as it is
  // for Encode: the early stop changes no error.
  auto tok = Get("cl100k_base");
  const std::string text = std::string(5000, 'a') + " b <|endoftext|>";
  CHECK(tok->Truncate(text, 3).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Count, CountOrdinary and CountTokens agree on special-token text") {
  const std::string text = "before <|endoftext|> after <|fim_prefix|>";
  for (const std::string& name :
       {std::string("cl100k_base"), std::string("o200k_base"),
        std::string("r50k_base")}) {
    auto tok = Get(name);
    // Count mirrors Encode: tiktoken's default refuses special-token text,
    // naming CountOrdinary's way out is the caller's choice.
    auto strict = tok->Count(text);
    CHECK(strict.status().code() == StatusCode::kInvalidArgument);
    CHECK(Contains(strict.status().message(), "<|endoftext|>"));
    CHECK(tok->Encode(text).status().code() == StatusCode::kInvalidArgument);
    // CountOrdinary is EncodeOrdinary's length.
    auto ordinary = tok->CountOrdinary(text);
    REQUIRE(ordinary.ok());
    CHECK(*ordinary == tok->EncodeOrdinary(text)->size());
    CHECK(*ordinary > 4);
    EncodeOptions as_text;
    as_text.disallowed_special = SpecialTokenSet::None();
    CHECK(*tok->Count(text, as_text) == *ordinary);
    CHECK(tok->CountOrdinary("\xff").status().code() ==
          StatusCode::kInvalidArgument);
  }
  // The registry's CountTokens counts content as CountOrdinary does.
  auto counted = CountTokens("gpt-4o", text);
  REQUIRE(counted.ok());
  CHECK(counted->tokens == *Get("o200k_base")->CountOrdinary(text));
  counted = CountTokens("gpt-4", text);
  REQUIRE(counted.ok());
  CHECK(counted->tokens == *Get("cl100k_base")->CountOrdinary(text));
}

TEST_CASE("SpecialTokens lists each encoding's special tokens with their ids") {
  auto has = [](const std::vector<std::pair<std::string, uint32_t>>& list,
                const std::string& text, uint32_t id) {
    return std::find(list.begin(), list.end(), std::make_pair(text, id)) !=
           list.end();
  };
  const auto cl100k = Get("cl100k_base")->SpecialTokens();
  CHECK(cl100k.size() == 5);
  CHECK(has(cl100k, "<|endoftext|>", 100257));
  CHECK(has(cl100k, "<|fim_prefix|>", 100258));
  CHECK(has(cl100k, "<|endofprompt|>", 100276));
  const auto r50k = Get("r50k_base")->SpecialTokens();
  CHECK(r50k == std::vector<std::pair<std::string, uint32_t>>{
                    {"<|endoftext|>", 50256}});
  CHECK(has(Get("claude")->SpecialTokens(), "<EOT>", 0));
  // Each listed text encodes, when allowed, to its id.
  EncodeOptions all;
  all.allowed_special = SpecialTokenSet::All();
  for (const std::string& name : Tokenizer::EncodingNames()) {
    auto tok = Get(name);
    const auto specials = tok->SpecialTokens();
    CHECK_FALSE(specials.empty());
    // Not a structured binding: CHECK_MESSAGE captures the text in a lambda,
    // which Clang 14 refuses for a binding.
    for (const auto& special : specials) {
      const std::string& text = special.first;
      auto ids = tok->Encode(text, all);
      REQUIRE(ids.ok());
      CHECK_MESSAGE(ids->size() == 1, name << " " << text);
      // o200k_harmony: two texts may share an id; the id decodes to one.
      CHECK(special.second < tok->vocabulary_size());
    }
  }
}

// Ids below are those of @anthropic-ai/tokenizer@0.0.4, which encodes
// text.normalize("NFKC"); parity_test.cc checks thousands more.
TEST_CASE("claude: NFKC first, then the legacy vocabulary") {
  auto tok = Get("claude");
  CHECK(*tok->Encode("hello world") == Ids{9381, 2253});
  // The ligature and the fullwidth letters are "financial ABC".
  const std::string compat = "\uFB01nancial \uFF21\uFF22\uFF23";
  CHECK(*tok->EncodeOrdinary(compat) == Ids{61390, 16172});
  CHECK(*tok->Count(compat) == 2);
  CHECK(*tok->Decode(*tok->Encode(compat)) == "financial ABC");
  CHECK(*tok->EncodeOrdinary("h\u00E9llo") == Ids{76, 64032, 354});
  CHECK(*tok->EncodeOrdinary("he\u0301llo") == Ids{76, 64032, 354});
  CHECK(*tok->EncodeOrdinary("\uFF28\uFF45\uFF4C\uFF4C\uFF4F\u3000"
                             "\uFF57\uFF4F\uFF52\uFF4C\uFF44") ==
        Ids{10002, 2253});  // fullwidth "Hello world"
  // Its special tokens, ids 0..4, found after normalization: fullwidth
  // brackets become <EOT>.
  EncodeOptions all;
  all.allowed_special = SpecialTokenSet::All();
  const std::pair<const char*, uint32_t> specials[] = {{"<EOT>", 0},
                                                       {"<META>", 1},
                                                       {"<META_START>", 2},
                                                       {"<META_END>", 3},
                                                       {"<SOS>", 4}};
  for (const auto& [text, id] : specials) {
    CHECK(*tok->Encode(text, all) == Ids{id});
    CHECK(*tok->Decode(Ids{id}) == text);
  }
  CHECK(*tok->Encode("\uFF1C"
                     "EOT\uFF1E hi",
                     all) == Ids{0, 13837});
  CHECK(*tok->EncodeOrdinary("<EOT>") == Ids{32, 41, 1591, 34});
  auto refused = tok->Encode(
      "\uFF1C"
      "EOT\uFF1E");  // disallowed by default
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(refused.status().message(), "<EOT>"));
  // Invalid UTF-8 is still an error, or replaced before normalizing.
  CHECK(tok->Count("\uFB01\xff").status().code() ==
        StatusCode::kInvalidArgument);
  EncodeOptions replace;
  replace.replace_invalid_utf8 = true;
  CHECK(*tok->Encode("\uFB01\xff", replace) == *tok->Encode("fi\uFFFD"));
  // The caller-buffer path and CountMany normalize too.
  std::vector<uint32_t> buffer(2);
  CHECK(*tok->EncodeInto(compat, buffer) == 2);
  CHECK(buffer == Ids{61390, 16172});
  const std::vector<std::string_view> texts = {compat, "hello world", ""};
  CHECK(*tok->CountMany(texts) == std::vector<size_t>{2, 2, 0});
}

TEST_CASE("claude: Truncate returns a prefix of the input, not of its NFKC") {
  auto tok = Get("claude");
  // Each ligature is rewritten to two letters; a cut never falls inside one.
  const std::string text =
      "\uFB01\uFB01 \uFB01\uFB01 x\u0301y e\u0301 \u212A \uFF21\uFF22 end";
  const size_t total = *tok->Count(text);
  CHECK_FALSE(tok->Truncate(text, total)->truncated);
  CHECK(tok->Truncate(text, total)->text == text);
  for (size_t max = 0; max < total; ++max) {
    auto cut = tok->Truncate(text, max);
    REQUIRE(cut.ok());
    CHECK(cut->truncated);
    CHECK(cut->tokens <= max);
    CHECK(cut->text.data() == text.data());  // a prefix of the input
    // The prefix is what it says: its tokens are the first `tokens`.
    const auto prefix_ids = *tok->EncodeOrdinary(cut->text);
    const auto ids = *tok->EncodeOrdinary(text);
    CHECK(prefix_ids.size() == cut->tokens);
    CHECK(std::equal(prefix_ids.begin(), prefix_ids.end(), ids.begin()));
  }
  // A cut that would split the two letters of a ligature moves back.
  auto cut = tok->Truncate("\uFB01\uFB01\uFB01\uFB01\uFB01\uFB01", 1);
  REQUIRE(cut.ok());
  CHECK(cut->text.size() % 3 == 0);
}

TEST_CASE("CountMany counts each text, in order, on several threads") {
  auto tok = Get("o200k_base");
  std::vector<std::string> owned;
  for (int i = 0; i < 300; ++i) {
    owned.push_back(std::string(static_cast<size_t>(i % 37), 'x') + " text " +
                    std::to_string(i * 7919));
  }
  std::vector<std::string_view> texts(owned.begin(), owned.end());
  for (unsigned threads : {1u, 2u, 4u, 0u}) {
    auto counts = tok->CountMany(texts, threads);
    REQUIRE(counts.ok());
    REQUIRE(counts->size() == texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      CHECK((*counts)[i] == *tok->Count(texts[i]));
    }
  }
  owned[123] = "bad \xc3";
  texts[123] = owned[123];
  auto failed = tok->CountMany(texts, 2);
  CHECK(failed.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(failed.status().message(), "texts[123]"));
  CHECK(tok->CountMany({}, 2)->empty());
}

TEST_CASE("recently seen pieces are never confused across encodings") {
  // Short pieces are cached per thread; the same bytes under different
  // encodings must still give each encoding's own ids.
  const std::vector<std::string> words = {"hello", " world", "\n\n", "  ",
                                          "42",    " the",   "é",    "你好",
                                          "'s",    "<|",     ";"};
  std::vector<std::string> names = {"r50k_base", "cl100k_base", "o200k_base"};
  std::map<std::string, std::vector<Ids>> first;
  for (const auto& name : names) {
    for (const auto& w : words)
      first[name].push_back(*Get(name)->EncodeOrdinary(w));
  }
  for (int round = 0; round < 50; ++round) {
    for (size_t i = 0; i < words.size(); ++i) {
      for (const auto& name : names) {
        auto tok = Get(name);
        CHECK(*tok->EncodeOrdinary(words[i]) == first[name][i]);
        CHECK(*tok->Count(words[i],
                          EncodeOptions{SpecialTokenSet::None(),
                                        SpecialTokenSet::None(), false}) ==
              first[name][i].size());
      }
    }
  }
  CHECK(first["r50k_base"][0] != first["o200k_base"][0]);
}

TEST_CASE("one tokenizer serves many threads") {
  auto tok = Get("o200k_base");
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "The quick brown fox " + std::to_string(i) + ". ";
  const Ids expected = *tok->Encode(text);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (*tok->Encode(text) != expected) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches.load() == 0);
}

TEST_CASE("long pieces merge alike from many threads at once") {
  // Long pieces go through per-thread caches of segments and token pairs;
  // threads encoding the same and different long pieces of two
  // vocabularies at once must each get the ids one thread gets alone.
  std::string runs;
  for (int i = 0; i < 300; ++i) {
    runs += std::string(1 + i % 13, ' ') + (i % 3 ? "\r\n" : "\n\t");
  }
  runs += "x " + std::string(2000, '-') + "=-=-=-=-=-=-=-=- y ";
  for (int i = 0; i < 400; ++i) runs += "\xE7\x9A\x84";
  std::vector<std::shared_ptr<const Tokenizer>> toks = {Get("cl100k_base"),
                                                        Get("o200k_base")};
  std::vector<Ids> expected;
  for (const auto& tok : toks) expected.push_back(*tok->Encode(runs));
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const size_t k = static_cast<size_t>(t + i) % toks.size();
        if (*toks[k]->Encode(runs) != expected[k]) ++mismatches;
        if (*toks[k]->Count(runs) != expected[k].size()) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches.load() == 0);
}

}  // namespace
}  // namespace ctxkit
