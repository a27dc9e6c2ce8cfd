// Validation of tool arguments against the tool's inputSchema, so that each
// schema is the single statement of what a tool accepts: clients read it,
// and the server enforces it before an adapter runs.
//
// The subset of JSON Schema (2020-12) understood: type (a name or a list),
// properties, required, additionalProperties (boolean or schema), items,
// enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// minLength, maxLength (in characters), minItems, maxItems, anyOf, oneOf;
// the annotations title, description, default, examples, $schema and
// $comment are ignored. Any other keyword is refused when the schema is
// compiled, so a schema never promises a check the server does not make.

#ifndef CTXKIT_PROGRAMS_CTXKIT_MCP_SCHEMA_H_
#define CTXKIT_PROGRAMS_CTXKIT_MCP_SCHEMA_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/status.h"
#include "simdjson.h"

namespace ctxkit::mcp {

// One reason a value does not match, in the shape of seed 000's validation
// details: `path_json` is a JSON array of member names and indexes
// (["messages",2,"role"]), `message` reads like the seed's ("Required",
// "Expected string, received number", "Invalid enum value. Expected 'a' |
// 'b', received 'c'").
struct SchemaProblem {
  std::string path_json;
  std::string message;
};

// A compiled schema. Immutable; Validate may run concurrently.
class Schema {
 public:
  // INVALID_ARGUMENT naming the keyword and its place for a malformed
  // schema or a keyword outside the subset.
  static StatusOr<std::unique_ptr<Schema>> Compile(std::string_view json);

  ~Schema();
  Schema(const Schema&) = delete;
  Schema& operator=(const Schema&) = delete;

  // The problems of `value`, in document order, at most `max_problems`
  // (empty when it matches). For anyOf/oneOf, the problems of the
  // alternative that came closest.
  std::vector<SchemaProblem> Validate(simdjson::dom::element value,
                                      size_t max_problems = 20) const;

  struct Node;

 private:
  explicit Schema(std::unique_ptr<Node> root);
  std::unique_ptr<Node> root_;
};

// `details` for seed 000's {success:false,error:"Validation error",details}:
// a JSON array of {"path":[...],"message":...}.
std::string SchemaProblemsToJson(const std::vector<SchemaProblem>& problems);

}  // namespace ctxkit::mcp

#endif  // CTXKIT_PROGRAMS_CTXKIT_MCP_SCHEMA_H_
