// The built-in model table.
//
// Encodings. OpenAI names and prefixes are those of tiktoken's
// tiktoken/model.py, release 0.14.0 (openai/tiktoken commit 4e71bbe, read
// for this table): MODEL_TO_ENCODING gives the exact entries,
// MODEL_PREFIX_TO_ENCODING the prefix ones. tiktoken takes the first prefix
// in its dict order; ctxkit takes the longest, which gives the same answer
// for every tiktoken prefix (the only nested pairs, "ft:gpt-4o"/"ft:gpt-4",
// are listed longest first there). tiktoken's "gpt2"/"gpt-2" map to its
// "gpt2" encoding, which has r50k_base's vocabulary, pattern and special
// token, so ctxkit maps them to r50k_base. Entries marked "ctxkit" are not in
// tiktoken: spellings it would reject (an Ollama "gpt-oss:20b", a bare
// "gpt-oss", "text-embedding-3-*", "ft:gpt-4.1-*", which tiktoken's
// "ft:gpt-4" prefix would send to cl100k_base by mistake) and variants that
// only differ in their context window.
//
// Context windows and output limits: OpenAI's model pages
// (platform.openai.com/docs/models), Anthropic's models overview
// (docs.anthropic.com/en/docs/about-claude/models) and Meta's Llama 3, 3.1,
// 3.2 and 3.3 model cards, as published in mid 2025. Where a family's
// members differ, the prefix entry takes the smallest figure and the larger
// members are listed exactly ("conservative where unsure"): a budget that is
// too small only compacts early, one that is too large fails the request.
// Old completion models and Llama have no separate output limit, so
// max_output_tokens equals the context window. Opt-in extensions (Claude's
// 1M-token beta, 128k-token output beta) are not the default and not used.
// Ollama serves Llama with a smaller num_ctx by default (2048 to 8192 by
// version); the table gives the model's own window.

#include "lib/tokenizer/model_table.h"

#include <iterator>

