// The deterministic agent-history generator of bench/compaction_quality;
// agent_history_generator.h describes what it writes.

#include "bench/agent_history_generator.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/bench_inputs.h"
#include "bench/quality_needles.h"

namespace ctxkit::bench {
namespace {

using Words = std::vector<std::string_view>;

struct ExceptionKind {
  std::string_view name;
  std::string_view message;  // a template (see Fill)
};

// Everything that differs between the tuning and the holdout family.
struct Vocabulary {
  std::string_view set;
  std::string_view root;  // the checkout, in traceback paths
  Words dirs, modules, variants, demo_dirs, demo_modules, symbols, nouns, attrs;
  std::vector<ExceptionKind> exceptions;
  // Tools and their argument names.
  std::string_view read_tool, read_key, search_tool, search_key, edit_tool,
      edit_path_key, edit_old_key, edit_new_key, shell_tool, shell_key;
  std::string_view test_dir, test_command, final_test_command, run_command,
      log_command, log_line;
  bool quiet_pytest = false;
  std::string_view system_prompt, preamble, demo_intro, edit_result;
  Words task_titles, task_details, read_thoughts, search_thoughts,
      edit_thoughts, test_thoughts, run_thoughts, log_thoughts, thinking, plans,
      decisions, code;
};

const Vocabulary& Tuning() {
  static const Vocabulary* v = new Vocabulary{
      .set = "generated",
      .root = "/workspace/ledgerline",
      .dirs = {"src/ledgerline/core", "src/ledgerline/api",
               "src/ledgerline/storage", "src/ledgerline/reports",
               "src/ledgerline/sync", "src/ledgerline/util"},
      .modules = {"reconcile", "accounts", "currency", "invoices", "settlement",
                  "fees", "ledger_entry", "batch_import", "exchange_rates",
                  "audit_log", "payouts", "refunds"},
      .variants = {"", "_v2", "_helpers", "_compat", "_models", "_service",
                   "_tasks", "_rules"},
      .demo_dirs = {"examples/sample_shop", "examples/toy_bank"},
      .demo_modules = {"cart", "checkout", "coupon", "basket_total", "teller"},
      .symbols = {"reconcile_batch", "apply_fee_schedule", "convert_amount",
                  "post_entry", "load_rates", "close_period", "split_payout",
                  "validate_iban", "round_half_even", "merge_statements"},
      .nouns = {"acct", "batch", "invoice", "payout", "entry", "period"},
      .attrs = {"amount_cents", "currency_code", "posted_at", "fee_rule",
                "counterparty", "settled"},
      .exceptions =
          {{"KeyError", "'{noun}_{n}'"},
           {"ValueError",
            "invalid literal for int() with base 10: '{noun}-{n}'"},
           {"TypeError",
            "unsupported operand type(s) for +: 'Decimal' and 'float' "
            "(entry {n})"},
           {"AttributeError",
            "'NoneType' object has no attribute '{attr}' (batch {n})"},
           {"ZeroDivisionError", "division by zero in {symbol} for period {n}"},
           {"ledgerline.errors.BalanceMismatch",
            "ledger {n} is off by {m} cents after {symbol}"}},
      .read_tool = "read_file",
      .read_key = "path",
      .search_tool = "grep",
      .search_key = "pattern",
      .edit_tool = "edit_file",
      .edit_path_key = "path",
      .edit_old_key = "old_text",
      .edit_new_key = "new_text",
      .shell_tool = "run_shell",
      .shell_key = "command",
      .test_dir = "tests/unit",
      .test_command = "pytest {test} -q",
      .final_test_command = "pytest -q",
      .run_command = "python -m ledgerline.cli {symbol} --batch {n}",
      .log_command = "docker compose logs sync-worker --tail {n}",
      .log_line =
          "2024-03-{d}T{h}:{m}:{s}Z INFO ledgerline.sync worker={w} "
          "processed {noun} {n} ({k} entries, {ms} ms)",
      .quiet_pytest = false,
      .system_prompt =
          "You are a coding agent working in the ledgerline repository, a "
          "payments ledger service written in Python. Use the tools to read "
          "files, search the code, edit files and run shell commands. Keep "
          "changes small, run the tests after every change, and explain what "
          "you found before you change code. Never invent test results: run "
          "them. When the task is done, say so and summarize the fix.",
      .preamble =
          "<environment>\ncwd: /workspace/ledgerline\nos: linux\n"
          "python: 3.11.6\ngit branch: fix/{noun}-{n}\nrecent commits:\n"
          "  a1f3c9e Bump ruff to 0.3.2\n  77d0b21 Add audit log "
          "export\n</environment>",
      .demo_intro =
          "Example session, for reference only (a different "
          "repository and task): {title}",
      .edit_result =
          "The file {path} has been edited. Here is the result of "
          "running `cat -n` on a snippet of the edited file:",
      .task_titles =
          {"Reconciliation drops the last entry of batch {n} when "
           "{symbol} sees a refund of {m} cents",
           "{symbol} double-counts fees for {noun} {n} after a currency "
           "switch to code {m}",
           "Closing period {n} leaves {m} {noun}s unsettled in "
           "{module}.py"},
      .task_details =
          {"Steps: import the fixture batch, run the nightly job, compare the "
           "totals. Expected the ledger to balance; it is off by a few cents "
           "and the audit log shows no error.",
           "Customers see a different balance in the API and in the monthly "
           "report. The difference appears only for refunds posted on the "
           "last day of a period."},
      .read_thoughts = {"Let me read {path} to see how {symbol} handles "
                        "{noun}s.",
                        "I'll open {path}; {symbol} is probably defined "
                        "there.",
                        "Next I want to check the {attr} handling in {path}."},
      .search_thoughts = {"Let me search for every caller of {symbol}.",
                          "I'll grep for {attr} to find where it is set."},
      .edit_thoughts = {"The bug is in {symbol}: it uses {attr} before the "
                        "rounding. I'll fix {path}.",
                        "I'll change {path} so that {symbol} skips settled "
                        "{noun}s."},
      .test_thoughts = {"Now let me run the {module} tests.",
                        "Running the unit tests for {module} again."},
      .run_thoughts = {"Let me reproduce it with the CLI on batch {n}.",
                       "I'll run the job by hand to see the failure."},
      .log_thoughts = {"The worker may have logged something; let me look "
                       "at its log.",
                       "Let me check the sync worker's recent log output."},
      .thinking = {"The totals differ by a few cents, so the rounding in "
                   "{symbol} is suspect; {attr} is an integer count of "
                   "cents but the fee rule returns a float.",
                   "If {noun} {n} is settled twice the ledger would be off "
                   "by exactly the fee, which matches the report.",
                   "I should confirm the failing path before editing: the "
                   "traceback points into {module}.py."},
      .plans = {"Plan:\n1. Reproduce the failure for batch {n}.\n2. Find "
                "where {symbol} rounds {attr}.\n3. Fix it in {path} and add a "
                "regression test.\n4. Run the whole suite."},
      .decisions = {"Done: all {n} tests pass. The fix rounds {attr} once, in "
                    "{symbol}, and the ledger for batch {m} balances now.",
                    "The task is complete: {symbol} no longer double-counts; "
                    "{n} tests pass and I am stopping here (ref {m})."},
      .code = {"def {symbol}({noun}s, *, strict=False):",
               "    total = Decimal(0)", "    for entry in {noun}s:",
               "        if entry.{attr} is None:", "            continue",
               "        total += entry.{attr}",
               "    log.debug(\"{symbol}: %s {noun}s\", len({noun}s))",
               "    return round_half_even(total)",
               "from ledgerline.util.money import Decimal, round_half_even",
               "class {Noun}Error(LedgerError):", "    pass",
               "    if strict and total < 0:",
               "        raise BalanceMismatch({noun}.id, total)"},
  };
  return *v;
}

const Vocabulary& Holdout() {
  static const Vocabulary* v = new Vocabulary{
      .set = "generated-holdout",
      .root = "/srv/tilecast",
      .dirs = {"tilecast/render", "tilecast/io", "tilecast/geometry",
               "tilecast/cache", "tilecast/cli", "tilecast/styles"},
      .modules = {"rasterize", "projection", "mbtiles", "style_parser", "bbox",
                  "simplify", "palette", "tile_index", "quadkey",
                  "vector_layer", "http_fetch", "metatile"},
      .variants = {"", "_core", "_legacy", "_fast", "_types", "_ops", "_cli",
                   "_io"},
      .demo_dirs = {"samples/legacy_maps", "samples/osm_demo"},
      .demo_modules = {"tiles_v1", "shapefile_reader", "legend", "wms"},
      .symbols = {"render_tile", "to_web_mercator", "parse_style",
                  "clip_polygon", "encode_quadkey", "fetch_tile",
                  "simplify_ring", "merge_layers", "pack_metatile",
                  "resolve_palette"},
      .nouns = {"tile", "ring", "layer", "feature", "zoom", "style"},
      .attrs = {"extent", "srid", "fill_rule", "min_zoom", "coords",
                "palette_id"},
      .exceptions =
          {{"IndexError", "list index out of range (ring {n})"},
           {"RuntimeError", "GEOS error: TopologyException at {n} {m}"},
           {"FileNotFoundError",
            "[Errno 2] No such file or directory: 'cache/{n}/{m}.png'"},
           {"json.decoder.JSONDecodeError",
            "Expecting ',' delimiter: line {n} column {m}"},
           {"sqlite3.OperationalError", "no such table: tiles_{n}"},
           {"tilecast.errors.ProjectionError",
            "latitude {n}.{m} outside Web Mercator bounds"}},
      .read_tool = "view_file",
      .read_key = "file",
      .search_tool = "search_code",
      .search_key = "query",
      .edit_tool = "apply_patch",
      .edit_path_key = "file",
      .edit_old_key = "before",
      .edit_new_key = "after",
      .shell_tool = "bash",
      .shell_key = "cmd",
      .test_dir = "test/render",
      .test_command = "python -m pytest {test} -x -q",
      .final_test_command = "python -m pytest -q",
      .run_command = "python -m tilecast render --zoom {n} --style {noun}.json",
      .log_command = "tail -n {n} logs/render-worker.log",
      .log_line =
          "[worker-{w}] level=info msg=\"rendered {noun}\" z={d} "
          "x={n} y={k} ms={ms}",
      .quiet_pytest = true,
      .system_prompt =
          "Role: autonomous software engineer on tilecast, a map tile "
          "renderer. Tools: view_file, search_code, apply_patch, bash. Work "
          "in small verified steps; after each patch run the relevant tests. "
          "Report facts you observed, not guesses. Finish with a short "
          "statement of what changed and why.",
      .preamble =
          "Context for this session\n- repo: /srv/tilecast (branch "
          "bug/{noun}-{n})\n- interpreter: CPython 3.12.1\n- "
          "services: redis on 6379, tileserver on 8080",
      .demo_intro =
          "Below is a worked example from another project. It only "
          "shows how the tools are used: {title}",
      .edit_result = "Patched {path}. Context after the change:",
      .task_titles =
          {"Tiles at zoom {n} render blank when {symbol} clips a {noun} "
           "that crosses the antimeridian (issue {m})",
           "{symbol} returns the wrong quadkey for {noun} {n} near the "
           "poles, off by {m} pixels",
           "Style files with {m} layers make {module}.py hang at zoom "
           "{n}"},
      .task_details =
          {"To reproduce: render the sample bbox with the default style and "
           "compare with the reference PNGs; several tiles come out empty.",
           "Users report it since the GEOS upgrade; the HTTP endpoint "
           "answers 200 with a transparent tile."},
      .read_thoughts = {"Opening {path}: {symbol} should be in there.",
                        "I need to see how {path} computes the {attr}.",
                        "Checking {path} for the {noun} handling."},
      .search_thoughts = {"Where else is {symbol} called? Searching.",
                          "Searching the code base for {attr}."},
      .edit_thoughts = {"Found it: {symbol} mixes degrees and radians for "
                        "{attr}. Patching {path}.",
                        "Patching {path} to normalise the {noun} before "
                        "{symbol}."},
      .test_thoughts = {"Re-running the {module} tests.",
                        "Test run for {module} after the patch."},
      .run_thoughts = {"Reproducing with a render at zoom {n}.",
                       "Let me trigger the render directly."},
      .log_thoughts = {"The render worker's log should show the failure.",
                       "Reading the tail of the worker log."},
      .thinking = {"A blank tile means the clip produced an empty geometry; "
                   "{symbol} probably sees the {noun} wrapped around "
                   "longitude 180.",
                   "The quadkey is off by one level, so {attr} might be "
                   "computed before the zoom clamp in {module}.py.",
                   "Before patching I want the exact exception from the "
                   "render of zoom {n}."},
      .plans = {"Approach:\n- reproduce at zoom {n}\n- inspect {symbol} in "
                "{path}\n- patch the {attr} conversion\n- full test run"},
      .decisions = {"Finished. {n} tests pass; {symbol} now normalises "
                    "{attr} first, so zoom {m} renders again.",
                    "Work complete: the patch to {symbol} holds, the suite "
                    "is green ({n} passed) and issue {m} can be closed."},
      .code = {"def {symbol}({noun}, zoom: int) -> bytes:",
               "    minx, miny, maxx, maxy = {noun}.{attr}",
               "    if zoom > MAX_ZOOM:", "        zoom = MAX_ZOOM",
               "    ring = [to_web_mercator(p) for p in {noun}.coords]",
               "    return encode_png(ring, palette=self.palette)",
               "import math", "from tilecast.geometry import bbox",
               "    except GEOSException as exc:",
               "        raise {Noun}Error(str(exc)) from exc",
               "    # radians, not degrees", "    yield from {symbol}({noun})"},
  };
  return *v;
}

// Replaces {path}, {symbol}, {module}, {noun}, {Noun}, {attr}, {n}, {m},
// {k}, {w}, {d}, {h}, {s}, {ms}, {test}, {title} in `t`; other text,
// including braces, is copied.
struct Slots {
  std::string path, symbol, module, noun, attr, n, m, k, w, d, h, s, ms, test,
      title;
};

std::string Fill(std::string_view t, const Slots& v) {
  std::string out;
  out.reserve(t.size() + 32);
  for (size_t i = 0; i < t.size();) {
    if (t[i] == '{') {
      const size_t close = t.find('}', i);
      if (close != std::string_view::npos) {
        const std::string_view key = t.substr(i + 1, close - i - 1);
        const std::string* value = nullptr;
        std::string capital;
        if (key == "path") value = &v.path;
        if (key == "symbol") value = &v.symbol;
        if (key == "module") value = &v.module;
        if (key == "noun") value = &v.noun;
        if (key == "attr") value = &v.attr;
        if (key == "n") value = &v.n;
        if (key == "m") value = &v.m;
        if (key == "k") value = &v.k;
        if (key == "w") value = &v.w;
        if (key == "d") value = &v.d;
        if (key == "h") value = &v.h;
        if (key == "s") value = &v.s;
        if (key == "ms") value = &v.ms;
        if (key == "test") value = &v.test;
        if (key == "title") value = &v.title;
        if (key == "Noun") {
          capital = v.noun;
          if (!capital.empty() && capital[0] >= 'a' && capital[0] <= 'z') {
            capital[0] = static_cast<char>(capital[0] - 'a' + 'A');
          }
          value = &capital;
        }
        if (value != nullptr) {
          out += *value;
          i = close + 1;
          continue;
        }
      }
    }
    out.push_back(t[i]);
    ++i;
  }
  return out;
}

std::string Two(uint64_t v) {
  return std::string(1, static_cast<char>('0' + v / 10 % 10)) +
         static_cast<char>('0' + v % 10);
}

// One tool call: its id and its arguments as a JSON object.
struct Call {
  std::string id, name, arguments;
};

// Writes messages in either format and counts them. A user text after tool
// results joins their message in the Anthropic format.
class Writer {
 public:
  Writer(bool anthropic, SplitMix64* rng, History* out)
      : anthropic_(anthropic), rng_(rng), out_(out) {}

