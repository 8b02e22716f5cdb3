#!/bin/sh
# The model's own sanity checks (sim/run/guard.h and the loader's): a run that
# could never end stops with exit status 2 and a message that names the
# keys responsible, within a bounded number of events (`timeout` turns a
# hang into exit 124, a failure here, not a stuck test suite).
. "$(dirname "$0")/lib.sh"

# Cloud-only with zero round trip, zero verify time and zero think time: a
# cycle of zero-duration steps at t = 0 (no drift start offset; drift's
# factors keep a zero time zero).
cat >"$TMP/zero.yaml" <<'Y'
duration: 10s
protocol: {mode: cloud-only}
tenants:
  count: 1
  network: {rtt: 0s, jitter: none, uplink: inf, downlink: inf}
  workload: {arrival: closed, think: 0s, prompt_tokens: 1, output_tokens: 4}
cloud: {verify_time: 0s}
drift: {start: 0s}
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

# A duration no run could reach: refused with the projected event count, at
# the key as written (FILE:LINE:COL, although the run has no tree left).
printf 'duration: 1e15s\n' >"$TMP/long.yaml"
expect_exit endless_duration 2 timeout 120 "$SPECSIM" run "$TMP/long.yaml"
if grep -q "^specsim run: $TMP/long.yaml:1:11: duration: 1e+15 s would take about [0-9.e+]* events" "$TMP/err"; then
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
if grep -q "^specsim run: $TMP/overload.yaml:5:38: tenants.workload.rate: requests arrive faster than the tenants serve them: [0-9]* waiting" "$TMP/err"; then
    pass unmeetable_rate_message
else
    fail unmeetable_rate_message "$(head -c 400 "$TMP/err")"
fi

# LLaMA-2-70B in fp16 drafting on an 8 GB Raspberry Pi 5: its weights alone
# (2 bytes x ~69e9 parameters) are over 17 times the device's memory.
expect_exit edge_memory 2 "$SPECSIM" check --set tenants.edge.device=models/hardware/raspberry-pi-5.yaml \
    --set tenants.edge.draft=models/llm/llama-2-70b.yaml --set tenants.edge.quant=fp16
if grep -Eq "^specsim: --set:2:[0-9]+: tenants.edge.draft: llama-2-70b at fp16 does not fit in edge.device raspberry-pi-5: 1[34][0-9](\.[0-9]+)? GB of weights \+ .* the device has 8 GB" "$TMP/err"; then
    pass edge_memory_numbers
else
    fail edge_memory_numbers "$(head -c 400 "$TMP/err")"
fi
# The same draft in w4a16 on a 64 GB Jetson fits.
expect_exit edge_memory_fits 0 "$SPECSIM" check --set tenants.edge.device=models/hardware/jetson-orin-agx.yaml \
    --set tenants.edge.draft=models/llm/llama-2-70b.yaml --set tenants.edge.quant=w4a16

# A KV cache of one byte: with bounded lengths the loader refuses it (512 +
# 256 tokens + the block's room, at the target's KV bytes per token)...
expect_exit kv_whole_cache_load 2 "$SPECSIM" check --set cloud.kv_capacity=1B \
    --set tenants.workload.prompt_tokens=512 --set tenants.workload.output_tokens=256
if grep -q "^specsim: --set:1:[0-9]*: cloud.kv_capacity: a request of up to 512 prompt + 256 output tokens (+ a block's room) needs [0-9.e+]* bytes of KV ([0-9.e+]* per token), more than a replica's whole KV cache of 1 bytes" "$TMP/err"; then
    pass kv_whole_cache_load_numbers
else
    fail kv_whole_cache_load_numbers "$(head -c 400 "$TMP/err")"
fi
# With replica groups each group's cache is checked: the L4 group of
# hetero-replicas.yaml at 10 MB cannot hold 256 + 512 tokens of LLaMA-2-7B
# KV (0.5 MB per token), and the error names that group's key.
expect_exit kv_whole_cache_group 2 "$SPECSIM" check scenarios/examples/hetero-replicas.yaml \
    --set cloud.replica_groups.l4.kv_capacity=10MB
if grep -q "^specsim: --set:1:[0-9]*: cloud.replica_groups.1.kv_capacity: a request of up to 256 prompt + 512 output tokens" "$TMP/err"; then
    pass kv_whole_cache_group_key
else
    fail kv_whole_cache_group_key "$(head -c 400 "$TMP/err")"
fi
# ... with unbounded (lognormal) lengths the run refuses the first request.
expect_exit kv_whole_cache_run 2 timeout 120 "$SPECSIM" run --set cloud.kv_capacity=1B
if grep -q "^specsim run: cloud.kv_capacity: a request of [0-9]* prompt + [0-9]* output tokens (+ [0-9]* for a block) needs .* more than replica 0's whole KV cache of 1 bytes" "$TMP/err"; then
    pass kv_whole_cache_run_numbers
else
    fail kv_whole_cache_run_numbers "$(head -c 400 "$TMP/err")"
fi
