#!/usr/bin/env bash
# install.consume: installs ctxkit from a build tree into a staging prefix,
# moves that prefix elsewhere (the CMake package and ctxkit.pc must be
# relocatable), then builds and runs a C and a C++ consumer against the moved
# prefix, each once through find_package(ctxkit) and once through pkg-config,
# and runs the installed ctxkit program.
#
# Every option is passed by tests/install/CMakeLists.txt; see there.
set -euo pipefail

die() { echo "install.consume: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

declare -A opt=(
  [build-dir]="" [source-dir]="" [config]="" [cmake]="" [generator]=""
  [make-program]="" [c-compiler]="" [cxx-compiler]="" [sanitize-flags]=""
  [shared]="" [version]="" [compat-version]="" [incompatible-version]=""
  [libdir]="" [includedir]="" [bindir]="" [program]="0" [pkg-config]=""
  [prefix-path]="")
# shellcheck source=SCRIPTDIR/parse_options.sh
source "$(dirname "${BASH_SOURCE[0]}")/parse_options.sh"
parse_options "$@"
for key in build-dir source-dir cmake generator c-compiler cxx-compiler shared \
           version compat-version incompatible-version libdir includedir bindir; do
  [[ -n ${opt[$key]} ]] || die "missing --$key"
done
[[ -n ${opt[pkg-config]} && ${opt[pkg-config]} != *NOTFOUND ]] ||
  die "pkg-config was not found when ctxkit was configured (install pkgconf)"

build=${opt[build-dir]}
src=${opt[source-dir]}
config=${opt[config]}
shared=${opt[shared]}
version=${opt[version]}
libdir=${opt[libdir]}
includedir=${opt[includedir]}
bindir=${opt[bindir]}
pkg_config=${opt[pkg-config]}
read -r -a san <<<"${opt[sanitize-flags]}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Runs a command quietly; on failure shows its output and stops.
run_logged() {
  local what=$1
  shift
  local log="$tmp/log.txt"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    die "$what failed: $*"
  fi
}

# Runs a consumer; it must print exactly OK and exit 0.
run_consumer() {
  local what=$1
  shift
  local scratch="$tmp/scratch-$what"
  mkdir -p "$scratch"
  local out rc=0
  out=$("$@" "$scratch" 2>"$tmp/stderr.txt") || rc=$?
  if ((rc != 0)) || [[ $out != OK ]]; then
    echo "--- stdout:" >&2
    echo "$out" >&2
    echo "--- stderr:" >&2
    cat "$tmp/stderr.txt" >&2
    die "$what exited with $rc and printed '$out' (expected OK and 0)"
  fi
  echo "   $what: OK"
}

# A shared consumer must load libctxkit from the moved prefix; a static one
# must not load it at all.
check_loaded_from() {
  local what=$1 exe=$2
  shift 2
  local deps
  deps=$(env "$@" ldd "$exe" 2>&1) || { echo "$deps" >&2; die "ldd $exe failed"; }
  local line
  line=$(grep 'libctxkit\.so' <<<"$deps" || true)
  if ((shared)); then
    local resolved
    resolved=$(awk '{print $3}' <<<"$line")
    [[ -n $resolved && $(realpath "$resolved") == "$(realpath "$prefix")"/* ]] ||
      { echo "$deps" >&2; die "$what loads libctxkit from '${resolved:-nowhere}', not from $prefix"; }
  else
    [[ -z $line ]] || { echo "$deps" >&2; die "$what of a static ctxkit needs libctxkit.so"; }
  fi
}

# --------------------------------------------------------------------------
step "install ${build} into a staging prefix"
stage="$tmp/stage"
install_args=(--install "$build" --prefix "$stage")
[[ -n $config ]] && install_args+=(--config "$config")
run_logged "cmake --install" "${opt[cmake]}" "${install_args[@]}"

expected=(
  "$includedir/ctxkit/c.h" "$includedir/ctxkit/export.h"
  "$includedir/ctxkit/version.h" "$includedir/ctxkit/status.h"
  "$includedir/ctxkit/store.h"
  "$libdir/cmake/ctxkit/ctxkitConfig.cmake"
  "$libdir/cmake/ctxkit/ctxkitConfigVersion.cmake"
  "$libdir/cmake/ctxkit/ctxkitTargets.cmake"
  "$libdir/cmake/ctxkit/CtxkitFindPkg.cmake"
  "$libdir/pkgconfig/ctxkit.pc")
IFS=. read -r major minor _ <<<"$version"
if ((shared)); then
  expected+=("$libdir/libctxkit.so" "$libdir/libctxkit.so.$major.$minor"
             "$libdir/libctxkit.so.$version")
else
  expected+=("$libdir/libctxkit.a")
fi
[[ ${opt[program]} == 1 ]] && expected+=("$bindir/ctxkit")
for f in "${expected[@]}"; do
  [[ -e $stage/$f ]] || die "the install lacks $f"
done
if ((shared)); then
  [[ $(readlink "$stage/$libdir/libctxkit.so") == "libctxkit.so.$major.$minor" ]] ||
    die "libctxkit.so does not link to libctxkit.so.$major.$minor"
fi

# --------------------------------------------------------------------------
step "move the prefix"
prefix="$tmp/moved/one/level/deeper/prefix"
mkdir -p "$(dirname "$prefix")"
mv "$stage" "$prefix"
[[ ! -e $stage ]] || die "$stage still exists after the move"
# No package file may name the staging prefix or the build tree.
if hits=$(grep -rlF -e "$stage" -e "$(realpath "$build")" \
            "$prefix/$libdir/cmake" "$prefix/$libdir/pkgconfig"); then
  die "package files name the staging prefix or the build tree: $hits"
fi

# --------------------------------------------------------------------------
cmake_consumer() {
  local lang=$1
  local bin="$tmp/build-cmake-$lang"
  step "CMake consumer ($lang): find_package(ctxkit ${opt[compat-version]})"
  local prefix_path="$prefix"
  [[ -n ${opt[prefix-path]} ]] && prefix_path+=";${opt[prefix-path]//:/;}"
  local args=(
    -S "$src/consumer_$lang" -B "$bin" -G "${opt[generator]}"
    --no-warn-unused-cli
    "-DCMAKE_C_COMPILER=${opt[c-compiler]}"
    "-DCMAKE_CXX_COMPILER=${opt[cxx-compiler]}"
    "-DCMAKE_C_FLAGS=${san[*]}" "-DCMAKE_CXX_FLAGS=${san[*]}"
    "-DCMAKE_EXE_LINKER_FLAGS=${san[*]}"
    "-DCMAKE_PREFIX_PATH=$prefix_path"
    "-DCTXKIT_COMPAT_VERSION=${opt[compat-version]}"
    "-DCTXKIT_INCOMPATIBLE_VERSION=${opt[incompatible-version]}"
    "-DCTXKIT_EXPECTED_VERSION=$version"
    "-DCTXKIT_EXPECTED_PREFIX=$prefix"
    "-DCTXKIT_EXPECTED_SHARED=$shared")
  [[ -n $config ]] && args+=("-DCMAKE_BUILD_TYPE=$config")
  [[ -n ${opt[make-program]} ]] && args+=("-DCMAKE_MAKE_PROGRAM=${opt[make-program]}")
  run_logged "configuring the CMake $lang consumer" "${opt[cmake]}" "${args[@]}"
  run_logged "building the CMake $lang consumer" "${opt[cmake]}" --build "$bin"
  local exe="$bin/consumer_$lang"
  [[ -x $exe ]] || die "the CMake $lang consumer built no $exe"
  # CMake's build RPATH must find the moved libctxkit on its own.
  check_loaded_from "cmake-$lang" "$exe" -u LD_LIBRARY_PATH
  run_consumer "cmake-$lang" env -u LD_LIBRARY_PATH "$exe"
}
cmake_consumer c
cmake_consumer cxx

# --------------------------------------------------------------------------
step "pkg-config consumers"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pc_version=$("$pkg_config" --modversion ctxkit) || die "pkg-config cannot find ctxkit"
[[ $pc_version == "$version" ]] || die "pkg-config says ctxkit $pc_version, expected $version"
pc_prefix=$("$pkg_config" --variable=prefix ctxkit)
[[ $(realpath -m "$pc_prefix") == "$(realpath "$prefix")" ]] ||
  die "ctxkit.pc's prefix is $pc_prefix, not the moved $prefix"
pc_args=(--cflags --libs)
((shared)) || pc_args+=(--static)
pc_flags=$("$pkg_config" "${pc_args[@]}" ctxkit) ||
  die "pkg-config ${pc_args[*]} ctxkit failed"
echo "   pkg-config ${pc_args[*]} ctxkit: $pc_flags"
read -r -a pc_flags <<<"$pc_flags"
run_env=(-u LD_LIBRARY_PATH)
((shared)) && run_env=("LD_LIBRARY_PATH=$prefix/$libdir")

warn=(-Wall -Wextra -Wpedantic -Werror -g)
exe="$tmp/pc-c"
run_logged "compiling the C consumer with pkg-config's flags" \
  "${opt[c-compiler]}" -std=c99 "${warn[@]}" "${san[@]}" \
  "$src/consumer_c/main.c" "${pc_flags[@]}" -o "$exe"
check_loaded_from pkg-config-c "$exe" "${run_env[@]}"
run_consumer pkg-config-c env "${run_env[@]}" "$exe"

exe="$tmp/pc-cxx"
run_logged "compiling the C++ consumer with pkg-config's flags" \
  "${opt[cxx-compiler]}" -std=c++20 "${warn[@]}" "${san[@]}" \
  "$src/consumer_cxx/main.cc" "${pc_flags[@]}" -o "$exe"
check_loaded_from pkg-config-cxx "$exe" "${run_env[@]}"
run_consumer pkg-config-cxx env "${run_env[@]}" "$exe"

# --------------------------------------------------------------------------
if [[ ${opt[program]} == 1 ]]; then
  step "installed program: ctxkit --version"
  # Its RUNPATH ($ORIGIN/../lib) must find the moved library by itself.
  check_loaded_from program "$prefix/$bindir/ctxkit" -u LD_LIBRARY_PATH
  rc=0
  out=$(env -u LD_LIBRARY_PATH "$prefix/$bindir/ctxkit" --version 2>&1) || rc=$?
  ((rc == 0)) || { echo "$out" >&2; die "ctxkit --version exited with $rc"; }
  [[ $out == *"$version"* ]] || die "ctxkit --version printed '$out', which lacks $version"
  echo "   $out"
else
  step "installed program: not built (CTXKIT_BUILD_PROGRAM=OFF), skipped"
fi

echo "install.consume: all checks passed"
