// --pretty: the program's one-line JSON output indented for a person.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_PRETTY_JSON_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_PRETTY_JSON_H_

#include <string>
#include <string_view>

namespace ctxkit::program {

// `text` with every line that holds a JSON object or array (it starts with
// '{' or '[') re-indented by two spaces a level, one member or element a
// line, and a space after each ':'; other lines (plain text, numbers) are
// copied unchanged. String contents are never touched. A line that is not
// valid JSON comes out re-indented as far as its brackets go and is never
// dropped: this only reformats what the program itself wrote.
std::string PrettyJsonLines(std::string_view text);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_PRETTY_JSON_H_
