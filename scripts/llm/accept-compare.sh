#!/bin/sh
# scripts/llm/accept-compare.sh [BUILD] — how far each fitted acceptance
# model's prediction is from replaying the measured acceptance
# (docs/llm.md, "Measuring acceptance"): for the W4A16 draft's traces
# (scenarios/real/accept/w4a16-{greedy,sampled}.txt, scripts/llm/accept-measure.sh),
# `specsim run` on scenarios/default.yaml (async, window 4) and on its sync
# variant (--set protocol.mode=sync), with acceptance replayed from the
# trace and with each model of the trace's .fit file (iid, positional,
# beta, markov); prints ITL mean, throughput and tokens per verdict, and
# each model's error against the replay. REPS replications each (default
# 5), the same seed for all, so the acceptance model is the only
# difference. About a minute. ACCEPT_DIR: read the traces from another
# directory.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
reps=${REPS:-5}
dir=$(cd "${ACCEPT_DIR:-scenarios/real/accept}" && pwd)   # ACCEPT_DIR: another measurement
tmp=$(mktemp -d "${TMPDIR:-/tmp}/accept-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
col() { awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
                            NR == 2 && c { print $c }' "$1"; }
printf '%-8s %-7s %-10s %12s %9s %14s %9s %10s %9s\n' trace mode model itl_mean_ms err% \
    throughput err% accepted_len err%
for trace in greedy sampled; do
    [ -s "$dir/w4a16-$trace.txt" ] || { echo "accept-compare: no $dir/w4a16-$trace.txt" >&2; exit 1; }
    for mode in async sync; do
        # shellcheck disable=SC2086  # the .fit lines are --set words
        "$build/specsim" run scenarios/default.yaml --quiet --reps "$reps" \
            --set protocol.mode=$mode --set acceptance.model=trace \
            --set acceptance.file="$dir/w4a16-$trace.txt" --out "$tmp/trace.csv" >/dev/null
        ti=$(col "$tmp/trace.csv" itl_mean_s) tt=$(col "$tmp/trace.csv" throughput_tok_s)
        ta=$(col "$tmp/trace.csv" accepted_len_mean)
        printf '%-8s %-7s %-10s %12.2f %9s %14.1f %9s %10.3f %9s\n' $trace $mode replay \
            "$(echo "$ti" | awk '{ print 1e3 * $1 }')" - "$tt" - "$ta" -
        while read -r name sets; do
            # shellcheck disable=SC2086
            "$build/specsim" run scenarios/default.yaml --quiet --reps "$reps" \
                --set protocol.mode=$mode $sets --out "$tmp/m.csv" >/dev/null
            i=$(col "$tmp/m.csv" itl_mean_s) t=$(col "$tmp/m.csv" throughput_tok_s)
            a=$(col "$tmp/m.csv" accepted_len_mean)
            awk -v tr=$trace -v mo=$mode -v n="$name" -v i="$i" -v t="$t" -v a="$a" \
                -v ti="$ti" -v tt="$tt" -v ta="$ta" 'BEGIN {
                printf "%-8s %-7s %-10s %12.2f %+8.1f%% %14.1f %+8.1f%% %10.3f %+8.1f%%\n",
                    tr, mo, n, 1e3 * i, 100 * (i - ti) / ti, t, 100 * (t - tt) / tt,
                    a, 100 * (a - ta) / ta }'
        done <"$dir/w4a16-$trace.fit"
    done
done
