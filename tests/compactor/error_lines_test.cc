// IsErrorLine and IsExceptionLine, read from error_lines.h: every kind of
// line the header lists as an error is one, and the lines it lists as not
// errors (file views, code that handles errors, warnings, a zero exit) are
// not. Both the log cutter and the summaries rely on this one definition,
// so a line misread here is lost from a cut log or invented in a summary.

#include "lib/compactor/error_lines.h"

#include <doctest/doctest.h>

#include <string_view>

namespace ctxkit::internal {
namespace {

TEST_CASE("exception lines are error lines") {
  for (std::string_view line :
       {"ValueError: bad value", "pkg.FooException: x", "Error: x",
        "django.core.exceptions.ImproperlyConfigured: Error: settings",
        "KeyError: 'name'", "AssertionError: assert 1 == 2"}) {
    CAPTURE(line);
    CHECK(IsErrorLine(line));
  }
}

TEST_CASE("error:, fatal: and panic: after a word boundary") {
  for (std::string_view line :
       {"src/parser.c:12:5: error: expected ';' before '}' token",
        "error: could not compile `demo` due to previous error",
        "fatal: not a git repository (or any of the parent directories)",
        "panic: runtime error: index out of range [3] with length 3",
        "ld: error: undefined symbol: main"}) {
    CAPTURE(line);
    CHECK(IsErrorLine(line));
  }
  // Part of a longer word, or no colon: not the word "error:".
  CHECK_FALSE(IsErrorLine("terror: a film review"));
  CHECK_FALSE(IsErrorLine("the errors are handled by the retry loop"));
}

TEST_CASE("compiler, test runner and shell failures") {
  for (std::string_view line : {
           "error[E0308]: mismatched types",
           "FAILED tests/test_time.py::test_round - AssertionError",
           "ERROR tests/test_db.py - ModuleNotFoundError",
           "tests/test_time.py::test_round FAILED",
           "bash: pytset: command not found",
           "cat: missing.txt: No such file or directory",
           "ls: cannot open directory '/root': Permission denied",
           "Connection to db.internal timed out",
           "Segmentation fault (core dumped)",
           "npm ERR! code ELIFECYCLE",
           "Your proposed edit has introduced new syntax error(s).",
           "Process finished with exit code 2",
           "Command failed with exit status 1",
           "container exited with code 127",
           "subprocess.CalledProcessError returned non-zero exit status 1",
           "make: *** [Makefile:12: all] Error 1",
       }) {
    CAPTURE(line);
    CHECK(IsErrorLine(line));
  }
}

TEST_CASE("a zero exit, a warning and plain output are not errors") {
  for (std::string_view line :
       {"Process finished with exit code 0", "exit status 0",
        "warning: unused variable `x`", "===== 12 passed in 0.31s =====",
        "Compiling demo v0.1.0", "All checks passed.", "", "ok"}) {
    CAPTURE(line);
    CHECK_FALSE(IsErrorLine(line));
  }
}

TEST_CASE("numbered file-view lines are not errors, whatever they say") {
  for (std::string_view line :
       {"12:    except ValueError:", "12 | raise X",
        "340:        raise TypeError(\"bad\")", "7:ValueError: in a file",
        "  88 |     error: this is source text"}) {
    CAPTURE(line);
    CHECK_FALSE(IsErrorLine(line));
  }
}

TEST_CASE("code that handles errors is not an error") {
  for (std::string_view line :
       {"except ValueError:", "    except (KeyError, IndexError):",
        "raise ValueError(\"bad\")", "    raise RuntimeError(msg)",
        "} catch (const std::exception& e) {", "catch (Exception e) {",
        "throw new Error(\"x\");"}) {
    CAPTURE(line);
    CHECK_FALSE(IsErrorLine(line));
  }
}

TEST_CASE("a list bullet is skipped before the line is judged") {
  CHECK(IsErrorLine("- ValueError: bad value"));
  CHECK(IsErrorLine("- error: could not compile"));
  CHECK_FALSE(IsErrorLine("- except ValueError:"));
  CHECK_FALSE(IsErrorLine("- all good"));
}

TEST_CASE("exception lines end a traceback: unindented Name: message") {
  for (std::string_view line :
       {"ValueError: bad value", "KeyError", "AssertionError",
        "pkg.mod.CustomError: x", "json.decoder.JSONDecodeError: Expecting"}) {
    CAPTURE(line);
    CHECK(IsExceptionLine(line));
  }
  for (std::string_view line :
       {"", "  File \"app.py\", line 3, in main", "    raise ValueError(x)",
        "\tValueError: indented", "Traceback (most recent call last):",
        "During handling of the above exception, another exception occurred:",
        "value = compute(x)"}) {
    CAPTURE(line);
    CHECK_FALSE(IsExceptionLine(line));
  }
}

}  // namespace
}  // namespace ctxkit::internal
