#!/usr/bin/env bash
# install.exported_symbols: libctxkit.so exports ctxkit's API and nothing else.
#
#   - every defined dynamic symbol is a C function ctxkit_* declared in
#     include/ctxkit/c.h, or a C++ symbol whose entity (its qualified name,
#     template arguments included, parameter list excluded) is in namespace
#     ctxkit:: but not ctxkit::internal:: nor a class's private Impl, and
#     names no std::, MDB_/mdb_, and no private type in its parameters
#     (a private constructor taking the Impl is not part of the API);
#   - no symbol mentions Abseil or simdjson anywhere, parameters included (their
#     types in ctxkit's ABI would tie users to their unstable ABIs);
#   - every function declared CTXKIT_EXPORT in c.h is exported, and no other
#     ctxkit_* C function is; at least one C++ symbol is exported;
#   - the SONAME is the one given (libctxkit.so.<major>.<minor>).
#
# Parameter lists may name std:: types (std::string_view is ctxkit's C++ API)
# and LMDB's opaque handle types, which store.h forward-declares.
#
# Options: --library FILE (run nm on it) or --symbols-file FILE (nm-format
# lines, for the checker's self-test), --header c.h, --soname NAME (checked
# only with --library), --nm, --readelf, --objdump, --cxxfilt, --perl.
set -euo pipefail

die() { echo "install.exported_symbols: FAIL: $*" >&2; exit 1; }

declare -A opt=([library]="" [symbols-file]="" [header]="" [soname]=""
                [nm]="nm" [readelf]="" [objdump]="" [cxxfilt]="c++filt"
                [perl]="perl")
# shellcheck source=SCRIPTDIR/parse_options.sh
source "$(dirname "${BASH_SOURCE[0]}")/parse_options.sh"
parse_options "$@"
[[ -n ${opt[header]} && -f ${opt[header]} ]] || die "no --header c.h"
[[ -n ${opt[library]} || -n ${opt[symbols-file]} ]] ||
  die "give --library or --symbols-file"
for tool in cxxfilt perl; do
  [[ -n ${opt[$tool]} && ${opt[$tool]} != *NOTFOUND ]] || die "no $tool program"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-symbols.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# --- SONAME ---------------------------------------------------------------
