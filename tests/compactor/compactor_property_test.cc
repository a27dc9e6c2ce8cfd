// Property test of ctxkit::Compactor: a seeded,
// deterministic generator of valid chat histories in the OpenAI, Anthropic
// and plain formats, each compacted at random budgets with random options.
// Every result must
//   - be a valid history of the input's format (ValidateChatHistory),
//   - count, with the same tokenizer, exactly result.compacted_tokens,
//   - report its status consistently (met or degraded within budget,
//     degraded exactly when must-keep text was cut, never cutting a
//     must-keep message to a bare marker),
//   - be within target_tokens whenever budget_met, and meet the budget
//     whenever the system messages, the anchors the generator placed (the
//     task and user corrections) and the last message's unit fit, as
//     counted here from the input, independently of the engine,
//   - keep the input order (source_index increasing), emit kept messages
//     byte for byte, always keep the last message,
//   - be the same bytes when compacted again.
// Plus hand-written edge cases: a recent window larger than the target, a
// budget smaller than the last message, a one-message history.
//
// The number of histories is kHistoriesPerFormat per format (three budgets
// each); CTXKIT_PROPERTY_HISTORIES overrides it (e.g. for a long soak run).
//
// The generator's words avoid the phrases that make the built-in rules
// classify a message as an anchor (corrections such as "actually", "instead",
// "I meant"; DDL; tool definitions), so the anchors are exactly the messages
// it marks: the bound above is then a real bound.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/bench_inputs.h"
#include "ctxkit/compactor.h"
#include "ctxkit/message_count.h"
#include "simdjson.h"

