// Cutting one message's text to a token allowance the way a reader would:
// whole lines, the head and the tail kept around a visible marker, and the
// lines that matter most kept first, so that a long log keeps its error and
// its test summary and a system prompt keeps its opening and its closing
// instructions.
//
// What matters depends on what the text is (TextKind):
//   kInstructions  a system prompt: its first and its last paragraph; the
//                  head gets two thirds of the remaining room.
//   kRequest       the task: its first paragraph (after a demonstration's
//                  "END OF DEMONSTRATION", when there is one), its fenced
//                  code blocks and its error lines; head first.
//   kOutput        tool output, logs, observations: a Python traceback's last
//                  frame and exception line, then the error lines (exception
//                  lines, "error:", "fatal:", "FAILED", ...), then the last
//                  line (where test runners print their summary); the tail
//                  gets two thirds of the remaining room.
//   kProse         anything else: its first paragraph; head first.
// Those lines are the text's floor: a cut to the floor keeps them, up to a
// cap per kind (FloorCap: a system prompt or a task keeps more than a log or
// a remark), and a cut below it keeps what of them fits.
//
// A line is never split unless it alone is larger than its side's share of
// the allowance (a minified JSON blob, a one-line prompt): then that side
// keeps a prefix (head) or suffix (tail) of it, cut at a token boundary and
// never inside a character. Each gap becomes one marker line:
//   [... ctxkit cut 120 lines (3512 tokens) ...]
//
// Thread safety: a TextCutter is used by one thread; it borrows the counter
// and the text for its lifetime.

#ifndef CTXKIT_LIB_COMPACTOR_TEXT_CUT_H_
#define CTXKIT_LIB_COMPACTOR_TEXT_CUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tokenizer/message_counter.h"

namespace ctxkit::internal {

enum class TextKind : uint8_t { kInstructions, kRequest, kOutput, kProse };

// The most tokens of protected lines a floor holds for a kind of text: a
// cut never needs to keep more than this to stay useful, and must-keep
// messages at their floors must still fit small budgets.
int64_t FloorCap(TextKind kind);

// The longest prefix of `text` that counts at most `max_tokens`
// (counter.Text()), cut at a token and character boundary. Errors: the
// counter's.
absl::StatusOr<std::string> FitPrefix(MessageCounter& counter,
                                      std::string_view text,
                                      int64_t max_tokens);

class TextCutter {
 public:
  // Splits `text` into lines and counts each. Errors: the counter's.
  static absl::StatusOr<TextCutter> Make(MessageCounter& counter,
                                         std::string_view text, TextKind kind);

  // Tokens of the whole text (counter.Text()).
  int64_t tokens() const { return tokens_; }
  // Tokens of the smallest cut that keeps the floor: its protected lines (at
  // most FloorCap() of them) and its markers; never more than tokens().
  int64_t floor_tokens() const { return floor_tokens_; }

  // The text cut to at most `keep` tokens (counter.Text() of the result),
  // `keep` < tokens(). Keeps the protected lines first, in their order of
  // priority, then fills the head and the tail. When `keep` leaves no room
  // for any text the result is the marker alone, or empty below what the
  // marker costs. Errors: the counter's.
  absl::StatusOr<std::string> Cut(int64_t keep);

 private:
  struct Line {
    std::string_view text;  // without its '\n'
    int64_t tokens = 0;     // of the line and its newline, approximately
  };
  TextCutter(MessageCounter& counter, std::string_view text)
      : counter_(&counter), text_(text) {}
  absl::Status Split();
  void Protect(TextKind kind);
  // One attempt at `budget` (the lines' approximate tokens plus markers).
  absl::StatusOr<std::string> Attempt(int64_t budget);

  MessageCounter* counter_;
  std::string_view text_;
  bool head_heavy_ = true;
  std::vector<Line> lines_;
  // Ranges of lines to keep first, in priority order: [begin, end) kept
  // whole, then, when `head_tokens` > 0, a prefix of that many tokens of
  // line `end` (a paragraph whose next line alone would pass the floor's
  // cap keeps the start of it).
  struct Protected {
    size_t begin = 0;
    size_t end = 0;
    int64_t head_tokens = 0;
  };
  std::vector<Protected> protected_;
  int64_t tokens_ = 0;
  int64_t floor_tokens_ = 0;
  int64_t marker_tokens_ = 0;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_TEXT_CUT_H_
