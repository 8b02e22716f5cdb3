#!/bin/sh
# scripts/bench-sweep.sh [BUILD] — sweep throughput (make bench): points per
# second of a 1,000-point sweep of short runs with -j 1 and -j 2, and the
# speedup of -j 2 over -j 1 (target >= 1.8 on an otherwise idle machine with
# at least two cores). Both runs must write byte-identical files.
set -eu
build=${1:-build}
sim=$build/specsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 10 x 10 x 10 = 1,000 points; each a 20 s simulated run of 4 tenants with
# fixed service times (a few milliseconds of CPU).
cat >"$tmp/bench.yaml" <<'YAML'
name: bench-sweep
seed: 1
duration: 20s
warmup: 1s
replications: 1
protocol: {mode: async, gamma: 4, window: 4}
acceptance: {model: iid, alpha: 0.8}
tenants:
  count: 4
  edge: {draft_time: 10ms}
  network: {rtt: 40ms, jitter: {dist: exponential, mean: 2ms}}
  workload: {prompt_tokens: 16, output_tokens: 128}
cloud:
  verify_time: 5ms
sweep:
  acceptance.alpha: {from: 0.5, to: 0.95, step: 0.05}
  protocol.gamma: {from: 1, to: 10, step: 1}
  tenants.network.rtt: {from: 10ms, to: 100ms, step: 10ms}
YAML

now() { date +%s.%N; }
run() { # JOBS -> seconds
    t0=$(now)
    "$sim" sweep "$tmp/bench.yaml" -j "$1" --quiet --force --out "$tmp/j$1.csv"
    t1=$(now)
    echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}
echo "== sweep (1,000 points of 20 s simulated, 4 tenants)"
s1=$(run 1)
s2=$(run 2)
rows=$(($(wc -l <"$tmp/j1.csv") - 1))
same=no
cmp -s "$tmp/j1.csv" "$tmp/j2.csv" && same=yes
awk -v s1="$s1" -v s2="$s2" -v n="$rows" -v same="$same" 'BEGIN {
    printf "-j 1: %6.3f s  %8.1f points/s\n", s1, n / s1
    printf "-j 2: %6.3f s  %8.1f points/s\n", s2, n / s2
    printf "speedup of -j 2 over -j 1: %.2fx (target >= 1.8x); files identical: %s\n", s1 / s2, same }'
[ "$rows" -eq 1000 ] && [ "$same" = yes ]
