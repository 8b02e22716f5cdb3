#!/bin/sh
# Command lines a careless user types (docs/formats.md, "Output files" and
# "Errors and exit codes"): an output named after a file the scenario reads
# (a request trace, an acceptance trace, a card) is refused before anything
# runs and the file is left as it was; an output that cannot be created is
# found before the run or search, not after it.
. "$(dirname "$0")/lib.sh"

mkdir "$TMP/d"
# A request trace and an acceptance trace beside the scenario.
printf 'time_s,prompt_tokens,output_tokens\n0,8,20\n0.5,8,20\n1,8,20\n' >"$TMP/d/req.csv"
printf '# gamma: 4\n4\n2\n0\n3\n' >"$TMP/d/acc.txt"
cp "$TMP/d/req.csv" "$TMP/req.orig"
cp "$TMP/d/acc.txt" "$TMP/acc.orig"
# scen DURATION: sync, a card by file, both traces; $2 more lines.
scen() {
    cat <<EOF
name: misuse
duration: $1
warmup: 0s
replications: 2
protocol: {mode: sync, gamma: 4}
acceptance: {model: trace, file: acc.txt}
tenants:
  count: 2
  edge: {draft_time: 10ms}
  network: {rtt: 20ms}
  workload: {arrival: trace, trace: req.csv}
cloud:
  verify_time: 5ms
  gpu: card.yaml
EOF
}
cp "$(dirname "$0")/../../models/hardware/h200.yaml" "$TMP/d/card.yaml"
cp "$TMP/d/card.yaml" "$TMP/card.orig"
scen 3s >"$TMP/d/s.yaml"
{ scen 3s; printf 'sweep:\n  protocol.mode: [sync, async]\n'; } >"$TMP/d/sw.yaml"
{ scen 3s; printf 'optimize:\n  knobs: {tenants.count: [1, 2]}\n  max: tenants.count\n'; } \
    >"$TMP/d/opt.yaml"

# unchanged NAME: every input is still what it was.
unchanged() {
    if cmp -s "$TMP/d/req.csv" "$TMP/req.orig" && cmp -s "$TMP/d/acc.txt" "$TMP/acc.orig" &&
       cmp -s "$TMP/d/card.yaml" "$TMP/card.orig"; then pass "$1"; else
        fail "$1" "an input was replaced"
        cp "$TMP/req.orig" "$TMP/d/req.csv"; cp "$TMP/acc.orig" "$TMP/d/acc.txt"
        cp "$TMP/card.orig" "$TMP/d/card.yaml"
    fi
}
# refused NAME WHAT CMD...: exit 2, stderr names WHAT as a file the scenario
# reads, and no input changed.
refused() {
    name=$1; what=$2; shift 2
    expect_exit "$name" 2 timeout 120 "$@"
    if grep -q -e "$what.*a file the scenario reads" "$TMP/err"; then pass "${name}_message"; else
        fail "${name}_message" "$(head -c 300 "$TMP/err")"; fi
    unchanged "${name}_kept"
}

# --- 1. no output may be a file the scenario reads ----------------------------
refused misuse_run_per_tenant_is_request_trace --per-tenant \
    $SPECSIM run "$TMP/d/s.yaml" --per-tenant "$TMP/d/req.csv"
refused misuse_run_out_is_request_trace --out \
    $SPECSIM run "$TMP/d/s.yaml" --out "$TMP/d/req.csv"
refused misuse_run_trace_is_acceptance_trace --trace \
    $SPECSIM run "$TMP/d/s.yaml" --trace "$TMP/d/acc.txt"
# Another spelling of the same file (through ..) is the same file.
refused misuse_run_trace_is_card --trace \
    $SPECSIM run "$TMP/d/s.yaml" --trace "$TMP/d/../d/card.yaml"