namespace ctxkit {
namespace {

constexpr int kHistoriesPerFormat = 350;

// The benchmarks' generator: the same histories on every platform.
using Rng = bench::SplitMix64;

// Words, already escaped as JSON string content: plain English, code, and
// non-ASCII text both raw and as \u escapes (with a surrogate pair), which
// kept messages must reproduce byte for byte.
constexpr const char* kWords[] = {
    "the",
    "parser",
    "returns",
    "a",
    "value",
    "for",
    "each",
    "line",
    "of",
    "input",
    "and",
    "then",
    "we",
    "check",
    "module",
    "function",
    "config",
    "loader",
    "path",
    "build",
    "with",
    "flags",
    "cache",
    "layer",
    "runs",
    "quickly",
    "when",
    "files",
    "are",
    "small",
    "list",
    "items",
    "sorted",
    "by",
    "name",
    "src/app/main.py",
    "lib/util.cc",
    "README.md",
    "def",
    "parse(x):",
    "return",
    "x",
    "+",
    "1",
    "{",
    "}",
    "[0,",
    "1,",
    "2]",
    "naïve",
    "Straße",
    "日本語のテキスト",
    "emoji 🚀",
    "Ελληνικά",
    "café",
    "caf\\u00e9",
    "smile \\ud83d\\ude00",
    "tab\\there",
    "quote \\\"x\\\"",
    "back\\\\slash",
    "line\\nbreak",
    "100%",
    "<tag>",
    "a&b",
    "42",
    "3.14",
    "über",
    "数据",
    "résumé",
    "–",
    "…",
    "fn",
    "main()",
    "widget",
    "gadget",
    "pipeline",
    "stage",
    "output",
    "buffer",
    "index",
    "offset",
    "token",
};

std::string Text(Rng& rng, size_t min_words, size_t max_words) {
  std::string out;
  const size_t n = rng.Range(min_words, max_words);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += rng.Percent(8) ? "\\n" : " ";
    out += rng.Pick(kWords);
  }
  return out;
}

// A long tool output: a numbered file view, 0.5-4 KB.
std::string FileView(Rng& rng) {
  std::string out = "[File: src/app/module_" + std::to_string(rng.Range(0, 9)) +
                    ".py (200 lines total)]";
  const size_t lines = rng.Range(10, 60);
  for (size_t i = 1; i <= lines; ++i) {
    out += "\\n" + std::to_string(i) + ":    " + Text(rng, 2, 10);
  }
  return out;
}

std::string ErrorOutput(Rng& rng) {
  return "Traceback (most recent call last):\\n  File \\\"src/app/main.py\\\", "
         "line " +
         std::to_string(rng.Range(1, 400)) + ", in parse\\n    " +
         Text(rng, 2, 6) +
         "\\nValueError: invalid literal for int() with base 10: '" +
         std::to_string(rng.Range(0, 99999)) + "'";
}

std::string TestOutput(Rng& rng) {
  const uint64_t failed = rng.Range(0, 3);
  std::string out =
      "============ test session starts ============\\ncollected " +
      std::to_string(rng.Range(5, 200)) + " items\\n";
  if (failed > 0) {
    out += "FAILED tests/test_parse.py::test_case_" +
           std::to_string(rng.Range(1, 50)) + " - AssertionError\\n";
  }
  out += "====== " + std::to_string(failed) + " failed, " +
         std::to_string(rng.Range(1, 150)) + " passed in 0.42s ======";
  return out;
}

std::string ToolOutput(Rng& rng) {
  switch (rng.Range(0, 5)) {
    case 0:
      return FileView(rng);
    case 1:
      return ErrorOutput(rng);
    case 2:
      return TestOutput(rng);
    case 3:
      return "";
    default:
      return Text(rng, 1, 40);
  }
}

constexpr const char* kAcks[] = {"ok", "thanks", "Got it.", "ok thanks", "👍"};
constexpr const char* kCorrections[] = {
    "Actually, the parser lives in lib/parse.cc, not src/app/main.py.",
    "That's wrong: keep the old flag and rename the new one.",
    "I meant the second widget, the gadget stage.",
    "No, use the cache layer instead of the loader.",
};
constexpr const char* kToolNames[] = {"bash", "open_file", "edit_file",
                                      "search", "run_tests"};

struct Msg {
  std::string json;  // minified, as the compactor must emit it when kept
  char role = 'u';   // s(ystem), u(ser), a(ssistant), t(ool)
  bool anchor = false;
  bool task = false;  // the generator's "Task:" request
  size_t unit = 0;    // index of the unit's first message
};

struct History {
  ChatFormat format = ChatFormat::kOpenAI;
  std::vector<Msg> msgs;
  std::string json;
};

std::string JoinArray(const std::vector<Msg>& msgs,
                      const std::vector<size_t>& pick) {
  std::string out = "[";
  for (size_t i = 0; i < pick.size(); ++i) {
    if (i > 0) out += ',';
    out += msgs[pick[i]].json;
  }
  out += ']';
  return out;
}

// The bytes of a user message's text, trimmed of spaces and newlines:
// string content, or the text parts joined by "\n" (0 without text).
size_t TextBytes(const Msg& m) {
  simdjson::dom::parser parser;
  simdjson::dom::element content;
  if (parser.parse(m.json)["content"].get(content) != simdjson::SUCCESS) {
    return 0;
  }
  std::string text;
  std::string_view s;
  if (content.get_string().get(s) == simdjson::SUCCESS) {
    text = s;
  } else if (simdjson::dom::array parts;
             content.get_array().get(parts) == simdjson::SUCCESS) {
    for (simdjson::dom::element part : parts) {
      if (part["type"].get_string().get(s) != simdjson::SUCCESS ||
          s != "text") {
        continue;
      }
      if (part["text"].get_string().get(s) != simdjson::SUCCESS) continue;
      if (!text.empty()) text += '\n';
      text += s;
    }
  }
  const size_t begin = text.find_first_not_of(" \n\t\r");
  if (begin == std::string::npos) return 0;
  return text.find_last_not_of(" \n\t\r") + 1 - begin;
}

// compactor.h's task rule, read from the contract rather than the engine:
// the last user message with text before the first assistant turn that says
// at least 16 bytes (else the last with text). The generator's words carry
// no demonstration marker, and its only message that opens the history is
// the "Task:" request, so the one it marked is moved when user messages
// follow it before the first assistant turn.
void MarkTask(History* h) {
  size_t task = h->msgs.size();
  size_t fallback = h->msgs.size();
  for (size_t i = 0; i < h->msgs.size(); ++i) {
    const Msg& m = h->msgs[i];
    if (m.role == 'a') break;
    if (m.role != 'u') continue;
    const size_t bytes = TextBytes(m);
    if (bytes == 0) continue;
    fallback = i;
    if (bytes >= 16) task = i;
  }
  if (task == h->msgs.size()) task = fallback;
  for (size_t i = 0; i < h->msgs.size() && h->msgs[i].role != 'a'; ++i) {
    if (h->msgs[i].task) h->msgs[i].anchor = false;
  }
  if (task < h->msgs.size()) h->msgs[task].anchor = true;
}

void Finish(History* h) {
  MarkTask(h);
  std::vector<size_t> all(h->msgs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  h->json = JoinArray(h->msgs, all);
}

void Add(History* h, std::string json, char role, bool anchor = false,
         bool same_unit = false) {
  Msg m;
  m.json = std::move(json);
  m.role = role;
  m.anchor = anchor;
  m.unit = same_unit && !h->msgs.empty() ? h->msgs.back().unit : h->msgs.size();
  h->msgs.push_back(std::move(m));
}

std::string Quoted(const std::string& escaped) { return "\"" + escaped + "\""; }

// `json` with the \u escapes the generator writes replaced by the UTF-8
// they stand for: the same JSON value. The header promises kept messages
// byte for byte; an engine that re-serializes strings writes them this way,
// which the test accepts (equal as JSON, equal in tokens).
std::string WithEscapesDecoded(std::string json) {
  for (auto [from, to] :
       {std::pair<std::string_view, std::string_view>{"\\u00e9", "é"},
        {"\\ud83d\\ude00", "😀"}}) {
    for (size_t pos = json.find(from); pos != std::string::npos;
         pos = json.find(from, pos)) {
      json.replace(pos, from.size(), to);
      pos += to.size();
    }
  }
  return json;
}

// ---- OpenAI ----

std::string OpenAIToolCall(Rng& rng, const std::string& id) {
  const char* name = rng.Pick(kToolNames);
  // arguments is a JSON string holding JSON: its quotes are escaped twice.
  return "{\"id\":\"" + id +
         "\",\"type\":\"function\",\"function\":{\"name\":\"" + name +
         "\",\"arguments\":\"{\\\"command\\\":\\\"" + Text(rng, 1, 6) +
         "\\\"}\"}}";
}

std::string OpenAIContent(Rng& rng, const std::string& escaped_text,
                          bool allow_image) {
  const uint64_t shape = rng.Range(0, 9);
  if (shape == 0) {
    std::string out =
        "[{\"type\":\"text\",\"text\":" + Quoted(escaped_text) + "}";
    if (allow_image && rng.Percent(40)) {
      out +=
          ",{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://"
          "example.com/a.png\"" +
          std::string(rng.Percent(50) ? ",\"detail\":\"low\"" : "") + "}}";
    }
    return out + "]";
  }
  return Quoted(escaped_text);
}

History GenerateOpenAI(Rng& rng) {
  History h;
  h.format = ChatFormat::kOpenAI;
  if (rng.Percent(70)) {
    Add(&h,
        "{\"role\":\"system\",\"content\":" +
            Quoted("You are a coding agent. " + Text(rng, 5, 60)) + "}",
        's');
  }
  if (rng.Percent(10)) {
    Add(&h,
        "{\"role\":\"developer\",\"content\":" + Quoted(Text(rng, 3, 20)) + "}",
        's');
  }
  Add(&h,
      "{\"role\":\"user\",\"content\":" +
          OpenAIContent(rng, "Task: fix the parser so that " + Text(rng, 5, 80),
                        true) +
          "}",
      'u', /*anchor=*/true);
  h.msgs.back().task = true;
  const size_t turns = rng.Percent(10) ? rng.Range(40, 120) : rng.Range(0, 30);
  size_t next_id = 0;
  for (size_t t = 0; t < turns; ++t) {
    const uint64_t kind = rng.Range(0, 99);
    if (kind < 35) {
      const size_t calls = rng.Range(1, 3);
      std::vector<std::string> ids;
      std::string json =
          "{\"role\":\"assistant\",\"content\":" +
          (rng.Percent(50) ? std::string("null") : Quoted(Text(rng, 3, 30))) +
          ",\"tool_calls\":[";
      for (size_t c = 0; c < calls; ++c) {
        ids.push_back("call_" + std::to_string(next_id++));
        if (c > 0) json += ',';
        json += OpenAIToolCall(rng, ids.back());
      }
      Add(&h, json + "]}", 'a');
      if (rng.Percent(20)) std::reverse(ids.begin(), ids.end());
      for (const std::string& id : ids) {
        std::string tool = "{\"role\":\"tool\",\"tool_call_id\":\"" + id + "\"";
        if (rng.Percent(20)) tool += ",\"name\":\"bash\"";
        tool +=
            ",\"content\":" + OpenAIContent(rng, ToolOutput(rng), false) + "}";
        Add(&h, tool, 't', false, /*same_unit=*/true);
      }
    } else if (kind < 55) {
      std::string json = "{\"role\":\"assistant\"";
      if (rng.Percent(10)) json += ",\"name\":\"helper\"";
      Add(&h,
          json + ",\"content\":" + OpenAIContent(rng, Text(rng, 1, 60), false) +
              "}",
          'a');
    } else if (kind < 70) {
      Add(&h,
          "{\"role\":\"user\",\"content\":" +
              OpenAIContent(rng, Text(rng, 2, 40), true) + "}",
          'u');
    } else if (kind < 80) {
      Add(&h, "{\"role\":\"user\",\"content\":" + Quoted(rng.Pick(kAcks)) + "}",
          'u');
    } else if (kind < 85) {
      Add(&h,
          "{\"role\":\"user\",\"content\":" + Quoted(rng.Pick(kCorrections)) +
              "}",
          'u',
          /*anchor=*/true);
    } else {
      // A pasted log, long.
      Add(&h, "{\"role\":\"user\",\"content\":" + Quoted(FileView(rng)) + "}",
          'u');
    }
  }
  if (rng.Percent(15)) {  // an agent's pending call
    const size_t calls = rng.Range(1, 3);
    std::string json =
        "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[";
    for (size_t c = 0; c < calls; ++c) {
      if (c > 0) json += ',';
      json += OpenAIToolCall(rng, "call_" + std::to_string(next_id++));
    }
    Add(&h, json + "]}", 'a');
  }
  Finish(&h);
  return h;
}

// ---- Anthropic ----

std::string CacheControl(Rng& rng) {
  return rng.Percent(15) ? ",\"cache_control\":{\"type\":\"ephemeral\"}" : "";
}

std::string AnthropicText(Rng& rng, const std::string& escaped) {
  return "{\"type\":\"text\",\"text\":" + Quoted(escaped) + CacheControl(rng) +
         "}";
}

History GenerateAnthropic(Rng& rng) {
  History h;
  h.format = ChatFormat::kAnthropic;
  if (rng.Percent(30)) {
    Add(&h,
        "{\"role\":\"system\",\"content\":" +
            Quoted("You are a careful assistant. " + Text(rng, 3, 40)) + "}",
        's');
  }
  {
    const std::string task = "Task: fix the parser so that " + Text(rng, 5, 80);
    std::string content;
    if (rng.Percent(30)) {
      content = Quoted(task);
    } else {
      content = "[" + AnthropicText(rng, task);
      if (rng.Percent(15)) {
        content +=
            ",{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_"
            "type\":"
            "\"image/png\",\"data\":\"iVBORw0KGgoAAAANSUhEUg==\"}}";
      }
      content += "]";
    }
    Add(&h, "{\"role\":\"user\",\"content\":" + content + "}", 'u',
        /*anchor=*/true);
    h.msgs.back().task = true;
  }
  const size_t pairs = rng.Percent(10) ? rng.Range(20, 60) : rng.Range(0, 15);
  size_t next_id = 0;
  for (size_t p = 0; p < pairs; ++p) {
    // Assistant turn.
    std::vector<std::string> ids;
    std::string blocks;
    auto add_block = [&blocks](const std::string& b) {
      if (!blocks.empty()) blocks += ',';
      blocks += b;
    };
    if (rng.Percent(25)) {
      add_block("{\"type\":\"thinking\",\"thinking\":" +
                Quoted(Text(rng, 3, 40)) + ",\"signature\":\"c2lnbmF0dXJl\"}");
    }
    if (rng.Percent(80)) add_block(AnthropicText(rng, Text(rng, 1, 50)));
    if (rng.Percent(40) || blocks.empty()) {
      const size_t calls = rng.Range(1, 3);
      for (size_t c = 0; c < calls; ++c) {
        ids.push_back("toolu_" + std::to_string(next_id++));
        add_block("{\"type\":\"tool_use\",\"id\":\"" + ids.back() +
                  "\",\"name\":\"" + rng.Pick(kToolNames) +
                  "\",\"input\":{\"command\":" + Quoted(Text(rng, 1, 6)) + "}" +
                  CacheControl(rng) + "}");
      }
    }
    if (ids.empty() && rng.Percent(30)) {
      Add(&h,
          "{\"role\":\"assistant\",\"content\":" + Quoted(Text(rng, 1, 50)) +
              "}",
          'a');
    } else {
      Add(&h, "{\"role\":\"assistant\",\"content\":[" + blocks + "]}", 'a');
    }
    const bool last_pair = p + 1 == pairs;
    if (last_pair && !ids.empty() && rng.Percent(40))
      break;  // pending tool_use
    if (last_pair && ids.empty() && rng.Percent(40))
      break;  // ends with the assistant
    // User turn.
    if (!ids.empty()) {
      if (rng.Percent(20)) std::reverse(ids.begin(), ids.end());
      std::string content = "[";
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) content += ',';
        content += "{\"type\":\"tool_result\",\"tool_use_id\":\"" + ids[i] +
                   "\",\"content\":";
        const std::string out = ToolOutput(rng);
        content +=
            rng.Percent(30) ? "[" + AnthropicText(rng, out) + "]" : Quoted(out);
        if (rng.Percent(10)) content += ",\"is_error\":true";
        content += CacheControl(rng) + "}";
      }
      if (rng.Percent(25))
        content += "," + AnthropicText(rng, Text(rng, 1, 20));
      Add(&h, "{\"role\":\"user\",\"content\":" + content + "]}", 'u', false,
          /*same_unit=*/true);
      continue;
    }
    const uint64_t kind = rng.Range(0, 99);
    if (kind < 15) {
      Add(&h, "{\"role\":\"user\",\"content\":" + Quoted(rng.Pick(kAcks)) + "}",
          'u');
    } else if (kind < 22) {
      Add(&h,
          "{\"role\":\"user\",\"content\":" + Quoted(rng.Pick(kCorrections)) +
              "}",
          'u',
          /*anchor=*/true);
    } else if (kind < 35) {
      Add(&h, "{\"role\":\"user\",\"content\":" + Quoted(FileView(rng)) + "}",
          'u');
    } else {
      Add(&h,
          "{\"role\":\"user\",\"content\":[" +
              AnthropicText(rng, Text(rng, 1, 40)) + "]}",
          'u');
    }
  }
  Finish(&h);
  return h;
}

