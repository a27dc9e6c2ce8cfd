// compaction_quality: how well ctxkit's compaction keeps what the next agent
// turn needs, measured by rules that do not share the compactor's notion of
// what matters.
//
//   compaction_quality [--sets LIST] [--verbose] [--data DIR]
//
// Data sets (each reported on its own; LIST is a comma-separated subset,
// default all):
//   swe-agent          SWE-agent trajectories, DIR/swe-agent/*.traj, as
//                      OpenAI chat (trajectory.h)
//   swe-agent+demo     the same runs with another run's history in front of
//                      the task as SWE-agent's demonstration message
//                      (trajectory.h)
//   claude-code        Claude Code transcripts, DIR/claude-code/*.jsonl, as
//                      Anthropic Messages (quality_claude_code.h)
//   generated          generated agent histories of 2,000 to 10,000
//                      messages, OpenAI and Anthropic (with signed thinking)
//                      (agent_history_generator.h): the tuning family
//   generated-holdout  the same generator with other seeds and its second
//                      vocabulary: leave it out of a tuning loop
//                      (--sets swe-agent,swe-agent+demo,claude-code,generated)
// DIR is --data, else $CTXKIT_SHARED_DATA_DIR, else the CMake cache
// variable CTXKIT_SHARED_DATA_DIR; a missing folder prints a SKIPPED line.
//
// Every history is counted with its model (gpt-4o, o200k_base, for OpenAI
// histories; claude-3-5-sonnet-latest for Anthropic ones) by
// CountMessagesForModel and compacted to 50 %, 25 % and 10 % of that count
// through Compactor::CompactJson with {"messages", "max_tokens", "model"}
// and nothing else, so that the program also runs unchanged against older
// builds of the library (it reads the response's "status" when there is
// one, else "met"). The needles and their rules are the data sets' own
// (quality_needles.h and each converter's header); how the output is read
// (kept, truncated and written messages, the needle haystack, false
// actions, the thinking check) is in quality_output.h.
//
// Exit status: 0 when everything was measured (lost needles and missed
// budgets are the measurement), 1 on an error (unreadable data, a converted
// history that is not valid, a failed compaction, output that is not JSON).

#include <dirent.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/agent_history_generator.h"
#include "bench/bench_inputs.h"
#include "bench/quality_claude_code.h"
#include "bench/quality_history.h"
#include "bench/quality_needles.h"
#include "bench/quality_output.h"
#include "bench/trajectory.h"
#include "ctxkit/compactor.h"
#include "ctxkit/message_count.h"

#ifndef CTXKIT_BENCH_SHARED_DATA_DIR
#define CTXKIT_BENCH_SHARED_DATA_DIR ""
#endif

namespace {

using ctxkit::bench::History;
using ctxkit::bench::kNeedleKinds;
using ctxkit::bench::Needle;
using ctxkit::bench::NeedleKind;

constexpr std::string_view kSets[] = {"swe-agent", "swe-agent+demo",
                                      "claude-code", "generated",
                                      "generated-holdout"};
constexpr int kBudgetPercents[] = {50, 25, 10};

// Sizes of the generated histories of one family: spread over 2,000 to
// 10,000 messages, alternately OpenAI and Anthropic.
constexpr size_t kGeneratedSizes[] = {2000, 3200, 4400, 5600,
                                      6800, 8000, 9000, 10000};
constexpr uint64_t kTuningSeed = 0x7c3a000000000001ULL;
constexpr uint64_t kHoldoutSeed = 0x4f1d000000000001ULL;

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "compaction_quality: %s\n", message.c_str());
  std::exit(1);
}

struct Args {
  std::vector<std::string> sets;
  bool verbose = false;
  std::string data_dir;
};

