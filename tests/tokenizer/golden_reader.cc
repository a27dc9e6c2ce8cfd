#include "tests/tokenizer/golden_reader.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "lib/json/utf8.h"

#ifndef CTXKIT_GOLDEN_DIR
// tests/tokenizer/CMakeLists.txt defines it on ctxkit_golden_reader.
#error "CTXKIT_GOLDEN_DIR is not defined"
#endif

namespace ctxkit::internal {
namespace {

constexpr std::string_view kMagic = "ctxkit-golden ";
constexpr std::string_view kVersionLine = "ctxkit-golden 1\n";
constexpr size_t kMaxFileSize = size_t{256} << 20;
constexpr size_t kMaxHeaderSize = size_t{64} << 10;
constexpr uint32_t kMaxEncodings = 64;
constexpr uint32_t kMaxEncodingNameSize = 64;
constexpr uint32_t kMaxLabelSize = 4096;
// Two modes per encoding.
constexpr uint32_t kMaxResultsPerText = 2 * kMaxEncodings;

// Reads the body with bounds checks on every access; the first error sticks
// and names the offset (from the start of the file) where it was found.
class Cursor {
 public:
  Cursor(std::string_view bytes, size_t base, std::string_view name)
      : bytes_(bytes), base_(base), name_(name) {}

  size_t offset() const { return base_ + pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool done() const { return pos_ == bytes_.size(); }

  absl::Status Error(std::string_view what) const {
    return Error(what, offset());
  }
  absl::Status Error(std::string_view what, size_t at) const {
    return absl::DataLossError(
        absl::StrFormat("golden file %s: %s at offset %d", name_, what, at));
  }

  absl::StatusOr<uint32_t> Varint(std::string_view what) {
    const size_t start = offset();
    uint64_t value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (pos_ == bytes_.size()) {
        return Error(absl::StrFormat("truncated varint (%s)", what), start);
      }
      const auto byte = static_cast<uint8_t>(bytes_[pos_++]);
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) {
        // A zero final byte after the first means a longer encoding than
        // needed; the generator never writes one, so it signals corruption.
        if (byte == 0 && shift > 0) {
          return Error(absl::StrFormat("non-minimal varint (%s)", what), start);
        }
        if (value > UINT32_MAX) {
          return Error(absl::StrFormat("varint (%s) exceeds 32 bits", what),
                       start);
        }
        return static_cast<uint32_t>(value);
      }
    }
    return Error(absl::StrFormat("varint (%s) longer than 5 bytes", what),
                 start);
  }

  absl::StatusOr<uint8_t> Byte(std::string_view what) {
    if (pos_ == bytes_.size()) {
      return Error(absl::StrFormat("truncated %s", what));
    }
    return static_cast<uint8_t>(bytes_[pos_++]);
  }

  // A length-prefixed string of at most `max_size` bytes.
  absl::StatusOr<std::string_view> String(std::string_view what,
                                          size_t max_size) {
    const size_t start = offset();
    absl::StatusOr<uint32_t> size = Varint(what);
    if (!size.ok()) return size.status();
    if (*size > max_size) {
      return Error(absl::StrFormat("%s length %d exceeds the limit %d", what,
                                   *size, max_size),
                   start);
    }
    if (*size > remaining()) {
      return Error(
          absl::StrFormat("%s length %d runs past the end", what, *size),
          start);
    }
    std::string_view s = bytes_.substr(pos_, *size);
    pos_ += *size;
    return s;
  }

 private:
  std::string_view bytes_;
  size_t base_;
  std::string_view name_;
  size_t pos_ = 0;
};

bool IsEncodingName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// Returns the offset of the body: just past the header's empty line.
absl::StatusOr<size_t> ParseHeader(std::string_view bytes,
                                   std::string_view name) {
  auto error = [&](std::string_view what, size_t at) {
    return absl::DataLossError(
        absl::StrFormat("golden file %s: %s at offset %d", name, what, at));
  };
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return error("not a golden file (bad magic)", 0);
  }
  const size_t first_newline = bytes.find('\n');
  if (first_newline == std::string_view::npos ||
      bytes.substr(0, first_newline + 1) != kVersionLine) {
    return error(
        absl::StrFormat("unsupported version line \"%s\" (expected \"%s\")",
                        absl::CHexEscape(std::string(bytes.substr(
                            0, std::min(first_newline, size_t{40})))),
                        "ctxkit-golden 1"),
        0);
  }
  size_t pos = first_newline + 1;
  while (true) {
    if (pos >= bytes.size() || pos > kMaxHeaderSize) {
      return error("header has no terminating empty line", pos);
    }
    if (bytes[pos] == '\n') return pos + 1;
    if (bytes[pos] != '#') {
      return error("header line does not start with '#'", pos);
    }
    const size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos) {
      return error("header has no terminating empty line", pos);
    }
    pos = end + 1;
  }
}

}  // namespace

