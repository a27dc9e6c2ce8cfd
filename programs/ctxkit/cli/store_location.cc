#include "programs/ctxkit/cli/store_location.h"

#include <cstdlib>
#include <string_view>
#include <utility>

#include "programs/ctxkit/host/files.h"

namespace ctxkit::program {

const Flag kDbFlag{"--db", "PATH",
                   "the store directory (default: see 'Store location')"};

const std::string_view kStoreLocationHelp =
    "Store location, when --db is not given:\n"
    "  $CTXKIT_DB                  if set and not empty, used as given;\n"
    "  $XDG_DATA_HOME/ctxkit       else, if XDG_DATA_HOME is absolute;\n"
    "  $HOME/.local/share/ctxkit   else.\n"
    "Commands that add records create the store when it is missing, and the\n"
    "missing parents of the last two (mode 0700), never those of --db or\n"
    "$CTXKIT_DB: a mistyped path is reported. No command makes a store of a\n"
    "directory that holds other files. 'store info' never creates anything.\n";

namespace {

// The variable's value, or empty when it is unset.
std::string_view Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string_view() : std::string_view(value);
}

std::string_view SourceName(StoreLocation::Source source) {
  switch (source) {
    case StoreLocation::Source::kFlag:
      return "--db";
    case StoreLocation::Source::kCtxkitDb:
      return "$CTXKIT_DB";
    case StoreLocation::Source::kXdgDataHome:
      return "$XDG_DATA_HOME";
    case StoreLocation::Source::kHome:
      return "$HOME";
  }
  return "?";
}

// An error about the store at `location`, saying where the path came from
// when the user did not type it on this command line: "why is it looking
// there?" is the first question after a NOT_FOUND.
Status Annotate(const Status& status, const StoreLocation& location) {
  if (status.ok() || location.source == StoreLocation::Source::kFlag) {
    return status;
  }
  return Status(status.code(), status.message() + " (store location from " +
                                   std::string(SourceName(location.source)) +
                                   ")");
}

// NOT_FOUND says how to create the store, since a missing store is either
// a typo or a first use.
Status WithCreateHint(const Status& status) {
  if (status.code() != StatusCode::kNotFound) return status;
  return Status(status.code(),
                status.message() +
                    " ('ctxkit store init' creates one, as does any command "
                    "that adds records)");
}

// Store::Open's words for a store of an older format opened read-only
// (store_impl.cc); the commands that only read cannot upgrade it, so the
// user is told which command does.
constexpr std::string_view kOlderFormatAdvice =
    "open it read-write once to upgrade it";

Status WithUpgradeHint(const Status& status) {
  if (status.code() != StatusCode::kFailedPrecondition ||
      status.message().find(kOlderFormatAdvice) == std::string::npos) {
    return status;
  }
  return Status(status.code(),
                status.message() +
                    " ('ctxkit store init' does, as does any command that "
                    "adds records)");
}

std::string WithoutTrailingSlashes(std::string_view path) {
  while (path.size() > 1 && path.ends_with('/')) path.remove_suffix(1);
  return std::string(path);
}

}  // namespace

StatusOr<StoreLocation> ResolveStoreLocation(const Args& args) {
  StoreLocation location;
  if (const std::string* db = args.Value(kDbFlag.name)) {
    location.path = *db;
    location.source = StoreLocation::Source::kFlag;
    return location;
  }
  if (const std::string_view db = Env("CTXKIT_DB"); !db.empty()) {
    location.path = std::string(db);
    location.source = StoreLocation::Source::kCtxkitDb;
    return location;
  }
  // The XDG spec says a relative XDG_DATA_HOME is invalid and to be ignored.
  if (const std::string_view xdg = Env("XDG_DATA_HOME");
      !xdg.empty() && xdg.starts_with('/')) {
    location.path = WithoutTrailingSlashes(xdg) + "/ctxkit";
    if (location.path.starts_with("//")) location.path.erase(0, 1);
    location.source = StoreLocation::Source::kXdgDataHome;
    location.creatable_below = "/";
    return location;
  }
  if (const std::string_view home = Env("HOME"); !home.empty()) {
    location.creatable_below = WithoutTrailingSlashes(home);
    location.path = location.creatable_below == "/"
                        ? "/.local/share/ctxkit"
                        : location.creatable_below + "/.local/share/ctxkit";
    location.source = StoreLocation::Source::kHome;
    return location;
  }
  return Status(StatusCode::kFailedPrecondition,
                "no store location: pass --db PATH, or set CTXKIT_DB, "
                "XDG_DATA_HOME (an absolute path) or HOME");
}

StatusOr<std::unique_ptr<Store>> OpenStoreForReading(
    const StoreLocation& location) {
  StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  auto store = Store::Open(location.path, options);
  if (!store.ok()) {
    return Annotate(WithUpgradeHint(WithCreateHint(store.status())), location);
  }
  return store;
}

StatusOr<std::unique_ptr<Store>> OpenStoreForWriting(
    const StoreLocation& location, StoreCreation creation, PageCheck pages) {
  const bool create = creation == StoreCreation::kIfMissing;
  if (create && location.is_default()) {
    const size_t slash = location.path.rfind('/');
    const std::string parent =
        slash == 0 ? "/" : location.path.substr(0, slash);
    if (Status made = MakeDirectories(parent, location.creatable_below);
        !made.ok()) {
      return Annotate(made, location);
    }
  }
  StoreOptions options;
  options.create_if_missing = create;
  options.check_every_page = pages == PageCheck::kEveryPage;
  auto store = Store::Open(location.path, options);
  if (!store.ok()) return Annotate(WithCreateHint(store.status()), location);
  return store;
}

}  // namespace ctxkit::program
