// The MCP Streamable HTTP sessions of one server: ids a client cannot guess,
// idle sessions expiring, and a bound on their number, so that clients that
// never send DELETE cannot grow the table without limit, nor a flood of
// initialize requests push out the sessions that are in use.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HTTP_SESSION_TABLE_H_
#define CTXKIT_PROGRAMS_CTXKIT_HTTP_SESSION_TABLE_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "ctxkit/status.h"
#include "programs/ctxkit/mcp/session.h"

namespace ctxkit::http {

inline constexpr auto kSessionIdleTimeout = std::chrono::hours(1);

// 32 lowercase hex digits from getrandom(2); the errno's status when the
// kernel gives no randomness.
StatusOr<std::string> NewSessionId();

// Thread safety: every member is thread-safe.
class SessionTable {
 public:
  // At most `max_sessions` (at least 1) live at once.
  explicit SessionTable(size_t max_sessions);

  // The live session `id`, or null (unknown, deleted or expired). Using it
  // counts as activity: its idle time starts again.
  std::shared_ptr<mcp::Session> Find(const std::string& id);

  // Registers `session` under `id`, dropping expired sessions and, when the
  // table is full, the oldest session never used since its initialize (its
  // requests in flight are cancelled). A dropped session stays alive for
  // the requests still holding it. False, and nothing registered, when
  // every session has been used: a client that initializes again and again
  // then pushes out only its own unused sessions, never one in use.
  bool Add(const std::string& id, std::shared_ptr<mcp::Session> session);

  // Ends session `id`: its requests in flight are cancelled. False if
  // unknown.
  bool Remove(const std::string& id);

 private:
  struct Entry {
    std::shared_ptr<mcp::Session> session;
    std::chrono::steady_clock::time_point last_used;
    bool used = false;  // found since it was added
  };
  const size_t max_sessions_;
  std::mutex mutex_;
  std::map<std::string, Entry> sessions_;  // guarded by mutex_
};

}  // namespace ctxkit::http

#endif  // CTXKIT_PROGRAMS_CTXKIT_HTTP_SESSION_TABLE_H_
