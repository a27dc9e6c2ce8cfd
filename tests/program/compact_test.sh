#!/usr/bin/env bash
# Tests of `ctxkit compact`, run as a user runs it: real histories in,
# the response JSON read with jq.
#
# Usage: compact_test.sh CTXKIT CASE
#   CTXKIT  the program to test
#   CASE    budget | explain | strategies | stdin | request | rules |
#           formats | infeasible | bad_input | usage | numbers |
#           unknown_model
#
# Every case works in its own temporary directory, removed on exit, with a
# clean environment (env -i). Every check reports what it saw when it
# fails; the script exits 1 if any check failed.

set -u

if [[ $# -ne 2 ]]; then
  echo "usage: $0 CTXKIT CASE" >&2
  exit 2
fi
case_name=$2
# shellcheck source=tests/program/harness.sh
source "$(dirname "$0")/harness.sh" "$1" compact jq

# run_stdin FILE ARGS...: runs `ctxkit compact ARGS...` with standard input
# from FILE.
run_stdin() {
  local input=$1
  shift
  last_command="ctxkit compact $*"
  env -i "${passthrough[@]}" HOME="$work/home" TMPDIR="$work/tmp" \
    "$ctxkit" compact "$@" <"$input" >"$work/out" 2>"$work/err"
  status=$?
}

run() { run_stdin /dev/null "$@"; }

# A successful compaction: exit 0, nothing on stderr, one line of JSON.
expect_ok() {
  [[ $status -eq 0 ]] || fail "exit status $status, expected 0"
  [[ ! -s $work/err ]] || fail "expected nothing on stderr"
  [[ $(wc -l <"$work/out") -eq 1 ]] || fail "expected one line on stdout"
  jq -e . "$work/out" >/dev/null 2>&1 || fail "stdout is not JSON"
}

# A failed command: exit 1, nothing on stdout, and the first stderr line
# starts with "ctxkit: CODE: " and contains TEXT.
expect_error() {
  local code=$1 text=$2
  [[ $status -eq 1 ]] || fail "exit status $status, expected 1"
  [[ ! -s $work/out ]] || fail "expected nothing on stdout"
  local first
  first=$(head -n 1 "$work/err")
  [[ $first == "ctxkit: $code: "* ]] ||
    fail "first stderr line does not start with 'ctxkit: $code: '"
  [[ $first == *"$text"* ]] || fail "first stderr line lacks: $text"
}

# A usage error: exit 2, nothing on stdout, stderr contains TEXT.
expect_usage_error() {
  [[ $status -eq 2 ]] || fail "exit status $status, expected 2"
  [[ ! -s $work/out ]] || fail "expected nothing on stdout"
  grep -qF -- "$1" "$work/err" || fail "stderr lacks: $1"
}

q() { jq -r "$1" "$work/out"; }

expect_q() {
  local got
  got=$(q "$1")
  [[ $got == "$2" ]] || fail "$1 is '$got', expected '$2'"
}

expect_true() {
  jq -e "$1" "$work/out" >/dev/null 2>&1 || fail "not true: $1"
}

# An agent transcript in OpenAI format: a system prompt, the task, then
# `turns` rounds of a tool call (file view or test run) with its result and
# an assistant remark, some acknowledgements, and a correction near the end.
write_agent_history() {
  local turns=$1 file=$2
  jq -cn --argjson turns "$turns" '
    [{role: "system", content: "You are a coding agent working in /repo."},
     {role: "user", content: "Fix the failing test tests/test_parse.py::test_empty."}]
    + ([range(0; $turns)] | map(. as $i | [
        {role: "assistant", content: null, tool_calls: [{
           id: "call_\($i)", type: "function",
           function: {name: (if $i % 3 == 0 then "run_tests" else "view_file" end),
                      arguments: ({path: "src/module_\($i).py"} | tostring)}}]},
        {role: "tool", tool_call_id: "call_\($i)",
         content: (if $i % 3 == 0
                   then "FAILED tests/test_parse.py::test_empty - AssertionError: expected [] got None\nexit code 1"
                   else "def parse_\($i)(text):\n    for line in text.splitlines():\n        yield line.strip()\n" * 4 end)},
        {role: "assistant",
         content: "Step \($i): module_\($i) reads the input line by line and returns the stripped lines to the caller."},
        {role: "user", content: (if $i % 4 == 1 then "ok" else "Continue." end)}
      ]) | add)
    + [{role: "user", content: "Actually, keep the old behaviour for None input."}]
  ' >"$file"
}

# The exact token count of the response's messages, by `ctxkit count`.
count_messages() {
  jq -c .messages "$work/out" >"$work/messages.json"
  env -i "${passthrough[@]}" HOME="$work/home" "$ctxkit" count --messages \
    "$@" "$work/messages.json"
}

case_budget() {
  write_agent_history 30 "$work/history.json"
  local original
  original=$(jq length "$work/history.json")
  for budget in 400 1000 3000; do
    run --max-tokens "$budget" "$work/history.json"
    expect_ok
    expect_true ".token_estimate <= $budget"
    expect_q .budget.met true
    expect_q .budget.target_tokens "$budget"
    expect_q .compaction_info.original_count "$original"
    expect_true '.compaction_info.compacted_count == (.messages | length)'
    # Seed 001's fields, and the count the program's own counter agrees on.
    expect_true '.summary | has("topics") and has("tables") and has("tools") and has("description")'
    expect_true '.compaction_info | has("dropped_count") and has("anchor_count") and has("tokens_saved") and has("compression_ratio")'
    expect_q '.messages[0].content' "You are a coding agent working in /repo."
    expect_q '.messages[-1].content' "Actually, keep the old behaviour for None input."
    # Every kept tool result has its call right before it.
    expect_true '[.messages | to_entries[] | select(.value.role == "tool")
                  | .key] as $tools | [.messages[] ] as $m
                  | all($tools[]; . > 0 and ($m[. - 1].role == "tool" or ($m[. - 1].tool_calls // [] | length) > 0))'
  done
  # The token estimate is an exact count with the response's encoding.
  run --max-tokens 1000 --model gpt-4o "$work/history.json"
  expect_ok
  expect_q .encoding o200k_base
  local counted
  counted=$(count_messages --model gpt-4o)
  expect_q .token_estimate "$counted"
  # Deterministic: the same bytes twice.
  cp "$work/out" "$work/first"
  run --max-tokens 1000 --model gpt-4o "$work/history.json"
  cmp -s "$work/out" "$work/first" || fail "two runs differ"
  # A budget the history fits: nothing is dropped.
  run --max-tokens 100000 "$work/history.json"
  expect_ok
  expect_q .compaction_info.dropped_count 0
  expect_q .compaction_info.compacted_count "$original"
}

case_explain() {
  write_agent_history 12 "$work/history.json"
  local n
  n=$(jq length "$work/history.json")
  run --max-tokens 600 --explain "$work/history.json"
  expect_ok
  expect_q '.decisions | length' "$n"
  expect_true 'all(.decisions[]; has("index") and has("tier") and has("rule") and has("action") and has("reason"))'
  expect_true 'all(.decisions[]; .tier as $t | ["anchor","important","contextual","routine","transient"] | index($t) != null)'
  expect_q '[.decisions[].index] == [range(0; .decisions | length)]' true
  expect_q '.decisions[0].tier' anchor
  expect_q '.decisions[0].rule' system_prompt
  expect_q '.decisions[1].tier' anchor
  expect_q '.decisions[1].rule' task
  expect_q '.decisions[-1].action' kept
  # The correction is an anchor, "ok" transient, a failing test important.
  expect_q '.decisions[-1].tier' anchor
  expect_true 'any(.decisions[]; .tier == "transient")'
  expect_true 'any(.decisions[]; .tier == "important")'
  expect_true 'any(.decisions[]; .action != "kept")'
  # Without --explain there are no decisions.
  run --max-tokens 600 "$work/history.json"
  expect_ok
  expect_q 'has("decisions")' false
}

case_strategies() {
  write_agent_history 20 "$work/history.json"
  for strategy in smart summarize remove_old compress_similar; do
    run --max-tokens 900 --strategy "$strategy" "$work/history.json"
    expect_ok
    expect_q .strategy "$strategy"
    expect_q .budget.met true
    expect_true '.token_estimate <= 900'
  done
  # remove_old writes no summaries.
  run --max-tokens 900 --strategy remove_old "$work/history.json"
  expect_q .compaction_info.summary_count 0
  # target_ratio: at most that share of the original tokens.
  run --target-ratio 0.3 "$work/history.json"
  expect_ok
  expect_true '.token_estimate <= (.compaction_info.original_tokens * 0.3)'
  # compress_similar merges repeated messages, keeping the last.
  jq -cn '[{role: "user", content: "Show main.py"}]
          + [range(0; 6) | {role: "assistant", content: "Here is main.py: print(1)"}]
          + [{role: "user", content: "thanks"}]' >"$work/dups.json"
  run --strategy compress_similar --explain "$work/dups.json"
  expect_ok
  expect_true '.compaction_info.compacted_count < 8'
  # The recent window keeps the last N messages.
  run --max-tokens 100000 --recent-window 2 --strategy summarize \
    "$work/history.json"
  expect_ok
  expect_q '.messages[-1].content' "Actually, keep the old behaviour for None input."
}

case_stdin() {
  write_agent_history 10 "$work/history.json"
  run --max-tokens 700 "$work/history.json"
  expect_ok
  cp "$work/out" "$work/from_file"
  run_stdin "$work/history.json" --max-tokens 700 -
  expect_ok
  cmp -s "$work/out" "$work/from_file" || fail "stdin and file differ"
  # No FILE at all reads standard input too, as count does.
  run_stdin "$work/history.json" --max-tokens 700
  expect_ok
  cmp -s "$work/out" "$work/from_file" || fail "stdin without - differs"
}

case_request() {
  write_agent_history 10 "$work/history.json"
  # A whole seed 001 request object; its options apply...
  jq -c '{messages: ., max_tokens: 800, recent_window: 3,
          options: {enable_summarization: true}}' "$work/history.json" \
    >"$work/request.json"
  run "$work/request.json"
  expect_ok
  expect_q .budget.target_tokens 800
  # ...and flags override its members.
  run --max-tokens 500 "$work/request.json"
  expect_ok
  expect_q .budget.target_tokens 500
  expect_true '.token_estimate <= 500'
  # Anthropic input comes back in Anthropic format.
  jq -cn '[{role: "user", content: "List the tables."},
           {role: "assistant", content: [{type: "tool_use", id: "t1", name: "query_database", input: {sql: "SELECT 1"}}]},
           {role: "user", content: [{type: "tool_result", tool_use_id: "t1", content: "orders"}]},
           {role: "assistant", content: "There is one table: orders."},
           {role: "user", content: [{type: "text", text: "Describe it.", cache_control: {type: "ephemeral"}}]}]' \
    >"$work/anthropic.json"
  run "$work/anthropic.json"
  expect_ok
  expect_q .format anthropic
  expect_q '.messages[-1].content[0].cache_control.type' ephemeral
}

case_rules() {
  jq -cn '[{role: "user", content: "Deploy the service."},
           {role: "assistant", content: "Deployed to production at 10:42."},
           {role: "user", content: "Good."}]' >"$work/history.json"
  echo '[{"name":"deploy_log","tier":"anchor","contains_any":["deployed to production"]}]' \
    >"$work/rules.json"
  run --explain --rules "$work/rules.json" "$work/history.json"
  expect_ok
  expect_q '.decisions[1].rule' deploy_log
  expect_q '.decisions[1].tier' anchor
  echo '[{"name":"Bad Name","tier":"anchor","contains_any":["x"]}]' \
    >"$work/bad_rules.json"
  run --rules "$work/bad_rules.json" "$work/history.json"
  expect_error INVALID_ARGUMENT "rules[0].name"
  run --rules "$work/missing.json" "$work/history.json"
  expect_error NOT_FOUND "missing.json"
}

case_formats() {
  jq -cn '[{role: "user", content: "hi"}, {role: "assistant", content: "hello"}]' \
    >"$work/plain.json"
  run "$work/plain.json"
  expect_ok
  expect_q .format plain
  run --format openai "$work/plain.json"
  expect_ok
  expect_q .format openai
  jq -cn '[{role: "user", content: "run"},
           {role: "assistant", content: null, tool_calls: [{id: "c1", type: "function", function: {name: "run", arguments: "{}"}}]},
           {role: "tool", tool_call_id: "c1", content: "done"}]' >"$work/openai.json"
  run "$work/openai.json"
  expect_ok
  expect_q .format openai
  # tool_calls do not exist in the Anthropic format.
  run --format anthropic "$work/openai.json"
  expect_error INVALID_ARGUMENT "messages[1].tool_calls"
}

