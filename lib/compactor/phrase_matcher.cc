#include "lib/compactor/phrase_matcher.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"

namespace ctxkit::internal {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

}  // namespace

PhraseMatcher::PhraseMatcher() { Build({}); }

PhraseMatcher::PhraseMatcher(std::span<const std::string> phrases) {
  std::vector<std::string_view> views(phrases.begin(), phrases.end());
  Build(views);
}

PhraseMatcher::PhraseMatcher(std::span<const std::string_view> phrases) {
  Build(phrases);
}

size_t PhraseMatcher::state_count() const { return table_.size() / stride_; }

void PhraseMatcher::Build(std::span<const std::string_view> phrases) {
  // Byte classes: 0 for bytes in no phrase; letters share their case's class.
  class_of_.fill(0);
  uint32_t classes = 1;
  for (std::string_view phrase : phrases) {
    for (char ch : phrase) {
      const unsigned char lower = absl::ascii_tolower(ch);
      if (class_of_[lower] != 0) continue;
      class_of_[lower] = static_cast<uint8_t>(classes++);
      if (absl::ascii_islower(lower)) {
        class_of_[static_cast<unsigned char>(absl::ascii_toupper(lower))] =
            class_of_[lower];
      }
    }
  }
  const uint32_t stride = classes;  // at most 256 - 26 + 1 classes

  // The trie, in state ids; kNone where there is no edge yet.
  std::vector<uint32_t> next(stride, kNone);
  std::vector<std::vector<uint32_t>> own(1);
  lengths_.clear();
  lengths_.reserve(phrases.size());
  for (size_t id = 0; id < phrases.size(); ++id) {
    std::string_view phrase = phrases[id];
    lengths_.push_back(static_cast<uint32_t>(phrase.size()));
    if (phrase.empty()) continue;
    uint32_t state = 0;
    for (char ch : phrase) {
      const uint32_t c = class_of_[static_cast<unsigned char>(ch)];
      uint32_t& edge = next[static_cast<size_t>(state) * stride + c];
      if (edge == kNone) {
        const auto created = static_cast<uint32_t>(own.size());
        edge = created;  // before the resize invalidates `edge`
        next.resize(next.size() + stride, kNone);
        own.emplace_back();
      }
      state = next[static_cast<size_t>(state) * stride + c];
    }
    own[state].push_back(static_cast<uint32_t>(id));
  }
  const size_t state_count = own.size();

  // Breadth-first: failure links, completed transitions, and each state's
  // outputs (its own phrases, then those of its failure state).
  std::vector<uint32_t> fail(state_count, 0);
  std::vector<std::vector<uint32_t>> out(state_count);
  std::vector<uint32_t> order;
  order.reserve(state_count);
  for (uint32_t c = 0; c < stride; ++c) {
    uint32_t& edge = next[c];
    if (edge == kNone) {
      edge = 0;
    } else {
      fail[edge] = 0;
      order.push_back(edge);
    }
  }
  for (size_t head = 0; head < order.size(); ++head) {
    const uint32_t state = order[head];
    out[state] = own[state];
    const std::vector<uint32_t>& inherited = out[fail[state]];
    out[state].insert(out[state].end(), inherited.begin(), inherited.end());
    const size_t row = static_cast<size_t>(state) * stride;
    const size_t fail_row = static_cast<size_t>(fail[state]) * stride;
    for (uint32_t c = 0; c < stride; ++c) {
      uint32_t& edge = next[row + c];
      if (edge == kNone) {
        edge = next[fail_row + c];
      } else {
        fail[edge] = next[fail_row + c];
        order.push_back(edge);
      }
    }
  }

  // Renumber: states without output first (the root stays 0), then those
  // with output, so the scan tests for output with one comparison.
  std::vector<uint32_t> renumbered(state_count);
  uint32_t next_id = 0;
  for (size_t s = 0; s < state_count; ++s) {
    if (out[s].empty()) renumbered[s] = next_id++;
  }
  const uint32_t first_output_state = next_id;
  for (size_t s = 0; s < state_count; ++s) {
    if (!out[s].empty()) renumbered[s] = next_id++;
  }

  stride_ = stride;
  table_.assign(state_count * stride, 0);
  output_begin_.assign(state_count - first_output_state + 1, 0);
  outputs_.clear();
  std::vector<uint32_t> by_new_id(state_count);
  for (size_t s = 0; s < state_count; ++s) by_new_id[renumbered[s]] = s;
  for (size_t id = 0; id < state_count; ++id) {
    const uint32_t s = by_new_id[id];
    for (uint32_t c = 0; c < stride; ++c) {
      table_[id * stride + c] =
          renumbered[next[static_cast<size_t>(s) * stride + c]] * stride;
    }
    if (id >= first_output_state) {
      outputs_.insert(outputs_.end(), out[s].begin(), out[s].end());
      output_begin_[id - first_output_state + 1] =
          static_cast<uint32_t>(outputs_.size());
    }
  }
  first_output_row_ = first_output_state < state_count
                          ? first_output_state * stride
                          : kNoOutput;
}

std::vector<uint32_t> PhraseMatcher::FindAll(std::string_view text) const {
  std::vector<uint32_t> ids;
  Scan(text, [&ids](uint32_t id, size_t) { ids.push_back(id); });
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace ctxkit::internal
