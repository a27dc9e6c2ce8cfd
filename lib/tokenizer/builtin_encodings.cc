#include "lib/tokenizer/builtin_encodings.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/tokenizer/embedded_vocabularies.h"

namespace ctxkit::internal {
namespace {

constexpr char kEndOfText[] = "<|endoftext|>";
constexpr char kFimPrefix[] = "<|fim_prefix|>";
constexpr char kFimMiddle[] = "<|fim_middle|>";
constexpr char kFimSuffix[] = "<|fim_suffix|>";
constexpr char kEndOfPrompt[] = "<|endofprompt|>";

struct BuiltinSpec {
  const char* name;
  const char* vocabulary;  // embedded vocabulary name
  PretokenPattern pattern;
  std::vector<SpecialToken> (*specials)();
  InputNormalization normalization = InputNormalization::kNone;
};

// Special tokens as tiktoken's tiktoken_ext/openai_public.py defines them.
std::vector<SpecialToken> R50kSpecials() { return {{kEndOfText, 50256}}; }
std::vector<SpecialToken> P50kEditSpecials() {
  return {{kEndOfText, 50256},
          {kFimPrefix, 50281},
          {kFimMiddle, 50282},
          {kFimSuffix, 50283}};
}
std::vector<SpecialToken> Cl100kSpecials() {
  return {{kEndOfText, 100257},
          {kFimPrefix, 100258},
          {kFimMiddle, 100259},
          {kFimSuffix, 100260},
          {kEndOfPrompt, 100276}};
}
std::vector<SpecialToken> O200kSpecials() {
  return {{kEndOfText, 199999}, {kEndOfPrompt, 200018}};
}
// gpt-oss's harmony format: o200k_base's specials, then the harmony ones,
// then reserved names for the rest of 200000..201087. tiktoken builds this
// as a dict, so <|endoftext|> appears once; its reserved range also gives id
// 200018 a second name (<|reserved_200018|>), and decoding 200018 yields the
// first, <|endofprompt|>.
std::vector<SpecialToken> O200kHarmonySpecials() {
  std::vector<SpecialToken> specials = O200kSpecials();
  const std::pair<const char*, uint32_t> harmony[] = {
      {"<|startoftext|>", 199998}, {"<|return|>", 200002},
      {"<|constrain|>", 200003},   {"<|channel|>", 200005},
      {"<|start|>", 200006},       {"<|end|>", 200007},
      {"<|message|>", 200008},     {"<|call|>", 200012}};
  for (const auto& [text, id] : harmony) specials.push_back({text, id});
  for (uint32_t id : {200000u, 200001u, 200004u, 200009u, 200010u, 200011u}) {
    specials.push_back({absl::StrFormat("<|reserved_%u|>", id), id});
  }
  for (uint32_t id = 200013; id < 201088; ++id) {
    specials.push_back({absl::StrFormat("<|reserved_%u|>", id), id});
  }
  return specials;
}

// The legacy Claude vocabulary's special tokens, as claude.json of
// @anthropic-ai/tokenizer lists them (vocabulary_test.cc checks that the
// embedded vocabulary recorded exactly these; tokenizer_test.cc and the
// parity test check the encoding uses them).
std::vector<SpecialToken> ClaudeSpecials() {
  return {{"<EOT>", 0},
          {"<META>", 1},
          {"<META_START>", 2},
          {"<META_END>", 3},
          {"<SOS>", 4}};
}

const BuiltinSpec kBuiltins[] = {
    {"r50k_base", "r50k_base", PretokenPattern::kGpt2, R50kSpecials},
    {"p50k_base", "p50k_base", PretokenPattern::kGpt2, R50kSpecials},
    {"p50k_edit", "p50k_base", PretokenPattern::kGpt2, P50kEditSpecials},
    {"cl100k_base", "cl100k_base", PretokenPattern::kCl100k, Cl100kSpecials},
    {"o200k_base", "o200k_base", PretokenPattern::kO200k, O200kSpecials},
    {"o200k_harmony", "o200k_base", PretokenPattern::kO200k,
     O200kHarmonySpecials},
    // @anthropic-ai/tokenizer: claude.json's pat_str is GPT-2's, and its
    // countTokens encodes text.normalize("NFKC").
    {"claude", "claude", PretokenPattern::kGpt2, ClaudeSpecials,
     InputNormalization::kNfkc},
};

}  // namespace

const std::vector<std::string>& BuiltinEncodingNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const BuiltinSpec& spec : kBuiltins) v->push_back(spec.name);
    return v;
  }();
  return *names;
}

absl::StatusOr<std::unique_ptr<Encoding>> BuildBuiltinEncoding(
    std::string_view name) {
  for (const BuiltinSpec& spec : kBuiltins) {
    if (name != spec.name) continue;
    absl::StatusOr<const Vocabulary*> vocabulary =
        EmbeddedVocabulary(spec.vocabulary);
    if (!vocabulary.ok()) return vocabulary.status();
    // The embedded vocabulary lives as long as the process: share it
    // without owning it.
    std::shared_ptr<const Vocabulary> shared(*vocabulary,
                                             [](const Vocabulary*) {});
    return Encoding::Create(spec.name, std::move(shared), spec.pattern,
                            spec.specials(), spec.normalization);
  }
  return absl::NotFoundError(
      absl::StrFormat("unknown encoding '%s'; the built-in encodings are %s",
                      name, absl::StrJoin(BuiltinEncodingNames(), ", ")));
}

}  // namespace ctxkit::internal
