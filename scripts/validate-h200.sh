#!/bin/sh
# scripts/validate-h200.sh [SPECSIM] — puts the measurements this project
# made on an NVIDIA H200 (docs/validation.md, "An H200, measured here")
# through `specsim step` on the h200 card and prints, as Markdown, one table
# row per measurement and a summary per group: rows, median and worst
# |error|, median speed ratio (specsim's speed / the measured speed).
#
#   results/validation/h200-gemm.csv      linear layers through cuBLAS(Lt)
#       (torch.matmul for fp16, torch._scaled_mm for fp8 e4m3), timed by
#       scripts/gpu-fp8-gemm.py          -> step linear --op SHAPE --tokens M
#   results/validation/h200-hf-steps.csv  whole forward steps in Hugging
#       Face transformers, as it comes (groups "hf") and with its forward
#       compiled by TorchInductor (groups "inductor": fused element-wise
#       kernels, as gpt-fast runs), timed by
#       scripts/gpu-hf-steps.py          -> step decode --batch B --tokens Q
#                                           --context C, or step prefill
#                                           --prompt N; the measured time is
#                                           the smaller of graph replay
#                                           (graph_ms) and the kernels' sum
#                                           (kernel_ms), in practice mostly
#                                           the kernel sum (below)
# Neither kernel library nor engine is this project's code. The whole steps
# are compared with overhead 0: a graph replay has no framework time
# between kernels, which is what cloud.overhead stands for.
# H200_CARD=FILE asks another hardware card than models/hardware/h200.yaml
# (a what-if: another roofline_p, say). Exit status 0, or 1 when an input is
# missing or a specsim call failed.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
specsim=${1:-$root/build/specsim}
case $specsim in
/*) ;;
*/*) specsim=$(pwd)/$specsim ;;
*) specsim=$(command -v "$specsim" || echo "$specsim") ;;
esac
[ -x "$specsim" ] || { echo "validate-h200: $specsim: not an executable (run make)" >&2; exit 1; }
cd "$root"
card=${H200_CARD:-h200}
gemm=results/validation/h200-gemm.csv
steps=results/validation/h200-hf-steps.csv
for f in "$gemm" "$steps"; do
    [ -f "$f" ] || { echo "validate-h200: $f: no such file" >&2; exit 1; }
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# time_s of one `specsim step` call (its CSV's time_s column), or "error".
step_time() {
    "$specsim" step "$@" --hardware "$card" 2>"$tmp/err" |
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "time_s") c = i }
                 NR == 2 { print $c }' >"$tmp/t" || true
    if [ -s "$tmp/t" ]; then cat "$tmp/t"; else echo error; fi
}

# Rows: group, setting, measured us, specsim us.
: >"$tmp/rows"
# GEMMs: group by precision and by side of the ridge (M <= 128 reads the
# weights; M >= 512 is compute-bound on an H200; 256 is near the ridge).
tail -n +2 "$gemm" | while IFS=, read -r gpu model shape n k m dtype us tflops gbs; do
    prec=$dtype
    [ "$dtype" = fp8-e4m3 ] && prec=fp8
    t=$(step_time linear --model "$model" --precision "$prec" --op "$shape" --tokens "$m")
    if [ "$m" -le 128 ]; then side="M<=128"; elif [ "$m" -le 256 ]; then side="M=256"; else side="M>=512"; fi
    echo "gemm $prec $side|$model $shape ${n}x$k M$m $prec|$us|$t" >>"$tmp/rows"
done
# Whole steps: the smaller of graph_ms (the replayed graph, with the gaps
# between kernels) and kernel_ms (the GPU's busy time); the kernel sum in
# 46 of the 53 transformers rows, and replay was the slower by far for the
# longest prefills.
tail -n +2 "$steps" | while IFS=, read -r eng ver tv gpu model phase b q m ctx eager graph kern; do
    ms=$(awk -v g="$graph" -v k="$kern" 'BEGIN { print (g == "" || k + 0 < g + 0) ? k : g }')
    # transformers as it comes ("hf"), or compiled by TorchInductor.
    case $eng in *inductor) pre=inductor ;; *) pre=hf ;; esac
    if [ "$phase" = prefill ]; then
        t=$(step_time prefill --model "$model" --prompt "$q")
        grp="$pre prefill"; set="$model prefill N$q"
    else
        t=$(step_time decode --model "$model" --batch "$b" --tokens "$q" --context "$ctx")
        if [ "$q" -eq 1 ]; then grp="$pre decode"; else grp="$pre verify"; fi
        set="$model B$b x Q$q C$ctx"
    fi
    echo "$grp|$set|$(awk -v x="$ms" 'BEGIN { printf "%.4f", x * 1000 }')|$t" >>"$tmp/rows"
done

awk -F'|' '
function abs(x) { return x < 0 ? -x : x }
function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
BEGIN {
    print "| group | setting | measured (us) | specsim (us) | error % | speed ratio |"
    print "|---|---|---:|---:|---:|---:|"
}
{
    if ($4 == "error") { bad++; printf "| %s | %s | %s | error | - | - |\n", $1, $2, $3; next }
    t = $4 * 1e6; e = 100 * (t - $3) / $3
    printf "| %s | %s | %.1f | %.1f | %+.1f | %.2f |\n", $1, $2, $3, t, e, $3 / t
    g = $1; if (!(g in cnt)) order[++ng] = g
    cnt[g]++; err[g, cnt[g]] = abs(e); rat[g, cnt[g]] = $3 / t
    if (abs(e) > worst[g]) worst[g] = abs(e)
}
END {
    print ""
    print "| group | rows | median \\|error\\| % | worst \\|error\\| % | median speed ratio |"
    print "|---|---:|---:|---:|---:|"
    for (i = 1; i <= ng; i++) {
        g = order[i]; n = cnt[g]
        for (j = 1; j <= n; j++) { a[j] = err[g, j]; r[j] = rat[g, j] }
        me = median(a, n); mr = median(r, n)
        printf "| %s | %d | %.1f | %.1f | %.2f |\n", g, n, me, worst[g], mr
    }
    exit bad > 0
}' "$tmp/rows"