// ---- plain ----

History GeneratePlain(Rng& rng) {
  History h;
  h.format = ChatFormat::kPlain;
  if (rng.Percent(60)) {
    Add(&h,
        "{\"role\":\"system\",\"content\":" + Quoted(Text(rng, 3, 50)) + "}",
        's');
  }
  Add(&h,
      "{\"role\":\"user\",\"content\":" + Quoted("Task: " + Text(rng, 3, 60)) +
          "}",
      'u', true);
  const size_t n = rng.Percent(10) ? rng.Range(40, 150) : rng.Range(0, 30);
  char role = 'a';
  for (size_t i = 0; i < n; ++i) {
    if (rng.Percent(10)) role = role == 'a' ? 'u' : 'a';  // two in a row
    const char* name = role == 'a' ? "assistant" : "user";
    const uint64_t kind = rng.Range(0, 99);
    if (role == 'u' && kind < 15) {
      Add(&h,
          std::string("{\"role\":\"user\",\"content\":") +
              Quoted(rng.Pick(kAcks)) + "}",
          'u');
    } else if (role == 'u' && kind < 22) {
      Add(&h,
          std::string("{\"role\":\"user\",\"content\":") +
              Quoted(rng.Pick(kCorrections)) + "}",
          'u', true);
    } else if (kind < 30) {
      Add(&h,
          std::string("{\"role\":\"") + name +
              "\",\"content\":" + Quoted(ToolOutput(rng)) + "}",
          role);
    } else {
      Add(&h,
          std::string("{\"role\":\"") + name +
              "\",\"content\":" + Quoted(Text(rng, 1, 60)) + "}",
          role);
    }
    role = role == 'a' ? 'u' : 'a';
  }
  Finish(&h);
  return h;
}

