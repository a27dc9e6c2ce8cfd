// Extractive span digests: one pass over each message's text (bounded
// windows), split into lines, whitespace-separated chunks and ASCII words,
// with every rule a constant-time check on a line, chunk or word. No regular
// expressions: a span of 1.5 MB digests in a few milliseconds. The word
// lists are in summary_keywords.cc, the reading of call arguments in
// call_arguments.cc.

#include "lib/compactor/summary.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/compactor/ascii.h"
#include "lib/compactor/call_arguments.h"
#include "lib/compactor/error_lines.h"
#include "lib/compactor/next_turn.h"
#include "lib/compactor/summary_keywords.h"
#include "lib/compactor/summary_text.h"
#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

constexpr size_t kHeadScanBytes = 32 * 1024;
constexpr size_t kTailScanBytes = 8 * 1024;
// Names, paths, URLs and identifiers are shorter than free text.
constexpr size_t kMaxNameBytes = 80;
constexpr size_t kMaxWordBytes = 64;

// ---------------------------------------------------------------------------
// Digest lists

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

void AddUnique(std::vector<std::string>& list, size_t cap, std::string item) {
  if (item.empty() || list.size() >= cap || Contains(list, item)) return;
  list.push_back(std::move(item));
}

// Decisions keep the newest: the latest plan is what the next turn follows.
void AddNewest(std::vector<std::string>& list, size_t cap, std::string item) {
  if (item.empty()) return;
  auto it = std::find(list.begin(), list.end(), item);
  if (it != list.end()) list.erase(it);
  if (list.size() >= cap) list.erase(list.begin());
  list.push_back(std::move(item));
}

// One file named relatively ("create x.py") and absolutely ("[File:
// /repo/x.py]") is one edit: the longer name, which holds the shorter,
// stays.
void AddEdit(std::vector<std::string>& edits, std::string item) {
  if (item.empty()) return;
  for (std::string& existing : edits) {
    const bool item_longer = item.size() > existing.size();
    const std::string& longer = item_longer ? item : existing;
    const std::string& shorter = item_longer ? existing : item;
    if (longer == shorter) return;
    if (longer.size() > shorter.size() &&
        longer.compare(longer.size() - shorter.size(), shorter.size(),
                       shorter) == 0 &&
        longer[longer.size() - shorter.size() - 1] == '/') {
      if (item_longer) existing = std::move(item);
      return;
    }
  }
  if (edits.size() < kMaxDigestEdits) edits.push_back(std::move(item));
}

void AddName(std::vector<std::pair<std::string, size_t>>& names,
             std::string name, size_t count = 1) {
  if (name.empty()) return;
  for (auto& [existing, n] : names) {
    if (existing == name) {
      n += count;
      return;
    }
  }
  if (names.size() < kMaxDigestNames)
    names.emplace_back(std::move(name), count);
}

// ---------------------------------------------------------------------------
// Names: paths, URLs, identifiers

// directory: only path characters, a letter, and a '/' that is clearly a
// path separator (a leading "/", "./", "~/", two of them, or a file
// extension), or a bare file name with a known extension.
bool LooksLikePath(std::string_view s) {
  if (s.size() < 3 || s.size() > 255) return false;
  size_t slashes = 0;
  bool letter = false;
  for (char c : s) {
    if (!IsPathChar(c)) return false;
    slashes += c == '/';
    letter = letter || IsAlpha(c);
  }
  if (!letter || s.find("//") != std::string_view::npos) return false;
  if (slashes == 0) return s[0] != '.' && s[0] != '-' && HasKnownExtension(s);
  return s[0] == '/' || StartsWith(s, "./") || StartsWith(s, "../") ||
         StartsWith(s, "~/") || slashes >= 2 || HasKnownExtension(s);
}

