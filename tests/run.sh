#!/bin/sh
# tests/run.sh BUILD_DIR... — runs every test binary and CLI test against each
# build directory and ends with the line `N passed, N failed`.
#
# Test binaries and CLI scripts print `PASS name` / `FAIL name`, one per test;
# a binary or script that exits non-zero without printing a FAIL line (a crash,
# a sanitizer report) is counted as one failure more.
set -u
cd "$(dirname "$0")/.." || exit 1
pass=0
fail=0
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT

run_one() { # $1 = label, rest = command
    label=$1; shift
    t0=$(date +%s)
    "$@" >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - t0 ))
    p=$(grep -c '^PASS ' "$log")
    f=$(grep -c '^FAIL ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
        echo "--- $label (exit $rc)"
        grep -v '^PASS ' "$log" | tail -n 60
    fi
    # The seconds let a slow test be found from CI's log alone: the whole
    # suite is meant to stay under about 15 minutes on 2 cores.
    echo "$label: $p passed, $f failed (${secs} s)"
    pass=$((pass + p))
    fail=$((fail + f))
}

for build in "$@"; do
    for t in "$build"/tests/unit/test_* "$build"/tests/kernels/test_* "$build"/tests/llm/test_*; do
        [ -x "$t" ] || continue
        case "$t" in *.d) continue ;; esac
        run_one "$t" "$t"
    done
    for s in tests/cli/*.sh; do
        [ -f "$s" ] || continue
        case "$s" in */lib.sh) continue ;; esac
        run_one "$s [$build]" env BUILD="$build" sh "$s"
    done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
