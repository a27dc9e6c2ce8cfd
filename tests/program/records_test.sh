#!/usr/bin/env bash
# Tests of the ctxkit program's record commands: conv, ref, cache, optimize
# and stats, run as a user runs them, on a store in a temporary directory.
#
# Usage: records_test.sh CTXKIT CASE
#   CTXKIT  the program to test
#   CASE    conversations | references | cache | cache_ttl | optimize |
#           stats | cascade | bad_input | unknown_model | contexts
#
# Every case works in its own temporary directory, removed on exit, with a
# clean environment (env -i) whose HOME and TMPDIR point inside it. Every
# command prints one JSON document on one line; the checks read it with jq.
# Every check reports what it saw when it fails; the script exits 1 if any
# check failed.

set -u

if [[ $# -ne 2 ]]; then
  echo "usage: $0 CTXKIT CASE" >&2
  exit 2
fi
case_name=$2
# shellcheck source=tests/program/harness.sh
source "$(dirname "$0")/harness.sh" "$1" records jq
db=$work/store

# run ARGS...: runs the program on the case's store (--db is appended for
# the commands that take it), stdin from /dev/null.
run() {
  run_stdin /dev/null "$@"
}

# run_stdin FILE ARGS...: as run, with standard input from FILE.
run_stdin() {
  local input=$1
  shift
  local -a args=("$@")
  if [[ ${args[0]} != optimize ]]; then args+=(--db "$db"); fi
  last_command="ctxkit ${args[*]}"
  env -i "${passthrough[@]}" HOME="$work/home" TMPDIR="$work/tmp" \
    "$ctxkit" "${args[@]}" <"$input" >"$work/out" 2>"$work/err"
  status=$?
}

# A successful command: exit 0, nothing on stderr, one line of valid JSON.
expect_ok() {
  [[ $status -eq 0 ]] || fail "exit status $status, expected 0"
  [[ ! -s $work/err ]] || fail "expected nothing on stderr"
  [[ $(wc -l <"$work/out") -eq 1 ]] || fail "expected one line on stdout"
  jq -e . "$work/out" >/dev/null 2>&1 || fail "stdout is not JSON"
}

# A failed command: exit 1, nothing on stdout, and the first stderr line
# starts with "ctxkit: CODE: " and contains TEXT (the field's name).
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

# A usage error: exit 2, nothing on stdout, LINE first on stderr.
expect_usage() {
  [[ $status -eq 2 ]] || fail "exit status $status, expected 2"
  [[ ! -s $work/out ]] || fail "expected nothing on stdout"
  [[ $(head -n 1 "$work/err") == "$1" ]] ||
    fail "first stderr line is not: $1"
}

# q FILTER: the jq FILTER of the last output, raw.
q() { jq -r "$1" "$work/out"; }

# expect_q FILTER VALUE: the filter's raw result is VALUE.
expect_q() {
  local got
  got=$(q "$1")
  [[ $got == "$2" ]] || fail "$1 is '$got', expected '$2'"
}

# expect_true FILTER: the filter gives true.
expect_true() {
  jq -e "$1" "$work/out" >/dev/null 2>&1 || fail "not true: $1"
}

# new_conversation TITLE: creates one; its id in $conv_id.
new_conversation() {
  run conv create --title "$1"
  expect_ok
  conv_id=$(q .conversation.id)
}

case_conversations() {
  run conv create --title "Code Review Session" --model gpt-4o \
    --metadata '{ "project": "ctxkit",
                  "tags": ["a", "b"] }'
  expect_ok
  local id
  id=$(q .conversation.id)
  [[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] ||
    fail "id '$id' is not a lower-case UUID v4"
  expect_q .conversation.title "Code Review Session"
  expect_q .conversation.model gpt-4o
  expect_q .conversation.message_count 0
  expect_q .conversation.total_tokens 0
  expect_q '.conversation.metadata.tags[1]' b

  # Inline, from a file and from standard input.
  run conv add "$id" --role user --content "Hello there, how are you?"
  expect_ok
  expect_q .message.role user
  expect_q .message.seq 1
  # The content was just given: the document does not echo it (as the C
  # ABI's and the MCP tool's do not).
  expect_true '.message | has("content") | not'
  expect_q .message.content_bytes 25
  expect_q .message.is_compressed false
  local t1
  t1=$(q .message.tokens)
  [[ $t1 -gt 0 ]] || fail "tokens $t1, expected > 0"
  expect_q .conversation.message_count 1
  expect_q .conversation.total_tokens "$t1"
  # gpt-4o counts exactly with o200k_base: "Hello there, how are you?" is 7.
  expect_q .message.tokens 7

  printf 'An answer\nwritten to a file.' >"$work/answer.txt"
  run conv add "$id" --role assistant --file "$work/answer.txt" --name bot
  expect_ok
  expect_q .message.name bot
  local t2
  t2=$(q .message.tokens)
  expect_q .conversation.output_tokens "$t2"

  # Megabytes in, a short line out: the size, not the content, comes back
  # (the conversation's preview keeps 100 characters of it).
  run conv create --title "Big" --model gpt-4o
  expect_ok
  local big
  big=$(q .conversation.id)
  yes 'all work and no play makes a dull log' | head -c 3145728 >"$work/big.txt"
  run conv add "$big" --role user --file "$work/big.txt"
  expect_ok
  expect_q .message.content_bytes 3145728
  [[ $(wc -c <"$work/out") -lt 4096 ]] ||
    fail "conv add printed $(wc -c <"$work/out") bytes for 3 MiB of content"
  run conv delete "$big"
  expect_ok

  printf 'from standard input' >"$work/stdin.txt"
  run_stdin "$work/stdin.txt" conv add "$id" --role system -
  expect_ok
  expect_q .message.role system
  local t3
  t3=$(q .message.tokens)
  expect_q .conversation.message_count 3
  expect_q .conversation.total_tokens $((t1 + t2 + t3))
  expect_q .conversation.input_tokens $((t1 + t3))

  # Tool calls and a tool answer.
  run conv add "$id" --role assistant \
    --tool-calls '[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]'
  expect_ok
  expect_q '.message.tool_calls[0].function.name' f
  expect_q .message.name null
  run conv add "$id" --role tool --tool-call-id c1 --content "42"
  expect_ok
  expect_q .message.tool_call_id c1

  run conv get "$id"
  expect_ok
  expect_q '.messages | length' 5
  expect_q '[.messages[].seq] | join(",")' 1,2,3,4,5
  expect_q '.messages[0].content' "Hello there, how are you?"
  expect_q '.messages[1].content' $'An answer\nwritten to a file.'
  expect_q '.messages[2].content' "from standard input"
  expect_q '.messages[3].content' ""
  expect_true '.actual_tokens > .conversation.total_tokens'
  expect_q .conversation.metadata.project ctxkit

  run conv get "$id" --no-messages
  expect_ok
  expect_true 'has("messages") | not'
  expect_true '.actual_tokens > 0'

  run conv update "$id" --title "Renamed"
  expect_ok
  expect_q .conversation.title Renamed
  expect_q .conversation.message_count 5

  # Pagination: three conversations, one per page, newest first.
  local second third
  new_conversation "Second"
  second=$conv_id
  new_conversation "Third"
  third=$conv_id
  run conv list
  expect_ok
  expect_q .total 3
  expect_q .showing 3
  expect_q .next_cursor null
  run conv list --limit 1
  expect_ok
  expect_q .showing 1
  expect_q .total 3
  local seen cursor
  seen=$(q '.conversations[0].id')
  cursor=$(q .next_cursor)
  [[ $cursor != null ]] || fail "first page has no next_cursor"
  local pages=1
  while [[ $cursor != null && $pages -lt 10 ]]; do
    run conv list --limit 1 --cursor "$cursor"
    expect_ok
    expect_q .showing 1
    seen="$seen $(q '.conversations[0].id')"
    cursor=$(q .next_cursor)
    pages=$((pages + 1))
  done
  [[ $pages -eq 3 ]] || fail "$pages pages of one, expected 3"
  [[ $seen == "$third $second $id" ]] ||
    fail "pages gave '$seen', expected '$third $second $id'"

  run conv stats "$id"
  expect_ok
  expect_q .statistics.message_count 5
  expect_q '.timeline | length' 5
  expect_q '.timeline[-1].cumulative_tokens' "$(q .statistics.total_tokens)"
  expect_q .token_limit.status safe
  expect_true '.tips | length > 0'
}

case_references() {
  new_conversation "With references"
  local conv=$conv_id
  run ref add --type code --title "Token Counter Implementation" \
    --content "function countTokens(text) { return encode(text).length; }" \
    --conversation "$conv" --metadata '{"lang":"js"}'
  expect_ok
  local counter
  counter=$(q .reference.id)
  expect_q .reference.type code
  expect_q .reference.conversation_id "$conv"
  expect_true '.reference.tokens > 0'
  printf 'Notes about caching prompts and the counter of hits.' \
    >"$work/note.txt"
  run ref add --type note --title "Cache notes" --file "$work/note.txt"
  expect_ok
  local note
  note=$(q .reference.id)
  expect_q .reference.conversation_id null
  printf 'A document about something else entirely.' >"$work/doc.txt"
  run_stdin "$work/doc.txt" ref add --type document --title "Unrelated" -
  expect_ok
  local doc
  doc=$(q .reference.id)

  run ref get "$counter"
  expect_ok
  expect_q .reference.content "function countTokens(text) { return encode(text).length; }"
  expect_q .reference.metadata.lang js

  run ref list
  expect_ok
  expect_q '.references | length' 3
  expect_q .total 3
  expect_q .statistics.total_references 3
  expect_q .statistics.by_type.code 1
  expect_q .statistics.by_type.note 1
  expect_q .statistics.by_type.document 1
  run ref list --conversation "$conv"
  expect_ok
  expect_q '.references | length' 1
  expect_q '.references[0].id' "$counter"

  # Ranking: the reference whose title holds the query comes first.
  run ref search "token counter"
  expect_ok
  expect_q '.results[0].id' "$counter"
  expect_q '.results[0].title' "Token Counter Implementation"
  expect_true '.results[0].relevance > 0 and .results[0].relevance <= 1'
  expect_true '[.results[].relevance] | . == (sort | reverse)'
  expect_q .total_matches 2  # "counter" is in the note too
  run ref search "counter" --limit 1
  expect_ok
  expect_q '.results | length' 1
  expect_q .total 1
  expect_q .total_matches 2
  run ref search "caching" --conversation "$conv"
  expect_ok
  expect_q '.results | length' 0
  run ref search "zzzunknownword"
  expect_ok
  expect_q '.results | length' 0

  run ref delete "$doc"
  expect_ok
  expect_q .deleted true
  run ref get "$doc"
  expect_error NOT_FOUND "$doc"
  run ref search "document"
  expect_ok
  expect_q '.results | length' 0
  run ref list
  expect_q .statistics.total_references 2
  : "$note"
}

case_cache() {
  run cache put --content "You are a helpful assistant." --prefix system
  expect_ok
  local key
  key=$(q .key)
  [[ $key =~ ^system:[0-9a-f]{32}$ ]] || fail "key '$key' is not system:<32 hex>"
  expect_q .already_cached false
  expect_q .expires_at null
  local tokens
  tokens=$(q .tokens)
  [[ $tokens -gt 0 ]] || fail "tokens $tokens"

  # The same content under the same prefix: the same entry.
  printf 'You are a helpful assistant.' >"$work/prompt.txt"
  run cache put --file "$work/prompt.txt" --prefix system
  expect_ok
  expect_q .key "$key"
  expect_q .already_cached true
  # Under another prefix: another key with the same hash.
  run_stdin "$work/prompt.txt" cache put --prefix other -
  expect_ok
  local other
  other=$(q .key)
  [[ $other == "other:${key#system:}" ]] || fail "key '$other'"

  run cache get "$key"
  expect_ok
  expect_q .content "You are a helpful assistant."
  expect_q .hit_count 1
  run cache get "$key"
  expect_ok
  expect_q .hit_count 2

  run cache check --content "You are a helpful assistant." --prefix system
  expect_ok
  expect_q .exists true
  expect_q .key "$key"
  expect_q .tokens_saved "$tokens"
  run cache check --content "Never stored"
  expect_ok
  expect_q .exists false
  expect_q .key null

  run cache stats
  expect_ok
  expect_q .overview.total_entries 2
  expect_q .overview.total_hits 3  # two gets and one check
  expect_q .overview.total_misses 1
  expect_q .by_prefix.system.entries 1
  expect_q .by_prefix.other.entries 1

  run cache clear --prefix other
  expect_ok
  expect_q .cleared 1
  expect_q .prefix other
  run cache get "$other"
  expect_error NOT_FOUND "$other"
  run cache get "$key"
  expect_ok
  run cache clear
  expect_ok
  expect_q .cleared 1
  run cache stats
  expect_q .overview.total_entries 0
  # Lifetime figures survive a clear.
  expect_q .lifetime.hits 4
}

case_cache_ttl() {
  # Long enough for the put and the first get to fit in it, even in a
  # sanitizer build on a loaded machine (2 s was not: each call took up to
  # a second at load 12). The wait below is until the stored expiry, not a
  # fixed sleep, so the longer TTL costs only what it must.
  run cache put --content "short-lived" --ttl 6000
  expect_ok
  local key expires_at
  key=$(q .key)
  expires_at=$(q .expires_at)
  expect_true '.expires_at - .created_at == 6000'
  run cache put --content "long-lived" --ttl 600000
  expect_ok
  local kept
  kept=$(q .key)
  run cache get "$key"
  expect_ok
  local now_ms
  now_ms=$(date +%s%3N)
  if ((expires_at + 200 > now_ms)); then
    sleep "$(awk -v ms=$((expires_at + 200 - now_ms)) 'BEGIN { print ms / 1000 }')"
  fi
  run cache get "$key"
  expect_error NOT_FOUND "$key"
  run cache check --content "short-lived"
  expect_ok
  expect_q .exists false
  run cache get "$kept"
  expect_ok
  run cache sweep
  expect_ok
  run cache stats
  expect_ok
  expect_q .overview.total_entries 1
  expect_q .lifetime.expirations 1
}

case_optimize() {
  local query="I was just wondering if you could maybe help me understand \
how to really optimize my prompts for better token usage in the parse_config \
function, basically."
  run optimize "$query" --model gpt-4o
  expect_ok
  expect_true '.optimized.tokens < .original.tokens'
  expect_true '.analysis.tokens_saved > 0'
  local optimized
  optimized=$(q .optimized.query)
  local word
  for word in understand optimize prompts better token usage parse_config \
              function; do
    [[ $optimized == *"$word"* ]] || fail "optimized query lost '$word'"
  done
  for word in wondering basically really; do
    [[ $optimized != *"$word"* ]] || fail "optimized query kept '$word'"
  done
  expect_true '[.original.issues[].type] | index("filler_words") != null'

  # From a file and from standard input: the same result.
  printf '%s' "$query" >"$work/query.txt"
  run optimize --file "$work/query.txt" --model gpt-4o
  expect_ok
  expect_q .optimized.query "$optimized"
  run_stdin "$work/query.txt" optimize - --model gpt-4o
  expect_ok
  expect_q .optimized.query "$optimized"

  run optimize "$query" --goal improve_clarity
  expect_ok
  expect_q .optimization_goal improve_clarity
  run optimize "$query" --max-tokens 5 --model gpt-4o
  expect_ok
  expect_q .optimized.truncated true
  expect_true '.optimized.tokens <= 5'
  run optimize "Explain BM25." --context "We index references."
  expect_ok
  expect_true '.context.tokens > 0'
}

# Every record command that counts with a --model refuses an unknown one
# before touching the store, naming the close matches, unless --estimate
# asks for an estimate.
case_unknown_model() {
  local hint="(--estimate: estimate its tokens instead)"
  local matches="unknown model; did you mean gpt-4o, gpt-4o-* or gpt-4-*? $hint"
  run conv create --title "T" --model gpt-4oo
  expect_usage "ctxkit: invalid value 'gpt-4oo' for flag '--model' of 'conv create': $matches"
  run cache put --content "some text" --model gpt-4oo
  expect_usage "ctxkit: invalid value 'gpt-4oo' for flag '--model' of 'cache put': $matches"
  run optimize "Please summarize this." --model gpt-4oo
  expect_usage "ctxkit: invalid value 'gpt-4oo' for flag '--model' of 'optimize': $matches"
  [[ ! -e $db ]] || fail "a refused command created the store"

  run conv create --title "T" --model gpt-4oo --estimate
  expect_ok
  expect_q .conversation.model gpt-4oo
  local id
  id=$(q .conversation.id)
  run conv add "$id" --role user --content "hello world"
  expect_ok
  expect_true '.message.tokens > 0'
  run cache put --content "some text" --model gpt-4oo --estimate
  expect_ok
  expect_true '.tokens > 0'
  run optimize "Please summarize this." --model gpt-4oo --estimate
  expect_ok
  expect_q .tokens_exact false
  run optimize "Please summarize this." --model gpt-4o --estimate
  expect_ok
  expect_q .tokens_exact true
}

case_stats() {
  # stats reads only: it refuses a missing store instead of creating one.
  run stats
  [[ $status -eq 1 && $(head -n 1 "$work/err") == "ctxkit: NOT_FOUND: "* ]] ||
    fail "stats did not refuse a missing store"
  run store init --json
  expect_ok
  run stats
  expect_ok
  expect_q .overview.total_conversations 0
  expect_q .overview.total_tokens 0

  new_conversation "One"
  local one=$conv_id
  run conv add "$one" --role user --content "What is the capital of France?"
  local u1
  u1=$(q .message.tokens)
  run conv add "$one" --role assistant --content "Paris."
  local a1
  a1=$(q .message.tokens)
  run conv create --title "Two" --model gpt-4o
  local two
  two=$(q .conversation.id)
  run conv add "$two" --role user --content "Hello there, how are you?"
  local u2
  u2=$(q .message.tokens)
  run ref add --type note --title "n" --content "some note text"
  local ref_tokens
  ref_tokens=$(q .reference.tokens)
  run cache put --content "cached prompt text" --model gpt-4o
  local key
  key=$(q .key)
  local cache_tokens
  cache_tokens=$(q .tokens)
  run cache get "$key"
  run cache get "$key"

  run stats
  expect_ok
  expect_q .overview.total_conversations 2
  expect_q .overview.total_messages 3
  expect_q .overview.total_input_tokens $((u1 + u2))
  expect_q .overview.total_output_tokens "$a1"
  expect_q .overview.total_tokens $((u1 + a1 + u2))
  expect_q .overview.total_cached_tokens $((2 * cache_tokens))
  expect_q '.by_model["claude-3-5-sonnet"].conversations' 1
  expect_q '.by_model["claude-3-5-sonnet"].input_tokens' "$u1"
  expect_q '.by_model["gpt-4o"].input_tokens' "$u2"
  expect_q '.by_model["gpt-4o"].cached_tokens' $((2 * cache_tokens))
  expect_q .cache_efficiency.cache_hit_rate 100
  expect_q .cache.overview.total_entries 1
  expect_q .references.total_references 1
  expect_q .references.total_tokens "$ref_tokens"
  expect_q '[.days[].messages] | add' 3
  expect_true '.tips | length >= 2'

  run conv stats
  expect_ok
  expect_q .overview.total_messages 3
  expect_true 'has("cache") | not'
}

case_cascade() {
  new_conversation "Doomed"
  local doomed=$conv_id
  new_conversation "Kept"
  local kept=$conv_id
  run conv add "$doomed" --role user --content "first"
  run conv add "$doomed" --role assistant --content "second"
  run conv add "$kept" --role user --content "stays"
  local kept_tokens
  kept_tokens=$(q .message.tokens)
  run ref add --type note --title "doomed note" --content "cascade me" \
    --conversation "$doomed"
  expect_ok
  local doomed_ref
  doomed_ref=$(q .reference.id)
  run ref add --type note --title "kept note" --content "keep me" \
    --conversation "$kept"
  expect_ok
  run cache put --content "doomed cache" --conversation "$doomed"
  expect_ok
  local doomed_key
  doomed_key=$(q .key)

  run conv delete "$doomed"
  expect_ok
  expect_q .deleted true
  expect_q .messages_deleted 2
  expect_q .dependent_records_deleted 2  # one reference, one cache entry

  run conv get "$doomed"
  expect_error NOT_FOUND "$doomed"
  run ref get "$doomed_ref"
  expect_error NOT_FOUND "$doomed_ref"
  run ref list
  expect_ok
  expect_q '.references | length' 1
  expect_q '.references[0].title' "kept note"
  run ref search "cascade"
  expect_ok
  expect_q '.results | length' 0
  run cache get "$doomed_key"
  expect_error NOT_FOUND "$doomed_key"
  run stats
  expect_ok
  expect_q .overview.total_conversations 1
  expect_q .overview.total_messages 1
  expect_q .overview.total_tokens "$kept_tokens"
  expect_q .references.total_references 1
  expect_q .cache.overview.total_entries 0
  run conv delete "$doomed"
  expect_error NOT_FOUND "$doomed"
}

case_bad_input() {
  new_conversation "Target"
  local id=$conv_id
  local missing=6f1d2b8e-1111-4222-8333-444455556666

  run conv create
  expect_usage "ctxkit: missing flag '--title' for 'conv create'"
  run conv create --title "t" --metadata '[1,2]'
  expect_error INVALID_ARGUMENT metadata
  run conv create --title "t" --metadata '{bad'
  expect_error INVALID_ARGUMENT metadata
  run conv create --title "$(printf 'bad \xff utf8')"
  expect_error INVALID_ARGUMENT title
  run conv create --title "$(head -c 2000 /dev/zero | tr '\0' x)"
  expect_error INVALID_ARGUMENT title
  run conv add "$id" --role robot --content x
  expect_error INVALID_ARGUMENT role
  run conv add "$id" --content x
  expect_error INVALID_ARGUMENT role
  run conv add "$id" --role user
  expect_error INVALID_ARGUMENT content
  printf 'x' >"$work/x.txt"
  run conv add "$id" --role user --file "$work/x.txt" -
  expect_error INVALID_ARGUMENT content
  run conv add "$id" --role user --file "$work/no-such-file"
  expect_error NOT_FOUND no-such-file
  run conv add "$id" --role user --content x --tool-calls '[1]'
  expect_error INVALID_ARGUMENT tool_calls
  run conv add "$id" --role user --content x --tool-call-id c1
  expect_error INVALID_ARGUMENT tool_call_id
  run conv add not-a-uuid --role user --content x
  expect_error INVALID_ARGUMENT conversation_id
  run conv add "$missing" --role user --content x
  expect_error NOT_FOUND "$missing"
  run conv get "$missing"
  expect_error NOT_FOUND "$missing"
  run conv list --limit 0
  expect_error INVALID_ARGUMENT limit
  run conv list --limit 1001
  expect_error INVALID_ARGUMENT limit
  run conv list --limit 99999999999
  expect_error INVALID_ARGUMENT limit
  # A negative number reaches the library's range check, whose message
  # names the field and the range; a missing one is still a usage error.
  run conv list --limit -1
  expect_error INVALID_ARGUMENT "limit is -1; it must be between 1 and 1000"
  run conv list --limit
  expect_usage "ctxkit: missing value for flag '--limit' of 'conv list'"
  run conv list --cursor garbage
  expect_error INVALID_ARGUMENT cursor
  run conv update "$id"
  expect_error INVALID_ARGUMENT title
  run conv stats "$missing"
  expect_error NOT_FOUND "$missing"

  run ref add --type image --title t --content c
  expect_error INVALID_ARGUMENT type
  run ref add --type note --content c
  expect_usage "ctxkit: missing flag '--title' for 'ref add'"
  run ref add --type note --title t
  expect_error INVALID_ARGUMENT content
  run ref add --type note --title t --content c --conversation "$missing"
  expect_error NOT_FOUND "$missing"
  run ref add --type note --title t --content c --metadata '"str"'
  expect_error INVALID_ARGUMENT metadata
  run ref search "   "
  expect_error INVALID_ARGUMENT query
  run ref search token --limit 0
  expect_error INVALID_ARGUMENT limit
  run ref search token --limit 101
  expect_error INVALID_ARGUMENT limit
  run ref search token --limit -3
  expect_error INVALID_ARGUMENT "limit is -3; it must be between 1 and 100"
  run ref get bogus
  expect_error INVALID_ARGUMENT id
  run ref delete "$missing"
  expect_error NOT_FOUND "$missing"

  run cache put --content x --prefix "no spaces"
  expect_error INVALID_ARGUMENT prefix
  run cache put --content x --ttl 999999999999999999
  expect_error INVALID_ARGUMENT ttl_ms
  run cache put --content x --ttl 9999999999999999999  # > INT64_MAX
  expect_error INVALID_ARGUMENT ttl_ms
  run cache put --content x --conversation "$missing"
  expect_error NOT_FOUND "$missing"
  run cache put
  expect_error INVALID_ARGUMENT content
  run cache get nokey
  expect_error INVALID_ARGUMENT key
  run cache get "default:00000000000000000000000000000000"
  expect_error NOT_FOUND "default:00000000000000000000000000000000"
  run cache clear --prefix "a/b"
  expect_error INVALID_ARGUMENT prefix
  run cache stats --top 1001
  expect_error INVALID_ARGUMENT top_n
  run cache stats --top -1
  expect_error INVALID_ARGUMENT "top_n is -1; it must be between 0 and 1000"
  run cache put --content x --ttl -5
  expect_error INVALID_ARGUMENT "ttl_ms is -5"

  run optimize
  expect_error INVALID_ARGUMENT query
  run optimize ""
  expect_error INVALID_ARGUMENT query
  run optimize "help" --goal faster
  expect_error INVALID_ARGUMENT optimization_goal
  run optimize "help" --max-tokens 0
  expect_error INVALID_ARGUMENT max_tokens
  run optimize "help" --max-tokens -2
  expect_error INVALID_ARGUMENT "max_tokens is -2"
  run optimize "help" --context "$(printf 'bad \xfe')"
  expect_error INVALID_ARGUMENT context
  run optimize "help" --file "$work/x.txt"
  expect_error INVALID_ARGUMENT query

  # Usage errors (exit 2) come from the parser.
  run cache put --content x --ttl -5x
  [[ $status -eq 2 ]] || fail "exit status $status, expected 2"
  run conv get
  [[ $status -eq 2 ]] || fail "exit status $status, expected 2"
  run cache put --content x --ttl 99999999999999999999  # 20 digits
  [[ $status -eq 2 ]] || fail "exit status $status, expected 2"
  run optimize "help" --context ""
  [[ $status -eq 2 ]] || fail "exit status $status, expected 2"

  # Nothing was half-written by any of the failures above.
  run stats
  expect_ok
  expect_q .overview.total_conversations 1
  expect_q .overview.total_messages 0
  expect_q .references.total_references 0
  expect_q .cache.overview.total_entries 0
}

# `ctx`: seed 003's context graph from the command line, ids byte-exact.
case_contexts() {
  run ctx add 'auth/login' --role user --content 'Move the login flow to OAuth with PKCE' --importance HIGH --tags auth,login
  expect_ok
  expect_q .contextId auth/login
  expect_q .importanceLevel high
  expect_q '.tags | join(",")' auth,login
  run ctx add 'auth:login' --role assistant --content 'Sessions are stored in Redis'
  expect_ok
  expect_q .created true
  run ctx relate 'auth/login' 'auth:login' --type references --weight 0.7
  expect_ok
  expect_q .weight 0.7
  run ctx relate 'auth/login' 'auth:login' --type references --weight 1.5
  expect_error INVALID_ARGUMENT "weight"
  run ctx relate 'auth/login' nowhere --type continues
  expect_error NOT_FOUND "nowhere"
  run ctx related 'auth/login'
  expect_ok
  expect_q '.contextIds | join(",")' 'auth:login'
  run ctx related 'auth:login' --direction outgoing
  expect_ok
  expect_q '.contextIds | length' 0
  run ctx similar 'oauth login flow' --limit 1
  expect_ok
  expect_q '.contexts[0].contextId' auth/login
  run ctx path 'auth:login' 'auth/login'
  expect_ok
  expect_q '.path | join(" ")' 'auth:login auth/login'
  run ctx path 'auth:login' 'auth/login' --direction outgoing
  expect_ok
  expect_q .found false
  # The filters: the edge's metadata is {}, auth/login carries tag auth.
  run ctx related 'auth/login' --metadata '{"auto":true}'
  expect_ok
  expect_q .total 0
  run ctx related 'auth/login' --metadata '{"auto":null}'
  expect_q '.contextIds | join(",")' 'auth:login'
  run ctx related 'auth:login' --tags auth
  expect_q '.contextIds | join(",")' 'auth/login'
  run ctx related 'auth/login' --tags auth
  expect_q .total 0
  run ctx related 'auth/login' --metadata '[1]'
  expect_error INVALID_ARGUMENT "metadata"
  run ctx path 'auth:login' 'auth/login' --metadata '{"auto":true}'
  expect_q .found false
  # The configuration `ctxkit mcp` reads applies to ctx too: --config and
  # the environment (seed 003's names).
  run ctx add 'scratch-1' --role user --content x --config '{"ignorePatterns":["scratch-*"]}'
  expect_error INVALID_ARGUMENT "ignore pattern scratch-*"
  passthrough+=('IGNORE_PATTERNS=["scratch-*"]')
  run ctx add 'scratch-2' --role user --content x
  expect_error INVALID_ARGUMENT "ignore pattern scratch-*"
  unset 'passthrough[${#passthrough[@]}-1]'
  run ctx add 'scratch-3' --role user --content x --config '{"ignorePatterns":'
  expect_error INVALID_ARGUMENT "--config"
  run ctx get 'scratch-3'
  expect_error NOT_FOUND "scratch-3"
  run ctx summarize 'auth/login'
  expect_ok
  expect_q .version 1
  run ctx get 'auth/login'
  expect_ok
  expect_q .hasSummary true
  expect_q '.messages | length' 1
  run ctx viz 'auth/login' --format mermaid
  [[ $status -eq 0 && $(head -n 1 "$work/out") == "graph LR" ]] ||
    fail "viz --format mermaid: status $status, first line $(head -n 1 "$work/out")"
  run ctx unrelate 'auth/login' 'auth:login' --type references --invalidate
  expect_ok
  [[ $(q .expiredAt) != null ]] || fail "the invalidated edge has no expiredAt"
  run ctx related 'auth/login'
  expect_q '.contextIds | length' 0
  run ctx related 'auth/login' --include-expired
  expect_q '.contextIds | length' 1
  run ctx list
  expect_ok
  expect_q '.contexts | length' 2
  run ctx delete 'auth:login'
  expect_ok
  run ctx get 'auth:login'
  expect_error NOT_FOUND "auth:login"
  run ctx verify
  expect_ok
  expect_q .ok true
  expect_q .contexts 1
}

case "$case_name" in
  conversations | references | cache | cache_ttl | optimize | stats | \
  cascade | bad_input | unknown_model | contexts)
    "case_$case_name"
    ;;
  *)
    echo "unknown case: $case_name" >&2
    exit 2
    ;;
esac

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed in case $case_name" >&2
  exit 1
fi
echo "ok: $case_name"
