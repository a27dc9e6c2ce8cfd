#include "programs/ctxkit/cli/host_command.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>

namespace ctxkit::program {

const Flag kConfigFlag{
    "--config", "JSON|@FILE",
    "settings as a JSON object, or @FILE naming a file holding one"};
const Flag kListenFlag{"--listen", "HOST:PORT",
                       "the address to serve on (default 127.0.0.1:6789; "
                       "port 0 = any free port)"};
const Flag kTokenFileFlag{
    "--token-file", "FILE",
    "require 'Authorization: Bearer TOKEN', TOKEN being the file's first "
    "line"};
const Flag kPrintConfigFlag{
    "--print-config", "", "print the effective configuration as JSON and exit"};

host::HostConfigFlags HostConfigFlagsOf(const Args& args) {
  const auto value = [&](const Flag& flag) -> std::optional<std::string> {
    if (const std::string* v = args.Value(flag.name)) return *v;
    return std::nullopt;
  };
  host::HostConfigFlags flags;
  flags.config = value(kConfigFlag);
  flags.db = value(kDbFlag);
  flags.listen = value(kListenFlag);
  flags.token_file = value(kTokenFileFlag);
  return flags;
}

StatusOr<StoreLocation> StoreLocationFor(const host::HostConfig& config,
                                         const Args& args) {
  if (config.db_path.empty()) return ResolveStoreLocation(args);
  StoreLocation location;
  location.path = config.db_path;
  return location;
}

StatusOr<host::HostConfig> LoadCommandConfig(const Args& args) {
  auto config = host::LoadHostConfig(
      HostConfigFlagsOf(args),
      [](const char* name) -> const char* { return std::getenv(name); });
  if (!config.ok()) return config.status();
  // Settings accepted for the seed's sake but ignored (useGit, ...).
  for (const std::string& warning : config->warnings) {
    std::cerr << "ctxkit: warning: " << warning << "\n";
  }
  return config;
}

StatusOr<std::optional<host::HostConfig>> CommandConfig(const Args& args,
                                                        std::ostream& out) {
  auto config = LoadCommandConfig(args);
  if (!config.ok()) return config.status();
  if (!args.Has(kPrintConfigFlag.name)) {
    return std::optional(*std::move(config));
  }
  auto location = StoreLocationFor(*config, args);
  if (!location.ok()) return location.status();
  config->db_path = location->path;
  out << host::HostConfigToJson(*config) << "\n";
  return std::optional<host::HostConfig>();
}

StatusOr<std::unique_ptr<host::Services>> OpenServicesForCommand(
    const host::HostConfig& config, const Args& args) {
  auto location = StoreLocationFor(config, args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location, StoreCreation::kIfMissing,
                                   PageCheck::kEveryPage);
  if (!store.ok()) return store.status();
  return host::OpenServices(config, *std::move(store));
}

}  // namespace ctxkit::program
