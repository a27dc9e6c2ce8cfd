// Tests of the extractive span digests: seed 001's summary string, what
// agent transcripts yield (paths, errors, edits) and from which messages,
// topics from names, caps and deduplication, the priority by which a
// summary shrinks, UTF-8 safety of every cut, Merge, determinism and
// bounded work on huge messages.

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

std::vector<std::string> Names(const SpanDigest& digest) {
  std::vector<std::string> out;
  for (const auto& [name, count] : digest.names) out.push_back(name);
  return out;
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

TEST_CASE("a SQL conversation gives seed 001's summary") {
  const std::vector<ChatMessage> span = {
      Text("user", "Show me the users table"),
      Call("", "query_database", R"({"query":"SELECT * FROM users LIMIT 10"})"),
      Result("query_database", "id | name\n1 | alice\n2 | bob"),
      Text("assistant", "There are two users: alice and bob."),
      Text("user", "How many signed up last week?"),
  };
  const SpanDigest digest = Digest(span);
  CHECK(digest.message_count == 5);
  // No name is mentioned twice: no topics rather than generic ones.
  CHECK(Topics(digest).empty());
  CHECK(digest.tables == std::vector<std::string>{"users"});
  CHECK(digest.tools == std::vector<std::string>{"query_database"});
  CHECK(SummaryText(digest, false) ==
        "[Compressed context: Tables: users, Tools used: query_database, 5 "
        "messages compressed]");
  CHECK(digest.calls == std::vector<std::string>{
                            "query_database(SELECT * FROM users LIMIT 10)"});
  CHECK(digest.requests ==
        std::vector<std::string>{"Show me the users table",
                                 "How many signed up last week?"});
  CHECK(SummaryText(digest, true) ==
        "[Compressed context: Tables: users, Tools used: query_database, "
        "Requests: Show me the users table, How many signed up last week?, "
        "Actions: called query_database(SELECT * FROM users LIMIT 10), 5 "
        "messages compressed]");
}

TEST_CASE("sections without items are left out; one message is singular") {
  SpanDigester digester;
  digester.Add(Text("assistant", "hello there"), Tier::kContextual);
  CHECK(SummaryText(digester.digest(), false) ==
        "[Compressed context: 1 message compressed]");
  CHECK(SummaryText(digester.digest(), true) ==
        "[Compressed context: 1 message compressed]");
  CHECK(SummaryText(SpanDigest{}, true) ==
        "[Compressed context: 0 messages compressed]");
}

TEST_CASE("tables only where the message is SQL") {
  const SpanDigest digest = Digest({
      Text("assistant",
           "CREATE TABLE IF NOT EXISTS orders (id int);\n"
           "INSERT INTO \"line_items\" VALUES (1);\n"
           "select o.id from public.orders o join customers c on c.id = o.c\n"
           "UPDATE ONLY accounts SET x = 1;"),
      // Prose, Python and tool output that merely says "from": no tables.
      Text("user",
           "Copy it from the list and update the file.\n"
           "from datetime import timedelta\n"
           "Remove the line from setup.py"),
      Result("bash",
             "py38 create: /repo/.tox/py38\nERROR: could not install deps "
             "from pre-commit\nflake8 from native"),
  });
  CHECK(digest.tables == std::vector<std::string>{"orders", "line_items",
                                                  "public.orders", "customers",
                                                  "accounts"});
  // Lowercase SQL counts once a SQL tool ran it.
  CHECK(Digest({Call("", "run_sql", R"({"q":"select count(*) from events"})")})
            .tables == std::vector<std::string>{"events"});
  CHECK(Digest({Text("user", "run: select count(*) from events")})
            .tables.empty());
  CHECK(Digest({Text("user", "We can join forces from tomorrow")})
            .tables.empty());
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

TEST_CASE("an agent span: names, errors, edits, calls, decisions") {
  const SpanDigest digest = Digest(SweAgentSpan());
  INFO("names " << Join(Names(digest)));
  INFO("edits " << Join(digest.edits));
  INFO("calls " << Join(digest.calls));
  INFO("errors " << Join(digest.errors));
  CHECK(digest.message_count == 8);
  CHECK(digest.tools ==
        std::vector<std::string>{"find_file", "edit", "bash", "submit"});
  CHECK(Has(Names(digest), "missing_colon.py"));
  CHECK(Has(Names(digest), "/SWE-agent__test-repo/tests/missing_colon.py"));
  CHECK(Has(Names(digest), "SyntaxError"));  // backticked
  // The file every message names is the span's topic.
  CHECK(Topics(digest).front() ==
        "/SWE-agent__test-repo/tests/missing_colon.py");
  CHECK(Entities(digest).size() <= kMaxDigestItems);
  // The traceback's exception line, not its header; nothing from prose.
  CHECK(digest.errors ==
        std::vector<std::string>{"ZeroDivisionError: division by zero"});
  // One file, named absolutely and relatively: the longer name stays.
  CHECK(digest.edits == std::vector<std::string>{
                            "/SWE-agent__test-repo/tests/missing_colon.py"});
  CHECK(digest.calls ==
        std::vector<std::string>{
            "find_file(missing_colon.py)",
            // Its result confirms the edit: the call does not know.
            "edit(def division(a: float, b: float) -> float, def "
            "division(a...)",
            "bash(python tests/missing_colon.py)", "submit()"});
  CHECK(digest.decisions ==
        std::vector<std::string>{"Decision: guard against b == 0 and submit."});
  const std::string text = SummaryText(digest, true);
  CHECK(text.find("Errors: ZeroDivisionError: division by zero, ") !=
        std::string::npos);
  CHECK(text.find("Actions: edited /SWE-agent__test-repo/tests/"
                  "missing_colon.py, called find_file(") != std::string::npos);
  CHECK(digest.calls.size() == 4);
  CHECK(text.rfind("[Compressed context: Topics: ", 0) == 0);
  CHECK(text.find(", 8 messages compressed]") != std::string::npos);
  CHECK(SummaryText(digest, false).find("Errors:") == std::string::npos);
}

TEST_CASE("errors come from command output, never from prose") {
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
      {"gcc -c x.c\nmake: *** [all] Error 2", "make: *** [all] Error 2"},
      {"Process exited with code 2", "Process exited with code 2"},
      {"Process exited with code 0", ""},
      // Code in a file view.
      {"1480:        except (TypeError, ValueError) as error:\n"
       "24:     except ValueError:",
       ""},
      {"- E999 IndentationError: unexpected indent",
       "E999 IndentationError: unexpected indent"},
      // A traceback: its exception line.
      {"Traceback (most recent call last):\n  File \"a.py\", line 1\n"
       "KeyError: 'x'",
       "KeyError: 'x'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const SpanDigest from_tool = Digest({Result("bash", c.text)});
    if (std::string_view(c.error).empty()) {
      CHECK(from_tool.errors.empty());
    } else {
      CHECK(from_tool.errors == std::vector<std::string>{c.error});
    }
    // The assistant talking about it is not an error.
    CHECK(Digest({Text("assistant", c.text)}).errors.empty());
  }
  // A SWE-agent observation (a user message) is command output.
  CHECK(Digest({Text("user",
                     "ValueError: x\n(Open file: n/a)\n(Current directory: "
                     "/repo)\nbash-$")})
            .errors == std::vector<std::string>{"ValueError: x"});
  // A user's own text: only a pasted traceback's exception line counts.
  CHECK(Digest({Text("user", "I get error: it fails. ValueError: no")})
            .errors.empty());
  CHECK(Digest({Text("user",
                     "It crashes:\nTraceback (most recent call last):\n  File "
                     "\"x.py\", line 2, in f\nOSError: disk full")})
            .errors == std::vector<std::string>{"OSError: disk full"});
}

TEST_CASE("errors per message are capped; is_error results without a marker") {
  std::string many;
  for (int i = 0; i < kMaxErrorsPerMessage + 3; ++i) {
    many += "KeyError: k" + std::to_string(i) + "\n";
  }
  const SpanDigest capped = Digest({Result("bash", many)});
  REQUIRE(capped.errors.size() == static_cast<size_t>(kMaxErrorsPerMessage));
  CHECK(capped.errors.back() ==
        "KeyError: k" + std::to_string(kMaxErrorsPerMessage - 1));
  const SpanDigest digest = Digest({
      Result("bash",
             "TypeError: a\nValueError: b\nKeyError: c\nOSError: "
             "d"),
      [] {
        ChatMessage m = Result("bash", "\n  warning only\nstderr empty");
        m.is_error = true;
        return m;
      }(),
      [] {
        ChatMessage m = Result("deploy", "");
        m.is_error = true;
        return m;
      }(),
  });
  CHECK(digest.errors == std::vector<std::string>{
                             "TypeError: a", "ValueError: b", "KeyError: c",
                             "OSError: d", "warning only", "deploy failed"});
}

TEST_CASE("requests: the user's own words, not command output") {
  ChatMessage mixed = Result("bash", "done");
  mixed.role = "user";
  mixed.mixed_own_text = "Now add a security review task.\nThanks";
  const SpanDigest digest = Digest({
      Text("user", "  Please rename the module.\nIt is in lib/."),
      Text("user", "345\n(Open file: n/a)\n(Current directory: /r)\nbash-$"),
      mixed,
      Text("assistant", "Renaming it."),
  });
  CHECK(digest.requests ==
        std::vector<std::string>{"Please rename the module.",
                                 "Now add a security review task."});
}

TEST_CASE(
    "decisions: prefixes, markers, the newest kept, not in tool results") {
  const SpanDigest digest = Digest({
      Text("assistant",
           "Looking at it.\n"
           "- **Note:** the index is stale\n"
           "I will rebuild it tonight.\n"
           "I willingly ignore this.\n"
           "decided to keep the old API\n"
           "Recommendation: add a test\n"
           "let\xE2\x80\x99s go\n"
           "Decision: ship it"),
      Result("bash", "WARNING: Running pip as root\nNote: nothing"),
  });
  // Six decisions, five kept: the oldest gives way.
  CHECK(digest.decisions ==
        std::vector<std::string>{"I will rebuild it tonight.",
                                 "decided to keep the old API",
                                 "Recommendation: add a test",
                                 "let\xE2\x80\x99s go", "Decision: ship it"});
}

TEST_CASE("names: paths, URLs, identifiers; not prose; topics by mentions") {
  const SpanDigest digest = Digest({Text(
      "assistant",
      "See https://github.com/marshmallow-code/marshmallow/blob/dev/src/"
      "marshmallow/fields.py#L1474, then open (src/marshmallow/fields.py:1474) "
      "and call find_version( and TimeDelta(precision). and/or a/b 1/2 "
      "`td_field` `open` </html> OU.///DONE e.g. ./run.sh ~/x etc. "
      "setup.py. Then TimeDelta(again) in src/marshmallow/fields.py.")});
  INFO(Join(Names(digest)));
  CHECK(Names(digest) ==
        std::vector<std::string>{
            "https://github.com/marshmallow-code/marshmallow/blob/dev/src/"
            "marshmallow/fields.py#L1474",
            "src/marshmallow/fields.py", "find_version", "TimeDelta",
            "td_field", "./run.sh", "~/x", "setup.py"});
  CHECK(Topics(digest) ==
        std::vector<std::string>{"src/marshmallow/fields.py", "TimeDelta"});
  CHECK(!Has(Entities(digest), "TimeDelta"));
  CHECK(Has(Entities(digest), "td_field"));
}

TEST_CASE("calls and edits: editors, patches, shell writes, escapes") {
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
      Call("", "Bash", R"({"command":"cat > src/gen.py <<'EOF'\nx = 1\nEOF"})",
           "c6"),
      Call("", "Bash", R"({"command":"sed -i 's/a/b/' setup.cfg"})", "c7"),
      Text("assistant", "Let me write it.\n```\ncreate reproduce.py\n```"),
  });
  INFO(Join(digest.calls));
  INFO(Join(digest.edits));
  CHECK(digest.edits ==
        std::vector<std::string>{"/repo/src/b.py", "/repo/NOTES.md", "lib/c.cc",
                                 "src/gen.py", "setup.cfg", "reproduce.py"});
  CHECK(digest.calls ==
        std::vector<std::string>{
            "str_replace_editor(view, /repo/src/a.py)",  // not an edit
            "bash(echo \"caf\xC3\xA9 \xF0\x9F\x98\x80\" ..., 30, ...)"});
  CHECK(Has(Names(digest), "/repo/src/a.py"));
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
    CHECK(digest.calls.size() == 1);
    CHECK(IsValidUtf8(SummaryText(digest, true)));
  }
}

