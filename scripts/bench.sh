#!/bin/sh
# bench.sh BUILD — `make bench`: simulator speed and memory, then the kernel
# and sweep benchmarks when their scripts exist. Figures are measured side by
# side in this one run; compare ratios, not absolute numbers, across machines.
set -eu
build=${1:-build}
sim=$build/specsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field NAME FILE: a metric's value from a --json result.
field() { sed -n -E "s/^ *\"$1\": *([^,}]*),?$/\\1/p" "$2"; }

# run_bench LABEL SCENARIO [--set ...]: events/s and peak RSS of one run.
run_bench() {
    label=$1; shift
    /usr/bin/time -f '%M' -o "$tmp/rss" "$sim" run "$@" --json --quiet >"$tmp/out.json"
    ev=$(field events "$tmp/out.json")
    wall=$(field wall_s "$tmp/out.json")
    eps=$(field events_per_s "$tmp/out.json")
    rss=$(cat "$tmp/rss")
    printf '%-34s events %12.0f  wall %7.3f s  %6.2f M events/s  peak RSS %8d KiB\n' \
        "$label" "$ev" "$wall" "$(echo "$eps" | awk '{print $1/1e6}')" "$rss"
    echo "$rss" >"$tmp/rss.$label"
}

echo "== simulator (one core)"
# Long runs, so that set-up is a small part of the wall time measured.
run_bench default scenarios/default.yaml --set replications=1 --set duration=3000s
run_bench tenants-10k scenarios/bench/tenants-10k.yaml
run_bench tenants-10k-4x-time scenarios/bench/tenants-10k.yaml --set duration=80s
run_bench tenants-1 scenarios/bench/tenants-10k.yaml --set tenants.count=1 --set cloud.replicas=1
r1=$(cat "$tmp/rss.tenants-1"); r10k=$(cat "$tmp/rss.tenants-10k"); r4x=$(cat "$tmp/rss.tenants-10k-4x-time")
awk -v a="$r1" -v b="$r10k" -v c="$r4x" 'BEGIN {
    printf "peak memory per tenant: %.2f KiB ((RSS 10k - RSS 1) / 9999)\n", (b - a) / 9999
    printf "memory growth with 4x simulated time: %+.1f%% (RSS %d -> %d KiB)\n", 100 * (c - b) / b, b, c }'

for s in scripts/bench-kernels.sh scripts/bench-sweep.sh; do
    if [ -x "$s" ]; then echo; "$s" "$build"; fi
done
