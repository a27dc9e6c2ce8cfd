// Claude Code transcripts as Anthropic histories with their needles;
// quality_claude_code.h states the conversion and the rules.

#include "bench/quality_claude_code.h"

#include <simdjson.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_inputs.h"
#include "bench/quality_needles.h"

namespace ctxkit::bench {
namespace {

struct Block {
  std::string type;  // text, thinking, tool_use, tool_result
  std::string json;  // the block as written to the history
  std::string text;  // text, thinking, or a tool_result's text
  std::string id;    // tool_use id or tool_result tool_use_id
  std::string name;  // tool_use name
  std::string file;  // tool_use input.file_path / notebook_path
  bool is_error = false;
};

struct Message {
  std::string role;
  std::vector<Block> blocks;
};

// The text of a tool_result's content: a string, or its text blocks joined
// by newlines.
std::string ResultText(simdjson::dom::element content) {
  std::string_view s;
  if (content.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  std::string out;
  simdjson::dom::array parts;
  if (content.get_array().get(parts) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element part : parts) {
    std::string_view text;
    if (part["text"].get_string().get(text) == simdjson::SUCCESS) {
      if (!out.empty()) out.push_back('\n');
      out.append(text);
    }
  }
  return out;
}

// One content block as kept, or false when it is dropped.
bool ReadBlock(simdjson::dom::element e, Block* b) {
  std::string_view type;
  if (e["type"].get_string().get(type) != simdjson::SUCCESS) return false;
  b->type.assign(type);
  if (type == "text") {
    std::string_view text;
    if (e["text"].get_string().get(text) != simdjson::SUCCESS) return false;
    if (text.empty()) return false;  // the API refuses empty text blocks
    b->text.assign(text);
    b->json = R"({"type":"text","text":)" + JsonString(text) + "}";
    return true;
  }
  if (type == "thinking") {
    std::string_view thinking, signature;
    if (e["thinking"].get_string().get(thinking) != simdjson::SUCCESS ||
        e["signature"].get_string().get(signature) != simdjson::SUCCESS) {
      return false;
    }
    b->text.assign(thinking);
    b->json = R"({"type":"thinking","thinking":)" + JsonString(thinking) +
              R"(,"signature":)" + JsonString(signature) + "}";
    return true;
  }
  if (type == "tool_use") {
    std::string_view id, name;
    simdjson::dom::object input;
    if (e["id"].get_string().get(id) != simdjson::SUCCESS ||
        e["name"].get_string().get(name) != simdjson::SUCCESS ||
        e["input"].get_object().get(input) != simdjson::SUCCESS) {
      return false;
    }
    b->id.assign(id);
    b->name.assign(name);
    std::string_view file;
    if (input["file_path"].get_string().get(file) == simdjson::SUCCESS ||
        input["notebook_path"].get_string().get(file) == simdjson::SUCCESS) {
      b->file.assign(file);
    }
    b->json = R"({"type":"tool_use","id":)" + JsonString(id) + R"(,"name":)" +
              JsonString(name) + R"(,"input":)" + simdjson::to_string(input) +
              "}";
    return true;
  }
  if (type == "tool_result") {
    std::string_view id;
    simdjson::dom::element content;
    if (e["tool_use_id"].get_string().get(id) != simdjson::SUCCESS ||
        e["content"].get(content) != simdjson::SUCCESS) {
      return false;
    }
    b->id.assign(id);
    b->text = ResultText(content);
    bool is_error = false;
    const bool has_error =
        e["is_error"].get_bool().get(is_error) == simdjson::SUCCESS;
    b->is_error = has_error && is_error;
    b->json = R"({"type":"tool_result","tool_use_id":)" + JsonString(id) +
              R"(,"content":)" + simdjson::to_string(content);
    if (has_error)
      b->json += is_error ? R"(,"is_error":true)" : R"(,"is_error":false)";
    b->json += "}";
    return true;
  }
  return false;
}

// One transcript line as a message, or false when it is not one.
bool ReadLine(simdjson::dom::parser& parser, std::string_view line,
              Message* m) {
  simdjson::dom::element doc;
  if (parser.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS) {
    return false;
  }
  std::string_view type, role;
  simdjson::dom::element content;
  if (doc["type"].get_string().get(type) != simdjson::SUCCESS ||
      (type != "user" && type != "assistant") ||
      doc["message"]["role"].get_string().get(role) != simdjson::SUCCESS ||
      role != type ||
      doc["message"]["content"].get(content) != simdjson::SUCCESS) {
    return false;
  }
  m->role.assign(role);
  std::string_view text;
  simdjson::dom::array blocks;
  if (content.get_string().get(text) == simdjson::SUCCESS) {
    if (!text.empty()) {
      Block b;
      b.type = "text";
      b.text.assign(text);
      b.json = R"({"type":"text","text":)" + JsonString(text) + "}";
      m->blocks.push_back(std::move(b));
    }
    return true;
  }
  if (content.get_array().get(blocks) != simdjson::SUCCESS) return false;
  for (simdjson::dom::element e : blocks) {
    Block b;
    if (ReadBlock(e, &b)) m->blocks.push_back(std::move(b));
  }
  return true;
}

// One pass of the repairs in the header; true when something changed.
bool Repair(std::vector<Message>* messages) {
  bool changed = false;
  std::vector<Message> merged;
  for (Message& m : *messages) {
    if (m.blocks.empty()) {
      changed = true;
      continue;
    }
    if (merged.empty() && m.role == "assistant") {
      changed = true;
      continue;
    }
    if (!merged.empty() && merged.back().role == m.role) {
      for (Block& b : m.blocks) merged.back().blocks.push_back(std::move(b));
      changed = true;
      continue;
    }
    merged.push_back(std::move(m));
  }
  *messages = std::move(merged);
  for (size_t i = 0; i < messages->size(); ++i) {
    Message& m = (*messages)[i];
    std::set<std::string> answerable;  // calls of the message before
    if (m.role == "user" && i > 0) {
      for (const Block& b : (*messages)[i - 1].blocks) {
        if (b.type == "tool_use") answerable.insert(b.id);
      }
    }
    std::set<std::string> answered;  // results in the message after
    if (m.role == "assistant" && i + 1 < messages->size()) {
      for (const Block& b : (*messages)[i + 1].blocks) {
        if (b.type == "tool_result") answered.insert(b.id);
      }
    }
    const size_t before = m.blocks.size();
    std::erase_if(m.blocks, [&](const Block& b) {
      if (b.type == "tool_use") return answered.count(b.id) == 0;
      if (b.type == "tool_result") return answerable.count(b.id) == 0;
      return false;
    });
    changed = changed || m.blocks.size() != before;
    if (m.role == "user") {
      auto first_other =
          std::find_if(m.blocks.begin(), m.blocks.end(),
                       [](const Block& b) { return b.type != "tool_result"; });
      if (std::any_of(first_other, m.blocks.end(),
                      [](const Block& b) { return b.type == "tool_result"; })) {
        std::stable_partition(
            m.blocks.begin(), m.blocks.end(),
            [](const Block& b) { return b.type == "tool_result"; });
        changed = true;
      }
    }
  }
  return changed;
}

bool IsWrapper(std::string_view text) {
  for (std::string_view prefix :
       {"Caveat: The messages below were generated by the user",
        "<command-name>", "<command-message>", "<local-command-stdout>",
        "<system-reminder>"}) {
    if (text.starts_with(prefix)) return true;
  }
  return false;
}

void FindNeedles(const std::vector<Message>& messages, History* out) {
  std::vector<Needle>& needles = out->needles;
  const Block* last_result = nullptr;
  const Block* last_text = nullptr;
  for (const Message& m : messages) {
    for (const Block& b : m.blocks) {
      if (m.role == "user" && b.type == "text" && !IsWrapper(b.text)) {
        AddNeedle(&needles, NeedleKind::kTask, DistinctiveLine(b.text));
      } else if (b.type == "tool_result") {
        if (b.is_error) {
          AddNeedle(&needles, NeedleKind::kError, DistinctiveLine(b.text));
        }
        AddErrorNeedles(&needles, b.text);
        last_result = &b;
      } else if (b.type == "tool_use" && !b.file.empty() &&
                 (b.name == "Edit" || b.name == "MultiEdit" ||
                  b.name == "Write" || b.name == "NotebookEdit")) {
        AddNeedle(&needles, NeedleKind::kEditedFile, b.file);
      } else if (m.role == "assistant" && b.type == "text") {
        last_text = &b;
      }
    }
  }
  if (last_result != nullptr) {
    std::string_view last_line;
    for (std::string_view line : Lines(last_result->text)) {
      if (!line.empty()) last_line = line;
    }
    AddNeedle(&needles, NeedleKind::kLastResult,
              last_line.size() >= kMinDistinctive
                  ? Excerpt(last_line)
                  : DistinctiveLine(last_result->text));
  }
  if (last_text != nullptr) {
    AddNeedle(&needles, NeedleKind::kFinalDecision,
              DistinctiveLine(last_text->text));
  }
}

}  // namespace

bool LoadClaudeCodeSession(const std::string& path, History* out,
                           size_t* dropped_lines, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot be read";
    return false;
  }
  simdjson::dom::parser parser;
  std::vector<Message> messages;
  *dropped_lines = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (Trim(line).empty()) continue;
    Message m;
    if (ReadLine(parser, line, &m)) {
      messages.push_back(std::move(m));
    } else {
      ++*dropped_lines;
    }
  }
  for (int pass = 0; pass < 16 && Repair(&messages); ++pass) {
  }
  if (messages.empty()) {
    *error = path + ": no message survived the conversion";
    return false;
  }
  *out = History();
  out->set = "claude-code";
  out->name = path.substr(path.rfind('/') + 1);
  out->anthropic = true;
  for (const Message& m : messages) {
    std::string json = R"({"role":)" + JsonString(m.role) + R"(,"content":[)";
    for (size_t k = 0; k < m.blocks.size(); ++k) {
      if (k > 0) json += ',';
      json += m.blocks[k].json;
    }
    json += "]}";
    out->messages.push_back(std::move(json));
    out->demonstration.push_back(false);
  }
  FindNeedles(messages, out);
  return true;
}

}  // namespace ctxkit::bench
