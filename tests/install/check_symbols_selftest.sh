#!/usr/bin/env bash
# install.exported_symbols_checker: check_symbols.sh accepts a clean symbol
# table and rejects each kind of leak it exists to catch, so that
# install.exported_symbols passing means something.
#
# Options: --checker check_symbols.sh, --header c.h, --cxxfilt, --perl.
set -euo pipefail

die() { echo "install.exported_symbols_checker: FAIL: $*" >&2; exit 1; }

declare -A opt=([checker]="" [header]="" [cxxfilt]="c++filt" [perl]="perl")
# shellcheck source=SCRIPTDIR/parse_options.sh
source "$(dirname "${BASH_SOURCE[0]}")/parse_options.sh"
parse_options "$@"
[[ -f ${opt[checker]} && -f ${opt[header]} ]] || die "need --checker and --header"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-symbols-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The C functions c.h declares, found independently of the checker (same
# convention: the function name precedes the first parenthesis).
# shellcheck disable=SC2016 # perl code
mapfile -t declared < <("${opt[perl]}" -0777 -ne '
  s{/\*.*?\*/}{ }gs; s{//[^\n]*}{ }g;
  print "$1\n" while /\bCTXKIT_EXPORT\b[^;{}()]*?\b(ctxkit_\w+)\s*\(/g;' \
  "${opt[header]}")
((${#declared[@]} >= 2)) || die "found fewer than two functions in ${opt[header]}"

# A clean table: every declared C function, plus C++ symbols of the kinds
# ctxkit's C++ API legitimately exports.
good=(
  "${declared[@]}"
  # ctxkit::Store::Open(std::basic_string_view<...>, ctxkit::StoreOptions const&)
  _ZN6ctxkit5Store4OpenESt17basic_string_viewIcSt11char_traitsIcEERKNS_12StoreOptionsE
  # ctxkit::Cursor::Cursor(MDB_cursor*, bool): LMDB's opaque type as a parameter
  _ZN6ctxkit6CursorC1EP10MDB_cursorb
  # typeinfo for ctxkit::Store
  _ZTIN6ctxkit5StoreE
  # int ctxkit::Parse<int>(int): a template function, return type first
  _ZN6ctxkit5ParseIiEET_i
  # ctxkit::X::operator<(ctxkit::X const&) const
  _ZNK6ctxkit1XltERKS0_
)

# Writes an nm-format table of the given names.
table() {
  local name
  for name in "$@"; do printf '0000000000001000 T %s\n' "$name"; done
}

check() {
  "${opt[checker]}" --symbols-file "$1" --header "${opt[header]}" \
    --cxxfilt "${opt[cxxfilt]}" --perl "${opt[perl]}" >"$tmp/out.txt" 2>&1
}

table "${good[@]}" >"$tmp/good.txt"
check "$tmp/good.txt" || { cat "$tmp/out.txt" >&2; die "the checker rejects a clean table"; }
echo "clean table: accepted"

# expect_rejected <what> <message part> <names...>: the clean table, plus or
# minus the names, must be rejected with a message containing <message part>.
expect_rejected() {
  local what=$1 message=$2
  shift 2
  table "$@" >"$tmp/bad.txt"
  if check "$tmp/bad.txt"; then
    cat "$tmp/out.txt" >&2
    die "the checker accepts $what"
  fi
  grep -qF -- "$message" "$tmp/out.txt" ||
    { cat "$tmp/out.txt" >&2; die "rejecting $what, the checker does not say '$message'"; }
  echo "$what: rejected"
}

expect_rejected "an LMDB C function" "mdb_env_open: neither a ctxkit_* C function" \
  "${good[@]}" mdb_env_open
expect_rejected "a C function missing from c.h" "ctxkit_secret: exported C function not declared" \
  "${good[@]}" ctxkit_secret
expect_rejected "a static initializer" "_GLOBAL__sub_I_store.cc: neither" \
  "${good[@]}" _GLOBAL__sub_I_store.cc
expect_rejected "an Abseil symbol" "mentions Abseil or simdjson" \
  "${good[@]}" _ZN4absl12lts_202206236StatusC1Ev
expect_rejected "a simdjson symbol" "mentions Abseil or simdjson" \
  "${good[@]}" _ZN8simdjson13padded_stringC1Ev
expect_rejected "a ctxkit function taking an Abseil type" "mentions Abseil or simdjson" \
  "${good[@]}" _ZN6ctxkit8FromAbslEN4absl12lts_202206236StatusE
expect_rejected "a std:: instantiation" "outside namespace ctxkit" \
  "${good[@]}" _ZNSt6vectorIiSaIiEED1Ev
expect_rejected "typeinfo of a std:: type" "outside namespace ctxkit" \
  "${good[@]}" _ZTISt9exception
expect_rejected "a ctxkit::internal symbol" "in ctxkit::internal" \
  "${good[@]}" _ZN6ctxkit8internal9StoreImpl4OpenEv
expect_rejected "a private constructor taking a ctxkit::internal type" \
  "names a private type" "${good[@]}" \
  _ZN6ctxkit5StoreC1ESt10unique_ptrINS_8internal9StoreImplESt14default_deleteIS3_EE
expect_rejected "a member of a private Impl class" "private Impl class" \
  "${good[@]}" _ZN6ctxkit14ReferenceStore4Impl3AddERKNS_12NewReferenceE
expect_rejected "a ctxkit template instantiated with std::" "std:: template instantiation" \
  "${good[@]}" _ZNK6ctxkit8StatusOrINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEE7CheckOkEv
expect_rejected "a missing C function" "${declared[0]}: declared in c.h but not exported" \
  "${good[@]:1}"
expect_rejected "a table without C++ symbols" "no C++ symbol" \
  "${declared[@]}"

echo "install.exported_symbols_checker: all checks passed"