# The scenario's own output: section is held to the same rule.
{ scen 3s; printf 'output: {trace: req.csv}\n'; } >"$TMP/d/own.yaml"
abs=$(cd "$(dirname "$SPECSIM")" && pwd)/specsim
(cd "$TMP/d" && timeout 120 "$abs" run own.yaml >/dev/null 2>"$TMP/err")
rc=$?
if [ $rc -eq 2 ]; then pass misuse_run_output_trace_is_request_trace; else
    fail misuse_run_output_trace_is_request_trace "exit $rc; $(head -c 300 "$TMP/err")"; fi
unchanged misuse_run_output_trace_is_request_trace_kept
refused misuse_sweep_force_out_is_request_trace --out \
    $SPECSIM sweep "$TMP/d/sw.yaml" --force --quiet --out "$TMP/d/req.csv"
refused misuse_sweep_resume_out_is_acceptance_trace --out \
    $SPECSIM sweep "$TMP/d/sw.yaml" --resume --quiet --out "$TMP/d/acc.txt"
refused misuse_optimize_out_is_request_trace --out \
    $SPECSIM optimize "$TMP/d/opt.yaml" --out "$TMP/d/req.csv"
# A file a sweep axis alone names is read when the axes are checked: it is an
# input too.
cp "$TMP/d/card.yaml" "$TMP/d/card2.yaml"
cp "$TMP/d/card2.yaml" "$TMP/card2.orig"
{ scen 3s; printf 'sweep:\n  cloud.gpu: [card.yaml, card2.yaml]\n'; } >"$TMP/d/swc.yaml"
expect_exit misuse_sweep_out_is_axis_card 2 timeout 120 \
    $SPECSIM sweep "$TMP/d/swc.yaml" --force --quiet --out "$TMP/d/card2.yaml"
if cmp -s "$TMP/d/card2.yaml" "$TMP/card2.orig"; then pass misuse_sweep_out_is_axis_card_kept
else fail misuse_sweep_out_is_axis_card_kept "card2.yaml was replaced"; fi
# Outputs elsewhere still work.
expect_exit misuse_run_outputs_elsewhere 0 timeout 120 $SPECSIM run "$TMP/d/s.yaml" \
    --out "$TMP/r.csv" --trace "$TMP/t.json" --per-tenant "$TMP/pt.csv"

# --- 2. an output that cannot be created is found before the run ------------
# A run of ten million simulated seconds takes minutes: a check made only after
# it would time out here instead of exiting at once.
# (Closed-loop requests: a trace's would run out.)
scen 10000000s | sed 's/arrival: trace, trace: req.csv/think: 0s/' >"$TMP/d/long.yaml"
{ cat "$TMP/d/long.yaml"
  printf 'optimize:\n  knobs: {tenants.count: [1, 2]}\n  max: tenants.count\n'; } \
    >"$TMP/d/longopt.yaml"
timeout 60 $SPECSIM run "$TMP/d/long.yaml" --trace "$TMP/lt.csv" \
    --out "$TMP/nodir/r.csv" >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "nodir/r.csv" "$TMP/err" && [ ! -e "$TMP/lt.csv" ]; then
    pass misuse_run_out_uncreatable_before_run; else
    fail misuse_run_out_uncreatable_before_run "exit $rc; $(ls "$TMP"); $(head -c 300 "$TMP/err")"
fi
timeout 60 $SPECSIM optimize "$TMP/d/longopt.yaml" --out "$TMP/nodir/o.csv" \
    >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "nodir/o.csv" "$TMP/err"; then
    pass misuse_optimize_out_uncreatable_before_search; else
    fail misuse_optimize_out_uncreatable_before_search "exit $rc; $(head -c 300 "$TMP/err")"
