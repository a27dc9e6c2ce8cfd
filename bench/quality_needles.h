// The needles of bench/compaction_quality: the facts a compacted history must
// still hold for the next agent turn, and the plain string rules that find
// them in text whose structure the benchmark does not know by construction
// (SWE-agent observations, Claude Code tool results). The generated
// histories record their needles as they are written and use none of these
// rules.
//
// The rules are the benchmark's own, written from what the data is and
// independently of ctxkit's compactor: nothing here comes from
// lib/compactor or ctxkit/classifier.h, so the benchmark cannot grade the
// compactor by the compactor's own criteria.
//
// Error lines (IsErrorLine), after trimming blanks and a leading list bullet
// ("- ", "* "):
//   1. a Python exception line: a dotted identifier whose last part ends in
//      "Error" or "Exception", followed by ':' or the end of the line
//      ("TypeError: integer argument expected, got float",
//      "json.decoder.JSONDecodeError: Expecting value"); a flake8-style code
//      in front ("E999 IndentationError: ...") is not part of the excerpt;
//   2. a shell or tool diagnostic: the line starts with "error:", "Error:",
//      "ERROR:" or "fatal:", or contains "No such file or directory",
//      ": No such file", "command not found", "Permission denied",
//      "Segmentation fault" or "TIMED OUT";
//   3. a pytest outcome line: "FAILED " or "ERROR " followed by a test id
//      (it holds "::").
//   Lines that start with a digit and ':' (an editor's numbered file view)
//   are source code, never errors.
//
// A needle's excerpt is decoded text of at most kMaxExcerpt bytes, cut at a
// UTF-8 boundary; it is retained when it appears byte for byte in the
// decoded strings of the compacted history.
//
// Thread safety: the functions are reentrant.

#ifndef CTXKIT_BENCH_QUALITY_NEEDLES_H_
#define CTXKIT_BENCH_QUALITY_NEEDLES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::bench {

enum class NeedleKind {
  kTask,
  kError,
  kEditedFile,
  kLastResult,
  kFinalDecision
};
inline constexpr size_t kNeedleKinds = 5;

// "task", "errors", "edited files", "last result", "final decision".
const char* NeedleKindName(NeedleKind kind);

struct Needle {
  NeedleKind kind = NeedleKind::kTask;
  std::string excerpt;
};

// A distinctive excerpt needs some length; one this long is cut.
inline constexpr size_t kMaxExcerpt = 100;
// A line shorter than this is too generic to stand for a task or a result.
inline constexpr size_t kMinDistinctive = 20;

// `text` without leading and trailing blanks (space, tab, CR).
std::string_view Trim(std::string_view text);

// `text` without leading and trailing whitespace, newlines included.
std::string_view TrimAll(std::string_view text);

// The lines of `text`, each trimmed.
std::vector<std::string_view> Lines(std::string_view text);

// At most kMaxExcerpt bytes of `text`, not ending inside a UTF-8 sequence.
std::string Excerpt(std::string_view text);

// The excerpt of the first line of `text` at least kMinDistinctive bytes
// long; when there is none, the excerpt of the trimmed text from its start.
std::string DistinctiveLine(std::string_view text);

// True when `line` is an error line by the rules above; `*excerpt` (may be
// null) receives the part that is the needle.
bool IsErrorLine(std::string_view line, std::string* excerpt);

// Appends a needle unless one of the same kind has the same excerpt or the
// excerpt is empty: a fact seen twice is one fact.
void AddNeedle(std::vector<Needle>* needles, NeedleKind kind,
               std::string excerpt);

// Adds an error needle for every error line of `text`.
void AddErrorNeedles(std::vector<Needle>* needles, std::string_view text);

}  // namespace ctxkit::bench

#endif  // CTXKIT_BENCH_QUALITY_NEEDLES_H_
