#!/bin/sh
# scripts/llm/accept-compare.sh [BUILD] — how far each fitted acceptance
# model's prediction is from replaying the measured acceptance
# (docs/llm.md, "Measuring acceptance"). For the W4A16 draft's traces
# (scenarios/real/accept/w4a16-{greedy,sampled}.txt, written by
# scripts/llm/accept-measure.sh) it runs `specsim run` on
# scenarios/default.yaml (async, gamma 4, window 4) and on its sync variant
# (--set protocol.mode=sync), each with two workloads:
#   default  the scenario's own: closed loop, 1 s think time, output
#            lengths lognormal (mean 256, sd 128);
#   texts    the measured texts themselves: a request trace (written here)
#            whose row k asks for text k mod 124's length in tokens with
#            prompt k mod 124's length (scenarios/real/prompt-lengths.txt),
#            all queued at time 0, rows to tenants round robin, so request
#            r of tenant t is row t + 32 r and replays exactly its own
#            text;
# and each with these acceptance models:
#   replay/request  the trace replayed per request (acceptance.per_request:
#                   request r of tenant t replays text (t + 32 r) mod 124
#                   from its start, reading on into the next text if it
#                   outruns its own): the reference;
#   replay/line     the trace replayed as one stream, tenant t from line t
#                   (the trace model's default), for comparison;
#   iid, positional, beta, markov: each line of the trace's .fit file.
# It prints ITL mean and throughput (± 95% CI half-widths) and tokens
# committed per verdict, each with its error against replay/request. Every
# run: DURATION of simulated time (default 600s: a replay passes every text
# about ten times), REPS replications (default 10), the scenario's seed: the
# acceptance model is the only difference. About a minute.
#   ACCEPT_DIR: read the traces from another directory.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
reps=${REPS:-10}
duration=${DURATION:-600s}
dir=$(cd "${ACCEPT_DIR:-scenarios/real/accept}" && pwd)
[ -x "$build/specsim" ] || { echo "accept-compare: $build/specsim not built (run make)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/accept-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# sim CSV ARGS...: one `specsim run` of the default scenario into CSV; its
# warnings (a replay's start-up transient) kept unless it fails.
sim() {
    o=$1
    shift
    if ! "$build/specsim" run scenarios/default.yaml --quiet --reps "$reps" \
            --set duration="$duration" --out "$o" "$@" >/dev/null 2>"$tmp/err"; then
        cat "$tmp/err" >&2
        exit 1
    fi
}
# The columns the table reads: ITL mean and CI, throughput and CI, tokens
# per verdict.
cols() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
             NR == 2 { print $c["itl_mean_s"], $c["itl_mean_s_ci95"], $c["throughput_tok_s"],
                       $c["throughput_tok_s_ci95"], $c["accepted_len_mean"] }' "$1"
}
# texts_csv TRACE OUT: the request trace of the `texts` workload: per text
# (a `# request` line starts one) its outcomes + 1 tokens (the first comes
# from the prefill), 12 passes over the texts.
texts_csv() {
    awk 'FNR == NR { if ($1 !~ /^#/ && NF) pl[np++] = $1; next }
         /^# *request/ { n++; next }
         /^#/ || !NF { next }
         { len[n - 1] += length($1) }
         END {
             if (n < 1 || np < 1) exit 1
             print "time_s,prompt_tokens,output_tokens"
             for (k = 0; k < 12 * n; k++) print 0 "," pl[k % n % np] "," len[k % n] + 1
         }' scenarios/real/prompt-lengths.txt "$1" >"$2"
}

printf '%-8s %-6s %-8s %-15s %17s %7s %18s %7s %12s %7s\n' trace sync workload model \
    itl_mean_ms err% throughput_tok_s err% tok/verdict err%
for trace in greedy sampled; do
    t=$dir/w4a16-$trace.txt
    if [ ! -s "$t" ] || [ ! -s "$dir/w4a16-$trace.fit" ]; then
        echo "accept-compare: no $t or its .fit (scripts/llm/accept-measure.sh)" >&2
        exit 1
    fi
    texts_csv "$t" "$tmp/texts.csv" ||
        { echo "accept-compare: $t holds no '# request' lines" >&2; exit 1; }
    for mode in async sync; do
        for wl in default texts; do
            if [ $wl = texts ]; then
                set -- --set protocol.mode=$mode --set tenants.workload.arrival=trace \
                    --set tenants.workload.trace="$tmp/texts.csv"
            else
                set -- --set protocol.mode=$mode
            fi
            sim "$tmp/ref.csv" "$@" --set acceptance.model=trace --set acceptance.file="$t" \
                --set acceptance.per_request=true
            ref=$(cols "$tmp/ref.csv")
            row() { # NAME CSV
                echo "$ref $(cols "$2")" | awk -v tr=$trace -v mo=$mode -v wl=$wl -v n="$1" '{
                    ri = $1; rt = $3; ra = $5; i = $6; ic = $7; t = $8; tc = $9; a = $10
                    e = (n == "replay/request")
                    printf "%-8s %-6s %-8s %-15s %10.2f ±%5.2f %7s %11.1f ±%5.1f %7s %12.3f %7s\n",
                        tr, mo, wl, n, 1e3 * i, 1e3 * ic,
                        e ? "-" : sprintf("%+.1f%%", 100 * (i - ri) / ri), t, tc,
                        e ? "-" : sprintf("%+.1f%%", 100 * (t - rt) / rt), a,
                        e ? "-" : sprintf("%+.1f%%", 100 * (a - ra) / ra) }'
            }
            row replay/request "$tmp/ref.csv"
            sim "$tmp/line.csv" "$@" --set acceptance.model=trace --set acceptance.file="$t"
            row replay/line "$tmp/line.csv"
            while read -r name sets; do
                # shellcheck disable=SC2086  # the .fit line's --set words
                sim "$tmp/m.csv" "$@" $sets
                row "$name" "$tmp/m.csv"
            done <"$dir/w4a16-$trace.fit"
        done
    done
done
