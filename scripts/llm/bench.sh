#!/bin/sh
# scripts/llm/bench.sh [BUILD] — decode speed on the real model, ours
# against llama.cpp, side by side in one run (issue 22): SmolLM2-135M
# (scripts/fetch-model.sh), one sequence (M = 1) and 8 sequences decoding
# together (M = 8), each after a context of 128 tokens, at 1 and 2 threads.
#
#   ours       BUILD/llm bench (kernels/llm/cli_bench.c): the fp16 target
#              (the file's Q4_1 weights dequantised to fp16) and the W4A16
#              draft (groups of 128)
#   llama.cpp  scripts/llm/llamacpp-bench.py (the same definitions: context,
#              steps, logits of every row, median step) on the F16 copy of
#              the same weights (scripts/fetch-model.sh --f16: the peer of our
#              fp16) and on the Q4_1 file itself (llama.cpp's own 4-bit path:
#              groups of 32 with an fp16 scale and minimum, not our W4A16 of
#              groups of 128, so that ratio compares two 4-bit kernels, not
#              one format)
#
# ROUNDS rounds (default 3) of one run of each system per thread count,
# interleaved (ours, llama.cpp F16, llama.cpp Q4_1; the next round in the
# reverse order), each run STEPS (default 16) decode steps. A cell of the
# table is the median over rounds of each run's median step, as tokens/s;
# the ratio is ours / llama.cpp (> 1: ours faster); "spread" is the
# slowest round's time over the fastest's (1.00: steady). THREADS (default
# "1 2") lists the thread counts. About 2 minutes on 2 quiet cores.
#
# Other processes on the CPUs distort the figures, llama.cpp's most: its
# threads wait for each other at every operation, so one thread
# descheduled stalls the step (at 2 threads on 2 busy cores its steps took
# 100× longer). The load average before the run is printed, with a warning
# when it is 0.5 or more, and the spread column shows the rounds' noise.
#
# Needs the model (fetched once; the network the first time) and the
# Python environment with llama-cpp-python (scripts/llm-venv.sh, built
# once). When either cannot be had: one line "llm-bench: what failed" on
# standard error, exit 1 (scripts/bench.sh reports it and goes on).
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
rounds=${ROUNDS:-3}
steps=${STEPS:-16}
threads=${THREADS:-1 2}
context=128
batch=8
die() { echo "llm-bench: $*" >&2; exit 1; }
case $rounds in '' | *[!0-9]*) die "ROUNDS must be a positive integer" ;; esac
case $steps in '' | *[!0-9]*) die "STEPS must be an integer >= 3" ;; esac
[ "$rounds" -ge 1 ] && [ "$steps" -ge 3 ] || die "ROUNDS >= 1 and STEPS >= 3"
[ -x "$build/llm" ] || die "$build/llm is not built (run make)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/llm-bench.XXXXXX") || die "cannot make a temporary directory"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
last() { tail -n 1 "$1" 2>/dev/null; }

model=$(scripts/fetch-model.sh 2>"$tmp/err") ||
    die "no model, comparison not run ($(last "$tmp/err"))"
f16=$(scripts/fetch-model.sh --f16 2>"$tmp/err") ||
    die "no F16 copy of the model, comparison not run ($(last "$tmp/err"))"
py=$(scripts/llm-venv.sh 2>"$tmp/err") ||
    die "no Python environment for llama.cpp, comparison not run ($(last "$tmp/err"))"
"$py" -c 'import llama_cpp' 2>"$tmp/err" ||
    die "llama-cpp-python does not import in $py ($(last "$tmp/err"))"

