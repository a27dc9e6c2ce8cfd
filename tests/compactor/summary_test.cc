// Tests of the extractive span digests: seed 001's summary string, what
// agent transcripts yield (paths, errors, edits), caps and deduplication,
// UTF-8 safety of every cut, Merge, determinism and bounded work on huge
// messages.

#include "lib/compactor/summary.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

ChatMessage Text(std::string role, std::string text) {
  ChatMessage m;
  m.role = std::move(role);
  m.text = std::move(text);
  m.text_only = true;
  return m;
}

ChatMessage Call(std::string text, std::string name, std::string arguments,
                 std::string id = "call_1") {
  ChatMessage m;
  m.role = "assistant";
  m.text = std::move(text);
  m.calls.push_back(
      ToolCall{std::move(id), std::move(name), std::move(arguments)});
  return m;
}

ChatMessage Result(std::string name, std::string text,
                   std::string id = "call_1") {
  ChatMessage m;
  m.role = "tool";
  m.text = std::move(text);
  m.result_ids.push_back(std::move(id));
  m.result_tool_name = std::move(name);
  return m;
}

SpanDigest Digest(const std::vector<ChatMessage>& messages,
                  Tier tier = Tier::kRoutine) {
  SpanDigester digester;
  for (const ChatMessage& m : messages) digester.Add(m, tier);
  return digester.digest();
}

bool Has(const std::vector<std::string>& list, std::string_view item) {
  for (const std::string& s : list) {
    if (s == item) return true;
  }
  return false;
}

std::string Join(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) out += "[" + s + "]";
  return out;
}

TEST_CASE("a SQL conversation gives seed 001's summary exactly") {
  const std::vector<ChatMessage> span = {
      Text("user", "Show me the users table"),
      Call("", "query_database", R"({"query":"SELECT * FROM users LIMIT 10"})"),
      Result("query_database", "id | name\n1 | alice\n2 | bob"),
      Text("assistant", "There are two users: alice and bob."),
      Text("user", "How many signed up last week?"),
  };
  const SpanDigest digest = Digest(span);
  CHECK(digest.message_count == 5);
  CHECK(digest.topics == std::vector<std::string>{"database queries"});
  CHECK(digest.tables == std::vector<std::string>{"users"});
  CHECK(digest.tools == std::vector<std::string>{"query_database"});
  CHECK(SummaryText(digest, false) ==
        "[Compressed context: Topics: database queries, Tables: users, Tools "
        "used: query_database, 5 messages compressed]");
  CHECK(digest.actions ==
        std::vector<std::string>{
            "called query_database(SELECT * FROM users LIMIT 10)"});
  CHECK(SummaryText(digest, true) ==
        "[Compressed context: Topics: database queries, Tables: users, Tools "
        "used: query_database, Actions: called query_database(SELECT * FROM "
        "users LIMIT 10), 5 messages compressed]");
}

TEST_CASE("sections without items are left out; one message is singular") {
  SpanDigester digester;
  digester.Add(Text("user", "hello there"), Tier::kContextual);
  CHECK(SummaryText(digester.digest(), false) ==
        "[Compressed context: 1 message compressed]");
  CHECK(SummaryText(digester.digest(), true) ==
        "[Compressed context: 1 message compressed]");
  CHECK(SummaryText(SpanDigest{}, true) ==
        "[Compressed context: 0 messages compressed]");
}

TEST_CASE("tables: SQL keywords, quoting, modifiers and prose") {
  const SpanDigest digest = Digest({
      Text("assistant",
           "CREATE TABLE IF NOT EXISTS orders (id int);\n"
           "INSERT INTO \"line_items\" VALUES (1);\n"
           "select o.id from public.orders o join customers c on c.id = o.c\n"
           "UPDATE ONLY accounts SET x = 1;"),
      // Prose and Python: no tables.
      Text("user",
           "Copy it from the list and update the file.\n"
           "from datetime import timedelta\n"
           "Remove the line from setup.py"),
  });
  CHECK(digest.tables == std::vector<std::string>{"orders", "line_items",
                                                  "public.orders", "customers",
                                                  "accounts"});
  CHECK(Has(digest.topics, "database queries"));
  CHECK(Has(digest.topics, "schema"));
}

