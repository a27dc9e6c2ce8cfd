// Crash safety: a writer process is SIGKILLed at random moments in the
// middle of mixed conversation, reference and cache writes, round after
// round on the same store; after every kill the store is reopened and
//   - every acknowledged write is there and every acknowledged delete is
//     gone (with its cascade),
//   - conversation totals equal a full recount of the messages, per
//     conversation and store-wide,
//   - the reference search index agrees with the documents
//     (internal::CheckReferenceIndex) and finds acknowledged references,
//   - the cache statistics equal a recount of the entries,
//   - no reference or cache entry names a conversation that is gone.
//
// CTXKIT_CRASH_ROUNDS (default 120) and CTXKIT_CRASH_SEED change the run;
// the seed is printed so a failure can be replayed.

#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "ctxkit/references.h"
#include "ctxkit/store.h"
#include "tests/records/records_check.h"
#include "tests/records/records_protocol.h"
#include "tests/unit/test_util.h"

namespace ctxkit::testing {
namespace {

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

void ApplyAll(AckModel& model, const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    REQUIRE_MESSAGE(line.rfind("ERR", 0) != 0, "records_peer failed: ", line);
    REQUIRE_MESSAGE(model.Apply(line),
                    "unexpected line from records_peer: ", line);
  }
}

TEST_CASE("acknowledged writes survive SIGKILL at random moments") {
  TempDir dir;
  const std::string path = dir.Sub("store");
  const uint64_t rounds = EnvOr("CTXKIT_CRASH_ROUNDS", 120);
  const uint64_t seed = EnvOr("CTXKIT_CRASH_SEED", 20241115);
  MESSAGE("crash test: ", rounds, " rounds, CTXKIT_CRASH_SEED=", seed);
  std::mt19937_64 rng(seed);
  AckModel model;
  uint64_t pending_deletes = 0;

  for (uint64_t round = 0; round < rounds; ++round) {
    CAPTURE(round);
    PeerProcess peer =
        StartPeer({"crash", path, std::to_string(seed * 1000 + round)});
    // One round in ten is killed at a random moment from the start (while
    // it opens the store or recovers); the others at a random moment after
    // they are ready, which spreads the kills over the writes.
    bool eof = false;
    if (rng() % 10 == 0) {
      ApplyAll(model, ReadLines(peer, static_cast<int>(rng() % 40), &eof));
    } else {
      bool ready = false;
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!ready && !eof && std::chrono::steady_clock::now() < deadline) {
        for (const std::string& line : ReadLines(peer, 10, &eof)) {
          ready = ready || line == "ready";
          REQUIRE_MESSAGE(line.rfind("ERR", 0) != 0,
                          "records_peer failed: ", line);
          REQUIRE(model.Apply(line));
        }
      }
      REQUIRE_MESSAGE(ready, "records_peer never became ready");
      ApplyAll(model, ReadLines(peer, static_cast<int>(rng() % 120), &eof));
    }
    REQUIRE_MESSAGE(!eof, "records_peer exited by itself");
    kill(peer.pid, SIGKILL);
    const std::vector<std::string> rest = ReadToEnd(peer);
    ApplyAll(model, rest);
    CHECK(WaitPeer(peer) == 128 + SIGKILL);

    auto store = Must(Store::Open(path));
    auto convs = Must(ConversationStore::Open(*store));
    ReferenceStoreOptions ref_options;
    ref_options.model = std::string(kRecordsModel);
    auto refs = Must(ReferenceStore::Open(*store, ref_options));
    auto cache = Must(Cache::Open(*store));
    if (!model.pending_delete.empty()) ++pending_deletes;
    model.ResolvePending(*convs, *refs);
    CheckAcknowledged(model, *convs, *refs, *cache, /*search_samples=*/3);
    CheckConversationTotals(*store, *convs);
    CheckReferenceIndexAndLinks(*store, *refs);
    CheckCacheTotals(*store, *cache);
    if (model.acks == 0 && round > 20) {
      FAIL(
          "twenty rounds without one acknowledged write: kills come too early");
    }
  }
  MESSAGE("acknowledged writes: ", model.acks,
          "; conversations alive: ", model.conversations.size(),
          ", deleted: ", model.deleted_conversations.size(),
          "; references alive: ", model.references.size(),
          ", deleted: ", model.deleted_references.size(),
          "; cache entries: ", model.cache.size(),
          "; rounds killed mid-delete: ", pending_deletes);
}

}  // namespace
}  // namespace ctxkit::testing
