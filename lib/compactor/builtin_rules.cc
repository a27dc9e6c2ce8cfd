// The built-in classification table.
//
// Order matters: the first matching rule decides, so the table runs from the
// most specific evidence to the most generic:
//   1. anchors that depend on position or role (system prompt, the task;
//      demonstrations shown before the task are contextual),
//      then definitions (tools, SQL DDL) and schema tools;
//   2. transient chatter ("ok", "thanks", empty turns), tested before user
//      corrections so that "no problem" is not read as "no, ...";
//   3. user corrections, prohibitions and refusals (anchors);
//   4. tool errors and file edits (important): an edit's result also shows
//      the file, so edits must win over file views;
//   5. file views and searches (routine), before the error rules, because
//      a viewed source file is full of "error: " and "exception" and can be
//      viewed again at any time;
//   6. failing tests, stack traces, non-zero exits, SQL and other errors,
//      query analysis tools and plans, decisions and findings,
//      documentation references, schema talk (important);
//   7. query and search tools, passing tests, shell transcripts, user text,
//      tool results (contextual, shell transcripts routine).
// Everything else is routine by "default" (ordinary assistant turns and
// tool calls no rule claims: a call is kept or dropped with its results,
// which tool_result makes contextual).
//
// Phrases are substrings compared ignoring ASCII case, so each carries the
// punctuation or spacing that makes it specific: "error: " (not "error",
// which would fire in "errorless" or "terror" and in every discussion of
// error handling), "exit code 1" to "exit code 9" (not "exit code", which
// also reports success), "error 42p01" (whole SQLSTATE codes, not "error
// 42"), "index scan on " (not "scan"). Agent transcripts are the common
// case, so the rules know the shapes of coding-agent output: SWE-agent
// observations (role user, ending "(Open file: ...) (Current directory:
// ...) bash-$"; "[File: x (N lines total)]" views; "edit N:M ...
// end_of_edit" commands), Claude Code and OpenHands tools (Read, Edit,
// Write, MultiEdit, Bash, str_replace_editor, ...), other agents' tool
// names (read_file, write_file, apply_patch, ...), and pytest, unittest,
// jest, mocha, go test and cargo test summaries. Seed 001 (the pgEdge
// PostgreSQL MCP server) adds its tools by name (get_schema_info,
// execute_explain, query_database, similarity_search, ...), PostgreSQL
// plans and errors, findings ("key finding:") and documentation references.
//
// Evidence that can arrive as a tool's arguments sets match_arguments:
// SQL DDL and EXPLAIN sent to a query tool, edit commands and patches sent
// to a shell tool. Arguments are JSON text (a line break is "\n"), so a
// phrase with a line break matches the text only. File views keep their own
// argument-only rules: a view command is not evidence of anything else.

#include "lib/compactor/builtin_rules.h"

#include <string>
#include <utility>
#include <vector>

#include "ctxkit/classifier.h"