namespace ctxkit::internal {
namespace {

constexpr MessageFormat kOpenAI = MessageFormat::kOpenAI;
constexpr MessageFormat kAnthropic = MessageFormat::kAnthropic;
constexpr MessageFormat kLlama3 = MessageFormat::kLlama3;
constexpr bool kExactName = false;
constexpr bool kPrefix = true;

constexpr BuiltinModel kModels[] = {
    // ---- OpenAI, o200k_base ----
    // Reasoning models.
    {"o1", kExactName, "o200k_base", 200000, 100000, true, kOpenAI},
    // o1-preview (128k / 32,768) is the smallest of the o1-* family.
    {"o1-", kPrefix, "o200k_base", 128000, 32768, true, kOpenAI},
    {"o1-mini", kPrefix, "o200k_base", 128000, 65536, true, kOpenAI},  // ctxkit
    {"o1-2024-12-17", kExactName, "o200k_base", 200000, 100000, true,
     kOpenAI},                                                         // ctxkit
    {"o1-pro", kPrefix, "o200k_base", 200000, 100000, true, kOpenAI},  // ctxkit
    {"o3", kExactName, "o200k_base", 200000, 100000, true, kOpenAI},
    {"o3-", kPrefix, "o200k_base", 200000, 100000, true, kOpenAI},
    {"o4-mini", kExactName, "o200k_base", 200000, 100000, true, kOpenAI},
    {"o4-mini-", kPrefix, "o200k_base", 200000, 100000, true, kOpenAI},
    // GPT-5 family: "gpt-5" is a prefix in tiktoken (gpt-5, gpt-5-mini,
    // gpt-5-nano, gpt-5.1, ...), and an exact name too.
    {"gpt-5", kExactName, "o200k_base", 400000, 128000, true, kOpenAI},
    {"gpt-5", kPrefix, "o200k_base", 400000, 128000, true, kOpenAI},
    {"gpt-5-chat", kPrefix, "o200k_base", 128000, 16384, true,
     kOpenAI},  // ctxkit
    {"gpt-4.1", kExactName, "o200k_base", 1047576, 32768, true, kOpenAI},
    {"gpt-4.1-", kPrefix, "o200k_base", 1047576, 32768, true, kOpenAI},
    {"gpt-4.5-", kPrefix, "o200k_base", 128000, 16384, true, kOpenAI},
    {"gpt-4o", kExactName, "o200k_base", 128000, 16384, true, kOpenAI},
    {"gpt-4o-", kPrefix, "o200k_base", 128000, 16384, true, kOpenAI},
    {"gpt-4o-2024-05-13", kExactName, "o200k_base", 128000, 4096, true,
     kOpenAI},  // ctxkit
    {"gpt-4o-realtime-preview", kPrefix, "o200k_base", 128000, 4096, true,
     kOpenAI},  // ctxkit
    {"gpt-4o-mini-realtime-preview", kPrefix, "o200k_base", 128000, 4096, true,
     kOpenAI},  // ctxkit
    {"chatgpt-4o-", kPrefix, "o200k_base", 128000, 16384, true, kOpenAI},
    // gpt-oss: the harmony chat format's special tokens.
    {"gpt-oss-", kPrefix, "o200k_harmony", 131072, 131072, true, kOpenAI},
    {"gpt-oss", kExactName, "o200k_harmony", 131072, 131072, true,
     kOpenAI},  // ctxkit
    {"gpt-oss:", kPrefix, "o200k_harmony", 131072, 131072, true,
     kOpenAI},  // ctxkit: Ollama tags
    // Fine-tuned.
    {"ft:gpt-4o", kPrefix, "o200k_base", 128000, 16384, true, kOpenAI},
    {"ft:gpt-4.1", kPrefix, "o200k_base", 1047576, 32768, true,
     kOpenAI},  // ctxkit

    // ---- OpenAI, cl100k_base ----
    // gpt-4: 8,192 for the base models; turbo and previews 128k in, 4,096
    // out; gpt-4-32k 32,768.
    {"gpt-4", kExactName, "cl100k_base", 8192, 8192, true, kOpenAI},
    {"gpt-4-", kPrefix, "cl100k_base", 8192, 8192, true, kOpenAI},
    {"gpt-4-32k", kPrefix, "cl100k_base", 32768, 32768, true,
     kOpenAI},  // ctxkit
    {"gpt-4-turbo", kPrefix, "cl100k_base", 128000, 4096, true,
     kOpenAI},  // ctxkit
    {"gpt-4-1106-", kPrefix, "cl100k_base", 128000, 4096, true,
     kOpenAI},  // ctxkit
    {"gpt-4-0125-", kPrefix, "cl100k_base", 128000, 4096, true,
     kOpenAI},  // ctxkit
    {"gpt-4-vision-preview", kPrefix, "cl100k_base", 128000, 4096, true,
     kOpenAI},  // ctxkit
    // gpt-3.5-turbo: 4,096 for the 0301/0613 snapshots and instruct; 16,385
    // for -16k, -1106, -0125 and the current alias, all with 4,096 out.
    {"gpt-3.5-turbo", kExactName, "cl100k_base", 16385, 4096, true, kOpenAI},
    {"gpt-3.5", kExactName, "cl100k_base", 16385, 4096, true, kOpenAI},
    {"gpt-3.5-turbo-", kPrefix, "cl100k_base", 4096, 4096, true, kOpenAI},
    {"gpt-3.5-turbo-16k", kPrefix, "cl100k_base", 16385, 4096, true,
     kOpenAI},  // ctxkit
    {"gpt-3.5-turbo-1106", kExactName, "cl100k_base", 16385, 4096, true,
     kOpenAI},  // ctxkit
    {"gpt-3.5-turbo-0125", kExactName, "cl100k_base", 16385, 4096, true,
     kOpenAI},  // ctxkit
    // Azure deployment names; the window depends on the deployed version,
    // so the smallest.
    {"gpt-35-turbo", kExactName, "cl100k_base", 4096, 4096, true, kOpenAI},
    {"gpt-35-turbo-", kPrefix, "cl100k_base", 4096, 4096, true, kOpenAI},
    {"gpt-35-turbo-16k", kPrefix, "cl100k_base", 16384, 4096, true,
     kOpenAI},  // ctxkit
    {"ft:gpt-4", kPrefix, "cl100k_base", 8192, 8192, true, kOpenAI},
    {"ft:gpt-3.5-turbo", kPrefix, "cl100k_base", 4096, 4096, true, kOpenAI},
    {"ft:davinci-002", kPrefix, "cl100k_base", 16384, 16384, true, kOpenAI},
    {"ft:babbage-002", kPrefix, "cl100k_base", 16384, 16384, true, kOpenAI},
    {"davinci-002", kExactName, "cl100k_base", 16384, 16384, true, kOpenAI},
    {"babbage-002", kExactName, "cl100k_base", 16384, 16384, true, kOpenAI},
    // Embeddings: 8,191 input tokens; they produce no tokens.
    {"text-embedding-ada-002", kExactName, "cl100k_base", 8191, 0, true,
     kOpenAI},
    {"text-embedding-3-small", kExactName, "cl100k_base", 8191, 0, true,
     kOpenAI},
    {"text-embedding-3-large", kExactName, "cl100k_base", 8191, 0, true,
     kOpenAI},
    {"text-embedding-3-", kPrefix, "cl100k_base", 8191, 0, true,
     kOpenAI},  // ctxkit

    // ---- OpenAI, deprecated: p50k_base, p50k_edit, r50k_base ----
    // Windows from OpenAI's deprecated-models pages; where none was
    // published (edit, codex, cushman), GPT-3's 2,048.
    {"text-davinci-003", kExactName, "p50k_base", 4097, 4097, true, kOpenAI},
    {"text-davinci-002", kExactName, "p50k_base", 4097, 4097, true, kOpenAI},
    {"text-davinci-001", kExactName, "r50k_base", 2049, 2049, true, kOpenAI},
    {"text-curie-001", kExactName, "r50k_base", 2049, 2049, true, kOpenAI},
    {"text-babbage-001", kExactName, "r50k_base", 2049, 2049, true, kOpenAI},
    {"text-ada-001", kExactName, "r50k_base", 2049, 2049, true, kOpenAI},
    {"davinci", kExactName, "r50k_base", 2049, 2049, true, kOpenAI},
    {"curie", kExactName, "r50k_base", 2049, 2049, true, kOpenAI},
    {"babbage", kExactName, "r50k_base", 2049, 2049, true, kOpenAI},
    {"ada", kExactName, "r50k_base", 2049, 2049, true, kOpenAI},
    {"code-davinci-002", kExactName, "p50k_base", 8001, 8001, true, kOpenAI},
    {"code-davinci-001", kExactName, "p50k_base", 2048, 2048, true, kOpenAI},
    {"code-cushman-002", kExactName, "p50k_base", 2048, 2048, true, kOpenAI},
    {"code-cushman-001", kExactName, "p50k_base", 2048, 2048, true, kOpenAI},
    {"davinci-codex", kExactName, "p50k_base", 2048, 2048, true, kOpenAI},
    {"cushman-codex", kExactName, "p50k_base", 2048, 2048, true, kOpenAI},
    {"text-davinci-edit-001", kExactName, "p50k_edit", 2048, 2048, true,
     kOpenAI},
    {"code-davinci-edit-001", kExactName, "p50k_edit", 2048, 2048, true,
     kOpenAI},
    {"text-similarity-davinci-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"text-similarity-curie-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"text-similarity-babbage-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"text-similarity-ada-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"text-search-davinci-doc-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"text-search-curie-doc-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"text-search-babbage-doc-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"text-search-ada-doc-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"code-search-babbage-code-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"code-search-ada-code-001", kExactName, "r50k_base", 2046, 0, true,
     kOpenAI},
    {"gpt2", kExactName, "r50k_base", 1024, 1024, true, kOpenAI},
    {"gpt-2", kExactName, "r50k_base", 1024, 1024, true, kOpenAI},

    // ---- Anthropic: encoding "claude" ----
    // The legacy vocabulary is the tokenizer of Claude 1 and 2 (exact); for
    // Claude 3 and later it only approximates (estimate). All Claude 2.1+
    // models take 200k tokens. Output limits: Claude 3 4,096; Claude 3.5
    // 8,192; Claude 3.7 Sonnet, Sonnet 4, 4.5 and Haiku 4.5 64,000; Opus 4
    // and 4.1 32,000. Unlisted future Claude models get 200k / 4,096.
    {"claude-", kPrefix, "claude", 200000, 4096, false, kAnthropic},
    {"claude-instant-1", kPrefix, "claude", 100000, 4096, true, kAnthropic},
    {"claude-2", kExactName, "claude", 100000, 4096, true, kAnthropic},
    {"claude-2.0", kPrefix, "claude", 100000, 4096, true, kAnthropic},
    {"claude-2.1", kPrefix, "claude", 200000, 4096, true, kAnthropic},
    {"claude-3-haiku", kPrefix, "claude", 200000, 4096, false, kAnthropic},
    {"claude-3-sonnet", kPrefix, "claude", 200000, 4096, false, kAnthropic},
    {"claude-3-opus", kPrefix, "claude", 200000, 4096, false, kAnthropic},
    {"claude-3-5-haiku", kPrefix, "claude", 200000, 8192, false, kAnthropic},
    {"claude-3-5-sonnet", kPrefix, "claude", 200000, 8192, false, kAnthropic},
    {"claude-3-7-sonnet", kPrefix, "claude", 200000, 64000, false, kAnthropic},
    {"claude-sonnet-4", kPrefix, "claude", 200000, 64000, false, kAnthropic},
    {"claude-haiku-4", kPrefix, "claude", 200000, 64000, false, kAnthropic},
    {"claude-opus-4", kPrefix, "claude", 200000, 32000, false, kAnthropic},

    // ---- Meta Llama 3: encoding "llama3" ----
    // Llama 3: 8,192; Llama 3.1, 3.2 and 3.3: 131,072 (Meta's model cards).
    // Ollama names ("llama3", "llama3.1:8b", "llama3.2:3b-instruct-q4_K_M"),
    // Hugging Face ids ("meta-llama/Meta-Llama-3-8B",
    // "meta-llama/Llama-3.1-8B-Instruct") and hosted ids ("llama3-70b-8192",
    // "llama-3.3-70b-versatile").
    {"llama3", kExactName, "llama3", 8192, 8192, true, kLlama3},
    {"llama3:", kPrefix, "llama3", 8192, 8192, true, kLlama3},
    {"llama3-", kPrefix, "llama3", 8192, 8192, true, kLlama3},
    {"llama3.1", kExactName, "llama3", 131072, 131072, true, kLlama3},
    {"llama3.1:", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"llama3.2", kExactName, "llama3", 131072, 131072, true, kLlama3},
    {"llama3.2:", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"llama3.2-vision", kExactName, "llama3", 131072, 131072, true, kLlama3},
    {"llama3.2-vision:", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"llama3.3", kExactName, "llama3", 131072, 131072, true, kLlama3},
    {"llama3.3:", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"llama-3.1-", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"llama-3.2-", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"llama-3.3-", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"meta-llama/meta-llama-3-", kPrefix, "llama3", 8192, 8192, true, kLlama3},
    {"meta-llama/meta-llama-3.1-", kPrefix, "llama3", 131072, 131072, true,
     kLlama3},
    {"meta-llama/llama-3.1-", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"meta-llama/llama-3.2-", kPrefix, "llama3", 131072, 131072, true, kLlama3},
    {"meta-llama/llama-3.3-", kPrefix, "llama3", 131072, 131072, true, kLlama3},
};

}  // namespace

std::span<const BuiltinModel> BuiltinModels() {
  return std::span<const BuiltinModel>(kModels, std::size(kModels));
}

}  // namespace ctxkit::internal
