// `compact`: fits a chat history into a token budget with the library's
// compactor, through the C API's JSON entry point (ctxkit_compactor_compact),
// which is what FFI users call and which tells an infeasible budget apart
// (CTXKIT_OUT_OF_RANGE with the best-effort result) without the program
// having to parse the response.
//
// The input is a history (an array of messages) or a whole request object
// as ctxkit_compactor_compact takes it. The flags become request members
// written before the input's own: ctxkit's JSON readers use the first
// occurrence of a key, so a flag overrides the same member in the file.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "ctxkit/c.h"
#include "ctxkit/compactor.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/host/files.h"
#include "programs/ctxkit/host/json_text.h"

namespace ctxkit::program {

namespace {

constexpr std::string_view kStrategies[] = {"smart", "summarize", "remove_old",
                                            "compress_similar"};
constexpr std::string_view kFormats[] = {"auto", "openai", "anthropic",
                                         "plain"};

// Larger inputs are refused before they are read whole.
constexpr size_t kMaxInputBytes = size_t{1} << 30;

// Reads all of `fd` (named `name` in errors), at most kMaxInputBytes.
StatusOr<std::string> ReadAll(int fd, const std::string& name) {
  std::string data;
  constexpr size_t kBlock = size_t{1} << 20;
  for (;;) {
    if (data.size() > kMaxInputBytes) {
      return Status(StatusCode::kInvalidArgument,
                    name + " is larger than 1 GiB");
    }
    const size_t old = data.size();
    data.resize(old + kBlock);
    ssize_t n;
    do {
      n = ::read(fd, data.data() + old, kBlock);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      const int error = errno;
      return ErrnoStatus(error, "cannot read " + name);
    }
    data.resize(old + static_cast<size_t>(n));
    if (n == 0) return data;
  }
}

// The contents of FILE, or of standard input for "-".
StatusOr<std::string> ReadInput(const std::string& path) {
  if (path == "-") return ReadAll(STDIN_FILENO, "standard input");
  const std::string name = "'" + path + "'";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open " + name);
  auto data = ReadAll(fd, name);
  ::close(fd);
  return data;
}

// The first byte of `json` that is not JSON whitespace, or npos.
size_t FirstNonSpace(std::string_view json, size_t from = 0) {
  for (size_t i = from; i < json.size(); ++i) {
    const char c = json[i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return i;
  }
  return std::string_view::npos;
}

// The ranges of CompactionOptions (ctxkit/compactor.h), checked here too so
// that a bad flag is a usage error naming the flag, not a runtime error
// naming a request member the user never wrote.
constexpr uint64_t kMaxBudget =
    static_cast<uint64_t>(ctxkit::kCompactionMaxTokensLimit);
constexpr uint64_t kMaxRecentWindow =
    static_cast<uint64_t>(ctxkit::kCompactionCountLimit);
constexpr double kMinTargetRatio = ctxkit::kCompactionMinTargetRatio;
constexpr double kMaxTargetRatio = ctxkit::kCompactionMaxTargetRatio;

// The value of --target-ratio, when `text` is a plain decimal number
// ("0.3", "1e-1"; not "+0.3", ".3", "3.", "inf").
std::optional<double> ParseRatio(std::string_view text) {
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || text.empty() || text[0] == '+' ||
      text[0] == '.' || text.back() == '.') {
    return std::nullopt;
  }
  return value;
}

std::string CheckRatio(std::string_view value, const Command& /*command*/,
                       const Args& /*args*/) {
  const std::optional<double> ratio = ParseRatio(value);
  if (ratio.has_value() && *ratio >= kMinTargetRatio &&
      *ratio <= kMaxTargetRatio) {
    return "";
  }
  return "the target ratio must be a number from 0.1 to 0.9";
}

// The checked value of --target-ratio as JSON: written anew, since
// from_chars accepts spellings JSON does not ("00.5").
std::string RatioJson(std::string_view text) {
  char buffer[32];
  const auto end =
      std::to_chars(buffer, buffer + sizeof buffer, ParseRatio(text).value())
          .ptr;
  return std::string(buffer, end);
}

// The request members the flags give, comma-separated ("" for none).
StatusOr<std::string> FlagMembers(const Args& args) {
  std::string members;
  auto add = [&members](std::string_view key, std::string_view json) {
    if (!members.empty()) members += ',';
    members += '"';
    members += key;
    members += "\":";
    members += json;
  };
  if (const std::string* v = args.Value("--max-tokens")) add("max_tokens", *v);
  if (const std::string* v = args.Value("--recent-window")) {
    add("recent_window", *v);
  }
  if (const std::string* v = args.Value("--strategy")) {
    add("strategy", JsonQuote(*v));
  }
  if (const std::string* v = args.Value("--model")) add("model", JsonQuote(*v));
  // The library refuses an unknown model too; --estimate is the explicit ask.
  if (args.Has(kEstimateFlag.name)) add("estimate_unknown_model", "true");
  if (const std::string* v = args.Value("--format")) {
    add("format", JsonQuote(*v));
  }
  if (const std::string* v = args.Value("--target-ratio")) {
    add("target_ratio", RatioJson(*v));
  }
  if (args.Has("--explain")) add("explain", "true");
  if (const std::string* v = args.Value("--rules")) {
    auto rules = ReadInput(*v);
    if (!rules.ok()) return rules.status();
    // The library checks it; only emptiness would break the splice.
    if (FirstNonSpace(*rules) == std::string_view::npos) {
      return Status(StatusCode::kInvalidArgument,
                    "rules: '" + *v + "' is empty; it must hold a JSON array");
    }
    add("rules", *rules);
  }
  return members;
}

// The request: `input` (a history array or a request object) with the
// flags' members first. Anything else is passed on unchanged for the
// library to reject in its own words.
std::string BuildRequest(std::string_view input, std::string_view members) {
  const size_t start = FirstNonSpace(input);
  if (start == std::string_view::npos) return std::string(input);
  std::string request;
  request.reserve(input.size() + members.size() + 16);
  if (input[start] == '[') {
    request += '{';
    request += members;
    if (!members.empty()) request += ',';
    request += "\"messages\":";
    request += input;
    request += '}';
    return request;
  }
  if (input[start] != '{' || members.empty()) return std::string(input);
  request += '{';
  request += members;
  const size_t next = FirstNonSpace(input, start + 1);
  if (next != std::string_view::npos && input[next] != '}') request += ',';
  request += input.substr(start + 1);
  return request;
}

struct CompactorFree {
  void operator()(ctxkit_compactor* c) const { ctxkit_compactor_free(c); }
};
struct CFree {
  void operator()(char* p) const { ctxkit_free(p); }
};

}  // namespace

const Flag kCompactMaxTokensFlag{
    .name = "--max-tokens",
    .value_name = "N",
    .help = "the token budget, 1..2^40 (default 100000)",
    .is_number = true,
    .min_value = 1,
    .max_value = kMaxBudget,
    .number_name = "the token budget"};
const Flag kCompactStrategyFlag{"--strategy", "S",
                                "smart (default), summarize, remove_old or "
                                "compress_similar",
                                kStrategies};
const Flag kCompactModelFlag{.name = "--model",
                             .value_name = "M",
                             .help = "count tokens with this model's tokenizer",
                             .check = CheckModelFlag};
const Flag kCompactExplainFlag{"--explain", "",
                               "add each message's tier, rule and fate "
                               "(\"decisions\")"};
const Flag kCompactFormatFlag{
    "--format", "F", "auto (default), openai, anthropic or plain", kFormats};
const Flag kCompactRecentWindowFlag{
    .name = "--recent-window",
    .value_name = "N",
    .help = "keep the last N messages first, 0..2^31 (default 10)",
    .is_number = true,
    .max_value = kMaxRecentWindow,
    .number_name = "the recent window"};
const Flag kCompactTargetRatioFlag{.name = "--target-ratio",
                                   .value_name = "R",
                                   .help =
                                       "also aim at R (0.1..0.9) of the "
                                       "history's tokens",
                                   .check = CheckRatio};
const Flag kCompactRulesFlag{"--rules", "FILE",
                             "extra classification rules: a JSON array, "
                             "tried before the built-in ones"};
Status RunCompact(const Args& args, std::ostream& out) {
  auto members = FlagMembers(args);
  if (!members.ok()) return members.status();
  // No FILE reads standard input, as `count` does; at a terminal say so,
  // rather than seem to hang.
  const std::string path =
      args.positional().empty() ? "-" : args.positional().front();
  if (path == "-" && ::isatty(STDIN_FILENO) == 1) {
    std::cerr << "ctxkit compact: reading the chat history from standard "
                 "input (end it with Ctrl-D)\n";
  }
  auto input = ReadInput(path);
  if (!input.ok()) return input.status();
  const std::string request = BuildRequest(*input, *members);

  ctxkit_compactor* raw = nullptr;
  char* error = nullptr;
  if (int rc = ctxkit_compactor_create(nullptr, nullptr, &raw, &error);
      rc != CTXKIT_OK) {
    std::unique_ptr<char, CFree> message(error);
    return Status(static_cast<StatusCode>(rc), error ? error : "");
  }
  std::unique_ptr<ctxkit_compactor, CompactorFree> compactor(raw);
  char* json = nullptr;
  size_t json_len = 0;
  const int rc =
      ctxkit_compactor_compact(compactor.get(), request.data(), request.size(),
                               &json, &json_len, &error);
  std::unique_ptr<char, CFree> response(json);
  std::unique_ptr<char, CFree> message(error);
  if (response != nullptr) {
    // Printed also when the budget was not met: the best-effort result.
    out << std::string_view(response.get(), json_len) << "\n";
  }
  if (rc == CTXKIT_OK) return Status();
  return Status(static_cast<StatusCode>(rc),
                message != nullptr ? message.get() : "compaction failed");
}

}  // namespace ctxkit::program