bool IsSnakeOrCamelIdentifier(std::string_view w) {
  if (w.size() < 3 || w.size() > kMaxWordBytes || IsDigit(w[0])) return false;
  if (StartsWith(w, "__")) return false;  // dunders say little
  bool lower = false;
  for (char c : w) lower = lower || IsLower(c);
  if (!lower) return false;
  if (w.find('_') != std::string_view::npos)
    return IsLower(w[0]) || w[0] == '_';
  if (!IsUpper(w[0])) return false;
  for (size_t i = 1; i < w.size(); ++i) {
    if (IsUpper(w[i])) return true;
  }
  return false;
}

bool IsPlainIdentifier(std::string_view s) {
  if (s.size() < 2 || s.size() > kMaxWordBytes) return false;
  if (!IsAlpha(s[0]) && s[0] != '_') return false;
  for (char c : s) {
    if (!IsWordChar(c) && c != '.') return false;
  }
  return s.back() != '.';
}

// The scanner

// Which rules apply to a piece of text.
struct ScanMode {
  bool errors = false;           // every error line
  bool exception_lines = false;  // only tracebacks' exception lines
  bool decisions = false;
  bool edit_observations = false;
};

// Reads one message's text pieces into the digest.
class MessageScanner {
 public:
  explicit MessageScanner(SpanDigest& digest)
      : digest_(digest), errors_from_(digest.errors.size()) {}

  void SetSql(bool sql) { sql_context_ = sql; }

