#!/usr/bin/env bash
# The installed vramplan works away from the source and build trees: `cmake --install` into a
# temporary prefix, and the .deb that `cpack -G DEB` makes, installed by dpkg itself (`dpkg -i`
# into a scratch root with its own package database: --root, so the system is left alone;
# --force-not-root so it also runs unprivileged; --force-depends because that database has no libc6),
# then removed again (`dpkg -r` must leave no file behind). Each copy must find its catalogue under
# <prefix>/share/vramplan when run from an unrelated folder, and its bash completion must complete
# a subcommand, an option and a GPU id.
#   bash tests/install/install_smoke.sh BUILD_DIR        (ctest runs it as Install.SmokeFromPrefixAndDeb)
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/elsewhere"

fail() { echo "install_smoke: $*" >&2; exit 1; }

smoke() {  # $1 = the installed prefix
  local exe=$1/bin/vramplan out
  [[ -x $exe ]] || fail "no executable at $exe"
  # A fitting check: the default planning job on a built-in model and GPU, exit code 0.
  out=$(cd "$tmp/elsewhere" && env -u VRAMPLAN_DATA "$exe" check --model llama-3.1-8b --gpu h100-sxm-80 \
          --max-model-len 8192 --json) || fail "$exe check exited $?"
  grep -q '"schema": "vramplan.check/1"' <<<"$out" || fail "$exe check: no vramplan.check/1 document"
  grep -q '"verdict": "FITS"' <<<"$out" || fail "$exe check: not FITS"
  # Completion, through the installed script and executable.
  local completion=$1/share/bash-completion/completions/vramplan
  [[ -f $completion ]] || fail "no completion script at $completion"
  (
    PATH="$1/bin:$PATH"
    # shellcheck source=/dev/null
    source "$completion"
    complete_line() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _vramplan; echo "${COMPREPLY[*]}"; }
    [[ $(complete_line vramplan simu) == simulate ]] || fail "completion of 'simu': $(complete_line vramplan simu)"
    [[ $(complete_line vramplan plan --max-model-l) == --max-model-len ]] || fail "completion of '--max-model-l'"
    [[ " $(complete_line vramplan check --gpu h10) " == *" h100-sxm-80 "* ]] || fail "completion of '--gpu h10'"
  )
}

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
smoke "$tmp/prefix"

(cd "$build" && cpack -G DEB -B "$tmp/deb" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB failed"; }
debs=("$tmp"/deb/*.deb)
[[ -f ${debs[0]} ]] || fail "cpack made no .deb"
deb=${debs[0]}
[[ $(dpkg-deb -f "$deb" Package) == vramplan ]] || fail "$deb: package name $(dpkg-deb -f "$deb" Package)"
dpkg-deb -f "$deb" Depends | grep -q libc6 || fail "$deb: Depends does not name libc6: $(dpkg-deb -f "$deb" Depends)"
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
dpkg_root=(dpkg --root="$root" --force-not-root --force-script-chrootless)
"${dpkg_root[@]}" --force-depends -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i $deb failed"; }
"${dpkg_root[@]}" -s vramplan | grep -q '^Status: install ok installed' || fail "dpkg does not list vramplan as installed"
smoke "$root/usr"
"${dpkg_root[@]}" -r vramplan >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -r vramplan failed"; }
[[ ! -e $root/usr/bin/vramplan && ! -e $root/usr/share/vramplan ]] || fail "dpkg -r left files behind"
echo "install_smoke: prefix and .deb ($(basename "$deb"), dpkg -i / -r) both run from $tmp/elsewhere"