fi
if ls "$TMP"/*.tmp.* "$TMP"/d/*.tmp.* >/dev/null 2>&1; then
    fail misuse_no_temporaries_left "$(ls "$TMP" "$TMP/d")"; else pass misuse_no_temporaries_left; fi

# --- 3. merge and optimize do not replace another sweep's results -----------
# (run refuses a sweep's CSV and sidecar without --force; sweep any existing
# file.) Sweep A in two shards, sweep B whole.
{ scen 3s | sed 's/arrival: trace, trace: req.csv/think: 0s/'
  printf 'sweep:\n  tenants.count: [1, 2, 3]\n'; } >"$TMP/d/a.yaml"
sed 's/\[1, 2, 3\]/[4, 2]/' "$TMP/d/a.yaml" >"$TMP/d/b.yaml"
for i in 0 1; do
    $SPECSIM sweep "$TMP/d/a.yaml" --quiet --shard $i/2 --out "$TMP/a$i.csv" 2>>"$TMP/err"
done
$SPECSIM sweep "$TMP/d/b.yaml" --quiet --out "$TMP/b.csv" 2>>"$TMP/err"
cp "$TMP/b.csv" "$TMP/b.keep"
cp "$TMP/b.scenario.yaml" "$TMP/bs.keep"
# b_kept NAME: sweep B's files are what they were.
b_kept() {
    if cmp -s "$TMP/b.csv" "$TMP/b.keep" && cmp -s "$TMP/b.scenario.yaml" "$TMP/bs.keep"
    then pass "$1"; else fail "$1" "sweep B's files were replaced"
        cp "$TMP/b.keep" "$TMP/b.csv"; cp "$TMP/bs.keep" "$TMP/b.scenario.yaml"; fi
}
expect_exit misuse_merge_over_other_sweep 2 $SPECSIM merge "$TMP/b.csv" "$TMP/a0.csv" "$TMP/a1.csv"
b_kept misuse_merge_over_other_sweep_kept
expect_exit misuse_merge_over_other_sidecar 2 \
    $SPECSIM merge "$TMP/b.scenario.yaml" "$TMP/a0.csv" "$TMP/a1.csv"
b_kept misuse_merge_over_other_sidecar_kept
# Merging one sweep again over its own merge is allowed: the same bytes.
expect_exit misuse_merge_once 0 $SPECSIM merge "$TMP/m.csv" "$TMP/a0.csv" "$TMP/a1.csv"
cp "$TMP/m.csv" "$TMP/m.first"
expect_exit misuse_merge_again 0 $SPECSIM merge "$TMP/m.csv" "$TMP/a0.csv" "$TMP/a1.csv"
cmp -s "$TMP/m.csv" "$TMP/m.first" && pass misuse_merge_again_same ||
    fail misuse_merge_again_same
expect_exit misuse_optimize_out_sweep_csv 2 $SPECSIM optimize "$TMP/d/opt.yaml" --out "$TMP/b.csv"
b_kept misuse_optimize_out_sweep_csv_kept
expect_exit misuse_optimize_out_sweep_sidecar 2 \
    $SPECSIM optimize "$TMP/d/opt.yaml" --out "$TMP/b.scenario.yaml"
b_kept misuse_optimize_out_sweep_sidecar_kept
expect_exit misuse_optimize_out_sweep_csv_force 0 \
    $SPECSIM optimize "$TMP/d/opt.yaml" --out "$TMP/b.csv" --force
head -1 "$TMP/b.csv" | grep -q '^point,tenants.count,' && pass misuse_optimize_force_wrote ||
    fail misuse_optimize_force_wrote "$(head -c 100 "$TMP/b.csv")"

# --- 4. messages say what would have been accepted ---------------------------
# -j has an upper bound too: the message gives it, not only ">= 1".
for c in sweep optimize; do
    expect_exit "misuse_${c}_jobs_too_many" 2 $SPECSIM $c "$TMP/d/sw.yaml" -j 5000
    grep -q "from 1 to 4096, got '5000'" "$TMP/err" && pass "misuse_${c}_jobs_too_many_message" ||
        fail "misuse_${c}_jobs_too_many_message" "$(head -c 300 "$TMP/err")"
done
# An error of --search is the option's, without a line of the file ("--search:22:1").
expect_exit misuse_optimize_search_bisect_two_knobs 2 $SPECSIM optimize "$TMP/d/opt.yaml" \
    --search bisect --knob tenants.count=1,2 --knob protocol.window=1,2
grep -q "^specsim optimize: --search: optimize.search: bisection" "$TMP/err" &&
    pass misuse_optimize_search_bisect_two_knobs_message ||
    fail misuse_optimize_search_bisect_two_knobs_message "$(head -c 300 "$TMP/err")"

# --- 5. nothing given is dropped ----------------------------------------------
# roofline --measured prints the table's own steps: a scenario curve's options
# beside it would do nothing, so they are refused.
table="$(dirname "$0")/../../results/calibration/cpu-amd-epyc-tinyllama-1.1b-w4a16.yaml"
for o in "--b-max 4" "--context 64" "--points 3" "--set protocol.gamma=3"; do
    n=$(echo "$o" | sed 's/^--\([a-z-]*\).*/\1/')
    # shellcheck disable=SC2086  # $o is an option and its value
    expect_exit "misuse_roofline_measured_with_$n" 2 $SPECSIM roofline --measured "$table" $o
    grep -q -e "--$n goes with a scenario" "$TMP/err" && pass "misuse_roofline_measured_with_${n}_message" ||
        fail "misuse_roofline_measured_with_${n}_message" "$(head -c 300 "$TMP/err")"