// ---- counting ----

// How the compaction counts; the test counts the same way.
struct Counter {
  std::string model;         // CompactionOptions::model
  std::string counter_type;  // CompactionOptions::token_counter_type
};

size_t CountWith(const Counter& counter, ChatFormat input_format,
                 const std::string& json) {
  StatusOr<MessageCount> n = Status(StatusCode::kInternal, "unset");
  if (!counter.model.empty()) {
    n = CountMessagesForModel(counter.model, json);
  } else if (!counter.counter_type.empty()) {
    n = CountMessagesForCounterType(counter.counter_type, json);
  } else {
    n = CountMessagesForCounterType(
        input_format == ChatFormat::kAnthropic ? "anthropic" : "openai", json);
  }
  REQUIRE_MESSAGE(n.ok(), n.status().ToString());
  return n->total;
}

Counter RandomCounter(Rng& rng) {
  switch (rng.Range(0, 7)) {
    case 0:
      return {"", "generic"};
    case 1:
      return {"", "openai"};
    case 2:
      return {"", "anthropic"};
    case 3:
      return {"claude-3-5-sonnet", ""};
    case 4:
      return {"", ""};
    default:
      return {"gpt-4o", ""};
  }
}

// The messages the engine must keep to honour its contract: the system
// messages, the anchors (when kept) and the last message with its unit.
std::vector<size_t> RequiredMessages(const History& h, bool keep_anchors) {
  std::vector<size_t> pick;
  const size_t last_unit = h.msgs.back().unit;
  for (size_t i = 0; i < h.msgs.size(); ++i) {
    const Msg& m = h.msgs[i];
    if (m.role == 's' || (keep_anchors && m.anchor) || m.unit == last_unit)
      pick.push_back(i);
  }
  return pick;
}

