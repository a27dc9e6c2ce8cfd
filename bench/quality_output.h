// Reads a compacted history against the history it came from, for
// bench/compaction_quality: which output messages are input messages,
// truncated input messages or text the compaction wrote; where the needles
// may be looked for; false actions; and the thinking-block check. Only the
// two JSON documents are read, never the compactor's own account of what it
// did, so the measure does not depend on the compactor describing itself
// correctly.
//
// Origin of an output message. Messages are compared in a canonical form
// (parsed and re-serialized minified, so escapes and spacing do not matter).
//   kept       byte-identical to an input message.
//   truncated  every part of it comes from one input message, shortened: a
//              part is a string content, or one content block. A part is
//              from the input when it is identical to an input block, or
//              when its text shares a prefix and a suffix with an input text
//              (the one of the input message its ids name: tool_call_id,
//              tool_calls ids, tool_use / tool_result ids, thinking
//              signatures; else any input text starting or ending with the
//              same 16 bytes) such that what is left between them, the
//              cut's marker, is at most max(256 bytes, 10 % of the part)
//              and shorter than what the cut removed from the input text.
//   written    no part comes from the input: a summary. (A message cut to
//              nothing but a marker shares nothing with its input either,
//              and counts here.)
//   folded     both: an input message that the compaction added text to
//              (a summary folded into the next kept message, or a tool
//              result replaced by a description). Its written text is what
//              its written parts hold beyond the shared prefix and suffix.
// "Summaries" below are the written and folded messages; "kept messages"
// are the kept, truncated and folded ones (each carries an input message).
//
// Needle haystack: the decoded strings of every output message, except that
// a kept or truncated copy of a demonstration message contributes nothing
// and a folded one only its written text: a needle of the real run must be
// found outside the demonstration.
//
// False actions: a demo-only path (History::demo_only_paths) that appears
// in written text. Such a path is named nowhere in the real run, so text the
// compaction wrote can only have taken it from the demonstration, and a
// summary naming it reports the demonstration's work as the run's.
//
// Thinking check (Anthropic histories): every output assistant message whose
// source input message holds thinking blocks starts with exactly those
// blocks, byte-identical (canonically) and in order; and no output thinking
// block is one the input does not hold. The source of an output assistant
// message is the input message holding its first thinking signature, else
// its first tool_use id, else its first content block.
//
// Thread safety: an OutputAnalyzer is immutable after construction; Analyze
// may run concurrently.

#ifndef CTXKIT_BENCH_QUALITY_OUTPUT_H_
#define CTXKIT_BENCH_QUALITY_OUTPUT_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/quality_history.h"

namespace ctxkit::bench {

enum class Origin { kKept, kTruncated, kWritten, kFolded };

struct OutputReport {
  size_t messages = 0;
  size_t kept = 0, truncated = 0, written = 0, folded = 0;
  // Tokens of the summaries: whole written messages, and the written text
  // of folded ones (counted as a user message's content, less the empty
  // message's count).
  size_t summary_tokens = 0;
  std::string haystack;      // where needles are looked for
  std::string written_text;  // what the compaction wrote
  std::vector<std::string> false_action_paths;
  bool thinking_checked = false;  // the output has an assistant message
                                  // whose source holds thinking
  bool thinking_intact = true;
  std::string thinking_problem;  // the first violation, for --verbose
};

// One message split into the parts compared above (quality_output.cc).
struct ParsedMessage;

class OutputAnalyzer {
 public:
  // Indexes `history`'s messages; `history` must outlive the analyzer.
  // False with `*error` when a message is not JSON (a converter bug).
  static std::unique_ptr<OutputAnalyzer> Create(const History& history,
                                                std::string* error);
  ~OutputAnalyzer();

  // Reads `messages_json` (the output's "messages" array); `message_tokens`
  // are its per-message token counts (CountMessagesForModel's `messages`).
  // False with `*error` when it is not a JSON array of objects or counting
  // fails.
  bool Analyze(std::string_view messages_json,
               const std::vector<size_t>& message_tokens, OutputReport* report,
               std::string* error) const;

 private:
  struct Index;
  explicit OutputAnalyzer(const History& history);

  // The origin of output message `m` (`canonical`: its canonical form);
  // `*source` receives the input message it comes from (none:
  // history_.messages.size()), `*written` the text the compaction wrote.
  Origin Classify(const ParsedMessage& m, const std::string& canonical,
                  size_t* source, std::string* written) const;
  // Adds to `*written` what `part_text` holds beyond the input text it
  // shares most with (among `candidates`); true when it shares any input
  // text; may set `*source` when it is still none.
  bool ClassifyText(const std::string& part_text,
                    const std::vector<size_t>& candidates, size_t* source,
                    std::string* written) const;
  // The thinking check of output assistant message `m`, at `position`.
  void CheckThinking(const ParsedMessage& m, size_t position,
                     OutputReport* report) const;

  const History& history_;
  std::unique_ptr<Index> index_;
};

}  // namespace ctxkit::bench

#endif  // CTXKIT_BENCH_QUALITY_OUTPUT_H_
