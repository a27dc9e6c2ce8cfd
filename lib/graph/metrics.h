// How ContextGraph's operations record their calls in Analytics (CG-12):
// a GraphCall around each public operation, and a GraphSubCall around each
// summary a write makes. Both do nothing unless the graph has an Analytics
// and track_api_calls is set.
//
// Calls are recorded after the operation, never inside a write: Store may
// run a write's function again (when the map grows), so what the function
// notes is kept per attempt (GraphCall::Restart) and recorded only once the
// write has committed. Recording errors are dropped (the Compactor's rule):
// the operation has already happened, and its result must not change.

#ifndef CTXKIT_LIB_GRAPH_METRICS_H_
#define CTXKIT_LIB_GRAPH_METRICS_H_

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ctxkit/context_graph.h"

namespace ctxkit {
class Analytics;
}  // namespace ctxkit

namespace ctxkit::internal {

// Times one public operation on this thread. `type` (one of
// kGraphCallTypes, or "" for an operation recorded only through its
// GraphSubCalls) is recorded by the destructor, with `also` (another type,
// or "") for an operation that stands for two seed calls. An operation
// running inside another one's GraphCall on the same thread (Summarize
// reading Related) records nothing of its own. Not copyable; one thread.
class GraphCall {
 public:
  GraphCall(const ContextGraph::Impl& impl, std::string_view type,
            std::string_view also = {});
  ~GraphCall();
  GraphCall(const GraphCall&) = delete;
  GraphCall& operator=(const GraphCall&) = delete;

  // Marks the call succeeded when `value` is (a Status or StatusOr that is
  // ok, or any other value) and passes it through: `return call.Done(x);`.
  // A call never marked is recorded as failed, with none of its notes.
  template <typename T>
  T Done(T value) {
    if constexpr (requires { value.ok(); }) {
      ok_ = value.ok();
    } else {
      ok_ = true;
    }
    return value;
  }

  // At the start of each attempt of a write: forgets what an aborted
  // attempt noted on this thread.
  static void Restart();

 private:
  friend class GraphSubCall;
  struct Note {
    std::string_view type;
    int64_t duration_us = 0;
    std::string_view summarizer;  // "" unless llm_summarize
  };

  Analytics* analytics_ = nullptr;  // null: this call records nothing
  const ContextGraph::Impl* impl_ = nullptr;
  std::string_view type_;
  std::string_view also_;
  std::chrono::steady_clock::time_point start_;
  bool ok_ = false;
  std::vector<Note> notes_;
};

// Times one call a write makes (a summary) and notes it in this thread's
// GraphCall when Done is reached; an error return skips Done, and the
// write's failure drops the notes anyway.
class GraphSubCall {
 public:
  explicit GraphSubCall(std::string_view type);
  // `summarizer`: "extractive" or "host" for llm_summarize, else "".
  void Done(std::string_view summarizer = {});

 private:
  GraphCall* call_;
  std::string_view type_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_METRICS_H_
