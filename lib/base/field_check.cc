#include "lib/base/field_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/edit_distance.h"
#include "lib/json/json_reader.h"
#include "lib/json/utf8.h"
#include "simdjson.h"

namespace ctxkit::internal {

absl::Status CheckText(std::string_view field, std::string_view value,
                       size_t max_bytes, bool allow_empty) {
  if (value.empty() && !allow_empty) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must not be empty", field));
  }
  if (value.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is %d bytes; the limit is %d", field, value.size(), max_bytes));
  }
  return ValidateUtf8(value, field);
}

absl::Status CheckJsonObject(std::string_view field, std::string_view value,
                             size_t max_bytes) {
  if (absl::Status s = CheckText(field, value, max_bytes); !s.ok()) return s;
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root = ParseJson(parser, value, field);
  if (!root.ok()) return root.status();
  return AsObject(*root, field).status();
}

absl::Status CheckRange(std::string_view field, int64_t value, int64_t min,
                        int64_t max) {
  if (value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is %d; it must be between %d and %d", field, value, min, max));
  }
  return absl::OkStatus();
}

namespace {

bool ContainsIgnoringCase(std::string_view haystack, std::string_view needle) {
  return std::search(
             haystack.begin(), haystack.end(), needle.begin(), needle.end(),
             [](char x, char y) {
               return absl::ascii_tolower(static_cast<unsigned char>(x)) ==
                      absl::ascii_tolower(static_cast<unsigned char>(y));
             }) != haystack.end();
}

}  // namespace

std::string_view ClosestName(std::string_view name,
                             std::span<const std::string_view> known) {
  // Longer keys than this are not typos of a member name; the cap also
  // bounds the distance table for hostile input.
  constexpr size_t kMaxCompared = 128;
  if (name.empty() || name.size() > kMaxCompared) return {};
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  // ASCII case ignored: a typed key is short, so lower-casing copies costs
  // nothing.
  const std::string lower_name = absl::AsciiStrToLower(AV(name));
  std::string_view best;
  size_t best_distance = limit + 1;
  for (const std::string_view candidate : known) {
    const size_t distance =
        EditDistance(lower_name, absl::AsciiStrToLower(AV(candidate)));
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (!best.empty()) return best;
  if (name.size() < 3) return {};
  for (const std::string_view candidate : known) {
    if (ContainsIgnoringCase(candidate, name) ||
        (candidate.size() >= 3 && ContainsIgnoringCase(name, candidate))) {
      return candidate;
    }
  }
  return {};
}

absl::Status UnknownKeyError(std::string_view context, std::string_view key,
                             std::span<const std::string_view> known) {
  // The key comes from the caller's document: never echo bytes that would
  // make the message itself invalid UTF-8.
  const std::string shown = ReplaceInvalidUtf8(key);
  const std::string prefix =
      context.empty() ? std::string() : std::string(context) + ": ";
  const std::string_view closest = ClosestName(key, known);
  if (!closest.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%sunknown key '%s'; did you mean '%s'?", prefix, shown, closest));
  }
  std::string names;
  for (const std::string_view name : known) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%sunknown key '%s' (known: %s)", prefix, shown, names));
}

}  // namespace ctxkit::internal
