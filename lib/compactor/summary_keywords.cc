#include "lib/compactor/summary_keywords.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "lib/compactor/ascii.h"
#include "lib/compactor/summary_text.h"

namespace ctxkit::internal {
namespace {

// Whether `w` is one of `words` (lowercase), ASCII case ignored.
template <size_t N>
bool EqualsAnyNoCase(std::string_view w, const std::string_view (&words)[N]) {
  for (std::string_view word : words) {
    if (EqualsNoCase(w, word)) return true;
  }
  return false;
}

constexpr std::string_view kFileExtensions[] = {
    "c",    "cc",    "cfg",   "cpp",  "cs",  "css",  "go",  "h",    "hpp",
    "html", "ini",   "ipynb", "java", "js",  "json", "jsx", "kt",   "lock",
    "md",   "php",   "proto", "py",   "rb",  "rs",   "rst", "scss", "sh",
    "sql",  "swift", "toml",  "ts",   "tsx", "txt",  "xml", "yaml", "yml",
};

constexpr std::string_view kNotTables[] = {
    "a",     "all",     "an",     "and",   "any",   "as",     "by",    "each",
    "every", "false",   "for",    "here",  "in",    "is",     "it",    "its",
    "my",    "not",     "now",    "null",  "of",    "on",     "one",   "or",
    "our",   "scratch", "select", "set",   "some",  "source", "that",  "the",
    "their", "them",    "then",   "there", "these", "this",   "those", "to",
    "true",  "values",  "what",   "where", "which", "with",   "your",
};
// Words between a keyword and its table: CREATE TABLE IF NOT EXISTS t,
// UPDATE ONLY t, JOIN LATERAL f.
constexpr std::string_view kTableModifiers[] = {"if", "not", "exists", "only",
                                                "lateral"};
// Statements that make a message SQL when written in capitals, as SQL is
// written; in lower case these are English words.
constexpr std::string_view kSqlVerbs[] = {"SELECT", "INSERT",   "UPDATE",
                                          "DELETE", "CREATE",   "ALTER",
                                          "DROP",   "TRUNCATE", "EXPLAIN"};
// A table name follows these (any case, once the message is SQL).
constexpr std::string_view kTableKeywords[] = {"from", "join", "into", "update",
                                               "table"};

}  // namespace

bool HasKnownExtension(std::string_view name) {
  const size_t slash = name.rfind('/');
  const std::string_view base =
      slash == std::string_view::npos ? name : name.substr(slash + 1);
  const size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  const std::string_view stem = base.substr(0, dot);
  if (std::none_of(stem.begin(), stem.end(), IsAlpha) &&
      stem.find('_') == std::string_view::npos) {
    return false;
  }
  const std::string_view extension = base.substr(dot + 1);
  for (std::string_view known : kFileExtensions) {
    if (extension == known) return true;
  }
  return false;
}

bool IsSqlVerb(std::string_view w) {
  for (std::string_view v : kSqlVerbs) {
    if (w == v) return true;
  }
  return false;
}

bool IsTableKeyword(std::string_view w) {
  return EqualsAnyNoCase(w, kTableKeywords);
}

bool IsTableModifier(std::string_view w) {
  return EqualsAnyNoCase(w, kTableModifiers);
}

bool IsNotTable(std::string_view w) { return EqualsAnyNoCase(w, kNotTables); }

bool IsSqlTool(std::string_view name) {
  std::string lower;
  for (char c : name) lower.push_back(absl::ascii_tolower(c));
  for (std::string_view part : {"sql", "query", "explain", "schema"}) {
    if (lower.find(part) != std::string::npos) return true;
  }
  return false;
}

bool IsPathKey(std::string_view key) {
  return key == "path" || key == "file_path" || key == "filename" ||
         key == "file_name" || key == "file" || key == "target_file" ||
         key == "notebook_path";
}

bool IsEditTool(std::string_view name) {
  constexpr std::string_view kEditTools[] = {
      "edit",         "edit_file",   "str_replace",     "str_replace_editor",
      "write",        "write_file",  "create",          "create_file",
      "insert",       "apply_patch", "patch",           "multiedit",
      "notebookedit", "replace",     "replace_in_file", "write_to_file",
  };
  return EqualsAnyNoCase(name, kEditTools);
}

}  // namespace ctxkit::internal