TEST_CASE("lowercase from/join need SQL in the message") {
  const SpanDigest prose = Digest(
      {Text("user", "We can join forces from tomorrow and copy into memory")});
  CHECK(prose.tables.empty());
  const SpanDigest sql =
      Digest({Text("user", "run: select count(*) from events")});
  CHECK(sql.tables == std::vector<std::string>{"events"});
}

// Modelled on the SWE-agent trajectories (function-calling form).
std::vector<ChatMessage> SweAgentSpan() {
  return {
      Call("The `SyntaxError` in `missing_colon.py` is likely due to a "
           "missing colon. Let's start by searching for it.",
           "find_file", R"({"file_name":"missing_colon.py"})", "c1"),
      Result("find_file",
             "Found 1 matches for \"missing_colon.py\" in "
             "/SWE-agent__test-repo:\n"
             "/SWE-agent__test-repo/tests/missing_colon.py\n"
             "(Open file: n/a)\n(Current directory: /SWE-agent__test-repo)\n"
             "bash-$",
             "c1"),
      Call("We should add a colon at the end of the `def division(a: float, "
           "b: float) -> float` line.",
           "edit",
           R"({"search":"def division(a: float, b: float) -> float",)"
           R"("replace":"def division(a: float, b: float) -> float:"})",
           "c2"),
      Result("edit",
             "Text replaced. Please review the changes and make sure they are "
             "correct:\n\n"
             "[File: /SWE-agent__test-repo/tests/missing_colon.py (10 lines "
             "total)]\n"
             "1:#!/usr/bin/env python3\n"
             "4:def division(a: float, b: float) -> float:\n"
             "5:    return a/b\n"
             "(Open file: /SWE-agent__test-repo/tests/missing_colon.py)\n"
             "bash-$",
             "c2"),
      Call("Now run the script.", "bash",
           R"({"command":"python tests/missing_colon.py"})", "c3"),
      Result("bash",
             "Traceback (most recent call last):\n"
             "  File \"/SWE-agent__test-repo/tests/missing_colon.py\", line 9, "
             "in <module>\n"
             "    print(division(123, 0))\n"
             "  File \"/SWE-agent__test-repo/tests/missing_colon.py\", line 5, "
             "in division\n"
             "    return a/b\n"
             "ZeroDivisionError: division by zero\n"
             "(Open file: /SWE-agent__test-repo/tests/missing_colon.py)\n"
             "bash-$",
             "c3"),
      Call("Decision: guard against b == 0 and submit.", "submit", "{}", "c4"),
      Result("submit",
             "diff --git a/tests/missing_colon.py b/tests/missing_colon.py\n"
             "index 20edef5..5857437 100755\n"
             "--- a/tests/missing_colon.py\n"
             "+++ b/tests/missing_colon.py\n"
             "@@ -1,7 +1,7 @@\n"
             "-def division(a: float, b: float) -> float\n"
             "+def division(a: float, b: float) -> float:\n",
             "c4"),
  };
}