  // Scans `text` (a window of the message, or decoded call arguments).
  void Scan(std::string_view text, ScanMode mode) {
    mode_ = mode;
    in_traceback_ = false;
    size_t begin = 0;
    while (begin < text.size()) {
      const void* found =
          std::memchr(text.data() + begin, '\n', text.size() - begin);
      const size_t end =
          found == nullptr ? text.size()
                           : static_cast<size_t>(
                                 static_cast<const char*>(found) - text.data());
      std::string_view line = text.substr(begin, end - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ScanLine(line);
      begin = end + 1;
    }
  }

  // What the message said about edits, once all of it is scanned.
  void Finish() {
    if (edit_confirmed_ && !viewed_file_.empty()) AddEdited(viewed_file_);
  }

  bool error_taken() const { return errors_taken_ > 0; }
  void AddError(std::string_view line) {
    if (errors_taken_ >= kMaxErrorsPerMessage) return;
    line = TrimSpace(line);
    while (StartsWith(line, "- ") || StartsWith(line, "* ")) {
      line.remove_prefix(2);
    }
    // pytest's "E   AssertionError: ..." detail line: the message itself.
    if (StartsWith(line, "E ")) line = TrimSpace(line.substr(2));
    std::string item = MakeItem(line, kMaxDigestItemBytes);
    // pytest reports a failure twice, as the exception and as "FAILED
    // test_id - exception" in its summary: the summary line says both.
    const size_t dash = item.find(" - ");
    if (StartsWith(item, "FAILED ") && dash != std::string::npos) {
      const std::string_view message = std::string_view(item).substr(dash + 3);
      for (size_t i = errors_from_; i < digest_.errors.size(); ++i) {
        if (digest_.errors[i] == message) {
          digest_.errors[i] = std::move(item);
          return;
        }
      }
    } else {
      for (size_t i = errors_from_; i < digest_.errors.size(); ++i) {
        const std::string& e = digest_.errors[i];
        if (StartsWith(e, "FAILED ") && e.size() > item.size() + 3 &&
            e.compare(e.size() - item.size() - 3, 3, " - ") == 0 &&
            e.compare(e.size() - item.size(), item.size(), item) == 0) {
          return;
        }
      }
    }
    ++errors_taken_;
    AddUnique(digest_.errors, kMaxDigestErrors, std::move(item));
  }

  void AddEntity(std::string_view entity) {
    AddName(digest_.names, MakeItem(entity, kMaxDigestItemBytes));
  }

  size_t edits() const { return edits_; }

  void AddEdited(std::string_view path) {
    path = TrimSpace(path);
    if (path.empty() || path == "/dev/null") return;
    ++edits_;
    std::string item = MakeItem(path, kMaxDigestItemBytes);
    AddName(digest_.names, item);
    AddEdit(digest_.edits, std::move(item));
  }

 private:
  void ScanLine(std::string_view line) {
    skip_paths_ = false;
    const std::string_view trimmed = TrimSpace(line);
    // SWE-agent's status lines repeat the open file and the directory after
    // every command: they say nothing about the command.
    if (StartsWith(trimmed, "(Open file:") ||
        StartsWith(trimmed, "(Current directory:") ||
        StartsWith(trimmed, "bash-$")) {
      return;
    }
    if (!trimmed.empty()) LineRules(line, trimmed);
    // Chunks and words.
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && IsAsciiSpace(line[i])) ++i;
      const size_t chunk_begin = i;
      bool interesting = false;
      while (i < line.size() && !IsAsciiSpace(line[i])) {
        const char c = line[i];
        if (IsWordChar(c)) {
          const size_t word_begin = i;
          while (i < line.size() && IsWordChar(line[i])) ++i;
          ScanWord(line, word_begin, i);
          continue;
        }
        interesting =
            interesting || c == '/' || c == '.' || c == '`' || c == ':';
        ++i;
      }
      if (interesting && !skip_paths_ && i > chunk_begin) {
        ScanChunk(line.substr(chunk_begin, i - chunk_begin));
      }
    }
  }

  // Rules about whole lines: errors, tracebacks, diffs and patches,
  // SWE-agent file views and edit confirmations, decisions.
  void LineRules(std::string_view line, std::string_view trimmed) {
    if (mode_.errors || mode_.exception_lines) {
      if (StartsWith(trimmed, "Traceback (most recent call last)")) {
        in_traceback_ = true;
      } else if (in_traceback_ && !IsAsciiSpace(line[0])) {
        // The first unindented line after the frames names the exception.
        in_traceback_ = false;
        if (IsExceptionLine(line)) AddError(trimmed);
      } else if (mode_.errors && !in_traceback_ && IsErrorLine(line)) {
        AddError(trimmed);
      }
    }
    const char first = trimmed[0];
    if (first == '+' && StartsWith(trimmed, "+++ ")) {
      std::string_view path = trimmed.substr(4);
      path = path.substr(0, path.find('\t'));
      if (StartsWith(path, "b/")) path.remove_prefix(2);
      AddEdited(path);
      skip_paths_ = true;
    } else if ((first == '-' && StartsWith(trimmed, "--- ")) ||
               (first == 'd' && StartsWith(trimmed, "diff --git ")) ||
               (first == 'i' && StartsWith(trimmed, "index "))) {
      skip_paths_ = true;
    } else if (first == '*') {
      if (StartsWith(trimmed, "*** Update File: ")) {
        AddEdited(trimmed.substr(17));
        skip_paths_ = true;
      } else if (StartsWith(trimmed, "*** Add File: ")) {
        AddEdited(trimmed.substr(14));
        skip_paths_ = true;
      }
    }
    if (mode_.edit_observations) {
      if (first == '[' && StartsWith(trimmed, "[File: ")) {
        std::string_view path = trimmed.substr(7);
        path = path.substr(0, path.find(" ("));
        if (!path.empty() && path.back() == ']') path.remove_suffix(1);
        if (viewed_file_.empty()) viewed_file_ = TrimSpace(path);
      } else if (StartsWith(trimmed, "File updated") ||
                 StartsWith(trimmed, "Text replaced")) {
        edit_confirmed_ = true;
      } else if (StartsWith(trimmed, "The file ")) {
        const size_t edited = trimmed.find(" has been edited");
        if (edited != std::string_view::npos) {
          AddEdited(trimmed.substr(9, edited - 9));
        }
      }
    }
    if (mode_.decisions) {
      std::string_view s = trimmed;
      while (!s.empty() && (s[0] == '-' || s[0] == '*' || s[0] == '>' ||
                            s[0] == '#' || s[0] == '_' || s[0] == ' ')) {
        s.remove_prefix(1);
      }
      if (IsDecision(s)) {
        AddNewest(digest_.decisions, kMaxDigestDecisions,
                  MakeItem(s, kMaxDigestItemBytes));
      }
    }
  }

  static bool IsDecision(std::string_view s) {
    if (s.empty()) return false;
    switch (absl::ascii_tolower(s[0])) {
      case 'd':
        return StartsWithNoCase(s, "decision:") ||
               (StartsWithNoCase(s, "decided") &&
                (s.size() == 7 || !IsWordChar(s[7])));
      case 'n':
        return StartsWithNoCase(s, "note:");
      case 'i':
        return StartsWithNoCase(s, "important:") ||
               (StartsWithNoCase(s, "i will") &&
                (s.size() == 6 || !IsWordChar(s[6])));
      case 'w':
        return StartsWithNoCase(s, "warning:");
      case 'r':
        return StartsWithNoCase(s, "recommendation:");
      case 'l':
        return StartsWithNoCase(s, "let's ") ||
               StartsWithNoCase(s, "let\xE2\x80\x99s ");
      default:
        return false;
    }
  }

  void ScanWord(std::string_view line, size_t begin, size_t end) {
    const std::string_view word = line.substr(begin, end - begin);
    if (word.size() < 2 || word.size() > kMaxWordBytes) return;
    const char next = end < line.size() ? line[end] : '\0';
    if (next == '(' && IsSnakeOrCamelIdentifier(word)) AddEntity(word);
    if (!sql_context_ && word.size() >= 4 && IsUpper(word[0]) &&
        IsSqlVerb(word)) {
      sql_context_ = true;
    }
    if (sql_context_ && IsTableKeyword(word) &&
        digest_.tables.size() < kMaxDigestItems) {
      TableAfter(line, end);
    }
  }

  // Reads the table name after a FROM/JOIN/INTO/UPDATE/TABLE keyword ending
  // at line[pos].
  void TableAfter(std::string_view line, size_t pos) {
    for (int word_count = 0; word_count < 4; ++word_count) {
      while (pos < line.size() && IsAsciiSpace(line[pos])) ++pos;
      if (pos == line.size()) return;
      const char open = line[pos];
      const bool quoted = open == '"' || open == '`' || open == '[';
      if (quoted) ++pos;
      const size_t begin = pos;
      if (pos == line.size() || !(IsAlpha(line[pos]) || line[pos] == '_')) {
        return;
      }
      while (pos < line.size() && (IsWordChar(line[pos]) || line[pos] == '.')) {
        ++pos;
      }
      std::string_view name = line.substr(begin, pos - begin);
      while (!name.empty() && name.back() == '.') name.remove_suffix(1);
      if (quoted && pos < line.size() &&
          (line[pos] == '"' || line[pos] == '`' || line[pos] == ']')) {
        ++pos;
      }
      if (name.empty() || name.size() > kMaxWordBytes) return;
      if (IsTableModifier(name) && !quoted) continue;
      if (IsNotTable(name)) return;
      if (IsTableKeyword(name) || HasKnownExtension(name)) return;
      // Python's "from package import name".
      size_t after = pos;
      while (after < line.size() && IsAsciiSpace(line[after])) ++after;
      if (StartsWith(line.substr(after), "import ")) return;
      AddUnique(digest_.tables, kMaxDigestItems, std::string(name));
      return;
    }
  }

  // A whitespace-separated chunk holding '/', '.', '`' or ':': a path, a URL
  // or a backticked identifier.
  void ScanChunk(std::string_view chunk) {
    if (StartsWith(chunk, "</")) return;  // a closing tag, not a path
    bool backtick_open = false;
    bool backtick_close = false;
    constexpr std::string_view kLeading = "\"'`([{<";
    constexpr std::string_view kTrailing = "\"'`)]}>,;:.!?";
    while (!chunk.empty() &&
           kLeading.find(chunk.front()) != std::string_view::npos) {
      backtick_open = backtick_open || chunk.front() == '`';
      chunk.remove_prefix(1);
    }
    while (!chunk.empty() &&
           kTrailing.find(chunk.back()) != std::string_view::npos) {
      backtick_close = backtick_close || chunk.back() == '`';
      chunk.remove_suffix(1);
    }
    if (chunk.empty()) return;
    if (StartsWith(chunk, "http://") || StartsWith(chunk, "https://")) {
      if (chunk.size() > 10) AddEntity(chunk);
      return;
    }
    // "path.py:12:5" and "tests/x.py::test_y" name the file.
    const std::string_view path = chunk.substr(0, chunk.find(':'));
    if (LooksLikePath(path)) {
      AddEntity(path);
      return;
    }
    // Backticked names, when distinctive: `td_field`, `TimeDelta`,
    // `fields.serialize` (plain words such as `open` say little).
    if (backtick_open && backtick_close && IsPlainIdentifier(chunk) &&
        (IsSnakeOrCamelIdentifier(chunk) ||
         chunk.find('.') != std::string_view::npos)) {
      AddEntity(chunk);
    }
  }

  SpanDigest& digest_;
  // The message's own errors start here in digest_.errors.
  size_t errors_from_;
  ScanMode mode_;
  bool skip_paths_ = false;
  int errors_taken_ = 0;
  bool in_traceback_ = false;
  bool sql_context_ = false;
  bool edit_confirmed_ = false;
  size_t edits_ = 0;
  std::string_view viewed_file_;  // points into the message's text
};

