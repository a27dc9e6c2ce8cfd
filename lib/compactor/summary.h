// Extractive summaries of dropped spans: what a reader of the compacted
// history needs to know about the messages it no longer sees, in seed 001's
// "[Compressed context: ...]" style.
//
// What a span's digest holds, and where each fact may come from:
//   errors     error lines (error_lines.h) of tool results and command
//              output only (tool messages, tool_result blocks, SWE-agent
//              observations), and the exception line that ends a Python
//              traceback wherever a user pasted one; never assistant prose,
//              never call arguments. Verbatim up to kMaxDigestItemBytes.
//   edits      files that were changed: edit tools' path arguments, diff
//              "+++ b/path" lines, patch "*** Update File:" lines,
//              SWE-agent's "File updated" observations of the open file.
//   calls      "tool(short arguments)" of other tool calls.
//   requests   what the user asked: the first line of each user message's
//              own words (not command output, not tool results).
//   decisions  lines of the user's or assistant's own text starting with
//              "decision:", "decided", "note:", "important:", "warning:",
//              "recommendation:", "I will", "let's" (the newest kept).
//   names      file paths, URLs and identifiers (snake_case or CamelCase
//              names called as `name(`, `backticked` names), with how often
//              the span mentions them: the most mentioned are its topics.
//   tables     SQL table names after FROM / JOIN / INTO / UPDATE / TABLE,
//              only in a message that is SQL (an upper-case SQL statement,
//              or a call of a SQL tool).
//   tools      tools called or answered.
// A demonstration (a worked example shown before the task) only adds to the
// count: its edits and errors never happened. Transient messages add to the
// count and the tools.
//
// Deterministic: lists keep first-seen order (decisions: the newest),
// deduplicated (exact bytes), capped; nothing depends on hash order.
//
// Bounded work: of each message's text only the first 32 KiB and the last
// 8 KiB are scanned (of each call's arguments, the first 32 KiB), so a huge
// tool output costs O(1) and a span costs O(messages). Every item is valid
// UTF-8 when the input is, and SummaryText() repairs anything that is not.
//
// Thread safety: a SpanDigester is used by one thread; the free functions
// are reentrant.

#ifndef CTXKIT_LIB_COMPACTOR_SUMMARY_H_
#define CTXKIT_LIB_COMPACTOR_SUMMARY_H_

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/classifier.h"
#include "lib/compactor/chat_history.h"

namespace ctxkit::internal {

// Caps of a digest's lists. Errors and edits are what the next turn needs
// most, so they have room for every one a long span usually holds; the
// summary's token allowance then decides how many are written.
inline constexpr size_t kMaxDigestItems = 8;  // tables, tools, entities
inline constexpr size_t kMaxDigestTopics = 3;
inline constexpr size_t kMaxDigestErrors = 1024;
inline constexpr size_t kMaxDigestEdits = 512;
inline constexpr size_t kMaxDigestCalls = 5;
inline constexpr size_t kMaxDigestDecisions = 5;
inline constexpr size_t kMaxDigestRequests = 64;
// Errors taken from one message: a failing run reports its errors and
// their causes; beyond this they are repetitions.
inline constexpr int kMaxErrorsPerMessage = 16;
// Names tracked for counting (the topics come from them).
inline constexpr size_t kMaxDigestNames = 32;
// Free-text items (errors, decisions) are at most this many bytes, cut at a
// UTF-8 boundary and ending in "..." when cut: long enough for a whole
// exception line.
inline constexpr size_t kMaxDigestItemBytes = 160;

struct SpanDigest {
  size_t message_count = 0;
  std::vector<std::string> tables;
  std::vector<std::string> tools;
  // Paths, URLs and identifiers in first-seen order, each with how many
  // times the span mentions it.
  std::vector<std::pair<std::string, size_t>> names;
  std::vector<std::string> errors;
  std::vector<std::string> edits;  // paths
  std::vector<std::string> calls;  // "tool(short arguments)"
  std::vector<std::string> requests;
  std::vector<std::string> decisions;  // oldest first
};

// The files and symbols mentioned at least twice (not directories or
// URLs), most mentioned first (ties in first-seen order), at most
// kMaxDigestTopics: specific topics, or none.
std::vector<std::string> Topics(const SpanDigest& digest);
// The other names, first-seen order, at most kMaxDigestItems.
std::vector<std::string> Entities(const SpanDigest& digest);

// Accumulates the facts of a span, message by message.
class SpanDigester {
 public:
  // Counts `message` and adds its facts (see above). Reads the message only
  // during the call.
  void Add(const ChatMessage& message, Tier tier, bool demonstration = false);
  // Adds everything `other` collected, with the same deduplication and
  // caps; counts add up. Merging the digests of a span's messages, one by
  // one, gives the digest of the span (so one message is digested once
  // however many summaries are tried).
  void Merge(const SpanDigest& other);
  const SpanDigest& digest() const { return digest_; }

 private:
  SpanDigest digest_;
  // Reused between messages so digesting does not allocate per message.
  std::string scratch_;
  std::string value_;
};

// "[Compressed context: Topics: a, b, Tables: t, Tools used: x, y,
// N messages compressed]" in seed 001's style: sections and their items
// are separated by ", ", sections without items are left out, and one
// message reads "1 message compressed". With `enhanced`, "Entities: ...",
// "Requests: ...", "Errors: ...", "Actions: edited p, called t(...)",
// "Decisions: ..." follow "Tools used" in the same style.
//
// `keep` limits the items written to the `keep` most important ones, in
// this order: edits (a handful of paths, each the place the work is),
// errors, requests, decisions (newest first), entities, calls, tools,
// tables, topics; the message count is always written. So a summary
// that must shrink loses its least useful items first and never its count.
// Always valid UTF-8; deterministic.
std::string SummaryText(const SpanDigest& digest, bool enhanced,
                        size_t keep = std::numeric_limits<size_t>::max());
// SummaryText's sections alone ("Topics: a, b, Errors: e"), without the
// brackets and the message count: for summaries that say what they cover
// in their own words (ContextGraph's). Empty when no item is kept.
std::string SummaryFacts(const SpanDigest& digest, bool enhanced,
                         size_t keep = std::numeric_limits<size_t>::max());
// How many items SummaryText(digest, enhanced) can write.
size_t SummaryItemCount(const SpanDigest& digest, bool enhanced);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_SUMMARY_H_
