# The one option parser (sim/cli/cli_opt.c) as every subcommand sees it: the
# --opt=value spelling, repeated options, options of another subcommand,
# positional arguments (any number for merge), empty values, and the usage
# errors of roofline and merge; `run
# --quiet` silences the progress line a terminal gets.
. tests/cli/lib.sh

short="--set duration=3s --set warmup=1s --reps 2"
strip() { sed -E 's/"(wall_s|events_per_s|setup_s)(_ci95)?": *[^,}]*//g' "$1"; }

# --seed=N is --seed N.
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short --seed 7 --json >"$TMP/a.json" 2>/dev/null
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short --seed=7 --json >"$TMP/b.json" 2>/dev/null
strip "$TMP/a.json" >"$TMP/a.s"; strip "$TMP/b.json" >"$TMP/b.s"
if [ -s "$TMP/a.s" ] && cmp -s "$TMP/a.s" "$TMP/b.s"; then pass opt_equals_value
else fail opt_equals_value "$(diff "$TMP/a.s" "$TMP/b.s" | head -5)"; fi

expect_exit repeated_value_option 2 "$SPECSIM" run scenarios/default.yaml --seed 1 --seed 2
grep -q "option '--seed' given more than once" "$TMP/err" && pass repeated_named ||
    fail repeated_named "$(cat "$TMP/err")"
# Flags may be repeated; --set accumulates.
# shellcheck disable=SC2086
expect_exit repeated_flag 0 "$SPECSIM" run scenarios/default.yaml $short --quiet --quiet \
    --set seed=3
expect_exit other_commands_option 2 "$SPECSIM" run scenarios/default.yaml --shard 0/2
grep -q "unknown option '--shard'" "$TMP/err" && pass other_commands_option_named ||
    fail other_commands_option_named "$(cat "$TMP/err")"
expect_exit flag_with_value 2 "$SPECSIM" run scenarios/default.yaml --json=yes
expect_exit value_missing 2 "$SPECSIM" check scenarios/default.yaml --set
expect_exit check_takes_no_seed 2 "$SPECSIM" check scenarios/default.yaml --seed 3
expect_exit analytic_json 0 "$SPECSIM" analytic scenarios/default.yaml --json
expect_exit two_scenarios 2 "$SPECSIM" analytic scenarios/default.yaml scenarios/default.yaml

# roofline's usage errors.
expect_exit roofline_bmax_zero 2 "$SPECSIM" roofline scenarios/paper/roofline.yaml --b-max 0
# Counts are digits only, as --reps and -j read them (' 3' and '+4' were
# taken by strtol).
expect_exit roofline_points_blank 2 "$SPECSIM" roofline scenarios/paper/roofline.yaml --points ' 3'
expect_exit roofline_bmax_plus 2 "$SPECSIM" roofline scenarios/paper/roofline.yaml --b-max +4
expect_exit roofline_no_scenario 2 "$SPECSIM" roofline
tab=results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml
expect_exit roofline_measured_and_scenario 2 "$SPECSIM" roofline --measured "$tab" \
    scenarios/paper/roofline.yaml
expect_exit roofline_model_alone 2 "$SPECSIM" roofline --model models/llm/llama-2-7b.yaml
expect_exit roofline_bad_set 2 "$SPECSIM" roofline scenarios/paper/roofline.yaml \
    --set cloud.gpux=1
"$SPECSIM" roofline scenarios/paper/roofline.yaml --points=5 --b-max=16 >"$TMP/r.csv" 2>"$TMP/err"
# 5 log-spaced batch sizes 1..16 are 1, 2, 4, 8, 16: a header and 5 rows.
[ "$(wc -l <"$TMP/r.csv")" -eq 6 ] && pass roofline_opt_equals_value ||
    fail roofline_opt_equals_value "$(cat "$TMP/err")"