case_infeasible() {
  jq -cn '[{role: "system", content: ("You are a database assistant. Always answer with SQL. " * 20)},
           {role: "user", content: ("Show me every table in the warehouse schema with its size. " * 20)}]' \
    >"$work/history.json"
  run --max-tokens 10 "$work/history.json"
  [[ $status -eq 3 ]] || fail "exit status $status, expected 3"
  [[ $(wc -l <"$work/out") -eq 1 ]] || fail "expected the best-effort result"
  expect_q .budget.met false
  expect_true '.budget.over_by > 0'
  expect_true '.token_estimate > 10'
  local first
  first=$(head -n 1 "$work/err")
  [[ $first == "ctxkit: OUT_OF_RANGE: budget: infeasible"* ]] ||
    fail "stderr does not say the budget is infeasible"
}

case_bad_input() {
  printf '[{"role":"user",' >"$work/truncated.json"
  run "$work/truncated.json"
  expect_error INVALID_ARGUMENT "JSON"
  echo '[{"role":"user","content":"a"},{"role":"wizard","content":"b"}]' \
    >"$work/role.json"
  run "$work/role.json"
  expect_error INVALID_ARGUMENT "messages[1].role"
  echo '[{"role":"user","content":42}]' >"$work/content.json"
  run "$work/content.json"
  expect_error INVALID_ARGUMENT "messages[0].content"
  echo '[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"nope","content":"b"}]' \
    >"$work/tool.json"
  run "$work/tool.json"
  expect_error INVALID_ARGUMENT "messages[1].tool_call_id"
  echo '[]' >"$work/empty.json"
  run "$work/empty.json"
  expect_error INVALID_ARGUMENT "messages"
  echo '{"messages":[{"role":"user","content":"a"}],"max_tokens":-5}' \
    >"$work/negative.json"
  run "$work/negative.json"
  expect_error INVALID_ARGUMENT "max_tokens"
  : >"$work/nothing.json"
  run "$work/nothing.json"
  expect_error INVALID_ARGUMENT ""
  run "$work/does-not-exist.json"
  expect_error NOT_FOUND "does-not-exist.json"
  run "$work"
  [[ $status -eq 1 ]] || fail "a directory: exit status $status, expected 1"
}

