#!/usr/bin/env bash
# install.embed: a project that builds ctxkit from source as part of itself
# (consumer_embed/) is configured once with add_subdirectory() and once with
# FetchContent; both must leave the parent's settings alone, and the
# FetchContent one is built and its program run against the embedded
# library.
#
# Options (all passed by tests/install/CMakeLists.txt): --source-dir (ctxkit's
# source tree), --cmake, --generator, --make-program, --c-compiler,
# --cxx-compiler, --prefix-path.
set -euo pipefail

die() { echo "install.embed: FAIL: $*" >&2; exit 1; }

declare -A opt=([source-dir]="" [cmake]="" [generator]="" [make-program]=""
                [c-compiler]="" [cxx-compiler]="" [prefix-path]="")
# shellcheck source=SCRIPTDIR/parse_options.sh
source "$(dirname "${BASH_SOURCE[0]}")/parse_options.sh"
parse_options "$@"
for key in source-dir cmake generator c-compiler cxx-compiler; do
  [[ -n ${opt[$key]} ]] || die "missing --$key"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-embed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

configure() {
  local how=$1
  local args=(-S "${opt[source-dir]}/tests/install/consumer_embed"
              -B "$tmp/$how" -G "${opt[generator]}"
              -DCMAKE_C_COMPILER="${opt[c-compiler]}"
              -DCMAKE_CXX_COMPILER="${opt[cxx-compiler]}"
              -DCTXKIT_SOURCE_DIR="${opt[source-dir]}"
              -DCTXKIT_EMBED_WITH="$how")
  [[ -n ${opt[make-program]} ]] &&
    args+=(-DCMAKE_MAKE_PROGRAM="${opt[make-program]}")
  [[ -n ${opt[prefix-path]} ]] &&
    args+=(-DCMAKE_PREFIX_PATH="${opt[prefix-path]//:/;}")
  if ! "${opt[cmake]}" "${args[@]}" >"$tmp/$how.log" 2>&1; then
    cat "$tmp/$how.log" >&2
    die "configuring with $how failed"
  fi
  grep -F "parent unchanged" "$tmp/$how.log"
}

configure subdirectory
configure fetchcontent
if ! "${opt[cmake]}" --build "$tmp/fetchcontent" --target consumer_embed \
     -j 2 >"$tmp/build.log" 2>&1; then
  tail -50 "$tmp/build.log" >&2
  die "building the FetchContent consumer failed"
fi
mkdir -p "$tmp/scratch"
out=$("$tmp/fetchcontent/consumer_embed" "$tmp/scratch") ||
  die "the embedded consumer failed: $out"
[[ $out == OK ]] || die "the embedded consumer printed '$out', not OK"
echo "install.embed: all checks passed"
