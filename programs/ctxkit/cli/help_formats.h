// The command table (cli.h's Program) in the formats other tools read: a
// bash completion script and a man page, so that both always list the
// commands and flags the program really has.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_HELP_FORMATS_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_HELP_FORMATS_H_

#include <ostream>

#include "programs/ctxkit/cli/cli.h"

namespace ctxkit::program {

// A bash script defining completion for `program.name`: command words,
// each command's flags, a flag's choices after it, and file names for
// flags whose value is a FILE or PATH and for positional arguments. Source
// it (`source <(ctxkit completion bash)`) or install it under
// /usr/share/bash-completion/completions/.
void PrintBashCompletion(const Program& program, std::ostream& out);

// A man page (section 1, troff -man): name, synopsis, description, every
// command with its usage, description and flags, the flag notes and the
// exit statuses. View it with `ctxkit man | man -l -`.
void PrintManPage(const Program& program, std::ostream& out);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_HELP_FORMATS_H_