// The parts of `text` scanned: all of it when short, else the first
// kHeadScanBytes and the last kTailScanBytes (from a line start when there
// is one), each cut at UTF-8 boundaries.
std::array<std::string_view, 2> ScanWindows(std::string_view text) {
  if (text.size() <= kHeadScanBytes + kTailScanBytes) return {text, {}};
  const std::string_view head = CutUtf8(text, kHeadScanBytes);
  size_t tail = text.size() - kTailScanBytes;
  const size_t newline = text.find('\n', tail);
  if (newline != std::string_view::npos) {
    tail = newline + 1;
  } else {
    while (tail < text.size() &&
           (static_cast<unsigned char>(text[tail]) & 0xC0) == 0x80) {
      ++tail;
    }
  }
  return {head, text.substr(tail)};
}

// A user message that is a command's output (SWE-agent observations).
bool IsObservation(const ChatMessage& m) {
  if (m.role != "user") return false;
  const std::string_view tail = std::string_view(m.text).substr(
      m.text.size() > 512 ? m.text.size() - 512 : 0);
  return tail.find("(Current directory:") != std::string_view::npos ||
         tail.find("bash-$") != std::string_view::npos;
}

}  // namespace

std::vector<std::string> Topics(const SpanDigest& digest) {
  // A topic is a file or a symbol: directories and URLs are where things
  // are, not what the span is about.
  auto topical = [](std::string_view name) {
    if (StartsWith(name, "http://") || StartsWith(name, "https://")) {
      return false;
    }
    const size_t slash = name.rfind('/');
    if (slash == std::string_view::npos) return true;
    return name.find('.', slash) != std::string_view::npos;
  };
  std::vector<size_t> order;
  for (size_t i = 0; i < digest.names.size(); ++i) {
    if (digest.names[i].second >= 2 && topical(digest.names[i].first)) {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return digest.names[a].second > digest.names[b].second;
  });
  std::vector<std::string> topics;
  for (size_t i : order) {
    if (topics.size() == kMaxDigestTopics) break;
    topics.push_back(digest.names[i].first);
  }
  return topics;
}

