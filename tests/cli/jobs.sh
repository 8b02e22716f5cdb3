#!/bin/sh
# `specsim run -j N` (issue 27): replications on N threads give the same
# bytes for any N: the summary, --json, --out (CSV and JSON), --per-tenant
# rows and the --trace of a chosen replication, with `warmup: auto` too; a
# sweep with fewer points than -j threads (its replications share them)
# writes the file -j 1 writes; -j is validated as sweep's; an interrupt or a
# closed pipe during a threaded run leaves no temporary; the testbed refuses
# -j (its replications run in real time, one after another).
. "$(dirname "$0")/lib.sh"

# Three tenant groups, 5 replications, fixed service times: a few
# milliseconds a replication, and every group in every output.
scen() {
    cat <<EOF
name: jobs
seed: 5
duration: $1
warmup: 1s
replications: 5
protocol: {mode: async, gamma: 4, window: 2}
acceptance: {model: iid, alpha: 0.7}
tenants:
  edge: {draft_time: {dist: exponential, mean: 8ms}}
  network: {rtt: 30ms, jitter: {dist: exponential, mean: 2ms}}
  workload: {prompt_tokens: 16, output_tokens: {dist: uniform, min: 20, max: 80}}
  groups:
    - {name: near, count: 3, network: {rtt: 10ms}}
    - {name: far, count: 2, network: {rtt: 80ms}}
    - {name: slow, count: 2, edge: {draft_time: 20ms}}
cloud:
  verify_time: {dist: uniform, min: 4ms, max: 8ms}
  batching: {max_batch: 4}
EOF
}
scen 6s >"$TMP/j.yaml"

# wall_s and events_per_s are the only values that differ between runs:
# removed from the summary and JSON (by name) and emptied in a CSV (by its
# header: the fleet's columns and every group's).
strip() {
    case $1 in
    *.csv) awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++)
                                 if ($i ~ /(^|\.)(wall_s|events_per_s|setup_s)(_ci95)?$/) w[i] = 1 }
                             NR > 1 { for (i in w) $i = "" } { print }' "$1" ;;
    *) sed -E 's/(wall_s|events_per_s|setup_s)(_ci95)?[": ]*[-0-9.eE+a-z]*//g' "$1" ;;
    esac
}

# outputs J: every output of a run with -j J under $TMP/jJ/.
outputs() {
    d=$TMP/j$1
    mkdir -p "$d"
    $SPECSIM run "$TMP/j.yaml" -j "$1" --quiet --out "$d/o.csv" --per-tenant "$d/pt.csv" \
        --trace "$d/tr.csv" --trace-rep 3 >"$d/summary" 2>"$d/err" || echo "exit $?" >>"$d/err"
    $SPECSIM run "$TMP/j.yaml" --jobs "$1" --json --out "$d/o.json" --per-tenant "$d/pt2.csv" \
        >"$d/run.json" 2>>"$d/err" || echo "exit $?" >>"$d/err"
    $SPECSIM run "$TMP/j.yaml" -j"$1" --json --set warmup=auto --trace "$d/tr.json" \
        --trace-rep 4 >"$d/auto.json" 2>>"$d/err" || echo "exit $?" >>"$d/err"
    for f in summary o.csv o.json run.json auto.json; do
        strip "$d/$f" >"$d/$f.s" && mv "$d/$f.s" "$d/$f"
    done
}
for j in 1 2 3; do outputs $j; done
for f in summary o.csv o.scenario.yaml o.json run.json auto.json pt.csv pt2.csv tr.csv tr.json; do
    if [ -s "$TMP/j1/$f" ] && cmp -s "$TMP/j1/$f" "$TMP/j2/$f" &&
       cmp -s "$TMP/j1/$f" "$TMP/j3/$f"; then
        pass "jobs_identical_$f"
    else
        fail "jobs_identical_$f" "$(diff "$TMP/j1/$f" "$TMP/j3/$f" | head -5)" \
            "$(cat "$TMP/j1/err" "$TMP/j2/err" "$TMP/j3/err" | head -c 300)"
    fi
