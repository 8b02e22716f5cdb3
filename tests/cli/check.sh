# `specsim check` accepts only what `run` (and, for a sweep: section, `sweep`)
# accepts, and prints a scenario that behaves like the original; errors name
# the option the user typed; each tenant group's service-time source counts;
# arrival rates and network sizes take units. (The bad scenarios `check` must
# refuse are in tests/data/scenarios/badrun/, run by bad_inputs.sh.)
. tests/cli/lib.sh

# A sweep scenario of a few milliseconds a point.
cat >"$TMP/sw.yaml" <<'EOF'
name: sw
duration: 4s
warmup: 1s
protocol: {mode: sync, gamma: 4}
tenants:
  count: 2
  edge: {draft_time: 10ms}
  workload: {arrival: poisson, rate: 120/min}
cloud:
  verify_time: 5ms
sweep:
  protocol.gamma: [1, 2]
  tenants.workload.rate: {from: 1/s, to: 3/s, step: 1/s}
EOF

# --- the sweep: section is checked and printed after the scenario --------
if "$SPECSIM" check "$TMP/sw.yaml" >"$TMP/c1.yaml" 2>"$TMP/err" &&
   grep -q '^sweep:$' "$TMP/c1.yaml" && grep -q '^  tenants.workload.rate:$' "$TMP/c1.yaml"
then pass check_prints_sweep
else fail check_prints_sweep "$(head -c 300 "$TMP/err")"; fi
# check's output checks to itself (card comments aside) ...
"$SPECSIM" check "$TMP/c1.yaml" >"$TMP/c2.yaml" 2>"$TMP/err"
sed -e '/^#/d' -e 's/  # .*$//' "$TMP/c1.yaml" >"$TMP/c1.s"
sed -e '/^#/d' -e 's/  # .*$//' "$TMP/c2.yaml" >"$TMP/c2.s"
if [ -s "$TMP/c1.s" ] && cmp -s "$TMP/c1.s" "$TMP/c2.s"; then pass check_sweep_round_trip
else fail check_sweep_round_trip "$(diff "$TMP/c1.s" "$TMP/c2.s" | head -5) $(head -c 200 "$TMP/err")"; fi
# ... and sweeps to the same rows as the original.
"$SPECSIM" sweep "$TMP/sw.yaml" -j 1 >"$TMP/a.csv" 2>"$TMP/err"
"$SPECSIM" sweep "$TMP/c1.yaml" -j 1 >"$TMP/b.csv" 2>>"$TMP/err"
if [ "$(wc -l <"$TMP/a.csv")" -eq 7 ] && cmp -s "$TMP/a.csv" "$TMP/b.csv"; then
    pass check_output_sweeps_the_same
else fail check_output_sweeps_the_same "$(head -c 300 "$TMP/err")"; fi
# Standard input is read once, sweep section included.
"$SPECSIM" check - <"$TMP/sw.yaml" >"$TMP/c3.yaml" 2>"$TMP/err"
sed -n '/^sweep:$/,$p' "$TMP/c1.yaml" >"$TMP/s1"
sed -n '/^sweep:$/,$p' "$TMP/c3.yaml" >"$TMP/s3"
if [ -s "$TMP/s3" ] && cmp -s "$TMP/s1" "$TMP/s3"; then pass check_stdin_sweep
else fail check_stdin_sweep "$(head -c 300 "$TMP/err")"; fi
# Without a sweep: section nothing is added.
"$SPECSIM" check scenarios/default.yaml >"$TMP/d.yaml" 2>/dev/null
if ! grep -q '^sweep:' "$TMP/d.yaml"; then pass check_no_sweep_none_printed
else fail check_no_sweep_none_printed; fi
# The --set options given to check apply to the axes' checks as well.
expect_exit check_sweep_with_set 2 "$SPECSIM" check "$TMP/sw.yaml" --set cloud.batching.max_tokens=3
grep -qF -- "--set:1:27: cloud.batching.max_tokens: 3 is below gamma + 1" "$TMP/err" &&
    pass check_set_error_located || fail check_set_error_located "$(cat "$TMP/err")"

# --- errors name the option the user typed --------------------------------
expect_exit run_reps_zero 2 "$SPECSIM" run scenarios/default.yaml --reps 0
grep -q '^specsim: --reps: replications: ' "$TMP/err" && pass run_reps_named ||
    fail run_reps_named "$(cat "$TMP/err")"
expect_exit run_seed_then_set 2 "$SPECSIM" run scenarios/default.yaml --seed 3 --set protocol.gama=2
grep -qF -- "--set:1:10: protocol.gama: unknown key" "$TMP/err" && pass run_set_numbering ||
    fail run_set_numbering "$(cat "$TMP/err")"
expect_exit sweep_reps_zero 2 "$SPECSIM" sweep "$TMP/sw.yaml" --reps 0
grep -qF -- "--reps: replications: " "$TMP/err" && pass sweep_reps_named ||
    fail sweep_reps_named "$(cat "$TMP/err")"
