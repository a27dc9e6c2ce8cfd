// Chat histories and texts for the compactor's tests, built one way for all
// of them: message objects as minified JSON, arrays of them, parsed
// histories, and the lines of a text.

#ifndef CTXKIT_TESTS_COMPACTOR_HISTORY_BUILDERS_H_
#define CTXKIT_TESTS_COMPACTOR_HISTORY_BUILDERS_H_

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/compactor.h"
#include "lib/compactor/chat_history.h"
#include "lib/json/json_writer.h"

namespace ctxkit::compactor_test {

// {"role": role, "content": content}.
inline std::string Msg(std::string_view role, std::string_view content) {
  internal::JsonWriter w;
  w.BeginObject().Key("role").String(role).Key("content").String(content);
  w.EndObject();
  return *std::move(w).Finish();
}

// An OpenAI assistant turn calling `name` with `arguments` (JSON text),
// with `text` as its content (null when empty).
inline std::string Call(std::string_view id, std::string_view name,
                        std::string_view arguments,
                        std::string_view text = "") {
  internal::JsonWriter w;
  w.BeginObject().Key("role").String("assistant").Key("content");
  if (text.empty()) {
    w.Null();
  } else {
    w.String(text);
  }
  w.Key("tool_calls").BeginArray().BeginObject();
  w.Key("id").String(id).Key("type").String("function");
  w.Key("function").BeginObject().Key("name").String(name);
  w.Key("arguments").String(arguments).EndObject();
  w.EndObject().EndArray().EndObject();
  return *std::move(w).Finish();
}

// The OpenAI tool message answering call `id`.
inline std::string Result(std::string_view id, std::string_view content) {
  internal::JsonWriter w;
  w.BeginObject().Key("role").String("tool").Key("tool_call_id").String(id);
  w.Key("content").String(content).EndObject();
  return *std::move(w).Finish();
}

// The messages as one JSON array.
inline std::string Array(const std::vector<std::string>& messages) {
  std::string out = "[";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out += ",";
    out += messages[i];
  }
  return out + "]";
}

// `json` parsed as a history (format detected); the test fails otherwise.
inline internal::ChatHistory MustParse(std::string_view json) {
  absl::StatusOr<internal::ChatHistory> history =
      internal::ParseChatHistoryJson(json, ChatFormat::kAuto);
  INFO(json);
  REQUIRE_MESSAGE(history.ok(), history.status().ToString());
  return *std::move(history);
}

// The lines of `text`, split at '\n' (a trailing '\n' gives an empty last
// line).
inline std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) {
      out.push_back(text.substr(begin));
      return out;
    }
    out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
}

inline bool HasLine(std::string_view text, std::string_view line) {
  for (std::string_view l : Lines(text)) {
    if (l == line) return true;
  }
  return false;
}

}  // namespace ctxkit::compactor_test

#endif  // CTXKIT_TESTS_COMPACTOR_HISTORY_BUILDERS_H_
