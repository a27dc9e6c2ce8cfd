// compaction_quality: how well ctxkit's Compactor keeps what a user needs
// next, on real agent trajectories (issue 5, item 14).
//
//   compaction_quality [--verbose] [DIR]
//
// Reads every SWE-agent trajectory (*.traj) in DIR (default: the
// swe-agent folder of CTXKIT_SHARED_DATA_DIR, from the environment or as
// configured at build time), converts its "history" to OpenAI chat messages
// (bench/trajectory.h says how), counts it with gpt-4o's tokenizer
// (o200k_base) and compacts it with the smart strategy to 50 %, 25 % and
// 10 % of its tokens with the default options (every summary already
// carries entities, errors, actions and decisions). For each
// budget it prints: how many results met the budget (and how many could: the
// system messages, the task and the last message fit), how many are valid
// histories (ValidateChatHistory), and the share of facts retained, per kind:
// the task statement, every error message, every edited file, the last test
// result, the final decision. A fact is retained when its excerpt appears in
// the compacted history's decoded strings, summaries included. The facts come
// from bench/trajectory.cc's own rules, not from ctxkit's classifier.
//
// --verbose lists, per file and budget, the facts that were lost.
// Exit status: 0, also when budgets are missed or facts lost (those are the
// measurement); 1 on an error (unreadable trajectory, failed compaction);
// a missing data directory is reported and skipped (exit 0).

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/trajectory.h"
#include "ctxkit/compactor.h"
#include "ctxkit/message_count.h"

#ifndef CTXKIT_BENCH_SHARED_DATA_DIR
#define CTXKIT_BENCH_SHARED_DATA_DIR ""
#endif

namespace {

using ctxkit_bench::Fact;
using ctxkit_bench::FactKind;
using ctxkit_bench::kFactKinds;
using ctxkit_bench::Trajectory;

constexpr int kBudgetPercents[] = {50, 25, 10};
constexpr char kModel[] = "gpt-4o";

struct Tally {
  size_t retained = 0;
  size_t total = 0;
};

struct BudgetRow {
  int percent = 0;
  size_t files = 0;
  size_t feasible = 0;
  size_t met = 0;
  size_t met_when_feasible = 0;
  size_t valid = 0;
  size_t summaries = 0;
  size_t truncated = 0;
  double ms = 0;
  std::array<Tally, kFactKinds> facts{};
};

std::string DataDir(int argc, char** argv, bool* verbose) {
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--verbose") {
      *verbose = true;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: compaction_quality [--verbose] [DIR]\n");
      std::exit(0);
    } else {
      dir = arg;
    }
  }
  if (!dir.empty()) return dir;
  const char* env = std::getenv("CTXKIT_SHARED_DATA_DIR");
  std::string base =
      env != nullptr && *env != '\0' ? env : CTXKIT_BENCH_SHARED_DATA_DIR;
  if (base.empty()) return {};
  return base + "/swe-agent";
}

std::vector<std::string> TrajFiles(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".traj") == 0) {
      out.push_back(dir + "/" + name);
    }
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

size_t CountTokens(const std::string& json) {
  auto n = ctxkit::CountMessagesForModel(kModel, json);
  if (!n.ok()) {
    std::fprintf(stderr, "compaction_quality: counting failed: %s\n",
                 n.status().ToString().c_str());
    std::exit(1);
  }
  return n->total;
}

std::string Percent(size_t part, size_t whole) {
  char buf[64];
  if (whole == 0) {
    std::snprintf(buf, sizeof buf, "-");
  } else {
    std::snprintf(
        buf, sizeof buf, "%zu/%zu (%.1f %%)", part, whole,
        100.0 * static_cast<double>(part) / static_cast<double>(whole));
  }
  return buf;
}

