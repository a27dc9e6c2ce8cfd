// SWE-agent trajectories as chat histories with their needles;
// trajectory.h states the conversion and the rules.

#include "bench/trajectory.h"

#include <simdjson.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_inputs.h"
#include "bench/quality_needles.h"

namespace ctxkit::bench {

const char kSweAgentDemonstrationTemplate[] =
    "Here is a demonstration of how to correctly accomplish this task.\n"
    "It is included to show you how to correctly use the interface.\n"
    "You do not need to follow exactly what is done in the demonstration.\n"
    "--- DEMONSTRATION ---\n"
    "{demonstration}\n"
    "--- END OF DEMONSTRATION ---\n";

namespace {

constexpr std::string_view kTaskMarkers[] = {"ISSUE:", "The description is:"};

bool Contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

// What a history entry is, after reading.
struct Entry {
  std::string role;
  std::string content;
  std::string action;  // assistant: the command it ran
  bool demo = false;
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
  out->clear();
  if (e.is_null()) return true;
  if (StringOf(e, out)) return true;
  simdjson::dom::array parts;
  if (e.get_array().get(parts) != simdjson::SUCCESS) return false;
  for (simdjson::dom::element part : parts) {
    std::string_view text;
    if (part["text"].get_string().get(text) == simdjson::SUCCESS) {
      if (!out->empty()) out->push_back('\n');
      out->append(text);
    }
  }
  return true;
}

// The first whitespace-separated word after `prefix` at the start of `s`,
// without the quotes around it.
std::string_view ArgumentAfter(std::string_view s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return {};
  s.remove_prefix(prefix.size());
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  size_t end = 0;
  while (end < s.size() && s[end] != ' ' && s[end] != '\n') ++end;
  std::string_view word = s.substr(0, end);
  if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') &&
      word.back() == word.front()) {
    word = word.substr(1, word.size() - 2);
  }
  return word;
}

// The shell redirection targets (`> PATH`, `>> PATH`) of one command line;
// descriptors (2>, &>, >&1) and arrows (->, =>) are not files.
void RedirectionTargets(std::string_view line, std::vector<std::string>* out) {
  for (size_t pos = line.find('>'); pos != std::string_view::npos;
       pos = line.find('>', pos + 1)) {
    if (pos > 0 &&
        (line[pos - 1] == '2' || line[pos - 1] == '&' || line[pos - 1] == '-' ||
         line[pos - 1] == '=' || line[pos - 1] == '>')) {
      continue;
    }
    size_t start = pos + 1;
    if (start < line.size() && line[start] == '>') ++start;
    if (start < line.size() && line[start] == '&') continue;
    while (start < line.size() && line[start] == ' ') ++start;
    size_t end = start;
    while (end < line.size() && line[end] != ' ' && line[end] != ';' &&
           line[end] != '|' && line[end] != '&' && line[end] != ')') {
      ++end;
    }
    std::string_view p = line.substr(start, end - start);
    if (p.size() >= 2 && (p.front() == '"' || p.front() == '\'') &&
        p.back() == p.front()) {
      p = p.substr(1, p.size() - 2);
    }
    // A bare word without '.' or '/' is more likely a comparison than a
    // file.
    if (p.empty() || p.starts_with("/dev/") ||
        (!Contains(p, ".") && !Contains(p, "/"))) {
      continue;
    }
    out->emplace_back(p);
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

bool RunsAProgram(std::string_view command) {
  for (std::string_view word : {"python ", "python3 ", "pytest", "tox",
                                "nosetests", "bash ", "sh ", "node ", "./"}) {
    if (command.starts_with(word)) return true;
  }
  for (std::string_view phrase :
       {"make test", "go test", "cargo test", "npm test"}) {
    if (Contains(command, phrase)) return true;
  }
  return false;
}

// SWE-agent's status lines after each observation.
bool IsStatusLine(std::string_view line) {
  return line.empty() || line.starts_with("(Open file:") ||
         line.starts_with("(Current directory:") || line.starts_with("bash-$");
}

// True when `a` and `b` name one file: equal, or one ends with '/' and the
// other ("reproduce.py" and "/repo/reproduce.py").
bool SameFile(std::string_view a, std::string_view b) {
  if (a.size() < b.size()) std::swap(a, b);
  if (a == b) return true;
  return a.size() > b.size() && a.substr(a.size() - b.size()) == b &&
         a[a.size() - b.size() - 1] == '/';
}

void AddEditedPath(std::string_view path, std::vector<std::string>* paths) {
  if (path.empty()) return;
  for (const std::string& p : *paths) {
    if (SameFile(p, path)) return;
  }
  paths->emplace_back(path);
}

bool ReadEntries(const std::string& path, simdjson::dom::element doc,
                 std::vector<Entry>* entries, std::string* error) {
  simdjson::dom::array history;
  if (doc["history"].get_array().get(history) != simdjson::SUCCESS) {
    *error = path + ": no \"history\" array";
    return false;
  }
  for (simdjson::dom::element item : history) {
    Entry entry;
    const std::string where =
        path + ": history[" + std::to_string(entries->size()) + "]";
    if (!GetString(item["role"], &entry.role)) {
      *error = where + ".role is not a string";
      return false;
    }
    simdjson::dom::element content;
    if (item["content"].get(content) != simdjson::SUCCESS ||
        !ContentText(content, &entry.content)) {
      *error = where + ".content is unreadable";
      return false;
    }
    GetString(item["action"], &entry.action);
    bool demo = false;
    if (item["is_demo"].get_bool().get(demo) == simdjson::SUCCESS) {
      entry.demo = demo;
    }
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
    if (entry.role != "system" && entry.role != "user" &&
        entry.role != "assistant" && entry.role != "tool") {
      *error = where + ": unknown role \"" + entry.role + "\"";
      return false;
    }
    entries->push_back(std::move(entry));
  }
  if (entries->empty()) {
    *error = path + ": empty history";
    return false;
  }
  return true;
}

// Tool calls only when every call is answered right after it, and every
// tool entry answers a call of the assistant before it.
bool ConsistentToolCalls(const std::vector<Entry>& entries) {
  bool any = false;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.role == "tool") {
      if (e.result_ids.empty()) return false;
      continue;
    }
    if (e.call_ids.empty()) continue;
    any = true;
    std::set<std::string> pending(e.call_ids.begin(), e.call_ids.end());
    if (pending.size() != e.call_ids.size() || pending.count("") > 0) {
      return false;
    }
    size_t j = i + 1;
    for (; j < entries.size() && entries[j].role == "tool"; ++j) {
      for (const std::string& id : entries[j].result_ids) {
        if (pending.erase(id) == 0) return false;
      }
    }
    if (!pending.empty() && j < entries.size()) return false;
  }
  return any;
}

void Convert(const std::vector<Entry>& entries, bool tool_calls, History* out) {
  for (const Entry& e : entries) {
    if (tool_calls && e.role == "tool") {
      for (size_t k = 0; k < e.result_ids.size(); ++k) {
        out->messages.push_back(R"({"role":"tool","tool_call_id":)" +
                                JsonString(e.result_ids[k]) + R"(,"content":)" +
                                JsonString(k == 0 ? e.content : "") + "}");
        out->demonstration.push_back(e.demo);
      }
      continue;
    }
    std::string m = R"({"role":)" +
                    JsonString(e.role == "tool" ? "user" : e.role) +
                    R"(,"content":)" + JsonString(e.content);
    if (tool_calls && !e.call_ids.empty()) {
      m += R"(,"tool_calls":[)";
      for (size_t k = 0; k < e.call_ids.size(); ++k) {
        if (k > 0) m += ',';
        m += R"({"id":)" + JsonString(e.call_ids[k]) +
             R"(,"type":"function","function":{"name":)" +
             JsonString(e.call_names[k]) + R"(,"arguments":)" +
             JsonString(e.call_arguments[k]) + "}}";
      }
      m += "]";
    }
    m += "}";
    out->messages.push_back(std::move(m));
    out->demonstration.push_back(e.demo);
  }
}

// The issue text of an instance message, after `marker`.
std::string_view IssueText(std::string_view content, std::string_view marker) {
  size_t pos = content.find(marker);
  if (pos == std::string_view::npos) return {};
  std::string_view issue = content.substr(pos + marker.size());
  size_t end = issue.find("\n\nINSTRUCTIONS:");
  return end == std::string_view::npos ? issue : issue.substr(0, end);
}

void FindNeedles(const std::vector<Entry>& entries, Trajectory* out) {
  std::vector<Needle>& needles = out->history.needles;
  size_t instance = entries.size();
  for (size_t i = 0; i < entries.size() && instance == entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.role != "user" || e.demo) continue;
    for (std::string_view marker : kTaskMarkers) {
      const std::string line_marker = std::string(marker) + "\n";
      if (!Contains(e.content, line_marker)) continue;
      instance = i;
      out->task_marker = std::string(marker);
      AddNeedle(&needles, NeedleKind::kTask,
                DistinctiveLine(IssueText(e.content, line_marker)));
      break;
    }
  }

