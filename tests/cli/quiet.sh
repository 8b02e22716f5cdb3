# --quiet is accepted by every command of every binary (issue 27), so that
# a script can pass it to any of them:
#   specsim run, sweep, merge, optimize, check, analytic, roofline, step
#   (and -q); calibrate, testbed run and steps, llm generate, spec, agree,
#   accept, bench, prompts.
# Where a command shows progress (run and sweep on a terminal; calibrate's
# progress line; testbed steps' memory report; llm generate's timing line)
# --quiet silences it. Where it shows none, --quiet changes nothing on
# either stream, and its --help says that it has nothing to silence.
. tests/cli/lib.sh
CAL=$BUILD/calibrate
TESTBED=$BUILD/testbed
LLM=$BUILD/llm

# A sweep of two points small enough for every command here.
cat >"$TMP/q.yaml" <<'EOF'
name: quiet
duration: 2s
warmup: 0s
replications: 2
tenants: {count: 2}
sweep:
  protocol.gamma: [2, 4]
EOF
short="--set duration=2s --set warmup=0s --reps 2"

# same_with_quiet NAME CMD...: CMD and CMD --quiet exit 0 with the same
# standard output and nothing on standard error.
same_with_quiet() {
    name=$1; shift
    "$@" >"$TMP/plain.out" 2>"$TMP/plain.err"
    rc1=$?
    "$@" --quiet >"$TMP/quiet.out" 2>"$TMP/quiet.err"
    rc2=$?
    if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ -s "$TMP/quiet.out" ] &&
       cmp -s "$TMP/plain.out" "$TMP/quiet.out" && [ ! -s "$TMP/quiet.err" ]; then
        pass "$name"
    else
        fail "$name" "exit $rc1 / $rc2 (with --quiet); stderr: $(head -c 300 "$TMP/quiet.err")"
    fi
}

# --- specsim: every subcommand ----------------------------------------------
same_with_quiet quiet_check "$SPECSIM" check "$TMP/q.yaml"
same_with_quiet quiet_analytic "$SPECSIM" analytic scenarios/default.yaml
same_with_quiet quiet_roofline "$SPECSIM" roofline scenarios/paper/roofline.yaml --points 3
same_with_quiet quiet_roofline_measured "$SPECSIM" roofline \
    --measured results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml
same_with_quiet quiet_step "$SPECSIM" step batch --hardware a100-80g --model llama-2-7b \
    --prompt 16 --generate 16
same_with_quiet quiet_optimize "$SPECSIM" optimize "$TMP/q.yaml" \
    --knob protocol.gamma=2,4 --max throughput_tok_s
# shellcheck disable=SC2086
expect_exit quiet_run 0 "$SPECSIM" run scenarios/default.yaml $short --quiet
expect_exit quiet_sweep 0 "$SPECSIM" sweep "$TMP/q.yaml" --quiet --out "$TMP/s.csv"
expect_exit quiet_merge 0 "$SPECSIM" merge "$TMP/m.csv" "$TMP/s.csv" --quiet
cmp -s "$TMP/m.csv" "$TMP/s.csv" && pass quiet_merge_output ||
    fail quiet_merge_output "$(diff "$TMP/m.csv" "$TMP/s.csv" | head -5)"
# -q, its one-letter alias, everywhere too.
expect_exit quiet_alias_check 0 "$SPECSIM" check scenarios/default.yaml -q
expect_exit quiet_alias_optimize 0 "$SPECSIM" optimize "$TMP/q.yaml" \
    --knob protocol.gamma=2,4 --max throughput_tok_s -q
# Every --help names it.
for c in run sweep merge optimize check analytic roofline step; do
    if "$SPECSIM" "$c" --help 2>&1 | grep -q -- '--quiet'; then pass "quiet_help_$c"
    else fail "quiet_help_$c" "specsim $c --help does not mention --quiet"; fi
done
for c in merge optimize check analytic roofline step; do
    "$SPECSIM" "$c" --help | tr '\n' ' ' | grep -q 'nothing to *silence' &&
        pass "quiet_help_nothing_$c" ||
        fail "quiet_help_nothing_$c" "specsim $c --help does not say --quiet has nothing to silence"
done

