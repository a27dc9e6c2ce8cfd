#include "lib/base/ids.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"

namespace ctxkit::internal {
namespace {

void FillRandom(unsigned char* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = getrandom(out + done, size - done, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      // getrandom only fails for bad arguments or a kernel without it
      // (Linux < 3.17): nothing an id can be made without.
      std::perror("ctxkit: getrandom");
      std::abort();
    }
  }
}

// `b` in canonical form, after setting its version and variant.
std::string FormatUuid(unsigned char (&b)[16], unsigned version) {
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | (version << 4));
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // variant 10
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) id.push_back('-');
    id.push_back(kHex[b[i] >> 4]);
    id.push_back(kHex[b[i] & 0x0F]);
  }
  return id;
}

void FillRandom(unsigned char* out, size_t size, const RandomSource& random) {
  if (!random) {
    FillRandom(out, size);
    return;
  }
  for (size_t i = 0; i < size; i += 8) {
    const uint64_t bits = random();
    for (size_t j = 0; j < 8 && i + j < size; ++j) {
      out[i + j] = static_cast<unsigned char>(bits >> (8 * j));
    }
  }
}

}  // namespace

std::string NewUuid() { return NewUuid(RandomSource()); }

std::string NewUuid(const RandomSource& random) {
  unsigned char b[16];
  FillRandom(b, sizeof b, random);
  return FormatUuid(b, 4);
}

std::string NewTimeOrderedUuid(int64_t unix_ms) {
  return NewTimeOrderedUuid(unix_ms, RandomSource());
}

std::string NewTimeOrderedUuid(int64_t unix_ms, const RandomSource& random) {
  unsigned char b[16];
  FillRandom(b + 6, sizeof b - 6, random);
  const auto ms = static_cast<uint64_t>(unix_ms < 0 ? 0 : unix_ms);
  for (int i = 0; i < 6; ++i) {
    b[i] = static_cast<unsigned char>(ms >> (8 * (5 - i)));
  }
  return FormatUuid(b, 7);
}

bool IsUuid(std::string_view id) {
  if (id.size() != 36) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!absl::ascii_isxdigit(c)) {
      return false;
    }
  }
  return true;
}

}  // namespace ctxkit::internal