  std::string open_file;      // the agent's own spelling, from open/create
  std::string observed_file;  // the last "(Open file: PATH)"
  std::string last_action;    // of the assistant entry before an observation
  std::string last_result;
  const Entry* last_assistant = nullptr;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.demo) continue;
    if (e.role == "assistant") {
      last_assistant = &e;
      last_action = std::string(Trim(e.action));
      std::string_view first_line =
          Trim(std::string_view(last_action).substr(0, last_action.find('\n')));
      std::vector<std::string> edited;
      if (std::string_view p = ArgumentAfter(first_line, "create ");
          !p.empty()) {
        edited.emplace_back(p);
        open_file.assign(p);
      } else if (std::string_view o = ArgumentAfter(first_line, "open ");
                 !o.empty()) {
        open_file.assign(o);
      } else if (first_line == "edit" || first_line.starts_with("edit ") ||
                 first_line.starts_with("insert ") ||
                 first_line.starts_with("append ")) {
        edited.push_back(!open_file.empty() ? open_file : observed_file);
      } else {
        bool editor = false;
        for (std::string_view command :
             {"str_replace_editor create ", "str_replace_editor str_replace ",
              "str_replace_editor insert ", "str_replace_editor undo_edit "}) {
          if (std::string_view target = ArgumentAfter(first_line, command);
              !target.empty()) {
            edited.emplace_back(target);
            editor = true;
            break;
          }
        }
        if (!editor) RedirectionTargets(first_line, &edited);
      }
      for (const std::string& p : edited) AddEditedPath(p, &out->edited_paths);
      continue;
    }
    if (i == instance || e.role == "system") continue;
    AddErrorNeedles(&needles, e.content);
    if (std::string_view f = OpenFileOf(e.content); !f.empty()) {
      observed_file.assign(f);
    }
    if (!RunsAProgram(last_action)) continue;
    std::string_view last_line;
    for (std::string_view line : Lines(e.content)) {
      if (!IsStatusLine(line)) last_line = line;
    }
    if (last_line.empty()) continue;
    last_result = last_line.size() >= kMinDistinctive
                      ? Excerpt(last_line)
                      : Excerpt(TrimAll(e.content));
  }
  for (const std::string& p : out->edited_paths) {
    AddNeedle(&needles, NeedleKind::kEditedFile, p);
  }
  AddNeedle(&needles, NeedleKind::kLastResult, last_result);
  if (last_assistant != nullptr) {
    std::string_view content = last_assistant->content;
    const size_t cut = std::min(content.find("```"), content.find("<command>"));
    std::string decision = DistinctiveLine(content.substr(0, cut));
    if (decision.empty()) decision = DistinctiveLine(content);
    AddNeedle(&needles, NeedleKind::kFinalDecision, std::move(decision));
  }
}

}  // namespace

