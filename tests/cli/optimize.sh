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
