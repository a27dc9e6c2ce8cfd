// A small SHA-256 (FIPS 180-4) for tests, which compare re-serialized
// vocabularies with the digests tiktoken publishes. Not for production use:
// it is written for clarity, not speed or side-channel resistance.
//
// Thread safety: a Sha256 object is not synchronized; distinct objects may be
// used from distinct threads.

#ifndef CTXKIT_TESTS_TOKENIZER_SHA256_H_
#define CTXKIT_TESTS_TOKENIZER_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ctxkit::testing {

class Sha256 {
 public:
  Sha256();

  // Appends `data` to the message. Must not be called after Finish().
  void Update(std::string_view data);

  // Pads the message and returns its 32-byte digest. Call once.
  std::array<uint8_t, 32> Finish();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The lower-case hexadecimal SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace ctxkit::testing

#endif  // CTXKIT_TESTS_TOKENIZER_SHA256_H_