std::vector<std::string> Entities(const SpanDigest& digest) {
  const std::vector<std::string> topics = Topics(digest);
  std::vector<std::string> out;
  for (const auto& [name, count] : digest.names) {
    if (out.size() == kMaxDigestItems) break;
    if (!Contains(topics, name)) out.push_back(name);
  }
  return out;
}

void SpanDigester::Add(const ChatMessage& message, Tier tier,
                       bool demonstration) {
  ++digest_.message_count;
  if (demonstration) return;
  for (const ToolCall& call : message.calls) {
    AddUnique(digest_.tools, kMaxDigestItems,
              MakeItem(call.name, kMaxNameBytes));
  }
  if (!message.result_tool_name.empty()) {
    AddUnique(digest_.tools, kMaxDigestItems,
              MakeItem(message.result_tool_name, kMaxNameBytes));
  }
  if (tier == Tier::kTransient) return;

  MessageScanner scanner(digest_);
  const bool is_result = !message.result_ids.empty() || message.role == "tool";
  const bool output = is_result || IsObservation(message);
  ScanMode text_mode;
  text_mode.errors = output;
  text_mode.exception_lines = message.role == "user";
  text_mode.decisions = !output;
  text_mode.edit_observations = true;
  if (is_result && IsSqlTool(message.result_tool_name)) scanner.SetSql(true);
  for (std::string_view window : ScanWindows(message.text)) {
    if (!window.empty()) scanner.Scan(window, text_mode);
  }
  if (message.role == "user" && !output) {
    const std::string_view own = TrimSpace(
        message.result_ids.empty() ? message.text : message.mixed_own_text);
    AddUnique(digest_.requests, kMaxDigestRequests,
              MakeItem(own.substr(0, own.find('\n')), kMaxDigestItemBytes));
  } else if (!message.mixed_own_text.empty()) {
    const std::string_view own = TrimSpace(message.mixed_own_text);
    AddUnique(digest_.requests, kMaxDigestRequests,
              MakeItem(own.substr(0, own.find('\n')), kMaxDigestItemBytes));
  }
  if (message.role == "assistant") {
    // SWE-agent's text form: the command the turn runs.
    const std::string_view written =
        ShellWrittenFile(TurnCommand(message.text));
    if (!written.empty()) scanner.AddEdited(written);
  }

  const ScanMode arguments_mode;  // names and tables only
  for (const ToolCall& call : message.calls) {
    scratch_.clear();
    CallArguments arguments;
    ReadArguments(call.arguments, &scratch_, &value_, &arguments);
    scanner.SetSql(IsSqlTool(call.name));
    const bool edit_tool = IsEditTool(call.name) && arguments.command != "view";
    const size_t edits_before = scanner.edits();
    if (edit_tool && !arguments.path.empty()) {
      scanner.AddEdited(arguments.path);
      scanner.Scan(scratch_, arguments_mode);
      continue;
    }
    scanner.Scan(scratch_, arguments_mode);
    if (!arguments.command.empty() && !edit_tool) {
      const std::string_view written =
          ShellWrittenFile(std::string_view(arguments.command)
                               .substr(0, arguments.command.find('\n')));
      if (!written.empty()) scanner.AddEdited(written);
    }
    // A patch tool's "edited" lines say more than its arguments.
    if (scanner.edits() == edits_before) {
      std::string item = MakeItem(call.name, kMaxNameBytes);
      item += '(';
      item += arguments.short_form;
      item += ')';
      AddUnique(digest_.calls, kMaxDigestCalls, std::move(item));
    }
  }
  scanner.Finish();

  if (message.is_error && !scanner.error_taken()) {
    std::string_view first_line = TrimSpace(message.text);
    first_line = first_line.substr(0, first_line.find('\n'));
    if (first_line.empty()) {
      scanner.AddError(std::string(message.result_tool_name.empty()
                                       ? "tool"
                                       : message.result_tool_name) +
                       " failed");
    } else {
      scanner.AddError(first_line);
    }
  }
}