Args ParseArgs(int argc, char** argv) {
  Args args;
  std::string sets;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--verbose") {
      args.verbose = true;
    } else if ((arg == "--sets" || arg == "--data") && i + 1 < argc) {
      (arg == "--sets" ? sets : args.data_dir) = argv[++i];
    } else if (arg.rfind("--sets=", 0) == 0) {
      sets = arg.substr(7);
    } else if (arg.rfind("--data=", 0) == 0) {
      args.data_dir = arg.substr(7);
    } else {
      std::printf(
          "usage: compaction_quality [--sets LIST] [--verbose] [--data DIR]\n"
          "  LIST: comma-separated, of swe-agent, swe-agent+demo, "
          "claude-code, generated, generated-holdout (default: all)\n");
      std::exit(arg == "-h" || arg == "--help" ? 0 : 1);
    }
  }
  if (sets.empty()) {
    for (std::string_view s : kSets) args.sets.emplace_back(s);
  } else {
    size_t start = 0;
    while (start <= sets.size()) {
      size_t end = sets.find(',', start);
      if (end == std::string::npos) end = sets.size();
      const std::string name = sets.substr(start, end - start);
      if (std::find(std::begin(kSets), std::end(kSets), name) ==
          std::end(kSets)) {
        Fail("unknown set \"" + name + "\" in --sets");
      }
      args.sets.push_back(name);
      start = end + 1;
    }
  }
  if (args.data_dir.empty()) {
    const char* env = std::getenv("CTXKIT_SHARED_DATA_DIR");
    args.data_dir =
        env != nullptr && *env != '\0' ? env : CTXKIT_BENCH_SHARED_DATA_DIR;
  }
  return args;
}

bool Wanted(const Args& args, std::string_view set) {
  return std::find(args.sets.begin(), args.sets.end(), set) != args.sets.end();
}

// The files of `dir` ending in `suffix`, sorted; false when `dir` is not a
// directory.
bool FilesIn(const std::string& dir, std::string_view suffix,
             std::vector<std::string>* out) {
  struct stat st;
  if (dir.empty() || stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return false;
  }
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out->push_back(dir + "/" + name);
    }
  }
  closedir(d);
  std::sort(out->begin(), out->end());
  return true;
}

void Skip(std::string_view set, const std::string& why) {
  std::printf("SKIPPED %s: %s\n", std::string(set).c_str(), why.c_str());
}

// ---- loading ----

void LoadSweAgent(const Args& args, std::vector<History>* out) {
  const bool plain = Wanted(args, "swe-agent");
  const bool demo = Wanted(args, "swe-agent+demo");
  if (!plain && !demo) return;
  const std::string dir = args.data_dir + "/swe-agent";
  std::vector<std::string> files;
  if (!FilesIn(dir, ".traj", &files) || files.empty()) {
    const std::string why = "no *.traj in \"" + dir +
                            "\" (pass --data DIR or set "
                            "CTXKIT_SHARED_DATA_DIR)";
    if (plain) Skip("swe-agent", why);
    if (demo) Skip("swe-agent+demo", why);
    return;
  }
  std::vector<ctxkit::bench::Trajectory> runs;
  std::string demonstration_template;
  for (const std::string& path : files) {
    ctxkit::bench::Trajectory t;
    std::string error;
    if (!ctxkit::bench::LoadTrajectory(path, &t, &error)) Fail(error);
    if (demonstration_template.empty()) {
      demonstration_template = t.demonstration_template;
    }
    runs.push_back(std::move(t));
  }
  if (plain) {
    for (const auto& t : runs) out->push_back(t.history);
  }
  if (!demo) return;
  // The template SWE-agent recorded in the data, else its default.
  if (demonstration_template.empty()) {
    demonstration_template = ctxkit::bench::kSweAgentDemonstrationTemplate;
  }
  size_t added = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const size_t j = ctxkit::bench::ChooseDemonstration(runs, i);
    if (j == runs.size()) {
      std::printf("note: swe-agent+demo: no demonstration for %s\n",
                  runs[i].history.name.c_str());
      continue;
    }
    out->push_back(ctxkit::bench::WithDemonstration(runs[i], runs[j],
                                                    demonstration_template));
    ++added;
  }
  if (added == 0) Skip("swe-agent+demo", "no run has a demonstration");
}

void LoadClaudeCode(const Args& args, std::vector<History>* out) {
  if (!Wanted(args, "claude-code")) return;
  const std::string dir = args.data_dir + "/claude-code";
  std::vector<std::string> files;
  if (!FilesIn(dir, ".jsonl", &files) || files.empty()) {
    Skip("claude-code", "no *.jsonl in \"" + dir +
                            "\" (pass --data DIR or set "
                            "CTXKIT_SHARED_DATA_DIR)");
    return;
  }
  size_t dropped = 0;
  for (const std::string& path : files) {
    History h;
    size_t lines = 0;
    std::string error;
    if (!ctxkit::bench::LoadClaudeCodeSession(path, &h, &lines, &error)) {
      Fail(error);
    }
    dropped += lines;
    out->push_back(std::move(h));
  }
  std::printf(
      "note: claude-code: %zu transcript lines were not messages (summaries, "
      "malformed lines) and were dropped\n",
      dropped);
}