done
# The rows are in replication order: 5 replications of 7 tenants, then
# the header, replication 0 first.
reps=$(tail -n +2 "$TMP/j3/pt.csv" | cut -d, -f1 | uniq | tr '\n' ' ')
if [ "$reps" = "0 1 2 3 4 " ] && [ "$(wc -l <"$TMP/j3/pt.csv")" -eq 36 ]; then
    pass jobs_per_tenant_in_order
else
    fail jobs_per_tenant_in_order "replications: $reps; $(wc -l <"$TMP/j3/pt.csv") lines"
fi
if grep -q '"near"' "$TMP/j2/run.json" && grep -q '"slow"' "$TMP/j2/run.json"; then
    pass jobs_groups_reported
else
    fail jobs_groups_reported "$(head -c 300 "$TMP/j2/run.json")"
fi
# The default is the number of cores: the same bytes again.
$SPECSIM run "$TMP/j.yaml" --json --out "$TMP/def.json" >"$TMP/def.out" 2>"$TMP/err"
strip "$TMP/def.out" >"$TMP/def.s"
if cmp -s "$TMP/def.s" "$TMP/j1/run.json"; then pass jobs_default_identical; else
    fail jobs_default_identical "$(diff "$TMP/def.s" "$TMP/j1/run.json" | head -5)"; fi
# More threads than replications: one per replication.
$SPECSIM run "$TMP/j.yaml" -j 64 --json >"$TMP/j64.out" 2>"$TMP/err"
strip "$TMP/j64.out" >"$TMP/j64.s"
if cmp -s "$TMP/j64.s" "$TMP/j1/run.json"; then pass jobs_more_than_reps; else
    fail jobs_more_than_reps "$(head -c 300 "$TMP/err")"; fi

# --- -j is validated as sweep's ----------------------------------------------
for bad in 0 -1 -3 abc 2x "" 4097 99999999999999999999; do
    expect_exit "jobs_refused_'$bad'" 2 "$SPECSIM" run "$TMP/j.yaml" -j "$bad"
    if [ -z "$bad" ]; then continue; fi   # the parser's own message
    if grep -q "specsim run: -j needs a thread count from 1 to 4096, got '$bad'" "$TMP/err"
    then pass "jobs_message_'$bad'"
    else fail "jobs_message_'$bad'" "$(cat "$TMP/err")"; fi
done
expect_exit jobs_refused_attached 2 "$SPECSIM" run "$TMP/j.yaml" -j0
expect_exit jobs_refused_equals 2 "$SPECSIM" run "$TMP/j.yaml" --jobs=0
expect_exit jobs_missing_value 2 "$SPECSIM" run "$TMP/j.yaml" -j
expect_exit jobs_twice 2 "$SPECSIM" run "$TMP/j.yaml" -j 1 -j 2
expect_exit jobs_not_for_check 2 "$SPECSIM" check "$TMP/j.yaml" -j 2
expect_exit jobs_not_for_analytic 2 "$SPECSIM" analytic "$TMP/j.yaml" -j 2
expect_exit jobs_4096 0 "$SPECSIM" run "$TMP/j.yaml" -j 4096 --reps 1 --quiet

# --- a sweep's points and their replications share -j (sim/run/pool.h) -------
# Two points on 4 threads: each point runs its 5 replications on 2.
{ scen 3s; printf 'sweep:\n  protocol.gamma: [2, 5]\n'; } >"$TMP/s.yaml"
$SPECSIM sweep "$TMP/s.yaml" -j 1 --per-group --out "$TMP/s1.csv" --quiet 2>"$TMP/err1"
rc1=$?
$SPECSIM sweep "$TMP/s.yaml" -j 4 --per-group --out "$TMP/s4.csv" --quiet 2>"$TMP/err4"
rc4=$?
if [ $rc1 -eq 0 ] && [ $rc4 -eq 0 ] && cmp -s "$TMP/s1.csv" "$TMP/s4.csv"; then
    pass jobs_sweep_few_points_identical
else
    fail jobs_sweep_few_points_identical "rc $rc1/$rc4: $(head -c 300 "$TMP/err1" "$TMP/err4")"