void SpanDigester::Merge(const SpanDigest& other) {
  digest_.message_count += other.message_count;
  auto merge = [](std::vector<std::string>& into,
                  const std::vector<std::string>& from, size_t cap) {
    for (const std::string& item : from) AddUnique(into, cap, item);
  };
  merge(digest_.tables, other.tables, kMaxDigestItems);
  merge(digest_.tools, other.tools, kMaxDigestItems);
  for (const auto& [name, count] : other.names) {
    AddName(digest_.names, name, count);
  }
  merge(digest_.errors, other.errors, kMaxDigestErrors);
  for (const std::string& edit : other.edits) AddEdit(digest_.edits, edit);
  merge(digest_.calls, other.calls, kMaxDigestCalls);
  merge(digest_.requests, other.requests, kMaxDigestRequests);
  for (const std::string& d : other.decisions) {
    AddNewest(digest_.decisions, kMaxDigestDecisions, d);
  }
}

namespace {

enum Section : uint8_t {
  kTopics,
  kTables,
  kTools,
  kEntities,
  kRequests,
  kErrors,
  kEdits,
  kCalls,
  kDecisions,
  kSectionCount,
};

// Every item of the digest by section, in display order.
std::array<std::vector<std::string>, kSectionCount> Sections(
    const SpanDigest& d, bool enhanced) {
  std::array<std::vector<std::string>, kSectionCount> s;
  s[kTopics] = Topics(d);
  s[kTables] = d.tables;
  s[kTools] = d.tools;
  if (enhanced) {
    s[kEntities] = Entities(d);
    s[kRequests] = d.requests;
    s[kErrors] = d.errors;
    for (const std::string& e : d.edits) s[kEdits].push_back("edited " + e);
    for (const std::string& c : d.calls) s[kCalls].push_back("called " + c);
    s[kDecisions] = d.decisions;
  }
  return s;
}

}  // namespace

