#include "programs/ctxkit/mcp/schema.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "programs/ctxkit/host/json_out.h"
#include "programs/ctxkit/host/json_text.h"
#include "programs/ctxkit/host/text.h"

namespace ctxkit::mcp {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

enum TypeBit : unsigned {
  kNull = 1,
  kBoolean = 2,
  kInteger = 4,
  kNumber = 8,  // includes integers
  kString = 16,
  kArray = 32,
  kObject = 64,
};

constexpr std::pair<std::string_view, unsigned> kTypeNames[] = {
    {"null", kNull},     {"boolean", kBoolean}, {"integer", kInteger},
    {"number", kNumber}, {"string", kString},   {"array", kArray},
    {"object", kObject},
};

// What a value is, named as the seed's validator (Zod) names it.
std::string_view Received(element value) {
  switch (value.type()) {
    case element_type::NULL_VALUE:
      return "null";
    case element_type::BOOL:
      return "boolean";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
      return "number";
    case element_type::STRING:
      return "string";
    case element_type::ARRAY:
      return "array";
    case element_type::OBJECT:
      return "object";
  }
  return "unknown";
}

bool IsNumber(element value) {
  const element_type t = value.type();
  return t == element_type::INT64 || t == element_type::UINT64 ||
         t == element_type::DOUBLE;
}

double NumberOf(element value) {
  switch (value.type()) {
    case element_type::INT64:
      return static_cast<double>(int64_t(value));
    case element_type::UINT64:
      return static_cast<double>(uint64_t(value));
    default:
      return double(value);
  }
}

bool IsInteger(element value) {
  const element_type t = value.type();
  if (t == element_type::INT64 || t == element_type::UINT64) return true;
  if (t != element_type::DOUBLE) return false;
  const double d = double(value);
  return std::isfinite(d) && std::floor(d) == d;
}

unsigned TypeBitsOf(element value) {
  switch (value.type()) {
    case element_type::NULL_VALUE:
      return kNull;
    case element_type::BOOL:
      return kBoolean;
    case element_type::STRING:
      return kString;
    case element_type::ARRAY:
      return kArray;
    case element_type::OBJECT:
      return kObject;
    default:
      return IsInteger(value) ? (kInteger | kNumber) : kNumber;
  }
}

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string Minified(element value) { return simdjson::minify(value); }

std::string FormatNumber(double d) {
  program::JsonOut out;
  out.Double(d);
  return out.str();
}

}  // namespace

struct Schema::Node {
  unsigned types = 0;  // 0 = any
  std::map<std::string, std::unique_ptr<Node>, std::less<>> properties;
  std::vector<std::string> required;
  bool additional_allowed = true;
  std::unique_ptr<Node> additional;  // when a schema
  std::unique_ptr<Node> items;
  std::optional<std::vector<std::string>> enum_values;  // minified JSON
  std::optional<std::string> const_value;
  std::optional<double> minimum, maximum, exclusive_minimum, exclusive_maximum;
  std::optional<size_t> min_length, max_length, min_items, max_items;
  std::vector<std::unique_ptr<Node>> any_of;
  std::vector<std::unique_ptr<Node>> one_of;
};

