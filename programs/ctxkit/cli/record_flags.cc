#include "programs/ctxkit/cli/record_flags.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <limits>
#include <system_error>
#include <utility>

#include "programs/ctxkit/host/files.h"
#include "programs/ctxkit/host/text.h"

namespace ctxkit::program {

const Flag kContentFlag{"--content", "TEXT", "the content, given inline"};
const Flag kFileFlag{"--file", "PATH", "read the content from this file"};

namespace {

// Reads at most `max` bytes of `fd` (named `name` in errors).
StatusOr<std::string> ReadAtMost(int fd, const std::string& name, size_t max) {
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    return Status(StatusCode::kFailedPrecondition, name + " is a directory");
  }
  std::string data;
  constexpr size_t kBlock = size_t{1} << 20;
  while (data.size() < max) {
    const size_t want = std::min(kBlock, max - data.size());
    const size_t old = data.size();
    data.resize(old + want);
    ssize_t n;
    do {
      n = ::read(fd, data.data() + old, want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      const int error = errno;
      return ErrnoStatus(error, "cannot read " + name);
    }
    data.resize(old + static_cast<size_t>(n));
    if (n == 0) break;
  }
  return data;
}

}  // namespace

StatusOr<std::optional<std::string>> ReadContent(const Args& args,
                                                 size_t stdin_index,
                                                 std::string_view field,
                                                 size_t max_bytes,
                                                 bool optional) {
  const std::string* inline_text = args.Value(kContentFlag.name);
  const std::string* file = args.Value(kFileFlag.name);
  const bool from_stdin = args.positional().size() > stdin_index &&
                          args.positional()[stdin_index] == "-";
  const int given = (inline_text != nullptr) + (file != nullptr) + from_stdin;
  if (given > 1) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(field) +
                      ": give only one of --content, --file and - "
                      "(standard input)");
  }
  if (given == 0) {
    if (optional) return std::optional<std::string>();
    return Status(StatusCode::kInvalidArgument,
                  std::string(field) +
                      ": missing; give --content TEXT, --file PATH or - "
                      "(standard input)");
  }
  if (inline_text != nullptr) return std::optional<std::string>(*inline_text);
  // One byte over the limit is enough for the library to refuse it.
  const size_t cap = max_bytes + 1;
  if (from_stdin) {
    auto data = ReadAtMost(STDIN_FILENO, "standard input", cap);
    if (!data.ok()) return data.status();
    return std::optional<std::string>(*std::move(data));
  }
  const std::string name = "'" + Printable(*file) + "'";
  const int fd = ::open(file->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open " + name);
  auto data = ReadAtMost(fd, name, cap);
  ::close(fd);
  if (!data.ok()) return data.status();
  return std::optional<std::string>(*std::move(data));
}

StatusOr<std::optional<int64_t>> NumberFlag(const Args& args, const Flag& flag,
                                            std::string_view field) {
  const std::string* text = args.Value(flag.name);
  if (text == nullptr) return std::optional<int64_t>();
  int64_t value = 0;
  const auto result =
      std::from_chars(text->data(), text->data() + text->size(), value);
  if (result.ec != std::errc() || result.ptr != text->data() + text->size()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(field) + ": " + *text + " is out of range");
  }
  return std::optional<int64_t>(value);
}

StatusOr<std::optional<uint32_t>> Uint32NumberFlag(const Args& args,
                                                   const Flag& flag,
                                                   std::string_view field,
                                                   uint32_t min, uint32_t max) {
  auto value = NumberFlag(args, flag, field);
  if (!value.ok()) return value.status();
  if (!value->has_value()) return std::optional<uint32_t>();
  const int64_t n = **value;
  if (n < 0 || n > std::numeric_limits<uint32_t>::max()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(field) + " is " + std::to_string(n) +
                      "; it must be between " + std::to_string(min) + " and " +
                      std::to_string(max));
  }
  return std::optional<uint32_t>(static_cast<uint32_t>(n));
}

Status PrintDocument(const StatusOr<std::string>& document, std::ostream& out) {
  if (!document.ok()) return document.status();
  out << *document << "\n";
  return Status::Ok();
}

}  // namespace ctxkit::program