TEST_CASE("an agent span: paths, errors, edits, decisions") {
  const SpanDigest digest = Digest(SweAgentSpan());
  INFO("entities " << Join(digest.entities));
  INFO("actions " << Join(digest.actions));
  INFO("errors " << Join(digest.errors));
  INFO("topics " << Join(digest.topics));
  CHECK(digest.message_count == 8);
  CHECK(digest.tools ==
        std::vector<std::string>{"find_file", "edit", "bash", "submit"});
  CHECK(Has(digest.entities, "missing_colon.py"));
  CHECK(Has(digest.entities, "/SWE-agent__test-repo/tests/missing_colon.py"));
  CHECK(Has(digest.entities, "SyntaxError"));  // backticked
  CHECK(Has(digest.entities, "tests/missing_colon.py"));
  CHECK(digest.entities.size() <= kMaxDigestItems);
  // The traceback's exception line, not its header.
  CHECK(digest.errors ==
        std::vector<std::string>{"ZeroDivisionError: division by zero"});
  // Six actions: the oldest call gives way to the second edit.
  CHECK(digest.actions ==
        std::vector<std::string>{
            "called edit(def division(a: float, b: float) -> float, def "
            "division(a...)",
            "edited /SWE-agent__test-repo/tests/missing_colon.py",
            "called bash(python tests/missing_colon.py)", "called submit()",
            "edited tests/missing_colon.py"});
  CHECK(Has(digest.decisions, "Decision: guard against b == 0 and submit."));
  CHECK(Has(digest.decisions,
            "Let's start by searching for it.") == false);  // not a line start
  CHECK(Has(digest.topics, "reading code"));
  CHECK(Has(digest.topics, "code changes"));
  CHECK(Has(digest.topics, "debugging"));
  CHECK(Has(digest.topics, "testing"));
  CHECK(!Has(digest.topics, "configuration"));
  const std::string text = SummaryText(digest, true);
  CHECK(text.find("Errors: ZeroDivisionError: division by zero, ") !=
        std::string::npos);
  CHECK(text.rfind("[Compressed context: Topics: ", 0) == 0);
  CHECK(text.find(", 8 messages compressed]") != std::string::npos);
  CHECK(SummaryText(digest, false).find("Errors:") == std::string::npos);
}

