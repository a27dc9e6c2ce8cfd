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
// at once (a message whose method is that; other text that mentions it
// waits its turn). A line longer than services.config.max_message_bytes is
// skipped and, once read to its end, answered with a -32600 error that
// carries its id (a number or a string, wherever in the line it is
// written; null when it has none).
//
// At end of input every request already read is answered before returning.
// On SIGTERM/SIGINT the running request is cancelled, queued ones are
// dropped, and the function returns once the worker is idle: a message being
// written is always completed, never cut. Installs handlers for SIGTERM and
// SIGINT and ignores SIGPIPE for the life of the process.
//
// Returns OK on end of input, a signal, or a client that closed its end of
// the output (EPIPE); UNAVAILABLE when writing failed otherwise, naming the
// error.
Status ServeStdio(host::Services& services, int in_fd, int out_fd);

}  // namespace ctxkit::mcp

#endif  // CTXKIT_PROGRAMS_CTXKIT_MCP_STDIO_H_