case_usage() {
  echo '[{"role":"user","content":"a"}]' >"$work/history.json"
  # No FILE reads standard input (empty here): a bad-input error, not usage.
  run
  [[ $status -eq 1 ]] || fail "no FILE and empty stdin: exit status $status, expected 1"
  grep -qF "INVALID_ARGUMENT: compaction request is not valid JSON" "$work/err" ||
    fail "no FILE and empty stdin: the error does not name the request"
  run --strategy shrink "$work/history.json"
  expect_usage_error "--strategy"
  run --format xml "$work/history.json"
  expect_usage_error "--format"
  run --bogus "$work/history.json"
  expect_usage_error "--bogus"
  run "$work/history.json" extra
  expect_usage_error "extra"
  run --help
  [[ $status -eq 0 ]] || fail "--help: exit status $status"
  grep -qF -- "--max-tokens" "$work/out" || fail "--help lacks --max-tokens"
  grep -qF "Exit status" "$work/out" || fail "--help lacks the exit status"
}

# A value the command accepted: it ran and printed its response, whether or
# not the result fits (exit 0 or 3).
expect_accepted() {
  [[ $status -eq 0 || $status -eq 3 ]] || fail "exit status $status, expected 0 or 3"
  jq -e .budget "$work/out" >/dev/null 2>&1 || fail "no response on stdout"
}