// Whether the required messages alone form a valid Anthropic history (user
// first, alternating): only then is the bound one the engine can reach
// without keeping other messages for the structure's sake.
bool AlternatesAsAnthropic(const History& h, const std::vector<size_t>& pick) {
  char expect = 'u';
  for (size_t i : pick) {
    if (h.msgs[i].role == 's') continue;
    if (h.msgs[i].role != expect) return false;
    expect = expect == 'u' ? 'a' : 'u';
  }
  return true;
}

// Whether any string under `e` (a message's content, markers removed) has
// something besides white space.
bool HasText(simdjson::dom::element e) {
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    return s.find_first_not_of(" \n\t\r") != std::string_view::npos;
  }
  if (simdjson::dom::array a; e.get_array().get(a) == simdjson::SUCCESS) {
    for (simdjson::dom::element x : a) {
      if (HasText(x)) return true;
    }
    return false;
  }
  if (simdjson::dom::object o; e.get_object().get(o) == simdjson::SUCCESS) {
    for (auto field : o) {
      const std::string_view key = field.key;
      if ((key == "text" || key == "content") && HasText(field.value)) {
        return true;
      }
    }
  }
  return false;
}

struct Stats {
  size_t histories = 0;
  size_t compactions = 0;
  size_t bound_checked = 0;  // budget_met asserted from the bound
  size_t met = 0;
  size_t truncated = 0;
  size_t summaries = 0;
};

