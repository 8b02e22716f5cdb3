#!/bin/sh
# Static checks of the CUDA code (kernels/cuda) that need nvcc but no GPU, so
# the first GPU run does not find them: each .cu file is compiled for sm_90
# (the H200) with the Makefile's optimisation flags and -Xptxas -v, keeping
# the PTX.
#   no-local-memory   no kernel or device function has spill stores/loads or
#                     a stack frame (local memory: spills or a register array
#                     indexed at run time)
#   w4a16-instances   exactly one W4A16 kernel per M = 1..16 (w4_pick's
#                     `if constexpr`: a plain `if` compiles the unused
#                     variant of every M too, some of which spill)
#   w4a16-v4-loads    every W4A16 kernel reads its weights with 128-bit
#                     streaming loads (ld.global.cs.v4.u32) and with no
#                     narrower streaming load
#   attn-v4-loads     the attention kernels read K/V tiles with 128-bit loads
#   launch-checked    every <<<...>>> launch in kernels/cuda is followed by
#                     CU_LAUNCH_CHECK() within 3 lines
#   no-dropped-status no statement in kernels/cuda starts with a cuda*/cublas*
#                     call whose status is dropped (wrap it in CU_TRY,
#                     CUBLAS_TRY or CU_IGNORE)
# Without nvcc on the PATH (the Makefile then builds no CUDA code) it prints
# a skip line and no PASS/FAIL. About 10 s on 2 cores.
. "$(dirname "$0")/lib.sh"

# The checks read sources, not a build: once per suite run is enough.
case "$BUILD" in
*asan*) echo "skip cuda-static: build-independent, checked with the optimised build"; exit 0 ;;
esac
if ! command -v nvcc >/dev/null 2>&1; then
    echo "skip cuda-static: no nvcc on the PATH, so no CUDA code is built here"
    exit 0
fi

flags="-O3 -std=c++17 -Ikernels -Isim --generate-code arch=compute_90,code=sm_90 -Xptxas -v"
for f in kernels/cuda/*.cu; do
    b=$(basename "$f" .cu)
    echo "$b"
done >"$TMP/units"
# Two compilations at a time; each unit gets its own keep directory.
# shellcheck disable=SC2016  # $1 and $flags expand in the inner shell
xargs -P 2 -I{} sh -c 'mkdir -p "$0/{}" && nvcc $1 --keep --keep-dir "$0/{}" -c -o "$0/{}/{}.o" \
    "kernels/cuda/{}.cu" >"$0/{}/ptxas.txt" 2>&1 || echo "{}" >>"$0/failed"' \
    "$TMP" "$flags" <"$TMP/units"
if [ -s "$TMP/failed" ]; then
    while read -r b; do
        fail "cuda-static-compile" "nvcc failed on kernels/cuda/$b.cu: $(head -c 600 "$TMP/$b/ptxas.txt")"
    done <"$TMP/failed"
    exit 0
fi
pass "cuda-static-compile"

# Function properties for NAME / N bytes stack frame, N bytes spill stores, N
# bytes spill loads: any nonzero number is local memory.
bad=$(while read -r b; do
    awk -v unit="$b" '
        /Function properties for/ { fn = $NF }
        /bytes stack frame/ {
            if ($1 + 0 != 0 || $5 + 0 != 0 || $9 + 0 != 0)
                print unit ": " fn ": " $0
        }' "$TMP/$b/ptxas.txt"
done <"$TMP/units")
funcs=$(cat "$TMP"/*/ptxas.txt | grep -c 'bytes stack frame')
if [ -z "$bad" ] && [ "$funcs" -gt 0 ]; then pass "cuda-static-no-local-memory"; else
    fail "cuda-static-no-local-memory" "($funcs functions seen) $bad"; fi

w4=$(grep -c "Compiling entry function '_Z17w4a16_gemv_kernel" "$TMP/w4a16_cuda/ptxas.txt")
if [ "$w4" -eq 16 ]; then pass "cuda-static-w4a16-instances"; else
    fail "cuda-static-w4a16-instances" "$w4 W4A16 kernels compiled for sm_90, expected 16 (one per M)"; fi

# Per .entry of the PTX: counts of 128-bit and of narrower streaming loads.
# $1 = ptx file, $2 = entry-name pattern, $3 = load prefix; prints
# "name wide narrow" per matching entry.
entry_loads() {
    awk -v pat="$2" -v pre="$3" '
        /^\.visible \.entry|^\.entry/ { name = $NF; sub(/\(.*/, "", name); inside = (name ~ pat); w = 0; n = 0; next }
        inside && index($0, pre) {
            if (index($0, pre ".v4.")) w++; else n++
        }
        inside && /^}/ { print name, w, n; inside = 0 }' "$1"
}
entry_loads "$TMP/w4a16_cuda/w4a16_cuda.ptx" w4a16_gemv_kernel ld.global.cs >"$TMP/w4loads"
nw=$(wc -l <"$TMP/w4loads")
badw=$(awk '$2 < 1 || $3 > 0' "$TMP/w4loads")
if [ "$nw" -eq 16 ] && [ -z "$badw" ]; then pass "cuda-static-w4a16-v4-loads"; else
    fail "cuda-static-w4a16-v4-loads" "$nw entries; without v4 or with narrow ld.global.cs: $badw"; fi

entry_loads "$TMP/attn_cuda/attn_cuda.ptx" attn_split_kernel ld.global.nc >"$TMP/atloads"
na=$(wc -l <"$TMP/atloads")
bada=$(awk '$2 < 2' "$TMP/atloads")
if [ "$na" -eq 2 ] && [ -z "$bada" ]; then pass "cuda-static-attn-v4-loads"; else
    fail "cuda-static-attn-v4-loads" "$na entries (expected D = 64, 128); without v4 K/V loads: $bada"; fi

# (Two launches before one check, as in an if/else, are both covered: the
# runtime's last error stays set until it is read.)
unchecked=$(awk '
    FNR == 1 && pending { print pf ":" at; pending = 0 }
    /<<</ { if (!pending) { at = FNR; pf = FILENAME } pending = 1; left = 3; next }
    pending && /CU_LAUNCH_CHECK\(\)/ { pending = 0; next }
    pending && --left < 0 { print pf ":" at; pending = 0 }
    END { if (pending) print pf ":" at }' kernels/cuda/*.cu)
launches=$(grep -c '<<<' kernels/cuda/*.cu | awk -F: '{ s += $2 } END { print s + 0 }')
if [ -z "$unchecked" ] && [ "$launches" -gt 0 ]; then pass "cuda-static-launch-checked"; else
    fail "cuda-static-launch-checked" "($launches launches) not followed by CU_LAUNCH_CHECK: $unchecked"; fi

# A statement (the previous code line ended with ; { or }) that begins with a
# cuda*/cublas* call drops that call's status.
dropped=$(awk '
    FNR == 1 { prev = ";" }
    /^[ \t]*(cuda|cublas)[A-Za-z0-9_]*\(/ { if (prev ~ /[;{}]$/) print FILENAME ":" FNR ": " $0 }
    { line = $0; sub(/[ \t]*\/\/.*$/, "", line); sub(/[ \t]+$/, "", line); if (line != "") prev = line }' \
    kernels/cuda/*.cu kernels/cuda/*.cuh)
if [ -z "$dropped" ]; then pass "cuda-static-no-dropped-status"; else
    fail "cuda-static-no-dropped-status" "$dropped"; fi