namespace {

using Node = Schema::Node;

Status Bad(std::string_view where, std::string_view what) {
  return Status(StatusCode::kInvalidArgument,
                "schema" + std::string(where) + ": " + std::string(what));
}

StatusOr<std::unique_ptr<Node>> CompileNode(element json,
                                            const std::string& where);

StatusOr<size_t> CountOf(element value, const std::string& where,
                         std::string_view key) {
  if (!IsInteger(value) || NumberOf(value) < 0) {
    return Bad(where, std::string(key) + " must be a non-negative integer");
  }
  return static_cast<size_t>(NumberOf(value));
}

Status CompileList(element value, const std::string& where,
                   std::string_view key,
                   std::vector<std::unique_ptr<Node>>& into) {
  simdjson::dom::array list;
  if (value.get_array().get(list) != simdjson::SUCCESS || list.size() == 0) {
    return Bad(where, std::string(key) + " must be a non-empty array");
  }
  size_t i = 0;
  for (element alternative : list) {
    auto node = CompileNode(alternative, where + "." + std::string(key) + "[" +
                                             std::to_string(i++) + "]");
    if (!node.ok()) return node.status();
    into.push_back(*std::move(node));
  }
  return Status();
}

StatusOr<std::unique_ptr<Node>> CompileNode(element json,
                                            const std::string& where) {
  simdjson::dom::object object;
  if (json.get_object().get(object) != simdjson::SUCCESS) {
    return Bad(where, "a schema must be an object");
  }
  auto node = std::make_unique<Node>();
  for (auto field : object) {
    const std::string_view key = field.key;
    const element value = field.value;
    if (key == "title" || key == "description" || key == "default" ||
        key == "examples" || key == "$schema" || key == "$comment") {
      continue;
    }
    if (key == "type") {
      auto add = [&](std::string_view name) -> Status {
        for (const auto& [type_name, bit] : kTypeNames) {
          if (type_name == name) {
            node->types |= bit;
            return Status();
          }
        }
        return Bad(where, "unknown type \"" + std::string(name) + "\"");
      };
      std::string_view name;
      simdjson::dom::array names;
      if (value.get_string().get(name) == simdjson::SUCCESS) {
        if (Status s = add(name); !s.ok()) return s;
      } else if (value.get_array().get(names) == simdjson::SUCCESS) {
        for (element n : names) {
          if (n.get_string().get(name) != simdjson::SUCCESS) {
            return Bad(where, "type names must be strings");
          }
          if (Status s = add(name); !s.ok()) return s;
        }
      } else {
        return Bad(where, "type must be a string or an array");
      }
    } else if (key == "properties") {
      simdjson::dom::object properties;
      if (value.get_object().get(properties) != simdjson::SUCCESS) {
        return Bad(where, "properties must be an object");
      }
      for (auto property : properties) {
        const std::string name(property.key);
        auto child = CompileNode(property.value, where + "." + name);
        if (!child.ok()) return child.status();
        node->properties[name] = *std::move(child);
      }
    } else if (key == "required") {
      simdjson::dom::array names;
      if (value.get_array().get(names) != simdjson::SUCCESS) {
        return Bad(where, "required must be an array");
      }
      for (element n : names) {
        std::string_view name;
        if (n.get_string().get(name) != simdjson::SUCCESS) {
          return Bad(where, "required names must be strings");
        }
        node->required.emplace_back(name);
      }
    } else if (key == "additionalProperties") {
      bool allowed = true;
      if (value.get_bool().get(allowed) == simdjson::SUCCESS) {
        node->additional_allowed = allowed;
      } else {
        auto child = CompileNode(value, where + ".additionalProperties");
        if (!child.ok()) return child.status();
        node->additional = *std::move(child);
      }
    } else if (key == "items") {
      auto child = CompileNode(value, where + ".items");
      if (!child.ok()) return child.status();
      node->items = *std::move(child);
    } else if (key == "enum") {
      simdjson::dom::array values;
      if (value.get_array().get(values) != simdjson::SUCCESS) {
        return Bad(where, "enum must be an array");
      }
      node->enum_values.emplace();
      for (element v : values) node->enum_values->push_back(Minified(v));
    } else if (key == "const") {
      node->const_value = Minified(value);
    } else if (key == "minimum" || key == "maximum" ||
               key == "exclusiveMinimum" || key == "exclusiveMaximum") {
      if (!IsNumber(value))
        return Bad(where, std::string(key) + " must be a number");
      const double d = NumberOf(value);
      if (key == "minimum") node->minimum = d;
      if (key == "maximum") node->maximum = d;
      if (key == "exclusiveMinimum") node->exclusive_minimum = d;
      if (key == "exclusiveMaximum") node->exclusive_maximum = d;
    } else if (key == "minLength" || key == "maxLength" || key == "minItems" ||
               key == "maxItems") {
      auto count = CountOf(value, where, key);
      if (!count.ok()) return count.status();
      if (key == "minLength") node->min_length = *count;
      if (key == "maxLength") node->max_length = *count;
      if (key == "minItems") node->min_items = *count;
      if (key == "maxItems") node->max_items = *count;
    } else if (key == "anyOf") {
      if (Status s = CompileList(value, where, key, node->any_of); !s.ok()) {
        return s;
      }
    } else if (key == "oneOf") {
      if (Status s = CompileList(value, where, key, node->one_of); !s.ok()) {
        return s;
      }
    } else {
      return Bad(where, "keyword \"" + std::string(key) +
                            "\" is not supported by the server's validator");
    }
  }
  return node;
}

// Where a value is: member names and array indexes.
struct PathPart {
  std::string name;
  bool is_index = false;
};
using Path = std::vector<PathPart>;

class Validator {
 public:
  explicit Validator(size_t max_problems) : max_problems_(max_problems) {}

