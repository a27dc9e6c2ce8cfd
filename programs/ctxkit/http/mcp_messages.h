// JSON-RPC traffic of MCP over HTTP: what kind of input a POST body is, and
// where the session's outbound messages go (a plain JSON reply or a stream
// of server-sent events).

#ifndef CTXKIT_PROGRAMS_CTXKIT_HTTP_MCP_MESSAGES_H_
#define CTXKIT_PROGRAMS_CTXKIT_HTTP_MCP_MESSAGES_H_

#include <httplib.h>

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "programs/ctxkit/mcp/session.h"

namespace ctxkit::http {

enum class InputKind {
  kInvalid,     // not JSON, or neither an object nor an array (or [])
  kNoRequests,  // notifications and responses only
  kRequests,    // at least one request
  kInitialize,  // one initialize request (the start of a session)
};

// What `body` holds. A request has an id and a method; anything else
// (notifications, responses, malformed messages) is not, so that those are
// served synchronously and a malformed one turns into the session's error.
// Thread-safe (one parser per thread).
InputKind Classify(std::string_view body);

// Whether `message` (one JSON-RPC message or a batch reply) is a
// notification: those have a method, replies do not.
bool IsNotification(std::string_view message);

// `message` (single-line JSON) as one server-sent event.
std::string SseEvent(std::string_view message);

// Collects what a session sends while handling one message on this thread.
// Not thread-safe: one per request.
class Collector final : public mcp::Outbound {
 public:
  // `abandoned` (null for never) says when the client has gone away; it
  // must outlive the collector.
  explicit Collector(const std::atomic<bool>* abandoned = nullptr)
      : abandoned_(abandoned) {}
  void Send(std::string message) override;
  bool Abandoned() const override {
    return abandoned_ != nullptr && abandoned_->load();
  }
  const std::vector<std::string>& messages() const { return messages_; }
  // The replies only: notifications produced on the way (progress, log)
  // have nowhere to go in a plain JSON response.
  std::vector<std::string> Replies() const;

 private:
  const std::atomic<bool>* abandoned_;
  std::vector<std::string> messages_;
};

// Writes each message as a server-sent event as soon as the session sends
// it, so progress and log notifications reach the client while the request
// runs. Once the client has gone away the rest is dropped (the work still
// completes unless `abandoned` says so first). Not thread-safe: one per
// request; `sink` and `abandoned` (null for never) must outlive it.
class SseWriter final : public mcp::Outbound {
 public:
  explicit SseWriter(httplib::DataSink& sink,
                     const std::atomic<bool>* abandoned = nullptr)
      : sink_(sink), abandoned_(abandoned) {}
  void Send(std::string message) override;
  bool Abandoned() const override {
    return abandoned_ != nullptr && abandoned_->load();
  }

 private:
  httplib::DataSink& sink_;
  const std::atomic<bool>* abandoned_;
  bool failed_ = false;
};

}  // namespace ctxkit::http

#endif  // CTXKIT_PROGRAMS_CTXKIT_HTTP_MCP_MESSAGES_H_
