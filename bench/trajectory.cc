#include "bench/trajectory.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit_bench {
namespace {

// Facts longer than this are cut (at a UTF-8 boundary): a distinctive
// excerpt is enough, and a shorter one survives a kept message's truncation
// more often only by luck.
constexpr size_t kMaxExcerpt = 100;
// A task or decision line shorter than this is not distinctive.
constexpr size_t kMinExcerpt = 20;

void AppendJsonString(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (u < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[u >> 4]);
          out->push_back(kHex[u & 15]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(Trim(text.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

// At most kMaxExcerpt bytes, not ending inside a UTF-8 sequence.
std::string Excerpt(std::string_view s) {
  if (s.size() <= kMaxExcerpt) return std::string(s);
  size_t n = kMaxExcerpt;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}

bool Contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// An error line of an observation: a Python-style exception ("ValueError:
// ...", "Error: ...", "FooException: ..."), a compiler or shell diagnostic
// ("error:", "fatal:", "command not found", "No such file or directory",
// "Permission denied", "Segmentation fault", "syntax error"), or a failed
// test line of pytest ("FAILED ...", "ERROR ...").
// Lines of a file view ("123:    except ValueError:") and source code that
// handles or raises errors are not error messages.
bool IsErrorLine(std::string_view line) {
  if (line.size() < 6) return false;
  size_t digits = 0;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9')
    ++digits;
  if (digits > 0 && digits < line.size() && line[digits] == ':') return false;
  for (std::string_view code :
       {"except ", "except:", "raise ", "catch ", "throw "}) {
    if (StartsWith(line, code)) return false;
  }
  for (std::string_view marker :
       {std::string_view("Error:"), std::string_view("Exception:")}) {
    for (size_t pos = line.find(marker); pos != std::string_view::npos;
         pos = line.find(marker, pos + 1)) {
      if (pos == 0 || IsLetter(line[pos - 1])) return true;
    }
  }
  for (std::string_view marker :
       {"error:", "fatal:", "command not found", "No such file or directory",
        "Permission denied", "Segmentation fault", "syntax error"}) {
    if (Contains(line, marker)) return true;
  }
  return StartsWith(line, "FAILED ") || StartsWith(line, "ERROR ");
}

// SWE-agent's status lines after every observation, which say nothing about
// the command's result.
bool IsPromptLine(std::string_view line) {
  return line.empty() || StartsWith(line, "(Open file:") ||
         StartsWith(line, "(Current directory:") ||
         StartsWith(line, "bash-$") ||
         StartsWith(line, "(Interactive session:");
}

bool IsTestCommand(std::string_view action) {
  for (std::string_view marker :
       {"pytest", "unittest", "tox ", "nosetests", "make test", "npm test",
        "go test", "cargo test"}) {
    if (Contains(action, marker)) return true;
  }
  // `python[3] <file>` running a test or reproduction script.
  if (StartsWith(action, "python")) {
    return Contains(action, "test") || Contains(action, "reproduce");
  }
  return false;
}

// The first whitespace-separated word after `prefix` at the start of `s`.
std::string_view ArgumentAfter(std::string_view s, std::string_view prefix) {
  if (!StartsWith(s, prefix)) return {};
  s.remove_prefix(prefix.size());
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  size_t end = 0;
  while (end < s.size() && s[end] != ' ' && s[end] != '\n' && s[end] != '\r')
    ++end;
  std::string_view word = s.substr(0, end);
  if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') &&
      word.back() == word.front()) {
    word = word.substr(1, word.size() - 2);
  }
  return word;
}

// Files an action writes: SWE-agent's `create PATH`, `edit N:M` (the open
// file), the str_replace_editor commands that change a file, and shell
// redirections `> PATH` / `>> PATH`.
void EditedFiles(std::string_view action, std::string_view open_file,
                 std::vector<std::string>* out) {
  action = Trim(action);
  if (std::string_view p = ArgumentAfter(action, "create "); !p.empty()) {
    out->emplace_back(p);
    return;
  }
  if (StartsWith(action, "edit ") || action == "edit") {
    if (!open_file.empty()) out->emplace_back(open_file);
    return;
  }
  for (std::string_view cmd :
       {"str_replace_editor create ", "str_replace_editor str_replace ",
        "str_replace_editor insert ", "str_replace_editor undo_edit "}) {
    if (std::string_view p = ArgumentAfter(action, cmd); !p.empty()) {
      out->emplace_back(p);
      return;
    }
  }
  // Redirections, outside the first line's heredoc body.
  std::string_view first_line = action.substr(0, action.find('\n'));
  for (size_t pos = first_line.find('>'); pos != std::string_view::npos;
       pos = first_line.find('>', pos + 1)) {
    if (pos > 0 && (first_line[pos - 1] == '2' || first_line[pos - 1] == '&' ||
                    first_line[pos - 1] == '-' || first_line[pos - 1] == '=')) {
      continue;  // 2>&1, &>, ->, =>
    }
    size_t start = pos + 1;
    if (start < first_line.size() && first_line[start] == '>') ++start;
    if (start < first_line.size() && first_line[start] == '&') continue;
    while (start < first_line.size() && first_line[start] == ' ') ++start;
    size_t end = start;
    while (end < first_line.size() && first_line[end] != ' ' &&
           first_line[end] != ';' && first_line[end] != '|' &&
           first_line[end] != '&' && first_line[end] != ')') {
      ++end;
    }
    std::string_view p = first_line.substr(start, end - start);
    if (p.size() >= 2 && (p.front() == '"' || p.front() == '\'') &&
        p.back() == p.front()) {
      p = p.substr(1, p.size() - 2);
    }
    if (p.empty() || StartsWith(p, "/dev/")) continue;
    if (p.find('.') == std::string_view::npos &&
        p.find('/') == std::string_view::npos)
      continue;
    out->emplace_back(p);
    pos = end;
  }
}

// "(Open file: PATH)" of an observation, or empty (also for "n/a").
std::string_view OpenFileOf(std::string_view observation) {
  constexpr std::string_view kMarker = "(Open file: ";
  size_t pos = observation.rfind(kMarker);
  if (pos == std::string_view::npos) return {};
  pos += kMarker.size();
  size_t end = observation.find(')', pos);
  if (end == std::string_view::npos) return {};
  std::string_view p = Trim(observation.substr(pos, end - pos));
  return p == "n/a" ? std::string_view() : p;
}

// The assistant's content without its command block (``` or <command>).
std::string_view ThoughtOf(std::string_view content) {
  size_t cut = std::min(content.find("```"), content.find("<command>"));
  return Trim(content.substr(0, cut));
}

// The first line of `text` at least kMinExcerpt bytes long, else the
// longest line, as an excerpt.
std::string DistinctiveLine(std::string_view text) {
  std::string_view longest;
  for (std::string_view line : Lines(text)) {
    if (line.size() >= kMinExcerpt) return Excerpt(line);
    if (line.size() > longest.size()) longest = line;
  }
  return Excerpt(longest);
}

std::string TaskExcerpt(std::string_view task) {
  // SWE-bench issues: the line after "ISSUE:"; CTF challenges: the line
  // after "The description is:".
  for (std::string_view marker : {"ISSUE:\n", "The description is:\n"}) {
    size_t pos = task.find(marker);
    if (pos != std::string_view::npos) {
      std::string line = DistinctiveLine(task.substr(pos + marker.size()));
      if (line.size() >= kMinExcerpt) return line;
    }
  }
  return DistinctiveLine(task);
}

// What a history entry is, after conversion.
struct Entry {
  std::string role;
  std::string content;
  std::string action;  // assistant: the command it ran
  std::vector<std::string> call_ids, call_names, call_arguments;
  std::vector<std::string> result_ids;  // tool: the calls it answers
};

bool StringOf(simdjson::dom::element e, std::string* out) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return false;
  out->assign(s);
  return true;
}

// `r` may hold an error (a missing field): then false, as for a non-string.
bool GetString(simdjson::simdjson_result<simdjson::dom::element> r,
               std::string* out) {
  simdjson::dom::element e;
  if (r.get(e) != simdjson::SUCCESS) return false;
  return StringOf(e, out);
}

bool ContentText(simdjson::dom::element e, std::string* out) {
  if (e.is_null()) {
    out->clear();
    return true;
  }
  if (StringOf(e, out)) return true;
  simdjson::dom::array parts;
  if (e.get_array().get(parts) != simdjson::SUCCESS) return false;
  out->clear();
  for (simdjson::dom::element part : parts) {
    std::string_view text;
    if (part["text"].get_string().get(text) == simdjson::SUCCESS) {
      if (!out->empty()) out->push_back('\n');
      out->append(text);
    }
  }
  return true;
}

void CollectStrings(simdjson::dom::element e, std::string* out) {
  switch (e.type()) {
    case simdjson::dom::element_type::STRING: {
      std::string_view s;
      if (e.get_string().get(s) == simdjson::SUCCESS) {
        out->append(s);
        out->push_back('\n');
      }
      break;
    }
    case simdjson::dom::element_type::ARRAY: {
      simdjson::dom::array array;
      if (e.get_array().get(array) != simdjson::SUCCESS) break;
      for (simdjson::dom::element child : array) CollectStrings(child, out);
      break;
    }
    case simdjson::dom::element_type::OBJECT: {
      simdjson::dom::object object;
      if (e.get_object().get(object) != simdjson::SUCCESS) break;
      for (simdjson::dom::key_value_pair field : object)
        CollectStrings(field.value, out);
      break;
    }
    default:
      break;
  }
}

}  // namespace

const char* FactKindName(FactKind kind) {
  switch (kind) {
    case FactKind::kTask:
      return "task";
    case FactKind::kError:
      return "errors";
    case FactKind::kEditedFile:
      return "edited files";
    case FactKind::kLastTest:
      return "last test";
    case FactKind::kFinalDecision:
      return "final decision";
  }
  return "?";
}

bool DecodedStrings(std::string_view json, std::string* out,
                    std::string* error) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto e = parser.parse(json.data(), json.size()).get(doc);
      e != simdjson::SUCCESS) {
    *error = simdjson::error_message(e);
    return false;
  }
  out->clear();
  CollectStrings(doc, out);
  return true;
}