  void Check(const Node& node, element value, Path& path) {
    if (problems_.size() >= max_problems_) return;
    const unsigned have = TypeBitsOf(value);
    if (node.types != 0 && (have & node.types) == 0) {
      std::string expected;
      for (const auto& [name, bit] : kTypeNames) {
        if (node.types & bit) {
          if (!expected.empty()) expected += " | ";
          expected += name;
        }
      }
      Add(path, "Expected " + expected + ", received " +
                    std::string(Received(value)));
      return;
    }
    if (node.const_value.has_value() && Minified(value) != *node.const_value) {
      Add(path, "Invalid literal value, expected " + *node.const_value);
      return;
    }
    if (node.enum_values.has_value()) {
      const std::string mine = Minified(value);
      bool found = false;
      for (const std::string& v : *node.enum_values) found |= v == mine;
      if (!found) {
        std::string expected;
        for (const std::string& v : *node.enum_values) {
          if (!expected.empty()) expected += " | ";
          expected += Quoted(v);
        }
        Add(path, "Invalid enum value. Expected " + expected + ", received " +
                      Quoted(mine));
        return;
      }
    }
    if (IsNumber(value)) CheckNumber(node, NumberOf(value), path);
    std::string_view text;
    if (value.get_string().get(text) == simdjson::SUCCESS) {
      const size_t length = Utf8Length(text);
      if (node.min_length && length < *node.min_length) {
        Add(path, "String must contain at least " +
                      std::to_string(*node.min_length) + " character(s)");
      }
      if (node.max_length && length > *node.max_length) {
        Add(path, "String must contain at most " +
                      std::to_string(*node.max_length) + " character(s)");
      }
    }
    simdjson::dom::array array;
    if (value.get_array().get(array) == simdjson::SUCCESS) {
      const size_t size = array.size();
      if (node.min_items && size < *node.min_items) {
        Add(path, "Array must contain at least " +
                      std::to_string(*node.min_items) + " element(s)");
      }
      if (node.max_items && size > *node.max_items) {
        Add(path, "Array must contain at most " +
                      std::to_string(*node.max_items) + " element(s)");
      }
      if (node.items != nullptr) {
        size_t i = 0;
        for (element item : array) {
          path.push_back(PathPart{std::to_string(i++), true});
          Check(*node.items, item, path);
          path.pop_back();
          if (problems_.size() >= max_problems_) break;
        }
      }
    }
    simdjson::dom::object object;
    if (value.get_object().get(object) == simdjson::SUCCESS) {
      CheckObject(node, object, path);
    }
    if (!node.any_of.empty())
      CheckAlternatives(node.any_of, false, value, path);
    if (!node.one_of.empty()) CheckAlternatives(node.one_of, true, value, path);
  }

  std::vector<SchemaProblem> Take() { return std::move(problems_); }

 private:
  static std::string Quoted(const std::string& json) {
    // Strings as the seed shows them: 'create', not "create".
    if (json.size() >= 2 && json.front() == '"') {
      return "'" + json.substr(1, json.size() - 2) + "'";
    }
    return json;
  }

  void CheckNumber(const Node& node, double d, Path& path) {
    if (node.minimum && d < *node.minimum) {
      Add(path, "Number must be greater than or equal to " +
                    FormatNumber(*node.minimum));
    }
    if (node.exclusive_minimum && d <= *node.exclusive_minimum) {
      Add(path, "Number must be greater than " +
                    FormatNumber(*node.exclusive_minimum));
    }
    if (node.maximum && d > *node.maximum) {
      Add(path, "Number must be less than or equal to " +
                    FormatNumber(*node.maximum));
    }
    if (node.exclusive_maximum && d >= *node.exclusive_maximum) {
      Add(path,
          "Number must be less than " + FormatNumber(*node.exclusive_maximum));
    }
  }

