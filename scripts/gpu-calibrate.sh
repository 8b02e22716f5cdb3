#!/usr/bin/env bash
# scripts/gpu-calibrate.sh — the one prepared GPU run (issue 5), meant to
# finish in under 8 minutes on an H200:
#   1. build (make all; CUDA parts need nvcc)
#   2. the CUDA tests (make test-gpu)
#   3. build/calibrate --device cuda for llama-2-7b, llama-3-8b, llama-2-70b,
#      each --quant fp16 (cloud verify: linear M = 1..1024, attention, whole
#      steps when the model fits; 70B does not, so per-layer shapes only) and
#      --quant w4a16 (GPU-class edge drafting: GEMV M = 1..16 beside cuBLAS)
#   4. a summary: W4A16 GEMV GB/s and fraction of the copy ceiling, speedup
#      over the cuBLAS FP16 GEMV at M = 1, verify GEMM time vs roofline by M.
# Output: $OUT when set (the device tool returns at most 8 files, so there:
# gpu-calibrate.log, gpu-summary.txt and gpu-calibration.tar.gz holding the
# tables and their CSV logs, refreshed after every step); else
# results/calibration/ (tables NAME.yaml + NAME.csv, the log and summary).
# One failing model or step is reported and the rest still run; the exit
# status is 1 if anything failed.
#
#   scripts/gpu-calibrate.sh                 run it (on the GPU machine)
#   scripts/gpu-calibrate.sh --fetch-deps    (on a machine with apt) download
#       the GSL and libyaml .debs into .deps/, for a GPU machine whose image
#       lacks them; the run unpacks them under /tmp when pkg-config finds none.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PKGS=(libgsl-dev libgsl27 libgslcblas0 libyaml-dev libyaml-0-2)
if [ "${1:-}" = "--fetch-deps" ]; then
    mkdir -p .deps
    grep -qs '^/.deps/$' .git/info/exclude || echo /.deps/ >> .git/info/exclude
    (cd .deps && apt-get download "${DEB_PKGS[@]}")
    ls -l .deps
    exit 0
fi

T0=$(date +%s)
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
MODELS=${MODELS:-"llama-2-7b llama-3-8b llama-2-70b"}
STEP_TIMEOUT=${STEP_TIMEOUT:-240}

if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    dest=$(mktemp -d /tmp/specsim-gpucal.XXXXXX)
    logf=$OUT/gpu-calibrate.log
    sumf=$OUT/gpu-summary.txt
else
    dest=results/calibration
    mkdir -p "$dest"
    logf=$dest/gpu-calibrate.log
    sumf=$dest/gpu-summary.txt
fi
: >"$logf"
: >"$sumf"
failed=()

say() { echo "$*" | tee -a "$sumf" "$logf"; }

pack() {   # refresh the archive under $OUT (no-op without OUT)
    [ -n "${OUT:-}" ] || return 0
    if tar czf "$OUT/gpu-calibration.tar.gz.tmp" -C "$dest" .; then
        mv "$OUT/gpu-calibration.tar.gz.tmp" "$OUT/gpu-calibration.tar.gz"
    fi
}

# step NAME CMD...: runs CMD with its output appended to the log, times it,
# records failure instead of stopping.
step() {
    local name=$1 s e rc
    shift
    s=$(date +%s)
    echo "=== $name: $*" >>"$logf"
    set +e
    "$@" >>"$logf" 2>&1
    rc=$?
    set -e
    e=$(date +%s)
    say "step $name: $([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)") in $((e - s)) s"
    [ $rc -eq 0 ] || failed+=("$name")
    pack
    return 0
}

# Dependencies: use carried .debs when the image has no GSL / libyaml.
if ! pkg-config --exists gsl yaml-0.1 2>/dev/null && [ -d .deps ]; then
    dd=/tmp/specsim-deps
    mkdir -p "$dd"
    for f in .deps/*.deb; do dpkg -x "$f" "$dd"; done
    lib=$(dirname "$(find "$dd" -name 'libgsl.so*' | head -n 1)")
    export C_INCLUDE_PATH="$dd/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
    export CPLUS_INCLUDE_PATH="$dd/usr/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"
    export LIBRARY_PATH="$lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    say "deps: GSL/libyaml unpacked from .deps into $dd"
fi

say "gpu-calibrate: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
        --format=csv 2>&1 | tee -a "$sumf" "$logf" || true
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
else
    gpu=unknown-gpu
fi
slug=$(echo "${gpu:-gpu}" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
say "tables: $dest/$slug-MODEL-QUANT.yaml${OUT:+ (archived in \$OUT/gpu-calibration.tar.gz)}"

step build make BUILD="$BUILD" -j"$JOBS" all
if [ ! -x "$BUILD/calibrate" ]; then
    say "build produced no $BUILD/calibrate: stopping"
    exit 1
fi
step gpu-tests timeout 600 make BUILD="$BUILD" test-gpu
grep -E '^(FAIL |[0-9]+ passed, [0-9]+ failed)' "$logf" | tail -n 20 | tee -a "$sumf" || true

for m in $MODELS; do
    for q in fp16 w4a16; do
        tab=$dest/$slug-$m-$q.yaml
        s=$(date +%s)
        set +e
        timeout "$STEP_TIMEOUT" "$BUILD/calibrate" --device cuda --model "models/llm/$m.yaml" \
            --quant "$q" --out "$tab" >>"$sumf" 2>>"$logf"
        rc=$?
        set -e
        e=$(date +%s)
        if [ $rc -eq 0 ] && [ -s "$tab" ]; then
            say "step calibrate $m $q: ok in $((e - s)) s ($(grep -c '{op:' "$tab") rows)"
        else
            say "step calibrate $m $q: FAILED (exit $rc) in $((e - s)) s; last log lines:"
            tail -n 3 "$logf" | tee -a "$sumf"
            failed+=("calibrate-$m-$q")
            rm -f "$tab"
        fi
        pack
    done
done

cp "$logf" "$dest/" 2>/dev/null || true
cp "$sumf" "$dest/" 2>/dev/null || true
pack
say "total: $(( $(date +%s) - T0 )) s"
if [ ${#failed[@]} -gt 0 ]; then
    say "FAILED steps: ${failed[*]}"
    exit 1
fi
say "all steps passed"
