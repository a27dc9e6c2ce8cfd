#include "programs/ctxkit/host/services.h"

#include <memory>
#include <string>
#include <utility>

namespace ctxkit::host {

namespace {

Status Prefixed(const Status& status, std::string_view part) {
  return Status(status.code(),
                "opening the " + std::string(part) + ": " + status.message());
}

}  // namespace

Services::~Services() {
  // The destructors flush too, but drop the errors; a flush here at least
  // runs while every part is still open.
  if (cache != nullptr) (void)cache->Flush();
  if (analytics != nullptr) (void)analytics->Flush();
}

StatusOr<std::unique_ptr<Services>> OpenServices(const HostConfig& config,
                                                 std::unique_ptr<Store> store) {
  auto services = std::make_unique<Services>();
  services->config = config;
  services->store = std::move(store);
  Store& s = *services->store;

  auto conversations = ConversationStore::Open(s);
  if (!conversations.ok()) {
    return Prefixed(conversations.status(), "conversation store");
  }
  services->conversations = *std::move(conversations);

  auto references = ReferenceStore::Open(s);
  if (!references.ok()) {
    return Prefixed(references.status(), "reference store");
  }
  services->references = *std::move(references);

  auto cache = Cache::Open(s);
  if (!cache.ok()) return Prefixed(cache.status(), "cache");
  services->cache = *std::move(cache);

  // The graph's apiAnalyticsRetention is the host's analytics retention:
  // one Analytics serves the compactor and the graph.
  auto analytics = Analytics::Open(s, GraphAnalyticsOptions(config));
  if (!analytics.ok()) return Prefixed(analytics.status(), "analytics");
  services->analytics = *std::move(analytics);

  auto optimizer = QueryOptimizer::Create();
  if (!optimizer.ok()) return Prefixed(optimizer.status(), "query optimizer");
  services->optimizer = *std::move(optimizer);

  CompactorServices compactor_services;
  compactor_services.cache = services->cache.get();
  compactor_services.analytics = services->analytics.get();
  services->compactor = std::make_unique<Compactor>(compactor_services);

  // The analytics are destroyed after the graph: Services' members go in
  // reverse order.
  auto graph = OpenHostGraph(config, s, *services->conversations,
                             services->analytics.get());
  if (!graph.ok()) return Prefixed(graph.status(), "context graph");
  services->graph = *std::move(graph);
  return services;
}

StatusOr<std::unique_ptr<ContextGraph>> OpenHostGraph(
    const HostConfig& config, Store& store, ConversationStore& conversations,
    Analytics* analytics) {
  ContextGraphOptions options = GraphOptions(config);
  options.analytics = analytics;
  if (config.graph.embedding_dims > 0) {
    auto embedder =
        MakeHashedEmbedder(static_cast<uint32_t>(config.graph.embedding_dims));
    if (!embedder.ok()) return Prefixed(embedder.status(), "embedder");
    options.embedder = *std::move(embedder);
  }
  return ContextGraph::Open(store, conversations, std::move(options));
}

}  // namespace ctxkit::host
