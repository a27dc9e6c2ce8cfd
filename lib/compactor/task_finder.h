// Where a history's task is, found as a person would: the user's actual
// request, not a worked example shown before it.
//
// The rule (documented for users in compactor.h, "The task"):
//   1. The opening is every message before the first assistant turn that is
//      not itself part of a demonstration. Its candidates are the user
//      messages with text that carry no tool results.
//   2. A candidate is a demonstration when the message object says
//      "is_demo": true (SWE-agent's put_demos_in_history), or when its text
//      carries a demonstration marker: a strong one ("--- DEMONSTRATION
//      ---", "END OF DEMONSTRATION", "Here is a demonstration", "<example>",
//      "few-shot", "Here are some examples", "example session", "worked
//      example", "for reference only", ...) or a line starting "Example:".
//      A strong marker opens a block: the assistant turns and results after
//      it, up to the next user request, are the example's and do not end
//      the opening. Any message flagged "is_demo" is a demonstration,
//      whatever its role, and does not end the opening either.
//   3. The task is the last candidate that is not a demonstration and says
//      more than an acknowledgement (at least kMinTaskBytes of text); else
//      the last candidate that is not a demonstration; else, when every
//      candidate is one, the last candidate (a request that shows an example
//      is still the request, and the turns after it are the session, not
//      an example's). Earlier candidates that are not demonstrations are
//      context the user gave before the request and are classified like any
//      other message.
//   4. With no candidate (the history opens with an assistant turn), the
//      task is the first user message with text, as before.
//
// Thread safety: FindTask is reentrant.

#ifndef CTXKIT_LIB_COMPACTOR_TASK_FINDER_H_
#define CTXKIT_LIB_COMPACTOR_TASK_FINDER_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "lib/compactor/chat_history.h"

namespace ctxkit::internal {

// A candidate shorter than this (trimmed) is an acknowledgement such as
// "ok, go", not a request, when a longer one precedes it.
inline constexpr size_t kMinTaskBytes = 16;

// What the opening of a history holds.
enum class OpeningRole : uint8_t {
  kNone,           // not part of the opening's candidates
  kTask,           // the user's request
  kDemonstration,  // a worked example or few-shot block
  kBeforeTask,     // the user's own text before the request
};

struct TaskFinding {
  static constexpr size_t kNoTask = std::numeric_limits<size_t>::max();
  size_t task = kNoTask;
  std::vector<OpeningRole> roles;  // per message
  // Per message: why it has its role, for --explain ("" for kNone). Static
  // text or built from indices; independent of the history's lifetime.
  std::vector<std::string> details;
};

// Finds the task and the demonstrations of `history` by the rule above.
// Reads at most the first kMarkerScanBytes of each candidate's text when
// looking for markers, so its cost is bounded by the opening's size.
TaskFinding FindTask(const ChatHistory& history);

// The marker that makes `text` a demonstration, or empty. Exposed for
// tests.
std::string_view DemonstrationMarker(std::string_view text);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_TASK_FINDER_H_