uint32_t GoldenCrc32(std::string_view bytes) {
  static constexpr std::array<uint32_t, 256> kTable = [] {
    std::array<uint32_t, 256> table{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[n] = c;
    }
    return table;
  }();
  uint32_t c = 0xffffffffu;
  for (char ch : bytes) {
    c = kTable[(c ^ static_cast<uint8_t>(ch)) & 0xffu] ^ (c >> 8);
  }
  return c ^ 0xffffffffu;
}

std::string GoldenDir() { return CTXKIT_GOLDEN_DIR; }

std::string GoldenPath(std::string_view file_name) {
  return absl::StrFormat("%s/%s", GoldenDir(), file_name);
}

std::string_view GoldenModeName(GoldenCase::Mode mode) {
  return mode == GoldenCase::Mode::kOrdinary ? "ordinary" : "all_special";
}

absl::StatusOr<std::vector<GoldenCase>> ParseGolden(std::string_view bytes,
                                                    std::string_view name) {
  absl::StatusOr<size_t> body_start = ParseHeader(bytes, name);
  if (!body_start.ok()) return body_start.status();
  if (bytes.size() - *body_start < 4) {
    return absl::DataLossError(absl::StrFormat(
        "golden file %s: truncated (no room for the CRC trailer) at offset %d",
        name, bytes.size()));
  }
  const size_t trailer = bytes.size() - 4;
  const uint32_t stored = static_cast<uint32_t>(
      static_cast<uint8_t>(bytes[trailer]) |
      static_cast<uint8_t>(bytes[trailer + 1]) << 8 |
      static_cast<uint8_t>(bytes[trailer + 2]) << 16 |
      static_cast<uint32_t>(static_cast<uint8_t>(bytes[trailer + 3])) << 24);
  const uint32_t computed = GoldenCrc32(bytes.substr(0, trailer));
  if (stored != computed) {
    return absl::DataLossError(absl::StrFormat(
        "golden file %s: CRC mismatch (stored %08x, computed %08x): the file "
        "is damaged or truncated",
        name, stored, computed));
  }

  Cursor in(bytes.substr(*body_start, trailer - *body_start), *body_start,
            name);
  absl::StatusOr<uint32_t> n_encodings = in.Varint("encoding count");
  if (!n_encodings.ok()) return n_encodings.status();
  if (*n_encodings == 0 || *n_encodings > kMaxEncodings) {
    return in.Error(absl::StrFormat("encoding count %d not in 1..%d",
                                    *n_encodings, kMaxEncodings));
  }
  std::vector<std::string> encodings;
  for (uint32_t i = 0; i < *n_encodings; ++i) {
    const size_t at = in.offset();
    absl::StatusOr<std::string_view> e =
        in.String("encoding name", kMaxEncodingNameSize);
    if (!e.ok()) return e.status();
    if (!IsEncodingName(*e)) {
      return in.Error("encoding name is empty or not [a-z0-9_]+", at);
    }
    encodings.emplace_back(*e);
  }

  absl::StatusOr<uint32_t> n_texts = in.Varint("text count");
  if (!n_texts.ok()) return n_texts.status();
  // Each text takes at least 5 bytes (label, text, result count, one result
  // of index, mode and id count), which bounds what a lying count can cost.
  if (*n_texts > in.remaining() / 5) {
    return in.Error(absl::StrFormat(
        "text count %d is more than the remaining %d bytes can hold", *n_texts,
        in.remaining()));
  }

  std::vector<GoldenCase> cases;
  std::set<std::string, std::less<>> labels;
  for (uint32_t t = 0; t < *n_texts; ++t) {
    const size_t label_at = in.offset();
    absl::StatusOr<std::string_view> label = in.String("label", kMaxLabelSize);
    if (!label.ok()) return label.status();
    if (!IsValidUtf8(*label)) return in.Error("label is not UTF-8", label_at);
    if (!labels.emplace(*label).second) {
      return in.Error(absl::StrFormat("duplicate label \"%s\"", *label),
                      label_at);
    }
    const size_t text_at = in.offset();
    absl::StatusOr<std::string_view> text = in.String("text", in.remaining());
    if (!text.ok()) return text.status();
    if (!IsValidUtf8(*text)) {
      return in.Error(absl::StrFormat("text of \"%s\" is not UTF-8", *label),
                      text_at);
    }
    const size_t results_at = in.offset();
    absl::StatusOr<uint32_t> n_results = in.Varint("result count");
    if (!n_results.ok()) return n_results.status();
    if (*n_results == 0 || *n_results > kMaxResultsPerText) {
      return in.Error(absl::StrFormat("result count %d of \"%s\" not in 1..%d",
                                      *n_results, *label, kMaxResultsPerText),
                      results_at);
    }
    std::set<std::pair<uint32_t, uint8_t>> seen;
    for (uint32_t r = 0; r < *n_results; ++r) {
      const size_t result_at = in.offset();
      absl::StatusOr<uint32_t> encoding = in.Varint("encoding index");
      if (!encoding.ok()) return encoding.status();
      if (*encoding >= encodings.size()) {
        return in.Error(
            absl::StrFormat("encoding index %d out of range (%d encodings)",
                            *encoding, encodings.size()),
            result_at);
      }
      absl::StatusOr<uint8_t> mode = in.Byte("mode");
      if (!mode.ok()) return mode.status();
      if (*mode > 1) {
        return in.Error(absl::StrFormat("unknown mode %d", *mode),
                        in.offset() - 1);
      }
      if (!seen.emplace(*encoding, *mode).second) {
        return in.Error(
            absl::StrFormat("duplicate result (%s, mode %d) for \"%s\"",
                            encodings[*encoding], *mode, *label),
            result_at);
      }
      absl::StatusOr<uint32_t> n_ids = in.Varint("id count");
      if (!n_ids.ok()) return n_ids.status();
      // Every id takes at least one byte.
      if (*n_ids > in.remaining()) {
        return in.Error(
            absl::StrFormat("id count %d runs past the end (%d bytes left)",
                            *n_ids, in.remaining()));
      }
      GoldenCase golden;
      golden.encoding = encodings[*encoding];
      golden.mode = *mode == 0 ? GoldenCase::Mode::kOrdinary
                               : GoldenCase::Mode::kAllSpecial;
      golden.text = std::string(*text);
      golden.label = std::string(*label);
      golden.ids.reserve(*n_ids);
      for (uint32_t k = 0; k < *n_ids; ++k) {
        absl::StatusOr<uint32_t> id = in.Varint("token id");
        if (!id.ok()) return id.status();
        golden.ids.push_back(*id);
      }
      cases.push_back(std::move(golden));
    }
  }
  if (!in.done()) {
    return in.Error(absl::StrFormat("%d unexpected bytes after the last text",
                                    in.remaining()));
  }
  return cases;
}

absl::StatusOr<std::vector<GoldenCase>> ReadGoldenFile(
    const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int error = errno;
    const std::string message = absl::StrFormat(
        "cannot open golden file %s: %s", path, std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(message)
                           : absl::UnavailableError(message);
  }
  std::string bytes;
  char buffer[1 << 16];
  bool too_large = false;
  while (true) {
    const size_t n = std::fread(buffer, 1, sizeof(buffer), file);
    bytes.append(buffer, n);
    if (bytes.size() > kMaxFileSize) {
      too_large = true;
      break;
    }
    if (n < sizeof(buffer)) break;
  }
  const bool read_error = std::ferror(file) != 0;
  std::fclose(file);
  if (too_large) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "golden file %s is larger than %d bytes", path, kMaxFileSize));
  }
  if (read_error) {
    return absl::UnavailableError(
        absl::StrFormat("error reading golden file %s", path));
  }
  return ParseGolden(bytes, path);
}

}  // namespace ctxkit::internal
