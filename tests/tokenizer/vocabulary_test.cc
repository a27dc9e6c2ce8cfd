#include "lib/tokenizer/vocabulary.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "lib/tokenizer/embedded_vocabularies.h"
#include "tests/tokenizer/sha256.h"

namespace ctxkit::internal {
namespace {

using ::ctxkit::testing::Sha256;
using ::ctxkit::testing::Sha256Hex;

std::string Repeat(char c, size_t n) { return std::string(n, c); }

TEST_CASE("SHA-256 matches the FIPS 180-4 and NIST test vectors") {
  CHECK(Sha256Hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                  "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(Sha256Hex(Repeat('a', 1000000)) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Padding boundaries (digests from coreutils sha256sum).
  const std::pair<size_t, const char*> kBoundaries[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {127, "c57e9278af78fa3cab38667bef4ce29d783787a2f731d4e12200270f0c32320a"},
      {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
  };
  for (const auto& boundary : kBoundaries) {
    CAPTURE(boundary.first);
    CHECK(Sha256Hex(Repeat('a', boundary.first)) == boundary.second);
  }
  // Incremental updates in odd pieces give the one-shot digest.
  const std::string message = Repeat('a', 1000000);
  Sha256 sha;
  for (size_t pos = 0, step = 1; pos < message.size();
       pos += step, step = step % 97 + 1) {
    sha.Update(std::string_view(message).substr(pos, step));
  }
  std::string hex;
  for (const uint8_t b : sha.Finish()) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 15]);
  }
  CHECK(hex ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

// Loads, times (for information only: timings are not asserted) and checks
// the basic invariants that hold for every built-in vocabulary.
Vocabulary LoadEmbedded(std::string_view name) {
  const std::string_view data = EmbeddedVocabularyData(name);
  REQUIRE(!data.empty());
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Vocabulary> v = Vocabulary::FromCompact(data);
  const double ms = MillisecondsSince(start);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  std::printf(
      "%-12s compact %8zu bytes, %6u tokens, loaded in %6.2f ms, memory %9zu "
      "bytes\n",
      std::string(name).c_str(), data.size(), v->token_count(), ms,
      v->MemoryUsage());
  return *std::move(v);
}

// Every rank maps to its bytes and back, and nothing else is found.
void CheckRankBytesAgree(const Vocabulary& v) {
  uint32_t used = 0;
  bool all_agree = true;
  for (uint32_t rank = 0; rank < v.size(); ++rank) {
    const std::string_view bytes = v.Bytes(rank);
    if (bytes.empty()) continue;
    ++used;
    const std::optional<uint32_t> found = v.Rank(bytes);
    if (!found || *found != rank) {
      all_agree = false;
      FAIL_CHECK("rank ", rank, " does not map back to itself");
      break;
    }
  }
  CHECK(all_agree);
  CHECK(used == v.token_count());
  CHECK(v.Bytes(v.size()).empty());
  CHECK(v.Bytes(0xFFFFFFFFu).empty());
  CHECK_FALSE(v.Rank("").has_value());
  CHECK_FALSE(v.Rank(std::string(5000, 'q')).has_value());
}

struct OpenAiVocabulary {
  std::string_view name;
  uint32_t size;
  uint32_t token_count;
  const char* tiktoken_sha256;
};

constexpr OpenAiVocabulary kOpenAi[] = {
    {"r50k_base", 50256, 50256,
     "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"},
    // Rank 50256 is <|endoftext|>, a special token, in the middle of p50k.
    {"p50k_base", 50281, 50280,
     "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"},
    {"cl100k_base", 100256, 100256,
     "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"},
    {"o200k_base", 199998, 199998,
     "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"},
};

// Lookups of strings of every length class (the direct tables, the short
// index with its group probe, the long index) agree with a plain map, for
// hits and for misses, including strings one byte away from a token.
TEST_CASE("Rank agrees with a plain map on hits and near misses") {
  for (const char* name : {"r50k_base", "cl100k_base", "o200k_base"}) {
    auto v = Vocabulary::FromCompact(EmbeddedVocabularyData(name));
    REQUIRE(v.ok());
    std::unordered_map<std::string, uint32_t> plain;
    for (uint32_t rank = 0; rank < v->size(); ++rank) {
      if (!v->Bytes(rank).empty()) plain.emplace(v->Bytes(rank), rank);
    }
    std::mt19937 rng(7);
    size_t hits = 0;
    size_t checked = 0;
    bool all_agree = true;
    for (uint32_t rank = 0; rank < v->size() && all_agree; rank += 3) {
      std::string probe(v->Bytes(rank));
      if (probe.empty()) continue;
      for (int variant = 0; variant < 4; ++variant) {
        std::string s = probe;
        if (variant == 1) s.back() = static_cast<char>(rng());
        if (variant == 2) s.push_back(static_cast<char>(rng()));
        if (variant == 3 && s.size() > 1) s.pop_back();
        // Plain integers: GCC 12 at -O3 warns falsely about comparing two
        // std::optional values here.
        constexpr uint32_t kNone = 0xFFFFFFFFu;
        const auto it = plain.find(s);
        const uint32_t want = it == plain.end() ? kNone : it->second;
        const uint32_t got = v->Rank(s).value_or(kNone);
        ++checked;
        if (got != kNone) ++hits;
        if (got != want) {
          all_agree = false;
          FAIL_CHECK(name, ": lookup of a ", s.size(), "-byte string");
        }
      }
    }
    CHECK(all_agree);
    CHECK(hits > checked / 4);
    CHECK(hits < checked);
  }
}

// The built-in vocabularies are read in place: the same tokens as a copy,
// with their bytes in the embedded data and not on the heap.
TEST_CASE("FromStaticCompact uses the token bytes where they are") {
  for (const std::string_view name : EmbeddedVocabularyNames()) {
    CAPTURE(name);
    const std::string_view data = EmbeddedVocabularyData(name);
    absl::StatusOr<Vocabulary> copied = Vocabulary::FromCompact(data);
    absl::StatusOr<Vocabulary> in_place = Vocabulary::FromStaticCompact(data);
    REQUIRE(copied.ok());
    REQUIRE(in_place.ok());
    CHECK(in_place->size() == copied->size());
    CHECK(in_place->token_count() == copied->token_count());
    CHECK(in_place->pattern() == copied->pattern());
    CHECK(in_place->special_tokens() == copied->special_tokens());
    CHECK(in_place->explicit_n_vocab() == copied->explicit_n_vocab());
    bool same = true;
    bool inside = true;
    size_t token_bytes = 0;
    for (uint32_t rank = 0; rank < copied->size(); ++rank) {
      const std::string_view bytes = in_place->Bytes(rank);
      token_bytes += bytes.size();
      same = same && bytes == copied->Bytes(rank);
      inside = inside && (bytes.empty() || (bytes.data() >= data.data() &&
                                            bytes.data() + bytes.size() <=
                                                data.data() + data.size()));
    }
    CHECK(same);
    CHECK(inside);
    CHECK(in_place->MemoryUsage() + token_bytes == copied->MemoryUsage());
    CHECK(in_place->ToCompact() == data);
    // A move keeps the views valid: the bytes stay where they are.
    const std::string_view first = in_place->Bytes(0);
    const Vocabulary moved = *std::move(in_place);
    CHECK(moved.Bytes(0).data() == first.data());
    CheckRankBytesAgree(moved);
    // The shared built-in one is read in place too.
    absl::StatusOr<const Vocabulary*> shared = EmbeddedVocabulary(name);
    REQUIRE(shared.ok());
    CHECK((*shared)->Bytes(0).data() == first.data());
  }
  CHECK(Vocabulary::FromStaticCompact("XTXVOCAB").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("the built-in names are listed and unknown names have no data") {
  const auto names = EmbeddedVocabularyNames();
  REQUIRE(names.size() == 5);
  CHECK(names[0] == "r50k_base");
  CHECK(names[4] == "claude");
  for (const std::string_view name : names) {
    CHECK(!EmbeddedVocabularyData(name).empty());
  }
  CHECK(EmbeddedVocabularyData("").empty());
  CHECK(EmbeddedVocabularyData("gpt2").empty());
  CHECK(EmbeddedVocabularyData("o200k_harmony").empty());
  CHECK(EmbeddedVocabulary("llama3").status().code() ==
        absl::StatusCode::kNotFound);
}

TEST_CASE("each OpenAI vocabulary re-serializes to tiktoken's published file") {
  for (const OpenAiVocabulary& expected : kOpenAi) {
    CAPTURE(expected.name);
    const Vocabulary v = LoadEmbedded(expected.name);
    CHECK(v.size() == expected.size);
    CHECK(v.token_count() == expected.token_count);
    const std::string tiktoken = v.ToTiktoken();
    CHECK(Sha256Hex(tiktoken) == expected.tiktoken_sha256);
    // The acceptance bound: a loaded vocabulary holds less than 3x its
    // .tiktoken file.
    CHECK(v.MemoryUsage() < 3 * tiktoken.size());
    CheckRankBytesAgree(v);
    // Single bytes are all tokens, as byte-level BPE needs.
    for (int b = 0; b < 256; ++b) {
      const char c = static_cast<char>(b);
      CHECK(v.Rank(std::string_view(&c, 1)).has_value());
    }
    CHECK(v.ToCompact() == EmbeddedVocabularyData(expected.name));

    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Vocabulary> parsed = Vocabulary::FromTiktoken(tiktoken);
    std::printf("%-12s FromTiktoken of %zu bytes in %.2f ms\n",
                std::string(expected.name).c_str(), tiktoken.size(),
                MillisecondsSince(start));
    REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
    CHECK(parsed->size() == v.size());
    CHECK(parsed->ToTiktoken() == tiktoken);
    CHECK(parsed->pattern().empty());
    CHECK(parsed->special_tokens().empty());
  }
}

TEST_CASE("the OpenAI vocabularies carry tiktoken's patterns and specials") {
  const Vocabulary r50k = LoadEmbedded("r50k_base");
  CHECK(r50k.explicit_n_vocab() == 50257u);
  CHECK(r50k.special_tokens() ==
        std::vector<SpecialToken>{{"<|endoftext|>", 50256}});
  CHECK(r50k.pattern() ==
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
        "\\s+(?!\\S)|\\s+");
  const Vocabulary p50k = LoadEmbedded("p50k_base");
  CHECK(p50k.explicit_n_vocab() == 50281u);
  CHECK(p50k.Bytes(50256).empty());
  CHECK(p50k.Bytes(50257) == "  ");
  const Vocabulary cl100k = LoadEmbedded("cl100k_base");
  CHECK_FALSE(cl100k.explicit_n_vocab().has_value());
  CHECK(cl100k.special_tokens() ==
        std::vector<SpecialToken>{{"<|endoftext|>", 100257},
                                  {"<|fim_prefix|>", 100258},
                                  {"<|fim_middle|>", 100259},
                                  {"<|fim_suffix|>", 100260},
                                  {"<|endofprompt|>", 100276}});
  const Vocabulary o200k = LoadEmbedded("o200k_base");
  CHECK(o200k.special_tokens() ==
        std::vector<SpecialToken>{{"<|endoftext|>", 199999},
                                  {"<|endofprompt|>", 200018}});
  CHECK(o200k.pattern().starts_with("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}"));
  // Well-known token ids.
  CHECK(cl100k.Rank("hello") == 15339u);
  CHECK(cl100k.Rank(" world") == 1917u);
  CHECK(o200k.Rank("hello") == 24912u);
  CHECK(r50k.Rank("hello") == 31373u);
}

TEST_CASE("the legacy Claude vocabulary round-trips with its specials") {
  const Vocabulary v = LoadEmbedded("claude");
  CHECK(v.size() == 65000);
  CHECK(v.token_count() == 64995);
  for (uint32_t rank = 0; rank < 5; ++rank) CHECK(v.Bytes(rank).empty());
  CHECK(v.Bytes(5) == "!");
  CHECK(v.explicit_n_vocab() == 64739u);
  CHECK(v.special_tokens() == std::vector<SpecialToken>{{"<EOT>", 0},
                                                        {"<META>", 1},
                                                        {"<META_START>", 2},
                                                        {"<META_END>", 3},
                                                        {"<SOS>", 4}});
  CHECK(v.pattern() ==
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
        "\\s+(?!\\S)|\\s+");
  CheckRankBytesAgree(v);
  CHECK(v.ToCompact() == EmbeddedVocabularyData("claude"));
  const std::string tiktoken = v.ToTiktoken();
  CHECK(tiktoken.starts_with("IQ== 5\n"));
  absl::StatusOr<Vocabulary> parsed = Vocabulary::FromTiktoken(tiktoken);
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  CHECK(parsed->size() == 65000);
  CHECK(parsed->token_count() == 64995);
  CHECK(parsed->ToTiktoken() == tiktoken);
  CHECK(v.MemoryUsage() < 3 * tiktoken.size());
}

TEST_CASE("EmbeddedVocabulary loads once and is shared across threads") {
  std::vector<const Vocabulary*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] {
      absl::StatusOr<const Vocabulary*> v = EmbeddedVocabulary("cl100k_base");
      if (v.ok()) {
        seen[i] = *v;
        // Concurrent reads of one vocabulary.
        for (int k = 0; k < 1000; ++k) (*v)->Rank("hello");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(seen[0] != nullptr);
  for (const Vocabulary* p : seen) CHECK(p == seen[0]);
  CHECK(seen[0]->Rank("hello") == 15339u);
}

absl::StatusCode CodeOf(std::string_view tiktoken) {
  return Vocabulary::FromTiktoken(tiktoken).status().code();
}

std::string MessageOf(std::string_view tiktoken) {
  return std::string(Vocabulary::FromTiktoken(tiktoken).status().message());
}

TEST_CASE("FromTiktoken reads small files, gaps, any order and CRLF") {
  absl::StatusOr<Vocabulary> v =
      Vocabulary::FromTiktoken("YQ== 0\nYg== 1\n\nYWI= 4\r\nYWJj 2");
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  CHECK(v->size() == 5);
  CHECK(v->token_count() == 4);
  CHECK(v->Rank("a") == 0u);
  CHECK(v->Rank("ab") == 4u);
  CHECK(v->Rank("abc") == 2u);
  CHECK_FALSE(v->Rank("c").has_value());
  CHECK(v->Bytes(3).empty());
  CHECK(v->Bytes(2) == "abc");
  CHECK(v->ToTiktoken() == "YQ== 0\nYg== 1\nYWJj 2\nYWI= 4\n");
  // The compact form round-trips a vocabulary with a gap as well.
  absl::StatusOr<Vocabulary> again = Vocabulary::FromCompact(v->ToCompact());
  REQUIRE_MESSAGE(again.ok(), again.status().ToString());
  CHECK(again->ToTiktoken() == v->ToTiktoken());
  CHECK(again->ToCompact() == v->ToCompact());
  // Moving keeps the data and the views valid.
  const std::string_view abc = v->Bytes(2);
  Vocabulary moved = *std::move(v);
  CHECK(moved.Bytes(2) == "abc");
  CHECK(moved.Bytes(2).data() == abc.data());
  CHECK(moved.Rank("abc") == 2u);
  // NOLINTNEXTLINE(bugprone-use-after-move): a moved-from one is empty.
  CHECK(v->size() == 0);
  CHECK(v->Bytes(2).empty());
  CHECK_FALSE(v->Rank("abc").has_value());
  CHECK(v->ToTiktoken().empty());
  // Bytes that are not UTF-8 are fine: tokens are bytes.
  absl::StatusOr<Vocabulary> binary =
      Vocabulary::FromTiktoken("/w== 0\nAA== 1\n");
  REQUIRE(binary.ok());
  CHECK(binary->Rank(std::string_view("\0", 1)) == 1u);
  CHECK(binary->Rank("\xFF") == 0u);
}

// Long tokens make blocks of ranks too long for the 16-bit offsets inside a
// block, so smaller blocks are used, down to one rank (vocabulary.h).
TEST_CASE("FromTiktoken keeps any token length addressable") {
  // "abc" repeated k times is "YWJj" repeated k times in base64.
  auto repeated = [](const char* text, size_t k) {
    std::string s;
    for (size_t i = 0; i < k; ++i) s += text;
    return s;
  };
  // Lengths 3, 6, ..., 900 (blocks of 256 or 128 ranks exceed 64 KiB), and
  // with `huge` one token of 75,000 bytes followed by a short one in the
  // same block, whatever its size but one rank.
  for (const bool huge : {false, true}) {
    CAPTURE(huge);
    std::string tiktoken = "YQ== 0\nYg== 1\nYw== 2\n";
    uint32_t rank = 3;
    for (size_t k = 1; k <= 300; ++k) {
      tiktoken += repeated("YWJj", k) + " " + std::to_string(rank++) + "\n";
    }
    if (huge) {
      if (rank % 2 != 0) tiktoken += "eHl6 " + std::to_string(rank++) + "\n";
      tiktoken += repeated("eHl6", 25000) + " " + std::to_string(rank++) + "\n";
      tiktoken += "eHp4 " + std::to_string(rank++) + "\n";
    }
    absl::StatusOr<Vocabulary> v = Vocabulary::FromTiktoken(tiktoken);
    REQUIRE_MESSAGE(v.ok(), v.status().ToString());
    CHECK(v->size() == rank);
    CheckRankBytesAgree(*v);
    CHECK(v->Rank(repeated("abc", 300)) == 302u);
    CHECK_FALSE(v->Rank(repeated("abc", 301)).has_value());
    if (huge) {
      CHECK(v->Bytes(rank - 2) == repeated("xyz", 25000));
      CHECK(v->Rank(repeated("xyz", 25000)) == rank - 2);
      CHECK(v->Rank("xzx") == rank - 1);
    }
    CHECK(v->ToTiktoken() == tiktoken);
    absl::StatusOr<Vocabulary> again = Vocabulary::FromCompact(v->ToCompact());
    REQUIRE(again.ok());
    CHECK(again->ToTiktoken() == tiktoken);
  }
}

TEST_CASE("FromTiktoken rejects malformed input with the line number") {
  struct Case {
    const char* text;
    const char* expected_fragment;
  };
  const Case kCases[] = {
      {"", "no token"},
      {"\n\n\r\n", "no token"},
      {"YQ== 0\nYg==\n", "line 2"},
      {"YQ== 0\nYg== \n", "line 2: rank \"\""},
      {"YQ== 0\nYg== x1\n", "line 2: rank \"x1\""},
      {"YQ== 0\nYg== -1\n", "line 2: rank \"-1\""},
      {"YQ== 0\nYg== 1 \n", "line 2: rank \"1 \""},
      {"YQ== 0\nYg==  1\n", "line 2"},
      {"YQ== 0\nYg== 99999999999\n", "line 2: rank"},
      {"YQ== 0\nYg== 16777216\n", "line 2: rank"},
      {"YQ== 0\nY!== 1\n", "line 2: token \"Y!==\""},
      {"YQ== 0\nYQ= 1\n", "line 2: token"},
      {"YQ== 0\nYR== 1\n", "line 2: token"},      // non-canonical padding bits
      {"YQ== 0\nYQ==YQ== 1\n", "line 2: token"},  // padding inside
      {"YQ== 0\n= 1\n", "line 2: token"},
      {"YQ== 0\n 1\n", "line 2: token \"\""},
      {"YQ== 0\nYg== 1\nYQ== 2\n",
       "line 3: token \"a\" duplicates the token on line 1"},
      {"YQ== 0\nYg== 1\nYw== 1\n", "line 3: rank 1 is already used on line 2"},
      {"YQ== 7\nYg== 1\nYw== 7\n", "line 3: rank 7 is already used on line 1"},
  };
  for (const Case& c : kCases) {
    CAPTURE(c.text);
    CHECK(CodeOf(c.text) == absl::StatusCode::kInvalidArgument);
    const std::string message = MessageOf(c.text);
    CAPTURE(message);
    CHECK(message.find(c.expected_fragment) != std::string::npos);
  }
  // The largest allowed rank is accepted.
  CHECK(Vocabulary::FromTiktoken("YQ== 16777215\n").ok());
}

bool IsLoadError(const absl::Status& s) {
  return s.code() == absl::StatusCode::kDataLoss ||
         s.code() == absl::StatusCode::kInvalidArgument;
}

TEST_CASE("FromCompact rejects every truncation of real data") {
  const std::string_view data = EmbeddedVocabularyData("claude");
  REQUIRE(data.size() > 1000);
  std::vector<size_t> cuts;
  for (size_t n = 0; n < 64; ++n) cuts.push_back(n);
  for (size_t n = 64; n < data.size(); n += 997) cuts.push_back(n);
  cuts.push_back(data.size() - 1);
  for (const size_t n : cuts) {
    CAPTURE(n);
    // A copy of exactly n bytes, so that ASan catches any read past it.
    const std::string prefix(data.substr(0, n));
    const absl::Status s = Vocabulary::FromCompact(prefix).status();
    CHECK(IsLoadError(s));
    if (n >= 20) CHECK(s.code() == absl::StatusCode::kDataLoss);
  }
  std::string longer(data);
  longer.push_back('\0');
  CHECK(Vocabulary::FromCompact(longer).status().code() ==
        absl::StatusCode::kDataLoss);
  CHECK(Vocabulary::FromCompact("XTXVOCAB").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("FromCompact detects a flipped byte anywhere") {
  const std::string_view data = EmbeddedVocabularyData("r50k_base");
  for (size_t pos = 0; pos < data.size(); pos += (pos < 256 ? 1 : 1231)) {
    CAPTURE(pos);
    std::string corrupt(data);
    corrupt[pos] = static_cast<char>(corrupt[pos] ^ 0x5A);
    CHECK(IsLoadError(Vocabulary::FromCompact(corrupt).status()));
  }
  std::string version(data);
  version[8] = 2;
  const absl::Status s = Vocabulary::FromCompact(version).status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("version 2") != std::string::npos);
}

// Rewrites the header of `data` so that its size and checksum match its
// payload, to reach the structural checks behind the checksum.
std::string Reseal(std::string data) {
  const std::string_view payload = std::string_view(data).substr(20);
  const uint32_t size = static_cast<uint32_t>(payload.size());
  const uint32_t sum = CompactChecksum(payload);
  for (int i = 0; i < 4; ++i) {
    data[12 + i] = static_cast<char>(size >> (8 * i));
    data[16 + i] = static_cast<char>(sum >> (8 * i));
  }
  return data;
}

TEST_CASE(
    "FromCompact survives structural corruption behind a valid checksum") {
  // A small vocabulary keeps the exhaustive loops fast under sanitizers.
  absl::StatusOr<Vocabulary> small = Vocabulary::FromTiktoken(
      "YQ== 0\nYg== 1\nYw== 2\nYWI= 3\nYWJj 5\nIGhlbGxv 9\n");
  REQUIRE(small.ok());
  const std::string data = small->ToCompact();
  REQUIRE(Vocabulary::FromCompact(data).ok());
  REQUIRE(Vocabulary::FromCompact(Reseal(data)).ok());
  int rejected = 0;
  int accepted = 0;
  for (size_t pos = 20; pos < data.size(); ++pos) {
    for (const int value : {0x00, 0x01, 0x02, 0x05, 0x7F, 0x80, 0xFF}) {
      std::string corrupt = data;
      if (static_cast<unsigned char>(corrupt[pos]) == value) continue;
      corrupt[pos] = static_cast<char>(value);
      const absl::StatusOr<Vocabulary> v =
          Vocabulary::FromCompact(Reseal(corrupt));
      if (v.ok()) {
        // Changing a token's bytes can give another valid vocabulary; it
        // must then be self-consistent.
        ++accepted;
        CheckRankBytesAgree(*v);
        CHECK(v->ToCompact() == Reseal(corrupt));
      } else {
        ++rejected;
        CHECK(v.status().code() == absl::StatusCode::kDataLoss);
      }
    }
  }
  CHECK(rejected > 0);
  MESSAGE("structural corruptions rejected: ", rejected,
          ", accepted as another valid vocabulary: ", accepted);
  // Every truncation, resealed, too.
  for (size_t n = 20; n < data.size(); ++n) {
    CAPTURE(n);
    CHECK(Vocabulary::FromCompact(Reseal(data.substr(0, n))).status().code() ==
          absl::StatusCode::kDataLoss);
  }
  // A huge token count in a tiny payload must not allocate.
  std::string huge = data.substr(0, 20);
  huge += "\xFF\xFF\xFF\x07";  // 16777215 tokens
  huge += std::string(16, '\0');
  CHECK(Vocabulary::FromCompact(Reseal(huge)).status().code() ==
        absl::StatusCode::kDataLoss);
}

TEST_CASE("FromCompact rejects duplicate tokens and special-rank clashes") {
  // Two ranks with the bytes "a".
  absl::StatusOr<Vocabulary> ab = Vocabulary::FromTiktoken("YQ== 0\nYg== 1\n");
  REQUIRE(ab.ok());
  std::string data = ab->ToCompact();
  REQUIRE(data.back() == 'b');
  data.back() = 'a';
  absl::Status s = Vocabulary::FromCompact(Reseal(data)).status();
  CHECK(s.code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(s.message()).find("same bytes") != std::string::npos);
}

}  // namespace
}  // namespace ctxkit::internal
