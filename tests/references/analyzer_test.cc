// The text analysis of the reference search index: words, identifier parts,
// lower-casing, non-ASCII text, long terms.

#include "lib/references/analyzer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lib/references/index.h"
#include "lib/references/search.h"

namespace ctxkit::internal {
namespace {

std::vector<std::string> Terms(std::string_view text) {
  std::vector<std::string> terms;
  AnalyzeText(text, &terms);
  return terms;
}

using V = std::vector<std::string>;

TEST_CASE("prose splits on anything that is not a letter or digit") {
  CHECK(Terms("Hello, World! 42 times.") == V{"hello", "world", "42", "times"});
  CHECK(Terms("") == V{});
  CHECK(Terms("  ... --- !!! ") == V{});
  CHECK(Terms("a-b c.d e/f") == V{"a", "b", "c", "d", "e", "f"});
}

TEST_CASE("camelCase, PascalCase and acronyms yield parts and the whole") {
  CHECK(Terms("countTokens") == V{"count", "tokens", "counttokens"});
  CHECK(Terms("CountTokens") == V{"count", "tokens", "counttokens"});
  CHECK(Terms("HTMLParser") == V{"html", "parser", "htmlparser"});
  CHECK(Terms("parseHTML") == V{"parse", "html", "parsehtml"});
  CHECK(Terms("utf8Decode") == V{"utf8", "decode", "utf8decode"});
  CHECK(Terms("HTTP") == V{"http"});
  CHECK(Terms("x") == V{"x"});
}

TEST_CASE("snake_case keeps underscores in the whole identifier") {
  CHECK(Terms("count_tokens") == V{"count", "tokens", "count_tokens"});
  CHECK(Terms("__init__") == V{"init"});
  CHECK(Terms("___") == V{});
  CHECK(Terms("MAX_TOKEN_COUNT") ==
        V{"max", "token", "count", "max_token_count"});
  CHECK(Terms("a__b") == V{"a", "b", "a__b"});
  CHECK(Terms("my_camelCase") == V{"my", "camel", "case", "my_camelcase"});
}

TEST_CASE("code splits into identifiers") {
  CHECK(Terms("function countTokens(text: string): number { /* ... */ }") ==
        V{"function", "count", "tokens", "counttokens", "text", "string",
          "number"});
}

TEST_CASE("non-ASCII letters are word characters and keep their case") {
  CHECK(Terms("Ärger über Größe") == V{"Ärger", "über", "größe"});
  CHECK(Terms("日本語のテキスト") == V{"日本語のテキスト"});
  CHECK(Terms("naïve café") == V{"naïve", "café"});
  // A combining mark stays inside its word.
  CHECK(Terms("cafe\xCC\x81 ok") == V{"cafe\xCC\x81", "ok"});
  // Case change between non-ASCII letters splits too.
  CHECK(Terms("größeÄnderung") == V{"größe", "Änderung", "größeÄnderung"});
  // Symbols and emoji separate.
  CHECK(Terms("a\xF0\x9F\x98\x80"
              "b") == V{"a", "b"});
}

TEST_CASE("long terms are cut at a character boundary") {
  const std::string word(300, 'a');
  V terms = Terms(word);
  REQUIRE(terms.size() == 1);
  CHECK(terms[0].size() == kMaxTermBytes);
  std::string wide;
  for (int i = 0; i < 100; ++i) wide += "\xC3\xA9";  // é, 2 bytes each
  terms = Terms("x" + wide);
  REQUIRE(terms.size() == 1);
  CHECK(terms[0].size() == kMaxTermBytes - 1);
}

TEST_CASE("documents weigh title terms three times") {
  const AnalyzedDocument doc = AnalyzeDocument("Token counter", "token x");
  CHECK(doc.length == 2 + 3 * 2);
  REQUIRE(doc.terms.size() == 3);
  CHECK(doc.terms[0] == std::pair<std::string, uint32_t>("counter", 3));
  CHECK(doc.terms[1] == std::pair<std::string, uint32_t>("token", 4));
  CHECK(doc.terms[2] == std::pair<std::string, uint32_t>("x", 1));
}

TEST_CASE("query terms are distinct, in order of first occurrence") {
  CHECK(QueryTerms("Token token COUNTER token") == V{"token", "counter"});
}

TEST_CASE("previews never cut a character") {
  CHECK(MakePreview("short", 100) == "short");
  CHECK(MakePreview(std::string(100, 'a'), 100) == std::string(100, 'a'));
  CHECK(MakePreview(std::string(101, 'a'), 100) ==
        std::string(100, 'a') + "...");
  std::string e;
  for (int i = 0; i < 150; ++i) e += "\xC3\xA9";
  const std::string p = MakePreview(e, 100);
  CHECK(p.size() == 200 + 3);
  CHECK(p.substr(0, 200) == e.substr(0, 200));
}

TEST_CASE("term spans are the terms, where they came from") {
  const std::string long_word(200, 'x');
  for (const std::string& text :
       {std::string("countTokens HTMLParser __snake_case__ Größe 42"),
        std::string("a-b, C.d!") + long_word, std::string("")}) {
    CAPTURE(text);
    std::vector<std::string> from_spans;
    ForEachTermSpan(text, [&](const TermSpan& span) {
      std::string term(span.raw);
      for (char& c : term) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      from_spans.push_back(term);
      CHECK(span.begin < span.end);
      CHECK(span.end <= text.size());
      // The raw term is the start of its span (cut only when too long).
      CHECK(text.compare(span.begin, span.raw.size(), span.raw) == 0);
    });
    CHECK(from_spans == Terms(text));
  }
  // A cut term still spans its whole word.
  std::vector<TermSpan> spans;
  ForEachTermSpan(long_word, [&](const TermSpan& s) { spans.push_back(s); });
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].raw.size() == kMaxTermBytes);
  CHECK(spans[0].end == long_word.size());
}

}  // namespace
}  // namespace ctxkit::internal
