// What an error line is, for every part of the compactor that looks for
// one (cutting a log around its errors, carrying errors into summaries).
//
// Thread safety: pure functions.

#ifndef CTXKIT_LIB_COMPACTOR_ERROR_LINES_H_
#define CTXKIT_LIB_COMPACTOR_ERROR_LINES_H_

#include <string_view>

namespace ctxkit::internal {

// Whether `line` reports an error: an exception line ("ValueError: bad",
// "pkg.FooException: x", "Error: x"), "error:" / "fatal:" / "panic:" after
// a word boundary, Rust's "error[E0308]", pytest's "FAILED ..." / "ERROR
// ..." / "... FAILED", "command not found", "No such file" (or
// directory), "Permission denied", "timed out", "Segmentation fault", "npm
// ERR!", an editor's
// "syntax error", a non-zero exit ("exit code 2", "exit status 1", "exited
// with code 127", "returned non-zero", "make: *** "). Not a numbered file-view
// line ("12:    except ValueError:", "12 | raise X"), and not code that handles
// errors ("except X:", "raise X(", "catch (", "throw "). A list bullet ("- ")
// is skipped.
bool IsErrorLine(std::string_view line);

// Whether `line` is the exception line that ends a Python traceback's
// frames: not indented, "Name: message" or a bare exception name. Meant for
// the first unindented line after "Traceback (most recent call last):".
bool IsExceptionLine(std::string_view line);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_ERROR_LINES_H_
