// The compaction part of `ctxkit demo`: a built-in coding-agent session
// compacted to a quarter of its tokens.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_DEMO_COMPACTION_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_DEMO_COMPACTION_H_

#include <ostream>

#include "ctxkit/status.h"

namespace ctxkit::program {

// Builds the session (OpenAI format: a system prompt, the task, tool calls
// reading files, running tests and editing code, an error, the fix), compacts
// it for gpt-4o to 25 % of its tokens, checks the result's structure, and
// prints the figures, the tiers and the summary to `out`.
Status RunCompactionDemo(std::ostream& out);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_DEMO_COMPACTION_H_
