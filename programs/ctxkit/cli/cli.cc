#include "programs/ctxkit/cli/cli.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <variant>

#include "absl/strings/ascii.h"
#include "programs/ctxkit/cli/pretty_json.h"
#include "programs/ctxkit/host/text.h"

namespace ctxkit::program {

bool Args::Has(std::string_view name) const {
  return flags_.find(name) != flags_.end();
}

const std::string* Args::Value(std::string_view name) const {
  const auto it = flags_.find(name);
  return it == flags_.end() ? nullptr : &it->second;
}

bool Args::Set(std::string_view name, std::string value) {
  return flags_.emplace(std::string(name), std::move(value)).second;
}

namespace {

constexpr Flag kHelpFlag{"--help", "", "show this help and exit (also -h)"};
constexpr Flag kPrettyFlag{
    "--pretty", "", "indent JSON output for reading (one value per line)"};

// A usage error: the message for the first line, and the command or group
// whose usage follows it (both null: the program's).
struct UsageError {
  explicit UsageError(std::string message_in,
                      const Command* command_in = nullptr,
                      std::optional<std::string> group_in = std::nullopt)
      : message(std::move(message_in)),
        command(command_in),
        group(std::move(group_in)) {}

  std::string message;
  const Command* command;
  std::optional<std::string> group;
};

bool IsHelp(std::string_view arg) { return arg == "--help" || arg == "-h"; }

// An argument that looks like a flag; "-" alone conventionally means stdin
// and is an ordinary argument.
bool LooksLikeFlag(std::string_view arg) {
  return arg.size() > 1 && arg[0] == '-';
}

// "-5", "-0.5": no flag starts with a digit, and `--max-tokens -5` is
// better answered with "must be positive" than with "missing value".
bool LooksLikeNegativeNumber(std::string_view arg) {
  return arg.size() > 1 && arg[0] == '-' &&
         (absl::ascii_isdigit(arg[1]) ||
          (arg.size() > 2 && arg[1] == '.' && absl::ascii_isdigit(arg[2])));
}

std::string Quoted(std::string_view text) {
  return "'" + Printable(text) + "'";
}

// `n` in decimal, with its power of two when it is one ("1099511627776
// (2^40)"): limits are usually powers of two, which are hard to recognize.
std::string LimitText(uint64_t n) {
  std::string text = std::to_string(n);
  if (n >= 1024 && (n & (n - 1)) == 0) {
    text += " (2^" + std::to_string(std::countr_zero(n)) + ")";
  }
  return text;
}

// The numbers `flag` accepts, as the end of "... must be ".
std::string NumberRangeText(const Flag& flag) {
  const uint64_t lo = flag.min_value;
  const uint64_t hi = flag.max_value;
  if (lo == 1) {
    return hi == kNoNumberLimit
               ? "a positive integer"
               : "a positive integer, at most " + LimitText(hi);
  }
  if (hi == kNoNumberLimit) return "an integer, at least " + LimitText(lo);
  return "an integer from " + LimitText(lo) + " to " + LimitText(hi);
}

// Why `value` is not a number that `flag` (is_number) accepts, as the end of
// "invalid value 'V' for flag '--f' of 'c'"; empty when it is one.
std::string NumberProblem(const Flag& flag, std::string_view value) {
  std::string_view magnitude = value;
  if (flag.library_range && magnitude.starts_with('-')) {
    magnitude.remove_prefix(1);
  }
  uint64_t n = 0;
  const bool digits =
      !magnitude.empty() && magnitude.size() <= 19 &&
      std::all_of(magnitude.begin(), magnitude.end(),
                  [](char c) { return absl::ascii_isdigit(c); }) &&
      std::from_chars(magnitude.data(), magnitude.data() + magnitude.size(), n)
              .ec == std::errc();
  // The library judges a signed value whole, its sign included.
  if (digits && flag.library_range) return "";
  if (digits && n >= flag.min_value && n <= flag.max_value) return "";
  if (flag.min_value == 0 && flag.max_value == kNoNumberLimit &&
      flag.number_name.empty()) {
    return " (expected a number)";
  }
  const std::string_view what =
      flag.number_name.empty() ? "the value" : flag.number_name;
  return ": " + std::string(what) + " must be " + NumberRangeText(flag);
}

bool StartsWithWords(std::string_view name, std::string_view prefix) {
  return name.size() > prefix.size() && name.starts_with(prefix) &&
         name[prefix.size()] == ' ';
}

// The commands `group` stands for: every command whose name begins with the
// group's words.
std::vector<const Command*> GroupMembers(const Program& program,
                                         std::string_view group) {
  std::vector<const Command*> members;
  for (const Command& command : program.commands) {
    if (StartsWithWords(command.name, group)) members.push_back(&command);
  }
  return members;
}

// The words that may follow `path` ("" for the first word) in a command
// name, each once, in table order.
std::vector<std::string_view> NextWords(const Program& program,
                                        std::string_view path) {
  std::vector<std::string_view> words;
  for (const Command& command : program.commands) {
    std::string_view rest = command.name;
    if (!path.empty()) {
      if (!StartsWithWords(rest, path)) continue;
      rest.remove_prefix(path.size() + 1);
    }
    const std::string_view word = rest.substr(0, rest.find(' '));
    if (std::find(words.begin(), words.end(), word) == words.end()) {
      words.push_back(word);
    }
  }
  return words;
}

const Command* FindCommand(const Program& program, std::string_view name) {
  for (const Command& command : program.commands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::string UsageLine(const Program& program, const Command& command) {
  std::string line = "Usage: ";
  line.append(program.name).append(" ").append(command.name);
  for (const Flag* flag : command.flags) {
    const bool required =
        std::find(command.required.begin(), command.required.end(), flag) !=
        command.required.end();
    line.append(required ? " " : " [").append(flag->name);
    if (!flag->value_name.empty()) line.append(" ").append(flag->value_name);
    if (!required) line.append("]");
  }
  if (!command.args_usage.empty()) line.append(" ").append(command.args_usage);
  return line;
}

void PrintCommandList(std::span<const Command* const> commands,
                      std::ostream& os) {
  size_t width = 0;
  for (const Command* command : commands) {
    width = std::max(width, command->name.size());
  }
  for (const Command* command : commands) {
    os << "  " << command->name
       << std::string(width - command->name.size() + 3, ' ') << command->summary
       << "\n";
  }
}

void PrintNotes(const Program& program, const Command* command,
                std::ostream& os) {
  for (const FlagNote& note : program.notes) {
    if (command != nullptr &&
        std::find(command->flags.begin(), command->flags.end(), note.flag) ==
            command->flags.end()) {
      continue;
    }
    os << "\n" << note.text;
    if (!note.text.ends_with('\n')) os << "\n";
  }
}

void PrintProgramHelp(const Program& program, std::ostream& os) {
  os << "Usage: " << program.name << " <command> [flags] [arguments]\n"
     << "       " << program.name << " help [<command>]\n"
     << "       " << program.name << " --version\n\n"
     << program.description << "\n\nCommands:\n";
  std::vector<const Command*> all;
  for (const Command& command : program.commands) all.push_back(&command);
  PrintCommandList(all, os);
  PrintNotes(program, nullptr, os);
  os << "\nRun '" << program.name
     << " <command> --help' for the flags of a command.\n";
}

void PrintGroupHelp(const Program& program, std::string_view group,
                    std::ostream& os) {
  os << "Usage: " << program.name << " " << group
     << " <subcommand> [flags] [arguments]\n\nSubcommands:\n";
  PrintCommandList(GroupMembers(program, group), os);
  os << "\nRun '" << program.name << " " << group
     << " <subcommand> --help' for the flags of a subcommand.\n";
}

void PrintCommandHelp(const Program& program, const Command& command,
                      std::ostream& os) {
  os << UsageLine(program, command) << "\n\n";
  std::string summary(command.summary);
  if (!summary.empty()) {
    summary[0] = absl::ascii_toupper(summary[0]);
  }
  os << summary << ".\n";
  if (!command.description.empty()) {
    os << "\n" << command.description;
    if (!command.description.ends_with('\n')) os << "\n";
  }
  std::vector<const Flag*> flags = command.flags;
  flags.push_back(&kPrettyFlag);
  flags.push_back(&kHelpFlag);
  size_t width = 0;
  for (const Flag* flag : flags) {
    width = std::max(
        width,
        flag->name.size() +
            (flag->value_name.empty() ? 0 : flag->value_name.size() + 1));
  }
  os << "\nFlags:\n";
  for (const Flag* flag : flags) {
    std::string spelled(flag->name);
    if (!flag->value_name.empty()) spelled.append(" ").append(flag->value_name);
    os << "  " << spelled << std::string(width - spelled.size() + 3, ' ')
       << flag->help << "\n";
  }
  PrintNotes(program, &command, os);
}

// What the words at the front of the command line name.
struct Resolved {
  const Command* command = nullptr;  // a command, or
  std::string group;                 // a group (when command is null)
  size_t consumed = 0;               // words used
};

// Follows `words` through the table as far as they name a group. Returns the
// command (or the group, if the words end there) or a usage error.
std::variant<Resolved, UsageError> Resolve(
    const Program& program, std::span<const std::string_view> words) {
  Resolved resolved;
  std::string path;
  for (const std::string_view word : words) {
    if (LooksLikeFlag(word) && !path.empty()) break;  // flags of the group
    std::string candidate =
        path.empty() ? std::string(word) : path + " " + std::string(word);
    ++resolved.consumed;
    if (const Command* command = FindCommand(program, candidate)) {
      resolved.command = command;
      return resolved;
    }
    if (GroupMembers(program, candidate).empty()) {
      const std::vector<std::string_view> words_here = NextWords(program, path);
      return UsageError(
          "unknown command " + Quoted(candidate) + DidYouMean(word, words_here),
          nullptr,
          path.empty() ? std::nullopt : std::optional<std::string>(path));
    }
    path = std::move(candidate);
  }
  resolved.group = path;
  return resolved;
}

// Parses the arguments after the command's name into `args`.
std::optional<UsageError> ParseCommandArgs(
    const Command& command, std::span<const std::string_view> argv,
    Args& args) {
  const std::string where = Quoted(command.name);
  const auto error = [&](std::string message) {
    return UsageError(std::move(message), &command);
  };
  int positional = 0;
  bool flags_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string_view arg = argv[i];
    if (!flags_done && arg == "--") {
      flags_done = true;
      continue;
    }
    if (flags_done || !LooksLikeFlag(arg)) {
      if (command.max_args != kUnlimitedArgs &&
          positional >= command.max_args) {
        return error("unexpected argument " + Quoted(arg) + " for " + where);
      }
      ++positional;
      args.AddPositional(std::string(arg));
      continue;
    }
    const size_t equals = arg.find('=');
    const std::string_view name = arg.substr(0, equals);
    const auto it =
        std::find_if(command.flags.begin(), command.flags.end(),
                     [&](const Flag* flag) { return flag->name == name; });
    if (it == command.flags.end() && name == kPrettyFlag.name) {
      if (equals != std::string_view::npos) {
        return error("flag " + Quoted(name) + " of " + where +
                     " takes no value");
      }
      if (!args.Set(name, "")) {
        return error("flag " + Quoted(name) + " given twice for " + where);
      }
      continue;
    }
    if (it == command.flags.end()) {
      std::vector<std::string_view> names = {kHelpFlag.name, kPrettyFlag.name};
      for (const Flag* flag : command.flags) names.push_back(flag->name);
      return error("unknown flag " + Quoted(name) + " for " + where +
                   DidYouMean(name, names));
    }
    const Flag& flag = **it;
    std::string value;
    if (flag.value_name.empty()) {
      if (equals != std::string_view::npos) {
        return error("flag " + Quoted(name) + " of " + where +
                     " takes no value");
      }
    } else if (equals != std::string_view::npos) {
      value = std::string(arg.substr(equals + 1));
      if (value.empty()) {
        return error("empty value for flag " + Quoted(name) + " of " + where);
      }
    } else {
      // A following flag is not taken as the value, so that `--db --json`
      // is reported rather than creating a store named "--json"; such a
      // value can still be given as --db=--json.
      if (i + 1 >= argv.size() || (LooksLikeFlag(argv[i + 1]) &&
                                   !LooksLikeNegativeNumber(argv[i + 1]))) {
        return error("missing value for flag " + Quoted(name) + " of " + where);
      }
      value = std::string(argv[++i]);
      if (value.empty()) {
        return error("empty value for flag " + Quoted(name) + " of " + where);
      }
    }
    if (!flag.choices.empty() &&
        std::find(flag.choices.begin(), flag.choices.end(), value) ==
            flag.choices.end()) {
      std::string choices;
      for (const std::string_view choice : flag.choices) {
        choices.append(choices.empty() ? "" : ", ").append(choice);
      }
      return error("invalid value " + Quoted(value) + " for flag " +
                   Quoted(name) + " of " + where + " (expected one of " +
                   choices + ")");
    }
    if (flag.is_number) {
      if (const std::string problem = NumberProblem(flag, value);
          !problem.empty()) {
        return error("invalid value " + Quoted(value) + " for flag " +
                     Quoted(name) + " of " + where + problem);
      }
    }
    if (!args.Set(name, std::move(value))) {
      return error("flag " + Quoted(name) + " given twice for " + where);
    }
  }
  for (const std::vector<const Flag*>& group : command.exclusive) {
    const Flag* given = nullptr;
    for (const Flag* flag : group) {
      if (!args.Has(flag->name)) continue;
      if (given != nullptr) {
        return error("flags " + Quoted(given->name) + " and " +
                     Quoted(flag->name) + " of " + where +
                     " exclude each other");
      }
      given = flag;
    }
  }
  for (const Flag* flag : command.required) {
    if (!args.Has(flag->name)) {
      return error("missing flag " + Quoted(flag->name) + " for " + where);
    }
  }
  if (positional < command.min_args) {
    return error("missing argument " + std::string(command.args_usage) +
                 " for " + where);
  }
  // Last, as the checks may read any other flag.
  for (const Flag* flag : command.flags) {
    const std::string* value = args.Value(flag->name);
    if (flag->check == nullptr || value == nullptr) continue;
    if (const std::string problem = flag->check(*value, command, args);
        !problem.empty()) {
      return error("invalid value " + Quoted(*value) + " for flag " +
                   Quoted(flag->name) + " of " + where + ": " + problem);
    }
  }
  return std::nullopt;
}

int ReportUsageError(const Program& program, const UsageError& error,
                     std::ostream& err) {
  err << program.name << ": " << error.message << "\n";
  if (error.command != nullptr) {
    err << UsageLine(program, *error.command) << "\nRun '" << program.name
        << " " << error.command->name << " --help' for more.\n";
  } else if (error.group.has_value()) {
    PrintGroupHelp(program, *error.group, err);
  } else {
    // One line to act on, not the whole command list: the mistake is
    // usually a typo, which the message's suggestion answers.
    err << "Usage: " << program.name << " <command> [flags] [arguments]\n"
        << "Run '" << program.name << " --help' for the commands.\n";
  }
  return kExitUsage;
}

// `help [words...]`: the help of what the words name, on `out`.
int RunHelp(const Program& program, std::span<const std::string_view> words,
            std::ostream& out, std::ostream& err) {
  if (words.empty()) {
    PrintProgramHelp(program, out);
    return kExitOk;
  }
  auto resolved = Resolve(program, words);
  if (auto* error = std::get_if<UsageError>(&resolved)) {
    return ReportUsageError(program, *error, err);
  }
  const Resolved& found = std::get<Resolved>(resolved);
  if (found.consumed < words.size()) {
    return ReportUsageError(
        program,
        UsageError("unexpected argument " + Quoted(words[found.consumed]) +
                   " for 'help'"),
        err);
  }
  if (found.command != nullptr) {
    PrintCommandHelp(program, *found.command, out);
  } else {
    PrintGroupHelp(program, found.group, out);
  }
  return kExitOk;
}

}  // namespace

int Run(const Program& program, std::span<const std::string_view> argv,
        std::ostream& out, std::ostream& err) {
  if (argv.empty()) {
    // Conventional for a program that does nothing useful without a command:
    // the usage, where a script's error log will show it, and exit 2.
    PrintProgramHelp(program, err);
    return kExitUsage;
  }
  const std::string_view first = argv[0];
  const bool version = first == "--version" || first == "-V";
  if (IsHelp(first) || version) {
    if (argv.size() > 1) {
      return ReportUsageError(
          program,
          UsageError("unexpected argument " + Quoted(argv[1]) + " after " +
                     Quoted(first)),
          err);
    }
    if (version) {
      out << program.version << "\n";
    } else {
      PrintProgramHelp(program, out);
    }
    return kExitOk;
  }
  if (first == "help") return RunHelp(program, argv.subspan(1), out, err);
  if (LooksLikeFlag(first)) {
    static constexpr std::string_view kProgramFlags[] = {"--help", "--version"};
    return ReportUsageError(program,
                            UsageError("unknown flag " + Quoted(first) +
                                       DidYouMean(first, kProgramFlags)),
                            err);
  }

  auto resolved = Resolve(program, argv);
  if (auto* error = std::get_if<UsageError>(&resolved)) {
    return ReportUsageError(program, *error, err);
  }
  const Resolved& found = std::get<Resolved>(resolved);
  const std::span<const std::string_view> rest = argv.subspan(found.consumed);
  if (found.command == nullptr) {
    // A group: only --help makes sense before the subcommand.
    if (!rest.empty() && IsHelp(rest[0])) {
      PrintGroupHelp(program, found.group, out);
      return kExitOk;
    }
    UsageError error(rest.empty()
                         ? Quoted(found.group) + " needs a subcommand"
                         : "expected a subcommand of " + Quoted(found.group) +
                               ", got " + Quoted(rest[0]),
                     nullptr, found.group);
    return ReportUsageError(program, error, err);
  }

  const Command& command = *found.command;
  // --help wins over every other mistake on the line: whoever asks for help
  // is usually still working out how to write that line.
  for (const std::string_view arg : rest) {
    if (arg == "--") break;
    if (IsHelp(arg)) {
      PrintCommandHelp(program, command, out);
      return kExitOk;
    }
  }
  Args args;
  if (auto error = ParseCommandArgs(command, rest, args)) {
    return ReportUsageError(program, *error, err);
  }
  Status status;
  if (args.Has(kPrettyFlag.name)) {
    // Held until the command is done: pretty output is for a person
    // reading it, not for a stream too large to hold.
    std::ostringstream buffer;
    status = command.handler(args, buffer);
    out << PrettyJsonLines(buffer.str());
  } else {
    status = command.handler(args, out);
  }
  if (!status.ok()) {
    out.flush();
    err << program.name << ": " << status.ToString() << "\n";
    return status.code() == command.partial_result_code ? kExitPartial
                                                        : kExitFailure;
  }
  return kExitOk;
}

}  // namespace ctxkit::program
