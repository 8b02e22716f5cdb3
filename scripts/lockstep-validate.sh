#!/bin/sh
# scripts/lockstep-validate.sh [BUILD] — the simulator against the testbed on
# deterministic scenarios (scenarios/testbed/lockstep-*.yaml: fixed times, no
# jitter, no think time, 4 and 16 identical tenants, sync and async), with
# drift as the scenarios leave it (the defaults) and with drift off (perfect
# clocks), and prints one Markdown table (docs/guide.md, "Lockstep and
# drift"): per scenario and metric, the testbed, the simulator and the
# simulator's error, then the same without drift.
#   SIM_REPS=N   the simulator's replications (default 20)
#   TB_REPS=N    the testbed's (default 3: one replication's queue delay
#                moves by 10-20% from run to run on this project's VM)
#   SCENARIOS="a.yaml ..."  only these
# Error = (simulator - testbed) / testbed. Takes about 6 s a testbed
# replication (it runs in real time): 2 minutes with the defaults.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${SIM_REPS:-20}
tb_reps=${TB_REPS:-3}
[ -x "$build/testbed" ] && [ -x "$build/specsim" ] ||
    { echo "lockstep-validate: $build/testbed or $build/specsim not built (run make)" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
metrics="batch_mean gpu_util queue_delay_mean_s itl_mean_s throughput_tok_s"
off="--set drift.start=0s --set drift.edge=0 --set drift.cloud=0"

# col FILE NAME: a metric from a one-row run CSV.
col() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
                       NR == 2 && c { print $c }' "$1"
}
err() { awk -v s="$1" -v t="$2" 'BEGIN { if (t == 0) print "-"; else printf "%+.1f", 100 * (s - t) / t }'; }

echo "| scenario | metric | testbed | specsim | error % | testbed, no drift | specsim, no drift | error %, no drift |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for f in ${SCENARIOS:-scenarios/testbed/lockstep-*.yaml}; do
    n=$(basename "$f" .yaml)
    # shellcheck disable=SC2086  # $off is a list of options
    {
        "$build/testbed" run "$f" --quiet --reps "$tb_reps" --out "$tmp/tb.csv" >/dev/null
        "$build/specsim" run "$f" --quiet --reps "$reps" --out "$tmp/sim.csv" >/dev/null
        "$build/testbed" run "$f" --quiet --reps "$tb_reps" $off --out "$tmp/tb0.csv" >/dev/null
        "$build/specsim" run "$f" --quiet --reps "$reps" $off --out "$tmp/sim0.csv" >/dev/null
    }
    for m in $metrics; do
        t=$(col "$tmp/tb.csv" "$m") s=$(col "$tmp/sim.csv" "$m")
        t0=$(col "$tmp/tb0.csv" "$m") s0=$(col "$tmp/sim0.csv" "$m")
        printf '| %s | %s | %.4g | %.4g | %s | %.4g | %.4g | %s |\n' "$n" "$m" "$t" "$s" \
            "$(err "$s" "$t")" "$t0" "$s0" "$(err "$s0" "$t0")"
    done
done
