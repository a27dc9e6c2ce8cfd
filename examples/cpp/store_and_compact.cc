// Keep an agent's conversation in a store, then compact it to a budget and
// keep the compacted view beside the untouched messages.
//
//   c++ -std=c++20 store_and_compact.cc $(pkg-config --cflags --libs ctxkit)
//   ./a.out /tmp/agent-store
//
// With CMake: find_package(ctxkit) and link ctxkit::ctxkit.
#include <cstdio>
#include <string>

#include "ctxkit/compactor.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"

namespace {

// Prints a failed status and returns the process's exit code.
int Fail(const char* what, const ctxkit::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/ctxkit-example-store";
  auto store = ctxkit::Store::Open(path);
  if (!store.ok()) return Fail("open store", store.status());
  auto convs = ctxkit::ConversationStore::Open(**store);
  if (!convs.ok()) return Fail("open conversations", convs.status());

  auto conv =
      (*convs)->Create({.title = "Fix tab indentation", .model = "gpt-4o"});
  if (!conv.ok()) return Fail("create", conv.status());
  const char* turns[][2] = {
      {"user", "The parser rejects tabs in indentation; make it accept them."},
      {"assistant",
       "I read lexer.c, parser.c and the failing test output, then listed "
       "every place that compares indentation widths and the helpers that "
       "compute them."},
      {"user", "ok"},
      {"assistant",
       "The lexer counts a tab as one column; I will expand tabs to the next "
       "multiple of eight."},
      {"user", "Do it and run the tests."},
  };
  for (const auto& [role, content] : turns) {
    auto parsed = ctxkit::ParseMessageRole(role);
    if (!parsed.ok()) return Fail("role", parsed.status());
    auto added =
        (*convs)->AddMessage(conv->id, {.role = *parsed, .content = content});
    if (!added.ok()) return Fail("add message", added.status());
  }

  ctxkit::Compactor compactor;
  ctxkit::CompactionOptions options;
  options.max_tokens = 60;
  uint64_t version = 0;
  auto result =
      compactor.CompactConversation(**convs, conv->id, options, &version);
  if (!result.ok()) return Fail("compact", result.status());
  std::printf("conversation %s: %zu -> %zu tokens (budget %s), view %llu\n",
              conv->id.c_str(), result->original_tokens,
              result->compacted_tokens, result->budget_met ? "met" : "not met",
              static_cast<unsigned long long>(version));
  std::printf("%s\n", result->messages_json.c_str());
  return 0;
}
