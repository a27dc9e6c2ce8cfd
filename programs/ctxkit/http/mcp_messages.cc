#include "programs/ctxkit/http/mcp_messages.h"

#include <utility>

#include "simdjson.h"

namespace ctxkit::http {

// The session writes
// "jsonrpc" first and then "method" or "id", so the prefix nearly always
// decides without a parse (a parser per thread would keep buffers as large
// as the largest reply alive in every worker).
bool IsNotification(std::string_view message) {
  constexpr std::string_view kNotification = R"({"jsonrpc":"2.0","method":)";
  constexpr std::string_view kReply = R"({"jsonrpc":"2.0","id":)";
  if (message.substr(0, kNotification.size()) == kNotification) return true;
  if (message.substr(0, kReply.size()) == kReply) return false;
  if (!message.empty() && message.front() == '[') return false;  // a batch
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(message.data(), message.size()).get(root) !=
      simdjson::SUCCESS) {
    return false;
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) return false;
  simdjson::dom::element method;
  return object.at_key("method").get(method) == simdjson::SUCCESS;
}

void Collector::Send(std::string message) {
  messages_.push_back(std::move(message));
}

std::vector<std::string> Collector::Replies() const {
  std::vector<std::string> replies;
  for (const std::string& m : messages_) {
    if (!IsNotification(m)) replies.push_back(m);
  }
  return replies;
}

std::string SseEvent(std::string_view message) {
  // Messages are single-line JSON (the session's writer escapes every
  // control character), so one data line carries one message.
  std::string event = "event: message\ndata: ";
  event.append(message);
  event.append("\n\n");
  return event;
}

void SseWriter::Send(std::string message) {
  if (failed_) return;
  const std::string event = SseEvent(message);
  if (!sink_.write(event.data(), event.size())) failed_ = true;
}

InputKind Classify(std::string_view body) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS) {
    return InputKind::kInvalid;
  }
  const auto is_request = [](simdjson::dom::element e, bool* initialize) {
    simdjson::dom::object object;
    if (e.get_object().get(object) != simdjson::SUCCESS) return false;
    simdjson::dom::element id, method;
    if (object.at_key("id").get(id) != simdjson::SUCCESS ||
        object.at_key("method").get(method) != simdjson::SUCCESS) {
      return false;
    }
    std::string_view name;
    if (initialize != nullptr &&
        method.get_string().get(name) == simdjson::SUCCESS) {
      *initialize = name == "initialize";
    }
    return true;
  };
  simdjson::dom::array batch;
  if (root.get_array().get(batch) == simdjson::SUCCESS) {
    if (batch.size() == 0) return InputKind::kInvalid;
    for (simdjson::dom::element item : batch) {
      if (is_request(item, nullptr)) return InputKind::kRequests;
    }
    return InputKind::kNoRequests;
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return InputKind::kInvalid;
  }
  bool initialize = false;
  if (!is_request(root, &initialize)) return InputKind::kNoRequests;
  return initialize ? InputKind::kInitialize : InputKind::kRequests;
}

}  // namespace ctxkit::http