TEST_CASE("caps and deduplication keep first-seen order") {
  std::vector<ChatMessage> span;
  for (size_t i = 0; i < kMaxDigestErrors + 10; ++i) {
    const std::string n = std::to_string(i);
    span.push_back(Call("", "tool_" + n, "{\"q\":\"" + n + "\"}", "c" + n));
    span.push_back(Result(
        "run_sql",
        "Error: failure " + n + "\nsrc/file_" + n + ".py\nSELECT 1 FROM t" + n,
        "c" + n));
    span.push_back(Call("", "tool_0", "{\"q\":\"0\"}", "d" + n));  // repeats
    span.push_back(
        Call("", "edit_file", "{\"path\":\"f" + n + ".py\"}", "e" + n));
  }
  const SpanDigest digest = Digest(span);
  CHECK(digest.message_count == 4 * (kMaxDigestErrors + 10));
  CHECK(digest.tools.size() == kMaxDigestItems);
  CHECK(digest.tools.front() == "tool_0");
  CHECK(digest.tables.size() == kMaxDigestItems);
  CHECK(digest.tables.front() == "t0");
  CHECK(digest.names.size() == kMaxDigestNames);
  CHECK(digest.errors.size() == kMaxDigestErrors);
  CHECK(digest.errors.front() == "Error: failure 0");
  CHECK(digest.edits.size() == kMaxDigestEdits);
  CHECK(digest.edits.front() == "f0.py");
  CHECK(digest.calls.size() == kMaxDigestCalls);
  CHECK(digest.calls[0] == "tool_0(0)");
  CHECK(digest.calls[1] == "tool_1(1)");
  // Two identical messages add nothing but the count (and mentions).
  SpanDigester twice;
  twice.Add(span[1], Tier::kRoutine);
  const SpanDigest once = twice.digest();
  twice.Add(span[1], Tier::kRoutine);
  CHECK(twice.digest().message_count == 2);
  CHECK(twice.digest().errors == once.errors);
  CHECK(Names(twice.digest()) == Names(once));
  CHECK(twice.digest().names[0].second == 2);
}