# A usage error whose first stderr line is exactly LINE.
expect_usage_line() {
  expect_usage_error "$1"
  [[ $(head -n 1 "$work/err") == "$1" ]] ||
    fail "first stderr line is not: $1"
}

# Every numeric flag: a value out of its range, negative or not a number is
# a usage error naming the flag, the value and the range; never a default.
case_numbers() {
  echo '[{"role":"user","content":"a"}]' >"$work/history.json"
  local budget="the token budget must be a positive integer, at most 1099511627776 (2^40)"
  for value in -5 0 abc 2199023255552 1099511627777 1.5 "" 99999999999999999999; do
    run --max-tokens "$value" "$work/history.json"
    if [[ -z $value ]]; then
      expect_usage_line "ctxkit: empty value for flag '--max-tokens' of 'compact'"
    else
      expect_usage_line "ctxkit: invalid value '$value' for flag '--max-tokens' of 'compact': $budget"
    fi
  done
  run --max-tokens=-5 "$work/history.json"
  expect_usage_line "ctxkit: invalid value '-5' for flag '--max-tokens' of 'compact': $budget"
  # The limits themselves are accepted.
  for value in 1 1099511627776; do
    run --max-tokens "$value" "$work/history.json"
    expect_accepted
    expect_q .budget.target_tokens "$value"
  done

  local window="the recent window must be an integer from 0 to 2147483648 (2^31)"
  for value in -1 2147483649 ten; do
    run --recent-window "$value" "$work/history.json"
    expect_usage_line "ctxkit: invalid value '$value' for flag '--recent-window' of 'compact': $window"
  done
  for value in 0 2147483648; do
    run --recent-window "$value" "$work/history.json"
    expect_accepted
  done

  local ratio="the target ratio must be a number from 0.1 to 0.9"
  for value in 2 0.05 0.95 -0.5 abc .5 +0.5 inf nan 0x0.5; do
    run --target-ratio "$value" "$work/history.json"
    expect_usage_line "ctxkit: invalid value '$value' for flag '--target-ratio' of 'compact': $ratio"
  done
  for value in 0.1 0.9 1e-1 00.5; do
    run --target-ratio "$value" "$work/history.json"
    expect_accepted
  done

  # The help says the ranges.
  run --help
  grep -qF -- "the token budget, 1..2^40" "$work/out" ||
    fail "--help lacks the budget's range"
  grep -qF -- "0..2^31" "$work/out" || fail "--help lacks the window's range"
}

