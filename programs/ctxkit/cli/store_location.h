// Where the ctxkit program's store lives: --db, or a default taken from the
// environment, and opening the store there.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_STORE_LOCATION_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_STORE_LOCATION_H_

#include <memory>
#include <string>
#include <string_view>

#include "ctxkit/status.h"
#include "ctxkit/store.h"
#include "programs/ctxkit/cli/cli.h"

namespace ctxkit::program {

// The --db flag, shared by every command that uses a store.
extern const Flag kDbFlag;
// The help paragraph explaining where --db defaults to.
extern const std::string_view kStoreLocationHelp;

struct StoreLocation {
  enum class Source {
    kFlag,         // --db PATH
    kCtxkitDb,     // $CTXKIT_DB
    kXdgDataHome,  // $XDG_DATA_HOME/ctxkit
    kHome,         // $HOME/.local/share/ctxkit
  };

  std::string path;
  Source source = Source::kFlag;
  // For kXdgDataHome and kHome: the directory that must already exist and
  // below which the store's missing parents may be created ("/" for
  // XDG_DATA_HOME, which the XDG spec says to create when missing; $HOME for
  // kHome, because a missing home directory is a misconfiguration to report,
  // not to paper over).
  std::string creatable_below;

  // True for the defaults whose parents we create; false for a path the user
  // spelled out (--db, $CTXKIT_DB), so that a mistyped parent is reported
  // rather than silently created.
  bool is_default() const {
    return source == Source::kXdgDataHome || source == Source::kHome;
  }
};

// The store location for `args`: --db if given, else $CTXKIT_DB if set and
// non-empty, else $XDG_DATA_HOME/ctxkit if XDG_DATA_HOME is an absolute path,
// else $HOME/.local/share/ctxkit. FAILED_PRECONDITION if none applies.
StatusOr<StoreLocation> ResolveStoreLocation(const Args& args);

// Opens the store read-only: never creates anything; NOT_FOUND if it does not
// exist. Errors name where the path came from when it was not --db.
StatusOr<std::unique_ptr<Store>> OpenStoreForReading(
    const StoreLocation& location);

// Whether opening a store read-write may create it. Only commands that add
// records create a store; the others (listing, getting, updating, deleting,
// statistics) refuse a missing one, so that a mistyped --db is reported
// instead of answered from a new, empty store.
enum class StoreCreation {
  kNever,      // NOT_FOUND as OpenStoreForReading when there is no store
  kIfMissing,  // create it, and for a default location its parents
};

// Opens the store read-write (the parts register sub-databases and flush
// statistics as they open, so even commands that only read need it). With
// kIfMissing a missing store is created and, for a default location, its
// missing parent directories first (mode 0700). A directory that holds other
// files but no store is refused (FAILED_PRECONDITION), never made a store.
//
// `pages` is how much of the store the open checks (StoreOptions::
// check_every_page): every page for the servers, which stay up and would
// otherwise die on the first read of a damaged page deep in a tree.
enum class PageCheck { kRoots, kEveryPage };
StatusOr<std::unique_ptr<Store>> OpenStoreForWriting(
    const StoreLocation& location,
    StoreCreation creation = StoreCreation::kIfMissing,
    PageCheck pages = PageCheck::kRoots);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_STORE_LOCATION_H_
