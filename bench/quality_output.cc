// Compacted histories read against their inputs; quality_output.h states
// the rules.

#include "bench/quality_output.h"

#include <simdjson.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bench/bench_inputs.h"
#include "ctxkit/message_count.h"

namespace ctxkit::bench {

struct ParsedMessage {
  // One unit of a message: its string content, or one content block.
  struct Part {
    std::string type;       // "string", or the block's type
    std::string canonical;  // the block minified; empty for a string content
    std::string text;       // the text a truncation would shorten
    std::vector<std::string> ids;
  };
  std::string role;
  std::vector<std::string> ids;  // tool_call_id, tool_calls[].id
  std::vector<Part> parts;
};

namespace {

using Part = ParsedMessage::Part;

// Texts shorter than this are not indexed by their ends: too many share
// them.
constexpr size_t kKeyBytes = 16;
// A shared prefix plus suffix at least this long makes a part a partial
// copy of an input text rather than new text.
constexpr size_t kMinShared = 32;
// Candidates looked at per part: enough for repeated prefixes (SWE-agent's
// status lines), bounded for speed.
constexpr size_t kMaxCandidates = 64;

std::string BlockText(simdjson::dom::element block, std::string_view type) {
  std::string_view s;
  if (type == "text") {
    if (block["text"].get_string().get(s) == simdjson::SUCCESS) {
      return std::string(s);
    }
    return {};
  }
  if (type == "thinking") {
    if (block["thinking"].get_string().get(s) == simdjson::SUCCESS) {
      return std::string(s);
    }
    return {};
  }
  if (type == "tool_result") {
    simdjson::dom::element content;
    if (block["content"].get(content) != simdjson::SUCCESS) return {};
    if (content.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
    std::string out;
    simdjson::dom::array parts;
    if (content.get_array().get(parts) != simdjson::SUCCESS) return out;
    for (simdjson::dom::element part : parts) {
      if (part["text"].get_string().get(s) == simdjson::SUCCESS) {
        if (!out.empty()) out.push_back('\n');
        out.append(s);
      }
    }
    return out;
  }
  return {};
}

ParsedMessage Parse(simdjson::dom::element m) {
  ParsedMessage p;
  std::string_view s;
  if (m["role"].get_string().get(s) == simdjson::SUCCESS) p.role.assign(s);
  if (m["tool_call_id"].get_string().get(s) == simdjson::SUCCESS) {
    p.ids.emplace_back(s);
  }
  simdjson::dom::array calls;
  if (m["tool_calls"].get_array().get(calls) == simdjson::SUCCESS) {
    for (simdjson::dom::element call : calls) {
      if (call["id"].get_string().get(s) == simdjson::SUCCESS) {
        p.ids.emplace_back(s);
      }
    }
  }
  simdjson::dom::element content;
  if (m["content"].get(content) != simdjson::SUCCESS) return p;
  if (content.get_string().get(s) == simdjson::SUCCESS) {
    Part part;
    part.type = "string";
    part.text.assign(s);
    p.parts.push_back(std::move(part));
    return p;
  }
  simdjson::dom::array blocks;
  if (content.get_array().get(blocks) != simdjson::SUCCESS) return p;
  for (simdjson::dom::element block : blocks) {
    Part part;
    if (block["type"].get_string().get(s) == simdjson::SUCCESS) {
      part.type.assign(s);
    }
    part.canonical = simdjson::to_string(block);
    part.text = BlockText(block, part.type);
    for (const char* key : {"id", "tool_use_id", "signature"}) {
      if (block[key].get_string().get(s) == simdjson::SUCCESS) {
        part.ids.emplace_back(s);
      }
    }
    p.parts.push_back(std::move(part));
  }
  return p;
}

// The common prefix of `out` and `in`, and then the common suffix of what
// is left of both.
std::pair<size_t, size_t> Shared(std::string_view out, std::string_view in) {
  size_t p = 0;
  const size_t n = std::min(out.size(), in.size());
  while (p < n && out[p] == in[p]) ++p;
  size_t q = 0;
  while (q < n - p && out[out.size() - 1 - q] == in[in.size() - 1 - q]) ++q;
  return {p, q};
}

size_t AllowedMarker(size_t part_size) {
  return std::max<size_t>(256, part_size / 10);
}

}  // namespace

struct OutputAnalyzer::Index {
  struct Text {
    size_t message;
    std::string text;
  };
  std::vector<std::string> roles;
  std::unordered_map<std::string, size_t> message_by_canonical;
  std::unordered_map<std::string, size_t> block_owner;
  std::unordered_map<std::string, size_t> id_owner;
  std::vector<Text> texts;
  std::vector<std::vector<size_t>> texts_of;  // message -> texts
  std::unordered_map<std::string, std::vector<size_t>> by_prefix, by_suffix;
  std::vector<std::vector<std::string>> thinking;  // message -> blocks
};

OutputAnalyzer::OutputAnalyzer(const History& history)
    : history_(history), index_(std::make_unique<Index>()) {}

OutputAnalyzer::~OutputAnalyzer() = default;

std::unique_ptr<OutputAnalyzer> OutputAnalyzer::Create(const History& history,
                                                       std::string* error) {
  std::unique_ptr<OutputAnalyzer> a(new OutputAnalyzer(history));
  Index& x = *a->index_;
  simdjson::dom::parser parser;
  const size_t n = history.messages.size();
  x.roles.resize(n);
  x.texts_of.resize(n);
  x.thinking.resize(n);
  // Non-demonstration messages first, so that a message that is in both a
  // demonstration and the real run counts as the real run's.
  for (const bool demo_pass : {false, true}) {
    for (size_t i = 0; i < n; ++i) {
      if (history.demonstration[i] != demo_pass) continue;
      const std::string& json = history.messages[i];
      simdjson::dom::element m;
      if (auto e = parser.parse(json.data(), json.size()).get(m);
          e != simdjson::SUCCESS) {
        *error = history.name + ": message " + std::to_string(i) +
                 " is not JSON: " + simdjson::error_message(e);
        return nullptr;
      }
      x.message_by_canonical.emplace(simdjson::to_string(m), i);
      ParsedMessage p = Parse(m);
      x.roles[i] = p.role;
      for (const std::string& id : p.ids) x.id_owner.emplace(id, i);
      for (Part& part : p.parts) {
        for (const std::string& id : part.ids) x.id_owner.emplace(id, i);
        if (!part.canonical.empty()) x.block_owner.emplace(part.canonical, i);
        if (part.type == "thinking") x.thinking[i].push_back(part.canonical);
        if (part.text.empty()) continue;
        const size_t t = x.texts.size();
        x.texts_of[i].push_back(t);
        if (part.text.size() >= kKeyBytes) {
          x.by_prefix[part.text.substr(0, kKeyBytes)].push_back(t);
          x.by_suffix[part.text.substr(part.text.size() - kKeyBytes)].push_back(
              t);
        }
        x.texts.push_back({i, std::move(part.text)});
      }
    }
  }
  return a;
}

bool OutputAnalyzer::ClassifyText(const std::string& part_text,
                                  const std::vector<size_t>& candidates,
                                  size_t* source, std::string* written) const {
  const Index& x = *index_;
  size_t best_shared = 0, best_prefix = 0, best = x.texts.size();
  for (size_t t : candidates) {
    auto [prefix, suffix] = Shared(part_text, x.texts[t].text);
    if (prefix + suffix > best_shared || best == x.texts.size()) {
      best_shared = prefix + suffix;
      best_prefix = prefix;
      best = t;
    }
  }
  const size_t uncovered = part_text.size() - best_shared;
  // A cut removes more than its marker adds; text added to a whole input
  // text (a summary in front of it) removes nothing.
  const size_t removed =
      best < x.texts.size() ? x.texts[best].text.size() - best_shared : 0;
  const bool truncated = best < x.texts.size() && best_shared > 0 &&
                         uncovered < removed &&
                         uncovered <= AllowedMarker(part_text.size());
  const bool partial = best < x.texts.size() && best_shared >= kMinShared;
  if (truncated || partial) {
    if (*source >= history_.messages.size()) *source = x.texts[best].message;
  }
  if (truncated) return true;
  if (partial) {
    *written += part_text.substr(best_prefix, uncovered);
    *written += '\n';
    return true;
  }
  *written += part_text;
  *written += '\n';
  return false;
}

Origin OutputAnalyzer::Classify(const ParsedMessage& m,
                                const std::string& canonical, size_t* source,
                                std::string* written) const {
  const Index& x = *index_;
  const size_t none = history_.messages.size();
  *source = none;
  if (auto it = x.message_by_canonical.find(canonical);
      it != x.message_by_canonical.end()) {
    *source = it->second;
    return Origin::kKept;
  }
  auto owner_of = [&](const std::vector<std::string>& ids) {
    for (const std::string& id : ids) {
      if (auto it = x.id_owner.find(id); it != x.id_owner.end()) {
        return it->second;
      }
    }
    return none;
  };
  *source = owner_of(m.ids);
  bool any_input = *source != none;
  for (const Part& part : m.parts) {
    const size_t part_source = owner_of(part.ids);
    if (part_source != none) any_input = true;
    if (!part.canonical.empty()) {
      if (auto it = x.block_owner.find(part.canonical);
          it != x.block_owner.end()) {
        any_input = true;
        if (*source == none) *source = it->second;
        continue;
      }
    }
    if (part.text.empty()) {
      // A changed block without text (a tool_use whose input changed) is
      // the input's when its id is; an unknown one was written.
      if (part_source == none && !part.canonical.empty()) {
        *written += part.canonical;
        *written += '\n';
      }
      if (*source == none) *source = part_source;
      continue;
    }
    // Candidates: the texts of the input message the ids name, else the
    // same-role texts sharing the first or last kKeyBytes.
    std::vector<size_t> candidates;
    for (size_t owner : {part_source, *source}) {
      if (owner != none) {
        candidates.insert(candidates.end(), x.texts_of[owner].begin(),
                          x.texts_of[owner].end());
      }
    }
    if (candidates.empty() && part.text.size() >= kKeyBytes) {
      for (const auto* map : {&x.by_prefix, &x.by_suffix}) {
        const std::string key =
            map == &x.by_prefix
                ? part.text.substr(0, kKeyBytes)
                : part.text.substr(part.text.size() - kKeyBytes);
        auto hits = map->find(key);
        if (hits == map->end()) continue;
        for (size_t t : hits->second) {
          if (candidates.size() >= kMaxCandidates) break;
          if (x.roles[x.texts[t].message] == m.role) candidates.push_back(t);
        }
      }
    }
    if (ClassifyText(part.text, candidates, source, written)) {
      any_input = true;
    }
  }
  if (written->empty())
    return any_input ? Origin::kTruncated : Origin::kWritten;
  return any_input ? Origin::kFolded : Origin::kWritten;
}

void OutputAnalyzer::CheckThinking(const ParsedMessage& m, size_t position,
                                   OutputReport* report) const {
  const Index& x = *index_;
  const size_t none = history_.messages.size();
  auto fail = [&](std::string problem) {
    if (report->thinking_intact) report->thinking_problem = std::move(problem);
    report->thinking_intact = false;
  };
  size_t source = none;
  for (const char* type : {"thinking", "tool_use"}) {
    for (const Part& part : m.parts) {
      if (part.type != type || part.ids.empty()) continue;
      if (auto it = x.id_owner.find(part.ids[0]); it != x.id_owner.end()) {
        source = it->second;
      }
      break;
    }
    if (source != none) break;
  }
  if (source == none && !m.parts.empty() && !m.parts[0].canonical.empty()) {
    if (auto it = x.block_owner.find(m.parts[0].canonical);
        it != x.block_owner.end()) {
      source = it->second;
    }
  }
  const std::string where = "output message " + std::to_string(position);
  for (const Part& part : m.parts) {
    if (part.type == "thinking" && x.block_owner.count(part.canonical) == 0) {
      fail(where + " holds a thinking block the input does not");
      return;
    }
  }
  if (source == none || x.thinking[source].empty()) return;
  report->thinking_checked = true;
  const std::vector<std::string>& want = x.thinking[source];
  bool ok = m.parts.size() >= want.size();
  for (size_t k = 0; ok && k < want.size(); ++k) {
    ok = m.parts[k].canonical == want[k];
  }
  if (!ok) {
    fail(where + " (from input message " + std::to_string(source) +
         ") does not start with that message's " + std::to_string(want.size()) +
         " thinking block(s), byte-identical");
  }
}

bool OutputAnalyzer::Analyze(std::string_view messages_json,
                             const std::vector<size_t>& message_tokens,
                             OutputReport* report, std::string* error) const {
  *report = OutputReport();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array messages;
  if (auto e =
          parser.parse(messages_json.data(), messages_json.size()).get(doc);
      e != simdjson::SUCCESS) {
    *error = std::string("output messages are not JSON: ") +
             simdjson::error_message(e);
    return false;
  }
  if (doc.get_array().get(messages) != simdjson::SUCCESS) {
    *error = "output messages are not an array";
    return false;
  }
  const std::string model = history_.model();
  auto count_user_text = [&](std::string_view text, size_t* tokens) {
    auto n = CountMessagesForModel(
        model, R"([{"role":"user","content":)" + JsonString(text) + "}]");
    if (!n.ok()) {
      *error = "counting written text failed: " + n.status().ToString();
      return false;
    }
    *tokens = n->total;
    return true;
  };
  size_t empty_message_tokens = 0;
  if (!count_user_text("", &empty_message_tokens)) return false;

  size_t position = 0;
  for (simdjson::dom::element element : messages) {
    ++report->messages;
    const std::string canonical = simdjson::to_string(element);
    std::string decoded;
    if (!AppendDecodedStrings(canonical, &decoded, error)) return false;
    const ParsedMessage m = Parse(element);
    size_t source = history_.messages.size();
    std::string written;
    const Origin origin = Classify(m, canonical, &source, &written);
    const bool from_demo =
        source < history_.messages.size() && history_.demonstration[source];
    switch (origin) {
      case Origin::kKept:
        ++report->kept;
        if (!from_demo) report->haystack += decoded;
        break;
      case Origin::kTruncated:
        ++report->truncated;
        if (!from_demo) report->haystack += decoded;
        break;
      case Origin::kWritten:
        ++report->written;
        report->haystack += decoded;
        report->written_text += written.empty() ? decoded : written;
        if (position < message_tokens.size()) {
          report->summary_tokens += message_tokens[position];
        }
        break;
      case Origin::kFolded: {
        ++report->folded;
        report->haystack += from_demo ? written : decoded;
        report->written_text += written;
        size_t tokens = 0;
        if (!count_user_text(written, &tokens)) return false;
        report->summary_tokens +=
            tokens > empty_message_tokens ? tokens - empty_message_tokens : 0;
        break;
      }
    }
    if (history_.anthropic && m.role == "assistant") {
      CheckThinking(m, position, report);
    }
    ++position;
  }
  for (const std::string& path : history_.demo_only_paths) {
    if (report->written_text.find(path) != std::string::npos) {
      report->false_action_paths.push_back(path);
    }
  }
  return true;
}

}  // namespace ctxkit::bench
