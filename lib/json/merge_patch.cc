#include "lib/json/merge_patch.h"

#include <optional>
#include <string>
#include <string_view>

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

std::optional<element> Member(const object& o, std::string_view key) {
  // The last occurrence wins, as in most parsers that keep one.
  std::optional<element> found;
  for (auto field : o) {
    if (field.key == key) found = field.value;
  }
  return found;
}

void Merge(JsonWriter& writer, std::optional<element> target, element patch) {
  if (!patch.is_object()) {
    Replay(writer, patch);
    return;
  }
  const object patch_object = patch.get_object().value_unsafe();
  writer.BeginObject();
  absl::flat_hash_set<std::string_view> written;
  if (target && target->is_object()) {
    const object target_object = target->get_object().value_unsafe();
    for (auto field : target_object) {
      if (!written.insert(field.key).second) continue;
      const std::optional<element> change = Member(patch_object, field.key);
      if (change && change->is_null()) continue;
      writer.Key(field.key);
      if (change) {
        Merge(writer, field.value, *change);
      } else {
        Replay(writer, field.value);
      }
    }
  }
  for (auto field : patch_object) {
    if (!written.insert(field.key).second) continue;
    const element value = *Member(patch_object, field.key);
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