size_t SummaryItemCount(const SpanDigest& digest, bool enhanced) {
  size_t n = 0;
  for (const auto& items : Sections(digest, enhanced)) n += items.size();
  return n;
}

std::string SummaryFacts(const SpanDigest& digest, bool enhanced, size_t keep) {
  const auto sections = Sections(digest, enhanced);
  // Which items are written: the `keep` most important, by section
  // priority (decisions newest first, every other list in order).
  std::array<std::vector<char>, kSectionCount> chosen;
  for (size_t s = 0; s < kSectionCount; ++s) {
    chosen[s].assign(sections[s].size(), 0);
  }
  constexpr Section kPriority[] = {kEdits,     kErrors,   kRequests,
                                   kDecisions, kEntities, kCalls,
                                   kTools,     kTables,   kTopics};
  for (Section s : kPriority) {
    const size_t n = sections[s].size();
    for (size_t i = 0; i < n && keep > 0; ++i, --keep) {
      chosen[s][s == kDecisions ? n - 1 - i : i] = 1;
    }
  }
  std::string out;
  auto section = [&](std::string_view label, Section s, bool continued) {
    bool first = !continued;
    for (size_t i = 0; i < sections[s].size(); ++i) {
      if (!chosen[s][i]) continue;
      if (first) {
        out.append(label);
        out += ": ";
        first = false;
      }
      out += sections[s][i];
      out += ", ";
    }
    return !first;
  };
  section("Topics", kTopics, false);
  section("Tables", kTables, false);
  section("Tools used", kTools, false);
  if (enhanced) {
    section("Entities", kEntities, false);
    section("Requests", kRequests, false);
    section("Errors", kErrors, false);
    const bool edits = section("Actions", kEdits, false);
    section("Actions", kCalls, edits);
    section("Decisions", kDecisions, false);
  }
  if (!out.empty()) out.resize(out.size() - 2);  // the last ", "
  // Items come from valid UTF-8 cut at boundaries; a digest filled by hand
  // (or from unchecked text) is repaired rather than passed on.
  if (!IsValidUtf8(out)) return ReplaceInvalidUtf8(out);
  return out;
}

std::string SummaryText(const SpanDigest& digest, bool enhanced, size_t keep) {
  std::string out = "[Compressed context: ";
  const std::string facts = SummaryFacts(digest, enhanced, keep);
  if (!facts.empty()) {
    out += facts;
    out += ", ";
  }
  out += std::to_string(digest.message_count);
  out += digest.message_count == 1 ? " message compressed]"
                                   : " messages compressed]";
  return out;
}

}  // namespace ctxkit::internal
