#!/usr/bin/env bash
# Tests of the tokenizer commands of the ctxkit program (count, tokenize,
# decode).
#
# Usage: tokenizer_cli_test.sh CTXKIT CASE
#   CASE  count_text | decode | jsonl_blank_lines | error_offsets |
#         stream_cuts | stream_memory
#
# Every case works in its own temporary directory, removed on exit, and runs
# the program in a clean environment; the script exits 1 if any check
# failed, reporting what it saw.

set -u

if [[ $# -ne 2 ]]; then
  echo "usage: $0 CTXKIT CASE" >&2
  exit 2
fi
case_name=$2
# shellcheck source=tests/program/harness.sh
source "$(dirname "$0")/harness.sh" "$1" tokenizer-cli

run() {
  last_command="ctxkit $*"
  env -i "${passthrough[@]}" HOME="$work/home" TMPDIR="$work/tmp" \
    "$ctxkit" "$@" >"$work/out" 2>"$work/err"
  status=$?
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
expect_status() {
  [[ $status -eq $1 ]] || fail "exit status $status, expected $1"
}
expect_out_is() {
  [[ $(cat "$work/out") == "$1" ]] || fail "stdout is not: $1"
}
expect_err_empty() {
  [[ ! -s $work/err ]] || fail "expected nothing on stderr"
}
expect_err_contains() {
  grep -qF -- "$1" "$work/err" || fail "stderr lacks: $1"
}
expect_err_first_line() {
  [[ $(head -n 1 "$work/err") == "$1" ]] ||
    fail "first stderr line is not: $1"
}

case_count_text() {
  # --text is the input itself, not a file name.
  run count --text "hello world"
  expect_status 0
  expect_err_empty
  expect_out_is 2
  run count --text "hello world" --encoding cl100k_base --json
  expect_out_is '{"schema_version":1,"tokens":2,"bytes":11,"encoding":"cl100k_base","method":"tokenizer","exact":true}'
  # An empty --text is refused like any empty flag value.
  run count --text ""
  expect_status 2
  run tokenize --text "hello world" --encoding cl100k_base
  expect_status 0
  expect_out_is "15339 1917"
  # Special-token text is ordinary text, as in a file.
  run count --text "<|endoftext|>" --encoding cl100k_base
  expect_status 0
  [[ $(cat "$work/out") -gt 1 ]] || fail "special-token text counted as one token"
  run count --text "<|endoftext|>" --encoding cl100k_base --special all
  expect_out_is 1
  # --text and FILE together is a usage error.
  printf 'x' >"$work/file"
  run count --text "hello" "$work/file"
  expect_status 2
  expect_err_first_line "ctxkit: invalid value 'hello' for flag '--text' of 'count': --text is the input: give it or FILE, not both"
  # A bare argument is still a file name.
  run count "hello world"
  expect_status 1
  expect_err_contains "cannot open 'hello world'"
}

case_decode() {
  # Ids as arguments, on standard input, as 'tokenize' prints them and as a
  # JSON array.
  run decode --encoding cl100k_base 15339 1917
  expect_status 0
  expect_out_is "hello world"
  printf '[15339, 1917]\n' >"$work/ids"
  run_in "$work/ids" decode --encoding cl100k_base
  expect_status 0
  expect_out_is "hello world"
  # Round trip of varied text through tokenize | decode, every encoding,
  # long enough to span several reads.
  local encoding
  for i in $(seq 1 4000); do
    printf 'line %d: caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 <|endoftext|>\t  x = a/b;\r\n' "$i"
  done >"$work/text"
  for encoding in r50k_base cl100k_base o200k_base claude; do
    run tokenize --encoding $encoding "$work/text"
    expect_status 0
    cp "$work/out" "$work/ids"
    run_in "$work/ids" decode --encoding $encoding
    expect_status 0
    if [[ $encoding == claude ]]; then
      # claude decodes to the NFKC of the text; this text is already NFKC.
      :
    fi
    cmp -s "$work/out" "$work/text" || fail "$encoding: decode(tokenize(text)) differs from text"
  done
  # --model picks the encoding.
  run decode --model gpt-4 15339 1917
  expect_out_is "hello world"
  # An id that is not a token, and a word that is not an id, named with
  # their place.
  run decode --encoding cl100k_base 15339 999999999
  expect_status 1
  expect_err_contains "id 1 (counting from 0), at offset 6: token id 999999999 is not a token of cl100k_base"
  printf '15339 17x 1917' >"$work/ids"
  run_in "$work/ids" decode --encoding cl100k_base
  expect_status 1
  expect_err_contains "'17x' at offset 6 is not a token id"
}

case_jsonl_blank_lines() {
  # Blank lines (also with blanks or a CR) hold no record: skipped, not an
  # error.
  printf '"hello world"\n\n  \n\r\n{"text":"hello"}\n\n' >"$work/in.jsonl"
  run tokenize --jsonl --encoding cl100k_base "$work/in.jsonl"
  expect_status 0
  expect_err_empty
  [[ $(cat "$work/out") == $'[15339,1917]\n[15339]' ]] || fail "unexpected --jsonl output"
  # A line that is not blank and not JSON is still an error naming it.
  printf '"a"\n\nnot json\n' >"$work/bad.jsonl"
  run tokenize --jsonl "$work/bad.jsonl"
  expect_status 1
  expect_err_contains "line 3"
}

case_error_offsets() {
  # Offsets in errors count from the start of the input, not of the chunk
  # that held the error: 3 MB of text, then an invalid byte.
  awk 'BEGIN { for (i = 0; i < 300000; ++i) printf "word %05d\n", i }' >"$work/bad"
  local size
  size=$(stat -c %s "$work/bad")
  printf 'abc \xff def' >>"$work/bad"
  run count "$work/bad"
  expect_status 1
  expect_err_contains "'$work/bad': "
  expect_err_contains "offset $((size + 4))"
  run tokenize --chunk-size 1000 "$work/bad"
  expect_status 1
  expect_err_contains "offset $((size + 4))"
}

# Inputs with no "ASCII letter or digit, then whitespace" anywhere: base64,
# minified JSON, CJK prose; each counted in chunks as small as possible
# (cut at every safe place) must count as the whole does, in every
# encoding, and tokenize to the same ids.
case_stream_cuts() {
  head -c 60000 /dev/urandom | base64 -w 0 >"$work/base64"
  LC_ALL=C awk 'BEGIN {
    srand(7); printf "[";
    for (i = 0; i < 600; ++i) {
      printf "%s{\"id\":%d,\"name\":\"user_%x\",\"tags\":[\"a%d\",\"B2c\"],\"score\":%.3f,\"ok\":%s,\"note\":\"it'"'"'s 1/2-done (x=3)\"}",
        (i ? "," : ""), i, i * 7919, i % 13, rand() * 100, (i % 2 ? "true" : "false")
    }
    printf "]" }' >"$work/json"
  LC_ALL=C awk 'BEGIN {
    split("\xe4\xb8\xad\xe6\x96\x87 \xe6\xb5\x8b\xe8\xaf\x95 \xe7\x9a\x84 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe3\x81\x82\xe3\x82\x8a\xe3\x81\x8c\xe3\x81\xa8\xe3\x81\x86 \xe3\x82\xab\xe3\x82\xbf\xe3\x82\xab\xe3\x83\x8a \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 \xe3\x83\xbc", W, " ");
    split("\xe3\x80\x81 \xe3\x80\x82 \xef\xbc\x8c \xef\xbc\x81 A 7 \xe3\x80\x8c", P, " ");
    srand(11);
    for (i = 0; i < 20000; ++i) {
      printf "%s", W[int(rand() * 8) + 1];
      if (rand() < 0.3) printf "%s", P[int(rand() * 7) + 1];
    }
  }' >"$work/cjk"
  local input encoding special whole
  for input in base64 json cjk; do
    for encoding in r50k_base cl100k_base o200k_base claude; do
      for special in none all; do
        run count --encoding $encoding --special $special --chunk-size 0 "$work/$input"
        expect_status 0
        whole=$(cat "$work/out")
        run count --encoding $encoding --special $special --chunk-size 1 "$work/$input"
        expect_status 0
        [[ $(cat "$work/out") == "$whole" ]] ||
          fail "$input, $encoding, --special $special: $(cat "$work/out") tokens in chunks, $whole whole"
      done
      run tokenize --encoding $encoding --chunk-size 0 "$work/$input"
      cp "$work/out" "$work/ids.whole"
      run tokenize --encoding $encoding --chunk-size 1 "$work/$input"
      cmp -s "$work/out" "$work/ids.whole" ||
        fail "$input, $encoding: tokenize in chunks differs from whole"
    done
  done
}

# The peak memory (kB) of `ctxkit ARGS...`.
peak_kb() {
  last_command="ctxkit $*"
  env -i "${passthrough[@]}" HOME="$work/home" TMPDIR="$work/tmp" \
    /usr/bin/time -f %M -o "$work/peak" "$ctxkit" "$@" >"$work/out" 2>"$work/err"
  status=$?
  cat "$work/peak"
}

case_stream_memory() {
  # 16 MiB without one "letter or digit, then whitespace": counted in
  # chunks, it never holds the whole input (or the 50 MB it took whole).
  # Exit 77 is this test's CTest SKIP_RETURN_CODE: reported as skipped, with
  # the reason, rather than passed.
  if [[ ! -x /usr/bin/time ]]; then
    echo "stream_memory: skipped: /usr/bin/time (GNU time) is not installed"
    exit 77
  fi
  # A sanitizer's shadow memory and ASan's quarantine of freed blocks make
  # peak RSS say nothing about what the program holds.
  if [[ -n ${CTXKIT_TEST_SANITIZERS:-} ]]; then
    echo "stream_memory: skipped: built with -fsanitize=$CTXKIT_TEST_SANITIZERS"
    exit 77
  fi
  # base64 of 12 MiB of random bytes, with no line breaks: 16 MiB.
  head -c 12582912 /dev/urandom | base64 -w 0 >"$work/big"
  local small big whole chunked_peak
  small=$(peak_kb count --text x)
  big=$(peak_kb count --chunk-size 0 "$work/big")
  expect_status 0
  whole=$(cat "$work/out")
  chunked_peak=$(peak_kb count "$work/big")
  expect_status 0
  [[ $(cat "$work/out") == "$whole" ]] || fail "chunked count differs from whole count $whole"
  # The default chunks are 1 MiB, one per core at a time, plus a read
  # buffer: far below the 16 MiB input.
  local threads
  threads=$(nproc)
  local limit=$((small + (threads + 2) * 3 * 1024 + 8192))
  echo "peak kB: 'count --text x' $small, whole $big, chunked $chunked_peak (limit $limit)"
  [[ $chunked_peak -lt $limit ]] || fail "chunked count peaked at $chunked_peak kB (limit $limit kB)"
  [[ $chunked_peak -lt $big ]] || fail "chunked count ($chunked_peak kB) used no less than whole ($big kB)"
}

if [[ $(type -t "case_$case_name") != function ]]; then
  echo "unknown case '$case_name'" >&2
  exit 2
fi
cd "$work" || exit 1
"case_$case_name"
if [[ $failures -gt 0 ]]; then
  echo "$case_name: $failures check(s) failed" >&2
  exit 1
fi
echo "$case_name: all checks passed"