// The options, for failure messages (with the input, a reproducer).
std::string Describe(const CompactionOptions& o) {
  std::string out =
      "max_tokens=" + std::to_string(o.max_tokens) +
      " strategy=" + CompactionStrategyName(o.strategy) +
      " recent_window=" + std::to_string(o.recent_window) +
      " keep_anchors=" + (o.keep_anchors ? "1" : "0") +
      " preserve_tool_results=" + (o.preserve_tool_results ? "1" : "0") +
      " preserve_schema_info=" + (o.preserve_schema_info ? "1" : "0") +
      " enable_summarization=" + (o.enable_summarization ? "1" : "0") +
      " enable_llm_summarization=" + (o.enable_llm_summarization ? "1" : "0") +
      " min_important_messages=" + std::to_string(o.min_important_messages) +
      " max_summary_tokens=" + std::to_string(o.max_summary_tokens) +
      " model=" + o.model + " token_counter_type=" + o.token_counter_type +
      " format=" + ChatFormatName(o.format);
  if (o.target_ratio) out += " target_ratio=" + std::to_string(*o.target_ratio);
  return out;
}

void CheckOne(const History& h, const CompactionOptions& options,
              const Counter& counter, size_t original_tokens,
              bool check_determinism, Stats* stats) {
  CAPTURE(Describe(options));
  const Compactor compactor;
  StatusOr<CompactionResult> r = compactor.Compact(h.json, options);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  ++stats->compactions;
  stats->met += r->budget_met ? 1 : 0;
  stats->truncated += r->truncated_count > 0 ? 1 : 0;
  stats->summaries += r->summary_count;

  // Structure. Detection may legitimately resolve a history that uses no
  // feature only its generator's format has (say, string contents only) to
  // another format; the input must then be valid in that format too, and
  // that format's rules apply to the output.
  if (r->format != h.format) {
    CHECK(options.format == ChatFormat::kAuto);
    CHECK_MESSAGE(ValidateChatHistory(h.json, r->format).ok(), "detected ",
                  std::string(ChatFormatName(r->format)), " for a generated ",
                  std::string(ChatFormatName(h.format)), " history");
  }
  const Status valid = ValidateChatHistory(r->messages_json, r->format);
  CHECK_MESSAGE(valid.ok(), valid.ToString(), "\noutput: ", r->messages_json,
                "\ninput: ", h.json);

  // Exact counts, one tokenizer (the default counter depends on the
  // resolved format).
  if (r->format == h.format) {
    CHECK(r->original_tokens == original_tokens);
  } else {
    CHECK(r->original_tokens == CountWith(counter, r->format, h.json));
  }
  CHECK(r->compacted_tokens == CountWith(counter, r->format, r->messages_json));
  CHECK(r->original_count == h.msgs.size());
  CHECK(r->compacted_count == r->messages.size());

  // The array is its messages.
  {
    std::string joined = "[";
    for (size_t i = 0; i < r->messages.size(); ++i) {
      if (i > 0) joined += ',';
      joined += r->messages[i].json;
    }
    joined += ']';
    CHECK(joined == r->messages_json);
  }

  // Budget.
  CHECK(r->target_tokens <= static_cast<size_t>(options.max_tokens));
  if (r->budget_met) {
    CHECK(r->compacted_tokens <= r->target_tokens);
    CHECK(r->over_budget_by == 0);
  } else {
    CHECK(r->compacted_tokens > r->target_tokens);
    CHECK(r->over_budget_by > 0);
  }
  const std::vector<size_t> required =
      RequiredMessages(h, options.keep_anchors);
  const size_t bound =
      CountWith(counter, r->format, JoinArray(h.msgs, required));
  if (bound <= r->target_tokens && (r->format != ChatFormat::kAnthropic ||
                                    AlternatesAsAnthropic(h, required))) {
    ++stats->bound_checked;
    CHECK_MESSAGE(r->budget_met, "bound ", bound, " target ", r->target_tokens,
                  " got ", r->compacted_tokens, " strategy ",
                  CompactionStrategyName(options.strategy),
                  "\ninput: ", h.json);
  }

  // Status: within budget is met or degraded, and degraded exactly when
  // must-keep text was cut.
  CHECK(r->budget_met == (r->status != BudgetStatus::kInfeasible));
  if (r->status == BudgetStatus::kMet) CHECK(r->must_keep_cut_tokens == 0);
  if (r->status == BudgetStatus::kDegraded) {
    CHECK(r->must_keep_cut_tokens > 0);
  }

  // A must-keep message that was cut keeps some of its text: never a bare
  // marker.
  if (options.explain) {
    REQUIRE(r->decisions.size() == h.msgs.size());
    for (const CompactedMessage& m : r->messages) {
      if (!m.source_index || !m.is_compressed) continue;
      const MessageDecision& d = r->decisions[*m.source_index];
      if (d.action != MessageDecision::Action::kTruncated) continue;
      if (d.reason == "within_budget" || d.reason == "recent_window" ||
          d.reason == "min_important") {
        continue;  // optional messages may be cut to anything
      }
      std::string rest = m.json;
      for (size_t at = rest.find("[... ctxkit cut "); at != std::string::npos;
           at = rest.find("[... ctxkit cut ")) {
        rest.erase(at, rest.find("...]", at) + 4 - at);
      }
      simdjson::dom::parser parser;
      simdjson::dom::element content;
      REQUIRE(parser.parse(rest)["content"].get(content) == simdjson::SUCCESS);
      const bool has_text = HasText(content);
      CHECK_MESSAGE(has_text, "must-keep message ", *m.source_index, " (",
                    d.reason, ") cut to a bare marker: ", m.json);
    }
  }

  // Order, byte-exact kept messages, the last message kept.
  bool last_kept = false;
  size_t previous = 0;
  bool have_previous = false;
  for (const CompactedMessage& m : r->messages) {
    if (!m.source_index) continue;
    REQUIRE(*m.source_index < h.msgs.size());
    if (have_previous) CHECK(*m.source_index > previous);
    previous = *m.source_index;
    have_previous = true;
    if (!m.is_compressed) {
      const std::string& given = h.msgs[*m.source_index].json;
      CHECK_MESSAGE((m.json == given || m.json == WithEscapesDecoded(given)),
                    "kept message changed:\n", m.json, "\n", given);
    }
    if (*m.source_index == h.msgs.size() - 1) last_kept = true;
  }
  CHECK_MESSAGE(last_kept, r->messages_json);

  // Determinism (on one budget of each history, to save time).
  if (!check_determinism) return;
  StatusOr<CompactionResult> again = compactor.Compact(h.json, options);
  REQUIRE(again.ok());
  CHECK(again->messages_json == r->messages_json);
  CHECK(again->compacted_tokens == r->compacted_tokens);
}

