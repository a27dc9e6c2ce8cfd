// `completion` and `man`: the program's own command table, printed for
// bash and for man(1).

#include <ostream>
#include <string>

#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/help_formats.h"

namespace ctxkit::program {

Status RunCompletion(const Args& args, std::ostream& out) {
  const std::string& shell = args.positional().at(0);  // min_args = 1
  if (shell != "bash") {
    return Status(StatusCode::kInvalidArgument,
                  "no completion for shell '" + shell +
                      "': only bash is generated (zsh can load it after "
                      "'autoload bashcompinit && bashcompinit')");
  }
  PrintBashCompletion(CtxkitProgram(), out);
  return Status::Ok();
}

Status RunMan(const Args& args, std::ostream& out) {
  (void)args;
  PrintManPage(CtxkitProgram(), out);
  return Status::Ok();
}

}  // namespace ctxkit::program
