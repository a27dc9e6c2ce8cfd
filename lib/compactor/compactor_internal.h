// The compactor part as the rest of lib/ calls it: the format and strategy
// parsers and the classifier's rule loading, returning absl::Status like
// everything else inside the library (DESIGN.md).
//
// These functions are the implementation; the public functions in
// include/ctxkit/compactor.h and classifier.h are each one of them plus one
// ToPublic, so a status crosses between Abseil and ctxkit only where a
// user's call enters or leaves the library, never between two parts of lib/.
// The prefix (Classifier...) keeps a call site inside a class from resolving
// to a member of the same name; the twins of free functions keep the public
// name, in ctxkit::internal.
//
// Contracts, errors, lifetimes and thread safety are those of the public
// function of the same name.

#ifndef CTXKIT_LIB_COMPACTOR_COMPACTOR_INTERNAL_H_
#define CTXKIT_LIB_COMPACTOR_COMPACTOR_INTERNAL_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/classifier.h"
#include "ctxkit/compactor.h"

namespace ctxkit::internal {

// The friend of Classifier through which the functions below reach its
// rule table.
struct ClassifierAccess {
  // As the public Classifier::AddRulesJson.
  static absl::Status AddRulesJson(Classifier& classifier,
                                   std::string_view json);
};

// As the public Classifier::AddRulesJson: all or nothing, INVALID_ARGUMENT
// naming "rules[i].<field>".
inline absl::Status ClassifierAddRulesJson(Classifier& classifier,
                                           std::string_view json) {
  return ClassifierAccess::AddRulesJson(classifier, json);
}

// As the public ctxkit::ParseChatFormat.
absl::StatusOr<ChatFormat> ParseChatFormat(std::string_view name);

// As the public ctxkit::ParseCompactionStrategy.
absl::StatusOr<CompactionStrategy> ParseCompactionStrategy(
    std::string_view name);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_COMPACTOR_INTERNAL_H_
