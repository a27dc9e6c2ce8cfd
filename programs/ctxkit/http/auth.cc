#include "programs/ctxkit/http/auth.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "programs/ctxkit/host/files.h"
#include "programs/ctxkit/http/headers.h"

namespace ctxkit::http {

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return program::ErrnoStatus(errno,
                                "cannot open the token file '" + path + "'");
  }
  // The first line is all we need; a token file is never large.
  std::string text;
  char buffer[4096];
  Status status;
  while (text.find('\n') == std::string::npos && text.size() < 65536) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      status = program::ErrnoStatus(
          errno, "cannot read the token file '" + path + "'");
      break;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (!status.ok()) return status;
  const std::string_view token =
      Trim(std::string_view(text).substr(0, text.find('\n')));
  if (token.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "the token file '" + path +
                      "' is empty: its first line must hold the token");
  }
  return std::string(token);
}

bool ConstantTimeEquals(std::string_view given, std::string_view expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const char g = i < given.size() ? given[i] : 0;
    diff |= static_cast<unsigned char>(g ^ expected[i]);
  }
  return diff == 0;
}

}  // namespace ctxkit::http
