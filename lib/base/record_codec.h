// Compact binary records (conversations, context graph): LEB128 varints and
// length-prefixed strings behind a version byte. The layouts themselves are
// documented beside each part's records (conversation_records.h,
// lib/graph/graph_records.h).

#ifndef CTXKIT_LIB_BASE_RECORD_CODEC_H_
#define CTXKIT_LIB_BASE_RECORD_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace ctxkit::internal {

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Signed values (times may precede 1970) zig-zag encoded, so small
// magnitudes of either sign stay short.
inline void PutSignedVarint(std::string* out, int64_t v) {
  PutVarint(out,
            (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

inline void PutLengthPrefixed(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}

// Reads what the Put functions wrote. Every Get returns false (and the
// reader stays failed) on truncated or malformed input, so a decoder can
// read a whole record and check ok() once. Views point into the input.
class RecordReader {
 public:
  explicit RecordReader(std::string_view in) : in_(in) {}

  bool GetVarint(uint64_t* v) {
    uint64_t result = 0;
    if (!ok_) {
      *v = 0;
      return false;
    }
    // With ten bytes left no varint can run past the end, so the loop skips
    // the bounds check: edge scans decode a few varints per edge.
    if (in_.size() - pos_ >= 10) {
      const char* p = in_.data() + pos_;
      for (int shift = 0; shift <= 63; shift += 7) {
        const auto byte = static_cast<unsigned char>(*p++);
        result |= static_cast<uint64_t>(byte & 0x7F) << shift;
        if ((byte & 0x80) == 0) {
          pos_ = static_cast<size_t>(p - in_.data());
          *v = result;
          return true;
        }
      }
      ok_ = false;
      *v = 0;
      return false;
    }
    for (int shift = 0; shift <= 63 && pos_ < in_.size(); shift += 7) {
      const auto byte = static_cast<unsigned char>(in_[pos_++]);
      result |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    ok_ = false;
    *v = 0;
    return false;
  }

  bool GetSignedVarint(int64_t* v) {
    uint64_t u = 0;
    const bool got = GetVarint(&u);
    *v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    return got;
  }

  bool GetByte(uint8_t* v) {
    if (!ok_ || pos_ >= in_.size()) {
      ok_ = false;
      *v = 0;
      return false;
    }
    *v = static_cast<uint8_t>(in_[pos_++]);
    return true;
  }

  // Eight bytes, big-endian (a double's bits, a fixed-width number).
  bool GetBigEndian64(uint64_t* v) {
    if (!ok_ || in_.size() - pos_ < 8) {
      ok_ = false;
      *v = 0;
      return false;
    }
    uint64_t r = 0;
    for (size_t i = 0; i < 8; ++i) {
      r = r << 8 | static_cast<unsigned char>(in_[pos_ + i]);
    }
    pos_ += 8;
    *v = r;
    return true;
  }

  bool GetLengthPrefixed(std::string_view* s) {
    uint64_t n = 0;
    if (!ok_ || !GetVarint(&n) || n > in_.size() - pos_) {
      ok_ = false;
      *s = {};
      return false;
    }
    *s = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }

  bool ok() const { return ok_; }
  bool AtEnd() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_RECORD_CODEC_H_
