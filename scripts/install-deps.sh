#!/bin/sh
# Installs the Debian packages specsim builds against. Idempotent: when every
# package is already present it does nothing (no apt-get update, no network).
set -eu
pkgs="libgsl-dev libyaml-dev gnuplot-nox pkg-config make gcc time"
# On x86-64, the AArch64 cross compiler and user-mode QEMU let `make test` run
# the NEON kernels (Apple M-series, Raspberry Pi 5 edges) against the scalar
# references (tests/cli/neon-qemu.sh); an AArch64 host runs them natively.
case "$(uname -m)" in
x86_64 | amd64) pkgs="$pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static" ;;
esac
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
