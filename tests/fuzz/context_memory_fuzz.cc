// libFuzzer target over seed 003's JSON protocol (ctxkit/context_graph_seed.h),
// the entry point the C ABI's ctxkit_graph_context_memory and
// ctxkit_graph_call, `ctxkit serve`'s POST /tools/context_memory and
// `ctxkit mcp`'s legacy lines reach.
//
// An input's byte 0 picks the entry point (modulo 3):
//   0 ContextMemory (the rest is the request)
//   1 LegacyLine (the rest is the line)
//   2 CallSeedTool: byte 1 picks the tool (modulo the ten), the rest is
//     its arguments
//
// Guarantees checked on every input (a broken one aborts, which libFuzzer
// reports as a crash with its input):
//   - the HTTP status is 200, 400 or 404 (500 would be a store failure);
//   - the answer is valid JSON (so valid UTF-8): an object, or for the two
//     list tools an array, or ping's text pong;
//   - is_error matches the status (any status but 200 is an error), and an
//     error carries a non-empty error text;
//   - an answer that is not 200 changed nothing: the entries of every
//     database of the store are what they were before the call;
//   - every kVerifyEvery inputs the graph's Verify() finds no problem.
//
// The store is shared by inputs and replaced by a fresh one (two contexts,
// "a" and "b", with messages and an edge, so requests reach past the
// not-found checks) every kInputsPerStore inputs; it lives in /dev/shm (else
// $TMPDIR or /tmp) and is removed at exit. The graph's clock is a counter,
// so runs are repeatable.
//
// Build and run: see tests/fuzz/CMakeLists.txt.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ctxkit/context_graph.h"
#include "ctxkit/context_graph_seed.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "simdjson.h"

namespace {

constexpr uint64_t kInputsPerStore = 1000;
constexpr uint64_t kVerifyEvery = 250;

[[noreturn]] void Broken(const std::string& what, std::string_view detail) {
  std::fprintf(stderr, "guarantee broken: %s\n  detail: %.*s\n", what.c_str(),
               static_cast<int>(std::min<size_t>(detail.size(), 4000)),
               detail.data());
  std::abort();
}

struct Parts {
  std::string root;
  uint64_t generation = 0;
  uint64_t inputs = 0;
  std::shared_ptr<std::atomic<int64_t>> now =
      std::make_shared<std::atomic<int64_t>>(int64_t{1731664800000});
  std::unique_ptr<ctxkit::Store> store;
  std::unique_ptr<ctxkit::ConversationStore> convs;
  std::unique_ptr<ctxkit::ContextGraph> graph;

  void Close() {
    graph.reset();
    convs.reset();
    store.reset();
  }
};

Parts& TheParts() {
  static auto* const parts = new Parts;
  return *parts;
}

template <typename T>
T Must(ctxkit::StatusOr<T> v, const char* what) {
  if (!v.ok()) Broken(what, v.status().ToString());
  return *std::move(v);
}

void OpenFresh() {
  Parts& p = TheParts();
  p.Close();
  std::error_code ignored;
  if (p.generation > 0) {
    std::filesystem::remove_all(
        p.root + "/store" + std::to_string(p.generation - 1), ignored);
  }
  const std::string dir = p.root + "/store" + std::to_string(p.generation++);
  p.store = Must(ctxkit::Store::Open(dir), "open the store");
  auto now = p.now;
  auto clock = [now] { return now->fetch_add(1000); };
  ctxkit::ConversationOptions co;
  co.clock = clock;
  p.convs = Must(ctxkit::ConversationStore::Open(*p.store, co),
                 "open the conversations");
  ctxkit::ContextGraphOptions go;
  go.clock = clock;
  go.message_limit_threshold = 3;  // summaries, links, cleanups happen
  go.cleanup_every = 5;
  p.graph = Must(ctxkit::ContextGraph::Open(*p.store, *p.convs, go),
                 "open the graph");
  Must(p.graph->AddMessage("a", {.role = ctxkit::MessageRole::kUser,
                                 .content = "login with oauth tokens",
                                 .importance = "high",
                                 .tags = {"auth"}}),
       "seed a");
  Must(p.graph->AddMessage("b", {.role = ctxkit::MessageRole::kAssistant,
                                 .content = "session store in redis"}),
       "seed b");
  Must(p.graph->AddRelationship(
           {.source = "a", .target = "b", .type = "references"}),
       "seed the edge");
}

std::map<std::string, uint64_t> Entries() {
  std::map<std::string, uint64_t> out;
  auto info = Must(TheParts().store->Info(), "store info");
  for (const auto& d : info.databases) out[d.name] = d.entries;
  return out;
}

void Check(const ctxkit::graph::SeedAnswer& a, std::string_view tool,
           std::string_view input) {
  const std::string where = std::string(input);
  if (a.http_status != 200 && a.http_status != 400 && a.http_status != 404) {
    Broken("status " + std::to_string(a.http_status), where + " -> " + a.json);
  }
  // An answer is an error exactly when its status is not 200 (a 200 with
  // "success":false, such as an unknown metaId, is not).
  if (a.http_status == 200 && a.is_error) {
    Broken("a 200 answer marked as an error", where + " -> " + a.json);
  }
  if (a.http_status != 200 && (!a.is_error || a.error.empty())) {
    Broken("an error without is_error or text", where + " -> " + a.json);
  }
  if (tool == "ping") {
    if (a.json != "pong") Broken("ping did not answer pong", a.json);
    return;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(a.json).get(root) != simdjson::SUCCESS) {
    Broken("the answer is not JSON", where + " -> " + a.json);
  }
  const bool list_tool =
      a.http_status == 200 &&
      (tool == "get_related_contexts" || tool == "get_similar_contexts");
  if (root.type() != (list_tool ? simdjson::dom::element_type::ARRAY
                                : simdjson::dom::element_type::OBJECT)) {
    Broken("the answer has the wrong JSON type", where + " -> " + a.json);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string base = "/dev/shm";
  if (access(base.c_str(), W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  TheParts().root =
      base + "/ctxkit-context-memory-fuzz-" + std::to_string(getpid());
  std::filesystem::create_directories(TheParts().root);
  std::atexit([] {
    TheParts().Close();
    std::error_code ignored;
    std::filesystem::remove_all(TheParts().root, ignored);
  });
  OpenFresh();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  Parts& p = TheParts();
  if (++p.inputs % kInputsPerStore == 0) OpenFresh();
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const auto tools = ctxkit::graph::SeedTools();
  std::string_view tool = "context_memory";
  std::string_view body = all.substr(1);
  const std::map<std::string, uint64_t> before = Entries();
  ctxkit::graph::SeedAnswer a;
  switch (data[0] % 3) {
    case 0:
      a = ctxkit::graph::ContextMemory(*p.graph, body);
      break;
    case 1:
      a = ctxkit::graph::LegacyLine(*p.graph, body);
      break;
    default:
      tool = tools[data[1] % tools.size()].name;
      body = all.substr(2);
      a = ctxkit::graph::CallSeedTool(*p.graph, tool, body);
      break;
  }
  Check(a, tool, all);
  if (a.http_status != 200 && Entries() != before) {
    Broken("a refused call changed the store",
           std::string(all) + " -> " + a.json);
  }
  if (p.inputs % kVerifyEvery == 0) {
    ctxkit::GraphVerifyReport r = Must(p.graph->Verify(), "verify");
    if (!r.ok) {
      Broken("Verify found problems",
             r.problems.empty() ? std::string() : r.problems.front());
    }
  }
  return 0;
}
