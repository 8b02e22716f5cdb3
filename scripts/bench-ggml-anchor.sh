#!/bin/sh
# bench-ggml-anchor.sh BUILD [CHECKOUT] — the anchor of the kernel benchmark:
# our CPU W4A16 GEMV beside llama.cpp's q4_0 ggml_mul_mat (plain and every
# repacked buffer type the CPU backend offers here) on the shapes of
# `calibrate --bench`, M = 1 and 8, in one process (scripts/ggml-anchor.c).
#
# CHECKOUT (or $LLAMA_CPP): a llama.cpp checkout (its ggml/ is used) or a
# ggml one, supplied by the user; nothing of it enters this repository. It
# is built with cmake (Release, GGML_NATIVE, static) in $ANCHOR_BUILD
# (default ${TMPDIR:-/tmp}/specsim-ggml-anchor), outside the tree, once.
# Threads: $ANCHOR_THREADS (default 2); $ANCHOR_QUICK=1: fewer samples.
# ggml's OpenMP threads spin at barriers by default, and go on spinning
# after a call: with the variants interleaved call by call, that spin takes
# the cores from the next call of ours (one run here put our int8 kernel
# at 1,419 us on 4096x11008 beside ggml's spinning threads, 743 us with
# them passive), and on a host shared with other busy processes it made
# every ggml call 10-100x slower. So OMP_WAIT_POLICY defaults to passive
# here; set it in the environment to measure otherwise.
# Without a checkout: prints SKIP.
set -eu
build=${1:-build}
src=${2:-${LLAMA_CPP:-}}
if [ -z "$src" ]; then
    echo "SKIP ggml anchor: set LLAMA_CPP=/path/to/llama.cpp (or a ggml checkout) to compare"
    exit 0
fi
if [ -f "$src/ggml/CMakeLists.txt" ]; then ggml=$src/ggml
elif [ -f "$src/CMakeLists.txt" ] && [ -d "$src/src/ggml-cpu" ]; then ggml=$src
else echo "bench-ggml-anchor: $src is neither a llama.cpp nor a ggml checkout" >&2; exit 2
fi
out=${ANCHOR_BUILD:-${TMPDIR:-/tmp}/specsim-ggml-anchor}
mkdir -p "$out"
if [ ! -f "$out/build/src/libggml-cpu.a" ]; then
    echo "building ggml from $ggml in $out (once)" >&2
    cmake -S "$ggml" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
        -DBUILD_SHARED_LIBS=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF >"$out/cmake.log"
    cmake --build "$out/build" -j 2 --target ggml ggml-base ggml-cpu >"$out/build.log"
fi
libs=$(pkg-config --libs gsl yaml-0.1 2>/dev/null || echo -lgsl -lgslcblas -lyaml -lm)
omp=
grep -q '^GGML_OPENMP_ENABLED:INTERNAL=ON' "$out/build/CMakeCache.txt" 2>/dev/null && omp=-fopenmp
${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -I"$ggml/include" -Ikernels -Isim \
    scripts/ggml-anchor.c -o "$out/ggml-anchor" "$build/libkernels.a" "$build/libspecsim.a" \
    "$out/build/src/libggml.a" "$out/build/src/libggml-cpu.a" "$out/build/src/libggml-base.a" \
    -lstdc++ $omp $libs -lpthread -lm
echo "ggml: $(git -C "$ggml" log -1 --format='%h %cd' --date=short 2>/dev/null || echo 'commit unknown'), OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}"
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} \
    "$out/ggml-anchor" --threads "${ANCHOR_THREADS:-2}" ${ANCHOR_QUICK:+--quick}
