// PhraseMatcher: finds, in one pass over a text, every occurrence of a fixed
// set of phrases, ignoring ASCII case. The classifier scans each message once
// with all the phrases of all its rules, so its cost is linear in the text
// and independent of the number of rules.
//
//   PhraseMatcher matcher({"error: ", "traceback"});
//   matcher.Scan(text, [&](uint32_t id, size_t end) { ... });
//
// It is an Aho-Corasick automaton compiled to a dense DFA: bytes are first
// mapped to classes (each distinct byte of the phrases, upper- and lower-case
// letters together, and one class for every other byte), and each state has
// one transition per class, so the scan does one table load per byte and no
// failure-link walking. States that complete a phrase are numbered last, so
// that the hot loop tests "is there output here" with one comparison.
//
// Size: (number of trie states + 1) x (number of classes) x 4 bytes; for the
// built-in table about 3,000 states x 60 classes. Callers bound the total
// phrase length (see ClassificationRule's limits).
//
// Thread safety: immutable after construction; Scan() may run concurrently.

#ifndef CTXKIT_LIB_COMPACTOR_PHRASE_MATCHER_H_
#define CTXKIT_LIB_COMPACTOR_PHRASE_MATCHER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::internal {

class PhraseMatcher {
 public:
  // Matches nothing.
  PhraseMatcher();
  // Phrase i gets id i. Empty phrases are never reported; phrases equal but
  // for ASCII case are each reported. Non-ASCII bytes compare exactly.
  explicit PhraseMatcher(std::span<const std::string> phrases);
  explicit PhraseMatcher(std::span<const std::string_view> phrases);

  size_t phrase_count() const { return lengths_.size(); }
  // Length in bytes of phrase `id`.
  size_t phrase_length(uint32_t id) const { return lengths_[id]; }
  // Number of DFA states (for tests and size estimates).
  size_t state_count() const;

  // Calls on_match(uint32_t id, size_t end) for every occurrence of every
  // phrase in `text`, where end is the offset just past the occurrence (so
  // it starts at end - phrase_length(id)). Occurrences are reported in order
  // of `end`; several ending at the same offset in an unspecified but fixed
  // order.
  template <typename OnMatch>
  void Scan(std::string_view text, OnMatch&& on_match) const {
    if (first_output_row_ == kNoOutput) return;
    const uint32_t* table = table_.data();
    const uint8_t* classes = class_of_.data();
    const uint32_t first_output_row = first_output_row_;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    uint32_t row = 0;
    for (size_t i = 0; i < n; ++i) {
      row = table[row + classes[p[i]]];
      if (row >= first_output_row) [[unlikely]] {
        const uint32_t state = (row - first_output_row) / stride_;
        for (uint32_t k = output_begin_[state]; k < output_begin_[state + 1];
             ++k) {
          on_match(outputs_[k], i + 1);
        }
      }
    }
  }

  // The ids of the phrases that occur in `text`, ascending, each once.
  std::vector<uint32_t> FindAll(std::string_view text) const;

 private:
  static constexpr uint32_t kNoOutput = UINT32_MAX;

  void Build(std::span<const std::string_view> phrases);

  std::array<uint8_t, 256> class_of_{};
  uint32_t stride_ = 1;  // number of byte classes
  // Row-major transitions; each entry is the next state's row offset
  // (state * stride_), so the scan needs no multiplication.
  std::vector<uint32_t> table_;
  // Row offset of the first state that completes a phrase; those states are
  // numbered last. kNoOutput when there are none.
  uint32_t first_output_row_ = kNoOutput;
  // For output state k (counted from the first one): phrase ids
  // outputs_[output_begin_[k] .. output_begin_[k + 1]), including those
  // that end here as suffixes of longer phrases.
  std::vector<uint32_t> output_begin_;
  std::vector<uint32_t> outputs_;
  std::vector<uint32_t> lengths_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_PHRASE_MATCHER_H_
