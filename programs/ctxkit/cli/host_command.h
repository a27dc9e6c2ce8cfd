// What `ctxkit mcp` and `ctxkit serve` share: their flags, the host
// configuration their command line gives, and the store and parts opened
// for it.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_HOST_COMMAND_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_HOST_COMMAND_H_

#include <memory>
#include <optional>
#include <ostream>

#include "ctxkit/status.h"
#include "programs/ctxkit/cli/cli.h"
#include "programs/ctxkit/cli/store_location.h"
#include "programs/ctxkit/host/config.h"
#include "programs/ctxkit/host/services.h"

namespace ctxkit::program {

// The flags LoadHostConfig reads (--db is store_location.h's kDbFlag).
extern const Flag kConfigFlag;       // --config JSON|@FILE
extern const Flag kListenFlag;       // --listen HOST:PORT
extern const Flag kTokenFileFlag;    // --token-file FILE
extern const Flag kPrintConfigFlag;  // --print-config

// The configuration flags among `args`.
host::HostConfigFlags HostConfigFlagsOf(const Args& args);

// The store location a command uses: config.db_path when set (flag,
// CTXKIT_DB or --config), else the program's default location
// (store_location.h). FAILED_PRECONDITION when neither applies.
StatusOr<StoreLocation> StoreLocationFor(const host::HostConfig& config,
                                         const Args& args);

// LoadHostConfig over the process's environment and the --config and --db
// flags among `args`, its warnings (settings accepted but ignored) printed
// to stderr: the configuration of every command that opens the context
// graph. Errors: LoadHostConfig's.
StatusOr<host::HostConfig> LoadCommandConfig(const Args& args);

// The configuration of `ctxkit mcp` and `ctxkit serve`: LoadCommandConfig.
// With --print-config it is printed to `out`
// (the store location resolved, so the output is a usable --config) and
// the result is nullopt: the command has nothing left to do. Errors: those
// of LoadHostConfig and StoreLocationFor.
StatusOr<std::optional<host::HostConfig>> CommandConfig(const Args& args,
                                                        std::ostream& out);

// Opens the store at StoreLocationFor(config, args) for writing (see
// OpenStoreForWriting for what is created) and every part over it.
StatusOr<std::unique_ptr<host::Services>> OpenServicesForCommand(
    const host::HostConfig& config, const Args& args);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_HOST_COMMAND_H_
