// Tokenizer::Llama3FromFile against llama3-tokenizer-js@1.2.0. Meta's
// tokenizer.model is under the Llama 3 Community License and not committed:
// tests/tokenizer/llama3/build_tokenizer_model.mjs writes it, and the
// package's own ids for 450 texts, into a directory found through the
// environment variable CTXKIT_LLAMA3_DIR, else CTXKIT_LLAMA3_DEFAULT_DIR
// (where the build writes them when configured with
// -DCTXKIT_LLAMA3_TOKENIZER_JS=<node_modules>). Without them the test prints
// "LLAMA3_SKIPPED", which ctest reports as a skip.

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ctxkit/model_registry.h"
#include "ctxkit/tokenizer.h"
#include "simdjson.h"
#include "tests/tokenizer/sha256.h"

namespace ctxkit {
namespace {

using Ids = std::vector<uint32_t>;

constexpr char kMetaSha256[] =
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55";

std::string DataDir() {
  const char* dir = std::getenv("CTXKIT_LLAMA3_DIR");
  if (dir != nullptr && *dir != '\0') return dir;
  return CTXKIT_LLAMA3_DEFAULT_DIR;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), {});
  return true;
}

std::string Hex(const std::array<uint8_t, 32>& digest) {
  std::string hex;
  for (uint8_t b : digest) {
    static const char kDigits[] = "0123456789abcdef";
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

struct Data {
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string expected_json;
};

// Loads the tokenizer and expected ids; false after reporting the skip.
bool Load(Data* data) {
  const std::string dir = DataDir();
  const std::string model = dir + "/tokenizer.model";
  std::string bytes;
  if (!ReadFile(model, &bytes) ||
      !ReadFile(dir + "/expected_ids.json", &data->expected_json)) {
    std::printf(
        "LLAMA3_SKIPPED: no %s (or expected_ids.json beside it); run "
        "tests/tokenizer/llama3/build_tokenizer_model.mjs and set "
        "CTXKIT_LLAMA3_DIR\n",
        model.c_str());
    MESSAGE("LLAMA3_SKIPPED: Llama 3 data not found in " << dir);
    return false;
  }
  testing::Sha256 sha;
  sha.Update(bytes);
  CHECK(Hex(sha.Finish()) == kMetaSha256);
  auto tokenizer = Tokenizer::Llama3FromFile(model);
  REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.status().ToString());
  data->tokenizer = *tokenizer;
  return true;
}

TEST_CASE("Llama 3 from tokenizer.model matches Meta and llama3-tokenizer-js") {
  Data data;
  if (!Load(&data)) return;
  const Tokenizer& tok = *data.tokenizer;
  CHECK(tok.name() == "llama3");
  CHECK(tok.vocabulary_size() == 128256);

  // Meta's llama/test_tokenizer.py.
  EncodeOptions allow;
  allow.allowed_special = SpecialTokenSet::All();
  CHECK(*tok.Encode("<|begin_of_text|>This is a test sentence.<|end_of_text|>",
                    allow) ==
        Ids{128000, 2028, 374, 264, 1296, 11914, 13, 128001});
  CHECK(*tok.Encode("<|start_header_id|>user<|end_header_id|>\n\nThis is a "
                    "test sentence.<|eot_id|>",
                    allow) ==
        Ids{128006, 882, 128007, 271, 2028, 374, 264, 1296, 11914, 13, 128009});
  CHECK(*tok.Decode(Ids{128008, 128010, 128255}) ==
        "<|reserved_special_token_4|><|reserved_special_token_5|>"
        "<|reserved_special_token_250|>");

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(data.expected_json).get(root) == simdjson::SUCCESS);
  for (const char* group : {"ordinary", "with_specials"}) {
    const bool specials = std::string(group) == "with_specials";
    simdjson::dom::array cases;
    REQUIRE(root[group].get_array().get(cases) == simdjson::SUCCESS);
    size_t total = 0;
    size_t same = 0;
    size_t tokens = 0;
    for (simdjson::dom::element c : cases) {
      std::string_view text;
      simdjson::dom::array ids;
      REQUIRE(c["text"].get_string().get(text) == simdjson::SUCCESS);
      REQUIRE(c["ids"].get_array().get(ids) == simdjson::SUCCESS);
      Ids want;
      for (simdjson::dom::element id : ids) {
        want.push_back(static_cast<uint32_t>(id.get_uint64().value()));
      }
      auto got = specials ? tok.Encode(text, allow) : tok.EncodeOrdinary(text);
      REQUIRE_MESSAGE(got.ok(), got.status().ToString());
      ++total;
      tokens += want.size();
      if (*got == want) {
        ++same;
      } else {
        CHECK_MESSAGE(false, std::string(group) << " differs: " << text);
      }
      CHECK(*tok.Decode(*got) == text);
      CHECK(*tok.Count(text,
                       specials ? allow
                                : EncodeOptions{.disallowed_special =
                                                    SpecialTokenSet::None()}) ==
            got->size());
    }
    std::printf(
        "llama3 parity (%s): %zu of %zu texts identical to "
        "llama3-tokenizer-js@1.2.0 (%zu tokens)\n",
        group, same, total, tokens);
    MESSAGE("llama3 parity (" << std::string(group) << "): " << same << " of "
                              << total);
    CHECK(same == total);
    CHECK(total > 0);
  }
}

TEST_CASE("a Llama 3 tokenizer makes llama3 models count exactly") {
  Data data;
  if (!Load(&data)) return;
  ModelRegistry registry;
  const std::string text = "This is a test sentence.";
  auto before = registry.CountTokens("llama3.1:8b", text);
  REQUIRE(before.ok());
  CHECK(before->method == CountMethod::kHeuristic);
  REQUIRE(registry.AddTokenizer(data.tokenizer).ok());
  auto after = registry.CountTokens("llama3.1:8b", text);
  REQUIRE(after.ok());
  CHECK(after->method == CountMethod::kTokenizer);
  CHECK(after->exact);
  CHECK(after->encoding == "llama3");
  CHECK(after->tokens == 6);
}

}  // namespace
}  // namespace ctxkit