done
expect_exit misuse_roofline_measured_alone 0 $SPECSIM roofline --measured "$table"
# sweep --explain runs nothing: the options of a run are refused beside it;
# those that change the point's command are not.
for o in "--out $TMP/x.csv" "--resume" "--force" "-j 2" "--shard 0/2" "--per-group"; do
    n=$(echo "$o" | sed 's/^-*\([a-z-]*\).*/\1/')
    # shellcheck disable=SC2086
    expect_exit "misuse_sweep_explain_with_$n" 2 $SPECSIM sweep "$TMP/d/sw.yaml" --explain 1 $o
done
[ ! -e "$TMP/x.csv" ] && pass misuse_sweep_explain_wrote_nothing || fail misuse_sweep_explain_wrote_nothing
expect_exit misuse_sweep_explain_seed 0 $SPECSIM sweep "$TMP/d/sw.yaml" --explain 1 --seed 3 \
    --independent-seeds --quiet
# analytic's closed forms take a fixed gamma: an adaptive policy, which the
# forms would drop, is refused (not in cloud-only, where no block is drafted).
for p in rtt goodput; do
    expect_exit "misuse_analytic_gamma_policy_$p" 2 $SPECSIM analytic "$TMP/d/s.yaml" \
        --set protocol.gamma_policy=$p
    grep -qF "$TMP/d/s.yaml: protocol.gamma_policy: '$p'" "$TMP/err" && pass "misuse_analytic_gamma_policy_${p}_message" ||
        fail "misuse_analytic_gamma_policy_${p}_message" "$(head -c 300 "$TMP/err")"
done
expect_exit misuse_analytic_gamma_policy_fixed 0 $SPECSIM analytic "$TMP/d/s.yaml"
expect_exit misuse_analytic_gamma_policy_cloud_only 0 $SPECSIM analytic "$TMP/d/s.yaml" \
    --set protocol.gamma_policy=rtt --set protocol.mode=cloud-only
# --per-tenant - would write a file named "-" (for --trace "-" is standard
# output): refused, nothing written.
(cd "$TMP" && "$abs" run "$TMP/d/s.yaml" --per-tenant - >/dev/null 2>"$TMP/err")
rc=$?
if [ $rc -eq 2 ] && [ ! -e "$TMP/-" ]; then pass misuse_run_per_tenant_dash; else
    fail misuse_run_per_tenant_dash "exit $rc; $(ls "$TMP")"; fi

