// libFuzzer target over the compactor's entry points.
//
// Each input is given, as it is, to Compactor::CompactJson (seed 001's
// request) and ValidateChatHistory. When it is a history the compactor
// accepts, it is also compacted through Compact() at a small budget and a
// strategy derived from its bytes, and the guarantees are checked: the
// result is valid whenever the input was, the budget is met whenever the
// result says so, and the same input gives the same bytes. A broken
// guarantee aborts, which libFuzzer reports as a crash with its input.
//
// Build and run: see tests/fuzz/CMakeLists.txt.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ctxkit/compactor.h"
#include "ctxkit/message_count.h"
#include "simdjson.h"

namespace {

[[noreturn]] void Broken(const char* what, std::string_view detail) {
  std::fprintf(stderr, "guarantee broken: %s: %.*s\n", what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

const ctxkit::Compactor& TheCompactor() {
  static const ctxkit::Compactor* const compactor = new ctxkit::Compactor();
  return *compactor;
}

// The bytes of the input as a small budget and one of the strategies, so
// that the fuzzer explores tight budgets without having to write them.
ctxkit::CompactionOptions OptionsFor(std::string_view input) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (const char c : input) {
    h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  }
  ctxkit::CompactionOptions options;
  options.max_tokens = 1 + static_cast<int64_t>(h % 400);
  options.recent_window = static_cast<int64_t>((h >> 9) % 6);
  options.strategy = static_cast<ctxkit::CompactionStrategy>((h >> 12) % 4);
  options.explain = ((h >> 14) & 1) != 0;
  options.enable_llm_summarization = ((h >> 15) & 1) != 0;
  options.keep_anchors = ((h >> 16) & 3) != 0;
  options.preserve_tool_results = ((h >> 18) & 1) != 0;
  if (((h >> 19) & 3) == 0) options.target_ratio = 0.1 + ((h >> 21) % 9) / 10.0;
  return options;
}

void CheckCompaction(std::string_view input) {
  const ctxkit::Status input_valid = ctxkit::ValidateChatHistory(input);
  const ctxkit::CompactionOptions options = OptionsFor(input);
  auto result = TheCompactor().Compact(input, options);
  if (!result.ok()) {
    if (result.status().code() != ctxkit::StatusCode::kInvalidArgument &&
        result.status().code() != ctxkit::StatusCode::kResourceExhausted) {
      Broken("unexpected error code", result.status().ToString());
    }
    return;
  }
  if (result->budget_met &&
      result->compacted_tokens > static_cast<size_t>(options.max_tokens)) {
    Broken("budget_met but over the target", result->messages_json);
  }
  if (!result->budget_met &&
      result->over_budget_by + static_cast<size_t>(options.max_tokens) <
          result->compacted_tokens) {
    Broken("over_budget_by understates", result->messages_json);
  }
  if (input_valid.ok()) {
    const ctxkit::Status output_valid =
        ctxkit::ValidateChatHistory(result->messages_json, result->format);
    if (!output_valid.ok()) {
      Broken("a valid history compacted to an invalid one",
             output_valid.ToString() + " in " + result->messages_json);
    }
  }
  auto again = TheCompactor().Compact(input, options);
  if (!again.ok() || again->messages_json != result->messages_json) {
    Broken("not deterministic", result->messages_json);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // The JSON entry point: anything may come back but a crash.
  auto response = TheCompactor().CompactJson(input);
  if (response.ok() && (response->empty() || response->front() != '{')) {
    Broken("CompactJson returned no object", *response);
  }
  // The input as a history (an array, or an object with "messages").
  (void)ctxkit::ValidateChatHistory(input, ctxkit::ChatFormat::kAuto);
  (void)ctxkit::ValidateChatHistory(input, ctxkit::ChatFormat::kAnthropic);
  CheckCompaction(input);
  return 0;
}
