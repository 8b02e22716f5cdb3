#!/bin/sh
# scripts/figures.sh [BUILD] — runs the paper sweeps of scenarios/paper/ and
# renders every figure into results/figures/ as PDF (papers) and PNG
# (README.md and docs/guide.md).
# Called by `make figures` (BUILD = the build directory, default build).
# Sweep data and their sidecars go to results/sweeps/paper/ (git-ignored).
#   JOBS=N            threads per sweep (default: number of cores)
#   FIGURES_RESUME=1  keep finished points of an earlier, identical sweep
#                     (default: every sweep starts over, so figures always
#                     come from the simulator as built)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
specsim=$build/specsim
out=results/figures
data=results/sweeps/paper
jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
mode=--force
[ "${FIGURES_RESUME:-0}" = 1 ] && mode=--resume

[ -x "$specsim" ] || { echo "figures: $specsim not built (run make)" >&2; exit 1; }
command -v gnuplot >/dev/null 2>&1 ||
    { echo "figures: gnuplot not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
if ! gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
    echo "figures: this gnuplot has no cairo terminals (pdfcairo, pngcairo);" \
         "install gnuplot-nox >= 5 or gnuplot-qt" >&2
    exit 1
fi
mkdir -p "$out" "$data"

t_all=$(date +%s)
t0=0
begin() { printf 'figures: %-18s ' "$1" >&2; t0=$(date +%s); }
end() { echo "$(( $(date +%s) - t0 )) s" >&2; }

# sweep_figure SCENARIO SCRIPT: sweep scenarios/paper/SCENARIO.yaml, plot it
# with scripts/SCRIPT.gp into results/figures/SCRIPT.{pdf,png}.
sweep_figure() {
    begin "$2"
    "$specsim" sweep "scenarios/paper/$1.yaml" -j "$jobs" $mode --quiet \
        --out "$data/$1.csv"
    gnuplot -c "scripts/$2.gp" "$data/$1.csv" "$out/$2"
    end
}
sweep_figure itl-vs-rtt itl-vs-rtt
sweep_figure speedup-alpha-gamma speedup-heatmap
sweep_figure tenants-vs-batch tenants-vs-batch
sweep_figure cost-vs-itl cost-vs-itl
sweep_figure gamma-policy-rtt gamma-policy-rtt
sweep_figure order-slo order-slo

# Where should the draft run? The edge-vs-cloud sweep once per variant
# (the --set lines that make it; scenarios/paper/edge-vs-cloud.yaml as it is
# is edge-chain), then edge-vs-cloud.awk names each point's winner per metric.
begin edge-vs-cloud
evc() { # evc VARIANT [--set K=V ...]
    v=$1; shift
    "$specsim" sweep scenarios/paper/edge-vs-cloud.yaml -j "$jobs" $mode --quiet "$@" \
        --out "$data/edge-vs-cloud-$v.csv"
}
evc edge-chain
evc edge-tree --set "protocol.tree={branching: [2, 2, 1, 1]}" --set protocol.gamma=14
evc cloud-draft --set protocol.mode=cloud-spec --set cloud.draft=models/llm/tinyllama-1.1b.yaml
evc cloud-heads --set protocol.mode=cloud-spec \
    --set "cloud.draft_heads={params: 0.37e9, flops_per_token: 0.75e9}"
evc cloud-only --set protocol.mode=cloud-only
awk -F, -f scripts/edge-vs-cloud.awk \
    v=edge-chain "$data/edge-vs-cloud-edge-chain.csv" v=edge-tree "$data/edge-vs-cloud-edge-tree.csv" \
    v=cloud-draft "$data/edge-vs-cloud-cloud-draft.csv" v=cloud-heads "$data/edge-vs-cloud-cloud-heads.csv" \
    v=cloud-only "$data/edge-vs-cloud-cloud-only.csv" >"$data/edge-vs-cloud.csv"
gnuplot -c scripts/edge-vs-cloud.gp "$data/edge-vs-cloud.csv" "$out/edge-vs-cloud" \
    "$(sed -n 's/^ *gpu_hour_usd: *\([0-9.]*\).*/\1/p' scenarios/paper/edge-vs-cloud.yaml)"
end

# SLO attainment needs a simulator with the `slo:` section and the
# slo_attainment metric; an older one refuses the scenario's `slo:` key, and
# then this figure alone is skipped (the committed PNG/PDF stay as they are).
begin slo-attainment
slo_scen=scenarios/paper/slo-attainment.yaml
if "$specsim" check "$slo_scen" >"$data/slo-attainment.resolved.yaml" 2>"$data/slo-attainment.err"; then
    "$specsim" sweep "$slo_scen" -j "$jobs" $mode --quiet --out "$data/slo-attainment.csv"
    if head -n 1 "$data/slo-attainment.csv" | tr , '\n' | grep -qx slo_attainment; then
        # "ttft: 0.5s" -> "500 ms" for the key's title.
        slo() { awk -v k="$1:" '/^slo:/ { f = 1; next } /^[^ ]/ { f = 0 }
            f && $1 == k { n = $2 + 0; u = $2; sub(/^[0-9.]+/, "", u)
                           if (u == "s" && n < 1) { n *= 1000; u = "ms" }
                           print n " " u }' "$data/slo-attainment.resolved.yaml"; }
        gnuplot -c scripts/slo-attainment.gp "$data/slo-attainment.csv" "$out/slo-attainment" \
            "$(slo ttft)" "$(slo tpot)"
        end
    else
        echo "skipped: this specsim's sweep has no slo_attainment column" >&2
    fi
elif grep -q 'slo' "$data/slo-attainment.err"; then
    echo "skipped: this specsim has no slo: section ($(head -n 1 "$data/slo-attainment.err"))" >&2
else
    cat "$data/slo-attainment.err" >&2
    exit 1
fi

begin timeline
"$specsim" run scenarios/paper/timeline.yaml --quiet \
    --trace "$data/timeline.trace.csv" >/dev/null
gnuplot -c scripts/timeline.gp "$data/timeline.trace.csv" "$out/timeline" 2.5 3
end

# Per-group ITL: derived from the event trace of replication 0 and the
# resolved scenario (which tenant is in which group) by group-itl.awk.
begin group-itl
"$specsim" check scenarios/paper/group-itl.yaml >"$data/group-itl.resolved.yaml"
"$specsim" run scenarios/paper/group-itl.yaml --quiet \
    --trace "$data/group-itl.trace.csv" >/dev/null
awk -F, -v out="$data/group-itl.cdf.csv" -v summary="$data/group-itl.summary.csv" \
    -f scripts/group-itl.awk "$data/group-itl.resolved.yaml" "$data/group-itl.trace.csv"
gnuplot -c scripts/group-itl.gp "$data/group-itl.cdf.csv" "$data/group-itl.summary.csv" \
    "$out/group-itl"
end

# ITL over a 10-minute phone session with and without the thermal model:
# the example scenario as it is, and on the SoC card (no thermal: section).
begin thermal-itl
"$specsim" run scenarios/examples/thermal.yaml --quiet \
    --trace "$data/thermal.trace.csv" >/dev/null
"$specsim" run scenarios/examples/thermal.yaml --quiet \
    --set tenants.edge.device=models/hardware/snapdragon-8-gen-3.yaml \
    --trace "$data/thermal-off.trace.csv" >/dev/null
awk -F, -f scripts/thermal-itl.awk "$data/thermal.trace.csv" >"$data/thermal.itl.csv"
awk -F, -f scripts/thermal-itl.awk "$data/thermal-off.trace.csv" >"$data/thermal-off.itl.csv"
gnuplot -c scripts/thermal-itl.gp "$data/thermal.itl.csv" "$data/thermal-off.itl.csv" \
    "$out/thermal-itl"
end

# ITL over time across a 10-second outage: sync, async, and async with
# protocol.fallback {mode: local} (the example scenario as it is).
begin fallback-itl
fb=scenarios/examples/fallback.yaml
"$specsim" run "$fb" --quiet --set protocol.mode=sync --set protocol.fallback.mode=off \
    --trace "$data/fallback-sync.trace.csv" >/dev/null
"$specsim" run "$fb" --quiet --set protocol.fallback.mode=off \
    --trace "$data/fallback-async.trace.csv" >/dev/null
"$specsim" run "$fb" --quiet --trace "$data/fallback-local.trace.csv" >/dev/null
for k in sync async local; do
    awk -F, -v bin=1 -v unit=s -f scripts/thermal-itl.awk "$data/fallback-$k.trace.csv" \
        >"$data/fallback-$k.itl.csv"
done
gnuplot -c scripts/fallback-itl.gp "$data/fallback-sync.itl.csv" \
    "$data/fallback-async.itl.csv" "$data/fallback-local.itl.csv" "$out/fallback-itl"
end

begin verify-roofline
if "$specsim" roofline --help >/dev/null 2>&1; then
    "$specsim" roofline scenarios/paper/roofline.yaml >"$data/roofline.csv"
    # Measured points: the first CUDA table for the target model in FP16.
    meas="" label=""
    for t in results/calibration/*.yaml; do
        [ -f "$t" ] || continue
        grep -q '^device_kind: *cuda' "$t" && grep -q '^model: *llama-2-7b *$' "$t" &&
            grep -q '^quant: *fp16' "$t" || continue
        "$specsim" roofline --measured "$t" >"$data/roofline-measured.csv" || continue
        [ "$(wc -l <"$data/roofline-measured.csv")" -gt 1 ] || continue
        meas="$data/roofline-measured.csv"
        label="measured: $(sed -n 's/^ *device: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$t" | head -n 1)"
        break
    done
    if [ -n "$meas" ]; then
        gnuplot -c scripts/verify-roofline.gp "$data/roofline.csv" "$out/verify-roofline" \
            "$meas" "$label"
    else
        gnuplot -c scripts/verify-roofline.gp "$data/roofline.csv" "$out/verify-roofline"
    fi
    end
else
    echo "skipped: this specsim has no roofline subcommand" >&2
fi
# The real model's measured acceptance beside the fitted models
# (scripts/llm/accept-measure.sh wrote the data; --refit rewrites the fits).
begin accept-real
if [ -s scenarios/real/accept/w4a16-greedy.dat ] && [ -s scenarios/real/accept/w4a16-sampled.dat ]; then
    gnuplot -c scripts/llm/accept-figure.gp scenarios/real/accept "$out/accept-real"
    end
else
    echo "skipped: no scenarios/real/accept/w4a16-*.dat" >&2
fi
# cairo stamps each PDF with the time it was drawn; a fixed stamp of the same
# length (xref offsets stay valid) makes the same data give the same bytes, so
# regenerated figures do not churn in git.
for f in "$out"/*.pdf; do
    [ -f "$f" ] || continue
    sed 's|/CreationDate (D:[0-9]\{14\}Z)|/CreationDate (D:20000101000000Z)|' "$f" >"$f.tmp" &&
        mv "$f.tmp" "$f"
done
echo "figures: done in $(( $(date +%s) - t_all )) s -> $out/" >&2
