// Tokenizer::FromTiktokenFile: small vocabularies written by the test, every
// error path, and parity with the built-in encodings when their own
// vocabularies are loaded from a file.

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "ctxkit/tokenizer.h"
#include "lib/tokenizer/embedded_vocabularies.h"
#include "lib/tokenizer/vocabulary.h"

namespace ctxkit {
namespace {

using Ids = std::vector<uint32_t>;
using Specials = std::vector<std::pair<std::string, uint32_t>>;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A directory of its own for each test run, removed with its files.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") +
                       "/ctxkit_tiktoken_file_test.XXXXXX";
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    for (const std::string& file : files_) unlink(file.c_str());
    rmdir(path_.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string Write(const std::string& name, const std::string& content) {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    REQUIRE(out.good());
    files_.push_back(file);
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

std::string Line(std::string_view bytes, uint32_t rank) {
  return absl::Base64Escape(absl::string_view(bytes.data(), bytes.size())) +
         " " + std::to_string(rank) + "\n";
}

// The 256 single bytes at ranks 0..255, then `merges` from rank 256 on.
std::string SmallVocabulary(const std::vector<std::string>& merges) {
  std::string text;
  for (int b = 0; b < 256; ++b)
    text += Line(std::string(1, static_cast<char>(b)), b);
  for (size_t i = 0; i < merges.size(); ++i) {
    text += Line(merges[i], static_cast<uint32_t>(256 + i));
  }
  return text;
}

TEST_CASE("a small vocabulary encodes by its merges") {
  TempDir dir;
  const std::string path = dir.Write(
      "small.tiktoken", SmallVocabulary({"ab", "cd", "abcd", " a", " ab"}));
  auto tok =
      Tokenizer::FromTiktokenFile(path, "small", PretokenizerPattern::kGpt2,
                                  {{"<|end|>", 300}, {"<|pad|>", 301}});
  REQUIRE_MESSAGE(tok.ok(), tok.status().ToString());
  CHECK((*tok)->name() == "small");
  CHECK((*tok)->vocabulary_size() == 302);
  CHECK(*(*tok)->Encode("abcd") == Ids{258});
  CHECK(*(*tok)->Encode("abcx") == Ids{256, 'c', 'x'});
  // The gpt2 pattern splits " abcd ab" into " abcd" and " ab".
  CHECK(*(*tok)->Encode(" ab ab") == Ids{260, 260});
  CHECK(*(*tok)->Decode(Ids{258, 260, 300}) == "abcd ab<|end|>");

  EncodeOptions allow;
  allow.allowed_special = SpecialTokenSet::All();
  CHECK(*(*tok)->Encode("x<|end|><|pad|>", allow) == Ids{'x', 300, 301});
  CHECK(*(*tok)->EncodeOrdinary("<|end|>") ==
        Ids{'<', '|', 'e', 'n', 'd', '|', '>'});
  auto refused = (*tok)->Encode("x<|end|>");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(*(*tok)->Count("abcd abcd") == 3);
}

TEST_CASE("each call loads anew and the tokenizer outlives the file") {
  TempDir dir;
  const std::string path = dir.Write("v.tiktoken", SmallVocabulary({"ab"}));
  auto a = Tokenizer::FromTiktokenFile(path, "v", PretokenizerPattern::kCl100k);
  auto b = Tokenizer::FromTiktokenFile(path, "v", PretokenizerPattern::kCl100k);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->get() != b->get());
  REQUIRE(unlink(path.c_str()) == 0);
  CHECK(*(*a)->Encode("abab") == Ids{256, 256});
}

TEST_CASE("file errors name the path") {
  TempDir dir;
  const std::string missing = dir.path() + "/missing.tiktoken";
  auto r =
      Tokenizer::FromTiktokenFile(missing, "x", PretokenizerPattern::kGpt2);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
  CHECK(Contains(r.status().message(), missing));

  r = Tokenizer::FromTiktokenFile(missing + "/below", "x",
                                  PretokenizerPattern::kGpt2);
  CHECK(r.status().code() == StatusCode::kNotFound);

  r = Tokenizer::FromTiktokenFile(dir.path(), "x", PretokenizerPattern::kGpt2);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(r.status().message(), dir.path()));

  r = Tokenizer::FromTiktokenFile("", "x", PretokenizerPattern::kGpt2);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  r = Tokenizer::FromTiktokenFile(std::string("a\0b", 3), "x",
                                  PretokenizerPattern::kGpt2);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);

