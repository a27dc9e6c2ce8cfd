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
