// Fixed-width big-endian integers in LMDB keys. LMDB orders keys as unsigned
// bytes, so big-endian numbers sort numerically: a key of (timestamp, id)
// iterates in time order, and a prefix of a conversation id followed by a
// sequence number iterates that conversation's messages in order.

#ifndef CTXKIT_LIB_BASE_KEY_CODEC_H_
#define CTXKIT_LIB_BASE_KEY_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace ctxkit::internal {

inline void AppendBigEndian64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

inline void AppendBigEndian32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

// Precondition: at least 8 (resp. 4) bytes at `p`.
inline uint64_t ReadBigEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

inline uint32_t ReadBigEndian32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

// Signed times (milliseconds, possibly before 1970) as order-preserving
// unsigned keys: flipping the sign bit maps INT64_MIN..INT64_MAX onto
// 0..UINT64_MAX in order.
inline uint64_t OrderedFromSigned(int64_t v) {
  return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
}
inline int64_t SignedFromOrdered(uint64_t v) {
  return static_cast<int64_t>(v ^ (uint64_t{1} << 63));
}

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_KEY_CODEC_H_
