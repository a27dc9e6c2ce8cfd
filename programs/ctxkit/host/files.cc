#include "programs/ctxkit/host/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "programs/ctxkit/host/text.h"

namespace ctxkit::program {

Status ErrnoStatus(int error, std::string_view what) {
  StatusCode code = StatusCode::kUnknown;
  switch (error) {
    case ENOENT:
      code = StatusCode::kNotFound;
      break;
    case EACCES:
    case EPERM:
    case EROFS:
      code = StatusCode::kPermissionDenied;
      break;
    case ENOTDIR:
    case EEXIST:
    case ELOOP:
    case ENAMETOOLONG:
      code = StatusCode::kFailedPrecondition;
      break;
    case ENOSPC:
    case EDQUOT:
    case ENOMEM:
      code = StatusCode::kResourceExhausted;
      break;
    default:
      break;
  }
  std::string message(what);
  message.append(": ").append(std::strerror(error));
  return Status(code, std::move(message));
}

namespace {

bool IsDirectory(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

}  // namespace

Status MakeDirectories(std::string_view path, std::string_view base) {
  while (base.size() > 1 && base.ends_with('/')) base.remove_suffix(1);
  // The components to create, shortest first: each prefix of `path` that
  // ends at a '/' (or at the end) and lies below `base`.
  std::vector<std::string> missing;
  for (size_t end = base.size() + 1; end <= path.size(); ++end) {
    if (end == path.size() || path[end] == '/') {
      if (path[end - 1] != '/') missing.emplace_back(path.substr(0, end));
    }
  }
  for (const std::string& directory : missing) {
    if (::mkdir(directory.c_str(), 0700) == 0) continue;
    const int error = errno;
    // Whatever mkdir says (EEXIST, but also EACCES or EROFS for a directory
    // that exists where we may not write), an existing directory is fine.
    if (IsDirectory(directory)) continue;
    return ErrnoStatus(
        error, "cannot create directory '" + Printable(directory) + "'");
  }
  return Status::Ok();
}

StatusOr<TemporaryDirectory> TemporaryDirectory::Create(
    std::string_view prefix) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      tmpdir != nullptr && tmpdir[0] != '\0' ? tmpdir : "/tmp";
  if (!pattern.ends_with('/')) pattern += '/';
  pattern.append(prefix).append("XXXXXX");
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    return ErrnoStatus(errno, "cannot create a temporary directory '" +
                                  Printable(pattern) + "'");
  }
  return TemporaryDirectory(std::string(buffer.data()));
}

TemporaryDirectory::TemporaryDirectory(TemporaryDirectory&& other) noexcept
    : path_(std::exchange(other.path_, std::string())) {}

TemporaryDirectory& TemporaryDirectory::operator=(
    TemporaryDirectory&& other) noexcept {
  if (this != &other) {
    (void)Remove();
    path_ = std::exchange(other.path_, std::string());
  }
  return *this;
}

TemporaryDirectory::~TemporaryDirectory() { (void)Remove(); }

Status TemporaryDirectory::Remove() {
  if (path_.empty()) return Status::Ok();
  std::error_code error;
  std::filesystem::remove_all(path_, error);
  const std::string path = std::exchange(path_, std::string());
  if (error) {
    return ErrnoStatus(error.value(), "cannot remove temporary directory '" +
                                          Printable(path) + "'");
  }
  return Status::Ok();
}

}  // namespace ctxkit::program
