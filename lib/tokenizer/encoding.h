// Encoding: one vocabulary, one pre-tokenization pattern and a set of special
// tokens; everything Tokenizer does happens here.

#ifndef CTXKIT_LIB_TOKENIZER_ENCODING_H_
#define CTXKIT_LIB_TOKENIZER_ENCODING_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/tokenizer.h"
#include "lib/tokenizer/pretokenizer.h"
#include "lib/tokenizer/vocabulary.h"
#include "lib/unicode/normalize.h"

namespace ctxkit::internal {

// What an encoding does to text before it looks for special tokens and
// pre-tokenizes: nothing (tiktoken's encodings), or Unicode NFKC (the legacy
// Claude vocabulary, whose reference tokenizer runs text.normalize("NFKC")).
enum class InputNormalization { kNone, kNfkc };

// Immutable after Create; every method is safe from any number of threads.
class Encoding {
 public:
  // `specials` are SpecialToken{text, rank} from vocabulary.h; their rank is
  // the token id. Fails with INVALID_ARGUMENT if a byte is not a token
  // (merging starts from single bytes), or if special tokens repeat a text
  // or collide with a regular token's id. Encode, EncodeInto and Count apply
  // `normalization` to the (valid or replaced) UTF-8 text first, so special
  // tokens are found in, error offsets refer to, and ids are those of the
  // normalized text.
  static absl::StatusOr<std::unique_ptr<Encoding>> Create(
      std::string name, std::shared_ptr<const Vocabulary> vocabulary,
      PretokenPattern pattern, std::vector<SpecialToken> specials,
      InputNormalization normalization = InputNormalization::kNone);

  const std::string& name() const { return name_; }
  uint32_t vocabulary_size() const { return vocabulary_size_; }
  InputNormalization normalization() const { return normalization_; }

  // The text this encoding tokenizes for `valid_utf8`: the text itself
  // (no copy) when the encoding does not normalize or the text is already
  // normalized, otherwise *storage holding the normalized text. When
  // `stretches` is not null it receives the stretches normalization
  // rewrote (lib/unicode/normalize.h), to map offsets back to the input;
  // it is left empty when nothing was rewritten.
  std::string_view Normalize(
      std::string_view valid_utf8, std::string* storage,
      std::vector<unicode::NfkcStretch>* stretches = nullptr) const;

  absl::Status Encode(std::string_view text, const EncodeOptions& options,
                      std::vector<uint32_t>* out) const;
  // Encode, but stops once more than `limit` ids have been appended, at the
  // end of the pre-token piece that went past it: the ids appended are then
  // the first ones of the whole text's, at least limit + 1 of them. The
  // checks that concern the whole text (UTF-8, disallowed special tokens)
  // still run on all of it, so the errors are Encode's.
  absl::Status EncodePrefix(std::string_view text, const EncodeOptions& options,
                            size_t limit, std::vector<uint32_t>* out) const;
  // Writes the ids into `out` while they fit and returns how many ids the
  // text has, which may exceed out.size() (then only a prefix is written).
  absl::StatusOr<size_t> EncodeInto(std::string_view text,
                                    const EncodeOptions& options,
                                    std::span<uint32_t> out) const;
  absl::StatusOr<size_t> Count(std::string_view text,
                               const EncodeOptions& options) const;
  absl::StatusOr<std::string> Decode(std::span<const uint32_t> ids) const;
  absl::StatusOr<std::string_view> TokenBytes(uint32_t id) const;
  // The special tokens, {text, id}, in the order they were given to Create.
  const std::vector<SpecialToken>& specials() const { return specials_; }

 private:
  explicit Encoding(std::shared_ptr<const Vocabulary> vocabulary)
      : vocabulary_(std::move(vocabulary)) {}

  // The special tokens `set` names, validated; indices into specials_.
  absl::StatusOr<std::vector<bool>> Resolve(const SpecialTokenSet& set,
                                            std::string_view option) const;
  // The first special token in `text` at or after `from` among those marked
  // in `wanted`: its index and offset, or {-1, npos}.
  std::pair<int, size_t> FindSpecial(std::string_view text, size_t from,
                                     const std::vector<bool>& wanted) const;
  // Runs `sink(id)` for every token of `text` (valid UTF-8).
  template <typename Sink>
  absl::Status EncodeValid(std::string_view text, const EncodeOptions& options,
                           Sink&& sink) const;
  template <typename Sink>
  absl::Status EncodeAny(std::string_view text, const EncodeOptions& options,
                         Sink&& sink) const;

  std::string name_;
  // Identifies this encoding in the per-thread piece cache.
  uint32_t id_ = 0;
  // Shared: encodings that differ only in special tokens (p50k_base and
  // p50k_edit, o200k_base and o200k_harmony) use one vocabulary.
  std::shared_ptr<const Vocabulary> vocabulary_;
  PretokenPattern pattern_ = PretokenPattern::kCl100k;
  InputNormalization normalization_ = InputNormalization::kNone;
  std::vector<SpecialToken> specials_;
  absl::flat_hash_map<std::string, int> special_index_;  // text -> index
  absl::flat_hash_map<uint32_t, int> special_by_id_;     // id -> index
  // Distinct lengths of special tokens, longest first, and which bytes can
  // start one: the search looks up a candidate of each length in
  // special_index_ only where such a byte occurs.
  std::vector<size_t> special_lengths_;
  bool special_first_byte_[256] = {};
  // The byte every special token starts with, or -1 if they differ.
  int single_first_byte_ = -1;
  uint32_t vocabulary_size_ = 0;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_ENCODING_H_