TEST_CASE("error markers") {
  struct Case {
    const char* text;
    const char* error;  // empty: none
  };
  const Case cases[] = {
      {"ok\nsrc/a.c:3:5: error: expected ';' before '}' token\nmore",
       "src/a.c:3:5: error: expected ';' before '}' token"},
      {"fatal: not a git repository (or any parent)",
       "fatal: not a git repository (or any parent)"},
      {"bash: rg: command not found", "bash: rg: command not found"},
      {"cat: x.txt: No such file or directory",
       "cat: x.txt: No such file or directory"},
      {"collected 3 items\nFAILED tests/test_a.py::test_x - assert 1 == 2",
       "FAILED tests/test_a.py::test_x - assert 1 == 2"},
      {"npm ERR! code E404", "npm ERR! code E404"},
      {"  ValueError: bad precision", "ValueError: bad precision"},
      {"raise KeyboardInterruptException: stop",
       "raise KeyboardInterruptException: stop"},
      // Prose about errors is not an error line.
      {"The `SyntaxError` in the file is a missing colon. No errors now.", ""},
      {"We should handle the error gracefully.", ""},
      // Code in a file view.
      {"1480:        except (TypeError, ValueError) as error:\n"
       "24:     except ValueError:",
       ""},
      {"- E999 IndentationError: unexpected indent",
       "E999 IndentationError: unexpected indent"},
      // A traceback cut before its exception line: the header.
      {"Traceback (most recent call last):\n  File \"a.py\", line 1",
       "Traceback (most recent call last):"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const SpanDigest digest = Digest({Text("user", c.text)});
    if (std::string_view(c.error).empty()) {
      CHECK(digest.errors.empty());
    } else {
      CHECK(digest.errors == std::vector<std::string>{c.error});
    }
  }
}

TEST_CASE("two errors per message; is_error results without a marker") {
  const SpanDigest digest = Digest({
      Text("user", "TypeError: a\nValueError: b\nKeyError: c"),
      [] {
        ChatMessage m = Result("bash", "\n  exit status 2\nstderr empty");
        m.is_error = true;
        return m;
      }(),
      [] {
        ChatMessage m = Result("deploy", "");
        m.is_error = true;
        return m;
      }(),
  });
  CHECK(digest.errors ==
        std::vector<std::string>{"TypeError: a", "ValueError: b",
                                 "exit status 2", "deploy failed"});
}

TEST_CASE("decisions: prefixes, markers, not in tool results") {
  const SpanDigest digest = Digest({
      Text("assistant",
           "Looking at it.\n"
           "- **Note:** the index is stale\n"
           "I will rebuild it tonight.\n"
           "I willingly ignore this.\n"
           "decided to keep the old API\n"
           "Recommendation: add a test\n"
           "let\xE2\x80\x99s go"),
      Result("bash", "WARNING: Running pip as root\nNote: nothing"),
  });
  CHECK(digest.decisions ==
        std::vector<std::string>{
            "Note:** the index is stale", "I will rebuild it tonight.",
            "decided to keep the old API", "Recommendation: add a test",
            "let\xE2\x80\x99s go"});
}

TEST_CASE("entities: paths, URLs, identifiers; not prose") {
  const SpanDigest digest = Digest({Text(
      "assistant",
      "See https://github.com/marshmallow-code/marshmallow/blob/dev/src/"
      "marshmallow/fields.py#L1474, then open (src/marshmallow/fields.py:1474) "
      "and call find_version( and TimeDelta(precision). and/or a/b 1/2 "
      "`td_field` `open` </html> OU.///DONE e.g. ./run.sh ~/x etc. "
      "setup.py.")});
  INFO(Join(digest.entities));
  CHECK(digest.entities ==
        std::vector<std::string>{
            "https://github.com/marshmallow-code/marshmallow/blob/dev/src/"
            "marshmallow/fields.py#L1474",
            "src/marshmallow/fields.py", "find_version", "TimeDelta",
            "td_field", "./run.sh", "~/x", "setup.py"});
}

TEST_CASE("calls: short arguments, edit tools, escapes") {
  const SpanDigest digest = Digest({
      Call("", "str_replace_editor",
           R"({"command":"view","path":"/repo/src/a.py"})", "c1"),
      Call("", "str_replace_editor",
           R"({"command":"str_replace","path":"/repo/src/b.py",)"
           R"("old_str":"x","new_str":"y"})",
           "c2"),
      Call("", "Write", R"({"file_path":"/repo/NOTES.md","content":"hi"})",
           "c3"),
      Call("", "bash",
           R"({"command":"echo \"caf\u00e9 \ud83d\ude00\"\nls",)"
           R"("timeout":30,"env":{"A":"1"}})",
           "c4"),
      Call("", "apply_patch",
           R"({"input":"*** Begin Patch\n*** Update File: lib/c.cc\n)"
           R"(@@\n-a\n+b\n*** End Patch"})",
           "c5"),
  });
  INFO(Join(digest.actions));
  CHECK(digest.actions ==
        std::vector<std::string>{
            "called str_replace_editor(view, /repo/src/a.py)",  // not an edit
            "edited /repo/src/b.py", "edited /repo/NOTES.md",
            "called bash(echo \"caf\xC3\xA9 \xF0\x9F\x98\x80\" ..., 30, ...)",
            "edited lib/c.cc"});
  CHECK(Has(digest.entities, "/repo/src/a.py"));
  CHECK(Has(digest.topics, "code changes"));
  CHECK(IsValidUtf8(SummaryText(digest, true)));
}

TEST_CASE("malformed arguments do not break anything") {
  const char* bad[] = {"",
                       "{",
                       "{\"a\":",
                       "{\"a\":\"\\u12",
                       "[[[[",
                       "plain text",
                       "{\"a\":\"\\ud800\"}",
                       "{\"a\":\"x\\",
                       "\"\\"};
  for (const char* arguments : bad) {
    CAPTURE(arguments);
    const SpanDigest digest = Digest({Call("", "t", arguments)});
    CHECK(digest.actions.size() == 1);
    CHECK(IsValidUtf8(SummaryText(digest, true)));
  }
}

