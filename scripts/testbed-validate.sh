#!/bin/sh
# scripts/testbed-validate.sh [BUILD] — the simulator's error against the
# testbed (docs/testbed.md): runs every scenario of scenarios/testbed/ on
# build/testbed (real processes, sockets and timers) and with `specsim run`,
# prints metric × (testbed, simulator, error %) and draws the
# predicted-vs-measured figure results/figures/testbed-validate.{pdf,png}.
#   SIM_REPS=N   replications of the simulator's prediction (default 20:
#                its own sampling noise then stays well under the testbed's)
#   LM_REPS=N    testbed replications of a real-model scenario (default 3:
#                one replication's queue delay and ITL p99 move by about
#                10% from one run to the next on this project's VM)
#   SCENARIOS="a.yaml b.yaml"  only these (default: scenarios/testbed/*.yaml)
# Error = (simulator - testbed) / testbed. Data: results/testbed/ (ignored).
#
# Scenarios named real-*.yaml (but real-draft*) run the testbed with
# --real-verify (the target
# really computed on one CPU core). Just before, this script calibrates the
# target on this machine (build/calibrate --device cpu --quant fp16
# --threads 1 --quick) and the simulator predicts twice: from that table
# (operator rows), and from the table plus whole verify steps of batches
# (`build/testbed steps`), so that the table shows where the error comes from.
# Scenarios named real-model-*.yaml run a real model end to end
# (--real-model: SmolLM2-135M from scripts/fetch-model.sh, W4A16 drafts,
# fp16 verification, acceptance from real tokens); this script measures the
# target's operator rows on this machine once (build/calibrate), the
# verifier's whole steps just before each such scenario (`build/testbed
# steps --real-model`), and the simulator predicts from that table and the
# acceptance trace the scenario replays.
# Scenarios named real-draft*.yaml run the testbed with --real-draft (tenant
# 0's drafts really computed on one CPU core at tenants.edge.quant); just
# before, this script calibrates the draft model on this machine and both
# the testbed's emulated tenants and the simulator take their draft times
# from that table (--set tenants.edge.calibration=).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${SIM_REPS:-20}
lm_reps=${LM_REPS:-3}
out=results/testbed
fig=results/figures
[ -x "$build/testbed" ] && [ -x "$build/specsim" ] ||
    { echo "testbed-validate: $build/testbed or $build/specsim not built (run make)" >&2; exit 1; }
mkdir -p "$out" "$fig"
: >"$out/points.csv"   # scenario,metric,testbed,simulator (no header)
rm -f "$out/real-model.operators.yaml"   # measured afresh by each run

# The metrics the targets name, then a few more for context.
metrics="itl_mean_s itl_p99_s throughput_tok_s accepted_len_mean batch_mean queue_delay_mean_s ttft_mean_s edge_stall_frac gpu_util"

# row FILE: the CSV's data row as "name=value" lines.
pairs() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[i] = $i; next }
             NR == 2 { for (i = 1; i <= NF; i++) print h[i] "=" $i }' "$1"
}

# compare NAME TESTBED_CSV SIM_CSV: the rows of one comparison.
compare() {
    cname=$1
    pairs "$2" >"$out/$cname.tb.kv"
    pairs "$3" >"$out/$cname.sim.kv"
    printf '  %-20s %12s %12s %9s\n' metric testbed simulator error%
    for m in $metrics; do
        awk -F= -v m="$m" -v name="$cname" -v pts="$out/points.csv" '
            FNR == NR { if ($1 == m) tb = $2; next }
            $1 == m { sim = $2 }
            END {
                if (tb == "" || sim == "") exit
                e = (tb + 0 != 0) ? sprintf("%+.1f", 100 * (sim - tb) / tb) : "n/a"
                # queue delay under 1 ms: its relative error is not a target
                small = m == "queue_delay_mean_s" && tb + 0 < 1e-3
                if (small) e = e " (<1ms)"
                printf "  %-20s %12.6g %12.6g %9s\n", m, tb, sim, e
                # the figure shows the final prediction of each scenario only
                if (!small && name !~ /-ops$/ && tb + 0 > 0 && sim + 0 > 0) printf "%s,%s,%s,%s\n", name, m, tb, sim >> pts
            }' "$out/$cname.tb.kv" "$out/$cname.sim.kv"
    done
}

# As high a priority as allowed, for measurements on a shared machine.
fifo=""
command -v chrt >/dev/null 2>&1 && chrt -f 5 true 2>/dev/null && fifo="chrt -f 5"