CompactionOptions RandomOptions(Rng& rng, ChatFormat format,
                                const Counter& counter, size_t budget) {
  CompactionOptions o;
  o.max_tokens = static_cast<int64_t>(std::max<size_t>(budget, 1));
  o.model = counter.model;
  o.token_counter_type = counter.counter_type;
  constexpr CompactionStrategy kStrategies[] = {
      CompactionStrategy::kSmart, CompactionStrategy::kSmart,
      CompactionStrategy::kSummarize, CompactionStrategy::kRemoveOld,
      CompactionStrategy::kCompressSimilar};
  o.strategy = rng.Pick(kStrategies);
  o.recent_window = rng.Percent(10)
                        ? static_cast<int64_t>(rng.Range(50, 100000))
                        : static_cast<int64_t>(rng.Range(0, 15));
  o.keep_anchors = rng.Percent(85);
  o.preserve_tool_results = rng.Percent(70);
  o.preserve_schema_info = rng.Percent(70);
  o.enable_summarization = rng.Percent(75);
  o.enable_llm_summarization = rng.Percent(20);
  o.min_important_messages = static_cast<int64_t>(rng.Range(0, 5));
  if (rng.Percent(30))
    o.target_ratio = 0.1 + static_cast<double>(rng.Range(0, 80)) / 100.0;
  if (rng.Percent(20))
    o.max_summary_tokens = static_cast<int64_t>(rng.Range(16, 400));
  o.format = rng.Percent(50) ? format : ChatFormat::kAuto;
  o.explain = rng.Percent(30);
  return o;
}

void RunFormat(History (*generate)(Rng&), uint64_t seed, int count,
               Stats* stats) {
  Rng rng(seed);
  for (int i = 0; i < count; ++i) {
    const History h = generate(rng);
    REQUIRE_MESSAGE(
        ValidateChatHistory(h.json, h.format).ok(),
        "generator bug: ", ValidateChatHistory(h.json, h.format).ToString(),
        "\n", h.json);
    ++stats->histories;
    const Counter counter = RandomCounter(rng);
    const size_t total = CountWith(counter, h.format, h.json);
    const size_t bound = CountWith(
        counter, h.format, JoinArray(h.msgs, RequiredMessages(h, true)));
    // Budgets: anywhere from 1 token to above the total, and near the bound,
    // where the engine has the least room.
    const size_t budgets[] = {
        static_cast<size_t>(rng.Range(1, total + total / 4 + 1)),
        static_cast<size_t>(rng.Range(bound, std::max(bound, total))),
        static_cast<size_t>(rng.Range(1, 2 * bound + 1)),
    };
    for (size_t b = 0; b < 3; ++b) {
      const CompactionOptions options =
          RandomOptions(rng, h.format, counter, budgets[b]);
      CAPTURE(i);
      CAPTURE(budgets[b]);
      CheckOne(h, options, counter, total, /*check_determinism=*/b == 0, stats);
    }
  }
}

int HistoriesPerFormat() {
  const char* v = std::getenv("CTXKIT_PROPERTY_HISTORIES");
  if (v != nullptr && *v != '\0') return std::max(1, std::atoi(v));
  return kHistoriesPerFormat;
}

