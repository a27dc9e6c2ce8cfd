// The command table: every command of the ctxkit program is one row here.

#include "examples/ctxkit/commands.h"

#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/c.h"
#include "ctxkit/version.h"
#include "examples/ctxkit/store_location.h"

namespace ctxkit::program {

const Flag kJsonFlag{"--json", "",
                     "print one JSON document (one line) instead of text"};

namespace {

std::string VersionLine() {
  // The library actually loaded, which is what --version is asked about
  // when a shared library and a program disagree.
  const std::string_view loaded = ctxkit_version_string();
  std::string line = "ctxkit " + std::string(loaded) + " (on-disk format " +
                     std::to_string(Store::kFormatVersion) + ")";
  if (loaded != CTXKIT_VERSION_STRING) {
    line += "; program built against " CTXKIT_VERSION_STRING;
  }
  return line;
}

}  // namespace

const Program& CtxkitProgram() {
  // Built once and never destroyed, so no destructor runs at exit.
  static const std::vector<Command>* const kCommands = new std::vector<Command>{
      {
          .name = "count",
          .summary = "count the tokens of a text or of a chat request",
          .args_usage = "[FILE|-]",
          .max_args = 1,
          .flags = {&kModelFlag, &kEncodingFlag, &kSpecialFlag, &kMessagesFlag,
                    &kChunkSizeFlag, &kJsonFlag},
          .description =
              "Prints the number of tokens of FILE (standard input for - or\n"
              "no FILE) in the encoding of --encoding (default o200k_base)\n"
              "or of the model --model names. Counts are exact: the ids are\n"
              "those of OpenAI's tiktoken. A model that is unknown, or whose\n"
              "tokenizer is not available (Llama 3), is counted with a\n"
              "heuristic estimate instead, said so on stderr; --json then\n"
              "shows \"method\":\"heuristic\".\n"
              "\n"
              "Input of any size is read in chunks and never held whole:\n"
              "a chunk ends only between an ASCII letter or digit and\n"
              "whitespace, where cutting cannot change the tokens, so the\n"
              "count equals that of the whole text. Chunks are counted on\n"
              "every core. Inputs over 100 MB show progress on stderr when\n"
              "it is a terminal.\n"
              "\n"
              "With --messages the input is a chat request as JSON: an\n"
              "array of messages or {\"messages\":[...],\"system\":...,\n"
              "\"tools\":[...]}, in OpenAI or Anthropic shape. The count\n"
              "includes the tokens the model's chat format adds (3 per\n"
              "message and 3 for the reply in OpenAI's layout); --json\n"
              "shows the count of each message.\n",
          .handler = RunCount,
          .exclusive = {{&kModelFlag, &kEncodingFlag}},
      },
      {
          .name = "demo",
          .summary = "write 1000 records to a store and read them back",
          .flags = {&kDemoDbFlag},
          .description =
              "Writes the records note:0001 .. note:1000 to the\n"
              "sub-database \"demo\" in one write transaction, reads some\n"
              "back with Get and a Cursor, and prints the figures of the\n"
              "store as 'store info' does. Without --db the store lives\n"
              "in a fresh directory under $TMPDIR (or /tmp) that is\n"
              "removed when the demo ends; the default store location is\n"
              "not touched. With --db the store is created if missing and\n"
              "kept; a second run rewrites the same records.\n",
          .handler = RunDemo,
      },
      {
          .name = "encodings",
          .summary = "list the built-in encodings",
          .description = "Prints the names that --encoding accepts, one per "
                         "line.\n",
          .handler = RunEncodings,
      },
      {
          .name = "store info",
          .summary = "show the figures and sub-databases of a store",
          .flags = {&kDbFlag, &kJsonFlag},
          .description =
              "Opens the store read-only and prints its path, on-disk\n"
              "format, map size and ceiling, page size, pages in use,\n"
              "last transaction id and readers, then every sub-database\n"
              "with its entries, pages and B-tree depth. It never creates\n"
              "anything: a missing store is a NOT_FOUND error (exit\n"
              "status 1).\n",
          .handler = RunStoreInfo,
      },
      {
          .name = "store init",
          .summary = "create a store if it is missing and show its figures",
          .flags = {&kDbFlag, &kJsonFlag},
          .description =
              "Opens the store read-write, creating it if it does not\n"
              "exist (and, for a default location, its missing parent\n"
              "directories), then prints its figures as 'store info'\n"
              "does. Commands that write create their store themselves;\n"
              "this one prepares and checks a location ahead of time.\n",
          .handler = RunStoreInit,
      },
      {
          .name = "tokenize",
          .summary = "print the token ids of a text",
          .args_usage = "[FILE|-]",
          .max_args = 1,
          .flags = {&kEncodingFlag, &kModelFlag, &kSpecialFlag, &kJsonlFlag,
                    &kChunkSizeFlag},
          .description =
              "Prints the token ids of FILE (standard input for - or no\n"
              "FILE) on one line, separated by spaces, in the encoding of\n"
              "--encoding (default o200k_base) or of --model. The ids are\n"
              "those of OpenAI's tiktoken. Special-token text such as\n"
              "<|endoftext|> is ordinary text unless --special all.\n"
              "\n"
              "With --jsonl every input line is a JSON string or an object\n"
              "with a string member \"text\" (other members are ignored),\n"
              "and every output line is the JSON array of that text's ids.\n",
          .handler = RunTokenize,
          .exclusive = {{&kEncodingFlag, &kModelFlag}},
      },
  };
  static const FlagNote kNotes[] = {{&kDbFlag, kStoreLocationHelp}};
  static const Program* const kProgram = new Program{
      .name = "ctxkit",
      .description =
          "ctxkit manages the context windows of LLM agents and keeps what\n"
          "they need to remember in one local store (an LMDB environment).",
      .commands = *kCommands,
      .notes = kNotes,
      .version = VersionLine(),
  };
  return *kProgram;
}

}  // namespace ctxkit::program