library=${opt[library]}
if [[ -n $library ]]; then
  [[ -f $library ]] || die "$library does not exist (is ctxkit built?)"
  [[ -n ${opt[soname]} ]] || die "no --soname to check"
  if [[ -n ${opt[readelf]} && ${opt[readelf]} != *NOTFOUND ]]; then
    dynamic=$("${opt[readelf]}" -d "$library") || die "readelf -d $library failed"
    soname=$(sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p' <<<"$dynamic")
  elif [[ -n ${opt[objdump]} && ${opt[objdump]} != *NOTFOUND ]]; then
    dynamic=$("${opt[objdump]}" -p "$library") || die "objdump -p $library failed"
    soname=$(awk '$1 == "SONAME" {print $2}' <<<"$dynamic")
  else
    die "neither readelf nor objdump was found"
  fi
  [[ $soname == "${opt[soname]}" ]] ||
    die "SONAME of $library is '${soname}', expected '${opt[soname]}'"
  echo "SONAME: $soname"
  "${opt[nm]}" -D --defined-only "$library" >"$tmp/nm.txt" ||
    die "${opt[nm]} -D --defined-only $library failed"
else
  cp "${opt[symbols-file]}" "$tmp/nm.txt"
fi

# --- The C functions c.h declares -------------------------------------------
# shellcheck disable=SC2016 # perl code
"${opt[perl]}" -0777 -ne '
  s{/\*.*?\*/}{ }gs;     # comments may mention CTXKIT_EXPORT
  s{//[^\n]*}{ }g;
  while (/\bCTXKIT_(?:DEPRECATED_)?EXPORT\b[^;{}()]*?\b(ctxkit_\w+)\s*\(/g) {
    print "$1\n";
  }' "${opt[header]}" | sort -u >"$tmp/declared.txt"
[[ -s $tmp/declared.txt ]] ||
  die "found no CTXKIT_EXPORT function declarations in ${opt[header]}"

# --- Exported symbols, mangled and demangled --------------------------------
# nm lines are "[address] type name"; the name is the last field, without any
# @version suffix.
awk 'NF >= 2 { name = $NF; sub(/@.*/, "", name); print name }' "$tmp/nm.txt" \
  | sort -u >"$tmp/mangled.txt"
[[ -s $tmp/mangled.txt ]] || die "no defined dynamic symbols at all"
"${opt[cxxfilt]}" <"$tmp/mangled.txt" >"$tmp/demangled.txt" || die "c++filt failed"
(($(wc -l <"$tmp/mangled.txt") == $(wc -l <"$tmp/demangled.txt"))) ||
  die "c++filt changed the number of lines"
paste "$tmp/mangled.txt" "$tmp/demangled.txt" >"$tmp/symbols.tsv"

# shellcheck disable=SC2016 # perl code
"${opt[perl]}" -e '
  use strict;
  use warnings;
  my ($declared_file, $symbols_file) = @ARGV;
  my %declared;
  open(my $dh, "<", $declared_file) or die "$declared_file: $!";
  while (<$dh>) { chomp; $declared{$_} = 1; }
  close($dh);

  # The entity a demangled C++ symbol names: without "vtable for" and the
  # like, without the return type of a template function, and without the
  # parameter list.
  sub entity {
    my ($d) = @_;
    $d =~ s/^(?:(?:non-virtual |virtual |covariant return )thunk to |construction vtable for |vtable for |VTT for |typeinfo name for |typeinfo for |guard variable for |TLS (?:init|wrapper) function for |reference temporary #\d+ for |transaction clone for )+//;
    $d =~ s/\(anonymous namespace\)/{anonymous}/g;
    # Operator names would confuse the bracket counting below.
    $d =~ s/operator(?:<<=|>>=|<=>|<<|>>|<=|>=|->\*|->|\(\)|<|>)/operator\@/g;
    $d =~ s/operator /operator_/g;
    my ($depth, $start, $end) = (0, 0, length($d));
    for (my $i = 0; $i < length($d); ++$i) {
      my $c = substr($d, $i, 1);
      if ($c eq "<") { ++$depth; }
      elsif ($c eq ">") { --$depth; }
      elsif ($c eq "(" && $depth == 0) { $end = $i; last; }
      elsif ($c eq " " && $depth == 0) { $start = $i + 1; }
    }
    return substr($d, $start, $end - $start);
  }

  my (@bad, %exported_c, %notes);
  my $cxx = 0;
  open(my $sh, "<", $symbols_file) or die "$symbols_file: $!";
  while (<$sh>) {
    chomp;
    my ($mangled, $demangled) = split /\t/, $_, 2;
    if ($mangled !~ /^_Z/) {
      if ($mangled =~ /^ctxkit_\w+$/) {
        $exported_c{$mangled} = 1;
        push @bad, "$mangled: exported C function not declared in c.h"
          unless $declared{$mangled};
      } else {
        push @bad, "$mangled: neither a ctxkit_* C function nor a C++ symbol in ctxkit::";
      }
      next;
    }
    ++$cxx;
    my $e = entity($demangled);
    if ($demangled =~ /absl|simdjson/i) {
      push @bad, "$demangled: mentions Abseil or simdjson";
    } elsif ($e !~ /^ctxkit::/) {
      push @bad, "$demangled: outside namespace ctxkit";
    } elsif ($e =~ /(?:^|::)internal::/) {
      push @bad, "$demangled: in ctxkit::internal";
    } elsif ($e =~ /::Impl(?:::|$)/) {
      push @bad, "$demangled: a member of a private Impl class";
    } elsif ($demangled =~ /ctxkit::internal::|::Impl\b/) {
      push @bad, "$demangled: names a private type (ctxkit::internal or an Impl) in its parameters";
    } elsif ($e =~ /(?<![\w])std::/) {
      push @bad, "$demangled: a std:: template instantiation";
    } elsif ($e =~ /(?<![A-Za-z0-9])(?:MDB_|mdb_)/) {
      push @bad, "$demangled: an LMDB symbol";
    } elsif ($demangled =~ /(?<![A-Za-z0-9])(?:MDB_|mdb_)/) {
      $notes{"$demangled: names an LMDB type in its parameters"} = 1;
    }
  }
  close($sh);
  for my $name (sort keys %declared) {
    push @bad, "$name: declared in c.h but not exported" unless $exported_c{$name};
  }
  push @bad, "no C++ symbol of namespace ctxkit is exported" if $cxx == 0;

  printf "exported: %d of the %d C functions c.h declares, %d C++ symbols\n",
    scalar(keys %exported_c), scalar(keys %declared), $cxx;
  print "note: $_\n" for sort keys %notes;
  if (@bad) {
    print STDERR "unexpected exported symbols:\n";
    print STDERR "  $_\n" for @bad;
    exit 1;
  }
' "$tmp/declared.txt" "$tmp/symbols.tsv" || die "see above"

echo "install.exported_symbols: all checks passed"
