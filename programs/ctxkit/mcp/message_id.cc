#include "programs/ctxkit/mcp/message_id.h"

#include "simdjson.h"

namespace ctxkit::mcp {
namespace {

bool IsJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

void MessageIdScanner::Feed(std::string_view bytes) {
  for (const char c : bytes) {
    if (expect_ == Expect::kDone) return;
    Step(c);
  }
}

void MessageIdScanner::EndValue() {
  if (capturing_) id_ = std::move(value_);
  capturing_ = false;
  in_scalar_ = false;
  value_.clear();
  expect_ = Expect::kAfterValue;
}

void MessageIdScanner::Step(char c) {
  // A number or literal at the top level ends at the first byte that
  // cannot continue it, which is then read as what follows the value.
  if (in_scalar_) {
    if (c != ',' && c != '}' && !IsJsonSpace(c)) {
      if (capturing_) value_.push_back(c);
      if (value_.size() > kMaxIdBytes) capturing_ = false;
      return;
    }
    EndValue();
  }
  if (in_string_) {
    const bool ends = !escaped_ && c == '"';
    escaped_ = !escaped_ && c == '\\';
    if (depth_ > 1) {
      in_string_ = !ends;
      return;
    }
    if (expect_ == Expect::kKey) {
      if (ends) {
        in_string_ = false;
        key_is_id_ = key_ == "id";
        expect_ = Expect::kColon;
      } else if (key_.size() <= 2) {
        // An escape anywhere in the key makes it some other key, as a
        // backslash never compares equal to a letter of "id".
        key_.push_back(c);
      } else {
        key_ = "???";
      }
      return;
    }
    if (capturing_) {
      value_.push_back(c);
      if (value_.size() > kMaxIdBytes) capturing_ = false;
    }
    if (ends) {
      in_string_ = false;
      EndValue();
    }
    return;
  }
  if (depth_ > 1) {  // inside an object or array that is a member's value
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 1) expect_ = Expect::kAfterValue;
    }
    return;
  }
  if (IsJsonSpace(c)) return;
  switch (expect_) {
    case Expect::kObject:
      if (c == '{') {
        depth_ = 1;
        expect_ = Expect::kKey;
      } else {
        expect_ = Expect::kDone;  // not an object: no id to find
      }
      return;
    case Expect::kKey:
      if (c == '"') {
        in_string_ = true;
        key_.clear();
      } else {
        expect_ = Expect::kDone;  // "}" ends the object; else malformed
      }
      return;
    case Expect::kColon:
      expect_ = c == ':' ? Expect::kValue : Expect::kDone;
      return;
    case Expect::kValue:
      capturing_ = key_is_id_ && id_.empty();
      key_is_id_ = false;
      value_.clear();
      if (c == '"') {
        in_string_ = true;
        if (capturing_) value_.push_back(c);
      } else if (c == '{' || c == '[') {
        capturing_ = false;  // an id is a number or a string
        depth_ = 2;
      } else {
        in_scalar_ = true;
        if (capturing_) value_.push_back(c);
      }
      return;
    case Expect::kAfterValue:
      expect_ = c == ',' ? Expect::kKey : Expect::kDone;
      return;
    case Expect::kDone:
      return;
  }
}

std::string MessageIdScanner::IdJson() const {
  if (id_.empty()) return "null";
  // What was captured is only the text between delimiters: let the JSON
  // parser say whether it is one valid number or string.
  simdjson::dom::parser parser;
  simdjson::dom::element id;
  if (parser.parse(id_).get(id) != simdjson::SUCCESS) return "null";
  if (!id.is_string() && !id.is_number()) return "null";
  return id_;
}

}  // namespace ctxkit::mcp
