#!/bin/sh
# The NEON kernels, run where they can be: on an x86-64 host, the kernel
# tests (tests/kernels/test_{gemv,attn,w4a16,convert,cpuid}.c: every SIMD
# path against the scalar references) are cross-compiled for AArch64 and run
# under user-mode QEMU, so the path Apple M-series and Raspberry Pi edges
# take is checked on every `make test`, not only compiled. Each test's own
# PASS/FAIL lines are counted. Skipped (no PASS/FAIL) without the cross
# compiler or QEMU (scripts/install-deps.sh installs both), on a host that
# is itself AArch64 (the normal build runs NEON there), and for the ASan
# build directory (the same sources, checked once). About 20 s on 2 cores.
. "$(dirname "$0")/lib.sh"

case "$BUILD" in
*asan*) echo "skip neon-qemu: checked with the optimised build"; exit 0 ;;
esac
case "$(uname -m)" in
aarch64 | arm64) echo "skip neon-qemu: AArch64 host, NEON runs in the normal build"; exit 0 ;;
esac
CC_A64=${CC_A64:-aarch64-linux-gnu-gcc}
QEMU=${QEMU:-qemu-aarch64-static}
if ! command -v "$CC_A64" >/dev/null 2>&1 || ! command -v "$QEMU" >/dev/null 2>&1; then
    echo "skip neon-qemu: no $CC_A64 or $QEMU (scripts/install-deps.sh installs them)"
    exit 0
fi

flags="-std=c11 -O2 -static -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE"
flags="$flags -Isim -Ikernels -Itests"
# The kernels without the calibration driver (it needs GSL and libyaml,
# which have no AArch64 build here), plus the error, clock and thread
# modules they use.
srcs="kernels/attn.c kernels/convert.c kernels/cpuid.c kernels/gemv.c kernels/gemv_avx2.c
      kernels/gemv_avx512.c kernels/gemv_neon.c kernels/membw.c kernels/ref.c
      kernels/w4a16.c sim/base/err.c sim/base/thread.c sim/base/wallclock.c"
mkdir -p "$TMP/obj"
for s in $srcs; do
    # shellcheck disable=SC2086  # flags is a word list
    "$CC_A64" $flags -c -o "$TMP/obj/$(basename "$s" .c).o" "$s" 2>"$TMP/cc.err" ||
        { fail neon_cross_compile "$s: $(head -c 400 "$TMP/cc.err")"; exit 0; }
done
pass neon_cross_compile
for t in test_gemv test_attn test_w4a16 test_convert test_cpuid; do
    # shellcheck disable=SC2086
    if ! "$CC_A64" $flags -o "$TMP/$t" "tests/kernels/$t.c" "$TMP"/obj/*.o -lpthread -lm \
        2>"$TMP/cc.err"; then
        fail "neon_build_$t" "$(head -c 400 "$TMP/cc.err")"
        continue
    fi
    "$QEMU" "$TMP/$t" >"$TMP/$t.out" 2>&1
    rc=$?
    # The test's own lines, named as run under QEMU.
    grep -E '^(PASS|FAIL) ' "$TMP/$t.out" | sed "s/^\(PASS\|FAIL\) /\1 neon_${t#test_}_/"
    grep -q '^PASS ' "$TMP/$t.out" || fail "neon_$t" "no PASS line (exit $rc)"
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$TMP/$t.out"; then
        fail "neon_${t}_exit" "exit $rc: $(tail -c 300 "$TMP/$t.out")"
    fi
    if grep -q 'path neon not available' "$TMP/$t.out"; then
        fail "neon_${t}_path" "the NEON path was not available under QEMU"
    fi
done
exit 0
