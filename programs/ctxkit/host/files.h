// File-system helpers of the ctxkit program: directory creation and a
// temporary directory that removes itself.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_FILES_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_FILES_H_

#include <string>
#include <string_view>

#include "ctxkit/status.h"

namespace ctxkit::program {

// A Status for the failed system call `what` (e.g. "cannot create directory
// '/x'") with errno value `error`, coded like the library's errors: ENOENT is
// NOT_FOUND, EACCES is PERMISSION_DENIED, ENOTDIR is FAILED_PRECONDITION...
Status ErrnoStatus(int error, std::string_view what);

// Creates `path` and its missing parents with mode 0700 (before the umask),
// but only the components below `base`, which must already exist: `base` is
// the directory we are entitled to fill, e.g. $HOME. Existing directories are
// left as they are.
Status MakeDirectories(std::string_view path, std::string_view base);

// A fresh, private (0700) directory under $TMPDIR (or /tmp when TMPDIR is
// unset or empty), removed with everything in it when the object is
// destroyed. Movable, not copyable.
class TemporaryDirectory {
 public:
  // `prefix` starts the directory's name, e.g. "ctxkit-demo-".
  static StatusOr<TemporaryDirectory> Create(std::string_view prefix);

  TemporaryDirectory(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory& operator=(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  ~TemporaryDirectory();

  const std::string& path() const { return path_; }

  // Removes the directory now, reporting a failure that the destructor
  // would have to swallow. Afterwards path() is empty.
  Status Remove();

 private:
  explicit TemporaryDirectory(std::string path) : path_(std::move(path)) {}

  std::string path_;
};

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_FILES_H_
