// The context graph's writer process for kill_test.cc: opens the graph on
// the store at argv[1] and runs a random mix of writes seeded by argv[2]
// until it is killed, printing one line per acknowledged write (each line
// one write(2), so a kill never leaves half a line):
//   ready                          the graph is open
//   M <context> <seq>              AddMessage returned message seq <seq>
//   E <source> <target> <type>     AddRelationship returned
//   S <context> <version>          Summarize returned version <version>
// Cleanups (archive mode) and restores run too; their effects are checked
// by Verify, not acknowledged. Refusals the mix provokes on purpose (a
// second parent, a cycle, too deep, an unknown context) print nothing; any
// other error prints "ERR <message>" and exits 1.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "ctxkit/context_graph.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"

namespace {

void Say(const std::string& line) {
  const std::string out = line + "\n";
  if (write(STDOUT_FILENO, out.data(), out.size()) !=
      static_cast<ssize_t>(out.size())) {
    std::_Exit(2);
  }
}

[[noreturn]] void Fail(const ctxkit::Status& s) {
  Say("ERR " + s.ToString());
  std::_Exit(1);
}

bool Expected(const ctxkit::Status& s) {
  return s.code() == ctxkit::StatusCode::kAlreadyExists ||
         s.code() == ctxkit::StatusCode::kFailedPrecondition ||
         s.code() == ctxkit::StatusCode::kNotFound;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: graph_peer STORE SEED\n");
    return 2;
  }
  std::mt19937_64 rng(std::strtoull(argv[2], nullptr, 10));
  auto store = ctxkit::Store::Open(argv[1]);
  if (!store.ok()) Fail(store.status());
  auto convs = ctxkit::ConversationStore::Open(**store);
  if (!convs.ok()) Fail(convs.status());
  ctxkit::ContextGraphOptions options;
  // Small thresholds, so summaries, auto-links and cleanups all happen
  // within the few writes a round lives for.
  options.message_limit_threshold = 4;
  options.cleanup_every = 7;
  options.similarity_threshold = 0.3;
  auto graph = ctxkit::ContextGraph::Open(**store, **convs, options);
  if (!graph.ok()) Fail(graph.status());
  Say("ready");

  static const char* const kWords[] = {
      "oauth", "token",  "login", "cache",  "index", "query", "deploy",
      "build", "test",   "error", "fix",    "graph", "path",  "store",
      "lmdb",  "commit", "crash", "kill",   "merge", "diff",  "summary",
      "edge",  "node",   "tag",   "python", "rust",  "go",    "http"};
  static const char* const kImportance[] = {"", "low", "medium", "high",
                                            "critical"};
  static const char* const kTypes[] = {"similar", "continues", "references",
                                       "parent", "child"};
  auto pick = [&](uint64_t n) { return rng() % n; };
  auto context = [&] { return "c" + std::to_string(pick(24)); };
  for (;;) {
    const uint64_t op = pick(100);
    if (op < 55) {
      const std::string id = context();
      ctxkit::GraphMessage m;
      m.role = pick(2) ? ctxkit::MessageRole::kUser
                       : ctxkit::MessageRole::kAssistant;
      for (uint64_t w = 0, n = 3 + pick(12); w < n; ++w) {
        m.content += kWords[pick(std::size(kWords))];
        m.content += ' ';
      }
      m.importance = kImportance[pick(std::size(kImportance))];
      if (pick(3) == 0) m.tags = {kWords[pick(std::size(kWords))]};
      auto added = (*graph)->AddMessage(id, m);
      if (!added.ok()) Fail(added.status());
      Say("M " + id + " " + std::to_string(added->messages[0].seq));
    } else if (op < 80) {
      const std::string s = context(), t = context();
      if (s == t) continue;
      const std::string type = kTypes[pick(std::size(kTypes))];
      auto edge = (*graph)->AddRelationship(
          {.source = s,
           .target = t,
           .type = type,
           .weight = static_cast<double>(pick(1001)) / 1000});
      if (!edge.ok()) {
        if (Expected(edge.status())) continue;
        Fail(edge.status());
      }
      Say("E " + s + " " + t + " " + type);
    } else if (op < 92) {
      const std::string id = context();
      auto summary = (*graph)->Summarize(id, {.force = true});
      if (!summary.ok()) {
        if (Expected(summary.status())) continue;
        Fail(summary.status());
      }
      Say("S " + id + " " + std::to_string(summary->version));
    } else if (op < 96) {
      auto cleaned = (*graph)->Cleanup(
          context(), {.min_contexts = 4, .keep_recent_days = 0});
      if (!cleaned.ok() && !Expected(cleaned.status())) Fail(cleaned.status());
    } else {
      const ctxkit::Status restored = (*graph)->Restore(context());
      if (!restored.ok() && !Expected(restored)) Fail(restored);
    }
  }
}