TEST_CASE("caps and deduplication keep first-seen order") {
  std::vector<ChatMessage> span;
  for (int i = 0; i < 20; ++i) {
    const std::string n = std::to_string(i);
    span.push_back(Call("", "tool_" + n, "{\"q\":\"" + n + "\"}", "c" + n));
    span.push_back(Result(
        "tool_" + n,
        "Error: failure " + n + "\nsrc/file_" + n + ".py\nSELECT 1 FROM t" + n,
        "c" + n));
    span.push_back(Call("", "tool_0", "{\"q\":\"0\"}", "d" + n));  // repeats
  }
  const SpanDigest digest = Digest(span);
  CHECK(digest.message_count == 60);
  CHECK(digest.tools.size() == kMaxDigestItems);
  CHECK(digest.tools.front() == "tool_0");
  CHECK(digest.tools.back() == "tool_7");
  CHECK(digest.tables.size() == kMaxDigestItems);
  CHECK(digest.tables.front() == "t0");
  CHECK(digest.entities.size() == kMaxDigestItems);
  CHECK(digest.entities.front() == "src/file_0.py");
  CHECK(digest.errors.size() == kMaxDigestLineItems);
  CHECK(digest.errors.front() == "Error: failure 0");
  CHECK(digest.actions.size() == kMaxDigestLineItems);
  CHECK(digest.actions[0] == "called tool_0(0)");
  CHECK(digest.actions[1] == "called tool_1(1)");
  // Two identical messages add nothing but the count.
  SpanDigester twice;
  twice.Add(span[1], Tier::kRoutine);
  const SpanDigest once = twice.digest();
  twice.Add(span[1], Tier::kRoutine);
  CHECK(twice.digest().message_count == 2);
  CHECK(twice.digest().errors == once.errors);
  CHECK(twice.digest().entities == once.entities);
}

TEST_CASE("edits displace calls once actions are full") {
  std::vector<ChatMessage> span;
  for (int i = 0; i < 6; ++i) {
    span.push_back(
        Call("", "bash", "{\"command\":\"ls " + std::to_string(i) + "\"}"));
  }
  span.push_back(Call("", "edit_file", R"({"path":"a.py"})"));
  span.push_back(Result("x", "+++ b/b.py"));
  const SpanDigest digest = Digest(span);
  CHECK(digest.actions ==
        std::vector<std::string>{"called bash(ls 2)", "called bash(ls 3)",
                                 "called bash(ls 4)", "edited a.py",
                                 "edited b.py"});
}

TEST_CASE("UTF-8: cuts at 120 bytes never split a character") {
  // 1-, 2-, 3- and 4-byte characters at every alignment around the cut.
  const std::string characters[] = {"a", "\xC3\xA9", "\xE2\x82\xAC",
                                    "\xF0\x9F\x98\x80"};
  for (const std::string& c : characters) {
    for (int pad = 0; pad < 4; ++pad) {
      std::string line = "ValueError: " + std::string(pad, 'x');
      while (line.size() < 400) line += c;
      CAPTURE(pad);
      CAPTURE(c);
      const SpanDigest digest =
          Digest({Text("user", line + "\nDecision: " + line)});
      REQUIRE(!digest.errors.empty());
      const std::string& error = digest.errors[0];
      CHECK(error.size() <= kMaxDigestItemBytes);
      CHECK(error.size() >= kMaxDigestItemBytes - 6);
      CHECK(error.substr(error.size() - 3) == "...");
      CHECK(IsValidUtf8(error));
      REQUIRE(digest.decisions.size() == 1);
      CHECK(digest.decisions[0].size() <= kMaxDigestItemBytes);
      CHECK(IsValidUtf8(digest.decisions[0]));
      CHECK(IsValidUtf8(SummaryText(digest, true)));
    }
  }
  // An item of exactly 120 bytes is kept whole.
  const std::string exact = "Error: " + std::string(113, 'y');
  CHECK(Digest({Text("user", exact)}).errors[0] == exact);
}

TEST_CASE("invalid UTF-8 in a hand-filled digest is repaired") {
  SpanDigest digest;
  digest.message_count = 2;
  digest.topics = {"bad \xC3"};
  const std::string text = SummaryText(digest, false);
  CHECK(IsValidUtf8(text));
  CHECK(text ==
        "[Compressed context: Topics: bad \xEF\xBF\xBD, 2 messages "
        "compressed]");
  // And from message text that is not valid UTF-8.
  const SpanDigest from_text =
      Digest({Text("user", "Error: \xFF\xFE broken \xE2\x82")});
  CHECK(IsValidUtf8(SummaryText(from_text, true)));
}

