// Crash safety of the context graph: a writer process (graph_peer) is
// SIGKILLed at random moments in a mix of AddMessage (with automatic
// summaries, auto-links and cleanups), AddRelationship, Summarize, Cleanup
// and Restore, round after round on one store. After every kill the graph
// is reopened and
//   - Verify() finds nothing wrong: both edge indexes, the hierarchy, the
//     summaries, the lexical index and the counters agree;
//   - CheckStore() agrees (the conversations' totals against a recount);
//   - every acknowledged message, relationship and summary version is
//     there.
//
// CTXKIT_GRAPH_KILL_ROUNDS (default 300; CTest sets 100 under a sanitizer,
// see CMakeLists.txt) and CTXKIT_GRAPH_KILL_SEED change the run; the seed
// is printed so a failure can be replayed.

#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "ctxkit/store_check.h"
#include "tests/unit/peer_process.h"
#include "tests/unit/test_util.h"

namespace ctxkit::testing {
namespace {

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// What the peer acknowledged.
struct Acks {
  std::map<std::string, uint64_t> messages;  // context -> highest seq
  std::set<std::tuple<std::string, std::string, std::string>> edges;
  std::map<std::string, uint64_t> summaries;  // context -> highest version
  uint64_t count = 0;

  void Apply(const std::string& line) {
    REQUIRE_MESSAGE(line.rfind("ERR", 0) != 0, "graph_peer failed: ", line);
    if (line == "ready") return;
    std::istringstream in(line);
    std::string kind, a, b, c;
    in >> kind >> a >> b >> c;
    if (kind == "M") {
      messages[a] = std::max<uint64_t>(messages[a], std::stoull(b));
    } else if (kind == "E") {
      edges.insert({a, b, c});
    } else if (kind == "S") {
      summaries[a] = std::max<uint64_t>(summaries[a], std::stoull(b));
    } else {
      FAIL("unexpected line from graph_peer: ", line);
    }
    ++count;
  }
};

void CheckAcknowledged(const Acks& acks, ContextGraph& graph) {
  for (const auto& entry : acks.messages) {
    ContextDetail d = Must(graph.Retrieve(entry.first, {.limit = 1}));
    CHECK_MESSAGE(d.context.message_count >= entry.second, entry.first);
  }
  for (const auto& entry : acks.summaries) {
    ContextDetail d = Must(graph.Retrieve(entry.first, {.limit = 1}));
    REQUIRE(d.summary.has_value());
    CHECK_MESSAGE(d.summary->version >= entry.second, entry.first);
  }
  for (const auto& edge : acks.edges) {
    RelatedResult r = Must(graph.Related(
        std::get<0>(edge), {.type = std::get<2>(edge),
                            .direction = EdgeDirection::kOutgoing,
                            .limit = ContextGraphLimits::kMaxListLimit,
                            .include_expired = true,
                            .include_archived = true}));
    CHECK_MESSAGE(std::find(r.context_ids.begin(), r.context_ids.end(),
                            std::get<1>(edge)) != r.context_ids.end(),
                  std::get<0>(edge), " -> ", std::get<1>(edge));
  }
}

TEST_CASE("the graph is sound after SIGKILL at random moments") {
  TempDir dir;
  const std::string path = dir.Sub("store");
  const uint64_t rounds = EnvOr("CTXKIT_GRAPH_KILL_ROUNDS", 300);
  const uint64_t seed = EnvOr("CTXKIT_GRAPH_KILL_SEED", 20261127);
  MESSAGE("graph kill test: ", rounds,
          " rounds, CTXKIT_GRAPH_KILL_SEED=", seed);
  std::mt19937_64 rng(seed);
  Acks acks;
  for (uint64_t round = 0; round < rounds; ++round) {
    CAPTURE(round);
    PeerProcess peer = StartProcess(
        CTXKIT_GRAPH_PEER, {path, std::to_string(seed * 1000 + round)});
    bool eof = false;
    bool ready = false;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ready && !eof && std::chrono::steady_clock::now() < deadline) {
      for (const std::string& line : ReadLines(peer, 10, &eof)) {
        ready = ready || line == "ready";
        acks.Apply(line);
      }
    }
    REQUIRE_MESSAGE(ready, "graph_peer never became ready");
    // The kill comes 10..70 ms after the round's first acknowledged write,
    // so that it lands in the middle of the writes however slow the build
    // (a sanitizer's can take longer than that to open the graph).
    const uint64_t before = acks.count;
    while (acks.count == before && !eof &&
           std::chrono::steady_clock::now() < deadline) {
      for (const std::string& line : ReadLines(peer, 10, &eof)) {
        acks.Apply(line);
      }
    }
    REQUIRE_MESSAGE(acks.count > before, "graph_peer acknowledged no write");
    for (const std::string& line :
         ReadLines(peer, 10 + static_cast<int>(rng() % 60), &eof)) {
      acks.Apply(line);
    }
    REQUIRE_MESSAGE(!eof, "graph_peer exited by itself");
    kill(peer.pid, SIGKILL);
    for (const std::string& line : ReadToEnd(peer)) acks.Apply(line);
    CHECK(WaitPeer(peer) == 128 + SIGKILL);

    auto store = Must(Store::Open(path));
    auto convs = Must(ConversationStore::Open(*store));
    auto graph = Must(ContextGraph::Open(*store, *convs));
    GraphVerifyReport report = Must(graph->Verify());
    std::string problems;
    for (const std::string& p : report.problems) problems += p + "; ";
    REQUIRE_MESSAGE(report.ok, problems);
    REQUIRE(CheckStore(*store).ok());
    CheckAcknowledged(acks, *graph);
  }
  MESSAGE("acknowledged writes: ", acks.count,
          "; contexts with messages: ", acks.messages.size(),
          "; relationships: ", acks.edges.size());
}

}  // namespace
}  // namespace ctxkit::testing
