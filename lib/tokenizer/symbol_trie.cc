#include "lib/tokenizer/symbol_trie.h"

#include <algorithm>
#include <utility>

namespace ctxkit::internal {

SymbolTrie::SymbolTrie() {
  uint8_t next = 1;
  for (int b = 0; b < 256; ++b) {
    code_[b] = IsSymbol(static_cast<unsigned char>(b)) ? next++ : 0;
  }
  slots_.resize(1);
  infos_.resize(1);
  slots_[0].check = kFree - 1;  // the root: used, and no node's child
}

void SymbolTrie::Assemble(std::vector<Pending>& tokens) {
  // A plain trie first (children as sorted (code, node) lists), then each
  // node's children are placed at the first base where all their slots are
  // free, breadth first.
  struct Node {
    std::vector<std::pair<uint8_t, uint32_t>> children;
    uint32_t rank = kNoToken;
    std::string_view bytes;
  };
  std::vector<Node> nodes(1);
  for (const Pending& token : tokens) {
    uint32_t n = 0;
    for (const char c : token.bytes) {
      const uint8_t code = code_[static_cast<unsigned char>(c)];
      auto& children = nodes[n].children;
      auto it =
          std::find_if(children.begin(), children.end(),
                       [&](const auto& child) { return child.first == code; });
      if (it != children.end()) {
        n = it->second;
        continue;
      }
      const auto child = static_cast<uint32_t>(nodes.size());
      nodes[n].children.emplace_back(code, child);
      nodes.emplace_back();
      n = child;
    }
    nodes[n].rank = token.rank;
    nodes[n].bytes = token.bytes;
    ++token_count_;
  }
  std::vector<uint32_t> slot_of(nodes.size(), 0);
  std::vector<uint32_t> queue = {0};
  size_t first_free = 1;
  for (size_t q = 0; q < queue.size(); ++q) {
    const uint32_t n = queue[q];
    const uint32_t s = slot_of[n];
    slots_[s].rank = nodes[n].rank;
    if (token_bytes_.size() <= s) token_bytes_.resize(s + 1);
    token_bytes_[s] = nodes[n].bytes;
    auto& children = nodes[n].children;
    if (children.empty()) continue;
    std::sort(children.begin(), children.end());
    while (first_free < slots_.size() && slots_[first_free].check != kFree) {
      ++first_free;
    }
    // The smallest base whose child slots are all free (slots past the end
    // are free); bases start where the first child lands on the first free
    // slot.
    size_t base = first_free > children[0].first
                      ? first_free - children[0].first
                      : size_t{0};
    for (;; ++base) {
      bool fits = true;
      for (const auto& [code, child] : children) {
        const size_t t = base + code;
        if (t < slots_.size() && slots_[t].check != kFree) {
          fits = false;
          break;
        }
      }
      if (fits) break;
    }
    slots_[s].base = static_cast<uint32_t>(base);
    const size_t last = base + children.back().first;
    if (last >= slots_.size()) slots_.resize(last + 1);
    for (const auto& [code, child] : children) {
      slots_[base + code].check = s;
      slot_of[child] = static_cast<uint32_t>(base + code);
      queue.push_back(child);
    }
  }
  slots_.shrink_to_fit();
  token_bytes_.resize(slots_.size());
  infos_.resize(slots_.size());
}

void SymbolTrie::Link() {
  for (uint32_t s = 1; s < slots_.size(); ++s) {
    if (slots_[s].check == kFree) continue;
    Info& info = infos_[s];
    uint32_t length = 1;
    for (uint32_t up = slots_[s].check; up != 0; up = slots_[up].check) {
      if (info.shorter == kNoNode && slots_[up].rank != kNoToken) {
        info.shorter = up;
      }
      ++length;
    }
    info.length = static_cast<uint16_t>(length);
  }
}

}  // namespace ctxkit::internal