TEST_CASE("transient messages only count and name tools") {
  SpanDigester digester;
  digester.Add(Text("user", "ok thanks, Error: none; SELECT x FROM t"),
               Tier::kTransient);
  ChatMessage result = Result("bash", "Error: z");
  digester.Add(result, Tier::kTransient);
  CHECK(digester.digest().message_count == 2);
  CHECK(digester.digest().tools == std::vector<std::string>{"bash"});
  CHECK(digester.digest().errors.empty());
  CHECK(digester.digest().tables.empty());
  CHECK(digester.digest().topics.empty());
}

TEST_CASE("Merge adds counts, deduplicates and caps") {
  SpanDigester a;
  a.Add(Call("", "query_database", R"({"query":"SELECT * FROM users"})"),
        Tier::kRoutine);
  SpanDigester b;
  b.Add(Call("", "query_database", R"({"query":"SELECT * FROM orders"})"),
        Tier::kRoutine);
  b.Add(Text("user", "git status\nfatal: not a git repository"),
        Tier::kRoutine);
  SpanDigester all;
  all.Merge(a.digest());
  all.Merge(b.digest());
  all.Merge(a.digest());
  CHECK(all.digest().message_count == 4);
  CHECK(all.digest().tables == std::vector<std::string>{"users", "orders"});
  CHECK(all.digest().tools == std::vector<std::string>{"query_database"});
  CHECK(all.digest().topics ==
        std::vector<std::string>{"database queries", "version control"});
  CHECK(all.digest().errors ==
        std::vector<std::string>{"fatal: not a git repository"});
  CHECK(
      all.digest().actions ==
      std::vector<std::string>{"called query_database(SELECT * FROM users)",
                               "called query_database(SELECT * FROM orders)"});
  // Merging many digests still respects the caps.
  SpanDigester many;
  for (int i = 0; i < 30; ++i) {
    SpanDigester one;
    one.Add(Call("", "t" + std::to_string(i), "{}"), Tier::kRoutine);
    many.Merge(one.digest());
  }
  CHECK(many.digest().message_count == 30);
  CHECK(many.digest().tools.size() == kMaxDigestItems);
  CHECK(many.digest().actions.size() == kMaxDigestLineItems);
  // Merging a span's digest equals digesting the span when nothing is capped.
  SpanDigester direct;
  for (const ChatMessage& m : SweAgentSpan()) direct.Add(m, Tier::kRoutine);
  SpanDigester merged;
  merged.Merge(direct.digest());
  CHECK(SummaryText(merged.digest(), true) ==
        SummaryText(direct.digest(), true));
}

TEST_CASE("deterministic") {
  const std::string first = SummaryText(Digest(SweAgentSpan()), true);
  for (int i = 0; i < 5; ++i) {
    CHECK(SummaryText(Digest(SweAgentSpan()), true) == first);
  }
}

TEST_CASE("a huge message is scanned only at its head and tail") {
  std::string text = "ValueError: at the head\n";
  std::string filler;
  for (int i = 0; i < 200000; ++i) filler += "lorem ipsum dolor sit amet\n";
  text += filler;
  text += "middle/hidden/path.py SELECT * FROM hidden_table\n";
  text += filler;
  text += "tail/visible/path.py\n";
  const SpanDigest digest = Digest({Text("assistant", text)});
  CHECK(digest.errors == std::vector<std::string>{"ValueError: at the head"});
  CHECK(digest.entities == std::vector<std::string>{"tail/visible/path.py"});
  CHECK(digest.tables.empty());
  // A window edge inside a multi-byte character is skipped cleanly.
  std::string wide;
  while (wide.size() < 200000) wide += "\xE2\x82\xAC";
  const SpanDigest digest2 = Digest({Text("user", "Error: " + wide)});
  REQUIRE(digest2.errors.size() == 1);
  CHECK(IsValidUtf8(digest2.errors[0]));
  CHECK(IsValidUtf8(SummaryText(digest2, true)));
}

}  // namespace
}  // namespace ctxkit::internal
