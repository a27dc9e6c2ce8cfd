#include "lib/json/merge_patch.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/json/json_copy.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "simdjson.h"

namespace ctxkit::internal {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// The members of `o` by key; the last occurrence of a key wins, as in most
// parsers that keep one. A map, so that merging an object of n members is
// not n scans of the other.
absl::flat_hash_map<std::string_view, element> Members(const object& o) {
  absl::flat_hash_map<std::string_view, element> members;
  for (auto field : o) members.insert_or_assign(field.key, field.value);
  return members;
}

void Merge(JsonWriter& writer, std::optional<element> target, element patch) {
  if (!patch.is_object()) {
    Replay(writer, patch);
    return;
  }
  const object patch_object = patch.get_object().value_unsafe();
  const absl::flat_hash_map<std::string_view, element> changes =
      Members(patch_object);
  writer.BeginObject();
  absl::flat_hash_set<std::string_view> written;
  if (target && target->is_object()) {
    const object target_object = target->get_object().value_unsafe();
    for (auto field : target_object) {
      if (!written.insert(field.key).second) continue;
      const auto change = changes.find(field.key);
      if (change == changes.end()) {
        writer.Key(field.key);
        Replay(writer, field.value);
      } else if (!change->second.is_null()) {
        writer.Key(field.key);
        Merge(writer, field.value, change->second);
      }
    }
  }
  for (auto field : patch_object) {
    if (!written.insert(field.key).second) continue;
    const element value = changes.at(field.key);
    if (value.is_null()) continue;
    writer.Key(field.key);
    Merge(writer, std::nullopt, value);
  }
  writer.EndObject();
}

}  // namespace

absl::StatusOr<std::string> MergePatch(std::string_view target,
                                       std::string_view patch,
                                       std::string_view target_what,
                                       std::string_view patch_what) {
  simdjson::dom::parser target_parser, patch_parser;
  absl::StatusOr<element> t = ParseJson(target_parser, target, target_what);
  if (!t.ok()) return t.status();
  absl::StatusOr<element> p = ParseJson(patch_parser, patch, patch_what);
  if (!p.ok()) return p.status();
  JsonWriter writer;
  Merge(writer, *t, *p);
  return std::move(writer).Finish();
}

}  // namespace ctxkit::internal