  size_t messages() const {
    return out_->messages.size() + (pending_.empty() ? 0 : 1);
  }

  void System(std::string_view text) {
    Emit(R"({"role":"system","content":)" + JsonString(text) + "}", false);
  }

  void User(std::string_view text, bool demo) {
    if (!anthropic_) {
      Emit(R"({"role":"user","content":)" + JsonString(text) + "}", demo);
      return;
    }
    pending_.push_back(R"({"type":"text","text":)" + JsonString(text) + "}");
    pending_demo_ = pending_demo_ || demo;
  }

  std::string NewId() {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::string id = anthropic_ ? "toolu_01" : "call_";
    for (int i = 0; i < 22; ++i) id.push_back(kAlphabet[rng_->Next() % 62]);
    return id;
  }

  // An assistant turn; `thinking` is written only in the Anthropic format.
  void Assistant(std::string_view text, std::string_view thinking,
                 const std::vector<Call>& calls, bool demo) {
    Flush();
    std::string m;
    if (!anthropic_) {
      m = R"({"role":"assistant","content":)" +
          (text.empty() ? std::string("null") : JsonString(text));
      if (!calls.empty()) {
        m += R"(,"tool_calls":[)";
        for (size_t i = 0; i < calls.size(); ++i) {
          if (i > 0) m += ',';
          m += R"({"id":)" + JsonString(calls[i].id) +
               R"(,"type":"function","function":{"name":)" +
               JsonString(calls[i].name) + R"(,"arguments":)" +
               JsonString(calls[i].arguments) + "}}";
        }
        m += "]";
      }
      m += "}";
    } else {
      m = R"({"role":"assistant","content":[{"type":"thinking","thinking":)" +
          JsonString(thinking) + R"(,"signature":)" + JsonString(Signature()) +
          "}";
      if (!text.empty()) {
        m += R"(,{"type":"text","text":)" + JsonString(text) + "}";
      }
      for (const Call& c : calls) {
        m += R"(,{"type":"tool_use","id":)" + JsonString(c.id) + R"(,"name":)" +
             JsonString(c.name) + R"(,"input":)" + c.arguments + "}";
      }
      m += "]}";
    }
    Emit(std::move(m), demo);
  }

