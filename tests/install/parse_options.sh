# shellcheck shell=bash
# Sourced by the install test drivers. parse_options "$@" reads "--name value"
# pairs into the associative array `opt`, which the caller declares with every
# accepted name and its default; anything else is reported through the
# caller's die().
parse_options() {
  while (($#)); do
    local key=${1#--}
    [[ $1 == --* && -v opt[$key] ]] || die "unknown argument '$1'"
    (($# >= 2)) || die "option $1 needs a value"
    # shellcheck disable=SC2004 # `opt` is associative: the $ is needed
    opt[$key]=$2
    shift 2
  done
}
