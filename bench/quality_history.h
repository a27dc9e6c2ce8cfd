// One input of bench/compaction_quality: a chat history, the data set it
// belongs to, the model it is counted and compacted for, its needles, and
// what of it is a demonstration (whose content is not a needle and must not
// turn into claims about the real run). Every data set (trajectory.h,
// quality_claude_code.h, agent_history_generator.h) produces these, and the
// report (compaction_quality.cc, quality_output.h) reads only these.
//
// Thread safety: plain values; the functions are reentrant.

#ifndef CTXKIT_BENCH_QUALITY_HISTORY_H_
#define CTXKIT_BENCH_QUALITY_HISTORY_H_

#include <string>
#include <string_view>
#include <vector>

#include "bench/quality_needles.h"

namespace ctxkit::bench {

inline constexpr char kOpenAIModel[] = "gpt-4o";
// The registry resolves every "claude-" name to the "claude" encoding and
// the Anthropic message layout.
inline constexpr char kAnthropicModel[] = "claude-3-5-sonnet-latest";

struct History {
  std::string set;   // the data set: "swe-agent", "generated", ...
  std::string name;  // a file name or the generator's seed
  // Anthropic Messages (content blocks, thinking) rather than OpenAI chat.
  bool anthropic = false;
  // Each a JSON object: one message, in order.
  std::vector<std::string> messages;
  // Parallel to `messages`: true for the messages of a demonstration or
  // few-shot block that precedes the real task.
  std::vector<bool> demonstration;
  std::vector<Needle> needles;
  // Files edited in the demonstration and named nowhere in the real run:
  // compaction-written text that names one is a false action.
  std::vector<std::string> demo_only_paths;

  const char* model() const {
    return anthropic ? kAnthropicModel : kOpenAIModel;
  }
  // The messages as one JSON array.
  std::string MessagesJson() const;
};

// Every string value (not the keys) of the JSON document `json`, decoded and
// each followed by '\n', appended to `*out`. False with `*error` set on
// malformed JSON.
bool AppendDecodedStrings(std::string_view json, std::string* out,
                          std::string* error);

}  // namespace ctxkit::bench

#endif  // CTXKIT_BENCH_QUALITY_HISTORY_H_