TEST_CASE("a summary that must shrink keeps edits, errors and its count") {
  SpanDigest digest;
  digest.message_count = 12;
  digest.tools = {"bash"};
  digest.tables = {"users"};
  digest.names = {{"src/a.py", 3}, {"src/b.py", 1}};
  digest.errors = {"KeyError: 'x'", "OSError: disk full"};
  digest.edits = {"src/a.py"};
  digest.calls = {"bash(ls)"};
  digest.decisions = {"Decision: old", "Decision: new"};
  digest.requests = {"Fix the parser"};
  CHECK(SummaryItemCount(digest, true) == 11);
  CHECK(SummaryText(digest, true, 0) ==
        "[Compressed context: 12 messages compressed]");
  CHECK(SummaryText(digest, true, 1) ==
        "[Compressed context: Actions: edited src/a.py, 12 messages "
        "compressed]");
  CHECK(SummaryText(digest, true, 4) ==
        "[Compressed context: Requests: Fix the parser, Errors: KeyError: "
        "'x', OSError: disk full, Actions: edited src/a.py, 12 messages "
        "compressed]");
  CHECK(SummaryText(digest, true, 100) == SummaryText(digest, true));
  CHECK(SummaryText(digest, true) ==
        "[Compressed context: Topics: src/a.py, Tables: users, Tools used: "
        "bash, Entities: src/b.py, Requests: Fix the parser, Errors: "
        "KeyError: 'x', OSError: disk full, Actions: edited src/a.py, called "
        "bash(ls), Decisions: Decision: old, Decision: new, 12 messages "
        "compressed]");
}

