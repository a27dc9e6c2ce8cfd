// The ctxkit program's command line: a table of commands, a small strict
// parser and the help text generated from that table.
//
// Every command is one row of a table (see commands.cc). Nested commands such
// as `store info` are rows whose name has several words; the words before the
// last one form a group (`store`) that exists only because some row starts
// with it. Adding a command therefore means adding a row and a handler;
// parsing, `--help`, `ctxkit help ...` and the usage errors follow from it.
//
// Exit codes: 0 success, 1 runtime error (a handler returned a non-OK Status),
// 2 usage error (the command line itself was wrong), 3 partial result (the
// command printed its result, which falls short of what was asked: see
// Command::partial_result_code). Nothing else.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_CLI_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_CLI_H_

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/status.h"

namespace ctxkit::program {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitPartial = 3;

// Command::max_args for a command that takes any number of arguments.
inline constexpr int kUnlimitedArgs = -1;

// Flag::max_value when only the 19 digits limit the number.
inline constexpr uint64_t kNoNumberLimit = UINT64_MAX;

class Args;
struct Command;

// Checks the value `value` of a flag of `command` once the whole line is
// parsed, so that the verdict may depend on other flags in `args`. Returns
// why the value is wrong (the end of a usage error that begins "invalid
// value 'V' for flag '--f' of 'c': "), or "" when it is right.
using FlagCheck = std::string (*)(std::string_view value,
                                  const Command& command, const Args& args);

// A flag a command may accept. Flags are long options only: `--name VALUE`,
// `--name=VALUE`, or `--name` for a switch (empty value_name). A value that
// looks like a negative number ("-5", "-0.5") is taken as the value, not as
// a flag, so that it is reported as a bad value rather than a missing one.
struct Flag {
  std::string_view name;        // "--db"
  std::string_view value_name;  // "PATH"; empty for a switch
  std::string_view help;        // one line for the command's --help
  // When not empty, the only values the flag accepts; any other value is a
  // usage error listing them.
  std::span<const std::string_view> choices = {};
  // The value must be a decimal number (digits only, fits in 64 bits; see
  // library_range for a sign).
  bool is_number = false;
  // With is_number: the range of values accepted, inclusive. A flag that
  // sets a range or number_name reports every bad value (not a number, too
  // long, out of range) as "NUMBER_NAME must be <the range>" rather than
  // "(expected a number)".
  uint64_t min_value = 0;
  uint64_t max_value = kNoNumberLimit;
  // With is_number: what the number is, for its error ("the token budget").
  std::string_view number_name = {};
  // A further check of the value; null: none. Runs after the checks above.
  FlagCheck check = nullptr;
  // With is_number and no range of its own: the library checks the range,
  // so a negative integer ("-1") is accepted too and reaches it (read it
  // with NumberFlag), and its message, naming the field and the range,
  // shows rather than a usage error that says neither.
  bool library_range = false;
};

// The flags and positional arguments of one parsed command line.
class Args {
 public:
  // Whether flag `name` ("--json") was given.
  bool Has(std::string_view name) const;
  // The value of flag `name`, or nullptr when it was not given. A switch
  // that was given has the empty value. Valid as long as this Args lives.
  const std::string* Value(std::string_view name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Used by the parser; returns false if `name` was already set.
  bool Set(std::string_view name, std::string value);
  void AddPositional(std::string value) {
    positional_.push_back(std::move(value));
  }

 private:
  std::map<std::string, std::string, std::less<>> flags_;
  std::vector<std::string> positional_;
};

// Runs a command. Output goes to `out`; a non-OK Status is reported by the
// caller as `ctxkit: CODE: message` on stderr with exit code 1.
using Handler = Status (*)(const Args& args, std::ostream& out);

// One row of the command table.
struct Command {
  // Words separated by single spaces: "demo", "store info". A name is
  // either a command or the group of longer names, never both.
  std::string_view name = {};
  // One line, lower case, no final period; shown in command lists.
  std::string_view summary = {};
  // Synopsis of the positional arguments after the flags ("" for none,
  // "TEXT...", "[FILE]"); the flags part of the usage line is generated.
  std::string_view args_usage = {};
  int min_args = 0;
  int max_args = 0;  // kUnlimitedArgs for no limit
  // The flags it accepts, besides --help and --pretty, which every command
  // accepts.
  std::vector<const Flag*> flags = {};
  // Paragraphs shown by `--help` after the usage line; may be empty.
  std::string_view description = {};
  Handler handler = nullptr;
  // Flags that must be given: a line without one is a usage error (exit 2)
  // naming it. List them in `flags` too.
  std::vector<const Flag*> required = {};
  // Groups of flags of which at most one may be given (e.g. --model and
  // --encoding); giving two of one group is a usage error.
  std::vector<std::vector<const Flag*>> exclusive = {};
  // A status code that the handler returns after printing its whole result
  // when that result falls short of what was asked (`compact`: a budget it
  // could not meet). It is reported on stderr like an error but exits with
  // kExitPartial, so that scripts can tell it from a failure. kOk: none.
  StatusCode partial_result_code = StatusCode::kOk;
};

// A paragraph appended to the help of every command that accepts this flag,
// and to the program's help (for example where --db defaults to).
struct FlagNote {
  const Flag* flag;
  std::string_view text;
};

// Everything the generic parts need to know about the program.
struct Program {
  std::string_view name = {};         // "ctxkit"
  std::string_view description = {};  // shown under the usage lines
  std::span<const Command> commands = {};
  std::span<const FlagNote> notes = {};
  // What `--version` prints (without the newline).
  std::string version = {};
};

// Parses `argv` (without the program name), runs the command and returns the
// exit code. Usage errors and runtime errors are written to `err`; help,
// version and command output to `out`. Throws only what the handlers or the
// standard library throw (std::bad_alloc); main catches it.
int Run(const Program& program, std::span<const std::string_view> argv,
        std::ostream& out, std::ostream& err);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_CLI_H_