  // The results of the last assistant turn's calls, in their order.
  void Results(const std::vector<Call>& calls,
               const std::vector<std::string>& texts, bool demo) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (!anthropic_) {
        Emit(R"({"role":"tool","tool_call_id":)" + JsonString(calls[i].id) +
                 R"(,"content":)" + JsonString(texts[i]) + "}",
             demo);
      } else {
        pending_.push_back(R"({"type":"tool_result","tool_use_id":)" +
                           JsonString(calls[i].id) + R"(,"content":)" +
                           JsonString(texts[i]) + "}");
        pending_demo_ = pending_demo_ || demo;
      }
    }
  }

  void Finish() { Flush(); }

 private:
  // Anthropic signs thinking with an opaque base64 string of a few hundred
  // bytes; its content does not matter, its bytes must survive.
  std::string Signature() {
    static constexpr char kBase64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string s = "Eq";
    const size_t n = rng_->Range(200, 360);
    for (size_t i = 0; i < n; ++i) s.push_back(kBase64[rng_->Next() % 64]);
    return s + "==";
  }

  void Flush() {
    if (pending_.empty()) return;
    std::string m = R"({"role":"user","content":[)";
    for (size_t i = 0; i < pending_.size(); ++i) {
      if (i > 0) m += ',';
      m += pending_[i];
    }
    m += "]}";
    pending_.clear();
    const bool demo = pending_demo_;
    pending_demo_ = false;
    Emit(std::move(m), demo);
  }