for f in ${SCENARIOS:-scenarios/testbed/*.yaml}; do
    name=$(basename "$f" .yaml)
    case "$name" in
    real-draft*)
        card=$(sed -n 's/^    draft: *//p' "$f")
        quant=$(sed -n 's/^    quant: *//p' "$f")
        cal="$out/$name.calibration.yaml"
        echo "$name: calibrating $card ($quant) on this machine (about a minute)" >&2
        $fifo "$build/calibrate" --device cpu --quant "${quant:-w4a16}" --threads 1 --quick \
            --model "$card" --out "$cal" 2>/dev/null
        "$build/testbed" run "$f" --real-draft --set tenants.edge.calibration="$cal" \
            --out "$out/$name.testbed.csv" >/dev/null 2>"$out/$name.testbed.log"
        "$build/specsim" run "$f" --quiet --reps "$reps" --set tenants.edge.calibration="$cal" \
            --out "$out/$name.sim.csv" >/dev/null
        printf '\n%s (%s), real drafting by tenant 0; the fleet measured per draft token:\n' "$name" "$f"
        grep '^  draft ' "$out/$name.testbed.log" | sed 's/^/  /'
        printf '  (drafts, tokens, measured ms, service model ms from the table)\n'
        compare "$name" "$out/$name.testbed.csv" "$out/$name.sim.csv"
        ;;
    real-model-*)
        # A real model end to end (docs/llm.md): the testbed's tenants draft
        # with the W4A16 copy of the GGUF's model and its verifier runs the
        # fp16 target (testbed/lmserver.h); the simulator takes the verify
        # times from a table of the target measured here: operator rows
        # once per run, then the verifier's own whole steps just before
        # each scenario (this VM's step times drift by several percent
        # over minutes; all verify blocks are of 5 tokens) — and replays
        # the acceptance trace the scenario names.
        model=$(scripts/fetch-model.sh) || exit 1
        ops="$out/real-model.operators.yaml"
        if [ ! -s "$ops" ]; then
            echo "$name: calibrating $model on this machine (about a minute)" >&2
            $fifo "$build/calibrate" --device cpu --quant fp16 --threads 1 --quick \
                --model models/llm/smollm2-135m.yaml --out "$ops.tmp" 2>/dev/null
            mv "$ops.tmp" "$ops"
        fi
        cal="$out/$name.calibration.yaml"
        cp "$ops" "$cal.tmp"
        "$build/testbed" steps --real-model "$model" --gamma 4 --max-tokens 64 \
            --context 80 --reps 11 --prefill 40,56,80,120 >>"$cal.tmp"
        mv "$cal.tmp" "$cal"
        "$build/testbed" run "$f" --real-model "$model" --reps "$lm_reps" \
            --set cloud.calibration="$cal" --out "$out/$name.testbed.csv" \
            >/dev/null 2>"$out/$name.testbed.log"
        "$build/specsim" run "$f" --quiet --reps "$reps" --set cloud.calibration="$cal" \
            --out "$out/$name.sim.csv" >/dev/null
        printf '\n%s (%s), a real model end to end:\n' "$name" "$f"
        grep -E 'real (drafting|verifier)|ended after' "$out/$name.testbed.log" |
            sed 's/^testbed: /  /'
        compare "$name" "$out/$name.testbed.csv" "$out/$name.sim.csv"
        ;;
    real-*)
        card=$(sed -n 's/^  target: *//p' "$f")
        cal="$out/$name.calibration.yaml"
        echo "$name: calibrating $card on this machine (about a minute)" >&2
        $fifo "$build/calibrate" --device cpu --quant fp16 --threads 1 --quick \
            --model "$card" --out "$cal" 2>/dev/null
        cp "$cal" "$out/$name.steps.yaml"
        "$build/testbed" steps "$card" >>"$out/$name.steps.yaml"
        "$build/testbed" run "$f" --real-verify --set cloud.calibration="$cal" \
            --out "$out/$name.testbed.csv" >/dev/null 2>"$out/$name.testbed.log"
        "$build/specsim" run "$f" --quiet --reps "$reps" --set cloud.calibration="$cal" \
            --out "$out/$name.ops.sim.csv" >/dev/null
        "$build/specsim" run "$f" --quiet --reps "$reps" \
            --set cloud.calibration="$out/$name.steps.yaml" --out "$out/$name.sim.csv" >/dev/null
        printf '\n%s (%s), real verification; the verifier measured per batch size M:\n' "$name" "$f"
        grep '^  M=' "$out/$name.testbed.log" | sed 's/^/  /'
        printf '  (M, iterations, measured ms, service model ms from the operator rows)\n'
        printf '\n%s: simulator from the operator rows of the table\n' "$name"
        compare "$name-ops" "$out/$name.testbed.csv" "$out/$name.ops.sim.csv"
        printf '\n%s: simulator from the table with whole verify steps\n' "$name"
        compare "$name" "$out/$name.testbed.csv" "$out/$name.sim.csv"
        ;;
    *)
        "$build/testbed" run "$f" --quiet --out "$out/$name.testbed.csv" >/dev/null
        "$build/specsim" run "$f" --quiet --reps "$reps" --out "$out/$name.sim.csv" >/dev/null
        printf '\n%s (%s)\n' "$name" "$f"
        compare "$name" "$out/$name.testbed.csv" "$out/$name.sim.csv"
        ;;
    esac
done

printf '\nThe table for the README (scripts/accuracy-table.awk):\n\n'
awk -F, -f scripts/accuracy-table.awk "$out/points.csv"

if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "data='$out/points.csv'; out='$fig/testbed-validate'" scripts/testbed-validate.gp
    echo
    echo "figure: $fig/testbed-validate.pdf, .png"
fi