void LoadGenerated(const Args& args, std::vector<History>* out) {
  for (const bool holdout : {false, true}) {
    if (!Wanted(args, holdout ? "generated-holdout" : "generated")) continue;
    const uint64_t base = holdout ? kHoldoutSeed : kTuningSeed;
    for (size_t i = 0; i < std::size(kGeneratedSizes); ++i) {
      ctxkit::bench::AgentHistoryOptions options;
      options.seed = base + i;
      options.messages = kGeneratedSizes[i];
      options.anthropic = i % 2 == 1;
      options.holdout = holdout;
      // Few-shot blocks in half the histories of each format, a context
      // message before the task in some: the task is never simply the
      // first user message.
      options.few_shot = i % 4 == 1 || i % 4 == 2;
      options.context_preamble = i % 3 == 0;
      out->push_back(ctxkit::bench::GenerateAgentHistory(options));
    }
  }
}

// ---- measuring ----

struct Tally {
  size_t retained = 0;
  size_t total = 0;
};

struct Row {
  size_t runs = 0;
  size_t within_budget = 0;              // by our recount
  std::map<std::string, size_t> status;  // reported status (or met flag)
  bool old_build = false;                // no "status" in the response
  int64_t over_by = 0;                   // sum of budget.over_by
  size_t valid = 0;
  // Runs whose output has an assistant message the thinking check applies
  // to (or a thinking block from nowhere), and those that pass it.
  size_t thinking_runs = 0, thinking_intact = 0;
  std::array<Tally, kNeedleKinds> needles{};
  size_t summaries = 0, max_summaries = 0, reported_summaries = 0;
  size_t kept = 0;  // kept + truncated + folded
  size_t summary_tokens = 0, output_tokens = 0;
  double budget_use = 0;  // sum over runs of recount / budget
  size_t demo_runs = 0, false_action_runs = 0, false_action_paths = 0;
  double ms = 0;
};

size_t CountTokens(const char* model, std::string_view json,
                   std::vector<size_t>* per_message = nullptr) {
  auto n = ctxkit::CountMessagesForModel(model, json);
  if (!n.ok()) Fail("counting failed: " + n.status().ToString());
  if (per_message != nullptr) *per_message = n->messages;
  return n->total;
}

std::string Fraction(size_t part, size_t whole) {
  if (whole == 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu/%zu (%.1f %%)", part, whole,
                100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

int64_t GetInt(simdjson::dom::element e, const char* key, int64_t fallback) {
  int64_t v = 0;
  if (e[key].get_int64().get(v) == simdjson::SUCCESS) return v;
  return fallback;
}

// `text` with newlines shown as "\n", for one-line reports.
std::string OneLine(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c != '\r') {
      out.push_back(c);
    }
  }
  return out;
}

// The format `h` is in, as its source defines it rather than as detected:
// a history of text blocks alone reads as OpenAI content parts to
// detection, whose rules (no role alternation) are looser than Anthropic's.
ctxkit::ChatFormat FormatOf(const History& h) {
  return h.anthropic ? ctxkit::ChatFormat::kAnthropic
                     : ctxkit::ChatFormat::kOpenAI;
}

struct Measured {
  std::string history_name;
  size_t budget = 0;
  size_t recount = 0;
  std::string status;
  bool valid = false;
  std::string invalid_reason;
  ctxkit::bench::OutputReport output;
  std::vector<const Needle*> lost;
};