std::string LoadAverage() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  bool verbose = false;
  const std::string dir = DataDir(argc, argv, &verbose);
  struct stat st;
  if (dir.empty() || stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::printf(
        "compaction_quality: SKIPPED: no SWE-agent trajectories at \"%s\" "
        "(pass a directory or set CTXKIT_SHARED_DATA_DIR)\n",
        dir.c_str());
    return 0;
  }
  const std::vector<std::string> files = TrajFiles(dir);
  if (files.empty()) {
    std::printf("compaction_quality: SKIPPED: no .traj files in %s\n",
                dir.c_str());
    return 0;
  }

  std::vector<Trajectory> trajectories;
  size_t messages = 0, tokens = 0, with_tool_calls = 0, facts = 0;
  std::vector<size_t> totals, bounds;
  for (const std::string& path : files) {
    Trajectory t;
    std::string error;
    if (!ctxkit_bench::LoadTrajectory(path, &t, &error)) {
      std::fprintf(stderr, "compaction_quality: %s\n", error.c_str());
      return 1;
    }
    if (ctxkit::Status valid = ctxkit::ValidateChatHistory(t.messages_json);
        !valid.ok()) {
      std::fprintf(
          stderr,
          "compaction_quality: %s: the converted history is invalid: %s\n",
          t.name.c_str(), valid.ToString().c_str());
      return 1;
    }
    messages += t.message_count;
    with_tool_calls += t.tool_calls ? 1 : 0;
    facts += t.facts.size();
    totals.push_back(CountTokens(t.messages_json));
    bounds.push_back(CountTokens(t.required_json));
    tokens += totals.back();
    trajectories.push_back(std::move(t));
  }
  std::printf(
      "compaction_quality: %zu trajectories from %s (%zu with tool calls), %zu "
      "messages, %zu tokens (%s, o200k_base), %zu facts; strategy smart\n",
      trajectories.size(), dir.c_str(), with_tool_calls, messages, tokens,
      kModel, facts);
  std::printf("load average (1, 5, 15 min) at start: %s\n\n",
              LoadAverage().c_str());

  const ctxkit::Compactor compactor;
  std::vector<BudgetRow> rows;
  {
    for (int percent : kBudgetPercents) {
      BudgetRow row;
      row.percent = percent;
      for (size_t i = 0; i < trajectories.size(); ++i) {
        const Trajectory& t = trajectories[i];
        ctxkit::CompactionOptions options;
        options.model = kModel;
        options.strategy = ctxkit::CompactionStrategy::kSmart;
        options.max_tokens = std::max<int64_t>(
            1, static_cast<int64_t>(totals[i]) * percent / 100);
        const auto start = std::chrono::steady_clock::now();
        auto result = compactor.Compact(t.messages_json, options);
        row.ms += std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
        if (!result.ok()) {
          std::fprintf(stderr, "compaction_quality: %s at %d %%: %s\n",
                       t.name.c_str(), percent,
                       result.status().ToString().c_str());
          return 1;
        }
        ++row.files;
        const size_t budget = static_cast<size_t>(options.max_tokens);
        const bool feasible = bounds[i] <= budget;
        // Met means the recount with the same tokenizer fits, not only the
        // flag.
        const size_t recount = CountTokens(result->messages_json);
        const bool met = result->budget_met && recount <= budget;
        row.feasible += feasible ? 1 : 0;
        row.met += met ? 1 : 0;
        row.met_when_feasible += met && feasible ? 1 : 0;
        row.summaries += result->summary_count;
        row.truncated += result->truncated_count;
        const ctxkit::Status valid =
            ctxkit::ValidateChatHistory(result->messages_json);
        row.valid += valid.ok() ? 1 : 0;
        std::string haystack, error;
        if (!ctxkit_bench::DecodedStrings(result->messages_json, &haystack,
                                          &error)) {
          std::fprintf(
              stderr,
              "compaction_quality: %s at %d %%: output is not JSON: %s\n",
              t.name.c_str(), percent, error.c_str());
          return 1;
        }
        std::vector<const Fact*> lost;
        for (const Fact& fact : t.facts) {
          Tally& tally = row.facts[static_cast<size_t>(fact.kind)];
          ++tally.total;
          if (haystack.find(fact.excerpt) != std::string::npos) {
            ++tally.retained;
          } else {
            lost.push_back(&fact);
          }
        }
        if (verbose) {
          std::printf(
              "%3d %% %-60.60s %6zu -> %6zu tokens (budget %zu, floor "
              "%zu)%s%s, %zu/%zu "
              "messages, lost %zu/%zu facts\n",
              percent, t.name.c_str(), totals[i],
              recount, budget, bounds[i], met ? "" : " NOT MET",
              valid.ok() ? "" : " INVALID", result->compacted_count,
              result->original_count, lost.size(), t.facts.size());
          if (!valid.ok())
            std::printf("        invalid: %s\n", valid.ToString().c_str());
          for (const Fact* fact : lost) {
            std::printf("        lost %-14s %s\n",
                        ctxkit_bench::FactKindName(fact->kind),
                        fact->excerpt.c_str());
          }
        }
      }
      rows.push_back(row);
    }
  }
  if (verbose) std::printf("\n");

  std::printf("| budget | files | budget met | met where feasible | valid |");
  for (size_t k = 0; k < kFactKinds; ++k) {
    std::printf(" %s |", ctxkit_bench::FactKindName(static_cast<FactKind>(k)));
  }
  std::printf(
      " overall | summaries | truncated | mean ms |\n|---|---|---|---|---|");
  for (size_t k = 0; k <= kFactKinds; ++k) std::printf("---|");
  std::printf("---|---|---|\n");
  for (const BudgetRow& row : rows) {
    Tally overall;
    for (const Tally& t : row.facts) {
      overall.retained += t.retained;
      overall.total += t.total;
    }
    std::printf("| %d %% | %zu | %s | %s | %s |", row.percent, row.files,
                Percent(row.met, row.files).c_str(),
                Percent(row.met_when_feasible, row.feasible).c_str(),
                Percent(row.valid, row.files).c_str());
    for (const Tally& t : row.facts)
      std::printf(" %s |", Percent(t.retained, t.total).c_str());
    std::printf(" %s | %zu | %zu | %.2f |\n",
                Percent(overall.retained, overall.total).c_str(), row.summaries,
                row.truncated, row.ms / static_cast<double>(row.files));
  }
  std::printf(
      "\nfeasible: the system messages, the task and the last message fit the "
      "budget.\n"
      "load average (1, 5, 15 min) at end: %s\n",
      LoadAverage().c_str());
  return 0;
}
