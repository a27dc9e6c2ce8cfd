#!/usr/bin/env bash
# No silent wrong results from the program: a compaction request with a
# mistyped key (or message member) or an unknown model is refused with the
# closest valid name, and no command makes a store of a directory that holds
# other files.
#
# Usage: strict_input_test.sh CTXKIT CASE
#   CTXKIT  the program to test
#   CASE    request_keys | request_model | store_directory |
#           readonly_commands
#
# Every case works in its own temporary directory, removed on exit, with a
# clean environment (env -i); the script exits 1 if any check failed.

set -u

if [[ $# -ne 2 ]]; then
  echo "usage: $0 CTXKIT CASE" >&2
  exit 2
fi
case_name=$2
# shellcheck source=tests/program/harness.sh
source "$(dirname "$0")/harness.sh" "$1" strict jq

# run ARGS...: runs `ctxkit ARGS...` with no input.
run() {
  last_command="ctxkit $*"
  env -i "${passthrough[@]}" HOME="$work/home" TMPDIR="$work/tmp" \
    "$ctxkit" "$@" </dev/null >"$work/out" 2>"$work/err"
  status=$?
}

# A failed command: exit 1, and the first stderr line is MESSAGE whole.
expect_error_line() {
  [[ $status -eq 1 ]] || fail "exit status $status, expected 1"
  [[ $(head -n 1 "$work/err") == "$1" ]] || fail "stderr is not: $1"
}

expect_ok() {
  [[ $status -eq 0 ]] || fail "exit status $status, expected 0"
}

# Writes a request with MEMBERS (JSON members and a comma, or "") before a
# history of 40 messages of about 60 tokens each, into FILE.
write_request() {
  local members=$1 file=$2 i words=""
  for i in $(seq 1 25); do words+="city $i "; done
  {
    printf '{%s"messages":[{"role":"system","content":"You are a travel agent."}' "$members"
    for i in $(seq 1 20); do
      printf ',{"role":"user","content":"Question %d: %s"}' "$i" "$words"
      printf ',{"role":"assistant","content":"Answer %d: %s"}' "$i" "$words"
    done
    printf ']}\n'
  } >"$file"
}

case_request_keys() {
  write_request '"max_token":600,' "$work/typo.json"
  run compact "$work/typo.json"
  expect_error_line "ctxkit: INVALID_ARGUMENT: unknown key 'max_token'; did you mean 'max_tokens'?"
  [[ ! -s $work/out ]] || fail "a refused request printed a result"

  write_request '"options":{"enable_sumarization":false},' "$work/options.json"
  run compact "$work/options.json"
  expect_error_line "ctxkit: INVALID_ARGUMENT: options: unknown key 'enable_sumarization'; did you mean 'enable_summarization'?"

  # A misspelled message member is refused too, by compact and by count,
  # naming the message; spelled right, the same history is accepted.
  local typo='[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","tool_call_idd":"c1","content":"a.txt"}]'
  printf '%s' "$typo" >"$work/member.json"
  run compact "$work/member.json"
  expect_error_line "ctxkit: INVALID_ARGUMENT: messages[1]: unknown key 'tool_call_idd'; did you mean 'tool_call_id'?"
  run count --messages --model gpt-4o "$work/member.json"
  expect_error_line "ctxkit: INVALID_ARGUMENT: '$work/member.json': messages[1]: unknown key 'tool_call_idd'; did you mean 'tool_call_id'?"
  printf '%s' "${typo/tool_call_idd/tool_call_id}" >"$work/member.json"
  run compact "$work/member.json"
  expect_ok
  run count --messages --model gpt-4o "$work/member.json"
  expect_ok

  # Spelled right, the budget is the one the request names.
  write_request '"max_tokens":600,' "$work/good.json"
  run compact "$work/good.json"
  expect_ok
  [[ $(jq .budget.target_tokens "$work/out") == 600 ]] ||
    fail "target_tokens is not 600"
  [[ $(jq '.token_estimate <= 600' "$work/out") == true ]] ||
    fail "the result does not fit 600 tokens"
}

case_request_model() {
  write_request '"model":"gpt4o","max_tokens":600,' "$work/model.json"
  run compact "$work/model.json"
  [[ $status -eq 1 ]] || fail "exit status $status, expected 1"
  [[ $(head -n 1 "$work/err") == "ctxkit: INVALID_ARGUMENT: model: unknown model \"gpt4o\"; did you mean gpt-4o"* ]] ||
    fail "the error does not name the closest model"

  # Asked for explicitly, the estimate is made and said.
  run compact --estimate "$work/model.json"
  expect_ok
  [[ $(jq -r .counting "$work/out") == estimate ]] ||
    fail "counting is not estimate"
  write_request '"model":"gpt4o","estimate_unknown_model":true,' \
    "$work/estimate.json"
  run compact "$work/estimate.json"
  expect_ok
  [[ $(jq -r .counting "$work/out") == estimate ]] ||
    fail "counting is not estimate"
}

# DIR holds exactly the entries NAMES... (sorted), nothing added.
expect_entries() {
  local dir=$1
  shift
  local want have
  want=$(printf '%s\n' "$@" | sort)
  have=$(ls -A "$dir" | sort)
  [[ $have == "$want" ]] || fail "$dir holds: $(echo $have)"
}

case_store_directory() {
  local project=$work/project
  mkdir -p "$project/src"
  echo '# notes' >"$project/README.md"
  local command
  # Commands that add records would create a store: they refuse.
  for command in "store init" "conv create --title t" \
                 "cache put --content hello" \
                 "ref add --type note --title t --content hello"; do
    # shellcheck disable=SC2086
    run $command --db "$project"
    [[ $status -eq 1 ]] || fail "exit status $status, expected 1"
    [[ $(head -n 1 "$work/err") == "ctxkit: FAILED_PRECONDITION: '$project' holds no ctxkit store but is not empty"* ]] ||
      fail "'$command' did not refuse the directory"
    expect_entries "$project" README.md src
  done
  # The others fail too, and leave the directory as it was.
  for command in "conv list" "stats" "cache stats" "ref list"; do
    # shellcheck disable=SC2086
    run $command --db "$project"
    [[ $status -eq 1 ]] || fail "exit status $status, expected 1"
    expect_entries "$project" README.md src
  done
  # 'store info' reads only: there is no store there.
  run store info --db "$project"
  [[ $status -eq 1 && $(head -n 1 "$work/err") == "ctxkit: NOT_FOUND: "* ]] ||
    fail "store info did not say NOT_FOUND"
  expect_entries "$project" README.md src

  # An empty directory may become a store, and then holds only its files.
  mkdir "$work/empty"
  run store init --db "$work/empty"
  expect_ok
  expect_entries "$work/empty" data.mdb lock.mdb
}

case_readonly_commands() {
  run conv create --db "$work/real" --title hello
  expect_ok
  # A mistyped --db: commands that do not add records refuse it and
  # create nothing, whether the path is missing or an empty directory.
  mkdir "$work/empty"
  local db command
  for db in "$work/rael" "$work/empty"; do
    for command in "conv list" "conv stats" "stats" "cache stats" \
                   "ref list" "ref search words" \
                   "conv get 00000000-0000-4000-8000-000000000000"; do
      # shellcheck disable=SC2086
      run $command --db "$db"
      [[ $status -eq 1 && $(head -n 1 "$work/err") == "ctxkit: NOT_FOUND: no store at '$db'"* ]] ||
        fail "'$command' did not refuse a missing store"
      [[ ! -s $work/out ]] || fail "'$command' printed a result"
    done
  done
  [[ ! -e $work/rael ]] || fail "$work/rael was created"
  expect_entries "$work/empty"
  # The right path still works.
  run conv list --db "$work/real"
  expect_ok
  [[ $(jq .total "$work/out") == 1 ]] || fail "conv list lost the conversation"
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