// Compacts `h` (of `total` tokens) to every budget and adds the results to
// `rows`, keyed by budget and format.
void MeasureHistory(const History& h, size_t total, const Args& args,
                    std::map<std::pair<int, bool>, Row>* rows) {
  const std::string input = h.MessagesJson();
  std::string error;
  auto analyzer = ctxkit::bench::OutputAnalyzer::Create(h, &error);
  if (analyzer == nullptr) Fail(error);
  const ctxkit::Compactor compactor;
  simdjson::dom::parser parser;
  for (int percent : kBudgetPercents) {
    const size_t budget = std::max<size_t>(1, total * percent / 100);
    const std::string request =
        R"({"messages":)" + input + R"(,"max_tokens":)" +
        std::to_string(budget) + R"(,"model":)" +
        ctxkit::bench::JsonString(h.model()) + R"(,"format":)" +
        ctxkit::bench::JsonString(ctxkit::ChatFormatName(FormatOf(h))) + "}";
    const auto start = std::chrono::steady_clock::now();
    auto response = compactor.CompactJson(request);
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    const std::string where =
        h.set + ": " + h.name + " at " + std::to_string(percent) + " %";
    if (!response.ok()) {
      Fail(where + ": compaction failed: " + response.status().ToString());
    }
    simdjson::dom::element doc;
    simdjson::dom::array messages;
    if (parser.parse(*response).get(doc) != simdjson::SUCCESS ||
        doc["messages"].get_array().get(messages) != simdjson::SUCCESS) {
      Fail(where + ": the response is not JSON with a \"messages\" array");
    }
    const std::string output = simdjson::to_string(messages);
    Row& row = (*rows)[{percent, h.anthropic}];
    Measured m;
    m.history_name = h.name;
    m.budget = budget;
    std::vector<size_t> per_message;
    m.recount = CountTokens(h.model(), output, &per_message);
    simdjson::dom::element budget_info;
    std::string_view status;
    bool met = false;
    if (doc["budget"].get(budget_info) == simdjson::SUCCESS &&
        budget_info["status"].get_string().get(status) == simdjson::SUCCESS) {
      m.status.assign(status);
    } else {
      row.old_build = true;
      if (doc["budget"]["met"].get_bool().get(met) != simdjson::SUCCESS) {
        Fail(where +
             ": the response has neither budget.status nor "
             "budget.met");
      }
      m.status = met ? "met" : "not met";
    }
    row.over_by += std::max<int64_t>(0, GetInt(budget_info, "over_by", 0));
    const ctxkit::Status valid =
        ctxkit::ValidateChatHistory(output, FormatOf(h));
    m.valid = valid.ok();
    if (!m.valid) m.invalid_reason = valid.ToString();
    if (!analyzer->Analyze(output, per_message, &m.output, &error)) {
      Fail(where + ": " + error);
    }
    for (const Needle& n : h.needles) {
      Tally& t = row.needles[static_cast<size_t>(n.kind)];
      ++t.total;
      if (m.output.haystack.find(n.excerpt) != std::string::npos) {
        ++t.retained;
      } else {
        m.lost.push_back(&n);
      }
    }
    const size_t summaries = m.output.written + m.output.folded;
    ++row.runs;
    row.within_budget += m.recount <= budget ? 1 : 0;
    ++row.status[m.status];
    row.valid += m.valid ? 1 : 0;
    if (m.output.thinking_checked || !m.output.thinking_intact) {
      ++row.thinking_runs;
      row.thinking_intact += m.output.thinking_intact ? 1 : 0;
    }
    row.summaries += summaries;
    row.max_summaries = std::max(row.max_summaries, summaries);
    simdjson::dom::element info;
    if (doc["compaction_info"].get(info) == simdjson::SUCCESS) {
      row.reported_summaries += static_cast<size_t>(
          std::max<int64_t>(0, GetInt(info, "summary_count", 0)));
    }
    row.kept += m.output.kept + m.output.truncated + m.output.folded;
    row.summary_tokens += m.output.summary_tokens;
    row.output_tokens += m.recount;
    row.budget_use +=
        static_cast<double>(m.recount) / static_cast<double>(budget);
    if (!h.demo_only_paths.empty()) {
      ++row.demo_runs;
      row.false_action_runs += m.output.false_action_paths.empty() ? 0 : 1;
      row.false_action_paths += m.output.false_action_paths.size();
    }
    row.ms += ms;

    if (args.verbose) {
      std::printf(
          "%3d %% %s: %zu -> %zu tokens (budget %zu, reported %lld, status "
          "%s)%s%s; %zu messages: %zu kept, %zu truncated, %zu folded, %zu "
          "written; lost %zu/%zu needles\n",
          percent, h.name.c_str(), total, m.recount, budget,
          static_cast<long long>(GetInt(doc, "token_estimate", -1)),
          m.status.c_str(), m.recount <= budget ? "" : " OVER BUDGET",
          m.valid ? "" : " INVALID", m.output.messages, m.output.kept,
          m.output.truncated, m.output.folded, m.output.written, m.lost.size(),
          h.needles.size());
      if (!m.valid)
        std::printf("      invalid: %s\n", m.invalid_reason.c_str());
      if (!m.output.thinking_intact) {
        std::printf("      thinking: %s\n", m.output.thinking_problem.c_str());
      }
      for (const std::string& p : m.output.false_action_paths) {
        std::printf("      false action: written text names demo-only %s\n",
                    p.c_str());
      }
      for (const Needle* n : m.lost) {
        std::printf("      lost %-14s %s\n",
                    ctxkit::bench::NeedleKindName(n->kind),
                    OneLine(n->excerpt).c_str());
      }
    }
  }
}

