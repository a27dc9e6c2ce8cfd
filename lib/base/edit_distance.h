// The edit distance behind every "did you mean" of the library: unknown
// JSON keys (field_check.h) and unknown model names (ModelRegistry::Suggest).

#ifndef CTXKIT_LIB_BASE_EDIT_DISTANCE_H_
#define CTXKIT_LIB_BASE_EDIT_DISTANCE_H_

#include <cstddef>
#include <limits>
#include <string_view>

namespace ctxkit::internal {

// What EditDistance returns when the distance surely exceeds its bound.
inline constexpr size_t kFarEditDistance = std::numeric_limits<size_t>::max();

// The optimal-string-alignment distance between `a` and `b`: the fewest
// insertions, deletions, substitutions and swaps of two neighbouring bytes
// (the commonest typo after a missing letter) that turn one into the other,
// no substring being edited twice. Bytes compare exactly: lower-case both
// first to ignore case. kFarEditDistance, without computing anything, when
// the lengths alone show that the distance exceeds `bound`. Time
// O(a.size() * b.size()), memory O(b.size()): callers cap the lengths of
// names from outside. Pure; thread-safe.
size_t EditDistance(std::string_view a, std::string_view b,
                    size_t bound = kFarEditDistance);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_EDIT_DISTANCE_H_
