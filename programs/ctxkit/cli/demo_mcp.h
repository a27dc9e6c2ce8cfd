// The MCP part of `ctxkit demo`: a short scripted session with a real
// `ctxkit mcp` child process over its standard input and output, as an MCP
// client (Claude Desktop, Claude Code, Cursor) would drive it.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_DEMO_MCP_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_DEMO_MCP_H_

#include <ostream>
#include <string>

#include "ctxkit/status.h"

namespace ctxkit::program {

// Starts this program (/proc/self/exe) as `ctxkit mcp --db <store_dir>`,
// initializes, creates a conversation, adds a dozen messages, counts them,
// compresses the conversation, reads its token statistics and gets a
// prompt, printing one line per exchange with the figures the server
// returned. Every reply is checked (no error, the fields the step needs);
// a failed step is an INTERNAL error naming the request and the reply.
// The child is always reaped; it exits at end of input.
Status RunMcpDemo(const std::string& store_dir, std::ostream& out);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_DEMO_MCP_H_
