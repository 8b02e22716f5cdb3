#!/bin/sh
# The model's own sanity checks (sim/guard.h and the loader's): a run that
# could never end stops with exit status 2 and a message that names the
# keys responsible, within a bounded number of events (`timeout` turns a
# hang into exit 124, a failure here, not a stuck test suite).
. "$(dirname "$0")/lib.sh"

# Cloud-only with zero round trip, zero verify time and zero think time: a
# cycle of zero-duration steps at t = 0.
cat >"$TMP/zero.yaml" <<'Y'
duration: 10s
protocol: {mode: cloud-only}
tenants:
  count: 1
  network: {rtt: 0s, jitter: none, uplink: inf, downlink: inf}
  workload: {arrival: closed, think: 0s, prompt_tokens: 1, output_tokens: 4}
cloud: {verify_time: 0s}
Y
expect_exit zero_time_cycle 2 timeout 120 "$SPECSIM" run "$TMP/zero.yaml"
if grep -q "simulated time stopped at t=0 s" "$TMP/err" &&
   grep -q "tenants.network.rtt" "$TMP/err" && grep -q "cloud.verify_time" "$TMP/err" &&
   grep -q "tenants.workload.think" "$TMP/err"; then
    pass zero_time_cycle_keys
else
    fail zero_time_cycle_keys "$(head -c 400 "$TMP/err")"
fi
# Any one of them positive: the run ends normally.
expect_exit zero_time_cycle_broken 0 timeout 120 "$SPECSIM" run "$TMP/zero.yaml" \
    --set cloud.verify_time=1ms --set duration=2s --set warmup=1s

# A duration no run could reach: refused with the projected event count.
printf 'duration: 1e15s\n' >"$TMP/long.yaml"
expect_exit endless_duration 2 timeout 120 "$SPECSIM" run "$TMP/long.yaml"
if grep -q "^specsim run: duration: 1e+15 s would take about [0-9.e+]* events" "$TMP/err"; then
    pass endless_duration_estimate
else
    fail endless_duration_estimate "$(head -c 400 "$TMP/err")"
fi

# Poisson arrivals far beyond what the tenants serve, for long enough that
# the waiting requests would outgrow the budget.
cat >"$TMP/overload.yaml" <<'Y'
duration: 1e7s
protocol: {mode: cloud-only}
tenants:
  count: 4
  workload: {arrival: poisson, rate: 1000/s}
Y
expect_exit unmeetable_rate 2 timeout 120 "$SPECSIM" run "$TMP/overload.yaml"
if grep -q "^specsim run: tenants.workload.rate: requests arrive faster than the tenants serve them: [0-9]* waiting" "$TMP/err"; then
    pass unmeetable_rate_message
else
    fail unmeetable_rate_message "$(head -c 400 "$TMP/err")"
fi
