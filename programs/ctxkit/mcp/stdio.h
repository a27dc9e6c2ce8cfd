// The MCP stdio transport: one JSON-RPC message per line on the input, one
// per line on the output, nothing else on the output (logs go to stderr).

#ifndef CTXKIT_PROGRAMS_CTXKIT_MCP_STDIO_H_
#define CTXKIT_PROGRAMS_CTXKIT_MCP_STDIO_H_

#include "ctxkit/status.h"
#include "programs/ctxkit/host/services.h"

namespace ctxkit::mcp {

// Serves one session over `in_fd` / `out_fd` until end of input, SIGTERM or
// SIGINT, or an output that can no longer be written.
//
// Requests are served in the order they arrive, on one worker thread, so a
// piped script sees its writes applied in order; a reader thread keeps
// reading meanwhile, so notifications/cancelled reaches a running request
// at once. A line longer than services.config.max_message_bytes is answered
// with a -32600 error and skipped.
//
// At end of input every request already read is answered before returning.
// On SIGTERM/SIGINT the running request is cancelled, queued ones are
// dropped, and the function returns once the worker is idle: a message being
// written is always completed, never cut. Installs handlers for SIGTERM and
// SIGINT and ignores SIGPIPE for the life of the process.
//
// Returns OK on end of input or a signal; UNAVAILABLE when the output
// failed (the client went away), naming the error.
Status ServeStdio(host::Services& services, int in_fd, int out_fd);

}  // namespace ctxkit::mcp

#endif  // CTXKIT_PROGRAMS_CTXKIT_MCP_STDIO_H_