# merge: OUT and at least one part; no options but --help / --version.
expect_exit merge_no_parts 2 "$SPECSIM" merge "$TMP/m.csv"
expect_exit merge_unknown_option 2 "$SPECSIM" merge --frob "$TMP/m.csv" "$TMP/p.csv"
# Any number of parts: 600 (missing) parts get past the parser to the first
# part's own error.
# shellcheck disable=SC2046
"$SPECSIM" merge "$TMP/m.csv" $(seq -f "$TMP/p%g.csv" 600) >/dev/null 2>"$TMP/err"
grep -q "p1.csv: its sidecar" "$TMP/err" && pass merge_many_parts ||
    fail merge_many_parts "$(head -c 300 "$TMP/err")"

# An empty value is refused before anything runs, in both spellings.
expect_exit empty_trace_value 2 "$SPECSIM" run scenarios/default.yaml --trace=
grep -q "option '--trace' needs a non-empty value" "$TMP/err" && pass empty_value_named ||
    fail empty_value_named "$(cat "$TMP/err")"
expect_exit empty_out_value 2 "$SPECSIM" run scenarios/default.yaml --out ""
expect_exit empty_set_value 2 "$SPECSIM" check scenarios/default.yaml --set=
# Positional arguments keep their place among options.
expect_exit positional_after_options 0 "$SPECSIM" check --set seed=3 scenarios/default.yaml

# sweep: -jN attached, --jobs=N.
expect_exit sweep_j_attached_bad 2 "$SPECSIM" sweep scenarios/default.yaml -j0
expect_exit sweep_resume_force 2 "$SPECSIM" sweep scenarios/default.yaml --resume --force

# run --quiet: on a terminal run prints one progress line per replication
# on stderr, --quiet none; off a terminal (a pipe, a log) never.
if command -v script >/dev/null 2>&1 &&
   script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "$SPECSIM run scenarios/default.yaml $short >/dev/null" /dev/null \
        >"$TMP/tty" 2>&1
    script -qec "$SPECSIM run scenarios/default.yaml $short --quiet >/dev/null" /dev/null \
        >"$TMP/tty_q" 2>&1
    grep -q "run: replication 2/2 done" "$TMP/tty" && pass run_progress_on_terminal ||
        fail run_progress_on_terminal "$(od -c "$TMP/tty" | head -5)"
    grep -q "replication" "$TMP/tty_q" && fail run_quiet_silences "$(od -c "$TMP/tty_q" | head -5)" ||
        pass run_quiet_silences
else
    echo "  note: no script(1) to give run a terminal; progress checks skipped"
fi
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short >/dev/null 2>"$TMP/err"
[ ! -s "$TMP/err" ] && pass run_no_progress_off_terminal ||
    fail run_no_progress_off_terminal "$(head -c 200 "$TMP/err")"

# --set, --seed and --reps are read by one function for every subcommand
# (cli_opt_sets_add): no limit on how many --set (run once stopped at 256,
# roofline at 64), and the same message for a malformed one everywhere.
many=$(i=0; while [ $i -lt 300 ]; do printf -- '--set seed=%d ' $i; i=$((i + 1)); done)
# shellcheck disable=SC2086
expect_exit many_sets_check 0 "$SPECSIM" check scenarios/default.yaml $many
# shellcheck disable=SC2086
expect_exit many_sets_roofline 0 "$SPECSIM" roofline scenarios/paper/roofline.yaml $many
for c in run check analytic sweep roofline; do
    expect_exit "set_malformed_$c" 2 "$SPECSIM" "$c" scenarios/paper/roofline.yaml --set nope
    grep -qF "specsim $c: --set needs PATH=VALUE, got 'nope'" "$TMP/err" &&
        pass "set_malformed_message_$c" || fail "set_malformed_message_$c" "$(cat "$TMP/err")"
done
for c in run sweep; do
    expect_exit "reps_malformed_$c" 2 "$SPECSIM" "$c" scenarios/paper/roofline.yaml --reps -1
    grep -qF "specsim $c: --reps needs a non-negative integer, got '-1'" "$TMP/err" &&
        pass "reps_malformed_message_$c" || fail "reps_malformed_message_$c" "$(cat "$TMP/err")"
done