expect_exit sweep_seed_then_set 2 "$SPECSIM" sweep "$TMP/sw.yaml" --reps 2 --set protocol.gama=2
grep -qF -- "--set:1:10: protocol.gama: unknown key" "$TMP/err" && pass sweep_set_numbering ||
    fail sweep_set_numbering "$(cat "$TMP/err")"
# An axis value is not a --set: the message points at it in the file.
sed 's/protocol.gamma: \[1, 2\]/protocol.gamma: [1, 0]/' "$TMP/sw.yaml" >"$TMP/bad.yaml"
expect_exit sweep_axis_value 2 "$SPECSIM" sweep "$TMP/bad.yaml"
if grep -qF "$TMP/bad.yaml:12:23: sweep.protocol.gamma: value '0': protocol.gamma:" "$TMP/err" &&
   ! grep -q -- '--set' "$TMP/err"; then pass sweep_axis_error_no_set
else fail sweep_axis_error_no_set "$(cat "$TMP/err")"; fi

# --- every tenant group's edge source counts -------------------------------
# laptops draft LLaMA-2-7B at W4A16 from a table; the other groups from the
# datasheet: the groups differ, so the common source is "mixed".
short="--set duration=4s --set warmup=1s --quiet"
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/examples/groups.yaml $short --json \
    --set tenants.groups.laptops.edge.calibration=results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml \
    >"$TMP/g.json" 2>"$TMP/err"
grep -q '"edge_service_source": "mixed"' "$TMP/g.json" && pass groups_mixed_edge_source ||
    fail groups_mixed_edge_source "$(grep edge_service "$TMP/g.json") $(head -c 200 "$TMP/err")"
grep -qF '"edge_service_sources": {"phones": "datasheet", "laptops": "table", "jetsons": "datasheet"}' \
    "$TMP/g.json" && pass groups_edge_sources_json ||
    fail groups_edge_sources_json "$(grep edge_service "$TMP/g.json")"
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/examples/groups.yaml $short \
    --set tenants.groups.laptops.edge.calibration=results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml \
    >"$TMP/g.txt" 2>"$TMP/err"
grep -qF 'service time edge: datasheet (phones, jetsons), table (laptops), cloud: datasheet' \
    "$TMP/g.txt" && pass groups_edge_sources_summary ||
    fail groups_edge_sources_summary "$(grep 'service time' "$TMP/g.txt") $(head -c 200 "$TMP/err")"
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/examples/groups.yaml $short --json >"$TMP/g2.json" 2>"$TMP/err"
grep -q '"edge_service_source": "datasheet"' "$TMP/g2.json" && pass groups_common_edge_source ||
    fail groups_common_edge_source "$(grep edge_service "$TMP/g2.json")"

# --- units: arrival rates per time, sizes in bytes -------------------------
"$SPECSIM" check "$TMP/sw.yaml" --set tenants.network.overhead_bytes=1KiB >"$TMP/u.yaml" 2>"$TMP/err"
if grep -q '^    rate: 2/s$' "$TMP/u.yaml" && grep -q '^    overhead_bytes: 1KiB$' "$TMP/u.yaml" &&
   grep -q '^    bytes_per_token: 4B$' "$TMP/u.yaml"; then pass check_prints_units
else fail check_prints_units "$(grep -E 'rate|bytes' "$TMP/u.yaml") $(cat "$TMP/err")"; fi
strip() { sed -E 's/"(wall_s|events_per_s|setup_s)(_ci95)?": *[^,}]*//g' "$1"; }
for r in 2 2/s 120/min 7200/h; do
    # shellcheck disable=SC2086
    "$SPECSIM" run "$TMP/sw.yaml" $short --json --set "tenants.workload.rate=$r" \
        --set tenants.network.overhead_bytes=64B >"$TMP/r.json" 2>"$TMP/err"
    strip "$TMP/r.json" >"$TMP/r_$(echo "$r" | tr / _).s"
done
if [ -s "$TMP/r_2.s" ] && cmp -s "$TMP/r_2.s" "$TMP/r_2_s.s" && cmp -s "$TMP/r_2.s" "$TMP/r_120_min.s" &&
   cmp -s "$TMP/r_2.s" "$TMP/r_7200_h.s"; then pass rate_units_same_run
else fail rate_units_same_run "$(head -c 200 "$TMP/err")"; fi
expect_exit rate_bad_unit 2 "$SPECSIM" check "$TMP/sw.yaml" --set tenants.workload.rate=2Mbps

# A 0 that stands for something else says what, so the resolved scenario is
# not misread (max_tokens 0 is no limit, not zero tokens).
"$SPECSIM" check scenarios/default.yaml >"$TMP/zero.yaml" 2>"$TMP/err"
if grep -q 'max_tokens: 0  # 0: no limit' "$TMP/zero.yaml" &&
   grep -q 'kv_capacity: 0GiB  # 0: GPU memory - target weights' "$TMP/zero.yaml"; then
    pass check_zero_means_commented
else fail check_zero_means_commented "$(grep -E 'max_tokens|kv_capacity' "$TMP/zero.yaml")"; fi
