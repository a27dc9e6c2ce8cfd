#include "lib/json/json_match.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "lib/json/json_reader.h"
#include "simdjson.h"

namespace ctxkit::internal {

using simdjson::dom::element;
using simdjson::dom::element_type;

JsonContainsFilter::JsonContainsFilter()
    : parser_(std::make_unique<simdjson::dom::parser>()) {}
JsonContainsFilter::JsonContainsFilter(JsonContainsFilter&&) noexcept = default;
JsonContainsFilter& JsonContainsFilter::operator=(
    JsonContainsFilter&&) noexcept = default;
JsonContainsFilter::~JsonContainsFilter() = default;

absl::StatusOr<JsonContainsFilter> JsonContainsFilter::Compile(
    std::string_view filter, std::string_view what) {
  JsonContainsFilter out;
  absl::StatusOr<element> e = ParseJson(*out.parser_, filter, what);
  if (!e.ok()) return e.status();
  if (!e->is_object()) {
    return absl::InvalidArgumentError(
        std::string(what) +
        " must be a JSON object of the members to match (got " +
        std::string(filter.substr(0, 40)) + ")");
  }
  out.root_ = Build(*e);
  return out;
}

JsonContainsFilter::Node JsonContainsFilter::Build(const element& e) {
  Node n;
  switch (e.type()) {
    case element_type::NULL_VALUE:
      break;
    case element_type::BOOL:
      n.kind = Node::Kind::kBool;
      n.boolean = e.get_bool().value_unsafe();
      break;
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
      n.kind = Node::Kind::kNumber;
      n.number = e.get_double().value_unsafe();
      break;
    case element_type::STRING:
      n.kind = Node::Kind::kString;
      n.text = std::string(e.get_string().value_unsafe());
      break;
    case element_type::ARRAY: {
      n.kind = Node::Kind::kArray;
      // Held in a local: a range-for over value_unsafe() of the temporary
      // simdjson_result would outlive it.
      const simdjson::dom::array a = e.get_array().value_unsafe();
      for (element item : a) n.items.push_back(Build(item));
      break;
    }
    case element_type::OBJECT: {
      n.kind = Node::Kind::kObject;
      // A repeated key keeps its last value, as Satisfies reads documents.
      const simdjson::dom::object o = e.get_object().value_unsafe();
      for (auto field : o) {
        Node value = Build(field.value);
        bool replaced = false;
        for (auto& [key, old] : n.members) {
          if (key == field.key) {
            old = std::move(value);
            replaced = true;
            break;
          }
        }
        if (!replaced) n.members.emplace_back(field.key, std::move(value));
      }
      break;
    }
  }
  return n;
}

bool JsonContainsFilter::Satisfies(const Node& f, const element& e) {
  switch (f.kind) {
    case Node::Kind::kNull:
      return e.is_null();
    case Node::Kind::kBool:
      return e.is_bool() && e.get_bool().value_unsafe() == f.boolean;
    case Node::Kind::kNumber:
      return e.is_number() && e.get_double().value_unsafe() == f.number;
    case Node::Kind::kString:
      return e.is_string() && e.get_string().value_unsafe() == f.text;
    case Node::Kind::kArray: {
      if (!e.is_array()) return false;
      const simdjson::dom::array a = e.get_array().value_unsafe();
      for (const Node& want : f.items) {
        bool found = false;
        for (element item : a) {
          if (Satisfies(want, item)) {
            found = true;
            break;
          }
        }
        if (!found) return false;
      }
      return true;
    }
    case Node::Kind::kObject: {
      if (!e.is_object()) return false;
      const simdjson::dom::object o = e.get_object().value_unsafe();
      for (const auto& [key, want] : f.members) {
        // The last member named `key`, as MergePatch reads a repeated key.
        std::optional<element> have;
        for (auto field : o) {
          if (field.key == key) have = field.value;
        }
        if (!have.has_value()) {
          if (want.kind != Node::Kind::kNull) return false;
        } else if (!Satisfies(want, *have)) {
          return false;
        }
      }
      return true;
    }
  }
  return false;
}

bool JsonContainsFilter::Matches(std::string_view document) {
  absl::StatusOr<element> e = ParseJson(*parser_, document, "document");
  return e.ok() && e->is_object() && Satisfies(root_, *e);
}

}  // namespace ctxkit::internal