bool LoadTrajectory(const std::string& path, Trajectory* out,
                    std::string* error) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto e = parser.load(path).get(doc); e != simdjson::SUCCESS) {
    *error = path + ": " + simdjson::error_message(e);
    return false;
  }
  std::vector<Entry> entries;
  if (!ReadEntries(path, doc, &entries, error)) return false;

  *out = Trajectory();
  out->history.set = "swe-agent";
  out->history.name = path.substr(path.rfind('/') + 1);
  Convert(entries, ConsistentToolCalls(entries), &out->history);
  FindNeedles(entries, out);

  for (const Entry& e : entries) {
    if (e.role == "system" || e.demo) continue;
    if (!out->demonstration_text.empty()) out->demonstration_text += '\n';
    out->demonstration_text += e.content;
  }
  std::string_view demonstration_template;
  if (doc["replay_config"]["agent"]["templates"]["demonstration_template"]
          .get_string()
          .get(demonstration_template) == simdjson::SUCCESS) {
    out->demonstration_template.assign(demonstration_template);
  }
  if (!AppendDecodedStrings(out->history.MessagesJson(), &out->text, error)) {
    *error = path + ": converted history is not JSON: " + *error;
    return false;
  }
  return true;
}

namespace {

std::vector<std::string> DemoOnlyPaths(const Trajectory& run,
                                       const Trajectory& demo) {
  std::vector<std::string> out;
  for (const std::string& p : demo.edited_paths) {
    if (Contains(demo.demonstration_text, p) && !Contains(run.text, p)) {
      out.push_back(p);
    }
  }
  return out;
}

std::string TaskOf(const Trajectory& t) {
  for (const Needle& n : t.history.needles) {
    if (n.kind == NeedleKind::kTask) return n.excerpt;
  }
  return {};
}

}  // namespace

size_t ChooseDemonstration(const std::vector<Trajectory>& runs, size_t i) {
  const std::string task = TaskOf(runs[i]);
  for (const bool same_marker : {true, false}) {
    for (size_t step = 1; step < runs.size(); ++step) {
      const size_t j = (i + step) % runs.size();
      if (same_marker && runs[j].task_marker != runs[i].task_marker) continue;
      if (TaskOf(runs[j]) == task) continue;
      if (DemoOnlyPaths(runs[i], runs[j]).empty()) continue;
      return j;
    }
  }
  return runs.size();
}

History WithDemonstration(const Trajectory& run, const Trajectory& demo,
                          std::string_view demonstration_template) {
  History out = run.history;
  out.set = "swe-agent+demo";
  out.name = run.history.name + " (demo: " + demo.history.name + ")";
  std::string text(demonstration_template);
  constexpr std::string_view kSlot = "{demonstration}";
  if (size_t slot = text.find(kSlot); slot != std::string::npos) {
    text.replace(slot, kSlot.size(), demo.demonstration_text);
  }
  size_t at = 0;
  while (at < out.messages.size() &&
         out.messages[at].starts_with(R"({"role":"system")")) {
    ++at;
  }
  out.messages.insert(out.messages.begin() + static_cast<ptrdiff_t>(at),
                      R"({"role":"user","content":)" + JsonString(text) + "}");
  out.demonstration.insert(
      out.demonstration.begin() + static_cast<ptrdiff_t>(at), true);
  out.demo_only_paths = DemoOnlyPaths(run, demo);
  return out;
}

}  // namespace ctxkit::bench