  const std::string locked = dir.Write("locked.tiktoken", SmallVocabulary({}));
  REQUIRE(chmod(locked.c_str(), 0) == 0);
  r = Tokenizer::FromTiktokenFile(locked, "x", PretokenizerPattern::kGpt2);
  if (geteuid() == 0) {
    MESSAGE("running as root: a mode-000 file is readable, not checked");
  } else {
    CHECK(r.status().code() == StatusCode::kPermissionDenied);
    CHECK(Contains(r.status().message(), locked));
  }
}

TEST_CASE("a malformed file is INVALID_ARGUMENT naming the path and line") {
  TempDir dir;
  const struct {
    const char* name;
    std::string content;
    const char* expected;
  } cases[] = {
      {"bad_base64", "YQ== 0\nYg== 1\n!!!! 2\n", "line 3"},
      {"no_rank", "YQ== 0\nYg==\n", "line 2"},
      {"bad_rank", "YQ== 0\nYg== x1\n", "line 2"},
      {"duplicate_rank", "YQ== 0\nYg== 0\n", "line 2"},
      {"duplicate_token", "YQ== 0\nYQ== 1\n", "line 2"},
      {"empty", "", "no token"},
      {"blank", "\n\n", "no token"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::string path = dir.Write(c.name, c.content);
    auto r = Tokenizer::FromTiktokenFile(path, "x", PretokenizerPattern::kGpt2);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(Contains(r.status().message(), path));
    CHECK_MESSAGE(Contains(r.status().message(), c.expected),
                  r.status().message());
  }
  // Well formed, but byte 0xFF is not a token: some text could not be encoded.
  std::string text;
  for (int b = 0; b < 255; ++b)
    text += Line(std::string(1, static_cast<char>(b)), b);
  const std::string path = dir.Write("no_ff", text);
  auto r = Tokenizer::FromTiktokenFile(path, "x", PretokenizerPattern::kGpt2);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(r.status().message(), "0xFF"));
}

TEST_CASE("bad names and special tokens are INVALID_ARGUMENT") {
  TempDir dir;
  const std::string path = dir.Write("v.tiktoken", SmallVocabulary({"ab"}));
  auto load = [&](Specials specials, std::string name = "v") {
    return Tokenizer::FromTiktokenFile(path, std::move(name),
                                       PretokenizerPattern::kO200k,
                                       std::move(specials));
  };
  CHECK(load({}, "").status().code() == StatusCode::kInvalidArgument);
  const struct {
    const char* what;
    Specials specials;
    const char* expected;
  } cases[] = {
      {"duplicate text", {{"<|a|>", 300}, {"<|a|>", 301}}, "listed twice"},
      {"mergeable rank", {{"<|a|>", 256}}, "regular token"},
      {"single byte rank", {{"<|a|>", 7}}, "regular token"},
      {"empty text", {{"", 300}}, "empty"},
      {"not UTF-8", {{"\xFF", 300}}, "UTF-8"},
      {"id too large", {{"<|a|>", 0xFFFFFFFFu}}, "maximum"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    auto r = load(c.specials);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(Contains(r.status().message(), c.expected),
                  r.status().message());
  }
  // Two texts for one id are allowed, as tiktoken allows them.
  auto shared = load({{"<|a|>", 300}, {"<|b|>", 300}});
  REQUIRE(shared.ok());
  CHECK(*(*shared)->Decode(Ids{300}) == "<|a|>");
  CHECK(load({}).ok());
  auto bad_pattern = Tokenizer::FromTiktokenFile(
      path, "v", static_cast<PretokenizerPattern>(42));
  CHECK(bad_pattern.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Llama3FromFile refuses a file of another shape") {
  TempDir dir;
  const std::string path = dir.Write("small", SmallVocabulary({"ab"}));
  auto r = Tokenizer::Llama3FromFile(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(r.status().message(), "not Llama 3"));
  CHECK(Tokenizer::Llama3FromFile(dir.path() + "/none").status().code() ==
        StatusCode::kNotFound);
}

// Varied text: words, code, numbers, whitespace runs, scripts and emoji, and
// special-token text, from a fixed seed.
std::vector<std::string> VariedTexts(size_t n) {
  static const char* const kPieces[] = {"a",
                                        "b",
                                        "z",
                                        "Q",
                                        "the",
                                        " the",
                                        " and",
                                        "ing",
                                        " token",
                                        "izer",
                                        "0",
                                        "7",
                                        "42",
                                        "1234",
                                        " ",
                                        " ",
                                        "  ",
                                        "   ",
                                        "\n",
                                        "\n\n",
                                        "\t",
                                        "\r\n",
                                        ".",
                                        ",",
                                        "'s",
                                        "'ll",
                                        "'VE",
                                        "\"",
                                        "(",
                                        ")",
                                        "{",
                                        "}",
                                        ";",
                                        "/",
                                        "\\",
                                        "#",
                                        "!",
                                        "?",
                                        "<",
                                        ">",
                                        "|",
                                        "-",
                                        "_",
                                        "=",
                                        "é",
                                        "ü",
                                        "ß",
                                        "Ж",
                                        "λ",
                                        "ع",
                                        "अ",
                                        "中",
                                        "文",
                                        "の",
                                        "カ",
                                        "한",
                                        "😀",
                                        "🦙",
                                        "👍🏽",
                                        "✓",
                                        "€",
                                        "\u00a0",
                                        "\u3000",
                                        "\u0301",
                                        "\u200d",
                                        "１２",
                                        "½",
                                        "<|endoftext|>",
                                        "<|fim_prefix|>",
                                        "<|endofprompt|>"};
  std::mt19937 rng(20240501);
  std::vector<std::string> texts = {
      "",
      "hello world",
      "Hello, world! Ünïcödé ✓ 你好 🤖 'll don't  \n\n\tx",
      "def f(x):\n    return x ** 2\n",
      std::string(500, 'x'),
      std::string(300, ' ') + "end",
      "1234567890123"};
  while (texts.size() < n) {
    std::string text;
    const size_t pieces = 1 + rng() % 80;
    for (size_t i = 0; i < pieces; ++i) {
      text += kPieces[rng() % (sizeof kPieces / sizeof kPieces[0])];
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

TEST_CASE("built-in vocabularies loaded from a file give the built-in ids") {
  TempDir dir;
  const struct {
    const char* encoding;
    PretokenizerPattern pattern;
    Specials specials;
  } cases[] = {
      {"cl100k_base",
       PretokenizerPattern::kCl100k,
       {{"<|endoftext|>", 100257},
        {"<|fim_prefix|>", 100258},
        {"<|fim_middle|>", 100259},
        {"<|fim_suffix|>", 100260},
        {"<|endofprompt|>", 100276}}},
      {"r50k_base", PretokenizerPattern::kGpt2, {{"<|endoftext|>", 50256}}},
      {"o200k_base",
       PretokenizerPattern::kO200k,
       {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}}},
  };
  const std::vector<std::string> texts = VariedTexts(300);
  EncodeOptions allow;
  allow.allowed_special = SpecialTokenSet::All();
  for (const auto& c : cases) {
    const std::string encoding_name = c.encoding;
    CAPTURE(encoding_name);
    auto vocabulary = internal::EmbeddedVocabulary(c.encoding);
    REQUIRE(vocabulary.ok());
    const std::string path = dir.Write(std::string(c.encoding) + ".tiktoken",
                                       (*vocabulary)->ToTiktoken());
    auto loaded = Tokenizer::FromTiktokenFile(
        path, std::string(c.encoding) + "_file", c.pattern, c.specials);
    REQUIRE_MESSAGE(loaded.ok(), loaded.status().ToString());
    auto builtin = Tokenizer::ForEncoding(c.encoding);
    REQUIRE(builtin.ok());
    CHECK((*loaded)->vocabulary_size() == (*builtin)->vocabulary_size());
    size_t same = 0;
    for (const std::string& text : texts) {
      auto want = (*builtin)->Encode(text, allow);
      auto got = (*loaded)->Encode(text, allow);
      REQUIRE(want.ok());
      REQUIRE(got.ok());
      auto want_ordinary = (*builtin)->EncodeOrdinary(text);
      auto got_ordinary = (*loaded)->EncodeOrdinary(text);
      if (*want == *got && *want_ordinary == *got_ordinary) {
        ++same;
      } else {
        CHECK_MESSAGE(false, "differs: " << text);
      }
    }
    MESSAGE(std::string(c.encoding)
            << " from a file: " << same << " of " << texts.size()
            << " texts give the built-in ids");
    CHECK(same == texts.size());
  }
}

}  // namespace
}  // namespace ctxkit
