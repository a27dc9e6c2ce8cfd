// The ctxkit program's commands: the table (commands.cc) and the handlers
// it points to, one file per command family.

#ifndef CTXKIT_EXAMPLES_CTXKIT_COMMANDS_H_
#define CTXKIT_EXAMPLES_CTXKIT_COMMANDS_H_

#include <ostream>

#include "ctxkit/status.h"
#include "ctxkit/store.h"
#include "examples/ctxkit/cli.h"

namespace ctxkit::program {

// The program: its name, help text, version line and command table.
const Program& CtxkitProgram();

// --json, for commands that can print a JSON document instead of text.
extern const Flag kJsonFlag;

// store_commands.cc
Status RunStoreInfo(const Args& args, std::ostream& out);
Status RunStoreInit(const Args& args, std::ostream& out);
// The text of `store info` for `info`.
void PrintStoreInfoText(const StoreInfo& info, std::ostream& out);

// demo.cc
extern const Flag kDemoDbFlag;
Status RunDemo(const Args& args, std::ostream& out);

// tokenizer_commands.cc
extern const Flag kModelFlag;
extern const Flag kEncodingFlag;
extern const Flag kSpecialFlag;
extern const Flag kMessagesFlag;
extern const Flag kChunkSizeFlag;
extern const Flag kJsonlFlag;
Status RunCount(const Args& args, std::ostream& out);
Status RunTokenize(const Args& args, std::ostream& out);
Status RunEncodings(const Args& args, std::ostream& out);

}  // namespace ctxkit::program

#endif  // CTXKIT_EXAMPLES_CTXKIT_COMMANDS_H_
