// What the context graph's tests share: the conversations tests' store and
// injected clock with a ContextGraph over them, options that leave
// summaries and cleanups to the test, and the checks every test makes.

#ifndef CTXKIT_TESTS_GRAPH_GRAPH_FIXTURE_H_
#define CTXKIT_TESTS_GRAPH_GRAPH_FIXTURE_H_

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "ctxkit/context_graph.h"
#include "tests/conversations/test_helpers.h"

namespace ctxkit::testing {

// Nothing automatic: summaries and cleanups run when a test calls them.
inline ContextGraphOptions ManualGraphOptions() {
  ContextGraphOptions o;
  o.auto_summarize = false;
  o.auto_cleanup_contexts = false;
  return o;
}

struct GraphFixture : Fixture {
  std::unique_ptr<ContextGraph> graph;

  // `options` with the fixture's clock.
  explicit GraphFixture(ContextGraphOptions options = {}) {
    options.clock = clock.Fn();
    graph = Must(ContextGraph::Open(*store, *convs, options));
  }

  void CheckVerified() {
    GraphVerifyReport report = Must(graph->Verify());
    for (const std::string& p : report.problems) INFO(p);
    CHECK(report.ok);
    CHECK(report.problems.empty());
  }
};

inline void CheckError(const Status& s, StatusCode code,
                       const std::string& needle) {
  INFO(s.ToString());
  CHECK(s.code() == code);
  CHECK(Contains(s.message(), needle));
}

}  // namespace ctxkit::testing

#endif  // CTXKIT_TESTS_GRAPH_GRAPH_FIXTURE_H_
