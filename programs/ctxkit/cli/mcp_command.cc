// `ctxkit mcp`: the MCP server over stdio.

#include <iostream>
#include <ostream>

#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/host_command.h"
#include "programs/ctxkit/mcp/session.h"
#include "programs/ctxkit/mcp/stdio.h"

namespace ctxkit::program {

Status RunMcp(const Args& args, std::ostream& out) {
  auto config = CommandConfig(args, out);
  if (!config.ok()) return config.status();
  if (!config->has_value()) return Status();  // --print-config
  auto services = OpenServicesForCommand(**config, args);
  if (!services.ok()) return services.status();
  // stdout carries protocol messages only; the one human line goes to
  // stderr, where MCP clients collect server logs.
  std::cerr << "ctxkit mcp: serving over stdio (MCP "
            << mcp::kLatestProtocolVersion << "), store "
            << (*services)->store->path() << "\n";
  return mcp::ServeStdio(**services, /*in_fd=*/0, /*out_fd=*/1);
}

}  // namespace ctxkit::program