# An unknown --model is a usage error naming the close matches, unless
# --estimate asks for an estimate, which the response then says it is.
case_unknown_model() {
  write_agent_history 4 "$work/history.json"
  run --max-tokens 500 --model gpt-4oo "$work/history.json"
  expect_usage_line "ctxkit: invalid value 'gpt-4oo' for flag '--model' of 'compact': unknown model; did you mean gpt-4o, gpt-4o-* or gpt-4-*? (--estimate: estimate its tokens instead)"
  run --model zqxjvwkpfy "$work/history.json"
  expect_usage_line "ctxkit: invalid value 'zqxjvwkpfy' for flag '--model' of 'compact': unknown model, and no known model is close (--estimate: estimate its tokens instead)"
  # Caught before the input is read: the file need not exist.
  run --model gpt-4oo "$work/missing.json"
  expect_usage_error "unknown model"

  run --max-tokens 500 --model gpt-4oo --estimate "$work/history.json"
  expect_ok
  expect_q .counting estimate
  expect_q .encoding ""
  expect_q .budget.met true
  expect_true '.token_estimate <= 500'

  # A known model: --estimate changes nothing.
  run --max-tokens 500 --model gpt-4o "$work/history.json"
  expect_ok
  cp "$work/out" "$work/exact"
  expect_q .counting tokenizer
  run --max-tokens 500 --model gpt-4o --estimate "$work/history.json"
  expect_ok
  cmp -s "$work/out" "$work/exact" || fail "--estimate changed an exact count"
  # Names resolve as the library resolves them: prefixes, any case.
  run --max-tokens 500 --model GPT-4o-2024-08-06 "$work/history.json"
  expect_ok
  expect_q .encoding o200k_base

  run --help
  grep -qF -- "--estimate" "$work/out" || fail "--help lacks --estimate"
}

if ! declare -F "case_$case_name" >/dev/null; then
  echo "unknown case: $case_name" >&2
  exit 2
fi
"case_$case_name"
if [[ $failures -ne 0 ]]; then
  echo "$case_name: $failures check(s) failed" >&2
  exit 1
fi
echo "$case_name: ok"
