// The word lists the span digests (summary.h) match against, and the
// lookups over them: file extensions, SQL keywords, the names of SQL and
// edit tools, and the argument names that hold a file path.
//
// Thread safety: pure functions over constant tables.

#ifndef CTXKIT_LIB_COMPACTOR_SUMMARY_KEYWORDS_H_
#define CTXKIT_LIB_COMPACTOR_SUMMARY_KEYWORDS_H_

#include <string_view>

namespace ctxkit::internal {

// Whether the last component of `name` ends in a known source, data or
// document extension after a stem with a letter or "_" ("x.py", not "1.5").
bool HasKnownExtension(std::string_view name);

// SQL. A message is SQL once it holds an upper-case statement verb
// (IsSqlVerb) or a SQL tool's call (IsSqlTool); then the name after a table
// keyword, past any modifiers, is a table unless it is a common word.
// "SELECT", "INSERT", "UPDATE", ... exactly (lower case is English).
bool IsSqlVerb(std::string_view w);
// "from", "join", "into", "update" or "table", ASCII case ignored.
bool IsTableKeyword(std::string_view w);
// "if", "not", "exists", "only", "lateral", ASCII case ignored: words
// between a table keyword and its table.
bool IsTableModifier(std::string_view w);
// An English or SQL word that follows a table keyword in prose or in SQL
// without naming a table ("from the", "into set"), ASCII case ignored.
bool IsNotTable(std::string_view w);
// A tool whose calls are SQL: its name holds "sql", "query", "explain" or
// "schema", ASCII case ignored.
bool IsSqlTool(std::string_view name);

// An argument that names the file a call works on ("path", "file_path",
// ...).
bool IsPathKey(std::string_view key);
// A tool that edits files (str_replace_editor, apply_patch, write_file, ...),
// ASCII case ignored.
bool IsEditTool(std::string_view name);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_SUMMARY_KEYWORDS_H_
