// The ctxkit program. Exit status: 0 success, 1 runtime error, 2 usage error.

#include <cerrno>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string_view>
#include <vector>

#include "ctxkit/status.h"
#include "programs/ctxkit/cli/cli.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/host/files.h"

namespace {

int Main(int argc, char** argv) {
  using ctxkit::program::kExitFailure;
  const std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0),
                                           argv + argc);
  int code = ctxkit::program::Run(ctxkit::program::CtxkitProgram(), args,
                                  std::cout, std::cerr);
  // Output that never arrived (a full disk, a closed pipe) is a failure the
  // caller must hear about, not a silent success.
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    const int error = errno != 0 ? errno : EIO;
    std::cerr << "ctxkit: "
              << ctxkit::program::ErrnoStatus(error,
                                              "cannot write to standard output")
                     .ToString()
              << "\n";
    code = kExitFailure;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // No exception may escape: it would end in std::terminate and an exit
  // status outside 0/1/2.
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "ctxkit: RESOURCE_EXHAUSTED: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "ctxkit: INTERNAL: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "ctxkit: INTERNAL: unknown exception\n";
  }
  return ctxkit::program::kExitFailure;
}
