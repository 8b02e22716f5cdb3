#!/bin/sh
# CLI tests of `specsim optimize`: --json has best/evaluations/frontier and
# agrees with the text report and the CSV (one row per evaluation, sweep
# header); the answer is the same for any -j; a bad section, or constraints
# with one replication, exit 2 with FILE:LINE:COLUMN.
. "$(dirname "$0")/lib.sh"

S=scenarios/examples/optimize-capacity.yaml

if "$SPECSIM" optimize "$S" --json -j 1 --out "$TMP/a.csv" >"$TMP/a.json" 2>"$TMP/err" &&
   "$SPECSIM" optimize "$S" --json -j 3 --out "$TMP/b.csv" >"$TMP/b.json" 2>>"$TMP/err"; then
    pass optimize_runs
else
    fail optimize_runs "$(head -c 400 "$TMP/err")"
fi

# The JSON object: best holds the knob and the metrics, evaluations counts
# the CSV's rows, the frontier is a list.
if python3 - "$TMP/a.json" "$TMP/a.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = open(sys.argv[2]).read().splitlines()
assert set(d) >= {"best", "evaluations", "frontier"}, d.keys()
assert d["best"]["tenants.count"] == 15, d["best"]
assert d["best"]["itl_p99_s"] + d["best"]["itl_p99_s_ci95"] <= 0.078
assert d["evaluations"] == len(rows) - 1 < d["points"], (d["evaluations"], len(rows))
assert rows[0].startswith("point,tenants.count,itl_mean_s,"), rows[0]
assert isinstance(d["frontier"], list) and d["frontier"]
PY
then pass optimize_json; else fail optimize_json "see above"; fi

if cmp -s "$TMP/a.json" "$TMP/b.json" && cmp -s "$TMP/a.csv" "$TMP/b.csv"; then
    pass optimize_same_for_any_j
else
    fail optimize_same_for_any_j "-j 1 and -j 3 differ"
fi

if "$SPECSIM" optimize "$S" -j 1 | grep -q '^best: tenants.count=15$'; then
    pass optimize_text
else
    fail optimize_text "no 'best: tenants.count=15' line"
fi

expect_exit optimize_one_rep 2 "$SPECSIM" optimize "$S" --reps 1
if grep -q "optimize-capacity.yaml:.*: optimize.constraints: .*replications >= 2" "$TMP/err"; then
    pass optimize_one_rep_message
else
    fail optimize_one_rep_message "$(head -c 300 "$TMP/err")"
fi

sed 's/max: tenants.count/max: goodput_tok/' "$S" >"$TMP/bad.yaml"
expect_exit optimize_bad_metric 2 "$SPECSIM" optimize "$TMP/bad.yaml"
if grep -q "bad.yaml:[0-9]*:[0-9]*: optimize.max: 'goodput_tok' is not a metric" "$TMP/err"; then
    pass optimize_bad_metric_message
else
    fail optimize_bad_metric_message "$(head -c 300 "$TMP/err")"
fi

expect_exit optimize_no_section 2 "$SPECSIM" optimize scenarios/examples/sync.yaml
expect_exit optimize_no_scenario 2 "$SPECSIM" optimize

# `check` validates the optimize: section as `optimize` does before its
# first point, at FILE:LINE:COL, and prints it resolved (knobs as lists,
# bounds in seconds, the search it runs); the printed scenario checks again.
check_bad() {   # name, sed script, expected message (grep -E)
    sed "$2" "$S" >"$TMP/$1.yaml"
    expect_exit "check_optimize_$1" 2 "$SPECSIM" check "$TMP/$1.yaml"
    if grep -Eq "$1.yaml:[0-9]+:[0-9]+: optimize\.$3" "$TMP/err"; then
        pass "check_optimize_$1_message"
    else
        fail "check_optimize_$1_message" "$(head -c 300 "$TMP/err")"
    fi
}
check_bad metric 's/itl_p99_s <= 78ms/itl_p99 <= 78ms/' "constraints: 'itl_p99' is not a metric"
check_bad unit 's/78ms/78furlongs/' "constraints: .*takes a duration"
check_bad search 's/monotone: true/search: bisekt/' "search: 'bisekt'"
check_bad knob 's/tenants.count: {from: 1,/tenants.cont: {from: 1,/' "max: 'tenants.count' is not a metric"
check_bad range 's/tenants.count: {from: 1,/tenants.count: {from: -3,/' "knobs.tenants.count: value '-3'"
check_bad key 's/monotone: true/monotonic: true/' "monotonic: unknown key"
expect_exit check_optimize_one_rep 2 "$SPECSIM" check "$S" --set replications=1
if grep -q "optimize-capacity.yaml:[0-9]*:[0-9]*: optimize.constraints: .*replications >= 2" "$TMP/err"; then
    pass check_optimize_one_rep_message
else
    fail check_optimize_one_rep_message "$(head -c 300 "$TMP/err")"