  void CheckObject(const Node& node, simdjson::dom::object object, Path& path) {
    for (const std::string& name : node.required) {
      element member;
      if (object.at_key(name).get(member) != simdjson::SUCCESS) {
        path.push_back(PathPart{name});
        Add(path, "Required");
        path.pop_back();
      }
    }
    for (auto field : object) {
      if (problems_.size() >= max_problems_) return;
      const std::string_view key = field.key;
      path.push_back(PathPart{std::string(key)});
      if (auto it = node.properties.find(key); it != node.properties.end()) {
        Check(*it->second, field.value, path);
      } else if (node.additional != nullptr) {
        Check(*node.additional, field.value, path);
      } else if (!node.additional_allowed) {
        // Zod's words, which MCP clients know, and the property most
        // likely meant, so that a typo is fixed in one round.
        std::vector<std::string_view> names;
        names.reserve(node.properties.size());
        for (const auto& property : node.properties) {
          names.push_back(property.first);
        }
        Add(path, "Unrecognized key: '" + std::string(key) + "'" +
                      program::DidYouMean(key, names));
      }
      path.pop_back();
    }
  }

  void CheckAlternatives(const std::vector<std::unique_ptr<Node>>& options,
                         bool exactly_one, element value, Path& path) {
    size_t matches = 0;
    std::vector<SchemaProblem> closest;
    // An alternative of the value's own type is closer than any other,
    // however many problems it finds inside the value: they are the ones
    // the caller can fix.
    bool closest_type_ok = false;
    for (const auto& option : options) {
      Validator inner(max_problems_);
      inner.Check(*option, value, path);
      std::vector<SchemaProblem> problems = inner.Take();
      const bool type_ok =
          option->types == 0 || (TypeBitsOf(value) & option->types) != 0;
      if (problems.empty()) {
        ++matches;
      } else if (closest.empty() || (type_ok && !closest_type_ok) ||
                 (type_ok == closest_type_ok &&
                  problems.size() < closest.size())) {
        closest = std::move(problems);
        closest_type_ok = type_ok;
      }
    }
    if (matches == 0) {
      for (SchemaProblem& p : closest) {
        if (problems_.size() < max_problems_) problems_.push_back(std::move(p));
      }
      if (closest.empty()) Add(path, "Invalid input");
    } else if (exactly_one && matches > 1) {
      Add(path, "Invalid input: matches " + std::to_string(matches) +
                    " alternatives, expected exactly one");
    }
  }

  void Add(const Path& path, std::string message) {
    if (problems_.size() >= max_problems_) return;
    program::JsonOut json;
    json.BeginArray();
    for (const PathPart& part : path) {
      // Array indexes are numbers in the seed's (Zod's) paths.
      if (part.is_index) {
        json.Raw(part.name);
      } else {
        json.String(part.name);
      }
    }
    json.EndArray();
    problems_.push_back(SchemaProblem{json.str(), std::move(message)});
  }

  size_t max_problems_;
  std::vector<SchemaProblem> problems_;
};

}  // namespace

Schema::Schema(std::unique_ptr<Node> root) : root_(std::move(root)) {}
Schema::~Schema() = default;

StatusOr<std::unique_ptr<Schema>> Schema::Compile(std::string_view json) {
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS) {
    return Status(StatusCode::kInvalidArgument, "schema: not valid JSON");
  }
  auto node = CompileNode(root, "");
  if (!node.ok()) return node.status();
  return std::unique_ptr<Schema>(new Schema(*std::move(node)));
}

std::vector<SchemaProblem> Schema::Validate(element value,
                                            size_t max_problems) const {
  Validator validator(max_problems);
  Path path;
  validator.Check(*root_, value, path);
  return validator.Take();
}

std::string SchemaProblemsToJson(const std::vector<SchemaProblem>& problems) {
  program::JsonOut json;
  json.BeginArray();
  for (const SchemaProblem& p : problems) {
    json.BeginObject()
        .Key("path")
        .Raw(p.path_json)
        .Key("message")
        .String(p.message)
        .EndObject();
  }
  json.EndArray();
  return json.str();
}

}  // namespace ctxkit::mcp
