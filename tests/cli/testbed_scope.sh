#!/bin/sh
# docs/testbed.md says request traces (arrival: trace) and replica groups
# (cloud.replica_groups) run in build/testbed as in the simulator (issue
# 28: the page did not say so). One scenario with both: a trace of 8
# requests for 2 tenants, all within the first 0.1 s of a 1 s run, on two
# one-replica groups. Counted by hand from the trace: 8 requests done, and
# 4 + 5 + ... + 11 = 60 output tokens, 60 tok/s over the 1 s run.
. "$(dirname "$0")/lib.sh"
TESTBED="$BUILD/testbed"
if [ ! -x "$TESTBED" ]; then echo "skip testbed_trace_and_replica_groups: no $TESTBED"; exit 0; fi
{ echo "time_s,prompt_tokens,output_tokens,tenant"
  i=0; while [ $i -lt 8 ]; do echo "0.0$i,8,$((4 + i)),$((i % 2))"; i=$((i + 1)); done; } >"$TMP/t.csv"
cat >"$TMP/s.yaml" <<'Y'
duration: 1s
warmup: 0s
replications: 1
protocol: {mode: sync, gamma: 4}
acceptance: {model: iid, alpha: 0.8}
tenants:
  count: 2
  edge: {draft_time: 2ms, prefill_time: 2ms}
  network: {rtt: 2ms}
  workload: {arrival: trace, trace: t.csv}
cloud:
  verify_time: 2ms
  replica_groups:
    - {name: a, count: 1}
    - {name: b, count: 1}
Y
"$TESTBED" run "$TMP/s.yaml" --quiet --out "$TMP/tb.csv" >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(col "$TMP/tb.csv" requests_done)" = 8 ] &&
   [ "$(col "$TMP/tb.csv" throughput_tok_s)" = 60 ]
then pass testbed_trace_and_replica_groups
else fail testbed_trace_and_replica_groups "exit $rc: $(head -c 300 "$TMP/err") $(head -c 400 "$TMP/tb.csv")"; fi
