#include "programs/ctxkit/http/session_table.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "programs/ctxkit/host/files.h"

namespace ctxkit::http {

StatusOr<std::string> NewSessionId() {
  unsigned char bytes[16];
  size_t filled = 0;
  while (filled < sizeof bytes) {
    const ssize_t n = getrandom(bytes + filled, sizeof bytes - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return program::ErrnoStatus(errno, "cannot make a session id");
    }
    filled += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 15]);
  }
  return id;
}

SessionTable::SessionTable(size_t max_sessions)
    : max_sessions_(std::max<size_t>(max_sessions, 1)) {}

std::shared_ptr<mcp::Session> SessionTable::Find(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  const auto now = std::chrono::steady_clock::now();
  if (now - it->second.last_used > kSessionIdleTimeout) {
    it->second.session->CancelAll();
    sessions_.erase(it);
    return nullptr;
  }
  it->second.last_used = now;
  it->second.used = true;
  return it->second.session;
}

bool SessionTable::Add(const std::string& id,
                       std::shared_ptr<mcp::Session> session) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second.last_used > kSessionIdleTimeout) {
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  if (sessions_.size() >= max_sessions_) {
    auto oldest = sessions_.end();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (!it->second.used &&
          (oldest == sessions_.end() ||
           it->second.last_used < oldest->second.last_used)) {
        oldest = it;
      }
    }
    if (oldest == sessions_.end()) return false;
    oldest->second.session->CancelAll();
    sessions_.erase(oldest);
  }
  sessions_[id] = Entry{std::move(session), now};
  return true;
}

bool SessionTable::Remove(const std::string& id) {
  std::shared_ptr<mcp::Session> session;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return false;
    session = std::move(it->second.session);
    sessions_.erase(it);
  }
  session->CancelAll();
  return true;
}

}  // namespace ctxkit::http
