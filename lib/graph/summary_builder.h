// The extractive summary of a context: what ContextGraph::Summarize writes
// when no host summarizer does (and what a host summarizer receives as its
// fallback). Built from the compactor's span digest, so a context's summary
// names the same errors, edits, decisions and topics a compaction of its
// messages would, plus the seed's "Recent user queries / Recent assistant
// responses" lines, its code-block extraction, key-insight rule and
// importance score.
//
// Thread safety: pure functions of their arguments (the default classifier
// is shared and immutable).

#ifndef CTXKIT_LIB_GRAPH_SUMMARY_BUILDER_H_
#define CTXKIT_LIB_GRAPH_SUMMARY_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "lib/compactor/summary.h"

namespace ctxkit::internal {

// One message of the window a summary reads.
struct SummarySource {
  MessageRole role = MessageRole::kUser;
  std::string_view content;  // valid UTF-8
  Importance importance = Importance::kMedium;
};

struct ExtractedSummary {
  // "This context contains N messages." (and how many were read).
  std::string header;
  SpanDigest digest;  // of the window's messages
  // The seed's lines: the last three user messages and assistant responses,
  // each cut to 100 bytes; empty when there are none.
  std::string recent_queries;
  std::string recent_responses;
  std::vector<CodeBlock> code_blocks;
  std::vector<std::string> key_insights;
  double importance_score = 0.5;
};

// The summary of `window` (the context's newest messages, oldest first) for
// a context of `total_messages` messages. `previous_blocks` and
// `previous_insights` are the context's last summary's: they fill the room
// the window leaves, so facts of messages that left the window survive.
ExtractedSummary ExtractSummary(
    const std::vector<SummarySource>& window, uint64_t total_messages,
    const std::vector<CodeBlock>& previous_blocks,
    const std::vector<std::string>& previous_insights);

// The summary's text in at most `max_tokens` tokens, as `count` (exact
// counts of the context's model) measures the whole text: the header, then
// the digest's facts with as many items as fit (SummaryFacts keeps the
// most important), then the recent queries and responses lines when they
// fit. What does not fit is left out; a header alone over the allowance is
// cut at a UTF-8 boundary. Errors: `count`'s.
absl::StatusOr<std::string> BuildSummaryText(
    const ExtractedSummary& summary, uint64_t max_tokens,
    absl::FunctionRef<absl::StatusOr<uint64_t>(std::string_view)> count);

// The fenced code blocks of `text` with the seed's semantics (the regex
// ```(?:([\w-]+)\n)?([\s\S]*?)```: an optional language word directly
// followed by a line break, then everything up to the next fence), code
// trimmed of surrounding blank lines and cut to kMaxCodeBlockBytes.
std::vector<CodeBlock> FindCodeBlocks(std::string_view text, double importance);

// The seed's key-insight candidates of a user message: its sentences that
// end in '?' or '!' ([^.!?]*[!?]+), trimmed, longer than 10 bytes, in
// order.
std::vector<std::string> QuestionSentences(std::string_view text);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_SUMMARY_BUILDER_H_