# sweep's progress line, on a terminal only, is what --quiet silences.
if command -v script >/dev/null 2>&1 &&
   script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "$SPECSIM sweep $TMP/q.yaml -j 1 --force --out $TMP/t.csv" /dev/null \
        >"$TMP/tty" 2>&1
    script -qec "$SPECSIM sweep $TMP/q.yaml -j 1 --force --quiet --out $TMP/t.csv" \
        /dev/null >"$TMP/tty_q" 2>&1
    grep -q "sweep: 2/2 points" "$TMP/tty" && pass sweep_progress_on_terminal ||
        fail sweep_progress_on_terminal "$(od -c "$TMP/tty" | head -5)"
    grep -q "points" "$TMP/tty_q" && fail sweep_quiet_silences "$(od -c "$TMP/tty_q" | head -5)" ||
        pass sweep_quiet_silences
else
    echo "  note: no script(1) to give sweep a terminal; progress checks skipped"
fi

# --- calibrate ----------------------------------------------------------------
# Its progress line goes to stderr even off a terminal; --quiet leaves
# stderr empty and the table as it is. The measurement (a few seconds
# optimised) is left to the optimised build: under the sanitizers the
# kernels run many times slower, and the parser is what --quiet adds.
case $BUILD in
*asan*)
    expect_exit quiet_calibrate_parsed 0 "$CAL" --quiet --help ;;
*)
    "$CAL" --device cpu --quant fp16 --threads 1 --quick --quiet \
        --model models/llm/smollm2-135m.yaml --out "$TMP/cal.yaml" >/dev/null 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ] && grep -q 'op: token' "$TMP/cal.yaml"; then
        pass quiet_calibrate
    else
        fail quiet_calibrate "exit $rc; stderr: $(head -c 300 "$TMP/err")"
    fi ;;
esac
"$CAL" --help | grep -q -- '--quiet' && pass quiet_help_calibrate ||
    fail quiet_help_calibrate "calibrate --help does not mention --quiet"

# --- testbed ------------------------------------------------------------------
expect_exit quiet_testbed_run_parsed 0 "$TESTBED" run --quiet --help
# steps reports the model's memory on stderr; --quiet does not.
"$TESTBED" steps models/llm/smollm2-135m.yaml --reps 1 --max-tokens 5 \
    >"$TMP/steps.out" 2>"$TMP/steps.err"
"$TESTBED" steps models/llm/smollm2-135m.yaml --reps 1 --max-tokens 5 --quiet \
    >"$TMP/steps_q.out" 2>"$TMP/steps_q.err"
rc=$?
if [ "$rc" -eq 0 ] && [ -s "$TMP/steps.err" ] && [ ! -s "$TMP/steps_q.err" ] &&
   grep -q 'op: token' "$TMP/steps_q.out"; then
    pass quiet_testbed_steps
else
    fail quiet_testbed_steps "exit $rc; stderr: $(head -c 300 "$TMP/steps_q.err")"
fi
"$TESTBED" steps --help | grep -q -- '--quiet' && pass quiet_help_testbed_steps ||
    fail quiet_help_testbed_steps "testbed steps --help does not mention --quiet"

# --- llm ----------------------------------------------------------------------
for c in generate spec agree accept bench prompts; do
    "$LLM" "$c" --quiet --help >"$TMP/help" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q -- '--quiet' "$TMP/help"; then pass "quiet_llm_$c"
    else fail "quiet_llm_$c" "exit $rc; stderr: $(head -c 300 "$TMP/err")"; fi
done
# generate's timing line is what --quiet silences.
if model=$(scripts/fetch-model.sh 2>"$TMP/err"); then
    "$LLM" generate --model "$model" --prompt Hello --tokens 4 --quiet >"$TMP/gen.out" \
        2>"$TMP/gen.err"
    rc=$?
    if [ "$rc" -eq 0 ] && [ -s "$TMP/gen.out" ] && [ ! -s "$TMP/gen.err" ]; then
        pass quiet_llm_generate_silent
    else
        fail quiet_llm_generate_silent "exit $rc; stderr: $(head -c 300 "$TMP/gen.err")"
    fi
else
    fail quiet_llm_model "$(tail -n 1 "$TMP/err")"
fi