  void Emit(std::string message, bool demo) {
    out_->messages.push_back(std::move(message));
    out_->demonstration.push_back(demo);
  }

  bool anthropic_;
  SplitMix64* rng_;
  History* out_;
  std::vector<std::string> pending_;  // blocks of the next user message
  bool pending_demo_ = false;
};

// The generator's state for one history.
class Generator {
 public:
  Generator(const AgentHistoryOptions& options, History* out)
      : options_(options),
        v_(options.holdout ? Holdout() : Tuning()),
        rng_(options.seed),
        out_(out),
        writer_(options.anthropic, &rng_, out) {
    // Every project file, shuffled; a quarter of them are the ones the run
    // edits, the others it only reads, searches and sees in tracebacks, so
    // that an edited path survives only where the edit's own messages or a
    // summary keep it.
    std::vector<std::pair<std::string, std::string>> files;
    for (std::string_view dir : v_.dirs) {
      for (std::string_view module : v_.modules) {
        for (std::string_view variant : v_.variants) {
          const std::string name = std::string(module) + std::string(variant);
          files.emplace_back(std::string(dir) + "/" + name + ".py", name);
        }
      }
    }
    for (size_t i = files.size(); i > 1; --i) {
      std::swap(files[i - 1], files[rng_.Next() % i]);
    }
    const size_t edited = files.size() / 4;
    edit_files_.assign(files.begin(), files.begin() + edited);
    read_files_.assign(files.begin() + edited, files.end());
  }

