// MakeHashedEmbedder: ctxkit's model-free embedder (context_graph.h).
//
// Features, each hashed with XXH3-64 into a bucket (hash mod dims) with a
// sign (the hash's top bit), so that collisions cancel on average instead
// of piling up:
//   each word (a run of ASCII letters and digits, lower-cased, or of bytes
//   >= 0x80, so UTF-8 words stay whole)          weight 1
//   each pair of neighbouring words               weight 0.5
//   each character trigram of " word " (padded)  weight 0.5 / trigrams
//                                                 of the word, so a long
//                                                 word weighs as a short one
// The vector is then L2-normalized. A text without words gives the zero
// vector, which the graph refuses as an embedding (no direction).

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/status/status_internal.h"

namespace ctxkit {
namespace {

// Different seeds per feature kind, so a word and a trigram that spell the
// same bytes do not share a bucket by construction.
constexpr uint64_t kWordSeed = 0x6374786b69742d77;     // "ctxkit-w"
constexpr uint64_t kPairSeed = 0x6374786b69742d70;     // "ctxkit-p"
constexpr uint64_t kTrigramSeed = 0x6374786b69742d74;  // "ctxkit-t"

bool IsWordByte(unsigned char c) { return std::isalnum(c) != 0 || c >= 0x80; }

class HashedEmbedder final : public Embedder {
 public:
  explicit HashedEmbedder(uint32_t dims) : dims_(dims) {}

  uint32_t dims() const override { return dims_; }
  std::string_view model() const override { return "ctxkit-hashed-v1"; }

  Status Embed(std::span<const std::string_view> texts,
               std::span<float> out) override {
    if (out.size() != texts.size() * dims_) {
      return internal::ToPublic(absl::InvalidArgumentError(absl::StrFormat(
          "out holds %d floats; %d texts of %d dims need %d", out.size(),
          texts.size(), dims_, texts.size() * dims_)));
    }
    for (size_t i = 0; i < texts.size(); ++i) {
      EmbedOne(texts[i], out.subspan(i * dims_, dims_));
    }
    return Status();
  }

 private:
  void Add(std::span<float> v, std::string_view bytes, uint64_t seed,
           double weight) const {
    const uint64_t h = XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
    const double sign = (h >> 63) != 0 ? -1.0 : 1.0;
    v[(h & 0x7fffffffffffffff) % dims_] += static_cast<float>(sign * weight);
  }

  void EmbedOne(std::string_view text, std::span<float> v) const {
    std::fill(v.begin(), v.end(), 0.0f);
    std::vector<std::string> words;
    std::string word;
    for (size_t i = 0; i <= text.size(); ++i) {
      const auto c = i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
      if (i < text.size() && IsWordByte(c)) {
        word += static_cast<char>(c < 0x80 ? std::tolower(c) : c);
      } else if (!word.empty()) {
        words.push_back(std::move(word));
        word.clear();
      }
    }
    for (size_t w = 0; w < words.size(); ++w) {
      Add(v, words[w], kWordSeed, 1.0);
      if (w + 1 < words.size()) {
        const std::string pair = words[w] + ' ' + words[w + 1];
        Add(v, pair, kPairSeed, 0.5);
      }
      const std::string padded = ' ' + words[w] + ' ';
      const size_t trigrams = padded.size() - 2;
      for (size_t t = 0; t < trigrams; ++t) {
        Add(v, std::string_view(padded).substr(t, 3), kTrigramSeed,
            0.5 / static_cast<double>(trigrams));
      }
    }
    double sum = 0;
    for (float x : v) sum += static_cast<double>(x) * x;
    if (sum == 0) return;
    const double inv = 1.0 / std::sqrt(sum);
    for (float& x : v) x = static_cast<float>(x * inv);
  }

  const uint32_t dims_;
};

}  // namespace

StatusOr<std::shared_ptr<Embedder>> MakeHashedEmbedder(uint32_t dims) {
  if (dims < 1 || dims > kMaxEmbeddingDims) {
    return internal::ToPublic(absl::InvalidArgumentError(absl::StrFormat(
        "dims is %d; it must be between 1 and %d", dims, kMaxEmbeddingDims)));
  }
  return std::shared_ptr<Embedder>(std::make_shared<HashedEmbedder>(dims));
}

}  // namespace ctxkit
