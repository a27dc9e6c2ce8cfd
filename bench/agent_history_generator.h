// Long coding-agent histories made by a deterministic generator, with the
// needles they hold recorded as they are written, for the "generated" and
// "generated-holdout" data sets of bench/compaction_quality.
//
// A history is: a system prompt; optionally a few-shot block (an example
// session on other files, flagged as demonstration); optionally a user
// message of environment context; the task (a user message); then agent
// work until the requested number of messages: file reads, code searches,
// edits (a read of the file, then the edit), test runs with pytest output
// (failing ones print the failure, a distinct AssertionError line and the
// short summary), program runs ending in a Python traceback with a distinct
// exception line, long logs (40 to 160 lines) whose error is their last
// line, parallel reads and occasional plans; it ends with a final test run
// that passes and a final assistant decision. The project's files (every
// directory x module x variant of the vocabulary) are shuffled per seed; a
// quarter are edited, one after the other, and never otherwise named; the
// rest are the ones read, searched and seen in tracebacks. So an edited
// path survives compaction only with its edit (or its read just before) or
// in a summary.
//
// Formats. OpenAI: assistant messages with "tool_calls" and one "tool"
// message per call. Anthropic: every assistant message starts with a signed
// thinking block {"type":"thinking","thinking":...,"signature":...}, then
// text and tool_use blocks; results are tool_result blocks at the start of
// the next user message (a user text that follows results joins that
// message, so roles alternate).
//
// Needles, by construction (no rule reads the text back): the task's title
// line; every exception line (traceback, pytest failure, end of a log);
// every path the real run edits; the last line of the final test run; the
// first line of the final decision. The few-shot block's edits, errors and
// test results are not needles; its edited paths come from directories the
// real run never uses and are the history's demo_only_paths.
//
// Vocabularies. The tuning family ("generated") and the holdout family
// ("generated-holdout") differ in everything the generator can vary: the
// project (a payments ledger vs. a map-tile renderer), file and function
// names, exception types and messages, tool names and argument names, log
// format, pytest's output style (full vs. -q), and the phrasing of thoughts,
// plans, tasks and decisions.
//
// Thread safety: the function is reentrant.

#ifndef CTXKIT_BENCH_AGENT_HISTORY_GENERATOR_H_
#define CTXKIT_BENCH_AGENT_HISTORY_GENERATOR_H_

#include <cstddef>
#include <cstdint>

#include "bench/quality_history.h"

namespace ctxkit::bench {

struct AgentHistoryOptions {
  uint64_t seed = 0;
  // The history has at least this many messages (the final run and
  // decision may add a few).
  size_t messages = 2000;
  bool anthropic = false;
  bool holdout = false;  // the holdout vocabulary, set "generated-holdout"
  bool few_shot = false;
  bool context_preamble = false;
};

// The same options give the same bytes on every machine.
History GenerateAgentHistory(const AgentHistoryOptions& options);

}  // namespace ctxkit::bench

#endif  // CTXKIT_BENCH_AGENT_HISTORY_GENERATOR_H_
