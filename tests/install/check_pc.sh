#!/usr/bin/env bash
# install.pc_flags: the generated ctxkit.pc is valid, relocatable and complete.
#
#   - pkg-config validates it and reads the project's version from it;
#   - every path derives from ${pcfiledir} (no absolute prefix);
#   - Libs.private names the C++ runtime, which a C program linking a static
#     libctxkit needs;
#   - static build: Requires.private is present, each module in it is known to
#     pkg-config, `pkg-config --static --libs ctxkit` succeeds and contains
#     each module's libraries, and Cflags define CTXKIT_STATIC_DEFINE;
#   - shared build: no Requires.private (pkg-config would add those modules'
#     Cflags to every consumer) and no CTXKIT_STATIC_DEFINE.
#
# Options: --pc-file FILE, --pkg-config PROGRAM, --shared 0|1, --version X.Y.Z.
set -euo pipefail

die() { echo "install.pc_flags: FAIL: $*" >&2; exit 1; }

declare -A opt=([pc-file]="" [pkg-config]="" [shared]="" [version]="")
# shellcheck source=SCRIPTDIR/parse_options.sh
source "$(dirname "${BASH_SOURCE[0]}")/parse_options.sh"
parse_options "$@"
pc=${opt[pc-file]}
pkg_config=${opt[pkg-config]}
shared=${opt[shared]}
[[ -f $pc ]] || die "$pc does not exist (was ctxkit configured with CTXKIT_INSTALL?)"
[[ -n $pkg_config && $pkg_config != *NOTFOUND ]] ||
  die "pkg-config was not found when ctxkit was configured (install pkgconf)"
[[ $shared == 0 || $shared == 1 ]] || die "--shared must be 0 or 1"
[[ -n ${opt[version]} ]] || die "missing --version"

echo "--- $pc"
cat "$pc"
echo "---"

# The value of a field ("Libs.private: ...") or empty when absent.
field() { sed -n "s/^$1:[[:space:]]*//p" "$pc"; }

# --- The file as written ----------------------------------------------------
# shellcheck disable=SC2016 # a literal ${pcfiledir}
grep -q '^prefix=\${pcfiledir}' "$pc" || die "prefix does not derive from \${pcfiledir}"
if bad=$(grep -nE '^[^#]*(^|[=[:space:]])(-[IL])?/' "$pc"); then
  die "absolute paths in $pc: $bad"
fi
libs_private=$(field 'Libs\.private')
[[ " $libs_private " == *" -lstdc++ "* || " $libs_private " == *" -lc++ "* ]] ||
  die "Libs.private ('$libs_private') lacks the C++ runtime (-lstdc++)"
requires_private=$(field 'Requires\.private')

# --- As pkg-config reads it -------------------------------------------------
pc_dir=$(dirname "$pc")
export PKG_CONFIG_PATH="$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
"$pkg_config" --validate ctxkit || die "pkg-config --validate ctxkit failed"
pc_version=$("$pkg_config" --modversion ctxkit) || die "pkg-config --modversion failed"
[[ $pc_version == "${opt[version]}" ]] ||
  die "pkg-config says version '$pc_version', expected '${opt[version]}'"

cflags=$("$pkg_config" --cflags ctxkit) || die "pkg-config --cflags ctxkit failed"
static_libs=$("$pkg_config" --static --libs ctxkit) ||
  die "pkg-config --static --libs ctxkit failed"
echo "pkg-config --cflags ctxkit:        $cflags"
echo "pkg-config --static --libs ctxkit: $static_libs"
[[ " $static_libs " == *" -lctxkit "* ]] || die "--static --libs lacks -lctxkit"
[[ " $static_libs " == *" -lstdc++ "* || " $static_libs " == *" -lc++ "* ]] ||
  die "--static --libs lacks the C++ runtime"

if ((shared)); then
  [[ -z $requires_private ]] ||
    die "a shared ctxkit.pc has Requires.private ($requires_private)"
  [[ " $cflags " != *" -DCTXKIT_STATIC_DEFINE "* ]] ||
    die "a shared ctxkit.pc defines CTXKIT_STATIC_DEFINE"
else
  [[ -n $requires_private ]] || die "a static ctxkit.pc has no Requires.private"
  [[ " $cflags " == *" -DCTXKIT_STATIC_DEFINE "* ]] ||
    die "a static ctxkit.pc does not define CTXKIT_STATIC_DEFINE"
  # Modules are separated by commas or spaces and may carry a version
  # constraint ("lmdb >= 0.9").
  modules=()
  read -r -a words <<<"${requires_private//,/ }"
  for ((i = 0; i < ${#words[@]}; ++i)); do
    case ${words[i]} in
      '<' | '<=' | '=' | '!=' | '>=' | '>') ((++i)) ;;
      *) modules+=("${words[i]}") ;;
    esac
  done
  ((${#modules[@]} > 0)) || die "cannot parse Requires.private: $requires_private"
  for module in "${modules[@]}"; do
    "$pkg_config" --exists "$module" ||
      die "Requires.private module '$module' is unknown to pkg-config"
    module_libs=$("$pkg_config" --libs "$module") || die "pkg-config --libs $module failed"
    for flag in $module_libs; do
      [[ $flag == -l* ]] || continue
      [[ " $static_libs " == *" $flag "* ]] ||
        die "--static --libs ctxkit lacks $flag of Requires.private module $module"
    done
    echo "Requires.private $module: resolved"
  done
fi

echo "install.pc_flags: all checks passed"
