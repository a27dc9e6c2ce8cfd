#include "lib/compactor/task_finder.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "lib/compactor/ascii.h"

namespace ctxkit::internal {
namespace {

// Markers are looked for in the head and the tail of a message: SWE-agent's
// template opens with its phrase and closes with "END OF DEMONSTRATION",
// and a demonstration may be tens of kilobytes long.
constexpr size_t kMarkerHeadBytes = 64 * 1024;
constexpr size_t kMarkerTailBytes = 4 * 1024;

// Anywhere in the text, ASCII case ignored. Each is specific to examples
// shown to a model (SWE-agent's demonstration template, few-shot prompts,
// the <example> tags of prompt guides); "example" alone is not (issues say
// "for example"). A message carrying one of these opens a demonstration
// that may span turns: the assistant turns and results after it, up to the
// next user request, belong to it.
constexpr std::string_view kMarkers[] = {
    "--- demonstration ---",
    "end of demonstration",
    "here is a demonstration",
    "here's a demonstration",
    "<demonstration>",
    "<example>",
    "<examples>",
    "few-shot",
    "here are some examples",
    "here are a few examples",
    "example session",
    "example conversation",
    "sample session",
    "sample conversation",
    "worked example",
    "for reference only",
};
// At the start of a line: weaker (a request may show its own example), so
// such a message is a demonstration only within the opening.
constexpr std::string_view kLineMarkers[] = {
    "example:", "examples:", "demonstration:"};

struct Found {
  std::string_view marker;
  bool strong = false;
};

Found FindMarker(std::string_view window) {
  Found weak;
  for (size_t i = 0; i < window.size(); ++i) {
    const bool line_start = i == 0 || window[i - 1] == '\n';
    const char c = absl::ascii_tolower(window[i]);
    if (c != '-' && c != 'e' && c != 'h' && c != '<' && c != 'f' && c != 'd' &&
        c != 's' && c != 'w') {
      continue;
    }
    const std::string_view rest = window.substr(i);
    for (std::string_view marker : kMarkers) {
      if (marker[0] == c && StartsWithNoCase(rest, marker)) {
        return {marker, true};
      }
    }
    if (line_start && weak.marker.empty()) {
      for (std::string_view marker : kLineMarkers) {
        if (marker[0] == c && StartsWithNoCase(rest, marker)) {
          weak = {marker, false};
        }
      }
    }
  }
  return weak;
}

Found MarkerOf(std::string_view text) {
  if (text.size() <= kMarkerHeadBytes + kMarkerTailBytes) {
    return FindMarker(text);
  }
  Found found = FindMarker(text.substr(0, kMarkerHeadBytes));
  if (!found.strong) {
    Found tail = FindMarker(text.substr(text.size() - kMarkerTailBytes));
    if (tail.strong || found.marker.empty()) found = tail;
  }
  return found;
}

bool IsCandidate(const ChatMessage& m) {
  return m.role == "user" && m.result_ids.empty() && !m.text.empty();
}

}  // namespace

std::string_view DemonstrationMarker(std::string_view text) {
  return MarkerOf(text).marker;
}

TaskFinding FindTask(const ChatHistory& history) {
  const std::vector<ChatMessage>& messages = history.messages;
  TaskFinding out;
  out.roles.assign(messages.size(), OpeningRole::kNone);
  out.details.assign(messages.size(), std::string());

  // The opening, with demonstration blocks skipped: a request carrying a
  // strong marker takes the turns after it, up to the next request, into
  // its demonstration.
  std::vector<size_t> candidates;
  std::vector<std::string_view> markers(messages.size());
  std::vector<char> in_block(messages.size(), 0);
  size_t opening_end = messages.size();
  size_t block_opener = messages.size();  // of the demonstration block open
  for (size_t k = 0; k < messages.size(); ++k) {
    const ChatMessage& m = messages[k];
    if (m.is_demo) {
      out.roles[k] = OpeningRole::kDemonstration;
      out.details[k] = "demonstration: the message is flagged \"is_demo\"";
      continue;
    }
    if (IsCandidate(m)) {
      const Found found = MarkerOf(m.text);
      markers[k] = found.marker;
      block_opener = found.strong ? k : messages.size();
      candidates.push_back(k);
      continue;
    }
    if (block_opener < messages.size()) {
      in_block[k] = 1;
      out.roles[k] = OpeningRole::kDemonstration;
      out.details[k] = absl::StrFormat(
          "demonstration: part of the example that message %d opens",
          block_opener);
      continue;
    }
    if (m.role == "assistant") {
      opening_end = k;
      break;
    }
  }

  std::vector<size_t> requests;  // candidates that are not demonstrations
  for (size_t k : candidates) {
    if (markers[k].empty()) {
      requests.push_back(k);
      continue;
    }
    out.roles[k] = OpeningRole::kDemonstration;
    out.details[k] = absl::StrFormat(
        "demonstration: its text carries the marker \"%s\"", markers[k]);
  }

  size_t task = TaskFinding::kNoTask;
  std::string why;
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
    if (TrimmedSize(messages[*it].text) >= kMinTaskBytes) {
      task = *it;
      break;
    }
  }
  if (task == TaskFinding::kNoTask && !requests.empty()) task = requests.back();
  if (task != TaskFinding::kNoTask) {
    why = opening_end == messages.size()
              ? "the task: the last user request (the history has no "
                "assistant turn)"
              : "the task: the last user request before the first assistant "
                "turn";
  } else if (!candidates.empty()) {
    // Every candidate carries a marker: a request that shows an example is
    // still the request.
    task = candidates.back();
    why =
        "the task: the last user request before the first assistant turn "
        "(every one carries a demonstration marker)";
  } else {
    for (size_t k = opening_end; k < messages.size(); ++k) {
      if (IsCandidate(messages[k]) && !messages[k].is_demo) {
        task = k;
        why =
            "the task: the first user request (no user request comes "
            "before the first assistant turn)";
        break;
      }
    }
  }
  if (task == TaskFinding::kNoTask) return out;
  // What follows the task is the session itself, even when the task's own
  // marker opened a block (a request that shows a worked example).
  for (size_t k = task + 1; k < messages.size(); ++k) {
    if (in_block[k]) {
      out.roles[k] = OpeningRole::kNone;
      out.details[k].clear();
    }
  }

  size_t demonstrations = 0;
  for (size_t k = 0; k < task; ++k) {
    if (out.roles[k] == OpeningRole::kDemonstration) ++demonstrations;
  }
  if (demonstrations > 0) {
    why += absl::StrFormat("; %d demonstration message%s before it",
                           demonstrations, demonstrations == 1 ? "" : "s");
  }
  out.task = task;
  out.roles[task] = OpeningRole::kTask;
  out.details[task] = std::move(why);
  for (size_t k : requests) {
    if (k < task) {
      out.roles[k] = OpeningRole::kBeforeTask;
      out.details[k] = absl::StrFormat(
          "before the task: the user's text ahead of the request (message %d)",
          task);
    }
  }
  return out;
}

}  // namespace ctxkit::internal
