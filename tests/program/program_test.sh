#!/usr/bin/env bash
# Tests of the ctxkit program.
#
# Usage: program_test.sh CTXKIT VERSION FORMAT_VERSION CASE
#   CTXKIT          the program to test
#   VERSION         the version it must report (from version.h, via CMake)
#   FORMAT_VERSION  the on-disk format it must report (Store::kFormatVersion)
#   CASE            version | output_formats | help | usage_errors | store_info_errors | demo |
#                   demo_cleanup | default_location | count | tokenize |
#                   tokenize_jsonl | count_stream | count_messages |
#                   tokenizer_usage_errors
#
# Every case works in its own temporary directory, removed on exit, and runs
# the program in a clean environment (env -i) whose HOME and TMPDIR point
# inside it, so cases can run in parallel, as root, and never touch the real
# home directory. Every check reports what it saw when it fails; the script
# exits 1 if any check failed.

set -u

if [[ $# -ne 4 ]]; then
  echo "usage: $0 CTXKIT VERSION FORMAT_VERSION CASE" >&2
  exit 2
fi
version=$2
format_version=$3
case_name=$4
# shellcheck source=tests/program/harness.sh
source "$(dirname "$0")/harness.sh" "$1" program
# Modes of created directories are checked below; fix the umask they pass.
umask 022

# run_env [VAR=value...] -- ARGS...: runs the program with only the given
# variables (plus the pass-through ones), capturing its output in $work/out
# and $work/err and its exit status in $status.
run_env() {
  local -a vars=()
  while [[ $# -gt 0 && $1 != -- ]]; do vars+=("$1"); shift; done
  shift
  last_command="env -i ${vars[*]} ctxkit $*"
  env -i "${passthrough[@]}" "${vars[@]}" "$ctxkit" "$@" \
    >"$work/out" 2>"$work/err"
  status=$?
}

# run ARGS...: runs the program with HOME and TMPDIR inside $work.
run() {
  run_env HOME="$work/home" TMPDIR="$work/tmp" -- "$@"
}

expect_status() {
  [[ $status -eq $1 ]] || fail "exit status $status, expected $1"
}
expect_out_empty() {
  [[ ! -s $work/out ]] || fail "expected nothing on stdout"
}
expect_err_empty() {
  [[ ! -s $work/err ]] || fail "expected nothing on stderr"
}
expect_out_contains() {
  grep -qF -- "$1" "$work/out" || fail "stdout lacks: $1"
}
expect_err_contains() {
  grep -qF -- "$1" "$work/err" || fail "stderr lacks: $1"
}
expect_out_line() {  # an extended regular expression matching a whole line
  grep -qE -- "^($1)\$" "$work/out" || fail "no stdout line matches: $1"
}
expect_out_first_line() {
  [[ $(head -n 1 "$work/out") == "$1" ]] ||
    fail "first stdout line is not: $1"
}
expect_err_first_line() {
  [[ $(head -n 1 "$work/err") == "$1" ]] ||
    fail "first stderr line is not: $1"
}
expect_err_first_line_prefix() {
  [[ $(head -n 1 "$work/err") == "$1"* ]] ||
    fail "first stderr line does not start with: $1"
}
# A usage error: exit 2, the message first on stderr, usage after it,
# nothing on stdout.
expect_usage_error() {
  expect_status 2
  expect_out_empty
  expect_err_first_line "$1"
  expect_err_contains "Usage: ctxkit"
}
expect_missing() {
  [[ ! -e $1 && ! -L $1 ]] || fail "$1 exists but must not"
}
expect_directory() {
  [[ -d $1 ]] || fail "$1 is not a directory"
}
expect_empty_directory() {
  if [[ ! -d $1 ]]; then
    fail "$1 is not a directory"
  elif [[ -n $(find "$1" -mindepth 1 -maxdepth 1 -print -quit) ]]; then
    fail "$1 is not empty: $(find "$1" -mindepth 1 -maxdepth 1 -printf '%f ')"
  fi
}
expect_mode() {
  local mode
  mode=$(stat -c %a "$1" 2>/dev/null)
  [[ $mode == "$2" ]] || fail "$1 has mode '$mode', expected $2"
}
# `store info --json` of the current output names `path`.
expect_json_path() {
  expect_out_contains "\"path\":\"$1\""
}

mkdir -p "$work/home" "$work/tmp"
touch "$work/out" "$work/err"

case_version() {
  run --version
  expect_status 0
  expect_err_empty
  [[ $(cat "$work/out") == "ctxkit $version (on-disk format $format_version)" ]] ||
    fail "--version output is not: ctxkit $version (on-disk format $format_version)"
  [[ $(wc -l <"$work/out") -eq 1 ]] || fail "--version printed more than one line"

  run --version extra
  expect_usage_error "ctxkit: unexpected argument 'extra' after '--version'"

  run -V
  expect_status 0
  [[ $(cat "$work/out") == "ctxkit $version (on-disk format $format_version)" ]] ||
    fail "-V output differs from --version's"
}

case_output_formats() {
  # --pretty: the same document, indented; equal to the compact one as JSON.
  run count --text 'hello world' --json
  expect_status 0
  cp "$work/out" "$work/compact.json"
  [[ $(wc -l <"$work/compact.json") -eq 1 ]] || fail "--json is not one line"
  run count --text 'hello world' --json --pretty
  expect_status 0
  expect_out_first_line "{"
  expect_out_line '  "tokens": 2,'
  [[ $(jq -cS . "$work/out") == $(jq -cS . "$work/compact.json") ]] ||
    fail "--pretty changed the document"
  run store info --db "$work/none" --pretty=yes
  expect_usage_error "ctxkit: flag '--pretty' of 'store info' takes no value"

  # Shell completion from the command table: every command word, each
  # command's flags, a flag's choices, valid bash.
  run completion bash
  expect_status 0
  bash -n "$work/out" || fail "the completion script is not valid bash"
  local reply
  reply=$(bash -c 'source "$1"; COMP_WORDS=(ctxkit conv cr); COMP_CWORD=2
                   _ctxkit_complete; echo "${COMPREPLY[*]}"' _ "$work/out")
  [[ $reply == create ]] || fail "completing 'conv cr' gave '$reply'"
  reply=$(bash -c 'source "$1"; COMP_WORDS=(ctxkit compact --strategy "")
                   COMP_CWORD=3; _ctxkit_complete; echo "${COMPREPLY[*]}"' _ "$work/out")
  [[ $reply == *summarize* ]] || fail "completing --strategy gave '$reply'"
  reply=$(bash -c 'source "$1"; COMP_WORDS=(ctxkit count --m); COMP_CWORD=2
                   _ctxkit_complete; echo "${COMPREPLY[*]}"' _ "$work/out")
  [[ $reply == *--model* && $reply == *--messages* ]] ||
    fail "completing 'count --m' gave '$reply'"
  run completion fish
  expect_status 1
  expect_err_first_line_prefix "ctxkit: INVALID_ARGUMENT: no completion for shell 'fish'"

  # The man page: every command of --help has its section.
  run man
  expect_status 0
  expect_out_contains ".TH CTXKIT 1"
  cp "$work/out" "$work/ctxkit.1"
  run --help
  local name
  while read -r name; do
    grep -qF ".SS \"ctxkit $name\"" "$work/ctxkit.1" ||
      fail "the man page has no section for '$name'"
  done < <(sed -n 's/^  \([a-z][a-z ]*[a-z]\)   .*/\1/p' "$work/out")
  if command -v man >/dev/null; then
    man -l "$work/ctxkit.1" >/dev/null 2>"$work/man.err" || fail "man -l failed"
  fi
}

case_help() {
  local program_help
  for flag in --help -h help; do
    run "$flag"
    expect_status 0
    expect_err_empty
    expect_out_first_line "Usage: ctxkit <command> [flags] [arguments]"
    expect_out_line "  store info +show the figures and sub-databases of a store"
    expect_out_line "  demo +store, count, compact, and serve an MCP session"
    expect_out_contains "\$CTXKIT_DB"
    expect_out_contains "\$XDG_DATA_HOME/ctxkit"
    expect_out_contains "\$HOME/.local/share/ctxkit"
    if [[ -z ${program_help+set} ]]; then
      program_help=$(cat "$work/out")
    elif [[ $(cat "$work/out") != "$program_help" ]]; then
      fail "'ctxkit $flag' differs from 'ctxkit --help'"
    fi
  done

  # No arguments: the same usage, but on stderr, and exit 2.
  run
  expect_status 2
  expect_out_empty
  [[ $(cat "$work/err") == "$program_help" ]] ||
    fail "without arguments stderr is not the --help text"

  run store info --help
  expect_status 0
  expect_err_empty
  expect_out_first_line "Usage: ctxkit store info [--db PATH] [--json]"
  expect_out_contains "Store location"
  expect_out_line "  --json +print one JSON document \(one line\) instead of text"
  local info_help
  info_help=$(cat "$work/out")

  # `help store info`, and --help after other flags (even wrong ones).
  for args in "help store info" "store info --db x --help" \
              "store info --jsn -h"; do
    # shellcheck disable=SC2086  # split on purpose
    run $args
    expect_status 0
    [[ $(cat "$work/out") == "$info_help" ]] ||
      fail "'ctxkit $args' is not the help of 'store info'"
  done

  run demo --help
  expect_status 0
  expect_out_first_line "Usage: ctxkit demo [--db PATH]"
  expect_out_contains "removed when the demo ends"

  run store --help
  expect_status 0
  expect_out_first_line "Usage: ctxkit store <subcommand> [flags] [arguments]"
  expect_out_line "  store info +.*"
  expect_out_line "  store init +.*"
  if grep -q "^  demo" "$work/out"; then fail "'store --help' lists demo"; fi
}

case_usage_errors() {
  # An unknown command or flag: the message and where to look, not the
  # whole command list; a close match is suggested.
  run frobnicate
  expect_usage_error "ctxkit: unknown command 'frobnicate'"
  expect_err_contains "Run 'ctxkit --help' for the commands."
  [[ $(wc -l <"$work/err") -le 3 ]] || fail "an unknown command printed $(wc -l <"$work/err") lines"
  run cuont
  expect_usage_error "ctxkit: unknown command 'cuont'; did you mean 'count'?"
  run conv lsit
  expect_usage_error "ctxkit: unknown command 'conv lsit'; did you mean 'list'?"
  run --verison
  expect_usage_error "ctxkit: unknown flag '--verison'; did you mean '--version'?"
  run compact --max-token 5 -
  expect_usage_error "ctxkit: unknown flag '--max-token' for 'compact'; did you mean '--max-tokens'?"
  run store info --pre
  expect_usage_error "ctxkit: unknown flag '--pre' for 'store info'; did you mean '--pretty'?"

  # A required flag that is missing is a usage error like the others.
  run conv create --db "$work/db"
  expect_usage_error "ctxkit: missing flag '--title' for 'conv create'"
  expect_err_contains "Usage: ctxkit conv create --title TEXT [--model MODEL]"
  expect_missing "$work/db"
  run ref add --title t --content c --db "$work/db"
  expect_usage_error "ctxkit: missing flag '--type' for 'ref add'"
  expect_missing "$work/db"

  run --frobnicate
  expect_usage_error "ctxkit: unknown flag '--frobnicate'"

  run store info --jsn
  expect_usage_error "ctxkit: unknown flag '--jsn' for 'store info'; did you mean '--json'?"

  run demo --json
  expect_usage_error "ctxkit: unknown flag '--json' for 'demo'"

  run store info --db
  expect_usage_error "ctxkit: missing value for flag '--db' of 'store info'"

  run store info --db --json
  expect_usage_error "ctxkit: missing value for flag '--db' of 'store info'"

  run store info --db=
  expect_usage_error "ctxkit: empty value for flag '--db' of 'store info'"

  run store info --json=yes
  expect_usage_error "ctxkit: flag '--json' of 'store info' takes no value"

  run store info --db a --db=b
  expect_usage_error "ctxkit: flag '--db' given twice for 'store info'"

  run store info extra
  expect_usage_error "ctxkit: unexpected argument 'extra' for 'store info'"

  run store info -- --json
  expect_usage_error "ctxkit: unexpected argument '--json' for 'store info'"

  run store
  expect_usage_error "ctxkit: 'store' needs a subcommand"
  expect_err_contains "  store info"

  run store frob
  expect_usage_error "ctxkit: unknown command 'store frob'"

  run store --db x info
  expect_usage_error "ctxkit: expected a subcommand of 'store', got '--db'"

  run help frob
  expect_usage_error "ctxkit: unknown command 'frob'"

  # Control characters in arguments are escaped, not echoed raw.
  run $'fro\x1b[2Jb'
  expect_usage_error "ctxkit: unknown command 'fro\\x1B[2Jb'"
}

case_store_info_errors() {
  # A missing store: NOT_FOUND, and nothing is created.
  run store info --db "$work/missing"
  expect_status 1
  expect_out_empty
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_missing "$work/missing"

  run store info --db "$work/missing" --json
  expect_status 1
  expect_out_empty
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_missing "$work/missing"

  # An empty directory holds no store either, and stays empty.
  mkdir "$work/empty"
  run store info --db "$work/empty"
  expect_status 1
  expect_out_empty
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_empty_directory "$work/empty"

  # A regular file is not a store directory.
  echo "not a store" >"$work/file"
  run store info --db "$work/file"
  expect_status 1
  expect_out_empty
  expect_err_first_line_prefix "ctxkit: FAILED_PRECONDITION: "
  [[ $(cat "$work/file") == "not a store" ]] || fail "$work/file was changed"

  # Commands that write never create the parents of an explicit --db.
  run store init --db "$work/no/parent/db"
  expect_status 1
  expect_out_empty
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_missing "$work/no"

  run demo --db "$work/no/parent/db"
  expect_status 1
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_missing "$work/no"

  # A store of the previous format (its recorded version patched back; it
  # holds no records, so there is nothing else to make old): the commands
  # that only read refuse it and name the command that upgrades it.
  run store init --db "$work/old"
  expect_status 0
  OLD=$((format_version - 1)) NEW=$format_version perl -0777 -pi -e \
    's/format_version\Q@{[chr $ENV{NEW}]}\E\x00\x00\x00/format_version@{[chr $ENV{OLD}]}\x00\x00\x00/g' \
    "$work/old/data.mdb"
  run store info --db "$work/old"
  expect_status 1
  expect_err_first_line_prefix "ctxkit: FAILED_PRECONDITION: "
  expect_err_contains "format version $((format_version - 1)), older than"
  expect_err_contains "'ctxkit store init' does"
  run store init --db "$work/old"
  expect_status 0
  run store info --db "$work/old" --json
  expect_status 0
  expect_out_contains "\"format_version\":$format_version"
}

case_demo() {
  local db=$work/db
  run demo --db "$db"
  expect_status 0
  expect_err_empty
  expect_out_first_line "demo store: $db"
  expect_out_contains "wrote 1000 records note:0001 .. note:1000"
  expect_out_line "  Count +1000 records"
  expect_out_line "  Get\(\"note:0042\"\) +\"note 42: .*\""
  expect_out_line "  Seek\(\"note:050\"\) +10 records with that prefix.*"
  # The first count's figure includes loading the vocabulary, shown apart
  # (loading is milliseconds; counting 1000 notes is far less).
  expect_out_line "    o200k_base +[1-9][0-9]* tokens: vocabulary loaded in [0-9.]+ [mu]?s \(once per process\), counted in [0-9.]+ [mu]?s"
  expect_out_line "    cl100k_base +[1-9][0-9]* tokens: vocabulary loaded in .*"
  expect_out_contains "next steps:"
  expect_out_line "    note:0500 +\"note 500: .*\""
  expect_out_line "demo +1000 +[0-9]+ +[0-9]+"
  # The compaction: 25 % of the session's exact o200k_base count, met, and
  # a valid history.
  expect_out_contains "compacted a built-in coding-agent session for gpt-4o (o200k_base)"
  expect_out_line "  messages +[0-9]+ -> [0-9]+ \([1-9][0-9]* summaries\)"
  expect_out_line "  tokens +[0-9]+ -> [0-9]+ \(target [0-9]+, met\)"
  expect_out_line "  structure +valid \(tool calls with their results\)"
  expect_out_line '  first summary +\{"role":"assistant","content":"\[Compressed context: .*'
  local original compacted target
  read -r original compacted target < <(sed -nE \
    's/^  tokens +([0-9]+) -> ([0-9]+) \(target ([0-9]+), met\)$/\1 \2 \3/p' \
    "$work/out")
  [[ -n $target && $compacted -le $target && $target -eq $((original / 4)) ]] ||
    fail "demo compacted $original tokens to $compacted for a target of $target"
  # The MCP session: a real `ctxkit mcp` child on the same store, every step
  # answered with the figures the server computed.
  expect_out_line "  -> initialize +<- ctxkit [0-9.]+, MCP 2025-11-25"
  expect_out_line "  -> tools/list +<- 17 tools: manage_conversation, .*compact_chat, ping, .*context_memory"
  expect_out_line "  -> manage_conversation create +<- conversation [0-9a-f-]{36}"
  expect_out_line "  -> manage_conversation add_message x12 +<- 12 messages, [1-9][0-9]* tokens \(gpt-4o, exact\)"
  expect_out_line "  -> count_tokens \(12 messages, gpt-4o\) +<- [1-9][0-9]* tokens with chat overhead, safe \(limit 128000\)"
  expect_out_line "  -> compress_context \(smart, 0.5\) +<- 12 -> [0-9]+ messages, [0-9]+ -> [0-9]+ tokens"
  expect_out_line "  -> prompts/get summarize_context +<- a [1-9][0-9]*-byte prompt holding the history"
  expect_out_line "  [0-9]+ round trips, median .*; the server exited cleanly at end of input"
  local before after
  read -r before after < <(sed -nE \
    's/^  -> compress_context .*<- 12 -> [0-9]+ messages, ([0-9]+) -> ([0-9]+) tokens$/\1 \2/p' \
    "$work/out")
  [[ -n $after && $after -le $((before / 2)) ]] ||
    fail "the MCP session compressed $before tokens to $after, not to half"
  # What the child wrote is in the demo's store: one LMDB environment.
  expect_out_line "conversations +1 +[0-9]+ +[0-9]+"
  expect_out_line "conversations.messages +12 +[0-9]+ +[0-9]+"
  local lines
  lines=$(wc -l <"$work/out")
  [[ $lines -le 90 ]] || fail "demo printed $lines lines, more than 90"
  expect_directory "$db"

  run store info --db "$db"
  expect_status 0
  expect_err_empty
  expect_out_line "path +$db"
  expect_out_line "format version +$format_version"
  expect_out_line "map size +[0-9]+ bytes \([0-9.]+ [KMGT]?i?B\)"
  expect_out_line "page size +[0-9]+ bytes"
  expect_out_line "used pages +[0-9]+ \([0-9]+ bytes, .*\)"
  expect_out_line "readers +[0-9]+ in use of [0-9]+"
  expect_out_line "database +entries +pages +depth"
  expect_out_line "demo +1000 +[1-9][0-9]* +[1-9][0-9]*"

  for args in "--db $db --json" "--json --db=$db"; do
    # shellcheck disable=SC2086  # split on purpose; $work has no spaces
    run store info $args
    expect_status 0
    expect_err_empty
    [[ $(wc -l <"$work/out") -eq 1 ]] || fail "--json printed not exactly one line"
    [[ $(tail -c 1 "$work/out" | od -An -c | tr -d ' ') == '\n' ]] ||
      fail "--json output does not end with a newline"
    expect_out_contains '"schema_version":1'
    expect_out_contains '"name":"demo"'
    expect_out_contains '"entries":1000'
    expect_out_contains "\"format_version\":$format_version"
    expect_out_contains '"read_only":true'
    expect_json_path "$db"
    # The entries belong to "demo", not to some other database.
    grep -qE '"name":"demo","entries":1000[,}]' "$work/out" ||
      fail "JSON has no {\"name\":\"demo\",\"entries\":1000...}"
  done

  # A second run rewrites the same records: still 1000.
  run demo --db "$db"
  expect_status 0
  run store info --db "$db" --json
  expect_status 0
  grep -qE '"name":"demo","entries":1000[,}]' "$work/out" ||
    fail "after a second demo, \"demo\" does not hold 1000 entries"

  # store init on the existing store shows the same figures.
  run store init --db "$db"
  expect_status 0
  expect_out_line "demo +1000 +[0-9]+ +[0-9]+"
}

case_demo_cleanup() {
  # Without --db the demo works in $TMPDIR and leaves nothing behind, not in
  # TMPDIR, not in HOME, not at $CTXKIT_DB.
  local tmp=$work/tmpdir home=$work/cleanhome
  mkdir "$tmp" "$home"
  run_env HOME="$home" TMPDIR="$tmp" CTXKIT_DB="$work/envdb" -- demo
  expect_status 0
  expect_err_empty
  # It did work under $TMPDIR (else an empty $TMPDIR would prove nothing).
  [[ $(head -n 1 "$work/out") == "demo store: $tmp/ctxkit-demo-"??????"  (temporary, removed when the demo ends)" ]] ||
    fail "the demo's store was not a temporary directory under \$TMPDIR"
  expect_out_line "demo +1000 +[0-9]+ +[0-9]+"
  expect_empty_directory "$tmp"
  expect_empty_directory "$home"
  expect_missing "$work/envdb"

  # A TMPDIR that does not exist is a runtime error, not a crash.
  run_env HOME="$home" TMPDIR="$work/nonexistent" -- demo
  expect_status 1
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_missing "$work/nonexistent"
}

case_default_location() {
  # $CTXKIT_DB wins over XDG_DATA_HOME and HOME.
  local home=$work/h1
  mkdir "$home"
  run_env HOME="$home" XDG_DATA_HOME="$work/xdg1" CTXKIT_DB="$work/envdb" -- \
    store init
  expect_status 0
  expect_out_line "path +$work/envdb"
  run_env HOME="$home" XDG_DATA_HOME="$work/xdg1" CTXKIT_DB="$work/envdb" -- \
    store info --json
  expect_status 0
  expect_json_path "$work/envdb"
  expect_missing "$work/xdg1"
  expect_empty_directory "$home"

  # $CTXKIT_DB is used as given: its missing parents are not created.
  run_env HOME="$home" CTXKIT_DB="$work/envparent/db" -- store init
  expect_status 1
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_err_contains "(store location from \$CTXKIT_DB)"
  expect_missing "$work/envparent"

  # An empty CTXKIT_DB counts as unset; XDG_DATA_HOME is next, created with
  # its missing parents (0700).
  home=$work/h2
  mkdir "$home"
  run_env HOME="$home" CTXKIT_DB= XDG_DATA_HOME="$work/xdg2/data" -- store init
  expect_status 0
  expect_directory "$work/xdg2/data/ctxkit"
  expect_mode "$work/xdg2" 700
  expect_mode "$work/xdg2/data" 700
  run_env HOME="$home" XDG_DATA_HOME="$work/xdg2/data" -- store info --json
  expect_status 0
  expect_json_path "$work/xdg2/data/ctxkit"
  expect_empty_directory "$home"

  # Only HOME: $HOME/.local/share/ctxkit, parents created 0700.
  home=$work/h3
  mkdir "$home"
  run_env HOME="$home" -- store init
  expect_status 0
  expect_directory "$home/.local/share/ctxkit"
  expect_mode "$home/.local" 700
  expect_mode "$home/.local/share" 700
  run_env HOME="$home" -- store info --json
  expect_status 0
  expect_json_path "$home/.local/share/ctxkit"

  # A relative XDG_DATA_HOME is ignored, as the XDG spec says.
  run_env HOME="$home" XDG_DATA_HOME=relative/data -- store info --json
  expect_status 0
  expect_json_path "$home/.local/share/ctxkit"
  expect_missing relative

  # store info at a default location that holds no store: NOT_FOUND, saying
  # where the path came from, and nothing created.
  home=$work/h4
  mkdir "$home"
  run_env HOME="$home" -- store info
  expect_status 1
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_err_contains "(store location from \$HOME)"
  expect_empty_directory "$home"

  # A HOME that does not exist is reported, not created.
  run_env HOME="$work/nohome" -- store init
  expect_status 1
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: "
  expect_missing "$work/nohome"

  # Nothing to go by: a clear runtime error.
  for command in "store info" "store init"; do
    # shellcheck disable=SC2086  # split on purpose
    run_env -- $command
    expect_status 1
    expect_out_empty
    expect_err_first_line_prefix "ctxkit: FAILED_PRECONDITION: no store location"
    expect_err_contains "HOME"
  done
}

# ---- tokenizer commands ----

# out_is TEXT: stdout is exactly TEXT (plus the final newline).
expect_out_is() {
  [[ $(cat "$work/out") == "$1" ]] || fail "stdout is not: $1"
}
# run_in FILE ARGS...: runs the program with FILE as standard input.
run_in() {
  local input=$1
  shift
  last_command="ctxkit $* <$input"
  env -i "${passthrough[@]}" HOME="$work/home" TMPDIR="$work/tmp" \
    "$ctxkit" "$@" <"$input" >"$work/out" 2>"$work/err"
  status=$?
}

# gen LINES: deterministic text that exercises every tokenization hazard
# around a chunk boundary: punctuation before line breaks, CRLF, runs of
# spaces and blank lines, tabs, lines starting with '/', contractions,
# digits, accented, CJK and emoji text, special-token text.
gen() {
  LC_ALL=C awk -v n="$1" 'BEGIN {
    split("The quick brown fox@jumps over the lazy dog.@  indented   with   spaces@\ttabbed\tline@it'\''s what they'\''ve said, isn'\''t it?@/usr/local/bin/ctxkit --help@// a comment line@x = a/b + c; // done@CamelCaseWordsAndUPPERCASE words@numbers 1234567 and 3.14159@caf\xc3\xa9 na\xc3\xafve r\xc3\xa9sum\xc3\xa9@\xe4\xb8\xad\xe6\x96\x87\xe6\xb5\x8b\xe8\xaf\x95 text@emoji \xf0\x9f\x8e\x89\xf0\x9f\x8e\x89 party@<|endoftext|> special@trailing spaces   @end.@word\r@", L, "@");
    m = length(L);
    for (i = 0; i < n; ++i) {
      s = L[(i * 7) % m + 1];
      if (i % 5 == 0) s = s " " i;
      if (i % 11 == 0) s = s "\n";
      if (i % 13 == 0) s = s "   ";
      printf "%s\n", s;
    }
  }'
}

case_count() {
  printf 'hello world' >"$work/hello"
  # o200k_base by default; FILE, '-' and no FILE.
  run count "$work/hello"
  expect_status 0
  expect_err_empty
  expect_out_is 2
  for args in "count" "count -"; do
    # shellcheck disable=SC2086  # split on purpose
    run_in "$work/hello" $args
    expect_status 0
    expect_out_is 2
  done
  run_in "$work/hello" count --encoding cl100k_base
  expect_out_is 2
  run_in "$work/hello" count --encoding=r50k_base
  expect_out_is 2
  : >"$work/empty"
  run count "$work/empty"
  expect_status 0
  expect_out_is 0

  # --json says how it was counted.
  run count --model gpt-4o-2024-08-06 --json "$work/hello"
  expect_status 0
  expect_err_empty
  expect_out_is '{"schema_version":1,"model":"gpt-4o-2024-08-06","tokens":2,"bytes":11,"encoding":"o200k_base","method":"tokenizer","exact":true}'
  run count --model gpt-4 --json "$work/hello"
  expect_out_contains '"encoding":"cl100k_base"'

  # An unknown model is a usage error naming the close matches...
  run count --model gpt-4oo --json "$work/hello"
  expect_usage_error "ctxkit: invalid value 'gpt-4oo' for flag '--model' of 'count': unknown model; did you mean gpt-4o, gpt-4o-* or gpt-4-*? (--estimate: estimate its tokens instead)"
  run count --model=zqxjvwkpfy "$work/hello"
  expect_usage_error "ctxkit: invalid value 'zqxjvwkpfy' for flag '--model' of 'count': unknown model, and no known model is close (--estimate: estimate its tokens instead)"
  # ...unless --estimate asks for an estimate, which is said so.
  run count --model gpt-4oo --estimate --json "$work/hello"
  expect_status 0
  expect_out_is '{"schema_version":1,"model":"gpt-4oo","tokens":2,"bytes":11,"encoding":null,"method":"heuristic","estimate":true,"estimated_with":"ctxkit::EstimateTokens","exact":false}'
  expect_err_first_line "ctxkit: note: unknown model 'gpt-4oo': the count is an estimate by ctxkit::EstimateTokens, not by a tokenizer"
  run count --estimate --model no-such-model "$work/hello"
  expect_status 0
  expect_out_line '[0-9]+'
  expect_err_first_line "ctxkit: note: unknown model 'no-such-model': the count is an estimate by ctxkit::EstimateTokens, not by a tokenizer"
  # For a known model --estimate changes nothing.
  run count --model gpt-4o --estimate --json "$work/hello"
  expect_status 0
  expect_err_empty
  expect_out_contains '"method":"tokenizer","exact":true'
  # A known model whose tokenizer is not available: an estimate, said so.
  run count --model llama3.1:8b "$work/hello"
  expect_status 0
  expect_out_line '[0-9]+'
  expect_err_contains "is not available: the count is an estimate"

  # Special-token text: ordinary text by default, one token with --special all.
  printf '<|endoftext|>' >"$work/special"
  run count --encoding cl100k_base --special all "$work/special"
  expect_out_is 1
  run count --encoding cl100k_base "$work/special"
  expect_status 0
  [[ $(cat "$work/out") -gt 1 ]] || fail "special-token text counted as one token"

  # Runtime errors: exit 1 and STATUS: message.
  run count "$work/missing"
  expect_status 1
  expect_out_empty
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: cannot open '$work/missing'"
  run count "$work"
  expect_status 1
  expect_err_first_line_prefix "ctxkit: FAILED_PRECONDITION: "
  run count --encoding nope_base "$work/hello"
  expect_status 1
  expect_err_first_line_prefix "ctxkit: NOT_FOUND: unknown encoding 'nope_base'"
  expect_err_contains "o200k_base"
  printf 'abc \xff def' >"$work/bad"
  run count "$work/bad"
  expect_status 1
  expect_out_empty
  expect_err_first_line_prefix "ctxkit: INVALID_ARGUMENT: '$work/bad': "
  expect_err_contains "offset 4"

  run encodings
  expect_status 0
  expect_out_line "cl100k_base"
  expect_out_line "o200k_base"
  expect_out_line "r50k_base"
  expect_out_line "claude"

  # claude normalizes to NFKC first: the ligature and the fullwidth letters
  # count as "financial ABC" (ids from @anthropic-ai/tokenizer@0.0.4).
  run_in "$work/hello" count --encoding claude
  expect_status 0
  expect_out_is 2
  printf '\xef\xac\x81nancial \xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3' >"$work/nfkc"
  run count --encoding claude "$work/nfkc"
  expect_status 0
  expect_out_is 2
  run tokenize --encoding claude "$work/nfkc"
  expect_status 0
  expect_out_is "61390 16172"
}

case_tokenize() {
  printf 'hello world' >"$work/hello"
  run tokenize --encoding cl100k_base "$work/hello"
  expect_status 0
  expect_err_empty
  expect_out_is "15339 1917"
  run_in "$work/hello" tokenize
  expect_out_is "24912 2375"
  run_in "$work/hello" tokenize --model gpt-4o -
  expect_out_is "24912 2375"
  : >"$work/empty"
  run tokenize "$work/empty"
  expect_status 0
  [[ $(cat "$work/out") == "" && $(wc -c <"$work/out") -eq 1 ]] ||
    fail "an empty input does not give one empty line"

  printf 'hi <|endoftext|>' >"$work/special"
  run tokenize --encoding cl100k_base --special all "$work/special"
  expect_out_is "6151 220 100257"
  run tokenize --encoding cl100k_base --special none "$work/special"
  expect_out_is "6151 83739 8862 728 428 91 29"

  # Tokenizing needs the tokenizer itself: no estimate.
  run tokenize --model gpt-4oo "$work/hello"
  expect_usage_error "ctxkit: invalid value 'gpt-4oo' for flag '--model' of 'tokenize': unknown model; did you mean gpt-4o, gpt-4o-* or gpt-4-*?"
  run tokenize --model gpt-4oo --estimate "$work/hello"
  expect_usage_error "ctxkit: unknown flag '--estimate' for 'tokenize'"
  run tokenize --model llama3 "$work/hello"
  expect_status 1
  expect_err_first_line_prefix "ctxkit: FAILED_PRECONDITION: "
  expect_err_contains "llama3"
  printf '\xc3' >"$work/bad"
  run tokenize "$work/bad"
  expect_status 1
  expect_err_first_line_prefix "ctxkit: INVALID_ARGUMENT: "
}

case_tokenize_jsonl() {
  # Strings, objects with "text" among other members, escapes.
  printf '%s\n' '"hello world"' \
    '{"id":[1,{"a":null,"b":-2.5e3}],"text":"hello world","x":true}' \
    ' { "text" : "a\u00e9\ud83c\udf89\n" } ' '""' >"$work/in.jsonl"
  run tokenize --jsonl --encoding cl100k_base "$work/in.jsonl"
  expect_status 0
  expect_err_empty
  [[ $(cat "$work/out") == $'[15339,1917]\n[15339,1917]\n[64,978,9468,236,231,198]\n[]' ]] ||
    fail "unexpected --jsonl output"

  # Round trip: every line's ids are those of its text tokenized alone.
  local i=0 text
  : >"$work/round.jsonl"
  : >"$work/expected"
  for text in "The quick brown fox" $'two\nlines' $'caf\xc3\xa9 \xf0\x9f\x8e\x89' \
              "it's 12345 /path" $'tabs\tand   spaces  ' '"quoted"'; do
    i=$((i + 1))
    printf '%s' "$text" >"$work/text$i"
    run tokenize --encoding o200k_base "$work/text$i"
    expect_status 0
    echo "[$(tr ' ' ',' <"$work/out")]" >>"$work/expected"
    # JSON-quote the text (no backslashes in these texts).
    local quoted
    quoted=$(printf '%s' "$text" | LC_ALL=C awk 'BEGIN { RS = "\001"; ORS = "" }
      { gsub(/"/, "\\\""); gsub(/\n/, "\\n");
        gsub(/\t/, "\\t"); print "{\"text\":\"" $0 "\"}" }')
    printf '%s\n' "$quoted" >>"$work/round.jsonl"
  done
  run_in "$work/round.jsonl" tokenize --jsonl
  expect_status 0
  cmp -s "$work/out" "$work/expected" ||
    fail "--jsonl ids differ from those of each text alone: $(diff "$work/out" "$work/expected")"

  # A final line without a newline is still a line.
  printf '"hello world"' >"$work/noeol.jsonl"
  run tokenize --jsonl --encoding cl100k_base "$work/noeol.jsonl"
  expect_out_is "[15339,1917]"

  # Bad lines: exit 1, naming the line.
  local bad
  # (A blank line is not bad: it holds no record and is skipped; see
  # tokenizer_cli_test.sh jsonl_blank_lines.)
  for bad in '42' '{"text":1}' '{"id":1}' '"abc' '"a" x' '{"text":"a","text":"b"}' \
             '"\ud800"' '"\q"'; do
    printf '"ok"\n%s\n' "$bad" >"$work/bad.jsonl"
    run tokenize --jsonl "$work/bad.jsonl"
    expect_status 1
    expect_err_first_line_prefix "ctxkit: INVALID_ARGUMENT: '$work/bad.jsonl', line 2: "
    [[ $(cat "$work/out") == "[525]" ]] || fail "line 1 was not printed before the error on line 2"
  done
}

case_count_stream() {
  # Counting in chunks equals counting the whole, for every encoding, with
  # chunks as small as possible (cut at every safe boundary), the default
  # size, and the whole input at once; tokenize likewise gives the same ids.
  gen 6000 >"$work/small.txt"
  local encoding special whole chunked
  for encoding in r50k_base p50k_base cl100k_base o200k_base; do
    for special in none all; do
      run count --encoding $encoding --special $special --chunk-size 0 "$work/small.txt"
      expect_status 0
      whole=$(cat "$work/out")
      for size in 1 4096; do
        run count --encoding $encoding --special $special --chunk-size $size "$work/small.txt"
        expect_status 0
        [[ $(cat "$work/out") == "$whole" ]] ||
          fail "$encoding --special $special: $(cat "$work/out") tokens in chunks of $size, $whole whole"
      done
      run tokenize --encoding $encoding --special $special --chunk-size 0 "$work/small.txt"
      cp "$work/out" "$work/ids.whole"
      run tokenize --encoding $encoding --special $special --chunk-size 1 "$work/small.txt"
      cmp -s "$work/out" "$work/ids.whole" ||
        fail "$encoding --special $special: tokenize in chunks differs from whole"
    done
  done

  # A large file (about 3.3 MB, so several of the default 1 MiB chunks):
  # streamed and from a pipe, versus whole. Kept modest so that sanitizer
  # builds finish well inside the test's time limit.
  gen 150000 >"$work/big.txt"
  run count --chunk-size 0 "$work/big.txt"
  expect_status 0
  whole=$(cat "$work/out")
  [[ $whole -gt 700000 ]] || fail "the large file has only $whole tokens"
  run count "$work/big.txt"
  expect_status 0
  expect_err_empty  # no progress bar: stderr is not a terminal
  [[ $(cat "$work/out") == "$whole" ]] ||
    fail "streamed count $(cat "$work/out") differs from whole count $whole"
  last_command="cat big.txt | ctxkit count"
  env -i "${passthrough[@]}" "$ctxkit" count <(cat "$work/big.txt") \
    >"$work/out" 2>"$work/err"
  status=$?
  expect_status 0
  [[ $(cat "$work/out") == "$whole" ]] ||
    fail "count from a pipe $(cat "$work/out") differs from whole count $whole"
}

case_count_messages() {
  printf '%s' '[{"role":"user","content":"hi"}]' >"$work/openai.json"
  # The cookbook's rule for gpt-4o: 3 + "user" + "hi" + 3 = 8.
  run count --messages --model gpt-4o "$work/openai.json"
  expect_status 0
  expect_err_empty
  expect_out_is 8
  run_in "$work/openai.json" count --messages
  expect_out_is 8
  run count --messages --model gpt-4o --json "$work/openai.json"
  expect_out_is '{"schema_version":1,"model":"gpt-4o","total":8,"messages":[5],"system":0,"tools":0,"reply_priming":3,"encoding":"o200k_base","method":"tokenizer","exact":true}'

  printf '%s' '{"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hello"}]},{"role":"assistant","content":"hi there"}]}' >"$work/anthropic.json"
  run count --messages --model claude-sonnet-4-20250514 --json "$work/anthropic.json"
  expect_status 0
  expect_out_contains '"exact":false'
  grep -qE '"messages":\[[0-9]+,[0-9]+\]' "$work/out" ||
    fail "not one count per message"

  run count --messages --model no-such-model --json "$work/openai.json"
  expect_status 2
  expect_out_empty
  expect_err_contains "unknown model"
  run count --messages --model no-such-model --estimate --json "$work/openai.json"
  expect_status 0
  expect_out_contains '"method":"heuristic"'
  expect_err_contains "estimate"

  printf '%s' '[{"role":1}]' >"$work/bad.json"
  run count --messages "$work/bad.json"
  expect_status 1
  expect_out_empty
  expect_err_first_line_prefix "ctxkit: INVALID_ARGUMENT: '$work/bad.json': messages[0]"
  printf '[{' >"$work/broken.json"
  run count --messages --model gpt-4o "$work/broken.json"
  expect_status 1
  expect_err_first_line_prefix "ctxkit: INVALID_ARGUMENT: "
}

case_tokenizer_usage_errors() {
  run count --model gpt-4o --encoding cl100k_base
  expect_usage_error "ctxkit: flags '--model' and '--encoding' of 'count' exclude each other"
  run tokenize --encoding=cl100k_base --model gpt-4o
  expect_usage_error "ctxkit: flags '--encoding' and '--model' of 'tokenize' exclude each other"
  run tokenize --special some
  expect_usage_error "ctxkit: invalid value 'some' for flag '--special' of 'tokenize' (expected one of none, all)"
  run count --chunk-size 12k
  expect_usage_error "ctxkit: invalid value '12k' for flag '--chunk-size' of 'count' (expected a number)"
  run count --chunk-size 123456789012345678901
  expect_usage_error "ctxkit: invalid value '123456789012345678901' for flag '--chunk-size' of 'count' (expected a number)"
  # A negative number is a bad value, not a missing one.
  run count --chunk-size -5
  expect_usage_error "ctxkit: invalid value '-5' for flag '--chunk-size' of 'count' (expected a number)"
  run count a b
  expect_usage_error "ctxkit: unexpected argument 'b' for 'count'"
  run tokenize --encoding
  expect_usage_error "ctxkit: missing value for flag '--encoding' of 'tokenize'"
  run count --jsonl
  expect_usage_error "ctxkit: unknown flag '--jsonl' for 'count'; did you mean '--json'?"
  run encodings extra
  expect_usage_error "ctxkit: unexpected argument 'extra' for 'encodings'"

  run count --help
  expect_status 0
  expect_out_first_line "Usage: ctxkit count [--model MODEL] [--estimate] [--encoding NAME] [--special all|none] [--messages] [--chunk-size BYTES] [--text TEXT] [--json] [FILE|-]"
  expect_out_line "  --estimate +estimate the tokens of an unknown --model instead of refusing it"
  run tokenize --help
  expect_status 0
  expect_out_first_line "Usage: ctxkit tokenize [--encoding NAME] [--model MODEL] [--special all|none] [--jsonl] [--chunk-size BYTES] [--text TEXT] [FILE|-]"
  run --help
  expect_out_line "  count +count the tokens of a text or of a chat request"
  expect_out_line "  tokenize +print the token ids of a text"
}

if [[ $(type -t "case_$case_name") != function ]]; then
  echo "unknown case '$case_name'" >&2
  exit 2
fi
cd "$work" || exit 1  # so a stray relative path lands in the trash
"case_$case_name"
if [[ $failures -gt 0 ]]; then
  echo "$case_name: $failures check(s) failed" >&2
  exit 1
fi
echo "$case_name: all checks passed"