fi
if "$SPECSIM" check "$S" >"$TMP/resolved.yaml" 2>"$TMP/err" &&
   python3 - "$TMP/resolved.yaml" <<'PY'
import sys, yaml
o = yaml.safe_load(open(sys.argv[1]))["optimize"]
assert o["knobs"]["tenants.count"] == [str(n) for n in range(1, 41)] or \
       o["knobs"]["tenants.count"] == list(range(1, 41)), o["knobs"]
assert o["max"] == "tenants.count", o
assert o["constraints"] == ["itl_p99_s <= 0.078"], o["constraints"]
assert o["search"] == "bisect", o
PY
then pass check_optimize_printed; else fail check_optimize_printed "$(head -c 300 "$TMP/err")"; fi
if "$SPECSIM" check "$TMP/resolved.yaml" >/dev/null 2>"$TMP/err" &&
   "$SPECSIM" optimize "$TMP/resolved.yaml" -j 2 | grep -q '^best: tenants.count=15$'; then
    pass check_optimize_printed_runs
else
    fail check_optimize_printed_runs "$(head -c 300 "$TMP/err")"
fi

# The section's parts from the command line: the same question asked with
# flags on a scenario without the section gives the same answer, and the
# same number of evaluations; each flag replaces its part of the section.
sed '/^optimize:/,$d' "$S" >"$TMP/plain.yaml"
if "$SPECSIM" optimize "$TMP/plain.yaml" --json -j 2 --knob 'tenants.count=1..40' \
       --max tenants.count --constraint 'itl_p99_s<=78ms' --search bisect \
       >"$TMP/flags.json" 2>"$TMP/err" &&
   python3 - "$TMP/flags.json" "$TMP/a.json" <<'PY'
import json, sys
f, a = (json.load(open(p)) for p in sys.argv[1:])
assert f["best"]["tenants.count"] == a["best"]["tenants.count"] == 15, f["best"]
assert f["evaluations"] == a["evaluations"] and f["search"] == "bisect", f
PY
then pass optimize_flags_only; else fail optimize_flags_only "$(head -c 300 "$TMP/err")"; fi
# --constraint replaces the section's: a looser bound admits more tenants.
if "$SPECSIM" optimize "$S" --json -j 2 --constraint 'itl_p99_s <= 0.2s' >"$TMP/loose.json" \
       2>"$TMP/err" &&
   python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["best"]["tenants.count"] > 15, d["best"]' \
       "$TMP/loose.json"; then
    pass optimize_flag_replaces_constraints
else
    fail optimize_flag_replaces_constraints "$(head -c 300 "$TMP/err")"
fi
# A comma list and a step: --knob replaces the section's knobs.
if "$SPECSIM" optimize "$S" --json -j 2 --knob 'tenants.count=4..40:4' --search grid \
       >"$TMP/grid.json" 2>"$TMP/err" &&
   python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["points"] == d["evaluations"] == 10 and d["best"]["tenants.count"] == 12, d' \
       "$TMP/grid.json"; then
    pass optimize_flag_knob_range
else
    fail optimize_flag_knob_range "$(head -c 300 "$TMP/err")"
fi
flag_bad() {   # name, expected message (grep -E), flags...
    n=$1; m=$2; shift 2
    expect_exit "optimize_flag_$n" 2 "$SPECSIM" optimize "$TMP/plain.yaml" -j 1 "$@"
    if grep -Eq "^specsim optimize: $m" "$TMP/err"; then pass "optimize_flag_${n}_message"
    else fail "optimize_flag_${n}_message" "$(head -c 300 "$TMP/err")"; fi
}
flag_bad value "--knob:2:15: optimize.knobs.tenants.count: value '0'" \
    --knob protocol.gamma=1,2 --knob tenants.count=0,2 --max goodput_tok_s
flag_bad range "--knob:1:18: optimize.knobs.tenants.count.to" \
    --knob tenants.count=1..x --max tenants.count
flag_bad syntax "--knob:1:1: optimize.knobs: 'tenants.count': expected PATH=VALUES" \
    --knob tenants.count --max tenants.count
flag_bad twice "--knob:2:1: optimize.knobs.tenants.count: given twice" \
    --knob tenants.count=1,2 --knob tenants.count=3 --max tenants.count
flag_bad metric "--max: optimize.max: 'goodput' is not a metric" \
    --knob tenants.count=1,2 --max goodput
flag_bad constraint "--constraint:2:1: optimize.constraints: 'itl_p99_s<80ms'" \
    --knob tenants.count=1,2 --max tenants.count --constraint 'ttft_mean_s<=1s' \
    --constraint 'itl_p99_s<80ms'
flag_bad search "--search: optimize.search: 'bisekt'" \
    --knob tenants.count=1,2 --max tenants.count --search bisekt
flag_bad no_objective "--max: optimize.max or min: missing" --knob tenants.count=1,2
flag_bad no_knobs "--knob: optimize.knobs: missing" --max goodput_tok_s
expect_exit optimize_flag_two_objectives 2 "$SPECSIM" optimize "$S" --max goodput_tok_s \
    --min ttft_mean_s