std::string StatusCell(const Row& row) {
  std::string out;
  if (row.old_build) out = "(met flag) ";
  bool first = true;
  for (const char* s : {"met", "degraded", "infeasible", "not met"}) {
    auto it = row.status.find(s);
    if (it == row.status.end()) continue;
    if (!first) out += ", ";
    out += std::string(s) + " " + std::to_string(it->second);
    first = false;
  }
  for (const auto& [s, n] : row.status) {
    if (s == "met" || s == "degraded" || s == "infeasible" || s == "not met") {
      continue;
    }
    if (!first) out += ", ";
    out += s + " " + std::to_string(n);
    first = false;
  }
  // Old builds say by how much instead of why.
  if (row.old_build) out += ", over_by sum " + std::to_string(row.over_by);
  return out;
}

void PrintTables(std::string_view set,
                 const std::map<std::pair<int, bool>, Row>& rows) {
  std::printf("\n### %s\n\n", std::string(set).c_str());
  std::printf(
      "| budget | format | runs | within budget (recount) | output/budget "
      "mean | reported status | valid | thinking intact | summaries/run "
      "mean (max) | reported summary_count/run | summary share of output "
      "tokens | summaries : kept | false actions (runs) | mean ms |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  // Budgets from the largest down, as the tables elsewhere.
  for (int percent : kBudgetPercents) {
    for (bool anthropic : {false, true}) {
      auto it = rows.find({percent, anthropic});
      if (it == rows.end()) continue;
      const Row& r = it->second;
      const double runs = static_cast<double>(r.runs);
      char summaries[64], share[32], ratio[32], reported[32], ms[32], use[32];
      std::snprintf(use, sizeof use, "%.1f %%", 100.0 * r.budget_use / runs);
      std::snprintf(summaries, sizeof summaries, "%.1f (%zu)",
                    static_cast<double>(r.summaries) / runs, r.max_summaries);
      std::snprintf(reported, sizeof reported, "%.1f",
                    static_cast<double>(r.reported_summaries) / runs);
      std::snprintf(share, sizeof share, "%.1f %%",
                    r.output_tokens == 0
                        ? 0.0
                        : 100.0 * static_cast<double>(r.summary_tokens) /
                              static_cast<double>(r.output_tokens));
      if (r.kept == 0) {
        std::snprintf(ratio, sizeof ratio, "-");
      } else {
        std::snprintf(
            ratio, sizeof ratio, "%.3f",
            static_cast<double>(r.summaries) / static_cast<double>(r.kept));
      }
      std::snprintf(ms, sizeof ms, "%.1f", r.ms / runs);
      const std::string false_actions =
          r.demo_runs == 0
              ? std::string("-")
              : Fraction(r.false_action_runs, r.demo_runs) + ", " +
                    std::to_string(r.false_action_paths) + " paths";
      std::printf(
          "| %d %% | %s | %zu | %s | %s | %s | %s | %s | %s | %s | %s "
          "| %s | %s | %s |\n",
          percent, anthropic ? "anthropic" : "openai", r.runs,
          Fraction(r.within_budget, r.runs).c_str(), use, StatusCell(r).c_str(),
          Fraction(r.valid, r.runs).c_str(),
          Fraction(r.thinking_intact, r.thinking_runs).c_str(), summaries,
          reported, share, ratio, false_actions.c_str(), ms);
    }
  }
  std::printf("\n| budget | format |");
  for (size_t k = 0; k < kNeedleKinds; ++k) {
    std::printf(" %s |",
                ctxkit::bench::NeedleKindName(static_cast<NeedleKind>(k)));
  }
  std::printf(" overall |\n|---|---|");
  for (size_t k = 0; k <= kNeedleKinds; ++k) std::printf("---|");
  std::printf("\n");
  for (int percent : kBudgetPercents) {
    for (bool anthropic : {false, true}) {
      auto it = rows.find({percent, anthropic});
      if (it == rows.end()) continue;
      const Row& r = it->second;
      Tally overall;
      std::printf("| %d %% | %s |", percent,
                  anthropic ? "anthropic" : "openai");
      for (const Tally& t : r.needles) {
        std::printf(" %s |", Fraction(t.retained, t.total).c_str());
        overall.retained += t.retained;
        overall.total += t.total;
      }
      std::printf(" %s |\n", Fraction(overall.retained, overall.total).c_str());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  const Args args = ParseArgs(argc, argv);
  std::printf("compaction_quality: data %s, sets", args.data_dir.c_str());
  for (const std::string& s : args.sets) std::printf(" %s", s.c_str());
  std::printf("\nload average (1, 5, 15 min) at start: %s\n",
              ctxkit::bench::LoadAverage().c_str());

  std::vector<History> histories;
  LoadSweAgent(args, &histories);
  LoadClaudeCode(args, &histories);
  LoadGenerated(args, &histories);
  std::vector<size_t> totals;
  for (const History& h : histories) {
    const std::string input = h.MessagesJson();
    if (ctxkit::Status valid = ctxkit::ValidateChatHistory(input, FormatOf(h));
        !valid.ok()) {
      Fail(h.set + ": " + h.name +
           ": the converted history is not valid: " + valid.ToString());
    }
    totals.push_back(CountTokens(h.model(), input));
  }

  // What each set holds, before any compaction.
  std::printf(
      "\n| set | histories | messages (min-max) | tokens | needles: task / "
      "errors / edited files / last result / final decision | demo-only "
      "paths |\n|---|---|---|---|---|---|\n");
  for (std::string_view set : kSets) {
    size_t count = 0, messages = 0, min = SIZE_MAX, max = 0, tokens = 0,
           demo_paths = 0;
    std::array<size_t, kNeedleKinds> needles{};
    for (size_t i = 0; i < histories.size(); ++i) {
      const History& h = histories[i];
      if (h.set != set) continue;
      ++count;
      messages += h.messages.size();
      min = std::min(min, h.messages.size());
      max = std::max(max, h.messages.size());
      tokens += totals[i];
      demo_paths += h.demo_only_paths.size();
      for (const Needle& n : h.needles) ++needles[static_cast<size_t>(n.kind)];
    }
    if (count == 0) continue;
    std::printf(
        "| %s | %zu | %zu (%zu-%zu) | %zu | %zu / %zu / %zu / %zu / "
        "%zu | %zu |\n",
        std::string(set).c_str(), count, messages, min, max, tokens, needles[0],
        needles[1], needles[2], needles[3], needles[4], demo_paths);
  }
  if (args.verbose) std::printf("\n");

  for (std::string_view set : kSets) {
    std::map<std::pair<int, bool>, Row> rows;
    for (size_t i = 0; i < histories.size(); ++i) {
      if (histories[i].set == set) {
        MeasureHistory(histories[i], totals[i], args, &rows);
      }
    }
    if (!rows.empty()) PrintTables(set, rows);
  }

  std::printf(
      "\nwithin budget: the output recounted with the history's model is at "
      "most the budget. valid: ValidateChatHistory in the history's "
      "format. thinking intact: the thinking check of quality_output.h "
      "(Anthropic runs). summaries: "
      "output messages holding text the compaction wrote (written or "
      "folded), kept: those carrying an input message (kept, truncated, "
      "folded), as bench/README.md defines them. false actions: runs whose "
      "written text names a file edited only in the demonstration.\n");
  std::printf("load average (1, 5, 15 min) at end: %s\n",
              ctxkit::bench::LoadAverage().c_str());
  std::printf(
      "run time: %.1f s\n",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count());
  return 0;
}
