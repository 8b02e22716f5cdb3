#!/bin/sh
# tests/run-gpu.sh BUILD_DIR — runs the CUDA tests (BUILD_DIR/tests/cuda/test_*)
# on a machine with an NVIDIA GPU; `make test-gpu` calls it. Prints each
# test's PASS/FAIL lines and ends with `N passed, N failed` (the same counting
# as tests/run.sh: a binary that exits non-zero without a FAIL line counts as
# one failure). Without a GPU, or without CUDA test binaries, it says why and
# exits 2: those tests cannot pass there, and must not look as if they had.
set -u
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "run-gpu: no NVIDIA GPU here (nvidia-smi missing or lists none): the CUDA tests" \
         "were compiled by make but cannot run. Run 'make test-gpu' on a GPU machine." >&2
    exit 2
fi
found=0
for t in "$build"/tests/cuda/test_*; do
    [ -x "$t" ] && found=1
done
if [ "$found" -eq 0 ]; then
    echo "run-gpu: no CUDA test binaries in $build/tests/cuda (was nvcc found when" \
         "building?)" >&2
    exit 2
fi

nvidia-smi -L
pass=0
fail=0
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
# Each binary takes seconds on an H200 (kernels/cuda/NOTES.md); a hang must
# not eat the one GPU run, so it is killed well before the script's budget.
to=""
command -v timeout >/dev/null 2>&1 && to="timeout ${CUDA_TEST_TIMEOUT:-120}"

for t in "$build"/tests/cuda/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.d) continue ;; esac
    start=$(date +%s)
    $to "$t" >"$log" 2>&1
    rc=$?
    cat "$log"
    p=$(grep -c '^PASS ' "$log")
    f=$(grep -c '^FAIL ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    [ "$rc" -ne 0 ] && echo "--- $t exited with status $rc"
    echo "$t: $p passed, $f failed ($(( $(date +%s) - start )) s)"
    pass=$((pass + p))
    fail=$((fail + f))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