bool LoadTrajectory(const std::string& path, Trajectory* out,
                    std::string* error) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto e = parser.load(path).get(doc); e != simdjson::SUCCESS) {
    *error = path + ": " + simdjson::error_message(e);
    return false;
  }
  simdjson::dom::array history;
  if (doc["history"].get_array().get(history) != simdjson::SUCCESS) {
    *error = path + ": no \"history\" array";
    return false;
  }
  std::vector<Entry> entries;
  for (simdjson::dom::element item : history) {
    Entry entry;
    if (!GetString(item["role"], &entry.role)) {
      *error = path + ": history[" + std::to_string(entries.size()) +
               "].role is not a string";
      return false;
    }
    simdjson::dom::element content;
    if (item["content"].get(content) != simdjson::SUCCESS ||
        !ContentText(content, &entry.content)) {
      *error = path + ": history[" + std::to_string(entries.size()) +
               "].content is unreadable";
      return false;
    }
    GetString(item["action"], &entry.action);
    simdjson::dom::array calls;
    if (item["tool_calls"].get_array().get(calls) == simdjson::SUCCESS) {
      for (simdjson::dom::element call : calls) {
        std::string id, name, arguments;
        GetString(call["id"], &id);
        GetString(call["function"]["name"], &name);
        GetString(call["function"]["arguments"], &arguments);
        entry.call_ids.push_back(id);
        entry.call_names.push_back(name);
        entry.call_arguments.push_back(arguments);
      }
    }
    simdjson::dom::array ids;
    if (item["tool_call_ids"].get_array().get(ids) == simdjson::SUCCESS) {
      for (simdjson::dom::element id : ids) {
        std::string s;
        if (StringOf(id, &s)) entry.result_ids.push_back(s);
      }
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) {
    *error = path + ": empty history";
    return false;
  }

  // Tool calls only when every call is answered right after it, and every
  // tool message answers a call of the assistant before it.
  bool tool_calls = false;
  bool consistent = true;
  for (size_t i = 0; i < entries.size() && consistent; ++i) {
    const Entry& e = entries[i];
    if (e.role == "tool") {
      if (e.result_ids.empty()) consistent = false;
      continue;
    }
    if (e.call_ids.empty()) continue;
    tool_calls = true;
    std::set<std::string> pending(e.call_ids.begin(), e.call_ids.end());
    if (pending.size() != e.call_ids.size() || pending.count("") > 0)
      consistent = false;
    size_t j = i + 1;
    for (; j < entries.size() && entries[j].role == "tool"; ++j) {
      for (const std::string& id : entries[j].result_ids) {
        if (pending.erase(id) == 0) consistent = false;
      }
    }
    if (!pending.empty() && j < entries.size()) consistent = false;
  }
  tool_calls = tool_calls && consistent;
  for (const Entry& e : entries) {
    if (!tool_calls && e.role == "tool") continue;
    if (e.role != "system" && e.role != "user" && e.role != "assistant" &&
        e.role != "tool") {
      *error = path + ": unknown role \"" + e.role + "\"";
      return false;
    }
  }

  out->name = path.substr(path.rfind('/') + 1);
  out->tool_calls = tool_calls;
  out->facts.clear();
  std::vector<std::string> messages;  // each a JSON object
  std::vector<size_t> unit_of;        // first message of its unit
  for (const Entry& e : entries) {
    std::string m = "{\"role\":";
    const bool as_tool = tool_calls && e.role == "tool";
    AppendJsonString(&m, e.role == "tool" && !tool_calls ? "user" : e.role);
    if (as_tool) {
      for (size_t k = 0; k < e.result_ids.size(); ++k) {
        std::string r = m + ",\"tool_call_id\":";
        AppendJsonString(&r, e.result_ids[k]);
        r += ",\"content\":";
        AppendJsonString(&r, k == 0 ? e.content : std::string());
        r += "}";
        messages.push_back(std::move(r));
        unit_of.push_back(unit_of.empty() ? 0 : unit_of.back());
      }
      continue;
    }
    m += ",\"content\":";
    AppendJsonString(&m, e.content);
    if (tool_calls && !e.call_ids.empty()) {
      m += ",\"tool_calls\":[";
      for (size_t k = 0; k < e.call_ids.size(); ++k) {
        if (k > 0) m += ',';
        m += "{\"id\":";
        AppendJsonString(&m, e.call_ids[k]);
        m += ",\"type\":\"function\",\"function\":{\"name\":";
        AppendJsonString(&m, e.call_names[k]);
        m += ",\"arguments\":";
        AppendJsonString(&m, e.call_arguments[k]);
        m += "}}";
      }
      m += "]";
    }
    m += "}";
    unit_of.push_back(messages.size());
    messages.push_back(std::move(m));
  }
  out->message_count = messages.size();
  out->messages_json = "[";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out->messages_json += ',';
    out->messages_json += messages[i];
  }
  out->messages_json += "]";

  // Required messages: system, the first user message, the last unit.
  {
    bool first_user_seen = false;
    std::vector<size_t> pick;
    size_t m = 0;
    for (const Entry& e : entries) {
      if (!tool_calls && e.role == "tool") continue;
      const size_t n =
          e.role == "tool" ? std::max<size_t>(1, e.result_ids.size()) : 1;
      for (size_t k = 0; k < n; ++k, ++m) {
        bool keep = e.role == "system" || unit_of[m] == unit_of.back();
        if (e.role == "user" && !first_user_seen && !e.content.empty()) {
          keep = true;
          first_user_seen = true;
        }
        if (keep) pick.push_back(m);
      }
    }
    out->required_json = "[";
    for (size_t i = 0; i < pick.size(); ++i) {
      if (i > 0) out->required_json += ',';
      out->required_json += messages[pick[i]];
    }
    out->required_json += "]";
  }

  // ---- facts ----
  size_t first_user = entries.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].role == "user" && !entries[i].content.empty()) {
      first_user = i;
      break;
    }
  }
  if (first_user < entries.size()) {
    std::string task = TaskExcerpt(entries[first_user].content);
    if (!task.empty()) out->facts.push_back({FactKind::kTask, std::move(task)});
  }
  std::set<std::string> seen_errors, seen_files;
  std::string open_file;    // the file SWE-agent's editor has open
  std::string last_action;  // of the assistant turn before an observation
  std::string last_test;
  const Entry* last_assistant = nullptr;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.role == "assistant") {
      last_assistant = &e;
      last_action = e.action;
      std::vector<std::string> files;
      EditedFiles(e.action, open_file, &files);
      for (std::string& f : files) {
        // One file may be named relatively ("create reproduce.py") and
        // absolutely ("(Open file: /repo/reproduce.py)"): one fact, the
        // first name.
        bool seen = false;
        for (const std::string& g : seen_files) {
          const std::string& longer = f.size() >= g.size() ? f : g;
          const std::string& shorter = f.size() >= g.size() ? g : f;
          if (longer == shorter ||
              (longer.size() > shorter.size() &&
               longer.compare(longer.size() - shorter.size(), shorter.size(),
                              shorter) == 0 &&
               longer[longer.size() - shorter.size() - 1] == '/')) {
            seen = true;
            break;
          }
        }
        if (!seen) {
          seen_files.insert(f);
          out->facts.push_back({FactKind::kEditedFile, f});
        }
      }
      if (std::string_view p = ArgumentAfter(Trim(e.action), "open ");
          !p.empty()) {
        open_file.assign(p);
      } else if (std::string_view c = ArgumentAfter(Trim(e.action), "create ");
                 !c.empty()) {
        open_file.assign(c);
      }
      continue;
    }
    const bool observation =
        e.role == "tool" || (e.role == "user" && i > first_user);
    if (!observation) continue;
    for (std::string_view line : Lines(e.content)) {
      if (!IsErrorLine(line)) continue;
      // A list bullet ("- E999 IndentationError: ...") is layout, not part
      // of the message.
      while (line.size() > 2 && (line[0] == '-' || line[0] == '*') &&
             line[1] == ' ') {
        line = Trim(line.substr(2));
      }
      std::string excerpt = Excerpt(line);
      if (seen_errors.insert(excerpt).second) {
        out->facts.push_back({FactKind::kError, std::move(excerpt)});
      }
    }
    if (std::string_view f = OpenFileOf(e.content); !f.empty())
      open_file.assign(f);
    if (IsTestCommand(Trim(last_action))) {
      std::vector<std::string_view> meaningful;
      for (std::string_view line : Lines(e.content)) {
        if (!IsPromptLine(line)) meaningful.push_back(line);
      }
      if (!meaningful.empty()) {
        if (meaningful.back().size() >= kMinExcerpt) {
          last_test = Excerpt(meaningful.back());
        } else {
          // Short output ("345"): the whole observation from its start, with
          // SWE-agent's status lines, so that a number that also appears
          // elsewhere does not count by accident.
          last_test = Excerpt(Trim(e.content));
        }
      }
    }
  }
  if (!last_test.empty())
    out->facts.push_back({FactKind::kLastTest, last_test});
  if (last_assistant != nullptr) {
    std::string decision = DistinctiveLine(ThoughtOf(last_assistant->content));
    if (decision.size() < kMinExcerpt)
      decision = Excerpt(Trim(last_assistant->content));
    if (!decision.empty())
      out->facts.push_back({FactKind::kFinalDecision, std::move(decision)});
  }
  return true;
}

}  // namespace ctxkit_bench