  void Run() {
    out_->set = std::string(v_.set);
    out_->anthropic = options_.anthropic;
    writer_.System(v_.system_prompt);
    if (options_.few_shot) FewShot();
    Slots s = Fresh();
    if (options_.context_preamble) writer_.User(Fill(v_.preamble, s), false);
    const std::string title = Fill(Pick(v_.task_titles), s);
    writer_.User(title + "\n\n" + Fill(Pick(v_.task_details), s) +
                     "\n\nPlease find the cause, fix it, and make sure the "
                     "test suite passes.",
                 false);
    AddNeedle(&out_->needles, NeedleKind::kTask, Excerpt(title));
    // The final run and decision take 3 (OpenAI) or 4 messages.
    while (writer_.messages() + 4 < options_.messages) Step();
    Final();
    writer_.Finish();
  }

 private:
  std::string_view Pick(const Words& words) {
    return words[rng_.Next() % words.size()];
  }
  std::string Number(uint64_t lo, uint64_t hi) {
    return std::to_string(rng_.Range(lo, hi));
  }

  // Fresh slot values: a path the run reads, a symbol, numbers, ...
  Slots Fresh() {
    Slots s;
    const auto& file = read_files_[rng_.Next() % read_files_.size()];
    s.path = file.first;
    s.module = file.second;
    s.symbol = std::string(Pick(v_.symbols));
    s.noun = std::string(Pick(v_.nouns));
    s.attr = std::string(Pick(v_.attrs));
    s.n = Number(2, 99999);
    s.m = Number(2, 9999);
    s.k = Number(1, 500);
    s.w = Number(1, 16);
    s.d = Two(rng_.Range(1, 28));
    s.h = Two(rng_.Range(0, 23));
    s.s = Two(rng_.Range(0, 59));
    s.ms = Number(3, 900);
    s.test = std::string(v_.test_dir) + "/test_" + s.module + ".py";
    return s;
  }

