#include "programs/ctxkit/http/auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "programs/ctxkit/host/files.h"
#include "programs/ctxkit/http/headers.h"

namespace ctxkit::http {

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ELOOP) {
      return Status(StatusCode::kFailedPrecondition,
                    "the token file '" + path +
                        "' is a symbolic link: give the file itself, "
                        "writable by its owner only");
    }
    return program::ErrnoStatus(errno,
                                "cannot open the token file '" + path + "'");
  }
  // Checked on the open file, so that it cannot be swapped in between.
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return Status(StatusCode::kFailedPrecondition,
                  "the token file '" + path + "' is not a regular file");
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o",
                  static_cast<unsigned>(info.st_mode & 07777));
    return Status(StatusCode::kFailedPrecondition,
                  "the token file '" + path +
                      "' is writable by its group or "
                      "others (mode " +
                      mode +
                      "): make it writable by its owner only (chmod go-w)");
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
  if (token.size() < kMinTokenBytes) {
    return Status(StatusCode::kInvalidArgument,
                  "the token in the token file '" + path + "' is " +
                      std::to_string(token.size()) +
                      " bytes long: a token must be at least " +
                      std::to_string(kMinTokenBytes) +
                      " bytes (for example: head -c 32 /dev/urandom | "
                      "base64)");
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
