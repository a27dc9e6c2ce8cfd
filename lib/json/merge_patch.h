// JSON Merge Patch (RFC 7386) over stored JSON objects: how a context
// graph edge's metadata is updated by a later AddRelationship.

#ifndef CTXKIT_LIB_JSON_MERGE_PATCH_H_
#define CTXKIT_LIB_JSON_MERGE_PATCH_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ctxkit::internal {

// The result of applying `patch` to `target`, both JSON texts, as compact
// JSON text written by JsonWriter. RFC 7386 section 2: a patch that is an
// object merges member by member (null removes the member, an object
// merges recursively into the target's member, anything else replaces it);
// a patch that is not an object replaces the target. The target's members
// keep their order, new members follow in the patch's order. Numbers keep
// their type as WriteJsonValue() does. INVALID_ARGUMENT naming
// `target_what` or `patch_what` when that text is not one valid JSON value
// (or is not valid UTF-8). Thread-safe; nothing retained.
absl::StatusOr<std::string> MergePatch(std::string_view target,
                                       std::string_view patch,
                                       std::string_view target_what,
                                       std::string_view patch_what);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_JSON_MERGE_PATCH_H_