# run SYSTEM THREADS: one run; its lines "NAME M=X TOK tok/s MS ms/step ..."
# become rows "system weights threads M tok/s" in $tmp/rows.
run() {
    case $1 in
    ours) "$build/llm" bench --model "$model" --weights fp16,w4a16 --threads "$2" \
              --context $context --steps "$steps" --batch $batch >"$tmp/out" 2>"$tmp/err" ;;
    f16) "$py" scripts/llm/llamacpp-bench.py --model "$f16" --threads "$2" \
             --context $context --steps "$steps" --batch $batch >"$tmp/out" 2>"$tmp/err" ;;
    q4_1) "$py" scripts/llm/llamacpp-bench.py --model "$model" --threads "$2" \
              --context $context --steps "$steps" --batch $batch >"$tmp/out" 2>"$tmp/err" ;;
    esac || die "$1 at $2 threads failed: $(last "$tmp/err")"
    want=2; [ "$1" = ours ] && want=4
    awk -v t="$2" -v want=$want '
        $2 ~ /^M=/ && $4 == "tok/s" {
            sys = "ours"; w = $1
            if (w ~ /^llama\.cpp-/) { sys = "llama.cpp"; sub(/^llama\.cpp-/, "", w) }
            m = $2; sub(/^M=/, "", m); print sys, w, t, m, $3; n++ }
        END { exit n != want }' "$tmp/out" >>"$tmp/rows" ||
        die "$1 at $2 threads did not print $want results: $(last "$tmp/out")"
}

start=$(date +%s)
load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
: >"$tmp/rows"
for t in $threads; do
    r=1
    while [ "$r" -le "$rounds" ]; do
        if [ $((r % 2)) = 1 ]; then order="ours f16 q4_1"; else order="q4_1 f16 ours"; fi
        for s in $order; do run "$s" "$t"; done
        r=$((r + 1))
    done
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "SmolLM2-135M decode, context $context, $steps steps a run, median of $rounds interleaved rounds;"
echo "${cpu:-this CPU}, $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') CPUs online, load average ${load0:-?} before the run"
if [ -n "${load0:-}" ] && awk -v l="$load0" 'BEGIN { exit !(l >= 0.5) }'; then
    echo "warning: the CPUs were busy before the run (load ${load0}); the figures, those at 2 threads most, may not be the systems' own"
fi
awk '
    { k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4; v[k, ++n[k]] = $5
      if (!(k in seen)) { seen[k] = 1; key[++nk] = k } }
    function med(k,   i, j, a, m, t) {
        m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        sp[k] = a[1] > 0 ? a[m] / a[1] : 0
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
    END {
        printf "%-10s %-7s %7s %3s %10s %7s   %s\n", "system", "weights", "threads", "M", "tok/s", "spread", "ours/llama.cpp"
        for (i = 1; i <= nk; i++) x[key[i]] = med(key[i])
        # rows: per thread count and M, ours fp16, llama.cpp f16, ours w4a16, llama.cpp q4_1
        for (i = 1; i <= nk; i++) {
            split(key[i], f, SUBSEP); if (f[1] != "ours" || f[2] != "fp16") continue
            t = f[3]; m = f[4]
            pair("fp16", "f16", t, m); pair("w4a16", "q4_1", t, m)
        }
    }
    function pair(ours, peer, t, m,   a, b) {
        a = "ours" SUBSEP ours SUBSEP t SUBSEP m; b = "llama.cpp" SUBSEP peer SUBSEP t SUBSEP m
        if (!(a in x) || !(b in x)) return
        printf "%-10s %-7s %7d %3d %10.1f %7.2f   %.2f (vs %s)\n", "ours", ours, t, m, x[a], sp[a], x[a] / x[b], peer
        printf "%-10s %-7s %7d %3d %10.1f %7.2f\n", "llama.cpp", peer, t, m, x[b], sp[b]
    }' "$tmp/rows"
echo "q4_1 is llama.cpp's Q4_1 (groups of 32, fp16 scale and minimum: 5 bits a weight), not our W4A16"
echo "(groups of 128: 4.125 bits a weight); that ratio compares two 4-bit kernels, not one format."
echo "($(($(date +%s) - start)) s)"