TEST_CASE("UTF-8: cuts at the item limit never split a character") {
  // 1-, 2-, 3- and 4-byte characters at every alignment around the cut.
  const std::string characters[] = {"a", "\xC3\xA9", "\xE2\x82\xAC",
                                    "\xF0\x9F\x98\x80"};
  for (const std::string& c : characters) {
    for (int pad = 0; pad < 4; ++pad) {
      std::string line = "ValueError: " + std::string(pad, 'x');
      while (line.size() < 400) line += c;
      CAPTURE(pad);
      CAPTURE(c);
      const SpanDigest digest = Digest(
          {Result("bash", line), Text("assistant", "Decision: " + line)});
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
  // An item of exactly the limit is kept whole.
  const std::string exact =
      "Error: " + std::string(kMaxDigestItemBytes - 7, 'y');
  CHECK(Digest({Result("bash", exact)}).errors[0] == exact);
}

TEST_CASE("invalid UTF-8 in a hand-filled digest is repaired") {
  SpanDigest digest;
  digest.message_count = 2;
  digest.tools = {"bad \xC3"};
  const std::string text = SummaryText(digest, false);
  CHECK(IsValidUtf8(text));
  CHECK(text ==
        "[Compressed context: Tools used: bad \xEF\xBF\xBD, 2 messages "
        "compressed]");
  // And from message text that is not valid UTF-8.
  const SpanDigest from_text =
      Digest({Result("bash", "Error: \xFF\xFE broken \xE2\x82")});
  CHECK(IsValidUtf8(SummaryText(from_text, true)));
}

TEST_CASE(
    "transient messages only count and name tools; demonstrations count") {
  SpanDigester digester;
  digester.Add(Text("user", "ok thanks, Error: none; SELECT x FROM t"),
               Tier::kTransient);
  ChatMessage result = Result("bash", "Error: z");
  digester.Add(result, Tier::kTransient);
  CHECK(digester.digest().message_count == 2);
  CHECK(digester.digest().tools == std::vector<std::string>{"bash"});
  CHECK(digester.digest().errors.empty());
  CHECK(digester.digest().tables.empty());
  CHECK(digester.digest().names.empty());
  // A demonstration's edits and errors never happened.
  SpanDigester demo;
  demo.Add(Text("user",
                "--- DEMONSTRATION ---\n```\ncreate demo.py\n```\n+++ "
                "b/demo.py\nValueError: demo\n(Current directory: /x)\nbash-$"),
           Tier::kContextual, /*demonstration=*/true);
  CHECK(demo.digest().message_count == 1);
  CHECK(demo.digest().edits.empty());
  CHECK(demo.digest().errors.empty());
  CHECK(demo.digest().names.empty());
}

TEST_CASE("Merge adds counts, deduplicates and caps") {
  SpanDigester a;
  a.Add(Call("", "query_database", R"({"query":"SELECT * FROM users"})"),
        Tier::kRoutine);
  SpanDigester b;
  b.Add(Call("", "query_database", R"({"query":"SELECT * FROM orders"})"),
        Tier::kRoutine);
  b.Add(Result("bash", "git status\nfatal: not a git repository"),
        Tier::kRoutine);
  SpanDigester all;
  all.Merge(a.digest());
  all.Merge(b.digest());
  all.Merge(a.digest());
  CHECK(all.digest().message_count == 4);
  CHECK(all.digest().tables == std::vector<std::string>{"users", "orders"});
  CHECK(all.digest().tools ==
        std::vector<std::string>{"query_database", "bash"});
  CHECK(all.digest().errors ==
        std::vector<std::string>{"fatal: not a git repository"});
  CHECK(all.digest().calls ==
        std::vector<std::string>{"query_database(SELECT * FROM users)",
                                 "query_database(SELECT * FROM orders)"});
  // Merging many digests still respects the caps.
  SpanDigester many;
  for (int i = 0; i < 30; ++i) {
    SpanDigester one;
    one.Add(Call("", "t" + std::to_string(i), "{}"), Tier::kRoutine);
    many.Merge(one.digest());
  }
  CHECK(many.digest().message_count == 30);
  CHECK(many.digest().tools.size() == kMaxDigestItems);
  CHECK(many.digest().calls.size() == kMaxDigestCalls);
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
  const SpanDigest digest = Digest({Result("bash", text)});
  CHECK(digest.errors == std::vector<std::string>{"ValueError: at the head"});
  CHECK(Names(digest) == std::vector<std::string>{"tail/visible/path.py"});
  CHECK(digest.tables.empty());
  // A window edge inside a multi-byte character is skipped cleanly.
  std::string wide;
  while (wide.size() < 200000) wide += "\xE2\x82\xAC";
  const SpanDigest digest2 = Digest({Result("bash", "Error: " + wide)});
  REQUIRE(digest2.errors.size() == 1);
  CHECK(IsValidUtf8(digest2.errors[0]));
  CHECK(IsValidUtf8(SummaryText(digest2, true)));
}

}  // namespace
}  // namespace ctxkit::internal
