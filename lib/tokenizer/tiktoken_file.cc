#include "lib/tokenizer/tiktoken_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

absl::Status ErrnoError(int error, const std::string& path,
                        const char* action) {
  const std::string message = absl::StrFormat(
      "cannot %s tiktoken file '%s': %s", action, path, std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
      return absl::InvalidArgumentError(message);
    default:
      return absl::UnavailableError(message);
  }
}

// Closes the descriptor on every path out of ReadTiktokenFile.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::string> ReadTiktokenFile(const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("the tiktoken file path is empty");
  }
  if (path.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(
        "the tiktoken file path contains a NUL byte");
  }
  int raw_fd;
  do {
    raw_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (raw_fd < 0 && errno == EINTR);
  if (raw_fd < 0) return ErrnoError(errno, path, "open");
  FileDescriptor fd(raw_fd);
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) return ErrnoError(errno, path, "stat");
  if (S_ISDIR(info.st_mode)) return ErrnoError(EISDIR, path, "read");
  const auto too_large = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tiktoken file '%s' is larger than %d MiB, so it is not a tiktoken "
        "vocabulary",
        path, kMaxTiktokenFileBytes >> 20));
  };
  std::string text;
  if (S_ISREG(info.st_mode)) {
    if (static_cast<uint64_t>(info.st_size) > kMaxTiktokenFileBytes) {
      return too_large();
    }
    text.reserve(static_cast<size_t>(info.st_size));
  }
  // Read to the end rather than trusting st_size, which a pipe or a file
  // being rewritten does not give reliably.
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, path, "read");
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kMaxTiktokenFileBytes) {
      return too_large();
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

namespace {

// The vocabulary in the file at `path`; the file's text is released before
// returning, so only the parsed tables stay.
absl::StatusOr<std::shared_ptr<const Vocabulary>> LoadVocabulary(
    const std::string& path) {
  absl::StatusOr<Vocabulary> vocabulary;
  {
    absl::StatusOr<std::string> text = ReadTiktokenFile(path);
    if (!text.ok()) return text.status();
    vocabulary = Vocabulary::FromTiktoken(*text);
  }
  if (!vocabulary.ok()) {
    return absl::Status(vocabulary.status().code(),
                        absl::StrFormat("tiktoken file '%s': %s", path,
                                        vocabulary.status().message()));
  }
  return std::make_shared<const Vocabulary>(std::move(*vocabulary));
}

absl::Status CheckSpecials(const std::string& name,
                           const std::vector<SpecialToken>& specials) {
  // Encoding::Create checks the rest; these it relies on: ids leave room
  // for one past the highest, and special text is text.
  for (const SpecialToken& special : specials) {
    if (!IsValidUtf8(special.text)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "encoding %s: the special token of id %u is not valid UTF-8", name,
          special.rank));
    }
    if (special.rank > Vocabulary::kMaxRank) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "encoding %s: special token '%s' has id %u, above the maximum %u",
          name, special.text, special.rank, Vocabulary::kMaxRank));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Encoding>> LoadTiktokenEncoding(
    const std::string& path, std::string name, PretokenPattern pattern,
    std::vector<SpecialToken> specials) {
  if (name.empty()) {
    return absl::InvalidArgumentError("the encoding name is empty");
  }
  if (absl::Status s = CheckSpecials(name, specials); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<const Vocabulary>> vocabulary =
      LoadVocabulary(path);
  if (!vocabulary.ok()) return vocabulary.status();
  return Encoding::Create(std::move(name), std::move(*vocabulary), pattern,
                          std::move(specials));
}

std::vector<SpecialToken> Llama3SpecialTokens() {
  // In id order from kLlama3MergeableTokens: ten named slots, then reserved
  // names numbered on from 5 up to the 256th token.
  std::vector<std::string> texts = {
      "<|begin_of_text|>",
      "<|end_of_text|>",
      "<|reserved_special_token_0|>",
      "<|reserved_special_token_1|>",
      "<|reserved_special_token_2|>",
      "<|reserved_special_token_3|>",
      "<|start_header_id|>",
      "<|end_header_id|>",
      "<|reserved_special_token_4|>",
      "<|eot_id|>",
  };
  for (int i = 5; i < 256 - 5; ++i) {
    texts.push_back(absl::StrFormat("<|reserved_special_token_%d|>", i));
  }
  std::vector<SpecialToken> specials;
  specials.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    specials.push_back({std::move(texts[i]),
                        kLlama3MergeableTokens + static_cast<uint32_t>(i)});
  }
  return specials;
}

absl::StatusOr<std::unique_ptr<Encoding>> LoadLlama3Encoding(
    const std::string& path) {
  absl::StatusOr<std::shared_ptr<const Vocabulary>> vocabulary =
      LoadVocabulary(path);
  if (!vocabulary.ok()) return vocabulary.status();
  // Any valid file with Llama 3's shape is accepted (its checksum is not
  // compared): the ids of the special tokens follow from the shape alone.
  if ((*vocabulary)->size() != kLlama3MergeableTokens ||
      (*vocabulary)->token_count() != kLlama3MergeableTokens) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tiktoken file '%s' is not Llama 3's tokenizer.model: that has %u "
        "tokens of ranks 0 to %u; this one has %u tokens, the highest rank "
        "being %u",
        path, kLlama3MergeableTokens, kLlama3MergeableTokens - 1,
        (*vocabulary)->token_count(), (*vocabulary)->size() - 1));
  }
  return Encoding::Create("llama3", std::move(*vocabulary),
                          PretokenPattern::kCl100k, Llama3SpecialTokens());
}

}  // namespace ctxkit::internal