# --seed takes any 64-bit seed, as on run, sweep and compare: it is
# --set seed=N (it was refused above 10^9 as "not a non-negative integer").
if "$SPECSIM" optimize "$TMP/plain.yaml" --json -j 2 --knob tenants.count=1,2 \
       --max tenants.count --seed 5000000000 >"$TMP/seed.json" 2>"$TMP/err" &&
   "$SPECSIM" optimize "$TMP/plain.yaml" --json -j 2 --knob tenants.count=1,2 \
       --max tenants.count --set seed=5000000000 >"$TMP/seedset.json" 2>>"$TMP/err" &&
   cmp -s "$TMP/seed.json" "$TMP/seedset.json"; then
    pass optimize_flag_seed_64bit
else
    fail optimize_flag_seed_64bit "$(head -c 300 "$TMP/err")"
fi

# The scenario's output: section: output.file is the default --out (as for
# sweep); output.trace is refused, not ignored, before anything runs.
{ grep -v '^output' "$S"; printf 'output: {file: %s}\n' "$TMP/of.csv"; } >"$TMP/of.yaml"
if "$SPECSIM" optimize "$TMP/of.yaml" -j 1 >/dev/null 2>"$TMP/err" &&
   cmp -s "$TMP/of.csv" "$TMP/a.csv"; then
    pass optimize_output_file
else
    fail optimize_output_file "$(head -c 300 "$TMP/err")"
fi
{ grep -v '^output' "$S"; printf 'output: {trace: %s}\n' "$TMP/ot.csv"; } >"$TMP/ot.yaml"
expect_exit optimize_output_trace_refused 2 "$SPECSIM" optimize "$TMP/ot.yaml" -j 1
grep -q 'ot.yaml:[0-9]*:[0-9]*: output.trace: optimize writes no trace' "$TMP/err" && [ ! -e "$TMP/ot.csv" ] &&
    pass optimize_output_trace_named || fail optimize_output_trace_named "$(cat "$TMP/err")"

# Issue 28 item 5: a point is not judged on one replication's value (its
# half-width is 0), an objective without a value anywhere has no best, and
# a constraint on an SLO metric without slo: says why nothing meets it.
# The old code printed "best: tenants.count=..." for the first two and a
# bare "no evaluated point meets the constraints" for the third.
cat >"$TMP/one.yaml" <<'Y'
seed: 1
duration: 4s
warmup: 0s
replications: 4
protocol: {mode: sync, gamma: 4}
tenants:
  count: 1
  network: {rtt: 28ms, jitter: none}
  workload: {arrival: poisson, rate: 0.1, prompt_tokens: 1, output_tokens: 4}
cloud: {verify_time: 5ms}
Y
expect_exit optimize_unjudged 1 "$SPECSIM" optimize "$TMP/one.yaml" -j 1 --search grid \
    --knob tenants.count=1 --min itl_mean_s --constraint 'e2e_mean_s <= 10s'
if grep -q '^best: none (no evaluated point could be judged: .*fewer than two replications have a value of e2e_mean_s' "$TMP/out" &&
   grep -q 'unjudged *tenants.count=1$' "$TMP/out" &&
   grep -q '^specsim optimize: no best point: no evaluated point could be judged' "$TMP/err"; then
    pass optimize_unjudged_message
else
    fail optimize_unjudged_message "$(head -c 400 "$TMP/out") $(head -c 300 "$TMP/err")"
fi
if "$SPECSIM" optimize "$TMP/one.yaml" -j 1 --search grid --json --knob tenants.count=1 \
       --min itl_mean_s --constraint 'e2e_mean_s <= 10s' >"$TMP/uj.json" 2>/dev/null
then :; fi
if python3 - "$TMP/uj.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["best"] is None and d["unjudged"] == 1 and "could be judged" in d["why"], d
assert d["frontier"][0]["judged"] is False and d["frontier"][0]["feasible"] is False, d
PY
then pass optimize_unjudged_json; else fail optimize_unjudged_json "$(head -c 300 "$TMP/uj.json")"; fi
expect_exit optimize_objective_nan 1 "$SPECSIM" optimize "$TMP/plain.yaml" -j 2 --search grid \
    --knob tenants.count=1,2 --max goodput_tok_s
grep -q '^best: none (the objective goodput_tok_s has no value without an slo: section' "$TMP/out" &&
    pass optimize_objective_nan_message ||
    fail optimize_objective_nan_message "$(head -c 300 "$TMP/out")"
expect_exit optimize_slo_without_slo 1 "$SPECSIM" optimize "$TMP/plain.yaml" -j 2 --search grid \
    --knob tenants.count=1,2 --max tenants.count --constraint 'slo_attainment >= 0.9'
grep -q "^best: none (constraint 'slo_attainment >= 0.9': slo_attainment has no value without an slo: section" "$TMP/out" &&
    pass optimize_slo_without_slo_message ||
    fail optimize_slo_without_slo_message "$(head -c 300 "$TMP/out")"
