// ContextGraphOptions::ignore_patterns: the gitignore-style globs that
// refuse context ids (their syntax is in context_graph.h).

#ifndef CTXKIT_LIB_GRAPH_IGNORE_PATTERNS_H_
#define CTXKIT_LIB_GRAPH_IGNORE_PATTERNS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace ctxkit::internal {

inline constexpr size_t kMaxIgnorePatterns = 1000;
inline constexpr size_t kMaxIgnorePatternBytes = 1024;

// OK when every pattern is usable; INVALID_ARGUMENT naming
// ignore_patterns[i] (or ignore_patterns when there are too many).
absl::Status CheckIgnorePatterns(const std::vector<std::string>& patterns);

// Whether `id` matches `pattern` (a pattern CheckIgnorePatterns accepts).
bool MatchesIgnorePattern(std::string_view pattern, std::string_view id);

// INVALID_ARGUMENT "<field> matches ignore pattern <P>" for the first
// pattern `id` matches; OK when none does.
absl::Status CheckNotIgnored(const std::vector<std::string>& patterns,
                             std::string_view field, std::string_view id);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_IGNORE_PATTERNS_H_
