# What the program test scripts share; each sources it after `set -u` and
# its own argument checks:
#
#   source "$(dirname "$0")/harness.sh" CTXKIT NAME [jq]
#
# It makes CTXKIT absolute in $ctxkit (the cases run inside their temporary
# directory) and checks that it is a program, checks for jq when asked,
# creates $work (removed on exit) holding home/, tmp/, out and err, and
# defines fail(), which reports the last command ($last_command, $status,
# $work/out, $work/err) and counts $failures, and $passthrough: the
# variables that must survive env -i for the program to run at all (odd
# library paths, sanitizer settings).

ctxkit=$1
if [[ $ctxkit != /* ]]; then ctxkit=$PWD/$ctxkit; fi
if [[ ! -x $ctxkit || -d $ctxkit ]]; then
  echo "FAIL: $ctxkit is not an executable program" >&2
  exit 1
fi
if [[ ${3:-} == jq ]] && ! command -v jq >/dev/null; then
  echo "FAIL: jq is needed to read the program's JSON output" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-$2-test.XXXXXX") || exit 1
trap 'rm -rf -- "$work"' EXIT
mkdir -p "$work/home" "$work/tmp"
touch "$work/out" "$work/err"

failures=0
status=0
last_command=

fail() {
  echo "FAIL: $*" >&2
  echo "  command: $last_command" >&2
  echo "  exit status: $status" >&2
  echo "  stdout:" >&2
  sed 's/^/    | /' "$work/out" >&2
  echo "  stderr:" >&2
  sed 's/^/    | /' "$work/err" >&2
  failures=$((failures + 1))
}

passthrough=()
for name in PATH LD_LIBRARY_PATH ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS \
            LSAN_OPTIONS; do
  if [[ -n ${!name+set} ]]; then passthrough+=("$name=${!name}"); fi
done
