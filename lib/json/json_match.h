// Selecting JSON objects by containment: how a query keeps only the context
// graph edges whose metadata holds given members (RelatedOptions::metadata,
// PathOptions::metadata), in the spirit of PostgreSQL's jsonb `@>` so that
// users of metadata filters elsewhere find the rules they expect.

#ifndef CTXKIT_LIB_JSON_JSON_MATCH_H_
#define CTXKIT_LIB_JSON_JSON_MATCH_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace simdjson::dom {
class element;
class parser;
}  // namespace simdjson::dom

namespace ctxkit::internal {

// A filter compiled once per query and tried on many documents. A document
// matches when it is a JSON object and, for each member (key, f) of the
// filter, the document's member `key` (the last one, when a key repeats)
// satisfies f:
//   f null     the member is absent or null (so {"auto": null} selects the
//              edges a host added, which carry no "auto");
//   f object   the member is an object that matches f by these same rules;
//   f array    the member is an array, and each element of f matches some
//              element of it (as PostgreSQL's @> does for arrays);
//   f number   the member is a number equal to f (1 equals 1.0);
//   otherwise  the member is the same string or boolean.
// An empty filter `{}` matches every object. A document that is not valid
// JSON matches nothing (stored metadata is always valid, so this only
// matters to callers that pass other text).
// Thread safety: Matches reuses one parser, so a filter is used by one
// thread at a time; compile one per call.
class JsonContainsFilter {
 public:
  // `filter` must be one JSON object (INVALID_ARGUMENT "<what> must be a
  // JSON object ..." otherwise, or ParseJson's errors naming `what`).
  static absl::StatusOr<JsonContainsFilter> Compile(std::string_view filter,
                                                    std::string_view what);

  JsonContainsFilter(JsonContainsFilter&&) noexcept;
  JsonContainsFilter& operator=(JsonContainsFilter&&) noexcept;
  ~JsonContainsFilter();

  // Whether the filter has no members (it matches every object).
  bool empty() const { return root_.members.empty(); }

  // Whether `document` (JSON text) matches; see the class comment.
  bool Matches(std::string_view document);

 private:
  struct Node {
    enum class Kind : unsigned char {
      kNull,
      kBool,
      kNumber,
      kString,
      kArray,
      kObject
    };
    Kind kind = Kind::kNull;
    bool boolean = false;
    double number = 0;
    std::string text = {};
    std::vector<Node> items = {};                            // kArray
    std::vector<std::pair<std::string, Node>> members = {};  // kObject
  };

  JsonContainsFilter();
  static Node Build(const simdjson::dom::element& e);
  static bool Satisfies(const Node& f, const simdjson::dom::element& e);

  Node root_;
  std::unique_ptr<simdjson::dom::parser> parser_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_JSON_JSON_MATCH_H_
