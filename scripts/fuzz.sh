#!/bin/sh
# scripts/fuzz.sh BUILD SECONDS [TARGET...] — runs each libFuzzer target
# BUILD/fuzzers/fuzz_TARGET (built by `make fuzz`) for SECONDS of wall time
# on a scratch copy of its committed corpus tests/fuzz/corpus/TARGET, at the
# lowest CPU priority, one after the other. Default: every target.
#
# New inputs go to BUILD/fuzz-corpus/TARGET (the committed corpus is only
# read); crashes, sanitizer reports, leaks and hangs (-timeout, 10 s) to
# BUILD/fuzz-artifacts/. Each run's last lines (executions, exec/s, cov, ft)
# are printed; the log is BUILD/fuzz-logs/TARGET.log. To fold new coverage
# into the committed corpus, minimised:
#   BUILD/fuzzers/fuzz_T -merge=1 tests/fuzz/corpus/T BUILD/fuzz-corpus/T
# Exits 1 when some target found a problem.
set -u
cd "$(dirname "$0")/.." || exit 1
[ $# -ge 2 ] || { echo "usage: scripts/fuzz.sh BUILD SECONDS [TARGET...]" >&2; exit 2; }
build=$1 secs=$2
shift 2
case "$secs" in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$secs'" >&2; exit 2 ;; esac
if [ $# -eq 0 ]; then
    for f in tests/fuzz/fuzz_*.c; do
        t=${f#tests/fuzz/fuzz_}
        set -- "$@" "${t%.c}"
    done
fi
mkdir -p "$build/fuzz-artifacts" "$build/fuzz-logs" || exit 1
bad=0
for t in "$@"; do
    bin=$build/fuzzers/fuzz_$t
    [ -x "$bin" ] || { echo "fuzz.sh: $bin missing (make fuzz builds it)" >&2; exit 2; }
    work=$build/fuzz-corpus/$t
    mkdir -p "$work" || exit 1
    log=$build/fuzz-logs/$t.log
    echo "fuzz $t: ${secs}s, corpus tests/fuzz/corpus/$t (+ $work)"
    # stdin from /dev/null: nothing may wait on a terminal.
    nice -n 19 "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" \
        "$work" "tests/fuzz/corpus/$t" </dev/null >"$log" 2>&1
    rc=$?
    grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log"
    if [ "$rc" -ne 0 ]; then
        echo "FAIL fuzz $t (exit $rc): see $log"
        grep -E '^(fuzz:|==[0-9]+==ERROR|SUMMARY)|Test unit written' "$log" | head -n 5
        bad=1
    fi
done
exit "$bad"