namespace ctxkit {

namespace internal {
namespace {

using Strings = std::vector<std::string>;

// SWE-agent observations end with these; a transcript quoting a user's
// phrase must not be read as the user speaking.
const Strings& ObservationMarkers() {
  static const auto* const kMarkers =
      new Strings{"(open file:", "(current directory:", "bash-$"};
  return *kMarkers;
}

ClassificationRule Rule(std::string name, Tier tier, std::string description) {
  ClassificationRule rule;
  rule.name = std::move(name);
  rule.tier = tier;
  rule.description = std::move(description);
  return rule;
}

Strings NonzeroExitPhrases() {
  Strings phrases;
  for (const char* prefix :
       {"exit code ", "exit code: ", "exit code=", "exit status ",
        "exit status: ", "exited with code ", "exited with status ",
        "returncode=", "returncode: ", "return code "}) {
    for (const char* digit :
         {"1", "2", "3", "4", "5", "6", "7", "8", "9", "-"}) {
      phrases.push_back(std::string(prefix) + digit);
    }
  }
  for (const char* phrase :
       {"returned non-zero", "returned a non-zero", "non-zero exit",
        "nonzero exit", "make: *** ", "command failed with"}) {
    phrases.emplace_back(phrase);
  }
  return phrases;
}

// SQLSTATE codes printed after "ERROR " (seed 001's "ERROR 42P01:"): the
// common codes of PostgreSQL's classes 08 (connection), 0A, 21, 22 (data),
// 23 (integrity), 25 (transaction), 28 (authorization), 2B, 3D, 3F, 40
// (rollback), 42 (syntax and access), 53 (resources), 54, 55, 57
// (operator), 58, XX (internal) and P0 (PL/pgSQL). Whole codes, not
// classes: "error 42" would fire on "error 42 times".
Strings SqlErrorPhrases() {
  Strings phrases;
  for (const char* code :
       {"08000", "08001", "08003", "08004", "08006", "08p01", "0a000", "21000",
        "22001", "22003", "22007", "22008", "22012", "22023", "22p02", "23502",
        "23503", "23505", "23514", "23p01", "25001", "25006", "25p02", "28000",
        "28p01", "2bp01", "3d000", "3f000", "40001", "40p01", "42501", "42601",
        "42602", "42622", "42701", "42702", "42703", "42704", "42710", "42712",
        "42723", "42803", "42804", "42809", "42830", "42846", "42883", "42p01",
        "42p02", "42p07", "42p10", "53100", "53200", "53300", "54000", "54001",
        "55000", "55006", "55p03", "57014", "57p01", "57p03", "58p01", "xx000",
        "xx001", "p0001", "p0002"}) {
    phrases.push_back(std::string("error ") + code);
  }
  for (const char* phrase :
       {"sqlstate",
        // relation "x" / column "x" / role "x" does not exist (PostgreSQL),
        // Table 'db.x' doesn't exist (MySQL): the quote keeps out prose
        // such as "if the file does not exist".
        "\" does not exist", "' doesn't exist", "syntax error at or near",
        "syntax error at end of input", "violates unique constraint",
        "violates foreign key constraint", "violates not-null constraint",
        "violates check constraint", "psycopg2.errors.", "psycopg.errors.",
        "asyncpg.exceptions.", "psqlexception", "sqlalchemy.exc."}) {
    phrases.emplace_back(phrase);
  }
  return phrases;
}

}  // namespace

std::vector<ClassificationRule> BuiltinRules() {
  std::vector<ClassificationRule> rules;

  // 1. Anchors by position and definitions.
  {
    auto r = Rule("system_prompt", Tier::kAnchor,
                  "System and developer messages: the instructions.");
    r.roles = {"system", "developer"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("task", Tier::kAnchor,
                  "The user's request: the last user message with text "
                  "before the first assistant turn that is not a "
                  "demonstration.");
    r.is_task = true;
    rules.push_back(std::move(r));
  }
  {
    // Before every content rule: a demonstration is full of edits, errors
    // and test runs that never happened in this session.
    auto r = Rule("demonstration", Tier::kContextual,
                  "A worked example or few-shot block shown before the "
                  "task (summarizable).");
    r.is_demonstration = true;
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("tool_definition", Tier::kAnchor,
                  "Tool and function definitions (JSON schemas) outside "
                  "tool results.");
    r.is_tool_result = false;
    r.contains_any = {"\"input_schema\"",
                      "\"inputschema\"",
                      "\"parameters\": {\"type\": \"object\"",
                      "\"parameters\":{\"type\":\"object\"",
                      "\"type\": \"function\", \"function\"",
                      "\"type\":\"function\",\"function\"",
                      "\"$schema\"",
                      "<tools>",
                      "<functions>"};
    r.contains_none = ObservationMarkers();
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("sql_ddl", Tier::kAnchor,
                  "SQL DDL: CREATE/ALTER/DROP of tables, indexes, views, "
                  "schemas, types, sequences.");
    r.contains_any = {"create table",
                      "create temporary table",
                      "create temp table",
                      "create unlogged table",
                      "create index",
                      "create unique index",
                      "create view",
                      "create or replace view",
                      "create materialized view",
                      "create schema",
                      "create type",
                      "create sequence",
                      "create database",
                      "alter table",
                      "alter index",
                      "alter view",
                      "alter schema",
                      "drop table",
                      "drop index",
                      "drop view",
                      "drop materialized view",
                      "drop schema",
                      "drop type",
                      "drop sequence",
                      "truncate table",
                      "rename table",
                      "alter database",
                      "drop database"};
    // DDL that a query or shell tool is asked to run is DDL too.
    r.match_arguments = true;
    rules.push_back(std::move(r));
  }
  {
    // Seed 001's (pgEdge MCP) schema tools: what they return is the map of
    // the database every later query relies on. A failed call is an error,
    // not a schema.
    auto r = Rule("schema_tool", Tier::kAnchor,
                  "A call to (or result of) a schema tool (get_schema_info, "
                  "pg_dump_schema) that did not fail.");
    r.tool_names_any = {"get_schema_info", "pg_dump_schema"};
    r.is_error = false;
    rules.push_back(std::move(r));
  }

  // 2. Transient chatter.
  {
    auto r = Rule("acknowledgement", Tier::kTransient,
                  "A short user or assistant message that only acknowledges "
                  "(\"ok\", \"thanks\", \"got it\"), without tool calls.");
    r.roles = {"user", "assistant"};
    r.is_tool_result = false;
    r.has_tool_calls = false;
    r.max_chars = 40;
    r.equals_any = {"ok",
                    "okay",
                    "k",
                    "kk",
                    "okey",
                    "thanks",
                    "thank you",
                    "thank you so much",
                    "thanks a lot",
                    "many thanks",
                    "thx",
                    "ty",
                    "got it",
                    "gotcha",
                    "sure",
                    "great",
                    "cool",
                    "yes",
                    "yep",
                    "yeah",
                    "yup",
                    "done",
                    "sounds good",
                    "sounds great",
                    "perfect",
                    "nice",
                    "awesome",
                    "alright",
                    "all right",
                    "ok thanks",
                    "ok, thanks",
                    "okay thanks",
                    "okay, thanks",
                    "ok thank you",
                    "ok, thank you",
                    "great, thanks",
                    "great thanks",
                    "perfect, thanks",
                    "thanks, that works",
                    "understood",
                    "noted",
                    "ack",
                    "roger",
                    "lgtm",
                    "makes sense",
                    "no problem",
                    "no worries",
                    "np",
                    "will do",
                    "excellent",
                    "good",
                    "fine",
                    "continue",
                    "go ahead",
                    "please continue",
                    "proceed",
                    "\xF0\x9F\x91\x8D",
                    "ok \xF0\x9F\x91\x8D",
                    "thanks \xF0\x9F\x91\x8D",
                    "\xF0\x9F\x99\x8F"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("empty", Tier::kTransient,
                  "An assistant turn with no text and no tool calls (e.g. "
                  "only thinking).");
    r.roles = {"assistant"};
    r.has_tool_calls = false;
    r.max_chars = 0;
    rules.push_back(std::move(r));
  }

  // 3. User corrections (at most 2000 bytes: a correction is short, and a
  // long paste that happens to say "instead" is not one).
  {
    auto r = Rule("user_correction", Tier::kAnchor,
                  "A user message that starts by correcting or stopping the "
                  "assistant (\"actually\", \"no, ...\", \"wrong\", \"don't "
                  "...\").");
    r.roles = {"user"};
    r.is_tool_result = false;
    r.max_chars = 2000;
    r.starts_with_any = {"actually",     "no,",
                         "no ",          "no.",
                         "no!",          "nope",
                         "wrong",        "that's not",
                         "that is not",  "that\xE2\x80\x99s not",
                         "not quite",    "incorrect",
                         "correction:",  "wait,",
                         "hold on",      "stop,",
                         "don't ",       "do not ",
                         "please don't", "please do not"};
    r.contains_none = ObservationMarkers();
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("user_correction_phrase", Tier::kAnchor,
                  "A user message that corrects the assistant anywhere "
                  "(\"that's wrong\", \"I meant\", \"instead\").");
    r.roles = {"user"};
    r.is_tool_result = false;
    r.max_chars = 2000;
    r.contains_any = {
        "that's wrong",     "that is wrong",     "that\xE2\x80\x99s wrong",
        "that's not right", "that is not right", "that's not what",
        "that is not what", "that's incorrect",  "that is incorrect",
        "not what i",       "i meant",           "i mean,",
        "instead",          "you misunderstood", "misunderstood",
        "you're wrong",     "you are wrong",     "not correct",
        "don't do that",    "do not do that",    "undo that",
        "revert that",      "wrong file",        "wrong table",
        "wrong column",     "wrong approach"};
    r.contains_none = ObservationMarkers();
    rules.push_back(std::move(r));
  }
  {
    // "No." and "no thanks" already start a correction; a bare "no" or
    // "stop" answers the assistant's proposal just as firmly, so it is kept
    // as well (seed 001 calls "no" a transient acknowledgement).
    auto r = Rule("user_refusal", Tier::kAnchor,
                  "A user message that is only a refusal (\"no\", "
                  "\"stop\", \"cancel\").");
    r.roles = {"user"};
    r.is_tool_result = false;
    r.has_tool_calls = false;
    r.max_chars = 40;
    r.equals_any = {"no", "nah", "stop", "cancel", "abort"};
    rules.push_back(std::move(r));
  }

  // 4. Tool errors and file edits.
  {
    auto r = Rule("tool_error", Tier::kImportant,
                  "A tool result flagged as an error.");
    r.is_error = true;
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("edit_failed", Tier::kImportant,
                  "An edit the tool rejected (SWE-agent lint failure, "
                  "str_replace not found).");
    r.contains_any = {"your proposed edit has introduced new syntax error",
                      "did not appear verbatim", "no replacement was performed",
                      "string to replace not found", "old_string not found"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_edit", Tier::kImportant,
                  "A call to (or result of) a file-editing tool.");
    r.tool_names_any = {
        "edit",        "write",         "multiedit",       "notebookedit",
        "str_replace", "apply_patch",   "create_file",     "write_file",
        "edit_file",   "write_to_file", "replace_in_file", "search_replace",
        "insert",      "create",        "replace",         "delete_file",
        "patch"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_edit_command", Tier::kImportant,
                  "An editing command of an editor tool "
                  "(str_replace_editor str_replace/create/insert).");
    r.tool_names_any = {"str_replace_editor", "str_replace_based_edit_tool",
                        "text_editor", "editor"};
    r.arguments_contains_any = {"str_replace", "\"create\"", "\"insert\"",
                                "undo_edit", "\"write\""};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_edit_shell", Tier::kImportant,
                  "A shell command that changes files (sed -i, heredoc, "
                  "git apply, patch).");
    r.arguments_contains_any = {"sed -i",    "cat >",    "cat <<",  "| tee ",
                                "git apply", "patch -p", "perl -pi"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_edit_text", Tier::kImportant,
                  "Diffs, patches, edit commands and edit confirmations in "
                  "text or in call arguments (unified diff headers, "
                  "SWE-agent \"end_of_edit\" and str_replace_editor "
                  "commands, aider SEARCH/REPLACE blocks, Codex patches).");
    r.contains_any = {"--- a/",
                      "+++ b/",
                      "diff --git ",
                      "\n@@ -",
                      "end_of_edit",
                      "<<<<<<< search",
                      ">>>>>>> replace",
                      "*** begin patch",
                      "*** update file:",
                      "*** add file:",
                      "has been edited",
                      "has been updated. here's",
                      "file updated. please review",
                      "text replaced. please review",
                      "file created successfully",
                      "str_replace_editor str_replace ",
                      "str_replace_editor create ",
                      "str_replace_editor insert ",
                      "str_replace_editor undo_edit "};
    // An agent with one shell tool sends its edits as that tool's command
    // (SWE-agent's "edit N:M ... end_of_edit", "str_replace_editor
    // str_replace ...", Codex's "*** Begin Patch").
    r.match_arguments = true;
    rules.push_back(std::move(r));
  }

  // 5. File views and searches.
  {
    auto r = Rule("file_view", Tier::kRoutine,
                  "A call to (or result of) a file-reading tool.");
    r.tool_names_any = {"read",
                        "read_file",
                        "view",
                        "view_file",
                        "open",
                        "open_file",
                        "cat",
                        "readfile",
                        "notebookread",
                        "read_many_files",
                        "get_file_contents",
                        "goto",
                        "scroll_up",
                        "scroll_down",
                        "fetch_file"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_view_command", Tier::kRoutine,
                  "A view command of an editor tool.");
    r.tool_names_any = {"str_replace_editor", "str_replace_based_edit_tool",
                        "text_editor", "editor"};
    r.arguments_contains_any = {"\"view\""};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_view_shell", Tier::kRoutine,
                  "A shell command that prints a file (cat, head, tail, "
                  "sed -n, nl).");
    r.arguments_contains_any = {"\"cat ", "\"head ",   "\"tail ", "\"less ",
                                "\"nl ",  "\"sed -n ", "\"bat "};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_view_text", Tier::kRoutine,
                  "Output showing a file (SWE-agent \"[File: x (N lines "
                  "total)]\", `cat -n` listings).");
    r.roles = {"user", "tool"};
    r.contains_any = {"lines total)]", "here's the result of running `cat -n`",
                      "1\xE2\x86\x92"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_search", Tier::kRoutine,
                  "A call to (or result of) a search or listing tool.");
    r.tool_names_any = {"grep",
                        "glob",
                        "ls",
                        "find",
                        "find_file",
                        "search_file",
                        "search_dir",
                        "search_files",
                        "list_dir",
                        "list_directory",
                        "list_files",
                        "file_search",
                        "grep_search",
                        "codebase_search",
                        "search_file_content"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("file_search_text", Tier::kRoutine,
                  "Search results in text (SWE-agent find_file/search_dir).");
    r.roles = {"user", "tool"};
    r.contains_any = {"matches for \"", "no matches found for"};
    rules.push_back(std::move(r));
  }

  // 6. Errors, failures, plans, decisions, schemas.
  {
    auto r = Rule("test_failure", Tier::kImportant,
                  "Failing test output (pytest, unittest, jest, mocha, go "
                  "test, cargo test) and assertion errors.");
    r.contains_any = {"\nfailed ",
                      " failed, ",
                      " failed in ",
                      "= failures =",
                      "(failures=",
                      "(errors=",
                      "short test summary info",
                      "assertionerror",
                      "assertion failed",
                      "--- fail:",
                      "\nfail\t",
                      "\nfail: ",
                      " failing",
                      "tests failed",
                      "test failed",
                      "test result: failed",
                      "error collecting"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("stack_trace", Tier::kImportant,
                  "Stack traces and backtraces (Python, JavaScript, Java, "
                  "Go, Rust, gdb).");
    r.contains_any = {"traceback (most recent call last)",
                      "stack trace:",
                      "stacktrace:",
                      "stack backtrace:",
                      "goroutine 1 [running]",
                      "\n    at ",
                      "\n\tat ",
                      "exception in thread \"",
                      "caused by: ",
                      "panicked at ",
                      ".py\", line ",
                      "#0  0x"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("nonzero_exit", Tier::kImportant,
                  "A command that exited with a non-zero status.");
    r.contains_any = NonzeroExitPhrases();
    rules.push_back(std::move(r));
  }
  {
    // Before error_output, so that a PostgreSQL error is named as one;
    // also the errors error_output misses: SQLSTATE codes without "ERROR:"
    // (seed 001's "ERROR 42P01: undefined_table"), driver exceptions, and
    // server messages quoted without their prefix.
    auto r = Rule("sql_error", Tier::kImportant,
                  "PostgreSQL and SQL errors: SQLSTATE codes, driver "
                  "exceptions, \"relation \"x\" does not exist\", "
                  "\"syntax error at or near\".");
    r.contains_any = SqlErrorPhrases();
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("error_output", Tier::kImportant,
                  "Error messages: \"error: \", exceptions, panics, missing "
                  "commands and files, failed builds.");
    r.contains_any = {"error: ",
                      "error[e",
                      "exception: ",
                      "unhandled exception",
                      "uncaught ",
                      "panic: ",
                      "fatal: ",
                      "fatal error",
                      "segmentation fault",
                      "core dumped",
                      "command not found",
                      "no such file",
                      "timed out",
                      "permission denied",
                      "is not recognized as an internal or external command",
                      "modulenotfounderror",
                      "importerror",
                      "syntaxerror",
                      "cannot find module",
                      "undefined reference to",
                      "npm err!",
                      "failed to compile",
                      "compilation failed",
                      "build failed",
                      "connection refused",
                      "out of memory"};
    rules.push_back(std::move(r));
  }
  {
    // Seed 001's (pgEdge MCP) plan tools; after the error rules, so that a
    // failed EXPLAIN is named as the error it is.
    auto r = Rule("query_analysis_tool", Tier::kImportant,
                  "A call to (or result of) a query analysis tool "
                  "(execute_explain, analyze_query).");
    r.tool_names_any = {"execute_explain", "analyze_query"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("query_plan", Tier::kImportant,
                  "EXPLAIN statements and query plans (PostgreSQL, MySQL, "
                  "SQLite), also as a query tool's arguments.");
    r.contains_any = {"query plan",
                      "explain analyze",
                      "explain select",
                      "explain (",
                      "explain format",
                      "explain update",
                      "explain delete",
                      "explain insert",
                      "explain with",
                      "seq scan",
                      "sequential scan",
                      "index scan on ",
                      "index scan using ",
                      "index only scan using ",
                      "bitmap heap scan on ",
                      "bitmap index scan on ",
                      "(cost=",
                      "(actual time=",
                      "rows removed by filter:",
                      "planning time:",
                      "execution time:",
                      "using filesort",
                      "using temporary",
                      "using covering index",
                      "scan table ",
                      "search table "};
    // "EXPLAIN ANALYZE SELECT ..." sent to a query tool asks for a plan.
    r.match_arguments = true;
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("decision_note", Tier::kImportant,
                  "Notes and decisions written by the user or assistant "
                  "(\"important:\", \"note:\", \"warning:\", \"decided "
                  "to\"), not tool output.");
    r.roles = {"system", "developer", "user", "assistant"};
    r.is_tool_result = false;
    r.contains_any = {"important:",      "note:",         "warning:",
                      "recommendation:", "decision:",     "decided to",
                      "we will go with", "we'll go with", "let's go with",
                      "i will go with",  "i'll go with",  "conclusion:",
                      "root cause",      "the fix is",    "next steps:",
                      "key finding:",    "key findings:", "insight:"};
    r.contains_none = ObservationMarkers();
    rules.push_back(std::move(r));
  }
  {
    // What the user or assistant quotes from the documentation settles
    // questions the conversation would otherwise reopen (seed 001). Not
    // tool results: a documentation search returns docs by the page, and
    // those are ordinary tool output.
    auto r = Rule("doc_reference", Tier::kImportant,
                  "A user or assistant message that cites documentation "
                  "(\"Documentation:\", \"From docs:\", postgresql.org).");
    r.roles = {"user", "assistant"};
    r.is_tool_result = false;
    r.contains_any = {
        "documentation:", "from docs:", "from the docs:", "postgresql.org"};
    r.contains_none = ObservationMarkers();
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("schema_info", Tier::kImportant,
                  "Talk about table schemas: columns, keys, indexes, psql "
                  "\\d output.");
    r.contains_any = {"primary key",
                      "foreign key",
                      "information_schema",
                      "table schema",
                      "database schema",
                      "db schema",
                      "schema:",
                      "\\d ",
                      "\\dt",
                      "\\d+ ",
                      "pragma table_info",
                      "show columns",
                      "show create table",
                      "describe table",
                      "column |",
                      "columns:",
                      "column name",
                      "column type",
                      "add column",
                      "drop column",
                      "alter column",
                      "rename column",
                      "not null",
                      "varchar",
                      "unique constraint",
                      "indexes:"};
    rules.push_back(std::move(r));
  }

  // 7. The rest of what users and tools say.
  {
    // Seed 001's (pgEdge MCP) data tools: rows and search hits are useful
    // context but can be fetched again. After the rules above, so DDL, plans
    // and errors in them still count as such; before tool_result, so they
    // stay contextual when preserve_tool_results removes that rule.
    auto r = Rule("query_tool", Tier::kContextual,
                  "A call to (or result of) a database query tool "
                  "(query_database, count_rows).");
    r.tool_names_any = {"query_database", "count_rows"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("search_tool", Tier::kContextual,
                  "A call to (or result of) a search tool "
                  "(similarity_search, search_documentation, "
                  "search_knowledgebase).");
    r.tool_names_any = {"similarity_search", "search_documentation",
                        "search_knowledgebase"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("test_result", Tier::kContextual, "Passing test output.");
    r.contains_any = {" passed in ",     " passed,",     " passed;",
                      " passed (",       "tests passed", "all tests pass",
                      "test result: ok", "\nok  \t",     " passing (",
                      " tests in ",      " test in ",    "test suites:"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("shell_output", Tier::kRoutine,
                  "A shell transcript sent as a user message (SWE-agent "
                  "observations) that no rule above claimed.");
    r.roles = {"user"};
    r.is_tool_result = false;
    r.contains_any = {"(current directory:", "bash-$",
                      "your command ran successfully"};
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("user_message", Tier::kContextual, "Any other user text.");
    r.roles = {"user"};
    r.is_tool_result = false;
    rules.push_back(std::move(r));
  }
  {
    auto r = Rule("tool_result", Tier::kContextual,
                  "Any other tool result (removed when "
                  "preserve_tool_results is false).");
    r.is_tool_result = true;
    rules.push_back(std::move(r));
  }
  return rules;
}

}  // namespace internal

std::string BuiltinRulesJson() {
  return Classifier::WithBuiltinRules().RulesJson();
}

}  // namespace ctxkit