  // Slot values for the next edit: the next file of the edited quarter, in
  // order, starting over when all were edited.
  Slots FreshEdit() {
    Slots s = Fresh();
    const auto& file = edit_files_[next_edit_++ % edit_files_.size()];
    s.path = file.first;
    s.module = file.second;
    s.test = std::string(v_.test_dir) + "/test_" + s.module + ".py";
    return s;
  }

  // Slot values of the few-shot block: its own directories and modules,
  // which the real run never uses.
  Slots FreshDemo() {
    Slots s = Fresh();
    s.module = std::string(Pick(v_.demo_modules));
    const std::string dir(Pick(v_.demo_dirs));
    s.path = dir + "/" + s.module + ".py";
    s.test = dir + "/test_" + s.module + ".py";
    return s;
  }

  std::string Thinking(const Slots& s) {
    std::string t = Fill(Pick(v_.thinking), s);
    if (rng_.Percent(30)) t += " " + Fill(Pick(v_.thinking), s);
    return t;
  }

  Call MakeCall(std::string_view tool,
                std::vector<std::pair<std::string_view, std::string>> args) {
    Call c;
    c.id = writer_.NewId();
    c.name = std::string(tool);
    c.arguments = "{";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i > 0) c.arguments += ',';
      c.arguments +=
          JsonString(args[i].first) + ":" + JsonString(args[i].second);
    }
    c.arguments += "}";
    return c;
  }

  std::string ShellCall(const std::string& command, Call* call) {
    *call = MakeCall(v_.shell_tool, {{v_.shell_key, command}});
    return command;
  }

  // `lines` numbered source lines of `path`, as the read tool prints them.
  std::string SourceLines(const Slots& s, size_t lines) {
    std::string out;
    size_t number = rng_.Range(1, 400);
    for (size_t i = 0; i < lines; ++i, ++number) {
      const std::string code = Fill(Pick(v_.code), s);
      if (options_.holdout) {
        out += std::to_string(number) + "| " + code + "\n";
      } else {
        std::string n = std::to_string(number);
        out += std::string(n.size() < 6 ? 6 - n.size() : 0, ' ') + n + "\t" +
               code + "\n";
      }
    }
    return out;
  }

  // An exception line; the real run's are error needles.
  std::string ExceptionLine(const Slots& s, bool demo) {
    const ExceptionKind& e = v_.exceptions[rng_.Next() % v_.exceptions.size()];
    std::string line = std::string(e.name) + ": " + Fill(e.message, s);
    if (!demo) AddNeedle(&out_->needles, NeedleKind::kError, Excerpt(line));
    return line;
  }

  std::string Traceback(const Slots& s, bool demo) {
    std::string t = "Traceback (most recent call last):\n";
    const size_t frames = rng_.Range(2, 5);
    for (size_t i = 0; i < frames; ++i) {
      Slots f = demo ? FreshDemo() : Fresh();
      t += "  File \"" + std::string(v_.root) + "/" + f.path + "\", line " +
           Number(10, 900) + ", in " + f.symbol + "\n    " +
           Fill(Pick(v_.code), f) + "\n";
    }
    return t + ExceptionLine(s, demo);
  }

  // pytest's report on `s.test`; a failing run adds one failure.
  std::string PytestOutput(const Slots& s, bool fail, bool demo) {
    const size_t passed = rng_.Range(3, 40);
    const std::string seconds = Number(0, 9) + "." + Two(rng_.Range(0, 99));
    const std::string test_name = "test_" + s.symbol + "_" + s.n;
    std::string failure, exception;
    if (fail) {
      exception = "AssertionError: assert " + Number(100, 99999) +
                  " == " + Number(100, 99999);
      if (!demo) {
        AddNeedle(&out_->needles, NeedleKind::kError, Excerpt(exception));
      }
      failure = "    def " + test_name + "():\n>       assert " + s.symbol +
                "(" + s.noun + "s) == expected\nE       " + exception + "\n\n" +
                s.test + ":" + Number(10, 400) + ": AssertionError\n";
    }
    std::string summary =
        fail ? "1 failed, " + std::to_string(passed) + " passed in " + seconds +
                   "s"
             : std::to_string(passed) + " passed in " + seconds + "s";
    if (v_.quiet_pytest) {
      std::string out = std::string(passed, '.') + (fail ? "F" : "") + "\n";
      if (fail) {
        out +=
            "=================================== FAILURES "
            "===================================\n" +
            failure +
            "=========================== short test summary info "
            "============================\nFAILED " +
            s.test + "::" + test_name + " - " + exception + "\n";
      }
      return out + summary;
    }
    std::string out =
        "============================= test session starts "
        "==============================\nplatform linux -- Python 3.11.6, "
        "pytest-8.0.2, pluggy-1.4.0\nrootdir: " +
        std::string(v_.root) + "\ncollected " +
        std::to_string(passed + (fail ? 1 : 0)) + " items\n\n" + s.test + " " +
        std::string(passed, '.') + (fail ? "F" : "") + "\n\n";
    if (fail) {
      out +=
          "=================================== FAILURES "
          "===================================\n____ " +
          test_name + " ____\n\n" + failure +
          "=========================== short test summary info "
          "============================\nFAILED " +
          s.test + "::" + test_name + " - " + exception + "\n";
    }
    return out + "======== " + summary + " ========";
  }

  void Read(const Slots& s, bool demo) {
    Call c = MakeCall(v_.read_tool, {{v_.read_key, s.path}});
    writer_.Assistant(Fill(Pick(v_.read_thoughts), s), Thinking(s), {c}, demo);
    writer_.Results({c}, {SourceLines(s, rng_.Range(6, 24))}, demo);
  }

  void ParallelRead() {
    Slots a = Fresh(), b = Fresh();
    Call ca = MakeCall(v_.read_tool, {{v_.read_key, a.path}});
    Call cb = MakeCall(v_.read_tool, {{v_.read_key, b.path}});
    writer_.Assistant(Fill(Pick(v_.read_thoughts), a), Thinking(a), {ca, cb},
                      false);
    writer_.Results(
        {ca, cb},
        {SourceLines(a, rng_.Range(5, 16)), SourceLines(b, rng_.Range(5, 16))},
        false);
  }

  void Search(const Slots& s) {
    Call c = MakeCall(v_.search_tool, {{v_.search_key, s.symbol}});
    std::string result;
    const size_t hits = rng_.Range(2, 8);
    for (size_t i = 0; i < hits; ++i) {
      Slots h = Fresh();
      h.symbol = s.symbol;
      result +=
          h.path + ":" + Number(1, 900) + ":" + Fill(Pick(v_.code), h) + "\n";
    }
    writer_.Assistant(Fill(Pick(v_.search_thoughts), s), Thinking(s), {c},
                      false);
    writer_.Results({c}, {result}, false);
  }

  void Edit(const Slots& s, bool demo, bool plan) {
    Slots before = s, after = s;
    after.attr = std::string(Pick(v_.attrs));
    Call c =
        MakeCall(v_.edit_tool, {{v_.edit_path_key, s.path},
                                {v_.edit_old_key, Fill(Pick(v_.code), before)},
                                {v_.edit_new_key, Fill(Pick(v_.code), after)}});
    std::string text = Fill(Pick(v_.edit_thoughts), s);
    if (plan) text = Fill(Pick(v_.plans), s) + "\n\n" + text;
    writer_.Assistant(text, Thinking(s), {c}, demo);
    writer_.Results(
        {c},
        {Fill(v_.edit_result, s) + "\n" + SourceLines(s, rng_.Range(4, 10))},
        demo);
    if (!demo) AddNeedle(&out_->needles, NeedleKind::kEditedFile, s.path);
  }

  void Test(const Slots& s, bool demo) {
    Call c;
    ShellCall(Fill(v_.test_command, s), &c);
    writer_.Assistant(Fill(Pick(v_.test_thoughts), s), Thinking(s), {c}, demo);
    writer_.Results({c}, {PytestOutput(s, rng_.Percent(60), demo)}, demo);
  }

  void RunProgram(const Slots& s, bool demo) {
    Call c;
    ShellCall(Fill(v_.run_command, s), &c);
    writer_.Assistant(Fill(Pick(v_.run_thoughts), s), Thinking(s), {c}, demo);
    writer_.Results({c}, {Traceback(s, demo)}, demo);
  }

  void Log(const Slots& s) {
    Call c;
    const size_t lines = rng_.Range(40, 160);
    Slots command = s;
    command.n = std::to_string(lines);
    ShellCall(Fill(v_.log_command, command), &c);
    std::string log;
    for (size_t i = 0; i < lines; ++i) {
      log += Fill(v_.log_line, Fresh()) + "\n";
    }
    // The error comes last, as in a worker that died on it.
    log += Traceback(s, false);
    writer_.Assistant(Fill(Pick(v_.log_thoughts), s), Thinking(s), {c}, false);
    writer_.Results({c}, {log}, false);
  }

  void Step() {
    Slots s = Fresh();
    const uint64_t roll = rng_.Next() % 100;
    if (roll < 24) {
      Read(s, false);
    } else if (roll < 30) {
      ParallelRead();
    } else if (roll < 43) {
      Search(s);
    } else if (roll < 58) {
      // An agent reads a file before it edits it.
      Slots e = FreshEdit();
      Read(e, false);
      Edit(e, false, rng_.Percent(15));
    } else if (roll < 78) {
      Test(s, false);
    } else if (roll < 93) {
      RunProgram(s, false);
    } else {
      Log(s);
    }
  }

  // An example session on files of the demo directories only.
  void FewShot() {
    Slots s = Fresh();
    const std::string title =
        "Fix the rounding of " + s.noun + " totals in the example project";
    Slots intro;
    intro.title = title;
    writer_.User(Fill(v_.demo_intro, intro), true);
    const size_t edits = rng_.Range(2, 4);
    for (size_t i = 0; i < edits; ++i) {
      Slots d = FreshDemo();
      Read(d, true);
      if (i == 0) RunProgram(d, true);
      Edit(d, true, false);
      bool seen = false;
      for (const std::string& p : out_->demo_only_paths) seen |= p == d.path;
      if (!seen) out_->demo_only_paths.push_back(d.path);
      Test(d, true);
    }
    writer_.Assistant("Example finished: the example's tests pass.",
                      "The example is complete.", {}, true);
  }

  void Final() {
    Slots s = Fresh();
    Call c;
    ShellCall(std::string(v_.final_test_command), &c);
    writer_.Assistant(Fill(Pick(v_.test_thoughts), s), Thinking(s), {c}, false);
    const std::string passed = Number(150, 900);
    const std::string summary = passed + " passed, " + Number(1, 9) +
                                " skipped in " + Number(10, 99) + "." +
                                Two(rng_.Range(0, 99)) + "s";
    const std::string last_line =
        v_.quiet_pytest ? summary : "======== " + summary + " ========";
    std::string output =
        std::string(rng_.Range(40, 120), '.') + "\n" + last_line;
    writer_.Results({c}, {output}, false);
    AddNeedle(&out_->needles, NeedleKind::kLastResult, Excerpt(last_line));
    Slots d = s;
    d.n = passed;
    const std::string decision = Fill(Pick(v_.decisions), d);
    writer_.Assistant(decision, Thinking(d), {}, false);
    AddNeedle(&out_->needles, NeedleKind::kFinalDecision,
              DistinctiveLine(decision));
  }

  const AgentHistoryOptions& options_;
  const Vocabulary& v_;
  SplitMix64 rng_;
  History* out_;
  Writer writer_;
  // (path, module) of the project's files.
  std::vector<std::pair<std::string, std::string>> read_files_, edit_files_;
  size_t next_edit_ = 0;
};

}  // namespace

History GenerateAgentHistory(const AgentHistoryOptions& options) {
  History out;
  Generator(options, &out).Run();
  char seed[32];
  std::snprintf(seed, sizeof seed, "%#llx",
                static_cast<unsigned long long>(options.seed));
  out.name = std::string(options.anthropic ? "anthropic" : "openai") +
             " seed " + seed + ", " + std::to_string(out.messages.size()) +
             " messages" + (options.few_shot ? ", few-shot" : "") +
             (options.context_preamble ? ", context first" : "");
  return out;
}

}  // namespace ctxkit::bench