# --- 6. build/testbed run --out: the same rules as specsim run --------------
TESTBED="$BUILD/testbed"
if [ -x "$TESTBED" ]; then
    refused misuse_testbed_out_is_request_trace --out \
        "$TESTBED" run "$TMP/d/s.yaml" --quiet --out "$TMP/d/req.csv"
    # --out x.csv beside the scenario x.scenario.yaml: its sidecar is the scenario.
    cp "$TMP/d/s.yaml" "$TMP/d/x.scenario.yaml"
    expect_exit misuse_testbed_sidecar_is_scenario 2 timeout 120 \
        "$TESTBED" run "$TMP/d/x.scenario.yaml" --quiet --out "$TMP/d/x.csv"
    cmp -s "$TMP/d/s.yaml" "$TMP/d/x.scenario.yaml" && pass misuse_testbed_sidecar_is_scenario_kept ||
        fail misuse_testbed_sidecar_is_scenario_kept
    # A sweep's results (sweep B's CSV and sidecar) are replaced only with
    # --force, as by specsim run. (optimize --force replaced its CSV above.)
    cp "$TMP/b.keep" "$TMP/b.csv"
    expect_exit misuse_testbed_out_sweep_csv 2 "$TESTBED" run "$TMP/d/s.yaml" --quiet \
        --set duration=1s --out "$TMP/b.csv"
    grep -q -e "--out $TMP/b.csv is a sweep's CSV" "$TMP/err" &&
        pass misuse_testbed_out_sweep_csv_message ||
        fail misuse_testbed_out_sweep_csv_message "$(head -c 300 "$TMP/err")"
    b_kept misuse_testbed_out_sweep_csv_kept
    expect_exit misuse_testbed_out_sweep_sidecar 2 "$TESTBED" run "$TMP/d/s.yaml" --quiet \
        --set duration=1s --out "$TMP/b.scenario.yaml"
    b_kept misuse_testbed_out_sweep_sidecar_kept
    # A real-time run of 1000 s: a check made only after it would time out.
    expect_exit misuse_testbed_out_uncreatable_before_run 1 timeout 60 \
        "$TESTBED" run "$TMP/d/long.yaml" --quiet --set duration=1000s --out "$TMP/nodir/t.csv"
else
    echo "SKIP misuse_testbed: no $TESTBED"
fi

# --- 7. an error is reported as what the user typed --------------------------
# A bad --set of optimize is the --set's error, not the first knob value's
# ("FILE:L:C: optimize.knobs.tenants.count: value '1': --set:1:10: ...").
expect_exit misuse_optimize_bad_set 2 $SPECSIM optimize "$TMP/d/opt.yaml" --set protocol.gama=3
grep -q "^specsim optimize: --set:1:10: protocol.gama: unknown key" "$TMP/err" &&
    pass misuse_optimize_bad_set_message ||
    fail misuse_optimize_bad_set_message "$(head -c 300 "$TMP/err")"

# --- 8. a failed run leaves none of its outputs -------------------------------
# --out on a full device fails once the run is over: --trace and --per-tenant
# (written by then) must not appear either. A .json link to /dev/full
# (writes fail with ENOSPC) is such a device; systems without one SKIP.
if [ -c /dev/full ]; then
    ln -s /dev/full "$TMP/full.json"
    $SPECSIM run "$TMP/d/s.yaml" --per-tenant "$TMP/fpt.csv" --trace "$TMP/ftr.csv" \
        --out "$TMP/full.json" >/dev/null 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "No space left" "$TMP/err" && [ ! -e "$TMP/fpt.csv" ] &&
       [ ! -e "$TMP/ftr.csv" ] && ! ls "$TMP"/*.tmp.* >/dev/null 2>&1; then
        pass misuse_run_failed_out_leaves_no_outputs; else
        fail misuse_run_failed_out_leaves_no_outputs "exit $rc; $(ls "$TMP"); $(head -c 200 "$TMP/err")"
    fi
else
    echo "SKIP misuse_run_failed_out_leaves_no_outputs: no /dev/full"
fi
# A knob over replications: each value must allow the CI a constraint needs
# (a point of 1 replication met every constraint with a half-width of 0).
expect_exit misuse_optimize_knob_reps_1 2 $SPECSIM optimize "$TMP/d/opt.yaml" \
    --knob replications=1,3 --knob tenants.count=1,2 --constraint 'itl_mean_s <= 1s'
grep -q -e "--knob:1:14: optimize.knobs.replications: value '1'" "$TMP/err" &&
    pass misuse_optimize_knob_reps_1_message ||
    fail misuse_optimize_knob_reps_1_message "$(head -c 300 "$TMP/err")"
