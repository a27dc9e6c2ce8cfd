// SWE-agent trajectories (.traj) as chat histories, and the facts a user of
// a compacted history needs next, for bench/compaction_quality.cc.
//
// The facts are found by rules written here, independently of ctxkit's
// classifier (lib/compactor), so the benchmark does not grade the compactor
// by its own criteria. Every rule is plain string matching.
//
// Thread safety: the functions are reentrant.

#ifndef CTXKIT_BENCH_TRAJECTORY_H_
#define CTXKIT_BENCH_TRAJECTORY_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit_bench {

enum class FactKind { kTask, kError, kEditedFile, kLastTest, kFinalDecision };
inline constexpr size_t kFactKinds = 5;
// "task", "errors", "edited files", "last test", "final decision".
const char* FactKindName(FactKind kind);

// One fact: `excerpt` (decoded text, not JSON) must appear in the compacted
// history's decoded strings for the fact to count as retained.
struct Fact {
  FactKind kind = FactKind::kTask;
  std::string excerpt;
};

struct Trajectory {
  std::string name;           // the file name
  std::string messages_json;  // a JSON array of OpenAI chat messages
  size_t message_count = 0;
  // True when the .traj recorded OpenAI function calls (assistant
  // "tool_calls" and "tool" observations with "tool_call_ids"), converted to
  // tool_calls / tool messages; false for text trajectories, whose
  // observations are user messages.
  bool tool_calls = false;
  // The messages no compaction may drop: the system messages, the first
  // user message (the task) and the last message with, when it is a tool
  // result, its call and sibling results, as a JSON array (for a lower
  // bound of the achievable token count).
  std::string required_json;
  std::vector<Fact> facts;
};

// Reads the .traj at `path` (a JSON object with a "history" array of
// {role, content, action?, thought?, tool_calls?, tool_call_ids?}) into
// `out`. Conversion:
//   - roles system/user/assistant are kept; "content" strings are kept as
//     they are (a content array keeps its text parts, joined by newlines);
//     SWE-agent's own fields (agent, message_type, thought, action, ...) are
//     dropped: the assistant's content already holds the thought and the
//     command.
//   - when every assistant "tool_calls" entry is answered by the "tool"
//     messages right after it (by "tool_call_ids"), they become OpenAI
//     tool_calls (id, type "function", function {name, arguments}) and tool
//     messages with "tool_call_id" (an observation answering several calls
//     is given to the first, the others get ""); otherwise every observation
//     is a user message and no tool_calls are emitted.
// Returns false with `*error` set when the file cannot be read or is not
// such a trajectory.
bool LoadTrajectory(const std::string& path, Trajectory* out,
                    std::string* error);

// Every string value (not the keys) of the JSON document `json`, decoded and
// joined by '\n', into `*out`. False with `*error` on malformed JSON.
bool DecodedStrings(std::string_view json, std::string* out,
                    std::string* error);

}  // namespace ctxkit_bench

#endif  // CTXKIT_BENCH_TRAJECTORY_H_
