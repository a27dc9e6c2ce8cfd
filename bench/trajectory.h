// SWE-agent trajectories (.traj) as OpenAI chat histories with their
// needles, for the "swe-agent" and "swe-agent+demo" data sets of
// bench/compaction_quality.
//
// Conversion: each trajectory's "history" becomes OpenAI chat messages with
// the roles it records. Content strings are kept as they are (a content
// array keeps its text parts, joined by newlines); SWE-agent's own fields
// (agent, message_type, thought, action, ...) are dropped: the assistant's
// content already holds the thought and, in text runs, the command. When
// every assistant "tool_calls" entry is answered by the "tool" entries right
// after it ("tool_call_ids"), they become tool_calls (id, type "function",
// function {name, arguments}) and tool messages with "tool_call_id" (an
// observation answering several calls is given to the first, the others get
// ""); otherwise every observation is a user message and no tool_calls are
// emitted. Entries marked "is_demo" are flagged as demonstration.
//
// Needle rules (plain string matching, the benchmark's own; see also
// quality_needles.h). The instance message is the user entry whose content
// holds "ISSUE:\n" (SWE-bench) or "The description is:\n" (CTF), wherever it
// is; observations are the other user entries and the tool entries.
//   task            the issue text: what follows the marker, up to
//                   "\n\nINSTRUCTIONS:", as its first line of at least 20
//                   bytes (else its start); no instance message, no task
//                   needle
//   errors          every distinct error line (quality_needles.h) of every
//                   observation
//   edited files    from each assistant entry's "action" (its first line):
//                   `create PATH`; `edit ...`, `insert ...` and `append ...`
//                   of SWE-agent's windowed editor, which change the open
//                   file (the last `open PATH` / `create PATH`, else the
//                   observation's "(Open file: PATH)"); `str_replace_editor
//                   create|str_replace|insert|undo_edit PATH`; a shell
//                   redirection `> PATH` or `>> PATH`. One needle per file
//                   even when named relatively and absolutely; the first
//                   spelling is the excerpt
//   last result     the observation of the last action that runs a program
//                   (first word python, python3, pytest, tox, nosetests,
//                   bash, sh, node, or ./PROGRAM, or "make test", "go test",
//                   "cargo test", "npm test"): its last line other than
//                   SWE-agent's status lines ("(Open file: ...)",
//                   "(Current directory: ...)", "bash-$"), or, when that is
//                   shorter than 20 bytes, the observation from its start,
//                   so that a short number printed elsewhere too does not
//                   count by accident
//   final decision  the last assistant entry's thought (its content before
//                   the ``` or <command> block): first line of at least 20
//                   bytes, else its start
//
// Demonstrations ("swe-agent+demo"): SWE-agent with put_demos_in_history
// false puts one user message between the system message and the instance
// message: its demonstration_template with {demonstration} replaced by the
// demonstration run's history, rendered as SWE-agent renders it (the
// content of every non-system entry, joined by '\n'). Needles stay those of
// the real run.
//
// Thread safety: the functions are reentrant.

#ifndef CTXKIT_BENCH_TRAJECTORY_H_
#define CTXKIT_BENCH_TRAJECTORY_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "bench/quality_history.h"

namespace ctxkit::bench {

// SWE-agent's default demonstration_template, for trajectory folders where
// no .traj records one in replay_config.agent.templates.
extern const char kSweAgentDemonstrationTemplate[];

struct Trajectory {
  History history;  // set "swe-agent"
  // SWE-agent's text for this run as someone else's demonstration.
  std::string demonstration_text;
  // The files the run edits, by the rule above.
  std::vector<std::string> edited_paths;
  // "ISSUE:" or "The description is:"; empty without an instance message.
  std::string task_marker;
  // The run's replay_config.agent.templates.demonstration_template; empty
  // when the .traj records none.
  std::string demonstration_template;
  // Every decoded string of the converted messages, for "named nowhere in
  // the run".
  std::string text;
};

// Reads the .traj at `path` into `*out`. False with `*error` set when the
// file cannot be read or is not a SWE-agent trajectory.
bool LoadTrajectory(const std::string& path, Trajectory* out,
                    std::string* error);

// The index in `runs` of the demonstration for runs[i]: the next run after i
// (cyclically) with another task that edits a file named in its
// demonstration text and nowhere in runs[i], preferring one with the same
// task marker (a SWE-bench demonstration for a SWE-bench issue, as
// SWE-agent's configurations pair them). runs.size() when there is none.
size_t ChooseDemonstration(const std::vector<Trajectory>& runs, size_t i);

// runs[i] as set "swe-agent+demo": the demonstration message from `demo`
// inserted after the leading system messages, flagged as demonstration;
// demo_only_paths are `demo`'s edited files named in its demonstration text
// and nowhere in `run`.
History WithDemonstration(const Trajectory& run, const Trajectory& demo,
                          std::string_view demonstration_template);

}  // namespace ctxkit::bench

#endif  // CTXKIT_BENCH_TRAJECTORY_H_
