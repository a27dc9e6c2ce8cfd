// What every tool, resource and prompt of the host works on: one store and
// the library's parts opened over it, shared by every MCP session and HTTP
// request of the process.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_SERVICES_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_SERVICES_H_

#include <memory>

#include "ctxkit/analytics.h"
#include "ctxkit/cache.h"
#include "ctxkit/compactor.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/query_optimizer.h"
#include "ctxkit/references.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"
#include "programs/ctxkit/host/config.h"

namespace ctxkit::host {

// Thread safety: every member is thread-safe (each library class says so),
// so one Services serves all threads. Members are destroyed in reverse order,
// the store last.
struct Services {
  HostConfig config;
  std::unique_ptr<Store> store;
  std::unique_ptr<ConversationStore> conversations;
  std::unique_ptr<ReferenceStore> references;
  std::unique_ptr<Cache> cache;
  std::unique_ptr<Analytics> analytics;
  std::unique_ptr<QueryOptimizer> optimizer;
  std::unique_ptr<Compactor> compactor;  // uses cache and analytics
  // Seed 003's context memory graph, over `conversations`, with the
  // configuration's graph options, recording its calls in `analytics`.
  std::unique_ptr<ContextGraph> graph;

  // Flushes the cache's and analytics' pending statistics; errors dropped.
  ~Services();
};

// The host's ContextGraph over `store` and `conversations`:
// GraphOptions(config), recording its calls in `analytics` (which must
// outlive the graph), with the built-in hashed embedder when embeddingDims
// > 0. What OpenServices and the `ctx` commands both open, so that the
// command line and the servers honour one configuration alike. Errors:
// MakeHashedEmbedder's, ContextGraph::Open's.
StatusOr<std::unique_ptr<ContextGraph>> OpenHostGraph(
    const HostConfig& config, Store& store, ConversationStore& conversations,
    Analytics* analytics);

// Opens every part over `store`. Errors: those of each part's Open,
// prefixed with the part's name.
StatusOr<std::unique_ptr<Services>> OpenServices(const HostConfig& config,
                                                 std::unique_ptr<Store> store);

}  // namespace ctxkit::host

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_SERVICES_H_
