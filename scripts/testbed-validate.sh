#!/bin/sh
# scripts/testbed-validate.sh [BUILD] — the simulator's error against the
# testbed (docs/testbed.md): runs every scenario of scenarios/testbed/ on
# build/testbed (real processes, sockets and timers) and with `specsim run`,
# prints metric × (testbed, simulator, error %) and draws the
# predicted-vs-measured figure results/figures/testbed-validate.{pdf,png}.
#   SIM_REPS=N   replications of the simulator's prediction (default 20:
#                its own sampling noise then stays well under the testbed's)
#   SCENARIOS="a.yaml b.yaml"  only these (default: scenarios/testbed/*.yaml)
# Error = (simulator - testbed) / testbed. Data: results/testbed/ (ignored).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${SIM_REPS:-20}
out=results/testbed
fig=results/figures
[ -x "$build/testbed" ] && [ -x "$build/specsim" ] ||
    { echo "testbed-validate: $build/testbed or $build/specsim not built (run make)" >&2; exit 1; }
mkdir -p "$out" "$fig"
: >"$out/points.csv"   # scenario,metric,testbed,simulator (no header)

# The metrics the targets name, then a few more for context.
metrics="itl_mean_s itl_p99_s throughput_tok_s accepted_len_mean batch_mean queue_delay_mean_s ttft_mean_s edge_stall_frac gpu_util"

# row FILE: the CSV's data row as "name=value" lines.
pairs() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[i] = $i; next }
             NR == 2 { for (i = 1; i <= NF; i++) print h[i] "=" $i }' "$1"
}

for f in ${SCENARIOS:-scenarios/testbed/*.yaml}; do
    name=$(basename "$f" .yaml)
    "$build/testbed" run "$f" --quiet --out "$out/$name.testbed.csv" >/dev/null
    "$build/specsim" run "$f" --quiet --reps "$reps" --out "$out/$name.sim.csv" >/dev/null
    pairs "$out/$name.testbed.csv" >"$out/$name.tb.kv"
    pairs "$out/$name.sim.csv" >"$out/$name.sim.kv"
    printf '\n%s (%s)\n' "$name" "$f"
    printf '  %-20s %12s %12s %9s\n' metric testbed simulator error%
    for m in $metrics; do
        awk -F= -v m="$m" -v name="$name" -v pts="$out/points.csv" '
            FNR == NR { if ($1 == m) tb = $2; next }
            $1 == m { sim = $2 }
            END {
                if (tb == "" || sim == "") exit
                e = (tb + 0 != 0) ? sprintf("%+.1f", 100 * (sim - tb) / tb) : "n/a"
                # queue delay under 1 ms: its relative error is not a target
                small = m == "queue_delay_mean_s" && tb + 0 < 1e-3
                if (small) e = e " (<1ms)"
                printf "  %-20s %12.6g %12.6g %9s\n", m, tb, sim, e
                if (!small && tb + 0 > 0 && sim + 0 > 0) printf "%s,%s,%s,%s\n", name, m, tb, sim >> pts
            }' "$out/$name.tb.kv" "$out/$name.sim.kv"
    done
done

if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "data='$out/points.csv'; out='$fig/testbed-validate'" scripts/testbed-validate.gp
    echo
    echo "figure: $fig/testbed-validate.pdf, .png"
fi
