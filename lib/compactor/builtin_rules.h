// The classifier's built-in rule table (documented by BuiltinRulesJson()).

#ifndef CTXKIT_LIB_COMPACTOR_BUILTIN_RULES_H_
#define CTXKIT_LIB_COMPACTOR_BUILTIN_RULES_H_

#include <vector>

#include "ctxkit/classifier.h"

namespace ctxkit::internal {

// The built-in rules in the order they are tried. Every rule is valid for
// Classifier::AddRule(). Deterministic; thread-safe.
std::vector<ClassificationRule> BuiltinRules();

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_BUILTIN_RULES_H_
