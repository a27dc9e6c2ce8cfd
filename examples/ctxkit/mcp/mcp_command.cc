// `ctxkit mcp`: the MCP server over stdio.

#include <cstdlib>
#include <iostream>
#include <ostream>

#include "examples/ctxkit/commands.h"
#include "examples/ctxkit/host/config.h"
#include "examples/ctxkit/host/services.h"
#include "examples/ctxkit/mcp/session.h"
#include "examples/ctxkit/mcp/stdio.h"

namespace ctxkit::program {

Status RunMcp(const Args& args, std::ostream& out) {
  auto config = host::LoadHostConfig(
      args, [](const char* name) -> const char* { return std::getenv(name); });
  if (!config.ok()) return config.status();
  if (args.Has(host::kPrintConfigFlag.name)) {
    // The store actually used, not "" for the default location.
    auto location = host::StoreLocationFor(*config, args);
    if (!location.ok()) return location.status();
    config->db_path = location->path;
    out << host::HostConfigToJson(*config) << "\n";
    return Status();
  }
  auto services = host::OpenServicesForCommand(*config, args);
  if (!services.ok()) return services.status();
  // stdout carries protocol messages only; the one human line goes to
  // stderr, where MCP clients collect server logs.
  std::cerr << "ctxkit mcp: serving over stdio (MCP " << mcp::kLatestProtocolVersion
            << "), store " << (*services)->store->path() << "\n";
  return mcp::ServeStdio(**services, /*in_fd=*/0, /*out_fd=*/1);
}

}  // namespace ctxkit::program