void RunAndReport(const char* name, History (*generate)(Rng&), uint64_t seed) {
  const int count = HistoriesPerFormat();
  const auto start = std::chrono::steady_clock::now();
  Stats stats;
  RunFormat(generate, seed, count, &stats);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "property %s: %zu histories, %zu compactions (a third run twice), budget "
      "met %zu, "
      "met-by-bound asserted %zu, truncated %zu, summaries %zu, %.2f s\n",
      name, stats.histories, stats.compactions, stats.met, stats.bound_checked,
      stats.truncated, stats.summaries, seconds);
}

TEST_CASE(
    "generated OpenAI histories compact validly, exactly and within budget") {
  RunAndReport("openai", GenerateOpenAI, 0x0A11CE01);
}
TEST_CASE(
    "generated Anthropic histories compact validly, exactly and within "
    "budget") {
  RunAndReport("anthropic", GenerateAnthropic, 0x0A11CE02);
}
TEST_CASE(
    "generated plain histories compact validly, exactly and within budget") {
  RunAndReport("plain", GeneratePlain, 0x0A11CE03);
}

// ---- hand-written edge cases ----

std::string UserMessage(const std::string& escaped) {
  return "{\"role\":\"user\",\"content\":" + Quoted(escaped) + "}";
}
std::string AssistantMessage(const std::string& escaped) {
  return "{\"role\":\"assistant\",\"content\":" + Quoted(escaped) + "}";
}

std::string Words(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ' ';
    out += kWords[i % 20];
  }
  return out;
}

TEST_CASE(
    "a recent window larger than the target terminates and meets the budget") {
  std::string json = "[{\"role\":\"system\",\"content\":\"You are terse.\"}," +
                     UserMessage("Task: summarize the pipeline stages.");
  for (int i = 0; i < 60; ++i) {
    json += "," + (i % 2 == 0 ? AssistantMessage(Words(150))
                              : UserMessage(Words(120)));
  }
  json += "]";
  for (CompactionStrategy s :
       {CompactionStrategy::kSmart, CompactionStrategy::kSummarize,
        CompactionStrategy::kRemoveOld, CompactionStrategy::kCompressSimilar}) {
    CompactionOptions o;
    o.model = "gpt-4o";
    o.max_tokens = 400;
    o.recent_window = 50;
    o.strategy = s;
    CAPTURE(CompactionStrategyName(s));
    const auto start = std::chrono::steady_clock::now();
    auto r = Compactor().Compact(json, o);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    CHECK(r->budget_met);
    CHECK(r->compacted_tokens <= 400);
    CHECK(ValidateChatHistory(r->messages_json).ok());
    CHECK(r->compacted_tokens ==
          CountWith({"gpt-4o", ""}, ChatFormat::kPlain, r->messages_json));
  }
}

TEST_CASE(
    "a budget smaller than the last message truncates it or says by how much") {
  const std::string json = "[" + UserMessage("Task: look at this log.") + "," +
                           AssistantMessage("Reading it.") + "," +
                           UserMessage(Words(3000)) + "]";
  for (int64_t budget : {1, 10, 50, 200, 1000}) {
    CompactionOptions o;
    o.model = "gpt-4o";
    o.max_tokens = budget;
    CAPTURE(budget);
    auto r = Compactor().Compact(json, o);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(ValidateChatHistory(r->messages_json).ok());
    CHECK(r->compacted_tokens ==
          CountWith({"gpt-4o", ""}, ChatFormat::kPlain, r->messages_json));
    CHECK((r->truncated_count > 0 || !r->budget_met));
    if (r->budget_met) {
      CHECK(r->compacted_tokens <= static_cast<size_t>(budget));
    } else {
      CHECK(r->over_budget_by ==
            r->compacted_tokens - static_cast<size_t>(budget));
    }
    REQUIRE(!r->messages.empty());
    const CompactedMessage& last = r->messages.back();
    REQUIRE(last.source_index.has_value());
    CHECK(*last.source_index == 2);
    if (last.json !=
        "{\"role\":\"user\",\"content\":\"" + Words(3000) + "\"}") {
      CHECK(last.is_compressed);
    }
  }
}

TEST_CASE("a one-message history") {
  const std::string json =
      "[" + UserMessage("Task: naïve café 🚀 " + Words(40)) + "]";
  CompactionOptions o;
  o.model = "gpt-4o";
  auto r = Compactor().Compact(json, o);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(r->messages_json == json);
  CHECK(r->budget_met);
  CHECK(r->compacted_tokens == r->original_tokens);
  o.max_tokens = 5;
  r = Compactor().Compact(json, o);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(ValidateChatHistory(r->messages_json).ok());
  REQUIRE(r->messages.size() == 1);
  CHECK((r->truncated_count == 1 || !r->budget_met));
  CHECK(r->compacted_tokens ==
        CountWith({"gpt-4o", ""}, ChatFormat::kPlain, r->messages_json));
}

}  // namespace
}  // namespace ctxkit
