#!/bin/sh
# Installs the Debian packages specsim builds against. Idempotent: when every
# package is already present it does nothing (no apt-get update, no network).
#   install-deps.sh       everything `make test`, `make bench` and
#                         `make figures` use, and the optional packages below
#   install-deps.sh run   only what building and running build/specsim needs
#                         (`make run`): a newcomer's first command should not
#                         wait for gnuplot, Slurm, QEMU or a cross compiler
#   install-deps.sh fuzz  the default set plus clang and its libFuzzer and
#                         sanitizer runtimes (`make fuzz`); `make test`
#                         replays the fuzz corpora with gcc alone
set -eu
mode=${1:-}
case "$mode" in
"" | run | fuzz) ;;
*) echo "usage: install-deps.sh [run|fuzz]" >&2; exit 2 ;;
esac
# build/specsim: gcc, make and ar (binutils), GSL and libyaml found through
# pkg-config. Nothing else is compiled or run by `make run`.
pkgs="libgsl-dev libyaml-dev pkg-config make gcc binutils"
# The rest of the tree and its tests: gnuplot for the figures (and the
# figure-script tests), GNU time for the bench's memory figures.
[ "$mode" = run ] || pkgs="$pkgs gnuplot-nox time"
[ "$mode" = fuzz ] && pkgs="$pkgs clang libclang-rt-dev"
# Optional, not for `make run`: on x86-64, the AArch64 cross compiler and
# user-mode QEMU let `make test` run the NEON kernels (Apple M-series,
# Raspberry Pi 5 edges) against the scalar references
# (tests/cli/neon-qemu.sh, skipped without them); an AArch64 host runs them
# natively. Failing to install these only warns.
# Also optional: Slurm and munge, for the real single-node Slurm test
# (tests/slurm/run.sh, which installs them itself when they are missing).
optional="slurm-wlm munge"
case "$(uname -m)" in
x86_64 | amd64) optional="$optional gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static" ;;
esac
[ "$mode" = run ] && optional=""

# Not Debian (no dpkg-query, no apt-get): nothing can be installed here, so
# check what the build itself needs (a compiler, make, GSL and libyaml
# through pkg-config) and say what is missing; the optional tools only
# decide which tests skip, and those tests say so themselves.
if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    miss=""
    for c in "${CC:-cc}" make pkg-config ar; do
        command -v "$c" >/dev/null 2>&1 || miss="$miss $c"
    done
    command -v pkg-config >/dev/null 2>&1 && ! pkg-config --exists gsl yaml-0.1 &&
        miss="$miss gsl-and-libyaml-development-files"
    [ "$mode" = run ] || command -v gnuplot >/dev/null 2>&1 || miss="$miss gnuplot"
    if [ -n "$miss" ]; then
        echo "install-deps: not a Debian system, so nothing is installed; missing:$miss" >&2
        exit 1
    fi
    exit 0
fi

missing_of() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            printf ' %s' "$p"
    done
}
# shellcheck disable=SC2086  # word lists
need=$(missing_of $pkgs)
# shellcheck disable=SC2086
opt=$(missing_of $optional)
[ -z "$need$opt" ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    # Without root, only a sudo that needs no password can install; a
    # required package then stops here with what to install, an optional
    # one only means its tests skip.
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"
    else
        if [ -n "$need" ]; then
            echo "install-deps: not root and no password-less sudo; install:$need" >&2
            exit 1
        fi
        echo "install-deps: not root, so not installing (optional)$opt; the tests that need them skip" >&2
        exit 0
    fi
fi
export DEBIAN_FRONTEND=noninteractive
updated=0
if [ -n "$need" ]; then
    echo "install-deps: installing$need" >&2
    $SUDO apt-get update -qq >&2
    updated=1
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $need >&2
fi
if [ -n "$opt" ]; then
    echo "install-deps: installing (optional, for the NEON and Slurm tests)$opt" >&2
    # shellcheck disable=SC2086
    if ! { [ "$updated" -eq 1 ] || $SUDO apt-get update -qq >&2; } ||
       ! $SUDO apt-get install -y -qq --no-install-recommends $opt >&2; then
        echo "install-deps: could not install$opt; tests/cli/neon-qemu.sh will be skipped and tests/slurm/run.sh will try again" >&2
    fi
fi
exit 0
