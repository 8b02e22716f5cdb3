#!/bin/sh
# bench-kernels.sh BUILD — the kernel part of `make bench`: W4A16 GEMV rate
# (exact and int8 kernels, M = 1 and 8) and its fraction of the measured read
# ceilings (one and several streams per thread), next to fp16 and fp32 GEMV
# (same SIMD path, same shapes, same run), for the widest SIMD path and, on
# AVX-512 machines, for the AVX2 path too; then, when LLAMA_CPP names a
# llama.cpp (or ggml) checkout, the same shapes beside llama.cpp's q4_0
# product (scripts/bench-ggml-anchor.sh), else a SKIP line. Figures depend on
# machine load: the header line prints the load average.
set -eu
build=${1:-build}
cal=$build/calibrate
[ -x "$cal" ] || { echo "bench-kernels: $cal not built" >&2; exit 1; }
"$cal" --bench
if grep -q avx512bw /proc/cpuinfo 2>/dev/null && grep -q ' avx2' /proc/cpuinfo; then
    echo
    "$cal" --bench --isa avx2
fi
echo
./scripts/bench-ggml-anchor.sh "$build"
