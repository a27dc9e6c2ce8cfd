// Extractive summaries of dropped spans: what a reader of the compacted
// history needs to know about the messages it no longer sees, in seed 001's
// "[Compressed context: ...]" style.
//
// Deterministic: lists keep first-seen order, deduplicated (exact bytes),
// capped; nothing depends on hash order.
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
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/classifier.h"
#include "lib/compactor/chat_history.h"

namespace ctxkit::internal {

// Caps: topics, tables, tools and entities hold at most kMaxDigestItems
// items; errors, actions and decisions at most kMaxDigestLineItems. Free-text
// items (errors, decisions) are at most kMaxDigestItemBytes bytes, cut at a
// UTF-8 boundary and ending in "..." when cut.
inline constexpr size_t kMaxDigestItems = 8;
inline constexpr size_t kMaxDigestLineItems = 5;
inline constexpr size_t kMaxDigestItemBytes = 120;

struct SpanDigest {
  size_t message_count = 0;
  // From a fixed keyword table: "database queries", "schema", "testing",
  // "debugging", "version control", "dependencies", "code changes",
  // "performance", "deployment", "APIs", "reading code", "configuration",
  // "security", "documentation".
  std::vector<std::string> topics;
  // SQL identifiers after FROM / JOIN / INTO / UPDATE / TABLE (uppercase
  // keywords always; lowercase ones once the message shows SQL), as written.
  std::vector<std::string> tables;
  std::vector<std::string> tools;  // tools called or answered
  // File paths (with '/' or a known extension), http(s) URLs, identifiers
  // (snake_case or CamelCase names called as `name(`, `backticked` names).
  std::vector<std::string> entities;
  // Per message, the first two lines holding an error marker ("...Error:",
  // "...Exception:", "error:", "fatal:", "FAILED", "ERROR", "command not
  // found", "No such file", "syntax error"); for a Python traceback, its
  // exception line;
  // for a tool result flagged is_error without one, its first line. Call
  // arguments are not read for errors.
  std::vector<std::string> errors;
  // "called tool(short args)" and "edited path" (from edit-like tools, diff
  // "+++ b/path" lines, patch "*** Update File:" lines, SWE-agent "File
  // updated" observations). When full, an edit replaces the oldest "called"
  // entry, so edits are the last to be lost.
  std::vector<std::string> actions;
  // Lines starting with "decision:", "decided", "note:", "important:",
  // "warning:", "recommendation:", "I will", "let's" (any case, after list
  // or emphasis markers), outside tool results and call arguments.
  std::vector<std::string> decisions;
};

// Accumulates the facts of a span, message by message.
class SpanDigester {
 public:
  // Counts `message` and adds its facts. Transient messages (acknowledgements)
  // only add to the count and the tools. Reads the message only during the
  // call.
  void Add(const ChatMessage& message, Tier tier);
  // Adds everything `other` collected (for the whole-result summary), with
  // the same deduplication and caps; message counts add up.
  void Merge(const SpanDigest& other);
  const SpanDigest& digest() const { return digest_; }

 private:
  SpanDigest digest_;
  // Reused between messages so digesting does not allocate per message.
  std::string scratch_;
  std::string value_;
};

// "[Compressed context: Topics: a, b, Tables: t, Tools used: x, y,
// N messages compressed]" exactly in seed 001's style: sections and their
// items are separated by ", ", sections without items are left out, and one
// message reads "1 message compressed". With `enhanced`, "Entities: ...",
// "Errors: ...", "Actions: ...", "Decisions: ..." follow "Tools used" in the
// same style. Always valid UTF-8; deterministic.
std::string SummaryText(const SpanDigest& digest, bool enhanced);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_SUMMARY_H_