fi
# The sweep's point equals the run its --explain prints, at any -j.
$SPECSIM run "$TMP/s.yaml" --set protocol.gamma=5 -j 3 --out "$TMP/p1.csv" --quiet \
    >/dev/null 2>"$TMP/err"
a=$(sed -n 3p "$TMP/s1.csv" | cut -d, -f3-8)
b=$(sed -n 2p "$TMP/p1.csv" | cut -d, -f8-13)
if [ -n "$a" ] && [ "$a" = "$b" ]; then pass jobs_sweep_point_equals_run; else
    fail jobs_sweep_point_equals_run "sweep: $a; run: $b; $(head -c 200 "$TMP/err")"; fi

# --- interrupts while replications run on threads ----------------------------
# The signals reach the thread that lists the temporaries (base/thread.h):
# SIGINT during a long threaded run removes every temporary.
scen 1000000s >"$TMP/long.yaml"
env --default-signal=INT,TERM,HUP $SPECSIM run "$TMP/long.yaml" -j 3 --trace "$TMP/tr.csv" \
    --trace-rep 2 --per-tenant "$TMP/pt.csv" --out "$TMP/o.json" >/dev/null 2>&1 &
pid=$!
n=0
while [ $n -lt 200 ] && ! ls "$TMP"/tr.csv.tmp.* >/dev/null 2>&1; do
    sleep 0.1; n=$((n + 1)); done
sleep 0.2
kill -INT $pid
wait $pid
rc=$?
left=$(ls "$TMP" | grep '\.tmp\.' | tr '\n' ' ')
if [ $n -lt 200 ] && [ $rc -eq 130 ] && [ -z "$left" ] && [ ! -e "$TMP/tr.csv" ]; then
    pass jobs_sigint_removes_temporaries
else
    fail jobs_sigint_removes_temporaries "exit $rc, waited $n, left: $left"
fi
# A trace to a pipe its reader closed: the worker thread writing it blocks
# SIGPIPE, so its write fails (EPIPE) and the run stops with the trace's
# write error; the exit's flush of standard output then raises SIGPIPE in
# the main thread (status 141, as with -j 1). No temporary is left.
scen 200s >"$TMP/pipe.yaml"
env --default-signal=PIPE $SPECSIM run "$TMP/pipe.yaml" -j 2 --trace - --trace-rep 1 \
    --per-tenant "$TMP/pp.csv" 2>"$TMP/pipe.err" | head -1 >/dev/null
left=$(ls "$TMP" | grep '^pp\.csv' | tr '\n' ' ')
if [ -z "$left" ]; then pass jobs_sigpipe_removes_temporaries; else
    fail jobs_sigpipe_removes_temporaries "left: $left; $(head -c 200 "$TMP/pipe.err")"; fi

# --- the testbed runs in real time: no -j ------------------------------------
if [ -x "$BUILD/testbed" ]; then
    expect_exit testbed_refuses_jobs 2 "$BUILD/testbed" run "$TMP/j.yaml" -j 2
    if grep -q "replications run one after another" "$TMP/err"; then
        pass testbed_jobs_message; else fail testbed_jobs_message "$(cat "$TMP/err")"; fi
fi
# setup_s is the set-up's share of wall_s: with threads the replications
# overlap, and their summed set-up times exceeded the elapsed wall_s (a
# review found 0.088 s of set-up in 0.071 s of wall on the old code).
"$SPECSIM" run scenarios/bench/tenants-10k.yaml --quiet --json -j 2 --reps 4 \
    --set duration=0.2s --set warmup=0s >"$TMP/su.json" 2>/dev/null
if awk '/^  "wall_s":/ { gsub(/[^0-9.eE+-]/, "", $2); w = $2 }
        /^  "setup_s":/ { gsub(/[^0-9.eE+-]/, "", $2); s = $2 }
        END { exit !(w > 0 && s > 0 && s <= w) }' "$TMP/su.json"; then
    pass setup_within_wall_threads
else fail setup_within_wall_threads "$(grep -E '"(wall_s|setup_s)"' "$TMP/su.json" | head -2)"; fi
exit 0
