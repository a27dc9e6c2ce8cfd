#include "lib/cache/cache_keys.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ctxkit/cache.h"

namespace ctxkit::internal {
namespace {

std::string HexOf(const Hash128& hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(32);
  for (uint8_t b : hash) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

}  // namespace

absl::Status CheckPrefix(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > kCacheMaxPrefixBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "prefix is %d bytes; it must be 1 to %d bytes of [A-Za-z0-9._-]",
        prefix.size(), kCacheMaxPrefixBytes));
  }
  for (size_t i = 0; i < prefix.size(); ++i) {
    const char c = prefix[i];
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                         c == '-';
    if (!allowed) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "prefix has byte 0x%02X at offset %d; only [A-Za-z0-9._-] is allowed",
          static_cast<unsigned char>(c), i));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckLookup(std::string_view lookup) {
  if (lookup.empty() || lookup.size() > kCacheMaxLookupBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("lookup is %d bytes; it must be 1 to %d bytes",
                        lookup.size(), kCacheMaxLookupBytes));
  }
  return absl::OkStatus();
}

std::string KeyFor(std::string_view prefix, const Hash128& hash, int n) {
  std::string key = absl::StrFormat("%s:%s", prefix, HexOf(hash));
  if (n > 0) key += absl::StrFormat("-%d", n);
  return key;
}

}  // namespace ctxkit::internal
