#!/bin/sh
# scripts/bench-sweep.sh [BUILD] — sweep throughput (make bench): points per
# second of a 1,000-point sweep of short runs with -j 1 and -j 2, and the
# speedup of -j 2 over -j 1 (target >= 1.8 on an otherwise idle machine with
# at least two cores). Both runs must write byte-identical files. Then
# 1,000 tiny points (where reading inputs once per sweep, not per point,
# shows), and `check` of a sweep whose one list axis holds 1,000 and 10,000
# values (linear when each value's check copies the scenario without the
# list). With SPECSIM_OLD=BINARY the tiny sweep and the checks also run with
# that binary, side by side in the same run, and its files must be
# byte-identical.
set -eu
build=${1:-build}
sim=$build/specsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The grid of both timed sweeps: 10 x 10 x 10 = 1,000 points.
grid() {
    cat <<'YAML'
sweep:
  acceptance.alpha: {from: 0.5, to: 0.95, step: 0.05}
  protocol.gamma: {from: 1, to: 10, step: 1}
  tenants.network.rtt: {from: 10ms, to: 100ms, step: 10ms}
YAML
}

# elapsed CMD... -> the wall seconds CMD took (3 decimals); its standard
# output is not wanted (a sweep with --out and --quiet prints none).
elapsed() {
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}

# The grid over a 20 s simulated run of 4 tenants with fixed service times
# (a few milliseconds of CPU each).
{
    cat <<'YAML'
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
YAML
    grid
} >"$tmp/bench.yaml"

run() { # JOBS -> seconds
    elapsed "$sim" sweep "$tmp/bench.yaml" -j "$1" --quiet --force --out "$tmp/j$1.csv"
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
[ "$rows" -eq 1000 ] && [ "$same" = yes ] || exit 1

# The grid over 0.2 s simulated with one tenant: a fraction of a
# millisecond a point, so per-point input handling is a visible share.
{
    cat <<'YAML'
name: tiny
duration: 0.2s
warmup: 0.1s
protocol: {mode: async, gamma: 4, window: 4}
acceptance: {model: iid, alpha: 0.8}
tenants:
  count: 1
  edge: {draft_time: 10ms}
  network: {rtt: 40ms}
  workload: {prompt_tokens: 16, output_tokens: 16}
cloud:
  verify_time: 5ms
YAML
    grid
} >"$tmp/tiny.yaml"
best() { # BINARY JOBS OUT -> best of 3 wall seconds
    b=$1; j=$2; o=$3; m=
    for _ in 1 2 3; do
        d=$(elapsed "$b" sweep "$tmp/tiny.yaml" -j "$j" --quiet --force --out "$o")
        m=$(echo "$d ${m:-1e9}" | awk '{ printf "%.3f", $1 < $2 ? $1 : $2 }')
    done
    echo "$m"
}
echo "== sweep of 1,000 tiny points (best of 3)"
bins="$sim"
[ -n "${SPECSIM_OLD:-}" ] && bins="${SPECSIM_OLD} $sim"
ok=yes
for b in $bins; do
    for j in 1 2; do
        t=$(best "$b" "$j" "$tmp/tiny-$j.csv")
        awk -v b="$b" -v j="$j" -v t="$t" 'BEGIN {
            printf "%-28s -j %d: %6.3f s  %8.1f points/s\n", b, j, t, 1000 / t }'
        if [ -f "$tmp/tiny-ref.csv" ]; then cmp -s "$tmp/tiny-ref.csv" "$tmp/tiny-$j.csv" || ok=no
        else cp "$tmp/tiny-$j.csv" "$tmp/tiny-ref.csv"; fi
    done
done
echo "tiny sweep files identical across binaries and -j: $ok"

echo "== check of a list axis of N values"
for n in 1000 10000; do
    awk -v n="$n" 'BEGIN {
        printf "duration: 1s\nwarmup: 0.1s\ntenants: {edge: {draft_time: 10ms}}\n"
        printf "cloud: {verify_time: 5ms}\nsweep:\n  seed: ["
        for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? ", " : ""), i
        printf "]\n" }' >"$tmp/list$n.yaml"
    for b in $bins; do
        t=$(elapsed "$b" check "$tmp/list$n.yaml")
        awk -v b="$b" -v n="$n" -v t="$t" 'BEGIN { printf "%-28s %6d values: %7.3f s\n", b, n, t }'
    done
done
[ "$ok" = yes ]
